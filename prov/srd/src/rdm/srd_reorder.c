/* SPDX-License-Identifier: MIT */
/*
 * Per-peer reorder window (see srd_reorder.h for the contract).
 */
#include "weft/compat.h"
#include "../dev/srd_dev.h"
#include "srd_reorder.h"

#include <stdlib.h>
#include <string.h>
#include <utlist.h>

/* Held copies are rare (only out-of-order traffic makes them): grow a few
 * at a time, never up front. */
#define SRD_REORDER_CHUNK 8

static struct srd_reorder_pkt *to_reorder_pkt(const void *data)
{
	return container_of((void *)(uintptr_t)data, struct srd_reorder_pkt,
			    data);
}

int srd_reorder_init(struct srd_reorder *r, uint32_t window)
{
	int ret;

	memset(r, 0, sizeof(*r));
	if (!window || (window & (window - 1)) ||
	    window > SRD_REORDER_WINDOW_MAX) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"reorder: window %u is not a power of two in 1..%u\n",
			window, SRD_REORDER_WINDOW_MAX);
		return -FI_EINVAL;
	}
	r->window = window;
	r->mask = window - 1;
	r->slots = calloc(window, sizeof(*r->slots));
	if (!r->slots)
		return -FI_ENOMEM;
	ret = util_pool_init(&r->small, sizeof(struct srd_reorder_pkt) +
			     SRD_REORDER_SMALL_MAX, 16, 0, SRD_REORDER_CHUNK,
			     0, NULL, NULL);
	if (ret)
		goto free_slots;
	ret = util_pool_init(&r->big, sizeof(struct srd_reorder_pkt) +
			     SRD_REORDER_BIG_MAX, 16, 0, SRD_REORDER_CHUNK,
			     0, NULL, NULL);
	if (ret)
		goto fini_small;
	return 0;

fini_small:
	util_pool_fini(&r->small);
free_slots:
	free(r->slots);
	r->slots = NULL;
	return ret;
}

static void srd_reorder_put(struct srd_reorder *r, struct srd_reorder_pkt *p)
{
	switch (p->cls) {
	case SRD_REORDER_CLASS_SMALL:
		util_pool_put(&r->small, p);
		break;
	case SRD_REORDER_CLASS_BIG:
		util_pool_put(&r->big, p);
		break;
	default:
		free(p);
		break;
	}
}

static void srd_reorder_free_list(struct srd_reorder *r,
				  struct srd_reorder_pkt **head)
{
	struct srd_reorder_pkt *p, *tmp;

	DL_FOREACH_SAFE(*head, p, tmp) {
		DL_DELETE(*head, p);
		srd_reorder_put(r, p);
	}
}

void srd_reorder_fini(struct srd_reorder *r)
{
	uint32_t i;

	if (!r->slots)
		return;
	for (i = 0; i < r->window; i++)
		srd_reorder_free_list(r, &r->slots[i]);
	srd_reorder_free_list(r, &r->ready);
	srd_reorder_free_list(r, &r->overflow);
	util_pool_fini(&r->big);
	util_pool_fini(&r->small);
	free(r->slots);
	r->slots = NULL;
	r->held = 0;
}

static struct srd_reorder_pkt *srd_reorder_copy(struct srd_reorder *r,
						uint32_t msg_id,
						const void *pkt, size_t len)
{
	struct srd_reorder_pkt *p;
	uint32_t cls;

	if (len <= SRD_REORDER_SMALL_MAX) {
		p = util_pool_get(&r->small);
		cls = SRD_REORDER_CLASS_SMALL;
	} else if (len <= SRD_REORDER_BIG_MAX) {
		p = util_pool_get(&r->big);
		cls = SRD_REORDER_CLASS_BIG;
	} else {
		p = malloc(sizeof(*p) + len);
		cls = SRD_REORDER_CLASS_MALLOC;
	}
	if (WEFT_UNLIKELY(!p))
		return NULL;
	p->msg_id = msg_id;
	p->cls = cls;
	p->len = len;
	memcpy(p->data, pkt, len);
	return p;
}

/* Overflow stays sorted by distance from next, stable for equal ids, so
 * advance only ever looks at its head. Long only under heavy reordering. */
static void srd_reorder_overflow_add(struct srd_reorder *r,
				     struct srd_reorder_pkt *p)
{
	uint32_t dist = p->msg_id - r->next;
	struct srd_reorder_pkt *it;

	DL_FOREACH(r->overflow, it) {
		if (it->msg_id - r->next > dist) {
			DL_PREPEND_ELEM(r->overflow, it, p);
			return;
		}
	}
	DL_APPEND(r->overflow, p);
}

int srd_reorder_arrive(struct srd_reorder *r, uint32_t msg_id,
		       const void *pkt, size_t len)
{
	struct srd_reorder_pkt *p;
	uint32_t dist = msg_id - r->next;

	if (WEFT_LIKELY(dist == 0))
		return SRD_REORDER_NOW;
	if (srd_reorder_before(msg_id, r->next))
		return SRD_REORDER_BEHIND;
	p = srd_reorder_copy(r, msg_id, pkt, len);
	if (WEFT_UNLIKELY(!p))
		return -FI_ENOMEM;
	if (dist < r->window)
		DL_APPEND(r->slots[msg_id & r->mask], p);
	else
		srd_reorder_overflow_add(r, p);
	r->held++;
	return SRD_REORDER_HELD;
}

void srd_reorder_advance(struct srd_reorder *r)
{
	struct srd_reorder_pkt **slot = &r->slots[r->next & r->mask];
	struct srd_reorder_pkt *p;

	/* What is still held for the message just matched: later segments,
	 * to be handed out as BEHIND packets. */
	if (*slot) {
		DL_CONCAT(r->ready, *slot);
		*slot = NULL;
	}
	r->next++;
	/* The window moved by one: the head of the overflow may fit now. */
	while ((p = r->overflow) && p->msg_id - r->next < r->window) {
		DL_DELETE(r->overflow, p);
		DL_APPEND(r->slots[p->msg_id & r->mask], p);
	}
}

const void *srd_reorder_pop(struct srd_reorder *r, size_t *len)
{
	struct srd_reorder_pkt **head = &r->ready;
	struct srd_reorder_pkt *p;

	if (!*head)
		head = &r->slots[r->next & r->mask];
	p = *head;
	if (!p)
		return NULL;
	DL_DELETE(*head, p);
	r->held--;
	*len = p->len;
	return p->data;
}

void srd_reorder_release(struct srd_reorder *r, const void *pkt)
{
	srd_reorder_put(r, to_reorder_pkt(pkt));
}
