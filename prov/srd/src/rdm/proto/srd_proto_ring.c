/* SPDX-License-Identifier: MIT */
/*
 * The ring protocol (poll on data, srd_ring.h): small messages go by one
 * RDMA write into the next slot of the peer's ring, and the receiver
 * finds them by polling memory instead of the CQ.
 *
 * Sending: the EAGER packet of the message (header, payload) is written
 * into the packet buffer already framed for the peer's ring, the record
 * and its flags put together while the payload is copied, and goes as
 * one write, once the slot's credit, the send queue and the peer allow
 * it. Its write completion frees the buffer and completes the message
 * like a send completion would (srd_txbuf_done). When the ring cannot
 * take the message (no ring yet, too large, no credit), it goes as an
 * EAGER packet instead: the msg_id it carries keeps it in order with the
 * ring messages at the receiver. Once the peer failed, writes stop
 * (srd_ring_peer_fail): one may not have landed, and the sequence would
 * have a hole.
 *
 * Receiving: each progress call looks at the head slot of every ring a
 * peer may write into (ep->ring->active, not every AV entry), takes up to
 * a budget of messages from each, and returns credits when half a ring
 * was consumed. What a slot holds came from the wire: the flag's length,
 * the packet (srd_pkt_validate, EAGER only, our peer id) and the credit
 * are checked before use; a bad slot is dropped with a warning. The
 * packet is then handed to srd_rx_handle_msg like one from the CQ, so the
 * peer's reorder window orders ring and send/recv messages alike.
 */
#include "weft/compat.h"
#include "srd_ring.h"

#include <string.h>

/* ---- sending ---------------------------------------------------------- */

static inline uint64_t srd_ring_tx_slot(const struct srd_ring_peer *rp)
{
	return rp->raddr + (uint64_t)(rp->sent & (rp->rslots - 1)) *
			   rp->rslot_size;
}

/* Writes a record as a byte stream into its framed place: pieces of
 * `piece` bytes, each `stride` bytes apart (SEQ: one piece). */
struct srd_ring_out {
	uint8_t *dst;
	uint32_t pos;
	uint32_t piece;
	uint32_t stride;
};

static uint8_t *srd_ring_out_at(const struct srd_ring_out *o, uint32_t *room)
{
	*room = o->piece - o->pos % o->piece;
	return o->dst + (size_t)(o->pos / o->piece) * o->stride +
	       o->pos % o->piece;
}

static void srd_ring_out_put(struct srd_ring_out *o, const void *src,
			     uint32_t n)
{
	const uint8_t *s = src;
	uint32_t room, k;
	uint8_t *d;

	while (n) {
		d = srd_ring_out_at(o, &room);
		k = n < room ? n : room;
		memcpy(d, s, k);
		o->pos += k;
		s += k;
		n -= k;
	}
}

static void srd_ring_out_iov(struct srd_ring_out *o,
			     const struct srd_tx_entry *tx, uint32_t n)
{
	uint32_t room, k, off = 0;
	uint8_t *d;

	while (n) {
		d = srd_ring_out_at(o, &room);
		k = n < room ? n : room;
		util_iov_copy_from(tx->iov, tx->iov_count, off, d, k);
		o->pos += k;
		off += k;
		n -= k;
	}
}

static void srd_ring_out_zero(struct srd_ring_out *o, uint32_t n)
{
	uint32_t room, k;
	uint8_t *d;

	while (n) {
		d = srd_ring_out_at(o, &room);
		k = n < room ? n : room;
		memset(d, 0, k);
		o->pos += k;
		n -= k;
	}
}

/* The record of tx's EAGER packet (len bytes): header, payload, zeroes up
 * to a multiple of 8, our credit. Returns the record length. */
static uint32_t srd_ring_record(struct srd_ring_out *o,
				const struct srd_ring_peer *rp,
				struct srd_tx_entry *tx, uint32_t len)
{
	struct srd_ring_credit cr = { .consumed = rp->head, .reserved = 0 };
	struct srd_pkt_msg h;

	srd_msg_hdr_fill(tx, &h, SRD_PKT_EAGER, 0, (uint32_t)tx->total_len);
	h.base.peer_id = rp->peer->remote_id;
	srd_ring_out_put(o, &h, sizeof(h));
	srd_ring_out_iov(o, tx, (uint32_t)tx->total_len);
	srd_ring_out_zero(o, srd_ring_pad8(len) - len);
	srd_ring_out_put(o, &cr, sizeof(cr));
	return o->pos;
}

uint32_t srd_ring_frame_seq(struct srd_ring_peer *rp, struct srd_tx_entry *tx,
			    uint8_t *dst, uint32_t len, uint64_t *raddr)
{
	struct srd_ring_out o = { .dst = dst, .piece = UINT32_MAX };
	struct srd_ring_flag fl = { .len = len, .seq = rp->sent + 1 };
	uint32_t rec = srd_ring_record(&o, rp, tx, len), wlen;

	memcpy(dst + rec, &fl, sizeof(fl));
	wlen = rec + (uint32_t)sizeof(fl);
	/* Right-aligned: the flag is the slot's last word. */
	*raddr = srd_ring_tx_slot(rp) + rp->rslot_size - wlen;
	return wlen;
}

uint32_t srd_ring_frame_line(struct srd_ring_peer *rp, struct srd_tx_entry *tx,
			     uint8_t *dst, uint32_t len, uint64_t *raddr)
{
	struct srd_ring_out o = { .dst = dst, .piece = SRD_RING_LINE_DATA,
				  .stride = SRD_RING_LINE };
	struct srd_ring_flag fl = { .len = len, .seq = rp->sent + 1 };
	uint32_t rec = srd_ring_record(&o, rp, tx, len), lines, i;

	lines = (rec + (uint32_t)SRD_RING_LINE_DATA - 1) /
		(uint32_t)SRD_RING_LINE_DATA;
	/* No stale bytes of an earlier packet go out in the last line. */
	srd_ring_out_zero(&o, lines * (uint32_t)SRD_RING_LINE_DATA - rec);
	for (i = 0; i < lines; i++)
		memcpy(dst + i * SRD_RING_LINE + SRD_RING_LINE_DATA, &fl,
		       sizeof(fl));
	*raddr = srd_ring_tx_slot(rp);
	return lines * SRD_RING_LINE;
}

static bool srd_ring_credit_reload(struct srd_ring_peer *rp)
{
	const uint32_t *w = (const uint32_t *)(const void *)srd_ring_ctrl(rp);

	/* The peer's credit writes land here (our ring's control line). */
	srd_ring_credit_seen(rp, __atomic_load_n(w, __ATOMIC_ACQUIRE));
	return rp->sent - rp->credit < rp->rslots;
}

/* Everything a write into the peer's ring needs, checked before the
 * record is built, so that a built record always goes. */
static bool srd_ring_may_write(struct srd_ep *ep, struct srd_peer *peer,
			       uint32_t len)
{
	struct srd_ring_peer *rp = peer->ring;

	if (!rp || !rp->tx_ready || len > rp->tx_max)
		return false;
	if (rp->sent - rp->credit >= rp->rslots &&
	    !srd_ring_credit_reload(rp)) {
		ep->ring->stats.tx_no_credit++;
		return false;
	}
	return ep->sq_inflight < ep->qp->sq_depth && srd_peer_may_send(peer);
}

static int srd_ring_tx_start(struct srd_ep *ep, struct srd_tx_entry *tx,
			     void **desc)
{
	uint32_t len = (uint32_t)(sizeof(struct srd_pkt_msg) + tx->total_len);
	struct srd_peer *peer = tx->peer;
	struct srd_ring_peer *rp = peer->ring;
	struct srd_txbuf *tb;
	uint64_t raddr;
	uint32_t wlen;

	if (!srd_ring_may_write(ep, peer, len))
		return srd_proto_eager.tx_start(ep, tx, desc);
	tb = srd_txbuf_get(ep);
	if (WEFT_UNLIKELY(!tb))
		return -FI_EAGAIN;
	wlen = rp->frame(rp, tx, tb->data, len, &raddr);
	tb->tx = tx;
	tb->peer = peer;
	tb->len = len;
	if (WEFT_UNLIKELY(srd_post_rdma(ep, peer, &tb->hdr, true,
					ep->tx_mr->lkey, tb->data, wlen,
					rp->rkey, raddr))) {
		/* The device refused the write itself: the message goes as a
		 * packet, built anew from the application's buffer. */
		tb->tx = NULL;
		srd_txbuf_put(ep, tb);
		return srd_proto_eager.tx_start(ep, tx, desc);
	}
	tx->sent = tx->total_len;
	tx->inflight++;
	rp->sent++;
	/* The record told the peer how far we consumed its messages. */
	rp->returned = rp->head;
	ep->ring->stats.tx_ring++;
	return 0;
}

static bool srd_ring_fits(const struct srd_ep *ep, const struct srd_peer *peer,
			  uint64_t len)
{
	(void)peer;
	return len <= ep->pc.eager_max;
}

/* Every small message: into the ring when it can, else as EAGER. */
static size_t srd_ring_fast_max(const struct srd_ep *ep)
{
	return ep->pc.eager_max;
}

/* ---- receiving ----------------------------------------------------------- */

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
	WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
		"ring slot %u (message %u) from qpn %u: bad %s (%u): dropped\n",
		rp->head & (rp->slots - 1), rp->head + 1,
		rp->peer->name.qpn, what, value);
	ep->ring->stats.rx_bad++;
	rp->head++;
}

/* A record of a packet of len bytes (len already bounded by pkt_max).
 * Out of line: one call per message found, which is what
 * contrib/bench/instr_per_msg.sh counts (the pollers also run idle). */
static __attribute__((noinline)) void
srd_ring_consume(struct srd_ep *ep, struct srd_ring_peer *rp,
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

/* After each CQ poll, so that what a device places while it is polled
 * (softsrd does) is found in this call, not the next. */
static void srd_ring_progress(struct srd_ep *ep)
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

static void srd_ring_peer_failed(struct srd_ep *ep, struct srd_peer *peer,
				 int err, int prov_errno)
{
	(void)ep;
	(void)err;
	(void)prov_errno;
	srd_ring_peer_fail(peer);
}

const struct srd_proto srd_proto_ring = {
	.name = "ring",
	.ep_init = srd_ring_ep_init,
	.ep_fini = srd_ring_ep_fini,
	.poll = srd_ring_progress,
	.peer_failed = srd_ring_peer_failed,
	.hello_fill = srd_ring_hello_fill,
	.hello_recv = srd_ring_hello_recv,
	.peer_free = srd_ring_peer_free,
	.fits = srd_ring_fits,
	.fast_max = srd_ring_fast_max,
	.tx_start = srd_ring_tx_start,
	.wr_kind = SRD_WR_RING,
	.wr_done = srd_ring_wc,
};
