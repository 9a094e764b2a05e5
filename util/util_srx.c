/* SPDX-License-Identifier: MIT */
/*
 * One receive side for the software-matching providers: see
 * include/weft/util_srx.h for the flow and the multi-recv rule.
 */
#include "weft/compat.h"
#include "weft/util_coll.h"
#include "weft/util_srx.h"

#include <string.h>
#include <utlist.h>

/* Posted-entry pool growth: one chunk covers a typical pre-post burst. */
#define UTIL_SRX_CHUNK 64
/* The collective engine posts a few receives per operation. */
#define UTIL_SRX_COLL_CHUNK 16

_Static_assert(UTIL_SRX_F_COLL == UTIL_COLL_FLAG, "one class bit");

int util_srx_init(struct util_srx *srx, struct util_ep *ep,
		  const struct util_srx_attr *attr)
{
	bool directed = ep->caps & FI_DIRECTED_RECV;
	int ret;
	size_t chunk = attr->rx_size < UTIL_SRX_CHUNK ? attr->rx_size :
							UTIL_SRX_CHUNK;

	if (!attr->ops || !attr->ops->deliver || !attr->ops->discard ||
	    !attr->rx_size || attr->iov_limit > UTIL_SRX_IOV_MAX) {
		FI_WARN(attr->prov ? attr->prov : &weft_core_prov,
			FI_LOG_EP_CTRL,
			"receive side: hooks missing, rx_size 0 or iov_limit "
			"%zu > %d\n", attr->iov_limit, UTIL_SRX_IOV_MAX);
		return -FI_EINVAL;
	}
	srx->ep = ep;
	srx->ops = attr->ops;
	srx->prov = attr->prov ? attr->prov : &weft_core_prov;
	srx->iov_limit = attr->iov_limit;
	util_match_queue_init(&srx->msg_q, directed);
	util_match_queue_init(&srx->tag_q, directed);
	util_match_queue_init(&srx->coll_q, true);
	srx->coll_done = util_coll_recv_done;
	ret = util_pool_init(&srx->coll_pool, sizeof(struct util_srx_entry), 0,
			     0, UTIL_SRX_COLL_CHUNK, 0, NULL, NULL);
	if (ret)
		return ret;
	ret = util_pool_init(&srx->rx_pool, sizeof(struct util_srx_entry), 0,
			     chunk, chunk, attr->rx_size, NULL, NULL);
	if (ret)
		util_pool_fini(&srx->coll_pool);
	return ret;
}

static void util_srx_drop_unexp(struct util_srx *srx,
				struct util_match_queue *q)
{
	struct util_unexp_entry *u;

	while ((u = q->unexp)) {
		util_match_remove_unexp(q, u);
		struct util_srx_unexp *ux =
			container_of(u, struct util_srx_unexp, match);
		const struct util_srx_ops *ops = util_srx_ux_ops(srx, ux);

		if (ops->free_unexp)
			ops->free_unexp(srx, ux);
	}
}

void util_srx_fini(struct util_srx *srx)
{
	util_srx_drop_unexp(srx, &srx->msg_q);
	util_srx_drop_unexp(srx, &srx->tag_q);
	util_srx_drop_unexp(srx, &srx->coll_q);
	util_pool_fini(&srx->rx_pool);
	util_pool_fini(&srx->coll_pool);
}

/* ---- where a message lands ------------------------------------------- */

void util_srx_dest_mrecv(struct util_srx *srx, struct util_srx_entry *e,
			 uint64_t size, struct util_srx_dest *dest)
{
	struct util_match_queue *q =
		util_srx_queue(srx, e->comp_flags & FI_TAGGED);
	size_t avail;
	bool released;
	void *buf = util_match_mrecv_take(q, &e->match, size,
					  srx->ep->min_multi_recv, &avail,
					  &released);

	e->mrecv_inflight++;
	e->mrecv_released |= released;
	dest->mrecv = e;
	dest->iov_count = 1;
	dest->iov[0].iov_base = buf;
	dest->iov[0].iov_len = avail;
	dest->cap = avail;
}

static void util_srx_dest_iov(struct util_srx *srx, const struct iovec *iov,
			      size_t count, void *context, uint64_t flags,
			      struct util_srx_dest *dest)
{
	dest->context = context;
	dest->comp_flags = FI_RECV | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	dest->mrecv = NULL;
	dest->iov_count = count;
	if (count)	/* iov may be NULL then: memcpy from NULL is undefined */
		memcpy(dest->iov, iov, count * sizeof(*iov));
	dest->cap = util_iov_total(iov, count);
	dest->want_comp = util_ep_rx_wants_comp(srx->ep, flags);
	dest->discard = false;
}

/* ---- completions ------------------------------------------------------ */

void util_srx_report_err(struct util_srx *srx, void *context, uint64_t flags,
			 void *buf, size_t cap, struct util_srx_msg m,
			 size_t len, int err, int prov_errno)
{
	struct fi_cq_err_entry e = {
		.op_context = context, .flags = flags, .len = len,
		.buf = buf, .data = m.data, .tag = m.tag,
		.err = err ? err : FI_ETRUNC, .prov_errno = prov_errno,
	};

	if (e.err == FI_ETRUNC)
		e.olen = m.size - cap;
	if (srx->ops->write_err)
		srx->ops->write_err(srx, &e, &m);
	else if (srx->ep->rx_cq)
		util_cq_write_err(srx->ep->rx_cq, &e, m.src);
	util_ep_cntr_inc_err(srx->ep, UTIL_CNTR_RECV);
}

void util_srx_coll_complete(struct util_srx *srx,
			    const struct util_srx_dest *dest,
			    const struct util_srx_msg *m, size_t len, int err)
{
	if (!err && m->size > dest->cap)
		err = FI_ETRUNC;
	srx->coll_done(srx->ep, dest->context, len, err);
}

/* A slice of multi-recv buffer e completes: whether it was the last one of
 * a released buffer (then e is back in the pool). */
bool util_srx_mrecv_done(struct util_srx *srx, struct util_srx_entry *e)
{
	if (--e->mrecv_inflight || !e->mrecv_released)
		return false;
	util_srx_entry_put(srx, e);
	return true;
}

/* ---- posting ------------------------------------------------------------ */

static struct util_srx_unexp *to_srx_unexp(struct util_unexp_entry *u)
{
	return u ? container_of(u, struct util_srx_unexp, match) : NULL;
}

/* A multi-recv buffer: posted, then it absorbs what already arrived. */
static ssize_t util_srx_post_mrecv(struct util_srx *srx,
				   struct util_match_queue *q,
				   struct util_srx_entry *e,
				   const struct iovec *iov, fi_addr_t src,
				   uint64_t tag, uint64_t ignore,
				   void *context, uint64_t flags)
{
	struct util_srx_unexp *ux;
	struct util_srx_dest dest;
	bool done = false;

	util_rx_entry_init(&e->match, src, tag, ignore, context, flags,
			   iov[0].iov_base, iov[0].iov_len);
	e->comp_flags = FI_RECV | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	e->iov_count = 0;
	e->mrecv_inflight = 0;
	e->mrecv_released = false;
	util_match_post(q, &e->match);
	while (!done &&
	       (ux = to_srx_unexp(util_match_take_unexp(q, src, tag, ignore)))) {
		util_srx_dest(srx, e, ux->size, &dest);
		/* Read before deliver: a slice completed inside it may hand
		 * a released e back to the pool. */
		done = e->mrecv_released;
		util_srx_ux_ops(srx, ux)->deliver(srx, &dest, ux);
	}
	return 0;
}

static ssize_t util_srx_peek(struct util_srx *srx, struct util_match_queue *q,
			     fi_addr_t src, uint64_t tag, uint64_t ignore,
			     void *context, uint64_t flags)
{
	struct util_srx_unexp *ux =
		to_srx_unexp(util_match_peek(q, src, tag, ignore));
	uint64_t cflags = FI_RECV | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	uint64_t size, data, mtag;
	fi_addr_t msrc;

	if (!ux)
		return util_ep_rx_err(srx->ep, context, cflags, FI_ENOMSG, 0,
				      NULL, 0, 0, 0, tag, FI_ADDR_NOTAVAIL);
	size = ux->size;
	data = ux->data;
	mtag = ux->match.tag;
	msrc = ux->match.src;
	cflags |= ux->flags;
	if (flags & FI_CLAIM) {
		util_match_claim(q, &ux->match, context);
	} else if (flags & FI_DISCARD) {
		util_match_remove_unexp(q, &ux->match);
		util_srx_ux_ops(srx, ux)->discard(srx, ux);
	}
	return util_ep_rx_comp(srx->ep, context, cflags, size, NULL, data,
			       mtag, msrc);
}

static ssize_t util_srx_claim(struct util_srx *srx, struct util_match_queue *q,
			      const struct iovec *iov, size_t count,
			      void *context, uint64_t flags)
{
	struct util_srx_unexp *ux = to_srx_unexp(util_match_take_claimed(q,
								       context));
	struct util_srx_dest dest;
	uint64_t cflags = FI_RECV | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	uint64_t data, tag;
	fi_addr_t src;

	if (!ux) {
		FI_WARN(srx->prov, FI_LOG_EP_DATA,
			"FI_CLAIM with a context that claimed nothing\n");
		return -FI_EINVAL;
	}
	if (!(flags & FI_DISCARD)) {
		util_srx_dest_iov(srx, iov, count, context, flags, &dest);
		return util_srx_ux_ops(srx, ux)->deliver(srx, &dest, ux);
	}
	data = ux->data;
	tag = ux->match.tag;
	src = ux->match.src;
	cflags |= ux->flags;
	util_srx_ux_ops(srx, ux)->discard(srx, ux);
	return util_ep_rx_comp(srx->ep, context, cflags, 0, NULL, data, tag,
			       src);
}

static ssize_t util_srx_post_locked(struct util_srx *srx,
				    const struct iovec *iov, size_t count,
				    fi_addr_t src, uint64_t tag,
				    uint64_t ignore, void *context,
				    uint64_t flags)
{
	struct util_match_queue *q = util_srx_queue(srx, flags & FI_TAGGED);
	struct util_srx_unexp *ux;
	struct util_srx_dest dest;
	struct util_srx_entry *e;

	if (flags & FI_PEEK)
		return util_srx_peek(srx, q, src, tag, ignore, context, flags);
	if (flags & FI_CLAIM)
		return util_srx_claim(srx, q, iov, count, context, flags);
	e = util_pool_get(&srx->rx_pool);
	if (!e)
		return -FI_EAGAIN;
	if (flags & FI_MULTI_RECV)
		return util_srx_post_mrecv(srx, q, e, iov, src, tag, ignore,
					   context, flags);
	ux = to_srx_unexp(util_match_take_unexp(q, src, tag, ignore));
	if (ux) {
		util_srx_entry_put(srx, e);
		util_srx_dest_iov(srx, iov, count, context, flags, &dest);
		return util_srx_ux_ops(srx, ux)->deliver(srx, &dest, ux);
	}
	util_srx_entry_queue(q, e, iov, count, src, tag, ignore, context,
			     flags);
	return 0;
}

ssize_t util_srx_post(struct util_srx *srx, const struct iovec *iov,
		      size_t count, fi_addr_t src, uint64_t tag,
		      uint64_t ignore, void *context, uint64_t flags)
{
	size_t total;
	ssize_t ret;

	if (WEFT_UNLIKELY(count > srx->iov_limit || (count && !iov) ||
			  ((flags & FI_MULTI_RECV) && count != 1))) {
		FI_WARN(srx->prov, FI_LOG_EP_DATA,
			"bad receive iov count %zu\n", count);
		return -FI_EINVAL;
	}
	/* A NULL buffer would be written when a message arrives, in
	 * progress, far from this call. */
	if (WEFT_UNLIKELY(util_iov_check(srx->prov, "receive", iov, count,
					 &total)))
		return -FI_EINVAL;
	if (!srx->msg_q.directed)
		src = FI_ADDR_UNSPEC;
	util_lock_acquire(&srx->ep->lock);
	ret = util_srx_post_locked(srx, iov, count, src, tag, ignore, context,
				   flags);
	util_lock_release(&srx->ep->lock);
	return ret;
}

/* ---- cancel --------------------------------------------------------------- */

ssize_t util_srx_cancel(struct util_srx *srx, void *context)
{
	struct util_rx_entry *rx;
	struct util_srx_entry *e;
	uint64_t flags;
	bool keep = false;

	util_lock_acquire(&srx->ep->lock);
	rx = util_match_cancel(&srx->tag_q, context);
	if (!rx)
		rx = util_match_cancel(&srx->msg_q, context);
	if (!rx) {
		util_lock_release(&srx->ep->lock);
		return -FI_ENOENT;
	}
	e = container_of(rx, struct util_srx_entry, match);
	flags = e->comp_flags;
	if (rx->flags & FI_MULTI_RECV) {
		/* Released here, unless a slice still lands: then the last
		 * one reports it. */
		e->mrecv_released = true;
		keep = e->mrecv_inflight != 0;
		if (!keep)
			flags |= FI_MULTI_RECV;
	}
	util_ep_rx_err(srx->ep, context, flags, FI_ECANCELED, 0, NULL, 0, 0, 0,
		       rx->tag, FI_ADDR_NOTAVAIL);
	if (!keep)
		util_srx_entry_put(srx, e);
	util_lock_release(&srx->ep->lock);
	return 0;
}

/* ---- the collective class ------------------------------------------------ */

ssize_t util_srx_coll_post(struct util_srx *srx, void *buf, size_t len,
			   fi_addr_t src, uint64_t tag, uint64_t ignore,
			   void *context)
{
	struct util_match_queue *q = &srx->coll_q;
	struct util_srx_unexp *ux =
		to_srx_unexp(util_match_take_unexp(q, src, tag, ignore));
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct util_srx_dest dest;
	struct util_srx_entry *e;

	if (ux) {
		util_srx_dest_iov(srx, &iov, 1, context, FI_TAGGED, &dest);
		dest.comp_flags |= UTIL_SRX_F_COLL;
		return util_srx_ux_ops(srx, ux)->deliver(srx, &dest, ux);
	}
	e = util_pool_get(&srx->coll_pool);
	if (!e)
		return -FI_EAGAIN;
	util_srx_entry_queue(q, e, &iov, 1, src, tag, ignore, context,
			     FI_TAGGED);
	e->comp_flags |= UTIL_SRX_F_COLL;
	return 0;
}

int util_srx_coll_cancel(struct util_srx *srx, void *context)
{
	struct util_rx_entry *rx = util_match_cancel(&srx->coll_q, context);

	if (!rx)
		return -FI_ENOENT;
	util_pool_put(&srx->coll_pool,
		      container_of(rx, struct util_srx_entry, match));
	return 0;
}
