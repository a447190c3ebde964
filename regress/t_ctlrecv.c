/*
 * t_ctlrecv: a control socket that takes one request and shows it.
 *
 *	t_ctlrecv SOCKET FENCECTL [ARG ...]
 *
 * Listens on SOCKET, runs FENCECTL -s SOCKET ARG..., and prints the one
 * request it sends, decoded: "request TYPE", then "FIELD VALUE" lines.
 * It answers IMSG_CTL_END, then prints "exit N", fencectl's status.  A
 * fencectl that never connects (its command line refused) prints only
 * "exit N".  Exits 2 on its own failures, 0 otherwise.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"

#define T_WAIT_MS	10000

static void
t_owner(uid_t owner)
{
	if (owner == MSG_OWNER_NONE)
		printf("owner none\n");
	else
		printf("owner %u\n", (unsigned)owner);
}

static const char *
t_snap_op(int op)
{
	switch (op) {
	case SNAP_CREATE:
		return ("create");
	case SNAP_LIST:
		return ("list");
	case SNAP_DELETE:
		return ("delete");
	case SNAP_RESTORE:
		return ("restore");
	case SNAP_UNDO:
		return ("undo");
	default:
		return ("other");	/* the undo mark: never fencectl's */
	}
}

static void
t_show(struct imsg *imsg)
{
	struct msg_fence_req q;
	struct msg_boot	 b;
	struct msg_exec	 x;
	struct msg_gitconfig g;
	struct msg_gitinit gi;
	struct msg_ctltoken ct;
	struct msg_snap	 sq;
	int32_t		 i;
	size_t		 n;

	printf("request %s\n", msg_type_name(imsg->hdr.ih_type));
	switch (imsg->hdr.ih_type) {
	case IMSG_CTL_SHOW_STATS:
	case IMSG_CTL_SHOW_TOKENS:
	case IMSG_CTL_RELOAD:
		if (msg_empty_decode(imsg->data, imsg->len) == -1)
			errx(2, "bad empty request");
		break;
	case IMSG_CTL_LIST:
	case IMSG_CTL_STOP:
	case IMSG_CTL_PROBE:
		if (msg_fence_req_decode(imsg->data, imsg->len, &q) == -1)
			errx(2, "bad fence request");
		printf("key \"%s\"\n", q.r_key);
		t_owner(q.r_owner);
		break;
	case IMSG_CTL_BOOT:
		if (msg_boot_decode(imsg->data, imsg->len, &b) == -1)
			errx(2, "bad boot request");
		printf("key \"%s\"\ntier %d\nbackend %d\nrequire %d\n"
		    "lifetime %u\nmemory %llu\npids %u\ncpu %u\n", b.b_key,
		    b.b_tier, b.b_backend, b.b_require, b.b_lifetime,
		    (unsigned long long)b.b_limits.fl_memory,
		    b.b_limits.fl_pids, b.b_limits.fl_cpu_milli);
		for (n = 0; n < b.b_negress; n++)
			printf("egress \"%s\"\n", b.b_egress[n]);
		/* Only when given: the boots recorded before it stay. */
		if (b.b_from_key[0] != '\0')
			printf("from \"%s\" \"%s\"\n", b.b_from_key,
			    b.b_from_snap);
		break;
	case IMSG_CTL_EXEC:
	case IMSG_CTL_EXEC_STREAM:
		if (msg_exec_decode(imsg->data, imsg->len, &x) == -1)
			errx(2, "bad exec request");
		printf("key \"%s\"\n", x.x_key);
		t_owner(x.x_owner);
		printf("timeout %u\noutput %u\ncwd \"%s\"\nargc %zu\n",
		    x.x_timeout_ms, x.x_max_bytes, x.x_cwd, x.x_argc);
		for (n = 0; n < x.x_argc; n++)
			printf("argv \"%s\"\n", x.x_argv[n]);
		printf("stdin %zu\n", x.x_stdin_len);
		if (x.x_undo)
			printf("undo\n");
		msg_exec_free(&x);
		break;
	case IMSG_CTL_GIT_CONFIG:
		if (msg_gitconfig_decode(imsg->data, imsg->len, &g) == -1)
			errx(2, "bad git-config request");
		printf("key \"%s\"\n", g.g_key);
		t_owner(g.g_owner);
		printf("set-name %d\nname \"%s\"\nset-email %d\n"
		    "email \"%s\"\n", g.g_set_name, g.g_name, g.g_set_email,
		    g.g_email);
		break;
	case IMSG_CTL_GIT_INIT:
		if (msg_gitinit_decode(imsg->data, imsg->len, &gi) == -1)
			errx(2, "bad git-init request");
		printf("key \"%s\"\n", gi.gi_key);
		t_owner(gi.gi_owner);
		printf("path \"%s\"\n", gi.gi_path);
		break;
	case IMSG_CTL_LOG_VERBOSE:
		if (msg_i32_decode(imsg->data, imsg->len, &i, 0, 1) == -1)
			errx(2, "bad log request");
		printf("verbose %d\n", (int)i);
		break;
	case IMSG_CTL_TOKEN:
		if (msg_ctltoken_decode(imsg->data, imsg->len, &ct) == -1)
			errx(2, "bad token request");
		/* "replace 0|1" as before names; the name after it. */
		if (ct.ct_op == CTLTOKEN_DELETE)
			printf("delete\n");
		else
			printf("replace %u\n", ct.ct_op == CTLTOKEN_REPLACE);
		printf("name \"%s\"\n", ct.ct_name);
		break;
	case IMSG_CTL_SNAP:
		if (msg_snap_decode(imsg->data, imsg->len, &sq) == -1)
			errx(2, "bad snapshot request");
		printf("op %s\nkey \"%s\"\n", t_snap_op(sq.s_op), sq.s_key);
		t_owner(sq.s_owner);
		printf("name \"%s\"\n", sq.s_name);
		break;
	default:
		errx(2, "unexpected request %u", imsg->hdr.ih_type);
	}
	fflush(stdout);
}

/* One request from fd, shown and answered with an end. */
static void
t_serve(int fd)
{
	struct imsgbuf	*ibuf;
	struct imsg	 imsg;
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 r;

	if ((ibuf = imsgbuf_new(fd)) == NULL)
		err(2, "imsgbuf_new");
	for (;;) {
		if ((r = imsgbuf_get(ibuf, &imsg)) == -1)
			errx(2, "bad request");
		if (r == 1)
			break;
		pfd.fd = fd;
		pfd.events = POLLIN;
		if ((r = poll(&pfd, 1, T_WAIT_MS)) == -1)
			err(2, "poll");
		if (r == 0)
			errx(2, "no request in %d ms", T_WAIT_MS);
		if ((n = imsgbuf_read(ibuf)) == -1 && errno != EAGAIN &&
		    errno != EINTR)
			err(2, "read");
		if (n == 0)
			errx(2, "fencectl closed without a request");
	}
	t_show(&imsg);
	imsg_free(&imsg);
	if (imsgbuf_compose(ibuf, IMSG_CTL_END, 0, 0, -1, NULL, 0) == -1 ||
	    imsgbuf_flush(ibuf) == -1)
		err(2, "answer");
	imsgbuf_free(ibuf);
}

int
main(int argc, char *argv[])
{
	struct sockaddr_un sun;
	struct pollfd	 pfd;
	char		**cargv;
	pid_t		 pid;
	int		 lfd, fd, i, status, r, waited = 0;

	if (argc < 3)
		errx(2, "usage: t_ctlrecv SOCKET FENCECTL [ARG ...]");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, argv[1], sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path))
		errx(2, "%s: path too long", argv[1]);
	unlink(argv[1]);
	if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(lfd, 1) == -1)
		err(2, "listen %s", argv[1]);

	if ((cargv = calloc(argc + 2, sizeof(*cargv))) == NULL)
		err(2, NULL);
	cargv[0] = argv[2];
	cargv[1] = "-s";
	cargv[2] = argv[1];
	for (i = 3; i < argc; i++)
		cargv[i] = argv[i];
	if ((pid = fork()) == -1)
		err(2, "fork");
	if (pid == 0) {
		execv(cargv[0], cargv);
		err(2, "exec %s", cargv[0]);
	}
	free(cargv);

	/* A connection, or fencectl gone without one. */
	for (;;) {
		pfd.fd = lfd;
		pfd.events = POLLIN;
		if ((r = poll(&pfd, 1, 100)) == -1 && errno != EINTR)
			err(2, "poll");
		if (r > 0) {
			if ((fd = accept(lfd, NULL, NULL)) == -1)
				err(2, "accept");
			t_serve(fd);
			break;
		}
		if ((r = waitpid(pid, &status, WNOHANG)) == -1)
			err(2, "waitpid");
		if (r == pid)
			goto done;
		if ((waited += 100) > T_WAIT_MS) {
			kill(pid, SIGKILL);
			errx(2, "fencectl neither connected nor exited");
		}
	}
	if (waitpid(pid, &status, 0) == -1)
		err(2, "waitpid");
 done:
	close(lfd);
	unlink(argv[1]);
	if (WIFEXITED(status))
		printf("exit %d\n", WEXITSTATUS(status));
	else
		printf("signal %d\n", WTERMSIG(status));
	return (0);
}
