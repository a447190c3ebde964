/*
 * libFuzzer target for the configuration grammar (parent/parse.y, by
 * byacc): the input is written as a file in a directory of the run's
 * own and read by config_parse(), as fenced reads /etc/fenced.conf.
 * The directory also holds inc.conf, so `include "inc.conf"' is real.
 *
 * Invariants: a refused file leaves the configuration as it was; a
 * parse is the same every time (nothing of one parse leaks into the
 * next: macros, words, includes); and what the grammar accepts, once
 * its user is resolved, is a configuration the parent can send to its
 * children (msg_config_encode(), else parent_send_config() is fatal).
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "fuzz.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

static char	 fz_dir[] = "/tmp/fenced-config-fuzz.XXXXXX";
static char	 fz_path[sizeof(fz_dir) + 16];

static void
fz_write(const char *path, const void *p, size_t n)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || (n > 0 && write(fd, p, n) != (ssize_t)n) ||
	    close(fd) == -1)
		FUZZ_FAIL();
}

static void
fz_cleanup(void)
{
	char	 p[sizeof(fz_path)];

	snprintf(p, sizeof(p), "%s/inc.conf", fz_dir);
	unlink(p);
	unlink(fz_path);
	rmdir(fz_dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char inc[] = "lifetime 10m max 1h\n"
	    "limit pids 128 max 512\n";
	char	 p[sizeof(fz_path)];

	log_init(1, 0);
	log_ratelimit(1);
	if (mkdtemp(fz_dir) == NULL)
		FUZZ_FAIL();
	atexit(fz_cleanup);
	snprintf(fz_path, sizeof(fz_path), "%s/fenced.conf", fz_dir);
	snprintf(p, sizeof(p), "%s/inc.conf", fz_dir);
	fz_write(p, inc, sizeof(inc) - 1);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fenced_config	 defaults, a, b;
	void			*buf;
	size_t			 len;
	int			 ra, rb;

	fz_write(fz_path, data, size);
	config_defaults(&defaults);
	a = defaults;
	b = defaults;
	ra = config_parse(fz_path, &a);
	rb = config_parse(fz_path, &b);
	FUZZ_CHECK(ra == rb);
	FUZZ_CHECK(ra == 0 || ra == -1);
	FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	if (ra == -1) {
		FUZZ_CHECK(memcmp(&a, &defaults, sizeof(a)) == 0);
		return (0);
	}
	/* As config_resolve() would: a user outside the fence uids. */
	if (a.c_fence_uid_lo > 1)
		a.c_uid = 1;
	else if (a.c_fence_uid_hi < UINT32_MAX - 1)
		a.c_uid = a.c_fence_uid_hi + 1;
	else
		return (0);	/* no such user: config_resolve() refuses */
	a.c_gid = 998;
	a.c_admin_gid = (gid_t)-1;
	FUZZ_CHECK(msg_config_encode(&a, &buf, &len) == 0);
	free(buf);
	return (0);
}
