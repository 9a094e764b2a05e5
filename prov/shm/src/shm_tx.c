/* SPDX-License-Identifier: MIT */
/*
 * Initiator operations that wait for the target's ACK: a fixed table of
 * tx_size entries taken from a free stack (no allocation per operation).
 * The ACK names its entry by cookie = generation << 32 | index, so a stale
 * or forged ACK (wrong generation, wrong sender) is dropped.
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "shm.h"

int shm_tx_init(struct shm_ep *ep, size_t size)
{
	size_t i;

	ep->tx_entries = calloc(size, sizeof(*ep->tx_entries));
	ep->tx_free = calloc(size, sizeof(*ep->tx_free));
	if (!ep->tx_entries || !ep->tx_free) {
		free(ep->tx_entries);
		free(ep->tx_free);
		return -FI_ENOMEM;
	}
	for (i = 0; i < size; i++) {
		ep->tx_entries[i].idx = (uint32_t)i;
		ep->tx_free[i] = (uint32_t)(size - 1 - i);
	}
	ep->tx_size = size;
	ep->tx_free_top = size;
	ep->tx_active = NULL;
	return 0;
}

void shm_tx_fini(struct shm_ep *ep)
{
	free(ep->tx_entries);
	free(ep->tx_free);
	ep->tx_entries = NULL;
	ep->tx_free = NULL;
}

struct shm_tx_entry *shm_tx_get(struct shm_ep *ep, struct shm_conn *conn)
{
	struct shm_tx_entry *tx;

	if (WEFT_UNLIKELY(!ep->tx_free_top))
		return NULL;
	tx = &ep->tx_entries[ep->tx_free[--ep->tx_free_top]];
	tx->gen++;
	tx->conn = conn;
	tx->bounce_active = false;
	tx->iov_cnt = 0;
	tx->res_cnt = 0;
	tx->want_comp = false;
	tx->split_ok = false;
	tx->pushes = 0;
	tx->pull_active = false;
	tx->rma_cma = false;
	tx->rma_resend = false;
	tx->deadline_ns = 0;
	return tx;
}

/* Back to the free stack, for an entry that was never activated. */
void shm_tx_put(struct shm_ep *ep, struct shm_tx_entry *tx)
{
	tx->conn = NULL;
	tx->gen++;
	ep->tx_free[ep->tx_free_top++] = tx->idx;
}

uint64_t shm_tx_cookie(const struct shm_tx_entry *tx)
{
	return (uint64_t)tx->gen << 32 | tx->idx;
}

/* tx's iovecs (already in tx->iov) go out through our bounce segments:
 * returns the transfer id the request names them by. */
uint64_t shm_tx_bounce_push(struct shm_ep *ep, struct shm_tx_entry *tx,
			    size_t count, size_t len)
{
	memset(&tx->bounce, 0, sizeof(tx->bounce));
	tx->bounce.iov = tx->iov;
	tx->bounce.iov_count = count;
	tx->bounce.total = len;
	tx->bounce.xfer_id = shm_bounce_xfer_id(ep->region);
	tx->bounce_active = true;
	return tx->bounce.xfer_id;
}

/* The entry now waits for its ACK. */
void shm_tx_activate(struct shm_ep *ep, struct shm_tx_entry *tx)
{
	tx->deadline_ns = util_time_coarse_ns() + shm_env.peer_timeout_ms * 1000000ull;
	tx->conn->inflight++;
	DL_APPEND(ep->tx_active, tx);
}

void shm_tx_complete(struct shm_ep *ep, struct shm_tx_entry *tx, int err)
{
	if (tx->bounce_active)
		shm_conn_bounce_abort(ep, tx->conn, &tx->bounce);
	if (WEFT_UNLIKELY(tx->comp_flags & UTIL_COLL_FLAG)) {
		util_coll_send_done(&ep->util, tx->context, err);
	} else if (err) {
		util_ep_tx_err(&ep->util, tx->context, tx->comp_flags, err, 0,
			       tx->len, 0);
		util_ep_cntr_inc_err(&ep->util, tx->cntr);
	} else {
		if (tx->want_comp)
			util_ep_tx_comp(&ep->util, tx->context, tx->comp_flags,
					0, NULL, 0, 0);
		util_ep_cntr_inc(&ep->util, tx->cntr);
	}
	tx->conn->inflight--;
	DL_DELETE(ep->tx_active, tx);
	shm_tx_put(ep, tx);
}

struct shm_tx_entry *shm_tx_find(struct shm_ep *ep, struct shm_conn *conn,
				 uint64_t cookie)
{
	uint32_t idx = (uint32_t)cookie;
	uint32_t gen = (uint32_t)(cookie >> 32);
	struct shm_tx_entry *tx;

	if (WEFT_UNLIKELY(idx >= ep->tx_size))
		return NULL;
	tx = &ep->tx_entries[idx];
	if (WEFT_UNLIKELY(tx->gen != gen || tx->conn != conn))
		return NULL;
	return tx;
}

void shm_tx_handle_ack(struct shm_ep *ep, struct shm_conn *conn,
		       const struct shm_cell_hdr *hdr, const uint8_t *payload)
{
	struct shm_tx_entry *tx = shm_tx_find(ep, conn, hdr->cookie);
	int err;

	if (WEFT_UNLIKELY(!tx))
		return;
	err = shm_wire_status(hdr->proto);
	if (WEFT_UNLIKELY(tx->rma_cma) && err == FI_EOPNOTSUPP) {
		shm_rma_cma_refused(ep, tx);
		return;
	}
	/* A bounce read is done only when every byte was drained. */
	if (WEFT_UNLIKELY(tx->pull_active) && !err)
		err = FI_EIO;
	if (!err && tx->res_cnt)
		util_iov_copy_to(tx->res, tx->res_cnt, 0, payload, hdr->len);
	shm_tx_complete(ep, tx, err);
}

void shm_tx_fail_conn(struct shm_ep *ep, struct shm_conn *conn, int err)
{
	struct shm_tx_entry *tx, *tmp;

	DL_FOREACH_SAFE(ep->tx_active, tx, tmp)
		if (tx->conn == conn)
			shm_tx_complete(ep, tx, err);
}

static void shm_tx_check_deadlines(struct shm_ep *ep)
{
	struct shm_tx_entry *tx, *tmp;
	uint64_t now = util_time_coarse_ns();

	DL_FOREACH_SAFE(ep->tx_active, tx, tmp) {
		if (tx->deadline_ns > now)
			continue;
		/* May fail tx and others toward the same peer. One already
		 * dead has nothing left to fail, unless an operation reached
		 * it since: that one fails now. */
		if (shm_conn_check(ep, tx->conn)) {
			tx->deadline_ns = now +
				shm_env.peer_timeout_ms * 1000000ull;
		} else {
			shm_tx_fail_conn(ep, tx->conn, FI_EHOSTUNREACH);
			return;
		}
	}
}

/* A bounce read drains the target's segments into its buffers. */
static void shm_tx_pull(struct shm_ep *ep, struct shm_tx_entry *tx)
{
	int ret = shm_bounce_pull(tx->conn->peer, &tx->brx);

	if (ret == 1) {
		tx->pull_active = false;
	} else if (ret < 0) {
		tx->pull_active = false;
		shm_tx_complete(ep, tx, FI_EIO);
	}
}

void shm_tx_progress(struct shm_ep *ep)
{
	struct shm_tx_entry *tx, *tmp;

	if (!ep->tx_active)
		return;
	DL_FOREACH_SAFE(ep->tx_active, tx, tmp) {
		if (tx->bounce_active) {
			if (shm_conn_bounce_push(ep, tx->conn,
						 &tx->bounce) == 1)
				tx->bounce_active = false;
		} else if (tx->pull_active) {
			shm_tx_pull(ep, tx);	/* may complete tx */
		} else if (WEFT_UNLIKELY(tx->rma_resend)) {
			shm_rma_resend(ep, tx);
		}
	}
	if (shm_check_due(&ep->tx_check_ns))
		shm_tx_check_deadlines(ep);
}
