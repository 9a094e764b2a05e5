/* SPDX-License-Identifier: MIT */
/*
 * Running an operation's rounds (the contract is in util_coll_priv.h):
 * rounds complete in order, run their local actions, and new rounds start
 * as the window and their start_after allow; a transport that says
 * -FI_EAGAIN leaves the round half posted, and progress resumes it.
 * Everything here runs with ep->lock held.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_atomic.h"
#include "weft/util_time.h"
#include "util_coll_priv.h"
#include <string.h>
#include <utlist.h>

static struct util_ep *uc_ep(const struct util_coll_op *op)
{
	return op->grp->cep->ep;
}

static const struct util_coll_xport *uc_xp(const struct util_coll_op *op)
{
	return op->grp->cep->xp;
}

static void *uc_ptr(const struct util_coll_op *op,
		    const struct util_coll_ref *ref)
{
	return (uint8_t *)op->buf[ref->buf] + ref->off;
}

static fi_addr_t uc_addr(const struct util_coll_op *op, uint32_t peer)
{
	const struct util_coll_phase *ph = &op->ph[op->cur];

	return op->grp->members[ph->map ? ph->map[peer] : peer];
}

static uint64_t uc_tag(const struct util_coll_op *op, uint32_t k)
{
	if (op->join)
		return UTIL_COLL_TAG_JOIN(op->grp->hash, k);
	return UTIL_COLL_TAG(op->grp->gid, op->seq,
			     (uint32_t)op->ph[op->cur].tag_phase << 24 | k);
}

void uc_mark_ready(struct util_coll_op *op)
{
	struct util_coll_ep *cep = op->grp->cep;

	if (op->on_ready)
		return;
	op->on_ready = true;
	DL_APPEND2(cep->ready, op, rprev, rnext);
}

static void uc_unready(struct util_coll_op *op)
{
	if (!op->on_ready)
		return;
	op->on_ready = false;
	DL_DELETE2(op->grp->cep->ready, op, rprev, rnext);
}

/* ---- failing ------------------------------------------------------------- */

/* Take back the receives still posted; those the transport no longer
 * holds complete on their own. */
static void uc_op_cancel_recvs(struct util_coll_op *op)
{
	uint32_t k;

	for (k = op->next_done; k < op->next_start; k++) {
		struct util_coll_slot *s = &op->slots[k % UC_WIN_MAX];

		for (uint8_t i = 0; i < s->rposted; i++) {
			if ((s->rdone & (1u << i)) ||
			    uc_xp(op)->cancel(uc_ep(op), &s->rctx[i]))
				continue;
			s->rdone |= (uint8_t)(1u << i);
			op->recvs_out--;
		}
	}
}

void uc_op_fail(struct util_coll_op *op, int err)
{
	if (op->failed)
		return;
	op->failed = true;
	op->err = err;
	uc_op_cancel_recvs(op);
	uc_mark_ready(op);
	if (!op->join)
		uc_group_fail(op->grp, err);
}

/* ---- rounds -------------------------------------------------------------- */

static void uc_round_actions(struct util_coll_op *op, struct util_coll_slot *s)
{
	size_t esize = op->ph[op->cur].esize;

	for (uint8_t i = 0; i < s->r.nact; i++) {
		const struct util_coll_act *a = &s->r.act[i];

		if (a->kind == UC_ACT_COPY)
			memmove(uc_ptr(op, &a->dst), uc_ptr(op, &a->a),
				a->dst.len);
		else
			util_atomic_reduce(op->rop, op->dt, uc_ptr(op, &a->dst),
					   uc_ptr(op, &a->a), uc_ptr(op, &a->b),
					   a->dst.len / esize);
	}
}

static bool uc_round_done(const struct util_coll_op *op,
			  const struct util_coll_slot *s)
{
	return s->rposted == s->r.nrecv && s->sposted == s->r.nsend &&
	       s->rdone == (1u << s->r.nrecv) - 1 &&
	       (!s->r.fence || !op->sends_out);
}

/* Post what is left of round k: receives first, so that the peers'
 * messages find them. -FI_EAGAIN: resume later. */
static int uc_round_post(struct util_coll_op *op, uint32_t k)
{
	struct util_coll_slot *s = &op->slots[k % UC_WIN_MAX];
	const struct util_coll_xport *xp = uc_xp(op);
	struct util_ep *ep = uc_ep(op);
	ssize_t ret;

	while (s->rposted < s->r.nrecv) {
		const struct util_coll_xfer *x = &s->r.recv[s->rposted];

		op->recvs_out++;
		ret = xp->recv(ep, uc_ptr(op, &x->ref), x->ref.len,
			       uc_addr(op, x->peer), uc_tag(op, k), 0,
			       &s->rctx[s->rposted]);
		if (ret) {
			op->recvs_out--;
			return (int)ret;
		}
		s->rposted++;
	}
	while (s->sposted < s->r.nsend) {
		const struct util_coll_xfer *x = &s->r.send[s->sposted];
		struct iovec iov = { .iov_base = uc_ptr(op, &x->ref),
				     .iov_len = x->ref.len };

		op->sends_out++;
		ret = xp->send(ep, &iov, 1, uc_addr(op, x->peer), uc_tag(op, k),
			       &s->sctx[s->sposted]);
		if (ret != 0)
			op->sends_out--;
		if (ret < 0)
			return (int)ret;
		s->sposted++;
	}
	return 0;
}

/* The completion contexts of an operation's slots name the operation,
 * slot and transfer: the same for every round and every use of the
 * object, so they are written once, when the pool makes it. */
void uc_op_init_obj(void *obj, void *arg)
{
	struct util_coll_op *op = obj;

	(void)arg;
	for (uint8_t s = 0; s < UC_WIN_MAX; s++) {
		for (uint8_t i = 0; i < UC_XFER_MAX; i++) {
			op->slots[s].rctx[i] = (struct util_coll_ctx){
				.kind = UC_CTX_RECV, .slot = s, .idx = i,
				.owner = op };
			op->slots[s].sctx[i] = (struct util_coll_ctx){
				.kind = UC_CTX_SEND, .slot = s, .idx = i,
				.owner = op };
		}
	}
}

/* Finish posting the rounds in flight, then start new ones. 1: some
 * moved, 0: nothing to do now, -FI_EAGAIN: the transport is full. */
static int uc_rounds_start(struct util_coll_op *op)
{
	const struct util_coll_phase *ph = &op->ph[op->cur];
	struct util_coll_slot *s;
	int moved = 0, ret;
	uint32_t k;

	/* rounds the transport refused part of before */
	for (k = op->post_k; k < op->next_start; k++) {
		ret = uc_round_post(op, k);
		if (ret)
			return ret;
		op->post_k = k + 1;
	}
	while (op->next_start < ph->nrounds &&
	       op->next_start - op->next_done < ph->win) {
		k = op->next_start;
		/* The window keeps round k - UC_WIN_MAX done: its slot is
		 * free. A round that must wait stays generated there. */
		s = &op->slots[k % UC_WIN_MAX];
		if (op->gen_k != k) {
			util_coll_phase_round(ph, k, &s->r);
			op->gen_k = k;
		}
		if (s->r.start_after > op->next_done)
			break;
		s->rposted = s->sposted = 0;
		s->rdone = 0;
		op->next_start++;
		moved = 1;
		ret = uc_round_post(op, k);
		if (ret)
			return ret;
		op->post_k = k + 1;
	}
	return moved;
}

static bool uc_rounds_complete(struct util_coll_op *op)
{
	bool moved = false;

	while (op->next_done < op->next_start) {
		struct util_coll_slot *s = &op->slots[op->next_done % UC_WIN_MAX];

		if (!uc_round_done(op, s))
			break;
		uc_round_actions(op, s);
		op->next_done++;
		moved = true;
	}
	return moved;
}

/* The next phase, once this one is over; false when none is left. */
static bool uc_phase_next(struct util_coll_op *op)
{
	if (op->next_done < op->ph[op->cur].nrounds)
		return true;
	if (op->cur + 1 >= op->nph)
		return false;
	op->cur++;
	op->next_start = op->next_done = op->post_k = 0;
	op->gen_k = UINT32_MAX;
	return true;
}

void uc_op_advance(struct util_coll_op *op)
{
	int ret;

	uc_unready(op);
	if (op->pending_err && !op->failed)
		uc_op_fail(op, op->pending_err);
	for (;;) {
		if (op->failed) {
			if (!op->recvs_out && !op->sends_out)
				uc_op_finish(op);
			return;
		}
		if (!uc_phase_next(op)) {
			if (!op->sends_out)
				uc_op_finish(op);
			return;
		}
		ret = uc_rounds_start(op);
		if (ret == -FI_EAGAIN) {
			/* Progress resumes it (the op stays ready). */
			uc_rounds_complete(op);
			uc_mark_ready(op);
			return;
		}
		if (ret < 0) {
			FI_WARN(uc_prov(uc_ep(op)), FI_LOG_EP_DATA,
				"collective: posting to the transport: %s\n",
				fi_strerror(-ret));
			uc_op_fail(op, -ret);
			continue;
		}
		if (!uc_rounds_complete(op) && !ret &&
		    op->next_done < op->ph[op->cur].nrounds)
			return;
	}
}

void uc_run_ready(struct util_coll_ep *cep)
{
	struct util_coll_op *op, *last;

	/* Ops that stay ready (a full transport) run once per call. */
	last = cep->ready ? cep->ready->rprev : NULL;
	while ((op = cep->ready)) {
		bool end = op == last;

		uc_op_advance(op);
		if (end)
			break;
	}
}

/* ---- liveness ------------------------------------------------------------ */

static bool uc_op_peers_alive(struct util_coll_op *op, uint32_t *dead)
{
	const struct util_coll_xport *xp = uc_xp(op);
	const struct util_coll_phase *ph = &op->ph[op->cur];

	for (uint32_t k = op->next_done; k < op->next_start; k++) {
		const struct util_coll_slot *s = &op->slots[k % UC_WIN_MAX];

		for (uint8_t i = 0; i < s->rposted; i++) {
			uint32_t peer = s->r.recv[i].peer;

			if (s->rdone & (1u << i))
				continue;
			if (!xp->peer_alive(uc_ep(op), uc_addr(op, peer))) {
				*dead = ph->map ? ph->map[peer] : peer;
				return false;
			}
		}
	}
	return true;
}

void uc_check_liveness(struct util_coll_ep *cep)
{
	uint64_t now = util_time_coarse_ns();
	struct util_coll_op *op, *tmp;
	uint32_t dead;

	if (!cep->xp->peer_alive || now < cep->next_check_ns)
		return;
	cep->next_check_ns = now + util_coll_params.liveness_ns;
	DL_FOREACH_SAFE(cep->ops, op, tmp) {
		if (op->failed || uc_op_peers_alive(op, &dead))
			continue;
		FI_WARN(uc_prov(cep->ep), FI_LOG_EP_DATA,
			"collective: member %u of group %u is gone\n", dead,
			op->grp->gid);
		uc_op_fail(op, FI_EHOSTUNREACH);
	}
	uc_run_ready(cep);
}
