/* SPDX-License-Identifier: MIT */
/*
 * Manual progress of one endpoint: drain the inbound queue in order (the
 * order peers committed their cells, which is what FI_ORDER_SAS and the
 * RMA orders rest on), then push/pull bounce transfers and look at
 * deadlines. A cell that cannot be handled yet (its reply cannot be
 * reserved, no room for an unexpected message) is held and retried first,
 * so later cells never overtake it.
 */
#include "weft/compat.h"

#include "shm.h"

/* Held-cell retries between liveness checks of the peer blocking it. */
#define SHM_HELD_CHECK_MASK 0xfffu

/* Cells other than messages, out of line: the message path keeps no
 * state across its handler call (it is a tail call). */
static int __attribute__((noinline))
shm_cell_handle_ctrl(struct shm_ep *ep, struct shm_conn *conn,
		     struct shm_cell *cell, const struct shm_cell_hdr *hdr)
{
	switch (hdr->op) {
	case SHM_OP_ACK:
		shm_tx_handle_ack(ep, conn, hdr, cell->payload);
		return shm_cell_done(conn, 0);
	case SHM_OP_WRITE:
	case SHM_OP_READ:
		return shm_cell_done(conn, shm_rma_handle(ep, conn, hdr,
							  cell->payload));
	case SHM_OP_ATOMIC:
		return shm_cell_done(conn, shm_atomic_handle(ep, conn, hdr,
							     cell->payload));
	case SHM_OP_CTS:
		shm_split_handle_cts(ep, conn, hdr, cell->payload);
		return shm_cell_done(conn, 0);
	case SHM_OP_PUSHED:
		shm_split_handle_pushed(ep, conn, hdr);
		return shm_cell_done(conn, 0);
	default:
		return shm_cell_done(conn, 0);
	}
}

/* 0 (consumed), SHM_CELL_KEPT or -FI_EAGAIN (shm.h). Every handler
 * gives a consumed cell's credit back to its sender (shm_cell_done, and
 * the message path its own way). */
static int shm_cell_handle(struct shm_ep *ep, struct shm_cell *cell,
			   const struct shm_cell_hdr *hdr)
{
	struct shm_conn *conn;

	/* Not ours to answer or credit: a sender of another version, or
	 * one we cannot name. */
	if (WEFT_UNLIKELY((hdr->flags & SHM_F_VER_MASK) != SHM_F_VER))
		return 0;
	conn = shm_conn_by_src(ep, hdr);
	if (WEFT_UNLIKELY(!conn))
		return 0;
	if (WEFT_LIKELY(hdr->op == SHM_OP_SEND || hdr->op == SHM_OP_RTS))
		return shm_rx_handle_msg(ep, conn, hdr, cell->payload);
	return shm_cell_handle_ctrl(ep, conn, cell, hdr);
}

/* 0 when the held cell is gone (handled or dropped). */
static int shm_held_retry(struct shm_ep *ep)
{
	struct shm_conn *conn;
	int ret = shm_cell_handle(ep, ep->held, &ep->held_hdr);

	if (ret == -FI_EAGAIN) {
		if (ep->progress_calls & SHM_HELD_CHECK_MASK)
			return -FI_EAGAIN;
		conn = shm_conn_by_src(ep, &ep->held_hdr);
		if (!conn || shm_conn_check(ep, conn))
			return -FI_EAGAIN;
	}
	shm_queue_release(ep->region);
	ep->held = NULL;
	return 0;
}

static void shm_queue_drain(struct shm_ep *ep)
{
	struct shm_cell_hdr hdr;
	struct shm_cell *cell;
	int i;

	if (WEFT_UNLIKELY(ep->held) && shm_held_retry(ep))
		return;
	for (i = 0; i < SHM_PROGRESS_BATCH; i++) {
		cell = shm_queue_poll(ep->region, &hdr);
		if (!cell)
			return;
		if (WEFT_UNLIKELY(shm_cell_handle(ep, cell, &hdr) ==
				  -FI_EAGAIN)) {
			ep->held = cell;
			ep->held_hdr = hdr;
			return;
		}
		ep->rel_pending++;
	}
}

/* Handled cells go back to the producers at the next progress call, all
 * at once: one store of the release counter for the whole batch. */
static inline void shm_queue_release_pending(struct shm_ep *ep)
{
	if (ep->rel_pending) {
		shm_queue_release_n(ep->region, ep->rel_pending);
		ep->rel_pending = 0;
	}
}

void shm_ep_progress_locked(struct shm_ep *ep)
{
	ep->progress_calls++;
	shm_queue_release_pending(ep);
	if (WEFT_UNLIKELY(ep->acks != NULL))
		shm_ack_flush(ep);
	shm_queue_drain(ep);
	if (WEFT_UNLIKELY(ep->tx_active != NULL))
		shm_tx_progress(ep);
	if (WEFT_UNLIKELY(ep->pulls != NULL))
		shm_rx_progress(ep);
	if (WEFT_UNLIKELY(ep->rma_xfers != NULL))
		shm_rma_bounce_progress(ep);
	shm_conn_sweep_check(ep);
	if (WEFT_UNLIKELY(util_coll_busy(&ep->util)))
		util_coll_progress(&ep->util);
}

void shm_ep_progress(struct util_ep *util)
{
	struct shm_ep *ep = to_shm_ep_util(util);

	util_lock_acquire(&ep->util.lock);
	shm_ep_progress_locked(ep);
	util_lock_release(&ep->util.lock);
}
