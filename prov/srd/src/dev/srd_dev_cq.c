/* SPDX-License-Identifier: MIT */
/*
 * The progress engine's CQ poller. One call = one batch: start_poll, up to
 * `batch` completions (next_poll), end_poll; or one ibv_poll_cq of `batch`
 * entries where the CQ is not extended. Which of the two runs is decided
 * once when the CQ is set up. Each completion goes to a callback chosen by
 * opcode; once per call, after the device's poll lock is released, the
 * end-of-batch hook re-posts receives, rings doorbells, runs queued sends
 * and backoff timers, so that work is done per batch, not per completion.
 * Completions beyond the batch stay in the CQ for the next call.
 */
#include "weft/compat.h"
#include "srd_dev.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#define SRD_CQ_MIN_DEPTH 64
#define SRD_CQ_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
			 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP)

uint32_t srd_dev_cq_depth(uint32_t sq_depth, uint32_t rq_depth, uint32_t n_qps,
			  uint32_t unsolicited, uint32_t max_cqe)
{
	uint64_t depth = ((uint64_t)sq_depth + rq_depth) * (n_qps ? n_qps : 1) +
			 unsolicited;

	if (max_cqe && depth > max_cqe) {
		/* Callers must then bound what they post to the CQ's depth. */
		FI_WARN(&srd_prov, FI_LOG_CQ,
			"CQ would need %llu entries, device allows %u\n",
			(unsigned long long)depth, max_cqe);
		depth = max_cqe;
	}
	return depth > UINT32_MAX ? UINT32_MAX : (uint32_t)depth;
}

static void srd_dev_cq_dispatch(struct srd_dev_cq *cq,
				const struct srd_dev_wc *wc)
{
	const struct srd_dev_cq_ops *ops = cq->ops;
	srd_dev_wc_cb cb;

	if (WEFT_UNLIKELY(wc->status != IBV_WC_SUCCESS)) {
		ops->on_error(cq, wc, cq->arg);
		return;
	}
	cb = (unsigned int)wc->opcode < SRD_WC_OPCODE_SLOTS ?
	     ops->on_wc[wc->opcode] : NULL;
	(cb ? cb : ops->on_unknown)(cq, wc, cq->arg);
}

/* Only wr_id, status, qp_num and vendor_err are valid on an error. */
static void srd_dev_cq_read_ex(struct ibv_cq_ex *cqx, struct srd_dev_wc *wc)
{
	wc->wr_id = cqx->wr_id;
	wc->status = cqx->status;
	wc->qp_num = ibv_wc_read_qp_num(cqx);
	if (WEFT_UNLIKELY(wc->status != IBV_WC_SUCCESS)) {
		wc->vendor_err = ibv_wc_read_vendor_err(cqx);
		return;
	}
	wc->vendor_err = 0;
	wc->opcode = ibv_wc_read_opcode(cqx);
	wc->byte_len = ibv_wc_read_byte_len(cqx);
	wc->wc_flags = ibv_wc_read_wc_flags(cqx);
	wc->src_qp = (wc->opcode & IBV_WC_RECV) ? ibv_wc_read_src_qp(cqx) : 0;
	wc->imm_data = (wc->wc_flags & IBV_WC_WITH_IMM) ?
		       be32toh(ibv_wc_read_imm_data(cqx)) : 0;
}

static int srd_dev_cq_poll_ex(struct srd_dev_cq *cq)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };
	struct ibv_cq_ex *cqx = cq->cqx;
	struct srd_dev_wc wc;
	int n = 0, ret;

	ret = ibv_start_poll(cqx, &attr);
	if (ret) {
		/* ENOENT: empty, and no end_poll after a failed start. */
		cq->ops->on_batch_end(cq, 0, cq->arg);
		return ret == ENOENT ? 0 : -ret;
	}
	for (;;) {
		srd_dev_cq_read_ex(cqx, &wc);
		srd_dev_cq_dispatch(cq, &wc);
		if (++n == (int)cq->batch)
			break;
		ret = ibv_next_poll(cqx);
		if (ret)
			break;
	}
	ibv_end_poll(cqx);
	if (WEFT_UNLIKELY(ret && ret != ENOENT))
		FI_WARN(&srd_prov, FI_LOG_CQ, "ibv_next_poll: %d\n", ret);
	cq->ops->on_batch_end(cq, n, cq->arg);
	return n;
}

static void srd_dev_cq_read_wc(const struct ibv_wc *in, struct srd_dev_wc *wc)
{
	wc->wr_id = in->wr_id;
	wc->status = in->status;
	wc->qp_num = in->qp_num;
	wc->vendor_err = in->vendor_err;
	wc->opcode = in->opcode;
	wc->byte_len = in->byte_len;
	wc->wc_flags = in->wc_flags;
	wc->src_qp = in->src_qp;
	wc->imm_data = (in->wc_flags & IBV_WC_WITH_IMM) ? be32toh(in->imm_data) : 0;
}

static int srd_dev_cq_poll_legacy(struct srd_dev_cq *cq)
{
	struct srd_dev_wc wc;
	int i, n;

	n = ibv_poll_cq(cq->cq, (int)cq->batch, cq->wc);
	if (WEFT_UNLIKELY(n < 0)) {
		cq->ops->on_batch_end(cq, 0, cq->arg);
		return -FI_EIO;
	}
	for (i = 0; i < n; i++) {
		srd_dev_cq_read_wc(&cq->wc[i], &wc);
		srd_dev_cq_dispatch(cq, &wc);
	}
	cq->ops->on_batch_end(cq, n, cq->arg);
	return n;
}

static void srd_dev_cq_ignore_wc(struct srd_dev_cq *cq,
				 const struct srd_dev_wc *wc, void *arg)
{
	(void)cq;
	(void)wc;
	(void)arg;
}

static void srd_dev_cq_ignore_batch(struct srd_dev_cq *cq, int n, void *arg)
{
	(void)cq;
	(void)n;
	(void)arg;
}

static bool srd_dev_cq_ops_ok(const struct srd_dev_cq_ops *ops)
{
	return ops && ops->on_unknown && ops->on_error && ops->on_batch_end;
}

int srd_dev_cq_init(struct srd_dev_cq *cq, struct ibv_cq_ex *cqx,
		    struct ibv_cq *legacy, const struct srd_dev_cq_attr *attr,
		    const struct srd_dev_cq_ops *ops)
{
	if (!srd_dev_cq_ops_ok(ops) || (!cqx && !legacy) || !attr->batch ||
	    attr->batch > SRD_CQ_BATCH_MAX) {
		FI_WARN(&srd_prov, FI_LOG_CQ,
			"CQ setup: need a CQ, callbacks for unknown/error/batch end "
			"and a batch of 1..%u (got %u)\n", SRD_CQ_BATCH_MAX,
			attr->batch);
		return -FI_EINVAL;
	}
	memset(cq, 0, sizeof(*cq));
	cq->ops = ops;
	cq->arg = attr->arg;
	cq->batch = attr->batch;
	cq->depth = attr->depth;
	cq->cqx = cqx;
	cq->cq = cqx ? ibv_cq_ex_to_cq(cqx) : legacy;

	if (cqx && cqx->start_poll && !attr->force_legacy) {
		cq->poll = srd_dev_cq_poll_ex;
		return 0;
	}
	cq->wc = calloc(cq->batch, sizeof(*cq->wc));
	if (!cq->wc)
		return -FI_ENOMEM;
	cq->poll = srd_dev_cq_poll_legacy;
	return 0;
}

void srd_dev_cq_fini(struct srd_dev_cq *cq)
{
	free(cq->wc);
	cq->wc = NULL;
}

static struct ibv_cq_ex *srd_dev_cq_create(struct srd_dev *dev, uint32_t *depth)
{
	struct ibv_cq_init_attr_ex ca;
	struct ibv_cq_ex *cqx;

	for (;;) {
		memset(&ca, 0, sizeof(ca));
		ca.cqe = *depth;
		ca.wc_flags = SRD_CQ_WC_FLAGS;
		cqx = dev->verbs->create_cq_ex(dev->ctx, &ca);
		if (cqx || errno != ENOMEM || *depth <= SRD_CQ_MIN_DEPTH)
			return cqx;
		*depth /= 2;
		FI_INFO(&srd_prov, FI_LOG_CQ,
			"%s: CQ out of memory, retrying with %u entries\n",
			dev->name, *depth);
	}
}

int srd_dev_cq_open(struct srd_dev *dev, const struct srd_dev_cq_attr *attr,
		    const struct srd_dev_cq_ops *ops,
		    struct srd_dev_cq **cq_out)
{
	struct srd_dev_cq_attr a = *attr;
	struct ibv_cq_ex *cqx;
	struct srd_dev_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cqx = srd_dev_cq_create(dev, &a.depth);
	if (!cqx) {
		ret = errno ? -errno : -FI_EIO;
		FI_WARN(&srd_prov, FI_LOG_CQ, "%s: ibv_create_cq_ex(%u): %s\n",
			dev->name, a.depth, strerror(-ret));
		goto free_cq;
	}
	ret = srd_dev_cq_init(cq, cqx, NULL, &a, ops);
	if (ret)
		goto destroy_cqx;
	cq->dev = dev;
	*cq_out = cq;
	return 0;

destroy_cqx:
	dev->verbs->destroy_cq(ibv_cq_ex_to_cq(cqx));
free_cq:
	free(cq);
	return ret;
}

void srd_dev_cq_close(struct srd_dev_cq *cq)
{
	if (!cq)
		return;
	srd_dev_cq_fini(cq);
	cq->dev->verbs->destroy_cq(cq->cq);
	free(cq);
}

/* Callbacks for tables that do not care about some events. */
const srd_dev_wc_cb srd_dev_cq_wc_ignore = srd_dev_cq_ignore_wc;
const srd_dev_batch_cb srd_dev_cq_batch_ignore = srd_dev_cq_ignore_batch;
