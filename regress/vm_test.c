/*
 * vm_test: fencer/vm/, the vm backend's QEMU argument vector, read back
 * flag by flag against docs/design.md section 3 (every host-visible surface
 * off, QEMU's seccomp sandbox, memory and cpus from the limits, the
 * agent's virtio-serial port on an inherited descriptor, no host path
 * but the home), and the boot files' checks (a wrong hash, a symlink,
 * a file others may write are refused).
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>

#include "fenced.h"
#include "vm.h"

static void
launch_init(struct vm_launch *l)
{
	memset(l, 0, sizeof(*l));
	l->vl_accel = VM_ACCEL_TCG;
	l->vl_mem = 512ULL << 20;
	l->vl_cpus = 2;
	l->vl_uid = 1234;
	l->vl_gid = 2345;
	l->vl_user = "alice";
	l->vl_key = "v1";
	l->vl_tmp = 128ULL << 20;
	l->vl_pids = 256;
}

static void
build(const struct vm_launch *l, struct vm_argv *va)
{
	char	 err[256];

	ATF_REQUIRE_MSG(vm_argv_build(l, va, err, sizeof(err)) == 0, "%s",
	    err);
}

/* The vector, whole: nothing added, nothing lost, in this order. */
ATF_TC_WITHOUT_HEAD(exact_tcg);
ATF_TC_BODY(exact_tcg, tc)
{
	static const char *const want[] = {
		"/usr/bin/qemu-system-x86_64",
		"-nodefaults", "-no-user-config",
		"-display", "none",
		"-monitor", "none",
		"-nic", "none",
		"-no-reboot",
		"-sandbox", "on,obsolete=deny,elevateprivileges=deny,"
		    "spawn=deny,resourcecontrol=deny",
		"-msg", "timestamp=off",
		"-machine", "q35,usb=off,vmport=off,smm=off",
		"-accel", "tcg,tb-size=64",
		"-cpu", "max",
		"-m", "512M",
		"-smp", "2",
		"-kernel", "/proc/self/fd/5",
		"-initrd", "/proc/self/fd/6",
		"-append", "console=ttyS0 quiet panic=-1 fenced.uid=1234 "
		    "fenced.gid=2345 fenced.user=alice fenced.host=v1 "
		    "fenced.tmp=134217728 fenced.pids=256",
		"-drive", "if=none,id=root,file=/proc/self/fd/7,format=raw,"
		    "readonly=on",
		"-device", "virtio-blk-pci,drive=root",
		"-fsdev", "local,id=home,path=/home/alice,security_model=none",
		"-device", "virtio-9p-pci,fsdev=home,mount_tag=home",
		"-device", "virtio-serial-pci",
		"-chardev", "socket,id=agent,fd=3",
		"-device", "virtserialport,chardev=agent,name=fenced.agent",
		"-chardev", "socket,id=console,fd=4",
		"-serial", "chardev:console",
	};
	struct vm_launch l;
	struct vm_argv	 va;
	size_t		 i;

	launch_init(&l);
	build(&l, &va);
	ATF_CHECK_EQ((size_t)va.va_argc, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]) &&
	    i < (size_t)va.va_argc; i++)
		ATF_CHECK_STREQ_MSG(va.va_argv[i], want[i], "argument %zu", i);
	ATF_CHECK(va.va_argv[va.va_argc] == NULL);
}

/* Flags no vector may ever hold: another way out of the machine. */
ATF_TC_WITHOUT_HEAD(no_surface);
ATF_TC_BODY(no_surface, tc)
{
	static const char *const never[] = {
		"-qmp", "-gdb", "-s", "-vnc", "-spice", "-net", "-netdev",
		"-usb", "-usbdevice", "-pidfile", "-daemonize", "-runas",
		"-chroot", "-incoming", "-loadvm", "-snapshot", "-virtfs",
		"-hda", "-cdrom", "-fda", "-mtdblock", "-sd", "-pflash",
		"-parallel", "-audiodev", "-object", "-plugin", "-trace",
		"-D", "-d", "-L", "-bios", "-option-rom", "-serial stdio",
	};
	struct vm_launch l;
	struct vm_argv	 va;
	size_t		 i, j;
	int		 kvm;

	for (kvm = 0; kvm < 2; kvm++) {
		launch_init(&l);
		l.vl_accel = kvm ? VM_ACCEL_KVM : VM_ACCEL_TCG;
		build(&l, &va);
		for (i = 0; i < (size_t)va.va_argc; i++) {
			for (j = 0; j < sizeof(never) / sizeof(never[0]); j++)
				ATF_CHECK_MSG(strcmp(va.va_argv[i], never[j]) !=
				    0, "%s", never[j]);
			/* No host path but the home's; descriptors only. */
			if (strstr(va.va_argv[i], "path=") != NULL)
				ATF_CHECK_STREQ(va.va_argv[i], "local,id=home,"
				    "path=/home/alice,security_model=none");
			ATF_CHECK(strstr(va.va_argv[i], "server") == NULL);
			ATF_CHECK(strstr(va.va_argv[i], "unix:") == NULL);
			ATF_CHECK(strstr(va.va_argv[i], "tcp:") == NULL);
		}
	}
}

/* KVM, the limits, and what tells them apart. */
ATF_TC_WITHOUT_HEAD(kvm_and_limits);
ATF_TC_BODY(kvm_and_limits, tc)
{
	struct vm_launch l;
	struct vm_argv	 va;
	int		 i, accel = -1, cpu = -1, m = -1, smp = -1;

	launch_init(&l);
	l.vl_accel = VM_ACCEL_KVM;
	l.vl_mem = 3ULL << 30;
	l.vl_cpus = 4;
	build(&l, &va);
	for (i = 0; i + 1 < va.va_argc; i++) {
		if (strcmp(va.va_argv[i], "-accel") == 0)
			accel = i + 1;
		if (strcmp(va.va_argv[i], "-cpu") == 0)
			cpu = i + 1;
		if (strcmp(va.va_argv[i], "-m") == 0)
			m = i + 1;
		if (strcmp(va.va_argv[i], "-smp") == 0)
			smp = i + 1;
	}
	ATF_REQUIRE(accel > 0 && cpu > 0 && m > 0 && smp > 0);
	ATF_CHECK_STREQ(va.va_argv[accel], "kvm");
	ATF_CHECK_STREQ(va.va_argv[cpu], "host");
	ATF_CHECK_STREQ(va.va_argv[m], "3072M");
	ATF_CHECK_STREQ(va.va_argv[smp], "4");
}

/* The KVM try: the same vector, one more kernel word; a model given. */
ATF_TC_WITHOUT_HEAD(kvm_try);
ATF_TC_BODY(kvm_try, tc)
{
	struct vm_launch l;
	struct vm_argv	 va, vt;
	int		 i, n = 0;

	launch_init(&l);
	l.vl_accel = VM_ACCEL_KVM;
	build(&l, &va);
	l.vl_try = 1;
	build(&l, &vt);
	ATF_REQUIRE_EQ(va.va_argc, vt.va_argc);
	for (i = 0; i < va.va_argc; i++) {
		if (strcmp(va.va_argv[i], vt.va_argv[i]) == 0)
			continue;
		n++;
		ATF_CHECK_STREQ(vt.va_argv[i - 1], "-append");
		ATF_CHECK(strlen(vt.va_argv[i]) > strlen(" fenced.try=kvm"));
		ATF_CHECK_STREQ(vt.va_argv[i] + strlen(vt.va_argv[i]) -
		    strlen(" fenced.try=kvm"), " fenced.try=kvm");
	}
	ATF_CHECK_EQ(n, 1);
	l.vl_cpu = "qemu64";
	build(&l, &vt);
	for (i = 0; i + 1 < vt.va_argc; i++)
		if (strcmp(vt.va_argv[i], "-cpu") == 0)
			ATF_CHECK_STREQ(vt.va_argv[i + 1], "qemu64");
}

/*
 * The inner boundary: the same vector, one more kernel word, before a
 * KVM try's.
 */
ATF_TC_WITHOUT_HEAD(inner);
ATF_TC_BODY(inner, tc)
{
	struct vm_launch l;
	struct vm_argv	 va, vi;
	const char	*w = " fenced.inner=runsc";
	int		 i, n = 0;

	launch_init(&l);
	build(&l, &va);
	l.vl_inner = 1;
	build(&l, &vi);
	ATF_REQUIRE_EQ(va.va_argc, vi.va_argc);
	for (i = 0; i < va.va_argc; i++) {
		if (strcmp(va.va_argv[i], vi.va_argv[i]) == 0)
			continue;
		n++;
		ATF_CHECK_STREQ(vi.va_argv[i - 1], "-append");
		ATF_CHECK_EQ(strlen(vi.va_argv[i]), strlen(va.va_argv[i]) +
		    strlen(w));
		ATF_CHECK_STREQ(vi.va_argv[i] + strlen(va.va_argv[i]), w);
	}
	ATF_CHECK_EQ(n, 1);
	l.vl_try = 1;
	build(&l, &vi);
	for (i = 0; i + 1 < vi.va_argc; i++)
		if (strcmp(vi.va_argv[i], "-append") == 0)
			ATF_CHECK(strstr(vi.va_argv[i + 1],
			    " fenced.inner=runsc fenced.try=kvm") != NULL);
}

/* A test build's guest kernel setting: sysctl.NAME=VALUE, nothing else. */
ATF_TC_WITHOUT_HEAD(test_sysctl);
ATF_TC_BODY(test_sysctl, tc)
{
	static const char *const bad[] = {
		"fenced.uid=0", "sysctl.=1", "sysctl.a", "sysctl.a=",
		"sysctl.a b=1", "sysctl.a=1 fenced.uid=0", "sysctl.A=1",
		"sysctl.a=-1", "init=/bin/sh",
	};
	struct vm_launch l;
	struct vm_argv	 va;
	char		 err[256];
	const char	*w = " sysctl.kernel.yama.ptrace_scope=3";
	size_t		 i;
	int		 j, n = 0;

	launch_init(&l);
	l.vl_sysctl = w + 1;
	build(&l, &va);
	for (j = 0; j + 1 < va.va_argc; j++)
		if (strcmp(va.va_argv[j], "-append") == 0) {
			n++;
			ATF_CHECK_STREQ(va.va_argv[j + 1] +
			    strlen(va.va_argv[j + 1]) - strlen(w), w);
		}
	ATF_CHECK_EQ(n, 1);
	for (i = 0; i < nitems(bad); i++) {
		l.vl_sysctl = bad[i];
		ATF_CHECK_MSG(vm_argv_build(&l, &va, err, sizeof(err)) == -1,
		    "%s passed", bad[i]);
	}
}

/* What cannot be a guest: refused, with a reason. */
ATF_TC_WITHOUT_HEAD(refused);
ATF_TC_BODY(refused, tc)
{
	struct vm_launch l;
	struct vm_argv	 va;
	char		 err[256];

	launch_init(&l);
	l.vl_uid = 0;
	ATF_CHECK(vm_argv_build(&l, &va, err, sizeof(err)) == -1);
	launch_init(&l);
	l.vl_user = "al,ice";		/* would be a second QEMU option */
	ATF_CHECK(vm_argv_build(&l, &va, err, sizeof(err)) == -1);
	launch_init(&l);
	l.vl_user = "alice fenced.uid=0";	/* a second kernel argument */
	ATF_CHECK(vm_argv_build(&l, &va, err, sizeof(err)) == -1);
	launch_init(&l);
	l.vl_key = "-v";
	ATF_CHECK(vm_argv_build(&l, &va, err, sizeof(err)) == -1);
	launch_init(&l);
	l.vl_mem = 64ULL << 20;
	ATF_CHECK(vm_argv_build(&l, &va, err, sizeof(err)) == -1);
	ATF_CHECK(strstr(err, "memory") != NULL);
	launch_init(&l);
	l.vl_pids = 0;			/* no limit is not a limit */
	ATF_CHECK(vm_argv_build(&l, &va, err, sizeof(err)) == -1);
	launch_init(&l);
	l.vl_cpus = 0;
	ATF_CHECK(vm_argv_build(&l, &va, err, sizeof(err)) == -1);
	launch_init(&l);
	l.vl_accel = VM_ACCEL_AUTO;	/* must have been decided */
	ATF_CHECK(vm_argv_build(&l, &va, err, sizeof(err)) == -1);
	launch_init(&l);
	l.vl_cpu = "host,+vmx";		/* a model is one word */
	ATF_CHECK(vm_argv_build(&l, &va, err, sizeof(err)) == -1);
}

#define EMPTY_SHA256 \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ABC_SHA256 \
	"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static void
file_make(const char *path, const char *text, mode_t mode)
{
	int	 fd;

	ATF_REQUIRE((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) !=
	    -1);
	ATF_REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	ATF_REQUIRE(fchmod(fd, mode) == 0);
	ATF_REQUIRE(close(fd) == 0);
}

/* The hash, of what the descriptor reads; anything else refused. */
ATF_TC(files);
ATF_TC_HEAD(files, tc)
{
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(files, tc)
{
	char	 dir[PATH_MAX - 16], path[PATH_MAX], link[PATH_MAX], err[512];
	char	 buf[8];
	int	 fd;

	/*
	 * kyua's work directory is under /tmp, which others may write and
	 * vm_file_verify() rightly refuses: a folder of our own in the
	 * build's (root's, as a clone in /root or /work is).
	 */
	snprintf(dir, sizeof(dir), "%s/vm_test.XXXXXX",
	    atf_tc_get_config_var_wd(tc, "regressdir", "."));
	ATF_REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/abc", dir);
	if (vm_file_verify(path, ABC_SHA256, &fd, err, sizeof(err)) == -1 &&
	    strstr(err, "folder") != NULL) {
		(void)rmdir(dir);
		atf_tc_skip("the build is in a folder others may write: %s",
		    err);
	}
	file_make(path, "abc", 0644);
	ATF_REQUIRE(chmod(dir, 0755) == 0);

	ATF_REQUIRE_MSG(vm_file_verify(path, ABC_SHA256, &fd, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK(read(fd, buf, sizeof(buf)) == 3);	/* from the start */
	(void)close(fd);

	/* A wrong hash: refused, and says which it found. */
	ATF_CHECK(vm_file_verify(path, EMPTY_SHA256, &fd, err,
	    sizeof(err)) == -1);
	ATF_CHECK(fd == -1);
	ATF_CHECK_MSG(strstr(err, ABC_SHA256) != NULL, "%s", err);
	/* One byte changed after the build recorded it. */
	file_make(path, "abd", 0644);
	ATF_CHECK(vm_file_verify(path, ABC_SHA256, &fd, err,
	    sizeof(err)) == -1);
	file_make(path, "abc", 0644);
	/* A malformed hash, a relative path. */
	ATF_CHECK(vm_file_verify(path, "ABC", &fd, err, sizeof(err)) == -1);
	ATF_CHECK(vm_file_verify("abc", ABC_SHA256, &fd, err,
	    sizeof(err)) == -1);
	/* A file others may write. */
	ATF_REQUIRE(chmod(path, 0664) == 0);
	ATF_CHECK(vm_file_verify(path, ABC_SHA256, &fd, err,
	    sizeof(err)) == -1);
	ATF_REQUIRE(chmod(path, 0644) == 0);
	/* A file not root's. */
	ATF_REQUIRE(chown(path, 1, 1) == 0);
	ATF_CHECK(vm_file_verify(path, ABC_SHA256, &fd, err,
	    sizeof(err)) == -1);
	ATF_REQUIRE(chown(path, 0, 0) == 0);
	/* A symlink to it. */
	snprintf(link, sizeof(link), "%s/link", dir);
	ATF_REQUIRE(symlink(path, link) == 0);
	ATF_CHECK(vm_file_verify(link, ABC_SHA256, &fd, err,
	    sizeof(err)) == -1);
	/* A folder others may write. */
	ATF_REQUIRE(chmod(dir, 0777) == 0);
	ATF_CHECK(vm_file_verify(path, ABC_SHA256, &fd, err,
	    sizeof(err)) == -1);
	ATF_CHECK_MSG(strstr(err, "folder") != NULL, "%s", err);
	ATF_REQUIRE(chmod(dir, 0755) == 0);
	/* Not a regular file. */
	ATF_CHECK(vm_file_verify("/dev/null", EMPTY_SHA256, &fd, err,
	    sizeof(err)) == -1);
	ATF_CHECK(unlink(link) == 0 && unlink(path) == 0 && rmdir(dir) == 0);
}

/* The guest's console: lines cut, bytes made printable, the last kept. */
ATF_TC_WITHOUT_HEAD(console);
ATF_TC_BODY(console, tc)
{
	struct vm_console vc;
	char		 big[600];

	memset(&vc, 0, sizeof(vc));
	vm_console_feed(&vc, "boot\r\nfenced-vm", strlen("boot\r\nfenced-vm"));
	ATF_CHECK_STREQ(vc.vc_last, "boot");
	ATF_CHECK_EQ(vc.vc_linelen, 9);
	vm_console_feed(&vc, "init: \x1b[0m\xff ok\n\n",
	    strlen("init: \x1b[0m\xff ok\n\n"));
	ATF_CHECK_STREQ(vc.vc_last, "fenced-vminit: ?[0m? ok");
	ATF_CHECK_EQ(vc.vc_linelen, 0);
	/* vminit's last line outlives the kernel's power-off line. */
	ATF_CHECK_STREQ(vc.vc_init, "fenced-vminit: ?[0m? ok");
	vm_console_feed(&vc, "[ 5.0] reboot: Power down\n",
	    strlen("[ 5.0] reboot: Power down\n"));
	ATF_CHECK_STREQ(vc.vc_last, "[ 5.0] reboot: Power down");
	ATF_CHECK_STREQ(vc.vc_init, "fenced-vminit: ?[0m? ok");
	memset(big, 'a', sizeof(big));
	vm_console_feed(&vc, big, sizeof(big));
	ATF_CHECK_EQ(strlen(vc.vc_last), VM_CONSOLE_LINE - 1);
	ATF_CHECK_EQ(vc.vc_linelen, sizeof(big) - 2 * (VM_CONSOLE_LINE - 1));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, console);
	ATF_TP_ADD_TC(tp, exact_tcg);
	ATF_TP_ADD_TC(tp, no_surface);
	ATF_TP_ADD_TC(tp, kvm_and_limits);
	ATF_TP_ADD_TC(tp, kvm_try);
	ATF_TP_ADD_TC(tp, inner);
	ATF_TP_ADD_TC(tp, test_sysctl);
	ATF_TP_ADD_TC(tp, refused);
	ATF_TP_ADD_TC(tp, files);
	return (atf_no_error());
}
