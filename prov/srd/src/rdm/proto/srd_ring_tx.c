/* SPDX-License-Identifier: MIT */
/*
 * Data mode, sending: an EAGER packet already built in a registered packet
 * buffer is framed in place for the peer's ring (srd_ring.h) and goes as
 * one RDMA write into the next slot, if a credit is free. Its write
 * completion frees the buffer and completes the message like a send
 * completion would (srd_txbuf_done). Without a credit, or with the send
 * queue full, the caller sends the packet instead: the msg_id it carries
 * keeps it in order with the ring messages at the receiver.
 */
#include "weft/compat.h"
#include "srd_ring.h"

#include <string.h>

static inline uint64_t srd_ring_tx_slot(const struct srd_ring_peer *rp)
{
	return rp->raddr + (uint64_t)(rp->sent & (rp->rslots - 1)) *
			   rp->rslot_size;
}

/* Packet, zero padding, our credit; returns the record length. */
static uint32_t srd_ring_record(const struct srd_ring_peer *rp, uint8_t *d,
				uint32_t len)
{
	struct srd_ring_credit cr = { .consumed = rp->head, .reserved = 0 };
	uint32_t pad = srd_ring_pad8(len);

	memset(d + len, 0, pad - len);
	memcpy(d + pad, &cr, sizeof(cr));
	return pad + (uint32_t)sizeof(cr);
}

void srd_ring_frame_seq(struct srd_ring_peer *rp, struct srd_txbuf *tb,
			uint32_t *wlen, uint64_t *raddr)
{
	struct srd_ring_flag fl = { .len = tb->len, .seq = rp->sent + 1 };
	uint32_t rec = srd_ring_record(rp, tb->data, tb->len);

	memcpy(tb->data + rec, &fl, sizeof(fl));
	*wlen = rec + (uint32_t)sizeof(fl);
	/* Right-aligned: the flag is the slot's last word. */
	*raddr = srd_ring_tx_slot(rp) + rp->rslot_size - *wlen;
}

/* Spread the record over lines from the last one down, so that no piece
 * is overwritten before it moved. */
void srd_ring_frame_line(struct srd_ring_peer *rp, struct srd_txbuf *tb,
			 uint32_t *wlen, uint64_t *raddr)
{
	struct srd_ring_flag fl = { .len = tb->len, .seq = rp->sent + 1 };
	uint32_t rec = srd_ring_record(rp, tb->data, tb->len);
	uint32_t lines = (rec + (uint32_t)SRD_RING_LINE_DATA - 1) /
			 (uint32_t)SRD_RING_LINE_DATA;
	uint32_t i = lines;

	/* No stale bytes of an earlier packet go out in the last line. */
	memset(tb->data + rec, 0, lines * SRD_RING_LINE_DATA - rec);
	while (i--) {
		memmove(tb->data + i * SRD_RING_LINE,
			tb->data + i * SRD_RING_LINE_DATA, SRD_RING_LINE_DATA);
		memcpy(tb->data + i * SRD_RING_LINE + SRD_RING_LINE_DATA, &fl,
		       sizeof(fl));
	}
	*wlen = lines * SRD_RING_LINE;
	*raddr = srd_ring_tx_slot(rp);
}

/* Undo srd_ring_frame_line: the packet goes as a send after all. */
static void srd_ring_unframe_line(struct srd_txbuf *tb, uint32_t wlen)
{
	uint32_t i, lines = wlen / SRD_RING_LINE;

	for (i = 1; i < lines; i++)
		memmove(tb->data + i * SRD_RING_LINE_DATA,
			tb->data + i * SRD_RING_LINE, SRD_RING_LINE_DATA);
}

static bool srd_ring_credit_reload(struct srd_ring_peer *rp)
{
	const uint32_t *w = (const uint32_t *)(const void *)srd_ring_ctrl(rp);

	/* The peer's credit writes land here (our ring's control line). */
	srd_ring_credit_seen(rp, __atomic_load_n(w, __ATOMIC_ACQUIRE));
	return rp->sent - rp->credit < rp->rslots;
}

int srd_ring_send(struct srd_ep *ep, struct srd_peer *peer,
		  struct srd_txbuf *tb)
{
	struct srd_ring_peer *rp = peer->ring;
	uint32_t wlen;
	uint64_t raddr;

	if (rp->sent - rp->credit >= rp->rslots &&
	    !srd_ring_credit_reload(rp)) {
		ep->ring->stats.tx_no_credit++;
		return -FI_EAGAIN;
	}
	((struct srd_pkt_base *)tb->data)->peer_id = peer->remote_id;
	rp->frame(rp, tb, &wlen, &raddr);
	if (WEFT_UNLIKELY(srd_post_rdma(ep, peer, &tb->hdr, true,
					ep->tx_mr->lkey, tb->data, wlen,
					rp->rkey, raddr))) {
		if (rp->frame == srd_ring_frame_line)
			srd_ring_unframe_line(tb, wlen);
		return -FI_EAGAIN;
	}
	rp->sent++;
	/* The record told the peer how far we consumed its messages. */
	rp->returned = rp->head;
	ep->ring->stats.tx_ring++;
	return 0;
}
