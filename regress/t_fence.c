/*
 * t_fence: drives fence_start()/fence_stop() for regress/fence_test.sh
 * and for measuring boots.
 *
 *	t_fence [-t tier] [-u uid] [-g gid] [-U user] [-k key]
 *	    [-h home | -H homes] [-b bindir] [-m bytes] [-p pids] [-c milli]
 *	    [-I bytes] [-C sub | -n] [-L] [-A] [-w sec] [-K] -- init [arg...]
 *		boot a fence running bindir/init as pid 1, wait for it,
 *		stop it and check that nothing is left
 *	t_fence ... -N count -- init [arg...]	boot count times, timings
 *	t_fence -R count -- command [arg...]	fork+exec+wait timings
 *	t_fence -x -H homes -k key -u uid -g gid
 *						fencer_home_prepare() only
 *	t_fence -P [-C sub]			print the cgroup parents
 *	t_fence -Q [-C sub]			what the kernel lacks
 *	t_fence -Z arch nr [arg0 [arg1]]	run the fence's seccomp
 *						program on one call
 *	t_fence -Y arch nr [arg0 [arg1]]	the same, the program whose
 *						refusals notify the fencer
 *
 * -L opens a TCP listener on 127.0.0.1 and -A an abstract unix socket
 * before the boot; "@PORT@" and "@ABS@" in the init's arguments become
 * their port and name.  -K boots and then waits forever (the test kills
 * us to see the fence die with its parent).  -S asks for the seccomp
 * filter to be left out, which only a FENCED_TEST_HOOKS build honours.
 * -I bytes (with -H dir) makes the home an ext4 image of that size,
 * dir/homes/<uid>/<key>.img (fencer_home_image()).  -E makes clone3
 * answer ENOSYS to us (tf_deny_clone3()).  The boot's output says
 * whether pid 1 was born in its v2 cgroup ("cgroup join: ...").
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"
#include "fencer.h"
#include "cg.h"
#include "fencer_home.h"
#include "log.h"

#ifndef P_PIDFD
#define P_PIDFD		3
#endif

#define TF_ARGS_MAX	256

static struct fence_spec tf_spec;
static struct fencer_home_img tf_img;
static int	 tf_loopfd = -1;
static char		 tf_cg[3][PATH_MAX];
static char		 tf_port[16], tf_abs[64];
static char		*tf_argv[TF_ARGS_MAX];

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: t_fence [-t tier] [-u uid] [-g gid] "
	    "[-U user] [-k key] [-h home | -H homes]\n\t[-b bindir] "
	    "[-m bytes] [-p pids] [-c milli] [-C sub | -n] [-L] [-A]\n\t"
	    "[-w sec] [-K] [-E] [-N count] [-J keyname] -- init [arg ...]\n"
	    "       t_fence -R count -- command [arg ...]\n"
	    "       t_fence -x -H homes -k key -u uid -g gid\n"
	    "       t_fence -P [-C sub]\n"
	    "       t_fence -Q [-C sub]\n"
	    "       t_fence -Z arch nr [arg0 [arg1]]\n"
	    "       t_fence -Y arch nr [arg0 [arg1]]\n");
	exit(64);
}

static uint64_t
tf_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
}

static int
tf_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* median and 99th percentile, in microseconds */
static void
tf_stats(const char *what, uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), tf_cmp);
	printf("%-28s median %7" PRIu64 " us  p99 %7" PRIu64 " us  (n=%zu)\n",
	    what, v[n / 2], v[n - 1 - n / 100], n);
}

/*
 * A classic BPF interpreter, enough for the seccomp programs libseccomp
 * writes: it lets the test check what the filter does with i386 and x32
 * calls even on a kernel that refuses to run them at all.
 */
static uint32_t
tf_bpf_run(const struct sock_fprog *prog, const struct seccomp_data *d)
{
	const uint8_t	*data = (const uint8_t *)d;
	uint32_t	 A = 0, X = 0, M[BPF_MEMWORDS];
	size_t		 pc;

	memset(M, 0, sizeof(M));
	for (pc = 0; pc < prog->len; pc++) {
		const struct sock_filter *f = &prog->filter[pc];
		uint32_t k = f->k, v = BPF_SRC(f->code) == BPF_X ? X : k;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (k > sizeof(*d) - 4)
					return (0xdeadbeef);
				memcpy(&A, data + k, 4);
			} else if (f->code == (BPF_LD | BPF_IMM))
				A = k;
			else if (f->code == (BPF_LD | BPF_MEM) &&
			    k < BPF_MEMWORDS)
				A = M[k];
			else if (f->code == (BPF_LD | BPF_W | BPF_LEN))
				A = sizeof(*d);
			else
				return (0xdeadbeef);
			break;
		case BPF_LDX:
			if (f->code == (BPF_LDX | BPF_IMM))
				X = k;
			else if (f->code == (BPF_LDX | BPF_MEM) &&
			    k < BPF_MEMWORDS)
				X = M[k];
			else if (f->code == (BPF_LDX | BPF_W | BPF_LEN))
				X = sizeof(*d);
			else
				return (0xdeadbeef);
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return (0xdeadbeef);
			M[k] = BPF_CLASS(f->code) == BPF_ST ? A : X;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: A += v; break;
			case BPF_SUB: A -= v; break;
			case BPF_MUL: A *= v; break;
			case BPF_DIV: if (v == 0) return (0); A /= v; break;
			case BPF_MOD: if (v == 0) return (0); A %= v; break;
			case BPF_AND: A &= v; break;
			case BPF_OR: A |= v; break;
			case BPF_XOR: A ^= v; break;
			case BPF_LSH: A <<= v; break;
			case BPF_RSH: A >>= v; break;
			case BPF_NEG: A = -A; break;
			default: return (0xdeadbeef);
			}
			break;
		case BPF_JMP:
			switch (BPF_OP(f->code)) {
			case BPF_JA: pc += k; break;
			case BPF_JEQ: pc += A == v ? f->jt : f->jf; break;
			case BPF_JGT: pc += A > v ? f->jt : f->jf; break;
			case BPF_JGE: pc += A >= v ? f->jt : f->jf; break;
			case BPF_JSET: pc += (A & v) ? f->jt : f->jf; break;
			default: return (0xdeadbeef);
			}
			break;
		case BPF_RET:
			return (BPF_RVAL(f->code) == BPF_A ? A : k);
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		}
	}
	return (0xdeadbeef);
}

static int
tf_seccomp_eval(int argc, char *argv[], int notify)
{
	struct seccomp_data	 d;
	const struct sock_fprog	*prog;
	char			 err[FENCE_ERR_MAX];
	uint32_t		 r;

	if (argc < 2)
		usage();
	if (fence_init(err, sizeof(err)) == -1 ||
	    (prog = fence_seccomp_program(!notify)) == NULL) {
		fprintf(stderr, "t_fence: no seccomp program: %s\n", err);
		return (1);
	}
	memset(&d, 0, sizeof(d));
	d.nr = (int)strtol(argv[1], NULL, 0);
	if (strcmp(argv[0], "x86_64") == 0)
		d.arch = AUDIT_ARCH_X86_64;
	else if (strcmp(argv[0], "x32") == 0) {
		d.arch = AUDIT_ARCH_X86_64;
		d.nr |= 0x40000000;
	} else if (strcmp(argv[0], "i386") == 0)
		d.arch = AUDIT_ARCH_I386;
	else
		usage();
	if (argc > 2)
		d.args[0] = strtoull(argv[2], NULL, 0);
	if (argc > 3)
		d.args[1] = strtoull(argv[3], NULL, 0);
	r = tf_bpf_run(prog, &d);
	switch (r & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
		printf("allow\n");
		break;
	case SECCOMP_RET_ERRNO:
		printf("errno %u\n", r & SECCOMP_RET_DATA);
		break;
	case SECCOMP_RET_KILL_PROCESS:
		printf("kill-process\n");
		break;
	case SECCOMP_RET_KILL_THREAD:
		printf("kill-thread\n");
		break;
	case SECCOMP_RET_USER_NOTIF:
		/* What the fencer answers it (fencer_denial.c). */
		printf("notify errno %d\n", fence_seccomp_errno(d.nr));
		break;
	default:
		printf("other 0x%08x\n", r);
		break;
	}
	return (0);
}

/* Real uid uid: how many processes it has on the host. */
static int
tf_count_uid(uid_t uid)
{
	struct dirent	*de;
	DIR		*d;
	FILE		*f;
	char		 path[300], line[256];
	unsigned	 u;
	int		 n = 0;

	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "Uid: %u", &u) == 1) {
				if (u == uid)
					n++;
				break;
			}
		fclose(f);
	}
	closedir(d);
	return (n);
}

static int
tf_count_mounts(void)
{
	char	 line[4096];
	FILE	*f;
	int	 n = 0;

	if ((f = fopen("/proc/self/mountinfo", "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), f) != NULL)
		n++;
	fclose(f);
	return (n);
}

static int
tf_count_fds(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return (n);
}

static int
tf_listen_tcp(void)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 s;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(s, 16) == -1 ||
	    getsockname(s, (struct sockaddr *)&sin, &len) == -1) {
		perror("t_fence: tcp listener");
		exit(1);
	}
	snprintf(tf_port, sizeof(tf_port), "%u", ntohs(sin.sin_port));
	printf("listening: 127.0.0.1:%s\n", tf_port);
	return (s);
}

static int
tf_listen_abstract(void)
{
	struct sockaddr_un	 sun;
	int			 s;

	snprintf(tf_abs, sizeof(tf_abs), "t_fence-%d", (int)getpid());
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path + 1, tf_abs, strlen(tf_abs));
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sun, offsetof(struct sockaddr_un,
	    sun_path) + 1 + strlen(tf_abs)) == -1 || listen(s, 16) == -1) {
		perror("t_fence: abstract listener");
		exit(1);
	}
	printf("listening: @%s\n", tf_abs);
	return (s);
}

static void
tf_print_boot(const struct fence_proc *p, uint64_t start_us)
{
	const struct fence_timings *t = &p->fp_timings;

	printf("started: pid %d\n", (int)p->fp_pid);
	printf("timings: cgroup %u namespaces %u mounts %u seccomp %u "
	    "exec %u start %" PRIu64 " (us)\n", t->ft_cgroup_us,
	    t->ft_namespaces_us, t->ft_mounts_us, t->ft_seccomp_us,
	    t->ft_exec_us, start_us);
	printf("landlock: abi %d applied%s%s%s%s\n", p->fp_landlock_abi,
	    p->fp_landlock == 0 ? " none" : "",
	    p->fp_landlock & FENCE_LL_FS ? " fs" : "",
	    p->fp_landlock & FENCE_LL_SCOPE_ABSTRACT ? " scope-abstract" : "",
	    p->fp_landlock & FENCE_LL_SCOPE_SIGNAL ? " scope-signal" : "");
	printf("cgroup join: %s\n", p->fp_cg_born ? "born in its v2 cgroup" :
	    "by its own write");
	fflush(stdout);
}

/*
 * -E: clone3 answers ENOSYS in this process and all it starts, as a
 * container runtime's seccomp profile may make it: a fence's pid 1
 * must then join its cgroup by its write (common/cg_clone.c).  Every
 * ABI's number 435 alike: this is a test's filter, not a fence's.
 */
static void
tf_deny_clone3(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 435, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1) {
		perror("t_fence: seccomp filter against clone3");
		exit(1);
	}
}

/* Wait for pid 1, at most sec seconds (0: forever); 1 if it exited. */
static int
tf_wait(struct fence_proc *p, int sec)
{
	struct pollfd	 pfd = { p->fp_pidfd, POLLIN, 0 };
	siginfo_t	 si;
	int		 r;

	if (sec > 0) {
		while ((r = poll(&pfd, 1, sec * 1000)) == -1 && errno == EINTR)
			;
		if (r == 0)
			return (0);
	}
	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, p->fp_pidfd, &si, WEXITED) == -1) {
		printf("init: wait: %s\n", strerror(errno));
		return (1);
	}
	if (si.si_code == CLD_EXITED)
		printf("init: exit %d\n", si.si_status);
	else
		printf("init: signal %d\n", si.si_status);
	return (1);
}

/*
 * After fence_stop: no cgroup, no process of the uid, no new mount, no
 * file descriptor more than before.
 */
static int
tf_check_clean(char cg[3][PATH_MAX], uid_t uid, int mounts, int fds)
{
	int	 i, n, bad = 0;

	for (i = 0; i < 3; i++)
		if (cg[i][0] != '\0' && access(cg[i], F_OK) == 0) {
			printf("leftover: cgroup %s\n", cg[i]);
			bad = 1;
		}
	/* uid 0 is refused before anything runs; root has other processes. */
	if (uid != 0 && (n = tf_count_uid(uid)) != 0) {
		printf("leftover: %d processes of uid %u\n", n, (unsigned)uid);
		bad = 1;
	}
	if ((n = tf_count_mounts()) != mounts) {
		printf("leftover: %d mounts, %d before\n", n, mounts);
		bad = 1;
	}
	if ((n = tf_count_fds()) != fds) {
		printf("leftover: %d open files, %d before\n", n, fds);
		bad = 1;
	}
	if (!bad)
		printf("clean: no process, mount, cgroup or fd left\n");
	return (bad);
}

static void
tf_rm_parents(void)
{
	int	 i;

	for (i = 0; i < 3; i++)
		if (tf_cg[i][0] != '\0')
			(void)rmdir(tf_cg[i]);
}

static int
tf_bench(int count)
{
	struct fence_proc	 p;
	char			 err[FENCE_ERR_MAX];
	uint64_t		*st, *cy, *ns, *mn, *sc, *cg, *ex, t0, t1, tall;
	uint64_t		*steps[FENCE_NSTEPS];
	const char		*names[FENCE_NSTEPS];
	uint32_t		 us[FENCE_NSTEPS];
	int			 i, j, nsteps = 0, fds;

	st = calloc(count, sizeof(*st));
	cy = calloc(count, sizeof(*cy));
	ns = calloc(count, sizeof(*ns));
	mn = calloc(count, sizeof(*mn));
	sc = calloc(count, sizeof(*sc));
	cg = calloc(count, sizeof(*cg));
	ex = calloc(count, sizeof(*ex));
	if (st == NULL || cy == NULL || ns == NULL || mn == NULL ||
	    sc == NULL || cg == NULL || ex == NULL)
		return (1);
	for (j = 0; j < FENCE_NSTEPS; j++)
		if ((steps[j] = calloc(count, sizeof(uint64_t))) == NULL)
			return (1);
	fds = tf_count_fds();
	tall = tf_now();
	for (i = 0; i < count; i++) {
		t0 = tf_now();
		if (fence_start(&tf_spec, &p, err, sizeof(err)) == -1) {
			printf("fence_start: %s\n", err);
			return (1);
		}
		t1 = tf_now();
		(void)waitid(P_PIDFD, p.fp_pidfd, &(siginfo_t){ 0 }, WEXITED);
		if (fence_stop(&p) == -1)
			return (1);
		st[i] = t1 - t0;
		cy[i] = tf_now() - t0;
		ns[i] = p.fp_timings.ft_namespaces_us;
		mn[i] = p.fp_timings.ft_mounts_us;
		sc[i] = p.fp_timings.ft_seccomp_us;
		cg[i] = p.fp_timings.ft_cgroup_us;
		ex[i] = p.fp_timings.ft_exec_us;
		nsteps = fence_step_times(names, us, FENCE_NSTEPS);
		for (j = 0; j < nsteps; j++)
			steps[j][i] = us[j];
	}
	tall = tf_now() - tall;
	if (tf_count_fds() != fds) {
		printf("leftover: %d open files, %d before\n", tf_count_fds(),
		    fds);
		return (1);
	}
	printf("tier %s, %d boots, %.1f boots/s\n", tf_spec.fs_tier == TIER_L1 ?
	    "L1" : tf_spec.fs_tier == TIER_L15 ? "L1.5" : "L2", count,
	    count * 1e6 / (double)tall);
	tf_stats("fence_start (to execve)", st, count);
	tf_stats("boot+run+stop cycle", cy, count);
	tf_stats("  cgroup (create+join)", cg, count);
	tf_stats("  clone to execve", ex, count);
	tf_stats("  namespaces (clone...)", ns, count);
	tf_stats("  mounts", mn, count);
	tf_stats("  ids/caps/landlock/seccomp", sc, count);
	for (j = 0; j < nsteps; j++) {
		char what[64];

		snprintf(what, sizeof(what), "    step %s", names[j]);
		tf_stats(what, steps[j], count);
	}
	return (0);
}

static int
tf_run_cmd(int count, char *argv[])
{
	uint64_t	*v, t0, tall;
	pid_t		 pid;
	int		 i, st;

	if ((v = calloc(count, sizeof(*v))) == NULL)
		return (1);
	tall = tf_now();
	for (i = 0; i < count; i++) {
		t0 = tf_now();
		if ((pid = fork()) == 0) {
			execvp(argv[0], argv);
			_exit(127);
		}
		if (pid == -1 || waitpid(pid, &st, 0) == -1)
			return (1);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("%s: status %d\n", argv[0], st);
			return (1);
		}
		v[i] = tf_now() - t0;
	}
	tall = tf_now() - tall;
	printf("%s: %d runs, %.1f runs/s\n", argv[0], count,
	    count * 1e6 / (double)tall);
	tf_stats("fork+exec+wait", v, count);
	return (0);
}

static int
tf_home_only(const char *homes)
{
	char	 out[PATH_MAX], err[FENCE_ERR_MAX];

	if (fencer_home_prepare(homes, tf_spec.fs_key, tf_spec.fs_uid,
	    tf_spec.fs_gid, out, sizeof(out), err, sizeof(err)) == -1) {
		printf("home: refused: %s\n", err);
		return (1);
	}
	printf("home: %s\n", out);
	return (0);
}

/*
 * What a fence needs from the kernel and the machine; "missing: ..." and
 * exit 2 if something is not there, so the tests can skip.
 */
static int
tf_probe(const char *sub)
{
	static const struct { int flag; const char *name; } ns[] = {
		{ CLONE_NEWNS, "mount namespaces" },
		{ CLONE_NEWPID, "pid namespaces" },
		{ CLONE_NEWIPC, "ipc namespaces" },
		{ CLONE_NEWUTS, "uts namespaces" },
		{ CLONE_NEWNET, "network namespaces" },
		{ CLONE_NEWCGROUP, "cgroup namespaces" }
	};
	char	 err[FENCE_ERR_MAX];
	pid_t	 pid;
	size_t	 i;
	int	 st;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		if ((pid = fork()) == 0)
			_exit(unshare(ns[i].flag) == -1);
		if (pid == -1 || waitpid(pid, &st, 0) == -1 ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("missing: %s\n", ns[i].name);
			return (2);
		}
	}
	if (cg_parents(sub, tf_cg, err, sizeof(err)) == -1) {
		printf("missing: cgroups: %s\n", err);
		return (2);
	}
	for (i = 0; i < 3; i++)
		if (mkdir(tf_cg[i], 0755) == -1 && errno != EEXIST) {
			printf("missing: cgroup %s: %s\n", tf_cg[i],
			    strerror(errno));
			return (2);
		}
	tf_rm_parents();
	if (fence_init(err, sizeof(err)) == -1) {
		printf("missing: %s\n", err);
		return (2);
	}
	printf("landlock abi %d\n", fence_host.fh_landlock_abi);
	/* What a pool fence's agent takes, for pool_test's agent_refuses. */
	printf("assignment size %zu\n", sizeof(struct fence_assign));
	return (0);
}

static int
tf_tier(const char *s)
{
	if (strcmp(s, "L1") == 0)
		return (TIER_L1);
	if (strcmp(s, "L1.5") == 0)
		return (TIER_L15);
	if (strcmp(s, "L2") == 0)
		return (TIER_L2);
	usage();
}

/* Boot, wait (or hang with -K), stop, check. */
static int
tf_boot(int deadline, int hang)
{
	struct fence_proc	 p;
	char			 err[FENCE_ERR_MAX], cg[3][PATH_MAX];
	uint64_t		 t0, t1;
	int			 i, mounts, fds, exited, bad;

	mounts = tf_count_mounts();
	fds = tf_count_fds();
	t0 = tf_now();
	memset(cg, 0, sizeof(cg));
	for (i = 0; i < 3; i++)
		if (tf_spec.fs_cgroup_parent[i] != NULL)
			snprintf(cg[i], sizeof(cg[i]), "%.*s/%s",
			    PATH_MAX - FENCE_KEY_SIZE - 2,
			    tf_spec.fs_cgroup_parent[i], tf_spec.fs_key);
	i = fence_start(&tf_spec, &p, err, sizeof(err));
	/* As the fencer does: the loop device is the mount's from now on. */
	if (tf_loopfd != -1) {
		(void)close(tf_loopfd);
		tf_loopfd = -1;
		fds--;
	}
	if (i == -1) {
		printf("fence_start: %s\n", err);
		bad = tf_check_clean(cg, tf_spec.fs_uid, mounts, fds);
		return (bad ? 3 : 1);
	}
	tf_print_boot(&p, tf_now() - t0);
	memcpy(cg, p.fp_cgroup, sizeof(cg));
	if (hang) {
		printf("cgroup: %s\n", cg[1]);
		fflush(stdout);
		for (;;)
			pause();
	}
	exited = tf_wait(&p, deadline);
	if (!exited) {
		t1 = tf_now();
		if (fence_stop(&p) == -1)
			printf("fence_stop failed\n");
		printf("deadline: stopped %" PRIu64 " ms after it passed\n",
		    (tf_now() - t1) / 1000);
	}
	printf("oom: %d\n", fence_oom_killed(&p));
	if (exited && fence_stop(&p) == -1)
		printf("fence_stop failed\n");
	if (fence_stop(&p) == -1)
		printf("fence_stop (again) failed\n");
	printf("oom after stop: %d\n", fence_oom_killed(&p));
	bad = tf_check_clean(cg, tf_spec.fs_uid, mounts, fds);
	return (bad ? 3 : 0);
}

/*
 * -J: boot under a session keyring of our own, as a service manager
 * starts a daemon (systemd's KeyringMode=private), and say afterwards
 * whether the fence left a key of that name in it.
 */
static int
tf_keyring_join(void)
{
	long	 id;

	if ((id = syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING,
	    NULL)) == -1) {
		printf("keyring: join: %s\n", strerror(errno));
		return (-1);
	}
	printf("keyring: session %ld\n", id);
	return (0);
}

static void
tf_keyring_report(const char *name)
{
	long	 id;

	id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING,
	    "user", name, 0);
	if (id == -1)
		printf("keyring: %s absent: %s\n", name, strerror(errno));
	else
		printf("keyring: %s found: key %ld\n", name, id);
}

int
main(int argc, char *argv[])
{
	const char	*homes = NULL, *sub = "fenced-regress", *keyname = NULL;
	unsigned long long imgsize = 0;
	char		 err[FENCE_ERR_MAX], home[PATH_MAX];
	int		 ch, i, j, nocg = 0, tcp = 0, abs_ = 0, deadline = 0;
	int		 hang = 0, bench = 0, runs = 0, homeonly = 0;
	int		 parents = 0;
	int		 rv;

	log_init(1, LOG_DAEMON);
	setvbuf(stdout, NULL, _IOLBF, 0);
	tf_spec.fs_tier = TIER_L15;
	tf_spec.fs_uid = 64201;
	tf_spec.fs_gid = 64201;
	strcpy(tf_spec.fs_user, "fence");
	snprintf(tf_spec.fs_key, sizeof(tf_spec.fs_key), "t-fence-%d",
	    (int)getpid());
	tf_spec.fs_limits.fl_memory = 256ULL << 20;
	tf_spec.fs_limits.fl_pids = 64;
	tf_spec.fs_limits.fl_cpu_milli = 1000;
	tf_spec.fs_chan = -1;
	/* No fencer here to answer a listener: refusals carry the errno. */
	tf_spec.fs_quiet = 1;
	tf_spec.fs_inherit_stdio = 1;

	while ((ch = getopt(argc, argv,
	    "Ab:c:C:Eg:h:H:I:J:k:KLm:nN:p:PQR:St:u:U:w:xYZ")) != -1) {
		switch (ch) {
		case 'A':
			abs_ = 1;
			break;
		case 'E':
			tf_deny_clone3();
			break;
		case 'b':
			tf_spec.fs_bindir = optarg;
			break;
		case 'c':
			tf_spec.fs_limits.fl_cpu_milli = strtoul(optarg, NULL,
			    10);
			break;
		case 'C':
			sub = optarg;
			break;
		case 'g':
			tf_spec.fs_gid = (gid_t)strtoul(optarg, NULL, 10);
			break;
		case 'h':
			snprintf(tf_spec.fs_home, sizeof(tf_spec.fs_home),
			    "%s", optarg);
			break;
		case 'H':
			homes = optarg;
			break;
		case 'J':
			keyname = optarg;
			break;
		case 'I':
			imgsize = strtoull(optarg, NULL, 10);
			break;
		case 'k':
			snprintf(tf_spec.fs_key, sizeof(tf_spec.fs_key), "%s",
			    optarg);
			break;
		case 'K':
			hang = 1;
			break;
		case 'L':
			tcp = 1;
			break;
		case 'm':
			tf_spec.fs_limits.fl_memory = strtoull(optarg, NULL,
			    10);
			break;
		case 'n':
			nocg = 1;
			break;
		case 'N':
			bench = atoi(optarg);
			break;
		case 'p':
			tf_spec.fs_limits.fl_pids = strtoul(optarg, NULL, 10);
			break;
		case 'P':
			parents = 1;
			break;
		case 'Q':
			return (tf_probe(sub));
		case 'R':
			runs = atoi(optarg);
			break;
		case 'S':
			/* Honoured only by a FENCED_TEST_HOOKS build. */
			tf_spec.fs_test_noseccomp = 1;
			break;
		case 't':
			tf_spec.fs_tier = tf_tier(optarg);
			break;
		case 'u':
			tf_spec.fs_uid = (uid_t)strtoul(optarg, NULL, 10);
			break;
		case 'U':
			snprintf(tf_spec.fs_user, sizeof(tf_spec.fs_user),
			    "%s", optarg);
			break;
		case 'w':
			deadline = atoi(optarg);
			break;
		case 'x':
			homeonly = 1;
			break;
		case 'Y':
		case 'Z':
			return (tf_seccomp_eval(argc - optind, argv + optind,
			    ch == 'Y'));
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;

	if (runs > 0) {
		if (argc < 1)
			usage();
		return (tf_run_cmd(runs, argv));
	}
	if (homeonly) {
		if (homes == NULL)
			usage();
		return (tf_home_only(homes));
	}
	if (!nocg || parents) {
		if (cg_parents(sub, tf_cg, err, sizeof(err)) == -1) {
			printf("cgroups: %s\n", err);
			return (2);
		}
		if (parents) {
			for (i = 0; i < 3; i++)
				printf("%s\n", tf_cg[i]);
			return (0);
		}
		for (i = 0; i < 3; i++)
			tf_spec.fs_cgroup_parent[i] = tf_cg[i];
	}
	if (argc < 1 || tf_spec.fs_bindir == NULL)
		usage();
	if (homes != NULL && imgsize != 0) {
		if (fencer_home_image(homes, tf_spec.fs_uid, tf_spec.fs_key,
		    imgsize, tf_spec.fs_uid, tf_spec.fs_gid, &tf_img, err,
		    sizeof(err)) == -1) {
			printf("home: refused: %s\n", err);
			return (1);
		}
		printf("home: image %s on %s, %llu bytes, %llu used\n",
		    tf_img.hi_path, tf_img.hi_dev,
		    (unsigned long long)tf_img.hi_size,
		    (unsigned long long)tf_img.hi_used);
		snprintf(tf_spec.fs_home, sizeof(tf_spec.fs_home), "%s",
		    tf_img.hi_path);
		snprintf(tf_spec.fs_home_dev, sizeof(tf_spec.fs_home_dev), "%s",
		    tf_img.hi_dev);
		tf_loopfd = tf_img.hi_loopfd;
	} else if (homes != NULL) {
		if (fencer_home_prepare(homes, tf_spec.fs_key, tf_spec.fs_uid,
		    tf_spec.fs_gid, home, sizeof(home), err,
		    sizeof(err)) == -1) {
			printf("home: refused: %s\n", err);
			return (1);
		}
		printf("home: %s\n", home);
		snprintf(tf_spec.fs_home, sizeof(tf_spec.fs_home), "%s", home);
	}
	if (tcp)
		(void)tf_listen_tcp();
	if (abs_)
		(void)tf_listen_abstract();
	for (i = 0, j = 0; i < argc && j < TF_ARGS_MAX - 1; i++, j++) {
		if (strcmp(argv[i], "@PORT@") == 0)
			tf_argv[j] = tf_port;
		else if (strcmp(argv[i], "@ABS@") == 0)
			tf_argv[j] = tf_abs;
		else
			tf_argv[j] = argv[i];
	}
	tf_argv[j] = NULL;
	tf_spec.fs_init = tf_argv[0];
	tf_spec.fs_init_argv = tf_argv;
	/*
	 * The bin tmpfs stays open for the life of the process, as in the
	 * fencer: make it before the fd count.  A failure is fence_start's
	 * to report.
	 */
	(void)fence_bin_init(tf_spec.fs_bindir, tf_spec.fs_init, err,
	    sizeof(err));

	if (keyname != NULL && tf_keyring_join() == -1)
		return (2);
	rv = bench > 0 ? tf_bench(bench) : tf_boot(deadline, hang);
	if (keyname != NULL)
		tf_keyring_report(keyname);
	tf_rm_parents();
	return (rv);
}
