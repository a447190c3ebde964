/*
 * vminit: pid 1 of a vm fence's guest (docs/images.md, "The fence
 * image").  It runs from the initramfs, loads the virtio, squashfs and
 * 9p modules, mounts the read-only root from the virtio disk with
 * tmpfs, the sandbox home over 9p and a small /dev and /proc on it,
 * opens the agent's virtio-serial port as fd 3, switches into the root,
 * drops to the fence's uid with no capability and no way to gain one,
 * and executes fence-agent -c.  The agent, pid 1 from then on, ends the
 * machine when it exits (the kernel panics, panic=-1 and QEMU's
 * -no-reboot end QEMU).
 *
 * With fenced.inner=runsc (docs/vm.md, "The inner boundary") it does
 * not become the agent: it writes an OCI bundle with the host's own
 * bundle code (fencer/runsc/bundle.c) into a tmpfs of its own, starts
 * gVisor's runsc on it with a socket as the sandbox's stdin and stdout
 * (fence-agent -s), which it relays to the agent's port as pid 1,
 * reaping, and powers the machine off when runsc ends.  A runsc that
 * does not start ends the guest with its reason on the console: an
 * inner fence never runs without its inner boundary.  One that ends
 * later says why too: the fence's memory ran out, or the sentry's
 * panic.
 *
 * Everything it reads comes from the kernel command line the host
 * wrote, and is parsed as hostile anyway.  Every step has a deadline
 * (an alarm); any failure prints one line, "fenced-vminit: STEP: ERROR",
 * on the console and powers the machine off.
 *
 * Static: it runs before any root is mounted.  libc, and for the
 * bundle jansson and libbsd's static libraries.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <net/if.h>

#include <linux/capability.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fenced.h"
#include "fencer_view.h"
#include "bundle.h"

#define VMINIT_STEP_SECS	10
#define VMINIT_CMDLINE_MAX	4096
#define VMINIT_MODULES_MAX	64
#define VMINIT_ORDER_MAX	8192
#define VMINIT_USER_MAX		32
#define VMINIT_HOST_MAX		63
#define VMINIT_PORT_NAME	"fenced.agent"
/* The host's fencer/vm/vm.h VM_TRY_MARK: the same words. */
#define VMINIT_TRY_MARK		"fenced-vminit: kvm try: init reached"
#define VMINIT_PORTS		"/sys/class/virtio-ports"
#define VMINIT_DISK		"/dev/vda"
#define VMINIT_NEWROOT		"/newroot"
#define VMINIT_AGENT		"/run/fenced/bin/fence-agent"
#define VMINIT_PROBE		"/fenced/fence-probe"
#define VMINIT_CHANNEL_FD	3
#define VMINIT_CONSOLE_FD	10
/* The largest the 6.1 virtio transport takes (it clamps to this). */
#define VMINIT_9P_MSIZE		512000
#define VMINIT_SMALL_FS		"size=65536"
/* /tmp's size at most 1 TiB: a size is a limit, not an allocation. */
#define VMINIT_PIDS_MAX		4194304		/* the kernel's pid_max */
#define VMINIT_CGROUP		"/cgroup"
#define VMINIT_TMP_MAX		(1ULL << 40)
#define VMINIT_TMP_MIN		(1ULL << 20)
/*
 * The inner boundary's own tmpfs: runsc's state, the bundle, its logs,
 * and the copy of runsc that runs (vminit_runsc_copy()), so not noexec;
 * no mount of the sandbox shows it.
 */
#define VMINIT_INNER		"/run/fenced/inner"
#define VMINIT_INNER_FS		"mode=0700,size=67108864"
/* Kept out of the inner sandbox's reach: this, or an eighth if more. */
#define VMINIT_RESERVE		(48ULL << 20)
#define VMINIT_RUNSC		"/usr/bin/runsc"
#define VMINIT_INNER_RUNSC	VMINIT_INNER "/runsc"

struct vminit_args {
	uid_t		 va_uid;
	gid_t		 va_gid;
	char		 va_user[VMINIT_USER_MAX + 1];
	char		 va_host[VMINIT_HOST_MAX + 1];
	unsigned long long va_tmp;
	unsigned long long va_pids;	/* the fence's pids limit */
	int		 va_try;	/* fenced.try=kvm */
	int		 va_inner;	/* fenced.inner=runsc */
	int		 va_seen;
};

#define VA_UID		0x01
#define VA_GID		0x02
#define VA_USER		0x04
#define VA_HOST		0x08
#define VA_TMP		0x10
#define VA_PIDS		0x20
#define VA_ALL		0x3f	/* the ones each boot must have */
#define VA_TRY		0x40	/* may be given */
#define VA_INNER	0x80	/* may be given */

static const char *volatile	 vminit_step = "start";
static int			 vminit_console = -1;
/* The inner boundary's cgroup in the guest (vminit_cgroups()). */
static int			 vminit_sandbox_procs = -1;
static int			 vminit_sandbox_events = -1;

static void	 vminit_fail(const char *, ...)
		    __attribute__((__noreturn__, __format__(printf, 1, 2)));
static void	 vminit_say(const void *, size_t);
static void	 vminit_begin(const char *);
static void	 vminit_alarm(int);
static void	 vminit_early(void);
static void	 vminit_cmdline(struct vminit_args *);
static void	 vminit_param(struct vminit_args *, const char *, const char *);
static int	 vminit_number(const char *, unsigned long long,
		    unsigned long long *);
static int	 vminit_name(const char *, size_t, const char *,
		    const char *);
static void	 vminit_modules(void);
static void	 vminit_wait_disk(void);
static int	 vminit_port_name(const char *);
static int	 vminit_find_port(char *, size_t);
static int	 vminit_open_port(void);
static void	 vminit_mount(const char *, const char *, const char *,
		    unsigned long, const char *);
static void	 vminit_mkdir(const char *, mode_t, uid_t, gid_t);
static void	 vminit_root(const struct vminit_args *);
static void	 vminit_dev(const struct vminit_args *);
static void	 vminit_home(const struct vminit_args *);
static void	 vminit_loopback(void);
static void	 vminit_cgroups(const struct vminit_args *);
static uint64_t	 vminit_memtotal(void);
static void	 vminit_lockdown(void);
static void	 vminit_switch(void);
static void	 vminit_drop(const struct vminit_args *);
static void	 vminit_exec(const struct vminit_args *, int);
static void	 vminit_inner(const struct vminit_args *, int)
		    __attribute__((__noreturn__));
static void	 vminit_tail(const char *, size_t, char *, size_t);
static void	 vminit_inner_why(char *, size_t);
static int	 vminit_runsc_copy(void);
static void	 vminit_relay(pid_t, int, int, int, int *, char *, size_t);
static ssize_t	 vminit_read(const char *, char *, size_t);
static void	 vminit_sleep(void);
static double	 vminit_uptime(void);

/* To the console, if it is open; nothing else can be done on failure. */
static void
vminit_say(const void *buf, size_t len)
{
	ssize_t	 n;

	if (vminit_console == -1)
		return;
	while (len > 0) {
		if ((n = write(vminit_console, buf, len)) <= 0)
			return;
		buf = (const char *)buf + n;
		len -= n;
	}
}

/* One line on the console, then power off; never returns. */
static void
vminit_fail(const char *fmt, ...)
{
	char	 msg[512], line[640];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = snprintf(line, sizeof(line), "fenced-vminit: %s: %s\n",
	    vminit_step, msg);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (vminit_console == -1)
		vminit_console = open("/dev/console", O_WRONLY | O_NOCTTY |
		    O_CLOEXEC);
	vminit_say(line, n);
	sync();
	(void)reboot(RB_POWER_OFF);
	/* pid 1 exiting panics the kernel: panic=-1 and -no-reboot end it. */
	_exit(1);
}

/* Async-signal-safe: a step that outlived its deadline. */
static void
vminit_alarm(int sig)
{
	const char	*s = vminit_step;
	const char	 pre[] = "fenced-vminit: ", post[] = ": timed out\n";

	vminit_say(pre, sizeof(pre) - 1);
	vminit_say(s, strlen(s));
	vminit_say(post, sizeof(post) - 1);
	(void)reboot(RB_POWER_OFF);
	_exit(1);
}

/* Each step gets its own deadline; a hung syscall ends in the alarm. */
static void
vminit_begin(const char *step)
{
	vminit_step = step;
	alarm(VMINIT_STEP_SECS);
}

static double
vminit_uptime(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) == -1)
		return (0);
	return (ts.tv_sec + ts.tv_nsec / 1e9);
}

static void
vminit_sleep(void)
{
	const struct timespec	 ts = { 0, 20 * 1000 * 1000 };

	(void)nanosleep(&ts, NULL);
}

/* At most len - 1 bytes of a small file, NUL-terminated; -1 if none. */
static ssize_t
vminit_read(const char *path, char *buf, size_t len)
{
	ssize_t	 n;
	size_t	 got = 0;
	int	 fd, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		return (-1);
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			e = errno;
			(void)close(fd);
			errno = e;
			return (-1);
		}
		if (n == 0)
			break;
		got += n;
	}
	(void)close(fd);
	buf[got] = '\0';
	return (got);
}

/* The initramfs's own proc, sysfs and devtmpfs, and the console. */
static void
vminit_early(void)
{
	struct sigaction	 sa;
	int			 fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vminit_alarm;
	if (sigaction(SIGALRM, &sa, NULL) == -1)
		vminit_fail("sigaction: %s", strerror(errno));
	umask(022);
	if (mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID | MS_NOEXEC,
	    "mode=0755") == -1)
		vminit_fail("mount /dev: %s", strerror(errno));
	/*
	 * Above the agent's fds: 0-2 are closed at boot (the initramfs
	 * has no /dev/console for the kernel to open) and the open would
	 * land on 0.
	 */
	if ((fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC)) ==
	    -1)
		vminit_fail("open /dev/console: %s", strerror(errno));
	if ((vminit_console = fcntl(fd, F_DUPFD_CLOEXEC, VMINIT_CONSOLE_FD))
	    == -1)
		vminit_fail("fcntl: %s", strerror(errno));
	(void)close(fd);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    NULL) == -1)
		vminit_fail("mount /proc: %s", strerror(errno));
	/* Only to find the agent's port by its name; never in the root. */
	if (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC |
	    MS_RDONLY, NULL) == -1)
		vminit_fail("mount /sys: %s", strerror(errno));
}

/*
 * A decimal number in [1, max]: digits only, no sign, no leading zero,
 * at most 20 digits.
 */
static int
vminit_number(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long	 v = 0;
	size_t			 i, len = strlen(s);

	if (len == 0 || len > 20 || s[0] == '0')
		return (-1);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		if (v > (max - (s[i] - '0')) / 10)
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return (0);
}

/* first[rest]{0,max-1}: a user or host name of a fixed alphabet. */
static int
vminit_name(const char *s, size_t max, const char *first, const char *rest)
{
	size_t	 i, len = strlen(s);

	if (len == 0 || len > max)
		return (-1);
	if (strchr(first, s[0]) == NULL)
		return (-1);
	for (i = 1; i < len; i++)
		if (strchr(rest, s[i]) == NULL)
			return (-1);
	return (0);
}

static void
vminit_param(struct vminit_args *va, const char *key, const char *val)
{
	const char	 user1[] = "abcdefghijklmnopqrstuvwxyz_";
	const char	 user[] = "abcdefghijklmnopqrstuvwxyz0123456789_-";
	const char	 host1[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned long long v;
	int		 bit;

	if (strcmp(key, "uid") == 0)
		bit = VA_UID;
	else if (strcmp(key, "gid") == 0)
		bit = VA_GID;
	else if (strcmp(key, "user") == 0)
		bit = VA_USER;
	else if (strcmp(key, "host") == 0)
		bit = VA_HOST;
	else if (strcmp(key, "tmp") == 0)
		bit = VA_TMP;
	else if (strcmp(key, "pids") == 0)
		bit = VA_PIDS;
	else if (strcmp(key, "try") == 0)
		bit = VA_TRY;
	else if (strcmp(key, "inner") == 0)
		bit = VA_INNER;
	else
		vminit_fail("unknown parameter fenced.%.32s", key);
	if (va->va_seen & bit)
		vminit_fail("fenced.%s given twice", key);
	va->va_seen |= bit;

	switch (bit) {
	case VA_UID:
	case VA_GID:
		/* Never 0 (root), never (uid_t)-1 (the "no change" id). */
		if (vminit_number(val, UINT32_MAX - 1, &v) == -1)
			vminit_fail("bad fenced.%s", key);
		if (bit == VA_UID)
			va->va_uid = (uid_t)v;
		else
			va->va_gid = (gid_t)v;
		break;
	case VA_USER:
		if (vminit_name(val, VMINIT_USER_MAX, user1, user) == -1)
			vminit_fail("bad fenced.user");
		(void)snprintf(va->va_user, sizeof(va->va_user), "%s", val);
		break;
	case VA_HOST:
		if (vminit_name(val, VMINIT_HOST_MAX, host1, user) == -1)
			vminit_fail("bad fenced.host");
		(void)snprintf(va->va_host, sizeof(va->va_host), "%s", val);
		break;
	case VA_TMP:
		if (vminit_number(val, VMINIT_TMP_MAX, &v) == -1 ||
		    v < VMINIT_TMP_MIN)
			vminit_fail("bad fenced.tmp");
		va->va_tmp = v;
		break;
	case VA_PIDS:
		if (vminit_number(val, VMINIT_PIDS_MAX, &v) == -1 || v < 8)
			vminit_fail("bad fenced.pids");
		va->va_pids = v;
		break;
	case VA_TRY:
		if (strcmp(val, "kvm") != 0)
			vminit_fail("bad fenced.try");
		va->va_try = 1;
		break;
	case VA_INNER:
		if (strcmp(val, "runsc") != 0)
			vminit_fail("bad fenced.inner");
		va->va_inner = 1;
		break;
	}
}

/*
 * The host's contract: fenced.uid, gid, user, host, tmp and pids, each once,
 * and perhaps fenced.try=kvm (the host's KVM try: say so and power off
 * once the devices answer) and fenced.inner=runsc (the agent in gVisor);
 * any other fenced.* word is refused.  Words without the prefix are the
 * kernel's own (console=, quiet, panic=).  No quoting is understood: a
 * quote in a fenced.* word fails its validation.
 */
static void
vminit_cmdline(struct vminit_args *va)
{
	char	 buf[VMINIT_CMDLINE_MAX], *p, *word, *eq;
	ssize_t	 n;

	if ((n = vminit_read("/proc/cmdline", buf, sizeof(buf))) == -1)
		vminit_fail("read /proc/cmdline: %s", strerror(errno));
	if ((size_t)n >= sizeof(buf) - 1)
		vminit_fail("command line too long");
	memset(va, 0, sizeof(*va));
	p = buf;
	while ((word = strsep(&p, " \t\n")) != NULL) {
		if (strncmp(word, "fenced.", 7) != 0)
			continue;
		word += 7;
		if ((eq = strchr(word, '=')) == NULL)
			vminit_fail("fenced.%.32s without a value", word);
		*eq++ = '\0';
		vminit_param(va, word, eq);
	}
	if ((va->va_seen & VA_ALL) != VA_ALL)
		vminit_fail("missing fenced.uid, gid, user, host, tmp or pids");
}

/*
 * /modules.order: one absolute path under /modules/ a line, in the
 * order of their dependencies; each is loaded with finit_module.  One
 * already there (EEXIST) is fine.
 */
static void
vminit_modules(void)
{
	char	 buf[VMINIT_ORDER_MAX], *p, *line;
	ssize_t	 n;
	int	 fd, count = 0;

	if ((n = vminit_read("/modules.order", buf, sizeof(buf))) == -1)
		vminit_fail("read /modules.order: %s", strerror(errno));
	if ((size_t)n >= sizeof(buf) - 1)
		vminit_fail("/modules.order too long");
	p = buf;
	while ((line = strsep(&p, "\n")) != NULL) {
		if (*line == '\0')
			continue;
		if (++count > VMINIT_MODULES_MAX)
			vminit_fail("more than %d modules", VMINIT_MODULES_MAX);
		if (strncmp(line, "/modules/", 9) != 0 ||
		    strstr(line, "..") != NULL || strlen(line) > PATH_MAX)
			vminit_fail("bad module path %.64s", line);
		if ((fd = open(line, O_RDONLY | O_CLOEXEC)) == -1)
			vminit_fail("open %s: %s", line, strerror(errno));
		if (syscall(SYS_finit_module, fd, "", 0) == -1 &&
		    errno != EEXIST)
			vminit_fail("finit_module %s: %s", line,
			    strerror(errno));
		(void)close(fd);
	}
}

static void
vminit_wait_disk(void)
{
	struct stat	 st;

	for (;;) {
		if (stat(VMINIT_DISK, &st) == 0 && S_ISBLK(st.st_mode))
			return;
		vminit_sleep();
	}
}

/* "vportNpM": a virtio-serial port's node name, N and M decimal. */
static int
vminit_port_name(const char *s)
{
	size_t	 n, m;

	if (strncmp(s, "vport", 5) != 0)
		return (0);
	s += 5;
	if ((n = strspn(s, "0123456789")) == 0 || n > 9 || s[n] != 'p')
		return (0);
	s += n + 1;
	if ((m = strspn(s, "0123456789")) == 0 || m > 9 || s[m] != '\0')
		return (0);
	return (1);
}

/*
 * The port's node ("/dev/vportNpM") from the one entry of
 * /sys/class/virtio-ports whose name is fenced.agent; 0 when there is
 * none yet, -1 (fatal) if two ports carry the name.
 */
static int
vminit_find_port(char *node, size_t len)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX], name[64];
	int		 found = 0;

	if ((d = opendir(VMINIT_PORTS)) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL) {
		if (!vminit_port_name(de->d_name))
			continue;
		(void)snprintf(path, sizeof(path), "%s/%s/name", VMINIT_PORTS,
		    de->d_name);
		if (vminit_read(path, name, sizeof(name)) == -1)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, VMINIT_PORT_NAME) != 0)
			continue;
		if (found++)
			vminit_fail("two ports named %s", VMINIT_PORT_NAME);
		(void)snprintf(node, len, "/dev/%.32s", de->d_name);
	}
	(void)closedir(d);
	return (found);
}

static int
vminit_open_port(void)
{
	struct stat	 st;
	char		 node[64];
	int		 fd;

	while (vminit_find_port(node, sizeof(node)) == 0)
		vminit_sleep();
	while (stat(node, &st) == -1 || !S_ISCHR(st.st_mode))
		vminit_sleep();
	/* Not close-on-exec: it is the agent's fd 3. */
	if ((fd = open(node, O_RDWR | O_NOCTTY)) == -1)
		vminit_fail("open %s: %s", node, strerror(errno));
	return (fd);
}

static void
vminit_mount(const char *src, const char *dst, const char *type,
    unsigned long flags, const char *data)
{
	if (mount(src, dst, type, flags, data) == -1)
		vminit_fail("mount %s on %s: %s", type ? type : src, dst,
		    strerror(errno));
}

/* mkdir, then the mode and owner exactly (umask and an old dir aside). */
static void
vminit_mkdir(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	if (mkdir(path, mode) == -1 && errno != EEXIST)
		vminit_fail("mkdir %s: %s", path, strerror(errno));
	if (chown(path, uid, gid) == -1 || chmod(path, mode) == -1)
		vminit_fail("chown %s: %s", path, strerror(errno));
}

/* The read-only root, its tmpfs, the agent's binaries, /proc, no /sys. */
static void
vminit_root(const struct vminit_args *va)
{
	const unsigned long	 fl = MS_NOSUID | MS_NODEV;
	char			 opt[128];

	vminit_mount(VMINIT_DISK, VMINIT_NEWROOT, "squashfs",
	    MS_RDONLY | fl, NULL);

	(void)snprintf(opt, sizeof(opt), "mode=1777,size=%llu", va->va_tmp);
	vminit_mount("tmpfs", VMINIT_NEWROOT "/tmp", "tmpfs", fl, opt);
	(void)snprintf(opt, sizeof(opt), "mode=0755,size=%llu", va->va_tmp);
	vminit_mount("tmpfs", VMINIT_NEWROOT "/var", "tmpfs", fl, opt);
	vminit_mkdir(VMINIT_NEWROOT "/var/tmp", 01777, 0, 0);

	vminit_mount("tmpfs", VMINIT_NEWROOT "/run", "tmpfs", fl,
	    "mode=0755," VMINIT_SMALL_FS);
	vminit_mkdir(VMINIT_NEWROOT "/run/fenced", 0755, 0, 0);
	vminit_mkdir(VMINIT_NEWROOT "/run/fenced/bin", 0755, 0, 0);
	/*
	 * The probe is mode 0111 so that the guest's kernel makes it not
	 * dumpable at its execve (docs/probe.md).  Inside runsc only
	 * gVisor runs it, which must read it to load it and does not do
	 * that (the runsc backend's way, docs/probe.md): readable then.
	 */
	if (va->va_inner && chmod(VMINIT_PROBE, 0555) == -1)
		vminit_fail("chmod %s: %s", VMINIT_PROBE, strerror(errno));
	vminit_mount("/fenced", VMINIT_NEWROOT "/run/fenced/bin", NULL,
	    MS_BIND, NULL);
	vminit_mount(NULL, VMINIT_NEWROOT "/run/fenced/bin", NULL,
	    MS_REMOUNT | MS_BIND | MS_RDONLY | fl, NULL);
	if (va->va_inner) {
		vminit_mkdir(VMINIT_NEWROOT VMINIT_INNER, 0700, 0, 0);
		vminit_mount("tmpfs", VMINIT_NEWROOT VMINIT_INNER, "tmpfs",
		    fl, VMINIT_INNER_FS);
	}
	vminit_mount(NULL, VMINIT_NEWROOT "/run", NULL,
	    MS_REMOUNT | MS_RDONLY | fl, "mode=0755," VMINIT_SMALL_FS);

	/*
	 * hidepid=invisible: the fence's uid sees its own processes only
	 * (the probe counts any other uid's as a leak).
	 */
	vminit_mount("proc", VMINIT_NEWROOT "/proc", "proc",
	    fl | MS_NOEXEC, "hidepid=invisible");
	/*
	 * The image has a /sys folder; an empty read-only tmpfs over it
	 * shows nothing of the guest kernel's sysfs (as a runsc fence's
	 * /sys: empty, not hidden, which the probe would count as there).
	 */
	vminit_mount("tmpfs", VMINIT_NEWROOT "/sys", "tmpfs",
	    fl | MS_NOEXEC | MS_RDONLY, "mode=0555,size=4096");
	vminit_dev(va);
	vminit_home(va);
}

/*
 * A /dev of six nodes and a few links, and the guest's own devpts for
 * terminals (docs/interactive.md): /dev/ptmx its ptmx, anyone may open
 * it, its terminals their opener's, group tty (5 in Debian's base
 * files), at most 32.  No disk, no console.
 */
static void
vminit_dev(const struct vminit_args *va)
{
	static const struct {
		const char	*name;
		unsigned int	 major, minor;
	} nodes[] = {
		{ "null", 1, 3 }, { "zero", 1, 5 }, { "full", 1, 7 },
		{ "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 },
	};
	static const struct {
		const char	*name, *to;
	} links[] = {
		{ "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
		{ "stdout", "/proc/self/fd/1" },
		{ "stderr", "/proc/self/fd/2" },
	};
	char	 path[PATH_MAX], opt[128];
	size_t	 i;

	vminit_mount("tmpfs", VMINIT_NEWROOT "/dev", "tmpfs",
	    MS_NOSUID | MS_NOEXEC, "mode=0755," VMINIT_SMALL_FS);
	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		(void)snprintf(path, sizeof(path), VMINIT_NEWROOT "/dev/%s",
		    nodes[i].name);
		if (mknod(path, S_IFCHR | 0666,
		    makedev(nodes[i].major, nodes[i].minor)) == -1 ||
		    chmod(path, 0666) == -1)
			vminit_fail("mknod %s: %s", path, strerror(errno));
	}
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		(void)snprintf(path, sizeof(path), VMINIT_NEWROOT "/dev/%s",
		    links[i].name);
		if (symlink(links[i].to, path) == -1)
			vminit_fail("symlink %s: %s", path, strerror(errno));
	}
	vminit_mkdir(VMINIT_NEWROOT "/dev/pts", 0755, 0, 0);
	vminit_mount("devpts", VMINIT_NEWROOT "/dev/pts", "devpts",
	    MS_NOSUID | MS_NOEXEC,
	    "newinstance,ptmxmode=0666,mode=0620,gid=5,max=32");
	if (symlink("pts/ptmx", VMINIT_NEWROOT "/dev/ptmx") == -1)
		vminit_fail("symlink /dev/ptmx: %s", strerror(errno));
	vminit_mkdir(VMINIT_NEWROOT "/dev/shm", 01777, 0, 0);
	/* /tmp, /var and /dev/shm each up to fenced.tmp. */
	(void)snprintf(opt, sizeof(opt), "mode=1777,size=%llu", va->va_tmp);
	vminit_mount("tmpfs", VMINIT_NEWROOT "/dev/shm", "tmpfs",
	    MS_NOSUID | MS_NODEV, opt);
	vminit_mount(NULL, VMINIT_NEWROOT "/dev", NULL,
	    MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC,
	    "mode=0755," VMINIT_SMALL_FS);
}

/*
 * /home holds the user's folder only, and the host's home is mounted on
 * it over 9p (the one tag the host exports).  The virtio device may
 * register its tag after the module loaded: ENOENT is retried until the
 * step's deadline.
 */
static void
vminit_home(const struct vminit_args *va)
{
	char	 home[PATH_MAX], opt[128];

	vminit_mount("tmpfs", VMINIT_NEWROOT "/home", "tmpfs",
	    MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755," VMINIT_SMALL_FS);
	(void)snprintf(home, sizeof(home), VMINIT_NEWROOT "/home/%s",
	    va->va_user);
	vminit_mkdir(home, 0700, va->va_uid, va->va_gid);
	vminit_mount(NULL, VMINIT_NEWROOT "/home", NULL,
	    MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "mode=0755," VMINIT_SMALL_FS);

	vminit_begin("home");
	(void)snprintf(opt, sizeof(opt),
	    "trans=virtio,version=9p2000.L,cache=none,msize=%d",
	    VMINIT_9P_MSIZE);
	while (mount("home", home, "9p", MS_NOSUID | MS_NODEV, opt) == -1) {
		if (errno != ENOENT)
			vminit_fail("mount 9p on %s: %s", home,
			    strerror(errno));
		vminit_sleep();
	}
}

/* lo up, as in a native fence's network namespace; the guest has no NIC. */
static void
vminit_loopback(void)
{
	struct ifreq	 ifr;
	int		 s;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		vminit_fail("socket: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", sizeof("lo"));
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1)
		vminit_fail("SIOCGIFFLAGS lo: %s", strerror(errno));
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1)
		vminit_fail("SIOCSIFFLAGS lo: %s", strerror(errno));
	(void)close(s);
}

/* Write all of s to an existing file, or fail the boot naming it. */
static void
vminit_put(const char *path, const char *s)
{
	size_t	 len = strlen(s);
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		vminit_fail("open %s: %s", path, strerror(errno));
	if (write(fd, s, len) != (ssize_t)len)
		vminit_fail("write %s: %s", path, strerror(errno));
	(void)close(fd);
}

/*
 * The fence's limits inside the guest, in cgroups of the guest's
 * cgroup2.  The cgroup filesystem is unmounted again (a cgroup lives on
 * while it has processes, an open file of it stays valid), and the new
 * root never has it: nothing of the fence's uid can reach a limit or
 * leave its cgroup.
 *
 * Without the inner boundary, the fence's pids limit as on the host:
 * pid 1 joins a cgroup with pids.max before it becomes the agent, so
 * the agent and everything it starts count.
 *
 * With it, the fence's processes are the sentry's tasks, bounded by the
 * sandbox's RLIMIT_NPROC (the bundle's), and the guest's cgroup holds
 * runsc's own processes (the sentry, the gofer, the ptrace platform's
 * stubs) to the guest's memory less a reserve for the guest itself,
 * killing them together when they pass it (memory.oom.group): a fence
 * that fills its memory ends at once, as a runsc fence on the host does
 * at its memory limit (with runsc's code where it cannot be evicted,
 * vminit_runsc_copy()), instead of the guest evicting the page cache it
 * runs from until a command's deadline passes.  Its tasks are bounded
 * by the guest kernel's threads-max, which the guest's memory sets: the
 * ptrace platform keeps a stub thread for every sentry thread in every
 * address space, so a fork bomb the sentry stops at 128 children costs
 * the guest some 400 tasks that stay (docs/vm.md).  The runsc child
 * joins by the descriptors kept here (vminit_inner()).
 */
static void
vminit_cgroups(const struct vminit_args *va)
{
	char	 buf[256], num[32];
	uint64_t total, max;

	if (mkdir(VMINIT_CGROUP, 0700) == -1 && errno != EEXIST)
		vminit_fail("mkdir %s: %s", VMINIT_CGROUP, strerror(errno));
	if (mount("cgroup2", VMINIT_CGROUP, "cgroup2", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, NULL) == -1)
		vminit_fail("mount cgroup2: %s", strerror(errno));
	if (vminit_read(VMINIT_CGROUP "/cgroup.controllers", buf,
	    sizeof(buf)) == -1)
		vminit_fail("read cgroup.controllers: %s", strerror(errno));
	if (!va->va_inner) {
		if (strstr(buf, "pids") == NULL)
			vminit_fail("the guest's kernel has no pids controller");
		vminit_put(VMINIT_CGROUP "/cgroup.subtree_control", "+pids");
		if (mkdir(VMINIT_CGROUP "/fence", 0700) == -1)
			vminit_fail("mkdir %s/fence: %s", VMINIT_CGROUP,
			    strerror(errno));
		(void)snprintf(num, sizeof(num), "%llu", va->va_pids);
		vminit_put(VMINIT_CGROUP "/fence/pids.max", num);
		vminit_put(VMINIT_CGROUP "/fence/cgroup.procs", "1");
	} else {
		if (strstr(buf, "memory") == NULL)
			vminit_fail("the guest's kernel has no memory "
			    "controller");
		if ((total = vminit_memtotal()) == 0)
			vminit_fail("no MemTotal in /proc/meminfo");
		if (total <= VMINIT_RESERVE * 2)
			vminit_fail("%llu KiB of memory is too little for the "
			    "inner boundary", (unsigned long long)total / 1024);
		max = total - (total / 8 > VMINIT_RESERVE ? total / 8 :
		    VMINIT_RESERVE);
		vminit_put(VMINIT_CGROUP "/cgroup.subtree_control", "+memory");
		if (mkdir(VMINIT_CGROUP "/sandbox", 0700) == -1)
			vminit_fail("mkdir %s/sandbox: %s", VMINIT_CGROUP,
			    strerror(errno));
		(void)snprintf(num, sizeof(num), "%llu",
		    (unsigned long long)max);
		vminit_put(VMINIT_CGROUP "/sandbox/memory.max", num);
		vminit_put(VMINIT_CGROUP "/sandbox/memory.oom.group", "1");
		if ((vminit_sandbox_procs = open(VMINIT_CGROUP
		    "/sandbox/cgroup.procs", O_WRONLY | O_CLOEXEC)) == -1 ||
		    (vminit_sandbox_events = open(VMINIT_CGROUP
		    "/sandbox/memory.events", O_RDONLY | O_CLOEXEC)) == -1)
			vminit_fail("open %s/sandbox: %s", VMINIT_CGROUP,
			    strerror(errno));
	}
	if (umount2(VMINIT_CGROUP, MNT_DETACH) == -1)
		vminit_fail("umount %s: %s", VMINIT_CGROUP, strerror(errno));
}

/* The guest's memory in bytes, from /proc/meminfo; 0 if unknown. */
static uint64_t
vminit_memtotal(void)
{
	char			 buf[512], *p;
	unsigned long long	 kib;

	if (vminit_read("/proc/meminfo", buf, sizeof(buf)) == -1 ||
	    (p = strstr(buf, "MemTotal:")) == NULL)
		return (0);
	kib = strtoull(p + strlen("MemTotal:"), NULL, 10);
	if (kib == 0 || kib > UINT64_MAX / 1024)
		return (0);
	return ((uint64_t)kib * 1024);
}

/* No module loads once the guest's own are in, not even by root. */
static void
vminit_lockdown(void)
{
	int	 fd;

	if ((fd = open("/proc/sys/kernel/modules_disabled", O_WRONLY |
	    O_CLOEXEC)) == -1)
		vminit_fail("modules_disabled: %s", strerror(errno));
	if (write(fd, "1\n", 2) != 2)
		vminit_fail("modules_disabled: %s", strerror(errno));
	(void)close(fd);
}

/*
 * Off the initramfs: its own proc, sysfs and devtmpfs go (what stays
 * open stays valid), the new root moves over / and becomes the root.
 */
static void
vminit_switch(void)
{
	if (umount2("/sys", MNT_DETACH) == -1 ||
	    umount2("/proc", MNT_DETACH) == -1 ||
	    umount2("/dev", MNT_DETACH) == -1)
		vminit_fail("umount: %s", strerror(errno));
	if (chdir(VMINIT_NEWROOT) == -1)
		vminit_fail("chdir: %s", strerror(errno));
	if (mount(".", "/", NULL, MS_MOVE, NULL) == -1)
		vminit_fail("move root: %s", strerror(errno));
	if (chroot(".") == -1 || chdir("/") == -1)
		vminit_fail("chroot: %s", strerror(errno));
}

/*
 * To the fence's uid and gid with no capability: the bounding set and
 * the ambient set emptied, one group, real, effective and saved ids all
 * changed (which clears permitted and effective), no_new_privs; then
 * checked rather than trusted.
 */
static void
vminit_drop(const struct vminit_args *va)
{
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[_LINUX_CAPABILITY_U32S_3];
	uid_t				 r, e, s;
	gid_t				 rg, eg, sg;
	int				 cap, i;

	for (cap = 0; cap <= 63; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
			if (errno == EINVAL)
				break;
			vminit_fail("PR_CAPBSET_DROP %d: %s", cap,
			    strerror(errno));
		}
	}
	if (cap == 0 || prctl(PR_CAPBSET_READ, 0, 0, 0, 0) != 0)
		vminit_fail("bounding set not empty");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		vminit_fail("ambient: %s", strerror(errno));
	if (setgroups(1, &va->va_gid) == -1)
		vminit_fail("setgroups: %s", strerror(errno));
	if (setresgid(va->va_gid, va->va_gid, va->va_gid) == -1)
		vminit_fail("setresgid: %s", strerror(errno));
	if (setresuid(va->va_uid, va->va_uid, va->va_uid) == -1)
		vminit_fail("setresuid: %s", strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		vminit_fail("no_new_privs: %s", strerror(errno));

	if (getresuid(&r, &e, &s) == -1 || r != va->va_uid ||
	    e != va->va_uid || s != va->va_uid)
		vminit_fail("uid not dropped");
	if (getresgid(&rg, &eg, &sg) == -1 || rg != va->va_gid ||
	    eg != va->va_gid || sg != va->va_gid)
		vminit_fail("gid not dropped");
	if (setuid(0) != -1 || setgid(0) != -1)
		vminit_fail("root regained");
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) == -1)
		vminit_fail("capget: %s", strerror(errno));
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (data[i].effective || data[i].permitted ||
		    data[i].inheritable)
			vminit_fail("capabilities left");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		vminit_fail("no_new_privs not set");
}

/* fds 0-2 /dev/null, the port on 3, nothing else; the fixed environment. */
static void
vminit_exec(const struct vminit_args *va, int port)
{
	char	 home[16 + VMINIT_USER_MAX], user[16 + VMINIT_USER_MAX];
	char	 logname[16 + VMINIT_USER_MAX], fence[32 + VMINIT_HOST_MAX];
	char	 line[128];
	char	*argv[] = { "fence-agent", "-c", NULL };
	char	*envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", home, user,
		    logname, "TMPDIR=/tmp", "LANG=C.UTF-8", fence, NULL };
	int	 fd, nul, n;

	(void)snprintf(home, sizeof(home), "HOME=/home/%s", va->va_user);
	(void)snprintf(user, sizeof(user), "USER=%s", va->va_user);
	(void)snprintf(logname, sizeof(logname), "LOGNAME=%s", va->va_user);
	(void)snprintf(fence, sizeof(fence), "VOICEBOX_FENCE=%s",
	    va->va_host);

	if (port != VMINIT_CHANNEL_FD) {
		if (dup2(port, VMINIT_CHANNEL_FD) == -1)
			vminit_fail("dup2: %s", strerror(errno));
		(void)close(port);
	}
	/*
	 * Above 3 first: dup2 onto its own number would keep the
	 * close-on-exec flag.
	 */
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    (nul = fcntl(fd, F_DUPFD_CLOEXEC, VMINIT_CHANNEL_FD + 1)) == -1)
		vminit_fail("open /dev/null: %s", strerror(errno));
	if (fd > 2)
		(void)close(fd);
	if (dup2(nul, 0) == -1 || dup2(nul, 1) == -1 || dup2(nul, 2) == -1)
		vminit_fail("dup2: %s", strerror(errno));
	(void)close(nul);
	/* The console (close-on-exec) stays for a failed execve's line. */
	for (fd = VMINIT_CHANNEL_FD + 1; fd < vminit_console; fd++)
		(void)close(fd);
	closefrom(vminit_console + 1);
	if (chdir(home + 5) == -1)
		vminit_fail("chdir %s: %s", home + 5, strerror(errno));

	/* The host's log learns when the agent started (guest uptime). */
	n = snprintf(line, sizeof(line),
	    "fenced-vminit: exec fence-agent at %.3f s\n", vminit_uptime());
	if (n > 0 && (size_t)n < sizeof(line))
		vminit_say(line, n);
	alarm(0);
	execve(VMINIT_AGENT, argv, envp);
	vminit_fail("execve %s: %s", VMINIT_AGENT, strerror(errno));
}

/*
 * The last line of what runsc wrote on its stderr (the n bytes of all,
 * its end), printable, into buf; "" if there is none.
 */
static void
vminit_tail(const char *all, size_t n, char *buf, size_t len)
{
	size_t	 i, start;

	buf[0] = '\0';
	while (n > 0 && (all[n - 1] == '\n' || all[n - 1] == ' '))
		n--;
	for (start = n; start > 0 && all[start - 1] != '\n'; start--)
		;
	for (i = 0; start + i < n && i < len - 1; i++)
		buf[i] = all[start + i] >= ' ' && all[start + i] <= '~' ?
		    all[start + i] : ' ';
	buf[i] = '\0';
}

/* One way of the relay: what was read from p_r and not yet written. */
struct vminit_pipe {
	int	 p_r, p_w;
	char	 p_buf[65536];
	size_t	 p_len;
	int	 p_eof;		/* p_r ended or p_w failed */
};

static void
vminit_pipe_poll(const struct vminit_pipe *p, struct pollfd *r,
    struct pollfd *w)
{
	r->fd = p->p_eof || p->p_len == sizeof(p->p_buf) ? -1 : p->p_r;
	r->events = POLLIN;
	w->fd = !p->p_eof && p->p_len > 0 ? p->p_w : -1;
	w->events = POLLOUT;
}

static void
vminit_pipe_move(struct vminit_pipe *p, const struct pollfd *r,
    const struct pollfd *w)
{
	ssize_t	 n;

	if (r->fd != -1 && r->revents != 0) {
		n = read(p->p_r, p->p_buf + p->p_len,
		    sizeof(p->p_buf) - p->p_len);
		if (n > 0)
			p->p_len += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			p->p_eof = 1;
	}
	if (w->fd != -1 && w->revents != 0) {
		n = write(p->p_w, p->p_buf, p->p_len);
		if (n > 0) {
			memmove(p->p_buf, p->p_buf + n, p->p_len - (size_t)n);
			p->p_len -= (size_t)n;
		} else if (n == -1 && errno != EAGAIN && errno != EINTR)
			p->p_eof = 1;
	}
}

/*
 * pid 1 while runsc (pid) runs: the agent's channel, a socket (sock) in
 * the sandbox, relayed to and from the virtio port; runsc's stderr
 * (errs) kept for its last line (tail); every orphan of the guest
 * reaped.  The sandbox holds sockets only: gVisor lets a process of the
 * fence's uid open the agent's descriptors through /proc/1/fd, and a
 * character device or a file opens there, a socket never (docs/vm.md,
 * "The inner boundary").  When the host ends the channel, the agent
 * reads its end; what the agent writes after the host went is dropped.
 */
static void
vminit_relay(pid_t pid, int port, int sock, int errs, int *st, char *tail,
    size_t taillen)
{
	static struct vminit_pipe in, out;
	static char	 err[4096];
	struct pollfd	 pfd[5];
	size_t		 elen = 0;
	ssize_t		 n;
	pid_t		 w;
	int		 shut = 0;

	in.p_r = out.p_w = port;
	in.p_w = out.p_r = sock;
	if (fcntl(port, F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(sock, F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(errs, F_SETFL, O_NONBLOCK) == -1)
		vminit_fail("fcntl: %s", strerror(errno));
	for (;;) {
		while ((w = waitpid(-1, st, WNOHANG)) > 0)
			if (w == pid)
				goto done;
		if (w == -1 && errno != EINTR)
			vminit_fail("waitpid: %s", strerror(errno));
		if (in.p_eof && !shut) {
			(void)shutdown(sock, SHUT_WR);
			shut = 1;
		}
		vminit_pipe_poll(&in, &pfd[0], &pfd[1]);
		vminit_pipe_poll(&out, &pfd[2], &pfd[3]);
		pfd[4].fd = errs;
		pfd[4].events = POLLIN;
		if (poll(pfd, 5, 200) <= 0)
			continue;	/* a child to reap is looked for anyway */
		vminit_pipe_move(&in, &pfd[0], &pfd[1]);
		vminit_pipe_move(&out, &pfd[2], &pfd[3]);
		if (errs == -1 || pfd[4].revents == 0)
			continue;
		if (elen == sizeof(err)) {	/* the end is what counts */
			memmove(err, err + sizeof(err) / 2, sizeof(err) / 2);
			elen = sizeof(err) / 2;
		}
		if ((n = read(errs, err + elen, sizeof(err) - elen)) > 0)
			elen += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			errs = -1;
	}
done:
	while (errs != -1 && elen < sizeof(err) &&
	    (n = read(errs, err + elen, sizeof(err) - elen)) > 0)
		elen += (size_t)n;
	vminit_tail(err, elen, tail, taillen);
}

/*
 * runsc runs from a copy in the inner tmpfs, made by the child that
 * became its first process, in the sandbox's cgroup: a tmpfs page is
 * never evicted in a guest without swap, so the sentry's code stays in
 * memory when the fence fills its own, and the cgroup's OOM kill comes
 * at once.  Run from the root's squashfs, the sentry's code was what
 * the cgroup's reclaim found to evict, read back at the next fault and
 * evicted again, for longer than a command's deadline (docs/vm.md).
 * The copy is charged to the sandbox, as a runsc fence's own memory is
 * to its cgroup on the host.  Says why on stderr if it cannot.
 */
static int
vminit_runsc_copy(void)
{
	static char	 buf[65536];
	ssize_t		 n, w, off;
	int		 in, out;

	if ((in = open(VMINIT_RUNSC, O_RDONLY | O_CLOEXEC)) == -1) {
		dprintf(2, "open %s: %s\n", VMINIT_RUNSC, strerror(errno));
		return (-1);
	}
	if ((out = open(VMINIT_INNER_RUNSC, O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0555)) == -1) {
		dprintf(2, "create %s: %s\n", VMINIT_INNER_RUNSC,
		    strerror(errno));
		(void)close(in);
		return (-1);
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		for (off = 0; off < n; off += w)
			if ((w = write(out, buf + off, n - off)) <= 0) {
				n = -1;
				break;
			}
		if (n == -1)
			break;
	}
	if (n == -1 || close(out) == -1) {
		dprintf(2, "copy %s: %s\n", VMINIT_RUNSC, strerror(errno));
		(void)close(in);
		return (-1);
	}
	(void)close(in);
	return (0);
}

/*
 * Why the sandbox ended, in place of runsc's last line on stderr (why)
 * where something says more: the guest's OOM killer ended it at the
 * fence's memory, or the sentry's Go runtime panicked (runsc's panic
 * log: its first panic or fatal error line).
 */
static void
vminit_inner_why(char *why, size_t len)
{
	static char	 buf[16384];	/* the panic line is near the top */
	char		*p;
	ssize_t		 n;

	if (vminit_sandbox_events != -1 &&
	    (n = pread(vminit_sandbox_events, buf, sizeof(buf) - 1, 0)) > 0) {
		buf[n] = '\0';
		if ((p = strstr(buf, "oom_kill ")) != NULL &&
		    strtoull(p + strlen("oom_kill "), NULL, 10) > 0) {
			(void)snprintf(why, len, "out of the fence's memory: "
			    "the guest's OOM killer ended the sandbox");
			return;
		}
	}
	if (vminit_read(VMINIT_INNER "/panic.log", buf, sizeof(buf)) > 0)
		(void)runsc_panic_line(buf, why, len);
}

/*
 * The inner boundary: the agent as the init of a runsc sandbox, its
 * bundle made by the host's runsc backend's code with the fence's
 * identity and limits (uid and gid, no capability, no_new_privs, the
 * read-only root of /usr and /etc, the home read-write at /home/<user>,
 * a private /tmp, no network, RLIMIT_NPROC at the pids limit); the
 * guest's memory is the fence's memory limit.  runsc runs as the
 * guest's root, its stdin and stdout a socket pid 1 relays to the
 * agent's port, its stderr a socket whose last line says why it failed
 * (vminit_relay()).  When runsc ends, pid 1 powers off.
 */
static void
vminit_inner(const struct vminit_args *va, int port)
{
	struct runsc_bundle_spec spec;
	char		 home[PATH_MAX], err[256], id[RUNSC_ID_SIZE];
	char		 idarg[RUNSC_ID_SIZE], line[160];
	char		*argv[] = { "runsc", "--root=" VMINIT_INNER "/state",
			    "--network=none", "--oci-seccomp",
			    "--platform=ptrace",
			    "--log=" VMINIT_INNER "/runsc.log", "--ignore-cgroups",
			    "--panic-log=" VMINIT_INNER "/panic.log", "run",
			    "--bundle=" VMINIT_INNER "/bundle", idarg, NULL };
	char		*envp[] = { "PATH=/usr/bin:/bin", NULL };
	struct rlimit	 nproc = { RLIM_INFINITY, RLIM_INFINITY };
	pid_t		 pid;
	int		 st, n, ch[2], es[2];

	memset(&spec, 0, sizeof(spec));
	(void)snprintf(spec.rb_key, sizeof(spec.rb_key), "%s", va->va_host);
	spec.rb_uid = va->va_uid;
	spec.rb_gid = va->va_gid;
	(void)snprintf(spec.rb_user, sizeof(spec.rb_user), "%s", va->va_user);
	(void)snprintf(home, sizeof(home), "/home/%s", va->va_user);
	spec.rb_home = home;
	spec.rb_bindir = FENCE_BIN_DIR;
	spec.rb_init = "fence-agent";
	spec.rb_cgroups_path = NULL;
	spec.rb_limits.fl_pids = (uint32_t)va->va_pids;
	if (runsc_bundle_write(VMINIT_INNER "/bundle", &spec, NULL, err,
	    sizeof(err)) == -1)
		vminit_fail("%s", err);
	if (mkdir(VMINIT_INNER "/state", 0700) == -1)
		vminit_fail("mkdir %s/state: %s", VMINIT_INNER,
		    strerror(errno));
	runsc_id_new(id);
	(void)snprintf(idarg, sizeof(idarg), "%s", id);

	vminit_step = "inner runsc";
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ch) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, es) == -1)
		vminit_fail("socketpair: %s", strerror(errno));
	if ((pid = fork()) == -1)
		vminit_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		if (dup2(ch[1], 0) == -1 || dup2(ch[1], 1) == -1 ||
		    dup2(es[1], 2) == -1)
			_exit(127);
		/*
		 * runsc's processes count against no per-uid limit: the
		 * sentry runs as nobody, and pid 1's RLIMIT_NPROC (half
		 * the guest's threads-max) would end it at a fork of a
		 * stub thread long before its memory ran out.
		 */
		if (setrlimit(RLIMIT_NPROC, &nproc) == -1) {
			dprintf(2, "setrlimit RLIMIT_NPROC: %s\n",
			    strerror(errno));
			_exit(126);
		}
		/* Into the sandbox's cgroup: its descriptor is closed next. */
		if (write(vminit_sandbox_procs, "0", 1) != 1) {
			dprintf(2, "join the sandbox's cgroup: %s\n",
			    strerror(errno));
			_exit(126);
		}
		if (vminit_runsc_copy() == -1)
			_exit(126);
		closefrom(3);
		if (chdir("/") == -1)
			_exit(127);
		alarm(0);
		execve(VMINIT_INNER_RUNSC, argv, envp);
		_exit(127);
	}
	(void)close(ch[1]);
	(void)close(es[1]);
	alarm(0);
	n = snprintf(line, sizeof(line), "fenced-vminit: inner runsc: "
	    "sandbox starting at %.3f s\n", vminit_uptime());
	if (n > 0 && (size_t)n < sizeof(line))
		vminit_say(line, n);
	vminit_relay(pid, port, ch[0], es[0], &st, err, sizeof(err));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		n = snprintf(line, sizeof(line), "fenced-vminit: inner runsc: "
		    "sandbox ended at %.3f s\n", vminit_uptime());
		if (n > 0 && (size_t)n < sizeof(line))
			vminit_say(line, n);
		sync();
		(void)reboot(RB_POWER_OFF);
		_exit(0);
	}
	vminit_inner_why(err, sizeof(err));
	if (WIFEXITED(st))
		vminit_fail("runsc exited %d%s%s", WEXITSTATUS(st),
		    err[0] != '\0' ? ": " : "", err);
	vminit_fail("runsc killed by signal %d%s%s", WTERMSIG(st),
	    err[0] != '\0' ? ": " : "", err);
}

int
main(int argc, char *argv[])
{
	struct vminit_args	 va;
	int			 port;

	if (getpid() != 1)
		vminit_fail("not pid 1");
	vminit_begin("early");
	vminit_early();
	vminit_begin("cmdline");
	vminit_cmdline(&va);
	vminit_begin("modules");
	vminit_modules();
	vminit_begin("disk");
	vminit_wait_disk();
	vminit_begin("port");
	port = vminit_open_port();
	if (va.va_try) {
		/* Disk and port found: what a boot needs of the machine. */
		vminit_say(VMINIT_TRY_MARK "\n", sizeof(VMINIT_TRY_MARK));
		(void)reboot(RB_POWER_OFF);
		_exit(1);
	}
	vminit_begin("root");
	vminit_root(&va);
	vminit_begin("hostname");
	if (sethostname(va.va_host, strlen(va.va_host)) == -1)
		vminit_fail("sethostname: %s", strerror(errno));
	vminit_begin("loopback");
	vminit_loopback();
	vminit_begin("cgroups");
	vminit_cgroups(&va);
	vminit_begin("lockdown");
	vminit_lockdown();
	vminit_begin("switch");
	vminit_switch();
	if (va.va_inner) {
		vminit_begin("inner bundle");
		vminit_inner(&va, port);
	}
	vminit_begin("drop");
	vminit_drop(&va);
	vminit_begin("exec");
	vminit_exec(&va, port);
	return (1);
}
