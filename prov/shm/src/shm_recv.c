/* SPDX-License-Identifier: MIT */
/*
 * The receive side of messages: an arriving SEND or RTS is matched against
 * the posted receives (util_match) or kept as unexpected; a matched message
 * lands in its buffer (inline copy, CMA pull, or a bounce pull driven by
 * progress) and completes, and an RTS is answered with an ACK so that the
 * sender can complete.
 */
#include "weft/compat.h"

#include <string.h>
#include <utlist.h>

#include "shm.h"

static void shm_unexp_info(struct shm_unexp *ux, struct shm_msg_info *m);

/* The entry goes: the cell it copied is consumed, its sender gets the
 * credit back (SHM_CELL_KEPT). */
void shm_unexp_put(struct shm_ep *ep, struct shm_unexp *ux)
{
	shm_region_credit_gen(ep->region, ux->slot, ux->slot_gen);
	util_pool_put(&ep->unexp_pool, ux);
}

static int shm_srx_deliver(struct util_srx *srx,
			   const struct util_srx_dest *dest,
			   struct util_srx_unexp *u)
{
	(void)srx;
	struct shm_unexp *ux = container_of(u, struct shm_unexp, srx);
	struct shm_ep *ep = ux->ep;
	struct shm_msg_info m;
	int ret;

	shm_unexp_info(ux, &m);
	ret = shm_rx_deliver(ep, dest, &m);
	shm_unexp_put(ep, ux);
	return ret;
}

/* A discarded large message still owes its sender an ACK. */
static void shm_srx_discard(struct util_srx *srx, struct util_srx_unexp *u)
{
	struct shm_unexp *ux = container_of(u, struct shm_unexp, srx);
	struct shm_ep *ep = ux->ep;

	(void)srx;
	if (ux->op == SHM_OP_RTS)
		shm_ack_send(ep, ux->conn, ux->cookie, 0);
	shm_unexp_put(ep, ux);
}

/* Unexpected entries hold nothing outside unexp_pool, freed whole. */
const struct util_srx_ops shm_srx_ops = {
	.deliver = shm_srx_deliver,
	.discard = shm_srx_discard,
};

ssize_t shm_ep_cancel(fid_t fid, void *context)
{
	struct shm_ep *ep = container_of(fid, struct shm_ep, util.ep_fid.fid);

	return util_srx_cancel(&ep->srx, context);
}

int shm_rx_init(struct shm_ep *ep)
{
	struct util_srx_attr attr = {
		.prov = &shm_prov, .ops = &shm_srx_ops,
		.rx_size = shm_env.rx_size, .iov_limit = SHM_IOV_LIMIT,
	};
	int ret;

	ret = util_srx_init(&ep->srx, &ep->util, &attr);
	if (ret)
		return ret;
	ep->rx = &ep->srx;
	/* Never more made up front than FI_SHM_UNEXP_COUNT allows. */
	ret = util_pool_init(&ep->unexp_pool,
			     sizeof(struct shm_unexp) + ep->payload_max, 0,
			     shm_env.unexp_count < 64 ? shm_env.unexp_count : 64,
			     64, shm_env.unexp_count, NULL, NULL);
	if (ret)
		goto err_rx_pool;
	ret = util_pool_init(&ep->pull_pool, sizeof(struct shm_pull), 0, 4, 4,
			     0, NULL, NULL);
	if (ret)
		goto err_unexp_pool;
	ret = shm_reply_init(ep);
	if (ret)
		goto err_pull_pool;
	return 0;

err_pull_pool:
	util_pool_fini(&ep->pull_pool);
err_unexp_pool:
	util_pool_fini(&ep->unexp_pool);
err_rx_pool:
	util_srx_fini(&ep->srx);
	return ret;
}

void shm_rx_fini(struct shm_ep *ep)
{
	shm_reply_fini(ep);
	util_pool_fini(&ep->pull_pool);
	util_srx_fini(&ep->srx);
	util_pool_fini(&ep->unexp_pool);
}

/* Message m as util_srx reports it. */
static inline __attribute__((always_inline)) void
shm_rx_msg(const struct shm_msg_info *m, struct util_srx_msg *msg)
{
	msg->src = m->src;
	msg->tag = m->tag;
	msg->size = m->size;
	msg->data = m->data;
	msg->flags = (m->cflags & SHM_F_CQ_DATA) ? FI_REMOTE_CQ_DATA : 0;
	msg->peer = NULL;	/* no write_err hook reads it */
}

static void shm_rx_complete(struct shm_ep *ep,
			    const struct util_srx_dest *dest,
			    const struct shm_msg_info *m, int err)
{
	struct util_srx_msg msg;

	shm_rx_msg(m, &msg);
	util_srx_complete(ep->rx, dest, &msg,
			  m->size < dest->cap ? m->size : dest->cap, err, 0);
}

/* A pull entry for message m into dest (not on ep->pulls yet). */
struct shm_pull *shm_pull_new(struct shm_ep *ep, const struct util_srx_dest *dest,
			      const struct shm_msg_info *m)
{
	struct shm_pull *p = util_pool_get(&ep->pull_pool);

	if (!p)
		return NULL;
	p->conn = m->conn;
	p->split = false;
	p->cts_pending = false;
	p->split_refused = false;
	p->split_err = 0;
	p->split_id = 0;
	p->dest = *dest;
	p->cookie = m->cookie;
	p->size = m->size;
	p->cflags = m->cflags;
	p->data = m->data;
	p->tag = m->tag;
	p->src = m->src;
	return p;
}

static int shm_rx_start_pull(struct shm_ep *ep, const struct util_srx_dest *dest,
			     const struct shm_msg_info *m,
			     const struct shm_rts_local *r)
{
	struct shm_pull *p = shm_pull_new(ep, dest, m);

	if (!p)
		return -FI_EAGAIN;
	memset(&p->brx, 0, sizeof(p->brx));
	p->brx.iov = p->dest.iov;
	p->brx.iov_count = p->dest.iov_count;
	p->brx.total = r->total;
	p->brx.xfer_id = r->xfer_id;
	DL_APPEND(ep->pulls, p);
	return 0;
}

static int shm_rx_deliver_rts(struct shm_ep *ep, const struct util_srx_dest *dest,
			      const struct shm_msg_info *m)
{
	struct shm_rts_local r;
	size_t want = m->size < dest->cap ? m->size : dest->cap;
	ssize_t n;
	int err;

	if (shm_rts_parse(m->payload, m->len, &r) ||
	    shm_conn_open_peer(ep, m->conn)) {
		shm_rx_complete(ep, dest, m, FI_EIO);
		shm_ack_send(ep, m->conn, m->cookie, FI_EIO);
		return 0;
	}
	if (m->proto == SHM_COPY_BOUNCE)
		return shm_rx_start_pull(ep, dest, m, &r);
	if (want && !shm_peer_cma(m->conn->peer)) {
		err = shm_split_push_all(ep, dest, m, want) ? FI_ENOMEM : 0;
		if (!err)
			return 0;
		shm_rx_complete(ep, dest, m, err);
		shm_ack_send(ep, m->conn, m->cookie, err);
		return 0;
	}
	if (shm_env.split_size && want >= shm_env.split_size &&
	    !shm_split_start(ep, dest, m, &r, want))
		return 0;
	n = want ? shm_cma_read(m->conn->peer->pid, dest->iov, dest->iov_count,
				r.iov, r.iov_cnt) : 0;
	if (WEFT_UNLIKELY(n == -FI_EPERM) &&
	    !shm_split_cma_refused(ep, dest, m, want))
		return 0;
	err = shm_cma_status(n, want);
	shm_rx_complete(ep, dest, m, err);
	shm_ack_send(ep, m->conn, m->cookie, err);
	return 0;
}

int shm_rx_deliver(struct shm_ep *ep, const struct util_srx_dest *dest,
		   const struct shm_msg_info *m)
{
	if (m->op == SHM_OP_RTS)
		return shm_rx_deliver_rts(ep, dest, m);
	util_iov_copy_to(dest->iov, dest->iov_count, 0, m->payload,
			m->size < dest->cap ? m->size : dest->cap);
	shm_rx_complete(ep, dest, m, 0);
	return 0;
}

static int shm_rx_queue_unexp(struct shm_ep *ep, unsigned int cls,
			      const struct shm_msg_info *m)
{
	struct shm_unexp *ux = util_pool_get(&ep->unexp_pool);

	if (!ux)
		return -FI_EAGAIN;
	util_srx_unexp_init(&ux->srx, m->src, m->tag, m->size, m->data,
			    (m->cflags & SHM_F_CQ_DATA) ? FI_REMOTE_CQ_DATA : 0);
	ux->srx.ops = &shm_srx_ops;
	ux->ep = ep;
	ux->conn = m->conn;
	ux->op = m->op;
	ux->cflags = m->cflags;
	ux->slot = m->slot;
	ux->slot_gen = m->slot_gen;
	ux->proto = m->proto;
	ux->len = m->len;
	ux->cookie = m->cookie;
	memcpy(ux->payload, m->payload, m->len);
	util_srx_add_unexp(ep->rx, cls, &ux->srx);
	return SHM_CELL_KEPT;
}

static void shm_unexp_info(struct shm_unexp *ux, struct shm_msg_info *m)
{
	m->conn = ux->conn;
	m->op = ux->op;
	m->cflags = ux->cflags;
	m->proto = ux->proto;
	m->len = ux->len;
	m->size = ux->srx.size;
	m->data = ux->srx.data;
	m->tag = ux->srx.match.tag;
	m->cookie = ux->cookie;
	m->src = ux->srx.match.src;
	m->payload = ux->payload;
}

/* The common case: an inline message into a posted one-buffer receive,
 * straight from the cell (no util_srx_dest to fill, no iov walk). */
static inline __attribute__((always_inline)) void
shm_rx_deliver_inline1(struct shm_ep *ep, struct util_srx_entry *e,
		       const struct util_srx_msg *msg, const uint8_t *payload)
{
	size_t cap = e->iov[0].iov_len;
	size_t len = msg->size < cap ? msg->size : cap;

	if (len <= SHM_CELL_LINE0_PAYLOAD)
		shm_copy_small(e->iov[0].iov_base, payload, len);
	else
		memcpy(e->iov[0].iov_base, payload, len);
	util_srx_report(ep->rx, ep->rx->ep, e->match.context, e->comp_flags,
			e->iov[0].iov_base, cap,
			util_ep_rx_wants_comp(ep->rx->ep, e->match.flags), msg,
			len, 0, 0);
	util_srx_entry_put(ep->rx, e);
}

/* The commonest case of all, tried before the general path: an inline
 * SEND for the first receive posted on its queue, a one-buffer receive
 * for any source. It needs only the few fields of the message description
 * that delivery reads, not the whole one the general path builds (on the
 * test VM ~50 instructions a message, all on the round trip's critical
 * path). False: not this case, nothing done. */
static bool shm_rx_fast_send(struct shm_ep *ep, struct shm_conn *conn,
			     const struct shm_cell_hdr *hdr,
			     const uint8_t *payload)
{
	bool tagged = hdr->flags & SHM_F_TAGGED;
	struct util_srx_msg msg;
	struct util_srx_entry *e;

	msg.tag = tagged ? hdr->tag : 0;
	e = util_srx_first1(ep->rx, tagged, msg.tag);
	if (!e || conn->rma_busy)
		return false;
	/* Taken: the cell is consumed, its sender's credit back. */
	shm_conn_credit(conn);
	util_srx_take_first(ep->rx, tagged, e);
	msg.size = hdr->len;
	msg.data = hdr->data;
	msg.flags = (hdr->flags & SHM_F_CQ_DATA) ? FI_REMOTE_CQ_DATA : 0;
	msg.src = (ep->util.caps & (FI_SOURCE | FI_DIRECTED_RECV)) ?
		  shm_conn_src(ep, conn) : FI_ADDR_NOTAVAIL;
	msg.peer = NULL;
	shm_rx_deliver_inline1(ep, e, &msg, payload);
	return true;
}

/* Deliver to a receive that was posted before the message arrived. */
static int shm_rx_deliver_posted(struct shm_ep *ep, struct util_srx_entry *e,
				 const struct shm_msg_info *m)
{
	struct util_srx_dest dest;
	struct util_srx_msg msg;

	if (WEFT_LIKELY(m->op == SHM_OP_SEND && e->iov_count == 1 &&
			!(e->match.flags & FI_MULTI_RECV))) {
		shm_rx_msg(m, &msg);
		shm_rx_deliver_inline1(ep, e, &msg, m->payload);
		return 0;
	}
	util_srx_dest(ep->rx, e, m->size, &dest);
	return shm_rx_deliver(ep, &dest, m);
}

/* Its class: the queue it matches in. */
static inline unsigned int shm_rx_class(uint16_t flags)
{
	if (WEFT_UNLIKELY(flags & SHM_F_COLL))
		return UTIL_SRX_COLL;
	return (flags & SHM_F_TAGGED) ? UTIL_SRX_TAGGED : UTIL_SRX_MSG;
}

static int __attribute__((noinline))
shm_rx_handle_msg_any(struct shm_ep *ep, struct shm_conn *conn,
		      const struct shm_cell_hdr *hdr, const uint8_t *payload)
{
	unsigned int cls = shm_rx_class(hdr->flags);
	struct shm_msg_info m = {
		.conn = conn, .op = hdr->op, .cflags = hdr->flags,
		.slot = hdr->src, .slot_gen = hdr->src_gen,
		.proto = hdr->proto, .len = hdr->len, .size = hdr->len,
		.data = hdr->data, .tag = cls != UTIL_SRX_MSG ? hdr->tag : 0,
		.cookie = hdr->cookie, .payload = payload,
	};
	struct util_srx_dest dest;
	struct shm_rts_local r;
	struct util_srx_entry *e;

	/* Sends after a bounce RMA of this peer wait for it (FI_ORDER_SAW). */
	if (WEFT_UNLIKELY(conn->rma_busy))
		return -FI_EAGAIN;
	if (m.op == SHM_OP_RTS) {
		if (shm_rts_parse(payload, hdr->len, &r)) {
			shm_ack_send(ep, conn, hdr->cookie, FI_EINVAL);
			return 0;
		}
		m.size = r.total;
	}
	/* The collective class always matches by source. */
	m.src = ((ep->util.caps & (FI_SOURCE | FI_DIRECTED_RECV)) ||
		 cls == UTIL_SRX_COLL) ?
		shm_conn_src(ep, conn) : FI_ADDR_NOTAVAIL;
	e = util_srx_match(ep->rx, cls, m.src, m.tag);
	if (!e)
		return shm_rx_queue_unexp(ep, cls, &m);
	if (cls == UTIL_SRX_COLL) {
		util_srx_dest(ep->rx, e, m.size, &dest);
		return shm_rx_deliver(ep, &dest, &m);
	}
	return shm_rx_deliver_posted(ep, e, &m);
}

/* A SEND of the application's classes: op and flags, which share a word
 * of the header, tested at once. */
static inline bool shm_rx_app_send(const struct shm_cell_hdr *hdr)
{
	uint32_t w;

	memcpy(&w, &hdr->op, sizeof(w));
	return (w & (0xffffu | (uint32_t)SHM_F_COLL << 16)) == SHM_OP_SEND;
}

int shm_rx_handle_msg(struct shm_ep *ep, struct shm_conn *conn,
		      const struct shm_cell_hdr *hdr, const uint8_t *payload)
{
	if (WEFT_LIKELY(shm_rx_app_send(hdr)) &&
	    shm_rx_fast_send(ep, conn, hdr, payload))
		return 0;
	return shm_cell_done(conn,
			     shm_rx_handle_msg_any(ep, conn, hdr, payload));
}

void shm_pull_finish(struct shm_ep *ep, struct shm_pull *p, int err)
{
	struct shm_msg_info m = {
		.conn = p->conn, .op = SHM_OP_RTS, .cflags = p->cflags,
		.size = p->size, .data = p->data, .tag = p->tag,
		.cookie = p->cookie, .src = p->src,
	};

	shm_rx_complete(ep, &p->dest, &m, err);
	if (!p->conn->dead)
		shm_ack_send(ep, p->conn, p->cookie, err);
	DL_DELETE(ep->pulls, p);
	util_pool_put(&ep->pull_pool, p);
}

void shm_rx_progress(struct shm_ep *ep)
{
	struct shm_pull *p, *tmp;
	bool check;
	int ret;

	if (!ep->pulls)
		return;
	check = shm_check_due(&ep->pull_check_ns);
	DL_FOREACH_SAFE(ep->pulls, p, tmp) {
		/* Started toward a peer already found dead: nothing will
		 * come, and no liveness check will fail it again. The cause
		 * is the peer's death, as for its sends (FI_EHOSTUNREACH). */
		if (WEFT_UNLIKELY(p->conn->dead)) {
			shm_pull_finish(ep, p, FI_EHOSTUNREACH);
			continue;
		}
		/* A split copy waits for PUSHED; only liveness is ours. */
		if (WEFT_UNLIKELY(p->cts_pending))
			(void)shm_split_send_cts(p);
		ret = p->split ? 0 : shm_bounce_pull(p->conn->peer, &p->brx);
		if (ret == 1)
			shm_pull_finish(ep, p, 0);
		else if (ret < 0)
			shm_pull_finish(ep, p, FI_EIO);
		else if (check && !shm_conn_check(ep, p->conn))
			return;	/* the check failed p and its siblings */
	}
}

void shm_rx_fail_conn(struct shm_ep *ep, struct shm_conn *conn)
{
	struct shm_pull *p, *tmp;

	DL_FOREACH_SAFE(ep->pulls, p, tmp)
		if (p->conn == conn)
			shm_pull_finish(ep, p, FI_EHOSTUNREACH);
}
