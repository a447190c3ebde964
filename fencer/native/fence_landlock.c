/*
 * Landlock for L1.5 and L2: a second wall behind the mounts.  The
 * ruleset handles every filesystem right the kernel knows and allows:
 *
 *	/			read, list, execute (the whole new root)
 *	/home/<user>, /tmp,	read, list, execute, and create, remove,
 *	/var/tmp, /dev/shm	write, truncate, rename (refer)
 *	/dev/{null,zero,full,	read, write, ioctl
 *	random,urandom,tty},
 *	/dev/pts (the fence's
 *	own devpts)
 *	/dev/kvm		the same, where the spec asks for it (fs_kvm)
 *
 * so nothing outside the writable places can be written even if a mount
 * were wrong.  With ABI 6 and later abstract unix sockets and signals
 * are scoped to the fence: nothing in it can connect to an abstract
 * socket or signal a process created outside it.  TCP is not restricted
 * (L1.5 shares the host network on purpose; L2 has its own).
 *
 * The ABI is probed once per process.  Debian 12's <linux/landlock.h>
 * stops before some of these, so the missing constants and the struct
 * with the network and scope fields are declared here.  A kernel older
 * than the struct accepts it as long as the fields it does not know are
 * zero, and they are whenever the ABI lacks them.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/landlock.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)	/* ABI 5 */
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
/* ABI 6 */
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL			(1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6. */
struct fence_ll_attr {
	uint64_t	 handled_access_fs;
	uint64_t	 handled_access_net;	/* ABI 4 */
	uint64_t	 scoped;		/* ABI 6 */
};

#define FENCE_LL_READ	(LANDLOCK_ACCESS_FS_EXECUTE | \
			 LANDLOCK_ACCESS_FS_READ_FILE | \
			 LANDLOCK_ACCESS_FS_READ_DIR)
#define FENCE_LL_WRITE	(LANDLOCK_ACCESS_FS_WRITE_FILE | \
			 LANDLOCK_ACCESS_FS_REMOVE_DIR | \
			 LANDLOCK_ACCESS_FS_REMOVE_FILE | \
			 LANDLOCK_ACCESS_FS_MAKE_DIR | \
			 LANDLOCK_ACCESS_FS_MAKE_REG | \
			 LANDLOCK_ACCESS_FS_MAKE_SOCK | \
			 LANDLOCK_ACCESS_FS_MAKE_FIFO | \
			 LANDLOCK_ACCESS_FS_MAKE_SYM | \
			 LANDLOCK_ACCESS_FS_REFER | \
			 LANDLOCK_ACCESS_FS_TRUNCATE)
#define FENCE_LL_DEV	(LANDLOCK_ACCESS_FS_READ_FILE | \
			 LANDLOCK_ACCESS_FS_WRITE_FILE | \
			 LANDLOCK_ACCESS_FS_IOCTL_DEV)

static const struct {
	const char	*lr_path;
	uint64_t	 lr_access;
} fence_ll_rules[] = {
	{ "/",			FENCE_LL_READ },
	{ "/tmp",		FENCE_LL_READ | FENCE_LL_WRITE },
	{ "/var/tmp",		FENCE_LL_READ | FENCE_LL_WRITE },
	{ "/dev/shm",		FENCE_LL_READ | FENCE_LL_WRITE },
	{ "/dev/null",		FENCE_LL_DEV },
	{ "/dev/zero",		FENCE_LL_DEV },
	{ "/dev/full",		FENCE_LL_DEV },
	{ "/dev/random",	FENCE_LL_DEV },
	{ "/dev/urandom",	FENCE_LL_DEV },
	{ "/dev/tty",		FENCE_LL_DEV },
	{ "/dev/pts",		FENCE_LL_DEV }
};
/* The home's, added after the split point (fence_landlock_home()). */
#define FENCE_LL_HOME	(FENCE_LL_READ | FENCE_LL_WRITE)

/* The filesystem rights the kernel's ABI knows. */
static uint64_t
fence_ll_handled(int abi)
{
	uint64_t	 fs;

	fs = FENCE_LL_READ | (FENCE_LL_WRITE & ~(LANDLOCK_ACCESS_FS_REFER |
	    LANDLOCK_ACCESS_FS_TRUNCATE)) | LANDLOCK_ACCESS_FS_MAKE_CHAR |
	    LANDLOCK_ACCESS_FS_MAKE_BLOCK;
	if (abi >= 2)
		fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return (fs);
}

/* Parent side, once: 0 if the kernel has no (enabled) Landlock. */
int
fence_landlock_probe(void)
{
	long	 abi;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	return (abi < 0 ? 0 : (int)abi);
}

/* One rule: what is beneath path (opened now) gets access. */
static int
fence_ll_rule(struct fence_ctx *ctx, const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr pb;
	int				 fd;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return (fence_child_err(ctx, errno, "landlock: open %s", path));
	pb.allowed_access = access &
	    fence_ll_handled(fence_host.fh_landlock_abi);
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ctx->fc_ll_fd,
	    LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == -1) {
		fence_child_err(ctx, errno, "landlock rule for %s", path);
		(void)close(fd);
		return (-1);
	}
	(void)close(fd);
	return (0);
}

/*
 * Child side, after pivot_root and while still root, before the split
 * point: the ruleset and every rule that is the same for every fence of
 * the tier (the mount tree is built, nothing of a user's is in it), so
 * that a pool fence has them before its take.  The home's rule comes
 * after the split point (fence_landlock_home()); the ruleset is applied
 * only after the identity change (fence_landlock_restrict()).
 */
int
fence_landlock_prepare(struct fence_ctx *ctx)
{
	struct fence_ll_attr		 attr;
	struct landlock_path_beneath_attr pb;
	int				 abi = fence_host.fh_landlock_abi;
	size_t				 i;
	int				 fd;

	ctx->fc_ll_fd = -1;
	if (abi <= 0)
		return (0);	/* recorded: fp_landlock stays 0 */
	attr.handled_access_fs = fence_ll_handled(abi);
	attr.handled_access_net = 0;
	attr.scoped = abi >= 6 ? (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
	    LANDLOCK_SCOPE_SIGNAL) : 0;
	ctx->fc_ll_fd = syscall(SYS_landlock_create_ruleset, &attr,
	    sizeof(attr), 0);
	if (ctx->fc_ll_fd == -1)
		return (fence_child_err(ctx, errno, "landlock_create_ruleset"));

	for (i = 0; i < nitems(fence_ll_rules); i++)
		if (fence_ll_rule(ctx, fence_ll_rules[i].lr_path,
		    fence_ll_rules[i].lr_access) == -1)
			return (-1);
	/* QEMU under KVM: its /dev/kvm, as the other nodes (never pooled). */
	if (ctx->fc_spec->fs_kvm &&
	    fence_ll_rule(ctx, "/dev/kvm", FENCE_LL_DEV) == -1)
		return (-1);
	/* A file passed in (the vm backend's boot files): read it only. */
	for (i = 0; i < (size_t)ctx->fc_spec->fs_npass; i++) {
		struct stat	 st;

		fd = ctx->fc_spec->fs_pass[i];
		if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
			continue;
		pb.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE &
		    attr.handled_access_fs;
		pb.parent_fd = fd;
		if (syscall(SYS_landlock_add_rule, ctx->fc_ll_fd,
		    LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == -1)
			return (fence_child_err(ctx, errno,
			    "landlock rule for passed fd %d", fd));
	}
	ctx->fc_st.fst_landlock = FENCE_LL_FS;
	if (attr.scoped != 0)
		ctx->fc_st.fst_landlock |= FENCE_LL_SCOPE_ABSTRACT |
		    FENCE_LL_SCOPE_SIGNAL;
	return (0);
}

/* Child side, after the split point and the home's mount: its rule. */
int
fence_landlock_home(struct fence_ctx *ctx)
{
	if (ctx->fc_ll_fd == -1)
		return (0);
	return (fence_ll_rule(ctx, ctx->fc_home_abs, FENCE_LL_HOME));
}

/* Child side, after no_new_privs. */
int
fence_landlock_restrict(struct fence_ctx *ctx)
{
	if (ctx->fc_ll_fd == -1)
		return (0);
	if (syscall(SYS_landlock_restrict_self, ctx->fc_ll_fd, 0) == -1)
		return (fence_child_err(ctx, errno,
		    "landlock_restrict_self"));
	(void)close(ctx->fc_ll_fd);
	ctx->fc_ll_fd = -1;
	return (0);
}
