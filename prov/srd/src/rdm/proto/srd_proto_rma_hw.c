/* SPDX-License-Identifier: MIT */
/*
 * RMA by hardware RDMA read/write: one work request per piece of a local
 * iovec, at most the device's max_rdma_size each. The target's device
 * checks key, bounds and access; a violation comes back as an error
 * completion here and nothing is written there.
 */
#include "weft/compat.h"
#include "../srd_rma.h"

/* Where byte `off` of the op's local iovecs is. */
static size_t srd_rma_hw_iov_at(const struct srd_rma_op *op, uint64_t off,
				uint64_t *in)
{
	size_t i;

	for (i = 0; i < op->iov_count; i++) {
		if (off < op->iov[i].iov_len)
			break;
		off -= op->iov[i].iov_len;
	}
	*in = off;
	return i;
}

static int srd_rma_hw_post_one(struct srd_ep *ep, struct srd_rma_op *op)
{
	uint64_t in, n;
	size_t i = srd_rma_hw_iov_at(op, op->posted, &in);
	int ret;

	n = op->iov[i].iov_len - in;
	if (n > ep->rma->max_rma_size)
		n = ep->rma->max_rma_size;
	if (op->pkt_flags & SRD_PKT_F_CQ_DATA)	/* one WR: srd_rma_op_decide */
		ret = srd_post_rdma_write_imm(ep, op->peer, &op->hdr,
					      op->cq_data, op->lkey[i],
					      (uint8_t *)op->iov[i].iov_base + in,
					      (size_t)n, (uint32_t)op->key,
					      op->addr + op->posted);
	else
		ret = srd_post_rdma(ep, op->peer, &op->hdr,
				    op->kind == SRD_RMA_WRITE, op->lkey[i],
				    (uint8_t *)op->iov[i].iov_base + in,
				    (size_t)n, (uint32_t)op->key,
				    op->addr + op->posted);
	if (ret)
		return ret;
	op->posted += n;
	op->inflight++;
	return 0;
}

static int srd_rma_hw_pump(struct srd_ep *ep, struct srd_rma_op *op)
{
	int ret;

	if (op->key > UINT32_MAX) {
		/* Provider keys are device rkeys: this one cannot exist. */
		return -FI_EINVAL;
	}
	if (!op->keys_ready) {
		ret = srd_rma_local_keys(ep, op);
		if (ret)
			return ret;
		op->keys_ready = true;
	}
	while (op->posted < op->len) {
		ret = srd_rma_hw_post_one(ep, op);
		if (ret)
			return ret;
	}
	op->all_posted = true;
	return 0;
}

static void srd_rma_hw_wc(struct srd_ep *ep, struct srd_rma_op *op,
			  const struct srd_dev_wc *wc)
{
	struct srd_dev_wc_err e;

	op->inflight--;
	if (WEFT_UNLIKELY(wc->status != IBV_WC_SUCCESS)) {
		srd_dev_wc_err_map(wc->status, wc->vendor_err, &e);
		/* On an RDMA operation "bad remote address" is the target
		 * region refusing it (key, bounds, access), not a lost
		 * peer. */
		if (e.prov_errno == SRD_EFA_IO_REMOTE_BAD_ADDRESS ||
		    wc->status == IBV_WC_REM_ACCESS_ERR)
			e.err = FI_EACCES;
		srd_rma_op_fail(op, e.err, e.prov_errno);
	}
	srd_rma_op_try_complete(ep, op);
}

const struct srd_rma_carrier srd_rma_hw = {
	.name = "hardware",
	.pump = srd_rma_hw_pump,
	.wc = srd_rma_hw_wc,
};
