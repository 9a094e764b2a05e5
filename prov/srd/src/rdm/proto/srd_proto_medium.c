/* SPDX-License-Identifier: MIT */
/*
 * MEDIUM: a message of a few packets, pushed by the sender as segments of
 * at most eager_max bytes (as many as packet buffers allow at once, the
 * rest from the send pump), each carrying the message header and its
 * offset. Used above eager_max up to the long protocols' threshold:
 * medium_max where RDMA read works at both ends, cts_threshold elsewhere.
 *
 * The receiver matches the first segment to arrive in msg_id order and
 * lands every segment by offset, into the matched receive or, when none
 * is posted yet, into a buffer of the whole message kept with the
 * unexpected entry (from the endpoint's pool when it fits).
 *
 * Peer failure: sends to the peer with segments still to hand out end
 * with the error; transfers from it end too: a matched receive completes
 * with the error, an unexpected message is marked so that the receive
 * that takes it (now or later) completes with the error. Transfers from
 * a peer are watched (srd_watch.c), so a sender that dies half way is
 * found within the probe interval even when the receiver sends nothing.
 */
#include "weft/compat.h"
#include "../srd_proto.h"

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
static int srd_medium_ep_init(struct srd_ep *ep)
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

/* After the unexpected messages that hold its buffers (srd_rx_fini). */
static void srd_medium_ep_fini(struct srd_ep *ep)
{
	if (ep->ux_buf_size)
		util_pool_fini(&ep->ux_buf_pool);
	ep->ux_buf_size = 0;
}

/* ---- sending ---------------------------------------------------------- */

static bool srd_medium_fits(const struct srd_ep *ep,
			    const struct srd_peer *peer, uint64_t len)
{
	return len <= (srd_proto_read_ok(ep, peer) ? ep->medium_max :
						     ep->cts_threshold);
}

static bool srd_medium_tx_step(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	struct srd_txbuf *tb;

	while (tx->sent < tx->total_len) {
		tb = srd_txbuf_get(ep);
		if (!tb)
			return false;
		srd_tx_segment(ep, tx, tb, SRD_PKT_MEDIUM, ep->pc.eager_max);
	}
	return true;
}

static int srd_medium_tx_start(struct srd_ep *ep, struct srd_tx_entry *tx,
			       void **desc)
{
	(void)desc;
	srd_tx_pump_add(ep, tx);
	srd_tx_pump(ep);
	return 0;
}

/* ---- receiving ----------------------------------------------------------- */

static int srd_medium_rx_check(const struct srd_ep *ep,
			       const struct srd_msg_info *m)
{
	return (!m->seg_len || m->seg_len > ep->pc.eager_max ||
		m->seg_len > m->total_len ||
		m->offset > m->total_len - m->seg_len) ? -FI_EINVAL : 0;
}

/* A segment into its transfer; completes it when all landed. */
static void srd_medium_place(struct srd_ep *ep, struct srd_rx_xfer *x,
			     const struct srd_msg_info *m)
{
	uint64_t end = m->offset + m->seg_len;
	struct srd_unexp *ux = x->ux;

	if (m->offset < x->dest.cap) {
		uint64_t n = end <= x->dest.cap ? m->seg_len :
						  x->dest.cap - m->offset;

		util_iov_copy_to(x->dest.iov, x->dest.iov_count, m->offset,
				m->payload, n);
	}
	x->received += m->seg_len;
	if (x->received < x->m.total_len)
		return;
	if (!ux)
		srd_rx_complete(ep, &x->dest, &x->m,
				x->m.total_len < x->dest.cap ? x->m.total_len :
							      x->dest.cap, 0);
	srd_xfer_free(ep, x);
	if (ux)
		srd_unexp_ready(ep, ux);
}

/* A transfer of m into dest (ux: an unexpected entry's buffer), with its
 * first segment. */
static int srd_medium_start(struct srd_ep *ep, const struct util_srx_dest *dest,
			    const struct srd_msg_info *m, struct srd_unexp *ux)
{
	struct srd_rx_xfer *x = srd_xfer_get(ep, dest, m);

	if (!x)
		return -FI_ENOMEM;
	x->ux = ux;
	if (ux)
		ux->xfer = x;
	srd_watch_arm(ep);
	srd_medium_place(ep, x, m);
	return 0;
}

static void srd_medium_rx_start(struct srd_ep *ep,
				const struct util_srx_dest *dest,
				const struct srd_msg_info *m)
{
	if (srd_medium_start(ep, dest, m, NULL))
		srd_rx_complete(ep, dest, m, 0, FI_ENOMEM);
}

/* A later segment of a message already matched. */
static void srd_medium_rx_more(struct srd_ep *ep, const struct srd_msg_info *m)
{
	struct srd_rx_xfer *x;

	DL_FOREACH(m->peer->rx_xfers, x) {
		if (x->proto != &srd_proto_medium || x->m.msg_id != m->msg_id)
			continue;
		if (m->total_len != x->m.total_len ||
		    m->seg_len > x->m.total_len - x->received) {
			WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
				"segment does not fit message %u: dropped\n",
				m->msg_id);
			return;
		}
		srd_medium_place(ep, x, m);
		return;
	}
	/* A duplicate, or a segment of a message that failed. */
}

static uint8_t *srd_medium_ux_buf(struct srd_ep *ep, struct srd_unexp *ux,
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

/* No receive yet: the whole message lands in a buffer of its own. */
static int srd_medium_rx_unexp(struct srd_ep *ep, struct srd_unexp *ux)
{
	struct util_srx_dest dest;
	int ret;

	ux->buf = srd_medium_ux_buf(ep, ux, ux->m.total_len);
	if (!ux->buf)
		return -FI_ENOMEM;
	memset(&dest, 0, sizeof(dest));
	dest.iov_count = 1;
	dest.iov[0].iov_base = ux->buf;
	dest.iov[0].iov_len = ux->m.total_len;
	dest.cap = ux->m.total_len;
	ret = srd_medium_start(ep, &dest, &ux->m, ux);
	if (ret) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"no transfer entry for an unexpected message\n");
		return ret;
	}
	ux->m.payload = ux->buf;
	return 0;
}

/* A receive takes unexpected ux: now if it arrived whole (or can no
 * longer), else when its last segment lands (srd_unexp_ready). */
static void srd_medium_rx_deliver(struct srd_ep *ep,
				  const struct util_srx_dest *dest,
				  struct srd_unexp *ux)
{
	const struct srd_msg_info *m = &ux->m;
	size_t n = m->total_len < dest->cap ? m->total_len : dest->cap;

	if (ux->xfer) {
		ux->then = *dest;
		ux->then_set = true;
		return;
	}
	if (ux->err) {
		srd_rx_complete_err(ep, dest, m, 0, ux->err, ux->prov_errno);
	} else {
		util_iov_copy_to(dest->iov, dest->iov_count, 0, m->payload, n);
		srd_rx_complete(ep, dest, m, n, 0);
	}
	srd_unexp_free(ep, ux);
}

/* ---- peer failure ----------------------------------------------------- */

static void srd_medium_peer_failed(struct srd_ep *ep, struct srd_peer *peer,
				   int err, int prov_errno)
{
	struct srd_rx_xfer *x, *tmp;
	struct srd_unexp *ux;

	srd_tx_fail_peer(ep, peer, &srd_proto_medium, err, prov_errno);
	DL_FOREACH_SAFE(peer->rx_xfers, x, tmp) {
		if (x->proto != &srd_proto_medium)
			continue;
		ux = x->ux;
		if (!ux)
			srd_rx_complete_err(ep, &x->dest, &x->m, 0, err,
					    SRD_PROV_ERRNO_PEER_LOST);
		srd_xfer_free(ep, x);
		if (!ux)
			continue;
		/* Its receive, if one took it, completes now with the
		 * error; otherwise the one that takes it later will. */
		ux->err = err;
		ux->prov_errno = SRD_PROV_ERRNO_PEER_LOST;
		srd_unexp_ready(ep, ux);
	}
}

const struct srd_proto srd_proto_medium = {
	.name = "medium",
	.ep_init = srd_medium_ep_init,
	.ep_fini = srd_medium_ep_fini,
	.peer_failed = srd_medium_peer_failed,
	.fits = srd_medium_fits,
	.tx_start = srd_medium_tx_start,
	.tx_step = srd_medium_tx_step,
	.msg_type = SRD_PKT_MEDIUM,
	.rx_check = srd_medium_rx_check,
	.rx_start = srd_medium_rx_start,
	.rx_more = srd_medium_rx_more,
	.rx_unexp = srd_medium_rx_unexp,
	.rx_deliver = srd_medium_rx_deliver,
};
