/* SPDX-License-Identifier: MIT */
/*
 * Long messages by RDMA read. The sender registers its buffers (the
 * application's descriptor where srd_mr.c can turn it into keys, else a
 * registration now: no MR cache yet) and sends LONG_RTS with its iovs; the
 * receiver, once matched, registers its own buffer, reads the data with
 * RDMA reads of at most max_rdma_size, then answers READ_DONE, on which
 * the sender completes. A truncating receiver reads what fits. Used above
 * medium_max when the peer announced SRD_FEAT_RDMA_READ in its handshake
 * (srd_proto_read_ok); otherwise CTS (srd_proto_cts.c).
 *
 * Peer failure: a send waiting for READ_DONE ends with the error (the
 * liveness probe finds a receiver that is gone, srd_watch.c); a receive
 * stops posting reads, waits for those the device holds (they complete
 * with errors of their own), sends no READ_DONE and completes with the
 * error. A receive matched after its sender failed starts a new
 * handshake first (reads need a peer that is there), which fails in turn
 * when the sender is gone.
 */
#include "weft/compat.h"
#include "../srd_proto.h"
#include "srd_stripe.h"

#include <errno.h>
#include <string.h>

#define SRD_READ_CHUNK_DEFAULT (1u << 20)

static bool srd_long_read_fits(const struct srd_ep *ep,
			       const struct srd_peer *peer, uint64_t len)
{
	(void)len;
	return srd_proto_read_ok(ep, peer);
}

static struct ibv_mr *srd_long_reg(struct srd_ep *ep, void *buf, size_t len,
				   int access)
{
	struct ibv_mr *mr = srd_dev_reg_mr(ep->dev, buf, len, access);

	if (!mr)
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"registering %zu bytes for a long message: %s\n", len,
			strerror(errno));
	return mr;
}

static void srd_long_tx_release(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	size_t i;

	for (i = 0; i < SRD_IOV_MAX; i++) {
		srd_dev_dereg_mr(ep->dev, tx->mr[i]);
		tx->mr[i] = NULL;
	}
	for (uint32_t k = 1; k < tx->rails; k++) {
		for (i = 0; i < SRD_IOV_MAX; i++) {
			srd_stripe_dereg(ep, k, tx->rail_mr[k - 1][i]);
			tx->rail_mr[k - 1][i] = NULL;
		}
	}
	tx->rails = 1;
}

static int srd_long_tx_keys(struct srd_ep *ep, struct srd_tx_entry *tx,
			    void **desc, struct srd_pkt_iov *out,
			    uint32_t *count)
{
	uint32_t lkey, rkey;
	size_t i;

	*count = 0;
	for (i = 0; i < tx->iov_count; i++) {
		if (!tx->iov[i].iov_len)
			continue;
		if (desc && desc[i] &&
		    !srd_mr_desc_keys(desc[i], &lkey, &rkey)) {
			out[*count].key = rkey;
		} else {
			tx->mr[i] = srd_long_reg(ep, tx->iov[i].iov_base,
						 tx->iov[i].iov_len,
						 IBV_ACCESS_LOCAL_WRITE |
						 IBV_ACCESS_REMOTE_READ);
			if (!tx->mr[i])
				return -FI_ENOMEM;
			out[*count].key = tx->mr[i]->rkey;
		}
		out[*count].addr = (uintptr_t)tx->iov[i].iov_base;
		out[*count].len = tx->iov[i].iov_len;
		(*count)++;
	}
	return 0;
}

/* Striped: the same iovs registered on rails 1..rails-1, their keys after
 * the iovs (struct srd_pkt_stripe). On a refusal the message goes on
 * the rails registered so far (at least rail 0). */
static void srd_long_tx_rail_keys(struct srd_ep *ep, struct srd_tx_entry *tx,
				  uint32_t rails, uint32_t count,
				  uint32_t *keys)
{
	for (uint32_t k = 1; k < rails; k++) {
		uint32_t n = 0;

		for (size_t i = 0; i < tx->iov_count; i++) {
			struct ibv_mr *mr;

			if (!tx->iov[i].iov_len)
				continue;
			mr = srd_stripe_reg(ep, k, tx->iov[i].iov_base,
					    tx->iov[i].iov_len,
					    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_READ);
			if (!mr) {
				/* rails below k stay; this one goes */
				while (i--) {
					srd_stripe_dereg(ep, k,
							 tx->rail_mr[k - 1][i]);
					tx->rail_mr[k - 1][i] = NULL;
				}
				return;
			}
			tx->rail_mr[k - 1][i] = mr;
			keys[(k - 1) * count + n++] = mr->rkey;
		}
		tx->rails = k + 1;
	}
}

/* LONG_RTS payload: the iovs, and with rails toward the peer and a
 * message worth striping, the stripe header and the rails' keys. */
static int srd_long_tx_payload(struct srd_ep *ep, struct srd_tx_entry *tx,
			       void **desc, struct srd_pkt_msg *h)
{
	uint32_t rails = tx->total_len > SRD_STRIPE_MIN ?
			 srd_stripe_rails(ep, tx->peer) : 1;
	struct srd_pkt_stripe *st = (struct srd_pkt_stripe *)(h + 1);
	struct srd_pkt_iov *iov = (struct srd_pkt_iov *)(h + 1);
	uint32_t keys[(SRD_RAILS_MAX - 1) * SRD_IOV_MAX];
	uint32_t count;
	int ret;

	if (rails > 1)
		iov = (struct srd_pkt_iov *)(st + 1);
	ret = srd_long_tx_keys(ep, tx, desc, iov, &count);
	if (ret)
		return ret;
	if (rails > 1)
		srd_long_tx_rail_keys(ep, tx, rails, count, keys);
	if (tx->rails < 2) {
		if (rails > 1)
			memmove(h + 1, iov, count * sizeof(*iov));
		h->seg_len = count * sizeof(*iov);
		return 0;
	}
	memset(st, 0, sizeof(*st));
	st->rails = (uint8_t)tx->rails;
	st->iov_count = (uint8_t)count;
	memcpy(iov + count, keys, (tx->rails - 1) * count * sizeof(*keys));
	h->seg_len = (uint32_t)srd_pkt_stripe_len(tx->rails, count);
	h->base.flags |= SRD_PKT_F_RAILS;
	return 0;
}

static int srd_long_tx_start(struct srd_ep *ep, struct srd_tx_entry *tx,
			     void **desc)
{
	struct srd_txbuf *tb = srd_txbuf_get(ep);
	struct srd_pkt_msg *h;
	int ret;

	if (!tb)
		return -FI_EAGAIN;
	h = (struct srd_pkt_msg *)tb->data;
	srd_msg_hdr_fill(tx, h, SRD_PKT_LONG_RTS, 0, 0);
	ret = srd_long_tx_payload(ep, tx, desc, h);
	if (ret) {
		srd_long_tx_release(ep, tx);
		srd_txbuf_put(ep, tb);
		return ret;
	}
	tx->sent = tx->total_len;
	tx->inflight = 1;
	tx->done_wait = true;
	tb->tx = tx;
	ep->lstat.long_rts++;
	srd_watch_arm(ep);
	srd_pkt_send(ep, tx->peer, tb, sizeof(*h) + h->seg_len);
	return 0;
}

/* ---- receiver ---------------------------------------------------------- */

static int srd_long_rx_check(const struct srd_ep *ep,
			     const struct srd_msg_info *m)
{
	const struct srd_pkt_iov *iov = (const struct srd_pkt_iov *)
		srd_pkt_rts_iovs(m->flags, m->payload);
	uint32_t i, count;
	uint64_t sum = 0;

	(void)ep;
	/* srd_pkt_validate checked the layout; this is what the receive
	 * relies on, checked again where it is used */
	if (m->flags & SRD_PKT_F_RAILS) {
		const struct srd_pkt_stripe *st = (const void *)m->payload;

		if (m->seg_len < sizeof(*st) || st->rails < 2 ||
		    st->rails > SRD_RAILS_MAX ||
		    m->seg_len != srd_pkt_stripe_len(st->rails, st->iov_count))
			return -FI_EINVAL;
	} else if (m->seg_len % sizeof(*iov)) {
		return -FI_EINVAL;
	}
	count = (uint32_t)srd_pkt_rts_iov_count(m->flags, m->payload,
						m->seg_len);
	if (!count || count > SRD_IOV_MAX || m->offset)
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

static uint64_t srd_long_want(const struct srd_rx_xfer *x)
{
	return x->m.total_len < x->dest.cap ? x->m.total_len : x->dest.cap;
}

static int srd_long_rx_reg(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	size_t i;

	for (i = 0; i < x->dest.iov_count; i++) {
		if (!x->dest.iov[i].iov_len)
			continue;
		x->mr[i] = srd_long_reg(ep, x->dest.iov[i].iov_base,
					x->dest.iov[i].iov_len,
					IBV_ACCESS_LOCAL_WRITE);
		if (!x->mr[i])
			return -FI_ENOMEM;
	}
	return 0;
}

/* Striped LONG_RTS: our buffer on each rail both ends have, and the
 * sender's keys there; as many rails as register (rail 0 always). */
static void srd_long_rx_rails(struct srd_ep *ep, struct srd_rx_xfer *x,
			      const struct srd_msg_info *m)
{
	const struct srd_pkt_stripe *st = (const void *)m->payload;
	const uint8_t *keys = srd_pkt_rts_iovs(m->flags, m->payload) +
			      x->src_count * sizeof(struct srd_pkt_iov);
	uint32_t rails = srd_stripe_rails(ep, x->peer);

	rails = st->rails < rails ? st->rails : rails;
	for (uint32_t k = 1; k < rails; k++) {
		for (size_t i = 0; i < x->dest.iov_count; i++) {
			if (!x->dest.iov[i].iov_len)
				continue;
			x->rail_mr[k - 1][i] =
				srd_stripe_reg(ep, k, x->dest.iov[i].iov_base,
					       x->dest.iov[i].iov_len,
					       IBV_ACCESS_LOCAL_WRITE);
			if (x->rail_mr[k - 1][i])
				continue;
			while (i--) {
				srd_stripe_dereg(ep, k, x->rail_mr[k - 1][i]);
				x->rail_mr[k - 1][i] = NULL;
			}
			return;
		}
		memcpy(x->rail_key[k - 1], keys + (size_t)(k - 1) *
		       x->src_count * sizeof(uint32_t),
		       x->src_count * sizeof(uint32_t));
		x->rails = k + 1;
	}
	x->stripe_chunk = srd_stripe_chunk(srd_long_want(x), x->rails);
}

static size_t srd_src_seek(const struct srd_rx_xfer *x, uint64_t off,
			   uint64_t *in)
{
	size_t i;

	for (i = 0; i < x->src_count; i++) {
		if (off < x->src[i].len)
			break;
		off -= x->src[i].len;
	}
	*in = off;
	return i;
}

/* Post the next read of x; -FI_EAGAIN when the send queue is full or the
 * peer is not there yet. */
static int srd_long_read_one(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	uint64_t din, sin, n, chunk = ep->dev->caps.max_rdma_size ?
				      ep->dev->caps.max_rdma_size :
				      SRD_READ_CHUNK_DEFAULT;
	uint32_t k = x->next_rail;
	size_t di = util_iov_seek(x->dest.iov, x->dest.iov_count, x->read_off,
				 &din);
	size_t si = srd_src_seek(x, x->read_off, &sin);
	int ret;

	if (di >= x->dest.iov_count || si >= x->src_count || !x->mr[di])
		return -FI_EINVAL;
	/* Its sender failed since the message arrived: a new handshake
	 * says whether it is still there (if not, srd_peer_fail ends x). */
	if (x->peer->state == SRD_PEER_NEW)
		srd_peer_hello_send(ep, x->peer, SRD_PKT_HELLO);
	n = x->dest.iov[di].iov_len - din;
	n = n < x->src[si].len - sin ? n : x->src[si].len - sin;
	if (x->rails > 1 && chunk > x->stripe_chunk)
		chunk = x->stripe_chunk;
	n = n < chunk ? n : chunk;
	n = n < srd_long_want(x) - x->read_off ? n :
						  srd_long_want(x) - x->read_off;
	if (!k)
		ret = srd_post_rdma(ep, x->peer, &x->hdr, false,
				    x->mr[di]->lkey,
				    (uint8_t *)x->dest.iov[di].iov_base + din,
				    n, (uint32_t)x->src[si].key,
				    x->src[si].addr + sin);
	else if (!x->rail_mr[k - 1][di])
		ret = -FI_EINVAL;
	else
		ret = srd_stripe_read(ep, x->peer, k, &x->hdr,
				      x->rail_mr[k - 1][di]->lkey,
				      (uint8_t *)x->dest.iov[di].iov_base + din,
				      n, x->rail_key[k - 1][si],
				      x->src[si].addr + sin);
	if (ret)
		return ret;
	x->next_rail = (k + 1) % x->rails;
	x->read_off += n;
	x->reads_inflight++;
	return 0;
}

/* All reads back: tell the sender (unless it failed: a packet would start
 * a handshake), complete the receive. */
static int srd_long_finish(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	int ret = 0;

	if (x->peer->state == SRD_PEER_READY)
		ret = srd_rx_ctrl_send(ep, x, SRD_PKT_READ_DONE, 0, x->read_off,
				       x->err ? -x->err : 0);
	if (ret)
		return ret;
	srd_rx_complete_err(ep, &x->dest, &x->m, x->read_off, x->err,
			    x->prov_errno);
	srd_xfer_free(ep, x);
	return 0;
}

/* One pass over the reads to post and the READ_DONE to send. */
static enum srd_rx_step srd_long_rx_step(struct srd_ep *ep,
					 struct srd_rx_xfer *x)
{
	while (!x->err && x->read_off < srd_long_want(x)) {
		int ret = srd_long_read_one(ep, x);

		if (ret == -FI_EAGAIN)
			return SRD_RX_STEP_WAIT;
		if (ret)
			srd_xfer_fail(x, FI_EIO, 0);
	}
	if (x->reads_inflight)
		return SRD_RX_STEP_WAIT;
	return srd_long_finish(ep, x) ? SRD_RX_STEP_WAIT : SRD_RX_STEP_DONE;
}

static void srd_long_rx_start(struct srd_ep *ep,
			      const struct util_srx_dest *dest,
			      const struct srd_msg_info *m)
{
	struct srd_rx_xfer *x = srd_xfer_get(ep, dest, m);

	if (!x) {
		srd_rx_complete(ep, dest, m, 0, FI_ENOMEM);
		return;
	}
	x->hdr.kind = SRD_WR_READ;
	x->rails = 1;
	x->src_count = (uint32_t)srd_pkt_rts_iov_count(m->flags, m->payload,
						       m->seg_len);
	memcpy(x->src, srd_pkt_rts_iovs(m->flags, m->payload),
	       x->src_count * sizeof(struct srd_pkt_iov));
	if (srd_long_rx_reg(ep, x))
		srd_xfer_fail(x, FI_ENOMEM, 0);
	else if (m->flags & SRD_PKT_F_RAILS)
		srd_long_rx_rails(ep, x, m);
	srd_rx_pump_add(ep, x);
	srd_watch_arm(ep);
	srd_long_rx_step(ep, x);
}

/* An RDMA read of x completed; the pump at the end of this batch goes
 * on with x. */
static void srd_long_read_done(struct srd_ep *ep, struct srd_wr_hdr *hdr,
			       const struct srd_dev_wc *wc)
{
	struct srd_rx_xfer *x = container_of(hdr, struct srd_rx_xfer, hdr);
	struct srd_dev_wc_err e;

	x->reads_inflight--;
	if (WEFT_UNLIKELY(wc->status != IBV_WC_SUCCESS) && !x->err) {
		srd_dev_wc_err_map(wc->status, wc->vendor_err, &e);
		/* The key is the sender's own, made for this message: refused
		 * means the sender revoked it, having given the message up
		 * (its send failed), not that this application lacks a
		 * permission. */
		if (e.prov_errno == SRD_EFA_IO_REMOTE_BAD_ADDRESS ||
		    wc->status == IBV_WC_REM_ACCESS_ERR) {
			e.err = FI_EIO;
			e.prov_errno = SRD_PROV_ERRNO_WITHDRAWN;
		}
		srd_peer_report(ep, x->peer, e.prov_errno);
		srd_xfer_fail(x, e.err, e.prov_errno);
	}
}

static void srd_long_peer_failed(struct srd_ep *ep, struct srd_peer *peer,
				 int err, int prov_errno)
{
	struct srd_rx_xfer *x, *tmp;

	srd_tx_fail_peer(ep, peer, &srd_proto_long_read, err, prov_errno);
	DL_FOREACH_SAFE(peer->rx_xfers, x, tmp) {
		if (x->proto != &srd_proto_long_read)
			continue;
		srd_xfer_fail(x, err, SRD_PROV_ERRNO_PEER_LOST);
		/* done here unless reads are still with the device */
		srd_long_rx_step(ep, x);
	}
}

const struct srd_proto srd_proto_long_read = {
	.name = "long-read",
	.peer_failed = srd_long_peer_failed,
	.fits = srd_long_read_fits,
	.tx_start = srd_long_tx_start,
	.tx_release = srd_long_tx_release,
	.msg_type = SRD_PKT_LONG_RTS,
	.rx_check = srd_long_rx_check,
	.rx_start = srd_long_rx_start,
	.rx_step = srd_long_rx_step,
	.wr_kind = SRD_WR_READ,
	.wr_done = srd_long_read_done,
};
