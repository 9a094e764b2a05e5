/* SPDX-License-Identifier: MIT */
/*
 * Completion queues: a ring of entries filled by the protocol, read through
 * the extended-CQ iterator (start/next/end_poll, read_*) or ibv_poll_cq.
 * Polling is where the application lends softsrd its CPU: start_poll and
 * poll_cq run one round of device progress first.
 *
 * An overrun (more completions than the CQ holds) puts the CQ in error for
 * good, as on hardware: the entry is lost and every later poll fails.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Producers hold the device lock; head moves under the consumer alone
 * (end_poll), hence the acquire: entries it released may be reused. */
struct softsrd_cqe *softsrd_cq_push(struct softsrd_cq *cq)
{
	if (WEFT_UNLIKELY(cq->tail - __atomic_load_n(&cq->head, __ATOMIC_ACQUIRE) >
			  cq->mask)) {
		if (!cq->overrun)
			FI_WARN(softsrd_prov, FI_LOG_CQ,
				"CQ %p overrun (%u entries): CQ in error\n",
				(void *)cq, cq->mask + 1);
		cq->overrun = true;
		return NULL;
	}
	return &cq->ring[cq->tail++ & cq->mask];
}

static inline struct softsrd_cqe *softsrd_cq_cur(struct ibv_cq_ex *ibv_cq)
{
	struct softsrd_cq *cq = to_softsrd_cq_ex(ibv_cq);

	return &cq->ring[cq->cur & cq->mask];
}

static void softsrd_cq_show(struct softsrd_cq *cq)
{
	struct softsrd_cqe *e = &cq->ring[cq->cur & cq->mask];

	cq->ibv_cq.wr_id = e->wr_id;
	cq->ibv_cq.status = e->status;
}

/* start_poll snapshots the entries present; next_poll walks them and
 * end_poll releases them, all without the device lock, so the caller may
 * post (e.g. re-post receives) between start_poll and end_poll. */
static int softsrd_start_poll(struct ibv_cq_ex *ibv_cq,
			      struct ibv_poll_cq_attr *attr)
{
	struct softsrd_cq *cq = to_softsrd_cq_ex(ibv_cq);
	struct softsrd_ctx *ctx = cq->ctx;
	bool overrun;

	if (attr && attr->comp_mask)
		return EINVAL;
	pthread_mutex_lock(&ctx->lock);
	softsrd_app_enter(ctx);
	softsrd_progress_poll(ctx, cq);
	overrun = cq->overrun;
	cq->seen = cq->tail;
	pthread_mutex_unlock(&ctx->lock);
	if (WEFT_UNLIKELY(overrun))
		return EOVERFLOW;
	if (cq->head == cq->seen)
		return ENOENT;
	cq->cur = cq->head;
	softsrd_cq_show(cq);
	return 0;
}

static int softsrd_next_poll(struct ibv_cq_ex *ibv_cq)
{
	struct softsrd_cq *cq = to_softsrd_cq_ex(ibv_cq);

	if (cq->cur + 1 == cq->seen) {
		cq->cur = cq->seen;
		return ENOENT;
	}
	cq->cur++;
	softsrd_cq_show(cq);
	return 0;
}

static void softsrd_end_poll(struct ibv_cq_ex *ibv_cq)
{
	struct softsrd_cq *cq = to_softsrd_cq_ex(ibv_cq);

	/* the entry at cur was read; a next_poll that found nothing has
	 * moved cur past the last one */
	__atomic_store_n(&cq->head, cq->cur < cq->seen ? cq->cur + 1 : cq->seen,
			 __ATOMIC_RELEASE);
}

static enum ibv_wc_opcode softsrd_read_opcode(struct ibv_cq_ex *cq)
{
	return softsrd_cq_cur(cq)->opcode;
}

static uint32_t softsrd_read_vendor_err(struct ibv_cq_ex *cq)
{
	return softsrd_cq_cur(cq)->vendor_err;
}

static uint32_t softsrd_read_byte_len(struct ibv_cq_ex *cq)
{
	return softsrd_cq_cur(cq)->byte_len;
}

static __be32 softsrd_read_imm_data(struct ibv_cq_ex *cq)
{
	return softsrd_cq_cur(cq)->imm;
}

static uint32_t softsrd_read_qp_num(struct ibv_cq_ex *cq)
{
	return softsrd_cq_cur(cq)->qp_num;
}

static uint32_t softsrd_read_src_qp(struct ibv_cq_ex *cq)
{
	return softsrd_cq_cur(cq)->src_qp;
}

static unsigned int softsrd_read_wc_flags(struct ibv_cq_ex *cq)
{
	return softsrd_cq_cur(cq)->wc_flags;
}

static uint32_t softsrd_read_slid(struct ibv_cq_ex *cq)
{
	return softsrd_cq_cur(cq)->slid;
}

static uint8_t softsrd_read_zero8(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint64_t softsrd_read_zero64(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint16_t softsrd_read_cvlan(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint32_t softsrd_read_flow_tag(struct ibv_cq_ex *cq)
{
	return 0;
}

static void softsrd_read_tm_info(struct ibv_cq_ex *cq,
				 struct ibv_wc_tm_info *tm)
{
	memset(tm, 0, sizeof(*tm));
}

static void softsrd_wc_fill(struct ibv_wc *wc, const struct softsrd_cqe *e)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = e->wr_id;
	wc->status = e->status;
	wc->vendor_err = e->vendor_err;
	wc->qp_num = e->qp_num;
	if (e->status != IBV_WC_SUCCESS)
		return;
	wc->opcode = e->opcode;
	wc->byte_len = e->byte_len;
	wc->imm_data = e->imm;
	wc->src_qp = e->src_qp;
	wc->wc_flags = e->wc_flags;
	wc->slid = e->slid;
}

int softsrd_poll_cq(struct ibv_cq *ibv_cq, int n, struct ibv_wc *wc)
{
	struct softsrd_cq *cq = to_softsrd_cq(ibv_cq);
	struct softsrd_ctx *ctx = cq->ctx;
	int i = 0;

	pthread_mutex_lock(&ctx->lock);
	softsrd_app_enter(ctx);
	softsrd_progress_poll(ctx, cq);
	if (WEFT_UNLIKELY(cq->overrun)) {
		pthread_mutex_unlock(&ctx->lock);
		return -EOVERFLOW;
	}
	for (; i < n && cq->head != cq->tail; i++)
		softsrd_wc_fill(&wc[i], &cq->ring[cq->head++ & cq->mask]);
	pthread_mutex_unlock(&ctx->lock);
	return i;
}

static void softsrd_cq_ops_init(struct ibv_cq_ex *c)
{
	c->start_poll = softsrd_start_poll;
	c->next_poll = softsrd_next_poll;
	c->end_poll = softsrd_end_poll;
	c->read_opcode = softsrd_read_opcode;
	c->read_vendor_err = softsrd_read_vendor_err;
	c->read_byte_len = softsrd_read_byte_len;
	c->read_imm_data = softsrd_read_imm_data;
	c->read_qp_num = softsrd_read_qp_num;
	c->read_src_qp = softsrd_read_src_qp;
	c->read_wc_flags = softsrd_read_wc_flags;
	c->read_slid = softsrd_read_slid;
	c->read_sl = softsrd_read_zero8;
	c->read_dlid_path_bits = softsrd_read_zero8;
	c->read_completion_ts = softsrd_read_zero64;
	c->read_cvlan = softsrd_read_cvlan;
	c->read_flow_tag = softsrd_read_flow_tag;
	c->read_tm_info = softsrd_read_tm_info;
	c->read_completion_wallclock_ns = softsrd_read_zero64;
}

#define SOFTSRD_WC_FLAGS_OK (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
	IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | \
	IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_DLID_PATH_BITS)

struct ibv_cq_ex *softsrd_create_cq_ex(struct ibv_context *context,
				       struct ibv_cq_init_attr_ex *attr)
{
	struct softsrd_cq *cq;
	uint32_t size = 1;

	if (!attr || !attr->cqe || attr->cqe > (1u << 22) ||
	    (attr->wc_flags & ~(uint64_t)SOFTSRD_WC_FLAGS_OK) ||
	    attr->comp_mask > IBV_CQ_INIT_ATTR_MASK_PD) {
		FI_WARN(softsrd_prov, FI_LOG_CQ, "create_cq_ex: bad cqe %u, "
			"wc_flags 0x%" PRIx64 " or comp_mask 0x%x\n",
			attr ? attr->cqe : 0, attr ? attr->wc_flags : 0,
			attr ? attr->comp_mask : 0);
		errno = EINVAL;
		return NULL;
	}
	while (size < attr->cqe)
		size <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		goto err;
	cq->ring = calloc(size, sizeof(*cq->ring));
	if (!cq->ring)
		goto err_cq;
	cq->mask = size - 1;
	cq->ctx = to_softsrd_ctx(context);
	cq->ibv_cq.context = context;
	cq->ibv_cq.cq_context = attr->cq_context;
	cq->ibv_cq.channel = attr->channel;
	cq->ibv_cq.cqe = (int)size;
	pthread_mutex_init(&cq->ibv_cq.mutex, NULL);
	pthread_cond_init(&cq->ibv_cq.cond, NULL);
	softsrd_cq_ops_init(&cq->ibv_cq);
	return &cq->ibv_cq;

err_cq:
	free(cq);
err:
	errno = ENOMEM;
	return NULL;
}

int softsrd_destroy_cq(struct ibv_cq *ibv_cq)
{
	struct softsrd_cq *cq = to_softsrd_cq(ibv_cq);
	struct softsrd_ctx *ctx = cq->ctx;

	pthread_mutex_lock(&ctx->lock);
	for (int i = 1; i <= SOFTSRD_QP_PER_CTX; i++) {
		struct softsrd_qp *qp = ctx->qps[i];

		if (qp && (qp->scq == cq || qp->rcq == cq)) {
			pthread_mutex_unlock(&ctx->lock);
			FI_WARN(softsrd_prov, FI_LOG_CQ,
				"destroy_cq: QP %u still uses it\n",
				qp->ibv_qp.qp_num);
			return EBUSY;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	pthread_mutex_destroy(&cq->ibv_cq.mutex);
	pthread_cond_destroy(&cq->ibv_cq.cond);
	free(cq->ring);
	free(cq);
	return 0;
}
