/* SPDX-License-Identifier: MIT */
/*
 * Manual progress: every CQ and counter keeps the list of endpoints bound
 * to it (filled by fi_ep_bind, emptied by endpoint close). Reading the CQ
 * or counter calls each endpoint's progress function once, then looks for
 * entries. An endpoint bound twice (FI_TRANSMIT and FI_RECV on one CQ)
 * appears once.
 */
#ifndef WEFT_UTIL_PROGRESS_H
#define WEFT_UTIL_PROGRESS_H

#include "weft/compat.h"
#include "weft/util_lock.h"

struct util_ep;

/* A provider's progress for one endpoint: poll its transport, write
 * completions. Runs with no util lock held; takes the endpoint's own lock
 * if it needs one. */
typedef void (*util_progress_fn)(struct util_ep *ep);

struct util_progress_link {
	struct util_progress_link *prev, *next;
	struct util_ep *ep;
	int uses;		/* bindings of this ep to the owner */
};

struct util_progress_list {
	struct util_progress_link *head;
	struct util_lock lock;	/* guards the list, not the progress */
};

int util_progress_list_init(struct util_progress_list *list, bool thread_safe);
void util_progress_list_fini(struct util_progress_list *list);
/* 0 or -FI_ENOMEM (control path: allocates a link on first use). */
int util_progress_add(struct util_progress_list *list, struct util_ep *ep);
void util_progress_del(struct util_progress_list *list, struct util_ep *ep);
/* Call every bound endpoint's progress function once. */
void util_progress_run(struct util_progress_list *list);
/* Whether any endpoint is bound (CQ/counter close refuses then). */
bool util_progress_busy(struct util_progress_list *list);

#endif /* WEFT_UTIL_PROGRESS_H */
