/*
 * Denials seen by the fencer (docs/denials.md).  A native L1.5 or L2
 * fence's seccomp filter refuses by USER_NOTIF, and its pid 1 handed
 * the fencer the listener (fence_child_send()); the fencer answers each
 * notification at once with the errno the rule stands for (the
 * backend's fb_refusal_errno, one table with the rules), never with
 * CONTINUE, never with a success.  Before it answers, it writes the
 * broker a struct msg_denial on a socket of their own (IMSG_DENIALS_FD):
 * the call, its safe arguments, a remedy where one exists, and the chain
 * of in-fence pids from the caller up, read from /proc while the caller
 * waits.  So when the refused call returns, its denial is already in
 * the broker's socket, before anything the command does after it.
 *
 * A notification makes its caller wait for the fencer: the work per
 * notification is a handful of small /proc reads, and each fence gets
 * at most FENCER_DENIAL_TURN notifications per turn of the loop, so a
 * fence that calls refused calls in a loop slows itself, not the
 * others.  If the fencer dies, the kernel fails every pending and later
 * notified call with ENOSYS: still refused.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/sched.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "fencer.h"
#include "backend.h"

#define FENCER_DENIAL_TURN	16	/* notifications per fence per turn */
#define FENCER_DENIAL_NR_MAX	560	/* names resolved below this */
#define FENCER_DENIAL_SNDBUF	(4 * 1024 * 1024)

static int	 fencer_denial_fd = -1;	/* our end of the broker's socket */
static char	*fencer_denial_names[FENCER_DENIAL_NR_MAX];
static uint64_t	 fencer_denial_lost;	/* the broker's socket was full */

static void	fencer_denial_read(int, short, void *);

/*
 * Once, when the fencer starts: the names of the calls (libseccomp's
 * resolver, never in the loop) and the broker's socket, its other end
 * sent along.  Denials are not sent without it, and nothing else fails.
 */
void
fencer_denials_init(void)
{
	int	 sp[2], i, size = FENCER_DENIAL_SNDBUF;

	for (i = 0; i < FENCER_DENIAL_NR_MAX; i++)
		fencer_denial_names[i] = seccomp_syscall_resolve_num_arch(
		    SCMP_ARCH_NATIVE, i);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sp) == -1) {
		log_warn("%s: socketpair: denials are not sent", __func__);
		return;
	}
	/* Room for bursts; the broker drains it every turn. */
	if (setsockopt(sp[0], SOL_SOCKET, SO_SNDBUFFORCE, &size,
	    sizeof(size)) == -1)
		(void)setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &size,
		    sizeof(size));
	if (proc_compose(&fencer_self, PROC_BROKER, IMSG_DENIALS_FD, 0, sp[1],
	    NULL, 0) == -1) {
		log_warn("%s: to broker", __func__);
		(void)close(sp[0]);
		(void)close(sp[1]);
		return;
	}
	fencer_denial_fd = sp[0];
}

/* One denial of f's layer, its what and the rest to fill. */
static void
fencer_denial_of(const struct fence *f, uint32_t layer, struct msg_denial *dn)
{
	memset(dn, 0, sizeof(*dn));
	dn->dn_owner = f->f_info.f_owner;
	strlcpy(dn->dn_key, f->f_info.f_key, sizeof(dn->dn_key));
	dn->dn_boot = (uint32_t)f->f_info.f_pid;
	dn->dn_layer = layer;
	dn->dn_count = 1;
}

/*
 * f runs (its BOOTED is sent): the descriptors of its limits' counters
 * to the broker, each as IMSG_FENCE_LIMIT_FD with a denial naming the
 * fence and the limit ("memory", "pids"), after BOOTED on the same
 * channel.
 */
void
fencer_denials_limits(struct fence *f)
{
	struct msg_denial dn;
	const char	*what[2] = { "memory", "pids" };
	void		*buf;
	size_t		 len;
	int		 fds[2] = { -1, -1 }, i;

	/* `observe denials no': nothing of the kind, as before. */
	if (f->f_backend->fb_limit_fds == NULL ||
	    !fencer_self.ps_conf.c_observe_denials)
		return;
	f->f_backend->fb_limit_fds(f, &fds[0], &fds[1]);
	for (i = 0; i < 2; i++) {
		if (fds[i] == -1)
			continue;
		fencer_denial_of(f, DENIAL_LIMIT, &dn);
		strlcpy(dn.dn_what, what[i], sizeof(dn.dn_what));
		if (msg_denial_encode(&dn, &buf, &len) == -1)
			fatal("%s: encode", __func__);
		/* proc_compose() owns the descriptor from here. */
		if (proc_compose(&fencer_self, PROC_BROKER,
		    IMSG_FENCE_LIMIT_FD, 0, fds[i], buf, len) == -1)
			log_warn("%s: to broker", __func__);
		free(buf);
	}
}

/* f's listener, if its backend made one: watched from now on. */
void
fencer_denials_watch(struct fence *f)
{
	if (f->f_notify_fd == -1)
		return;
	event_assign(&f->f_notify_ev, fencer_self.ps_evbase, f->f_notify_fd,
	    EV_READ | EV_PERSIST, fencer_denial_read, f);
	if (event_add(&f->f_notify_ev, NULL) == -1) {
		log_warn("%s: fence %s", __func__, f->f_info.f_key);
		return;
	}
	f->f_notify_on = 1;
}

/*
 * f stops: its listener goes.  A caller still waiting then fails with
 * ENOSYS (the kernel's answer when no listener is left): refused.
 */
void
fencer_denials_forget(struct fence *f)
{
	if (f->f_notify_on)
		event_del(&f->f_notify_ev);
	f->f_notify_on = 0;
	if (f->f_notify_fd != -1)
		(void)close(f->f_notify_fd);
	f->f_notify_fd = -1;
}

/* Append "|NAME" for each flag of v in the table; what is left in hex. */
struct fencer_flag {
	uint64_t	 ff_bit;
	const char	*ff_name;
};

static const struct fencer_flag fencer_ns_flags[] = {
	{ CLONE_NEWNS, "CLONE_NEWNS" },
	{ CLONE_NEWCGROUP, "CLONE_NEWCGROUP" },
	{ CLONE_NEWUTS, "CLONE_NEWUTS" },
	{ CLONE_NEWIPC, "CLONE_NEWIPC" },
	{ CLONE_NEWUSER, "CLONE_NEWUSER" },
	{ CLONE_NEWPID, "CLONE_NEWPID" },
	{ CLONE_NEWNET, "CLONE_NEWNET" },
	{ CLONE_NEWTIME, "CLONE_NEWTIME" },
};

static void
fencer_denial_flags(char *buf, size_t len, uint64_t v, int only_known)
{
	size_t	 i, off = strlen(buf);
	int	 first = 1;

	for (i = 0; i < nitems(fencer_ns_flags); i++) {
		if ((v & fencer_ns_flags[i].ff_bit) == 0)
			continue;
		snprintf(buf + off, len - off, "%s%s", first ? "" : "|",
		    fencer_ns_flags[i].ff_name);
		off = strlen(buf);
		first = 0;
		v &= ~fencer_ns_flags[i].ff_bit;
	}
	if (v != 0 && !only_known)
		snprintf(buf + off, len - off, "%s0x%llx", first ? "" : "|",
		    (unsigned long long)v);
	else if (first)
		snprintf(buf + off, len - off, "0");
}

static const char *const fencer_families[] = {
	"AF_UNSPEC", "AF_UNIX", "AF_INET", "AF_AX25", "AF_IPX",
	"AF_APPLETALK", "AF_NETROM", "AF_BRIDGE", "AF_ATMPVC", "AF_X25",
	"AF_INET6", "AF_ROSE", "AF_DECnet", "AF_NETBEUI", "AF_SECURITY",
	"AF_KEY", "AF_NETLINK", "AF_PACKET", "AF_ASH", "AF_ECONET",
	"AF_ATMSVC", "AF_RDS", "AF_SNA", "AF_IRDA", "AF_PPPOX",
	"AF_WANPIPE", "AF_LLC", "AF_IB", "AF_MPLS", "AF_CAN", "AF_TIPC",
	"AF_BLUETOOTH", "AF_IUCV", "AF_RXRPC", "AF_ISDN", "AF_PHONET",
	"AF_IEEE802154", "AF_CAIF", "AF_ALG", "AF_NFC", "AF_VSOCK",
	"AF_KCM", "AF_QIPCRTR", "AF_SMC", "AF_XDP", "AF_MCTP"
};

static const char *const fencer_socktypes[] = {
	NULL, "SOCK_STREAM", "SOCK_DGRAM", "SOCK_RAW", "SOCK_RDM",
	"SOCK_SEQPACKET", "SOCK_DCCP", NULL, NULL, NULL, "SOCK_PACKET"
};

/*
 * What was refused, with the arguments that are safe to show: integers
 * the filter itself looked at (flags, a family and type, a request, a
 * personality), never a pointer or what it points to.
 */
static void
fencer_denial_what(const struct seccomp_data *d, char *buf, size_t len)
{
	const char	*name = NULL;
	uint64_t	 a0 = d->args[0], a1 = d->args[1];

	if (d->nr >= 0 && d->nr < FENCER_DENIAL_NR_MAX)
		name = fencer_denial_names[d->nr];
	if (name == NULL) {
		snprintf(buf, len, "system call %d", d->nr);
		return;
	}
	if (strcmp(name, "unshare") == 0 || strcmp(name, "clone") == 0) {
		snprintf(buf, len, "%s(", name);
		fencer_denial_flags(buf, len, a0, 1);
		strlcat(buf, ")", len);
	} else if (strcmp(name, "setns") == 0) {
		snprintf(buf, len, "setns(");
		fencer_denial_flags(buf, len, a1, 0);
		strlcat(buf, ")", len);
	} else if (strcmp(name, "socket") == 0 ||
	    strcmp(name, "socketpair") == 0) {
		char	 fam[32], type[32];

		if (a0 < nitems(fencer_families))
			strlcpy(fam, fencer_families[a0], sizeof(fam));
		else
			snprintf(fam, sizeof(fam), "family %llu",
			    (unsigned long long)a0);
		if ((a1 & 0xf) < nitems(fencer_socktypes) &&
		    fencer_socktypes[a1 & 0xf] != NULL)
			strlcpy(type, fencer_socktypes[a1 & 0xf],
			    sizeof(type));
		else
			snprintf(type, sizeof(type), "type %llu",
			    (unsigned long long)(a1 & 0xf));
		snprintf(buf, len, "%s(%s, %s)", name, fam, type);
	} else if (strcmp(name, "ioctl") == 0) {
		uint32_t req = (uint32_t)a1;

		if (req == 0x5412)
			snprintf(buf, len, "ioctl(TIOCSTI)");
		else if (req == 0x541c)
			snprintf(buf, len, "ioctl(TIOCLINUX)");
		else
			snprintf(buf, len, "ioctl(0x%x)", req);
	} else if (strcmp(name, "personality") == 0)
		snprintf(buf, len, "personality(0x%llx)",
		    (unsigned long long)a0);
	else if (strcmp(name, "keyctl") == 0)
		snprintf(buf, len, "keyctl(operation %llu)",
		    (unsigned long long)(a0 & 0xffffffff));
	else
		snprintf(buf, len, "%s()", name);
}

/*
 * What would allow it, where something would: the tier that does not
 * refuse it, or that nothing does.  Honest: "" where we know of none.
 */
static const struct {
	const char	*fr_name;
	const char	*fr_remedy;
} fencer_remedies[] = {
	{ "unshare", "tier L1 does not refuse it" },
	{ "clone", "tier L1 does not refuse it" },
	{ "keyctl", "tier L1 does not refuse it" },
	{ "add_key", "tier L1 does not refuse it" },
	{ "request_key", "tier L1 does not refuse it" },
	{ "io_uring_setup", "tier L1 does not refuse it" },
	{ "io_uring_enter", "tier L1 does not refuse it" },
	{ "io_uring_register", "tier L1 does not refuse it" },
	{ "userfaultfd", "tier L1 does not refuse it" },
	{ "ptrace", "tier L1 does not refuse it" },
	{ "process_vm_readv", "tier L1 does not refuse it" },
	{ "process_vm_writev", "tier L1 does not refuse it" },
	{ "kcmp", "tier L1 does not refuse it" },
	{ "pidfd_getfd", "tier L1 does not refuse it" },
	{ "process_madvise", "tier L1 does not refuse it" },
	{ "modify_ldt", "tier L1 does not refuse it" },
	{ "name_to_handle_at", "tier L1 does not refuse it" },
	{ "personality", "tier L1 does not refuse it" },
	{ "perf_event_open", "tier L1 does not refuse it" },
	{ "get_mempolicy", "tier L1 does not refuse it" },
	{ "set_mempolicy", "tier L1 does not refuse it" },
	{ "mbind", "tier L1 does not refuse it" },
	{ "migrate_pages", "tier L1 does not refuse it" },
	{ "move_pages", "tier L1 does not refuse it" },
	{ "set_mempolicy_home_node", "tier L1 does not refuse it" },
	{ "clone3", "none needed: libc falls back to clone()" },
	{ "mount", "none: the fence's mounts are fixed" },
	{ "umount2", "none: the fence's mounts are fixed" },
	{ "pivot_root", "none: the fence's mounts are fixed" },
	{ "chroot", "none: the fence's mounts are fixed" },
	{ "open_tree", "none: the fence's mounts are fixed" },
	{ "move_mount", "none: the fence's mounts are fixed" },
	{ "fsopen", "none: the fence's mounts are fixed" },
	{ "fsconfig", "none: the fence's mounts are fixed" },
	{ "fsmount", "none: the fence's mounts are fixed" },
	{ "fspick", "none: the fence's mounts are fixed" },
	{ "mount_setattr", "none: the fence's mounts are fixed" },
};

static void
fencer_denial_remedy(const struct seccomp_data *d, char *buf, size_t len)
{
	const char	*name = NULL;
	size_t		 i;

	buf[0] = '\0';
	if (d->nr >= 0 && d->nr < FENCER_DENIAL_NR_MAX)
		name = fencer_denial_names[d->nr];
	if (name == NULL) {
		snprintf(buf, len, "none: newer than the fence's table of "
		    "system calls");
		return;
	}
	/* Raw and packet sockets take a privilege no fence holds. */
	if ((strcmp(name, "socket") == 0 || strcmp(name, "socketpair") == 0) &&
	    ((d->args[1] & 0xf) == 3 || (d->args[1] & 0xf) == 10 ||
	    d->args[0] == 17)) {
		snprintf(buf, len, "none: raw and packet sockets need a "
		    "privilege no fence holds");
		return;
	}
	if (strcmp(name, "socket") == 0 || strcmp(name, "socketpair") == 0) {
		snprintf(buf, len, "tier L1 does not refuse it");
		return;
	}
	for (i = 0; i < nitems(fencer_remedies); i++)
		if (strcmp(name, fencer_remedies[i].fr_name) == 0) {
			strlcpy(buf, fencer_remedies[i].fr_remedy, len);
			return;
		}
}

/*
 * Host pid pid's in-fence pid (the last of NSpid) and its parent's host
 * pid, from /proc/PID/status; -1 if it is gone or not readable.
 */
static int
fencer_denial_status(pid_t pid, pid_t *inner, pid_t *ppid)
{
	char	 path[64], buf[2048], *p, *e;
	ssize_t	 n;
	long	 v;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	*inner = *ppid = 0;
	if ((p = strstr(buf, "\nPPid:\t")) != NULL)
		*ppid = (pid_t)strtol(p + 7, NULL, 10);
	if ((p = strstr(buf, "\nNSpid:\t")) == NULL)
		return (-1);
	p += 8;
	/* The last number of the line: the innermost namespace's pid. */
	for (;;) {
		v = strtol(p, &e, 10);
		if (e == p)
			break;
		*inner = (pid_t)v;
		p = e;
		while (*p == '\t' || *p == ' ')
			p++;
		if (*p == '\n' || *p == '\0')
			break;
	}
	return (*inner > 0 ? 0 : -1);
}

/*
 * The chain of in-fence pids from the caller (host pid pid) up to the
 * fence's pid 1, at most MSG_DENIAL_CHAIN_MAX, as "PID PID ...".  Read
 * while the caller waits for our answer, so the caller itself cannot
 * go; a parent that goes meanwhile leaves the caller to its job's
 * supervisor (a subreaper), which is in the chain all the same.
 */
static void
fencer_denial_chain(const struct fence *f, pid_t pid, char *buf, size_t len)
{
	pid_t	 inner, ppid;
	size_t	 off = 0;
	int	 i;

	buf[0] = '\0';
	for (i = 0; i < MSG_DENIAL_CHAIN_MAX && pid > 0; i++) {
		if (fencer_denial_status(pid, &inner, &ppid) == -1)
			break;
		snprintf(buf + off, len - off, "%s%d", off ? " " : "",
		    (int)inner);
		off = strlen(buf);
		if (inner == 1 || pid == f->f_info.f_pid)
			break;
		pid = ppid;
	}
}

/* One denial to the broker; 0 if it went, -1 if the socket was full. */
static int
fencer_denial_send(const struct msg_denial *dn)
{
	void	*buf;
	size_t	 len;
	ssize_t	 n;

	if (fencer_denial_fd == -1)
		return (-1);
	if (msg_denial_encode(dn, &buf, &len) == -1) {
		log_warn("%s: encode", __func__);
		return (-1);
	}
	n = send(fencer_denial_fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	free(buf);
	if (n != (ssize_t)len) {
		if (fencer_denial_lost++ == 0)
			log_warnx("%s: the broker's socket is full: denials "
			    "are lost", __func__);
		return (-1);
	}
	return (0);
}

/* Answer notification id of f with -err: refused, never allowed. */
static void
fencer_denial_answer(struct fence *f, uint64_t id, int err)
{
	struct seccomp_notif_resp	 resp;

	memset(&resp, 0, sizeof(resp));
	resp.id = id;
	resp.error = -err;
	resp.val = 0;
	resp.flags = 0;		/* never SECCOMP_USER_NOTIF_FLAG_CONTINUE */
	if (ioctl(f->f_notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == -1 &&
	    errno != ENOENT)
		log_warn("%s: fence %s", __func__, f->f_info.f_key);
}

/* One notification of f, if there is one: 1 if one was answered. */
static int
fencer_denial_one(struct fence *f)
{
	struct seccomp_notif	 req;
	struct msg_denial	 dn;
	struct pollfd		 pfd;
	int			 err;

	/* RECV blocks when nothing waits: ask first, never wait. */
	pfd.fd = f->f_notify_fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) != 1)
		return (0);
	if ((pfd.revents & POLLIN) == 0) {
		/* No process is left under the filter: nothing will come. */
		if (pfd.revents & (POLLHUP | POLLERR) && f->f_notify_on) {
			event_del(&f->f_notify_ev);
			f->f_notify_on = 0;
		}
		return (0);
	}
	memset(&req, 0, sizeof(req));
	if (ioctl(f->f_notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == -1)
		/* ENOENT: its caller was killed before we came. */
		return (errno == ENOENT || errno == EINTR ? 1 : 0);
	err = f->f_backend->fb_refusal_errno != NULL ?
	    f->f_backend->fb_refusal_errno(req.data.nr) : EPERM;
	if (err <= 0)
		err = EPERM;

	fencer_denial_of(f, DENIAL_SECCOMP, &dn);
	fencer_denial_what(&req.data, dn.dn_what, sizeof(dn.dn_what));
	fencer_denial_remedy(&req.data, dn.dn_remedy, sizeof(dn.dn_remedy));
	fencer_denial_chain(f, (pid_t)req.pid, dn.dn_chain,
	    sizeof(dn.dn_chain));
	/* The chain is the caller's only if it still waits: not reused. */
	if (ioctl(f->f_notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID,
	    &req.id) == 0 && dn.dn_chain[0] != '\0')
		(void)fencer_denial_send(&dn);
	fencer_denial_answer(f, req.id, err);
	return (1);
}

/* f's listener is readable: a bounded number of its notifications. */
static void
fencer_denial_read(int fd, short event, void *arg)
{
	struct fence	*f = arg;
	int		 i;

	for (i = 0; i < FENCER_DENIAL_TURN; i++)
		if (fencer_denial_one(f) == 0)
			break;
}
