/*
 * The proxy port of a fence that booted with an egress list
 * (docs/egress.md): the agent listens on 127.0.0.1:EGRESS_PROXY_PORT of
 * the fence's own network namespace and hands every connection it
 * accepts, as it is, to the broker (IMSG_AGENT_EGRESS_CONN), which
 * passes it to the egress proxy.  The agent reads none of its bytes and
 * keeps no copy.  When the channel has no room the connection is
 * closed (the client sees it reset) and accepting pauses for
 * AGENT_RETRY_MS; so does it when the fence is out of descriptors.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "agent.h"

#define AGENT_EGRESS_BACKLOG	128
#define AGENT_EGRESS_BURST	64	/* accepted per wakeup */

static struct event	*egress_ev;
static struct event	*egress_pause_ev;

static void
agent_egress_pause(void)
{
	struct timeval	 tv = { 0, AGENT_RETRY_MS * 1000 };

	event_del(egress_ev);
	evtimer_add(egress_pause_ev, &tv);
}

static void
agent_egress_resume(evutil_socket_t fd, short events, void *arg)
{
	event_add(egress_ev, NULL);
}

static void
agent_egress_accept(evutil_socket_t lfd, short events, void *arg)
{
	int	 fd, i;

	for (i = 0; i < AGENT_EGRESS_BURST; i++) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				log_debug("%s: accept: %s", __func__,
				    strerror(errno));
				agent_egress_pause();
			}
			return;
		}
		/* compose closes fd when it fails; it is never ours after. */
		if (imsgev_compose(agent_env->a_iev, IMSG_AGENT_EGRESS_CONN, 0,
		    0, fd, NULL, 0) == -1) {
			if (errno != ENOBUFS)
				fatal("%s: imsgev_compose", __func__);
			agent_egress_pause();
			return;
		}
	}
}

/* Listen on the proxy port; fatal if it cannot be had. */
void
agent_egress_listen(void)
{
	struct sockaddr_in sin;
	int		 fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		fatal("%s: socket", __func__);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1)
		fatal("%s: SO_REUSEADDR", __func__);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(EGRESS_PROXY_PORT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		fatal("%s: bind 127.0.0.1:%d", __func__, EGRESS_PROXY_PORT);
	if (listen(fd, AGENT_EGRESS_BACKLOG) == -1)
		fatal("%s: listen", __func__);
	if ((egress_ev = event_new(agent_env->a_base, fd, EV_READ | EV_PERSIST,
	    agent_egress_accept, NULL)) == NULL ||
	    (egress_pause_ev = evtimer_new(agent_env->a_base,
	    agent_egress_resume, NULL)) == NULL ||
	    event_add(egress_ev, NULL) == -1)
		fatalx("%s: event", __func__);
	log_debug("%s: proxy port 127.0.0.1:%d", __func__, EGRESS_PROXY_PORT);
}
