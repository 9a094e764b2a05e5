/* SPDX-License-Identifier: MIT */
/*
 * The receive side of messages for providers that match in software (shm,
 * srd, tcp): posted and unexpected queues for untagged and tagged
 * messages (util_match does the matching), the fi_recv family's
 * arguments turned into posted entries, FI_PEEK / FI_CLAIM / FI_DISCARD,
 * FI_MULTI_RECV slicing, fi_cancel, FI_DIRECTED_RECV, truncation, and the
 * completions of all of these. What stays with the provider is its wire:
 * how a message's payload gets from the sender into the receive buffer
 * (copy, CMA, RDMA read, a credit protocol ...) and what an unexpected
 * message holds meanwhile.
 *
 * Using it (embed struct util_srx in the endpoint, beside struct util_ep):
 *
 *   open:    util_srx_init(&ep->srx, &ep->util, &attr) once the endpoint's
 *            caps are known (FI_DIRECTED_RECV); util_srx_fini at close,
 *            after every transfer that may still complete a receive.
 *   fi_ops_msg / fi_ops_tagged receive calls: util_srx_recv, _recvv,
 *            _recvmsg, _trecv, _trecvv, _trecvmsg (they lock ep->lock);
 *   fi_cancel: util_srx_cancel.
 *   A message arrives (the provider's progress, ep->lock held), with its
 *   sender's fi_addr src (FI_ADDR_NOTAVAIL when unknown) and its tag (0
 *   for untagged messages):
 *       e = util_srx_match(srx, tagged, src, tag);
 *       if (!e) { ux = the provider's unexpected entry, payload kept;
 *                 util_srx_unexp_init(&ux->srx, src, tag, size, data,
 *                                     flags);
 *                 util_srx_add_unexp(srx, tagged, &ux->srx); }
 *       else    { util_srx_dest(srx, e, size, &dest);
 *                 land the payload in dest.iov (at most dest.cap bytes);
 *                 util_srx_complete(srx, &dest, &msg, landed, err, 0); }
 *   The completion may come later (a transfer): keep a copy of dest until
 *   then, and complete each dest exactly once.
 *   A receive posted after its message takes the unexpected entry through
 *   ops->deliver, which does the same landing and completion from what
 *   the entry kept; FI_DISCARD goes to ops->discard.
 *
 * Multi-recv (one rule for every provider, fi_msg(3) and fi_cq(3)): a
 * buffer posted with FI_MULTI_RECV takes messages one after the other,
 * each in the next slice (packed, no alignment); a message larger than
 * what is left is truncated. Once the space left is below
 * FI_OPT_MIN_MULTI_RECV (util_ep.min_multi_recv) the buffer takes no more
 * messages, and its release is reported by FI_MULTI_RECV on the completion
 * of the last message that consumed it: the last to complete, not the
 * last to match, since a provider's slices may land out of order, and the
 * application may reuse the buffer only when all of them landed. That
 * completion is written even if the endpoint suppresses receive
 * completions (FI_SELECTIVE_COMPLETION without FI_COMPLETION). A buffer
 * released without a message (fi_cancel) reports it on the FI_ECANCELED
 * error completion, or, if slices are still landing, on the last one.
 *
 * The collective class (util_coll.h) has a third queue, UTIL_SRX_COLL,
 * always matched by source: its receives are the engine's
 * (util_srx_coll_post, util_srx_coll_cancel), invisible to fi_cancel,
 * FI_PEEK and the application's wildcards, and their completions go to
 * the engine, never to a CQ or counter. A provider hands an arriving
 * message of the class to util_srx_match / util_srx_add_unexp with class
 * UTIL_SRX_COLL and the sender's fi_addr, and delivers it like any other
 * (util_srx_complete routes it).
 *
 * Locking: posting and cancel take ep->lock; everything else expects the
 * caller to hold it (progress does), util_srx_coll_* included.
 */
#ifndef WEFT_UTIL_SRX_H
#define WEFT_UTIL_SRX_H

#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_ep.h"
#include "weft/util_iov.h"
#include "weft/util_match.h"
#include "weft/util_pool.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_ext.h>

/* iovs of one receive at most (a provider's rx_attr->iov_limit <= this). */
#define UTIL_SRX_IOV_MAX 4

/* The collective class's bit in comp_flags (= UTIL_COLL_FLAG, which is
 * UTIL_OP_COLL of util_ep.h). */
#define UTIL_SRX_F_COLL (1ULL << 62)

/* Message classes: the queue a message goes to (a bool "tagged" is a
 * class too). */
enum util_srx_class {
	UTIL_SRX_MSG = 0,
	UTIL_SRX_TAGGED = 1,
	UTIL_SRX_COLL = 2,
};

struct util_srx;

/* A posted receive (from the srx's pool). */
struct util_srx_entry {
	struct util_rx_entry match;
	uint64_t comp_flags;		/* FI_RECV | FI_MSG or FI_TAGGED */
	size_t iov_count;		/* 0 for a multi-recv buffer */
	struct iovec iov[UTIL_SRX_IOV_MAX];
	/* Multi-recv: slices handed out and not completed yet, and whether
	 * the buffer is off the queue (full, or cancelled). */
	uint32_t mrecv_inflight;
	bool mrecv_released;
};

/* Where one arriving message lands: a receive, or a slice of a multi-recv
 * buffer. The provider copies it into its transfer state when the data
 * lands later. */
struct util_srx_dest {
	void *context;
	uint64_t comp_flags;		/* FI_RECV | FI_MSG or FI_TAGGED */
	struct util_srx_entry *mrecv;	/* the slice's buffer, or NULL */
	size_t iov_count;
	struct iovec iov[UTIL_SRX_IOV_MAX];
	size_t cap;			/* bytes the iovs hold */
	bool want_comp;			/* a successful receive is reported */
	bool discard;			/* FI_DISCARD: no data, no completion */
};

/* A message as its completion reports it. */
struct util_srx_msg {
	fi_addr_t src;			/* FI_ADDR_NOTAVAIL: unknown */
	uint64_t tag;
	uint64_t size;			/* bytes sent (> cap: truncated) */
	uint64_t data;			/* remote CQ data */
	uint64_t flags;			/* FI_REMOTE_CQ_DATA or 0 */
	void *peer;			/* the provider's, for ops->write_err */
};

/* An unexpected message: the provider's entry embeds this (container_of
 * back) and keeps whatever it needs to land the payload later. */
struct util_srx_unexp {
	struct util_unexp_entry match;	/* src, tag */
	uint64_t size;
	uint64_t data;
	uint64_t flags;			/* FI_REMOTE_CQ_DATA or 0 */
	/* NULL: the srx's. A peer provider sharing this receive side
	 * (util_srx_peer) queues its own unexpected messages here with its
	 * own hooks, since only it knows how to land their payload. */
	const struct util_srx_ops *ops;
};

/* The provider's hooks (a const table with designated initialisers). */
struct util_srx_ops {
	/* Required. A receive takes unexpected message ux, already off its
	 * queue (a post that matched it, FI_CLAIM, a multi-recv buffer):
	 * land the payload in dest->iov, complete with util_srx_complete
	 * (now, or when a transfer finishes), and free ux once nothing needs
	 * it. Returns 0; an error is reported through the completion. */
	int (*deliver)(struct util_srx *srx, const struct util_srx_dest *dest,
		       struct util_srx_unexp *ux);
	/* Required. FI_DISCARD (after FI_PEEK or with FI_CLAIM): the
	 * application drops ux, already off its queue, unread: tell the
	 * sender if it waits for the data, and free ux. No completion. */
	void (*discard)(struct util_srx *srx, struct util_srx_unexp *ux);
	/* Optional. ux is still queued at util_srx_fini: free what it holds
	 * (NULL: nothing to free per entry, e.g. the provider drops its
	 * whole pool). */
	void (*free_unexp)(struct util_srx *srx, struct util_srx_unexp *ux);
	/* Optional. Write receive error e for message m (e.g. with err_data
	 * naming m->peer). NULL: util_cq_write_err on the ep's receive CQ. */
	int (*write_err)(struct util_srx *srx, const struct fi_cq_err_entry *e,
			 const struct util_srx_msg *m);
};

struct util_srx_attr {
	const struct fi_provider *prov;	/* log lines name it */
	const struct util_srx_ops *ops;
	size_t rx_size;			/* posted receives at most */
	size_t iov_limit;		/* <= UTIL_SRX_IOV_MAX */
};

struct util_srx {
	struct util_ep *ep;
	const struct util_srx_ops *ops;
	const struct fi_provider *prov;
	size_t iov_limit;
	struct util_match_queue msg_q;
	struct util_match_queue tag_q;
	struct util_match_queue coll_q;	/* UTIL_SRX_COLL, directed */
	struct util_pool rx_pool;	/* struct util_srx_entry */
	struct util_pool coll_pool;	/* the same, of the collective class:
					 * the engine's, not within rx_size */
	/* Where completions of the collective class go: util_coll_recv_done
	 * (tests put their own). */
	void (*coll_done)(struct util_ep *ep, void *ctx, size_t len, int err);
};

/* ep->caps must be final (FI_DIRECTED_RECV). 0, -FI_EINVAL, -FI_ENOMEM. */
int util_srx_init(struct util_srx *srx, struct util_ep *ep,
		  const struct util_srx_attr *attr);
/* Frees the unexpected messages still queued (ops->free_unexp) and the
 * posted entries. */
void util_srx_fini(struct util_srx *srx);

/* cls: enum util_srx_class; a bool "tagged" costs no more than before
 * (the compiler knows it is never UTIL_SRX_COLL). */
static inline struct util_match_queue *util_srx_queue(struct util_srx *srx,
						      unsigned int cls)
{
	if (cls == UTIL_SRX_COLL)
		return &srx->coll_q;
	return cls ? &srx->tag_q : &srx->msg_q;
}

/* ---- posting ------------------------------------------------------------ */

/* A receive of the collective class (ep->lock held): len bytes at buf
 * for the message of src (FI_ADDR_UNSPEC: any) whose tag matches
 * tag/ignore. A message already waiting is delivered now. 0 or
 * -FI_EAGAIN (no free entry). */
ssize_t util_srx_coll_post(struct util_srx *srx, void *buf, size_t len,
			   fi_addr_t src, uint64_t tag, uint64_t ignore,
			   void *context);
/* Take back the posted collective receive of context, no completion
 * (ep->lock held): 0 or -FI_ENOENT. */
int util_srx_coll_cancel(struct util_srx *srx, void *context);

/* Any receive: iov/count (count <= iov_limit; FI_MULTI_RECV: exactly 1),
 * src (ignored without FI_DIRECTED_RECV), tag/ignore (0/0 untagged), the
 * op flags (FI_TAGGED selects the tagged queue; FI_PEEK, FI_CLAIM,
 * FI_DISCARD, FI_MULTI_RECV, FI_COMPLETION). Takes ep->lock. 0,
 * -FI_EAGAIN (no free entry) or -FI_EINVAL (logged). */
ssize_t util_srx_post(struct util_srx *srx, const struct iovec *iov,
		      size_t count, fi_addr_t src, uint64_t tag,
		      uint64_t ignore, void *context, uint64_t flags);

/* Fill e for a one-buffer or iov receive and queue it. */
static inline void util_srx_entry_queue(struct util_match_queue *q,
					struct util_srx_entry *e,
					const struct iovec *iov, size_t count,
					fi_addr_t src, uint64_t tag,
					uint64_t ignore, void *context,
					uint64_t flags)
{
	size_t i;

	util_rx_entry_init(&e->match, src, tag, ignore, context, flags, NULL,
			   0);
	e->comp_flags = FI_RECV | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	e->iov_count = count;
	for (i = 0; i < count; i++)	/* not memcpy: count is mostly 1 */
		e->iov[i] = iov[i];
	util_match_post(q, &e->match);
}

/* One buffer (fi_recv, fi_trecv), inline: the commonest receive, posted
 * before its message, skips util_srx_post's iov checks, flag dispatch
 * and unexpected-queue search (it sits on every round trip's critical
 * path, between one message's completion and the next send). */
static inline __attribute__((always_inline)) ssize_t
util_srx_post1(struct util_srx *srx, void *buf, size_t len, fi_addr_t src,
	       uint64_t tag, uint64_t ignore, void *context, uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct util_match_queue *q = util_srx_queue(srx, flags & FI_TAGGED);
	struct util_srx_entry *e;

	if (WEFT_UNLIKELY(!buf && len)) {
		FI_WARN(srx->prov, FI_LOG_EP_DATA,
			"receive of %zu bytes into NULL\n", len);
		return -FI_EINVAL;
	}
	if (WEFT_UNLIKELY(flags & (FI_PEEK | FI_CLAIM | FI_MULTI_RECV)))
		return util_srx_post(srx, &iov, 1, src, tag, ignore, context,
				     flags);
	util_lock_acquire(&srx->ep->lock);
	if (WEFT_UNLIKELY(q->unexp != NULL) ||
	    WEFT_UNLIKELY(!(e = util_pool_get(&srx->rx_pool)))) {
		util_lock_release(&srx->ep->lock);
		return util_srx_post(srx, &iov, 1, src, tag, ignore, context,
				     flags);
	}
	util_srx_entry_queue(q, e, &iov, 1, q->directed ? src : FI_ADDR_UNSPEC,
			     tag, ignore, context, flags);
	util_lock_release(&srx->ep->lock);
	return 0;
}

/* The fi_ops_msg / fi_ops_tagged receive calls, arguments unpacked. */
static inline ssize_t util_srx_recv(struct util_srx *srx, void *buf,
				    size_t len, fi_addr_t src, void *context)
{
	return util_srx_post1(srx, buf, len, src, 0, 0, context,
			      srx->ep->rx_op_flags);
}

static inline ssize_t util_srx_recvv(struct util_srx *srx,
				     const struct iovec *iov, size_t count,
				     fi_addr_t src, void *context)
{
	return util_srx_post(srx, iov, count, src, 0, 0, context,
			     srx->ep->rx_op_flags);
}

/* FI_PEEK, FI_CLAIM and FI_DISCARD are fi_tagged(3)'s: not for fi_recvmsg. */
static inline ssize_t util_srx_recvmsg(struct util_srx *srx,
				       const struct fi_msg *msg, uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(srx->ep, "fi_recvmsg");
	return util_srx_post(srx, msg->msg_iov, msg->iov_count, msg->addr, 0,
			     0, msg->context,
			     flags & ~(FI_TAGGED | FI_PEEK | FI_CLAIM |
				       FI_DISCARD));
}

static inline ssize_t util_srx_trecv(struct util_srx *srx, void *buf,
				     size_t len, fi_addr_t src, uint64_t tag,
				     uint64_t ignore, void *context)
{
	return util_srx_post1(srx, buf, len, src, tag, ignore, context,
			      srx->ep->rx_op_flags | FI_TAGGED);
}

static inline ssize_t util_srx_trecvv(struct util_srx *srx,
				      const struct iovec *iov, size_t count,
				      fi_addr_t src, uint64_t tag,
				      uint64_t ignore, void *context)
{
	return util_srx_post(srx, iov, count, src, tag, ignore, context,
			     srx->ep->rx_op_flags | FI_TAGGED);
}

static inline ssize_t util_srx_trecvmsg(struct util_srx *srx,
					const struct fi_msg_tagged *msg,
					uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(srx->ep, "fi_trecvmsg");
	return util_srx_post(srx, msg->msg_iov, msg->iov_count, msg->addr,
			     msg->tag, msg->ignore, msg->context,
			     flags | FI_TAGGED);
}

/* fi_cancel: the posted receive with this context ends with an
 * FI_ECANCELED error completion. Takes ep->lock. 0 or -FI_ENOENT. */
ssize_t util_srx_cancel(struct util_srx *srx, void *context);

/* ---- arrivals (ep->lock held) ------------------------------------------- */

/* The posted receive that takes a message from src with tag, or NULL (the
 * message is unexpected). A one-shot receive is off the queue; a
 * multi-recv buffer stays until util_srx_dest releases it. Give it to
 * util_srx_dest, or take it whole (util_srx_entry_put afterwards). */
static inline struct util_srx_entry *util_srx_match(struct util_srx *srx,
						    unsigned int cls,
						    fi_addr_t src, uint64_t tag)
{
	struct util_rx_entry *rx = util_match_rx(util_srx_queue(srx, cls),
						 src, tag);

	return rx ? container_of(rx, struct util_srx_entry, match) : NULL;
}

/* The fast path's test, before any matching: the first receive posted on
 * the queue, if it is a one-buffer receive for any source that takes tag
 * (then the message goes to it whatever its source). Take it with
 * util_srx_take_first. */
static inline struct util_srx_entry *util_srx_first1(struct util_srx *srx,
						     bool tagged, uint64_t tag)
{
	struct util_match_queue *q = util_srx_queue(srx, tagged);
	struct util_rx_entry *rx = q->posted;
	struct util_srx_entry *e;

	if (!rx || (rx->flags & FI_MULTI_RECV) ||
	    ((tag ^ rx->tag) & ~rx->ignore) ||
	    (q->directed && rx->src != FI_ADDR_UNSPEC))
		return NULL;
	e = container_of(rx, struct util_srx_entry, match);
	return e->iov_count == 1 ? e : NULL;
}

static inline void util_srx_take_first(struct util_srx *srx, bool tagged,
				       struct util_srx_entry *e)
{
	util_match_remove_rx(util_srx_queue(srx, tagged), &e->match);
}

static inline void util_srx_entry_put(struct util_srx *srx,
				      struct util_srx_entry *e)
{
	util_pool_put(&srx->rx_pool, e);
}

/* Back to its pool, whatever its class. */
static inline void util_srx_entry_put_any(struct util_srx *srx,
					  struct util_srx_entry *e)
{
	if (WEFT_UNLIKELY(e->comp_flags & UTIL_SRX_F_COLL))
		util_pool_put(&srx->coll_pool, e);
	else
		util_pool_put(&srx->rx_pool, e);
}

void util_srx_dest_mrecv(struct util_srx *srx, struct util_srx_entry *e,
			 uint64_t size, struct util_srx_dest *dest);

/* Where a message of size bytes lands in matched receive e: its buffers,
 * or the next slice of a multi-recv buffer (which leaves the queue once
 * less than FI_OPT_MIN_MULTI_RECV is left). e goes back to the pool,
 * except a multi-recv buffer with slices still to complete. Inline: it
 * is on every matched message's path. */
static inline void util_srx_dest(struct util_srx *srx,
				 struct util_srx_entry *e, uint64_t size,
				 struct util_srx_dest *dest)
{
	size_t i;

	dest->context = e->match.context;
	dest->comp_flags = e->comp_flags;
	dest->want_comp = util_ep_rx_wants_comp(srx->ep, e->match.flags);
	dest->discard = false;
	if (WEFT_UNLIKELY(e->match.flags & FI_MULTI_RECV)) {
		util_srx_dest_mrecv(srx, e, size, dest);
		return;
	}
	dest->mrecv = NULL;
	dest->iov_count = e->iov_count;
	dest->cap = 0;
	for (i = 0; i < e->iov_count; i++) {	/* mostly 1: no memcpy */
		dest->iov[i] = e->iov[i];
		dest->cap += e->iov[i].iov_len;
	}
	util_srx_entry_put_any(srx, e);
}

static inline void util_srx_unexp_init(struct util_srx_unexp *ux,
				       fi_addr_t src, uint64_t tag,
				       uint64_t size, uint64_t data,
				       uint64_t flags)
{
	ux->match.src = src;
	ux->match.tag = tag;
	ux->match.claim_context = NULL;
	ux->size = size;
	ux->data = data;
	ux->flags = flags;
	ux->ops = NULL;
}

/* The hooks that own unexpected message ux. */
static inline const struct util_srx_ops *
util_srx_ux_ops(const struct util_srx *srx, const struct util_srx_unexp *ux)
{
	return ux->ops ? ux->ops : srx->ops;
}

/* Queue an unexpected message (arrival order) of class cls. */
static inline void util_srx_add_unexp(struct util_srx *srx, unsigned int cls,
				      struct util_srx_unexp *ux)
{
	util_match_add_unexp(util_srx_queue(srx, cls), &ux->match);
}

/* ---- completions (ep->lock held) ---------------------------------------- */

/* m by value: the inline fast path below then keeps its message in
 * registers, and builds it in memory only on this cold path. */
void util_srx_report_err(struct util_srx *srx, void *context, uint64_t flags,
			 void *buf, size_t cap, struct util_srx_msg m,
			 size_t len, int err, int prov_errno);

/* The completion of message m into one receive of cap bytes at buf, len
 * bytes landed; err a positive FI_E* or 0 (m->size > cap turns 0 into
 * FI_ETRUNC). Inline for the fast path that took a whole entry;
 * everything else calls util_srx_complete. ep is srx->ep, given by a
 * caller that has it at hand (one load less on the fast path). */
static inline __attribute__((always_inline)) void
util_srx_report(struct util_srx *srx, struct util_ep *ep, void *context,
		uint64_t flags, void *buf, size_t cap, bool want_comp,
		const struct util_srx_msg *m, size_t len, int err,
		int prov_errno)
{
	flags |= m->flags;
	if (WEFT_UNLIKELY(err || m->size > cap)) {
		util_srx_report_err(srx, context, flags, buf, cap, *m, len,
				    err, prov_errno);
		return;
	}
	if (want_comp)
		util_ep_rx_comp(ep, context, flags, len, buf, m->data, m->tag,
				m->src);
	util_ep_cntr_inc(ep, UTIL_CNTR_RECV);
}

/* A multi-recv slice completes: whether it was its buffer's last. */
bool util_srx_mrecv_done(struct util_srx *srx, struct util_srx_entry *e);

/* A receive of the collective class completes: to the engine. */
void util_srx_coll_complete(struct util_srx *srx,
			    const struct util_srx_dest *dest,
			    const struct util_srx_msg *m, size_t len, int err);

/* The completion of message m into dest (exactly once per dest): len bytes
 * landed, err as for util_srx_report. Nothing for a discard dest. Reports
 * a multi-recv buffer's release (FI_MULTI_RECV) when this was its last
 * slice. Inline: every message ends here. */
static inline void util_srx_complete(struct util_srx *srx,
				     const struct util_srx_dest *dest,
				     const struct util_srx_msg *m, size_t len,
				     int err, int prov_errno)
{
	uint64_t flags = dest->comp_flags;
	bool want_comp = dest->want_comp;

	if (dest->discard)
		return;
	if (WEFT_UNLIKELY(flags & UTIL_SRX_F_COLL)) {
		util_srx_coll_complete(srx, dest, m, len, err);
		return;
	}
	if (WEFT_UNLIKELY(dest->mrecv != NULL) &&
	    util_srx_mrecv_done(srx, dest->mrecv)) {
		flags |= FI_MULTI_RECV;
		want_comp = true;
	}
	util_srx_report(srx, srx->ep, dest->context, flags,
			dest->iov_count ? dest->iov[0].iov_base : NULL,
			dest->cap, want_comp, m, len, err, prov_errno);
}

/* ---- sharing the receive side with a peer provider -------------------- */

/*
 * The owner's end of libfabric's peer receive context (fi_ext.h,
 * FI_PEER): a provider that lets another one carry part of its traffic
 * (srd with shm for peers on its host) wraps its util_srx here and hands
 * &peer_srx to the peer's fi_srx_context in a struct
 * fi_peer_srx_context. A weft peer recognises the owner by its ops table
 * (util_srx_of_peer) and matches straight in the owner's queues, queuing
 * its own unexpected messages there with its own hooks
 * (util_srx_unexp.ops), so matching order, FI_PEEK/FI_CLAIM, multi-recv
 * and cancel are the owner's. The generic owner operations (get_msg,
 * get_tag, ...) that a foreign peer would call are refused (-FI_ENOSYS,
 * logged): only weft's providers peer with one another.
 */
struct util_srx_peer {
	struct fid_peer_srx peer_srx;
	struct util_srx *srx;
};

/* srx must outlive every peer endpoint bound to p. */
void util_srx_peer_init(struct util_srx_peer *p, struct util_srx *srx);
/* The util_srx behind a peer receive context, or NULL when it is not
 * weft's. */
struct util_srx *util_srx_of_peer(struct fid_peer_srx *p);

#endif /* WEFT_UTIL_SRX_H */
