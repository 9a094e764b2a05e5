/* SPDX-License-Identifier: MIT */
/*
 * RMA. The initiator sends a WRITE or READ cell naming the target regions
 * (key, address, length); the target checks each against its MR map
 * (util_mr_check: key, bounds, access), moves the bytes (inline in the cell
 * or its ACK, else CMA between the initiator's buffers and the region) and
 * ACKs with a status, so every failure surfaces as an error completion at
 * the initiator. Where CMA toward the target is refused, large RMA moves
 * through bounce segments instead (shm_rma_bounce.c).
 */
#include "weft/compat.h"

#include <string.h>

#include "shm.h"

static void shm_rma_fill(struct shm_cell *cell, enum shm_op op,
			 const struct iovec *iov, size_t count,
			 const struct fi_rma_iov *rma, size_t rma_cnt,
			 size_t len, enum shm_copy_mode mode)
{
	bool inl = mode == SHM_COPY_INLINE;
	struct shm_rma *r = (struct shm_rma *)cell->payload;
	struct shm_iov *riov;
	size_t i;

	r->total = len;
	r->xfer_id = 0;
	r->rma_cnt = (uint32_t)rma_cnt;
	r->iov_cnt = mode == SHM_COPY_CMA ? (uint32_t)count : 0;
	for (i = 0; i < rma_cnt; i++) {
		r->rma[i].addr = rma[i].addr;
		r->rma[i].len = rma[i].len;
		r->rma[i].key = rma[i].key;
	}
	cell->hdr.len = (uint32_t)shm_rma_hdr_size(rma_cnt);
	cell->hdr.proto = mode;
	if (mode == SHM_COPY_BOUNCE)
		return;
	if (inl) {
		if (op == SHM_OP_WRITE) {
			util_iov_copy_from(iov, count, 0,
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
	if (util_iov_check(&shm_prov, "RMA", iov, count, len))
		return -FI_EINVAL;
	for (i = 0; i < rma_cnt; i++) {
		if (rma[i].len > SIZE_MAX - rlen) {
			FI_WARN(&shm_prov, FI_LOG_EP_DATA,
				"RMA remote lengths overflow at rma_iov[%zu]\n",
				i);
			return -FI_EINVAL;
		}
		rlen += rma[i].len;
	}
	if (rlen != *len) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"RMA local %zu bytes vs remote %zu bytes\n", *len, rlen);
		return -FI_EINVAL;
	}
	return 0;
}

/* A CMA request, kept for shm_rma_resend. */
static void shm_rma_keep(struct shm_tx_entry *tx, enum shm_op op,
			 uint16_t cflags, const struct iovec *iov, size_t count,
			 const struct fi_rma_iov *rma, size_t rma_cnt,
			 uint64_t data)
{
	/* count may be 0 with iov NULL (a zero-byte fi_writemsg) */
	if (count)
		memcpy(tx->iov, iov, count * sizeof(*iov));
	tx->iov_cnt = count;
	if (rma_cnt)
		memcpy(tx->rma, rma, rma_cnt * sizeof(*rma));
	tx->rma_cnt = rma_cnt;
	tx->rma_op = (uint16_t)op;
	tx->rma_cflags = cflags;
	tx->rma_data = data;
	tx->rma_cma = true;
}

void shm_rma_cma_refused(struct shm_ep *ep, struct shm_tx_entry *tx)
{
	struct shm_peer *peer = tx->conn->peer;

	if (peer->cma)
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"%s cannot reach our memory by CMA: bounce segments "
			"from now on\n", tx->conn->name);
	shm_peer_cma_lost(peer);
	tx->rma_cma = false;
	tx->rma_resend = true;
	shm_rma_resend(ep, tx);
}

void shm_rma_resend(struct shm_ep *ep, struct shm_tx_entry *tx)
{
	enum shm_op op = (enum shm_op)tx->rma_op;
	struct shm_cell *cell = shm_peer_reserve(tx->conn->peer);

	if (!cell)
		return;		/* again from progress */
	tx->rma_resend = false;
	tx->gen++;		/* replies to the first request are stale */
	cell->hdr.op = tx->rma_op;
	cell->hdr.flags = tx->rma_cflags;
	cell->hdr.tag = 0;
	cell->hdr.data = tx->rma_data;
	cell->hdr.cookie = shm_tx_cookie(tx);
	shm_rma_fill(cell, op, tx->iov, tx->iov_cnt, tx->rma, tx->rma_cnt,
		     tx->len, SHM_COPY_BOUNCE);
	shm_rma_bounce_start(ep, tx, op, (struct shm_rma *)cell->payload,
			     tx->iov, tx->iov_cnt, tx->len);
	shm_peer_commit(tx->conn->peer, cell);
}

static ssize_t shm_rma_post_locked(struct shm_ep *ep, struct shm_conn *conn,
				   enum shm_op op, const struct iovec *iov,
				   size_t count, const struct fi_rma_iov *rma,
				   size_t rma_cnt, size_t len, uint64_t data,
				   void *context, uint64_t flags)
{
	enum shm_copy_mode mode = SHM_COPY_INLINE;
	struct shm_tx_entry *tx;
	struct shm_cell *cell;

	if (!shm_rma_inline(ep, conn, op, rma_cnt, len)) {
		if (flags & FI_INJECT) {
			/* Within inject_size, but the peer's cells are
			 * smaller than ours. */
			FI_WARN(&shm_prov, FI_LOG_EP_DATA,
				"RMA inject of %zu bytes does not fit %s's "
				"cells\n", len, conn->name);
			return -FI_EINVAL;
		}
		mode = shm_peer_cma(conn->peer) ? SHM_COPY_CMA :
						  SHM_COPY_BOUNCE;
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
	shm_rma_fill(cell, op, iov, count, rma, rma_cnt, len, mode);
	if (mode == SHM_COPY_BOUNCE)
		shm_rma_bounce_start(ep, tx, op,
				     (struct shm_rma *)cell->payload, iov,
				     count, len);
	else if (mode == SHM_COPY_CMA)
		shm_rma_keep(tx, op, cell->hdr.flags, iov, count, rma, rma_cnt,
			     data);
	shm_peer_commit(conn->peer, cell);

	if (op == SHM_OP_READ && mode == SHM_COPY_INLINE) {
		if (count)
			memcpy(tx->res, iov, count * sizeof(*iov));
		tx->res_cnt = count;
	}
	tx->context = context;
	tx->len = len;
	tx->comp_flags = FI_RMA | (op == SHM_OP_WRITE ? FI_WRITE : FI_READ);
	tx->cntr = op == SHM_OP_WRITE ? UTIL_CNTR_WRITE : UTIL_CNTR_READ;
	tx->want_comp = util_ep_tx_wants_comp(&ep->util, flags);
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
	if ((flags & FI_INJECT) && len > ep->util.inject_size) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"RMA inject of %zu bytes exceeds inject_size %zu\n",
			len, ep->util.inject_size);
		return -FI_EINVAL;
	}
	util_lock_acquire(&ep->util.lock);
	ret = shm_conn_tx(ep, dest, &conn);
	if (!ret)
		ret = shm_rma_post_locked(ep, conn, op, iov, count, rma,
					  rma_cnt, len, data, context, flags);
	util_lock_release(&ep->util.lock);
	return ret;
}

/* ---- target side ---------------------------------------------------- */

int shm_rma_map(struct shm_ep *ep, struct shm_rma_req *req, uint64_t access)
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
	return shm_cma_cause(n);
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
		util_iov_copy_to(req->local, req->hdr.rma_cnt, 0,
				req->inline_data, req->inline_len);
		return 0;
	}
	n = shm_cma_read(conn->peer->pid, req->local, req->hdr.rma_cnt,
			 req->remote, req->hdr.iov_cnt);
	return shm_rma_cma_status(n, req->hdr.total);
}

/* An inline read's bytes go to out, the ACK's payload. */
static int shm_rma_do_read(struct shm_ep *ep, struct shm_conn *conn,
			   const struct shm_cell_hdr *hdr,
			   struct shm_rma_req *req, uint8_t *out)
{
	ssize_t n;
	int ret = shm_rma_map(ep, req, FI_REMOTE_READ);

	if (ret)
		return ret;
	if (hdr->proto == SHM_COPY_INLINE) {
		util_iov_copy_from(req->local, req->hdr.rma_cnt, 0, out,
				  req->hdr.total);
		return 0;
	}
	n = shm_cma_write(conn->peer->pid, req->local, req->hdr.rma_cnt,
			  req->remote, req->hdr.iov_cnt);
	return shm_rma_cma_status(n, req->hdr.total);
}

/* A successful RMA at the target: its counters (the endpoint's, and those
 * bound to the regions it touched), and the remote CQ data. */
void shm_rma_target_events(struct shm_ep *ep, struct shm_conn *conn,
			   uint16_t op, uint16_t flags, uint64_t data,
			   const struct shm_rma_req *req)
{
	bool write = op == SHM_OP_WRITE;
	uint32_t i;

	for (i = 0; i < req->hdr.rma_cnt; i++)
		util_mr_count(&ep->util.domain->mr_map, req->rma[i].key,
			      write ? FI_REMOTE_WRITE : FI_REMOTE_READ);

	util_ep_cntr_inc(&ep->util, write ? UTIL_CNTR_REMOTE_WRITE :
					    UTIL_CNTR_REMOTE_READ);
	if (write && (flags & SHM_F_CQ_DATA) && ep->util.rx_cq)
		util_ep_rx_comp(&ep->util, NULL,
				FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
				0, NULL, data, 0,
				shm_conn_fi_addr(ep, conn));
}

/* The data bytes of the ACK of a parsed request: an inline read's. */
static int shm_rma_reply_len(struct shm_conn *conn,
			     const struct shm_cell_hdr *hdr,
			     const struct shm_rma_req *req, uint32_t *len)
{
	*len = 0;
	if (hdr->op != SHM_OP_READ || hdr->proto != SHM_COPY_INLINE)
		return 0;
	if (req->hdr.total > shm_peer_payload_max(conn->peer))
		return FI_EINVAL;
	*len = (uint32_t)req->hdr.total;
	return 0;
}

/* The operation runs when its request is read, whether or not its ACK
 * finds a cell at once (shm_reply.c says why). */
int shm_rma_handle(struct shm_ep *ep, struct shm_conn *conn,
		   const struct shm_cell_hdr *hdr, const uint8_t *payload)
{
	struct shm_rma_req req;
	struct shm_reply reply;
	uint32_t len = 0;
	int status;

	if (shm_conn_open_peer(ep, conn))
		return 0;	/* nobody to answer */
	if (WEFT_UNLIKELY(conn->rma_busy))
		return -FI_EAGAIN;	/* behind its bounce RMA */
	if (hdr->proto == SHM_COPY_BOUNCE)
		return shm_rma_bounce_handle(ep, conn, hdr, payload);
	status = shm_rma_parse(hdr, payload, &req);
	if (!status)
		status = shm_rma_reply_len(conn, hdr, &req, &len);
	if (shm_reply_open(ep, conn, status ? 0 : len, &reply))
		return -FI_EAGAIN;	/* no memory for the reply yet */
	if (!status)
		status = hdr->op == SHM_OP_WRITE ?
			 shm_rma_do_write(ep, conn, hdr, &req) :
			 shm_rma_do_read(ep, conn, hdr, &req, reply.payload);
	shm_reply_close(ep, &reply, SHM_OP_ACK, hdr->cookie, status, 0, 0,
			status ? 0 : len);
	if (!status)
		shm_rma_target_events(ep, conn, hdr->op, hdr->flags, hdr->data,
				      &req);
	return 0;
}

/* ---- fi_ops_rma ------------------------------------------------------ */

/* The one target region of readv/writev spans the local iovs; arguments
 * that shm_rma_check_args refuses are not read here. */
static size_t shm_rma_iov_len(const struct iovec *iov, size_t count)
{
	return iov && count <= SHM_IOV_LIMIT ? util_iov_total(iov, count) : 0;
}

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
				  .len = shm_rma_iov_len(iov, count) };

	(void)desc;
	return shm_rma_post(ep, SHM_OP_READ, iov, count, &rma, 1, src, 0,
			    context, ep->util.tx_op_flags);
}

static ssize_t shm_rma_readmsg(struct fid_ep *ep_fid,
			       const struct fi_msg_rma *msg, uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_shm_ep(ep_fid)->util, "fi_readmsg");
	return shm_rma_post(to_shm_ep(ep_fid), SHM_OP_READ, msg->msg_iov,
			    msg->iov_count, msg->rma_iov, msg->rma_iov_count,
			    msg->addr, 0, msg->context,
			    util_ep_user_flags(flags) &
			    ~(FI_REMOTE_CQ_DATA | FI_INJECT));
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
				  .len = shm_rma_iov_len(iov, count) };

	(void)desc;
	return shm_rma_post(ep, SHM_OP_WRITE, iov, count, &rma, 1, dest, 0,
			    context, ep->util.tx_op_flags);
}

static ssize_t shm_rma_writemsg(struct fid_ep *ep_fid,
				const struct fi_msg_rma *msg, uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_shm_ep(ep_fid)->util,
					"fi_writemsg");
	return shm_rma_post(to_shm_ep(ep_fid), SHM_OP_WRITE, msg->msg_iov,
			    msg->iov_count, msg->rma_iov, msg->rma_iov_count,
			    msg->addr, msg->data, msg->context,
			    util_ep_user_flags(flags));
}

static ssize_t shm_rma_inject(struct fid_ep *ep_fid, const void *buf,
			      size_t len, fi_addr_t dest, uint64_t addr,
			      uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };

	return shm_rma_post(to_shm_ep(ep_fid), SHM_OP_WRITE, &iov, 1, &rma, 1,
			    dest, 0, NULL, FI_INJECT | UTIL_OP_NO_COMP);
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
			    dest, data, NULL,
			    FI_INJECT | FI_REMOTE_CQ_DATA | UTIL_OP_NO_COMP);
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
