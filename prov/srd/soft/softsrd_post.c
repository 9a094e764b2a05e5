/* SPDX-License-Identifier: MIT */
/*
 * Posting: the ibv_qp_ex send-ops iterator (wr_start .. wr_complete), the
 * legacy ibv_post_send, and ibv_post_recv. wr_start takes the device lock
 * and wr_complete releases it after handing the batch to the wire, so one
 * batch costs one sendmmsg / io_uring_submit.
 *
 * Errors inside a batch (bad length, full queue, op not enabled) are kept
 * and reported by wr_complete, which then drops the whole batch.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <errno.h>
#include <string.h>

static void softsrd_batch_fail(struct softsrd_qp *qp, int err)
{
	if (!qp->batch_err)
		qp->batch_err = err;
	qp->cur = NULL;
}

static struct softsrd_swr *softsrd_wr_new(struct ibv_qp_ex *qpx,
					  enum ibv_wr_opcode opcode)
{
	struct softsrd_qp *qp = to_softsrd_qp_ex(qpx);
	struct softsrd_swr *wr;
	uint32_t idx;

	if (qp->batch_err)
		return NULL;
	if (!qp->swr_nfree || qp->nbatch == WEFT_ARRAY_SIZE(qp->batch)) {
		softsrd_batch_fail(qp, ENOMEM);
		return NULL;
	}
	idx = qp->swr_free[--qp->swr_nfree];
	wr = &qp->swr[idx];
	memset(wr, 0, offsetof(struct softsrd_swr, sge));
	memset(&wr->inl, 0, sizeof(*wr) - offsetof(struct softsrd_swr, inl));
	wr->wr_id = qpx->wr_id;
	wr->flags = qpx->wr_flags;
	wr->opcode = opcode;
	wr->status = IBV_WC_SUCCESS;
	qp->batch[qp->nbatch++] = wr;
	qp->cur = wr;
	return wr;
}

static void softsrd_wr_send(struct ibv_qp_ex *qpx)
{
	softsrd_wr_new(qpx, IBV_WR_SEND);
}

static void softsrd_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct softsrd_swr *wr = softsrd_wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (wr) {
		wr->imm = imm;
		wr->has_imm = true;
	}
}

static void softsrd_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			    uint32_t rkey, uint64_t raddr)
{
	struct softsrd_swr *wr = softsrd_wr_new(qpx, op);

	if (wr) {
		wr->rkey = rkey;
		wr->raddr = raddr;
	}
}

static void softsrd_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t raddr)
{
	softsrd_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, raddr);
}

static void softsrd_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t raddr)
{
	softsrd_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, raddr);
}

/* A checked RDMA write whose last packet also consumes a receive at the
 * target (see softsrd_proto.c). */
static void softsrd_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				      uint64_t raddr, __be32 imm)
{
	struct softsrd_swr *wr = softsrd_wr_new(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (wr) {
		wr->rkey = rkey;
		wr->raddr = raddr;
		wr->imm = imm;
		wr->has_imm = true;
	}
}

static void softsrd_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				   uint32_t qpn, uint32_t qkey)
{
	struct softsrd_qp *qp = to_softsrd_qp_ex(qpx);

	if (!qp->cur)
		return;
	qp->cur->peer = softsrd_peer_get(qp, &to_softsrd_ah(ah)->sin, qpn);
	qp->cur->peer_qkey = qkey;
	if (!qp->cur->peer)
		softsrd_batch_fail(qp, ENOMEM);
}

static void softsrd_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
				    const struct ibv_sge *sge)
{
	struct softsrd_qp *qp = to_softsrd_qp_ex(qpx);
	struct softsrd_swr *wr = qp->cur;
	uint64_t len = 0;

	if (!wr)
		return;
	if (n > qp->cap.max_send_sge || n > SOFTSRD_MAX_SGE) {
		softsrd_batch_fail(qp, EINVAL);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		wr->sge[i] = sge[i];
		len += sge[i].length;
	}
	if (len > UINT32_MAX) {
		softsrd_batch_fail(qp, EINVAL);
		return;
	}
	wr->num_sge = (uint32_t)n;
	wr->len = (uint32_t)len;
	wr->inl = NULL;
}

static void softsrd_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			       uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	softsrd_wr_set_sge_list(qpx, 1, &sge);
}

static void softsrd_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
					    const struct ibv_data_buf *buf)
{
	struct softsrd_qp *qp = to_softsrd_qp_ex(qpx);
	struct softsrd_swr *wr = qp->cur;
	size_t len = 0;
	uint8_t *dst;

	if (!wr)
		return;
	for (size_t i = 0; i < n; i++)
		len += buf[i].length;
	if (len > qp->cap.max_inline_data) {
		softsrd_batch_fail(qp, EINVAL);
		return;
	}
	dst = qp->inl_bufs + (size_t)(wr - qp->swr) * qp->cap.max_inline_data;
	wr->inl = dst;
	for (size_t i = 0; i < n; i++) {
		memcpy(dst, buf[i].addr, buf[i].length);
		dst += buf[i].length;
	}
	wr->len = (uint32_t)len;
	wr->num_sge = 0;
}

static void softsrd_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	softsrd_wr_set_inline_data_list(qpx, 1, &buf);
}

static void softsrd_wr_start(struct ibv_qp_ex *qpx)
{
	struct softsrd_qp *qp = to_softsrd_qp_ex(qpx);

	pthread_mutex_lock(&qp->ctx->lock);
	softsrd_app_enter(qp->ctx);
	qp->nbatch = 0;
	qp->batch_err = 0;
	qp->cur = NULL;
}

static void softsrd_batch_drop(struct softsrd_qp *qp)
{
	for (uint32_t i = qp->nbatch; i-- > 0;)
		qp->swr_free[qp->swr_nfree++] = (uint32_t)(qp->batch[i] - qp->swr);
	qp->nbatch = 0;
	qp->cur = NULL;
}

static uint64_t softsrd_op_flag(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
		return IBV_QP_EX_WITH_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return IBV_QP_EX_WITH_SEND_WITH_IMM;
	case IBV_WR_RDMA_READ:
		return IBV_QP_EX_WITH_RDMA_READ;
	case IBV_WR_RDMA_WRITE:
		return IBV_QP_EX_WITH_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	default:
		return 0;
	}
}

static int softsrd_wr_check(struct softsrd_qp *qp, struct softsrd_swr *wr)
{
	const struct softsrd_config *cfg = &qp->ctx->cfg;
	bool rdma = softsrd_op_is_rdma(wr->opcode);

	if (qp->ibv_qp.state != IBV_QPS_RTS || !wr->peer)
		return EINVAL;
	if (qp->send_ops_flags && !(qp->send_ops_flags & softsrd_op_flag(wr->opcode)))
		return EOPNOTSUPP;
	if (!rdma && wr->len > cfg->mtu)
		return EINVAL;
	if (rdma && (wr->len > cfg->max_rdma_size || wr->inl))
		return EINVAL;
	return 0;
}

/* A bad local key is the initiator's own error: a completion, not a
 * refused post, as on hardware. */
static bool softsrd_wr_sges_ok(struct softsrd_qp *qp, struct softsrd_swr *wr)
{
	for (uint32_t i = 0; i < wr->num_sge; i++)
		if (!softsrd_sge_valid(qp->ctx, &wr->sge[i]))
			return false;
	return true;
}

static void softsrd_wr_queue(struct softsrd_qp *qp, struct softsrd_swr *wr)
{
	uint32_t seg = softsrd_seg_size(qp->ctx);
	uint32_t first = seg - (uint32_t)(wr->raddr & 127);

	wr->npkts = 1;
	if (softsrd_op_is_rdma(wr->opcode) && wr->len > first)
		wr->npkts += (wr->len - first + seg - 1) / seg;
	wr->rnr_left = qp->rnr_retry == 7 ? UINT32_MAX : qp->rnr_retry;
	if (!softsrd_wr_sges_ok(qp, wr)) {
		wr->vendor_err = SOFTSRD_VE_LOCAL_INVALID_LKEY;
		softsrd_swr_fail(qp, wr, IBV_WC_LOC_PROT_ERR);
		return;
	}
	wr->queued = true;
	DL_APPEND(qp->pending, wr);
}

static int softsrd_wr_complete(struct ibv_qp_ex *qpx)
{
	struct softsrd_qp *qp = to_softsrd_qp_ex(qpx);
	struct softsrd_ctx *ctx = qp->ctx;
	int ret = qp->batch_err;

	for (uint32_t i = 0; !ret && i < qp->nbatch; i++)
		ret = softsrd_wr_check(qp, qp->batch[i]);
	if (ret) {
		softsrd_batch_drop(qp);
		pthread_mutex_unlock(&ctx->lock);
		return ret;
	}
	for (uint32_t i = 0; i < qp->nbatch; i++)
		softsrd_wr_queue(qp, qp->batch[i]);
	qp->nbatch = 0;
	qp->cur = NULL;
	softsrd_qp_push_pending(qp);
	softsrd_wire_flush(ctx);
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

static void softsrd_wr_abort(struct ibv_qp_ex *qpx)
{
	struct softsrd_qp *qp = to_softsrd_qp_ex(qpx);

	softsrd_batch_drop(qp);
	pthread_mutex_unlock(&qp->ctx->lock);
}

/* Operations SRD does not have: the batch fails at wr_complete. */
static void softsrd_wr_unsupported(struct softsrd_qp *qp)
{
	softsrd_batch_fail(qp, EOPNOTSUPP);
}

static void softsrd_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				      uint64_t raddr, uint64_t cmp, uint64_t swp)
{
	softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
}

static void softsrd_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
					uint64_t raddr, uint64_t add)
{
	softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
}

static void softsrd_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			       uint32_t rkey,
			       const struct ibv_mw_bind_info *info)
{
	softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
}

static void softsrd_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
}

static void softsrd_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
}

static void softsrd_wr_send_tso(struct ibv_qp_ex *qpx, void *hdr,
				uint16_t hdr_sz, uint16_t mss)
{
	softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
}

static void softsrd_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
}

static void softsrd_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t raddr, const void *wr)
{
	softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
}

void softsrd_qp_ops_init(struct softsrd_qp *qp)
{
	struct ibv_qp_ex *x = &qp->ibv_qpx;

	x->wr_atomic_cmp_swp = softsrd_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = softsrd_wr_atomic_fetch_add;
	x->wr_bind_mw = softsrd_wr_bind_mw;
	x->wr_local_inv = softsrd_wr_local_inv;
	x->wr_rdma_read = softsrd_wr_rdma_read;
	x->wr_rdma_write = softsrd_wr_rdma_write;
	x->wr_rdma_write_imm = softsrd_wr_rdma_write_imm;
	x->wr_send = softsrd_wr_send;
	x->wr_send_imm = softsrd_wr_send_imm;
	x->wr_send_inv = softsrd_wr_send_inv;
	x->wr_send_tso = softsrd_wr_send_tso;
	x->wr_set_ud_addr = softsrd_wr_set_ud_addr;
	x->wr_set_xrc_srqn = softsrd_wr_set_xrc_srqn;
	x->wr_set_inline_data = softsrd_wr_set_inline_data;
	x->wr_set_inline_data_list = softsrd_wr_set_inline_data_list;
	x->wr_set_sge = softsrd_wr_set_sge;
	x->wr_set_sge_list = softsrd_wr_set_sge_list;
	x->wr_start = softsrd_wr_start;
	x->wr_complete = softsrd_wr_complete;
	x->wr_abort = softsrd_wr_abort;
	x->wr_atomic_write = softsrd_wr_atomic_write;
}

/* ibv_post_send for code that does not use the iterator: the same batch. */
static void softsrd_post_one(struct ibv_qp_ex *qpx, struct ibv_send_wr *wr)
{
	qpx->wr_id = wr->wr_id;
	qpx->wr_flags = wr->send_flags;
	switch (wr->opcode) {
	case IBV_WR_SEND:
		softsrd_wr_send(qpx);
		break;
	case IBV_WR_SEND_WITH_IMM:
		softsrd_wr_send_imm(qpx, wr->imm_data);
		break;
	case IBV_WR_RDMA_READ:
		softsrd_wr_rdma_read(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_RDMA_WRITE:
		softsrd_wr_rdma_write(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	default:
		softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
		return;
	}
	if (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM)
		softsrd_wr_set_ud_addr(qpx, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				       wr->wr.ud.remote_qkey);
	if (wr->send_flags & IBV_SEND_INLINE) {
		struct ibv_data_buf buf[SOFTSRD_MAX_SGE];
		int n = wr->num_sge < SOFTSRD_MAX_SGE ? wr->num_sge : SOFTSRD_MAX_SGE;

		for (int i = 0; i < n; i++) {
			buf[i].addr = (void *)(uintptr_t)wr->sg_list[i].addr;
			buf[i].length = wr->sg_list[i].length;
		}
		softsrd_wr_set_inline_data_list(qpx, (size_t)n, buf);
	} else {
		softsrd_wr_set_sge_list(qpx, (size_t)wr->num_sge, wr->sg_list);
	}
}

int softsrd_post_send(struct ibv_qp *ibv_qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct ibv_qp_ex *qpx = &to_softsrd_qp(ibv_qp)->ibv_qpx;
	struct ibv_send_wr *first = wr;
	int ret;

	/* RDMA WRs of the legacy API carry no address handle: SRD needs one,
	 * so only sends are accepted here. */
	softsrd_wr_start(qpx);
	for (; wr; wr = wr->next) {
		if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM)
			softsrd_wr_unsupported(to_softsrd_qp_ex(qpx));
		else
			softsrd_post_one(qpx, wr);
	}
	ret = softsrd_wr_complete(qpx);
	if (ret && bad_wr)
		*bad_wr = first;
	return ret;
}

int softsrd_post_recv(struct ibv_qp *ibv_qp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct softsrd_qp *qp = to_softsrd_qp(ibv_qp);
	struct softsrd_ctx *ctx = qp->ctx;
	int ret = 0;

	pthread_mutex_lock(&ctx->lock);
	for (; wr; wr = wr->next) {
		struct softsrd_rwr *r;

		if (ibv_qp->state == IBV_QPS_RESET || ibv_qp->state == IBV_QPS_ERR ||
		    wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_recv_sge) {
			ret = EINVAL;
			break;
		}
		if (qp->rq_tail - qp->rq_head >= qp->rq_size) {
			ret = ENOMEM;
			break;
		}
		r = &qp->rq[qp->rq_tail % qp->rq_size];
		r->wr_id = wr->wr_id;
		r->num_sge = (uint32_t)wr->num_sge;
		memcpy(r->sge, wr->sg_list, sizeof(*r->sge) * r->num_sge);
		qp->rq_tail++;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (ret && bad_wr)
		*bad_wr = wr;
	return ret;
}
