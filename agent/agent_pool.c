/*
 * fence-agent -p: the agent of a pool fence, executed ahead
 * (docs/pool.md, "The agent executed ahead").
 *
 * A pool fence's pid 1 walks the fence's steps up to the split point
 * and executes the agent there, before any boot, as root of the fence's
 * namespaces with the fencer's capabilities: the steps after the split
 * point need them, and cannot come before the user is known.  So that
 * nothing is exposed by it, the agent, until those steps are done:
 *
 * - reads nothing but its assignment socket (fd 3), whose other end
 *   only the fencer holds; it writes nothing but its status socket (fd 4);
 *   its channel to the broker does not exist yet (it comes with the
 *   assignment and is read only by the event loop, after the steps);
 * - runs none of its event loop: agent_pool_wait() is called before
 *   libevent is set up, and returns only once the fence's uid, limits,
 *   Landlock and seccomp are in force;
 * - fails closed: any assignment it cannot check (its size, its fields,
 *   exactly three descriptors of the kinds expected) ends it, pid 1,
 *   and with it the fence; the fencer then fails the take and boots
 *   cold or fails the boot, saying why.
 *
 * The steps are the fence library's own (fencer/native/fence_after.c
 * and the files of its functions, linked into this program), walked in
 * the same order as a cold pid 1 walks them; the seccomp program is the
 * fencer's, sent with the assignment as a sealed memfd.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"
#include "agent.h"

static struct fence_ctx	 agent_pool_ctx;

static __attribute__((noreturn)) void
agent_pool_fail(struct fence_ctx *ctx)
{
	(void)fence_child_send(ctx, FENCE_ST_ERROR);
	_exit(127);
}

/*
 * What pid 1 executed us with: the assignment socket, the status socket,
 * the ruleset where the Landlock features say there is one, and
 * nothing else above stdio.
 */
static int
agent_pool_fds(struct fence_ctx *ctx)
{
	struct stat	 st;
	int		 type;
	socklen_t	 len = sizeof(type);

	/* A socket: its EXEC record brings the seccomp listener. */
	if (fstat(FENCE_POOL_FD_STATUS, &st) == -1 || !S_ISSOCK(st.st_mode))
		_exit(127);	/* no status socket: nobody to tell */
	if (getsockopt(FENCE_POOL_FD_ASSIGN, SOL_SOCKET, SO_TYPE, &type,
	    &len) == -1 || type != SOCK_SEQPACKET)
		return (fence_child_err(ctx, EBADF, "pool agent: fd %d",
		    FENCE_POOL_FD_ASSIGN));
	if ((fcntl(FENCE_POOL_FD_LANDLOCK, F_GETFD) != -1) !=
	    ((ctx->fc_st.fst_landlock & FENCE_LL_FS) != 0))
		return (fence_child_err(ctx, EBADF, "pool agent: fd %d",
		    FENCE_POOL_FD_LANDLOCK));
	if (fcntl(FENCE_POOL_FD_ASSIGN, F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(FENCE_POOL_FD_STATUS, F_SETFD, FD_CLOEXEC) == -1 ||
	    ((ctx->fc_st.fst_landlock & FENCE_LL_FS) &&
	    fcntl(FENCE_POOL_FD_LANDLOCK, F_SETFD, FD_CLOEXEC) == -1))
		return (fence_child_err(ctx, errno, "pool agent: fcntl"));
	ctx->fc_ll_fd = (ctx->fc_st.fst_landlock & FENCE_LL_FS) ?
	    FENCE_POOL_FD_LANDLOCK : -1;
	closefrom(FENCE_POOL_FD_LANDLOCK + 1);
	return (0);
}

/*
 * The one assignment: one datagram of exactly struct fence_assign with
 * exactly FENCE_ASSIGN_NFDS descriptors, a socket, a directory (the
 * home's detached mount) and the seccomp program.  Returns 0, or exits
 * 0 at the socket's end (the fencer dropped the pool fence).
 */
static int
agent_pool_recv(struct fence_ctx *ctx, struct fence_assign *a, int *fds)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(FENCE_ASSIGN_NFDS *
				    sizeof(int)) + CMSG_SPACE(sizeof(int))];
	}			 cm;
	struct cmsghdr		*c;
	struct msghdr		 msg;
	struct iovec		 iov;
	struct stat		 st;
	ssize_t			 n;
	int			 i;

	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = a;
	iov.iov_len = sizeof(*a);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	do
		n = recvmsg(FENCE_POOL_FD_ASSIGN, &msg, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n == 0)
		_exit(0);	/* dropped from the pool */
	if (n == -1)
		return (fence_child_err(ctx, errno, "read the assignment"));
	(void)close(FENCE_POOL_FD_ASSIGN);
	ctx->fc_assign_fd = -1;
	c = CMSG_FIRSTHDR(&msg);
	if (n != (ssize_t)sizeof(*a) || (msg.msg_flags & (MSG_TRUNC |
	    MSG_CTRUNC)) || c == NULL || c->cmsg_level != SOL_SOCKET ||
	    c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(FENCE_ASSIGN_NFDS * sizeof(int)) ||
	    CMSG_NXTHDR(&msg, c) != NULL)
		return (fence_child_err(ctx, EBADMSG, "assignment"));
	memcpy(fds, CMSG_DATA(c), FENCE_ASSIGN_NFDS * sizeof(int));
	for (i = 0; i < FENCE_ASSIGN_NFDS; i++)
		if (fstat(fds[i], &st) == -1 || (i == 0 &&
		    !S_ISSOCK(st.st_mode)) || (i == 1 && !S_ISDIR(st.st_mode)))
			return (fence_child_err(ctx, EBADMSG,
			    "assignment: descriptor %d", i));
	return (0);
}

/*
 * Called by main() before anything else of the agent's (no libevent, no
 * channel): waits for the assignment, walks the steps after the split
 * point and leaves the channel on AGENT_CHANNEL_FD, the working
 * directory the home, as a cold pid 1 leaves them at its execve.
 * Returns only then, as the fence's uid.  llarg: the Landlock features
 * pid 1's ruleset holds (FENCE_LL_*), reported back at the take.
 */
void
agent_pool_wait(const char *llarg)
{
	struct fence_ctx	*ctx = &agent_pool_ctx;
	struct fence_assign	 a;
	const char		*errstr;
	char			 err[FENCE_ERR_MAX];
	int			 fds[FENCE_ASSIGN_NFDS], i;

	memset(ctx, 0, sizeof(*ctx));
	ctx->fc_pool = 1;
	ctx->fc_status_fd = FENCE_POOL_FD_STATUS;
	ctx->fc_status_rfd = ctx->fc_assign_fd = -1;
	ctx->fc_home_tree = ctx->fc_ll_fd = ctx->fc_bin_mnt = -1;
	ctx->fc_chan = ctx->fc_cg_born = ctx->fc_notify_fd = -1;
	for (i = 0; i < FENCE_CG_MAX; i++)
		ctx->fc_cg_procs[i] = -1;
	ctx->fc_st.fst_landlock = strtonum(llarg, 0, FENCE_LL_FS |
	    FENCE_LL_SCOPE_ABSTRACT | FENCE_LL_SCOPE_SIGNAL | FENCE_LL_NET,
	    &errstr);
	if (errstr != NULL) {
		fence_child_err(ctx, EINVAL, "pool agent: -p %s", errstr);
		agent_pool_fail(ctx);
	}
	if (agent_pool_fds(ctx) == -1)
		agent_pool_fail(ctx);
	ctx->fc_assign_fd = FENCE_POOL_FD_ASSIGN;
	/* What fence_init() learns in the fencer, this process's own. */
	if (fence_caps_init(err, sizeof(err)) == -1) {
		fence_child_err(ctx, 0, "%s", err);
		agent_pool_fail(ctx);
	}
	fence_host.fh_landlock_abi = fence_landlock_probe();
	fence_host.fh_ready = 1;

	/* Started and waiting: the pool fence is ready. */
	if (fence_child_send(ctx, FENCE_ST_POOLED) == -1)
		_exit(0);	/* the fencer is gone */
	if (agent_pool_recv(ctx, &a, fds) == -1 ||
	    fence_assign_apply(ctx, &a) == -1)
		agent_pool_fail(ctx);
	explicit_bzero(&a, sizeof(a));
	ctx->fc_chan = fds[0];
	ctx->fc_home_tree = fds[1];
	if (fence_seccomp_adopt(fds[2]) == -1) {
		fence_child_err(ctx, errno, "assignment: seccomp program");
		agent_pool_fail(ctx);
	}

	/* The boot's time from here, as for a cold pid 1 after its clone. */
	memset(ctx->fc_st.fst_us, 0, sizeof(ctx->fc_st.fst_us));
	memset(ctx->fc_st.fst_step_us, 0, sizeof(ctx->fc_st.fst_step_us));
	ctx->fc_t_step = fence_now_us();
	if (fence_steps_walk(ctx, fence_steps_after, fence_nsteps_after,
	    FENCE_NSTEPS_BEFORE) == -1)
		agent_pool_fail(ctx);

	/* What a cold pid 1 does last before its execve. */
	if (fence_rlimit_nofile_set(ctx) == -1)
		agent_pool_fail(ctx);
	if (chdir(ctx->fc_home_abs) == -1) {
		fence_child_err(ctx, errno, "chdir %s", ctx->fc_home_abs);
		agent_pool_fail(ctx);
	}
	(void)umask(022);
	if (ctx->fc_chan != AGENT_CHANNEL_FD) {
		if (dup2(ctx->fc_chan, AGENT_CHANNEL_FD) == -1) {
			fence_child_err(ctx, errno, "channel fd");
			agent_pool_fail(ctx);
		}
		(void)close(ctx->fc_chan);
	}
	ctx->fc_chan = AGENT_CHANNEL_FD;
	if (fence_child_send(ctx, FENCE_ST_EXEC) == -1)
		_exit(127);	/* nobody is listening any more */
	(void)close(FENCE_POOL_FD_STATUS);
}
