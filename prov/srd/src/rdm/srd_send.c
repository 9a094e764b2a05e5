/* SPDX-License-Identifier: MIT */
/*
 * Packets out: the packet-buffer pool, posting one packet to a peer (or
 * queueing it behind the handshake, RNR backoff or a full send queue), and
 * the completion of each packet send. Queued packets go once per progress
 * batch (srd_flush_all).
 */
#include "weft/compat.h"
#include "srd_proto.h"

#include <string.h>
#include <time.h>

struct srd_txbuf *srd_txbuf_get(struct srd_ep *ep)
{
	struct srd_txbuf *tb = ep->tx_free;

	if (WEFT_UNLIKELY(!tb))
		return NULL;
	ep->tx_free = tb->next;
	tb->next = NULL;
	tb->tx = NULL;
	tb->owner = NULL;
	tb->peer = NULL;
	return tb;
}

void srd_txbuf_put(struct srd_ep *ep, struct srd_txbuf *tb)
{
	tb->next = ep->tx_free;
	ep->tx_free = tb;
}

/* 0: posted; -FI_EAGAIN: the caller queues it. */
int srd_pkt_post(struct srd_ep *ep, struct srd_peer *peer,
		 struct srd_txbuf *tb)
{
	struct srd_pkt_base *base = (struct srd_pkt_base *)tb->data;
	int ret;

	if (WEFT_UNLIKELY(ep->sq_inflight >= ep->qp->sq_depth))
		return -FI_EAGAIN;
	/* Known only once the handshake is done, so set at the last moment. */
	if (base->type != SRD_PKT_HELLO)
		base->peer_id = peer->remote_id;
	ret = srd_dev_qp_post_send(ep->qp, (uintptr_t)&tb->hdr, ep->tx_mr->lkey,
				   tb->data, tb->len, &peer->dest);
	if (WEFT_UNLIKELY(ret)) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"posting %u bytes to qpn %u: %s\n", tb->len,
			peer->name.qpn, strerror(ret));
		return -FI_EAGAIN;
	}
	ep->sq_inflight++;
	return 0;
}

bool srd_peer_may_send(struct srd_peer *peer)
{
	if (peer->state != SRD_PEER_READY)
		return false;
	return !peer->rnr.until_ns ||
	       srd_dev_rnr_check(&peer->rnr, util_time_ns()) == 0;
}

void srd_peer_schedule(struct srd_ep *ep, struct srd_peer *peer)
{
	if (peer->on_flush || !peer->q_head)
		return;
	peer->on_flush = true;
	peer->flush_next = ep->flush;
	ep->flush = peer;
}

static void srd_peer_enqueue(struct srd_ep *ep, struct srd_peer *peer,
			     struct srd_txbuf *tb)
{
	tb->next = NULL;
	if (peer->q_tail)
		peer->q_tail->next = tb;
	else
		peer->q_head = tb;
	peer->q_tail = tb;
	srd_peer_schedule(ep, peer);
}

void srd_pkt_send(struct srd_ep *ep, struct srd_peer *peer,
		  struct srd_txbuf *tb, size_t len)
{
	tb->peer = peer;
	tb->len = (uint32_t)len;
	if (WEFT_LIKELY(!peer->q_head && srd_peer_may_send(peer) &&
			!srd_pkt_post(ep, peer, tb)))
		return;
	srd_peer_enqueue(ep, peer, tb);
	if (peer->state == SRD_PEER_NEW)
		srd_peer_hello_send(ep, peer, SRD_PKT_HELLO);
}

/* Post what the peer's queue holds, as far as the peer and the send queue
 * allow. Returns true when the queue is empty. */
static bool srd_peer_drain(struct srd_ep *ep, struct srd_peer *peer)
{
	struct srd_txbuf *tb;

	if (peer->state == SRD_PEER_NEW &&
	    srd_peer_hello_send(ep, peer, SRD_PKT_HELLO))
		return false;
	while ((tb = peer->q_head)) {
		struct srd_pkt_base *b = (struct srd_pkt_base *)tb->data;

		/* Before the handshake only our HELLO may go. */
		if (b->type != SRD_PKT_HELLO && !srd_peer_may_send(peer))
			return false;
		if (srd_pkt_post(ep, peer, tb))
			return false;
		peer->q_head = tb->next;
		if (!peer->q_head)
			peer->q_tail = NULL;
	}
	return true;
}

void srd_flush_all(struct srd_ep *ep)
{
	struct srd_peer *peer = ep->flush, **prev = &ep->flush;

	while (peer) {
		struct srd_peer *next = peer->flush_next;

		if (srd_peer_drain(ep, peer)) {
			*prev = next;
			peer->on_flush = false;
		} else {
			prev = &peer->flush_next;
		}
		peer = next;
	}
}

/* A packet that will never be sent or whose send failed. */
void srd_txbuf_fail(struct srd_ep *ep, struct srd_txbuf *tb, int err,
		    int prov_errno)
{
	struct srd_tx_entry *tx = tb->tx;

	if (tx) {
		tx->inflight--;
		if (!tx->err) {
			tx->err = err;
			tx->prov_errno = prov_errno;
		}
		srd_tx_try_complete(ep, tx);
	}
	if (tb->owner) {
		struct srd_dev_wc wc;

		/* Its owner hears of it as of a send that failed with the
		 * same cause: err and prov_errno always come from a device
		 * completion's srd_dev_wc_err_map. */
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = (uintptr_t)&tb->hdr;
		srd_dev_wc_err_unmap(prov_errno, &wc);
		srd_wr_done(ep, tb->owner, &wc);
	}
	srd_txbuf_put(ep, tb);
}

static void srd_txbuf_rnr(struct srd_ep *ep, struct srd_txbuf *tb)
{
	struct srd_peer *peer = tb->peer;

	srd_dev_rnr_on_rnr(&peer->rnr, util_time_ns(), &ep->rng);
	/* Back to the head of its queue: it keeps its place in order. */
	tb->next = peer->q_head;
	peer->q_head = tb;
	if (!peer->q_tail)
		peer->q_tail = tb;
	srd_peer_schedule(ep, peer);
}

void srd_txbuf_done(struct srd_ep *ep, struct srd_txbuf *tb,
		    const struct srd_dev_wc *wc)
{
	struct srd_dev_wc_err e;

	ep->sq_inflight--;
	if (WEFT_LIKELY(wc->status == IBV_WC_SUCCESS)) {
		if (WEFT_UNLIKELY(tb->peer->rnr.wait_us))
			srd_dev_rnr_on_success(&tb->peer->rnr);
		if (tb->owner)
			srd_wr_done(ep, tb->owner, wc);
		if (tb->tx) {
			tb->tx->inflight--;
			srd_tx_try_complete(ep, tb->tx);
		}
		srd_txbuf_put(ep, tb);
		return;
	}
	if (srd_dev_wc_err_is_rnr(wc->status, wc->vendor_err)) {
		srd_txbuf_rnr(ep, tb);
		return;
	}
	srd_dev_wc_err_map(wc->status, wc->vendor_err, &e);
	srd_peer_report(ep, tb->peer, e.prov_errno);
	srd_txbuf_fail(ep, tb, e.err, e.prov_errno);
	srd_peer_fail(ep, tb->peer, e.err, e.prov_errno);
}

/* One log line per failed peer, naming it (srd_dev_err_format). */
void srd_peer_report(struct srd_ep *ep, struct srd_peer *peer,
		     int prov_errno)
{
	char name[128], msg[256];

	(void)ep;
	if (srd_ep_name_str(&peer->name, name, sizeof(name)))
		snprintf(name, sizeof(name), "qpn %u", peer->name.qpn);
	WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA, "%s\n",
		srd_dev_err_format(prov_errno, name, msg, sizeof(msg)));
}

static int srd_post_rdma_op(struct srd_ep *ep, struct srd_peer *peer,
			    struct srd_wr_hdr *wr,
			    const struct srd_dev_rdma *r)
{
	int ret;

	if (ep->sq_inflight >= ep->qp->sq_depth || !srd_peer_may_send(peer))
		return -FI_EAGAIN;
	ret = srd_dev_qp_post_rdma(ep->qp, (uintptr_t)wr, r, &peer->dest);
	if (ret) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"RDMA %s of %zu bytes to qpn %u: %s\n",
			srd_dev_rdma_op_str(r->op), r->len, peer->name.qpn,
			strerror(ret));
		return -FI_EIO;
	}
	ep->sq_inflight++;
	return 0;
}

int srd_post_rdma(struct srd_ep *ep, struct srd_peer *peer,
		  struct srd_wr_hdr *wr, bool write, uint32_t lkey,
		  void *laddr, size_t len, uint32_t rkey, uint64_t raddr)
{
	struct srd_dev_rdma r = {
		.op = write ? SRD_DEV_RDMA_WRITE : SRD_DEV_RDMA_READ,
		.lkey = lkey, .laddr = laddr, .len = len,
		.rkey = rkey, .raddr = raddr,
	};

	return srd_post_rdma_op(ep, peer, wr, &r);
}

int srd_post_rdma_write_imm(struct srd_ep *ep, struct srd_peer *peer,
			    struct srd_wr_hdr *wr, uint32_t imm, uint32_t lkey,
			    void *laddr, size_t len, uint32_t rkey,
			    uint64_t raddr)
{
	struct srd_dev_rdma r = {
		.op = SRD_DEV_RDMA_WRITE_IMM, .imm = imm,
		.lkey = lkey, .laddr = laddr, .len = len,
		.rkey = rkey, .raddr = raddr,
	};

	return srd_post_rdma_op(ep, peer, wr, &r);
}
