/* SPDX-License-Identifier: MIT */
/*
 * Messages out. A send takes a transfer entry (id = index | generation <<
 * 16, which peers echo in READ_DONE), a per-peer msg_id (the receiver
 * matches in msg_id order), and by size one protocol: EAGER (one packet),
 * MEDIUM (segments of at most eager_max, packetised as packet buffers
 * allow, the rest by the progress pump), LONG (srd_long.c: RDMA read by
 * the receiver, when both ends can) or CTS (srd_cts_tx.c: receiver-granted
 * credits, everywhere else).
 */
#include "weft/compat.h"
#include "srd_rdm.h"

#include <stdlib.h>
#include <string.h>

#define SRD_TX_ID_IDX(id) ((id) & 0xffffu)

int srd_tx_init(struct srd_ep *ep)
{
	uint32_t i;

	ep->tx_entry_count = SRD_TX_ENTRIES_MAX;
	ep->tx_entries = calloc(ep->tx_entry_count, sizeof(*ep->tx_entries));
	ep->tx_free_ids = calloc(ep->tx_entry_count, sizeof(uint32_t));
	if (!ep->tx_entries || !ep->tx_free_ids)
		return -FI_ENOMEM;
	for (i = 0; i < ep->tx_entry_count; i++) {
		ep->tx_entries[i].id = ep->tx_entry_count - 1 - i;
		ep->tx_free_ids[i] = ep->tx_entry_count - 1 - i;
	}
	ep->tx_free_top = ep->tx_entry_count;
	return 0;
}

void srd_tx_fini(struct srd_ep *ep)
{
	uint32_t i;

	for (i = 0; ep->tx_entries && i < ep->tx_entry_count; i++)
		if (ep->tx_entries[i].in_use)
			srd_long_tx_release(ep, &ep->tx_entries[i]);
	free(ep->tx_entries);
	free(ep->tx_free_ids);
	ep->tx_entries = NULL;
	ep->tx_free_ids = NULL;
}

static struct srd_tx_entry *srd_tx_get(struct srd_ep *ep)
{
	struct srd_tx_entry *tx;
	uint32_t idx;

	if (WEFT_UNLIKELY(!ep->tx_free_top))
		return NULL;
	idx = ep->tx_free_ids[--ep->tx_free_top];
	tx = &ep->tx_entries[idx];
	/* A new generation: READ_DONEs for the previous user are refused. */
	tx->id = idx | (((tx->id >> 16) + 1) << 16);
	tx->in_use = true;
	tx->sent = 0;
	tx->inflight = 0;
	tx->err = 0;
	tx->prov_errno = 0;
	tx->done_wait = false;
	memset(tx->mr, 0, sizeof(tx->mr));
	return tx;
}

static void srd_tx_put(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	tx->in_use = false;
	ep->tx_free_ids[ep->tx_free_top++] = SRD_TX_ID_IDX(tx->id);
}

struct srd_tx_entry *srd_tx_by_id(struct srd_ep *ep, uint32_t id)
{
	struct srd_tx_entry *tx;

	if (SRD_TX_ID_IDX(id) >= ep->tx_entry_count)
		return NULL;
	tx = &ep->tx_entries[SRD_TX_ID_IDX(id)];
	return tx->in_use && tx->id == id ? tx : NULL;
}

void srd_tx_complete(struct srd_ep *ep, struct srd_tx_entry *tx, int err,
		     int prov_errno)
{
	if (tx->proto == SRD_TX_LONG)
		srd_long_tx_release(ep, tx);
	if (WEFT_UNLIKELY(err)) {
		srd_ep_tx_err(ep, tx->peer, tx->context, tx->comp_flags, err,
			      prov_errno, tx->total_len);
		util_ep_cntr_inc_err(&ep->util, UTIL_CNTR_SEND);
	} else {
		if (tx->want_comp)
			util_ep_tx_comp(&ep->util, tx->context, tx->comp_flags,
					tx->total_len, NULL, 0, 0);
		util_ep_cntr_inc(&ep->util, UTIL_CNTR_SEND);
	}
	srd_tx_put(ep, tx);
}

/* Complete tx once every byte is handed out, every packet sent, and
 * (long) the receiver said it read everything. */
void srd_tx_try_complete(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	if (tx->err && tx->sent < tx->total_len) {
		/* Stop packetising a failed message (a CTS send waiting for
		 * a grant is not on the pump). */
		tx->sent = tx->total_len;
		if (tx->on_pump)
			DL_DELETE2(ep->tx_pump, tx, pump_prev, pump_next);
		tx->on_pump = false;
	}
	if (tx->inflight || tx->sent < tx->total_len ||
	    (tx->done_wait && !tx->err))
		return;
	srd_tx_complete(ep, tx, tx->err, tx->prov_errno);
}

/* The message header every segment and RTS of tx carries. */
void srd_msg_hdr_fill(struct srd_tx_entry *tx, struct srd_pkt_msg *h,
		      uint8_t type, uint64_t off, uint32_t seg)
{
	srd_pkt_base_init(&h->base, type, tx->pkt_flags, SRD_PEER_ID_NONE);
	h->msg_id = tx->msg_id;
	h->tx_id = tx->id;
	h->tag = tx->tag;
	h->total_len = tx->total_len;
	h->offset = off;
	h->cq_data = tx->cq_data;
	h->seg_len = seg;
}

/* One segment of tx into tb, and off it goes. */
static void srd_tx_segment(struct srd_ep *ep, struct srd_tx_entry *tx,
			   struct srd_txbuf *tb, uint8_t type)
{
	struct srd_pkt_msg *h = (struct srd_pkt_msg *)tb->data;
	uint64_t left = tx->total_len - tx->sent;
	uint32_t seg = left < ep->pc.eager_max ? (uint32_t)left :
						 (uint32_t)ep->pc.eager_max;

	srd_msg_hdr_fill(tx, h, type, tx->sent, seg);
	util_iov_copy_from(tx->iov, tx->iov_count, tx->sent, h + 1, seg);
	tx->sent += seg;
	tx->inflight++;
	tb->tx = tx;
	srd_pkt_send(ep, tx->peer, tb, sizeof(*h) + seg);
}

void srd_tx_pump(struct srd_ep *ep)
{
	struct srd_tx_entry *tx, *tmp;
	struct srd_txbuf *tb;

	DL_FOREACH_SAFE2(ep->tx_pump, tx, tmp, pump_next) {
		if (tx->proto == SRD_TX_CTS) {
			if (!srd_cts_tx_step(ep, tx))
				return;
			DL_DELETE2(ep->tx_pump, tx, pump_prev, pump_next);
			tx->on_pump = false;
			continue;
		}
		while (tx->sent < tx->total_len) {
			tb = srd_txbuf_get(ep);
			if (!tb)
				return;
			srd_tx_segment(ep, tx, tb, SRD_PKT_MEDIUM);
		}
		DL_DELETE2(ep->tx_pump, tx, pump_prev, pump_next);
		tx->on_pump = false;
	}
}

static int srd_tx_start(struct srd_ep *ep, struct srd_tx_entry *tx,
			void **desc)
{
	struct srd_txbuf *tb;

	if (tx->proto == SRD_TX_LONG)
		return srd_long_send_start(ep, tx, desc);
	if (tx->proto == SRD_TX_CTS)
		return srd_cts_send_start(ep, tx);
	if (tx->proto == SRD_TX_MEDIUM) {
		DL_APPEND2(ep->tx_pump, tx, pump_prev, pump_next);
		tx->on_pump = true;
		srd_tx_pump(ep);
		return 0;
	}
	tb = srd_txbuf_get(ep);
	if (WEFT_UNLIKELY(!tb))
		return -FI_EAGAIN;
	srd_tx_segment(ep, tx, tb, SRD_PKT_EAGER);
	return 0;
}

/* RDMA read needs both ends: we read from a sender that announced it may
 * be read from. Before the handshake the peer's features are unknown, so
 * a first long message to a peer goes by credits, which always work. */
static bool srd_tx_read_ok(const struct srd_ep *ep,
			   const struct srd_peer *peer)
{
	return ep->long_read && peer->state == SRD_PEER_READY &&
	       (peer->features & SRD_FEAT_RDMA_READ);
}

static uint8_t srd_tx_proto_pick(const struct srd_ep *ep,
				 const struct srd_peer *peer, uint64_t len)
{
	if (len <= ep->pc.eager_max)
		return SRD_TX_EAGER;
	if (srd_tx_read_ok(ep, peer))
		return len <= ep->medium_max ? SRD_TX_MEDIUM : SRD_TX_LONG;
	return len <= ep->cts_threshold ? SRD_TX_MEDIUM : SRD_TX_CTS;
}

static void srd_tx_fill(struct srd_ep *ep, struct srd_tx_entry *tx,
			const struct iovec *iov, size_t count, uint64_t tag,
			uint64_t data, void *context, uint64_t flags)
{
	tx->context = context;
	tx->comp_flags = FI_SEND | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	tx->want_comp = util_ep_tx_wants_comp(&ep->util, flags);
	/* The validator insists: no tag or data unless flagged. */
	tx->tag = (flags & FI_TAGGED) ? tag : 0;
	tx->cq_data = (flags & FI_REMOTE_CQ_DATA) ? (uint32_t)data : 0;
	tx->pkt_flags = ((flags & FI_TAGGED) ? SRD_PKT_F_TAGGED : 0) |
			((flags & FI_REMOTE_CQ_DATA) ? SRD_PKT_F_CQ_DATA : 0);
	tx->iov_count = count;
	/* A message may come with no iov array at all (Open MPI's MPI_Ssend
	 * acknowledgement), and memcpy from NULL is undefined even for 0. */
	if (count)
		memcpy(tx->iov, iov, count * sizeof(*iov));
	tx->total_len = util_iov_total(iov, count);
	tx->proto = srd_tx_proto_pick(ep, tx->peer, tx->total_len);
}

static int srd_send_check(struct srd_ep *ep, const struct iovec *iov,
			  size_t count, uint64_t flags)
{
	size_t len;

	if (WEFT_UNLIKELY(count > SRD_IOV_MAX || (count && !iov))) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"send with %zu iovs (max %d)\n", count, SRD_IOV_MAX);
		return -FI_EINVAL;
	}
	len = util_iov_total(iov, count);
	if (WEFT_UNLIKELY(len > ep->pc.max_msg_size ||
			  ((flags & FI_INJECT) && len > ep->pc.inject_size))) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"send of %zu bytes exceeds the %s size %zu\n", len,
			(flags & FI_INJECT) ? "inject" : "message",
			(flags & FI_INJECT) ? ep->pc.inject_size :
					      ep->pc.max_msg_size);
		return -FI_EINVAL;
	}
	return 0;
}

static ssize_t srd_send_locked(struct srd_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t dest,
			       uint64_t tag, uint64_t data, void *context,
			       uint64_t flags)
{
	struct srd_tx_entry *tx;
	struct srd_peer *peer;
	int ret;

	ret = srd_peer_get(ep, dest, &peer);
	if (WEFT_UNLIKELY(ret))
		return ret;
	tx = srd_tx_get(ep);
	if (WEFT_UNLIKELY(!tx))
		return -FI_EAGAIN;
	tx->peer = peer;
	srd_tx_fill(ep, tx, iov, count, tag, data, context, flags);
	tx->msg_id = peer->next_msg_id;
	ret = srd_tx_start(ep, tx, desc);
	if (WEFT_UNLIKELY(ret)) {
		srd_tx_put(ep, tx);
		return ret;
	}
	peer->next_msg_id++;
	return 0;
}

ssize_t srd_send_post(struct srd_ep *ep, const struct iovec *iov,
		      void **desc, size_t count, fi_addr_t dest, uint64_t tag,
		      uint64_t data, void *context, uint64_t flags)
{
	ssize_t ret = srd_send_check(ep, iov, count, flags);

	if (WEFT_UNLIKELY(ret))
		return ret;
	util_lock_acquire(&ep->util.lock);
	ret = srd_send_locked(ep, iov, desc, count, dest, tag, data, context,
			      flags);
	util_lock_release(&ep->util.lock);
	return ret;
}
