/* SPDX-License-Identifier: MIT */
/*
 * The receive side of a connection: bytes land in its buffer (rbuf,
 * rhead..rtail unparsed); each frame header is checked (tcp_frame.c)
 * against the endpoint's limits and the connection's state, then its
 * handler says where the payload goes (c->sink). Payload bytes already in
 * the buffer are copied there; the rest is read straight into the
 * destination, with the buffer behind it for the frames that follow
 * (tcp_rx_iov), so a large payload crosses memory once.
 *
 * A frame whose handler lacks memory (unexpected-message buffers full)
 * stays unparsed and the connection stops reading (rx_stalled) until
 * progress retries it: the sender is held back by TCP's own flow control.
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "tcp.h"
#include "tcp_io.h"

int tcp_rx_conn_init(struct tcp_conn *c)
{
	c->rcap = (uint32_t)tcp_env.rx_buf_size;
	c->rbuf = malloc(c->rcap);
	return c->rbuf ? 0 : -FI_ENOMEM;
}

/* Frames each connection state accepts. */
static bool tcp_rx_allowed(const struct tcp_conn *c, uint8_t op)
{
	switch (c->state) {
	case TCP_CONN_ACCEPTED:
		return op == TCP_OP_HELLO;
	case TCP_CONN_HELLO_WAIT:
		return op == TCP_OP_HELLO_ACK || op == TCP_OP_REJECT;
	case TCP_CONN_READY:
		if (op == TCP_OP_HELLO || op == TCP_OP_HELLO_ACK ||
		    op == TCP_OP_REJECT)
			return false;
		/* Stripes carry rendezvous data only. */
		return !c->role || op == TCP_OP_DATA || op == TCP_OP_PING ||
		       op == TCP_OP_PONG;
	default:
		return false;
	}
}

static void tcp_rx_sink_scratch(struct tcp_conn *c)
{
	c->sink.iov[0].iov_base = c->scratch;
	c->sink.iov[0].iov_len = c->rh.len;
	c->sink.count = 1;
	c->sink.cap = c->rh.len;
}

static int tcp_rx_ping(struct tcp_conn *c)
{
	struct tcp_hdr h = { .op = TCP_OP_PONG };

	return tcp_send_ctrl(c->ep, c->peer, &h);
}

/* A frame's header arrived: set the sink up. 0, 1 (handled whole, payload
 * included), -FI_EAGAIN (no memory yet: retry later), or an error (the
 * connection fails). */
static int tcp_rx_frame_begin(struct tcp_conn *c)
{
	c->sink.done = 0;
	c->sink.count = 0;
	c->sink.cap = 0;
	c->sink.arg = NULL;
	c->sink.status = 0;
	switch (c->rh.op) {
	case TCP_OP_MSG:
		return tcp_recv_msg_begin(c);
	case TCP_OP_HELLO:
	case TCP_OP_HELLO_ACK:
	case TCP_OP_REJECT:
		tcp_rx_sink_scratch(c);
		return 0;
	case TCP_OP_RTS:
		return tcp_recv_rts(c);
	case TCP_OP_CTS:
		return tcp_send_on_cts(c);
	case TCP_OP_DATA:
		return tcp_recv_data_begin(c);
	case TCP_OP_ACK:
		return tcp_send_on_ack(c);
	case TCP_OP_WRITE:
		return tcp_rma_write_begin(c);
	case TCP_OP_READ:
		return tcp_rma_read_req(c);
	case TCP_OP_READ_RESP:
		return tcp_rma_read_resp_begin(c);
	case TCP_OP_ATOMIC:
		return tcp_atomic_begin(c);
	case TCP_OP_ATOMIC_RESP:
		return tcp_atomic_resp_begin(c);
	case TCP_OP_PING:
		return tcp_rx_ping(c);
	default:	/* PONG: the bytes were the answer */
		return 0;
	}
}

/* Its whole payload arrived. */
static void tcp_rx_frame_end(struct tcp_conn *c)
{
	switch (c->rh.op) {
	case TCP_OP_MSG:
		tcp_recv_msg_end(c);
		break;
	case TCP_OP_HELLO:
		tcp_conn_on_hello(c, c->scratch, c->rh.len);
		break;
	case TCP_OP_HELLO_ACK:
		tcp_conn_on_hello_ack(c, c->scratch, c->rh.len);
		break;
	case TCP_OP_REJECT:
		tcp_conn_on_reject(c, c->scratch, c->rh.len);
		break;
	case TCP_OP_DATA:
		tcp_recv_data_end(c);
		break;
	case TCP_OP_WRITE:
		tcp_rma_write_end(c);
		break;
	case TCP_OP_READ_RESP:
		tcp_rma_read_resp_end(c);
		break;
	case TCP_OP_ATOMIC:
		tcp_atomic_end(c);
		break;
	case TCP_OP_ATOMIC_RESP:
		tcp_atomic_resp_end(c);
		break;
	default:
		break;
	}
}

/* n payload bytes at src: the part within cap lands, the rest is
 * dropped (a truncated receive). */
static void tcp_rx_sink_copy(struct tcp_sink *s, const uint8_t *src, size_t n)
{
	uint64_t keep;

	if (s->done < s->cap) {
		keep = s->cap - s->done < n ? s->cap - s->done : n;
		if (WEFT_LIKELY(s->count == 1))
			memcpy((uint8_t *)s->iov[0].iov_base + s->done, src,
			       keep);
		else
			util_iov_copy_to(s->iov, s->count, s->done, src, keep);
	}
	s->done += n;
}

static void tcp_rx_stall(struct tcp_conn *c)
{
	c->rx_stalled = true;
	c->ep->stalled = true;
}

/* Take one frame from the buffer: 1 to go on, 0 to stop (incomplete
 * header, payload to read, stalled or closed). */
static int tcp_rx_one(struct tcp_conn *c)
{
	const char *why;
	uint64_t take;
	uint32_t hlen;
	int ret;

	ret = tcp_frame_take(c->rbuf + c->rhead, c->rtail - c->rhead,
			     &c->ep->lim, &c->rh, &why);
	if (ret <= 0) {
		if (ret)
			goto bad;
		return 0;
	}
	hlen = (uint32_t)ret;
	if (!tcp_rx_allowed(c, c->rh.op)) {
		why = "frame not allowed in this connection state";
		goto bad;
	}
	ret = tcp_rx_frame_begin(c);
	if (ret == 1) {
		c->rhead += hlen + (uint32_t)c->rh.len;
		return 1;
	}
	if (ret == -FI_EAGAIN) {
		tcp_rx_stall(c);
		return 0;
	}
	if (ret) {
		tcp_conn_fail(c, -ret, "bad frame from peer");
		return 0;
	}
	c->rhead += hlen;
	tcp_ep_saw_frame(c->ep, c->rh.len);
	if (c->rh.len) {
		take = c->rtail - c->rhead;
		if (take > c->rh.len)
			take = c->rh.len;
		tcp_rx_sink_copy(&c->sink, c->rbuf + c->rhead, take);
		c->rhead += (uint32_t)take;
		if (c->sink.done < c->rh.len) {
			c->rx_payload = true;
			return 0;
		}
	}
	tcp_rx_frame_end(c);
	return c->state != TCP_CONN_CLOSED;
bad:
	tcp_conn_fail(c, TCP_EPROTO, why);
	return 0;
}

static void tcp_rx_parse(struct tcp_conn *c)
{
	while (tcp_rx_open(c) && !c->rx_payload && tcp_rx_one(c))
		;
	if (c->rhead == c->rtail)
		c->rhead = c->rtail = 0;
}

/* Room after rtail, moving the unparsed bytes to the front when the
 * space left is small. */
static uint32_t tcp_rx_room(struct tcp_conn *c)
{
	uint32_t used = c->rtail - c->rhead;

	if (c->rhead && (c->rcap - c->rtail < TCP_HDR_MAX ||
			 c->rcap - c->rtail < c->rcap / 4)) {
		memmove(c->rbuf, c->rbuf + c->rhead, used);
		c->rhead = 0;
		c->rtail = used;
	}
	return c->rcap - c->rtail;
}

size_t tcp_rx_iov(struct tcp_conn *c, struct iovec *iov, uint64_t exact_min)
{
	struct tcp_sink *s = &c->sink;
	uint64_t left, want;
	size_t n = 0, i;
	uint32_t room;

	c->rx_exact = false;
	if (c->rx_payload) {
		left = c->rh.len - s->done;
		if (s->done < s->cap) {
			want = s->cap - s->done;
			n = util_iov_slice(s->iov, s->count, s->done, want, iov);
			for (i = 0, want = 0; i < n; i++)
				want += iov[i].iov_len;
		} else {
			/* The truncated tail goes to the endpoint's sink. */
			want = left < c->ep->sink_len ? left : c->ep->sink_len;
			iov[0].iov_base = c->ep->sink_buf;
			iov[0].iov_len = want;
			n = 1;
		}
		/* Read ahead only if these iovecs end the payload. */
		if (want < left || left >= exact_min) {
			c->rx_exact = true;
			return n;
		}
	}
	room = tcp_rx_room(c);		/* may move the unparsed bytes */
	iov[n].iov_base = c->rbuf + c->rtail;
	iov[n].iov_len = room;
	return room ? n + 1 : n;
}

void tcp_rx_landed(struct tcp_conn *c, ssize_t n)
{
	uint64_t take;

	if (WEFT_UNLIKELY(n <= 0)) {
		tcp_conn_fail(c, n ? (int)-n : FI_ECONNRESET,
			      n ? "receive failed" : "closed by the peer");
		return;
	}
	c->rx_bytes += (uint64_t)n;
	if (c->rx_payload) {
		take = c->rh.len - c->sink.done;
		if (take > (uint64_t)n)
			take = (uint64_t)n;
		c->sink.done += take;
		n -= (ssize_t)take;
		c->rtail += (uint32_t)n;
		if (c->sink.done < c->rh.len)
			return;
		c->rx_payload = false;
		tcp_rx_frame_end(c);
	} else {
		c->rtail += (uint32_t)n;
	}
	tcp_rx_parse(c);
}

void tcp_rx_retry_stalled(struct tcp_ep *ep)
{
	struct tcp_conn *c;
	bool still = false;

	ep->stalled = false;
	DL_FOREACH(ep->conns, c) {
		if (!c->rx_stalled || c->state == TCP_CONN_CLOSED)
			continue;
		c->rx_stalled = false;
		tcp_rx_parse(c);
		if (c->rx_stalled)
			still = true;
		else if (c->state != TCP_CONN_CLOSED)
			ep->io->rx_kick(ep, c);
	}
	ep->stalled |= still;
}

void tcp_rx_abort(struct tcp_conn *c, int err)
{
	if (c->rx_payload && c->rh.op == TCP_OP_MSG)
		tcp_recv_msg_abort(c, err);
	c->rx_payload = false;
	c->rx_stalled = false;
}
