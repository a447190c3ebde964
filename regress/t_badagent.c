/*
 * t_badagent: a fence-agent that is not ours, for ports_test's
 * hostile_agent case.  It answers HELLO and every exec (the probe's
 * too) as an agent would, and every TUNNEL_OPEN with an attack chosen
 * by the port asked for (PORTS lists 1 to 10):
 *
 *	1  mode fd with a pipe
 *	2  mode fd with a listening TCP socket
 *	3  mode fd with a directory
 *	4  mode fd with a FIFO
 *	5  mode fd with a connected UDP socket
 *	6  mode fd with a TCP socket that is not connected
 *	7  mode fd with no descriptor
 *	8  framed, then DATA far beyond the window (10 MiB, credit or not)
 *	9  framed, then CREDIT for bytes never sent
 *	10 framed, then DATA after its own SHUT
 *	any other: ERROR port-closed
 *
 * A fence whose key begins with "twice" has its probe answered twice
 * (forge_test's agent_answers_twice): the first probe comes as request
 * 0 (docs/probe.md, "Integration"), which the broker takes once.
 *
 * Run by the fencer in place of fence-agent, its channel on fd 3.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"

static struct imsgbuf	*ib;

static void
send_msg(uint32_t type, uint32_t id, int fd, void *buf, size_t len)
{
	if (imsgbuf_compose(ib, type, id, 0, fd, buf, len) == -1 ||
	    imsgbuf_flush(ib) == -1)
		exit(1);
	free(buf);
}

static void
answer_result(uint32_t id)
{
	struct msg_result rs;
	void		*buf;
	size_t		 len;

	memset(&rs, 0, sizeof(rs));
	rs.rs_exit = 1;
	if (msg_result_encode(&rs, &buf, &len) == -1)
		exit(1);
	send_msg(IMSG_AGENT_RESULT, id, -1, buf, len);
}

static void
answer_ports(uint32_t id)
{
	struct msg_portlist pl;
	void		*buf;
	size_t		 len;

	memset(&pl, 0, sizeof(pl));
	for (pl.pl_count = 0; pl.pl_count < 10; pl.pl_count++)
		pl.pl_ports[pl.pl_count] = (uint16_t)(pl.pl_count + 1);
	if (msg_portlist_encode(&pl, &buf, &len) == -1)
		exit(1);
	send_msg(IMSG_AGENT_PORT_LIST, id, -1, buf, len);
}

static void
answer_tunnel(uint32_t id, uint32_t mode, int fd)
{
	struct msg_tunnel tn;
	void		*buf;
	size_t		 len;

	tn.tn_mode = mode;
	if (msg_tunnel_encode(&tn, &buf, &len) == -1)
		exit(1);
	send_msg(IMSG_AGENT_TUNNEL, id, fd, buf, len);
}

static void
send_data(uint32_t id, size_t n)
{
	static uint8_t	 b[MSG_TUNNEL_DATA_MAX];
	struct msg_tunnel_data td;
	void		*buf;
	size_t		 len;

	memset(&td, 0, sizeof(td));
	td.td_data = b;
	td.td_len = n;
	if (msg_tunnel_data_encode(&td, &buf, &len) == -1)
		exit(1);
	send_msg(IMSG_AGENT_TUNNEL_DATA, id, -1, buf, len);
}

static int
tcp_socket(int type)
{
	int	 fd;

	if ((fd = socket(AF_INET, type, 0)) == -1)
		exit(1);
	return (fd);
}

static void
attack(uint32_t id, uint32_t port)
{
	struct sockaddr_in sin;
	struct msg_tunnel_credit tc;
	struct msg_tunnel_close tl;
	void		*buf;
	size_t		 len;
	int		 p[2], fd, i;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	switch (port) {
	case 1:
		if (pipe(p) == -1)
			exit(1);
		(void)close(p[1]);
		answer_tunnel(id, MSG_TUNNEL_FD, p[0]);
		return;
	case 2:
		fd = tcp_socket(SOCK_STREAM);
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
		    listen(fd, 1) == -1)
			exit(1);
		answer_tunnel(id, MSG_TUNNEL_FD, fd);
		return;
	case 3:
		if ((fd = open("/", O_RDONLY | O_DIRECTORY)) == -1)
			exit(1);
		answer_tunnel(id, MSG_TUNNEL_FD, fd);
		return;
	case 4:
		(void)unlink("/tmp/t_badagent.fifo");
		if (mkfifo("/tmp/t_badagent.fifo", 0600) == -1 ||
		    (fd = open("/tmp/t_badagent.fifo", O_RDWR |
		    O_NONBLOCK)) == -1)
			exit(1);
		answer_tunnel(id, MSG_TUNNEL_FD, fd);
		return;
	case 5:
		fd = tcp_socket(SOCK_DGRAM);
		sin.sin_port = htons(9);
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			exit(1);
		answer_tunnel(id, MSG_TUNNEL_FD, fd);
		return;
	case 6:
		answer_tunnel(id, MSG_TUNNEL_FD, tcp_socket(SOCK_STREAM));
		return;
	case 7:
		answer_tunnel(id, MSG_TUNNEL_FD, -1);
		return;
	case 8:
		answer_tunnel(id, MSG_TUNNEL_FRAMED, -1);
		for (i = 0; i < 160; i++)
			send_data(id, MSG_TUNNEL_DATA_MAX);
		return;
	case 9:
		answer_tunnel(id, MSG_TUNNEL_FRAMED, -1);
		memset(&tc, 0, sizeof(tc));
		tc.tc_bytes = MSG_TUNNEL_WINDOW;
		if (msg_tunnel_credit_encode(&tc, &buf, &len) == -1)
			exit(1);
		send_msg(IMSG_AGENT_TUNNEL_CREDIT, id, -1, buf, len);
		return;
	case 10:
		answer_tunnel(id, MSG_TUNNEL_FRAMED, -1);
		memset(&tl, 0, sizeof(tl));
		tl.tl_how = MSG_TUNNEL_SHUT;
		if (msg_tunnel_close_encode(&tl, &buf, &len) == -1)
			exit(1);
		send_msg(IMSG_AGENT_TUNNEL_CLOSE, id, -1, buf, len);
		send_data(id, 10);
		return;
	}
	if (msg_error_format(&buf, &len, "port-closed", "nothing here") == -1)
		exit(1);
	send_msg(IMSG_AGENT_ERROR, id, -1, buf, len);
}

int
main(int argc, char *argv[])
{
	struct msg_tunnel_open to;
	struct msg_hello hello;
	struct imsg	 imsg;
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 r, twice = 0;

	if ((ib = imsgbuf_new(3)) == NULL)
		return (1);
	for (;;) {
		if ((r = imsgbuf_get(ib, &imsg)) == -1)
			return (1);
		if (r == 0) {
			pfd.fd = 3;
			pfd.events = POLLIN;
			(void)poll(&pfd, 1, -1);
			if ((n = imsgbuf_read(ib)) == 0)
				return (0);
			if (n == -1 && errno != EAGAIN && errno != EINTR)
				return (1);
			continue;
		}
		switch (imsg.hdr.ih_type) {
		case IMSG_AGENT_HELLO:
			if (msg_hello_decode(imsg.data, imsg.len, &hello) == -1)
				return (1);
			twice = strncmp(hello.h_key, "twice", 5) == 0;
			explicit_bzero(&hello, sizeof(hello));
			send_msg(IMSG_AGENT_READY, imsg.hdr.ih_peerid, -1,
			    NULL, 0);
			break;
		case IMSG_AGENT_PROBE:
			if (twice)
				answer_result(imsg.hdr.ih_peerid);
			answer_result(imsg.hdr.ih_peerid);
			break;
		case IMSG_AGENT_EXEC:
		case IMSG_AGENT_EXEC_STREAM:
			answer_result(imsg.hdr.ih_peerid);
			break;
		case IMSG_AGENT_PORTS:
			answer_ports(imsg.hdr.ih_peerid);
			break;
		case IMSG_AGENT_TUNNEL_OPEN:
			if (msg_tunnel_open_decode(imsg.data, imsg.len,
			    &to) == -1)
				return (1);
			attack(imsg.hdr.ih_peerid, to.to_port);
			break;
		default:
			break;
		}
		imsg_free(&imsg);
	}
}
