/*
 * density: what idle fences cost, and how many the daemon holds.
 *
 *	density SOCKET RUNS
 *
 * BENCH_DENSITY (default 1000) idle L1.5 fences, BENCH_DENSITY_CLIENTS
 * (default 16) control connections booting them at once, each its next
 * as soon as its last is answered, each with the configured limits, or
 * BENCH_DENSITY_PIDS as its pids limit.  BENCH_UIDS (LOW-HIGH) is the
 * daemon's `fence uids', for the check that nothing is left.
 *
 * With one fence up: the proportional set size of the fence (Pss of
 * /proc/PID/smaps_rollup summed over every process of its cgroup), its
 * memory cgroup's usage and the kernel's part of it, the time of a list
 * and of an exec of /bin/true, and of a probe.  Then the others booted:
 * the wall time until every one is up (or until the daemon refused, and
 * why), the broker's and the fencer's RSS and PSS before and after, the
 * PSS per idle fence at that number, the list and the exec again.  Then
 * stop all, and a count of what is left: processes of the fence uids,
 * and the fences' cgroups.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "bench.h"

#define DENSITY_KEY	"bench-d%zu"
#define CLIENTS_MAX	256
#define TIMES		20	/* lists and execs, with 1 up and N up */
#define PROBES		5
#define CG_PATH_MAX	512

struct mem {
	uint64_t	 m_rss;		/* KiB */
	uint64_t	 m_pss;		/* KiB */
	uint64_t	 m_pss_anon;	/* KiB, of which anonymous */
	uint64_t	 m_pss_file;	/* KiB, of which of files */
	uint64_t	 m_pss_shmem;	/* KiB, of which of shared memory */
	uint64_t	 m_fds;		/* open descriptors */
};

/* One fence booted: its host pid 1, its memory cgroup, its boot. */
struct dfence {
	pid_t		 d_pid;
	char		 d_cg[CG_PATH_MAX];
	struct msg_timings d_t;		/* the fencer's steps */
	uint64_t	 d_done;	/* answered, ns since the first sent */
};

static const char	*sock;
static struct dfence	*fences;
static size_t		 nfences;
static char		 why[MSG_ERROR_TEXT_MAX + MSG_ERROR_CODE_MAX + 4];
static uint32_t		 pids;		/* 0: the limit configured */
static size_t		 listed;	/* fences in the last answer */

/* CPU time in clock ticks: of the whole host (busy), or of one pid. */
static uint64_t
cpu_host(void)
{
	unsigned long long v[8] = { 0 };
	FILE		*fp;
	int		 r;

	if ((fp = fopen("/proc/stat", "r")) == NULL)
		err(1, "/proc/stat");
	/* cpu user nice system idle iowait irq softirq steal */
	r = fscanf(fp, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
	    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(fp);
	if (r != 8)
		errx(1, "/proc/stat: no cpu line");
	return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
}

static uint64_t
cpu_pid(pid_t pid)
{
	char		 path[64], buf[1024], *p;
	unsigned long long ut, st, cut, cst;
	FILE		*fp;
	size_t		 n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return (0);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/*
	 * After the command's closing parenthesis: fields 3 on; its own
	 * time and that of the children it waited for.
	 */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 2,
	    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
	    &ut, &st, &cut, &cst) != 4)
		return (0);
	return (ut + st + cut + cst);
}

/* The open descriptors of a process. */
static uint64_t
fd_count(pid_t pid)
{
	char		 path[64];
	DIR		*d;
	struct dirent	*de;
	uint64_t	 n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
	if ((d = opendir(path)) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return (n);
}

/* Rss and Pss of one process, added to m; -1 when it is gone. */
static int
mem_add(pid_t pid, struct mem *m)
{
	char		 path[64], line[256];
	unsigned long long v;
	FILE		*fp;

	snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup", (long)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "Rss: %llu kB", &v) == 1)
			m->m_rss += v;
		else if (sscanf(line, "Pss: %llu kB", &v) == 1)
			m->m_pss += v;
		else if (sscanf(line, "Pss_Anon: %llu kB", &v) == 1)
			m->m_pss_anon += v;
		else if (sscanf(line, "Pss_File: %llu kB", &v) == 1)
			m->m_pss_file += v;
		else if (sscanf(line, "Pss_Shmem: %llu kB", &v) == 1)
			m->m_pss_shmem += v;
	}
	fclose(fp);
	return (0);
}

/*
 * The cgroup of pid for a controller as a folder on this host: v1's
 * hierarchy of it, else v2's (at /sys/fs/cgroup or its unified/).
 */
static int
cg_of(pid_t pid, const char *ctl, char *out, size_t size)
{
	size_t		 cl = strlen(ctl);
	char		 path[64], line[CG_PATH_MAX], v2[CG_PATH_MAX] = "";
	char		*p, *rel = NULL;
	struct stat	 sb;
	FILE		*fp;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strchr(line, ':')) == NULL)
			continue;
		if (strncmp(p + 1, ctl, cl) == 0 && p[1 + cl] == ':') {
			rel = p + 2 + cl;
			break;
		}
		if (strncmp(line, "0::", 3) == 0)
			strlcpy(v2, line + 3, sizeof(v2));
	}
	fclose(fp);
	if (rel != NULL) {
		snprintf(out, size, "/sys/fs/cgroup/%s%s", ctl, rel);
		return (stat(out, &sb) == 0 ? 0 : -1);
	}
	if (v2[0] == '\0')
		return (-1);
	snprintf(out, size, "/sys/fs/cgroup%s", v2);
	if (stat(out, &sb) == 0 && strcmp(v2, "/") != 0)
		return (0);
	snprintf(out, size, "/sys/fs/cgroup/unified%s", v2);
	return (stat(out, &sb) == 0 ? 0 : -1);
}

/* Every process of a cgroup and of the cgroups under it, added to m. */
static size_t
cg_mem(const char *cg, struct mem *m)
{
	char		 path[PATH_MAX];
	DIR		*d;
	struct dirent	*de;
	FILE		*fp;
	long		 pid;
	size_t		 n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	if ((fp = fopen(path, "r")) != NULL) {
		while (fscanf(fp, "%ld", &pid) == 1)
			if (mem_add(pid, m) == 0)
				n++;
		fclose(fp);
	}
	if ((d = opendir(cg)) == NULL)
		return (n);
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", cg, de->d_name);
		n += cg_mem(path, m);
	}
	closedir(d);
	return (n);
}

/* A number from a cgroup file (v1: the file, v2: "NAME v" of a stat). */
static int
cg_read(const char *cg, const char *file, const char *field, uint64_t *v)
{
	char		 path[PATH_MAX], line[256];
	unsigned long long x;
	size_t		 fl = field != NULL ? strlen(field) : 0;
	FILE		*fp;
	int		 r = -1;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if ((fp = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (field != NULL && (strncmp(line, field, fl) != 0 ||
		    line[fl] != ' '))
			continue;
		if (sscanf(line + fl, "%llu", &x) == 1) {
			*v = x;
			r = 0;
		}
		break;
	}
	fclose(fp);
	return (r);
}

/*
 * One request on a connection of its own, answered up to END: -1 when
 * fenced refused (why says why).  A msg_stats in the answer goes to st.
 */
static int
ctl_do(uint32_t type, void *buf, size_t len, struct msg_stats *st)
{
	struct imsgbuf	*ib;
	struct imsg	 imsg;
	struct msg_error e;
	int		 fd, ok = 0, end = 0;

	ib = bench_ctl_send(sock, type, buf, len, &fd);
	listed = 0;
	while (!end) {
		bench_ctl_next(ib, fd, &imsg, 60000);
		switch (imsg.hdr.ih_type) {
		case IMSG_CTL_STATS:
			if (st == NULL ||
			    msg_stats_decode(imsg.data, imsg.len, st) == -1)
				errx(1, "unexpected stats");
			break;
		case IMSG_CTL_ERROR:
			if (msg_error_decode(imsg.data, imsg.len, &e) == 0)
				snprintf(why, sizeof(why), "%s: %s", e.e_code,
				    e.e_message);
			ok = -1;
			break;
		case IMSG_CTL_FENCE:
			listed++;
			break;
		case IMSG_CTL_END:
			end = 1;
			break;
		}
		imsg_free(&imsg);
	}
	bench_ctl_close(ib, fd);
	return (ok);
}

static void
stats(struct msg_stats *st)
{
	if (ctl_do(IMSG_CTL_SHOW_STATS, NULL, 0, st) == -1)
		errx(1, "show stats: %s", why);
}

static void
daemon_mem(struct mem *broker, struct mem *fencer)
{
	struct msg_stats st;

	stats(&st);
	memset(broker, 0, sizeof(*broker));
	memset(fencer, 0, sizeof(*fencer));
	if (mem_add(st.st_pid[PROC_BROKER], broker) == -1 ||
	    mem_add(st.st_pid[PROC_FENCER], fencer) == -1)
		errx(1, "cannot read the broker's or the fencer's memory");
	broker->m_fds = fd_count(st.st_pid[PROC_BROKER]);
	fencer->m_fds = fd_count(st.st_pid[PROC_FENCER]);
}

static void
key_req(struct msg_fence_req *q, size_t k)
{
	memset(q, 0, sizeof(*q));
	q->r_owner = MSG_OWNER_NONE;
	if (k != (size_t)-1)
		snprintf(q->r_key, sizeof(q->r_key), DENSITY_KEY, k);
}

/* One request, answered: its time in ns. */
static uint64_t
timed(uint32_t type, void *buf, size_t len)
{
	uint64_t	 t0 = bench_now_ns();

	if (ctl_do(type, buf, len, NULL) == -1)
		errx(1, "%s refused: %s", msg_type_name(type), why);
	return (bench_now_ns() - t0);
}

/* TIMES lists of all and execs of /bin/true in fence 0, as rows. */
static void
list_exec(const char *at, const char *anchor_at)
{
	const char	*aat = anchor_at != NULL ? anchor_at : "";
	struct msg_fence_req q;
	struct msg_exec	 x;
	char		*argv[] = { "/bin/true", NULL };
	char		 what[64], anchor[64];
	uint64_t	 ns[TIMES];
	void		*buf;
	size_t		 len, i;

	key_req(&q, (size_t)-1);
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		err(1, "encode");
	for (i = 0; i < TIMES; i++)
		ns[i] = timed(IMSG_CTL_LIST, buf, len);
	free(buf);
	snprintf(what, sizeof(what), "list, %s", at);
	snprintf(anchor, sizeof(anchor), "list, %s", aat);
	bench_row_to("density", what, anchor_at != NULL ? anchor : "",
	    "median", ns, TIMES, 0);
	/* Stopped fences are listed too, for 10 minutes (docs/http.md). */
	snprintf(what, sizeof(what), "fences in that list, %s", at);
	snprintf(anchor, sizeof(anchor), "fences in that list, %s", aat);
	bench_value("density", what, anchor_at != NULL ? anchor : NULL,
	    "count", (double)listed);

	memset(&x, 0, sizeof(x));
	x.x_owner = MSG_OWNER_NONE;
	snprintf(x.x_key, sizeof(x.x_key), DENSITY_KEY, (size_t)0);
	x.x_argv = argv;
	x.x_argc = 1;
	if (msg_exec_encode(&x, &buf, &len) == -1)
		err(1, "encode");
	for (i = 0; i < TIMES; i++)
		ns[i] = timed(IMSG_CTL_EXEC, buf, len);
	free(buf);
	snprintf(what, sizeof(what), "exec /bin/true, %s", at);
	snprintf(anchor, sizeof(anchor), "exec /bin/true, %s", aat);
	bench_row_to("density", what, anchor_at != NULL ? anchor : "",
	    "median", ns, TIMES, 0);
}

/* The fence just booted: its pid 1 and its cgroup, kept. */
static void
fence_keep(const struct msg_fence *f, uint64_t done)
{
	struct dfence	*d = &fences[nfences++];

	d->d_pid = f->f_pid;
	d->d_t = f->f_timings;
	d->d_done = done;
	if (cg_of(f->f_pid, "memory", d->d_cg, sizeof(d->d_cg)) == -1)
		d->d_cg[0] = '\0';
}

struct client {
	int		 c_fd;
	struct imsgbuf	*c_ib;
	uint64_t	 c_t0;
	int		 c_busy;
	int		 c_ok;
	struct msg_fence c_f;
};

static void
client_boot(struct client *c, size_t k)
{
	struct msg_boot	 b;
	void		*buf;
	size_t		 len;

	memset(&b, 0, sizeof(b));
	snprintf(b.b_key, sizeof(b.b_key), DENSITY_KEY, k);
	b.b_tier = TIER_L15;
	b.b_limits.fl_pids = pids;
	if (msg_boot_encode(&b, &buf, &len) == -1)
		err(1, "encode");
	if (imsgbuf_compose(c->c_ib, IMSG_CTL_BOOT, 0, 0, -1, buf, len) ==
	    -1 || imsgbuf_flush(c->c_ib) == -1)
		err(1, "send");
	free(buf);
	c->c_t0 = bench_now_ns();
	c->c_busy = 1;
	c->c_ok = 0;
}

/*
 * Boot fences from..want-1 over nclients connections at once; stop
 * sending at the first refusal (its reason in why).  The boot times in
 * ns[], their count.
 */
static size_t
boot_many(size_t from, size_t want, int nclients, uint64_t *ns)
{
	uint64_t	 w0 = bench_now_ns();
	struct client	 cl[CLIENTS_MAX];
	struct pollfd	 pfd[CLIENTS_MAX];
	struct imsg	 imsg;
	struct msg_error e;
	size_t		 next = from, n = 0;
	int		 i, r, busy, refused = 0;

	for (i = 0; i < nclients; i++) {
		cl[i].c_fd = bench_ctl_connect(sock);
		if ((cl[i].c_ib = imsgbuf_new(cl[i].c_fd)) == NULL)
			err(1, "imsgbuf_new");
		cl[i].c_busy = 0;
	}
	for (i = 0; i < nclients && next < want; i++)
		client_boot(&cl[i], next++);
	for (;;) {
		busy = 0;
		for (i = 0; i < nclients; i++) {
			pfd[i].fd = cl[i].c_busy ? cl[i].c_fd : -1;
			pfd[i].events = POLLIN;
			busy += cl[i].c_busy;
		}
		if (busy == 0)
			break;
		if (poll(pfd, nclients, 60000) <= 0)
			errx(1, "no boot answered in 60 s");
		for (i = 0; i < nclients; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (imsgbuf_read(cl[i].c_ib) == 0)
				errx(1, "fenced hung up");
			while ((r = imsgbuf_get(cl[i].c_ib, &imsg)) == 1) {
				switch (imsg.hdr.ih_type) {
				case IMSG_CTL_FENCE:
					if (msg_fence_decode(imsg.data,
					    imsg.len, &cl[i].c_f) == 0)
						cl[i].c_ok = 1;
					break;
				case IMSG_CTL_ERROR:
					if (!refused && msg_error_decode(
					    imsg.data, imsg.len, &e) == 0)
						snprintf(why, sizeof(why),
						    "%s: %s", e.e_code,
						    e.e_message);
					refused = 1;
					break;
				case IMSG_CTL_END:
					cl[i].c_busy = 0;
					if (cl[i].c_ok) {
						ns[n++] = bench_now_ns() -
						    cl[i].c_t0;
						fence_keep(&cl[i].c_f,
						    bench_now_ns() - w0);
					}
					if (!refused && next < want)
						client_boot(&cl[i], next++);
					break;
				}
				imsg_free(&imsg);
			}
			if (r == -1)
				err(1, "reply");
		}
	}
	for (i = 0; i < nclients; i++) {
		imsgbuf_free(cl[i].c_ib);
		close(cl[i].c_fd);
	}
	return (n);
}

/* The processes left of the fence uids, on the whole host. */
static size_t
left_procs(uid_t lo, uid_t hi)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 sb;
	char		 path[300];
	size_t		 n = 0;

	if ((d = opendir("/proc")) == NULL)
		err(1, "/proc");
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s", de->d_name);
		if (stat(path, &sb) == 0 && sb.st_uid >= lo && sb.st_uid <= hi)
			n++;
	}
	closedir(d);
	return (n);
}

/*
 * The fences' cgroups left: those of the fences booted, and any other
 * folder beside them in the daemon's (a boot that failed half-way),
 * but the daemon's own leaf of v2 and the warm pool's fences (pool.*),
 * which wait there as long as the daemon runs.
 */
static size_t
left_cgroups(void)
{
	char		 folder[CG_PATH_MAX], *p;
	struct stat	 sb;
	struct dirent	*de;
	DIR		*d;
	size_t		 i, n = 0;

	for (i = 0; i < nfences; i++)
		if (fences[i].d_cg[0] != '\0' && stat(fences[i].d_cg, &sb) == 0)
			n++;
	if (n > 0 || nfences == 0 || fences[0].d_cg[0] == '\0')
		return (n);
	strlcpy(folder, fences[0].d_cg, sizeof(folder));
	if ((p = strrchr(folder, '/')) == NULL || p == folder)
		return (n);
	*p = '\0';
	if ((d = opendir(folder)) == NULL)
		return (n);
	while ((de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
		    strcmp(de->d_name, "daemon") != 0 &&
		    strncmp(de->d_name, "pool.", 5) != 0)
			n++;
	closedir(d);
	return (n);
}

static void
mem_rows(const char *at, const char *anchor_at, const struct mem *b,
    const struct mem *f)
{
	char	 what[64], anchor[64];

#define MEMROW(name, v) do {						\
	snprintf(what, sizeof(what), name ", %s", at);			\
	snprintf(anchor, sizeof(anchor), name ", %s",			\
	    anchor_at != NULL ? anchor_at : "");			\
	bench_value("density", what, anchor_at != NULL ? anchor : NULL,	\
	    "KiB", (double)(v));					\
} while (0)
	MEMROW("broker RSS", b->m_rss);
	MEMROW("broker PSS", b->m_pss);
	MEMROW("fencer RSS", f->m_rss);
	MEMROW("fencer PSS", f->m_pss);
#undef MEMROW
#define FDROW(name, v) do {						\
	snprintf(what, sizeof(what), name ", %s", at);			\
	snprintf(anchor, sizeof(anchor), name ", %s",			\
	    anchor_at != NULL ? anchor_at : "");			\
	bench_value("density", what, anchor_at != NULL ? anchor : NULL,	\
	    "count", (double)(v));					\
} while (0)
	FDROW("broker descriptors", b->m_fds);
	FDROW("fencer descriptors", f->m_fds);
#undef FDROW
}

/*
 * Whether boots slow down as fences add up: of the fences kept from
 * index from, the first and the last SEG answered, the fencer's request
 * to agent ready of each (a row) and the rate over the span they were
 * answered in; the median of every step of theirs printed beside.
 */
#define SEG	100
static void
boot_segments(const char *round, size_t from)
{
	static const char *steps[] = { "namespaces", "mounts", "cgroup",
	    "seccomp", "exec", "agent" };
	uint64_t	 ns[SEG], st[6][SEG];
	size_t		 seg, i, j, k, first;
	char		 what[96];
	double		 span;

	if (nfences - from < 2 * SEG)
		return;
	for (seg = 0; seg < 2; seg++) {
		first = seg == 0 ? from : nfences - SEG;
		for (i = 0; i < SEG; i++) {
			const struct msg_timings *t = &fences[first + i].d_t;

			ns[i] = (uint64_t)t->t_agent_us * 1000;
			st[0][i] = t->t_namespaces_us;
			st[1][i] = t->t_mounts_us;
			st[2][i] = t->t_cgroup_us;
			st[3][i] = t->t_seccomp_us;
			st[4][i] = t->t_exec_us;
			st[5][i] = t->t_agent_us;
		}
		span = (fences[first + SEG - 1].d_done -
		    fences[first].d_done) / 1e9;
		snprintf(what, sizeof(what), "%s: request->agent ready, "
		    "%s %d", round, seg == 0 ? "first" : "last", SEG);
		bench_row_to("density", what, "", "median", ns, SEG, span);
		printf("  step medians (us):");
		for (j = 0; j < 6; j++) {
			/* A small insertion sort: SEG values. */
			for (i = 1; i < SEG; i++)
				for (k = i; k > 0 && st[j][k - 1] > st[j][k];
				    k--) {
					uint64_t x = st[j][k];

					st[j][k] = st[j][k - 1];
					st[j][k - 1] = x;
				}
			printf(" %s %llu", steps[j],
			    (unsigned long long)st[j][SEG / 2]);
		}
		printf("\n");
	}
}

/*
 * The CPU time the boots took, per fence: the whole host's (every
 * fence's own processes and first probe, the daemon, and anything else
 * the machine ran meanwhile) and each daemon process's.  (A fence's own
 * cannot be told apart: v1's cpu hierarchy has no usage, and its pid 1
 * does not wait for the processes it started in its times.)
 */
static void
cpu_rows(const struct msg_stats *st, const uint64_t *c0, size_t n)
{
	static const char *names[PROC_MAX] = { "parent", "broker", "fencer",
	    "prober", "egress" };
	double		 hz = sysconf(_SC_CLK_TCK), all;
	char		 what[96];
	int		 i;

	if (n == 0 || hz <= 0)
		return;
	all = (cpu_host() - c0[PROC_MAX]) * 1000.0 / hz / n;
	bench_value("density", "CPU per fence booted, whole host", NULL,
	    "ms cpu", all);
	for (i = 0; i < PROC_MAX; i++) {
		snprintf(what, sizeof(what), "CPU per fence booted, the %s "
		    "(and its children waited for)", names[i]);
		bench_value("density", what, "CPU per fence booted, whole host",
		    "ms cpu", (cpu_pid(st->st_pid[i]) - c0[i]) * 1000.0 / hz / n);
	}
}

/* Stop them all, then nothing of theirs may be left. */
static void
stop_all(size_t n, uid_t lo, uid_t hi, const char *round)
{
	struct msg_fence_req q;
	char		 what[96];
	void		*buf;
	size_t		 len;
	uint64_t	 u;
	int		 wait;

	key_req(&q, (size_t)-1);
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		err(1, "encode");
	u = timed(IMSG_CTL_STOP, buf, len);
	free(buf);
	snprintf(what, sizeof(what), "%sstop all %zu", round, n);
	bench_row_to("density", what, "", "median", &u, 1, 0);
	for (wait = 0; wait < 100; wait++) {
		if (left_cgroups() == 0 && (lo == 0 ||
		    left_procs(lo, hi) == 0))
			break;
		usleep(100000);
	}
	snprintf(what, sizeof(what), "%sprocesses of the fence uids left",
	    round);
	if (lo == 0)
		bench_skip("density", what, "BENCH_UIDS not set");
	else
		bench_value("density", what, NULL, "count",
		    (double)left_procs(lo, hi));
	snprintf(what, sizeof(what), "%sfence cgroups left", round);
	bench_value("density", what, NULL, "count", (double)left_cgroups());
}

int
main(int argc, char *argv[])
{
	struct msg_boot	 b;
	struct msg_fence f;
	struct msg_fence_req q;
	struct mem	 one, all, b1, f1, bn, fn;
	struct msg_stats st;
	uint64_t	 c0[PROC_MAX + 1];
	uint64_t	*ns, w0, v, pns[PROBES];
	const char	*s;
	char		 at[64], what[96];
	void		*buf;
	size_t		 want, len, i, n, procs;
	uid_t		 lo = 0, hi = 0;
	int		 nclients;
	double		 wall;

	if (argc != 3)
		errx(1, "usage: density socket runs");
	sock = argv[1];
	want = bench_env_num("BENCH_DENSITY", 1000, 100000);
	nclients = bench_env_num("BENCH_DENSITY_CLIENTS", 16, CLIENTS_MAX);
	if (getenv("BENCH_DENSITY_PIDS") != NULL)
		pids = bench_env_num("BENCH_DENSITY_PIDS", 0, PIDS_MAX);
	if ((s = getenv("BENCH_UIDS")) != NULL &&
	    sscanf(s, "%u-%u", &lo, &hi) != 2)
		errx(1, "BENCH_UIDS: LOW-HIGH");
	if ((fences = calloc(want, sizeof(*fences))) == NULL ||
	    (ns = calloc(want, sizeof(*ns))) == NULL)
		err(1, "calloc");

	printf("\n%-44s %12s\n", "density (idle L1.5 fences)", "value");
	memset(&b, 0, sizeof(b));
	snprintf(b.b_key, sizeof(b.b_key), DENSITY_KEY, (size_t)0);
	b.b_tier = TIER_L15;
	b.b_limits.fl_pids = pids;
	if (msg_boot_encode(&b, &buf, &len) == -1 ||
	    bench_ctl_call(sock, IMSG_CTL_BOOT, buf, len, &f) == -1)
		errx(1, "cannot boot %s", b.b_key);
	free(buf);
	fence_keep(&f, 0);
	/* Let its first probe end: an idle fence is one nothing runs in. */
	sleep(2);

	memset(&one, 0, sizeof(one));
	if (fences[0].d_cg[0] == '\0')
		bench_skip("idle memory", "PSS of one idle L1.5 fence",
		    "its memory cgroup was not found");
	else {
		procs = cg_mem(fences[0].d_cg, &one);
		bench_value("idle memory", "processes in one idle L1.5 fence",
		    NULL, "count", procs);
		bench_value("idle memory", "PSS of one idle L1.5 fence", NULL,
		    "KiB", one.m_pss);
		/*
		 * Its files' and shared memory's pages (the agent's text)
		 * are shared with every other fence: one alone bears them
		 * whole.
		 */
		bench_value("idle memory", "of which anonymous (Pss_Anon)",
		    NULL, "KiB", one.m_pss_anon);
		bench_value("idle memory", "of which files (Pss_File)", NULL,
		    "KiB", one.m_pss_file);
		bench_value("idle memory", "of which shared memory (Pss_Shmem)",
		    NULL, "KiB", one.m_pss_shmem);
		bench_value("idle memory", "RSS of one idle L1.5 fence", NULL,
		    "KiB", one.m_rss);
		if (cg_read(fences[0].d_cg, "memory.usage_in_bytes", NULL,
		    &v) == 0 || cg_read(fences[0].d_cg, "memory.current",
		    NULL, &v) == 0)
			bench_value("idle memory", "its memory cgroup's usage",
			    NULL, "KiB", v / 1024.0);
		if (cg_read(fences[0].d_cg, "memory.kmem.usage_in_bytes",
		    NULL, &v) == 0 || cg_read(fences[0].d_cg, "memory.stat",
		    "kernel", &v) == 0)
			bench_value("idle memory", "of which kernel memory",
			    NULL, "KiB", v / 1024.0);
	}

	/* The probe of that fence, PROBES times. */
	key_req(&q, 0);
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		err(1, "encode");
	for (i = 0; i < PROBES; i++)
		pns[i] = timed(IMSG_CTL_PROBE, buf, len);
	free(buf);
	printf("%-34s %6s %10s %10s\n", "probe", "runs", "median ms",
	    "p99 ms");
	bench_row_to("probe", "probe of an L1.5 fence (control socket)",
	    "", "median", pns, PROBES, 0);

	list_exec("1 up", NULL);
	daemon_mem(&b1, &f1);
	mem_rows("1 up", NULL, &b1, &f1);

	stats(&st);
	for (i = 0; i < PROC_MAX; i++)
		c0[i] = cpu_pid(st.st_pid[i]);
	c0[PROC_MAX] = cpu_host();
	w0 = bench_now_ns();
	n = 1 + boot_many(1, want, nclients, ns);
	wall = (bench_now_ns() - w0) / 1e9;
	cpu_rows(&st, c0, n - 1);
	/* As for the first: their first probes ended, they are idle. */
	sleep(2);
	snprintf(at, sizeof(at), "%zu up", n);
	snprintf(what, sizeof(what), "boot of %zu more, %d clients at once",
	    n - 1, nclients);
	bench_row_to("density", what, "fenced L1.5 boot (fencectl)", "median",
	    ns, n - 1, wall);
	snprintf(what, sizeof(what), "wall time to %zu fences up", n);
	bench_value("density", what, NULL, "s", wall);
	if (n < want) {
		snprintf(what, sizeof(what), "%zu fences up", want);
		bench_skip("density", what, why[0] != '\0' ? why :
		    "boots failed");
	}
	daemon_mem(&bn, &fn);
	mem_rows(at, "1 up", &bn, &fn);
	memset(&all, 0, sizeof(all));
	for (i = 0, procs = 0; i < nfences; i++)
		if (fences[i].d_cg[0] != '\0') {
			procs += cg_mem(fences[i].d_cg, &all);
		}
	snprintf(what, sizeof(what), "PSS per idle fence, %zu up", n);
	bench_value("density", what, "PSS of one idle L1.5 fence", "KiB",
	    nfences ? (double)all.m_pss / nfences : 0);
	snprintf(what, sizeof(what), "of which anonymous, %zu up", n);
	bench_value("density", what, "of which anonymous (Pss_Anon)", "KiB",
	    nfences ? (double)all.m_pss_anon / nfences : 0);
	list_exec(at, "1 up");

	boot_segments("first round", 1);
	stop_all(n, lo, hi, "");

	/*
	 * The same keys again, on a daemon that has seen them: their uids
	 * are on record already, every other step is as before.
	 */
	nfences = 0;
	why[0] = '\0';
	w0 = bench_now_ns();
	n = boot_many(0, n, nclients, ns);
	wall = (bench_now_ns() - w0) / 1e9;
	snprintf(what, sizeof(what), "again, same keys: boot of %zu, %d "
	    "clients at once", n, nclients);
	bench_row_to("density", what, "fenced L1.5 boot (fencectl)", "median",
	    ns, n, wall);
	snprintf(what, sizeof(what), "again, same keys: wall time to %zu up",
	    n);
	bench_value("density", what, NULL, "s", wall);
	if (why[0] != '\0')
		bench_skip("density", "again, same keys: every one up", why);
	boot_segments("again, same keys", 0);
	stop_all(n, lo, hi, "again, same keys: ");
	free(fences);
	free(ns);
	return (0);
}
