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
 * agent ready.  Then, where the daemon has `pool L1.5', RUNS boots
 * taken from the pool, each followed by a cold one (the same load for
 * both), the take's own time, and the idle pool's memory.  Then bwrap
 * and the fork+exec floor, RUNS times each.
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

/* `fencectl show stats', decoded. */
static int
bench_stats(const char *sock, struct msg_stats *st)
{
	struct imsgbuf	*ib;
	struct imsg	 imsg;
	int		 fd, end, ok = -1;

	ib = bench_ctl_send(sock, IMSG_CTL_SHOW_STATS, NULL, 0, &fd);
	do {
		bench_ctl_next(ib, fd, &imsg, 30000);
		if (imsg.hdr.ih_type == IMSG_CTL_STATS)
			ok = msg_stats_decode(imsg.data, imsg.len, st);
		end = imsg.hdr.ih_type == IMSG_CTL_END;
		imsg_free(&imsg);
	} while (!end);
	bench_ctl_close(ib, fd);
	return (ok);
}

/* Wait (5 s at most) until the L1.5 pool is full; 0 if it is. */
static int
bench_pool_full(const char *sock, struct msg_stats *st)
{
	const struct msg_pool_tier *pt = &st->st_pool.p_tier[TIER_L15 - 1];
	uint64_t	 t0 = bench_now_ns();

	do {
		if (bench_stats(sock, st) == -1)
			errx(1, "bad statistics reply");
		if (pt->pt_size > 0 && pt->pt_ready == pt->pt_size)
			return (0);
		usleep(500);
	} while (bench_now_ns() - t0 < 5000000000ULL);
	return (-1);
}

/* Pss of one process, from smaps_rollup; 0 if it cannot be read. */
static uint64_t
bench_pss_kib(pid_t pid)
{
	char			 path[64], line[256];
	unsigned long long	 kib = 0;
	FILE			*fp;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return (0);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "Pss: %llu kB", &kib) == 1)
			break;
	fclose(fp);
	return (kib);
}

/*
 * The idle pool's pid 1s are the fencer's children once no fence runs:
 * their PSS (smem's measure; smem is not installed), and the fencer's.
 */
static void
bench_pool_pss(pid_t fencer, uint32_t size)
{
	char		 path[64];
	FILE		*fp;
	uint64_t	 sum = 0;
	int		 pid, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)fencer,
	    (int)fencer);
	if ((fp = fopen(path, "re")) == NULL) {
		bench_skip("pooled boot", "PSS of one idle pool pid 1",
		    "no /proc/PID/task/PID/children");
		return;
	}
	while (fscanf(fp, "%d", &pid) == 1) {
		sum += bench_pss_kib(pid);
		n++;
	}
	fclose(fp);
	if (n == 0 || (uint32_t)n != size) {
		bench_skip("pooled boot", "PSS of one idle pool pid 1",
		    "the fencer's children are not the pool alone");
		return;
	}
	bench_value("pooled boot", "idle pool pid 1s (pool L1.5)", NULL,
	    "count", n);
	bench_value("pooled boot", "PSS of one idle pool pid 1", NULL, "KiB",
	    (double)sum / n);
	bench_value("pooled boot", "the fencer's PSS beside them", NULL, "KiB",
	    (double)bench_pss_kib(fencer));
}

/* One boot of KEY (cold or not) and its stop: 0, or -1 if it failed. */
static int
bench_boot_stop(const char *sock, const char *key, int cold,
    struct msg_fence *f, uint64_t *ns)
{
	struct msg_boot	 b;
	struct msg_fence_req q;
	uint64_t	 t0;
	void		*buf;
	size_t		 len;
	int		 r;

	memset(&b, 0, sizeof(b));
	strlcpy(b.b_key, key, sizeof(b.b_key));
	b.b_tier = TIER_L15;
	b.b_cold = cold;
	if (msg_boot_encode(&b, &buf, &len) == -1)
		err(1, "encode");
	t0 = bench_now_ns();
	r = bench_ctl_call(sock, IMSG_CTL_BOOT, buf, len, f);
	*ns = bench_now_ns() - t0;
	free(buf);
	if (r == -1) {
		warnx("boot %s failed", key);
		return (-1);
	}
	memset(&q, 0, sizeof(q));
	q.r_owner = MSG_OWNER_NONE;
	strlcpy(q.r_key, key, sizeof(q.r_key));
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		err(1, "encode");
	bench_ctl_call(sock, IMSG_CTL_STOP, buf, len, NULL);
	free(buf);
	return (0);
}

/*
 * RUNS pooled L1.5 boots, each taken from a full pool, then stopped;
 * each followed by a cold one, so that both samples see the same load
 * (this machine is shared: rows taken minutes apart differ by more than
 * the pool saves).
 */
static void
bench_pooled(const char *sock, size_t runs)
{
	struct msg_fence f;
	struct msg_stats st;
	uint64_t	*req, *agent, *take, *creq, *cagent, t0, w0, ns;
	uint64_t	 wait_ns = 0;
	size_t		 i, n = 0, nc = 0, cold = 0;
	char		 key[FENCE_KEY_SIZE];

	if (bench_pool_full(sock, &st) == -1) {
		bench_skip("pooled boot", "fenced L1.5 pooled boot (fencectl)",
		    "no L1.5 pool configured, or it does not fill");
		return;
	}
	bench_pool_pss(st.st_pid[PROC_FENCER],
	    st.st_pool.p_tier[TIER_L15 - 1].pt_size);
	if ((req = calloc(runs, sizeof(*req))) == NULL ||
	    (agent = calloc(runs, sizeof(*agent))) == NULL ||
	    (take = calloc(runs, sizeof(*take))) == NULL ||
	    (creq = calloc(runs, sizeof(*creq))) == NULL ||
	    (cagent = calloc(runs, sizeof(*cagent))) == NULL)
		err(1, "calloc");
	w0 = bench_now_ns();
	for (i = 0; i < runs; i++) {
		/* The pool refills off the request's path: not timed. */
		t0 = bench_now_ns();
		if (bench_pool_full(sock, &st) == -1)
			errx(1, "the L1.5 pool does not refill");
		wait_ns += bench_now_ns() - t0;
		snprintf(key, sizeof(key), "bench-pool-%zu", i);
		if (bench_boot_stop(sock, key, 0, &f, &ns) == 0) {
			if (!f.f_pooled)
				cold++;
			else {
				req[n] = ns;
				take[n] = (uint64_t)f.f_timings.t_take_us * 1000;
				agent[n++] = (uint64_t)f.f_timings.t_agent_us *
				    1000;
			}
		}
		t0 = bench_now_ns();
		snprintf(key, sizeof(key), "bench-cold-%zu", i);
		if (bench_boot_stop(sock, key, 1, &f, &ns) == 0) {
			creq[nc] = ns;
			cagent[nc++] = (uint64_t)f.f_timings.t_agent_us * 1000;
		}
		wait_ns += bench_now_ns() - t0;
	}
	if (cold > 0)
		printf("note: %zu of %zu boots found no pool fence ready\n",
		    cold, runs);
	bench_section("pooled boot", BWRAP_L15);
	bench_row("fenced L1.5 pooled boot (fencectl)", req, n,
	    (bench_now_ns() - w0 - wait_ns) / 1e9);
	bench_row("fenced L1.5 pooled request->agent ready", agent, n, 0);
	bench_row("the take (in the fencer)", take, n, 0);
	bench_row("fenced L1.5 cold boot, interleaved", creq, nc, 0);
	bench_row("fenced L1.5 cold request->agent ready, interleaved",
	    cagent, nc, 0);
	free(req);
	free(agent);
	free(take);
	free(creq);
	free(cagent);
}

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
		/* A cold boot even where a pool is configured. */
		b.b_cold = 1;
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
	bench_pooled(argv[1], runs);
	bench_section("boot", FORKEXEC);
	bench_cmd(BWRAP_L15, bw, runs);
	bench_cmd(BWRAP_NET, bwn, runs);
	bench_section("boot", NULL);
	bench_cmd(FORKEXEC, fe, runs);
	return (0);
}
