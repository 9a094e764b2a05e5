/* SPDX-License-Identifier: MIT */
/*
 * The collective engine's endpoint state: groups and fi_join_collective,
 * the completions the provider hands back, failures, and progress.
 *
 * Joining. A group's wire id (gid, in every tag) must be the same at all
 * members and unused by any other group of each member's endpoint, so the
 * join is itself an allreduce (recursive doubling, bitwise AND) of each
 * member's free-gid mask, tagged by a hash of the membership; the lowest
 * common free id wins. Joins of one endpoint run one at a time, in call
 * order (as communicator creation in MPI, members must join overlapping
 * sets in the same order).
 *
 * Failures. An operation fails on an error completion, a size mismatch, or
 * a member found gone (util_coll_exec.c: liveness). Its group then fails:
 * its other operations fail too, every member is told (an abort notice on
 * the group's control tag, so members waiting on live but stuck peers end
 * in bounded time as well), and a drain receive takes whatever of the
 * group still arrives. A failed group answers new operations with an
 * error completion; its gid is not reused.
 *
 * Callbacks from the provider (util_coll_send_done, util_coll_recv_done)
 * only record and queue (an error too: op->pending_err): work happens in
 * uc_run_ready, from progress or from the application's call, never
 * inside the provider's delivery.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_av.h"
#include "weft/util_av_set.h"
#include "weft/util_cq.h"
#include "weft/util_eq.h"
#include "weft/util_time.h"
#include "util_coll_priv.h"
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#define UC_ABORT_MAGIC 0x41425254u	/* "ABRT" */
/* Progress calls between looks at the clock (liveness). */
#define UC_CHECK_CALLS 256

/* ---- endpoint ------------------------------------------------------------ */

int util_coll_ep_init(struct util_ep *ep, const struct util_coll_xport *xp)
{
	if (!xp || !xp->send || !xp->recv || !xp->cancel) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"collectives: the provider's transport lacks send, recv "
			"or cancel\n");
		return -FI_EINVAL;
	}
	util_coll_params_init();
	ep->coll_xport = xp;
	ep->ep_fid.collective = UTIL_OPS(&util_coll_ops);
	return 0;
}

void util_coll_ep_fini(struct util_ep *ep)
{
	struct util_coll_ep *cep = ep->coll;
	struct util_coll_op *op, *tmp;
	uint32_t i;

	if (!cep)
		return;
	util_lock_acquire(&ep->lock);
	/* Receives posted for the engine go with the provider's receive
	 * side; sends in flight are the provider's to drop. */
	DL_FOREACH_SAFE(cep->ops, op, tmp) {
		for (uint32_t s = 0; s < UC_WIN_MAX; s++)
			for (uint32_t x = 0; x < UC_XFER_MAX; x++)
				cep->xp->cancel(ep, &op->slots[s].rctx[x]);
		DL_DELETE(cep->ops, op);
		free(op->tmp_heap);
	}
	for (i = 0; i < cep->ngroups; i++) {
		struct util_coll_group *grp = cep->groups[i];

		if (!grp)
			continue;
		cep->xp->cancel(ep, &grp->ctrl_ctx);
		cep->xp->cancel(ep, &grp->sink_ctx);
		uc_group_free(grp);
	}
	free(cep->groups);
	free(cep->scratch);
	util_pool_fini(&cep->op_pool);
	ep->coll = NULL;
	ep->coll_busy = 0;
	util_lock_release(&ep->lock);
	free(cep);
}

/* ---- operations ---------------------------------------------------------- */

struct util_coll_op *uc_op_new(struct util_coll_group *grp, bool join)
{
	struct util_coll_ep *cep = grp->cep;
	struct util_coll_op *op = util_pool_get(&cep->op_pool);

	if (!op)
		return NULL;
	memset(op, 0, offsetof(struct util_coll_op, ph));
	op->gen_k = UINT32_MAX;
	op->grp = grp;
	op->join = join;
	if (!join)
		op->seq = grp->next_seq++ % UTIL_COLL_SEQ_CTRL;
	grp->inflight++;
	DL_APPEND(cep->ops, op);
	cep->ep->coll_busy++;
	return op;
}

int uc_op_tmp(struct util_coll_op *op, size_t size)
{
	struct util_coll_ep *cep = op->grp->cep;

	op->tmp_size = size;
	if (size <= UC_INLINE_TMP) {
		op->buf[UC_BUF_TMP] = op->inline_tmp;
		return 0;
	}
	/* One spare buffer: a loop of equal operations allocates once. */
	if (cep->scratch && cep->scratch_size >= size) {
		op->tmp_heap = cep->scratch;
		cep->scratch = NULL;
	} else {
		op->tmp_heap = malloc(size);
		if (!op->tmp_heap)
			return -FI_ENOMEM;
	}
	op->buf[UC_BUF_TMP] = op->tmp_heap;
	return 0;
}

static void uc_op_tmp_release(struct util_coll_op *op)
{
	struct util_coll_ep *cep = op->grp->cep;

	if (!op->tmp_heap)
		return;
	if (!cep->scratch || cep->scratch_size < op->tmp_size) {
		free(cep->scratch);
		cep->scratch = op->tmp_heap;
		cep->scratch_size = op->tmp_size;
	} else {
		free(op->tmp_heap);
	}
	op->tmp_heap = NULL;
}

static void uc_op_report(struct util_coll_op *op)
{
	struct util_ep *ep = op->grp->cep->ep;

	if (op->failed)
		util_ep_tx_err(ep, op->context, FI_COLLECTIVE, op->err, 0, 0,
			       0);
	else if (op->want_comp)
		util_cq_write(ep->tx_cq, op->context, FI_COLLECTIVE, 0, NULL, 0,
			      0);
}

/* Every receive and send of op is over: report it and let it go. */
void uc_op_finish(struct util_coll_op *op)
{
	struct util_coll_group *grp = op->grp;
	struct util_coll_ep *cep = grp->cep;

	if (op->join)
		uc_join_done(op);
	else if (!op->silent)
		uc_op_report(op);
	if (op->on_ready)
		DL_DELETE2(cep->ready, op, rprev, rnext);
	DL_DELETE(cep->ops, op);
	uc_op_tmp_release(op);
	grp->inflight--;
	cep->ep->coll_busy--;
	util_pool_put(&cep->op_pool, op);
}

/* ---- provider callbacks -------------------------------------------------- */

void uc_group_mark(struct util_coll_group *grp)
{
	if (grp->work)
		return;
	grp->work = true;
	grp->cep->group_work++;
	grp->cep->ep->coll_busy++;
}

void util_coll_send_done(struct util_ep *ep, void *ctx_ptr, int err)
{
	struct util_coll_ctx *ctx = ctx_ptr;
	struct util_coll_op *op;

	if (!ctx || ctx->kind != UC_CTX_SEND)
		return;		/* an abort notice, or a dropped inject */
	op = ctx->owner;
	op->sends_out--;
	if (err && !op->failed && !op->pending_err) {
		FI_WARN(uc_prov(ep), FI_LOG_EP_DATA,
			"collective send to rank %u failed: %s\n",
			op->slots[ctx->slot].r.send[ctx->idx].peer,
			fi_strerror(err));
		op->pending_err = err;
	}
	uc_mark_ready(op);
}

static void uc_ctrl_done(struct util_coll_group *grp, size_t len, int err)
{
	grp->ctrl_posted = false;
	if (!err && len == sizeof(grp->ctrl_buf) &&
	    grp->ctrl_buf[0] == UC_ABORT_MAGIC) {
		grp->pending_fail = grp->ctrl_buf[1] &&
				    grp->ctrl_buf[1] < FI_ERRNO_MAX ?
				    (int)grp->ctrl_buf[1] : FI_EIO;
	} else if (grp->state == UC_GRP_READY) {
		grp->ctrl_repost = true;
	}
	uc_group_mark(grp);
}

void util_coll_recv_done(struct util_ep *ep, void *ctx_ptr, size_t len,
			 int err)
{
	struct util_coll_ctx *ctx = ctx_ptr;
	struct util_coll_group *grp;
	struct util_coll_op *op;
	struct util_coll_slot *s;

	switch (ctx->kind) {
	case UC_CTX_CTRL:
		uc_ctrl_done(ctx->owner, len, err);
		return;
	case UC_CTX_SINK:
		grp = ctx->owner;
		grp->sink_posted = false;
		grp->sink_repost = true;
		uc_group_mark(grp);
		return;
	case UC_CTX_RECV:
		break;
	default:
		return;
	}
	op = ctx->owner;
	s = &op->slots[ctx->slot];
	s->rdone |= (uint8_t)(1u << ctx->idx);
	op->recvs_out--;
	if (!err && len != s->r.recv[ctx->idx].ref.len) {
		FI_WARN(uc_prov(ep), FI_LOG_EP_DATA,
			"collective: %zu bytes from rank %u where %zu were "
			"due (do all members call it with the same count?)\n",
			len, s->r.recv[ctx->idx].peer,
			s->r.recv[ctx->idx].ref.len);
		err = FI_EIO;
	}
	if (err && !op->failed && !op->pending_err)
		op->pending_err = err;
	uc_mark_ready(op);
}

/* ---- groups: failure ----------------------------------------------------- */

void uc_group_fail(struct util_coll_group *grp, int err)
{
	struct util_coll_ep *cep = grp->cep;
	struct util_coll_op *op;

	if (grp->state == UC_GRP_FAILED)
		return;
	FI_WARN(uc_prov(grp->cep->ep), FI_LOG_EP_DATA,
		"collective group %u (%u members) failed: %s\n", grp->gid,
		grp->n, fi_strerror(err));
	grp->state = UC_GRP_FAILED;
	grp->err = err;
	DL_FOREACH(cep->ops, op)
		if (op->grp == grp && !op->failed)
			uc_op_fail(op, err);
	if (grp->ctrl_posted && !cep->xp->cancel(cep->ep, &grp->ctrl_ctx))
		grp->ctrl_posted = false;
	grp->ctrl_repost = false;
	grp->abort_next = 0;
	grp->abort_msg[0] = UC_ABORT_MAGIC;
	grp->abort_msg[1] = (uint32_t)err;
	grp->sink_repost = grp->gid != 0;
	uc_group_mark(grp);
}

static uint64_t uc_ctrl_tag(const struct util_coll_group *grp)
{
	return UTIL_COLL_TAG(grp->gid, UTIL_COLL_SEQ_CTRL, (uint32_t)grp->hash);
}

/* Tell every other member, as far as the transport takes it now. */
static void uc_group_send_aborts(struct util_coll_group *grp)
{
	struct util_coll_ep *cep = grp->cep;
	struct iovec iov = { .iov_base = grp->abort_msg,
			     .iov_len = sizeof(grp->abort_msg) };
	ssize_t ret;

	if (!grp->gid) {
		grp->abort_next = grp->n;	/* no id agreed yet */
		return;
	}
	for (; grp->abort_next < grp->n; grp->abort_next++) {
		if (grp->abort_next == grp->rank)
			continue;
		ret = cep->xp->send(cep->ep, &iov, 1,
				    grp->members[grp->abort_next],
				    uc_ctrl_tag(grp), &grp->abort_ctx);
		if (ret == -FI_EAGAIN)
			return;
	}
}

int uc_group_post_ctrl(struct util_coll_group *grp)
{
	struct util_coll_ep *cep = grp->cep;
	ssize_t ret = cep->xp->recv(cep->ep, grp->ctrl_buf,
				    sizeof(grp->ctrl_buf), FI_ADDR_UNSPEC,
				    uc_ctrl_tag(grp), 0, &grp->ctrl_ctx);

	if (ret)
		return (int)ret;
	/* It may have completed inside the call (an abort waiting). */
	if (grp->ctrl_repost || grp->pending_fail)
		return 0;
	grp->ctrl_posted = true;
	return 0;
}

static void uc_group_post_sink(struct util_coll_group *grp)
{
	struct util_coll_ep *cep = grp->cep;

	grp->sink_repost = false;
	grp->sink_posted = true;
	if (cep->xp->recv(cep->ep, NULL, 0, FI_ADDR_UNSPEC,
			  UTIL_COLL_TAG(grp->gid, 0, 0),
			  UTIL_COLL_TAG_GROUP_IGNORE, &grp->sink_ctx)) {
		grp->sink_posted = false;
		grp->sink_repost = true;
	}
}

/* A group's deferred work; whether some is left. */
static bool uc_group_run(struct util_coll_group *grp)
{
	int err;

	if (grp->pending_fail) {
		err = grp->pending_fail;
		grp->pending_fail = 0;
		uc_group_fail(grp, err);
	}
	if (grp->ctrl_repost && grp->state == UC_GRP_READY) {
		grp->ctrl_repost = false;
		if (uc_group_post_ctrl(grp))
			grp->ctrl_repost = true;
	}
	if (grp->state == UC_GRP_FAILED) {
		uc_group_send_aborts(grp);
		/* One message per call: the drain may keep finding more. */
		if (grp->sink_repost && !grp->sink_posted)
			uc_group_post_sink(grp);
	}
	return grp->pending_fail || grp->ctrl_repost || grp->sink_repost ||
	       (grp->state == UC_GRP_FAILED && grp->abort_next < grp->n);
}

static void uc_groups_run(struct util_coll_ep *cep)
{
	uint32_t i;

	for (i = 0; i < cep->ngroups && cep->group_work; i++) {
		struct util_coll_group *grp = cep->groups[i];

		if (!grp || !grp->work || uc_group_run(grp))
			continue;
		grp->work = false;
		cep->group_work--;
		cep->ep->coll_busy--;
	}
}

/* ---- progress ------------------------------------------------------------ */

void util_coll_progress(struct util_ep *ep)
{
	struct util_coll_ep *cep = ep->coll;

	if (!cep)
		return;
	uc_run_ready(cep);
	if (cep->group_work)
		uc_groups_run(cep);
	if (cep->ops && !(++cep->calls % UC_CHECK_CALLS))
		uc_check_liveness(cep);
}

