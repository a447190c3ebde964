/*
 * t_port: print a port free on 127.0.0.1 just now for both TCP and UDP,
 * for a test's daemon or listener to take: bind TCP port 0, ask which
 * one the kernel gave, check that UDP has it free too (a resolver of
 * the test's listens on UDP; another suite's proxies send DNS queries
 * from ephemeral UDP ports), let both go.  Another process could take
 * it in between; the kernel hands out ephemeral ports in turn, so in
 * practice it is the test's, also with other tests running beside it.
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
	socklen_t	 len;
	int		 fd, ufd, i;

	for (i = 0; i < 100; i++) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(sin);
		if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
		    -1 || (ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC,
		    0)) == -1)
			err(1, "socket");
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			err(1, "bind");
		if (getsockname(fd, (struct sockaddr *)&sin, &len) == -1)
			err(1, "getsockname");
		if (bind(ufd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
			printf("%u\n", (unsigned)ntohs(sin.sin_port));
			close(ufd);
			close(fd);
			return (0);
		}
		close(ufd);
		close(fd);
	}
	errx(1, "no port free for both TCP and UDP in 100 tries");
}
