/* SPDX-License-Identifier: MIT */
/*
 * Data mode, receiving: each progress call looks at the head slot of every
 * ring a peer may write into (ep->ring->active, not every AV entry), takes
 * up to a budget of messages from each, and returns credits when half a
 * ring was consumed. What a slot holds came from the wire: the flag's
 * length, the packet (srd_pkt_validate, EAGER only, our peer id) and the
 * credit are checked before use; a bad slot is dropped with a warning.
 * The packet is then handed to srd_rx_handle_msg like one from the CQ, so
 * the peer's reorder window orders ring and send/recv messages alike.
 */
#include "weft/compat.h"
#include "srd_ring.h"

#include <string.h>

static inline uint64_t srd_ring_load(const uint8_t *p)
{
	/* The device (softsrd: a release store) writes this word last. */
	return __atomic_load_n((const uint64_t *)(const void *)p,
			       __ATOMIC_ACQUIRE);
}

static inline uint32_t srd_ring_flag_seq(uint64_t w)
{
	return (uint32_t)(w >> 32);
}

static inline uint32_t srd_ring_flag_len(uint64_t w)
{
	return (uint32_t)w;
}

static inline uint8_t *srd_ring_head_slot(const struct srd_ring_peer *rp)
{
	return rp->base + (size_t)(rp->head & (rp->slots - 1)) *
			  SRD_RING_SLOT_SIZE;
}

static void srd_ring_bad(struct srd_ep *ep, struct srd_ring_peer *rp,
			 const char *what, uint32_t value)
{
	FI_WARN(&srd_prov, FI_LOG_EP_DATA,
		"ring slot %u (message %u) from qpn %u: bad %s (%u): dropped\n",
		rp->head & (rp->slots - 1), rp->head + 1,
		rp->peer->name.qpn, what, value);
	ep->ring->stats.rx_bad++;
	rp->head++;
}

/* A record of a packet of len bytes (len already bounded by pkt_max).
 * Out of line: one call per message found, which is what
 * contrib/bench/instr_per_msg.sh counts (the pollers also run idle). */
static __attribute__((noinline)) void srd_ring_consume(struct srd_ep *ep, struct srd_ring_peer *rp,
			     const uint8_t *rec, uint32_t len)
{
	const struct srd_pkt_base *b = (const struct srd_pkt_base *)rec;
	struct srd_ring_credit cr;
	int type;

	memcpy(&cr, rec + srd_ring_pad8(len), sizeof(cr));
	type = srd_pkt_validate(rec, len, UINT32_MAX);
	if (WEFT_UNLIKELY(type != SRD_PKT_EAGER)) {
		srd_ring_bad(ep, rp, "packet type", (uint32_t)type);
		return;
	}
	if (WEFT_UNLIKELY(b->peer_id != rp->peer->id)) {
		srd_ring_bad(ep, rp, "peer id", b->peer_id);
		return;
	}
	srd_ring_credit_seen(rp, cr.consumed);
	ep->ring->stats.rx_ring++;
	srd_rx_handle_msg(ep, rp->peer, rec, len);
	rp->head++;
}

bool srd_ring_poll_seq(struct srd_ep *ep, struct srd_ring_peer *rp)
{
	uint8_t *slot = srd_ring_head_slot(rp);
	uint64_t w = srd_ring_load(slot + SRD_RING_SLOT_SIZE -
				   sizeof(struct srd_ring_flag));
	uint32_t len = srd_ring_flag_len(w);

	if (srd_ring_flag_seq(w) != rp->head + 1)
		return false;
	if (WEFT_UNLIKELY(len < sizeof(struct srd_pkt_msg) ||
			  len > ep->ring->pkt_max)) {
		srd_ring_bad(ep, rp, "length", len);
		return true;
	}
	srd_ring_consume(ep, rp, slot + SRD_RING_SLOT_SIZE -
			 sizeof(struct srd_ring_flag) - srd_ring_rec_len(len),
			 len);
	return true;
}

/* Every line the record needs must show the sequence number; lines land
 * independently, so a partly written slot is simply not there yet. */
bool srd_ring_poll_line(struct srd_ep *ep, struct srd_ring_peer *rp)
{
	uint8_t *slot = srd_ring_head_slot(rp);
	uint32_t want = rp->head + 1, len, rec, lines, i;
	uint64_t w = srd_ring_load(slot + SRD_RING_LINE_DATA);

	if (srd_ring_flag_seq(w) != want)
		return false;
	len = srd_ring_flag_len(w);
	if (WEFT_UNLIKELY(len < sizeof(struct srd_pkt_msg) ||
			  len > ep->ring->pkt_max)) {
		srd_ring_bad(ep, rp, "length", len);
		return true;
	}
	rec = srd_ring_rec_len(len);
	lines = (rec + (uint32_t)SRD_RING_LINE_DATA - 1) /
		(uint32_t)SRD_RING_LINE_DATA;
	for (i = 1; i < lines; i++) {
		w = srd_ring_load(slot + i * SRD_RING_LINE + SRD_RING_LINE_DATA);
		if (srd_ring_flag_seq(w) != want)
			return false;
		if (WEFT_UNLIKELY(srd_ring_flag_len(w) != len)) {
			srd_ring_bad(ep, rp, "line length", srd_ring_flag_len(w));
			return true;
		}
	}
	for (i = 0; i < lines; i++) {
		uint32_t off = i * (uint32_t)SRD_RING_LINE_DATA;
		uint32_t n = rec - off < SRD_RING_LINE_DATA ?
			     rec - off : (uint32_t)SRD_RING_LINE_DATA;

		memcpy(ep->ring->stage + off, slot + i * SRD_RING_LINE, n);
	}
	srd_ring_consume(ep, rp, ep->ring->stage, len);
	return true;
}

void srd_ring_progress(struct srd_ep *ep)
{
	struct srd_ring_ep *re = ep->ring;
	struct srd_ring_peer *rp;
	uint32_t n;

	LL_FOREACH(re->active, rp) {
		for (n = 0; n < re->budget && re->poll(ep, rp); n++)
			;
		if (rp->head - rp->returned >= rp->slots / 2)
			srd_ring_credit_return(ep, rp);
	}
}
