/* SPDX-License-Identifier: MIT */
/*
 * Long messages by receiver-granted credits, sender side. Used where RDMA
 * read is not available at both ends: the sender announces the message
 * with CTS_RTS (header + the first bytes, at most eager_max), then sends
 * DATA packets only inside the windows the receiver grants with CTS, and
 * completes when the receiver's READ_DONE says it took what it wanted
 * (all of it, or what fit: truncation ends the transfer early).
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
 */
#include "weft/compat.h"
#include "../srd_rdm.h"

#include <string.h>

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

int srd_cts_send_start(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	struct srd_txbuf *tb = srd_txbuf_get(ep);
	struct srd_pkt_msg *h;
	uint32_t first;

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
	srd_long_watch_arm(ep);
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
bool srd_cts_tx_step(struct srd_ep *ep, struct srd_tx_entry *tx)
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
void srd_cts_handle_cts(struct srd_ep *ep, struct srd_peer *peer,
			const void *pkt, size_t len)
{
	const struct srd_pkt_ctrl *c = pkt;
	struct srd_tx_entry *tx = srd_tx_by_id(ep, c->tx_id);

	(void)len;
	if (!tx || tx->peer != peer || tx->proto != SRD_TX_CTS ||
	    !tx->done_wait) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"CTS for no waiting long send (tx id 0x%x) from qpn "
			"%u: dropped\n", c->tx_id, peer->name.qpn);
		return;
	}
	if (!srd_cts_grant_ok(ep, tx, c)) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
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
	DL_APPEND2(ep->tx_pump, tx, pump_prev, pump_next);
	tx->on_pump = true;
}

/* READ_DONE of a CTS transfer: the receiver has what it wanted; bytes it
 * did not grant (truncation) will never be sent. */
void srd_cts_tx_done(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	if (tx->on_pump) {
		DL_DELETE2(ep->tx_pump, tx, pump_prev, pump_next);
		tx->on_pump = false;
	}
	tx->sent = tx->total_len;
}
