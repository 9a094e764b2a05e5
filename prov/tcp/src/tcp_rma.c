/* SPDX-License-Identifier: MIT */
/*
 * RMA over the connection: WRITE carries the data, which the target reads
 * straight into the registered region after checking key, bounds and
 * access (util_mr_check), then ACKs with the status; READ asks, and the
 * target answers READ_RESP with the data written from the region itself
 * (no copy), which the initiator reads straight into its buffers. The
 * initiator's op completes on the answer, so target-side errors (bad key,
 * out of bounds) reach it as error completions.
 */
#include "weft/compat.h"

#include <string.h>

#include "tcp.h"

struct tcp_rma_args {
	const struct iovec *iov;
	size_t count;
	fi_addr_t addr;
	const struct fi_rma_iov *rma;
	size_t rma_count;
	uint64_t data;
	void *context;
	uint64_t flags;
};

static int tcp_rma_check(const struct tcp_rma_args *a, size_t *len)
{
	if (a->count > TCP_IOV_LIMIT || (a->count && !a->iov) ||
	    a->rma_count != 1 || !a->rma) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"RMA: %zu local iovs, %zu remote (at most %d and 1)\n",
			a->count, a->rma_count, TCP_IOV_LIMIT);
		return -FI_EINVAL;
	}
	*len = util_iov_total(a->iov, a->count);
	if (*len != a->rma[0].len || *len > TCP_MAX_MSG_SIZE ||
	    ((a->flags & FI_INJECT) && *len > TCP_INJECT_MAX)) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"RMA: %zu local bytes for %zu remote ones, or too many\n",
			*len, (size_t)a->rma[0].len);
		return -FI_EINVAL;
	}
	return 0;
}

static void tcp_rma_op_fill(struct tcp_ep *ep, struct tcp_op *op, bool write,
			    const struct tcp_rma_args *a, size_t len)
{
	op->context = a->context;
	op->comp_flags = FI_RMA | (write ? FI_WRITE : FI_READ);
	op->inject = a->flags & UTIL_OP_NO_COMP;
	op->want_comp = util_ep_tx_wants_comp(&ep->util, a->flags);
	op->cntr = write ? UTIL_CNTR_WRITE : UTIL_CNTR_READ;
	op->len = len;
	op->frames = 1;
	op->iov_count = write ? 0 : a->count;
	if (!write)
		memcpy(op->iov, a->iov, a->count * sizeof(*a->iov));
}

static void tcp_rma_frame(struct tcp_op *op, struct tcp_tx *tx, bool write,
			  const struct tcp_rma_args *a, size_t len)
{
	struct tcp_hdr h = { .id = tcp_op_id(op), .key = a->rma[0].key,
			     .addr = a->rma[0].addr, .data = a->data };
	struct iovec copy;

	if (write && (a->flags & FI_REMOTE_CQ_DATA))
		h.flags = TCP_F_CQ_DATA;
	if (!write) {
		h.op = TCP_OP_READ;
		h.size = len;
		tcp_tx_frame(tx, &h, NULL, 0);
	} else if (a->flags & FI_INJECT) {
		h.op = TCP_OP_WRITE;
		h.len = len;
		util_iov_copy_from(a->iov, a->count, 0, tx->data, len);
		copy.iov_base = tx->data;
		copy.iov_len = len;
		tcp_tx_frame(tx, &h, &copy, 1);
	} else {
		h.op = TCP_OP_WRITE;
		h.len = len;
		tcp_tx_frame(tx, &h, a->iov, a->count);
	}
	tx->kind = TCP_TX_OP;
	tx->op = op;
}

static ssize_t tcp_rma_post(struct tcp_ep *ep, bool write,
			    const struct tcp_rma_args *a)
{
	struct tcp_peer *peer;
	struct tcp_op *op;
	struct tcp_tx *tx;
	size_t len;
	ssize_t ret;

	ret = tcp_rma_check(a, &len);
	if (ret)
		return ret;
	util_lock_acquire(&ep->util.lock);
	ret = tcp_peer_tx(ep, a->addr, &peer);
	if (ret)
		goto unlock;
	ret = -FI_EAGAIN;
	op = tcp_op_get(ep, peer, write ? TCP_OPT_WRITE : TCP_OPT_READ);
	if (!op)
		goto unlock;
	tx = tcp_tx_get(ep);
	if (!tx) {
		tcp_op_release(ep, op);
		goto unlock;
	}
	tcp_rma_op_fill(ep, op, write, a, len);
	tcp_rma_frame(op, tx, write, a, len);
	tcp_peer_push(ep, peer, tx, a->flags & FI_MORE);
	ret = 0;
unlock:
	util_lock_release(&ep->util.lock);
	return ret;
}

/* ---- target --------------------------------------------------------- */

void tcp_rma_target_events(struct tcp_ep *ep, struct tcp_peer *peer,
			   uint64_t cntr_flag, const struct tcp_hdr *h)
{
	util_ep_cntr_inc(&ep->util, cntr_flag == FI_REMOTE_WRITE ?
				    UTIL_CNTR_REMOTE_WRITE :
				    UTIL_CNTR_REMOTE_READ);
	/* fi_mr_bind(3): atomics count as writes, they modify the region
	 * (all but FI_ATOMIC_READ). */
	util_mr_count(&ep->util.domain->mr_map, h->key,
		      h->op != TCP_OP_ATOMIC ? cntr_flag :
		      h->atomic_op == FI_ATOMIC_READ ? FI_REMOTE_READ :
		      FI_REMOTE_WRITE);
	if ((h->flags & TCP_F_CQ_DATA) && ep->util.rx_cq)
		util_ep_rx_comp(&ep->util, NULL,
				(h->op == TCP_OP_ATOMIC ? FI_ATOMIC : FI_RMA) |
				FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA, 0, NULL,
				h->data, 0, tcp_peer_fi_addr(ep, peer));
}

static int tcp_rma_answer(struct tcp_conn *c, uint8_t op, int status,
			  const struct iovec *iov, size_t count, uint64_t len)
{
	struct tcp_hdr h = { .op = op, .id = c->rh.id,
			     .status = (uint32_t)status, .len = len };
	struct tcp_tx *tx = tcp_tx_ctrl(c->ep);

	if (!tx)
		return -FI_ENOMEM;
	tcp_tx_frame(tx, &h, iov, count);
	tcp_peer_push(c->ep, c->peer, tx, false);
	return 0;
}

int tcp_rma_write_begin(struct tcp_conn *c)
{
	struct tcp_ep *ep = c->ep;
	const struct tcp_hdr *h = &c->rh;
	void *local;
	int ret;

	ret = util_mr_check(&ep->util.domain->mr_map, h->key, h->addr, h->len,
			    FI_REMOTE_WRITE, &local);
	c->sink.status = -ret;
	if (ret)
		return 0;	/* the payload is dropped, the ACK says why */
	c->sink.iov[0].iov_base = local;
	c->sink.iov[0].iov_len = h->len;
	c->sink.count = 1;
	c->sink.cap = h->len;
	return 0;
}

void tcp_rma_write_end(struct tcp_conn *c)
{
	struct tcp_hdr h = { .op = TCP_OP_ACK, .id = c->rh.id,
			     .status = (uint32_t)c->sink.status };

	if (!c->sink.status)
		tcp_rma_target_events(c->ep, c->peer, FI_REMOTE_WRITE, &c->rh);
	if (tcp_send_ctrl(c->ep, c->peer, &h))
		WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_DATA,
			"write ACK not sent\n");
}

int tcp_rma_read_req(struct tcp_conn *c)
{
	struct tcp_ep *ep = c->ep;
	const struct tcp_hdr *h = &c->rh;
	struct iovec iov;
	void *local;
	int ret;

	ret = util_mr_check(&ep->util.domain->mr_map, h->key, h->addr, h->size,
			    FI_REMOTE_READ, &local);
	if (ret)
		return tcp_rma_answer(c, TCP_OP_READ_RESP, -ret, NULL, 0, 0);
	iov.iov_base = local;
	iov.iov_len = h->size;
	ret = tcp_rma_answer(c, TCP_OP_READ_RESP, 0, &iov, 1, h->size);
	if (!ret)
		tcp_rma_target_events(ep, c->peer, FI_REMOTE_READ, h);
	return ret;
}

/* ---- initiator: the answer of a read ---------------------------------- */

int tcp_rma_read_resp_begin(struct tcp_conn *c)
{
	const struct tcp_hdr *h = &c->rh;
	struct tcp_op *op = tcp_op_find(c->ep, c->peer, h->id);

	if (!op || op->type != TCP_OPT_READ || op->answered)
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

void tcp_rma_read_resp_end(struct tcp_conn *c)
{
	tcp_op_answer(c->ep, c->sink.arg, c->sink.status);
}

/* ---- fi_ops_rma ------------------------------------------------------ */

static ssize_t tcp_rma_read(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src, uint64_t addr,
			    uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };
	struct tcp_rma_args a = { &iov, 1, src, &rma, 1, 0, context,
				  to_tcp_ep(ep)->util.tx_op_flags };

	(void)desc;
	return tcp_rma_post(to_tcp_ep(ep), false, &a);
}

static ssize_t tcp_rma_readv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     uint64_t addr, uint64_t key, void *context)
{
	struct fi_rma_iov rma = { .addr = addr, .key = key,
				  .len = util_iov_total(iov, count) };
	struct tcp_rma_args a = { iov, count, src, &rma, 1, 0, context,
				  to_tcp_ep(ep)->util.tx_op_flags };

	(void)desc;
	return tcp_rma_post(to_tcp_ep(ep), false, &a);
}

static ssize_t tcp_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *m,
			       uint64_t flags)
{
	struct tcp_rma_args a = { m->msg_iov, m->iov_count, m->addr,
				  m->rma_iov, m->rma_iov_count, m->data,
				  m->context, util_ep_user_flags(flags) };

	return tcp_rma_post(to_tcp_ep(ep), false, &a);
}

static ssize_t tcp_rma_write(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, fi_addr_t dest, uint64_t addr,
			     uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };
	struct tcp_rma_args a = { &iov, 1, dest, &rma, 1, 0, context,
				  to_tcp_ep(ep)->util.tx_op_flags };

	(void)desc;
	return tcp_rma_post(to_tcp_ep(ep), true, &a);
}

static ssize_t tcp_rma_writev(struct fid_ep *ep, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest,
			      uint64_t addr, uint64_t key, void *context)
{
	struct fi_rma_iov rma = { .addr = addr, .key = key,
				  .len = util_iov_total(iov, count) };
	struct tcp_rma_args a = { iov, count, dest, &rma, 1, 0, context,
				  to_tcp_ep(ep)->util.tx_op_flags };

	(void)desc;
	return tcp_rma_post(to_tcp_ep(ep), true, &a);
}

static ssize_t tcp_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *m,
				uint64_t flags)
{
	struct tcp_rma_args a = { m->msg_iov, m->iov_count, m->addr,
				  m->rma_iov, m->rma_iov_count, m->data,
				  m->context, util_ep_user_flags(flags) };

	return tcp_rma_post(to_tcp_ep(ep), true, &a);
}

static ssize_t tcp_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };
	struct tcp_rma_args a = { &iov, 1, dest, &rma, 1, 0, NULL,
				  FI_INJECT | UTIL_OP_NO_COMP };

	return tcp_rma_post(to_tcp_ep(ep), true, &a);
}

static ssize_t tcp_rma_writedata(struct fid_ep *ep, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest, uint64_t addr, uint64_t key,
				 void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };
	struct tcp_rma_args a = { &iov, 1, dest, &rma, 1, data, context,
				  to_tcp_ep(ep)->util.tx_op_flags |
				  FI_REMOTE_CQ_DATA };

	(void)desc;
	return tcp_rma_post(to_tcp_ep(ep), true, &a);
}

static ssize_t tcp_rma_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest,
				  uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };
	struct tcp_rma_args a = { &iov, 1, dest, &rma, 1, data, NULL,
				  FI_INJECT | UTIL_OP_NO_COMP |
				  FI_REMOTE_CQ_DATA };

	return tcp_rma_post(to_tcp_ep(ep), true, &a);
}

const struct fi_ops_rma tcp_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = tcp_rma_read,
	.readv = tcp_rma_readv,
	.readmsg = tcp_rma_readmsg,
	.write = tcp_rma_write,
	.writev = tcp_rma_writev,
	.writemsg = tcp_rma_writemsg,
	.inject = tcp_rma_inject,
	.writedata = tcp_rma_writedata,
	.injectdata = tcp_rma_injectdata,
};
