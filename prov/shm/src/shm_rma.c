/* SPDX-License-Identifier: MIT */
/*
 * RMA. The initiator sends a WRITE or READ cell naming the target regions
 * (key, address, length); the target checks each against its MR map
 * (util_mr_check: key, bounds, access), moves the bytes (inline in the cell
 * or its ACK, else CMA between the initiator's buffers and the region) and
 * ACKs with a status, so every failure surfaces as an error completion at
 * the initiator. Large RMA needs CMA: there is no bounce path for it.
 */
#include "weft/compat.h"

#include <string.h>

#include "shm.h"

static size_t shm_rma_hdr_size(size_t rma_cnt)
{
	return sizeof(struct shm_rma) + rma_cnt * sizeof(struct shm_rma_iov);
}

static void shm_rma_fill(struct shm_cell *cell, enum shm_op op,
			 const struct iovec *iov, size_t count,
			 const struct fi_rma_iov *rma, size_t rma_cnt,
			 size_t len, bool inl)
{
	struct shm_rma *r = (struct shm_rma *)cell->payload;
	struct shm_iov *riov;
	size_t i;

	r->total = len;
	r->xfer_id = 0;
	r->rma_cnt = (uint32_t)rma_cnt;
	r->iov_cnt = inl ? 0 : (uint32_t)count;
	for (i = 0; i < rma_cnt; i++) {
		r->rma[i].addr = rma[i].addr;
		r->rma[i].len = rma[i].len;
		r->rma[i].key = rma[i].key;
	}
	cell->hdr.len = (uint32_t)shm_rma_hdr_size(rma_cnt);
	cell->hdr.proto = inl ? SHM_COPY_INLINE : SHM_COPY_CMA;
	if (inl) {
		if (op == SHM_OP_WRITE) {
			shm_iov_copy_from(iov, count, 0,
					  cell->payload + cell->hdr.len, len);
			cell->hdr.len += (uint32_t)len;
		}
		return;
	}
	riov = (struct shm_iov *)(cell->payload + cell->hdr.len);
	for (i = 0; i < count; i++) {
		riov[i].addr = (uintptr_t)iov[i].iov_base;
		riov[i].len = iov[i].iov_len;
	}
	cell->hdr.len += (uint32_t)(count * sizeof(*riov));
}

/* Inline when the bytes fit in the request (write) or in the ACK that
 * comes back to our own queue (read). */
static bool shm_rma_inline(struct shm_ep *ep, struct shm_conn *conn,
			   enum shm_op op, size_t rma_cnt, size_t len)
{
	if (op == SHM_OP_WRITE)
		return shm_rma_hdr_size(rma_cnt) + len <=
		       shm_peer_payload_max(conn->peer);
	return len <= ep->payload_max;
}

static ssize_t shm_rma_check_args(const struct iovec *iov, size_t count,
				  const struct fi_rma_iov *rma, size_t rma_cnt,
				  size_t *len)
{
	size_t i, rlen = 0;

	if (count > SHM_IOV_LIMIT || rma_cnt > SHM_IOV_LIMIT || !rma_cnt ||
	    (count && !iov) || !rma) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"RMA iov counts %zu/%zu out of range\n", count, rma_cnt);
		return -FI_EINVAL;
	}
	*len = shm_iov_total(iov, count);
	for (i = 0; i < rma_cnt; i++)
		rlen += rma[i].len;
	if (rlen != *len) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"RMA local %zu bytes vs remote %zu bytes\n", *len, rlen);
		return -FI_EINVAL;
	}
	return 0;
}

static ssize_t shm_rma_post_locked(struct shm_ep *ep, struct shm_conn *conn,
				   enum shm_op op, const struct iovec *iov,
				   size_t count, const struct fi_rma_iov *rma,
				   size_t rma_cnt, size_t len, uint64_t data,
				   void *context, uint64_t flags)
{
	bool inl = shm_rma_inline(ep, conn, op, rma_cnt, len);
	struct shm_tx_entry *tx;
	struct shm_cell *cell;

	if (!inl && ((flags & FI_INJECT) || !shm_peer_cma(conn->peer))) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"RMA of %zu bytes needs %s\n", len,
			(flags & FI_INJECT) ? "inject_size or less" : "CMA");
		return (flags & FI_INJECT) ? -FI_EINVAL : -FI_EOPNOTSUPP;
	}
	tx = shm_tx_get(ep, conn);
	if (!tx)
		return -FI_EAGAIN;
	cell = shm_peer_reserve(conn->peer);
	if (!cell) {
		shm_tx_put(ep, tx);
		return shm_conn_full(ep, conn);
	}
	cell->hdr.op = (uint16_t)op;
	cell->hdr.flags = SHM_F_VER |
			  ((flags & FI_REMOTE_CQ_DATA) ? SHM_F_CQ_DATA : 0);
	cell->hdr.tag = 0;
	cell->hdr.data = data;
	cell->hdr.cookie = shm_tx_cookie(tx);
	shm_rma_fill(cell, op, iov, count, rma, rma_cnt, len, inl);
	shm_queue_commit(cell);

	if (op == SHM_OP_READ && inl) {
		memcpy(tx->res, iov, count * sizeof(*iov));
		tx->res_cnt = count;
	}
	tx->context = context;
	tx->len = len;
	tx->comp_flags = FI_RMA | (op == SHM_OP_WRITE ? FI_WRITE : FI_READ);
	tx->cntr = op == SHM_OP_WRITE ? UTIL_CNTR_WRITE : UTIL_CNTR_READ;
	tx->want_comp = !(flags & FI_INJECT) &&
			util_ep_tx_wants_comp(&ep->util, flags);
	shm_tx_activate(ep, tx);
	return 0;
}

static ssize_t shm_rma_post(struct shm_ep *ep, enum shm_op op,
			    const struct iovec *iov, size_t count,
			    const struct fi_rma_iov *rma, size_t rma_cnt,
			    fi_addr_t dest, uint64_t data, void *context,
			    uint64_t flags)
{
	struct shm_conn *conn;
	size_t len;
	ssize_t ret;

	ret = shm_rma_check_args(iov, count, rma, rma_cnt, &len);
	if (ret)
		return ret;
	util_lock_acquire(&ep->util.lock);
	ret = shm_conn_tx(ep, dest, &conn);
	if (!ret)
		ret = shm_rma_post_locked(ep, conn, op, iov, count, rma,
					  rma_cnt, len, data, context, flags);
	util_lock_release(&ep->util.lock);
	return ret;
}

/* ---- target side ---------------------------------------------------- */

struct shm_rma_req {
	struct shm_rma hdr;
	struct shm_rma_iov rma[SHM_IOV_LIMIT];
	struct iovec local[SHM_IOV_LIMIT];
	struct iovec remote[SHM_IOV_LIMIT];
	const uint8_t *inline_data;
	size_t inline_len;
};

/* Copy and check the request against the cell length; positive FI_E*. */
static int shm_rma_parse(const struct shm_cell_hdr *hdr,
			 const uint8_t *payload, struct shm_rma_req *req)
{
	size_t off = sizeof(req->hdr), i;
	const struct shm_iov *riov;
	uint64_t sum = 0;

	if (hdr->len < off)
		return FI_EINVAL;
	memcpy(&req->hdr, payload, off);
	if (req->hdr.rma_cnt == 0 || req->hdr.rma_cnt > SHM_IOV_LIMIT ||
	    req->hdr.iov_cnt > SHM_IOV_LIMIT ||
	    hdr->len < shm_rma_hdr_size(req->hdr.rma_cnt) +
		       req->hdr.iov_cnt * sizeof(struct shm_iov))
		return FI_EINVAL;
	memcpy(req->rma, payload + off, req->hdr.rma_cnt * sizeof(req->rma[0]));
	off += req->hdr.rma_cnt * sizeof(req->rma[0]);
	req->inline_data = payload + off;
	req->inline_len = hdr->len - off;
	riov = (const struct shm_iov *)(payload + off);
	for (i = 0; i < req->hdr.iov_cnt; i++) {
		req->remote[i].iov_base = (void *)(uintptr_t)riov[i].addr;
		req->remote[i].iov_len = riov[i].len;
		if (riov[i].len > SHM_MAX_MSG_SIZE)
			return FI_EINVAL;
		sum += riov[i].len;
	}
	if (hdr->proto == SHM_COPY_CMA && sum != req->hdr.total)
		return FI_EINVAL;
	if (hdr->proto != SHM_COPY_CMA && hdr->proto != SHM_COPY_INLINE)
		return FI_EINVAL;
	return 0;
}

/* Target regions -> local iovs, every one checked; positive FI_E*. */
static int shm_rma_map(struct shm_ep *ep, struct shm_rma_req *req,
		       uint64_t access)
{
	uint64_t sum = 0;
	uint32_t i;
	int ret;

	for (i = 0; i < req->hdr.rma_cnt; i++) {
		if (req->rma[i].len > SHM_MAX_MSG_SIZE)
			return FI_EINVAL;
		ret = util_mr_check(&ep->util.domain->mr_map, req->rma[i].key,
				    req->rma[i].addr, req->rma[i].len, access,
				    &req->local[i].iov_base);
		if (ret)
			return -ret;
		req->local[i].iov_len = req->rma[i].len;
		sum += req->rma[i].len;
	}
	return sum == req->hdr.total ? 0 : FI_EINVAL;
}

static int shm_rma_cma_status(ssize_t n, uint64_t want)
{
	if (n == (ssize_t)want)
		return 0;
	return n == -FI_EPERM ? FI_EOPNOTSUPP : FI_EIO;
}

static int shm_rma_do_write(struct shm_ep *ep, struct shm_conn *conn,
			    const struct shm_cell_hdr *hdr,
			    struct shm_rma_req *req)
{
	ssize_t n;
	int ret = shm_rma_map(ep, req, FI_REMOTE_WRITE);

	if (ret)
		return ret;
	if (hdr->proto == SHM_COPY_INLINE) {
		if (req->inline_len != req->hdr.total)
			return FI_EINVAL;
		shm_iov_copy_to(req->local, req->hdr.rma_cnt, 0,
				req->inline_data, req->inline_len);
		return 0;
	}
	n = shm_cma_read(conn->peer->pid, req->local, req->hdr.rma_cnt,
			 req->remote, req->hdr.iov_cnt);
	return shm_rma_cma_status(n, req->hdr.total);
}

static int shm_rma_do_read(struct shm_ep *ep, struct shm_conn *conn,
			   const struct shm_cell_hdr *hdr,
			   struct shm_rma_req *req, struct shm_cell *reply)
{
	ssize_t n;
	int ret = shm_rma_map(ep, req, FI_REMOTE_READ);

	if (ret)
		return ret;
	if (hdr->proto == SHM_COPY_INLINE) {
		if (req->hdr.total > shm_peer_payload_max(conn->peer))
			return FI_EINVAL;
		shm_iov_copy_from(req->local, req->hdr.rma_cnt, 0,
				  reply->payload, req->hdr.total);
		reply->hdr.len = (uint32_t)req->hdr.total;
		return 0;
	}
	n = shm_cma_write(conn->peer->pid, req->local, req->hdr.rma_cnt,
			  req->remote, req->hdr.iov_cnt);
	return shm_rma_cma_status(n, req->hdr.total);
}

static void shm_rma_target_events(struct shm_ep *ep, struct shm_conn *conn,
				  const struct shm_cell_hdr *hdr, int status)
{
	bool write = hdr->op == SHM_OP_WRITE;

	if (status)
		return;
	util_ep_cntr_inc(&ep->util, write ? UTIL_CNTR_REMOTE_WRITE :
					    UTIL_CNTR_REMOTE_READ);
	if (write && (hdr->flags & SHM_F_CQ_DATA) && ep->util.rx_cq)
		util_ep_rx_comp(&ep->util, NULL,
				FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
				0, NULL, hdr->data, 0,
				shm_conn_fi_addr(ep, conn));
}

int shm_rma_handle(struct shm_ep *ep, struct shm_conn *conn,
		   const struct shm_cell_hdr *hdr, const uint8_t *payload)
{
	struct shm_rma_req req;
	struct shm_cell *reply;
	int status;

	if (shm_conn_open_peer(ep, conn))
		return 0;	/* nobody to answer */
	reply = shm_peer_reserve(conn->peer);
	if (!reply)
		return -FI_EAGAIN;
	reply->hdr.len = 0;
	status = shm_rma_parse(hdr, payload, &req);
	if (!status)
		status = hdr->op == SHM_OP_WRITE ?
			 shm_rma_do_write(ep, conn, hdr, &req) :
			 shm_rma_do_read(ep, conn, hdr, &req, reply);
	if (status)
		reply->hdr.len = 0;
	reply->hdr.op = SHM_OP_ACK;
	reply->hdr.flags = SHM_F_VER;
	reply->hdr.proto = (uint32_t)status;
	reply->hdr.tag = 0;
	reply->hdr.data = 0;
	reply->hdr.cookie = hdr->cookie;
	shm_queue_commit(reply);
	shm_rma_target_events(ep, conn, hdr, status);
	return 0;
}

/* ---- fi_ops_rma ------------------------------------------------------ */

static ssize_t shm_rma_read(struct fid_ep *ep_fid, void *buf, size_t len,
			    void *desc, fi_addr_t src, uint64_t addr,
			    uint64_t key, void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };

	(void)desc;
	return shm_rma_post(ep, SHM_OP_READ, &iov, 1, &rma, 1, src, 0,
			    context, ep->util.tx_op_flags);
}

static ssize_t shm_rma_readv(struct fid_ep *ep_fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     uint64_t addr, uint64_t key, void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct fi_rma_iov rma = { .addr = addr, .key = key,
				  .len = shm_iov_total(iov, count) };

	(void)desc;
	return shm_rma_post(ep, SHM_OP_READ, iov, count, &rma, 1, src, 0,
			    context, ep->util.tx_op_flags);
}

static ssize_t shm_rma_readmsg(struct fid_ep *ep_fid,
			       const struct fi_msg_rma *msg, uint64_t flags)
{
	return shm_rma_post(to_shm_ep(ep_fid), SHM_OP_READ, msg->msg_iov,
			    msg->iov_count, msg->rma_iov, msg->rma_iov_count,
			    msg->addr, 0, msg->context,
			    flags & ~FI_REMOTE_CQ_DATA);
}

static ssize_t shm_rma_write(struct fid_ep *ep_fid, const void *buf,
			     size_t len, void *desc, fi_addr_t dest,
			     uint64_t addr, uint64_t key, void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };

	(void)desc;
	return shm_rma_post(ep, SHM_OP_WRITE, &iov, 1, &rma, 1, dest, 0,
			    context, ep->util.tx_op_flags);
}

static ssize_t shm_rma_writev(struct fid_ep *ep_fid, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest,
			      uint64_t addr, uint64_t key, void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct fi_rma_iov rma = { .addr = addr, .key = key,
				  .len = shm_iov_total(iov, count) };

	(void)desc;
	return shm_rma_post(ep, SHM_OP_WRITE, iov, count, &rma, 1, dest, 0,
			    context, ep->util.tx_op_flags);
}

static ssize_t shm_rma_writemsg(struct fid_ep *ep_fid,
				const struct fi_msg_rma *msg, uint64_t flags)
{
	return shm_rma_post(to_shm_ep(ep_fid), SHM_OP_WRITE, msg->msg_iov,
			    msg->iov_count, msg->rma_iov, msg->rma_iov_count,
			    msg->addr, msg->data, msg->context, flags);
}

static ssize_t shm_rma_inject(struct fid_ep *ep_fid, const void *buf,
			      size_t len, fi_addr_t dest, uint64_t addr,
			      uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };

	return shm_rma_post(to_shm_ep(ep_fid), SHM_OP_WRITE, &iov, 1, &rma, 1,
			    dest, 0, NULL, FI_INJECT);
}

static ssize_t shm_rma_writedata(struct fid_ep *ep_fid, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest, uint64_t addr, uint64_t key,
				 void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };

	(void)desc;
	return shm_rma_post(ep, SHM_OP_WRITE, &iov, 1, &rma, 1, dest, data,
			    context, ep->util.tx_op_flags | FI_REMOTE_CQ_DATA);
}

static ssize_t shm_rma_injectdata(struct fid_ep *ep_fid, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest,
				  uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };

	return shm_rma_post(to_shm_ep(ep_fid), SHM_OP_WRITE, &iov, 1, &rma, 1,
			    dest, data, NULL, FI_INJECT | FI_REMOTE_CQ_DATA);
}

const struct fi_ops_rma shm_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = shm_rma_read,
	.readv = shm_rma_readv,
	.readmsg = shm_rma_readmsg,
	.write = shm_rma_write,
	.writev = shm_rma_writev,
	.writemsg = shm_rma_writemsg,
	.inject = shm_rma_inject,
	.writedata = shm_rma_writedata,
	.injectdata = shm_rma_injectdata,
};
