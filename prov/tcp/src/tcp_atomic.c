/* SPDX-License-Identifier: MIT */
/*
 * fi_ops_atomic, executed by the target in software (util_atomic): one
 * ATOMIC frame carries the operands and compare values (copied at post
 * time, so the application's buffers are free when the call returns);
 * the target checks the region (util_mr_check), applies the op
 * (util_atomic_apply) and answers ATOMIC_RESP with the old values
 * (fetch, compare) or just the status. One call moves at most
 * TCP_ATOMIC_MAX bytes of operands (domain atomic_max_bytes).
 */
#include "weft/compat.h"

#include <string.h>

#include "tcp.h"

static int tcp_atomic_check(const struct util_atomic_args *a, size_t *dtsize)
{
	size_t count;
	int ret;

	ret = util_atomic_kind_valid(a->kind, a->op, a->datatype);
	if (ret) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"atomic: op %d on datatype %d not supported\n", a->op,
			a->datatype);
		return ret;
	}
	*dtsize = util_atomic_datatype_size(a->datatype);
	if (a->rma_count != 1 || !a->rma) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"atomic: %zu remote iocs (exactly 1)\n", a->rma_count);
		return -FI_EINVAL;
	}
	count = a->rma[0].count;
	if (!count || count > TCP_ATOMIC_MAX / *dtsize ||
	    (a->op != FI_ATOMIC_READ &&
	     !util_atomic_iocs_ok(a->iov, a->count, TCP_IOV_LIMIT,
				 count)) ||
	    (a->kind == UTIL_ATOMIC_COMPARE &&
	     !util_atomic_iocs_ok(a->cmp, a->cmp_count, TCP_IOV_LIMIT,
				 count)) ||
	    (a->kind != UTIL_ATOMIC_WRITE &&
	     !util_atomic_iocs_ok(a->res, a->res_count, TCP_IOV_LIMIT,
				 count))) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"atomic: %zu elements: operand/compare/result counts "
			"differ, or more than %d bytes\n", count,
			TCP_ATOMIC_MAX);
		return -FI_EINVAL;
	}
	return 0;
}

static void tcp_atomic_fill(struct tcp_ep *ep, struct tcp_op *op,
			    struct tcp_tx *tx, const struct util_atomic_args *a,
			    size_t dtsize)
{
	size_t count = a->rma[0].count, i, len = 0;
	struct tcp_hdr h = {
		.op = TCP_OP_ATOMIC, .id = tcp_op_id(op),
		.flags = (a->flags & FI_REMOTE_CQ_DATA) ? TCP_F_CQ_DATA : 0,
		.key = a->rma[0].key, .addr = a->rma[0].addr, .data = a->data,
		.atomic_op = (uint8_t)a->op, .datatype = (uint8_t)a->datatype,
		.kind = a->kind, .count = (uint32_t)count,
	};
	struct iovec iov = { .iov_base = tx->data };

	if (a->op != FI_ATOMIC_READ)
		len = util_atomic_gather(a->iov, a->count, dtsize, tx->data);
	if (a->kind == UTIL_ATOMIC_COMPARE)
		len += util_atomic_gather(a->cmp, a->cmp_count, dtsize,
					 tx->data + len);
	iov.iov_len = len;
	h.len = len;
	tcp_tx_frame(tx, &h, &iov, len ? 1 : 0);
	tx->kind = TCP_TX_OP;
	tx->op = op;

	op->context = a->context;
	op->comp_flags = FI_ATOMIC |
			 (a->kind == UTIL_ATOMIC_WRITE ? FI_WRITE : FI_READ);
	op->inject = a->flags & UTIL_OP_NO_COMP;
	op->want_comp = util_ep_tx_wants_comp(&ep->util, a->flags);
	op->cntr = a->kind == UTIL_ATOMIC_WRITE ? UTIL_CNTR_WRITE :
						  UTIL_CNTR_READ;
	op->frames = 1;
	op->len = a->kind == UTIL_ATOMIC_WRITE ? 0 : count * dtsize;
	op->iov_count = a->kind == UTIL_ATOMIC_WRITE ? 0 : a->res_count;
	for (i = 0; i < op->iov_count; i++) {
		op->iov[i].iov_base = a->res[i].addr;
		op->iov[i].iov_len = a->res[i].count * dtsize;
	}
}

static ssize_t tcp_atomic_post(struct tcp_ep *ep,
			       const struct util_atomic_args *a)
{
	struct tcp_peer *peer;
	struct tcp_op *op;
	struct tcp_tx *tx;
	size_t dtsize;
	ssize_t ret;

	ret = tcp_atomic_check(a, &dtsize);
	if (ret)
		return ret;
	util_lock_acquire(&ep->util.lock);
	ret = tcp_peer_tx(ep, a->addr, &peer);
	if (ret)
		goto unlock;
	ret = -FI_EAGAIN;
	op = tcp_op_get(ep, peer, TCP_OPT_ATOMIC);
	if (!op)
		goto unlock;
	tx = tcp_tx_get(ep);
	if (!tx) {
		tcp_op_release(ep, op);
		goto unlock;
	}
	tcp_atomic_fill(ep, op, tx, a, dtsize);
	tcp_peer_push(ep, peer, tx, a->flags & FI_MORE);
	ret = 0;
unlock:
	util_lock_release(&ep->util.lock);
	return ret;
}

/* ---- target --------------------------------------------------------- */

static uint64_t tcp_atomic_access(const struct tcp_hdr *h)
{
	if (h->kind == UTIL_ATOMIC_WRITE)
		return FI_REMOTE_WRITE;
	if (h->kind == UTIL_ATOMIC_FETCH && h->atomic_op == FI_ATOMIC_READ)
		return FI_REMOTE_READ;
	return FI_REMOTE_READ | FI_REMOTE_WRITE;
}

int tcp_atomic_begin(struct tcp_conn *c)
{
	const struct tcp_hdr *h = &c->rh;
	size_t dtsize = util_atomic_datatype_size(h->datatype);
	uint64_t bytes, want;
	void *local = NULL;
	int ret;

	if (util_atomic_kind_valid(h->kind, h->atomic_op, h->datatype) ||
	    !dtsize || h->count > TCP_ATOMIC_MAX / dtsize) {
		c->sink.status = FI_EOPNOTSUPP;
	} else {
		bytes = (uint64_t)h->count * dtsize;
		want = (h->atomic_op == FI_ATOMIC_READ ? 0 : bytes) +
		       (h->kind == UTIL_ATOMIC_COMPARE ? bytes : 0);
		if (h->len != want)
			return -TCP_EPROTO;
		ret = util_mr_check(&c->ep->util.domain->mr_map, h->key,
				    h->addr, bytes, tcp_atomic_access(h),
				    &local);
		c->sink.status = -ret;
	}
	c->sink.iov[0].iov_base = c->scratch;
	c->sink.iov[0].iov_len = h->len;
	c->sink.count = 1;
	c->sink.cap = h->len;
	c->sink.arg = local;
	return 0;
}

void tcp_atomic_end(struct tcp_conn *c)
{
	const struct tcp_hdr *h = &c->rh;
	size_t bytes = h->count * util_atomic_datatype_size(h->datatype);
	bool fetch = h->kind != UTIL_ATOMIC_WRITE;
	struct tcp_hdr r = { .op = TCP_OP_ATOMIC_RESP, .id = h->id };
	const uint8_t *operand = c->scratch;
	struct tcp_tx *tx = tcp_tx_ctrl(c->ep);
	struct iovec iov;

	if (!tx)
		return;
	if (!c->sink.status) {
		util_atomic_apply(h->atomic_op, h->datatype, c->sink.arg,
				  h->atomic_op == FI_ATOMIC_READ ? NULL : operand,
				  h->kind == UTIL_ATOMIC_COMPARE ?
				  operand + bytes : NULL,
				  fetch ? tx->data : NULL, h->count);
		tcp_rma_target_events(c->ep, c->peer, fetch ? FI_REMOTE_READ :
				      FI_REMOTE_WRITE, h);
		r.len = fetch ? bytes : 0;
	}
	r.status = (uint32_t)c->sink.status;
	iov.iov_base = tx->data;
	iov.iov_len = r.len;
	tcp_tx_frame(tx, &r, &iov, r.len ? 1 : 0);
	tcp_peer_push(c->ep, c->peer, tx, false);
}

/* ---- initiator: the answer ------------------------------------------ */

int tcp_atomic_resp_begin(struct tcp_conn *c)
{
	const struct tcp_hdr *h = &c->rh;
	struct tcp_op *op = tcp_op_find(c->ep, c->peer, h->id);

	if (!op || op->type != TCP_OPT_ATOMIC || op->answered)
		return -TCP_EPROTO;
	c->sink.status = tcp_wire_status(h->status);
	if ((c->sink.status && h->len) || (!c->sink.status && h->len != op->len))
		return -TCP_EPROTO;
	memcpy(c->sink.iov, op->iov, op->iov_count * sizeof(op->iov[0]));
	c->sink.count = op->iov_count;
	c->sink.cap = h->len;
	c->sink.arg = op;
	return 0;
}

void tcp_atomic_resp_end(struct tcp_conn *c)
{
	tcp_op_answer(c->ep, c->sink.arg, c->sink.status);
}

/* ---- fi_ops_atomic ---------------------------------------------------- */

static ssize_t tcp_atomic_write(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_rma_ioc rma = { .addr = addr, .count = count, .key = key };
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_WRITE, .iov = &ioc, .count = 1,
		.addr = dest, .rma = &rma, .rma_count = 1,
		.datatype = datatype, .op = op, .context = context,
		.flags = to_tcp_ep(ep)->util.tx_op_flags,
	};

	(void)desc;
	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

static ssize_t tcp_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct fi_rma_ioc rma = { .addr = addr, .key = key };
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_WRITE, .iov = iov, .count = count,
		.addr = dest, .rma = &rma, .rma_count = 1,
		.datatype = datatype, .op = op, .context = context,
		.flags = to_tcp_ep(ep)->util.tx_op_flags,
	};
	size_t i;

	(void)desc;
	for (i = 0; iov && i < count; i++)
		rma.count += iov[i].count;
	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

static ssize_t tcp_atomic_writemsg(struct fid_ep *ep,
				   const struct fi_msg_atomic *m,
				   uint64_t flags)
{
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_WRITE, .iov = m->msg_iov,
		.count = m->iov_count, .addr = m->addr, .rma = m->rma_iov,
		.rma_count = m->rma_iov_count, .datatype = m->datatype,
		.op = m->op, .data = m->data, .context = m->context,
		.flags = util_ep_user_flags(flags),
	};

	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

static ssize_t tcp_atomic_inject(struct fid_ep *ep, const void *buf,
				 size_t count, fi_addr_t dest, uint64_t addr,
				 uint64_t key, enum fi_datatype datatype,
				 enum fi_op op)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_rma_ioc rma = { .addr = addr, .count = count, .key = key };
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_WRITE, .iov = &ioc, .count = 1,
		.addr = dest, .rma = &rma, .rma_count = 1,
		.datatype = datatype, .op = op,
		.flags = FI_INJECT | UTIL_OP_NO_COMP,
	};

	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

static ssize_t tcp_atomic_readwrite(struct fid_ep *ep, const void *buf,
				    size_t count, void *desc, void *result,
				    void *result_desc, fi_addr_t dest,
				    uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op,
				    void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct fi_rma_ioc rma = { .addr = addr, .count = count, .key = key };
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_FETCH, .iov = &ioc, .count = buf ? 1 : 0,
		.res = &res, .res_count = 1, .addr = dest, .rma = &rma,
		.rma_count = 1, .datatype = datatype, .op = op,
		.context = context, .flags = to_tcp_ep(ep)->util.tx_op_flags,
	};

	(void)desc; (void)result_desc;
	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

static ssize_t tcp_atomic_readwritev(struct fid_ep *ep,
				     const struct fi_ioc *iov, void **desc,
				     size_t count, struct fi_ioc *resultv,
				     void **result_desc, size_t result_count,
				     fi_addr_t dest, uint64_t addr,
				     uint64_t key, enum fi_datatype datatype,
				     enum fi_op op, void *context)
{
	struct fi_rma_ioc rma = { .addr = addr, .key = key };
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_FETCH, .iov = iov, .count = count,
		.res = resultv, .res_count = result_count, .addr = dest,
		.rma = &rma, .rma_count = 1, .datatype = datatype, .op = op,
		.context = context, .flags = to_tcp_ep(ep)->util.tx_op_flags,
	};
	size_t i;

	(void)desc; (void)result_desc;
	for (i = 0; resultv && i < result_count; i++)
		rma.count += resultv[i].count;
	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

static ssize_t tcp_atomic_readwritemsg(struct fid_ep *ep,
				       const struct fi_msg_atomic *m,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_FETCH, .iov = m->msg_iov,
		.count = m->iov_count, .res = resultv,
		.res_count = result_count, .addr = m->addr,
		.rma = m->rma_iov, .rma_count = m->rma_iov_count,
		.datatype = m->datatype, .op = m->op, .data = m->data,
		.context = m->context,
		.flags = util_ep_user_flags(flags),
	};

	(void)result_desc;
	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

static ssize_t tcp_atomic_compwrite(struct fid_ep *ep, const void *buf,
				    size_t count, void *desc,
				    const void *compare, void *compare_desc,
				    void *result, void *result_desc,
				    fi_addr_t dest, uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op,
				    void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc cmp = { .addr = (void *)compare, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct fi_rma_ioc rma = { .addr = addr, .count = count, .key = key };
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_COMPARE, .iov = &ioc, .count = 1,
		.cmp = &cmp, .cmp_count = 1, .res = &res, .res_count = 1,
		.addr = dest, .rma = &rma, .rma_count = 1,
		.datatype = datatype, .op = op, .context = context,
		.flags = to_tcp_ep(ep)->util.tx_op_flags,
	};

	(void)desc; (void)compare_desc; (void)result_desc;
	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

static ssize_t tcp_atomic_compwritev(struct fid_ep *ep,
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
	struct fi_rma_ioc rma = { .addr = addr, .key = key };
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_COMPARE, .iov = iov, .count = count,
		.cmp = comparev, .cmp_count = compare_count, .res = resultv,
		.res_count = result_count, .addr = dest, .rma = &rma,
		.rma_count = 1, .datatype = datatype, .op = op,
		.context = context, .flags = to_tcp_ep(ep)->util.tx_op_flags,
	};
	size_t i;

	(void)desc; (void)compare_desc; (void)result_desc;
	for (i = 0; iov && i < count; i++)
		rma.count += iov[i].count;
	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

static ssize_t tcp_atomic_compwritemsg(struct fid_ep *ep,
				       const struct fi_msg_atomic *m,
				       const struct fi_ioc *comparev,
				       void **compare_desc,
				       size_t compare_count,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	struct util_atomic_args a = {
		.kind = UTIL_ATOMIC_COMPARE, .iov = m->msg_iov,
		.count = m->iov_count, .cmp = comparev,
		.cmp_count = compare_count, .res = resultv,
		.res_count = result_count, .addr = m->addr,
		.rma = m->rma_iov, .rma_count = m->rma_iov_count,
		.datatype = m->datatype, .op = m->op, .data = m->data,
		.context = m->context,
		.flags = util_ep_user_flags(flags),
	};

	(void)compare_desc; (void)result_desc;
	return tcp_atomic_post(to_tcp_ep(ep), &a);
}

const struct fi_ops_atomic tcp_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = tcp_atomic_write,
	.writev = tcp_atomic_writev,
	.writemsg = tcp_atomic_writemsg,
	.inject = tcp_atomic_inject,
	.readwrite = tcp_atomic_readwrite,
	.readwritev = tcp_atomic_readwritev,
	.readwritemsg = tcp_atomic_readwritemsg,
	.compwrite = tcp_atomic_compwrite,
	.compwritev = tcp_atomic_compwritev,
	.compwritemsg = tcp_atomic_compwritemsg,
	.writevalid = util_ep_atomic_writevalid,
	.readwritevalid = util_ep_atomic_readwritevalid,
	.compwritevalid = util_ep_atomic_compwritevalid,
};
