/*
 * The vm backend (docs/vm.md): each fence its own QEMU virtual machine.
 *
 * QEMU itself runs as pid 1 of a native L2 fence of the fence's uid
 * (the jail: no capabilities, no network but lo, Landlock, the L1.5
 * seccomp filter and QEMU's own, cgroup limits), and sees of the host
 * only /usr, /etc and the fence's own home, which it serves to the guest
 * over virtio-9p.  Its descriptors, set up by the fencer:
 *
 *	3	the agent's channel (virtio-serial port "fenced.agent")
 *	4	the guest's serial console, read by the fencer
 *	5, 6, 7	the kernel, the initramfs and the root image, each
 *		opened and checked against its SHA-256 by the fencer just
 *		before the launch (vm_file_verify())
 *
 * vm_argv_build() is the one place QEMU's argument vector is made.
 */
#ifndef VM_H
#define VM_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#define VM_QEMU			"/usr/bin/qemu-system-x86_64"
#define VM_FD_AGENT		3
#define VM_FD_CONSOLE		4
#define VM_FD_KERNEL		5
#define VM_FD_INITRD		6
#define VM_FD_IMAGE		7

#define VM_MEM_MIN		(128ULL << 20)	/* of guest memory */
#define VM_QEMU_OVERHEAD	(256ULL << 20)	/* QEMU's own, beyond it */
#define VM_CPUS_MAX		8
#define VM_TB_MIB		64		/* TCG's translation cache */
#define VM_FILE_SIZE_MAX	(4ULL << 30)

/* How each of vminit's console lines begins (the kernel's come after). */
#define VM_INIT_MARK		"fenced-vminit: "
/* vminit's line on the console when fenced.try=kvm reached it. */
#define VM_TRY_MARK		"fenced-vminit: kvm try: init reached"

#define VM_ARGV_MAX		64
#define VM_ARGV_BUF		4096

struct vm_launch {
	int		 vl_accel;	/* VM_ACCEL_KVM or VM_ACCEL_TCG */
	uint64_t	 vl_mem;	/* bytes of guest memory */
	unsigned int	 vl_cpus;
	uid_t		 vl_uid;	/* the fence's, inside the guest too */
	gid_t		 vl_gid;
	const char	*vl_user;	/* HOME is /home/<user>, in QEMU's
					   jail and in the guest */
	const char	*vl_key;	/* the guest's hostname */
	uint64_t	 vl_tmp;	/* bytes of the guest's /tmp */
	uint32_t	 vl_pids;	/* the fence's pids limit, held by a
					   cgroup inside the guest */
	const char	*vl_cpu;	/* NULL: host under KVM, max under
					   TCG; else a model (test builds'
					   KVM try only) */
	int		 vl_inner;	/* 1: the agent runs in runsc inside
					   the guest (fenced.inner=runsc) */
	const char	*vl_sysctl;	/* test builds only: one more kernel
					   word, sysctl.NAME=VALUE; NULL */
	int		 vl_try;	/* 1: the KVM try: the guest says it
					   reached its init and powers off
					   (VM_TRY_MARK) */
};

struct vm_argv {
	char		*va_argv[VM_ARGV_MAX + 1];
	int		 va_argc;
	char		 va_buf[VM_ARGV_BUF];
	size_t		 va_used;
};

/* The guest's serial console, a line at a time (vm_console.c). */
#define VM_CONSOLE_LINE		256
struct vm_console {
	char		 vc_line[VM_CONSOLE_LINE];
	size_t		 vc_linelen;
	char		 vc_last[VM_CONSOLE_LINE];	/* last whole line */
	char		 vc_init[VM_CONSOLE_LINE];	/* last of vminit's
							   (VM_INIT_MARK) */
	int		 vc_try_ok;	/* a line was VM_TRY_MARK */
};

void	vm_console_feed(struct vm_console *, const char *, size_t);
int	vm_argv_build(const struct vm_launch *, struct vm_argv *, char *,
	    size_t);
int	vm_file_verify(const char *, const char *, int *, char *, size_t);
const char *vm_accel_name(int);

#endif /* VM_H */
