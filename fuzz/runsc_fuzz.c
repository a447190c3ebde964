/*
 * libFuzzer target for what the runsc backend parses (fencer/runsc/
 * runsc_parse.c): `runsc --version', `runsc state', and the host's
 * /proc/PID/status and task/TID/children of `runsc run', whose text a
 * sandbox's processes influence.  The first byte picks the parser; the
 * rest is the text, cut to the buffer its reader has and terminated as
 * the reader terminates it.
 *
 * Invariants: a release date is 0 or a date of 2000 to 2999 and only
 * from a "runsc version " line, the version text bounded, terminated
 * and one line; a pid is in range (0 or -1 for none); the children are
 * positive, distinct, at most max, or max + 1 to say more; a panic
 * line is one terminated line of printable ASCII from the text, that
 * starts "panic: " or "fatal error: ", and none without one.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fenced.h"
#include "bundle.h"
#include "fuzz.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

enum { RK_VERSION, RK_STATE, RK_STATUS, RK_CHILDREN, RK_PANIC, RK_MAX };

/* The reader's buffer: the text cut to size - 1 and terminated. */
static char *
fz_text(const uint8_t *p, size_t n, size_t size)
{
	char	*b;

	if (n > size - 1)
		n = size - 1;
	if ((b = malloc(size)) == NULL)
		FUZZ_FAIL();
	memcpy(b, p, n);
	b[n] = '\0';
	return (b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*b, ver[64], line[256];
	pid_t		 kids[3], pid;
	long		 d;
	int		 n, m, i, j, max;

	if (size < 1)
		return (0);
	switch (data[0] % RK_MAX) {
	case RK_VERSION:
		b = fz_text(data + 1, size - 1, 4096);	/* RUNSC_VERSION_MAX */
		memset(ver, 'x', sizeof(ver));
		d = runsc_version_date(b, ver, sizeof(ver));
		FUZZ_CHECK(d == 0 || (d >= 20000101 && d <= 29991231));
		if (strncmp(b, "runsc version ", 14) == 0) {
			FUZZ_CHECK(memchr(ver, '\0', sizeof(ver)) != NULL);
			FUZZ_CHECK(strchr(ver, '\n') == NULL);
			FUZZ_CHECK(strncmp(ver, b + 14, strlen(ver)) == 0);
		} else
			FUZZ_CHECK(d == 0);
		free(b);
		break;
	case RK_STATE:
		b = fz_text(data + 1, size - 1, 1024);	/* its out[] */
		pid = runsc_state_pid(b);
		FUZZ_CHECK(pid >= 0);
		if (strstr(b, "\"pid\":") == NULL)
			FUZZ_CHECK(pid == 0);
		free(b);
		break;
	case RK_STATUS:
		b = fz_text(data + 1, size - 1, 8192);
		pid = runsc_status_ppid(b);
		FUZZ_CHECK(pid == -1 || pid > 0);
		if (strstr(b, "\nPPid:\t") == NULL)
			FUZZ_CHECK(pid == -1);
		free(b);
		break;
	case RK_CHILDREN:
		b = fz_text(data + 1, size - 1, 1024);
		/* As runsc_children() asks: up to 3, over what it has. */
		max = 3;
		n = 0;
		if (size > 1 && (data[1] & 1)) {
			kids[0] = 4242;
			n = 1;
		}
		m = runsc_pids_parse(b, kids, n, max);
		FUZZ_CHECK(m >= n && m <= max + 1);
		if (m <= max)
			for (i = 0; i < m; i++) {
				FUZZ_CHECK(kids[i] > 0);
				for (j = 0; j < i; j++)
					FUZZ_CHECK(kids[i] != kids[j]);
			}
		free(b);
		break;
	case RK_PANIC:
		b = fz_text(data + 1, size - 1, 16384);	/* RUNSC_PANIC_MAX */
		memset(line, 'x', sizeof(line));
		n = runsc_panic_line(b, line, sizeof(line));
		FUZZ_CHECK(memchr(line, '\0', sizeof(line)) != NULL);
		for (i = 0; line[i] != '\0'; i++)
			FUZZ_CHECK(line[i] >= ' ' && line[i] <= '~');
		if (n == 0)
			FUZZ_CHECK(strncmp(line, "panic: ", 7) == 0 ||
			    strncmp(line, "fatal error: ", 13) == 0);
		else
			FUZZ_CHECK(n == -1 && line[0] == '\0' &&
			    strncmp(b, "panic: ", 7) != 0 &&
			    strncmp(b, "fatal error: ", 13) != 0 &&
			    strstr(b, "\npanic: ") == NULL &&
			    strstr(b, "\nfatal error: ") == NULL);
		free(b);
		break;
	}
	return (0);
}
