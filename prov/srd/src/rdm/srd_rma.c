/* SPDX-License-Identifier: MIT */
/*
 * fi_ops_rma for srd and the life of an RMA/atomic operation: the op
 * table (ids echoed by targets), the choice of its carrier (hardware RDMA
 * or the emulated protocol), the pending queue retried by progress,
 * completions and counters, and the RMA entry of the protocol table
 * (srd_proto_rma, srd_rma.h): its packets, work requests, batch-end work,
 * liveness watch and peer failure.
 */
#include "weft/compat.h"
#include "srd_rma.h"

#include <stdlib.h>
#include <string.h>
#include <utlist.h>

bool srd_rma_force_emulation;

#define SRD_RMA_ID_MASK ((1u << SRD_RMA_ID_BITS) - 1)

/* ---- per-endpoint state ------------------------------------------------ */

static void srd_rma_caps(struct srd_ep *ep, struct srd_rma_ep *r)
{
	const struct srd_dev_caps *caps = &ep->dev->caps;
	bool hw = srd_mr_mode_hw_ok(ep->domain->util.mr_mode) &&
		  !srd_rma_force_emulation;

	r->hw_write = hw && caps->rdma_write;
	r->hw_read = hw && caps->rdma_read;
	r->hw_imm = r->hw_write && (ep->qp->send_ops_flags &
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	r->max_rma_size = caps->max_rdma_size ? caps->max_rdma_size :
			  UINT32_MAX;
	r->seg_max = (uint32_t)ep->pc.eager_max;
}

static int srd_rma_ep_init(struct srd_ep *ep)
{
	struct srd_rma_ep *r;
	uint32_t i;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -FI_ENOMEM;
	r->ops = calloc(SRD_RMA_OPS_MAX, sizeof(*r->ops));
	r->free_ids = calloc(SRD_RMA_OPS_MAX, sizeof(*r->free_ids));
	if (!r->ops || !r->free_ids) {
		ret = -FI_ENOMEM;
		goto free_r;
	}
	for (i = 0; i < SRD_RMA_OPS_MAX; i++)
		r->free_ids[i] = SRD_RMA_OPS_MAX - 1 - i;
	r->free_top = SRD_RMA_OPS_MAX;
	ret = util_pool_init(&r->resp_pool, sizeof(struct srd_rma_resp), 0,
			     0, 16, SRD_RMA_RESP_MAX, NULL, NULL);
	if (ret)
		goto free_r;
	ret = util_pool_init(&r->defer_pool, sizeof(struct srd_rma_defer) +
			     ep->pkt_size, 0, 0, 8, SRD_RMA_RESP_MAX, NULL,
			     NULL);
	if (ret)
		goto fini_resp;
	srd_rma_caps(ep, r);
	if (!r->seg_max) {
		ret = -FI_EINVAL;
		goto fini_defer;
	}
	ep->rma = r;
	return 0;

fini_defer:
	util_pool_fini(&r->defer_pool);
fini_resp:
	util_pool_fini(&r->resp_pool);
free_r:
	free(r->free_ids);
	free(r->ops);
	free(r);
	return ret;
}

static void srd_rma_op_release_mrs(struct srd_ep *ep, struct srd_rma_op *op)
{
	size_t i;

	for (i = 0; i < op->iov_count; i++) {
		srd_mr_dereg_local(ep->dev, op->mr[i]);
		op->mr[i] = NULL;
	}
}

static void srd_rma_ep_fini(struct srd_ep *ep)
{
	struct srd_rma_ep *r = ep->rma;
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < SRD_RMA_OPS_MAX; i++)
		if (r->ops[i].in_use)
			srd_rma_op_release_mrs(ep, &r->ops[i]);
	util_pool_fini(&r->defer_pool);
	util_pool_fini(&r->resp_pool);
	free(r->free_ids);
	free(r->ops);
	free(r);
	ep->rma = NULL;
}

/* ---- op table ------------------------------------------------------------ */

struct srd_rma_op *srd_rma_op_get(struct srd_ep *ep)
{
	struct srd_rma_ep *r = ep->rma;
	struct srd_rma_op *op;
	uint32_t idx, gen;

	if (WEFT_UNLIKELY(!r->free_top))
		return NULL;
	idx = r->free_ids[--r->free_top];
	op = &r->ops[idx];
	gen = (op->id >> SRD_RMA_ID_BITS) + 1;
	memset(op, 0, sizeof(*op));
	op->hdr.kind = SRD_WR_RMA;
	op->id = idx | gen << SRD_RMA_ID_BITS;
	op->in_use = true;
	return op;
}

void srd_rma_op_put(struct srd_ep *ep, struct srd_rma_op *op)
{
	struct srd_rma_ep *r = ep->rma;

	op->in_use = false;
	r->free_ids[r->free_top++] = op->id & SRD_RMA_ID_MASK;
}

/* An id from the wire: only a live op of that peer answers to it. */
struct srd_rma_op *srd_rma_op_by_id(struct srd_ep *ep, uint32_t id,
				    struct srd_peer *peer)
{
	struct srd_rma_op *op;
	uint32_t idx = id & SRD_RMA_ID_MASK;

	if (idx >= SRD_RMA_OPS_MAX)
		return NULL;
	op = &ep->rma->ops[idx];
	if (!op->in_use || op->id != id || op->peer != peer)
		return NULL;
	return op;
}

/* ---- completion --------------------------------------------------------- */

void srd_rma_op_fail(struct srd_rma_op *op, int err, int prov_errno)
{
	if (!op->err) {
		op->err = err;
		op->prov_errno = prov_errno;
	}
}

static enum util_cntr_slot srd_rma_cntr(const struct srd_rma_op *op)
{
	return op->comp_flags & FI_READ ? UTIL_CNTR_READ : UTIL_CNTR_WRITE;
}

static void srd_rma_op_complete(struct srd_ep *ep, struct srd_rma_op *op)
{
	if (op->on_pending) {
		DL_DELETE(ep->rma->pending, op);
		op->on_pending = false;
	}
	srd_rma_op_release_mrs(ep, op);
	if (WEFT_UNLIKELY(op->err)) {
		srd_ep_tx_err(ep, op->peer, op->context, op->comp_flags,
			      op->err, op->prov_errno, 0);
		util_ep_cntr_inc_err(&ep->util, srd_rma_cntr(op));
	} else {
		if (op->want_comp)
			util_ep_tx_comp(&ep->util, op->context, op->comp_flags,
					0, NULL, 0, 0);
		util_ep_cntr_inc(&ep->util, srd_rma_cntr(op));
	}
	srd_rma_op_put(ep, op);
}

/* Done when nothing is in flight and either everything went out or an
 * error stopped it (then no more is posted). */
void srd_rma_op_try_complete(struct srd_ep *ep, struct srd_rma_op *op)
{
	if (op->inflight)
		return;
	if (op->sends)
		return;
	if (op->err || (op->carrier && op->all_posted))
		srd_rma_op_complete(ep, op);
}

/* ---- starting and retrying ---------------------------------------------- */

static void srd_rma_op_queue(struct srd_ep *ep, struct srd_rma_op *op)
{
	if (!op->on_pending) {
		DL_APPEND(ep->rma->pending, op);
		op->on_pending = true;
	}
}

/* SRD does not order the pieces of a split write, so the immediate (which
 * tells the target the data is there) may only ride on a write that is a
 * single work request. */
static bool srd_rma_hw_imm_ok(const struct srd_rma_ep *r,
			      const struct srd_rma_op *op)
{
	return r->hw_imm && op->iov_count == 1 && op->len &&
	       op->len <= r->max_rma_size;
}

/* Hardware when both ends can (the peer said so in its HELLO), so the
 * handshake must be over first. */
static int srd_rma_op_decide(struct srd_ep *ep, struct srd_rma_op *op)
{
	struct srd_rma_ep *r = ep->rma;
	struct srd_peer *peer = op->peer;
	bool write = op->kind == SRD_RMA_WRITE;

	if (op->kind == SRD_RMA_ATOMIC) {
		op->carrier = &srd_rma_atomic;
		return 0;
	}
	if ((write ? !r->hw_write : !r->hw_read) ||
	    (op->pkt_flags & SRD_PKT_F_CQ_DATA && !srd_rma_hw_imm_ok(r, op))) {
		op->carrier = &srd_rma_emu;
		return 0;
	}
	if (peer->state == SRD_PEER_NEW)
		srd_peer_hello_send(ep, peer, SRD_PKT_HELLO);
	if (peer->state != SRD_PEER_READY)
		return -FI_EAGAIN;
	/* A target that counts RMA aimed at it must see it: emulate. */
	op->carrier = (peer->features & (write ? SRD_FEAT_RDMA_WRITE :
					 SRD_FEAT_RDMA_READ)) &&
		      !(peer->features & SRD_FEAT_RMA_EVENT) ?
		      &srd_rma_hw : &srd_rma_emu;
	return 0;
}

static int srd_rma_op_pump(struct srd_ep *ep, struct srd_rma_op *op)
{
	int ret;

	if (!op->carrier) {
		ret = srd_rma_op_decide(ep, op);
		if (ret)
			return ret;
	}
	return op->carrier->pump ? op->carrier->pump(ep, op) : 0;
}

/* Push the op as far as resources allow; what is left waits on the
 * pending queue for progress. */
static void srd_rma_op_run(struct srd_ep *ep, struct srd_rma_op *op)
{
	int ret = op->err ? 0 : srd_rma_op_pump(ep, op);

	if (ret == -FI_EAGAIN) {
		srd_rma_op_queue(ep, op);
		return;
	}
	if (ret)
		srd_rma_op_fail(op, -ret, 0);
	if (op->on_pending) {
		DL_DELETE(ep->rma->pending, op);
		op->on_pending = false;
	}
	srd_rma_op_try_complete(ep, op);
}

void srd_rma_op_resume(struct srd_ep *ep, struct srd_rma_op *op)
{
	srd_rma_op_run(ep, op);
}

void srd_rma_op_start(struct srd_ep *ep, struct srd_rma_op *op)
{
	/* Keep the order of operations to one target: a new op waits
	 * behind queued ones. */
	if (ep->rma->pending) {
		srd_rma_op_queue(ep, op);
		return;
	}
	srd_rma_op_run(ep, op);
}

bool srd_rma_defer(struct srd_ep *ep, struct srd_peer *peer, const void *pkt,
		   size_t len)
{
	struct srd_rma_defer *d = util_pool_get(&ep->rma->defer_pool);

	if (!d || len > ep->pkt_size) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"%s from qpn %u: no room to answer later, dropped\n",
			srd_pkt_type_str(((const struct srd_pkt_base *)pkt)->type),
			peer->name.qpn);
		if (d)
			util_pool_put(&ep->rma->defer_pool, d);
		return false;
	}
	d->peer = peer;
	d->len = len;
	memcpy(d->pkt, pkt, len);
	DL_APPEND(ep->rma->deferred, d);
	return true;
}

/* Requests that waited for a reply buffer: each is handled once per
 * progress call (it may be deferred again). */
static void srd_rma_run_deferred(struct srd_ep *ep)
{
	struct srd_rma_defer *list = ep->rma->deferred, *d, *tmp;

	ep->rma->deferred = NULL;
	DL_FOREACH_SAFE(list, d, tmp) {
		uint8_t type = ((const struct srd_pkt_base *)d->pkt)->type;

		DL_DELETE(list, d);
		ep->pkt_route[type].handle(ep, d->peer, d->pkt, d->len);
		util_pool_put(&ep->rma->defer_pool, d);
	}
}

static void srd_rma_progress(struct srd_ep *ep)
{
	struct srd_rma_op *op, *tmp;

	if (!ep->rma)
		return;
	if (ep->rma->deferred)
		srd_rma_run_deferred(ep);
	if (ep->rma->responding)
		srd_rma_resp_pump(ep);
	DL_FOREACH_SAFE(ep->rma->pending, op, tmp)
		srd_rma_op_run(ep, op);
}

/* ---- what the RDM layer hands us ---------------------------------------- */

static void srd_rma_wr_done(struct srd_ep *ep, struct srd_wr_hdr *hdr,
			    const struct srd_dev_wc *wc)
{
	struct srd_rma_op *op = to_srd_rma_op(hdr);

	if (WEFT_UNLIKELY(!ep->rma || !op->in_use || !op->carrier))
		return;
	op->carrier->wc(ep, op, wc);
}

/* Remote write with immediate data (fi_writedata in hardware). */
void srd_rma_handle_imm(struct srd_ep *ep, const struct srd_dev_wc *wc)
{
	srd_rma_target_done(ep, NULL, FI_RMA | FI_REMOTE_WRITE, true,
			    wc->imm_data, wc->byte_len);
}

void srd_rma_target_done(struct srd_ep *ep, struct srd_peer *peer,
			 uint64_t flags, bool has_data, uint32_t data,
			 size_t len)
{
	fi_addr_t src = peer ? srd_peer_fi_addr(ep, peer) : FI_ADDR_NOTAVAIL;

	if (has_data && ep->util.rx_cq)
		util_ep_rx_comp(&ep->util, NULL, flags | FI_REMOTE_CQ_DATA,
				len, NULL, data, 0, src);
	util_ep_cntr_inc(&ep->util, flags & FI_REMOTE_READ ?
			 UTIL_CNTR_REMOTE_READ : UTIL_CNTR_REMOTE_WRITE);
}

/* ---- posting ------------------------------------------------------------- */

int srd_rma_peer(struct srd_ep *ep, fi_addr_t addr, struct srd_peer **peer)
{
	int ret = srd_peer_get(ep, addr, peer);

	return ret;
}

/* Local keys for hardware RMA: the desc's, else a registration made for
 * this op (slow: one device registration per buffer per call). */
int srd_rma_local_keys(struct srd_ep *ep, struct srd_rma_op *op)
{
	size_t i;
	int err;

	for (i = 0; i < op->iov_count; i++) {
		if (!op->iov[i].iov_len)
			continue;
		if (!srd_mr_desc_keys(op->desc[i], &op->lkey[i], NULL))
			continue;
		op->mr[i] = srd_mr_reg_local(ep->dev, op->iov[i].iov_base,
					     op->iov[i].iov_len, &err);
		if (!op->mr[i])
			return err;
		op->lkey[i] = op->mr[i]->lkey;
	}
	return 0;
}

struct srd_rma_args {
	uint8_t kind;
	const struct iovec *iov;
	void **desc;
	size_t count;
	fi_addr_t addr;
	const struct fi_rma_iov *rma;
	size_t rma_count;
	uint64_t data;
	void *context;
	uint64_t flags;
};

static int srd_rma_args_check(struct srd_ep *ep, const struct srd_rma_args *a,
			      size_t *total)
{
	if (a->count > ep->pc.tx_iov_limit || (a->count && !a->iov) ||
	    a->rma_count != 1 || !a->rma) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"rma: %zu local iovs (iov_limit %zu), %zu remote "
			"(exactly 1)\n", a->count, ep->pc.tx_iov_limit,
			a->rma_count);
		return -FI_EINVAL;
	}
	if (util_iov_check(&srd_prov, "RMA", a->iov, a->count, total))
		return -FI_EINVAL;
	if (*total > a->rma[0].len || *total > ep->pc.max_msg_size) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"rma: %zu bytes for a remote buffer of %zu\n", *total,
			a->rma[0].len);
		return -FI_EINVAL;
	}
	if (a->flags & FI_INJECT && *total > ep->pc.inject_size) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"rma: inject of %zu bytes (max %zu)\n", *total,
			ep->pc.inject_size);
		return -FI_EINVAL;
	}
	return 0;
}

static void srd_rma_op_fill(struct srd_ep *ep, struct srd_rma_op *op,
			    const struct srd_rma_args *a, size_t total)
{
	bool write = a->kind == SRD_RMA_WRITE;

	op->kind = a->kind;
	op->context = a->context;
	op->comp_flags = FI_RMA | (write ? FI_WRITE : FI_READ);
	op->want_comp = util_ep_tx_wants_comp(&ep->util, a->flags);
	op->len = total;
	op->addr = a->rma[0].addr;
	op->key = a->rma[0].key;
	if (write && a->flags & FI_REMOTE_CQ_DATA) {
		op->pkt_flags = SRD_PKT_F_CQ_DATA;
		op->cq_data = (uint32_t)a->data;
	}
	op->iov_count = a->count;
	/* A zero-length transfer may come without iov or desc arrays. */
	if (a->count)
		memcpy(op->iov, a->iov, a->count * sizeof(*a->iov));
	if (a->count && a->desc)
		memcpy(op->desc, a->desc, a->count * sizeof(*a->desc));
}

static ssize_t srd_rma_post_locked(struct srd_ep *ep,
				   const struct srd_rma_args *a)
{
	struct srd_rma_op *op;
	struct srd_peer *peer;
	size_t total;
	int ret;

	ret = srd_rma_args_check(ep, a, &total);
	if (ret)
		return ret;
	ret = srd_rma_peer(ep, a->addr, &peer);
	if (ret)
		return ret;
	op = srd_rma_op_get(ep);
	if (!op)
		return -FI_EAGAIN;
	op->peer = peer;
	srd_rma_op_fill(ep, op, a, total);
	if (a->flags & FI_INJECT) {
		/* The caller may reuse its buffer at once: the one packet is
		 * built now, or the call fails with nothing sent. */
		ret = srd_rma_emu_inject(ep, op);
		if (ret) {
			srd_rma_op_put(ep, op);
			return ret;
		}
		srd_rma_op_try_complete(ep, op);
		return 0;
	}
	srd_rma_op_start(ep, op);
	return 0;
}

static ssize_t srd_rma_post(struct fid_ep *ep_fid, struct srd_rma_args *a)
{
	struct srd_ep *ep = to_srd_ep(ep_fid);
	ssize_t ret;

	util_lock_acquire(&ep->util.lock);
	ret = srd_rma_post_locked(ep, a);
	util_lock_release(&ep->util.lock);
	return ret;
}

static ssize_t srd_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			       uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_srd_ep(ep)->util, "fi_readmsg");
	struct srd_rma_args a = {
		.kind = SRD_RMA_READ, .iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .addr = msg->addr,
		.rma = msg->rma_iov, .rma_count = msg->rma_iov_count,
		.context = msg->context,
		.flags = util_ep_user_flags(flags) & ~FI_INJECT,
	};

	return srd_rma_post(ep, &a);
}

static ssize_t srd_rma_readv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	struct fi_rma_iov rma = {
		.addr = addr, .len = util_iov_total(iov, count), .key = key,
	};
	struct srd_rma_args a = {
		.kind = SRD_RMA_READ, .iov = iov, .desc = desc, .count = count,
		.addr = src_addr, .rma = &rma, .rma_count = 1,
		.context = context,
		.flags = to_srd_ep(ep)->util.tx_op_flags,
	};

	return srd_rma_post(ep, &a);
}

static ssize_t srd_rma_read(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, uint64_t addr,
			    uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return srd_rma_readv(ep, &iov, &desc, 1, src_addr, addr, key,
			     context);
}

static ssize_t srd_rma_writemsg(struct fid_ep *ep,
				const struct fi_msg_rma *msg, uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_srd_ep(ep)->util, "fi_writemsg");
	struct srd_rma_args a = {
		.kind = SRD_RMA_WRITE, .iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .addr = msg->addr,
		.rma = msg->rma_iov, .rma_count = msg->rma_iov_count,
		.data = msg->data, .context = msg->context,
		.flags = util_ep_user_flags(flags),
	};

	return srd_rma_post(ep, &a);
}

static ssize_t srd_rma_write_common(struct fid_ep *ep, const void *buf,
				    size_t len, void *desc, uint64_t data,
				    fi_addr_t dest, uint64_t addr, uint64_t key,
				    void *context, uint64_t flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };
	struct srd_rma_args a = {
		.kind = SRD_RMA_WRITE, .iov = &iov, .desc = &desc, .count = 1,
		.addr = dest, .rma = &rma, .rma_count = 1, .data = data,
		.context = context,
		.flags = to_srd_ep(ep)->util.tx_op_flags | flags,
	};

	return srd_rma_post(ep, &a);
}

static ssize_t srd_rma_writev(struct fid_ep *ep, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest_addr,
			      uint64_t addr, uint64_t key, void *context)
{
	struct fi_rma_iov rma = {
		.addr = addr, .len = util_iov_total(iov, count), .key = key,
	};
	struct srd_rma_args a = {
		.kind = SRD_RMA_WRITE, .iov = iov, .desc = desc, .count = count,
		.addr = dest_addr, .rma = &rma, .rma_count = 1,
		.context = context,
		.flags = to_srd_ep(ep)->util.tx_op_flags,
	};

	return srd_rma_post(ep, &a);
}

static ssize_t srd_rma_write(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, fi_addr_t dest_addr, uint64_t addr,
			     uint64_t key, void *context)
{
	return srd_rma_write_common(ep, buf, len, desc, 0, dest_addr, addr,
				    key, context, 0);
}

static ssize_t srd_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	return srd_rma_write_common(ep, buf, len, NULL, 0, dest_addr, addr,
				    key, NULL, FI_INJECT | UTIL_OP_NO_COMP);
}

static ssize_t srd_rma_writedata(struct fid_ep *ep, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key, void *context)
{
	return srd_rma_write_common(ep, buf, len, desc, data, dest_addr, addr,
				    key, context, FI_REMOTE_CQ_DATA);
}

static ssize_t srd_rma_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data,
				  fi_addr_t dest_addr, uint64_t addr,
				  uint64_t key)
{
	return srd_rma_write_common(ep, buf, len, NULL, data, dest_addr, addr,
				    key, NULL, FI_INJECT | FI_REMOTE_CQ_DATA |
				    UTIL_OP_NO_COMP);
}

const struct fi_ops_rma srd_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = srd_rma_read,
	.readv = srd_rma_readv,
	.readmsg = srd_rma_readmsg,
	.write = srd_rma_write,
	.writev = srd_rma_writev,
	.writemsg = srd_rma_writemsg,
	.inject = srd_rma_inject,
	.writedata = srd_rma_writedata,
	.injectdata = srd_rma_injectdata,
};

/* ---- peer failure and liveness ------------------------------------------ */

/* Requests of a failed peer we have not answered: nobody waits for them
 * here, and an answer would start a handshake with it. */
static void srd_rma_drop_target_work(struct srd_ep *ep, struct srd_peer *peer)
{
	struct srd_rma_resp *rs, *rtmp;
	struct srd_rma_defer *d, *dtmp;

	DL_FOREACH_SAFE(ep->rma->responding, rs, rtmp) {
		if (rs->peer != peer)
			continue;
		DL_DELETE(ep->rma->responding, rs);
		util_pool_put(&ep->rma->resp_pool, rs);
	}
	DL_FOREACH_SAFE(ep->rma->deferred, d, dtmp) {
		if (d->peer != peer)
			continue;
		DL_DELETE(ep->rma->deferred, d);
		util_pool_put(&ep->rma->defer_pool, d);
	}
}

/* Every operation toward peer ends with err: those not started or waiting
 * for resources at the next progress, those waiting for the target's
 * answers at once (the answers will not come), those whose work requests
 * the device holds when the device gives them back. */
static void srd_rma_peer_failed(struct srd_ep *ep, struct srd_peer *peer,
				int err, int prov_errno)
{
	struct srd_rma_ep *r = ep->rma;
	uint32_t i;

	for (i = 0; i < SRD_RMA_OPS_MAX; i++) {
		struct srd_rma_op *op = &r->ops[i];

		if (!op->in_use || op->peer != peer)
			continue;
		srd_rma_op_fail(op, err, prov_errno);
		if (op->carrier && op->carrier->answers) {
			op->abandoned = true;
			op->inflight = 0;
		}
		if (!op->on_pending)
			srd_rma_op_try_complete(ep, op);
	}
	srd_rma_drop_target_work(ep, peer);
}

/* Operations waiting for their target's answers. */
static bool srd_rma_watch(struct srd_ep *ep, uint64_t *probe)
{
	struct srd_rma_ep *r = ep->rma;
	bool waiting = false;
	uint32_t i;

	for (i = 0; i < SRD_RMA_OPS_MAX; i++) {
		struct srd_rma_op *op = &r->ops[i];

		if (!op->in_use || !op->carrier || !op->carrier->answers ||
		    !op->inflight || op->err)
			continue;
		util_peer_set_add(probe, op->peer->id);
		waiting = true;
	}
	return waiting;
}

static const struct srd_proto_pkt srd_rma_pkts[] = {
	{ SRD_PKT_WRITE, srd_rma_emu_handle_write },
	{ SRD_PKT_READ_REQ, srd_rma_emu_handle_read_req },
	{ SRD_PKT_READ_RESP, srd_rma_emu_handle_read_resp },
	{ SRD_PKT_RMA_ACK, srd_rma_emu_handle_ack },
	{ SRD_PKT_ATOMIC_REQ, srd_atomic_handle_req },
	{ SRD_PKT_ATOMIC_RESP, srd_atomic_handle_resp },
	{ 0, NULL },
};

const struct srd_proto srd_proto_rma = {
	.name = "rma",
	.ep_init = srd_rma_ep_init,
	.ep_fini = srd_rma_ep_fini,
	.progress = srd_rma_progress,
	.watch = srd_rma_watch,
	.peer_failed = srd_rma_peer_failed,
	.pkts = srd_rma_pkts,
	.wr_kind = SRD_WR_RMA,
	.wr_done = srd_rma_wr_done,
};
