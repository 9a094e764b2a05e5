/* SPDX-License-Identifier: MIT */
/*
 * Operations that wait for a peer's answer (struct tcp_op) and
 * rendezvous receives that wait for a peer's data (struct tcp_xfer): two
 * fixed tables, so that an id from the wire (index | generation << 32)
 * finds its entry in O(1) and a stale or forged id finds nothing. A
 * generation is odd while its entry is in use.
 *
 * An op ends when its answer came and every frame of its own was written
 * (the answer may be read before the engine reports the write).
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <utlist.h>

#include "tcp.h"

int tcp_op_init(struct tcp_ep *ep, size_t nops, size_t nxfers)
{
	size_t i;

	ep->ops = calloc(nops, sizeof(*ep->ops));
	ep->op_free = calloc(nops, sizeof(*ep->op_free));
	ep->xfers = calloc(nxfers, sizeof(*ep->xfers));
	ep->xfer_free = calloc(nxfers, sizeof(*ep->xfer_free));
	if (!ep->ops || !ep->op_free || !ep->xfers || !ep->xfer_free)
		return -FI_ENOMEM;
	ep->op_count = nops;
	ep->xfer_count = nxfers;
	for (i = 0; i < nops; i++) {
		ep->ops[i].idx = (uint32_t)i;
		ep->op_free[i] = (uint32_t)(nops - 1 - i);
	}
	ep->op_free_top = nops;
	for (i = 0; i < nxfers; i++) {
		ep->xfers[i].idx = (uint32_t)i;
		ep->xfer_free[i] = (uint32_t)(nxfers - 1 - i);
	}
	ep->xfer_free_top = nxfers;
	return 0;
}

void tcp_op_fini(struct tcp_ep *ep)
{
	free(ep->ops);
	free(ep->op_free);
	free(ep->xfers);
	free(ep->xfer_free);
}

struct tcp_op *tcp_op_get(struct tcp_ep *ep, struct tcp_peer *peer,
			  uint8_t type)
{
	struct tcp_op *op;

	if (WEFT_UNLIKELY(!ep->op_free_top))
		return NULL;
	op = &ep->ops[ep->op_free[--ep->op_free_top]];
	op->gen++;
	op->peer = peer;
	op->type = type;
	op->answered = false;
	op->inject = false;
	op->frames = 0;
	op->err = 0;
	op->iov_count = 0;
	DL_APPEND(peer->ops, op);
	return op;
}

struct tcp_op *tcp_op_find(struct tcp_ep *ep, struct tcp_peer *peer,
			   uint64_t id)
{
	uint64_t idx = id & 0xffffffffu;
	struct tcp_op *op;

	if (idx >= ep->op_count)
		return NULL;
	op = &ep->ops[idx];
	if (op->gen != (uint32_t)(id >> 32) || !(op->gen & 1) ||
	    op->peer != peer)
		return NULL;
	return op;
}

void tcp_op_release(struct tcp_ep *ep, struct tcp_op *op)
{
	DL_DELETE(op->peer->ops, op);
	op->gen++;
	ep->op_free[ep->op_free_top++] = op->idx;
}

void tcp_op_complete(struct tcp_ep *ep, struct tcp_op *op, int err)
{
	if (WEFT_UNLIKELY(op->comp_flags & UTIL_COLL_FLAG)) {
		tcp_coll_send_done(ep, op->context, err);
	} else if (err) {
		if (!op->inject)
			util_ep_tx_err(&ep->util, op->context, op->comp_flags,
				       err, 0, 0, 0);
		util_ep_cntr_inc_err(&ep->util, op->cntr);
	} else {
		if (op->want_comp)
			util_ep_tx_comp(&ep->util, op->context, op->comp_flags,
					0, NULL, 0, 0);
		util_ep_cntr_inc(&ep->util, op->cntr);
	}
	tcp_op_release(ep, op);
}

void tcp_op_frame_sent(struct tcp_ep *ep, struct tcp_op *op)
{
	if (!--op->frames && op->answered)
		tcp_op_complete(ep, op, op->err);
}

void tcp_op_answer(struct tcp_ep *ep, struct tcp_op *op, int err)
{
	op->answered = true;
	if (err && !op->err)
		op->err = err;
	if (!op->frames)
		tcp_op_complete(ep, op, op->err);
}

struct tcp_xfer *tcp_xfer_get(struct tcp_ep *ep, struct tcp_peer *peer)
{
	struct tcp_xfer *x;

	if (WEFT_UNLIKELY(!ep->xfer_free_top))
		return NULL;
	x = &ep->xfers[ep->xfer_free[--ep->xfer_free_top]];
	x->gen++;
	x->peer = peer;
	x->received = 0;
	x->granted = 0;
	DL_APPEND(peer->xfers, x);
	return x;
}

struct tcp_xfer *tcp_xfer_find(struct tcp_ep *ep, struct tcp_peer *peer,
			       uint64_t id)
{
	uint64_t idx = id & 0xffffffffu;
	struct tcp_xfer *x;

	if (idx >= ep->xfer_count)
		return NULL;
	x = &ep->xfers[idx];
	if (x->gen != (uint32_t)(id >> 32) || !(x->gen & 1) ||
	    x->peer != peer)
		return NULL;
	return x;
}

void tcp_xfer_put(struct tcp_ep *ep, struct tcp_xfer *x)
{
	DL_DELETE(x->peer->xfers, x);
	x->gen++;
	ep->xfer_free[ep->xfer_free_top++] = x->idx;
}

void tcp_op_fail_peer(struct tcp_ep *ep, struct tcp_peer *peer, int err)
{
	struct tcp_xfer *x;
	struct tcp_op *op;

	while ((op = peer->ops))
		tcp_op_complete(ep, op, err);
	while ((x = peer->xfers))
		tcp_recv_fail_xfer(ep, x, err);
}
