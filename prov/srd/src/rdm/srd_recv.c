/* SPDX-License-Identifier: MIT */
/*
 * Messages in. A message packet (EAGER, MEDIUM, LONG_RTS) goes through the
 * peer's reorder window; the first packet of a message to come out in
 * msg_id order is matched (posted receive, multi-recv slice, or
 * unexpected); later MEDIUM segments find their transfer by msg_id and
 * land by offset. Every length and offset is checked against the packet
 * and the message before use.
 */
#include "weft/compat.h"
#include "srd_rdm.h"

#include <stdlib.h>
#include <string.h>

#define SRD_UX_BUF_MAX (1024 * 1024)	/* larger: no pool */
#define SRD_UX_BUFS 64			/* pooled buffers at most */

/* Unexpected MEDIUM messages need a buffer of their whole size until a
 * receive takes them. A pool of buffers as large as the largest MEDIUM
 * message this endpoint expects (below RDMA read's or CTS's threshold)
 * keeps malloc off that path; larger ones (a peer with a higher threshold)
 * and those past the pool's limit still come from the heap.
 *
 * Why not refuse past the pool: the sender completed the send once the
 * device delivered its segments, so a dropped message is lost, and there
 * is no receiver-to-sender refusal in the protocol. Holding the packet
 * (its receive buffer not re-posted, so the device answers RNR and the
 * sender backs off) would stall every peer behind one, and needs a queue
 * of held packets replayed in order when a receive frees a buffer. An
 * application that needs unexpected memory bounded sets
 * FI_SRD_CTS_THRESHOLD to the eager size: then every larger message goes
 * by CTS, whose unexpected form holds only its first packet. */
static int srd_ux_pool_init(struct srd_ep *ep)
{
	size_t size = ep->cts_threshold;

	if (ep->long_read && size < SRD_MEDIUM_MAX)
		size = SRD_MEDIUM_MAX;
	if (size > SRD_UX_BUF_MAX)
		return 0;
	ep->ux_buf_size = size;
	return util_pool_init(&ep->ux_buf_pool, size, 64, 2, 2, SRD_UX_BUFS,
			      NULL, NULL);
}

static uint8_t *srd_ux_buf_get(struct srd_ep *ep, struct srd_unexp *ux,
			       uint64_t len)
{
	uint8_t *buf = NULL;

	if (len <= ep->ux_buf_size)
		buf = util_pool_get(&ep->ux_buf_pool);
	if (buf) {
		ux->buf_pooled = true;
		ep->lstat.ux_pool++;
		return buf;
	}
	ep->lstat.ux_heap++;
	return malloc(len ? len : 1);
}

static int srd_rx_deliver(struct srd_ep *ep, const struct util_srx_dest *dest,
			  struct srd_unexp *ux);

static struct srd_ep *srd_srx_ep(struct util_srx *srx)
{
	return container_of(srx, struct srd_ep, srx);
}

static int srd_srx_deliver(struct util_srx *srx,
			   const struct util_srx_dest *dest,
			   struct util_srx_unexp *ux)
{
	return srd_rx_deliver(srd_srx_ep(srx), dest,
			      container_of(ux, struct srd_unexp, srx));
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
	srd_unexp_free(srd_srx_ep(srx), container_of(ux, struct srd_unexp, srx));
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
		.rx_size = ep->pc.rx_size, .iov_limit = SRD_IOV_MAX,
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
	ret = srd_cts_params(ep);
	if (!ret)
		ret = srd_cts_rx_init(ep);
	return ret ? ret : srd_ux_pool_init(ep);
}

void srd_rx_fini(struct srd_ep *ep)
{
	struct srd_rx_xfer *x, *tmp;

	if (!ep->rx_ready)
		return;
	DL_FOREACH_SAFE2(ep->read_pump, x, tmp, pump_next) {
		DL_DELETE2(ep->read_pump, x, pump_prev, pump_next);
		srd_xfer_free(ep, x);
	}
	srd_cts_rx_fini(ep);
	util_srx_fini(&ep->srx);
	/* After the unexpected messages that hold its buffers. */
	if (ep->ux_buf_size)
		util_pool_fini(&ep->ux_buf_pool);
	ep->ux_buf_size = 0;
	util_pool_fini(&ep->unexp_pool);
	util_pool_fini(&ep->xfer_pool);
	ep->rx_ready = false;
}

void srd_xfer_free(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	size_t i;

	for (i = 0; i < SRD_IOV_MAX; i++)
		if (x->mr[i])
			srd_dev_dereg_mr(ep->dev, x->mr[i]);
	util_pool_put(&ep->xfer_pool, x);
}

void srd_unexp_free(struct srd_ep *ep, struct srd_unexp *ux)
{
	if (ux->buf_pooled)
		util_pool_put(&ep->ux_buf_pool, ux->buf);
	else
		free(ux->buf);
	util_pool_put(&ep->unexp_pool, ux);
}

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

/* A MEDIUM segment into its transfer; completes it when all landed. */
static void srd_xfer_place(struct srd_ep *ep, struct srd_rx_xfer *x,
			   const struct srd_msg_info *m)
{
	uint64_t end = m->offset + m->seg_len;

	if (m->offset < x->dest.cap) {
		uint64_t n = end <= x->dest.cap ? m->seg_len :
						  x->dest.cap - m->offset;

		util_iov_copy_to(x->dest.iov, x->dest.iov_count, m->offset,
				m->payload, n);
	}
	x->received += m->seg_len;
	if (x->received < x->m.total_len)
		return;
	DL_DELETE(x->peer->rx_xfers, x);
	if (x->ux) {
		srd_unexp_ready(ep, x->ux);
	} else {
		srd_rx_complete(ep, &x->dest, &x->m,
				x->m.total_len < x->dest.cap ? x->m.total_len :
							      x->dest.cap, 0);
	}
	util_pool_put(&ep->xfer_pool, x);
}

/* A transfer entry for matched message m into dest; NULL: pool empty. */
struct srd_rx_xfer *srd_xfer_get(struct srd_ep *ep,
				 const struct util_srx_dest *dest,
				 const struct srd_msg_info *m)
{
	struct srd_rx_xfer *x = util_pool_get(&ep->xfer_pool);

	if (!x)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->peer = m->peer;
	x->m = *m;
	x->m.payload = NULL;	/* the packet goes back to the device */
	x->dest = *dest;
	return x;
}

static int srd_xfer_start(struct srd_ep *ep, const struct util_srx_dest *dest,
			  const struct srd_msg_info *m, struct srd_unexp *ux)
{
	struct srd_rx_xfer *x = srd_xfer_get(ep, dest, m);

	if (!x)
		return -FI_ENOMEM;
	x->ux = ux;
	if (ux)
		ux->xfer = x;
	DL_APPEND(m->peer->rx_xfers, x);
	srd_xfer_place(ep, x, m);
	return 0;
}

/* A matched message's first packet. */
static void srd_rx_start(struct srd_ep *ep, const struct util_srx_dest *dest,
			 const struct srd_msg_info *m)
{
	size_t n;

	switch (m->type) {
	case SRD_PKT_EAGER:
		n = m->seg_len < dest->cap ? m->seg_len : dest->cap;
		util_iov_copy_to(dest->iov, dest->iov_count, 0, m->payload, n);
		srd_rx_complete(ep, dest, m, n, 0);
		break;
	case SRD_PKT_MEDIUM:
		if (srd_xfer_start(ep, dest, m, NULL))
			srd_rx_complete(ep, dest, m, 0, FI_ENOMEM);
		break;
	case SRD_PKT_CTS_RTS:
		srd_cts_rx_start(ep, dest, m);
		break;
	default:
		srd_long_rx_start(ep, dest, m);
		break;
	}
}

static struct srd_unexp *srd_unexp_new(struct srd_ep *ep,
				       const struct srd_msg_info *m)
{
	struct srd_unexp *ux = util_pool_get(&ep->unexp_pool);

	if (!ux)
		return NULL;
	memset(ux, 0, sizeof(*ux));
	ux->m = *m;
	if (m->type != SRD_PKT_MEDIUM) {
		memcpy(ux->data, m->payload, m->seg_len);
		ux->m.payload = ux->data;
		return ux;
	}
	ux->buf = srd_ux_buf_get(ep, ux, m->total_len);
	if (!ux->buf) {
		util_pool_put(&ep->unexp_pool, ux);
		return NULL;
	}
	ux->m.payload = ux->buf;
	return ux;
}

static void srd_rx_unexpected(struct srd_ep *ep, bool tagged,
			      const struct srd_msg_info *m, fi_addr_t src)
{
	struct srd_unexp *ux = srd_unexp_new(ep, m);
	struct util_srx_dest dest;
	bool cq_data = m->flags & SRD_PKT_F_CQ_DATA;

	if (!ux) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"no memory for an unexpected message of %llu bytes: "
			"dropped\n", (unsigned long long)m->total_len);
		return;
	}
	util_srx_unexp_init(&ux->srx, src, m->tag, m->total_len,
			    cq_data ? m->cq_data : 0,
			    cq_data ? FI_REMOTE_CQ_DATA : 0);
	util_srx_add_unexp(&ep->srx, tagged, &ux->srx);
	if (m->type != SRD_PKT_MEDIUM)
		return;
	memset(&dest, 0, sizeof(dest));
	dest.iov_count = 1;
	dest.iov[0].iov_base = ux->buf;
	dest.iov[0].iov_len = m->total_len;
	dest.cap = m->total_len;
	if (srd_xfer_start(ep, &dest, m, ux))
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"no transfer entry for an unexpected message\n");
}

/* The first packet of a message, in msg_id order: match it. */
static void srd_rx_msg_first(struct srd_ep *ep, const struct srd_msg_info *m)
{
	bool tagged = m->flags & SRD_PKT_F_TAGGED;
	fi_addr_t src = srd_peer_fi_addr(ep, m->peer);
	struct util_srx_entry *e = util_srx_match(&ep->srx, tagged, src,
						  tagged ? m->tag : 0);
	struct util_srx_dest dest;

	if (!e) {
		srd_rx_unexpected(ep, tagged, m, src);
		return;
	}
	util_srx_dest(&ep->srx, e, m->total_len, &dest);
	srd_rx_start(ep, &dest, m);
}

/* A later MEDIUM segment of a message already matched. */
static void srd_rx_msg_later(struct srd_ep *ep, const struct srd_msg_info *m)
{
	struct srd_rx_xfer *x;

	DL_FOREACH(m->peer->rx_xfers, x) {
		if (x->m.msg_id == m->msg_id) {
			if (m->total_len != x->m.total_len ||
			    m->seg_len > x->m.total_len - x->received) {
				FI_WARN(&srd_prov, FI_LOG_EP_DATA,
					"segment does not fit message %u: "
					"dropped\n", m->msg_id);
				return;
			}
			srd_xfer_place(ep, x, m);
			return;
		}
	}
	/* A duplicate, or a segment of a message that failed. */
}

static int srd_rx_decode(struct srd_ep *ep, struct srd_peer *peer,
			 const void *pkt, size_t len, struct srd_msg_info *m)
{
	const struct srd_pkt_msg *h = pkt;

	m->peer = peer;
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
		if (m.type == SRD_PKT_MEDIUM)
			srd_rx_msg_later(ep, &m);
		return false;
	case SRD_REORDER_HELD:
		return false;
	default:
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
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

static int srd_rx_check_long(const struct srd_msg_info *m)
{
	const struct srd_pkt_iov *iov = (const struct srd_pkt_iov *)m->payload;
	uint32_t i, count = m->seg_len / sizeof(*iov);
	uint64_t sum = 0;

	if (m->seg_len % sizeof(*iov) || count > SRD_IOV_MAX || m->offset)
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		struct srd_pkt_iov v;

		memcpy(&v, &iov[i], sizeof(v));
		if (v.len > m->total_len - sum)
			return -FI_EINVAL;
		sum += v.len;
	}
	return sum == m->total_len ? 0 : -FI_EINVAL;
}

/* Lengths and offsets of a message packet against the packet itself, the
 * message and our limits. */
int srd_rx_check(struct srd_ep *ep, const struct srd_msg_info *m,
		 size_t payload_len)
{
	int ret = 0;

	if (m->seg_len != payload_len || m->total_len > ep->pc.max_msg_size)
		ret = -FI_EINVAL;
	else if (m->type == SRD_PKT_EAGER)
		ret = (m->offset || m->seg_len != m->total_len ||
		       m->seg_len > ep->pc.eager_max) ? -FI_EINVAL : 0;
	else if (m->type == SRD_PKT_MEDIUM)
		ret = (!m->seg_len || m->seg_len > ep->pc.eager_max ||
		       m->seg_len > m->total_len ||
		       m->offset > m->total_len - m->seg_len) ? -FI_EINVAL : 0;
	else if (m->type == SRD_PKT_LONG_RTS)
		ret = srd_rx_check_long(m);
	else if (m->type == SRD_PKT_CTS_RTS)
		/* Its first chunk must fit an unexpected entry's data[]. */
		ret = (m->offset || m->seg_len > m->total_len ||
		       m->seg_len > ep->pc.eager_max) ? -FI_EINVAL : 0;
	else
		ret = -FI_EINVAL;
	if (ret)
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"%s from qpn %u: bad lengths (total %llu offset %llu "
			"segment %u in %zu bytes): dropped\n",
			srd_pkt_type_str(m->type), m->peer->name.qpn,
			(unsigned long long)m->total_len,
			(unsigned long long)m->offset, m->seg_len, payload_len);
	return ret;
}

/* An unexpected MEDIUM message has fully arrived: hand it to the
 * receive that took it meanwhile, if any. */
void srd_unexp_ready(struct srd_ep *ep, struct srd_unexp *ux)
{
	ux->xfer = NULL;
	if (!ux->then_set)
		return;
	srd_rx_deliver(ep, &ux->then, ux);
}

/* A receive takes unexpected message ux (already off the queue); ux is
 * freed here or, for a MEDIUM message still arriving, when it completes. */
static int srd_rx_deliver(struct srd_ep *ep, const struct util_srx_dest *dest,
		   struct srd_unexp *ux)
{
	const struct srd_msg_info *m = &ux->m;
	size_t n;

	switch (m->type) {
	case SRD_PKT_LONG_RTS:
		srd_long_rx_start(ep, dest, m);
		break;
	case SRD_PKT_CTS_RTS:
		srd_cts_rx_start(ep, dest, m);
		break;
	case SRD_PKT_MEDIUM:
		if (ux->xfer) {
			ux->then = *dest;
			ux->then_set = true;
			return 0;
		}
		/* fall through */
	default:
		n = m->total_len < dest->cap ? m->total_len : dest->cap;
		util_iov_copy_to(dest->iov, dest->iov_count, 0, m->payload, n);
		srd_rx_complete(ep, dest, m, n, 0);
		break;
	}
	srd_unexp_free(ep, ux);
	return 0;
}
