/*
 * t_port: print a TCP port free on 127.0.0.1 just now, for a test's
 * daemon to listen on: bind port 0, ask which one the kernel gave, let
 * it go.  Another process could take it in between; tests run one at a
 * time and the kernel hands out ephemeral ports in turn, so in practice
 * it is the test's.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <err.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(void)
{
	struct sockaddr_in sin;
	socklen_t	 len = sizeof(sin);
	int		 fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "bind");
	if (getsockname(fd, (struct sockaddr *)&sin, &len) == -1)
		err(1, "getsockname");
	printf("%u\n", (unsigned)ntohs(sin.sin_port));
	close(fd);
	return (0);
}
