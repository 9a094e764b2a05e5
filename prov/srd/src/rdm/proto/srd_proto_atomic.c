/* SPDX-License-Identifier: MIT */
/*
 * fi_ops_atomic for srd, emulated: one ATOMIC_REQ carries the operands
 * (and compare values); the target checks the region with util_mr_check,
 * applies the op with util_atomic_apply and answers ATOMIC_RESP with the
 * old values (fetch, compare) or just the status. Operands and results of
 * one call fit one packet (srd_rma_ep.seg_max), so the request is built
 * at post time and the application's buffers are free when the call
 * returns (results excepted).
 */
#include "weft/compat.h"
#include "../srd_rma.h"
#include "weft/util_atomic.h"

#include <string.h>

static int srd_atomic_args_check(struct srd_ep *ep,
				 const struct util_atomic_args *a,
				 size_t *dtsize)
{
	size_t count, payload;
	int ret;

	ret = util_atomic_kind_valid(a->kind, a->op, a->datatype);
	if (ret) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"atomic: op %d on datatype %d not supported here\n",
			a->op, a->datatype);
		return ret;
	}
	*dtsize = util_atomic_datatype_size(a->datatype);
	if (a->rma_count != 1 || !a->rma) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"atomic: %zu remote iocs (exactly 1)\n", a->rma_count);
		return -FI_EINVAL;
	}
	count = a->rma[0].count;
	payload = count * *dtsize * (a->kind == UTIL_ATOMIC_COMPARE ? 2 : 1);
	if (!count || count > UINT32_MAX || payload > ep->rma->seg_max ||
	    (a->op != FI_ATOMIC_READ &&
	     !util_atomic_iocs_ok(a->iov, a->count, SRD_IOV_MAX,
				 count)) ||
	    (a->kind == UTIL_ATOMIC_COMPARE &&
	     !util_atomic_iocs_ok(a->cmp, a->cmp_count, SRD_IOV_MAX,
				 count)) ||
	    (a->kind != UTIL_ATOMIC_WRITE &&
	     !util_atomic_iocs_ok(a->res, a->res_count, SRD_IOV_MAX,
				 count))) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"atomic: %zu elements: operand/compare/result counts "
			"differ, or more than one packet (%u bytes)\n", count,
			ep->rma->seg_max);
		return -FI_EINVAL;
	}
	if ((a->flags & FI_INJECT) && payload > ep->pc.inject_size) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"atomic: inject of %zu bytes (max %zu)\n", payload,
			ep->pc.inject_size);
		return -FI_EINVAL;
	}
	return 0;
}

static void srd_atomic_op_fill(struct srd_ep *ep, struct srd_rma_op *op,
			       const struct util_atomic_args *a, size_t dtsize)
{
	size_t i;

	op->kind = SRD_RMA_ATOMIC;
	op->context = a->context;
	op->comp_flags = FI_ATOMIC |
			 (a->kind == UTIL_ATOMIC_WRITE ? FI_WRITE : FI_READ);
	op->want_comp = util_ep_tx_wants_comp(&ep->util, a->flags);
	op->addr = a->rma[0].addr;
	op->key = a->rma[0].key;
	op->at.op = (uint8_t)a->op;
	op->at.datatype = (uint8_t)a->datatype;
	op->at.kind = a->kind;
	op->at.count = (uint32_t)a->rma[0].count;
	op->len = op->at.count * dtsize;
	if (a->kind == UTIL_ATOMIC_WRITE)
		return;
	op->at.res_count = a->res_count;
	for (i = 0; i < a->res_count; i++) {
		op->at.res[i].iov_base = a->res[i].addr;
		op->at.res[i].iov_len = a->res[i].count * dtsize;
	}
}

static void srd_atomic_req_build(struct srd_rma_op *op,
				 const struct util_atomic_args *a,
				 size_t dtsize, struct srd_txbuf *tb,
				 size_t *len)
{
	struct srd_pkt_atomic *q = (struct srd_pkt_atomic *)tb->data;
	uint8_t *p = (uint8_t *)(q + 1);
	uint16_t flags = a->flags & FI_REMOTE_CQ_DATA ? SRD_PKT_F_CQ_DATA : 0;

	memset(q, 0, sizeof(*q));
	srd_pkt_base_init(&q->base, SRD_PKT_ATOMIC_REQ, flags,
			  SRD_PEER_ID_NONE);
	q->tx_id = op->id;
	q->op = op->at.op;
	q->datatype = op->at.datatype;
	q->kind = op->at.kind;
	q->addr = op->addr;
	q->key = op->key;
	q->count = op->at.count;
	q->cq_data = flags ? (uint32_t)a->data : 0;
	if (a->op != FI_ATOMIC_READ)
		p += util_atomic_gather(a->iov, a->count, dtsize, p);
	if (a->kind == UTIL_ATOMIC_COMPARE)
		p += util_atomic_gather(a->cmp, a->cmp_count, dtsize, p);
	*len = (size_t)(p - tb->data);
}

static ssize_t srd_atomic_post_locked(struct srd_ep *ep,
				      const struct util_atomic_args *a)
{
	struct srd_txbuf *tb;
	struct srd_rma_op *op;
	struct srd_peer *peer;
	size_t dtsize, len;
	int ret;

	ret = srd_atomic_args_check(ep, a, &dtsize);
	if (ret)
		return ret;
	ret = srd_rma_peer(ep, a->addr, &peer);
	if (ret)
		return ret;
	op = srd_rma_op_get(ep);
	if (!op)
		return -FI_EAGAIN;
	tb = srd_txbuf_get(ep);
	if (!tb) {
		srd_rma_op_put(ep, op);
		return -FI_EAGAIN;
	}
	op->peer = peer;
	srd_atomic_op_fill(ep, op, a, dtsize);
	srd_atomic_req_build(op, a, dtsize, tb, &len);
	tb->owner = &op->hdr;
	op->carrier = &srd_rma_atomic;
	op->all_posted = true;
	srd_rma_send(ep, op, tb, len);
	return 0;
}

static ssize_t srd_atomic_post(struct fid_ep *ep_fid,
			       const struct util_atomic_args *a)
{
	struct srd_ep *ep = to_srd_ep(ep_fid);
	ssize_t ret;

	util_lock_acquire(&ep->util.lock);
	ret = srd_atomic_post_locked(ep, a);
	util_lock_release(&ep->util.lock);
	return ret;
}

/* ---- fi_ops_atomic -------------------------------------------------------- */

static ssize_t srd_atomic_writemsg(struct fid_ep *ep,
				   const struct fi_msg_atomic *msg,
				   uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_srd_ep(ep)->util, "fi_atomicmsg");
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_WRITE, .iov = msg->msg_iov,
		.count = msg->iov_count, .addr = msg->addr,
		.rma = msg->rma_iov, .rma_count = msg->rma_iov_count,
		.datatype = msg->datatype, .op = msg->op, .data = msg->data,
		.context = msg->context, .flags = util_ep_user_flags(flags),
	};

	return srd_atomic_post(ep, &a);
}

static ssize_t srd_atomic_inject_msg(struct fid_ep *ep,
				     const struct fi_msg_atomic *msg)
{
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_WRITE, .iov = msg->msg_iov,
		.count = msg->iov_count, .addr = msg->addr,
		.rma = msg->rma_iov, .rma_count = msg->rma_iov_count,
		.datatype = msg->datatype, .op = msg->op,
		.flags = FI_INJECT | UTIL_OP_NO_COMP,
	};

	return srd_atomic_post(ep, &a);
}

static ssize_t srd_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct fi_rma_ioc rma = {
		.addr = addr, .count = util_atomic_ioc_total(iov, count),
		.key = key,
	};
	struct fi_msg_atomic msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count,
		.addr = dest, .rma_iov = &rma, .rma_iov_count = 1,
		.datatype = datatype, .op = op, .context = context,
	};

	return srd_atomic_writemsg(ep, &msg, to_srd_ep(ep)->util.tx_op_flags);
}

static ssize_t srd_atomic_write(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };

	return srd_atomic_writev(ep, &ioc, &desc, 1, dest, addr, key,
				 datatype, op, context);
}

static ssize_t srd_atomic_inject(struct fid_ep *ep, const void *buf,
				 size_t count, fi_addr_t dest, uint64_t addr,
				 uint64_t key, enum fi_datatype datatype,
				 enum fi_op op)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_rma_ioc rma = { .addr = addr, .count = count, .key = key };
	struct fi_msg_atomic msg = {
		.msg_iov = &ioc, .iov_count = 1, .addr = dest,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = datatype,
		.op = op,
	};

	return srd_atomic_inject_msg(ep, &msg);
}

static ssize_t srd_atomic_readwritemsg(struct fid_ep *ep,
				       const struct fi_msg_atomic *msg,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_srd_ep(ep)->util, "fi_fetch_atomicmsg");
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_FETCH, .iov = msg->msg_iov,
		.count = msg->iov_count, .res = resultv,
		.res_count = result_count, .addr = msg->addr,
		.rma = msg->rma_iov, .rma_count = msg->rma_iov_count,
		.datatype = msg->datatype, .op = msg->op, .data = msg->data,
		.context = msg->context,
		.flags = util_ep_user_flags(flags) & ~FI_INJECT,
	};

	return srd_atomic_post(ep, &a);
}

static ssize_t srd_atomic_readwritev(struct fid_ep *ep,
				     const struct fi_ioc *iov, void **desc,
				     size_t count, struct fi_ioc *resultv,
				     void **result_desc, size_t result_count,
				     fi_addr_t dest, uint64_t addr,
				     uint64_t key, enum fi_datatype datatype,
				     enum fi_op op, void *context)
{
	struct fi_rma_ioc rma = {
		.addr = addr, .key = key,
		.count = util_atomic_ioc_total(resultv, result_count),
	};
	struct fi_msg_atomic msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count,
		.addr = dest, .rma_iov = &rma, .rma_iov_count = 1,
		.datatype = datatype, .op = op, .context = context,
	};

	return srd_atomic_readwritemsg(ep, &msg, resultv, result_desc,
				       result_count,
				       to_srd_ep(ep)->util.tx_op_flags);
}

static ssize_t srd_atomic_readwrite(struct fid_ep *ep, const void *buf,
				    size_t count, void *desc, void *result,
				    void *result_desc, fi_addr_t dest,
				    uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op,
				    void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };

	return srd_atomic_readwritev(ep, &ioc, &desc, buf ? 1 : 0, &res,
				     &result_desc, 1, dest, addr, key,
				     datatype, op, context);
}

static ssize_t srd_atomic_compwritemsg(struct fid_ep *ep,
				       const struct fi_msg_atomic *msg,
				       const struct fi_ioc *comparev,
				       void **compare_desc,
				       size_t compare_count,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_srd_ep(ep)->util, "fi_compare_atomicmsg");
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_COMPARE, .iov = msg->msg_iov,
		.count = msg->iov_count, .cmp = comparev,
		.cmp_count = compare_count, .res = resultv,
		.res_count = result_count, .addr = msg->addr,
		.rma = msg->rma_iov, .rma_count = msg->rma_iov_count,
		.datatype = msg->datatype, .op = msg->op, .data = msg->data,
		.context = msg->context,
		.flags = util_ep_user_flags(flags) & ~FI_INJECT,
	};

	return srd_atomic_post(ep, &a);
}

static ssize_t srd_atomic_compwritev(struct fid_ep *ep,
				     const struct fi_ioc *iov, void **desc,
				     size_t count,
				     const struct fi_ioc *comparev,
				     void **compare_desc, size_t compare_count,
				     struct fi_ioc *resultv,
				     void **result_desc, size_t result_count,
				     fi_addr_t dest, uint64_t addr,
				     uint64_t key, enum fi_datatype datatype,
				     enum fi_op op, void *context)
{
	struct fi_rma_ioc rma = {
		.addr = addr, .key = key,
		.count = util_atomic_ioc_total(iov, count),
	};
	struct fi_msg_atomic msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count,
		.addr = dest, .rma_iov = &rma, .rma_iov_count = 1,
		.datatype = datatype, .op = op, .context = context,
	};

	return srd_atomic_compwritemsg(ep, &msg, comparev, compare_desc,
				       compare_count, resultv, result_desc,
				       result_count,
				       to_srd_ep(ep)->util.tx_op_flags);
}

static ssize_t srd_atomic_compwrite(struct fid_ep *ep, const void *buf,
				    size_t count, void *desc,
				    const void *compare, void *compare_desc,
				    void *result, void *result_desc,
				    fi_addr_t dest, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype,
				    enum fi_op op, void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc cmp = { .addr = (void *)compare, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };

	return srd_atomic_compwritev(ep, &ioc, &desc, 1, &cmp, &compare_desc,
				     1, &res, &result_desc, 1, dest, addr,
				     key, datatype, op, context);
}

const struct fi_ops_atomic srd_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = srd_atomic_write,
	.writev = srd_atomic_writev,
	.writemsg = srd_atomic_writemsg,
	.inject = srd_atomic_inject,
	.readwrite = srd_atomic_readwrite,
	.readwritev = srd_atomic_readwritev,
	.readwritemsg = srd_atomic_readwritemsg,
	.compwrite = srd_atomic_compwrite,
	.compwritev = srd_atomic_compwritev,
	.compwritemsg = srd_atomic_compwritemsg,
	.writevalid = util_ep_atomic_writevalid,
	.readwritevalid = util_ep_atomic_readwritevalid,
	.compwritevalid = util_ep_atomic_compwritevalid,
};

/* ---- wire ------------------------------------------------------------------ */

static uint64_t srd_atomic_access(const struct srd_pkt_atomic *q)
{
	if (q->op == FI_ATOMIC_READ)
		return FI_REMOTE_READ;
	if (q->kind == UTIL_ATOMIC_WRITE)
		return FI_REMOTE_WRITE;
	return FI_REMOTE_READ | FI_REMOTE_WRITE;
}

/* Validated by srd_pkt_validate: kind/op/datatype combination, count and
 * the operand bytes that follow; the old values a fetch asks for are
 * checked against our packet buffer here, before anything is applied. */
void srd_atomic_handle_req(struct srd_ep *ep, struct srd_peer *peer,
			   const void *pkt, size_t len)
{
	const struct srd_pkt_atomic *q = pkt;
	size_t bytes = q->count * util_atomic_datatype_size(q->datatype);
	const uint8_t *operand = (const uint8_t *)(q + 1);
	struct srd_txbuf *tb = srd_txbuf_get(ep);
	struct srd_pkt_resp *r;
	uint64_t access = srd_atomic_access(q);
	void *local;
	int ret;

	if (!tb) {
		srd_rma_defer(ep, peer, pkt, len);
		return;
	}
	tb->owner = NULL;
	r = (struct srd_pkt_resp *)tb->data;
	memset(r, 0, sizeof(*r));
	srd_pkt_base_init(&r->base, SRD_PKT_ATOMIC_RESP, 0, SRD_PEER_ID_NONE);
	r->tx_id = q->tx_id;
	ret = srd_pkt_atomic_answer_check(q, ep->pkt_size);
	if (!ret)
		ret = util_mr_check(&ep->domain->util.mr_map, q->key, q->addr,
				    bytes, access, &local);
	if (!ret)
		ret = util_atomic_apply(q->op, q->datatype, local,
					q->op == FI_ATOMIC_READ ? NULL : operand,
					q->kind == UTIL_ATOMIC_COMPARE ?
					operand + bytes : NULL,
					q->kind == UTIL_ATOMIC_WRITE ? NULL : r + 1,
					q->count);
	r->status = ret;
	if (!ret && q->kind != UTIL_ATOMIC_WRITE)
		r->seg_len = (uint32_t)bytes;
	if (!ret)
		srd_rma_target_done(ep, peer, FI_ATOMIC | (access &
				    FI_REMOTE_WRITE ? FI_REMOTE_WRITE :
				    FI_REMOTE_READ),
				    q->base.flags & SRD_PKT_F_CQ_DATA,
				    q->cq_data, bytes);
	srd_pkt_send(ep, peer, tb, sizeof(*r) + r->seg_len);
}

void srd_atomic_handle_resp(struct srd_ep *ep, struct srd_peer *peer,
			    const void *pkt, size_t len)
{
	const struct srd_pkt_resp *r = pkt;
	struct srd_rma_op *op = srd_rma_op_by_id(ep, r->tx_id, peer);
	uint64_t want;

	if (WEFT_UNLIKELY(!op || op->kind != SRD_RMA_ATOMIC || !op->inflight)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"ATOMIC_RESP from qpn %u for unknown transfer 0x%x\n",
			peer->name.qpn, r->tx_id);
		return;
	}
	want = op->at.kind == UTIL_ATOMIC_WRITE ? 0 : op->len;
	if (r->status)
		srd_rma_op_fail(op, -r->status, 0);
	else if (r->seg_len != want)
		srd_rma_op_fail(op, FI_EIO, 0);
	else
		util_iov_copy_to(op->at.res, op->at.res_count, 0, r + 1, want);
	op->inflight--;
	srd_rma_op_try_complete(ep, op);
}

/* One request, built at post time; its answer is ATOMIC_RESP. */
const struct srd_rma_carrier srd_rma_atomic = {
	.name = "atomic",
	.wc = srd_rma_emu_wc,
	.answers = true,
};
