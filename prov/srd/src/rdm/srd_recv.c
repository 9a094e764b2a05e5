/* SPDX-License-Identifier: MIT */
/*
 * Messages in, whatever the protocol. A message packet goes through the
 * peer's reorder window; the first packet of a message to come out in
 * msg_id order is matched (posted receive, multi-recv slice, or
 * unexpected) and handed to the protocol that owns its type (rx_start,
 * rx_unexp); later packets of a matched message (msg_id behind the
 * window) go to its rx_more. Lengths common to every message packet are
 * checked here, the protocol checks its own (rx_check), before anything
 * is used. Messages arriving in pieces are transfers (srd_rx_xfer) on
 * their peer's list, and on the receive pump while they have work that
 * waits for resources.
 */
#include "weft/compat.h"
#include "srd_proto.h"
#include "proto/srd_stripe.h"

#include <stdlib.h>
#include <string.h>

static void srd_rx_deliver(struct srd_ep *ep, const struct util_srx_dest *dest,
			   struct srd_unexp *ux);

static struct srd_ep *srd_srx_ep(struct util_srx *srx)
{
	return container_of(srx, struct srd_ep, srx);
}

static int srd_srx_deliver(struct util_srx *srx,
			   const struct util_srx_dest *dest,
			   struct util_srx_unexp *ux)
{
	srd_rx_deliver(srd_srx_ep(srx), dest,
		       container_of(ux, struct srd_unexp, srx));
	return 0;
}

/* A discarded message still goes through delivery, with no buffer and no
 * completion: a MEDIUM one may still be arriving, and a long one's sender
 * waits for its READ_DONE. */
static void srd_srx_discard(struct util_srx *srx, struct util_srx_unexp *ux)
{
	struct util_srx_dest dest;

	memset(&dest, 0, sizeof(dest));
	dest.discard = true;
	srd_srx_deliver(srx, &dest, ux);
}

static void srd_srx_free_unexp(struct util_srx *srx, struct util_srx_unexp *ux)
{
	struct srd_unexp *u = container_of(ux, struct srd_unexp, srx);

	srd_unexp_free(srd_srx_ep(srx), u);
}

/* Error entries name the peer (srd_err.c). */
static int srd_srx_write_err(struct util_srx *srx,
			     const struct fi_cq_err_entry *e,
			     const struct util_srx_msg *m)
{
	return srd_ep_rx_err(srd_srx_ep(srx), m->peer, e, m->src);
}

static const struct util_srx_ops srd_srx_ops = {
	.deliver = srd_srx_deliver,
	.discard = srd_srx_discard,
	.free_unexp = srd_srx_free_unexp,
	.write_err = srd_srx_write_err,
};

int srd_rx_init(struct srd_ep *ep)
{
	struct util_srx_attr attr = {
		.prov = &srd_prov, .ops = &srd_srx_ops,
		.rx_size = ep->pc.rx_size, .iov_limit = ep->pc.rx_iov_limit,
	};
	int ret;

	ret = util_srx_init(&ep->srx, &ep->util, &attr);
	if (ret)
		return ret;
	ret = util_pool_init(&ep->unexp_pool, sizeof(struct srd_unexp) +
			     ep->pc.eager_max, 0, 16, 64, 0, NULL, NULL);
	if (ret)
		return ret;
	ret = util_pool_init(&ep->xfer_pool, sizeof(struct srd_rx_xfer), 0, 16,
			     64, 0, NULL, NULL);
	if (ret)
		return ret;
	ep->rx_ready = true;
	return 0;
}

/* After the peers (and their transfers) are gone. */
void srd_rx_fini(struct srd_ep *ep)
{
	if (!ep->rx_ready)
		return;
	util_srx_fini(&ep->srx);
	util_pool_fini(&ep->unexp_pool);
	util_pool_fini(&ep->xfer_pool);
	ep->rx_ready = false;
}

/* ---- transfers -------------------------------------------------------- */

struct srd_rx_xfer *srd_xfer_get(struct srd_ep *ep,
				 const struct util_srx_dest *dest,
				 const struct srd_msg_info *m)
{
	struct srd_rx_xfer *x = util_pool_get(&ep->xfer_pool);

	if (!x)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->proto = m->proto;
	x->peer = m->peer;
	x->m = *m;
	x->m.payload = NULL;	/* the packet goes back to the device */
	x->dest = *dest;
	DL_APPEND(m->peer->rx_xfers, x);
	return x;
}

void srd_xfer_free(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	size_t i;

	srd_rx_pump_del(ep, x);
	DL_DELETE(x->peer->rx_xfers, x);
	for (i = 0; i < SRD_IOV_MAX; i++)
		srd_dev_dereg_mr(ep->dev, x->mr[i]);
	for (uint32_t k = 1; k < x->rails; k++)
		for (i = 0; i < SRD_IOV_MAX; i++)
			srd_stripe_dereg(ep, k, x->rail_mr[k - 1][i]);
	util_pool_put(&ep->xfer_pool, x);
}

void srd_rx_pump_add(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	if (x->on_pump)
		return;
	DL_APPEND2(ep->rx_pump, x, pump_prev, pump_next);
	x->on_pump = true;
}

void srd_rx_pump_del(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	if (!x->on_pump)
		return;
	DL_DELETE2(ep->rx_pump, x, pump_prev, pump_next);
	x->on_pump = false;
}

/* Batch end: transfers whose next step waited for the send queue or a
 * packet buffer (reads to post, grants, READ_DONEs). */
void srd_rx_pump(struct srd_ep *ep)
{
	struct srd_rx_xfer *x, *tmp;

	DL_FOREACH_SAFE2(ep->rx_pump, x, tmp, pump_next)
		if (x->proto->rx_step(ep, x) == SRD_RX_STEP_STOP)
			return;
}

int srd_rx_ctrl_send(struct srd_ep *ep, struct srd_rx_xfer *x, uint8_t type,
		     uint64_t off, uint64_t len, int status)
{
	struct srd_txbuf *tb = srd_txbuf_get(ep);
	struct srd_pkt_ctrl *c;

	if (!tb)
		return -FI_EAGAIN;
	c = (struct srd_pkt_ctrl *)tb->data;
	memset(c, 0, sizeof(*c));
	srd_pkt_base_init(&c->base, type, 0, SRD_PEER_ID_NONE);
	c->tx_id = x->m.tx_id;
	c->rx_id = type == SRD_PKT_CTS ? x->rx_id : 0;
	c->offset = off;
	c->len = len;
	c->status = status;
	srd_pkt_send(ep, x->peer, tb, sizeof(*c));
	return 0;
}

/* ---- completions and unexpected messages ------------------------------ */

void srd_rx_complete_err(struct srd_ep *ep, const struct util_srx_dest *dest,
			 const struct srd_msg_info *m, size_t len, int err,
			 int prov_errno)
{
	bool cq_data = m->flags & SRD_PKT_F_CQ_DATA;
	struct util_srx_msg msg;

	if (dest->discard)
		return;
	msg.src = srd_peer_fi_addr(ep, m->peer);
	msg.tag = m->tag;
	msg.size = m->total_len;
	msg.data = cq_data ? m->cq_data : 0;
	msg.flags = cq_data ? FI_REMOTE_CQ_DATA : 0;
	msg.peer = m->peer;
	util_srx_complete(&ep->srx, dest, &msg, len, err, prov_errno);
}

void srd_unexp_free(struct srd_ep *ep, struct srd_unexp *ux)
{
	if (ux->buf_pooled)
		util_pool_put(&ep->ux_buf_pool, ux->buf);
	else
		free(ux->buf);
	util_pool_put(&ep->unexp_pool, ux);
}

/* A receive takes unexpected message ux (already off the queue); ux is
 * freed here or by its protocol. */
static void srd_rx_deliver(struct srd_ep *ep, const struct util_srx_dest *dest,
			   struct srd_unexp *ux)
{
	const struct srd_proto *p = ux->m.proto;

	if (p->rx_deliver) {
		p->rx_deliver(ep, dest, ux);
		return;
	}
	p->rx_start(ep, dest, &ux->m);
	srd_unexp_free(ep, ux);
}

void srd_unexp_ready(struct srd_ep *ep, struct srd_unexp *ux)
{
	ux->xfer = NULL;
	if (ux->then_set)
		srd_rx_deliver(ep, &ux->then, ux);
}

static struct srd_unexp *srd_unexp_new(struct srd_ep *ep,
				       const struct srd_msg_info *m)
{
	struct srd_unexp *ux = util_pool_get(&ep->unexp_pool);

	if (!ux)
		return NULL;
	memset(ux, 0, sizeof(*ux));
	ux->m = *m;
	if (m->proto->rx_unexp) {
		if (m->proto->rx_unexp(ep, ux)) {
			srd_unexp_free(ep, ux);
			return NULL;
		}
		return ux;
	}
	memcpy(ux->data, m->payload, m->seg_len);
	ux->m.payload = ux->data;
	return ux;
}

static void srd_rx_unexpected(struct srd_ep *ep, unsigned int cls,
			      const struct srd_msg_info *m, fi_addr_t src)
{
	struct srd_unexp *ux = srd_unexp_new(ep, m);
	bool cq_data = m->flags & SRD_PKT_F_CQ_DATA;

	if (!ux) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"no memory for an unexpected message of %llu bytes: "
			"dropped\n", (unsigned long long)m->total_len);
		return;
	}
	util_srx_unexp_init(&ux->srx, src, m->tag, m->total_len,
			    cq_data ? m->cq_data : 0,
			    cq_data ? FI_REMOTE_CQ_DATA : 0);
	util_srx_add_unexp(&ep->srx, cls, &ux->srx);
}

/* ---- message packets ---------------------------------------------------- */

/* The first packet of a message, in msg_id order: match it. */
static void srd_rx_msg_first(struct srd_ep *ep, const struct srd_msg_info *m)
{
	bool tagged = m->flags & SRD_PKT_F_TAGGED;
	unsigned int cls = (m->flags & SRD_PKT_F_COLL) ? UTIL_SRX_COLL : tagged;
	fi_addr_t src = srd_peer_fi_addr(ep, m->peer);
	struct util_srx_entry *e = util_srx_match(&ep->srx, cls, src,
						  tagged ? m->tag : 0);
	struct util_srx_dest dest;

	if (!e) {
		srd_rx_unexpected(ep, cls, m, src);
		return;
	}
	util_srx_dest(&ep->srx, e, m->total_len, &dest);
	m->proto->rx_start(ep, &dest, m);
}

/* Lengths of a message packet against the packet itself, the message and
 * our limits, then against its protocol. */
static int srd_rx_check(struct srd_ep *ep, const struct srd_msg_info *m,
			size_t payload_len)
{
	int ret = 0;

	if (m->seg_len != payload_len || m->total_len > ep->pc.max_msg_size)
		ret = -FI_EINVAL;
	else
		ret = m->proto->rx_check(ep, m);
	if (ret)
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"%s from qpn %u: bad lengths (total %llu offset %llu "
			"segment %u in %zu bytes): dropped\n",
			srd_pkt_type_str(m->type), m->peer->name.qpn,
			(unsigned long long)m->total_len,
			(unsigned long long)m->offset, m->seg_len, payload_len);
	return ret;
}

static int srd_rx_decode(struct srd_ep *ep, struct srd_peer *peer,
			 const void *pkt, size_t len, struct srd_msg_info *m)
{
	const struct srd_pkt_msg *h = pkt;

	m->peer = peer;
	m->proto = ep->pkt_route[h->base.type].proto;
	m->type = h->base.type;
	m->flags = h->base.flags;
	m->msg_id = h->msg_id;
	m->tx_id = h->tx_id;
	m->cq_data = h->cq_data;
	m->tag = h->tag;
	m->total_len = h->total_len;
	m->offset = h->offset;
	m->seg_len = h->seg_len;
	m->payload = (const uint8_t *)(h + 1);
	return srd_rx_check(ep, m, len - sizeof(*h));
}

/* Returns true when the message advanced the window. */
static bool srd_rx_msg_one(struct srd_ep *ep, struct srd_peer *peer,
			   const void *pkt, size_t len)
{
	struct srd_msg_info m;

	if (srd_rx_decode(ep, peer, pkt, len, &m))
		return false;
	switch (srd_reorder_arrive(&peer->reorder, m.msg_id, pkt, len)) {
	case SRD_REORDER_NOW:
		srd_rx_msg_first(ep, &m);
		srd_reorder_advance(&peer->reorder);
		return true;
	case SRD_REORDER_BEHIND:
		if (m.proto->rx_more)
			m.proto->rx_more(ep, &m);
		return false;
	case SRD_REORDER_HELD:
		return false;
	default:
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"no memory to hold message %u from qpn %u: dropped\n",
			m.msg_id, peer->name.qpn);
		return false;
	}
}

void srd_rx_handle_msg(struct srd_ep *ep, struct srd_peer *peer,
		       const void *pkt, size_t len)
{
	const void *held;
	size_t hlen;

	if (!srd_rx_msg_one(ep, peer, pkt, len))
		return;
	while ((held = srd_reorder_pop(&peer->reorder, &hlen))) {
		srd_rx_msg_one(ep, peer, held, hlen);
		srd_reorder_release(&peer->reorder, held);
	}
}
