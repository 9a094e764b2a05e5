/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/util_progress.h"
#include "weft/util_ep.h"
#include <stdlib.h>
#include <utlist.h>

int util_progress_list_init(struct util_progress_list *list, bool thread_safe)
{
	list->head = NULL;
	return util_lock_init(&list->lock, thread_safe);
}

void util_progress_list_fini(struct util_progress_list *list)
{
	struct util_progress_link *link, *tmp;

	DL_FOREACH_SAFE(list->head, link, tmp) {
		DL_DELETE(list->head, link);
		free(link);
	}
	util_lock_fini(&list->lock);
}

static struct util_progress_link *
util_progress_find(struct util_progress_list *list, struct util_ep *ep)
{
	struct util_progress_link *link;

	DL_FOREACH(list->head, link)
		if (link->ep == ep)
			return link;
	return NULL;
}

int util_progress_add(struct util_progress_list *list, struct util_ep *ep)
{
	struct util_progress_link *link;
	int ret = 0;

	util_lock_acquire(&list->lock);
	link = util_progress_find(list, ep);
	if (link) {
		link->uses++;
		goto unlock;
	}
	link = calloc(1, sizeof(*link));
	if (!link) {
		ret = -FI_ENOMEM;
		goto unlock;
	}
	link->ep = ep;
	link->uses = 1;
	DL_APPEND(list->head, link);
unlock:
	util_lock_release(&list->lock);
	return ret;
}

void util_progress_del(struct util_progress_list *list, struct util_ep *ep)
{
	struct util_progress_link *link;

	util_lock_acquire(&list->lock);
	link = util_progress_find(list, ep);
	if (link && --link->uses == 0) {
		DL_DELETE(list->head, link);
		free(link);
	}
	util_lock_release(&list->lock);
}

void util_progress_run(struct util_progress_list *list)
{
	struct util_progress_link *link;

	/* The list lock is held across progress: it only excludes binds and
	 * closes, and progress never binds; CQ writes take the CQ's own lock
	 * (lock order: progress list -> endpoint -> CQ). */
	util_lock_acquire(&list->lock);
	DL_FOREACH(list->head, link)
		if (link->ep->progress)
			link->ep->progress(link->ep);
	util_lock_release(&list->lock);
}

bool util_progress_busy(struct util_progress_list *list)
{
	bool busy;

	util_lock_acquire(&list->lock);
	busy = list->head != NULL;
	util_lock_release(&list->lock);
	return busy;
}
