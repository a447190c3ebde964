/*
 * The vm backend: a fence is a QEMU virtual machine of its own
 * (docs/vm.md).  QEMU runs as pid 1 of a native L2 fence of the fence's
 * uid, so what the host reads of f_pid (the jail's pid 1, QEMU) is a
 * native fence's reading; the guest, booted from the checked kernel,
 * initramfs and root image, runs the agent on the virtio-serial port
 * whose host end is the channel the fencer holds.
 *
 * Acceleration (docs/vm.md): with `vm accel auto' or `kvm' and a /dev/kvm
 * that answers, the fencer tries KVM once at start: one guest, booted
 * under KVM in a jail as a fence's is (a uid held for it, no home), whose
 * vminit says on the console that it reached its init and powers off
 * (fenced.try=kvm).  A try that says nothing within VM_TRY_SEC is killed
 * (a nested /dev/kvm such as this project's hosts have hangs a stock
 * guest without a word).  Until the try has answered, auto boots under
 * TCG and kvm boots nothing; after it, auto is KVM if the try reached its
 * init and TCG otherwise, and kvm is KVM or unavailable, saying why.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/kvm.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "fencer.h"
#include "backend.h"
#include "fence.h"
#include "native.h"
#include "vm.h"
#include "lockdown.h"
#include "vm_files.h"	/* $(BUILD)/gen, by images/vm-files */

#define VM_AGENT_WAIT_SEC	BOOT_AGENT_WAIT_MAX	/* TCG, under load */
#define VM_TRY_SEC		20	/* KVM reaches init in about 1 s */
#define VM_TRY_KEY		"kvm-try"	/* its hostname, its cgroup's */
#define VM_TRY_CGROUP		"4294967295." VM_TRY_KEY	/* no owner
						   has uid -1 */

struct vm_fence {
	struct fence_proc vf_proc;	/* QEMU's jail */
	int		 vf_console;	/* -1: closed */
	struct event	*vf_console_ev;
	struct vm_console vf_cons;
};

enum vm_try_state { VM_TRY_NONE, VM_TRY_RUNNING, VM_TRY_DONE };

static const char *const vm_file_names[VM_FILE_MAX] = {
	"vm kernel", "vm initrd", "vm image"
};

/*
 * The boot files built into this fenced (docs/vm.md): their names in the
 * folder vm/ of the libexec folder and the SHA-256 images/vm-files
 * compiled in, "" each where the build had no images.
 */
static const char *const vm_file_base[VM_FILE_MAX] = {
	"vmlinuz", "fence-initrd.cpio", "fence-root.squashfs"
};
static const char *const vm_builtin_sha256[VM_FILE_MAX] = {
	VM_BUILTIN_KERNEL, VM_BUILTIN_INITRD, VM_BUILTIN_IMAGE
};
#define VM_BUILD_FIX	"make vm-images, then make (or make install); or " \
			"name other files in fenced.conf (docs/vm.md)"

static struct {
	char		 v_err[BACKEND_ERR_MAX];	/* "": usable */
	int		 v_accel;		/* VM_ACCEL_KVM or _TCG */
	enum vm_try_state v_try;
	struct fence	 v_try_f;	/* the try's jail, a fence of our own */
	struct vm_fence	 v_try_vf;
	int		 v_try_jail;	/* its jail was made */
	int		 v_try_chan;	/* the agent's end: nobody answers */
	struct event	 v_try_timer;
	struct timespec	 v_try_t0;
	char		 v_tcg_why[256];	/* why not KVM, for the doctor */
	int		 v_builtin;	/* the boot files: 1 built in, 0
					   fenced.conf's */
	int		 v_unbuilt;	/* built in, but none were built */
	int		 v_off;		/* vm off at the start: nothing
					   looked at */
	char		 v_dir[PATH_MAX];	/* built in: their folder */
	char		 v_path[VM_FILE_MAX][PATH_MAX];
	char		 v_sha256[VM_FILE_MAX][VM_SHA256_HEX];
} vm = { .v_try_chan = -1 };

static void	vm_try_begin(void);
static void	vm_try_end(int, const char *);
static void	vm_kvm_dropped(void);

/* Whether /dev/kvm is there and answers as KVM does. */
static int
vm_kvm_present(char *why, size_t len)
{
	int	 fd, v;

	if ((fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) == -1) {
		snprintf(why, len, "/dev/kvm: %s", strerror(errno));
		return (0);
	}
	v = ioctl(fd, KVM_GET_API_VERSION, 0);
	(void)close(fd);
	if (v != KVM_API_VERSION) {
		snprintf(why, len, "/dev/kvm answers API version %d", v);
		return (0);
	}
	return (1);
}

/*
 * Which boot files: fenced.conf's three (the parser takes all three or
 * none), else those built into this fenced, in the folder vm/ of its
 * libexec folder, with the hashes compiled in.
 */
static void
vm_files_choose(void)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	int		 i;

	vm.v_builtin = 1;
	for (i = 0; i < VM_FILE_MAX; i++)
		if (c->c_vm_path[i][0] != '\0')
			vm.v_builtin = 0;
	vm.v_unbuilt = 0;
	(void)snprintf(vm.v_dir, sizeof(vm.v_dir), "%s/vm",
	    fencer_bindir_path());
	for (i = 0; i < VM_FILE_MAX; i++) {
		if (!vm.v_builtin) {
			(void)strlcpy(vm.v_path[i], c->c_vm_path[i],
			    sizeof(vm.v_path[i]));
			(void)strlcpy(vm.v_sha256[i], c->c_vm_sha256[i],
			    sizeof(vm.v_sha256[i]));
			continue;
		}
		if ((size_t)snprintf(vm.v_path[i], sizeof(vm.v_path[i]),
		    "%s/%s", vm.v_dir, vm_file_base[i]) >= sizeof(vm.v_path[i]))
			vm.v_path[i][0] = '\0';	/* refused: too long */
		(void)strlcpy(vm.v_sha256[i], vm_builtin_sha256[i],
		    sizeof(vm.v_sha256[i]));
#ifdef FENCED_TEST_HOOKS
		/* Test builds only: as if built without the images. */
		if (getenv("FENCED_TEST_VM_UNBUILT") != NULL)
			vm.v_sha256[i][0] = '\0';
#endif
		if (vm.v_sha256[i][0] == '\0')
			vm.v_unbuilt = 1;
	}
}

/*
 * Boot file i, opened and checked (vm_file_verify()), or -1 and why,
 * naming the file, where its path and hash came from, and the fix.
 */
static int
vm_file_open(int i, int *fd, char *err, size_t errlen)
{
	char		 why[BACKEND_ERR_MAX / 2];
	struct stat	 st;

	*fd = -1;
	if (vm.v_builtin && vm.v_unbuilt) {
		snprintf(err, errlen, "vm boot files not built into this "
		    "fenced: %s", VM_BUILD_FIX);
		return (-1);
	}
	if (vm.v_path[i][0] == '\0') {
		if (vm.v_builtin)
			snprintf(err, errlen, "%s: the folder %s is too long "
			    "a path", vm_file_names[i], vm.v_dir);
		else
			snprintf(err, errlen, "no %s in fenced.conf: all "
			    "three of vm kernel, initrd and image, or none",
			    vm_file_names[i]);
		return (-1);
	}
	if (vm.v_builtin && lstat(vm.v_path[i], &st) == -1 &&
	    errno == ENOENT) {
		snprintf(err, errlen, "%s %s missing: %s; a packaged "
		    "fenced: install the fenced-vm package of its version",
		    vm_file_names[i], vm.v_path[i], VM_BUILD_FIX);
		return (-1);
	}
	if (vm_file_verify(vm.v_path[i], vm.v_sha256[i], fd, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "%s (%s): %s%s%s", vm_file_names[i],
		    vm.v_builtin ? "built-in" : "fenced.conf", why,
		    vm.v_builtin ? ": " : "", vm.v_builtin ? VM_BUILD_FIX : "");
		return (-1);
	}
	return (0);
}

/*
 * Once, at start: QEMU and the three boot files, checked as every launch
 * checks them, and the accelerator.
 */
static void
vm_start(void)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	char		 why[128];
	int		 i, fd;

	vm.v_err[0] = '\0';
	if (c->c_vm_off) {
		vm.v_off = 1;
		strlcpy(vm.v_err, "vm off in fenced.conf", sizeof(vm.v_err));
		log_info("vm: off (vm off in fenced.conf): no file checked, "
		    "no KVM try");
		return;
	}
	vm_files_choose();
	if (vm.v_builtin)
		log_info("vm: boot files built in, from %s", vm.v_dir);
	else
		log_info("vm: boot files of fenced.conf");
	if (access(VM_QEMU, X_OK) == -1) {
		snprintf(vm.v_err, sizeof(vm.v_err), "%s: %s (install "
		    "Debian's qemu-system-x86)", VM_QEMU, strerror(errno));
		log_info("vm: unavailable: %s", vm.v_err);
		return;
	}
	for (i = 0; i < VM_FILE_MAX; i++) {
		if (vm_file_open(i, &fd, vm.v_err, sizeof(vm.v_err)) == -1) {
			log_info("vm: unavailable: %s", vm.v_err);
			return;
		}
		(void)close(fd);
	}
	vm.v_accel = VM_ACCEL_TCG;
	switch (c->c_vm_accel) {
	case VM_ACCEL_TCG:
		strlcpy(vm.v_tcg_why, "vm accel tcg in fenced.conf",
		    sizeof(vm.v_tcg_why));
		log_info("vm: usable, tcg (vm accel tcg)");
		return;
	case VM_ACCEL_KVM:
		if (!vm_kvm_present(why, sizeof(why))) {
			snprintf(vm.v_err, sizeof(vm.v_err), "vm accel kvm: "
			    "%s", why);
			return;
		}
		break;
	default:
		if (!vm_kvm_present(why, sizeof(why))) {
			strlcpy(vm.v_tcg_why, why, sizeof(vm.v_tcg_why));
			log_info("vm: usable, tcg (vm accel auto: %s)", why);
			return;
		}
		break;
	}
	vm_try_begin();
}

/*
 * Why no vm fence can boot: what the start found, KVM still being tried
 * with `vm accel kvm', or no cgroups (QEMU runs in a native L2 jail).
 */
static const char *
vm_unavailable(void)
{
	static char	 busy[128];
	const char	*cg;

	/* A reload reads no file and tries nothing again (vm_start()). */
	if (fencer_self.ps_conf.c_vm_off)
		return ("vm off in fenced.conf");
	if (vm.v_off)
		return ("vm off when fenced started: vm on takes a restart");
	if (vm.v_err[0] != '\0')
		return (vm.v_err);
	if ((cg = fencer_cgroups_refusal()) != NULL)
		return (cg);
	if (vm.v_try == VM_TRY_RUNNING &&
	    fencer_self.ps_conf.c_vm_accel == VM_ACCEL_KVM) {
		snprintf(busy, sizeof(busy), "vm accel kvm: KVM is being "
		    "tried (at most %d s after the daemon started)",
		    VM_TRY_SEC);
		return (busy);
	}
	return (NULL);
}

/*
 * The doctor's detail (QEMU, each boot file with the hash it must have,
 * the accelerator) and its row of KVM: usable, or TCG alone and why.
 */
static void
vm_doctor(char *detail, size_t len)
{
	size_t		 n;
	int		 i;

	if (vm.v_off || fencer_self.ps_conf.c_vm_off) {
		(void)snprintf(detail, len, "vm off in fenced.conf%s: no "
		    "boot file checked, no KVM try", vm.v_off ? "" :
		    " (since a reload)");
		return;
	}
	vm_files_choose();
	if (vm.v_builtin)
		n = (size_t)snprintf(detail, len, "qemu %s; boot files "
		    "built-in, in %s", VM_QEMU, vm.v_dir);
	else
		n = (size_t)snprintf(detail, len, "qemu %s; boot files of "
		    "fenced.conf", VM_QEMU);
	for (i = 0; i < VM_FILE_MAX && n < len; i++)
		n += (size_t)snprintf(detail + n, len - n, "; %s %s sha256 %s",
		    vm_file_names[i], vm.v_path[i][0] != '\0' ?
		    vm.v_path[i] : "(none)", vm.v_sha256[i][0] != '\0' ?
		    vm.v_sha256[i] : vm.v_builtin ? "(not built)" : "(none)");
	if (n < len)
		(void)snprintf(detail + n, len - n, "; accel %s",
		    vm.v_err[0] != '\0' ? "none" : vm.v_try == VM_TRY_RUNNING ?
		    "being tried" : vm.v_accel == VM_ACCEL_KVM ? "kvm" : "tcg");
	if (vm.v_err[0] != '\0')
		return;
	if (vm.v_try == VM_TRY_RUNNING)
		fencer_doctor_row(CHECK_HOST, "kvm", CHECK_WARN, "KVM is being "
		    "tried: ask again in a few seconds", NULL, NULL);
	else if (vm.v_accel == VM_ACCEL_KVM)
		fencer_doctor_row(CHECK_HOST, "kvm", CHECK_OK, "vm fences run "
		    "under KVM", NULL, NULL);
	else
		fencer_doctor_row(CHECK_HOST, "kvm", CHECK_WARN, vm.v_tcg_why,
		    "vm fences run under TCG, many times slower: a host whose "
		    "/dev/kvm boots a guest (nested virtualization enabled "
		    "where fenced runs in a VM), and vm accel auto or kvm",
		    NULL);
}

/* The guest's console: each line to the debug log, the last one kept. */
static void
vm_console_read(int fd, short event, void *arg)
{
	struct vm_fence	*vf = arg;
	char		 buf[1024];
	ssize_t		 n;

	if ((n = read(fd, buf, sizeof(buf))) <= 0) {
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		event_del(vf->vf_console_ev);
		return;
	}
	vm_console_feed(&vf->vf_cons, buf, (size_t)n);
	if (vf == &vm.v_try_vf && vf->vf_cons.vc_try_ok &&
	    vm.v_try == VM_TRY_RUNNING)
		vm_try_end(1, NULL);
}

static void
vm_console_close(struct vm_fence *vf)
{
	if (vf->vf_console_ev != NULL) {
		event_free(vf->vf_console_ev);
		vf->vf_console_ev = NULL;
	}
	if (vf->vf_console != -1) {
		(void)close(vf->vf_console);
		vf->vf_console = -1;
	}
}

/* The guest's shape from the fence's limits (docs/vm.md). */
static int
vm_launch_of(const struct fence *f, struct vm_launch *l, char *err,
    size_t errlen)
{
	const struct fence_limits *lim = &f->f_info.f_limits;

	memset(l, 0, sizeof(*l));
	l->vl_accel = vm.v_accel;	/* the try sets its own */
	l->vl_mem = lim->fl_memory;
	l->vl_cpus = (lim->fl_cpu_milli + 999) / 1000;
	if (l->vl_cpus == 0)
		l->vl_cpus = 1;
	if (l->vl_cpus > VM_CPUS_MAX)
		l->vl_cpus = VM_CPUS_MAX;
	l->vl_uid = f->f_info.f_uid;
	l->vl_gid = f->f_gid;
	l->vl_user = f->f_user;
	l->vl_key = f->f_info.f_key;
	l->vl_tmp = lim->fl_memory / 4;
	l->vl_pids = lim->fl_pids;
	l->vl_inner = f->f_info.f_inner;
#ifdef FENCED_TEST_HOOKS
	/*
	 * Test builds only: a guest kernel setting, e.g. one that keeps
	 * runsc from starting (vm_fence_test:inner_runsc_fails).
	 */
	l->vl_sysctl = getenv("FENCED_TEST_VM_SYSCTL");
	/*
	 * And a guest told nothing of the inner boundary its fence asked
	 * for: the commands run on the guest's kernel, which the probe's
	 * reading must catch (vm_fence_test:inner_runsc_missing).
	 */
	if (getenv("FENCED_TEST_VM_NO_INNER") != NULL)
		l->vl_inner = 0;
#endif
	if (lim->fl_memory < VM_MEM_MIN) {
		snprintf(err, errlen, "vm: a guest needs memory %lluM at "
		    "least", (unsigned long long)(VM_MEM_MIN >> 20));
		return (-1);
	}
	return (0);
}

/*
 * QEMU in its jail, an L2 native fence of f's uid, launched as l says;
 * *chan is the fencer's end of the agent's channel, vf's console read
 * from here on.
 */
static int
vm_jail_start(struct fence *f, const struct backend_boot *bb,
    struct vm_fence *vf, const struct vm_launch *l, int *chan, char *err,
    size_t errlen)
{
	struct fence_spec spec;
	static struct vm_argv va;	/* big; one boot at a time */
	int		 sp[2] = { -1, -1 }, cp[2] = { -1, -1 };
	int		 files[VM_FILE_MAX] = { -1, -1, -1 };
	int		 i, r = -1;

	vf->vf_console = -1;
	if (vm_argv_build(l, &va, err, errlen) == -1)
		return (-1);
	vm_files_choose();	/* fenced.conf's lines as the last reload
				   left them */
	for (i = 0; i < VM_FILE_MAX; i++)
		if (vm_file_open(i, &files[i], err, errlen) == -1)
			goto done;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cp) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto done;
	}

	native_spec(f, bb, &spec);
	spec.fs_tier = TIER_L2;
	/*
	 * QEMU's jail: its refusals are the jail's, not the user's, and
	 * nobody watches a listener for it (docs/denials.md).
	 */
	spec.fs_quiet = 1;
	spec.fs_exec = VM_QEMU;
	spec.fs_init_argv = va.va_argv;
	spec.fs_chan = sp[1];
	spec.fs_pass[0] = cp[1];
	spec.fs_pass[VM_FD_KERNEL - VM_FD_CONSOLE] = files[VM_FILE_KERNEL];
	spec.fs_pass[VM_FD_INITRD - VM_FD_CONSOLE] = files[VM_FILE_INITRD];
	spec.fs_pass[VM_FD_IMAGE - VM_FD_CONSOLE] = files[VM_FILE_IMAGE];
	spec.fs_npass = 4;
	spec.fs_kvm = l->vl_accel == VM_ACCEL_KVM;
	spec.fs_no_home = f->f_info.f_home[0] == '\0';
	/*
	 * QEMU itself needs memory beyond the guest's (its owner's total
	 * counts it: fb_memory_extra), and threads.
	 */
	spec.fs_limits.fl_memory += VM_QEMU_OVERHEAD;
	if (spec.fs_limits.fl_pids < 128)
		spec.fs_limits.fl_pids = 128;
	if (fence_start(&spec, &vf->vf_proc, err, errlen) == -1)
		goto done;

	vf->vf_console = cp[0];
	cp[0] = -1;
	if (fcntl(vf->vf_console, F_SETFL, O_NONBLOCK) == -1 ||
	    (vf->vf_console_ev = event_new(fencer_self.ps_evbase,
	    vf->vf_console, EV_READ | EV_PERSIST, vm_console_read,
	    vf)) == NULL || event_add(vf->vf_console_ev, NULL) == -1)
		log_warn("vm %s: console not read", f->f_info.f_key);
	*chan = sp[0];
	sp[0] = -1;
	r = 0;
 done:
	for (i = 0; i < 2; i++) {
		if (sp[i] != -1)
			(void)close(sp[i]);
		if (cp[i] != -1)
			(void)close(cp[i]);
	}
	for (i = 0; i < VM_FILE_MAX; i++)
		if (files[i] != -1)
			(void)close(files[i]);
	return (r);
}

static int
vm_boot(struct fence *f, const struct backend_boot *bb, int *chan,
    char *err, size_t errlen)
{
	struct vm_fence	*vf = f->f_be;
	struct vm_launch l;

	vf->vf_console = -1;
	if (vm_launch_of(f, &l, err, errlen) == -1 ||
	    vm_jail_start(f, bb, vf, &l, chan, err, errlen) == -1)
		return (-1);
	native_started(f, &vf->vf_proc);
	f->f_info.f_accel = l.vl_accel == VM_ACCEL_KVM ? MSG_ACCEL_KVM :
	    MSG_ACCEL_TCG;
	return (0);
}

static void
vm_try_timeout(int fd, short event, void *arg)
{
	char	 why[64];

	snprintf(why, sizeof(why), "no word from the guest in %d s",
	    VM_TRY_SEC);
	vm_try_end(0, why);
}

/* Once, at start: one guest under KVM, to see whether it boots here. */
static void
vm_try_begin(void)
{
	struct fence	*f = &vm.v_try_f;
	struct backend_boot bb;
	struct vm_launch l;
	struct timeval	 tv = { VM_TRY_SEC, 0 };
	const char	*why;
	char		 err[BACKEND_ERR_MAX];

	memset(f, 0, sizeof(*f));
	f->f_home_tree = -1;
	memset(&vm.v_try_vf, 0, sizeof(vm.v_try_vf));
	vm.v_try_vf.vf_console = -1;
	vm.v_try_vf.vf_proc.fp_pid = -1;
	vm.v_try = VM_TRY_RUNNING;
	if ((why = fencer_cgroups_missing()) != NULL) {
		vm_try_end(0, why);
		return;
	}
	if (fencer_uid_hold(&f->f_info.f_uid, err, sizeof(err)) == -1) {
		vm_try_end(0, err);
		return;
	}
	f->f_gid = f->f_info.f_uid;
	snprintf(f->f_user, sizeof(f->f_user), "fence-%u",
	    (unsigned)f->f_info.f_uid);
	strlcpy(f->f_info.f_key, VM_TRY_KEY, sizeof(f->f_info.f_key));
	strlcpy(f->f_cgname, VM_TRY_CGROUP, sizeof(f->f_cgname));
	f->f_info.f_tier = TIER_L2;
	f->f_info.f_backend = BACKEND_VM;
	f->f_info.f_limits.fl_memory = VM_MEM_MIN;
	f->f_info.f_limits.fl_pids = 128;
	f->f_info.f_limits.fl_cpu_milli = 1000;
	f->f_be = &vm.v_try_vf;
	fencer_boot_args(f, &bb);
	bb.bb_home_dev = "";

	if (vm_launch_of(f, &l, err, sizeof(err)) == -1) {
		vm_try_end(0, err);
		return;
	}
	l.vl_accel = VM_ACCEL_KVM;
	l.vl_try = 1;
#ifdef FENCED_TEST_HOOKS
	/*
	 * Test builds only: another CPU model for the try.  On this
	 * project's nested /dev/kvm, -cpu host makes QEMU fail at once and
	 * qemu64 hangs in the kernel: the deadline's case.
	 */
	l.vl_cpu = getenv("FENCED_TEST_VM_TRY_CPU");
#endif
	clock_gettime(CLOCK_MONOTONIC, &vm.v_try_t0);
	if (vm_jail_start(f, &bb, &vm.v_try_vf, &l, &vm.v_try_chan, err,
	    sizeof(err)) == -1) {
		vm_try_end(0, err);
		return;
	}
	vm.v_try_jail = 1;
	/* The loop's clock is from before the start: the deadline is not. */
	(void)event_base_update_cache_time(fencer_self.ps_evbase);
	evtimer_assign(&vm.v_try_timer, fencer_self.ps_evbase, vm_try_timeout,
	    NULL);
	evtimer_add(&vm.v_try_timer, &tv);
	log_info("vm: trying KVM: one guest as uid %u, pid %d, at most %d s",
	    (unsigned)f->f_info.f_uid, (int)vm.v_try_vf.vf_proc.fp_pid,
	    VM_TRY_SEC);
}

/*
 * The try is over: its QEMU killed, its jail and cgroups gone, its uid
 * free again; the accelerator decided.  ok: 1, the guest reached its
 * init; 0, it did not; -1, the daemon stops: nothing is decided.
 */
static void
vm_try_end(int ok, const char *why)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	struct vm_fence	*vf = &vm.v_try_vf;
	struct timespec	 t1;
	long long	 ms = 0;

	if (vm.v_try != VM_TRY_RUNNING)
		return;
	vm.v_try = VM_TRY_DONE;
	if (evtimer_initialized(&vm.v_try_timer))
		evtimer_del(&vm.v_try_timer);
	if (vm.v_try_jail && fence_stop(&vf->vf_proc) == -1)
		log_warnx("vm: the KVM try's jail was not all removed");
	vm.v_try_jail = 0;
	if (vf->vf_console != -1)
		vm_console_read(vf->vf_console, EV_READ, vf);
	vm_console_close(vf);
	if (vm.v_try_chan != -1) {
		(void)close(vm.v_try_chan);
		vm.v_try_chan = -1;
	}
	if (vm.v_try_f.f_info.f_uid != 0)
		fencer_uid_release();
	if (vm.v_try_t0.tv_sec != 0) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - vm.v_try_t0.tv_sec) * 1000LL +
		    (t1.tv_nsec - vm.v_try_t0.tv_nsec) / 1000000;
	}

	if (ok == -1) {
		log_info("vm: the KVM try ended with the daemon, after %lld ms",
		    ms);
		return;
	}
	if (ok) {
		vm.v_accel = VM_ACCEL_KVM;
		log_info("vm: usable, kvm (the KVM try reached the guest's "
		    "init in %lld ms)", ms);
		return;
	}
	if (vf->vf_cons.vc_last[0] != '\0')
		log_info("vm: the KVM try's console's last line: %s",
		    vf->vf_cons.vc_last);
	vm_kvm_dropped();
	if (c->c_vm_accel == VM_ACCEL_KVM) {
		snprintf(vm.v_err, sizeof(vm.v_err), "vm accel kvm: KVM does "
		    "not boot a guest here: %s (the try at start, %lld ms)",
		    why, ms);
		log_warnx("vm: %s", vm.v_err);
		return;
	}
	vm.v_accel = VM_ACCEL_TCG;
	snprintf(vm.v_tcg_why, sizeof(vm.v_tcg_why), "KVM does not boot a "
	    "guest here: %s", why);
	log_info("vm: usable, tcg (vm accel auto: the KVM try failed after "
	    "%lld ms: %s)", ms, why);
}

/* Whether CAP_MKNOD is still needed: KVM is tried or used. */
static int
vm_kvm_kept(void)
{
	return (vm.v_try == VM_TRY_RUNNING || (vm.v_err[0] == '\0' &&
	    vm.v_accel == VM_ACCEL_KVM));
}

/*
 * No guest will run under KVM: the fencer needs CAP_MKNOD no more.
 * Pool fences built with it (while the try ran) are rebuilt without.
 */
static void
vm_kvm_dropped(void)
{
	lockdown_give_up(CAP_MKNOD);
	log_debug("no KVM: CAP_MKNOD dropped");
	fencer_backends_warm_reload();
}

/*
 * After the start: CAP_MKNOD (the /dev/kvm of QEMU's jail) goes unless
 * KVM is being tried or used; a failed try drops it then (vm_try_end()).
 */
static void
vm_lockdown(void)
{
	if (!vm_kvm_kept())
		vm_kvm_dropped();
}

/* The try's QEMU ended by itself (it powers off once it has spoken). */
static int
vm_child(pid_t pid, int status)
{
	struct vm_fence	*vf = &vm.v_try_vf;
	char		 why[64];

	if (vm.v_try != VM_TRY_RUNNING || vf->vf_proc.fp_pid != pid)
		return (0);
	vf->vf_proc.fp_pid = -1;	/* reaped: fence_stop() must not wait */
	if (vf->vf_console != -1)
		vm_console_read(vf->vf_console, EV_READ, vf);
	if (vm.v_try == VM_TRY_RUNNING) {
		if (WIFSIGNALED(status))
			snprintf(why, sizeof(why), "QEMU was killed by signal "
			    "%d before the guest spoke", WTERMSIG(status));
		else
			snprintf(why, sizeof(why), "QEMU exited %d before the "
			    "guest spoke", WEXITSTATUS(status));
		vm_try_end(0, why);
	}
	return (1);
}

static void
vm_fini(void)
{
	vm_try_end(-1, NULL);
}

static void
vm_reaped(struct fence *f)
{
	struct vm_fence	*vf = f->f_be;

	vf->vf_proc.fp_pid = -1;	/* fence_stop() must not wait for it */
}

/* QEMU and everything of its jail killed; the guest goes with it. */
static int
vm_stop(struct fence *f, int *oom)
{
	struct vm_fence	*vf = f->f_be;
	int		 r;

	*oom = fence_oom_killed(&vf->vf_proc);
	r = fence_stop(&vf->vf_proc);
	if (vf->vf_console != -1)
		vm_console_read(vf->vf_console, EV_READ, vf);
	if (vf->vf_cons.vc_init[0] != '\0' &&
	    strcmp(vf->vf_cons.vc_init, vf->vf_cons.vc_last) != 0)
		log_info("vm %s: its init's last line: %s", f->f_info.f_key,
		    vf->vf_cons.vc_init);
	if (vf->vf_cons.vc_last[0] != '\0')
		log_info("vm %s: its console's last line: %s",
		    f->f_info.f_key, vf->vf_cons.vc_last);
	vm_console_close(vf);
	return (r);
}

const struct fencer_backend backend_vm = {
	.fb_id = BACKEND_VM,
	.fb_bin_dir = FENCE_BIN_DIR,
	.fb_state_size = sizeof(struct vm_fence),
	.fb_agent_wait = VM_AGENT_WAIT_SEC,
	.fb_memory_extra = VM_QEMU_OVERHEAD,
	.fb_inner = 1,
	.fb_denials_unobserved = "system calls are not observed with the "
	    "vm backend: the guest's own kernel refuses them, inside the "
	    "virtual machine",
	.fb_probe = {
		.pt_kernel = PROBE_KERNEL_GUEST,
		.pt_net_own = 1,
		.pt_home = "virtio-9p: QEMU's 9p server, in its jail, over "
		    "the host folder",
	},
	.fb_start = vm_start,
	.fb_lockdown = vm_lockdown,
	.fb_unavailable = vm_unavailable,
	.fb_doctor = vm_doctor,
	.fb_boot = vm_boot,
	.fb_reaped = vm_reaped,
	.fb_stop = vm_stop,
	.fb_child = vm_child,
	.fb_fini = vm_fini,
};
