/*
 * QEMU's argument vector for one fence: every host-visible surface off
 * (no default devices, display, monitor, QMP, network or reboot; QEMU's
 * own seccomp sandbox with every option it has), the machine sized
 * from the fence's limits, and exactly four devices: the root image
 * (virtio-blk, read-only), the home (virtio-9p of the one directory),
 * the agent's port (virtio-serial on an inherited socket) and the
 * serial console (an inherited socket).  No path of the host is named
 * but the home's: the boot files are the descriptors the fencer checked.
 * regress/vm_test.c checks the vector flag by flag.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fenced.h"
#include "vm.h"

const char *
vm_accel_name(int accel)
{
	switch (accel) {
	case VM_ACCEL_KVM:
		return ("kvm");
	case VM_ACCEL_TCG:
		return ("tcg");
	default:
		return ("auto");
	}
}

/* One argument, formatted into the vector's own buffer. */
static int __attribute__((format(printf, 2, 3)))
vm_arg(struct vm_argv *va, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 room;
	int	 n;

	if (va->va_argc >= VM_ARGV_MAX || va->va_used >= sizeof(va->va_buf))
		return (-1);
	room = sizeof(va->va_buf) - va->va_used;
	va_start(ap, fmt);
	n = vsnprintf(va->va_buf + va->va_used, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room)
		return (-1);
	va->va_argv[va->va_argc++] = va->va_buf + va->va_used;
	va->va_argv[va->va_argc] = NULL;
	va->va_used += (size_t)n + 1;
	return (0);
}

/* What may appear in a QEMU option value and on the kernel's line. */
static int
vm_word_valid(const char *s, size_t max)
{
	size_t	 i, len = strnlen(s, max + 1);

	if (len == 0 || len > max || s[0] == '-')
		return (0);
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		    s[i] == '-'))
			return (0);
	return (1);
}

/* sysctl.NAME=VALUE, NAME of a-z, 0-9, '_' and '.', VALUE a word. */
static int
vm_sysctl_valid(const char *s)
{
	const char	*eq;
	size_t		 i;

	if (strncmp(s, "sysctl.", 7) != 0 || (eq = strchr(s, '=')) == NULL ||
	    eq == s + 7 || eq - s > 64 || !vm_word_valid(eq + 1, 32))
		return (0);
	for (i = 7; s + i < eq; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		    s[i] == '.'))
			return (0);
	return (1);
}

int
vm_argv_build(const struct vm_launch *l, struct vm_argv *va, char *err,
    size_t errlen)
{
	int	 kvm = l->vl_accel == VM_ACCEL_KVM, r = 0;

	memset(va, 0, sizeof(*va));
	if (l->vl_accel != VM_ACCEL_KVM && l->vl_accel != VM_ACCEL_TCG) {
		snprintf(err, errlen, "vm: no accelerator chosen");
		return (-1);
	}
	if (l->vl_mem < VM_MEM_MIN || l->vl_mem > MEMORY_MAX) {
		snprintf(err, errlen, "vm: a guest needs at least %llu MiB "
		    "of memory", (unsigned long long)(VM_MEM_MIN >> 20));
		return (-1);
	}
	if (l->vl_cpus < 1 || l->vl_cpus > VM_CPUS_MAX) {
		snprintf(err, errlen, "vm: %u cpus is out of range (1 to %d)",
		    l->vl_cpus, VM_CPUS_MAX);
		return (-1);
	}
	if (l->vl_uid == 0 || l->vl_uid == (uid_t)-1 || l->vl_gid == 0 ||
	    l->vl_gid == (gid_t)-1 || !vm_word_valid(l->vl_user, 32) ||
	    !vm_word_valid(l->vl_key, FENCE_KEY_SIZE - 1) || l->vl_tmp == 0 ||
	    l->vl_pids < 8 ||
	    (l->vl_cpu != NULL && !vm_word_valid(l->vl_cpu, 32)) ||
	    (l->vl_sysctl != NULL && !vm_sysctl_valid(l->vl_sysctl))) {
		snprintf(err, errlen, "vm: invalid identity for the guest");
		return (-1);
	}

	r |= vm_arg(va, "%s", VM_QEMU);
	/* Nothing but what is named below. */
	r |= vm_arg(va, "-nodefaults");
	r |= vm_arg(va, "-no-user-config");
	r |= vm_arg(va, "-display");
	r |= vm_arg(va, "none");
	r |= vm_arg(va, "-monitor");
	r |= vm_arg(va, "none");
	r |= vm_arg(va, "-nic");
	r |= vm_arg(va, "none");
	r |= vm_arg(va, "-no-reboot");
	r |= vm_arg(va, "-sandbox");
	r |= vm_arg(va, "on,obsolete=deny,elevateprivileges=deny,"
	    "spawn=deny,resourcecontrol=deny");
	r |= vm_arg(va, "-msg");
	r |= vm_arg(va, "timestamp=off");
	/* The machine. */
	r |= vm_arg(va, "-machine");
	r |= vm_arg(va, "q35,usb=off,vmport=off,smm=off");
	r |= vm_arg(va, "-accel");
	if (kvm)
		r |= vm_arg(va, "kvm");
	else
		r |= vm_arg(va, "tcg,tb-size=%d", VM_TB_MIB);
	r |= vm_arg(va, "-cpu");
	r |= vm_arg(va, "%s", l->vl_cpu != NULL ? l->vl_cpu : kvm ? "host" :
	    "max");
	r |= vm_arg(va, "-m");
	r |= vm_arg(va, "%lluM", (unsigned long long)(l->vl_mem >> 20));
	r |= vm_arg(va, "-smp");
	r |= vm_arg(va, "%u", l->vl_cpus);
	/* The boot files, as checked. */
	r |= vm_arg(va, "-kernel");
	r |= vm_arg(va, "/proc/self/fd/%d", VM_FD_KERNEL);
	r |= vm_arg(va, "-initrd");
	r |= vm_arg(va, "/proc/self/fd/%d", VM_FD_INITRD);
	r |= vm_arg(va, "-append");
	r |= vm_arg(va, "console=ttyS0 quiet panic=-1 fenced.uid=%u "
	    "fenced.gid=%u fenced.user=%s fenced.host=%s fenced.tmp=%llu "
	    "fenced.pids=%u%s%s%s%s", (unsigned)l->vl_uid,
	    (unsigned)l->vl_gid, l->vl_user, l->vl_key,
	    (unsigned long long)l->vl_tmp, (unsigned)l->vl_pids,
	    l->vl_inner ? " fenced.inner=runsc" : "",
	    l->vl_try ? " fenced.try=kvm" : "",
	    l->vl_sysctl != NULL ? " " : "",
	    l->vl_sysctl != NULL ? l->vl_sysctl : "");
	/* The root: read-only, to QEMU as to the guest. */
	r |= vm_arg(va, "-drive");
	r |= vm_arg(va, "if=none,id=root,file=/proc/self/fd/%d,format=raw,"
	    "readonly=on", VM_FD_IMAGE);
	r |= vm_arg(va, "-device");
	r |= vm_arg(va, "virtio-blk-pci,drive=root");
	/* The home: the one host directory, as the jail has it. */
	r |= vm_arg(va, "-fsdev");
	r |= vm_arg(va, "local,id=home,path=/home/%s,security_model=none",
	    l->vl_user);
	r |= vm_arg(va, "-device");
	r |= vm_arg(va, "virtio-9p-pci,fsdev=home,mount_tag=home");
	/* The agent's channel and the console: inherited sockets. */
	r |= vm_arg(va, "-device");
	r |= vm_arg(va, "virtio-serial-pci");
	r |= vm_arg(va, "-chardev");
	r |= vm_arg(va, "socket,id=agent,fd=%d", VM_FD_AGENT);
	r |= vm_arg(va, "-device");
	r |= vm_arg(va, "virtserialport,chardev=agent,name=fenced.agent");
	r |= vm_arg(va, "-chardev");
	r |= vm_arg(va, "socket,id=console,fd=%d", VM_FD_CONSOLE);
	r |= vm_arg(va, "-serial");
	r |= vm_arg(va, "chardev:console");
	if (r != 0) {
		snprintf(err, errlen, "vm: argument vector too long");
		return (-1);
	}
	return (0);
}
