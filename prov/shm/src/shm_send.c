/* SPDX-License-Identifier: MIT */
/*
 * Sending messages (untagged and tagged): inline in one cell up to the
 * peer's cell payload, otherwise a rendezvous (RTS) describing the sender's
 * buffers, which the receiver pulls into the matched buffer (CMA) or drains
 * from our bounce segments, then ACKs.
 */
#include "weft/compat.h"

#include <string.h>

#include "shm.h"

static inline uint64_t shm_send_comp_flags(uint64_t flags)
{
	return FI_SEND | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
}

static inline uint16_t shm_send_cell_flags(uint64_t flags)
{
	return SHM_F_VER | ((flags & FI_TAGGED) ? SHM_F_TAGGED : 0) |
	       ((flags & FI_REMOTE_CQ_DATA) ? SHM_F_CQ_DATA : 0);
}

/* Only the fi_inject calls go without a completion, and they do not come
 * here (shm_inject_post): FI_INJECT as a flag completes as usual. */
static inline bool shm_send_wants_comp(struct shm_ep *ep, uint64_t flags)
{
	return util_ep_tx_wants_comp(&ep->util, flags);
}

/* The payload beyond the cell's first line. The receiver polls the first
 * line (sequence word) the whole time, so every store to it costs a
 * transfer of the line: filling the rest of the cell first and the first
 * line last (header, first payload bytes, then the sequence word right
 * after) takes that line once, not twice or more. */
static inline void shm_send_inline_payload(struct shm_cell *cell,
					   const struct iovec *iov,
					   size_t count, size_t len)
{
	size_t rest = len > SHM_CELL_LINE0_PAYLOAD ?
			      len - SHM_CELL_LINE0_PAYLOAD : 0;

	if (len <= SHM_PREFETCHW_MAX)
		shm_cell_prefetchw(cell, len);
	if (!rest)
		return;
	if (WEFT_LIKELY(count == 1))
		shm_cell_copy_in(cell->payload + SHM_CELL_LINE0_PAYLOAD,
				 (const uint8_t *)iov[0].iov_base +
					 SHM_CELL_LINE0_PAYLOAD,
				 rest);
	else
		util_iov_copy_from(iov, count, SHM_CELL_LINE0_PAYLOAD,
				  cell->payload + SHM_CELL_LINE0_PAYLOAD, rest);
}

/* Fill a reserved cell with an inline SEND (cell flags cflags) and
 * publish it. */
static inline __attribute__((always_inline)) void
shm_send_fill_inline(struct shm_conn *conn, struct shm_cell *cell,
		     const struct iovec *iov, size_t count, size_t len,
		     uint64_t tag, uint64_t data, uint16_t cflags)
{
	shm_send_inline_payload(cell, iov, count, len);
	cell->hdr.op = SHM_OP_SEND;
	cell->hdr.flags = cflags;
	cell->hdr.len = (uint32_t)len;
	cell->hdr.proto = 0;
	cell->hdr.tag = tag;
	cell->hdr.data = data;
	cell->hdr.cookie = 0;
	if (WEFT_LIKELY(count == 1))
		shm_copy_small(cell->payload, iov[0].iov_base,
				       len < SHM_CELL_LINE0_PAYLOAD ?
					       len : SHM_CELL_LINE0_PAYLOAD);
	else
		util_iov_copy_from(iov, count, 0, cell->payload,
				  len < SHM_CELL_LINE0_PAYLOAD ?
					  len : SHM_CELL_LINE0_PAYLOAD);
	shm_peer_commit(conn->peer, cell);
}

static ssize_t shm_send_inline(struct shm_ep *ep, struct shm_conn *conn,
			       const struct iovec *iov, size_t count,
			       size_t len, uint64_t tag, uint64_t data,
			       void *context, uint64_t flags)
{
	bool comp = shm_send_wants_comp(ep, flags);
	struct shm_cell *cell;

	if (comp && WEFT_UNLIKELY(!util_cq_space(ep->util.tx_cq)))
		return -FI_EAGAIN;
	cell = shm_peer_reserve(conn->peer);
	if (WEFT_UNLIKELY(!cell))
		return shm_conn_full(ep, conn);
	shm_send_fill_inline(conn, cell, iov, count, len, tag, data,
			     shm_send_cell_flags(flags));

	if (comp)
		util_ep_tx_comp(&ep->util, context, shm_send_comp_flags(flags),
				0, NULL, 0, 0);
	util_ep_cntr_inc(&ep->util, UTIL_CNTR_SEND);
	return 0;
}

static void shm_send_fill_rts(struct shm_ep *ep, struct shm_conn *conn,
			      struct shm_tx_entry *tx, struct shm_cell *cell,
			      const struct iovec *iov, size_t count, size_t len)
{
	struct shm_rts *rts = (struct shm_rts *)cell->payload;
	size_t i;

	rts->total = len;
	rts->iov_cnt = (uint32_t)count;
	rts->pad = 0;
	for (i = 0; i < count; i++) {
		rts->iov[i].addr = (uintptr_t)iov[i].iov_base;
		rts->iov[i].len = iov[i].iov_len;
		tx->iov[i] = iov[i];
	}
	tx->iov_cnt = count;
	if (shm_peer_cma(conn->peer)) {
		rts->xfer_id = 0;
		cell->hdr.proto = SHM_COPY_CMA;
		tx->split_ok = true;
		return;
	}
	rts->xfer_id = shm_tx_bounce_push(ep, tx, count, len);
	cell->hdr.proto = SHM_COPY_BOUNCE;
}

/* flags: op flags (UTIL_COLL_FLAG for the collective engine's), cflags:
 * the cell's. */
static ssize_t shm_send_rts(struct shm_ep *ep, struct shm_conn *conn,
			    const struct iovec *iov, size_t count, size_t len,
			    uint64_t tag, uint64_t data, void *context,
			    uint64_t flags, uint16_t cflags)
{
	struct shm_tx_entry *tx;
	struct shm_cell *cell;

	if (flags & FI_INJECT) {
		/* The receiver would pull from a buffer the caller may
		 * already have reused. */
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"FI_INJECT with FI_DELIVERY_COMPLETE unsupported\n");
		return -FI_EINVAL;
	}
	tx = shm_tx_get(ep, conn);
	if (!tx)
		return -FI_EAGAIN;
	cell = shm_peer_reserve(conn->peer);
	if (!cell) {
		shm_tx_put(ep, tx);
		return shm_conn_full(ep, conn);
	}
	cell->hdr.op = SHM_OP_RTS;
	cell->hdr.flags = cflags;
	cell->hdr.len = (uint32_t)(sizeof(struct shm_rts) +
				   count * sizeof(struct shm_iov));
	cell->hdr.tag = tag;
	cell->hdr.data = data;
	cell->hdr.cookie = shm_tx_cookie(tx);
	shm_send_fill_rts(ep, conn, tx, cell, iov, count, len);
	shm_peer_commit(conn->peer, cell);

	tx->context = context;
	tx->comp_flags = shm_send_comp_flags(flags) | (flags & UTIL_COLL_FLAG);
	tx->len = len;
	tx->cntr = UTIL_CNTR_SEND;
	tx->want_comp = shm_send_wants_comp(ep, flags);
	shm_tx_activate(ep, tx);
	return 0;
}

static ssize_t __attribute__((noinline, cold)) shm_send_null_buf(size_t len)
{
	FI_WARN(&shm_prov, FI_LOG_EP_DATA, "send of %zu bytes from NULL\n",
		len);
	return -FI_EINVAL;
}

ssize_t shm_send_post(struct shm_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag,
		      uint64_t data, void *context, uint64_t flags)
{
	struct shm_conn *conn;
	size_t len;
	ssize_t ret;

	if (WEFT_UNLIKELY(count > SHM_IOV_LIMIT || (count && !iov))) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA, "bad iov count %zu\n", count);
		return -FI_EINVAL;
	}
	if (WEFT_LIKELY(count == 1)) {
		len = iov[0].iov_len;
		/* Branch on the buffer first: the length test is off the
		 * fast path then. */
		if (WEFT_UNLIKELY(!iov[0].iov_base) && len)
			return shm_send_null_buf(len);
	} else if (WEFT_UNLIKELY(util_iov_check(&shm_prov, "send", iov, count,
						&len))) {
		return -FI_EINVAL;
	}
	if (WEFT_UNLIKELY((flags & FI_INJECT) && len > ep->util.inject_size)) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"FI_INJECT send of %zu bytes exceeds inject_size %zu\n",
			len, ep->util.inject_size);
		return -FI_EINVAL;
	}

	util_lock_acquire(&ep->util.lock);
	ret = shm_conn_tx(ep, dest, &conn);
	if (WEFT_UNLIKELY(ret))
		goto unlock;
	if (WEFT_LIKELY(len <= shm_peer_payload_max(conn->peer) &&
			!(flags & FI_DELIVERY_COMPLETE)))
		ret = shm_send_inline(ep, conn, iov, count, len, tag, data,
				      context, flags);
	else
		ret = shm_send_rts(ep, conn, iov, count, len, tag, data,
				   context, flags, shm_send_cell_flags(flags));
unlock:
	util_lock_release(&ep->util.lock);
	return ret;
}

/* fi_inject and its variants: one buffer, no completion, and always
 * inline (inject_size is the inline payload). Everything shm_send_post
 * checks for iovecs, completions and protocols is settled by the call
 * itself; on the test VM this path is ~60 instructions shorter, and each
 * instruction saved is latency, since the reply's fi_inject sits on every
 * round trip's critical path. */
ssize_t shm_inject_post(struct shm_ep *ep, const void *buf, size_t len,
			fi_addr_t dest, uint64_t tag, uint64_t data,
			uint64_t flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct shm_conn *conn;
	struct shm_cell *cell;
	ssize_t ret;

	if (WEFT_UNLIKELY(!buf && len)) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA, "inject of %zu bytes from NULL\n",
			len);
		return -FI_EINVAL;
	}
	util_lock_acquire(&ep->util.lock);
	ret = shm_conn_tx(ep, dest, &conn);
	if (WEFT_UNLIKELY(ret))
		goto unlock;
	if (WEFT_UNLIKELY(len > ep->util.inject_size ||
			  len > shm_peer_payload_max(conn->peer))) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"inject of %zu bytes exceeds inject_size %zu\n", len,
			ep->util.inject_size);
		ret = -FI_EINVAL;
		goto unlock;
	}
	cell = shm_peer_reserve(conn->peer);
	if (WEFT_UNLIKELY(!cell)) {
		ret = shm_conn_full(ep, conn);
		goto unlock;
	}
	shm_send_fill_inline(conn, cell, &iov, 1, len, tag, data,
			     shm_send_cell_flags(flags));
	util_ep_cntr_inc(&ep->util, UTIL_CNTR_SEND);
unlock:
	util_lock_release(&ep->util.lock);
	return ret;
}

/* The collective engine's send (util_coll_xport.send, ep->lock held):
 * inline when it fits a cell (copied out: 1), else an RTS whose ACK
 * completes it through util_coll_send_done (0). */
ssize_t shm_coll_send(struct shm_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag, void *ctx)
{
	uint16_t cflags = SHM_F_VER | SHM_F_COLL;
	size_t len = util_iov_total(iov, count);
	struct shm_conn *conn;
	struct shm_cell *cell;
	ssize_t ret;

	ret = shm_conn_tx(ep, dest, &conn);
	if (ret)
		return ret;
	if (len > shm_peer_payload_max(conn->peer))
		return shm_send_rts(ep, conn, iov, count, len, tag, 0, ctx,
				    FI_TAGGED | UTIL_COLL_FLAG, cflags);
	cell = shm_peer_reserve(conn->peer);
	if (!cell)
		return shm_conn_full(ep, conn);
	shm_send_fill_inline(conn, cell, iov, count, len, tag, 0, cflags);
	return 1;
}
