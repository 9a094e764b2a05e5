/* SPDX-License-Identifier: MIT */
/*
 * Receive matching for providers that match in software (shm, srd, tcp).
 *
 * A queue pairs the posted receives (in posting order) with the unexpected
 * messages (in arrival order). A provider keeps one queue for tagged and
 * one for untagged receives. Entries are the provider's objects embedding
 * struct util_rx_entry / struct util_unexp_entry (container_of back), taken
 * from the provider's pools: util never allocates here.
 *
 * Match rule: source matches if the queue is not directed (no
 * FI_DIRECTED_RECV), or the receive's src is FI_ADDR_UNSPEC, or it equals
 * the message's; tag matches if ((msg_tag ^ rx->tag) & ~rx->ignore) == 0
 * (untagged queues post tag = ignore = 0). The first match in posting order
 * wins, which gives FI_ORDER_SAS as long as the provider hands messages
 * from one source to util_match_rx in the order they were sent.
 *
 * Provider flow:
 *   post recv:   ux = util_match_take_unexp(q, src, tag, ignore);
 *                if (ux) deliver it now; else util_match_post(q, rx);
 *   arrival:     rx = util_match_rx(q, src, tag);
 *                if (!rx) queue an unexpected entry: util_match_add_unexp;
 *                multi-recv rx: buf = util_match_mrecv_take(q, rx, len, ...)
 *   FI_PEEK:     util_match_peek(); FI_PEEK|FI_CLAIM: util_match_claim();
 *                FI_CLAIM: util_match_take_claimed(); FI_DISCARD: drop it.
 *   fi_cancel:   rx = util_match_cancel(q, context).
 */
#ifndef WEFT_UTIL_MATCH_H
#define WEFT_UTIL_MATCH_H

#include "weft/compat.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <utlist.h>

struct util_rx_entry {
	struct util_rx_entry *prev, *next;
	fi_addr_t src;		/* FI_ADDR_UNSPEC: any source */
	uint64_t tag;
	uint64_t ignore;
	void *context;		/* application context: cancel, completions */
	uint64_t flags;		/* op flags; FI_MULTI_RECV selects the below */
	uint8_t *mrecv_buf;	/* multi-recv buffer and what is consumed */
	size_t mrecv_len;
	size_t mrecv_off;
};

struct util_unexp_entry {
	struct util_unexp_entry *prev, *next;
	fi_addr_t src;		/* FI_ADDR_NOTAVAIL if the sender is unknown */
	uint64_t tag;
	void *claim_context;	/* set by FI_PEEK|FI_CLAIM: hidden from matching */
};

struct util_match_queue {
	struct util_rx_entry *posted;
	struct util_unexp_entry *unexp;
	bool directed;		/* FI_DIRECTED_RECV in the ep's caps */
	size_t posted_count;
	size_t unexp_count;
};

void util_match_queue_init(struct util_match_queue *q, bool directed);

/* Fill a receive entry. For FI_MULTI_RECV pass the buffer as mrecv buf/len
 * (single buffer; iov count 1). Inline, like the two below: they are on
 * every message's path, and a call costs more than their bodies. */
static inline void util_rx_entry_init(struct util_rx_entry *rx, fi_addr_t src,
				      uint64_t tag, uint64_t ignore,
				      void *context, uint64_t flags,
				      void *mrecv_buf, size_t mrecv_len)
{
	rx->prev = rx->next = NULL;
	rx->src = src;
	rx->tag = tag;
	rx->ignore = ignore;
	rx->context = context;
	rx->flags = flags;
	rx->mrecv_buf = mrecv_buf;
	rx->mrecv_len = mrecv_len;
	rx->mrecv_off = 0;
}

/* Append a posted receive (after util_match_take_unexp found nothing). */
static inline void util_match_post(struct util_match_queue *q,
				   struct util_rx_entry *rx)
{
	DL_APPEND(q->posted, rx);
	q->posted_count++;
}

/* An arriving message: the first posted receive that matches, removed from
 * the queue, except a FI_MULTI_RECV entry, which stays until
 * util_match_mrecv_take retires it. NULL: unexpected. */
struct util_rx_entry *util_match_rx(struct util_match_queue *q, fi_addr_t src,
				    uint64_t tag);

/* Append an unexpected message (arrival order). */
void util_match_add_unexp(struct util_match_queue *q,
			  struct util_unexp_entry *ux);

/* A new receive: the oldest unclaimed unexpected message it matches,
 * removed. NULL if none. */
struct util_unexp_entry *util_match_take_unexp(struct util_match_queue *q,
					       fi_addr_t src, uint64_t tag,
					       uint64_t ignore);

/* FI_PEEK: like take_unexp but leaves the message queued. */
struct util_unexp_entry *util_match_peek(struct util_match_queue *q,
					 fi_addr_t src, uint64_t tag,
					 uint64_t ignore);

/* FI_PEEK|FI_CLAIM after a successful peek: hide ux from matching and
 * remember it in the application's context (context->internal[0]). */
void util_match_claim(struct util_match_queue *q, struct util_unexp_entry *ux,
		      struct fi_context *context);

/* FI_CLAIM (with or without FI_DISCARD): the message claimed earlier with
 * this context, removed from the queue; NULL if the context holds no claim
 * of this queue (the provider logs it, under its name, and returns
 * -FI_EINVAL). */
struct util_unexp_entry *util_match_take_claimed(struct util_match_queue *q,
						 struct fi_context *context);

/* fi_cancel: remove and return the posted receive with this context
 * (multi-recv included), or NULL. */
struct util_rx_entry *util_match_cancel(struct util_match_queue *q,
					void *context);

/* Multi-recv: place a message of len bytes in rx's buffer. Returns where it
 * goes and sets *avail to the bytes available there (< len: truncated).
 * Sets *released when the free space left is below min_free: rx has then
 * been removed from the queue and this message's completion must carry
 * FI_MULTI_RECV. (Providers whose data lands later must still report the
 * completions of one buffer in this order.) */
void *util_match_mrecv_take(struct util_match_queue *q,
			    struct util_rx_entry *rx, size_t len,
			    size_t min_free, size_t *avail, bool *released);

/* Remove a specific posted entry / unexpected entry (e.g. at ep close). */
static inline void util_match_remove_rx(struct util_match_queue *q,
					struct util_rx_entry *rx)
{
	DL_DELETE(q->posted, rx);
	q->posted_count--;
}
void util_match_remove_unexp(struct util_match_queue *q,
			     struct util_unexp_entry *ux);

/* Whether (src, tag) matches rx under the queue's rules. */
static inline bool util_match_rx_hit(const struct util_match_queue *q,
				     const struct util_rx_entry *rx,
				     fi_addr_t src, uint64_t tag)
{
	if (((tag ^ rx->tag) & ~rx->ignore) != 0)
		return false;
	return !q->directed || rx->src == FI_ADDR_UNSPEC || rx->src == src;
}

#endif /* WEFT_UTIL_MATCH_H */
