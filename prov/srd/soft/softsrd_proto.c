/* SPDX-License-Identifier: MIT */
/*
 * The reliable datagram protocol between two softsrd QPs.
 *
 * Every data packet (SEND, WRITE segment, READ_REQ segment) takes the next
 * PSN of its (local QP, remote QP) flow and stays in flight until the
 * target answers it (ACK with a status, or READ_RESP); unanswered packets
 * are sent again with the same PSN after a timeout that adapts to the
 * measured round trips and doubles per try, and work requests fail only
 * once the peer has said nothing at all for FI_SRD_SOFT_DEAD_MS
 * (softsrd_rto.c). At most SOFTSRD_WIN packets of a flow are in flight.
 *
 * The target remembers the verdict of the last 2 * SOFTSRD_WIN PSNs of each
 * flow, so a duplicate is answered again but never delivered twice. Each
 * packet carries the sender's floor (lowest PSN it may still resend): PSNs
 * below it are stale and dropped, which also bounds the memory. No order
 * is kept between packets: whatever arrives is placed at once.
 *
 * Acknowledgements ride on data going back: an OK verdict waits, as part
 * of a run of consecutive PSNs per flow, for the next packet from the
 * target QP to the initiator QP (a reply, an RDMA packet, any answer),
 * which carries the run in its header (wire version 2). A run goes alone,
 * as an ACK datagram, once it is FI_SRD_SOFT_ACK_DELAY_US old (counted
 * from its first PSN), once it holds a quarter of the window, at once for
 * packets that give the target application nothing to answer (RDMA writes
 * without immediate: one ACK per received batch), when the device thread
 * takes over from an absent application, and when the QP leaves RTS.
 * Non-OK verdicts and answers to duplicates go at once, on their own.
 *
 * A send refused for want of a receive (RNR) is retried under a new PSN
 * after FI_SRD_SOFT_RNR_DELAY_US, rnr_retry times (7: forever).
 *
 * RDMA write with immediate is an RDMA write whose last packet carries the
 * immediate and goes only once every other packet has landed, so the target
 * consumes a receive (or answers RNR, and only that packet goes again) and
 * reports the whole message with one IBV_WC_RECV_RDMA_WITH_IMM completion.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- peers ------------------------------------------------------------ */

/* Peers live as long as their QP, so the last one found may be kept. */
static struct softsrd_peer *softsrd_peer_find(struct softsrd_qp *qp,
					      const struct sockaddr_in *sin,
					      uint32_t qpn)
{
	struct softsrd_peer_key key = { .ip = sin->sin_addr.s_addr, .qpn = qpn };
	struct softsrd_peer *peer = qp->peer_last;

	if (peer && peer->key.ip == key.ip && peer->key.qpn == key.qpn)
		return peer;
	HASH_FIND(hh, qp->peers, &key, sizeof(key), peer);
	if (peer)
		qp->peer_last = peer;
	return peer;
}

struct softsrd_peer *softsrd_peer_get(struct softsrd_qp *qp,
				      const struct sockaddr_in *sin,
				      uint32_t qpn)
{
	struct softsrd_peer_key key = { .ip = sin->sin_addr.s_addr, .qpn = qpn };
	struct softsrd_peer *peer = softsrd_peer_find(qp, sin, qpn);

	if (peer)
		return peer;
	if (qp->npeers >= SOFTSRD_PEERS_MAX)
		return NULL;
	peer = calloc(1, sizeof(*peer));
	if (!peer)
		return NULL;
	peer->key = key;
	peer->sin.sin_family = AF_INET;
	peer->sin.sin_addr = sin->sin_addr;
	peer->sin.sin_port = htons((uint16_t)(qpn >> 8));
	peer->slid_gen = qp->ctx->ahn_gen - 1;	/* not looked up yet */
	softsrd_rto_peer_init(qp->ctx, peer);
	HASH_ADD(hh, qp->peers, key, sizeof(key), peer);
	qp->npeers++;
	qp->peer_last = peer;
	return peer;
}

/* ---- segments ----------------------------------------------------------- */

uint32_t softsrd_seg_size(const struct softsrd_ctx *ctx)
{
	/* whole 128-byte lines per packet, so ALIGNED_128 holds per packet
	 * (softsrd_wire_open settles rdma_pkt) */
	return ctx->cfg.rdma_pkt & ~127u;
}

/* Segment boundaries sit on 128-byte-aligned target addresses. */
static void softsrd_seg(const struct softsrd_ctx *ctx,
			const struct softsrd_swr *wr, uint32_t k,
			uint32_t *off, uint32_t *len)
{
	uint32_t seg = softsrd_seg_size(ctx);
	uint32_t first = seg - (uint32_t)(wr->raddr & 127);

	if (!softsrd_op_is_rdma(wr->opcode)) {
		*off = 0;
		*len = wr->len;
		return;
	}
	*off = k ? first + (k - 1) * seg : 0;
	*len = wr->len - *off;
	if (*len > (k ? seg : first))
		*len = k ? seg : first;
}

/* ---- transmit ------------------------------------------------------------ */

static uint8_t softsrd_pkt_type(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return SOFTSRD_PKT_WRITE;
	case IBV_WR_RDMA_READ:
		return SOFTSRD_PKT_READ_REQ;
	default:
		return SOFTSRD_PKT_SEND;
	}
}

/* iovecs for bytes [off, off + len) of the WR's payload */
static size_t softsrd_pkt_iov(const struct softsrd_swr *wr, uint32_t off,
			      uint32_t len, struct iovec *iov)
{
	size_t n = 0;

	if (wr->inl) {
		iov[0].iov_base = wr->inl + off;
		iov[0].iov_len = len;
		return len ? 1 : 0;
	}
	for (uint32_t i = 0; i < wr->num_sge && len; i++) {
		uint32_t c;

		if (off >= wr->sge[i].length) {
			off -= wr->sge[i].length;
			continue;
		}
		c = wr->sge[i].length - off;
		if (c > len)
			c = len;
		iov[n].iov_base = (uint8_t *)(uintptr_t)wr->sge[i].addr + off;
		iov[n++].iov_len = c;
		len -= c;
		off = 0;
	}
	return n;
}

/* ---- acknowledgements owed ------------------------------------------------ */

/* Hands the peer's owed run to a packet about to go to it. */
static void softsrd_ack_fill(struct softsrd_qp *qp, struct softsrd_peer *peer,
			     struct softsrd_hdr *h)
{
	if (!peer->ack_cnt)
		return;
	h->ack_psn = htole64(peer->ack_psn);
	h->ack_cnt = htole32(peer->ack_cnt);
	h->ack_incarnation = htole32(peer->rx_incarnation);
	peer->ack_cnt = 0;
	DL_DELETE2(qp->ack_owed, peer, ack_prev, ack_next);
}

/* An ACK alone, status OK, for the run of cnt PSNs from psn. */
static void softsrd_ack_run_send(struct softsrd_qp *qp,
				 struct softsrd_peer *peer, uint64_t psn,
				 uint32_t cnt)
{
	struct softsrd_txd *t = softsrd_wire_txd(qp->ctx);
	struct softsrd_hdr *h = &t->hdr;

	memset(h, 0, sizeof(*h));
	h->version = SOFTSRD_WIRE_VERSION;
	h->type = SOFTSRD_PKT_ACK;
	h->status = SOFTSRD_ST_OK;
	h->src_qpn = htole32(qp->ibv_qp.qp_num);
	h->dst_qpn = htole32(peer->key.qpn);
	h->incarnation = htole32(qp->incarnation);
	h->psn = htole64(psn);
	h->ack_psn = htole64(psn);
	h->ack_cnt = htole32(cnt);
	h->ack_incarnation = htole32(peer->rx_incarnation);
	t->sin = peer->sin;
}

/* The owed run goes alone. */
static void softsrd_ack_send(struct softsrd_qp *qp, struct softsrd_peer *peer)
{
	softsrd_ack_run_send(qp, peer, peer->ack_psn, peer->ack_cnt);
	peer->ack_cnt = 0;
	DL_DELETE2(qp->ack_owed, peer, ack_prev, ack_next);
}

/* Runs whose time has come (all of them with force) go alone. */
static void softsrd_qp_acks_due(struct softsrd_qp *qp, uint64_t now, bool force)
{
	struct softsrd_peer *peer, *tmp;

	DL_FOREACH_SAFE2(qp->ack_owed, peer, tmp, ack_next)
		if (force || peer->ack_due <= now)
			softsrd_ack_send(qp, peer);
}

/* Every OK verdict still in the peer's receive window, as runs. */
static void softsrd_acks_window(struct softsrd_qp *qp, struct softsrd_peer *peer)
{
	uint64_t start = 0;
	uint32_t cnt = 0;

	/* by offset: the floor came from the wire and may sit near 2^64 */
	for (uint32_t i = 0; i < 2 * SOFTSRD_WIN; i++) {
		uint64_t psn = peer->rx_floor + i;
		const struct softsrd_rx_slot *slot =
			&peer->rx_ring[psn % (2 * SOFTSRD_WIN)];
		bool ok = slot->valid && slot->psn == psn &&
			  slot->status == SOFTSRD_ST_OK;

		if (ok && cnt && psn == start + cnt && cnt < SOFTSRD_WIN) {
			cnt++;
			continue;
		}
		if (cnt)
			softsrd_ack_run_send(qp, peer, start, cnt);
		start = psn;
		cnt = ok;
	}
	if (cnt)
		softsrd_ack_run_send(qp, peer, start, cnt);
}

/*
 * The QP is going away. An ACK of a delivered packet that was lost makes
 * its initiator retransmit to a QP that no longer exists, and that answer
 * fails a send which did arrive, typically the last message before a
 * clean shutdown. Nothing stays behind to answer later (the process may
 * exit now), so every OK verdict the peers may still wait for goes again,
 * in several copies: duplicates are harmless, and each copy is one more
 * chance through a lossy network.
 */
static void softsrd_qp_acks_final(struct softsrd_qp *qp)
{
	struct softsrd_peer *peer, *tmp;

	for (int copy = 0; copy < SOFTSRD_FINAL_ACK_COPIES; copy++)
		HASH_ITER(hh, qp->peers, peer, tmp)
			if (peer->rx_known)
				softsrd_acks_window(qp, peer);
}

/* An OK verdict for rx's PSN: it joins the peer's run, or starts a new
 * one (the old run goes alone). app_answers: the packet gave the target
 * application something it is likely to answer soon (a receive). */
static void softsrd_ack_owe(struct softsrd_qp *qp, struct softsrd_peer *peer,
			    uint64_t psn, bool app_answers)
{
	const struct softsrd_config *cfg = &qp->ctx->cfg;
	uint64_t due = qp->ctx->now;

	if (app_answers)
		due += (uint64_t)cfg->ack_delay_us * 1000;
	if (peer->ack_cnt && psn == peer->ack_psn + peer->ack_cnt &&
	    peer->ack_cnt < SOFTSRD_WIN) {
		peer->ack_cnt++;
		if (due < peer->ack_due)
			peer->ack_due = due;
		if (peer->ack_cnt >= cfg->window / 4)
			peer->ack_due = 0;
		return;
	}
	if (peer->ack_cnt)
		softsrd_ack_send(qp, peer);
	peer->ack_psn = psn;
	peer->ack_cnt = 1;
	peer->ack_due = due;
	DL_APPEND2(qp->ack_owed, peer, ack_prev, ack_next);
}

/* ---- transmit, continued ---------------------------------------------------- */

void softsrd_pkt_tx(struct softsrd_qp *qp, struct softsrd_pkt *pkt)
{
	struct softsrd_txd *t = softsrd_wire_txd(qp->ctx);
	struct softsrd_swr *wr = pkt->wr;
	struct softsrd_hdr *h = &t->hdr;

	memset(h, 0, sizeof(*h));
	h->version = SOFTSRD_WIRE_VERSION;
	h->type = softsrd_pkt_type(wr->opcode);
	/* only the packet that ends the message carries the immediate */
	h->flags = wr->has_imm && pkt->off + pkt->len == wr->len ?
		   SOFTSRD_FLAG_IMM : 0;
	h->src_qpn = htole32(qp->ibv_qp.qp_num);
	h->dst_qpn = htole32(pkt->peer->key.qpn);
	h->qkey = htole32(wr->peer_qkey);
	h->incarnation = htole32(qp->incarnation);
	h->seg_len = htole32(pkt->len);
	h->psn = htole64(pkt->psn);
	h->floor = htole64(pkt->peer->tx_floor);
	h->raddr = htole64(wr->raddr);
	h->rkey = htole32(wr->rkey);
	h->msg_len = htole32(wr->len);
	h->seg_off = htole32(pkt->off);
	h->imm = wr->imm;
	t->sin = pkt->peer->sin;
	softsrd_ack_fill(qp, pkt->peer, h);
	if (h->type != SOFTSRD_PKT_READ_REQ)
		t->msg->msg_iovlen += softsrd_pkt_iov(wr, pkt->off, pkt->len,
						     &t->iov[1]);
}

/* Whole-message order over several packets, and the completion of a write
 * with immediate: the last packet goes only once every other one has
 * landed. */
static bool softsrd_wr_fenced(const struct softsrd_qp *qp,
			      const struct softsrd_swr *wr)
{
	bool fence = wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
		     (wr->opcode == IBV_WR_RDMA_WRITE &&
		      qp->ctx->cfg.in_order == SOFTSRD_ORDER_WHOLE);

	return fence && wr->npkts > 1 && wr->nsent == wr->npkts - 1 &&
	       wr->ndone < wr->npkts - 1;
}

static bool softsrd_wr_send_one(struct softsrd_qp *qp, struct softsrd_swr *wr,
				uint64_t now)
{
	struct softsrd_peer *peer = wr->peer;
	struct softsrd_pkt *pkt = qp->pkt_free;

	if (!pkt || peer->next_psn - peer->tx_floor >= qp->ctx->cfg.window ||
	    wr->not_before > now || softsrd_wr_fenced(qp, wr))
		return false;
	DL_DELETE(qp->pkt_free, pkt);
	pkt->wr = wr;
	pkt->peer = peer;
	pkt->psn = peer->next_psn++;
	pkt->tries = 0;
	pkt->first = now;
	pkt->sent = now;
	pkt->deadline = now + softsrd_rto_wait(qp->ctx, peer, 0);
	softsrd_seg(qp->ctx, wr, wr->nsent, &pkt->off, &pkt->len);
	peer->tx_win[pkt->psn % SOFTSRD_WIN] = pkt;
	DL_APPEND(qp->inflight, pkt);
	wr->nsent++;
	wr->ninflight++;
	softsrd_pkt_tx(qp, pkt);
	return true;
}

void softsrd_qp_push_pending(struct softsrd_qp *qp)
{
	struct softsrd_swr *wr, *tmp;
	uint64_t now;

	if (!qp->pending)
		return;
	now = qp->ctx->now;
	DL_FOREACH_SAFE(qp->pending, wr, tmp) {
		while (wr->nsent < wr->npkts && wr->status == IBV_WC_SUCCESS &&
		       softsrd_wr_send_one(qp, wr, now))
			;
		if (wr->nsent == wr->npkts || wr->status != IBV_WC_SUCCESS) {
			DL_DELETE(qp->pending, wr);
			wr->queued = false;
		}
		if (!qp->pkt_free)
			break;
	}
}

/* ---- completion of send-side WRs ------------------------------------------ */

static enum ibv_wc_opcode softsrd_wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	default:
		return IBV_WC_SEND;
	}
}

void softsrd_swr_complete(struct softsrd_qp *qp, struct softsrd_swr *wr)
{
	if (wr->queued) {
		DL_DELETE(qp->pending, wr);
		wr->queued = false;
	}
	if (wr->status != IBV_WC_SUCCESS || qp->sq_sig_all ||
	    (wr->flags & IBV_SEND_SIGNALED)) {
		struct softsrd_cqe *e = softsrd_cq_push(qp->scq);

		if (e) {
			memset(e, 0, sizeof(*e));
			e->wr_id = wr->wr_id;
			e->status = wr->status;
			e->vendor_err = wr->vendor_err;
			e->qp_num = qp->ibv_qp.qp_num;
			e->opcode = softsrd_wc_opcode(wr->opcode);
			e->byte_len = wr->len;
		}
	}
	qp->swr_free[qp->swr_nfree++] = (uint32_t)(wr - qp->swr);
}

void softsrd_swr_fail(struct softsrd_qp *qp, struct softsrd_swr *wr,
		      enum ibv_wc_status status)
{
	if (wr->status == IBV_WC_SUCCESS)
		wr->status = status;
	if (!wr->ninflight)
		softsrd_swr_complete(qp, wr);
}

void softsrd_pkt_release(struct softsrd_qp *qp, struct softsrd_pkt *pkt)
{
	struct softsrd_peer *peer = pkt->peer;

	peer->tx_win[pkt->psn % SOFTSRD_WIN] = NULL;
	while (peer->tx_floor < peer->next_psn &&
	       !peer->tx_win[peer->tx_floor % SOFTSRD_WIN])
		peer->tx_floor++;
	pkt->wr->ninflight--;
	DL_DELETE(qp->inflight, pkt);
	DL_PREPEND(qp->pkt_free, pkt);
}

static const struct {
	enum ibv_wc_status status;
	uint32_t vendor_err;
} softsrd_status_wc[SOFTSRD_ST_MAX] = {
	[SOFTSRD_ST_OK] = { IBV_WC_SUCCESS, 0 },
	[SOFTSRD_ST_RNR] = { IBV_WC_RNR_RETRY_EXC_ERR, SOFTSRD_VE_REMOTE_RNR },
	[SOFTSRD_ST_ACCESS] = { IBV_WC_REM_ACCESS_ERR,
				SOFTSRD_VE_REMOTE_BAD_ADDRESS },
	[SOFTSRD_ST_INV_REQ] = { IBV_WC_REM_INV_REQ_ERR,
				 SOFTSRD_VE_REMOTE_BAD_LENGTH },
	[SOFTSRD_ST_OP] = { IBV_WC_REM_OP_ERR, SOFTSRD_VE_REMOTE_BAD_STATUS },
	[SOFTSRD_ST_BAD_QPN] = { IBV_WC_REM_INV_RD_REQ_ERR,
				 SOFTSRD_VE_REMOTE_BAD_DEST_QPN },
};

static void softsrd_wr_rnr(struct softsrd_qp *qp, struct softsrd_swr *wr)
{
	if (!wr->rnr_left || wr->status != IBV_WC_SUCCESS) {
		wr->vendor_err = SOFTSRD_VE_REMOTE_RNR;
		softsrd_swr_fail(qp, wr, IBV_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (wr->rnr_left != UINT32_MAX)
		wr->rnr_left--;
	wr->nsent--;
	wr->not_before = util_time_ns() +
			 (uint64_t)qp->ctx->cfg.rnr_delay_us * 1000;
	if (!wr->queued) {
		wr->queued = true;
		DL_APPEND(qp->pending, wr);
	}
}

static void softsrd_pkt_answered(struct softsrd_qp *qp, struct softsrd_pkt *pkt,
				 uint8_t status)
{
	struct softsrd_swr *wr = pkt->wr;

	/* RNR only makes sense for the one packet that needs a receive: the
	 * last, sent alone (anything else is a confused peer: an error) */
	bool rnr_ok = wr->ndone == wr->npkts - 1 && wr->nsent == wr->npkts &&
		      pkt->off + pkt->len == wr->len;

	/* Karn: only an answer to the one copy sent measures the path */
	if (!pkt->tries && qp->ctx->now > pkt->sent)
		softsrd_rto_sample(qp->ctx, pkt->peer, qp->ctx->now - pkt->sent);
	softsrd_pkt_release(qp, pkt);
	if (status >= SOFTSRD_ST_MAX)
		status = SOFTSRD_ST_INV_REQ;
	if (status == SOFTSRD_ST_RNR && rnr_ok) {
		softsrd_wr_rnr(qp, wr);
		return;
	}
	if (status != SOFTSRD_ST_OK) {
		if (wr->status == IBV_WC_SUCCESS)
			wr->vendor_err = softsrd_status_wc[status].vendor_err;
		softsrd_swr_fail(qp, wr, softsrd_status_wc[status].status);
		return;
	}
	wr->ndone++;
	if (wr->ndone == wr->npkts)
		softsrd_swr_complete(qp, wr);
	else if (wr->status != IBV_WC_SUCCESS && !wr->ninflight)
		softsrd_swr_complete(qp, wr);
	else if (softsrd_wr_fenced(qp, wr) == false && wr->nsent < wr->npkts &&
		 !wr->queued) {
		wr->queued = true;
		DL_APPEND(qp->pending, wr);
	}
}

/* Error state and destruction: in-flight packets are forgotten; with
 * completions, every WR ends as IBV_WC_WR_FLUSH_ERR. */
void softsrd_qp_flush(struct softsrd_qp *qp, bool completions)
{
	struct softsrd_pkt *pkt, *ptmp;
	struct softsrd_swr *wr, *wtmp;

	/* what was delivered is acknowledged, or the initiators would
	 * resend it to a QP that no longer answers */
	if (qp->ack_owed)
		softsrd_qp_acks_due(qp, 0, true);
	if (!completions)
		softsrd_qp_acks_final(qp);
	softsrd_wire_flush(qp->ctx);
	DL_FOREACH_SAFE(qp->inflight, pkt, ptmp) {
		wr = pkt->wr;
		softsrd_pkt_release(qp, pkt);
		if (!wr->queued) {
			wr->queued = true;
			DL_APPEND(qp->pending, wr);
		}
	}
	DL_FOREACH_SAFE(qp->pending, wr, wtmp) {
		if (completions) {
			wr->vendor_err = SOFTSRD_VE_FLUSHED;
			softsrd_swr_fail(qp, wr, IBV_WC_WR_FLUSH_ERR);
		} else {
			DL_DELETE(qp->pending, wr);
			wr->queued = false;
			qp->swr_free[qp->swr_nfree++] = (uint32_t)(wr - qp->swr);
		}
	}
	for (; qp->rq_head != qp->rq_tail; qp->rq_head++) {
		struct softsrd_cqe *e;

		if (!completions || !(e = softsrd_cq_push(qp->rcq)))
			continue;
		memset(e, 0, sizeof(*e));
		e->wr_id = qp->rq[qp->rq_head % qp->rq_size].wr_id;
		e->status = IBV_WC_WR_FLUSH_ERR;
		e->vendor_err = SOFTSRD_VE_FLUSHED;
		e->qp_num = qp->ibv_qp.qp_num;
	}
}

/* ---- receive: target side ------------------------------------------------- */

struct softsrd_rx {
	struct softsrd_ctx *ctx;
	struct softsrd_qp *qp;		/* NULL: no such QP here */
	uint32_t dst_qpn;
	struct softsrd_peer *peer;
	const struct sockaddr_in *from;
	uint8_t type, flags;
	uint32_t src_qpn, seg_len, rkey, msg_len, seg_off, imm;
	uint32_t incarnation;		/* of the sending QP */
	uint32_t ack_incarnation;	/* answers: the initiator's, echoed */
	uint64_t psn, raddr;
	const uint8_t *payload;
	size_t len;
};

static void softsrd_reply(struct softsrd_rx *rx, uint8_t type, uint8_t status,
			  const void *data, uint32_t len)
{
	struct softsrd_txd *t = softsrd_wire_txd(rx->ctx);
	struct softsrd_hdr *h = &t->hdr;

	memset(h, 0, sizeof(*h));
	h->version = SOFTSRD_WIRE_VERSION;
	h->type = type;
	h->status = status;
	h->src_qpn = htole32(rx->dst_qpn);
	h->dst_qpn = htole32(rx->src_qpn);
	h->incarnation = htole32(rx->qp ? rx->qp->incarnation : 0);
	h->psn = htole64(rx->psn);
	h->seg_off = htole32(rx->seg_off);
	h->seg_len = htole32(len);
	/* the answer names the initiator QP it answers: one of another
	 * incarnation, or forged by someone who cannot see the traffic,
	 * is not taken (an owed run below names the same one) */
	h->ack_incarnation = htole32(rx->incarnation);
	t->sin = *rx->from;
	if (rx->peer)
		softsrd_ack_fill(rx->qp, rx->peer, h);
	if (len) {
		t->iov[1].iov_base = (void *)data;
		t->iov[1].iov_len = len;
		t->msg->msg_iovlen = 2;
	}
}

/* key, PD, access and bounds of an RDMA target range */
static uint8_t *softsrd_rdma_target(struct softsrd_rx *rx, int access)
{
	struct softsrd_mr *mr = softsrd_mr_find(rx->qp->ctx, rx->rkey);
	uint64_t start, end;

	if (!mr || mr->ibv_mr.pd != rx->qp->ibv_qp.pd || !(mr->access & access))
		return NULL;
	start = (uintptr_t)mr->ibv_mr.addr;
	end = start + mr->ibv_mr.length;
	if (rx->raddr < start || rx->raddr > end ||
	    rx->msg_len > end - rx->raddr ||
	    rx->seg_off > rx->msg_len || rx->seg_len > rx->msg_len - rx->seg_off)
		return NULL;
	return (uint8_t *)(uintptr_t)(rx->raddr + rx->seg_off);
}

static void softsrd_rx_read_req(struct softsrd_rx *rx)
{
	struct softsrd_ctx *ctx = rx->qp->ctx;
	uint8_t *src;

	if (!ctx->cfg.rdma_read) {
		softsrd_reply(rx, SOFTSRD_PKT_READ_RESP, SOFTSRD_ST_OP, NULL, 0);
		return;
	}
	src = softsrd_rdma_target(rx, IBV_ACCESS_REMOTE_READ);
	/* the initiator may cut reads bigger than this device would: any
	 * piece that fits one datagram is served */
	if (!src || rx->seg_len > SOFTSRD_MAX_RDMA_PKT) {
		softsrd_reply(rx, SOFTSRD_PKT_READ_RESP, SOFTSRD_ST_ACCESS,
			      NULL, 0);
		return;
	}
	softsrd_reply(rx, SOFTSRD_PKT_READ_RESP, SOFTSRD_ST_OK, src, rx->seg_len);
}

static struct softsrd_cqe *softsrd_rx_cqe(struct softsrd_rx *rx,
					  uint64_t wr_id,
					  enum ibv_wc_status status)
{
	struct softsrd_cqe *e = softsrd_cq_push(rx->qp->rcq);

	if (e) {
		memset(e, 0, sizeof(*e));
		e->wr_id = wr_id;
		e->status = status;
		e->qp_num = rx->qp->ibv_qp.qp_num;
	}
	return e;
}

static uint8_t softsrd_rx_send(struct softsrd_rx *rx)
{
	struct softsrd_qp *qp = rx->qp;
	struct softsrd_ctx *ctx = qp->ctx;
	struct softsrd_rwr *r;
	struct softsrd_cqe *e;
	uint64_t room = 0;

	if (rx->seg_len != rx->len || rx->len > ctx->cfg.mtu)
		return SOFTSRD_ST_INV_REQ;
	if (qp->rq_head == qp->rq_tail ||
	    softsrd_wire_chance(ctx, ctx->cfg.rnr))
		return SOFTSRD_ST_RNR;
	if (qp->rcq->overrun)
		return SOFTSRD_ST_INV_REQ;
	r = &qp->rq[qp->rq_head++ % qp->rq_size];
	for (uint32_t i = 0; i < r->num_sge; i++)
		room += r->sge[i].length;
	if (room < rx->len ||
	    softsrd_scatter(ctx, r->sge, r->num_sge, 0, rx->payload,
			    (uint32_t)rx->len, ctx->cfg.in_order)) {
		bool short_buf = room < rx->len;

		e = softsrd_rx_cqe(rx, r->wr_id, short_buf ? IBV_WC_LOC_LEN_ERR :
							     IBV_WC_LOC_PROT_ERR);
		if (e)
			e->vendor_err = short_buf ? SOFTSRD_VE_LOCAL_BAD_LENGTH :
						    SOFTSRD_VE_LOCAL_INVALID_LKEY;
		return SOFTSRD_ST_INV_REQ;
	}
	e = softsrd_rx_cqe(rx, r->wr_id, IBV_WC_SUCCESS);
	if (!e)
		return SOFTSRD_ST_INV_REQ;
	e->opcode = IBV_WC_RECV;
	e->byte_len = (uint32_t)rx->len;
	e->src_qp = rx->src_qpn;
	e->slid = softsrd_peer_slid(ctx, rx->peer);
	if (rx->flags & SOFTSRD_FLAG_IMM) {
		e->imm = rx->imm;
		e->wc_flags = IBV_WC_WITH_IMM;
	}
	return SOFTSRD_ST_OK;
}

/* The last packet of a write with immediate: every other one has landed
 * (the initiator holds it back until then), so placing it and consuming a
 * receive completes the message. The receive's buffers stay untouched. */
static uint8_t softsrd_rx_write_imm(struct softsrd_rx *rx, uint8_t *dst)
{
	struct softsrd_qp *qp = rx->qp;
	struct softsrd_ctx *ctx = qp->ctx;
	struct softsrd_rwr *r;
	struct softsrd_cqe *e;

	if (qp->rq_head == qp->rq_tail ||
	    softsrd_wire_chance(ctx, ctx->cfg.rnr))
		return SOFTSRD_ST_RNR;
	if (qp->rcq->overrun)
		return SOFTSRD_ST_INV_REQ;
	if (rx->len)
		softsrd_place(dst, rx->payload, rx->len, ctx->cfg.in_order);
	r = &qp->rq[qp->rq_head++ % qp->rq_size];
	e = softsrd_rx_cqe(rx, r->wr_id, IBV_WC_SUCCESS);
	if (!e)
		return SOFTSRD_ST_INV_REQ;
	e->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	e->byte_len = rx->msg_len;
	e->src_qp = rx->src_qpn;
	e->slid = softsrd_peer_slid(ctx, rx->peer);
	e->imm = rx->imm;
	e->wc_flags = IBV_WC_WITH_IMM;
	return SOFTSRD_ST_OK;
}

static uint8_t softsrd_rx_write(struct softsrd_rx *rx)
{
	struct softsrd_ctx *ctx = rx->qp->ctx;
	bool imm = rx->flags & SOFTSRD_FLAG_IMM;
	uint8_t *dst = NULL;

	if (!ctx->cfg.rdma_write)
		return SOFTSRD_ST_OP;
	if (rx->seg_len != rx->len ||
	    (imm && (uint64_t)rx->seg_off + rx->seg_len != rx->msg_len))
		return SOFTSRD_ST_INV_REQ;
	/* a zero-length write touches nothing: no key to check (as IB) */
	if (!imm || rx->msg_len) {
		dst = softsrd_rdma_target(rx, IBV_ACCESS_REMOTE_WRITE);
		if (!dst)
			return SOFTSRD_ST_ACCESS;
	}
	if (imm)
		return softsrd_rx_write_imm(rx, dst);
	softsrd_place(dst, rx->payload, rx->len, ctx->cfg.in_order);
	return SOFTSRD_ST_OK;
}

/* The flow's window: false when the packet is stale or beyond it. A new
 * incarnation of the sending QP starts the flow over. */
static bool softsrd_rx_window(struct softsrd_rx *rx, uint32_t incarnation,
			      uint64_t floor)
{
	struct softsrd_peer *peer = rx->peer;

	if (!peer->rx_known || peer->rx_incarnation != incarnation) {
		if (peer->ack_cnt) {	/* owed to the QP that is gone */
			peer->ack_cnt = 0;
			DL_DELETE2(rx->qp->ack_owed, peer, ack_prev, ack_next);
		}
		memset(peer->rx_ring, 0, sizeof(peer->rx_ring));
		peer->rx_known = true;
		peer->rx_incarnation = incarnation;
		peer->rx_floor = 0;
	}
	return softsrd_seq_window(rx->psn, floor, &peer->rx_floor);
}

static void softsrd_rx_data(struct softsrd_rx *rx, uint32_t incarnation,
			    uint64_t floor, uint32_t qkey)
{
	struct softsrd_qp *qp = rx->qp;
	struct softsrd_rx_slot *slot;
	uint8_t status;

	if ((qp->ibv_qp.state != IBV_QPS_RTR && qp->ibv_qp.state != IBV_QPS_RTS) ||
	    qkey != qp->qkey)
		return;
	rx->peer = softsrd_peer_get(qp, rx->from, rx->src_qpn);
	if (!rx->peer || !softsrd_rx_window(rx, incarnation, floor))
		return;
	if (rx->type == SOFTSRD_PKT_READ_REQ) {
		/* reads change nothing: a duplicate is simply served again */
		softsrd_rx_read_req(rx);
		return;
	}
	slot = &rx->peer->rx_ring[rx->psn % (2 * SOFTSRD_WIN)];
	if (slot->valid && slot->psn == rx->psn) {
		softsrd_reply(rx, SOFTSRD_PKT_ACK, slot->status, NULL, 0);
		return;
	}
	status = rx->type == SOFTSRD_PKT_SEND ? softsrd_rx_send(rx) :
						softsrd_rx_write(rx);
	slot->psn = rx->psn;
	slot->status = status;
	slot->valid = true;
	if (status != SOFTSRD_ST_OK)
		softsrd_reply(rx, SOFTSRD_PKT_ACK, status, NULL, 0);
	else
		softsrd_ack_owe(qp, rx->peer, rx->psn,
				rx->type == SOFTSRD_PKT_SEND ||
				(rx->flags & SOFTSRD_FLAG_IMM));
}

/* ---- receive: initiator side ---------------------------------------------- */

static void softsrd_rx_answer(struct softsrd_rx *rx, uint8_t status)
{
	struct softsrd_peer *peer = softsrd_peer_find(rx->qp, rx->from,
						      rx->src_qpn);
	struct softsrd_pkt *pkt;
	struct softsrd_swr *wr;

	if (!peer || rx->ack_incarnation != rx->qp->incarnation)
		return;
	pkt = peer->tx_win[rx->psn % SOFTSRD_WIN];
	if (!pkt || pkt->psn != rx->psn)
		return;		/* answered before: a duplicate */
	wr = pkt->wr;
	if ((rx->type == SOFTSRD_PKT_READ_RESP) !=
	    (wr->opcode == IBV_WR_RDMA_READ))
		return;
	if (rx->type == SOFTSRD_PKT_READ_RESP && status == SOFTSRD_ST_OK) {
		if (rx->seg_off != pkt->off || rx->seg_len != pkt->len ||
		    rx->len != pkt->len)
			return;
		if (softsrd_scatter(rx->qp->ctx, wr->sge, wr->num_sge, pkt->off,
				    rx->payload, pkt->len, SOFTSRD_ORDER_WHOLE))
			status = SOFTSRD_ST_INV_REQ;
	}
	softsrd_pkt_answered(rx->qp, pkt, status);
}

/* A run of OK verdicts, from any packet of the peer. Untrusted: a run for
 * another incarnation of this QP, longer than a window, or reaching PSNs
 * never sent is ignored whole; PSNs already answered are skipped. */
static void softsrd_rx_acks(struct softsrd_rx *rx, uint64_t first,
			    uint32_t cnt, uint32_t incarnation)
{
	struct softsrd_peer *peer;
	uint64_t psn;

	if (incarnation != rx->qp->incarnation)
		return;
	peer = softsrd_peer_find(rx->qp, rx->from, rx->src_qpn);
	if (!peer || !softsrd_seq_ack_run(first, cnt, peer->next_psn))
		return;
	for (psn = first > peer->tx_floor ? first : peer->tx_floor;
	     psn < first + cnt; psn++) {
		struct softsrd_pkt *pkt = peer->tx_win[psn % SOFTSRD_WIN];

		/* reads are answered by their data, never by an ACK */
		if (pkt && pkt->psn == psn && pkt->wr->opcode != IBV_WR_RDMA_READ)
			softsrd_pkt_answered(rx->qp, pkt, SOFTSRD_ST_OK);
	}
}

/* Whatever a known peer sends shows it alive (softsrd_rto.c). */
static void softsrd_rx_heard(struct softsrd_rx *rx)
{
	struct softsrd_peer *peer = softsrd_peer_find(rx->qp, rx->from,
						      rx->src_qpn);

	if (peer)
		peer->heard = rx->ctx->now;
}

void softsrd_proto_rx(struct softsrd_ctx *ctx,
		      const struct softsrd_wire_pkt *p,
		      const struct sockaddr_in *from)
{
	struct softsrd_rx rx = {
		.ctx = ctx,
		.dst_qpn = p->dst_qpn,
		.from = from,
		.type = p->type,
		.flags = p->flags,
		.src_qpn = p->src_qpn,
		.seg_len = p->seg_len,
		.rkey = p->rkey,
		.msg_len = p->msg_len,
		.seg_off = p->seg_off,
		.imm = p->imm,
		.incarnation = p->incarnation,
		.ack_incarnation = p->ack_incarnation,
		.psn = p->psn,
		.raddr = p->raddr,
		.payload = p->payload,
		.len = p->len,
	};

	/* Untrusted (softsrd_wire_parse checked the rest): the addressing
	 * and the sender's port must agree before anything is looked up. */
	if ((p->dst_qpn >> 8) != ctx->port ||
	    (rx.src_qpn >> 8) != ntohs(from->sin_port))
		return;
	rx.qp = ctx->qps[p->dst_qpn & 0xff];
	if (!rx.qp) {
		/* tell the initiator at once instead of letting it time out */
		if (rx.type == SOFTSRD_PKT_SEND || rx.type == SOFTSRD_PKT_WRITE)
			softsrd_reply(&rx, SOFTSRD_PKT_ACK, SOFTSRD_ST_BAD_QPN,
				      NULL, 0);
		else if (rx.type == SOFTSRD_PKT_READ_REQ)
			softsrd_reply(&rx, SOFTSRD_PKT_READ_RESP,
				      SOFTSRD_ST_BAD_QPN, NULL, 0);
		return;
	}
	softsrd_rx_heard(&rx);
	if (p->ack_cnt)
		softsrd_rx_acks(&rx, p->ack_psn, p->ack_cnt,
				p->ack_incarnation);
	switch (rx.type) {
	case SOFTSRD_PKT_SEND:
	case SOFTSRD_PKT_WRITE:
	case SOFTSRD_PKT_READ_REQ:
		if (rx.type == SOFTSRD_PKT_READ_REQ && p->len)
			return;
		softsrd_rx_data(&rx, p->incarnation, p->floor, p->qkey);
		break;
	case SOFTSRD_PKT_ACK:
		/* an OK run came above; the single PSN is its first */
		if (!p->len && (p->status != SOFTSRD_ST_OK || !p->ack_cnt))
			softsrd_rx_answer(&rx, p->status);
		break;
	case SOFTSRD_PKT_READ_RESP:
		softsrd_rx_answer(&rx, p->status);
		break;
	default:
		break;
	}
}

/* ---- one round of progress ------------------------------------------------ */

/* Everything but sending what it staged. force_acks: every owed
 * acknowledgement goes now (the application is away). */
static int softsrd_progress_work(struct softsrd_ctx *ctx, bool force_acks)
{
	uint64_t now = ctx->now;
	int n;

	softsrd_rto_round(ctx, now);
	n = softsrd_wire_rx(ctx);
	if (WEFT_UNLIKELY(ctx->wire.held))
		softsrd_wire_held_due(ctx, now);
	if (now >= ctx->next_timer_check) {
		/* a full last batch may have left answers in the socket: no
		 * peer is judged silent before they are read */
		bool judge = n < SOFTSRD_RX_ROUNDS * SOFTSRD_RX_BATCH;

		for (uint32_t i = 1; i <= ctx->qp_hi; i++)
			if (ctx->qps[i] && ctx->qps[i]->inflight)
				softsrd_qp_timers(ctx->qps[i], now, judge);
		ctx->next_timer_check = now + ctx->timer_ns;
	}
	/* data first: it takes owed acknowledgements along */
	for (uint32_t i = 1; i <= ctx->qp_hi; i++) {
		struct softsrd_qp *qp = ctx->qps[i];

		if (!qp)
			continue;
		if (qp->pending)
			softsrd_qp_push_pending(qp);
		if (qp->ack_owed)
			softsrd_qp_acks_due(qp, now, force_acks);
	}
	return n;
}

int softsrd_progress(struct softsrd_ctx *ctx)
{
	int n = softsrd_progress_work(ctx, true);

	softsrd_wire_flush(ctx);
	return n;
}

/*
 * Progress on behalf of a poll of cq. Acknowledgements of sends wait in
 * their peer (softsrd_ack_owe) for the application's answer to carry
 * them, at most FI_SRD_SOFT_ACK_DELAY_US, or until the device thread
 * takes over from an absent application (well within the peer's RTO).
 */
int softsrd_progress_poll(struct softsrd_ctx *ctx, struct softsrd_cq *cq)
{
	int n = softsrd_progress_work(ctx, false);

	if (ctx->wire.ntx)
		softsrd_wire_flush(ctx);
	return n;
}

/* Something a timer will have to do: the thread must not sleep for long. */
bool softsrd_busy(const struct softsrd_ctx *ctx)
{
	if (ctx->wire.held)
		return true;
	for (uint32_t i = 1; i <= ctx->qp_hi; i++)
		if (ctx->qps[i] && (ctx->qps[i]->inflight || ctx->qps[i]->pending ||
				    ctx->qps[i]->ack_owed))
			return true;
	return false;
}
