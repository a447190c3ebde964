/*
 * Probing a fence, the fencer's part.  The broker runs fence-probe in
 * the fence through the agent; the fencer supplies what only the host
 * knows: a canary listener on the host's loopback opened for this run
 * alone with a secret for it (on the probe's standard input, never on a
 * command line), a file on the host the fence must not see, the host's
 * pid, namespaces, kernel and boot id.  After the run it checks how the
 * run ended (only a probe that exited 0 or 2 counts), counts the canary
 * connections that carried the secret, reads the fence's pid 1 from the
 * host (fencer_host.c: what grants an axis), caches the raw report in
 * <state>/envs/<owner>/<key>/probe.json (0600) while the
 * fence runs, and hands report, reading and
 * expectations to the prober, which alone parses the report.  What the
 * prober knows of the fence's backend is what the backend's entry
 * declares (fb_probe), never its name.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "probe_expect.h"
#include "fencer.h"
#include "fencer_host.h"
#include "fencer_view.h"

#define PROBE_OUTPUT_BYTES	262144
/*
 * At most: the program, 12 for the canary and the host, 1 + 2 + 2 * 8
 * for the outbound checks, 6 for the egress ones.
 */
#define PROBE_ARGS		40
/* The longest: an egress target (NAME:PORT), a DNS name, a path. */
#define PROBE_ARG_LEN		(EGRESS_ENTRY_LEN > PROBE_NAME_LEN ? \
				    EGRESS_ENTRY_LEN : PROBE_NAME_LEN)
#define PROBE_CANARY_BACKLOG	64
#define PROBE_CANARY_CONNS	64	/* looked at per run, at most */
#define PROBE_CANARY_READ	64	/* bytes read from one connection */

static void	probe_host_read(struct fence *);

static struct fence *
probe_fence(uint32_t reqid)
{
	struct fence	*f;

	TAILQ_FOREACH(f, &fencer_fences, f_entry)
		if (f->f_probe_reqid != 0 && f->f_probe_reqid == reqid)
			return (f);
	return (NULL);
}

static int
probe_secret_path(const struct fence *f, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/probe-secret.%u.%s",
	    fencer_self.ps_conf.c_state, (unsigned)f->f_info.f_owner,
	    f->f_info.f_key) >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (0);
}

/* Readable by anyone on the host: only a fence's mounts can hide it. */
static int
probe_secret_create(const struct fence *f, char *path, size_t len)
{
	char		 data[33];
	uint8_t		 rnd[16];
	int		 fd, i;

	if (probe_secret_path(f, path, len) == -1)
		return (-1);
	arc4random_buf(rnd, sizeof(rnd));
	for (i = 0; i < 16; i++)
		snprintf(data + 2 * i, 3, "%02x", rnd[i]);
	(void)unlink(path);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1)
		return (-1);
	if (fchmod(fd, 0644) == -1 || write(fd, data, 32) != 32) {
		close(fd);
		unlink(path);
		return (-1);
	}
	return (close(fd));
}

static int
probe_canary_open(char *target, size_t len)
{
	struct sockaddr_in sin;
	socklen_t	 slen = sizeof(sin);
	int		 fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return (-1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, PROBE_CANARY_BACKLOG) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen) == -1) {
		close(fd);
		return (-1);
	}
	snprintf(target, len, "127.0.0.1:%u", ntohs(sin.sin_port));
	return (fd);
}

/* A fresh secret per run: 32 hex digits from arc4random. */
static void
probe_canary_secret(char *buf, size_t len)
{
	uint8_t		 rnd[16];
	size_t		 i;

	arc4random_buf(rnd, sizeof(rnd));
	for (i = 0; i < sizeof(rnd) && 2 * i + 2 < len; i++)
		snprintf(buf + 2 * i, 3, "%02x", rnd[i]);
	explicit_bzero(rnd, sizeof(rnd));
}

static uint64_t
probe_ns(const char *name)
{
	char		 path[64];
	struct stat	 st;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	return (stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0);
}

static void
probe_host(struct probe_expect *e)
{
	struct utsname	 u;
	ssize_t		 n;
	int		 fd;

	if (uname(&u) == 0) {
		strlcpy(e->pe_release, u.release, sizeof(e->pe_release));
		strlcpy(e->pe_version, u.version, sizeof(e->pe_version));
	}
	if ((fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY |
	    O_CLOEXEC)) != -1) {
		n = read(fd, e->pe_boot_id, sizeof(e->pe_boot_id) - 1);
		close(fd);
		if (n > 0)
			e->pe_boot_id[strcspn(e->pe_boot_id, "\n")] = '\0';
		else
			e->pe_boot_id[0] = '\0';
	}
	e->pe_host_pid = getpid();
	e->pe_ns_pid = probe_ns("pid");
	e->pe_ns_net = probe_ns("net");
	e->pe_ns_mnt = probe_ns("mnt");
}

/* A target of the probe's egress checks: one exact, canonical entry. */
static int
probe_egress_target_ok(const char *t)
{
	return (t[0] != '\0' && t[0] != '*' &&
	    strnlen(t, EGRESS_ENTRY_LEN) < EGRESS_ENTRY_LEN &&
	    egress_entry_valid(t));
}

/* Whether target t (a canonical entry) is on the fence's list. */
static int
probe_egress_listed(const struct msg_fence *fi, const char *t)
{
	struct egress_entry ee;
	const char	*why;

	if (!egress_entry_parse(t, &ee, &why))
		return (0);
	return (egress_list_match((const char (*)[EGRESS_ENTRY_LEN])
	    fi->f_egress, fi->f_negress, ee.ee_name, ee.ee_port, NULL));
}

/*
 * What the probe tries through a fence's egress proxy, and what the
 * prober will hold it to: the list (the fence's own, never the
 * report's), a target on it (`probe egress allowed' if this fence's
 * list has it, else the list's first exact entry, else none) and one
 * off it (`probe egress refused' unless this list has it, else
 * EGRESS_REFUSED_DEFAULT): one setting serves fences of different
 * lists.
 */
static void
probe_egress_expect(const struct fence *f, struct probe_expect *e)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	const struct msg_fence *fi = &f->f_info;
	uint32_t	 i;

	e->pe_negress = fi->f_negress;
	for (i = 0; i < fi->f_negress && i < EGRESS_LIST_MAX; i++)
		strlcpy(e->pe_egress[i], fi->f_egress[i],
		    sizeof(e->pe_egress[i]));
	if (fi->f_negress == 0)
		return;
	if (probe_egress_target_ok(c->c_probe_egress_allowed) &&
	    probe_egress_listed(fi, c->c_probe_egress_allowed))
		strlcpy(e->pe_egress_allowed, c->c_probe_egress_allowed,
		    sizeof(e->pe_egress_allowed));
	else
		for (i = 0; i < fi->f_negress && i < EGRESS_LIST_MAX; i++)
			if (probe_egress_target_ok(fi->f_egress[i])) {
				strlcpy(e->pe_egress_allowed, fi->f_egress[i],
				    sizeof(e->pe_egress_allowed));
				break;
			}
	strlcpy(e->pe_egress_refused,
	    probe_egress_target_ok(c->c_probe_egress_refused) &&
	    !probe_egress_listed(fi, c->c_probe_egress_refused) ?
	    c->c_probe_egress_refused : EGRESS_REFUSED_DEFAULT,
	    sizeof(e->pe_egress_refused));
}

/* The probe's command line; strings live in args[]. */
static int
probe_argv(struct fence *f, int full, char args[PROBE_ARGS][PROBE_ARG_LEN],
    char **argv)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	struct probe_expect *e = f->f_expect;
	uint32_t	 i;
	int		 n = 0;

	snprintf(args[n++], PROBE_ARG_LEN, "%s/fence-probe",
	    f->f_backend->fb_bin_dir);
	snprintf(args[n++], PROBE_ARG_LEN, "--canary");
	snprintf(args[n++], PROBE_ARG_LEN, "%s", e->pe_canary_target);
	/* The canary's secret comes on stdin: a command line is public. */
	snprintf(args[n++], PROBE_ARG_LEN, "--canary-secret-stdin");
	snprintf(args[n++], PROBE_ARG_LEN, "--host-secret");
	if (strlcpy(args[n++], e->pe_secret, PROBE_ARG_LEN) >= PROBE_ARG_LEN)
		return (-1);
	snprintf(args[n++], PROBE_ARG_LEN, "--host-pid");
	snprintf(args[n++], PROBE_ARG_LEN, "%d", (int)e->pe_host_pid);
	snprintf(args[n++], PROBE_ARG_LEN, "--host-ns");
	snprintf(args[n++], PROBE_ARG_LEN, "pid=%llu,net=%llu,mnt=%llu",
	    (unsigned long long)e->pe_ns_pid,
	    (unsigned long long)e->pe_ns_net,
	    (unsigned long long)e->pe_ns_mnt);
	snprintf(args[n++], PROBE_ARG_LEN, "--deadline");
	snprintf(args[n++], PROBE_ARG_LEN, "%lld", (long long)f->f_info.f_deadline);
	/*
	 * Outbound checks only inform, take time and reach beyond this
	 * machine: only a probe asked for by name runs them.  The levels
	 * rest on the canary and the interfaces alone.
	 */
	if (!full)
		snprintf(args[n++], PROBE_ARG_LEN, "--no-outbound");
	else {
		snprintf(args[n++], PROBE_ARG_LEN, "--dns");
		snprintf(args[n++], PROBE_ARG_LEN, "%s", c->c_probe_dns);
		for (i = 0; i < c->c_probe_ntcp; i++) {
			snprintf(args[n++], PROBE_ARG_LEN, "--tcp");
			snprintf(args[n++], PROBE_ARG_LEN, "%s", c->c_probe_tcp[i]);
		}
	}
	/*
	 * A fence with an egress list: its proxy on the fence's own
	 * loopback, asked for one target on the list and one off it, in
	 * every probe (the level rests on them).
	 */
	if (f->f_info.f_negress > 0) {
		snprintf(args[n++], PROBE_ARG_LEN, "--egress-proxy");
		snprintf(args[n++], PROBE_ARG_LEN, "127.0.0.1:%d",
		    EGRESS_PROXY_PORT);
		if (e->pe_egress_allowed[0] != '\0') {
			snprintf(args[n++], PROBE_ARG_LEN, "--egress-allowed");
			snprintf(args[n++], PROBE_ARG_LEN, "%s",
			    e->pe_egress_allowed);
		}
		snprintf(args[n++], PROBE_ARG_LEN, "--egress-refused");
		snprintf(args[n++], PROBE_ARG_LEN, "%s", e->pe_egress_refused);
	}
	argv[n] = NULL;
	while (n-- > 0)
		argv[n] = args[n];
	return (0);
}

/*
 * What one run of the probe needs from the host, made for it: the
 * expectation, the canary and its secret, the host secret, and the
 * exec request x with the command line (argv, its strings in args) and
 * the secret as its standard input.  -1 with errno; the caller ends
 * the run (fencer_probe_end()).
 */
static int
probe_setup(struct fence *f, int full, char args[PROBE_ARGS][PROBE_ARG_LEN],
    char **argv, struct msg_exec *x)
{
	if ((f->f_expect = calloc(1, sizeof(*f->f_expect))) == NULL)
		return (-1);
	f->f_expect->pe_tier = f->f_info.f_tier;
	f->f_expect->pe_backend = f->f_info.f_backend;
	/* What the prober judges by: the backend's word, not its name. */
	f->f_expect->pe_traits = f->f_backend->fb_probe;
	/* The layer inside that the host asked for (docs/vm.md). */
	if (f->f_info.f_inner)
		f->f_expect->pe_traits.pt_inner = PROBE_KERNEL_USER;
	f->f_expect->pe_canary = CANARY_NOT_RUN;
	probe_host(f->f_expect);
	probe_egress_expect(f, f->f_expect);
	probe_canary_secret(f->f_canary_secret, sizeof(f->f_canary_secret));
	if ((f->f_canary = probe_canary_open(f->f_expect->pe_canary_target,
	    sizeof(f->f_expect->pe_canary_target))) == -1 ||
	    probe_secret_create(f, f->f_expect->pe_secret,
	    sizeof(f->f_expect->pe_secret)) == -1 ||
	    probe_argv(f, full, args, argv) == -1)
		return (-1);
	memset(x, 0, sizeof(*x));
	strlcpy(x->x_key, f->f_info.f_key, sizeof(x->x_key));
	x->x_argv = argv;
	for (x->x_argc = 0; argv[x->x_argc] != NULL; x->x_argc++)
		;
	x->x_timeout_ms = PROBE_TIMEOUT_MS;
	x->x_max_bytes = PROBE_OUTPUT_BYTES;
	x->x_stdin = (uint8_t *)f->f_canary_secret;
	x->x_stdin_len = strlen(f->f_canary_secret);
	return (0);
}

void
fencer_probe_prepare(uint32_t reqid, const struct msg_fence_req *q)
{
	struct fence	*f;
	struct msg_exec	 x;
	char		 args[PROBE_ARGS][PROBE_ARG_LEN], *argv[PROBE_ARGS + 1];
	void		*buf;
	size_t		 len;

	if ((f = fencer_lookup(q)) == NULL ||
	    f->f_info.f_state != FENCE_RUNNING) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "not-found",
		    "no running fence %s", q->r_key);
		return;
	}
	if (f->f_probe_reqid != 0 || f->f_probe_first) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "probe-busy",
		    "fence %s is being probed", q->r_key);
		return;
	}
	if (probe_setup(f, q->r_full, args, argv, &x) == -1)
		goto fail;
	f->f_probe_reqid = reqid;

	if (msg_exec_encode(&x, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&fencer_self, PROC_BROKER, IMSG_PROBE_EXEC, reqid,
	    -1, buf, len) == -1)
		log_warn("%s: to broker", __func__);
	explicit_bzero(buf, len);
	free(buf);
	fencer_probe_host(f);
	return;
 fail:
	fencer_send_error(IMSG_FENCE_FAILED, reqid, "probe-failed",
	    "cannot prepare a probe of %s: %s", f->f_info.f_key,
	    strerror(errno));
	f->f_probe_reqid = 0;
	fencer_probe_end(f, 0);
}

/*
 * A fence's first probe, made while its agent starts (at the boot,
 * after the HELLO: fencer_boot_now()) and sent to the agent by the
 * fencer itself the moment the agent says READY (fencer_probe_first(),
 * its channel still the fencer's, nothing else sent on it since the
 * HELLO), as request 0, which the broker never uses.  The BOOTED tells
 * the broker so (f_probe_sent): it takes the agent's answer to request
 * 0 as this probe's output and sends it back as it does any probe's,
 * and its own request for this probe (the IMSG_PROBE_PREPARE it sends
 * when it hears BOOTED) only names the run (fencer_probe_adopt()).
 * Before, the probe began only after the BOOTED had gone to the
 * broker, its ask back to the fencer, the probe prepared and its exec
 * sent through the broker into the fence: two processes' turns and the
 * preparation on the path of every first answer.  What decides the
 * level is not changed: the same probe, the same host reading, the
 * same prober.  Made here: the expectation, the canary, the secrets
 * and the request itself, with the fence's bearer and the canary
 * secret in it (wiped when it goes or the fence does).  What could not
 * be made is no error: the broker asks as before.
 */
void
fencer_probe_early(struct fence *f)
{
	struct msg_exec	 x;
	char		 args[PROBE_ARGS][PROBE_ARG_LEN], *argv[PROBE_ARGS + 1];
	int		 r;

	/* None made where none could begin now (a burst): in turn. */
	if (f->f_probe_reqid != 0 || f->f_expect != NULL ||
	    !fencer_probe_slot(0))
		return;
	if (probe_setup(f, 0, args, argv, &x) == -1) {
		log_warn("fence %s: cannot prepare its first probe",
		    f->f_info.f_key);
		fencer_probe_end(f, 0);
		return;
	}
	memcpy(x.x_bearer, f->f_info.f_bearer, sizeof(x.x_bearer));
	r = msg_exec_encode(&x, &f->f_probe_msg, &f->f_probe_len);
	explicit_bzero(x.x_bearer, sizeof(x.x_bearer));
	if (r == -1)
		fatal("%s: encode", __func__);
}

/*
 * At READY: the first probe made at the boot goes, if a probe may
 * begin now (the probes' bound, fencer_queue.c); else what was made is
 * dropped and the broker asks, in turn, as before.  1: sent; 0: not;
 * -1: the channel took only part of it (never a fresh channel): the
 * boot fails.
 */
int
fencer_probe_first(struct fence *f)
{
	struct imsgbuf	*ib = imsgev_buf(f->f_agent);
	int		 r;

	if (f->f_probe_msg == NULL)
		return (0);
	if (f->f_probe_reqid != 0 || f->f_probe_first ||
	    imsgbuf_queued(ib) != 0 || !fencer_probe_slot(1)) {
		fencer_probe_end(f, 0);
		return (0);
	}
	f->f_probe_first = 1;
	r = imsgev_compose(f->f_agent, IMSG_AGENT_PROBE, 0, 0, -1,
	    f->f_probe_msg, f->f_probe_len);
	explicit_bzero(f->f_probe_msg, f->f_probe_len);
	free(f->f_probe_msg);
	f->f_probe_msg = NULL;
	if (r == -1) {
		log_warn("fence %s: its first probe", f->f_info.f_key);
		fencer_probe_end(f, 0);
		return (0);
	}
	/* Whole, now: the channel passes to the broker next. */
	if (imsgbuf_write(ib) == -1 || imsgbuf_queued(ib) != 0) {
		log_warn("fence %s: its first probe, written in part",
		    f->f_info.f_key);
		fencer_probe_end(f, 0);
		return (-1);
	}
	log_debug("fence %s: first probe sent", f->f_info.f_key);
	return (1);
}

/*
 * The broker's request for a probe (IMSG_PROBE_PREPARE) of a fence
 * whose first probe runs already (fencer_probe_first()): it is that
 * probe's, which from now on answers to it (its output, its verdict).
 * 1: taken; 0: not such a fence.
 */
int
fencer_probe_adopt(uint32_t reqid, const struct msg_fence_req *q)
{
	struct fence	*f;

	if ((f = fencer_lookup(q)) == NULL || !f->f_probe_first)
		return (0);
	f->f_probe_first = 0;
	f->f_probe_reqid = reqid;
	return (1);
}

/*
 * A probe is on its way: the broker's channel written now (one write
 * that never blocks; what the socket does not take, and an error, the
 * write event finds as before), then the host's reading of pid 1 while
 * the probe runs: it needs the canary open, not the probe's output, so
 * it is off the path to the verdict.
 */
void
fencer_probe_host(struct fence *f)
{
	if (fencer_self.ps_iev[PROC_BROKER] != NULL)
		(void)imsgbuf_write(imsgev_buf(fencer_self.ps_iev[PROC_BROKER]));
	if (f->f_expect != NULL)
		probe_host_read(f);
}

/*
 * Did the probe reach the canary?  Only a connection that carries this
 * run's secret counts: any host user, and any fence sharing the host's
 * network, can connect to a listener on 127.0.0.1, and must not be able
 * to lower another fence's level by doing so.  Asked without waiting,
 * after the run: the probe wrote its secret before it closed, so it is
 * in the socket already.  At most PROBE_CANARY_CONNS are looked at.
 */
static int
probe_canary_result(struct fence *f)
{
	char	 buf[PROBE_CANARY_READ + 1];
	size_t	 slen = strlen(f->f_canary_secret);
	ssize_t	 n;
	int	 fd, i, result = CANARY_NO, others = 0;

	for (i = 0; i < PROBE_CANARY_CONNS; i++) {
		if ((fd = accept4(f->f_canary, NULL, NULL,
		    SOCK_CLOEXEC | SOCK_NONBLOCK)) == -1)
			break;
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		close(fd);
		if (slen > 0 && n >= (ssize_t)slen && n <= (ssize_t)slen + 1 &&
		    timingsafe_bcmp(buf, f->f_canary_secret, slen) == 0 &&
		    (n == (ssize_t)slen || buf[slen] == '\n'))
			result = CANARY_YES;
		else
			others++;
	}
	if (result == CANARY_YES)
		log_debug("fence %s: the probe reached the canary",
		    f->f_info.f_key);
	if (others > 0)
		log_debug("fence %s: %d canary connection%s without the "
		    "secret ignored", f->f_info.f_key, others,
		    others == 1 ? "" : "s");
	return (result);
}

static void
probe_allow_add(struct host_allow *a, const char *dir, const char *name)
{
	if (a->ha_n < HOST_ALLOW_MAX && (size_t)snprintf(a->ha_path[a->ha_n],
	    sizeof(a->ha_path[a->ha_n]), "%s%s%s", dir, name[0] != '\0' ?
	    "/" : "", name) < sizeof(a->ha_path[0]))
		a->ha_n++;
}

/*
 * The host paths a fence may have bound in (view_binds[], fencer_view.c,
 * the table its backend mounted): the system trees, the fencer's folder
 * or just the programs run from it (either layout), the fence's own
 * home, the /dev nodes (also the /proc masks, which are /dev/null).
 * Anything else of the host found in the fence's mount table is a
 * violation.
 */
static void
probe_allow(const struct fence *f, struct host_allow *a)
{
	const char	*bin = fencer_bindir_path();
	size_t		 i;

	a->ha_n = 0;
	for (i = 0; i < view_nbinds; i++)
		if (view_binds[i].vb_kind == VIEW_RO ||
		    view_binds[i].vb_kind == VIEW_LINKDIR ||
		    view_binds[i].vb_kind == VIEW_DEV)
			probe_allow_add(a, view_binds[i].vb_src, "");
	if (bin[0] == '/') {
		probe_allow_add(a, bin, "");
		for (i = 0; i < view_nbin_names; i++)
			probe_allow_add(a, bin, view_bin_names[i]);
	}
	if (f->f_info.f_home[0] == '/')
		probe_allow_add(a, f->f_info.f_home, "");
}

/* The host's reading of pid 1, while the canary still listens. */
static void
probe_host_read(struct fence *f)
{
	struct probe_host *ph = &f->f_expect->pe_host;
	struct host_allow *a;
	struct stat	 sb;
	uint64_t	 ino = 0;
	pid_t		 procs, files;
	char		 why[PROBE_HOST_ERR_LEN];

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		log_warn("%s: calloc", __func__);
		return;
	}
	probe_allow(f, a);
	if (f->f_canary != -1 && fstat(f->f_canary, &sb) == 0)
		ino = (uint64_t)sb.st_ino;
	procs = files = f->f_started ? f->f_info.f_pid : -1;
	why[0] = '\0';
	if (procs > 0 && f->f_backend->fb_host_procs != NULL &&
	    f->f_backend->fb_host_procs(f, &procs, &files, a, why,
	    sizeof(why)) == -1)
		procs = files = -1;
	host_read(procs, files, ino, a, ph);
	if (why[0] != '\0') {
		strlcpy(ph->ph_status_error, why, sizeof(ph->ph_status_error));
		strlcpy(ph->ph_mounts_error, why, sizeof(ph->ph_mounts_error));
		strlcpy(ph->ph_net_error, why, sizeof(ph->ph_net_error));
	}
	f->f_expect->pe_has_host = 1;
	free(a);
}

/*
 * Only a probe that ran to its end counts: exit 0 (every section) or 2
 * (some left out for size).  A signal, a timeout (the agent's, or the
 * probe's own backstop, exit 3), a cut output, anything else: the run
 * is unmeasured whatever it printed, for a process of the fence may
 * have stopped the probe and written into its pipe.
 */
static int
probe_run_ok(const struct msg_result *rs, char *why, size_t len)
{
	if (rs->rs_error[0] != '\0')
		snprintf(why, len, "the probe did not finish: %.30s%s%.60s",
		    rs->rs_error, rs->rs_message[0] != '\0' ? ": " : "",
		    rs->rs_message);
	else if (rs->rs_signal != 0)
		snprintf(why, len, "the probe was killed by signal %d",
		    (int)rs->rs_signal);
	else if (rs->rs_exit == 3)
		snprintf(why, len, "the probe timed out (exit 3)");
	else if (rs->rs_exit != 0 && rs->rs_exit != 2)
		snprintf(why, len, "the probe exited %d", (int)rs->rs_exit);
	else if (rs->rs_truncated || rs->rs_stdout_len > REPORT_MAX)
		snprintf(why, len, "the probe's output was cut");
	else
		return (1);
	return (0);
}

static void
probe_cache(const struct fence *f, const uint8_t *rep, size_t len)
{
	char	 dir[PATH_MAX], tmp[PATH_MAX], path[PATH_MAX];
	int	 fd, ok;

	if (fencer_env_dir(f, 1, dir, sizeof(dir)) == -1) {
		log_warn("%s: %s", __func__, f->f_info.f_key);
		return;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.probe.json", dir) >=
	    sizeof(tmp) || (size_t)snprintf(path, sizeof(path),
	    "%s/probe.json", dir) >= sizeof(path))
		return;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		log_warn("%s: %s", __func__, tmp);
		return;
	}
	/*
	 * No fsync: the copy lives only as long as the fence, which no
	 * crash of the host leaves running, and waiting for the disk held
	 * up every first verdict (0.7 ms of the event loop here).
	 */
	ok = write(fd, rep, len) == (ssize_t)len;
	if (close(fd) == -1 || !ok || rename(tmp, path) == -1) {
		log_warn("%s: %s", __func__, path);
		unlink(tmp);
	}
}

void
fencer_probe_output(uint32_t reqid, struct imsg *imsg)
{
	struct msg_result rs;
	struct msg_probe_report pr;
	struct fence	*f;
	void		*buf;
	size_t		 len;

	if (msg_result_decode(imsg->data, imsg->len, &rs) == -1)
		fatalx("%s: bad probe output", __func__);
	if ((f = probe_fence(reqid)) == NULL) {
		/* The fence ended meanwhile: fencer_probe_end() answered. */
		msg_result_free(&rs);
		return;
	}
	f->f_expect->pe_canary = probe_canary_result(f);
	/* Read when the probe was sent, unless that could not be. */
	if (!f->f_expect->pe_has_host)
		probe_host_read(f);
	if (rs.rs_stdout_len > REPORT_MAX)
		rs.rs_stdout_len = REPORT_MAX;

	memset(&pr, 0, sizeof(pr));
	strlcpy(pr.pr_key, f->f_info.f_key, sizeof(pr.pr_key));
	pr.pr_expect = f->f_expect;
	if (probe_run_ok(&rs, f->f_expect->pe_run_error,
	    sizeof(f->f_expect->pe_run_error))) {
		pr.pr_report = rs.rs_stdout;
		pr.pr_report_len = rs.rs_stdout_len;
	} else
		log_info("fence %s: %s", f->f_info.f_key,
		    f->f_expect->pe_run_error);
	if (msg_probe_report_encode(&pr, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&fencer_self, PROC_PROBER, IMSG_PROBE_REPORT, reqid,
	    -1, buf, len) == -1)
		log_warn("%s: to prober", __func__);
	else	/* now, not on the loop's next turn */
		imsgev_push(fencer_self.ps_iev[PROC_PROBER]);
	free(buf);
	/*
	 * Cached while the prober judges, off the path to the verdict;
	 * still before it, which this loop hears only after this.
	 */
	probe_cache(f, rs.rs_stdout, rs.rs_stdout_len);
	msg_result_free(&rs);
}

/* The prober's word on the fence: the fence's level from now on. */
void
fencer_probe_verdict(uint32_t reqid, struct imsg *imsg)
{
	struct msg_verdict v;
	struct fence	*f;

	if (msg_verdict_decode(imsg->data, imsg->len, &v) == -1)
		fatalx("%s: bad verdict", __func__);
	/* A fence that ended meanwhile had its request answered then. */
	if ((f = probe_fence(reqid)) != NULL) {
		f->f_info.f_level = v.v_level;
		log_info("fence %s measured %s", f->f_info.f_key,
		    level_name(v.v_level));
		fencer_probe_end(f, 0);
		if (proc_compose(&fencer_self, PROC_BROKER, IMSG_FENCE_LEVEL,
		    reqid, -1, imsg->data, imsg->len) == -1)
			log_warn("%s: to broker", __func__);
		else	/* now: what waits for the verdict goes sooner */
			imsgev_push(fencer_self.ps_iev[PROC_BROKER]);
	}
	msg_verdict_free(&v);
}

void
fencer_probe_end(struct fence *f, int notify)
{
	char	 path[PATH_MAX];
	int	 began = f->f_probe_reqid != 0 || f->f_probe_first;

	if (notify && f->f_probe_reqid != 0)
		fencer_send_error(IMSG_FENCE_FAILED, f->f_probe_reqid,
		    "fence-stopped", "fence %s stopped while being probed",
		    f->f_info.f_key);
	if (f->f_canary != -1) {
		close(f->f_canary);
		f->f_canary = -1;
	}
	if (f->f_expect != NULL) {
		if (probe_secret_path(f, path, sizeof(path)) == 0)
			(void)unlink(path);
		free(f->f_expect);
		f->f_expect = NULL;
	}
	explicit_bzero(f->f_canary_secret, sizeof(f->f_canary_secret));
	if (f->f_probe_msg != NULL) {
		explicit_bzero(f->f_probe_msg, f->f_probe_len);
		free(f->f_probe_msg);
		f->f_probe_msg = NULL;
	}
	f->f_probe_reqid = 0;
	f->f_probe_first = 0;
	if (began)
		fencer_probe_ended();	/* the next in turn (fencer_queue.c) */
}
