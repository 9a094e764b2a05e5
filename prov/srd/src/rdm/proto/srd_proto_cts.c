/* SPDX-License-Identifier: MIT */
/*
 * Long messages by receiver-granted credits (CTS). Used where RDMA read
 * is not available at both ends, above cts_threshold: the sender
 * announces the message with CTS_RTS (header + the first bytes, at most
 * eager_max), then sends DATA packets only inside the windows the
 * receiver grants with CTS, and completes when the receiver's READ_DONE
 * says it took what it wanted (all of it, or what fit: truncation ends
 * the transfer early).
 *
 * The receiver matches a CTS_RTS like any message (an unexpected one
 * waits holding only its first chunk: no data moves before a receive
 * exists). Once matched, the transfer gets an rx_id (index | generation
 * << 16 in the slot table, so DATA for a finished or cancelled transfer
 * is refused instead of landing in memory the application took back),
 * and CTS grants up to cts_window bytes ahead of what arrived, re-granted
 * as DATA lands, never past min(message, buffer). DATA lands by offset
 * straight into the receive buffer.
 *
 * Why credits rather than pushing MEDIUM segments: a receiver that has not
 * matched the message yet holds only the RTS (no bytes buffered, no heap),
 * a matched one receives straight into the application's buffer, and no
 * sender can flood a receiver's posted packet buffers (RNR storms).
 *
 * Why not RDMA write into a CTS-announced buffer: this path is the one for
 * devices without RDMA read, and a device with write but no read is rare;
 * a write would also need the receiver to register each buffer (no MR
 * cache) and a separate completion packet, since writes and sends are not
 * ordered on SRD. Packet DATA costs one copy on each side, like MEDIUM.
 *
 * Peer failure: a send waiting for a grant or READ_DONE ends with the
 * error; a receive waiting for DATA completes with it (no READ_DONE: a
 * packet would start a handshake with a failed peer). Both sides are
 * watched while they wait (srd_watch.c).
 */
#include "weft/compat.h"
#include "../srd_proto.h"

#include <stdlib.h>
#include <string.h>

#define SRD_CTS_SLOTS 4096	/* concurrent CTS receives per endpoint */
#define SRD_CTS_ID_IDX(id) ((id) & 0xffffu)

static int srd_cts_ep_init(struct srd_ep *ep)
{
	uint32_t i;

	ep->cts_slot_count = SRD_CTS_SLOTS;
	ep->cts_slots = calloc(ep->cts_slot_count, sizeof(*ep->cts_slots));
	ep->cts_free = calloc(ep->cts_slot_count, sizeof(*ep->cts_free));
	if (!ep->cts_slots || !ep->cts_free) {
		free(ep->cts_slots);
		free(ep->cts_free);
		ep->cts_slots = NULL;
		ep->cts_free = NULL;
		return -FI_ENOMEM;
	}
	for (i = 0; i < ep->cts_slot_count; i++)
		ep->cts_free[i] = ep->cts_slot_count - 1 - i;
	ep->cts_free_top = ep->cts_slot_count;
	return 0;
}

/* The transfers went with their peers (srd_peers_free). */
static void srd_cts_ep_fini(struct srd_ep *ep)
{
	free(ep->cts_slots);
	free(ep->cts_free);
	ep->cts_slots = NULL;
	ep->cts_free = NULL;
	ep->cts_slot_count = 0;
}

/* ---- sender ------------------------------------------------------------- */

static bool srd_cts_fits(const struct srd_ep *ep, const struct srd_peer *peer,
			 uint64_t len)
{
	(void)ep;
	(void)peer;
	(void)len;
	return true;	/* the protocol of last resort: it always works */
}

/* Payload bytes of one DATA packet. */
static uint32_t srd_cts_seg_max(const struct srd_ep *ep)
{
	return ep->pkt_size - (uint32_t)sizeof(struct srd_pkt_data);
}

/* Bytes of tx that went in the CTS_RTS. */
static uint64_t srd_cts_first(const struct srd_ep *ep,
			      const struct srd_tx_entry *tx)
{
	return tx->total_len < ep->pc.eager_max ? tx->total_len :
						  ep->pc.eager_max;
}

static int srd_cts_tx_start(struct srd_ep *ep, struct srd_tx_entry *tx,
			    void **desc)
{
	struct srd_txbuf *tb = srd_txbuf_get(ep);
	struct srd_pkt_msg *h;
	uint32_t first;

	(void)desc;
	if (!tb)
		return -FI_EAGAIN;
	first = (uint32_t)srd_cts_first(ep, tx);
	h = (struct srd_pkt_msg *)tb->data;
	srd_msg_hdr_fill(tx, h, SRD_PKT_CTS_RTS, 0, first);
	util_iov_copy_from(tx->iov, tx->iov_count, 0, h + 1, first);
	/* The first chunk needs no grant: the receiver accounts for it. */
	tx->sent = first;
	tx->granted = first;
	tx->rx_id = 0;
	tx->cts_seen = false;
	tx->inflight = 1;
	tx->done_wait = true;
	tb->tx = tx;
	ep->lstat.cts_rts++;
	srd_watch_arm(ep);
	srd_pkt_send(ep, tx->peer, tb, sizeof(*h) + first);
	return 0;
}

/* One DATA packet of tx from tb. */
static void srd_cts_data_send(struct srd_ep *ep, struct srd_tx_entry *tx,
			      struct srd_txbuf *tb)
{
	struct srd_pkt_data *d = (struct srd_pkt_data *)tb->data;
	uint64_t left = tx->granted - tx->sent;
	uint32_t seg = left < srd_cts_seg_max(ep) ? (uint32_t)left :
						    srd_cts_seg_max(ep);

	srd_pkt_base_init(&d->base, SRD_PKT_DATA, 0, SRD_PEER_ID_NONE);
	d->rx_id = tx->rx_id;
	d->seg_len = seg;
	d->offset = tx->sent;
	util_iov_copy_from(tx->iov, tx->iov_count, tx->sent, d + 1, seg);
	tx->sent += seg;
	tx->inflight++;
	tb->tx = tx;
	ep->lstat.data++;
	srd_pkt_send(ep, tx->peer, tb, sizeof(*d) + seg);
}

/* Send what the window allows. False: out of packet buffers, retry at the
 * next batch end; true: the window is used up (tx leaves the pump). */
static bool srd_cts_tx_step(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	struct srd_txbuf *tb;

	while (tx->sent < tx->granted) {
		tb = srd_txbuf_get(ep);
		if (!tb)
			return false;
		srd_cts_data_send(ep, tx, tb);
	}
	return true;
}

static bool srd_cts_grant_ok(const struct srd_ep *ep,
			     const struct srd_tx_entry *tx,
			     const struct srd_pkt_ctrl *c)
{
	if (tx->cts_seen && c->rx_id != tx->rx_id)
		return false;
	/* Grants never cover the first chunk, and stay inside the message
	 * (offset + len cannot wrap: srd_pkt_validate checked it). */
	return c->len && c->offset >= srd_cts_first(ep, tx) &&
	       c->offset + c->len <= tx->total_len;
}

/* CTS: the receiver grants [offset, offset + len). Grants of one transfer
 * are contiguous but may arrive out of order: the end only grows. */
static void srd_cts_handle_cts(struct srd_ep *ep, struct srd_peer *peer,
			       const void *pkt, size_t len)
{
	const struct srd_pkt_ctrl *c = pkt;
	struct srd_tx_entry *tx = srd_tx_by_id(ep, c->tx_id);

	(void)len;
	if (!tx || tx->peer != peer || tx->proto != &srd_proto_cts ||
	    !tx->done_wait) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"CTS for no waiting long send (tx id 0x%x) from qpn "
			"%u: dropped\n", c->tx_id, peer->name.qpn);
		return;
	}
	if (!srd_cts_grant_ok(ep, tx, c)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"CTS from qpn %u: window %llu+%llu (rx id 0x%x) does "
			"not fit message of %llu bytes (rx id 0x%x): dropped\n",
			peer->name.qpn, (unsigned long long)c->offset,
			(unsigned long long)c->len, c->rx_id,
			(unsigned long long)tx->total_len, tx->rx_id);
		return;
	}
	tx->rx_id = c->rx_id;
	tx->cts_seen = true;
	if (c->offset + c->len > tx->granted)
		tx->granted = c->offset + c->len;
	if (tx->err || tx->on_pump || tx->sent >= tx->granted)
		return;
	srd_tx_pump_add(ep, tx);
}

/* READ_DONE of a CTS transfer: the receiver has what it wanted; bytes it
 * did not grant (truncation) will never be sent. */
static void srd_cts_tx_done(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	srd_tx_pump_del(ep, tx);
	tx->sent = tx->total_len;
}

/* ---- receiver ------------------------------------------------------------ */

static int srd_cts_rx_check(const struct srd_ep *ep,
			    const struct srd_msg_info *m)
{
	/* Its first chunk must fit an unexpected entry's data[]. */
	return (m->offset || m->seg_len > m->total_len ||
		m->seg_len > ep->pc.eager_max) ? -FI_EINVAL : 0;
}

static int srd_cts_slot_get(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	struct srd_cts_slot *s;
	uint32_t idx;

	if (!ep->cts_free_top)
		return -FI_ENOMEM;
	idx = ep->cts_free[--ep->cts_free_top];
	s = &ep->cts_slots[idx];
	s->gen++;
	s->x = x;
	x->rx_id = idx | ((uint32_t)s->gen << 16);
	return 0;
}

static void srd_cts_slot_put(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	uint32_t idx = SRD_CTS_ID_IDX(x->rx_id);

	if (idx >= ep->cts_slot_count || ep->cts_slots[idx].x != x)
		return;
	ep->cts_slots[idx].x = NULL;
	ep->cts_free[ep->cts_free_top++] = idx;
}

static struct srd_rx_xfer *srd_cts_rx_by_id(struct srd_ep *ep, uint32_t id)
{
	struct srd_rx_xfer *x;

	if (SRD_CTS_ID_IDX(id) >= ep->cts_slot_count)
		return NULL;
	x = ep->cts_slots[SRD_CTS_ID_IDX(id)].x;
	return x && x->rx_id == id ? x : NULL;
}

/* Everything wanted is in (or the transfer failed): READ_DONE to the
 * sender, complete the receive. -FI_EAGAIN: no packet buffer yet. */
static int srd_cts_finish(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	int ret = 0;

	/* A failed peer gets nothing: a packet would start a handshake. */
	if (x->peer->state == SRD_PEER_READY)
		ret = srd_rx_ctrl_send(ep, x, SRD_PKT_READ_DONE, 0,
				       x->err ? 0 : x->want,
				       x->err ? -x->err : 0);
	if (ret)
		return ret;
	ep->lstat.done++;
	srd_cts_slot_put(ep, x);
	srd_rx_complete_err(ep, &x->dest, &x->m, x->err ? 0 : x->want, x->err,
			    x->prov_errno);
	srd_xfer_free(ep, x);
	return 0;
}

/* Grant more once half the window has landed. -FI_EAGAIN: retry later. */
static int srd_cts_grant(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	uint64_t end;
	int ret;

	if (x->granted >= x->want ||
	    x->granted - x->received > ep->cts_window / 2)
		return 0;
	end = x->want - x->received < ep->cts_window ? x->want :
		x->received + ep->cts_window;
	ret = srd_rx_ctrl_send(ep, x, SRD_PKT_CTS, x->granted,
			       end - x->granted, 0);
	if (ret)
		return ret;
	ep->lstat.cts++;
	x->granted = end;
	return 0;
}

/* Next step of x: grant, or finish. A step that lacks a packet buffer
 * leaves x on the receive pump for the next batch end. */
static enum srd_rx_step srd_cts_rx_step(struct srd_ep *ep,
					struct srd_rx_xfer *x)
{
	bool finish = x->err || x->received >= x->want;
	int ret = finish ? srd_cts_finish(ep, x) : srd_cts_grant(ep, x);

	if (ret == -FI_EAGAIN) {
		srd_rx_pump_add(ep, x);
		return SRD_RX_STEP_STOP;
	}
	if (!finish)
		srd_rx_pump_del(ep, x);
	return SRD_RX_STEP_DONE;
}

/* A matched CTS_RTS (m: its first chunk in payload). */
static void srd_cts_rx_start(struct srd_ep *ep,
			     const struct util_srx_dest *dest,
			     const struct srd_msg_info *m)
{
	struct srd_rx_xfer *x = srd_xfer_get(ep, dest, m);
	uint64_t n;

	if (!x) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"no transfer entry for a long message of %llu bytes\n",
			(unsigned long long)m->total_len);
		srd_rx_complete(ep, dest, m, 0, FI_ENOMEM);
		return;
	}
	x->want = m->total_len < dest->cap ? m->total_len : dest->cap;
	n = m->seg_len < x->want ? m->seg_len : x->want;
	util_iov_copy_to(dest->iov, dest->iov_count, 0, m->payload, n);
	x->received = m->seg_len;
	x->granted = m->seg_len;
	if (x->received < x->want && srd_cts_slot_get(ep, x)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"more than %u long receives in progress: message of "
			"%llu bytes refused\n", ep->cts_slot_count,
			(unsigned long long)m->total_len);
		srd_xfer_fail(x, FI_ENOMEM, 0);
	}
	srd_watch_arm(ep);
	srd_cts_rx_step(ep, x);
}

static bool srd_cts_data_ok(const struct srd_rx_xfer *x,
			    const struct srd_pkt_data *d)
{
	/* Inside what we granted and past the first chunk; no more bytes
	 * than are still outstanding (offset + seg_len cannot wrap:
	 * srd_pkt_validate checked it). */
	return d->offset >= x->m.seg_len && d->offset + d->seg_len <=
	       x->granted && d->seg_len <= x->granted - x->received;
}

static void srd_cts_handle_data(struct srd_ep *ep, struct srd_peer *peer,
				const void *pkt, size_t len)
{
	const struct srd_pkt_data *d = pkt;
	struct srd_rx_xfer *x = srd_cts_rx_by_id(ep, d->rx_id);

	(void)len;
	if (!x || x->peer != peer || x->err) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"DATA for no long receive (rx id 0x%x) from qpn %u: "
			"dropped\n", d->rx_id, peer->name.qpn);
		return;
	}
	if (!srd_cts_data_ok(x, d)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"DATA %llu+%u from qpn %u outside the granted window "
			"(%llu of %llu in, granted to %llu): dropped\n",
			(unsigned long long)d->offset, d->seg_len,
			peer->name.qpn, (unsigned long long)x->received,
			(unsigned long long)x->want,
			(unsigned long long)x->granted);
		return;
	}
	util_iov_copy_to(x->dest.iov, x->dest.iov_count, d->offset, d + 1,
			d->seg_len);
	x->received += d->seg_len;
	if (x->on_pump)
		return;
	srd_cts_rx_step(ep, x);
}

/* ---- peer failure ----------------------------------------------------- */

static void srd_cts_peer_failed(struct srd_ep *ep, struct srd_peer *peer,
				int err, int prov_errno)
{
	struct srd_rx_xfer *x, *tmp;

	srd_tx_fail_peer(ep, peer, &srd_proto_cts, err, prov_errno);
	DL_FOREACH_SAFE(peer->rx_xfers, x, tmp) {
		if (x->proto != &srd_proto_cts)
			continue;
		srd_xfer_fail(x, err, SRD_PROV_ERRNO_PEER_LOST);
		srd_cts_rx_step(ep, x);
	}
}

static const struct srd_proto_pkt srd_cts_pkts[] = {
	{ SRD_PKT_CTS, srd_cts_handle_cts },
	{ SRD_PKT_DATA, srd_cts_handle_data },
	{ 0, NULL },
};

const struct srd_proto srd_proto_cts = {
	.name = "cts",
	.ep_init = srd_cts_ep_init,
	.ep_fini = srd_cts_ep_fini,
	.peer_failed = srd_cts_peer_failed,
	.fits = srd_cts_fits,
	.tx_start = srd_cts_tx_start,
	.tx_step = srd_cts_tx_step,
	.tx_done = srd_cts_tx_done,
	.msg_type = SRD_PKT_CTS_RTS,
	.rx_check = srd_cts_rx_check,
	.rx_start = srd_cts_rx_start,
	.rx_step = srd_cts_rx_step,
	.pkts = srd_cts_pkts,
};
