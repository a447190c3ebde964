/*
 * The network of an L2 fence: the new network namespace has only lo,
 * down; pid 1 brings it up (the kernel then gives it 127.0.0.1/8 and
 * ::1) and nothing else ever exists in there.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <net/if.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"

int
fence_net_lo_up(struct fence_ctx *ctx)
{
	struct ifreq	 ifr;
	int		 s;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return (fence_child_err(ctx, errno, "socket for lo"));
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", sizeof("lo"));
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1) {
		fence_child_err(ctx, errno, "get flags of lo");
		goto fail;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1) {
		fence_child_err(ctx, errno, "bring lo up");
		goto fail;
	}
	(void)close(s);
	return (0);
 fail:
	(void)close(s);
	return (-1);
}
