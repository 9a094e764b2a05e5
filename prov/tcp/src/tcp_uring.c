/* SPDX-License-Identifier: MIT */
/*
 * The io_uring engine. Each connection keeps at most one receive
 * (recvmsg into the iovecs of tcp_rx_iov) and one send (sendmsg of the
 * queued frames) in flight; a listener keeps one accept; a connect waits
 * on a poll for writability.
 *
 * Batching: completions are reaped from the shared ring (the kernel
 * finishes them when the task enters it: tcp_uring_taskrun); new requests (receives re-armed by the completions just handled)
 * wait in the submission queue until something must go now: the next
 * send (tx_kick submits them all with it, one io_uring_enter), or the
 * next poll. A ping-pong thus costs one system call per message and side.
 *
 * A request's memory (the connection, its buffer, the iovecs) stays alive
 * until its completion: closing a connection cancels its requests and
 * tcp_conn_free_closed waits for conn_idle.
 *
 * io_uring cancels the requests of a thread that exits (-ECANCELED): with
 * FI_THREAD_SAFE, any application thread may have submitted them. On a
 * live connection such a completion moved no bytes; the request is simply
 * made again by whoever reaps it.
 */
#include "weft/compat.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcp.h"
#include "tcp_io.h"

enum tcp_uring_kind {
	TCP_URING_CANCEL = 0,	/* cancel requests: their result is ignored */
	TCP_URING_RX,
	TCP_URING_TX,
	TCP_URING_CONNECT,
	TCP_URING_ACCEPT,
};
#define TCP_URING_KIND_MASK 7ull

struct tcp_uring {
	struct io_uring ring;
	unsigned int pending;	/* prepared, not submitted */
	unsigned int inflight;	/* submitted, completion not reaped */
	bool urgent;		/* a send waits among the pending */
	bool closing;
	bool direct;		/* polls read the sockets (tcp_direct.c) */
};

static struct tcp_uring *tcp_uring(struct tcp_ep *ep)
{
	return ep->io_priv;
}

static inline uint64_t tcp_uring_ud(const void *p, enum tcp_uring_kind k)
{
	return (uint64_t)(uintptr_t)p | k;
}

/* Opcodes the engine needs: an old kernel without them gets epoll. */
static bool tcp_uring_probe(struct io_uring *ring)
{
	static const int ops[] = { IORING_OP_SENDMSG, IORING_OP_RECVMSG,
				   IORING_OP_ACCEPT, IORING_OP_POLL_ADD,
				   IORING_OP_ASYNC_CANCEL };
	struct io_uring_probe *p = io_uring_get_probe_ring(ring);
	bool ok = p != NULL;
	size_t i;

	for (i = 0; ok && i < WEFT_ARRAY_SIZE(ops); i++)
		ok = io_uring_opcode_supported(p, ops[i]);
	if (p)
		io_uring_free_probe(p);
	return ok;
}

static int tcp_uring_open(struct tcp_ep *ep)
{
	struct tcp_uring *u = calloc(1, sizeof(*u));
	struct io_uring_params params;
	int ret;

	if (!u)
		return -FI_ENOMEM;
	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN |
		       IORING_SETUP_TASKRUN_FLAG;
	params.cq_entries = (unsigned int)tcp_env.uring_entries * 4;
	ret = io_uring_queue_init_params((unsigned int)tcp_env.uring_entries,
					 &u->ring, &params);
	if (ret == -EINVAL) {	/* before 5.19: completions interrupt us */
		memset(&params, 0, sizeof(params));
		params.flags = IORING_SETUP_CQSIZE;
		params.cq_entries = (unsigned int)tcp_env.uring_entries * 4;
		ret = io_uring_queue_init_params(
			(unsigned int)tcp_env.uring_entries, &u->ring, &params);
	}
	if (ret) {
		free(u);
		return ret == -ENOMEM ? -FI_ENOMEM : -FI_ENOSYS;
	}
	if (!tcp_uring_probe(&u->ring)) {
		io_uring_queue_exit(&u->ring);
		free(u);
		return -FI_ENOSYS;
	}
	ep->io_priv = u;
	return 0;
}

static void tcp_uring_submit(struct tcp_uring *u)
{
	int ret;

	if (!u->pending)
		return;
	u->urgent = false;
	ret = io_uring_submit(&u->ring);
	if (ret > 0) {
		u->pending -= (unsigned int)ret < u->pending ?
			      (unsigned int)ret : u->pending;
	}
}

/* A free submission entry (submitting the queued ones if it is full). */
static struct io_uring_sqe *tcp_uring_sqe(struct tcp_uring *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

	if (!sqe) {
		tcp_uring_submit(u);
		sqe = io_uring_get_sqe(&u->ring);
	}
	if (sqe) {
		u->pending++;
		u->inflight++;
	}
	return sqe;
}

static void tcp_uring_arm_rx(struct tcp_ep *ep, struct tcp_conn *c)
{
	struct tcp_uring *u = tcp_uring(ep);
	struct io_uring_sqe *sqe;
	size_t n;

	if ((c->io_inflight & TCP_IO_RX) || !tcp_rx_open(c) ||
	    c->state == TCP_CONN_CONNECTING)
		return;
	n = tcp_rx_iov(c, c->rx_iov,
		       u->direct ? TCP_DIRECT_PAYLOAD_MAX : UINT64_MAX);
	if (!n) {
		tcp_conn_fail(c, TCP_EPROTO, "receive buffer full");
		return;
	}
	/* Direct polls read headers and small frames; only the rest of a
	 * payload is worth a request of its own. */
	if (u->direct && !c->rx_exact)
		return;
	sqe = tcp_uring_sqe(u);
	if (!sqe)
		return;		/* retried at the next poll */
	memset(&c->rx_msg, 0, sizeof(c->rx_msg));
	c->rx_msg.msg_iov = c->rx_iov;
	c->rx_msg.msg_iovlen = n;
	/* The rest of a payload is on its way as one stream: one completion
	 * for all of it instead of one per socket-buffer fill, each of which
	 * waits for this task to enter the kernel again (COOP_TASKRUN). A
	 * read-ahead into the connection buffer must not wait to fill. */
	io_uring_prep_recvmsg(sqe, c->fd, &c->rx_msg,
			      c->rx_exact ? MSG_WAITALL : 0);
	io_uring_sqe_set_data64(sqe, tcp_uring_ud(c, TCP_URING_RX));
	c->io_inflight |= TCP_IO_RX;
}

static void tcp_uring_arm_tx(struct tcp_ep *ep, struct tcp_conn *c)
{
	struct tcp_uring *u = tcp_uring(ep);
	struct io_uring_sqe *sqe;
	uint64_t bytes;

	if ((c->io_inflight & TCP_IO_TX) || !c->tx_head ||
	    c->state == TCP_CONN_CONNECTING || c->state == TCP_CONN_CLOSED)
		return;
	sqe = tcp_uring_sqe(u);
	if (!sqe)
		return;
	memset(&c->tx_msg, 0, sizeof(c->tx_msg));
	c->tx_msg.msg_iov = c->tx_iov;
	c->tx_msg.msg_iovlen = tcp_tx_iov(c, c->tx_iov, TCP_TX_IOV_MAX, &bytes);
	/* MSG_WAITALL: the kernel retries a short send itself (5.19+;
	 * ignored before), so a large frame costs one completion. */
	io_uring_prep_sendmsg(sqe, c->fd, &c->tx_msg,
			      MSG_NOSIGNAL | MSG_WAITALL);
	io_uring_sqe_set_data64(sqe, tcp_uring_ud(c, TCP_URING_TX));
	c->io_inflight |= TCP_IO_TX;
	u->urgent = true;
}

static int tcp_uring_arm_accept(struct tcp_ep *ep, struct tcp_listener *l)
{
	struct io_uring_sqe *sqe = tcp_uring_sqe(tcp_uring(ep));

	if (!sqe)
		return -FI_EAGAIN;
	io_uring_prep_accept(sqe, l->fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, tcp_uring_ud(l, TCP_URING_ACCEPT));
	l->accepting = true;
	return 0;
}

static int tcp_uring_listen(struct tcp_ep *ep, struct tcp_listener *l)
{
	int ret = tcp_uring_arm_accept(ep, l);

	tcp_uring_submit(tcp_uring(ep));
	return ret;
}

/* A connect ends when the socket becomes writable. */
static int tcp_uring_arm_connect(struct tcp_ep *ep, struct tcp_conn *c)
{
	struct io_uring_sqe *sqe = tcp_uring_sqe(tcp_uring(ep));

	if (!sqe)
		return -FI_EAGAIN;
	io_uring_prep_poll_add(sqe, c->fd, POLLOUT);
	io_uring_sqe_set_data64(sqe, tcp_uring_ud(c, TCP_URING_CONNECT));
	c->io_inflight |= TCP_IO_CONNECT;
	return 0;
}

static int tcp_uring_conn_add(struct tcp_ep *ep, struct tcp_conn *c)
{
	int ret;

	c->io_inflight = 0;
	if (c->state != TCP_CONN_CONNECTING) {
		tcp_uring_arm_rx(ep, c);
		tcp_uring_submit(tcp_uring(ep));
		return 0;
	}
	ret = tcp_uring_arm_connect(ep, c);
	tcp_uring_submit(tcp_uring(ep));
	return ret;
}

static void tcp_uring_cancel(struct tcp_uring *u, uint64_t ud)
{
	struct io_uring_sqe *sqe = tcp_uring_sqe(u);

	if (!sqe)
		return;
	io_uring_prep_cancel64(sqe, ud, 0);
	io_uring_sqe_set_data64(sqe, TCP_URING_CANCEL);
}

/* Cancel c's requests now: a poll-armed receive or send is removed from
 * its socket while io_uring_enter runs, so none of them copies into the
 * application's buffers after this returns. */
static void tcp_uring_conn_del(struct tcp_ep *ep, struct tcp_conn *c)
{
	struct tcp_uring *u = tcp_uring(ep);

	if (c->io_inflight & TCP_IO_RX)
		tcp_uring_cancel(u, tcp_uring_ud(c, TCP_URING_RX));
	if (c->io_inflight & TCP_IO_TX)
		tcp_uring_cancel(u, tcp_uring_ud(c, TCP_URING_TX));
	if (c->io_inflight & TCP_IO_CONNECT)
		tcp_uring_cancel(u, tcp_uring_ud(c, TCP_URING_CONNECT));
	tcp_uring_submit(u);
}

static bool tcp_uring_conn_idle(struct tcp_ep *ep, struct tcp_conn *c)
{
	(void)ep;
	return !c->io_inflight;
}

static void tcp_uring_tx_kick(struct tcp_ep *ep, struct tcp_conn *c)
{
	/* With no send in flight, nothing can be overtaken: write what the
	 * socket takes now, and let a request carry the rest. */
	if (tcp_uring(ep)->direct && !ep->bulk_until_ns &&
	    !(c->io_inflight & TCP_IO_TX) &&
	    c->state == TCP_CONN_READY && tcp_direct_write(c))
		return;
	tcp_uring_arm_tx(ep, c);
	tcp_uring_submit(tcp_uring(ep));
}

static void tcp_uring_rx_kick(struct tcp_ep *ep, struct tcp_conn *c)
{
	tcp_uring_arm_rx(ep, c);
}

static void tcp_uring_on_rx(struct tcp_ep *ep, struct tcp_conn *c, int res)
{
	c->io_inflight &= ~TCP_IO_RX;
	if (c->state == TCP_CONN_CLOSED)
		return;
	if (res == -EAGAIN || res == -EINTR || res == -ECANCELED) {
		tcp_uring_arm_rx(ep, c);
		return;
	}
	tcp_rx_landed(c, res);
	tcp_uring_arm_rx(ep, c);
}

static void tcp_uring_on_tx(struct tcp_ep *ep, struct tcp_conn *c, int res)
{
	c->io_inflight &= ~TCP_IO_TX;
	if (c->state == TCP_CONN_CLOSED)
		return;
	if (res < 0 && res != -EAGAIN && res != -EINTR && res != -ECANCELED) {
		tcp_conn_fail(c, -res, "send failed");
		return;
	}
	if (res > 0)
		tcp_tx_sent(c, (size_t)res);
	tcp_uring_arm_tx(ep, c);
}

static void tcp_uring_on_connect(struct tcp_ep *ep, struct tcp_conn *c,
				 int res)
{
	socklen_t len = sizeof(int);
	int err = 0;

	c->io_inflight &= ~TCP_IO_CONNECT;
	if (c->state != TCP_CONN_CONNECTING)
		return;
	if (res == -ECANCELED) {	/* its submitter exited */
		tcp_uring_arm_connect(ep, c);
		return;
	}
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	tcp_conn_connected(c, err);
	if (c->state != TCP_CONN_CLOSED) {
		tcp_uring_arm_rx(ep, c);
		tcp_uring_arm_tx(ep, c);
	}
}

static void tcp_uring_on_accept(struct tcp_ep *ep, struct tcp_listener *l,
				int res)
{
	struct tcp_uring *u = tcp_uring(ep);

	l->accepting = false;
	if (u->closing) {
		if (res >= 0)
			close(res);
		return;
	}
	if (res >= 0)
		tcp_conn_accepted(ep, res);
	else if (res != -EINTR && res != -ECONNABORTED && res != -EAGAIN &&
		 res != -ECANCELED)
		WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_CTRL, "accept: %s\n",
			strerror(-res));
	tcp_uring_arm_accept(ep, l);
}

static void tcp_uring_dispatch(struct tcp_ep *ep, uint64_t ud, int res)
{
	void *p = (void *)(uintptr_t)(ud & ~TCP_URING_KIND_MASK);

	switch (ud & TCP_URING_KIND_MASK) {
	case TCP_URING_RX:
		tcp_uring_on_rx(ep, p, res);
		break;
	case TCP_URING_TX:
		tcp_uring_on_tx(ep, p, res);
		break;
	case TCP_URING_CONNECT:
		tcp_uring_on_connect(ep, p, res);
		break;
	case TCP_URING_ACCEPT:
		tcp_uring_on_accept(ep, p, res);
		break;
	default:
		break;
	}
}

/* Reap what completed; returns how many. */
static unsigned int tcp_uring_reap(struct tcp_ep *ep)
{
	struct tcp_uring *u = tcp_uring(ep);
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	io_uring_for_each_cqe(&u->ring, head, cqe) {
		/* Advance first: a handler may reap recursively (it never
		 * does today, but the ring must stay consistent). */
		uint64_t ud = cqe->user_data;
		int res = cqe->res;

		io_uring_cq_advance(&u->ring, 1);
		u->inflight--;
		n++;
		tcp_uring_dispatch(ep, ud, res);
	}
	return n;
}

/* With IORING_SETUP_COOP_TASKRUN the kernel finishes a request (copies
 * the received bytes, posts the completion) the next time this task
 * enters it, instead of interrupting the task where it runs; it raises
 * IORING_SQ_TASKRUN meanwhile. A poll enters only then: none while
 * nothing happened, one when something did (a send's own entry does it
 * too). */
static void tcp_uring_taskrun(struct tcp_uring *u)
{
	unsigned int flags = IO_URING_READ_ONCE(*u->ring.sq.kflags);

	if (WEFT_UNLIKELY(flags & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW)))
		(void)io_uring_get_events(&u->ring);
}

/* Read the connections that have no receive in flight; one whose next
 * read is the rest of a payload gets a MSG_WAITALL request for it. */
static void tcp_uring_poll_direct(struct tcp_ep *ep)
{
	struct tcp_conn *c;

	for (c = ep->conns; c; c = c->next) {
		if (c->state != TCP_CONN_READY || (c->io_inflight & TCP_IO_RX))
			continue;
		if (tcp_direct_read(c, true) == TCP_DIRECT_EXACT)
			tcp_uring_arm_rx(ep, c);
	}
}

/* Leaving direct reads: every connection gets its receive request back. */
static void tcp_uring_direct_set(struct tcp_ep *ep, bool direct)
{
	struct tcp_uring *u = tcp_uring(ep);
	struct tcp_conn *c;

	u->direct = direct;
	if (direct)
		return;
	for (c = ep->conns; c; c = c->next)
		tcp_uring_arm_rx(ep, c);
}

static void tcp_uring_poll(struct tcp_ep *ep)
{
	struct tcp_uring *u = tcp_uring(ep);
	bool direct = tcp_direct_ok(ep);

	if (WEFT_UNLIKELY(direct != u->direct))
		tcp_uring_direct_set(ep, direct);
	if (u->pending)
		tcp_uring_submit(u);
	else
		tcp_uring_taskrun(u);
	tcp_uring_reap(ep);
	if (direct)
		tcp_uring_poll_direct(ep);
	/* Sends queued by the completions go out now; re-armed receives
	 * wait for the next send or poll. */
	if (u->urgent)
		tcp_uring_submit(u);
}

static void tcp_uring_flush(struct tcp_ep *ep, struct tcp_conn *c)
{
	tcp_uring_tx_kick(ep, c);
}

/* Cancel everything and wait (bounded) for every completion, so that no
 * request touches memory freed after this. */
static void tcp_uring_close(struct tcp_ep *ep)
{
	struct tcp_uring *u = tcp_uring(ep);
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 10000000 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int tries = 200;

	if (!u)
		return;
	u->closing = true;
	sqe = tcp_uring_sqe(u);
	if (sqe) {
		io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY |
				       IORING_ASYNC_CANCEL_ALL);
		io_uring_sqe_set_data64(sqe, TCP_URING_CANCEL);
	}
	tcp_uring_submit(u);
	while (u->inflight && tries--) {
		tcp_uring_reap(ep);
		if (u->inflight)
			(void)io_uring_wait_cqe_timeout(&u->ring, &cqe, &ts);
	}
	if (u->inflight)
		FI_WARN(&tcp_prov, FI_LOG_EP_CTRL,
			"io_uring: %u requests still in flight at close\n",
			u->inflight);
	io_uring_queue_exit(&u->ring);
	free(u);
	ep->io_priv = NULL;
}

const struct tcp_io_ops tcp_io_uring = {
	.name = "io_uring",
	.open = tcp_uring_open,
	.close = tcp_uring_close,
	.listen = tcp_uring_listen,
	.conn_add = tcp_uring_conn_add,
	.conn_del = tcp_uring_conn_del,
	.conn_idle = tcp_uring_conn_idle,
	.tx_kick = tcp_uring_tx_kick,
	.rx_kick = tcp_uring_rx_kick,
	.poll = tcp_uring_poll,
	.flush = tcp_uring_flush,
};
