/* SPDX-License-Identifier: MIT */
/*
 * Posting receives: a new receive first looks for an unexpected message it
 * matches (oldest first), otherwise joins the posted queue. Tagged receives
 * also implement FI_PEEK, FI_CLAIM and FI_DISCARD; fi_cancel removes a
 * posted receive.
 */
#include "weft/compat.h"

#include <string.h>

#include "shm.h"

static void shm_unexp_free(struct shm_ep *ep, struct shm_unexp *ux)
{
	util_pool_put(&ep->unexp_pool, ux);
}

/* A discarded large message still owes its sender an ACK. */
static void shm_unexp_discard(struct shm_ep *ep, struct shm_unexp *ux)
{
	if (ux->op == SHM_OP_RTS)
		shm_ack_send(ep, ux->conn, ux->cookie, 0);
	shm_unexp_free(ep, ux);
}

static uint64_t shm_recv_comp_flags(uint64_t flags)
{
	return FI_RECV | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
}

static void shm_recv_dest_from_iov(struct shm_ep *ep, const struct iovec *iov,
				   size_t count, void *context, uint64_t flags,
				   struct shm_rx_dest *dest)
{
	dest->context = context;
	dest->comp_flags = shm_recv_comp_flags(flags);
	dest->iov_cnt = count;
	memcpy(dest->iov, iov, count * sizeof(*iov));
	dest->cap = util_iov_total(iov, count);
	dest->want_comp = util_ep_rx_wants_comp(&ep->util, flags);
}

static ssize_t shm_recv_take(struct shm_ep *ep, struct shm_unexp *ux,
			     const struct iovec *iov, size_t count,
			     void *context, uint64_t flags)
{
	struct shm_rx_dest dest;
	struct shm_msg_info m;
	int ret;

	shm_recv_dest_from_iov(ep, iov, count, context, flags, &dest);
	shm_unexp_info(ux, &m);
	ret = shm_rx_deliver(ep, &dest, &m);
	shm_unexp_free(ep, ux);
	return ret;
}

/* Multi-recv: post the buffer, then let it absorb what already arrived. */
static ssize_t shm_recv_post_mrecv(struct shm_ep *ep,
				   struct util_match_queue *q,
				   struct shm_rx_entry *rx)
{
	struct util_unexp_entry *uux;
	struct shm_rx_dest dest;
	struct shm_msg_info m;
	bool done = false;

	util_match_post(q, &rx->util);
	while (!done && (uux = util_match_take_unexp(q, rx->util.src,
						     rx->util.tag,
						     rx->util.ignore))) {
		struct shm_unexp *ux = container_of(uux, struct shm_unexp,
						    util);

		shm_unexp_info(ux, &m);
		shm_rx_dest_from_mrecv(ep, q, rx, m.size, &dest, &done);
		shm_rx_deliver(ep, &dest, &m);
		shm_unexp_free(ep, ux);
	}
	if (done)
		util_pool_put(&ep->rx_pool, rx);
	return 0;
}

static ssize_t shm_recv_peek(struct shm_ep *ep, struct util_match_queue *q,
			     fi_addr_t src, uint64_t tag, uint64_t ignore,
			     void *context, uint64_t flags)
{
	struct util_unexp_entry *uux = util_match_peek(q, src, tag, ignore);
	struct shm_unexp *ux;
	uint64_t cflags = FI_RECV | FI_TAGGED;
	uint64_t size, data, mtag;
	fi_addr_t msrc;

	if (!uux)
		return util_ep_rx_err(&ep->util, context, cflags, FI_ENOMSG, 0,
				      NULL, 0, 0, 0, tag, FI_ADDR_NOTAVAIL);
	ux = container_of(uux, struct shm_unexp, util);
	size = ux->size;
	data = ux->data;
	mtag = ux->util.tag;
	msrc = ux->util.src;
	if (ux->cflags & SHM_F_CQ_DATA)
		cflags |= FI_REMOTE_CQ_DATA;
	if (flags & FI_CLAIM) {
		util_match_claim(q, uux, context);
	} else if (flags & FI_DISCARD) {
		util_match_remove_unexp(q, uux);
		shm_unexp_discard(ep, ux);
	}
	return util_ep_rx_comp(&ep->util, context, cflags, size, NULL, data,
			       mtag, msrc);
}

static ssize_t shm_recv_claim(struct shm_ep *ep, struct util_match_queue *q,
			      const struct iovec *iov, size_t count,
			      void *context, uint64_t flags)
{
	struct util_unexp_entry *uux = util_match_take_claimed(q, context);
	struct shm_unexp *ux;
	uint64_t data, tag, cflags = FI_RECV | FI_TAGGED;
	fi_addr_t src;

	if (!uux) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"FI_CLAIM with a context that claimed nothing\n");
		return -FI_EINVAL;
	}
	ux = container_of(uux, struct shm_unexp, util);
	if (!(flags & FI_DISCARD))
		return shm_recv_take(ep, ux, iov, count, context, flags);
	data = ux->data;
	tag = ux->util.tag;
	src = ux->util.src;
	if (ux->cflags & SHM_F_CQ_DATA)
		cflags |= FI_REMOTE_CQ_DATA;
	shm_unexp_discard(ep, ux);
	return util_ep_rx_comp(&ep->util, context, cflags, 0, NULL, data, tag,
			       src);
}

/* Fill rx for the buffers and post it (nothing unexpected matched it). */
static inline void shm_recv_queue(struct util_match_queue *q,
				  struct shm_rx_entry *rx,
				  const struct iovec *iov, size_t count,
				  fi_addr_t src, uint64_t tag, uint64_t ignore,
				  void *context, uint64_t flags)
{
	size_t i;

	util_rx_entry_init(&rx->util, src, tag, ignore, context, flags, NULL,
			   0);
	rx->comp_flags = shm_recv_comp_flags(flags);
	rx->iov_cnt = count;
	for (i = 0; i < count; i++)	/* not memcpy: count is mostly 1 */
		rx->iov[i] = iov[i];
	util_match_post(q, &rx->util);
}

static ssize_t shm_recv_post_locked(struct shm_ep *ep,
				    const struct iovec *iov, size_t count,
				    fi_addr_t src, uint64_t tag,
				    uint64_t ignore, void *context,
				    uint64_t flags)
{
	struct util_match_queue *q = (flags & FI_TAGGED) ? &ep->tag_q :
							   &ep->msg_q;
	struct util_unexp_entry *uux;
	struct shm_rx_entry *rx;

	if (flags & FI_PEEK)
		return shm_recv_peek(ep, q, src, tag, ignore, context, flags);
	if (flags & FI_CLAIM)
		return shm_recv_claim(ep, q, iov, count, context, flags);

	rx = util_pool_get(&ep->rx_pool);
	if (!rx)
		return -FI_EAGAIN;
	if (flags & FI_MULTI_RECV) {
		util_rx_entry_init(&rx->util, src, tag, ignore, context, flags,
				   iov[0].iov_base, iov[0].iov_len);
		rx->comp_flags = shm_recv_comp_flags(flags);
		rx->iov_cnt = 0;
		return shm_recv_post_mrecv(ep, q, rx);
	}
	uux = util_match_take_unexp(q, src, tag, ignore);
	if (uux) {
		util_pool_put(&ep->rx_pool, rx);
		return shm_recv_take(ep, container_of(uux, struct shm_unexp,
						      util),
				     iov, count, context, flags);
	}
	shm_recv_queue(q, rx, iov, count, src, tag, ignore, context, flags);
	return 0;
}

ssize_t shm_recv_post(struct shm_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t src, uint64_t tag,
		      uint64_t ignore, void *context, uint64_t flags)
{
	ssize_t ret;

	if (WEFT_UNLIKELY(count > SHM_IOV_LIMIT || (count && !iov) ||
			  ((flags & FI_MULTI_RECV) && count != 1))) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"bad receive iov count %zu\n", count);
		return -FI_EINVAL;
	}
	if (!(ep->util.caps & FI_DIRECTED_RECV))
		src = FI_ADDR_UNSPEC;
	util_lock_acquire(&ep->util.lock);
	ret = shm_recv_post_locked(ep, iov, count, src, tag, ignore, context,
				   flags);
	util_lock_release(&ep->util.lock);
	return ret;
}

/* fi_recv and fi_trecv: one buffer, and most often nothing unexpected to
 * match first (receives posted ahead of their messages). That case is
 * posted here without shm_recv_post's iovec checks, flag dispatch and
 * unexpected-queue search: fi_recv sits on every round trip's critical
 * path, between the completion of one message and the send of the next. */
ssize_t shm_recv_post1(struct shm_ep *ep, void *buf, size_t len,
		       fi_addr_t src, uint64_t tag, uint64_t ignore,
		       void *context, uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct util_match_queue *q = (flags & FI_TAGGED) ? &ep->tag_q :
							   &ep->msg_q;
	struct shm_rx_entry *rx;

	if (WEFT_UNLIKELY(!buf && len)) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA,
			"receive of %zu bytes into NULL\n", len);
		return -FI_EINVAL;
	}
	if (WEFT_UNLIKELY(flags & (FI_PEEK | FI_CLAIM | FI_MULTI_RECV)))
		return shm_recv_post(ep, &iov, 1, src, tag, ignore, context,
				     flags);
	util_lock_acquire(&ep->util.lock);
	if (WEFT_UNLIKELY(q->unexp != NULL) ||
	    WEFT_UNLIKELY(!(rx = util_pool_get(&ep->rx_pool)))) {
		util_lock_release(&ep->util.lock);
		return shm_recv_post(ep, &iov, 1, src, tag, ignore, context,
				     flags);
	}
	shm_recv_queue(q, rx, &iov, 1, (ep->util.caps & FI_DIRECTED_RECV) ?
					   src : FI_ADDR_UNSPEC,
		       tag, ignore, context, flags);
	util_lock_release(&ep->util.lock);
	return 0;
}

ssize_t shm_ep_cancel(fid_t fid, void *context)
{
	struct shm_ep *ep = container_of(fid, struct shm_ep, util.ep_fid.fid);
	struct util_rx_entry *urx;
	struct shm_rx_entry *rx;

	util_lock_acquire(&ep->util.lock);
	urx = util_match_cancel(&ep->tag_q, context);
	if (!urx)
		urx = util_match_cancel(&ep->msg_q, context);
	if (!urx) {
		util_lock_release(&ep->util.lock);
		return -FI_ENOENT;
	}
	rx = container_of(urx, struct shm_rx_entry, util);
	util_ep_rx_err(&ep->util, context, rx->comp_flags, FI_ECANCELED, 0,
		       NULL, 0, 0, 0, urx->tag, FI_ADDR_NOTAVAIL);
	util_pool_put(&ep->rx_pool, rx);
	util_lock_release(&ep->util.lock);
	return 0;
}
