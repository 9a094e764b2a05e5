/* SPDX-License-Identifier: MIT */
/*
 * Sending messages (untagged and tagged). Up to the eager size: one MSG
 * frame, header and the application's bytes written together, completed
 * once the kernel took them all. Larger: an RTS; the receiver answers
 * with a CTS for what fits, and the payload follows as DATA frames,
 * split across the peer's connections when it has several and the
 * message is at least FI_TCP_STRIPE_MIN (tcp_send_on_cts).
 * FI_DELIVERY_COMPLETE sends ask the receiver for an ACK.
 */
#include "weft/compat.h"

#include <string.h>

#include "tcp.h"

static inline uint64_t tcp_send_comp_flags(uint64_t flags)
{
	return FI_SEND | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
}

static inline uint16_t tcp_send_frame_flags(uint64_t flags)
{
	return ((flags & FI_TAGGED) ? TCP_F_TAGGED : 0) |
	       ((flags & FI_REMOTE_CQ_DATA) ? TCP_F_CQ_DATA : 0);
}

static void tcp_send_op_fill(struct tcp_ep *ep, struct tcp_op *op,
			     const struct iovec *iov, size_t count,
			     size_t len, void *context, uint64_t flags)
{
	op->context = context;
	op->comp_flags = tcp_send_comp_flags(flags) | (flags & UTIL_COLL_FLAG);
	op->want_comp = util_ep_tx_wants_comp(&ep->util, flags);
	op->cntr = UTIL_CNTR_SEND;
	op->len = len;
	op->frames = 1;
	op->iov_count = count;
	memcpy(op->iov, iov, count * sizeof(*iov));
}

/* RTS, or an eager MSG that asks for an ACK: an op waits for the answer. */
static ssize_t tcp_send_with_op(struct tcp_ep *ep, struct tcp_peer *peer,
				const struct iovec *iov, size_t count,
				size_t len, uint64_t tag, uint64_t data,
				void *context, uint64_t flags, bool rndv)
{
	struct tcp_hdr h = { .flags = tcp_send_frame_flags(flags), .tag = tag,
			     .data = data };
	struct tcp_op *op;
	struct tcp_tx *tx;

	if (flags & FI_INJECT) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"inject of %zu bytes exceeds inject_size\n", len);
		return -FI_EINVAL;
	}
	op = tcp_op_get(ep, peer, rndv ? TCP_OPT_RNDV : TCP_OPT_SEND_ACK);
	if (!op)
		return -FI_EAGAIN;
	tx = tcp_tx_get(ep);
	if (!tx) {
		tcp_op_release(ep, op);
		return -FI_EAGAIN;
	}
	tcp_send_op_fill(ep, op, iov, count, len, context, flags);
	if (flags & UTIL_COLL_FLAG)
		h.flags |= TCP_F_COLL;
	h.id = tcp_op_id(op);
	if (rndv) {
		h.op = TCP_OP_RTS;
		h.size = len;
		tcp_tx_frame(tx, &h, NULL, 0);
	} else {
		h.op = TCP_OP_MSG;
		h.flags |= TCP_F_ACK_REQ;
		h.len = len;
		tcp_tx_frame(tx, &h, iov, count);
	}
	tx->kind = TCP_TX_OP;
	tx->op = op;
	tcp_peer_push(ep, peer, tx, flags & FI_MORE);
	return 0;
}

/* One MSG frame from the application's buffers. */
static inline ssize_t tcp_send_eager(struct tcp_ep *ep, struct tcp_peer *peer,
				     const struct iovec *iov, size_t count,
				     size_t len, uint64_t tag, uint64_t data,
				     void *context, uint64_t flags)
{
	struct tcp_hdr h = { .op = TCP_OP_MSG,
			     .flags = tcp_send_frame_flags(flags),
			     .len = len, .tag = tag, .data = data };
	bool comp = util_ep_tx_wants_comp(&ep->util, flags);
	struct iovec copy;
	struct tcp_tx *tx;

	if (comp && WEFT_UNLIKELY(!util_cq_space(ep->util.tx_cq)))
		return -FI_EAGAIN;
	tx = tcp_tx_get(ep);
	if (WEFT_UNLIKELY(!tx))
		return -FI_EAGAIN;
	if (flags & FI_INJECT) {
		/* len 0: the buffer may be NULL, which memcpy must not get */
		if (WEFT_LIKELY(count == 1 && len))
			memcpy(tx->data, iov[0].iov_base, len);
		else
			util_iov_copy_from(iov, count, 0, tx->data, len);
		copy.iov_base = tx->data;
		copy.iov_len = len;
		iov = &copy;
		count = 1;
	}
	tcp_tx_frame(tx, &h, iov, count);
	tx->kind = TCP_TX_SEND;
	tx->context = context;
	tx->comp_flags = tcp_send_comp_flags(flags);
	tx->want_comp = comp;
	tx->inject = flags & UTIL_OP_NO_COMP;
	tcp_peer_push(ep, peer, tx, flags & FI_MORE);
	return 0;
}

ssize_t tcp_send_post(struct tcp_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag,
		      uint64_t data, void *context, uint64_t flags)
{
	struct tcp_peer *peer;
	size_t len;
	ssize_t ret;

	if (WEFT_UNLIKELY(count > TCP_IOV_LIMIT || (count && !iov))) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA, "bad iov count %zu\n", count);
		return -FI_EINVAL;
	}
	len = WEFT_LIKELY(count == 1) ? iov[0].iov_len :
					util_iov_total(iov, count);
	if (WEFT_UNLIKELY((flags & FI_INJECT) && len > TCP_INJECT_MAX)) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"inject of %zu bytes exceeds inject_size\n", len);
		return -FI_EINVAL;
	}
	if (WEFT_UNLIKELY(len > TCP_MAX_MSG_SIZE)) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"message of %zu bytes exceeds max_msg_size\n", len);
		return -FI_EMSGSIZE;
	}
	util_lock_acquire(&ep->util.lock);
	ret = tcp_peer_tx(ep, dest, &peer);
	if (WEFT_UNLIKELY(ret))
		goto unlock;
	if (WEFT_LIKELY(len <= peer->eager_max &&
			!(flags & FI_DELIVERY_COMPLETE)))
		ret = tcp_send_eager(ep, peer, iov, count, len, tag, data,
				     context, flags);
	else
		ret = tcp_send_with_op(ep, peer, iov, count, len, tag, data,
				       context, flags, len > peer->eager_max);
unlock:
	util_lock_release(&ep->util.lock);
	return ret;
}

ssize_t tcp_inject_post(struct tcp_ep *ep, const void *buf, size_t len,
			fi_addr_t dest, uint64_t tag, uint64_t data,
			uint64_t flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	if (WEFT_UNLIKELY(!buf && len)) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"inject of %zu bytes from NULL\n", len);
		return -FI_EINVAL;
	}
	return tcp_send_post(ep, &iov, 1, dest, tag, data, NULL,
			     flags | FI_INJECT | UTIL_OP_NO_COMP);
}

/* The collective engine's send (util_coll_xport.send, ep->lock held):
 * up to the eager size one MSG from the engine's buffer, and beyond it a
 * rendezvous, both completing through tcp_coll_send_done (0) once the
 * kernel took the last byte. Never complete at once from a copy: progress
 * is manual, and a frame still waiting in this process (for the
 * handshake of a first contact, or for the next submission) would leave
 * the peer waiting for as long as this rank, its own collective done,
 * stays out of the library (a torch rank sitting in compute or in
 * another backend). */
ssize_t tcp_coll_send(struct tcp_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag, void *ctx)
{
	size_t len = util_iov_total(iov, count);
	struct tcp_hdr h = { .op = TCP_OP_MSG, .flags = TCP_F_TAGGED | TCP_F_COLL,
			     .len = len, .tag = tag };
	struct tcp_peer *peer;
	struct tcp_tx *tx;
	ssize_t ret;

	ret = tcp_peer_tx(ep, dest, &peer);
	if (ret)
		return ret;
	if (len > peer->eager_max)
		return tcp_send_with_op(ep, peer, iov, count, len, tag, 0, ctx,
					FI_TAGGED | UTIL_COLL_FLAG, true);
	tx = tcp_tx_get(ep);
	if (!tx)
		return -FI_EAGAIN;
	tx->kind = TCP_TX_COLL;
	tx->context = ctx;
	tcp_tx_frame(tx, &h, iov, count);
	/* tx may be written and gone when this returns */
	tcp_peer_push(ep, peer, tx, false);
	return 0;
}

int tcp_send_ctrl(struct tcp_ep *ep, struct tcp_peer *peer,
		  struct tcp_hdr *h)
{
	struct tcp_tx *tx;

	if (!peer || peer->state == TCP_PEER_IDLE)
		return -FI_ENOTCONN;
	tx = tcp_tx_ctrl(ep);
	if (!tx)
		return -FI_ENOMEM;
	tcp_tx_frame(tx, h, NULL, 0);
	tcp_peer_push(ep, peer, tx, false);
	return 0;
}

/* The connections a rendezvous may use toward peer: the primary, then
 * every ready stripe. */
static size_t tcp_send_stripes(struct tcp_peer *peer, struct tcp_conn **out)
{
	size_t k, n = 0;

	for (k = 0; k < TCP_STRIPE_MAX; k++)
		if (peer->stripe[k] && peer->stripe[k]->state == TCP_CONN_READY)
			out[n++] = peer->stripe[k];
	return n;
}

/* One DATA frame of op: bytes [off, off + len) toward xfer. */
static int tcp_send_data_frame(struct tcp_ep *ep, struct tcp_op *op,
			       uint64_t xfer, uint64_t off, uint64_t len,
			       struct tcp_tx **out)
{
	struct tcp_hdr h = { .op = TCP_OP_DATA, .len = len, .xfer = xfer,
			     .offset = off };
	struct iovec iov[TCP_IOV_LIMIT];
	size_t n = util_iov_slice(op->iov, op->iov_count, off, len, iov);
	struct tcp_tx *tx = tcp_tx_ctrl(ep);

	if (!tx)
		return -FI_ENOMEM;
	tcp_tx_frame(tx, &h, iov, n);
	tx->kind = TCP_TX_OP;
	tx->op = op;
	*out = tx;
	return 0;
}

/* Split granted bytes over the stripes, 4 KiB aligned pieces. */
static int tcp_send_data(struct tcp_ep *ep, struct tcp_op *op,
			 struct tcp_peer *peer, uint64_t xfer, uint64_t granted)
{
	struct tcp_conn *conns[TCP_STRIPE_MAX];
	struct tcp_tx *tx[TCP_STRIPE_MAX];
	size_t n = 1, k;
	uint64_t piece, off = 0;

	if (granted >= ep->stripe_min)
		n = tcp_send_stripes(peer, conns);
	if (n <= 1) {
		n = 1;
		conns[0] = peer->conn;
	}
	piece = ((granted / n) + 4095) & ~(uint64_t)4095;
	for (k = 0; k < n && off < granted; k++) {
		uint64_t len = granted - off < piece ? granted - off : piece;

		if (tcp_send_data_frame(ep, op, xfer, off, len, &tx[k])) {
			while (k--)
				tcp_tx_put(ep, tx[k]);
			return -FI_ENOMEM;
		}
		off += len;
	}
	n = k;
	op->frames += (uint32_t)n;
	for (k = 0; k < n; k++) {
		/* A push may write at once and find the peer gone (epoll):
		 * the op ended with it, the other pieces go nowhere. */
		if (peer->state != TCP_PEER_READY) {
			tcp_tx_put(ep, tx[k]);
			continue;
		}
		tcp_conn_push(conns[k], tx[k], false);
	}
	return 0;
}

int tcp_send_on_cts(struct tcp_conn *c)
{
	struct tcp_ep *ep = c->ep;
	const struct tcp_hdr *h = &c->rh;
	struct tcp_op *op = tcp_op_find(ep, c->peer, h->id);

	uint64_t id = h->id;
	int err;

	if (!op || op->type != TCP_OPT_RNDV || op->answered ||
	    h->size > op->len)
		return -TCP_EPROTO;
	/* Answered only once the DATA frames are counted: one written at
	 * once must not end the op before its siblings are queued. */
	err = h->size && tcp_send_data(ep, op, c->peer, h->xfer, h->size) ?
	      FI_ENOMEM : 0;
	/* A write that failed the peer meanwhile ended the op with it. */
	if (tcp_op_find(ep, c->peer, id) != op)
		return 0;
	tcp_op_answer(ep, op, err);
	return 0;
}

int tcp_send_on_ack(struct tcp_conn *c)
{
	struct tcp_ep *ep = c->ep;
	struct tcp_op *op = tcp_op_find(ep, c->peer, c->rh.id);

	if (!op || op->answered ||
	    (op->type != TCP_OPT_SEND_ACK && op->type != TCP_OPT_WRITE &&
	     op->type != TCP_OPT_RNDV))
		return -TCP_EPROTO;
	tcp_op_answer(ep, op, tcp_wire_status(c->rh.status));
	return 0;
}
