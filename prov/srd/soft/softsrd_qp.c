/* SPDX-License-Identifier: MIT */
/*
 * SRD queue pairs: creation through efadv_create_qp_ex, the state machine of
 * modify_qp, query_qp and the in-order answer. Posting is in softsrd_post.c.
 *
 * The QP number names the UDP port of the context and the QP's slot in it
 * (port << 8 | slot), so an address handle (GID = IPv4) and a QPN are all a
 * peer needs to reach the QP.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static int softsrd_qp_check(struct softsrd_ctx *ctx,
			    const struct ibv_qp_init_attr_ex *a,
			    const struct efadv_qp_init_attr *efa, uint32_t inlen)
{
	const struct softsrd_config *cfg = &ctx->cfg;
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

	if (cfg->rdma_read)
		ops |= IBV_QP_EX_WITH_RDMA_READ;
	if (cfg->rdma_write)
		ops |= IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	if (!efa || inlen < offsetof(struct efadv_qp_init_attr, reserved) ||
	    efa->driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD ||
	    a->qp_type != IBV_QPT_DRIVER) {
		FI_WARN(softsrd_prov, FI_LOG_EP_CTRL,
			"create_qp: only IBV_QPT_DRIVER/EFADV SRD QPs\n");
		return EINVAL;
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd ||
	    !a->send_cq || !a->recv_cq || a->srq ||
	    a->pd->context != &ctx->vctx.context) {
		FI_WARN(softsrd_prov, FI_LOG_EP_CTRL,
			"create_qp: needs a PD and both CQs of this device, "
			"no SRQ\n");
		return EINVAL;
	}
	if (a->cap.max_send_wr > cfg->max_sq_wr ||
	    a->cap.max_recv_wr > cfg->max_rq_wr ||
	    a->cap.max_send_sge > cfg->max_sge ||
	    a->cap.max_recv_sge > cfg->max_sge ||
	    a->cap.max_inline_data > cfg->inline_buf_size) {
		FI_WARN(softsrd_prov, FI_LOG_EP_CTRL,
			"create_qp: caps above the device's (sq %u rq %u sge "
			"%u inline %u)\n", cfg->max_sq_wr, cfg->max_rq_wr,
			cfg->max_sge, cfg->inline_buf_size);
		return EINVAL;
	}
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~ops)) {
		FI_WARN(softsrd_prov, FI_LOG_EP_CTRL,
			"create_qp: send_ops_flags 0x%" PRIx64 " beyond 0x%"
			PRIx64 "\n", a->send_ops_flags, ops);
		return EOPNOTSUPP;
	}
	return 0;
}

static int softsrd_qp_alloc_queues(struct softsrd_qp *qp,
				   const struct ibv_qp_cap *cap,
				   uint32_t npkts)
{
	uint32_t nsq = cap->max_send_wr ? cap->max_send_wr : 1;

	qp->swr = calloc(nsq, sizeof(*qp->swr));
	qp->swr_free = calloc(nsq, sizeof(*qp->swr_free));
	qp->inl_bufs = calloc(nsq, cap->max_inline_data ? cap->max_inline_data : 1);
	qp->rq_size = cap->max_recv_wr ? cap->max_recv_wr : 1;
	qp->rq = calloc(qp->rq_size, sizeof(*qp->rq));
	qp->pkts = calloc(npkts, sizeof(*qp->pkts));
	if (!qp->swr || !qp->swr_free || !qp->inl_bufs || !qp->rq || !qp->pkts)
		return ENOMEM;
	for (uint32_t i = 0; i < cap->max_send_wr; i++)
		qp->swr_free[qp->swr_nfree++] = cap->max_send_wr - 1 - i;
	for (uint32_t i = 0; i < npkts; i++)
		DL_APPEND(qp->pkt_free, &qp->pkts[i]);
	return 0;
}

static void softsrd_qp_free(struct softsrd_qp *qp)
{
	struct softsrd_peer *peer, *tmp;

	HASH_ITER(hh, qp->peers, peer, tmp) {
		HASH_DEL(qp->peers, peer);
		free(peer);
	}
	free(qp->pkts);
	free(qp->rq);
	free(qp->inl_bufs);
	free(qp->swr_free);
	free(qp->swr);
	free(qp);
}

static int softsrd_qp_slot(struct softsrd_ctx *ctx, struct softsrd_qp *qp)
{
	for (uint32_t i = 1; i <= SOFTSRD_QP_PER_CTX; i++) {
		if (!ctx->qps[i]) {
			ctx->qps[i] = qp;
			qp->idx = i;
			return 0;
		}
	}
	return ENOSPC;
}

static void softsrd_qp_init_base(struct softsrd_qp *qp, struct softsrd_ctx *ctx,
				 const struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp *q = &qp->ibv_qp;

	qp->ctx = ctx;
	qp->cap = a->cap;
	qp->sq_sig_all = !!a->sq_sig_all;
	qp->scq = to_softsrd_cq(a->send_cq);
	qp->rcq = to_softsrd_cq(a->recv_cq);
	qp->send_ops_flags = (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ?
			     a->send_ops_flags : 0;
	qp->rnr_retry = 0;
	if (getrandom(&qp->incarnation, sizeof(qp->incarnation), 0) !=
	    sizeof(qp->incarnation))
		qp->incarnation = (uint32_t)util_time_ns();
	q->context = &ctx->vctx.context;
	q->qp_context = a->qp_context;
	q->pd = a->pd;
	q->send_cq = a->send_cq;
	q->recv_cq = a->recv_cq;
	q->qp_type = IBV_QPT_DRIVER;
	q->state = IBV_QPS_RESET;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	/* VERBS_QP_EX in rdma-core's struct verbs_qp */
	qp->verbs_comp_mask = 1u << 1;
}

struct ibv_qp *softsrd_create_qp(struct ibv_context *ibvctx,
				 struct ibv_qp_init_attr_ex *a,
				 struct efadv_qp_init_attr *efa, uint32_t inlen)
{
	struct softsrd_ctx *ctx = to_softsrd_ctx(ibvctx);
	struct softsrd_qp *qp;
	int ret;

	ret = softsrd_qp_check(ctx, a, efa, inlen);
	if (ret)
		goto err;
	ret = ENOMEM;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		goto err;
	softsrd_qp_init_base(qp, ctx, a);
	if (softsrd_qp_alloc_queues(qp, &a->cap, ctx->cfg.pkts_per_qp))
		goto err_qp;
	softsrd_qp_ops_init(qp);
	pthread_mutex_lock(&ctx->lock);
	ret = softsrd_qp_slot(ctx, qp);
	if (!ret) {
		qp->ibv_qp.qp_num = (uint32_t)ctx->port << 8 | qp->idx;
		if (qp->idx > ctx->qp_hi)
			ctx->qp_hi = qp->idx;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (ret) {
		FI_WARN(softsrd_prov, FI_LOG_EP_CTRL,
			"create_qp: all %d QPs of the device in use\n",
			SOFTSRD_QP_PER_CTX);
		goto err_qp;
	}
	return &qp->ibv_qp;

err_qp:
	softsrd_qp_free(qp);
err:
	errno = ret;
	return NULL;
}

struct ibv_qp_ex *softsrd_qp_to_qp_ex(struct ibv_qp *qp)
{
	return &to_softsrd_qp(qp)->ibv_qpx;
}

static bool softsrd_qp_transition_ok(enum ibv_qp_state from,
				     enum ibv_qp_state to)
{
	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR)
		return true;
	switch (from) {
	case IBV_QPS_RESET:
		return to == IBV_QPS_INIT;
	case IBV_QPS_INIT:
		return to == IBV_QPS_INIT || to == IBV_QPS_RTR;
	case IBV_QPS_RTR:
		return to == IBV_QPS_RTS;
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
		return to == IBV_QPS_RTS || to == IBV_QPS_SQD;
	default:
		return false;
	}
}

int softsrd_modify_qp(struct ibv_qp *ibv_qp, struct ibv_qp_attr *attr,
		      int mask)
{
	struct softsrd_qp *qp = to_softsrd_qp(ibv_qp);
	struct softsrd_ctx *ctx = qp->ctx;
	enum ibv_qp_state to = ibv_qp->state;

	if (mask & IBV_QP_STATE)
		to = attr->qp_state;
	if (!softsrd_qp_transition_ok(ibv_qp->state, to) ||
	    ((mask & IBV_QP_RNR_RETRY) && attr->rnr_retry > 7) ||
	    ((mask & IBV_QP_PORT) && attr->port_num != 1)) {
		FI_WARN(softsrd_prov, FI_LOG_EP_CTRL,
			"modify_qp %u: bad transition %d -> %d or attribute\n",
			ibv_qp->qp_num, ibv_qp->state, to);
		return EINVAL;
	}
	pthread_mutex_lock(&ctx->lock);
	if (mask & IBV_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IBV_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (to == IBV_QPS_ERR && ibv_qp->state != IBV_QPS_ERR)
		softsrd_qp_flush(qp, true);
	else if (to == IBV_QPS_RESET)
		softsrd_qp_flush(qp, false);
	ibv_qp->state = to;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int softsrd_query_qp(struct ibv_qp *ibv_qp, struct ibv_qp_attr *attr,
		     int mask, struct ibv_qp_init_attr *init)
{
	struct softsrd_qp *qp = to_softsrd_qp(ibv_qp);

	memset(attr, 0, sizeof(*attr));
	attr->qp_state = ibv_qp->state;
	attr->cur_qp_state = ibv_qp->state;
	attr->qkey = qp->qkey;
	attr->rnr_retry = qp->rnr_retry;
	attr->port_num = 1;
	attr->cap = qp->cap;
	attr->path_mtu = IBV_MTU_4096;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibv_qp->qp_context;
		init->send_cq = ibv_qp->send_cq;
		init->recv_cq = ibv_qp->recv_cq;
		init->cap = qp->cap;
		init->qp_type = ibv_qp->qp_type;
		init->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

int softsrd_query_qp_data_in_order(struct ibv_qp *ibv_qp,
				   enum ibv_wr_opcode op, uint32_t flags)
{
	struct softsrd_qp *qp = to_softsrd_qp(ibv_qp);
	int caps = 0;

	if (op != IBV_WR_SEND && op != IBV_WR_SEND_WITH_IMM &&
	    op != IBV_WR_RDMA_WRITE && op != IBV_WR_RDMA_WRITE_WITH_IMM)
		return 0;
	if (qp->ctx->cfg.in_order == SOFTSRD_ORDER_WHOLE)
		caps = SRD_IN_ORDER_WHOLE_MSG;
	else if (qp->ctx->cfg.in_order == SOFTSRD_ORDER_128)
		caps = SRD_IN_ORDER_ALIGNED_128;
	if (flags & SRD_IN_ORDER_RETURN_CAPS)
		return caps;
	return !!(caps & SRD_IN_ORDER_WHOLE_MSG);
}

int softsrd_destroy_qp(struct ibv_qp *ibv_qp)
{
	struct softsrd_qp *qp = to_softsrd_qp(ibv_qp);
	struct softsrd_ctx *ctx = qp->ctx;

	pthread_mutex_lock(&ctx->lock);
	softsrd_qp_flush(qp, false);
	ctx->qps[qp->idx] = NULL;
	pthread_mutex_unlock(&ctx->lock);
	pthread_mutex_destroy(&ibv_qp->mutex);
	pthread_cond_destroy(&ibv_qp->cond);
	softsrd_qp_free(qp);
	return 0;
}
