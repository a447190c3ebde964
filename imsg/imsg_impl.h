/*
 * imsg_impl: the inside of an imsgbuf, for imsg.c and for the tests
 * that check what its buffers still hold (regress/imsg_test.c).
 */
#ifndef IMSG_IMPL_H
#define IMSG_IMPL_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#define IMSG_FDS_MAX	16	/* received, not yet claimed */

struct imsg_rfd {
	int		 rf_fd;
	uint64_t	 rf_start;	/* stream offset of its recvmsg() */
	uint64_t	 rf_end;
};

struct imsg_out {
	TAILQ_ENTRY(imsg_out) o_entry;
	unsigned char	*o_buf;
	size_t		 o_len;
	size_t		 o_off;		/* bytes already sent */
	int		 o_fd;		/* -1 once sent, or none */
};

struct imsgbuf {
	int		 ib_fd;
	int		 ib_sock;	/* else no descriptors, plain I/O */
	int		 ib_error;	/* sticky: the stream is unusable */

	unsigned char	*ib_rbuf;
	size_t		 ib_rsize;	/* allocated */
	size_t		 ib_rstart;	/* first byte not yet taken */
	size_t		 ib_rend;	/* one past the last byte read */
	uint64_t	 ib_rbase;	/* stream offset of ib_rbuf[0] */
	struct imsg_rfd	 ib_rfds[IMSG_FDS_MAX];
	size_t		 ib_nrfds;

	TAILQ_HEAD(, imsg_out) ib_wq;
	size_t		 ib_queued;	/* unsent bytes */
	size_t		 ib_queue_max;	/* compose refuses beyond it */
};

#endif /* IMSG_IMPL_H */
