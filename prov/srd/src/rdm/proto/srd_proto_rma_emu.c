/* SPDX-License-Identifier: MIT */
/*
 * Emulated RMA (no RDMA on one side, application keys, or forced): WRITE
 * segments answered by RMA_ACK, READ_REQ answered by READ_RESP segments.
 * The target checks every access with util_mr_check before it touches a
 * byte; a refused access is answered with the error status, which becomes
 * the initiator's error completion.
 *
 * A write of several segments sends the LAST one only when all others are
 * acknowledged, so the target can raise the remote CQ entry and counter
 * on LAST without keeping any state per transfer.
 */
#include "weft/compat.h"
#include "../srd_rma.h"

#include <string.h>
#include <utlist.h>

/* ---- initiator ---------------------------------------------------------- */

static uint32_t srd_rma_emu_nseg(const struct srd_ep *ep, uint64_t len)
{
	uint32_t seg = ep->rma->seg_max;

	return len ? (uint32_t)((len + seg - 1) / seg) : 1;
}

static struct srd_txbuf *srd_rma_txbuf(struct srd_ep *ep,
				       struct srd_rma_op *op)
{
	struct srd_txbuf *tb = srd_txbuf_get(ep);

	if (tb)
		tb->owner = &op->hdr;
	return tb;
}

void srd_rma_send(struct srd_ep *ep, struct srd_rma_op *op,
		  struct srd_txbuf *tb, size_t len)
{
	op->sends++;
	op->inflight++;
	srd_watch_arm(ep);
	srd_pkt_send(ep, op->peer, tb, len);
}

/* The segment starting at op->posted. */
static int srd_rma_emu_write_seg(struct srd_ep *ep, struct srd_rma_op *op,
				 bool last)
{
	struct srd_txbuf *tb = srd_rma_txbuf(ep, op);
	struct srd_pkt_rma *r;
	uint64_t n = op->len - op->posted;
	uint16_t flags = SRD_PKT_F_ACK_REQ;

	if (!tb)
		return -FI_EAGAIN;
	if (n > ep->rma->seg_max)
		n = ep->rma->seg_max;
	if (last)
		flags |= SRD_PKT_F_LAST | op->pkt_flags;
	r = (struct srd_pkt_rma *)tb->data;
	memset(r, 0, sizeof(*r));
	srd_pkt_base_init(&r->base, SRD_PKT_WRITE, flags, SRD_PEER_ID_NONE);
	r->tx_id = op->id;
	r->seg_len = (uint32_t)n;
	r->addr = op->addr;
	r->key = op->key;
	r->len = op->len;
	r->offset = op->posted;
	if (last)
		r->cq_data = op->pkt_flags & SRD_PKT_F_CQ_DATA ? op->cq_data : 0;
	util_iov_copy_from(op->iov, op->iov_count, op->posted, r + 1, n);
	op->posted += n;
	srd_rma_send(ep, op, tb, sizeof(*r) + n);
	return 0;
}

static int srd_rma_emu_write_pump(struct srd_ep *ep, struct srd_rma_op *op)
{
	uint32_t seg = ep->rma->seg_max;
	int ret;

	if (!op->nseg)
		op->nseg = srd_rma_emu_nseg(ep, op->len);
	while (op->len - op->posted > seg) {
		ret = srd_rma_emu_write_seg(ep, op, false);
		if (ret)
			return ret;
	}
	/* LAST waits for every other acknowledgement (the ack handler
	 * resumes the op). */
	if (op->acked + 1 < op->nseg)
		return 0;
	ret = srd_rma_emu_write_seg(ep, op, true);
	if (ret)
		return ret;
	op->all_posted = true;
	return 0;
}

static int srd_rma_emu_read_pump(struct srd_ep *ep, struct srd_rma_op *op)
{
	struct srd_txbuf *tb = srd_rma_txbuf(ep, op);
	struct srd_pkt_rma *r;

	if (!tb)
		return -FI_EAGAIN;
	r = (struct srd_pkt_rma *)tb->data;
	memset(r, 0, sizeof(*r));
	srd_pkt_base_init(&r->base, SRD_PKT_READ_REQ, 0, SRD_PEER_ID_NONE);
	r->tx_id = op->id;
	r->addr = op->addr;
	r->key = op->key;
	r->len = op->len;
	op->posted = op->len;
	op->all_posted = true;
	srd_rma_send(ep, op, tb, sizeof(*r));
	return 0;
}

static int srd_rma_emu_pump(struct srd_ep *ep, struct srd_rma_op *op)
{
	if (op->kind == SRD_RMA_WRITE)
		return srd_rma_emu_write_pump(ep, op);
	return srd_rma_emu_read_pump(ep, op);
}

int srd_rma_emu_inject(struct srd_ep *ep, struct srd_rma_op *op)
{
	op->carrier = &srd_rma_emu;
	op->nseg = 1;
	if (srd_rma_emu_write_seg(ep, op, true))
		return -FI_EAGAIN;
	op->all_posted = true;
	return 0;
}

/* A packet of ours was sent (or will never be): an answer may or may not
 * have come already. */
void srd_rma_emu_wc(struct srd_ep *ep, struct srd_rma_op *op,
		    const struct srd_dev_wc *wc)
{
	struct srd_dev_wc_err e;

	op->sends--;
	if (WEFT_UNLIKELY(wc->status != IBV_WC_SUCCESS)) {
		/* Not delivered: no answer will come for it (none counted
		 * once the peer failed). */
		if (!op->abandoned)
			op->inflight--;
		srd_dev_wc_err_map(wc->status, wc->vendor_err, &e);
		srd_rma_op_fail(op, e.err, e.prov_errno);
	}
	srd_rma_op_try_complete(ep, op);
}

static struct srd_rma_op *srd_rma_emu_op(struct srd_ep *ep,
					 struct srd_peer *peer,
					 const struct srd_pkt_resp *r,
					 uint8_t kind)
{
	struct srd_rma_op *op = srd_rma_op_by_id(ep, r->tx_id, peer);

	if (WEFT_UNLIKELY(!op || op->kind != kind ||
			  op->carrier != &srd_rma_emu || !op->inflight)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"%s from qpn %u for unknown transfer 0x%x: dropped\n",
			srd_pkt_type_str(r->base.type), peer->name.qpn,
			r->tx_id);
		return NULL;
	}
	return op;
}

void srd_rma_emu_handle_ack(struct srd_ep *ep, struct srd_peer *peer,
			    const void *pkt, size_t len)
{
	const struct srd_pkt_resp *r = pkt;
	struct srd_rma_op *op = srd_rma_emu_op(ep, peer, r, SRD_RMA_WRITE);

	(void)len;
	if (!op)
		return;
	op->inflight--;
	op->acked++;
	if (r->status)
		srd_rma_op_fail(op, -r->status, 0);
	if (!op->all_posted && !op->err && op->acked + 1 == op->nseg)
		srd_rma_op_resume(ep, op);
	else
		srd_rma_op_try_complete(ep, op);
}

void srd_rma_emu_handle_read_resp(struct srd_ep *ep, struct srd_peer *peer,
				  const void *pkt, size_t len)
{
	const struct srd_pkt_resp *r = pkt;
	struct srd_rma_op *op = srd_rma_emu_op(ep, peer, r, SRD_RMA_READ);

	(void)len;
	if (!op)
		return;
	if (r->status) {
		srd_rma_op_fail(op, -r->status, 0);
	} else if (r->offset > op->len || r->seg_len > op->len - r->offset) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"READ_RESP from qpn %u: %u bytes at %llu of a %llu-byte read\n",
			peer->name.qpn, r->seg_len,
			(unsigned long long)r->offset,
			(unsigned long long)op->len);
		srd_rma_op_fail(op, FI_EIO, 0);
	} else {
		util_iov_copy_to(op->iov, op->iov_count, r->offset, r + 1,
				r->seg_len);
		op->done += r->seg_len;
		if (op->done < op->len)
			return;
	}
	op->inflight--;
	srd_rma_op_try_complete(ep, op);
}

/* ---- target ------------------------------------------------------------- */

int srd_rma_send_status(struct srd_ep *ep, struct srd_peer *peer,
			uint8_t type, uint32_t tx_id, int status)
{
	struct srd_txbuf *tb = srd_txbuf_get(ep);
	struct srd_pkt_resp *r;

	if (!tb)
		return -FI_EAGAIN;
	tb->owner = NULL;
	r = (struct srd_pkt_resp *)tb->data;
	memset(r, 0, sizeof(*r));
	srd_pkt_base_init(&r->base, type, 0, SRD_PEER_ID_NONE);
	r->tx_id = tx_id;
	r->status = status;
	srd_pkt_send(ep, peer, tb, sizeof(*r));
	return 0;
}

void srd_rma_emu_handle_write(struct srd_ep *ep, struct srd_peer *peer,
			      const void *pkt, size_t len)
{
	const struct srd_pkt_rma *w = pkt;
	struct srd_txbuf *tb = NULL;
	struct srd_pkt_resp *r;
	void *local;
	int ret;

	if (w->base.flags & SRD_PKT_F_ACK_REQ) {
		tb = srd_txbuf_get(ep);
		if (!tb) {
			srd_rma_defer(ep, peer, w, len);
			return;
		}
	}
	/* The whole write's range, whichever segment this is: a write that
	 * does not fit is refused by every segment and touches nothing. */
	ret = util_mr_check(&ep->domain->util.mr_map, w->key, w->addr,
			    w->len, FI_REMOTE_WRITE, &local);
	if (!ret) {
		memcpy((uint8_t *)local + w->offset, w + 1, w->seg_len);
		if (w->base.flags & SRD_PKT_F_LAST)
			srd_rma_target_done(ep, peer, FI_RMA | FI_REMOTE_WRITE,
					    w->base.flags & SRD_PKT_F_CQ_DATA,
					    w->cq_data, w->len);
	}
	if (!tb)
		return;
	tb->owner = NULL;
	r = (struct srd_pkt_resp *)tb->data;
	memset(r, 0, sizeof(*r));
	srd_pkt_base_init(&r->base, SRD_PKT_RMA_ACK, 0, SRD_PEER_ID_NONE);
	r->tx_id = w->tx_id;
	r->status = ret;
	srd_pkt_send(ep, peer, tb, sizeof(*r));
}

/* Data of answered reads, as far as packet buffers go. */
static bool srd_rma_resp_send(struct srd_ep *ep, struct srd_rma_resp *rs)
{
	struct srd_txbuf *tb;
	struct srd_pkt_resp *r;
	uint64_t n;

	do {
		tb = srd_txbuf_get(ep);
		if (!tb)
			return false;
		tb->owner = NULL;
		n = rs->len - rs->sent;
		if (n > ep->rma->seg_max)
			n = ep->rma->seg_max;
		r = (struct srd_pkt_resp *)tb->data;
		memset(r, 0, sizeof(*r));
		srd_pkt_base_init(&r->base, SRD_PKT_READ_RESP, 0,
				  SRD_PEER_ID_NONE);
		r->tx_id = rs->tx_id;
		r->offset = rs->sent;
		r->seg_len = (uint32_t)n;
		memcpy(r + 1, rs->src + rs->sent, n);
		rs->sent += n;
		srd_pkt_send(ep, rs->peer, tb, sizeof(*r) + n);
	} while (rs->sent < rs->len);
	return true;
}

void srd_rma_resp_pump(struct srd_ep *ep)
{
	struct srd_rma_resp *rs, *tmp;

	DL_FOREACH_SAFE(ep->rma->responding, rs, tmp) {
		if (!srd_rma_resp_send(ep, rs))
			return;
		DL_DELETE(ep->rma->responding, rs);
		util_pool_put(&ep->rma->resp_pool, rs);
	}
}

void srd_rma_emu_handle_read_req(struct srd_ep *ep, struct srd_peer *peer,
				 const void *pkt, size_t len)
{
	const struct srd_pkt_rma *q = pkt;
	struct srd_rma_resp *rs;
	void *local;
	int ret;

	ret = util_mr_check(&ep->domain->util.mr_map, q->key, q->addr, q->len,
			    FI_REMOTE_READ, &local);
	if (ret) {
		if (srd_rma_send_status(ep, peer, SRD_PKT_READ_RESP, q->tx_id,
					ret))
			srd_rma_defer(ep, peer, q, len);
		return;
	}
	rs = util_pool_get(&ep->rma->resp_pool);
	if (!rs) {
		srd_rma_defer(ep, peer, q, len);
		return;
	}
	rs->peer = peer;
	rs->tx_id = q->tx_id;
	rs->src = local;
	rs->len = q->len;
	rs->sent = 0;
	srd_rma_target_done(ep, peer, FI_RMA | FI_REMOTE_READ, false, 0,
			    q->len);
	/* A zero-length read still gets its one (empty) answer: the send
	 * loop always sends at least one packet. */
	if (!ep->rma->responding && srd_rma_resp_send(ep, rs)) {
		util_pool_put(&ep->rma->resp_pool, rs);
		return;
	}
	DL_APPEND(ep->rma->responding, rs);
}

const struct srd_rma_carrier srd_rma_emu = {
	.name = "emulated",
	.pump = srd_rma_emu_pump,
	.wc = srd_rma_emu_wc,
	.answers = true,
};
