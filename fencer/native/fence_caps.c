/*
 * Identity and privileges of pid 1.  In order: the bounding set is
 * emptied while we still hold CAP_SETPCAP (L1.5 and up); groups, gid and
 * uid become the fence's (the kernel then clears the permitted and
 * effective sets, as the uid leaves 0 without SECBIT_KEEP_CAPS); the
 * inheritable and ambient sets are cleared; the parent-death signal is
 * set again, since changing the euid cleared it, and the parent checked
 * to be still there; no_new_privs (L1.5 and up).
 *
 * Ids change through raw system calls: glibc's wrappers would try to
 * change the ids of the caller's other threads too, and pid 1 shares the
 * caller's memory until execve.
 */
#include <sys/types.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"

/*
 * Only what the caller's bounding set still had at fence_init() needs
 * dropping: the set never grows, and dropping twice does no harm.
 */
int
fence_caps_bound(struct fence_ctx *ctx)
{
	cap_value_t	 c;

	for (c = 0; c <= fence_host.fh_cap_last; c++) {
		if (!(fence_host.fh_cap_bound & (1ULL << c)))
			continue;
		if (cap_drop_bound(c) == -1)
			return (fence_child_err(ctx, errno, "drop capability "
			    "%d from the bounding set", (int)c));
	}
	return (0);
}

int
fence_caps_ids(struct fence_ctx *ctx)
{
	const struct fence_spec	*s = ctx->fc_spec;

	if (syscall(SYS_setgroups, 0, NULL) == -1)
		return (fence_child_err(ctx, errno, "setgroups"));
	if (syscall(SYS_setresgid, s->fs_gid, s->fs_gid, s->fs_gid) == -1)
		return (fence_child_err(ctx, errno, "setresgid %u",
		    (unsigned)s->fs_gid));
	if (syscall(SYS_setresuid, s->fs_uid, s->fs_uid, s->fs_uid) == -1)
		return (fence_child_err(ctx, errno, "setresuid %u",
		    (unsigned)s->fs_uid));
	return (0);
}

int
fence_caps_clear(struct fence_ctx *ctx)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		return (fence_child_err(ctx, errno, "clear ambient "
		    "capabilities"));
	if (cap_set_proc(fence_host.fh_nocaps) == -1)
		return (fence_child_err(ctx, errno, "clear capabilities"));
	return (0);
}

/*
 * The fence dies with its parent.  If the parent died before the signal
 * was set again, the read end of the status socket is gone.
 */
int
fence_caps_pdeathsig(struct fence_ctx *ctx)
{
	struct pollfd	 pfd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		return (fence_child_err(ctx, errno, "PR_SET_PDEATHSIG"));
	pfd.fd = ctx->fc_status_fd;
	pfd.events = POLLOUT;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) == -1)
		return (fence_child_err(ctx, errno, "poll status socket"));
	if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
		return (fence_child_err(ctx, ESRCH, "parent exited"));
	return (0);
}

int
fence_caps_nnp(struct fence_ctx *ctx)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return (fence_child_err(ctx, errno, "PR_SET_NO_NEW_PRIVS"));
	return (0);
}

/* Parent side, once. */
int
fence_caps_init(char *err, size_t errlen)
{
	cap_value_t	 c;

	fence_host.fh_cap_last = cap_max_bits() - 1;
	if (fence_host.fh_cap_last >= 64) {
		snprintf(err, errlen, "%d capabilities: too many",
		    fence_host.fh_cap_last + 1);
		return (-1);
	}
	fence_host.fh_cap_bound = 0;
	for (c = 0; c <= fence_host.fh_cap_last; c++)
		if (cap_get_bound(c) == 1)
			fence_host.fh_cap_bound |= 1ULL << c;
	if (fence_host.fh_nocaps == NULL &&
	    (fence_host.fh_nocaps = cap_init()) == NULL) {
		snprintf(err, errlen, "cap_init: %s", strerror(errno));
		return (-1);
	}
	return (0);
}
