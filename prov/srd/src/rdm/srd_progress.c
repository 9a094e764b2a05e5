/* SPDX-License-Identifier: MIT */
/*
 * Progress: each fi_cq_read / fi_cntr_read runs srd_ep_progress, which
 * polls the endpoint's srd_dev_cq once (one batch), then the protocols
 * that poll memory (data-mode rings). Completions go by opcode to the
 * callbacks below: a received packet by its type to the protocol that
 * owns it (ep->pkt_route), a send completion by its work request's kind
 * (packet sends here, the rest to their protocol, ep->wr_proto). Per
 * batch, not per completion, the end hook re-posts the receive buffers
 * used (once an eighth of them, at most 16, wait), sends what peers had
 * queued (after the handshake, after RNR backoff), runs the send and
 * receive pumps (what waited for resources), the protocols' batch-end
 * hooks, and the liveness watch when something waits on a peer.
 */
#include "weft/compat.h"
#include "srd_proto.h"
#include "proto/srd_stripe.h"

#include <string.h>

#define SRD_RX_POST_CHUNK SRD_DEV_RECV_BATCH

static int srd_rx_post_list(struct srd_ep *ep, struct srd_rxbuf **bufs,
			    uint32_t n)
{
	struct srd_dev_recv r[SRD_RX_POST_CHUNK];
	uint32_t i;
	int ret;

	for (i = 0; i < n; i++) {
		r[i].wr_id = (uintptr_t)&bufs[i]->hdr;
		r[i].addr = bufs[i]->data;
	}
	ret = srd_dev_qp_post_recv(ep->qp, ep->rx_mr->lkey, ep->pkt_size, r, n);
	if (WEFT_UNLIKELY(ret))
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"posting %u receive buffers: %s\n", n, strerror(ret));
	return ret ? -ret : 0;
}

int srd_rx_post_all(struct srd_ep *ep)
{
	struct srd_rxbuf *bufs[SRD_RX_POST_CHUNK];
	uint32_t i, n = 0;
	int ret;

	for (i = 0; i < ep->rx_count; i++) {
		bufs[n++] = &ep->rxbufs[i];
		if (n < SRD_RX_POST_CHUNK && i + 1 < ep->rx_count)
			continue;
		ret = srd_rx_post_list(ep, bufs, n);
		if (ret)
			return ret;
		n = 0;
	}
	return 0;
}

static void srd_rx_repost(struct srd_ep *ep)
{
	struct srd_rxbuf *bufs[SRD_RX_POST_CHUNK];
	uint32_t n = 0;

	while (ep->repost) {
		bufs[n++] = ep->repost;
		ep->repost = ep->repost->next;
		if (n == SRD_RX_POST_CHUNK || !ep->repost) {
			srd_rx_post_list(ep, bufs, n);
			n = 0;
		}
	}
	ep->repost_count = 0;
}

static void srd_rxbuf_release(struct srd_ep *ep, struct srd_rxbuf *rb)
{
	rb->next = ep->repost;
	ep->repost = rb;
	ep->repost_count++;
}

void srd_wr_done(struct srd_ep *ep, struct srd_wr_hdr *hdr,
		 const struct srd_dev_wc *wc)
{
	const struct srd_proto *p = hdr->kind < SRD_WR_KIND_MAX ?
				    ep->wr_proto[hdr->kind] : NULL;

	if (WEFT_UNLIKELY(!p)) {
		FI_WARN(&srd_prov, FI_LOG_CQ, "completion of unknown kind %u\n",
			hdr->kind);
		return;
	}
	p->wr_done(ep, hdr, wc);
}

static void srd_ep_rx_pkt(struct srd_ep *ep, const struct srd_dev_wc *wc,
			  const uint8_t *pkt, size_t len)
{
	const struct srd_pkt_base *b = (const struct srd_pkt_base *)pkt;
	struct srd_peer *peer;
	int type = srd_pkt_validate(pkt, len, SRD_MAX_MSG_SIZE);

	if (WEFT_UNLIKELY(type < 0))
		return;
	if (type == SRD_PKT_HELLO || type == SRD_PKT_HELLO_ACK) {
		srd_peer_handle_hello(ep, wc, pkt, len);
		return;
	}
	peer = srd_peer_by_id(ep, b->peer_id, wc->src_qp);
	if (WEFT_UNLIKELY(!peer))
		return;
	if (WEFT_UNLIKELY(!ep->pkt_route[type].handle)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"%s from qpn %u: no protocol here takes it, dropped\n",
			srd_pkt_type_str(type), peer->name.qpn);
		return;
	}
	ep->pkt_route[type].handle(ep, peer, pkt, len);
}

static void srd_ep_on_recv(struct srd_dev_cq *cq, const struct srd_dev_wc *wc,
			   void *arg)
{
	struct srd_ep *ep = arg;
	struct srd_wr_hdr *hdr = (struct srd_wr_hdr *)(uintptr_t)wc->wr_id;
	struct srd_rxbuf *rb = container_of(hdr, struct srd_rxbuf, hdr);

	(void)cq;
	if (WEFT_UNLIKELY(hdr->kind != SRD_WR_RXBUF))
		return;
	srd_ep_rx_pkt(ep, wc, rb->data, wc->byte_len < ep->pkt_size ?
					wc->byte_len : ep->pkt_size);
	srd_rxbuf_release(ep, rb);
}

static void srd_ep_on_imm(struct srd_dev_cq *cq, const struct srd_dev_wc *wc,
			  void *arg)
{
	struct srd_ep *ep = arg;
	struct srd_wr_hdr *hdr = (struct srd_wr_hdr *)(uintptr_t)wc->wr_id;

	(void)cq;
	srd_rma_handle_imm(ep, wc);
	/* Solicited writes with immediate data consume a posted buffer. */
	if (hdr && hdr->kind == SRD_WR_RXBUF)
		srd_rxbuf_release(ep, container_of(hdr, struct srd_rxbuf, hdr));
}

static void srd_ep_on_send(struct srd_dev_cq *cq, const struct srd_dev_wc *wc,
			   void *arg)
{
	struct srd_ep *ep = arg;
	struct srd_wr_hdr *hdr = (struct srd_wr_hdr *)(uintptr_t)wc->wr_id;

	(void)cq;
	if (WEFT_LIKELY(hdr->kind == SRD_WR_TXBUF)) {
		srd_txbuf_done(ep, container_of(hdr, struct srd_txbuf, hdr), wc);
		return;
	}
	/* A work request of a protocol's own (RDMA read, RMA, ring). */
	if (hdr->kind < SRD_WR_KIND_MAX && ep->wr_proto[hdr->kind])
		ep->sq_inflight--;
	srd_wr_done(ep, hdr, wc);
}

static void srd_ep_on_error(struct srd_dev_cq *cq, const struct srd_dev_wc *wc,
			    void *arg)
{
	struct srd_ep *ep = arg;
	struct srd_wr_hdr *hdr = (struct srd_wr_hdr *)(uintptr_t)wc->wr_id;

	if (hdr && hdr->kind == SRD_WR_RXBUF) {
		/* Flushed or too long: the buffer is ours again. */
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			srd_rxbuf_release(ep, container_of(hdr, struct srd_rxbuf,
							   hdr));
		return;
	}
	if (hdr)
		srd_ep_on_send(cq, wc, arg);
}

static void srd_ep_on_unknown(struct srd_dev_cq *cq,
			      const struct srd_dev_wc *wc, void *arg)
{
	struct srd_wr_hdr *hdr = (struct srd_wr_hdr *)(uintptr_t)wc->wr_id;

	FI_WARN(&srd_prov, FI_LOG_CQ, "completion with opcode %d\n",
		wc->opcode);
	if (hdr && hdr->kind == SRD_WR_RXBUF)
		srd_rxbuf_release(arg, container_of(hdr, struct srd_rxbuf,
						    hdr));
	(void)cq;
}

void srd_ep_batch_end(struct srd_ep *ep)
{
	uint64_t now;

	/* a post per message would cost a device call (its lock) on the way
	 * from a receive to the answer; an eighth of the buffers may wait */
	if (ep->repost_count >= ep->repost_batch)
		srd_rx_repost(ep);
	if (ep->flush)
		srd_flush_all(ep);
	if (ep->tx_pump)
		srd_tx_pump(ep);
	if (ep->rx_pump)
		srd_rx_pump(ep);
	srd_proto_progress(ep);
	if (util_peer_watch_due(&ep->watch, &now))
		srd_watch(ep, now);
}

static void srd_ep_on_batch_end(struct srd_dev_cq *cq, int n, void *arg)
{
	(void)cq;
	(void)n;
	srd_ep_batch_end(arg);
}

const struct srd_dev_cq_ops srd_ep_cq_ops = {
	.on_wc = {
		[IBV_WC_SEND] = srd_ep_on_send,
		[IBV_WC_RDMA_READ] = srd_ep_on_send,
		[IBV_WC_RDMA_WRITE] = srd_ep_on_send,
		[IBV_WC_RECV] = srd_ep_on_recv,
		[IBV_WC_RECV_RDMA_WITH_IMM] = srd_ep_on_imm,
	},
	.on_unknown = srd_ep_on_unknown,
	.on_error = srd_ep_on_error,
	.on_batch_end = srd_ep_on_batch_end,
};

void srd_ep_progress(struct util_ep *util)
{
	struct srd_ep *ep = to_srd_ep_util(util);

	uint32_t i;

	util_lock_acquire(&ep->util.lock);
	if (ep->util.enabled) {
		if (WEFT_LIKELY(!ep->shm) || srd_shm_dev_due(ep))
			srd_dev_cq_poll(ep->cq);
		if (WEFT_UNLIKELY(ep->stripe))
			srd_stripe_poll(ep);
		for (i = 0; i < ep->poller_count; i++)
			ep->pollers[i]->poll(ep);
		if (ep->shm)
			srd_shm_progress(ep);
	}
	if (WEFT_UNLIKELY(util_coll_busy(&ep->util)))
		util_coll_progress(&ep->util);
	util_lock_release(&ep->util.lock);
}
