/* SPDX-License-Identifier: MIT */
/*
 * Data-mode rings (srd_ring.h): the endpoint's decision, the per-peer ring
 * allocated when we first announce it, the peer's announcement, and credit
 * returns. Control path except srd_ring_credit_seen/_return.
 *
 * Credits: the sender may write slot n only once the receiver has consumed
 * message n - slots. The receiver tells it how many it consumed in two
 * ways: piggybacked in every ring message it sends back (free in
 * request/response traffic), and, when half a ring was consumed without
 * such a chance, by an 8-byte RDMA write into the control line of the
 * sender's own ring (one-way streams). One credit write per peer is in
 * flight at a time: SRD may reorder two writes, and an older count landing
 * last would strand the sender with less than it was given.
 */
#include "weft/compat.h"
#include "srd_ring.h"

#include <stdlib.h>
#include <string.h>

size_t srd_ring_bytes(uint32_t slots, uint32_t slot_size)
{
	return (size_t)slots * slot_size + SRD_RING_CTRL;
}

static uint32_t srd_ring_pkt_max(bool line128, uint32_t slot_size)
{
	uint32_t rec;

	if (!line128)
		return slot_size - (uint32_t)(sizeof(struct srd_ring_flag) +
					      sizeof(struct srd_ring_credit));
	rec = slot_size / SRD_RING_LINE * (uint32_t)SRD_RING_LINE_DATA;
	/* The packet is padded to 8 before the credit word. */
	return (rec - (uint32_t)sizeof(struct srd_ring_credit)) & ~7u;
}

uint32_t srd_ring_slots_setting(void)
{
	struct srd_settings s;

	srd_settings_read_one("ring_slots", &s);
	return s.ring_slots;
}

int srd_ring_ep_init(struct srd_ep *ep)
{
	const struct srd_dev_inorder *io;
	struct srd_dev_poll_choice c;
	struct srd_ring_ep *re;
	bool line;
	int ret;

	ret = srd_dev_inorder_get(ep->dev, ep->qp, &io);
	if (ret)
		return ret;
	/* Our rings are registered without relaxed ordering. */
	srd_dev_poll_choose(srd_settings.poll_mode, io, &ep->dev->caps, false,
			    &c);
	if (c.mode != SRD_POLL_DATA)
		return SRD_PROTO_OFF;
	if (ep->pkt_size < SRD_RING_SLOT_SIZE) {
		FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
			"MTU %u below a ring slot (%u): polling completions\n",
			ep->pkt_size, SRD_RING_SLOT_SIZE);
		return SRD_PROTO_OFF;
	}
	re = calloc(1, sizeof(*re));
	if (!re)
		return -FI_ENOMEM;
	line = c.ring == SRD_RING_LINE128;
	re->choice = c;
	re->poll = line ? srd_ring_poll_line : srd_ring_poll_seq;
	re->features = SRD_FEAT_DATA_RING | (line ? SRD_FEAT_RING_LINE128 : 0);
	re->budget = srd_settings.cq_batch;
	re->slots = srd_ring_slots_setting();
	re->pkt_max = srd_ring_pkt_max(line, SRD_RING_SLOT_SIZE);
	if (posix_memalign((void **)&re->stage, 64, SRD_RING_SLOT_SIZE)) {
		free(re);
		return -FI_ENOMEM;
	}
	ep->ring = re;
	FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
		"poll mode data: %u slots of %u bytes per peer, %s framing\n",
		re->slots, SRD_RING_SLOT_SIZE,
		line ? "128-byte line" : "sequence word");
	return 0;
}

void srd_ring_ep_fini(struct srd_ep *ep)
{
	const struct srd_ring_stats *st;

	if (!ep->ring)
		return;
	st = &ep->ring->stats;
	FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
		"rings: %llu messages sent by ring, %llu small ones by send "
		"(no credit), %llu received by ring, %llu bad slots, %llu "
		"credit writes\n", (unsigned long long)st->tx_ring,
		(unsigned long long)st->tx_no_credit,
		(unsigned long long)st->rx_ring, (unsigned long long)st->rx_bad,
		(unsigned long long)st->credit_writes);
	free(ep->ring->stage);
	free(ep->ring);
	ep->ring = NULL;
}

static int srd_ring_peer_alloc(struct srd_ep *ep, struct srd_peer *peer)
{
	size_t bytes = srd_ring_bytes(ep->ring->slots, SRD_RING_SLOT_SIZE);
	struct srd_ring_peer *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return -FI_ENOMEM;
	rp->slots = ep->ring->slots;
	rp->hdr.kind = SRD_WR_RING;
	rp->peer = peer;
	if (posix_memalign((void **)&rp->base, 4096, bytes))
		goto free_rp;
	/* Zero: no slot shows a sequence number before it is written. */
	memset(rp->base, 0, bytes);
	rp->mr = srd_dev_reg_mr(ep->dev, rp->base, bytes,
				IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE);
	if (!rp->mr)
		goto free_base;
	peer->ring = rp;
	return 0;

free_base:
	free(rp->base);
free_rp:
	free(rp);
	FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
		"no ring for qpn %u (memory or registration): it polls "
		"completions\n", peer->name.qpn);
	return -FI_ENOMEM;
}

void srd_ring_hello_fill(struct srd_ep *ep, struct srd_peer *peer,
			 struct srd_pkt_hello *h)
{
	if (!ep->ring || (!peer->ring && srd_ring_peer_alloc(ep, peer)))
		return;
	h->features |= ep->ring->features;
	h->ring_addr = (uintptr_t)peer->ring->base;
	h->ring_key = peer->ring->mr->rkey;
	h->ring_slots = peer->ring->slots;
	h->ring_slot_size = SRD_RING_SLOT_SIZE;
}

static bool srd_ring_remote_ok(const struct srd_pkt_hello *h)
{
	uint32_t n = h->ring_slots, sz = h->ring_slot_size;

	if (n > SRD_RING_SLOTS_MAX || (n & (n - 1)) || sz < SRD_RING_LINE ||
	    sz > SRD_RING_SLOT_SIZE_MAX || sz % SRD_RING_LINE ||
	    h->ring_addr % SRD_RING_LINE || h->ring_key > UINT32_MAX ||
	    h->ring_addr > UINT64_MAX - srd_ring_bytes(n, sz))
		return false;
	return true;
}

static void srd_ring_tx_setup(struct srd_ring_peer *rp,
			      const struct srd_pkt_hello *h, uint32_t pkt_size)
{
	bool line = h->features & SRD_FEAT_RING_LINE128;
	uint32_t max = srd_ring_pkt_max(line, h->ring_slot_size);
	uint32_t room = pkt_size - (line ? 0 : (uint32_t)sizeof(struct srd_ring_flag));

	rp->frame = line ? srd_ring_frame_line : srd_ring_frame_seq;
	/* The framed record is built in one packet buffer. */
	if (line)
		room = room / SRD_RING_LINE * (uint32_t)SRD_RING_LINE_DATA -
		       (uint32_t)sizeof(struct srd_ring_credit);
	else
		room -= (uint32_t)sizeof(struct srd_ring_credit);
	rp->tx_max = max < (room & ~7u) ? max : (room & ~7u);
	rp->rslots = h->ring_slots;
	rp->rslot_size = h->ring_slot_size;
	rp->raddr = h->ring_addr;
	rp->rkey = (uint32_t)h->ring_key;
	rp->tx_ready = rp->tx_max >= sizeof(struct srd_pkt_msg);
}

void srd_ring_hello_recv(struct srd_ep *ep, struct srd_peer *peer,
			 const struct srd_pkt_hello *h)
{
	struct srd_ring_peer *rp;

	if (!ep->ring || !(h->features & SRD_FEAT_DATA_RING))
		return;
	if (!peer->ring && srd_ring_peer_alloc(ep, peer))
		return;
	rp = peer->ring;
	/* Whatever it offers us, it may write into the ring we offered. */
	if (!srd_ring_remote_ok(h))
		FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
			"qpn %u announced a ring we cannot use (%u slots of %u "
			"bytes): sends to it go as packets\n", peer->name.qpn,
			h->ring_slots, h->ring_slot_size);
	else if (!rp->tx_ready && !rp->sent)
		/* A second HELLO of the same incarnation changes nothing. */
		srd_ring_tx_setup(rp, h, ep->pkt_size);
	if (!rp->active) {
		rp->active = true;
		LL_PREPEND(ep->ring->active, rp);
	}
}

/* Writes into a ring of a peer that failed may never have landed: the
 * sequence would have a hole, so nothing more goes that way. */
void srd_ring_peer_fail(struct srd_peer *peer)
{
	if (peer->ring)
		peer->ring->tx_ready = false;
}

void srd_ring_peer_free(struct srd_ep *ep, struct srd_peer *peer)
{
	struct srd_ring_peer *rp = peer->ring;

	if (!rp)
		return;
	if (rp->active && ep->ring)
		LL_DELETE(ep->ring->active, rp);
	if (rp->mr)
		srd_dev_dereg_mr(ep->dev, rp->mr);
	free(rp->base);
	free(rp);
	peer->ring = NULL;
}

/* consumed comes from the wire: only a count ahead of what we know and
 * not ahead of what we sent is taken. */
void srd_ring_credit_seen(struct srd_ring_peer *rp, uint32_t consumed)
{
	if ((int32_t)(consumed - rp->credit) > 0 &&
	    (int32_t)(rp->sent - consumed) >= 0)
		rp->credit = consumed;
}

void srd_ring_credit_return(struct srd_ep *ep, struct srd_ring_peer *rp)
{
	uint32_t *src = (uint32_t *)(srd_ring_ctrl(rp) + SRD_RING_CTRL_SRC);
	uint64_t raddr;

	if (rp->credit_inflight || !rp->rslots ||
	    rp->head - rp->returned < rp->slots / 2)
		return;
	raddr = rp->raddr + (uint64_t)rp->rslots * rp->rslot_size;
	*src = rp->head;
	if (srd_post_rdma(ep, rp->peer, &rp->hdr, true, rp->mr->lkey, src,
			  sizeof(*src), rp->rkey, raddr))
		return;		/* retried at the next poll */
	rp->credit_inflight = true;
	rp->returned = rp->head;
	ep->ring->stats.credit_writes++;
}

void srd_ring_wc(struct srd_ep *ep, struct srd_wr_hdr *hdr,
		 const struct srd_dev_wc *wc)
{
	struct srd_ring_peer *rp = container_of(hdr, struct srd_ring_peer,
						hdr);

	rp->credit_inflight = false;
	if (WEFT_UNLIKELY(wc->status != IBV_WC_SUCCESS)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"credit write to qpn %u failed (status %d, vendor "
			"error %u)\n", rp->peer->name.qpn, wc->status,
			wc->vendor_err);
		return;
	}
	srd_ring_credit_return(ep, rp);
}
