/*
 * boot: how fast fences boot, side by side in one run with bwrap running
 * /bin/true in comparable namespaces and with a plain fork+exec of
 * /bin/true.
 *
 *	boot SOCKET RUNS
 *
 * For each tier: RUNS boots through the control socket, each timed from
 * the boot request to the reply (which the fencer sends once the agent
 * said ready), then stopped; and the fencer's own measure of request to
 * agent ready.  Then bwrap and the fork+exec floor, RUNS times each.
 */
#include <sys/types.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "bench.h"

/* The anchors: the rows of bwrap below, by name. */
#define BWRAP_L15	"bwrap /bin/true (L1.5-like)"
#define BWRAP_NET	"bwrap --unshare-net /bin/true"
#define FORKEXEC	"fork+exec /bin/true"

static void
bench_tier(const char *sock, int tier, size_t runs)
{
	struct msg_boot	 b;
	struct msg_fence_req q;
	struct msg_fence f;
	uint64_t	*req, *agent, t0, w0;
	size_t		 i, n = 0;
	void		*buf;
	size_t		 len;
	char		 what[64];

	if ((req = calloc(runs, sizeof(*req))) == NULL ||
	    (agent = calloc(runs, sizeof(*agent))) == NULL)
		err(1, "calloc");
	w0 = bench_now_ns();
	for (i = 0; i < runs; i++) {
		memset(&b, 0, sizeof(b));
		snprintf(b.b_key, sizeof(b.b_key), "bench-%zu", i);
		b.b_tier = tier;
		if (msg_boot_encode(&b, &buf, &len) == -1)
			err(1, "encode");
		t0 = bench_now_ns();
		if (bench_ctl_call(sock, IMSG_CTL_BOOT, buf, len, &f) == -1) {
			warnx("boot %s failed", b.b_key);
			free(buf);
			continue;
		}
		req[n] = bench_now_ns() - t0;
		agent[n++] = (uint64_t)f.f_timings.t_agent_us * 1000;
		free(buf);
		memset(&q, 0, sizeof(q));
		q.r_owner = MSG_OWNER_NONE;
		strlcpy(q.r_key, b.b_key, sizeof(q.r_key));
		if (msg_fence_req_encode(&q, &buf, &len) == -1)
			err(1, "encode");
		bench_ctl_call(sock, IMSG_CTL_STOP, buf, len, NULL);
		free(buf);
	}
	bench_section("boot", tier == TIER_L2 ? BWRAP_NET : BWRAP_L15);
	snprintf(what, sizeof(what), "fenced %s boot (fencectl)",
	    tier_name(tier));
	bench_row(what, req, n, (bench_now_ns() - w0) / 1e9);
	snprintf(what, sizeof(what), "fenced %s request->agent ready",
	    tier_name(tier));
	bench_row(what, agent, n, 0);
	free(req);
	free(agent);
}

static void
bench_cmd(const char *what, char *const argv[], size_t runs)
{
	uint64_t	*ns, t0, w0;
	size_t		 i, n = 0;

	if ((ns = calloc(runs, sizeof(*ns))) == NULL)
		err(1, "calloc");
	if (access(argv[0], X_OK) == -1) {
		bench_skip("boot", what, "not installed");
		free(ns);
		return;
	}
	w0 = bench_now_ns();
	for (i = 0; i < runs; i++) {
		t0 = bench_now_ns();
		if (bench_forkexec(argv) != 0)
			continue;
		ns[n++] = bench_now_ns() - t0;
	}
	bench_row(what, ns, n, (bench_now_ns() - w0) / 1e9);
	free(ns);
}

int
main(int argc, char *argv[])
{
	const char	*errstr;
	size_t		 runs;
	char *const	 fe[] = { "/bin/true", NULL };
	char *const	 bw[] = { "/usr/bin/bwrap", "--unshare-pid",
	    "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	    "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
	    "--ro-bind", "/etc", "/etc", "--symlink", "usr/lib", "/lib",
	    "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
	    "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
	    "--tmpfs", "/run", "--tmpfs", "/var", "--tmpfs", "/home",
	    "--cap-drop", "ALL", "/bin/true", NULL };
	char *const	 bwn[] = { "/usr/bin/bwrap", "--unshare-pid",
	    "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	    "--unshare-net", "--die-with-parent", "--new-session",
	    "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
	    "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
	    "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev",
	    "--tmpfs", "/tmp", "--tmpfs", "/run", "--tmpfs", "/var",
	    "--tmpfs", "/home", "--cap-drop", "ALL", "/bin/true", NULL };

	if (argc != 3)
		errx(1, "usage: boot socket runs");
	runs = strtonum(argv[2], 1, 100000, &errstr);
	if (errstr != NULL)
		errx(1, "runs %s", errstr);

	printf("%-34s %6s %10s %10s %10s\n", "boot", "runs", "median ms",
	    "p99 ms", "per s");
	bench_tier(argv[1], TIER_L1, runs);
	bench_tier(argv[1], TIER_L15, runs);
	bench_tier(argv[1], TIER_L2, runs);
	bench_section("boot", FORKEXEC);
	bench_cmd(BWRAP_L15, bw, runs);
	bench_cmd(BWRAP_NET, bwn, runs);
	bench_section("boot", NULL);
	bench_cmd(FORKEXEC, fe, runs);
	return (0);
}
