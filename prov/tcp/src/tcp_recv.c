/* SPDX-License-Identifier: MIT */
/*
 * The receive side of messages on util_srx. An eager MSG is matched when
 * its header arrives: into a posted receive its payload goes straight
 * (from the connection's buffer, then read directly); otherwise into an
 * unexpected entry, which joins the unexpected queue once its payload is
 * complete. A rendezvous RTS is matched likewise; a matched one gets a
 * transfer (struct tcp_xfer) and a CTS granting what fits, and its DATA
 * frames land at their offsets, on whichever connection they come.
 *
 * Unexpected payloads use bounded memory: inline bytes in the entry, a
 * pool of eager-size buffers, or the heap for larger ones from a peer
 * with a larger FI_TCP_EAGER_SIZE, all within FI_TCP_UNEXP_MEM. When it
 * runs out, the connection stalls (tcp_rx.c) until receives drain it.
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <string.h>

#include <utlist.h>

#include "tcp.h"

enum { TCP_UBUF_INLINE, TCP_UBUF_POOL, TCP_UBUF_HEAP };

static struct tcp_ep *tcp_srx_ep(struct util_srx *srx)
{
	return container_of(srx, struct tcp_ep, srx);
}

static void tcp_unexp_free(struct tcp_ep *ep, struct tcp_unexp *ux)
{
	if (ux->buf_kind == TCP_UBUF_POOL) {
		util_pool_put(&ep->ubuf_pool, ux->buf);
	} else if (ux->buf_kind == TCP_UBUF_HEAP) {
		ep->unexp_heap -= ux->len;
		free(ux->buf);
	}
	util_pool_put(&ep->unexp_pool, ux);
}

/* Queue ux as unexpected. A sender the AV does not know yet (its address
 * is inserted after its first messages arrived, as MPI ranks starting at
 * different times do) leaves the source unknown: remember to look again
 * before the next receive is posted. */
static void tcp_recv_add_unexp(struct tcp_ep *ep, unsigned int cls,
			       struct tcp_unexp *ux)
{
	if (ux->srx.match.src == FI_ADDR_NOTAVAIL &&
	    ((ep->util.caps & (FI_SOURCE | FI_DIRECTED_RECV)) ||
	     cls == UTIL_SRX_COLL))
		__atomic_store_n(&ep->unexp_unknown, true, __ATOMIC_RELAXED);
	util_srx_add_unexp(&ep->srx, cls, &ux->srx);
}

static bool tcp_recv_resolve_queue(struct tcp_ep *ep,
				   struct util_match_queue *q)
{
	struct util_unexp_entry *u;
	struct tcp_unexp *ux;
	bool unknown = false;

	DL_FOREACH(q->unexp, u) {
		if (u->src != FI_ADDR_NOTAVAIL)
			continue;
		ux = container_of(u, struct tcp_unexp, srx.match);
		u->src = tcp_peer_fi_addr(ep, ux->peer);
		unknown |= u->src == FI_ADDR_NOTAVAIL;
	}
	return unknown;
}

/* Only when the AV gained addresses since the last look: senders it
 * still lacks cost nothing per post. Queue order is kept, so the oldest
 * message of a sender is still the first a receive finds. */
void tcp_recv_resolve_src_locked(struct tcp_ep *ep)
{
	uint64_t gen = tcp_av_gen_now();
	bool unknown;

	if (ep->unexp_unknown && gen != ep->unknown_gen) {
		unknown = tcp_recv_resolve_queue(ep, &ep->srx.msg_q);
		unknown |= tcp_recv_resolve_queue(ep, &ep->srx.tag_q);
		unknown |= tcp_recv_resolve_queue(ep, &ep->srx.coll_q);
		ep->unknown_gen = gen;
		__atomic_store_n(&ep->unexp_unknown, unknown,
				 __ATOMIC_RELAXED);
	}
}

void tcp_recv_resolve_src_slow(struct tcp_ep *ep)
{
	util_lock_acquire(&ep->util.lock);
	tcp_recv_resolve_src_locked(ep);
	util_lock_release(&ep->util.lock);
}

static void tcp_recv_ack(struct tcp_ep *ep, struct tcp_peer *peer,
			 uint64_t id, int status)
{
	struct tcp_hdr h = { .op = TCP_OP_ACK, .id = id,
			     .status = (uint32_t)status };

	if (tcp_send_ctrl(ep, peer, &h))
		WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_DATA, "ACK not sent\n");
}

static void tcp_recv_cts(struct tcp_ep *ep, struct tcp_peer *peer,
			 uint64_t id, uint64_t xfer, uint64_t size)
{
	struct tcp_hdr h = { .op = TCP_OP_CTS, .id = id, .xfer = xfer,
			     .size = size };

	if (tcp_send_ctrl(ep, peer, &h))
		WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_DATA, "CTS not sent\n");
}

/* A matched RTS: grant what fits in dest, or end it at once. */
static void tcp_recv_rts_matched(struct tcp_ep *ep, struct tcp_peer *peer,
				 const struct util_srx_dest *dest,
				 const struct util_srx_msg *msg, uint64_t id)
{
	uint64_t granted = msg->size < dest->cap ? msg->size : dest->cap;
	struct tcp_xfer *x;

	if (peer->state != TCP_PEER_READY) {
		util_srx_complete(&ep->srx, dest, msg, 0, FI_EIO, 0);
		return;
	}
	if (!granted) {
		tcp_recv_cts(ep, peer, id, 0, 0);
		util_srx_complete(&ep->srx, dest, msg, 0, 0, 0);
		return;
	}
	x = tcp_xfer_get(ep, peer);
	if (!x) {
		WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_DATA,
			"too many rendezvous receives in flight\n");
		tcp_recv_ack(ep, peer, id, FI_ENOMEM);
		util_srx_complete(&ep->srx, dest, msg, 0, FI_ENOMEM, 0);
		return;
	}
	x->dest = *dest;
	x->msg = *msg;
	x->granted = granted;
	tcp_recv_cts(ep, peer, id, tcp_xfer_id(x), granted);
}

static void tcp_unexp_msg(const struct tcp_unexp *ux, struct util_srx_msg *m)
{
	m->src = ux->srx.match.src;
	m->tag = ux->srx.match.tag;
	m->size = ux->srx.size;
	m->data = ux->srx.data;
	m->flags = ux->srx.flags;
	m->peer = ux->peer;
}

static void tcp_unexp_deliver(struct tcp_ep *ep,
			      const struct util_srx_dest *dest,
			      struct tcp_unexp *ux)
{
	struct util_srx_msg m;
	size_t n;

	tcp_unexp_msg(ux, &m);
	if (ux->op == TCP_OP_RTS) {
		tcp_recv_rts_matched(ep, ux->peer, dest, &m, ux->id);
	} else {
		n = ux->len < dest->cap ? ux->len : dest->cap;
		util_iov_copy_to(dest->iov, dest->iov_count, 0, ux->buf, n);
		util_srx_complete(&ep->srx, dest, &m, n, 0, 0);
		if (ux->flags & TCP_F_ACK_REQ)
			tcp_recv_ack(ep, ux->peer, ux->id, 0);
	}
	tcp_unexp_free(ep, ux);
}

static int tcp_srx_deliver(struct util_srx *srx,
			   const struct util_srx_dest *dest,
			   struct util_srx_unexp *u)
{
	tcp_unexp_deliver(tcp_srx_ep(srx), dest,
			  container_of(u, struct tcp_unexp, srx));
	return 0;
}

/* Dropped unread: a rendezvous sender is told it is done (no data). */
static void tcp_srx_discard(struct util_srx *srx, struct util_srx_unexp *u)
{
	struct tcp_ep *ep = tcp_srx_ep(srx);
	struct tcp_unexp *ux = container_of(u, struct tcp_unexp, srx);

	if (ux->op == TCP_OP_RTS)
		tcp_recv_cts(ep, ux->peer, ux->id, 0, 0);
	else if (ux->flags & TCP_F_ACK_REQ)
		tcp_recv_ack(ep, ux->peer, ux->id, 0);
	tcp_unexp_free(ep, ux);
}

static void tcp_srx_free_unexp(struct util_srx *srx, struct util_srx_unexp *u)
{
	tcp_unexp_free(tcp_srx_ep(srx), container_of(u, struct tcp_unexp, srx));
}

static const struct util_srx_ops tcp_srx_ops = {
	.deliver = tcp_srx_deliver,
	.discard = tcp_srx_discard,
	.free_unexp = tcp_srx_free_unexp,
};

ssize_t tcp_ep_cancel(fid_t fid, void *context)
{
	struct tcp_ep *ep = container_of(fid, struct tcp_ep, util.ep_fid.fid);

	return util_srx_cancel(&ep->srx, context);
}

int tcp_recv_init(struct tcp_ep *ep)
{
	struct util_srx_attr attr = {
		.prov = &tcp_prov, .ops = &tcp_srx_ops,
		.rx_size = ep->xfer_count, .iov_limit = TCP_IOV_LIMIT,
	};
	size_t nbuf = tcp_env.unexp_mem / ep->eager_max;
	int ret;

	ret = util_srx_init(&ep->srx, &ep->util, &attr);
	if (ret)
		return ret;
	ret = util_pool_init(&ep->unexp_pool, sizeof(struct tcp_unexp), 0, 64,
			     64, tcp_env.unexp_mem / 1024, NULL, NULL);
	if (ret)
		return ret;
	return util_pool_init(&ep->ubuf_pool, ep->eager_max, 64, 0, 4,
			      nbuf ? nbuf : 1, NULL, NULL);
}

void tcp_recv_fini(struct tcp_ep *ep)
{
	if (ep->srx.ops)
		util_srx_fini(&ep->srx);
	util_pool_fini(&ep->ubuf_pool);
	util_pool_fini(&ep->unexp_pool);
}

static inline fi_addr_t tcp_recv_src(struct tcp_ep *ep, struct tcp_peer *peer)
{
	return (ep->util.caps & (FI_SOURCE | FI_DIRECTED_RECV)) ?
	       tcp_peer_fi_addr(ep, peer) : FI_ADDR_NOTAVAIL;
}

/* The queue a MSG or RTS matches in (frame flags f). */
static inline unsigned int tcp_recv_class(uint16_t f)
{
	if (WEFT_UNLIKELY(f & TCP_F_COLL))
		return UTIL_SRX_COLL;
	return (f & TCP_F_TAGGED) ? UTIL_SRX_TAGGED : UTIL_SRX_MSG;
}

/* The sender as its class matches it: the collective class always by
 * source. */
static inline fi_addr_t tcp_recv_src_cls(struct tcp_ep *ep,
					 struct tcp_peer *peer,
					 unsigned int cls)
{
	if (WEFT_UNLIKELY(cls == UTIL_SRX_COLL))
		return tcp_peer_fi_addr(ep, peer);
	return tcp_recv_src(ep, peer);
}

/* A frame of the collective class is only for an endpoint that runs the
 * engine: elsewhere nothing would ever take it. */
static int __attribute__((noinline)) tcp_recv_coll_refused(struct tcp_conn *c)
{
	char buf[64];

	WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_DATA,
		"peer %s sent a collective-class frame to an endpoint opened "
		"without FI_COLLECTIVE\n",
		tcp_addr_str(&c->peer->addr, buf, sizeof(buf)));
	return -TCP_EPROTO;
}

static inline void tcp_recv_hdr_msg(const struct tcp_conn *c, fi_addr_t src,
				    uint64_t tag, uint64_t size,
				    struct util_srx_msg *m)
{
	m->src = src;
	m->tag = tag;
	m->size = size;
	m->data = c->rh.data;
	m->flags = (c->rh.flags & TCP_F_CQ_DATA) ? FI_REMOTE_CQ_DATA : 0;
	m->peer = c->peer;
}

/* Memory for an unexpected payload of len bytes, or NULL (stall). */
static uint8_t *tcp_unexp_buf(struct tcp_ep *ep, struct tcp_unexp *ux,
			      uint64_t len)
{
	if (len <= TCP_UNEXP_INLINE) {
		ux->buf_kind = TCP_UBUF_INLINE;
		return ux->data;
	}
	if (len <= ep->eager_max) {
		ux->buf_kind = TCP_UBUF_POOL;
		return util_pool_get(&ep->ubuf_pool);
	}
	if (ep->unexp_heap + len > ep->unexp_mem)
		return NULL;
	ux->buf_kind = TCP_UBUF_HEAP;
	ep->unexp_heap += len;
	ux->buf = malloc(len);
	if (!ux->buf)
		ep->unexp_heap -= len;
	return ux->buf;
}

static int tcp_recv_unexp_begin(struct tcp_conn *c, fi_addr_t src,
				uint64_t tag)
{
	struct tcp_ep *ep = c->ep;
	const struct tcp_hdr *h = &c->rh;
	struct tcp_unexp *ux = util_pool_get(&ep->unexp_pool);

	if (!ux)
		return -FI_EAGAIN;
	ux->len = h->len;
	ux->buf = tcp_unexp_buf(ep, ux, h->len);
	if (!ux->buf) {
		util_pool_put(&ep->unexp_pool, ux);
		return -FI_EAGAIN;
	}
	util_srx_unexp_init(&ux->srx, src, tag, h->len, h->data,
			    (h->flags & TCP_F_CQ_DATA) ? FI_REMOTE_CQ_DATA : 0);
	ux->peer = c->peer;
	ux->op = TCP_OP_MSG;
	ux->flags = h->flags;
	ux->id = h->id;
	c->sink.iov[0].iov_base = ux->buf;
	c->sink.iov[0].iov_len = h->len;
	c->sink.count = 1;
	c->sink.cap = h->len;
	c->sink.arg = ux;
	return 0;
}

/* The commonest case: a message for a one-buffer receive, its payload
 * already in the connection's buffer. */
static inline int tcp_recv_msg_fast(struct tcp_conn *c,
				    struct util_srx_entry *e, fi_addr_t src,
				    uint64_t tag)
{
	struct tcp_ep *ep = c->ep;
	size_t cap = e->iov[0].iov_len;
	size_t len = c->rh.len < cap ? c->rh.len : cap;
	struct util_srx_msg msg;

	/* A zero-byte receive may have no buffer (MPI's empty messages). */
	if (len)
		memcpy(e->iov[0].iov_base, c->rbuf + c->rhead + c->rh.hlen,
		       len);
	tcp_recv_hdr_msg(c, src, tag, c->rh.len, &msg);
	util_srx_report(&ep->srx, &ep->util, e->match.context, e->comp_flags,
			e->iov[0].iov_base, cap,
			util_ep_rx_wants_comp(&ep->util, e->match.flags), &msg,
			len, 0, 0);
	util_srx_entry_put(&ep->srx, e);
	return 1;
}

int tcp_recv_msg_begin(struct tcp_conn *c)
{
	struct tcp_ep *ep = c->ep;
	const struct tcp_hdr *h = &c->rh;
	unsigned int cls = tcp_recv_class(h->flags);
	uint64_t tag = cls != UTIL_SRX_MSG ? h->tag : 0;
	fi_addr_t src;
	struct util_srx_entry *e;
	struct util_srx_dest *d = &c->sink.dest;

	if (WEFT_UNLIKELY(cls == UTIL_SRX_COLL && !ep->util.coll))
		return tcp_recv_coll_refused(c);
	src = tcp_recv_src_cls(ep, c->peer, cls);
	e = util_srx_match(&ep->srx, cls, src, tag);
	if (!e)
		return tcp_recv_unexp_begin(c, src, tag);
	/* The fast path reports to the application's CQ: neither a
	 * message that wants an ACK nor one of the collective class. */
	if (WEFT_LIKELY(e->iov_count == 1 &&
			!(e->match.flags & FI_MULTI_RECV) &&
			!(h->flags & (TCP_F_ACK_REQ | TCP_F_COLL)) &&
			c->rtail - c->rhead - h->hlen >= h->len))
		return tcp_recv_msg_fast(c, e, src, tag);
	util_srx_dest(&ep->srx, e, h->len, d);
	memcpy(c->sink.iov, d->iov, d->iov_count * sizeof(d->iov[0]));
	c->sink.count = d->iov_count;
	c->sink.cap = h->len < d->cap ? h->len : d->cap;
	c->sink.arg = NULL;
	return 0;
}

void tcp_recv_msg_end(struct tcp_conn *c)
{
	struct tcp_ep *ep = c->ep;
	struct tcp_unexp *ux = c->sink.arg;
	unsigned int cls = tcp_recv_class(c->rh.flags);
	struct util_srx_entry *e;
	struct util_srx_dest d;
	struct util_srx_msg msg;

	if (!ux) {
		tcp_recv_hdr_msg(c, tcp_recv_src_cls(ep, c->peer, cls),
				 cls != UTIL_SRX_MSG ? c->rh.tag : 0,
				 c->rh.len, &msg);
		util_srx_complete(&ep->srx, &c->sink.dest, &msg, c->sink.cap,
				  0, 0);
		if (c->rh.flags & TCP_F_ACK_REQ)
			tcp_recv_ack(ep, c->peer, c->rh.id, 0);
		return;
	}
	/* A receive may have been posted while the payload arrived. */
	e = util_srx_match(&ep->srx, cls, ux->srx.match.src,
			   ux->srx.match.tag);
	if (!e) {
		tcp_recv_add_unexp(ep, cls, ux);
		return;
	}
	util_srx_dest(&ep->srx, e, ux->len, &d);
	tcp_unexp_deliver(ep, &d, ux);
}

void tcp_recv_msg_abort(struct tcp_conn *c, int err)
{
	struct tcp_ep *ep = c->ep;
	struct util_srx_msg msg;

	if (c->sink.arg) {
		tcp_unexp_free(ep, c->sink.arg);
		return;
	}
	if (!err)
		return;
	tcp_recv_hdr_msg(c, FI_ADDR_NOTAVAIL,
			 (c->rh.flags & (TCP_F_TAGGED | TCP_F_COLL)) ?
			 c->rh.tag : 0, c->rh.len, &msg);
	util_srx_complete(&ep->srx, &c->sink.dest, &msg,
			  c->sink.done < c->sink.cap ? c->sink.done :
						       c->sink.cap, err, 0);
}

int tcp_recv_rts(struct tcp_conn *c)
{
	struct tcp_ep *ep = c->ep;
	const struct tcp_hdr *h = &c->rh;
	unsigned int cls = tcp_recv_class(h->flags);
	uint64_t tag = cls != UTIL_SRX_MSG ? h->tag : 0;
	fi_addr_t src;
	struct util_srx_entry *e;
	struct util_srx_dest d;
	struct util_srx_msg msg;
	struct tcp_unexp *ux;

	if (WEFT_UNLIKELY(cls == UTIL_SRX_COLL && !ep->util.coll))
		return tcp_recv_coll_refused(c);
	/* A matched receive cannot wait: be sure of a transfer first. */
	if (!ep->xfer_free_top)
		return -FI_EAGAIN;
	src = tcp_recv_src_cls(ep, c->peer, cls);
	e = util_srx_match(&ep->srx, cls, src, tag);
	if (e) {
		util_srx_dest(&ep->srx, e, h->size, &d);
		tcp_recv_hdr_msg(c, src, tag, h->size, &msg);
		tcp_recv_rts_matched(ep, c->peer, &d, &msg, h->id);
		return 0;
	}
	ux = util_pool_get(&ep->unexp_pool);
	if (!ux)
		return -FI_EAGAIN;
	util_srx_unexp_init(&ux->srx, src, tag, h->size, h->data,
			    (h->flags & TCP_F_CQ_DATA) ? FI_REMOTE_CQ_DATA : 0);
	ux->peer = c->peer;
	ux->op = TCP_OP_RTS;
	ux->flags = h->flags;
	ux->id = h->id;
	ux->len = 0;
	ux->buf = NULL;
	ux->buf_kind = TCP_UBUF_INLINE;
	tcp_recv_add_unexp(ep, cls, ux);
	return 0;
}

int tcp_recv_data_begin(struct tcp_conn *c)
{
	const struct tcp_hdr *h = &c->rh;
	struct tcp_xfer *x = tcp_xfer_find(c->ep, c->peer, h->xfer);

	if (!x || h->offset > x->granted || h->len > x->granted - h->offset ||
	    x->received + h->len > x->granted)
		return -TCP_EPROTO;
	c->sink.count = util_iov_slice(x->dest.iov, x->dest.iov_count,
				       h->offset, h->len, c->sink.iov);
	c->sink.cap = h->len;
	c->sink.arg = x;
	return 0;
}

void tcp_recv_data_end(struct tcp_conn *c)
{
	struct tcp_ep *ep = c->ep;
	struct tcp_xfer *x = c->sink.arg;

	x->received += c->rh.len;
	if (x->received < x->granted)
		return;
	util_srx_complete(&ep->srx, &x->dest, &x->msg, x->granted, 0, 0);
	tcp_xfer_put(ep, x);
}

void tcp_recv_fail_xfer(struct tcp_ep *ep, struct tcp_xfer *x, int err)
{
	util_srx_complete(&ep->srx, &x->dest, &x->msg, x->received, err, 0);
	tcp_xfer_put(ep, x);
}
