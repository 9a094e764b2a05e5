/* SPDX-License-Identifier: MIT */
/*
 * Atomics: the initiator sends an ATOMIC cell with the operands (and
 * compare values); the target checks the region (key, bounds, access),
 * applies the operation with util_atomic_apply (element-wise atomic against
 * every weft process that maps the same memory) and ACKs with the old
 * values for fetching and compare operations. One ioc and one target
 * region per operation; operands travel inline, so count is bounded by
 * the domain's atomic_max_bytes (what fi_query_atomic reports).
 */
#include "weft/compat.h"

#include <string.h>

#include "shm.h"

struct shm_amo_args {
	enum util_atomic_kind kind;
	const void *buf;
	const void *compare;
	void *result;
	size_t count;
	fi_addr_t dest;
	uint64_t addr;
	uint64_t key;
	enum fi_datatype datatype;
	enum fi_op op;
	void *context;
	uint64_t flags;
};

static ssize_t shm_amo_check(struct shm_ep *ep, const struct shm_amo_args *a,
			     size_t *bytes)
{
	size_t size = util_atomic_datatype_size(a->datatype);
	int ret = util_atomic_kind_valid(a->kind, a->op, a->datatype);

	if (ret || !size || !a->count) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"atomic op %d on datatype %d count %zu unsupported\n",
			a->op, a->datatype, a->count);
		return ret ? ret : -FI_EINVAL;
	}
	*bytes = size * a->count;
	if (*bytes > ep->util.domain->atomic_max_bytes ||
	    (a->kind != UTIL_ATOMIC_WRITE && !a->result) ||
	    (a->kind == UTIL_ATOMIC_COMPARE && !a->compare) ||
	    (a->op != FI_ATOMIC_READ && !a->buf)) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"atomic of %zu bytes (max %zu) or missing buffers\n",
			*bytes, ep->util.domain->atomic_max_bytes);
		return -FI_EINVAL;
	}
	return 0;
}

static void shm_amo_fill(struct shm_cell *cell, const struct shm_amo_args *a,
			 size_t bytes)
{
	struct shm_amo *amo = (struct shm_amo *)cell->payload;
	size_t len = sizeof(*amo);

	amo->addr = a->addr;
	amo->key = a->key;
	amo->count = (uint32_t)a->count;
	amo->datatype = (uint8_t)a->datatype;
	amo->op = (uint8_t)a->op;
	amo->pad = 0;
	if (a->op != FI_ATOMIC_READ)
		memcpy(amo->operands, a->buf, bytes);
	else
		memset(amo->operands, 0, bytes);
	len += bytes;
	if (a->kind == UTIL_ATOMIC_COMPARE) {
		memcpy(amo->operands + bytes, a->compare, bytes);
		len += bytes;
	}
	cell->hdr.op = SHM_OP_ATOMIC;
	cell->hdr.flags = SHM_F_VER |
			  (a->kind != UTIL_ATOMIC_WRITE ? SHM_F_FETCH : 0) |
			  (a->kind == UTIL_ATOMIC_COMPARE ? SHM_F_COMPARE : 0);
	cell->hdr.len = (uint32_t)len;
	cell->hdr.proto = 0;
	cell->hdr.tag = 0;
	cell->hdr.data = 0;
}

static ssize_t shm_amo_post_locked(struct shm_ep *ep, struct shm_conn *conn,
				   const struct shm_amo_args *a, size_t bytes)
{
	struct shm_tx_entry *tx = shm_tx_get(ep, conn);
	struct shm_cell *cell;

	if (!tx)
		return -FI_EAGAIN;
	cell = shm_peer_reserve(conn->peer);
	if (!cell) {
		shm_tx_put(ep, tx);
		return shm_conn_full(ep, conn);
	}
	shm_amo_fill(cell, a, bytes);
	cell->hdr.cookie = shm_tx_cookie(tx);
	shm_peer_commit(conn->peer, cell);

	if (a->kind != UTIL_ATOMIC_WRITE) {
		tx->res[0].iov_base = a->result;
		tx->res[0].iov_len = bytes;
		tx->res_cnt = 1;
	}
	tx->context = a->context;
	tx->len = bytes;
	tx->comp_flags = FI_ATOMIC |
			 (a->kind == UTIL_ATOMIC_WRITE ? FI_WRITE : FI_READ);
	tx->cntr = a->kind == UTIL_ATOMIC_WRITE ? UTIL_CNTR_WRITE :
						  UTIL_CNTR_READ;
	tx->want_comp = util_ep_tx_wants_comp(&ep->util, a->flags);
	shm_tx_activate(ep, tx);
	return 0;
}

static ssize_t shm_amo_post(struct shm_ep *ep, const struct shm_amo_args *a)
{
	struct shm_conn *conn;
	size_t bytes;
	ssize_t ret;

	ret = shm_amo_check(ep, a, &bytes);
	if (ret)
		return ret;
	if (bytes > ep->payload_max) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA, "atomic result too large\n");
		return -FI_EINVAL;
	}
	if ((a->flags & FI_INJECT) && bytes > ep->util.inject_size) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"atomic inject of %zu bytes exceeds inject_size %zu\n",
			bytes, ep->util.inject_size);
		return -FI_EINVAL;
	}
	util_lock_acquire(&ep->util.lock);
	ret = shm_conn_tx(ep, a->dest, &conn);
	if (!ret)
		ret = shm_amo_post_locked(ep, conn, a, bytes);
	util_lock_release(&ep->util.lock);
	return ret;
}

/* ---- target side ---------------------------------------------------- */

/* Positive FI_E* or 0; a fetch's old values go to out. */
static int shm_amo_apply(struct shm_ep *ep, const struct shm_cell_hdr *hdr,
			 const uint8_t *payload, const struct shm_amo *amo,
			 size_t bytes, uint8_t *out)
{
	bool fetch = hdr->flags & SHM_F_FETCH;
	bool cmp = hdr->flags & SHM_F_COMPARE;
	uint64_t access;
	void *dst;
	int ret;

	access = amo->op == FI_ATOMIC_READ ? FI_REMOTE_READ :
		 FI_REMOTE_WRITE | (fetch ? FI_REMOTE_READ : 0);
	ret = util_mr_check(&ep->util.domain->mr_map, amo->key, amo->addr,
			    bytes, access, &dst);
	if (ret)
		return -ret;
	ret = util_atomic_apply((enum fi_op)amo->op,
				(enum fi_datatype)amo->datatype, dst,
				payload + sizeof(*amo),
				cmp ? payload + sizeof(*amo) + bytes : NULL,
				fetch ? out : NULL, amo->count);
	return ret ? -ret : 0;
}

/* Applied when its request is read, whether or not the ACK finds a cell
 * at once (shm_reply.c says why). */
int shm_atomic_handle(struct shm_ep *ep, struct shm_conn *conn,
		      const struct shm_cell_hdr *hdr, const uint8_t *payload)
{
	bool fetch = hdr->flags & SHM_F_FETCH;
	struct shm_reply reply;
	struct shm_amo amo;
	size_t bytes;
	uint32_t len;
	int status;

	if (shm_conn_open_peer(ep, conn))
		return 0;
	if (WEFT_UNLIKELY(conn->rma_busy))
		return -FI_EAGAIN;	/* behind its bounce RMA */
	status = shm_amo_parse(hdr, payload, shm_peer_payload_max(conn->peer),
			       &amo, &bytes);
	len = !status && fetch ? (uint32_t)bytes : 0;
	if (shm_reply_open(ep, conn, len, &reply))
		return -FI_EAGAIN;	/* no memory for the reply yet */
	if (!status)
		status = shm_amo_apply(ep, hdr, payload, &amo, bytes,
				       reply.payload);
	shm_reply_close(ep, &reply, SHM_OP_ACK, hdr->cookie, status, 0, 0,
			status ? 0 : len);
	if (!status) {
		util_ep_cntr_inc(&ep->util, fetch ? UTIL_CNTR_REMOTE_READ :
						    UTIL_CNTR_REMOTE_WRITE);
		util_mr_count(&ep->util.domain->mr_map, amo.key,
			      amo.op == FI_ATOMIC_READ ? FI_REMOTE_READ :
			      FI_REMOTE_WRITE);
	}
	return 0;
}

/* ---- fi_ops_atomic --------------------------------------------------- */

static ssize_t shm_amo_one(const void *iov, size_t count, const char *what)
{
	if (count != 1 || !iov) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"atomic %s: exactly one ioc supported, got %zu\n",
			what, count);
		return -FI_EINVAL;
	}
	return 0;
}

static ssize_t shm_amo_msg(struct fid_ep *ep_fid,
			   const struct fi_msg_atomic *msg,
			   enum util_atomic_kind kind,
			   const struct fi_ioc *comparev, size_t compare_count,
			   struct fi_ioc *resultv, size_t result_count,
			   uint64_t flags)
{
	struct shm_amo_args a = {
		.kind = kind, .dest = msg->addr, .datatype = msg->datatype,
		.op = msg->op, .context = msg->context,
		/* FI_INJECT concerns the operand only: the result buffer of
		 * a fetch is written when the operation completes. */
		.flags = util_ep_user_flags(flags) &
			 (kind == UTIL_ATOMIC_WRITE ? ~0ULL : ~FI_INJECT),
	};

	if (shm_amo_one(msg->msg_iov, msg->iov_count, "operand") ||
	    shm_amo_one(msg->rma_iov, msg->rma_iov_count, "target") ||
	    (kind != UTIL_ATOMIC_WRITE &&
	     shm_amo_one(resultv, result_count, "result")) ||
	    (kind == UTIL_ATOMIC_COMPARE &&
	     shm_amo_one(comparev, compare_count, "compare")))
		return -FI_EINVAL;
	a.buf = msg->msg_iov[0].addr;
	a.count = msg->msg_iov[0].count;
	a.addr = msg->rma_iov[0].addr;
	a.key = msg->rma_iov[0].key;
	if (msg->rma_iov[0].count != a.count)
		return -FI_EINVAL;
	if (kind != UTIL_ATOMIC_WRITE) {
		a.result = resultv[0].addr;
		if (resultv[0].count < a.count)
			return -FI_EINVAL;
	}
	if (kind == UTIL_ATOMIC_COMPARE) {
		a.compare = comparev[0].addr;
		if (comparev[0].count < a.count)
			return -FI_EINVAL;
	}
	return shm_amo_post(to_shm_ep(ep_fid), &a);
}

static ssize_t shm_amo_write(struct fid_ep *ep_fid, const void *buf,
			     size_t count, void *desc, fi_addr_t dest,
			     uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op,
			     void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct shm_amo_args a = {
		.kind = UTIL_ATOMIC_WRITE, .buf = buf, .count = count,
		.dest = dest, .addr = addr, .key = key, .datatype = datatype,
		.op = op, .context = context, .flags = ep->util.tx_op_flags,
	};

	(void)desc;
	return shm_amo_post(ep, &a);
}

static ssize_t shm_amo_writev(struct fid_ep *ep_fid, const struct fi_ioc *iov,
			      void **desc, size_t count, fi_addr_t dest,
			      uint64_t addr, uint64_t key,
			      enum fi_datatype datatype, enum fi_op op,
			      void *context)
{
	if (shm_amo_one(iov, count, "operand"))
		return -FI_EINVAL;
	return shm_amo_write(ep_fid, iov[0].addr, iov[0].count,
			     desc ? desc[0] : NULL, dest, addr, key, datatype,
			     op, context);
}

static ssize_t shm_amo_writemsg(struct fid_ep *ep_fid,
				const struct fi_msg_atomic *msg,
				uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_shm_ep(ep_fid)->util,
					"fi_atomicmsg");
	return shm_amo_msg(ep_fid, msg, UTIL_ATOMIC_WRITE, NULL, 0, NULL, 0,
			   flags);
}

static ssize_t shm_amo_inject(struct fid_ep *ep_fid, const void *buf,
			      size_t count, fi_addr_t dest, uint64_t addr,
			      uint64_t key, enum fi_datatype datatype,
			      enum fi_op op)
{
	struct shm_amo_args a = {
		.kind = UTIL_ATOMIC_WRITE, .buf = buf, .count = count,
		.dest = dest, .addr = addr, .key = key, .datatype = datatype,
		.op = op, .flags = FI_INJECT | UTIL_OP_NO_COMP,
	};

	return shm_amo_post(to_shm_ep(ep_fid), &a);
}

static ssize_t shm_amo_readwrite(struct fid_ep *ep_fid, const void *buf,
				 size_t count, void *desc, void *result,
				 void *result_desc, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct shm_amo_args a = {
		.kind = UTIL_ATOMIC_FETCH, .buf = buf, .result = result,
		.count = count, .dest = dest, .addr = addr, .key = key,
		.datatype = datatype, .op = op, .context = context,
		.flags = ep->util.tx_op_flags,
	};

	(void)desc; (void)result_desc;
	return shm_amo_post(ep, &a);
}

static ssize_t shm_amo_readwritev(struct fid_ep *ep_fid,
				  const struct fi_ioc *iov, void **desc,
				  size_t count, struct fi_ioc *resultv,
				  void **result_desc, size_t result_count,
				  fi_addr_t dest, uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op,
				  void *context)
{
	(void)desc; (void)result_desc;
	if (shm_amo_one(iov, count, "operand") ||
	    shm_amo_one(resultv, result_count, "result"))
		return -FI_EINVAL;
	return shm_amo_readwrite(ep_fid, iov[0].addr, iov[0].count, NULL,
				 resultv[0].addr, NULL, dest, addr, key,
				 datatype, op, context);
}

static ssize_t shm_amo_readwritemsg(struct fid_ep *ep_fid,
				    const struct fi_msg_atomic *msg,
				    struct fi_ioc *resultv, void **result_desc,
				    size_t result_count, uint64_t flags)
{
	(void)result_desc;
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_shm_ep(ep_fid)->util,
					"fi_fetch_atomicmsg");
	return shm_amo_msg(ep_fid, msg, UTIL_ATOMIC_FETCH, NULL, 0, resultv,
			   result_count, flags);
}

static ssize_t shm_amo_compwrite(struct fid_ep *ep_fid, const void *buf,
				 size_t count, void *desc, const void *compare,
				 void *compare_desc, void *result,
				 void *result_desc, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct shm_amo_args a = {
		.kind = UTIL_ATOMIC_COMPARE, .buf = buf, .compare = compare,
		.result = result, .count = count, .dest = dest, .addr = addr,
		.key = key, .datatype = datatype, .op = op,
		.context = context, .flags = ep->util.tx_op_flags,
	};

	(void)desc; (void)compare_desc; (void)result_desc;
	return shm_amo_post(ep, &a);
}

static ssize_t shm_amo_compwritev(struct fid_ep *ep_fid,
				  const struct fi_ioc *iov, void **desc,
				  size_t count, const struct fi_ioc *comparev,
				  void **compare_desc, size_t compare_count,
				  struct fi_ioc *resultv, void **result_desc,
				  size_t result_count, fi_addr_t dest,
				  uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op,
				  void *context)
{
	(void)desc; (void)compare_desc; (void)result_desc;
	if (shm_amo_one(iov, count, "operand") ||
	    shm_amo_one(comparev, compare_count, "compare") ||
	    shm_amo_one(resultv, result_count, "result"))
		return -FI_EINVAL;
	return shm_amo_compwrite(ep_fid, iov[0].addr, iov[0].count, NULL,
				 comparev[0].addr, NULL, resultv[0].addr, NULL,
				 dest, addr, key, datatype, op, context);
}

static ssize_t shm_amo_compwritemsg(struct fid_ep *ep_fid,
				    const struct fi_msg_atomic *msg,
				    const struct fi_ioc *comparev,
				    void **compare_desc, size_t compare_count,
				    struct fi_ioc *resultv, void **result_desc,
				    size_t result_count, uint64_t flags)
{
	(void)compare_desc; (void)result_desc;
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_shm_ep(ep_fid)->util,
					"fi_compare_atomicmsg");
	return shm_amo_msg(ep_fid, msg, UTIL_ATOMIC_COMPARE, comparev,
			   compare_count, resultv, result_count, flags);
}

const struct fi_ops_atomic shm_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = shm_amo_write,
	.writev = shm_amo_writev,
	.writemsg = shm_amo_writemsg,
	.inject = shm_amo_inject,
	.readwrite = shm_amo_readwrite,
	.readwritev = shm_amo_readwritev,
	.readwritemsg = shm_amo_readwritemsg,
	.compwrite = shm_amo_compwrite,
	.compwritev = shm_amo_compwritev,
	.compwritemsg = shm_amo_compwritemsg,
	.writevalid = util_ep_atomic_writevalid,
	.readwritevalid = util_ep_atomic_readwritevalid,
	.compwritevalid = util_ep_atomic_compwritevalid,
};
