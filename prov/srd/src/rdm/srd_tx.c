/* SPDX-License-Identifier: MIT */
/*
 * Messages out, whatever the protocol: a send takes a transfer entry (id =
 * index | generation << 16, which peers echo in READ_DONE and CTS), a
 * per-peer msg_id (the receiver matches in msg_id order), and the protocol
 * srd_proto_choose picks (srd_proto.h); the protocol's tx_start sends, its
 * tx_step continues on the send pump what packet buffers held back, and
 * the entry completes once every byte is handed out, every packet sent,
 * and (long protocols) the receiver said it is done.
 */
#include "weft/compat.h"
#include "srd_proto.h"

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

	for (i = 0; ep->tx_entries && i < ep->tx_entry_count; i++) {
		struct srd_tx_entry *tx = &ep->tx_entries[i];

		if (tx->in_use && tx->proto->tx_release)
			tx->proto->tx_release(ep, tx);
	}
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
	tx->rails = 1;
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

void srd_tx_pump_add(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	if (tx->on_pump)
		return;
	DL_APPEND2(ep->tx_pump, tx, pump_prev, pump_next);
	tx->on_pump = true;
}

void srd_tx_pump_del(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	if (!tx->on_pump)
		return;
	DL_DELETE2(ep->tx_pump, tx, pump_prev, pump_next);
	tx->on_pump = false;
}

static void srd_tx_complete(struct srd_ep *ep, struct srd_tx_entry *tx,
			    int err, int prov_errno)
{
	if (tx->proto->tx_release)
		tx->proto->tx_release(ep, tx);
	if (WEFT_UNLIKELY(tx->comp_flags & UTIL_COLL_FLAG)) {
		/* the collective engine's (NULL: an eager one it forgot) */
		util_coll_send_done(&ep->util, tx->context, err);
	} else if (WEFT_UNLIKELY(err)) {
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
		srd_tx_pump_del(ep, tx);
	}
	if (tx->inflight || tx->sent < tx->total_len ||
	    (tx->done_wait && !tx->err))
		return;
	srd_tx_complete(ep, tx, tx->err, tx->prov_errno);
}

void srd_tx_pump(struct srd_ep *ep)
{
	struct srd_tx_entry *tx, *tmp;

	DL_FOREACH_SAFE2(ep->tx_pump, tx, tmp, pump_next) {
		if (!tx->proto->tx_step(ep, tx))
			return;
		srd_tx_pump_del(ep, tx);
	}
}

static void srd_tx_fill(struct srd_ep *ep, struct srd_tx_entry *tx,
			const struct iovec *iov, size_t count, uint64_t tag,
			uint64_t data, void *context, uint64_t flags)
{
	tx->context = context;
	tx->comp_flags = FI_SEND | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG) |
			 (flags & UTIL_COLL_FLAG);
	tx->want_comp = util_ep_tx_wants_comp(&ep->util, flags);
	/* The validator insists: no tag or data unless flagged. */
	tx->tag = (flags & FI_TAGGED) ? tag : 0;
	tx->cq_data = (flags & FI_REMOTE_CQ_DATA) ? (uint32_t)data : 0;
	tx->pkt_flags = ((flags & FI_TAGGED) ? SRD_PKT_F_TAGGED : 0) |
			((flags & FI_REMOTE_CQ_DATA) ? SRD_PKT_F_CQ_DATA : 0) |
			((flags & UTIL_COLL_FLAG) ? SRD_PKT_F_COLL : 0);
	tx->iov_count = count;
	/* A message may come with no iov array at all (Open MPI's MPI_Ssend
	 * acknowledgement), and memcpy from NULL is undefined even for 0. */
	if (count)
		memcpy(tx->iov, iov, count * sizeof(*iov));
	tx->total_len = util_iov_total(iov, count);
	tx->proto = srd_proto_choose(ep, tx->peer, tx->total_len);
}

static int srd_send_check(struct srd_ep *ep, const struct iovec *iov,
			  size_t count, uint64_t flags)
{
	size_t len;

	if (WEFT_UNLIKELY(count > ep->pc.tx_iov_limit || (count && !iov))) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"send with %zu iovs (iov_limit %zu)\n", count,
			ep->pc.tx_iov_limit);
		return -FI_EINVAL;
	}
	/* A NULL buffer would be read later, in progress, for medium and
	 * long messages; one buffer (the fast path) is checked inline. */
	if (WEFT_LIKELY(count == 1)) {
		len = iov[0].iov_len;
		if (WEFT_UNLIKELY(!iov[0].iov_base && len)) {
			FI_WARN(&srd_prov, FI_LOG_EP_DATA,
				"send of %zu bytes from NULL\n", len);
			return -FI_EINVAL;
		}
	} else if (WEFT_UNLIKELY(util_iov_check(&srd_prov, "send", iov, count,
						&len))) {
		return -FI_EINVAL;
	}
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

/* A peer of this host with shm at both ends: shm carries the message,
 * the entry completes from shm's CQ (srd_shm.c). No msg_id: the peer
 * reorders nothing that comes through shm. */
static ssize_t __attribute__((noinline))
srd_send_shm(struct srd_ep *ep, fi_addr_t shm_addr, const struct iovec *iov,
	     size_t count, uint64_t tag, uint64_t data, void *context,
	     uint64_t flags)
{
	struct srd_tx_entry *tx = srd_tx_get(ep);
	ssize_t ret;

	if (WEFT_UNLIKELY(!tx))
		return -FI_EAGAIN;
	tx->peer = NULL;
	tx->shm_bounce = NULL;
	tx->context = context;
	tx->comp_flags = FI_SEND | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	tx->want_comp = util_ep_tx_wants_comp(&ep->util, flags);
	tx->tag = (flags & FI_TAGGED) ? tag : 0;
	tx->cq_data = (flags & FI_REMOTE_CQ_DATA) ? (uint32_t)data : 0;
	tx->pkt_flags = 0;
	tx->iov_count = count;
	if (count)
		memcpy(tx->iov, iov, count * sizeof(*iov));
	tx->total_len = util_iov_total(iov, count);
	tx->sent = tx->total_len;
	tx->proto = &srd_proto_shm;
	ret = srd_shm_post(ep, tx, shm_addr, flags);
	if (WEFT_UNLIKELY(ret)) {
		tx->proto->tx_release(ep, tx);
		srd_tx_put(ep, tx);
	}
	return ret;
}

static ssize_t srd_send_locked(struct srd_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t dest,
			       uint64_t tag, uint64_t data, void *context,
			       uint64_t flags)
{
	struct srd_tx_entry *tx;
	struct srd_peer *peer;
	fi_addr_t shm_addr = srd_shm_addr(ep, dest);
	int ret;

	if (WEFT_UNLIKELY(shm_addr != FI_ADDR_NOTAVAIL) &&
	    !(flags & UTIL_COLL_FLAG))
		return srd_send_shm(ep, shm_addr, iov, count, tag, data,
				    context, flags);
	ret = srd_peer_get(ep, dest, &peer);
	if (WEFT_UNLIKELY(ret))
		return ret;
	tx = srd_tx_get(ep);
	if (WEFT_UNLIKELY(!tx))
		return -FI_EAGAIN;
	tx->peer = peer;
	srd_tx_fill(ep, tx, iov, count, tag, data, context, flags);
	tx->msg_id = peer->next_msg_id;
	ret = tx->proto->tx_start(ep, tx, desc);
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

/* READ_DONE: the receiver of a long message has what it wanted (all of
 * it, or what fit its buffer). */
void srd_tx_handle_done(struct srd_ep *ep, struct srd_peer *peer,
			const void *pkt, size_t len)
{
	const struct srd_pkt_ctrl *c = pkt;
	struct srd_tx_entry *tx;

	if (len < sizeof(*c))
		return;
	tx = srd_tx_by_id(ep, c->tx_id);
	/* Only the long protocols' sends wait for it. */
	if (!tx || tx->peer != peer || !tx->done_wait) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"READ_DONE for no long send (tx id 0x%x) from qpn %u\n",
			c->tx_id, peer->name.qpn);
		return;
	}
	tx->done_wait = false;
	if (tx->proto->tx_done)
		tx->proto->tx_done(ep, tx);
	if (c->status < 0 && c->status > -FI_ERRNO_MAX && !tx->err)
		tx->err = -c->status;
	srd_tx_try_complete(ep, tx);
}

void srd_tx_fail_peer(struct srd_ep *ep, struct srd_peer *peer,
		      const struct srd_proto *proto, int err, int prov_errno)
{
	uint32_t i;

	for (i = 0; i < ep->tx_entry_count; i++) {
		struct srd_tx_entry *tx = &ep->tx_entries[i];

		if (!tx->in_use || tx->peer != peer || tx->proto != proto ||
		    (tx->sent >= tx->total_len && !tx->done_wait))
			continue;
		tx->done_wait = false;
		if (!tx->err) {
			tx->err = err;
			tx->prov_errno = prov_errno;
		}
		srd_tx_try_complete(ep, tx);
	}
}

/* The collective engine's send (util_coll_xport.send, ep->lock held). The
 * eager and ring protocols copy the message into its packet at tx_start,
 * so the engine's buffer is free at once (1) and the entry completes
 * without telling it; other protocols read the buffer later and complete
 * through util_coll_send_done (0). */
ssize_t srd_coll_send(struct srd_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag, void *ctx)
{
	struct srd_tx_entry *tx;
	struct srd_peer *peer;
	int ret;

	ret = srd_send_check(ep, iov, count, 0);
	if (ret)
		return ret;
	ret = srd_peer_get(ep, dest, &peer);
	if (ret)
		return ret;
	tx = srd_tx_get(ep);
	if (!tx)
		return -FI_EAGAIN;
	tx->peer = peer;
	srd_tx_fill(ep, tx, iov, count, tag, 0, ctx,
		    FI_TAGGED | UTIL_COLL_FLAG);
	if (tx->proto == &srd_proto_eager || tx->proto == &srd_proto_ring)
		tx->context = NULL;
	tx->msg_id = peer->next_msg_id;
	ret = tx->proto->tx_start(ep, tx, NULL);
	if (ret) {
		srd_tx_put(ep, tx);
		return ret;
	}
	peer->next_msg_id++;
	return tx->context ? 0 : 1;
}
