/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/util_match.h"
#include <utlist.h>

void util_match_queue_init(struct util_match_queue *q, bool directed)
{
	q->posted = NULL;
	q->unexp = NULL;
	q->directed = directed;
	q->posted_count = 0;
	q->unexp_count = 0;
}

void util_match_remove_unexp(struct util_match_queue *q,
			     struct util_unexp_entry *ux)
{
	DL_DELETE(q->unexp, ux);
	q->unexp_count--;
}

struct util_rx_entry *util_match_rx(struct util_match_queue *q, fi_addr_t src,
				    uint64_t tag)
{
	struct util_rx_entry *rx;

	DL_FOREACH(q->posted, rx) {
		if (!util_match_rx_hit(q, rx, src, tag))
			continue;
		if (!(rx->flags & FI_MULTI_RECV))
			util_match_remove_rx(q, rx);
		return rx;
	}
	return NULL;
}

void util_match_add_unexp(struct util_match_queue *q,
			  struct util_unexp_entry *ux)
{
	ux->claim_context = NULL;
	DL_APPEND(q->unexp, ux);
	q->unexp_count++;
}

/* The receive's view: its (src, tag, ignore) against a message. */
static bool util_match_unexp_hit(const struct util_match_queue *q,
				 const struct util_unexp_entry *ux,
				 fi_addr_t src, uint64_t tag, uint64_t ignore)
{
	if (ux->claim_context)
		return false;
	if (((ux->tag ^ tag) & ~ignore) != 0)
		return false;
	return !q->directed || src == FI_ADDR_UNSPEC || src == ux->src;
}

struct util_unexp_entry *util_match_peek(struct util_match_queue *q,
					 fi_addr_t src, uint64_t tag,
					 uint64_t ignore)
{
	struct util_unexp_entry *ux;

	DL_FOREACH(q->unexp, ux)
		if (util_match_unexp_hit(q, ux, src, tag, ignore))
			return ux;
	return NULL;
}

struct util_unexp_entry *util_match_take_unexp(struct util_match_queue *q,
					       fi_addr_t src, uint64_t tag,
					       uint64_t ignore)
{
	struct util_unexp_entry *ux = util_match_peek(q, src, tag, ignore);

	if (ux)
		util_match_remove_unexp(q, ux);
	return ux;
}

void util_match_claim(struct util_match_queue *q, struct util_unexp_entry *ux,
		      struct fi_context *context)
{
	ux->claim_context = context;
	context->internal[0] = ux;
	context->internal[1] = q;
}

struct util_unexp_entry *util_match_take_claimed(struct util_match_queue *q,
						 struct fi_context *context)
{
	struct util_unexp_entry *ux;

	/* The context could be stale or forged: only trust an entry that is
	 * still queued here and claimed by this very context (the walk
	 * never dereferences the context's pointer; claims are rare). */
	if (context && context->internal[1] == q) {
		DL_FOREACH(q->unexp, ux) {
			if (ux != context->internal[0] ||
			    ux->claim_context != context)
				continue;
			util_match_remove_unexp(q, ux);
			ux->claim_context = NULL;
			context->internal[0] = NULL;
			context->internal[1] = NULL;
			return ux;
		}
	}
	return NULL;
}

struct util_rx_entry *util_match_cancel(struct util_match_queue *q,
					void *context)
{
	struct util_rx_entry *rx;

	DL_FOREACH(q->posted, rx) {
		if (rx->context == context) {
			util_match_remove_rx(q, rx);
			return rx;
		}
	}
	return NULL;
}

void *util_match_mrecv_take(struct util_match_queue *q,
			    struct util_rx_entry *rx, size_t len,
			    size_t min_free, size_t *avail, bool *released)
{
	size_t left = rx->mrecv_len - rx->mrecv_off;
	size_t used = len < left ? len : left;
	void *where = rx->mrecv_buf + rx->mrecv_off;

	rx->mrecv_off += used;
	*avail = used;
	left -= used;
	/* fi_msg(3): the buffer is released once the space left is below
	 * FI_OPT_MIN_MULTI_RECV; a full buffer is always released. */
	*released = left == 0 || left < min_free;
	if (*released)
		util_match_remove_rx(q, rx);
	return where;
}
