/*
 * vm_mem: whether a vm fence's memory can be saved and restored with
 * QEMU's migration to a file, and what it costs (docs/snapshots.md,
 * "Memory: vm").  Side by side in one run, under TCG:
 *
 *	the cold boot of the vm backend's QEMU line to the agent's READY
 *	the save (QEMU's migration to a file, the guest running on after)
 *	and the file's size
 *	the restore (a new QEMU, -incoming from that file) to the first
 *	answer of the restored agent
 *
 *	vm_mem KERNEL INITRD IMAGE DIR [RUNS]
 *
 * QEMU gets the argument vector of a fence (vm_argv_build()) and one
 * thing more no fence has: a QMP monitor on an inherited socketpair,
 * the only way to ask QEMU for a migration.  It runs as this program's
 * child, not in a fence's jail: the costs measured are QEMU's and the
 * guest's.  DIR is an empty folder of root's: the guest's home (over
 * 9p, as a fence's) and the saved memory go there.
 *
 * QEMU refuses a migration for as long as a device says it cannot be
 * migrated (its "blocked-reasons"): then the save and restore rows are
 * skipped with QEMU's own words, and the program exits 3.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "bench.h"
#include "vm.h"

#define SECTION		"vm memory"
#define ROW_BOOT	"vm (tcg) QEMU boot to agent ready"
#define ROW_SAVE	"vm (tcg) memory save, guest running on"
#define ROW_SIZE	"vm (tcg) saved memory, 512 MiB guest"
#define ROW_RESTORE	"vm (tcg) restore to first answer"
#define FD_QMP		8	/* after VM_FD_IMAGE */
#define FD_INCOMING	9
#define QMP_LINE_MAX	65536
#define BOOT_WAIT_MS	(BOOT_AGENT_WAIT_MAX * 1000)
#define MARK		"fenced-vminit: exec fence-agent"
#define BENCH_USER	"bench"
#define BENCH_KEY	"bench-vm-mem"
#define BENCH_ID	60000	/* the guest's uid and gid */

struct qemu {
	pid_t		 q_pid;
	int		 q_agent;	/* the agent's channel, our end */
	int		 q_console;
	int		 q_qmp;
	char		 q_buf[QMP_LINE_MAX];
	size_t		 q_len;
	char		 q_cons[4096];	/* the console's last bytes */
	size_t		 q_conslen;
};

static const char	*files[3];
static const char	*dir;
static uint8_t		 bearer[MSG_BEARER_LEN];

static int
ms_left(uint64_t deadline)
{
	uint64_t	 now = bench_now_ns();

	return (now >= deadline ? 0 : (int)((deadline - now) / 1000000) + 1);
}

/* QEMU with a fence's arguments, a QMP monitor, and -incoming if fd. */
static void
qemu_start(struct qemu *q, int incoming)
{
	struct vm_launch l;
	struct vm_argv	 va;
	char		 msg[256], fsdev[PATH_MAX + 64], path[PATH_MAX];
	int		 sa[2], sc[2], sq[2], fds[FD_INCOMING + 1], i, n, fd;
	char		*argv[VM_ARGV_MAX + 8];

	memset(&l, 0, sizeof(l));
	l.vl_accel = VM_ACCEL_TCG;
	l.vl_mem = 512ULL << 20;
	l.vl_cpus = 1;
	l.vl_uid = BENCH_ID;
	l.vl_gid = BENCH_ID;
	l.vl_user = BENCH_USER;
	l.vl_key = BENCH_KEY;
	l.vl_tmp = l.vl_mem / 4;
	l.vl_pids = 256;
	if (vm_argv_build(&l, &va, msg, sizeof(msg)) == -1)
		errx(1, "%s", msg);
	/*
	 * -fsdev names /home/USER, the jail's view of the home; here it is
	 * DIR/home.
	 */
	snprintf(fsdev, sizeof(fsdev), "local,id=home,path=%s/home,"
	    "security_model=none", dir);
	for (n = 0; n < va.va_argc; n++) {
		argv[n] = va.va_argv[n];
		if (strncmp(argv[n], "local,id=home,", 14) == 0)
			argv[n] = fsdev;
	}
	argv[n++] = "-chardev";
	argv[n++] = "socket,id=qmp,fd=8";
	argv[n++] = "-mon";
	argv[n++] = "chardev=qmp,mode=control";
	if (incoming) {
		argv[n++] = "-incoming";
		argv[n++] = "fd:9";
	}
	argv[n] = NULL;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sa) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sc) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sq) == -1)
		err(1, "socketpair");
	for (i = 0; i <= FD_INCOMING; i++)
		fds[i] = -1;
	fds[VM_FD_AGENT] = sa[1];
	fds[VM_FD_CONSOLE] = sc[1];
	for (i = 0; i < 3; i++)
		if ((fds[VM_FD_KERNEL + i] = open(files[i], O_RDONLY |
		    O_CLOEXEC)) == -1)
			err(1, "%s", files[i]);
	fds[FD_QMP] = sq[1];
	snprintf(path, sizeof(path), "%s/mem", dir);
	if ((fds[FD_INCOMING] = open(incoming ? path : "/dev/null",
	    O_RDONLY | O_CLOEXEC)) == -1)
		err(1, "%s", path);

	fflush(stdout);
	if ((q->q_pid = fork()) == -1)
		err(1, "fork");
	if (q->q_pid == 0) {
		/* QEMU goes with this program, whatever ends it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
			_exit(127);
		/* Each above the range first, then onto its number. */
		for (i = VM_FD_AGENT; i <= FD_INCOMING; i++)
			if ((fds[i] = fcntl(fds[i], F_DUPFD, 64)) == -1)
				_exit(127);
		for (i = VM_FD_AGENT; i <= FD_INCOMING; i++)
			if (dup2(fds[i], i) == -1)
				_exit(127);
		if ((fd = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(fd, 0) == -1 || dup2(fd, 1) == -1)
			_exit(127);
		closefrom(FD_INCOMING + 1);
		execv(argv[0], argv);
		_exit(127);
	}
	for (i = VM_FD_AGENT; i <= FD_INCOMING; i++)
		(void)close(fds[i]);
	q->q_agent = sa[0];
	q->q_console = sc[0];
	q->q_qmp = sq[0];
	q->q_len = 0;
	q->q_conslen = 0;
}

static void
qemu_stop(struct qemu *q)
{
	if (q->q_pid > 0) {
		(void)kill(q->q_pid, SIGKILL);
		(void)waitpid(q->q_pid, NULL, 0);
		q->q_pid = -1;
	}
	(void)close(q->q_agent);
	(void)close(q->q_console);
	(void)close(q->q_qmp);
}

/* The console until MARK, the last bytes kept for an error. */
static void
console_wait(struct qemu *q, uint64_t deadline)
{
	struct pollfd	 p = { q->q_console, POLLIN, 0 };
	ssize_t		 n;
	size_t		 room;

	for (;;) {
		q->q_cons[q->q_conslen] = '\0';
		if (strstr(q->q_cons, MARK) != NULL)
			return;
		if (poll(&p, 1, ms_left(deadline)) != 1)
			errx(1, "no agent on the console in time: %s",
			    q->q_cons);
		if (q->q_conslen > sizeof(q->q_cons) / 2) {
			memmove(q->q_cons, q->q_cons + q->q_conslen -
			    sizeof(q->q_cons) / 4, sizeof(q->q_cons) / 4);
			q->q_conslen = sizeof(q->q_cons) / 4;
		}
		room = sizeof(q->q_cons) - 1 - q->q_conslen;
		if ((n = read(q->q_console, q->q_cons + q->q_conslen,
		    room)) <= 0)
			errx(1, "QEMU ended: %s", q->q_cons);
		q->q_conslen += (size_t)n;
	}
}

/* One imsg to the agent, and the type of its first answer. */
static uint32_t
agent_call(struct qemu *q, uint32_t type, void *buf, size_t len,
    uint64_t deadline)
{
	struct imsg_hdr	 h;
	struct pollfd	 p = { q->q_agent, POLLIN, 0 };
	struct iovec	 iov[2];
	char		 skip[4096];
	size_t		 got = 0, left;
	ssize_t		 n;

	memset(&h, 0, sizeof(h));
	h.ih_type = type;
	h.ih_len = IMSG_HDR_SIZE + len;
	h.ih_peerid = 1;
	iov[0].iov_base = &h;
	iov[0].iov_len = sizeof(h);
	iov[1].iov_base = buf;
	iov[1].iov_len = len;
	if (writev(q->q_agent, iov, 2) != (ssize_t)(sizeof(h) + len))
		err(1, "agent: write");
	while (got < sizeof(h)) {
		if (poll(&p, 1, ms_left(deadline)) != 1)
			errx(1, "agent: no answer in time");
		if ((n = read(q->q_agent, (char *)&h + got, sizeof(h) - got)) <= 0)
			errx(1, "agent: channel closed");
		got += (size_t)n;
	}
	if (h.ih_len < IMSG_HDR_SIZE || h.ih_len > IMSG_MAX_SIZE)
		errx(1, "agent: bad header");
	for (left = h.ih_len - IMSG_HDR_SIZE; left > 0; left -= (size_t)n) {
		if (poll(&p, 1, ms_left(deadline)) != 1)
			errx(1, "agent: short answer");
		if ((n = read(q->q_agent, skip, left < sizeof(skip) ? left :
		    sizeof(skip))) <= 0)
			errx(1, "agent: channel closed");
	}
	return (h.ih_type);
}

static void
agent_hello(struct qemu *q, uint64_t deadline)
{
	struct msg_hello h;
	void		*buf;
	size_t		 len;

	memset(&h, 0, sizeof(h));
	memcpy(h.h_bearer, bearer, sizeof(h.h_bearer));
	strlcpy(h.h_key, BENCH_KEY, sizeof(h.h_key));
	strlcpy(h.h_user, BENCH_USER, sizeof(h.h_user));
	strlcpy(h.h_home, "/home/" BENCH_USER, sizeof(h.h_home));
	h.h_timeout_def = h.h_timeout_max = EXEC_TIMEOUT_MAX;
	h.h_output_def = h.h_output_max = EXEC_OUTPUT_MAX;
	if (msg_hello_encode(&h, &buf, &len) == -1)
		errx(1, "hello: encode");
	if (agent_call(q, IMSG_AGENT_HELLO, buf, len, deadline) !=
	    IMSG_AGENT_READY)
		errx(1, "agent: no READY");
	free(buf);
}

/* PORTS: the smallest request the agent answers from the guest. */
static void
agent_ports(struct qemu *q, uint64_t deadline)
{
	struct msg_ports_req r;
	void		*buf;
	size_t		 len;
	uint32_t	 t;

	memset(&r, 0, sizeof(r));
	memcpy(r.ps_bearer, bearer, sizeof(r.ps_bearer));
	strlcpy(r.ps_key, BENCH_KEY, sizeof(r.ps_key));
	if (msg_ports_req_encode(&r, &buf, &len) == -1)
		errx(1, "ports: encode");
	if ((t = agent_call(q, IMSG_AGENT_PORTS, buf, len, deadline)) !=
	    IMSG_AGENT_PORT_LIST)
		errx(1, "agent: PORTS answered %u", t);
	free(buf);
}

/*
 * One QMP command (and a descriptor with it), its answer: the object
 * of "return", or NULL with the error's text in why.  Events are
 * skipped.
 */
static json_t *
qmp(struct qemu *q, const char *cmd, int fd, char *why, size_t whylen)
{
	struct msghdr	 m;
	struct iovec	 iov;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} c;
	struct pollfd	 p = { q->q_qmp, POLLIN, 0 };
	json_t		*j, *r;
	json_error_t	 je;
	char		*nl;
	ssize_t		 n;

	if (cmd != NULL) {
		memset(&m, 0, sizeof(m));
		iov.iov_base = (void *)cmd;
		iov.iov_len = strlen(cmd);
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		if (fd != -1) {
			memset(&c, 0, sizeof(c));
			m.msg_control = c.buf;
			m.msg_controllen = sizeof(c.buf);
			CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
			CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
			CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), &fd, sizeof(int));
		}
		if (sendmsg(q->q_qmp, &m, 0) != (ssize_t)iov.iov_len)
			err(1, "qmp: send");
	}
	for (;;) {
		while ((nl = memchr(q->q_buf, '\n', q->q_len)) == NULL) {
			if (q->q_len == sizeof(q->q_buf))
				errx(1, "qmp: line too long");
			if (poll(&p, 1, 60000) != 1)
				errx(1, "qmp: no answer");
			if ((n = read(q->q_qmp, q->q_buf + q->q_len,
			    sizeof(q->q_buf) - q->q_len)) <= 0)
				errx(1, "qmp: QEMU ended");
			q->q_len += (size_t)n;
		}
		j = json_loadb(q->q_buf, (size_t)(nl - q->q_buf), 0, &je);
		q->q_len -= (size_t)(nl + 1 - q->q_buf);
		memmove(q->q_buf, nl + 1, q->q_len);
		if (j == NULL)
			errx(1, "qmp: %s", je.text);
		if (json_object_get(j, "event") != NULL) {
			json_decref(j);
			continue;
		}
		if ((r = json_object_get(j, "return")) != NULL ||
		    (r = json_object_get(j, "QMP")) != NULL) {
			json_incref(r);
			json_decref(j);
			return (r);
		}
		r = json_object_get(json_object_get(j, "error"), "desc");
		snprintf(why, whylen, "%s", json_is_string(r) ?
		    json_string_value(r) : "an error without a text");
		json_decref(j);
		return (NULL);
	}
}

static void
qmp_ok(struct qemu *q, const char *cmd, int fd)
{
	char	 why[512];
	json_t	*r;

	if ((r = qmp(q, cmd, fd, why, sizeof(why))) == NULL)
		errx(1, "qmp %s: %s", cmd, why);
	json_decref(r);
}

/* The migration's status once it is over: 1 completed. */
static int
qmp_migrated(struct qemu *q, uint64_t deadline, char *why, size_t len)
{
	const char	*st;
	json_t		*r;

	for (;;) {
		if ((r = qmp(q, "{\"execute\":\"query-migrate\"}", -1, why,
		    len)) == NULL)
			return (0);
		st = json_string_value(json_object_get(r, "status"));
		if (st != NULL && strcmp(st, "completed") == 0) {
			json_decref(r);
			return (1);
		}
		if (st != NULL && (strcmp(st, "failed") == 0 ||
		    strcmp(st, "cancelled") == 0)) {
			st = json_string_value(json_object_get(r,
			    "error-desc"));
			snprintf(why, len, "migration failed: %s", st != NULL ?
			    st : "no reason given");
			json_decref(r);
			return (0);
		}
		json_decref(r);
		if (ms_left(deadline) == 0) {
			snprintf(why, len, "migration not over in time");
			return (0);
		}
		usleep(20000);
	}
}

/* QEMU's reasons against a migration now, "" if none. */
static void
qmp_blocked(struct qemu *q, char *why, size_t len)
{
	json_t	*r, *b;
	size_t	 i, off = 0;
	int	 n;

	why[0] = '\0';
	r = qmp(q, "{\"execute\":\"query-migrate\"}", -1, why, len);
	if (r == NULL)
		return;
	b = json_object_get(r, "blocked-reasons");
	for (i = 0; json_is_array(b) && i < json_array_size(b); i++) {
		n = snprintf(why + off, len - off, "%s%s", i ? "; " : "",
		    json_string_value(json_array_get(b, i)) != NULL ?
		    json_string_value(json_array_get(b, i)) : "?");
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
	json_decref(r);
}

static void
skip_rest(const char *why)
{
	bench_skip(SECTION, ROW_SAVE, why);
	bench_skip(SECTION, ROW_SIZE, why);
	bench_skip(SECTION, ROW_RESTORE, why);
}

int
main(int argc, char *argv[])
{
	struct qemu	 q;
	struct stat	 st;
	uint64_t	*boot, *save, *restore, t0;
	char		 why[1024], path[PATH_MAX];
	json_t		*r;
	size_t		 runs = 1, i;
	int		 fd;
	const char	*e;

	if (argc != 5 && argc != 6)
		errx(2, "usage: vm_mem KERNEL INITRD IMAGE DIR [RUNS]");
	files[0] = argv[1];
	files[1] = argv[2];
	files[2] = argv[3];
	dir = argv[4];
	if (argc == 6 && (runs = strtonum(argv[5], 1, 20, &e)) == 0)
		errx(2, "runs: %s", e);
	memset(bearer, 0x5a, sizeof(bearer));
	snprintf(path, sizeof(path), "%s/home", dir);
	/* The guest's uid owns its home, as a fence's uid does. */
	if ((mkdir(path, 0700) == -1 && errno != EEXIST) ||
	    chown(path, BENCH_ID, BENCH_ID) == -1)
		err(1, "%s", path);
	if ((boot = calloc(runs, sizeof(*boot))) == NULL ||
	    (save = calloc(runs, sizeof(*save))) == NULL ||
	    (restore = calloc(runs, sizeof(*restore))) == NULL)
		err(1, NULL);

	for (i = 0; i < runs; i++) {
		/* The cold boot. */
		t0 = bench_now_ns();
		qemu_start(&q, 0);
		qmp_ok(&q, NULL, -1);		/* the greeting */
		qmp_ok(&q, "{\"execute\":\"qmp_capabilities\"}", -1);
		console_wait(&q, t0 + BOOT_WAIT_MS * 1000000ULL);
		agent_hello(&q, t0 + BOOT_WAIT_MS * 1000000ULL);
		boot[i] = bench_now_ns() - t0;

		/* The save, unless QEMU refuses it. */
		qmp_blocked(&q, why, sizeof(why));
		if (why[0] != '\0') {
			qemu_stop(&q);
			bench_row_to(SECTION, ROW_BOOT, "", "median", boot,
			    i + 1, 0);
			printf("QEMU refuses the save: %s\n", why);
			skip_rest(why);
			return (3);
		}
		snprintf(path, sizeof(path), "%s/mem", dir);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0600)) == -1)
			err(1, "%s", path);
		qmp_ok(&q, "{\"execute\":\"getfd\",\"arguments\":"
		    "{\"fdname\":\"mem\"}}", fd);
		t0 = bench_now_ns();
		if ((r = qmp(&q, "{\"execute\":\"migrate\",\"arguments\":"
		    "{\"uri\":\"fd:mem\"}}", -1, why, sizeof(why))) == NULL ||
		    !qmp_migrated(&q, t0 + 600000000000ULL, why,
		    sizeof(why))) {
			qemu_stop(&q);
			bench_row_to(SECTION, ROW_BOOT, "", "median", boot,
			    i + 1, 0);
			printf("the save failed: %s\n", why);
			skip_rest(why);
			return (3);
		}
		json_decref(r);
		/* The guest runs on, its agent answering. */
		qmp_ok(&q, "{\"execute\":\"cont\"}", -1);
		save[i] = bench_now_ns() - t0;
		if (fstat(fd, &st) == -1)
			err(1, "%s", path);
		(void)close(fd);
		agent_ports(&q, bench_now_ns() + 60000000000ULL);
		qemu_stop(&q);

		/* The restore: a new QEMU from the file, a new channel. */
		t0 = bench_now_ns();
		qemu_start(&q, 1);
		qmp_ok(&q, NULL, -1);
		qmp_ok(&q, "{\"execute\":\"qmp_capabilities\"}", -1);
		if (!qmp_migrated(&q, t0 + 600000000000ULL, why, sizeof(why)))
			errx(1, "restore: %s", why);
		agent_ports(&q, t0 + BOOT_WAIT_MS * 1000000ULL);
		restore[i] = bench_now_ns() - t0;
		qemu_stop(&q);
	}
	bench_row_to(SECTION, ROW_BOOT, "", "median", boot, runs, 0);
	bench_row_to(SECTION, ROW_SAVE, "", "median", save, runs, 0);
	bench_value(SECTION, ROW_SIZE, NULL, "MiB",
	    (double)st.st_size / (1 << 20));
	bench_row_to(SECTION, ROW_RESTORE, ROW_BOOT, "median", restore, runs,
	    0);
	return (0);
}
