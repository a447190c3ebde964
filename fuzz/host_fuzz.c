/*
 * libFuzzer target for the fencer's parsers of what the host's /proc
 * says of a fence's pid 1 (fencer/fencer_host.c): status, mountinfo
 * (judged against the fencer's own, read once from /proc/self), uid_map
 * (against the fencer's own) and net/dev.  A fence controls parts of
 * these (its mounts, its interface names), and
 * the levels rest on what the parsers make of them.  The first byte
 * picks the file; the rest is its text, in a buffer of exactly its
 * length and a NUL, as host_read_file() terminates it.
 *
 * Invariants: every answer is a success or a failure with its reason
 * said and terminated; what a parse fills in is in range (pids, flags,
 * counts, strings inside the text and terminated); the fencer's own
 * mount table judged as a fence's is never taken for a fence's own
 * root; a uid_map is "own" exactly when its text differs from the
 * fencer's.
 */
#include <sys/types.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "log.h"
#include "probe_expect.h"
#include "fencer_host.h"
#include "fuzz.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

enum { HK_STATUS, HK_MOUNTS, HK_UIDMAP, HK_NETDEV, HK_MAX };

static char			*fz_self_mounts;
static struct host_table	 fz_ht;
static struct host_mount	*fz_hm;
static int			 fz_nh;
static char			 fz_self_uidmap[HOST_UIDMAP_MAX];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char	 err[PROBE_HOST_ERR_LEN];
	size_t	 len;

	log_init(1, 0);
	/* The text as read, and the table as the fencer parses it. */
	if ((fz_self_mounts = host_read_grow("/proc/self/mountinfo",
	    HOST_SELF_MOUNTS_MAX, &len)) == NULL ||
	    host_self_read("/proc/self/mountinfo", &fz_ht, err,
	    sizeof(err)) == -1)
		FUZZ_FAIL();
	fz_hm = fz_ht.ht_m;
	fz_nh = fz_ht.ht_n;
	if (host_read_file("/proc/self/uid_map", fz_self_uidmap,
	    sizeof(fz_self_uidmap)) == -1)
		FUZZ_FAIL();
	return (0);
}

static void
fz_err(const char *err, size_t len, int failed)
{
	FUZZ_CHECK(memchr(err, '\0', len) != NULL);
	if (failed)
		FUZZ_CHECK(err[0] != '\0');
}

static void
fz_term(const char *s, size_t len)
{
	FUZZ_CHECK(memchr(s, '\0', len) != NULL);
}

static void
fz_mounts(char *buf, size_t len, const char *copy)
{
	static struct host_mount *fm;
	struct probe_host *ph;
	const char	*allow[] = { "/usr", "/etc/resolv.conf" };
	char		 err[PROBE_HOST_ERR_LEN];
	int		 n, i, self;
	uint32_t	 nh;

	if (fm == NULL && (fm = calloc(HOST_MOUNTS_MAX, sizeof(*fm))) == NULL)
		FUZZ_FAIL();
	if ((ph = calloc(1, sizeof(*ph))) == NULL)
		FUZZ_FAIL();
	err[0] = '\0';
	n = host_mounts_parse(buf, fm, HOST_MOUNTS_MAX, HOST_MOUNTS_FENCE, err,
	    sizeof(err));
	fz_err(err, sizeof(err), n == -1);
	FUZZ_CHECK(n >= -1 && n <= HOST_MOUNTS_MAX);
	if (n == -1)
		goto out;
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(fm[i].hm_root != NULL && fm[i].hm_point != NULL);
		FUZZ_CHECK(fm[i].hm_root >= buf && fm[i].hm_root < buf + len);
		FUZZ_CHECK(fm[i].hm_point >= buf &&
		    fm[i].hm_point < buf + len);
		FUZZ_CHECK(fm[i].hm_ro == 0 || fm[i].hm_ro == 1);
	}
	nh = host_mounts_nhost(fm, n, fz_hm, fz_nh);
	FUZZ_CHECK(nh <= (uint32_t)n);
	ph->ph_usr_ro = ph->ph_etc_ro = -1;
	host_mounts_judge(fm, n, fz_hm, fz_nh, allow, 2,
	    (copy[0] & 1) ? "/var/lib/fenced/runsc/b/rootfs" : "", ph);
	FUZZ_CHECK(ph->ph_root_host == 0 || ph->ph_root_host == 1);
	FUZZ_CHECK(ph->ph_usr_ro >= -1 && ph->ph_usr_ro <= 1);
	FUZZ_CHECK(ph->ph_etc_ro >= -1 && ph->ph_etc_ro <= 1);
	for (i = 0; i < PROBE_HOST_BINDS_MAX; i++)
		fz_term(ph->ph_bad[i], sizeof(ph->ph_bad[i]));

	/* The fencer's own table, judged as a fence's: the host's root. */
	self = len == strlen(copy) && strcmp(copy, fz_self_mounts) == 0;
	if (self)
		FUZZ_CHECK(ph->ph_root_host == 1);
 out:
	free(ph);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct host_status	 st;
	struct probe_host	*ph;
	char			*buf, *copy, err[PROBE_HOST_ERR_LEN];
	size_t			 len;
	int			 r, own, root;

	if (size < 1)
		return (0);
	len = size - 1;
	if (len > HOST_FILE_MAX - 1)
		len = HOST_FILE_MAX - 1;
	if ((buf = malloc(len + 1)) == NULL || (copy = malloc(len + 1)) == NULL)
		FUZZ_FAIL();
	memcpy(buf, data + 1, len);
	buf[len] = '\0';
	memcpy(copy, buf, len + 1);
	err[0] = '\0';

	switch (data[0] % HK_MAX) {
	case HK_STATUS:
		memset(&st, 0, sizeof(st));
		r = host_status_parse(buf, &st, err, sizeof(err));
		FUZZ_CHECK(r == 0 || r == -1);
		fz_err(err, sizeof(err), r == -1);
		if (r == 0) {
			FUZZ_CHECK(st.hs_nspid_depth >= 1);
			FUZZ_CHECK(st.hs_nnp == 0 || st.hs_nnp == 1 ||
			    st.hs_nnp == 2);
			FUZZ_CHECK(st.hs_seccomp >= 0 && st.hs_seccomp <= 2);
		}
		break;
	case HK_MOUNTS:
		fz_mounts(buf, len + 1, copy);
		break;
	case HK_UIDMAP:
		own = root = -1;
		r = host_uidmap_parse(buf, fz_self_uidmap, &own, &root, err,
		    sizeof(err));
		FUZZ_CHECK(r == 0 || r == -1);
		fz_err(err, sizeof(err), r == -1);
		FUZZ_CHECK(own == (strcmp(copy, fz_self_uidmap) != 0));
		FUZZ_CHECK(root == 0 || root == 1);
		break;
	case HK_NETDEV:
		if ((ph = calloc(1, sizeof(*ph))) == NULL)
			FUZZ_FAIL();
		r = host_netdev_parse(buf, ph, err, sizeof(err));
		FUZZ_CHECK(r == 0 || r == -1);
		fz_err(err, sizeof(err), r == -1);
		fz_term(ph->ph_iface_other, sizeof(ph->ph_iface_other));
		free(ph);
		break;
	}
	free(buf);
	free(copy);
	return (0);
}
