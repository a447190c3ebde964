/*
 * Denials (docs/denials.md): what each fence was refused, as the fencer
 * saw it (seccomp notifications, on a socket of their own) and as the
 * broker sees it (the egress proxy's decisions), kept per fence until a
 * command's result takes those of its processes.
 *
 * Attribution.  A seccomp denial carries the chain of in-fence pids
 * from its caller up to the fence's pid 1; the agent names the
 * supervisor of each job in its result (rs_super), every process of a
 * job descends from it (a child subreaper), so the job's denials are
 * those whose chain holds it.  The supervisor's pid is the fence's own
 * word: it only steers attribution within the owner's own fence.  A
 * denial of the fence as a whole (a chain of none: egress, limits) goes
 * to every command that ran when it came, and stays for the others.
 * The sequence number of each denial, against the number when the
 * request was made (r_dseq), keeps a reused pid from taking an older
 * denial.  The fencer writes a denial before it answers the refused
 * call, so by the time a job's result is here its denials are in the
 * socket: svc_denials_collect() drains it first, and only it (a drain
 * of the fencer's imsg channel would dispatch anything, in the middle
 * of an agent's message).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "cg.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "svc.h"

#define SVC_DENIALS_RING	128	/* pending per fence */
#define SVC_DENIALS_TURN	256	/* datagrams per wakeup */
#define SVC_DENIAL_PROCS	(EXEC_PROCESSES_MAX + MSG_TERM_MAX)
#define SVC_DENIAL_KIND_PROC	1	/* a background process's */
#define SVC_DENIAL_KIND_TERM	2	/* a terminal's */

/*
 * A background process's or a terminal's denials (docs/denials.md),
 * kept per process or terminal from its start on: each answer about it
 * (listing, output, signal) takes what came since the last, and
 * carries all of them.
 */
struct svc_denial_proc {
	int			 sp_kind;	/* SVC_DENIAL_KIND_* */
	uint32_t		 sp_id;
	uint32_t		 sp_super;
	uint64_t		 sp_since;
	struct msg_denial_line	*sp_lines;	/* MSG_DENIALS_MAX, made
						   at its first denial */
	size_t			 sp_nl;
	uint32_t		 sp_dropped;
};

struct svc_denial {
	uint64_t	 sd_seq;		/* 0: a free slot */
	uint32_t	 sd_layer;
	uint32_t	 sd_count;
	char		 sd_what[MSG_DENIAL_WHAT_LEN];
	char		 sd_remedy[MSG_DENIAL_REMEDY_LEN];
	uint32_t	 sd_chain[MSG_DENIAL_CHAIN_MAX];
	int		 sd_nchain;		/* 0: the fence's as a whole */
	uint32_t	 sd_top;		/* the pid under pid 1 in the
						   chain (a job's supervisor);
						   0: none */
	int		 sd_told;		/* counted and audited */
	int		 sd_taken;		/* by an answer, or the
						   probe's */
};

struct svc_denials {
	struct svc_denial sds_ring[SVC_DENIALS_RING];
	unsigned int	 sds_next;		/* the slot written next */
	uint64_t	 sds_mark;		/* svc_denial_seq when the
						   last request went to the
						   agent */
	struct svc_denial_proc *sds_procs[SVC_DENIAL_PROCS];
};

static int		 svc_denial_fd = -1;
static struct event	 svc_denial_ev;
/* The egress proxy's: a stream of IMSG_DENIAL frames. */
static struct imsgbuf	*svc_denial_egress;
static struct event	 svc_denial_egress_ev;
uint64_t		 svc_denial_seq;

static void	svc_denial_readable(int, short, void *);
static uint64_t	svc_denials_now(void);
static void	svc_denials_limits(struct bfence *);

/* The fencer's socket of denials (IMSG_DENIALS_FD), once. */
void
svc_denials_socket(int fd)
{
	if (svc_denial_fd != -1)
		fatalx("%s: a second socket of denials", __func__);
	svc_denial_fd = fd;
	event_assign(&svc_denial_ev, broker_self.ps_evbase, fd,
	    EV_READ | EV_PERSIST, svc_denial_readable, NULL);
	if (event_add(&svc_denial_ev, NULL) == -1)
		fatal("%s: event_add", __func__);
}

void
svc_denials_free(struct bfence *bf)
{
	int	 i;

	for (i = 0; bf->bf_denials != NULL && i < SVC_DENIAL_PROCS; i++)
		if (bf->bf_denials->sds_procs[i] != NULL) {
			free(bf->bf_denials->sds_procs[i]->sp_lines);
			free(bf->bf_denials->sds_procs[i]);
		}
	free(bf->bf_denials);
	bf->bf_denials = NULL;
	for (i = 0; i < 2; i++) {
		if (bf->bf_limit_fd[i] != -1)
			(void)close(bf->bf_limit_fd[i]);
		bf->bf_limit_fd[i] = -1;
	}
}

/*
 * The fencer's descriptor of a fence's memory ("memory") or pids
 * ("pids") counters: kept, read around each command.
 */
void
svc_denials_limit_fd(const struct msg_denial *dn, int fd)
{
	struct bfence	*bf;
	uint64_t	 other;
	int		 i = strcmp(dn->dn_what, "pids") == 0;

	if ((bf = bfence_find(dn->dn_owner, dn->dn_key)) == NULL ||
	    (uint32_t)bf->bf_info.f_pid != dn->dn_boot ||
	    (!i && strcmp(dn->dn_what, "memory") != 0) ||
	    bf->bf_limit_fd[i] != -1) {
		(void)close(fd);
		return;
	}
	bf->bf_limit_fd[i] = fd;
	/* What it counted before it was the fence's is no denial. */
	if (cg_events_read(fd, i == 0 ? &other : &bf->bf_limit_seen[i],
	    i == 0 ? &bf->bf_limit_seen[i] : &other) == -1)
		bf->bf_limit_seen[i] = 0;
}

/*
 * bf's counters now (OOM kills, new processes refused at pids.max):
 * what went up since they were last read is a denial of the fence as a
 * whole, recorded once, which every command running then takes.
 */
static void
svc_denials_limits(struct bfence *bf)
{
	static const char *const what[2] = {
		"memory: a process killed for lack of memory",
		"pids: a new process refused at the limit"
	};
	static const char *const remedy[2] = {
		"more memory (boot ... memory SIZE, up to limit memory max)",
		"more processes (boot ... pids N, up to limit pids max)"
	};
	uint64_t	 n[2], other;
	int		 i;

	for (i = 0; i < 2; i++) {
		if (bf->bf_limit_fd[i] == -1 || cg_events_read(
		    bf->bf_limit_fd[i], i == 0 ? &other : &n[i],
		    i == 0 ? &n[i] : &other) == -1)
			continue;
		if (n[i] > bf->bf_limit_seen[i])
			svc_denial_record(bf, DENIAL_LIMIT,
			    n[i] - bf->bf_limit_seen[i] > UINT32_MAX ?
			    UINT32_MAX : (uint32_t)(n[i] -
			    bf->bf_limit_seen[i]), what[i], remedy[i], NULL, 0);
		bf->bf_limit_seen[i] = n[i];
	}
}

/*
 * r goes to its fence's agent now: it takes the denials that come
 * after those already written to the broker and the limits' counters
 * as they are now.
 */
void
svc_denials_mark(struct breq *r)
{
	if (r->r_fence != NULL)
		svc_denials_limits(r->r_fence);
	r->r_dseq = svc_denials_now();
	if (r->r_fence != NULL && r->r_fence->bf_denials != NULL)
		r->r_fence->bf_denials->sds_mark = r->r_dseq;
}

/*
 * The one place a denial is recorded, whatever saw it: bf's pending
 * ring, oldest overwritten.  chain: in-fence pids (n of them), or none
 * for the fence as a whole.  The metrics and the audit log count it
 * when a command's answer takes it (svc_denials_merge()).
 */
void
svc_denial_record(struct bfence *bf, uint32_t layer, uint32_t count,
    const char *what, const char *remedy, const uint32_t *chain, int n)
{
	struct svc_denials	*s;
	struct svc_denial	*d;
	size_t			 i;

	if (n < 0)
		n = 0;
	if (n > MSG_DENIAL_CHAIN_MAX)
		n = MSG_DENIAL_CHAIN_MAX;
	if (bf->bf_denials == NULL &&
	    (bf->bf_denials = calloc(1, sizeof(*bf->bf_denials))) == NULL) {
		log_warn("%s", __func__);
		return;
	}
	s = bf->bf_denials;
	bf->bf_ndenials += count;
	/*
	 * Identical ones of the same job (the same pid under pid 1) are
	 * counted in one slot, so that a loop of refused calls does not
	 * push out the rest; never in a slot from before the last request
	 * went to the agent, which may be of an earlier job whose
	 * supervisor had the same pid (the probe's, never collected).
	 */
	if (n >= 2 && chain[n - 1] == 1) {
		for (i = 0; i < SVC_DENIALS_RING; i++) {
			d = &s->sds_ring[i];
			if (d->sd_seq > s->sds_mark &&
			    d->sd_top == chain[n - 2] &&
			    d->sd_layer == layer &&
			    strcmp(d->sd_what, what) == 0) {
				d->sd_count = d->sd_count > UINT32_MAX -
				    count ? UINT32_MAX : d->sd_count + count;
				return;
			}
		}
	}
	d = &s->sds_ring[s->sds_next];
	s->sds_next = (s->sds_next + 1) % SVC_DENIALS_RING;
	if (d->sd_seq != 0 && (d->sd_nchain > 0 || !d->sd_taken))
		bf->bf_outside += d->sd_count;
	memset(d, 0, sizeof(*d));
	d->sd_seq = ++svc_denial_seq;
	d->sd_layer = layer;
	d->sd_count = count;
	strlcpy(d->sd_what, what, sizeof(d->sd_what));
	strlcpy(d->sd_remedy, remedy, sizeof(d->sd_remedy));
	if (n > 0)
		memcpy(d->sd_chain, chain, n * sizeof(*chain));
	d->sd_nchain = n;
	if (n >= 2 && chain[n - 1] == 1)
		d->sd_top = chain[n - 2];
}

/* One datagram from the fencer. */
static void
svc_denial_take(const void *buf, size_t len)
{
	struct msg_denial	 dn;
	struct bfence		*bf;
	uint32_t		 chain[MSG_DENIAL_CHAIN_MAX];
	int			 n;

	if (msg_denial_decode(buf, len, &dn) == -1)
		fatalx("%s: a bad denial from the fencer", __func__);
	n = msg_denial_chain(dn.dn_chain, chain, nitems(chain));
	/* A fence gone, or booted again since: nobody's any more. */
	if ((bf = bfence_find(dn.dn_owner, dn.dn_key)) == NULL)
		return;
	if (dn.dn_layer == DENIAL_EGRESS ? svc_egress_id(bf->bf_egress) !=
	    dn.dn_boot : (uint32_t)bf->bf_info.f_pid != dn.dn_boot)
		return;
	svc_denial_record(bf, dn.dn_layer, dn.dn_count, dn.dn_what,
	    dn.dn_remedy, chain, n);
}

/* What the socket holds now, at most max datagrams; -1 on its end. */
static int
svc_denial_drain(int max)
{
	uint8_t	 buf[2048];
	ssize_t	 n;
	int	 i;

	if (svc_denial_fd == -1)
		return (0);
	for (i = 0; i < max; i++) {
		n = recv(svc_denial_fd, buf, sizeof(buf), MSG_DONTWAIT |
		    MSG_TRUNC);
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return (0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		if ((size_t)n > sizeof(buf))
			fatalx("%s: an over-long denial", __func__);
		svc_denial_take(buf, (size_t)n);
	}
	return (0);
}

/*
 * The egress proxy's socket of denials, made when the first fence with
 * an egress list is; its other end goes to the proxy.
 */
void
svc_denials_egress_start(void)
{
	int	 sp[2];

	if (svc_denial_egress != NULL)
		return;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sp) == -1) {
		log_warn("%s: socketpair: egress denials are not seen",
		    __func__);
		return;
	}
	if (proc_compose(&broker_self, PROC_EGRESS, IMSG_DENIALS_FD, 0, sp[1],
	    NULL, 0) == -1) {
		log_warn("%s: to the egress proxy", __func__);
		(void)close(sp[0]);
		(void)close(sp[1]);
		return;
	}
	if ((svc_denial_egress = imsgbuf_new(sp[0])) == NULL)
		fatal("%s: imsgbuf_new", __func__);
	event_assign(&svc_denial_egress_ev, broker_self.ps_evbase, sp[0],
	    EV_READ | EV_PERSIST, svc_denial_readable, NULL);
	if (event_add(&svc_denial_egress_ev, NULL) == -1)
		fatal("%s: event_add", __func__);
}

/* What the proxy's socket holds now; -1 on its end. */
static int
svc_denial_drain_egress(void)
{
	struct imsg	 imsg;
	ssize_t		 n;
	int		 r, i, again;

	if (svc_denial_egress == NULL)
		return (0);
	for (i = 0; i < 1024; i++) {
		if ((n = imsgbuf_read(svc_denial_egress)) == -1 &&
		    errno == EINTR)
			continue;
		again = n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK);
		if (n == -1 && !again)
			return (-1);
		while ((r = imsgbuf_get(svc_denial_egress, &imsg)) == 1) {
			if (imsg.hdr.ih_type != IMSG_DENIAL || imsg.fd != -1)
				fatalx("%s: bad %s from the egress proxy",
				    __func__, msg_type_name(imsg.hdr.ih_type));
			svc_denial_take(imsg.data, imsg.len);
			imsg_free(&imsg);
		}
		if (r == -1 || n == 0)
			return (-1);
		if (again)
			break;
	}
	return (0);
}

static void
svc_denial_readable(int fd, short event, void *arg)
{
	if (svc_denial_egress != NULL && fd == imsgbuf_fd(svc_denial_egress)) {
		if (svc_denial_drain_egress() == -1) {
			event_del(&svc_denial_egress_ev);
			imsgbuf_free(svc_denial_egress);
			svc_denial_egress = NULL;
		}
		return;
	}
	if (svc_denial_drain(SVC_DENIALS_TURN) == -1) {
		/* The fencer is gone; the daemon ends with it. */
		event_del(&svc_denial_ev);
		(void)close(svc_denial_fd);
		svc_denial_fd = -1;
	}
}

/*
 * The count of denials once those already written to the broker are
 * in: a request sent to the agent now takes only what comes after.
 */
static uint64_t
svc_denials_now(void)
{
	(void)svc_denial_drain(INT32_MAX);
	(void)svc_denial_drain_egress();
	return (svc_denial_seq);
}

/* What the fencer and the proxy have written so far, taken in. */
void
svc_denials_pending(void)
{
	(void)svc_denials_now();
}

static int
svc_denial_in_chain(const struct svc_denial *d, uint32_t pid)
{
	int	 i;

	for (i = 0; i < d->sd_nchain; i++)
		if (d->sd_chain[i] == pid)
			return (1);
	return (0);
}

/*
 * The denials of the job whose supervisor is in-fence pid super that
 * came after the count since, merged into lines (*nl of them, at most
 * MSG_DENIALS_MAX distinct: layer and what), identical ones counted,
 * the rest in *dropped; the job's own are taken from the ring, those
 * of the fence as a whole stay for other commands.
 */
static void
svc_denials_merge(const struct breq *r, struct bfence *bf, uint64_t since,
    uint32_t super, struct msg_denial_line *lines, size_t *nl,
    uint32_t *dropped)
{
	struct svc_denials	*s = bf->bf_denials;
	struct svc_denial	*d;
	size_t			 i, j;

	if (s == NULL)
		return;
	for (i = 0; i < SVC_DENIALS_RING; i++) {
		d = &s->sds_ring[(s->sds_next + i) % SVC_DENIALS_RING];
		if (d->sd_seq == 0 || d->sd_seq <= since)
			continue;
		if (d->sd_nchain > 0 && (super == 0 ||
		    !svc_denial_in_chain(d, super)))
			continue;
		/*
		 * A command's (r; not the probe's, which was built to be
		 * refused) counts once in the metrics and the audit log,
		 * also one of the fence's that every command then running
		 * shows.
		 */
		if (r != NULL && !d->sd_told &&
		    msg_denial_layer_name(d->sd_layer) != NULL) {
			d->sd_told = 1;
			metrics_denial(msg_denial_layer_name(d->sd_layer),
			    d->sd_count);
			svc_audit_denial(r, msg_denial_layer_name(d->sd_layer),
			    d->sd_what, d->sd_count);
		}
		for (j = 0; j < *nl; j++)
			if (lines[j].dl_layer == d->sd_layer &&
			    strcmp(lines[j].dl_what, d->sd_what) == 0)
				break;
		if (j < *nl)
			lines[j].dl_count = lines[j].dl_count > UINT32_MAX -
			    d->sd_count ? UINT32_MAX : lines[j].dl_count +
			    d->sd_count;
		else if (*nl < MSG_DENIALS_MAX) {
			memset(&lines[*nl], 0, sizeof(lines[*nl]));
			lines[*nl].dl_layer = d->sd_layer;
			lines[*nl].dl_count = d->sd_count;
			strlcpy(lines[*nl].dl_what, d->sd_what,
			    sizeof(lines[*nl].dl_what));
			strlcpy(lines[*nl].dl_remedy, d->sd_remedy,
			    sizeof(lines[*nl].dl_remedy));
			(*nl)++;
		} else if (*dropped < MSG_DENIALS_DROPPED_MAX)
			(*dropped)++;
		d->sd_taken = 1;
		if (d->sd_nchain > 0)
			d->sd_seq = 0;
	}
}

/* nl lines as the text of rs_denials, p_denials or t_denials. */
static void
svc_denials_format(const struct msg_denial_line *lines, size_t nl,
    char *text, size_t size)
{
	char	 one[16 + 11 + MSG_DENIAL_WHAT_LEN + MSG_DENIAL_REMEDY_LEN + 8];
	size_t	 i, off = 0, n;

	text[0] = '\0';
	for (i = 0; i < nl; i++) {
		if (msg_denial_line_format(&lines[i], one, sizeof(one)) == -1)
			continue;
		if (off + (n = strlen(one)) >= size)
			break;
		memcpy(text + off, one, n + 1);
		off += n;
	}
}

/* The same, malloc'ed, or NULL for none. */
static char *
svc_denials_text(const struct msg_denial_line *lines, size_t nl)
{
	char	*text;

	if (nl == 0)
		return (NULL);
	if ((text = malloc(MSG_DENIALS_TEXT_MAX)) == NULL)
		fatal("%s", __func__);
	svc_denials_format(lines, nl, text, MSG_DENIALS_TEXT_MAX);
	return (text);
}

/*
 * bf's ring goes once nothing is pending in it and no process keeps
 * denials: most fences meet none after their probe, and a ring is some
 * 48 KiB.
 */
static void
svc_denials_shrink(struct bfence *bf)
{
	struct svc_denials	*s = bf->bf_denials;
	size_t			 i;

	if (s == NULL)
		return;
	for (i = 0; i < SVC_DENIALS_RING; i++)
		if (s->sds_ring[i].sd_seq != 0)
			return;
	for (i = 0; i < SVC_DENIAL_PROCS; i++)
		if (s->sds_procs[i] != NULL)
			return;
	free(s);
	bf->bf_denials = NULL;
}

/*
 * The probe's exec ended (svc_probe.c): its denials are what it was
 * built to be refused, nobody's command's; they go.
 */
void
svc_denials_discard(struct breq *r, const struct msg_result *rs)
{
	struct msg_denial_line	 lines[MSG_DENIALS_MAX];
	size_t			 nl = 0;
	uint32_t		 dropped = 0;

	if (r->r_fence == NULL || rs->rs_super == 0)
		return;
	(void)svc_denials_now();
	svc_denials_merge(NULL, r->r_fence, r->r_dseq, rs->rs_super, lines,
	    &nl, &dropped);
	svc_denials_shrink(r->r_fence);
}

/*
 * The denials of the job whose supervisor is rs_super, requested when
 * the count was since, into rs.  Returns 1 if rs changed (its encoding
 * must be made again), 0 if not.
 */
static int
svc_denials_collect(const struct breq *r, struct bfence *bf, uint64_t since,
    struct msg_result *rs)
{
	struct msg_denial_line	 lines[MSG_DENIALS_MAX];
	size_t			 nl = 0;
	int			 forged;

	/* Whatever the agent put where the broker writes goes. */
	forged = rs->rs_denials != NULL || rs->rs_denials_dropped != 0 ||
	    rs->rs_denials_note[0] != '\0';
	free(rs->rs_denials);
	rs->rs_denials = NULL;
	rs->rs_denials_dropped = 0;
	strlcpy(rs->rs_denials_note, bf->bf_info.f_denials_note,
	    sizeof(rs->rs_denials_note));
	(void)svc_denials_now();
	svc_denials_merge(r, bf, since, rs->rs_super, lines, &nl,
	    &rs->rs_denials_dropped);
	svc_denials_shrink(bf);
	rs->rs_denials = svc_denials_text(lines, nl);
	return (forged || rs->rs_denials != NULL ||
	    rs->rs_denials_note[0] != '\0' || rs->rs_denials_dropped != 0);
}

/*
 * The denials kept for a background process or a terminal (kind, id)
 * whose supervisor is super: what came since the last answer about it
 * merged into what it had, into lines (*nl, *dropped).  forgotten: its
 * entry goes.  Returns 0, or -1 for nothing to show.
 */
static int
svc_denials_kept(struct breq *r, int kind, uint32_t id, uint32_t super,
    int forgotten, struct msg_denial_line *lines, size_t *nl,
    uint32_t *dropped)
{
	struct bfence		*bf = r->r_fence;
	struct svc_denials	*s;
	struct svc_denial_proc	*sp = NULL;
	size_t			 i, free_at = SVC_DENIAL_PROCS;

	if (bf == NULL || (bf->bf_denials == NULL &&
	    (bf->bf_denials = calloc(1, sizeof(*bf->bf_denials))) == NULL))
		return (-1);
	s = bf->bf_denials;
	for (i = 0; i < SVC_DENIAL_PROCS; i++) {
		if (s->sds_procs[i] == NULL) {
			if (free_at == SVC_DENIAL_PROCS)
				free_at = i;
		} else if (s->sds_procs[i]->sp_kind == kind &&
		    s->sds_procs[i]->sp_id == id) {
			sp = s->sds_procs[i];
			break;
		}
	}
	if (sp != NULL && forgotten) {
		free(sp->sp_lines);
		free(sp);
		s->sds_procs[i] = NULL;
		svc_denials_shrink(bf);
		return (-1);
	}
	if (sp == NULL) {
		if (super == 0 || forgotten || free_at == SVC_DENIAL_PROCS ||
		    (sp = calloc(1, sizeof(*sp))) == NULL) {
			svc_denials_shrink(bf);
			return (-1);
		}
		sp->sp_kind = kind;
		sp->sp_id = id;
		sp->sp_super = super;
		/* From its start, or from now for one started unseen. */
		sp->sp_since = r->r_type == IMSG_AGENT_SPAWN ||
		    r->r_type == IMSG_AGENT_TERM_OPEN ? r->r_dseq :
		    svc_denials_now();
		s->sds_procs[free_at] = sp;
	}
	(void)svc_denials_now();
	if (sp->sp_nl > 0)
		memcpy(lines, sp->sp_lines, sp->sp_nl * sizeof(*lines));
	svc_denials_merge(r, bf, sp->sp_since, sp->sp_super, lines,
	    &sp->sp_nl, &sp->sp_dropped);
	sp->sp_since = svc_denial_seq;
	if (sp->sp_nl > 0 && sp->sp_lines == NULL && (sp->sp_lines =
	    calloc(MSG_DENIALS_MAX, sizeof(*sp->sp_lines))) == NULL)
		fatal("%s", __func__);
	if (sp->sp_nl > 0)
		memcpy(sp->sp_lines, lines, sp->sp_nl * sizeof(*lines));
	*nl = sp->sp_nl;
	*dropped = sp->sp_dropped;
	return (0);
}

/* A background process's denials, into p (the broker's word). */
void
svc_denials_proc(struct breq *r, struct msg_proc *p)
{
	struct msg_denial_line	 lines[MSG_DENIALS_MAX];
	size_t			 nl = 0;
	uint32_t		 dropped = 0;

	free(p->p_denials);	/* the broker's word, never the agent's */
	p->p_denials = NULL;
	p->p_denials_dropped = 0;
	if (svc_denials_kept(r, SVC_DENIAL_KIND_PROC, p->p_id, p->p_super,
	    p->p_forgotten, lines, &nl, &dropped) == -1)
		return;
	p->p_denials = svc_denials_text(lines, nl);
	p->p_denials_dropped = dropped;
}

/* A terminal's denials, into t (the broker's word). */
void
svc_denials_term(struct breq *r, struct msg_term *t)
{
	struct msg_denial_line	 lines[MSG_DENIALS_MAX];
	size_t			 nl = 0;
	uint32_t		 dropped = 0;

	t->t_denials[0] = '\0';	/* never the agent's */
	t->t_denials_dropped = 0;
	if (svc_denials_kept(r, SVC_DENIAL_KIND_TERM, t->t_id, t->t_super,
	    t->t_forgotten, lines, &nl, &dropped) == -1)
		return;
	svc_denials_format(lines, nl, t->t_denials, sizeof(t->t_denials));
	t->t_denials_dropped = dropped;
}

/*
 * The result of r, an exec or a streamed exec, with its denials: the
 * result encoded again (its length in *len), or NULL where what the
 * agent sent stands as it is.
 */
void *
svc_denials_result(struct breq *r, struct msg_result *rs, size_t *len)
{
	void	*buf;

	if (r->r_fence == NULL || (r->r_type != IMSG_AGENT_EXEC &&
	    r->r_type != IMSG_AGENT_EXEC_STREAM))
		return (NULL);
	svc_denials_limits(r->r_fence);
	if (svc_denials_collect(r, r->r_fence, r->r_dseq, rs) == 0)
		return (NULL);
	if (msg_result_encode(rs, &buf, len) == -1)
		fatal("%s: encode", __func__);
	return (buf);
}

/* Whether d is of a background process or terminal kept in s. */
static int
svc_denial_kept(const struct svc_denials *s, const struct svc_denial *d)
{
	size_t	 i;

	for (i = 0; i < SVC_DENIAL_PROCS; i++)
		if (s->sds_procs[i] != NULL &&
		    svc_denial_in_chain(d, s->sds_procs[i]->sp_super))
			return (1);
	return (0);
}

/*
 * The fence's denials nothing took: of its processes outside any
 * command, background process or terminal, of a command whose result
 * never came (not while a command or the probe that may take them
 * runs: until it ends, a denial could be its), and
 * those of the fence as a whole that came while no command ran, once
 * svc_denials_pending() has taken in what was written.  Into
 * its state (f_denials_outside) when the state is asked for, never as
 * they come: a changed count makes its rendering stale, and tells no
 * watcher (docs/denials.md).
 */
void
svc_denials_count(struct bfence *bf)
{
	const struct svc_denials *s;
	const struct svc_denial	*d;
	const struct breq	*r;
	uint64_t		 n, open = UINT64_MAX;
	size_t			 i;

	if (bf->bf_info.f_state != FENCE_STOPPED)
		svc_denials_limits(bf);
	/* What a command or the probe still running may yet take. */
	TAILQ_FOREACH(r, &bf->bf_reqs, r_fentry)
		if ((r->r_type == IMSG_AGENT_EXEC ||
		    r->r_type == IMSG_AGENT_EXEC_STREAM ||
		    r->r_type == IMSG_AGENT_PROBE) && r->r_dseq < open)
			open = r->r_dseq;
	n = bf->bf_outside;
	if ((s = bf->bf_denials) != NULL) {
		for (i = 0; i < SVC_DENIALS_RING; i++) {
			d = &s->sds_ring[i];
			if (d->sd_seq != 0 && !d->sd_taken &&
			    !(d->sd_nchain > 0 && d->sd_seq > open) &&
			    (d->sd_nchain == 0 || !svc_denial_kept(s, d)))
				n += d->sd_count;
		}
	}
	if (n == bf->bf_info.f_denials_outside)
		return;
	bf->bf_info.f_denials_outside = n;
	free(bf->bf_rendered);
	bf->bf_rendered = NULL;
}
