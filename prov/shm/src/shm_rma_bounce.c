/* SPDX-License-Identifier: MIT */
/*
 * RMA through bounce segments, for targets that CMA does not reach
 * (ptrace restrictions, another user namespace, FI_SHM_DISABLE_CMA). The
 * segments and their push/pull are the message path's (shm_bounce.h); the
 * side that has the bytes pushes into its own segments, the other drains
 * them from its mapping of the pusher's region:
 *
 *   WRITE  initiator pushes (transfer id of its own region, in the cell);
 *          target drains into the registered region, then ACKs.
 *   READ   target pushes the registered bytes; initiator drains them into
 *          its buffers. The transfer id is derived by both sides from the
 *          initiator's slot in the target's region and the operation's
 *          cookie (shm_rma_read_xfer_id), so the initiator drains from the
 *          start and no extra message is needed; the target ACKs once the
 *          last segment is drained.
 *
 * The target checks every region (key, bounds, access) when the request
 * arrives, and again for each segment before it fills or drains it, so a
 * region closed in the middle stops the transfer there. Any failure is the
 * ACK's status, i.e. an error completion at the initiator. While a bounce
 * RMA of a peer runs at the target, that peer's later cells wait (held at
 * the head of the queue, as a CMA copy in the handler would hold them), so
 * the advertised RMA and send-after-write orders hold. A peer that dies
 * mid-transfer is found by the liveness checks of both sides: the
 * initiator's operation fails (FI_EHOSTUNREACH), the target drops its part.
 */
#include "weft/compat.h"

#include <string.h>
#include <utlist.h>

#include "shm.h"

/* Progress calls between liveness checks of the peer of a transfer. */
#define SHM_RMA_CHECK_MASK 0x3ffu

/* A bounce RMA we are the target of. */
struct shm_rma_xfer {
	struct shm_rma_xfer *prev, *next;	/* ep->rma_xfers */
	struct shm_ep *ep;
	struct shm_conn *conn;
	uint64_t cookie;
	uint64_t data;
	uint64_t access;		/* FI_REMOTE_WRITE or FI_REMOTE_READ */
	uint16_t op;
	uint16_t flags;
	struct shm_rma_req req;
	struct shm_bounce_rx brx;	/* WRITE: we drain the initiator */
	struct shm_bounce_tx btx;	/* READ: we push */
};

int shm_rma_bounce_init(struct shm_ep *ep)
{
	ep->rma_xfers = NULL;
	return util_pool_init(&ep->rma_pool, sizeof(struct shm_rma_xfer), 0,
			      2, 4, 0, NULL, NULL);
}

void shm_rma_bounce_fini(struct shm_ep *ep)
{
	util_pool_fini(&ep->rma_pool);
}

/* A READ's transfer id in the target's region: top bit set (the region's
 * own ids count up from 1 and never reach it), then the initiator's slot
 * there (16 bits), then the cookie's index (32 bits) and generation (low
 * 15 bits). Unique among the transfers in flight in that region: a slot
 * belongs to one initiator, an index to one of its operations at a time. */
static uint64_t shm_rma_read_xfer_id(uint16_t src, uint64_t cookie)
{
	return 1ull << 63 | (uint64_t)src << 47 |
	       ((cookie >> 32) & 0x7fffull) << 32 | (cookie & 0xffffffffull);
}

void shm_rma_bounce_start(struct shm_ep *ep, struct shm_tx_entry *tx,
			  enum shm_op op, struct shm_rma *r,
			  const struct iovec *iov, size_t count, size_t len)
{
	if (tx->iov != iov)
		memcpy(tx->iov, iov, count * sizeof(*iov));
	tx->iov_cnt = count;
	if (op == SHM_OP_WRITE) {
		r->xfer_id = shm_tx_bounce_push(ep, tx, count, len);
		return;
	}
	memset(&tx->brx, 0, sizeof(tx->brx));
	tx->brx.iov = tx->iov;
	tx->brx.iov_count = count;
	tx->brx.total = len;
	tx->brx.xfer_id = shm_rma_read_xfer_id(tx->conn->peer->q.src,
					       shm_tx_cookie(tx));
	tx->pull_active = true;
	r->xfer_id = 0;
}

/* Bytes [off, off + len) of the transfer: still inside regions registered
 * under the request's keys, with the access it needs, at the same memory
 * as when the request was checked. A negative FI_E* stops the transfer. */
static int shm_rma_seg_check(void *arg, size_t off, size_t len)
{
	struct shm_rma_xfer *x = arg;
	struct util_mr_map *map = &x->ep->util.domain->mr_map;
	uint32_t i;
	void *p;
	int ret;

	for (i = 0; i < x->req.hdr.rma_cnt && len; i++) {
		const struct shm_rma_iov *r = &x->req.rma[i];
		size_t n;

		if (off >= r->len) {
			off -= r->len;
			continue;
		}
		n = r->len - off < len ? r->len - off : len;
		ret = util_mr_check(map, r->key, r->addr + off, n, x->access,
				    &p);
		/* The key may now name other memory. */
		if (!ret && p != (uint8_t *)x->req.local[i].iov_base + off)
			ret = -FI_ENOKEY;
		if (ret) {
			WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA,
				"bounce RMA from %s: region of key %llu no "
				"longer valid: %s\n", x->conn->name,
				(unsigned long long)r->key, fi_strerror(-ret));
			return ret;
		}
		len -= n;
		off = 0;
	}
	return 0;
}

static void shm_rma_xfer_setup(struct shm_rma_xfer *x,
			       const struct shm_cell_hdr *hdr)
{
	if (x->op == SHM_OP_WRITE) {
		memset(&x->brx, 0, sizeof(x->brx));
		x->brx.iov = x->req.local;
		x->brx.iov_count = x->req.hdr.rma_cnt;
		x->brx.total = x->req.hdr.total;
		x->brx.xfer_id = x->req.hdr.xfer_id;
		x->brx.check = shm_rma_seg_check;
		x->brx.check_arg = x;
		return;
	}
	memset(&x->btx, 0, sizeof(x->btx));
	x->btx.iov = x->req.local;
	x->btx.iov_count = x->req.hdr.rma_cnt;
	x->btx.total = x->req.hdr.total;
	x->btx.xfer_id = shm_rma_read_xfer_id(hdr->src, hdr->cookie);
	x->btx.check = shm_rma_seg_check;
	x->btx.check_arg = x;
}

int shm_rma_bounce_handle(struct shm_ep *ep, struct shm_conn *conn,
			  const struct shm_cell_hdr *hdr,
			  const uint8_t *payload)
{
	struct shm_rma_xfer *x = util_pool_get(&ep->rma_pool);
	int status;

	if (!x)
		return -FI_EAGAIN;
	x->ep = ep;
	x->conn = conn;
	x->cookie = hdr->cookie;
	x->data = hdr->data;
	x->op = hdr->op;
	x->flags = hdr->flags;
	x->access = hdr->op == SHM_OP_WRITE ? FI_REMOTE_WRITE : FI_REMOTE_READ;
	status = shm_rma_parse(hdr, payload, &x->req);
	if (status)
		WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA,
			"malformed bounce RMA request from %s\n", conn->name);
	else
		status = shm_rma_map(ep, &x->req, x->access);
	if (status) {
		util_pool_put(&ep->rma_pool, x);
		shm_ack_send(ep, conn, hdr->cookie, status);
		return 0;
	}
	shm_rma_xfer_setup(x, hdr);
	conn->rma_busy++;
	DL_APPEND(ep->rma_xfers, x);
	return 0;
}

/* The transfer is over: status (0 or a positive FI_E*) to the initiator,
 * unless it is dead, in which case our segments are taken back. */
static void shm_rma_xfer_end(struct shm_ep *ep, struct shm_rma_xfer *x,
			     int status)
{
	struct shm_conn *conn = x->conn;

	if (conn->dead) {
		if (x->op == SHM_OP_READ)
			shm_conn_bounce_abort(ep, conn, &x->btx);
	} else {
		if (!status)
			shm_rma_target_events(ep, conn, x->op, x->flags,
					      x->data, &x->req);
		shm_ack_send(ep, conn, x->cookie, status);
	}
	conn->rma_busy--;
	DL_DELETE(ep->rma_xfers, x);
	util_pool_put(&ep->rma_pool, x);
}

/* 1 done, 0 more to come, or a negative FI_E*. */
static int shm_rma_xfer_step(struct shm_ep *ep, struct shm_rma_xfer *x)
{
	int ret;

	if (x->op == SHM_OP_WRITE)
		return shm_bounce_pull(x->conn->peer, &x->brx);
	ret = shm_conn_bounce_push(ep, x->conn, &x->btx);
	if (ret == 1 && x->btx.err)
		return x->btx.err;
	return ret;
}

void shm_rma_bounce_progress(struct shm_ep *ep)
{
	struct shm_rma_xfer *x, *tmp;
	int ret;

	DL_FOREACH_SAFE(ep->rma_xfers, x, tmp) {
		if (WEFT_UNLIKELY(x->conn->dead)) {
			shm_rma_xfer_end(ep, x, FI_EIO);
			continue;
		}
		ret = shm_rma_xfer_step(ep, x);
		if (ret == 1)
			shm_rma_xfer_end(ep, x, 0);
		else if (ret < 0)
			shm_rma_xfer_end(ep, x, -ret < FI_ERRNO_MAX ? -ret :
							FI_EIO);
		else if ((ep->progress_calls & SHM_RMA_CHECK_MASK) == 0 &&
			 !shm_conn_check(ep, x->conn))
			return;	/* the check ended x and its siblings */
	}
}

void shm_rma_bounce_fail_conn(struct shm_ep *ep, struct shm_conn *conn)
{
	struct shm_rma_xfer *x, *tmp;

	DL_FOREACH_SAFE(ep->rma_xfers, x, tmp)
		if (x->conn == conn)
			shm_rma_xfer_end(ep, x, FI_EIO);
}
