/* SPDX-License-Identifier: MIT */
/*
 * Counters. util_cntr_open is a complete fi_cntr_open (put it in the
 * provider's fi_ops_domain). Values are atomics, so incrementing needs no
 * lock at any threading level; fi_cntr_read/readerr/wait run progress of
 * the endpoints bound to the counter first. Wait objects as in util_wait.h.
 */
#ifndef WEFT_UTIL_CNTR_H
#define WEFT_UTIL_CNTR_H

#include "weft/compat.h"
#include "weft/util_idle.h"
#include "weft/util_wait.h"
#include "weft/util_progress.h"
#include <stdatomic.h>
#include <stdint.h>
#include <rdma/fi_domain.h>

struct util_domain;

struct util_cntr {
	struct fid_cntr cntr_fid;
	struct util_domain *domain;
	_Atomic uint64_t value;
	_Atomic uint64_t err;
	struct util_wait wait;
	struct util_progress_list progress;
	uint64_t spin_ns;
	atomic_int ref;			/* endpoint bindings */
	atomic_int mr_ref;		/* memory regions bound (fi_mr_bind) */
	struct util_idle idle;		/* reads that saw no change */
	uint64_t last_read;		/* value the last read returned (a hint) */
	atomic_int poll_ref;		/* poll sets it is in (util_poll.h) */
	/* What fi_poll last reported, or fi_cntr_set/add set: fi_poll
	 * reports the counter when it differs from this. */
	_Atomic uint64_t poll_value;
	_Atomic uint64_t poll_err;
};

static inline struct util_cntr *to_util_cntr(struct fid_cntr *cntr)
{
	return container_of(cntr, struct util_cntr, cntr_fid);
}

/* fi_cntr_open: events FI_CNTR_EVENTS_COMP only; wait_obj NONE, UNSPEC,
 * FD, YIELD. */
int util_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		   struct fid_cntr **cntr, void *context);

/* Provider side: count completions. */
static inline void util_cntr_add(struct util_cntr *cntr, uint64_t n)
{
	atomic_fetch_add(&cntr->value, n);	/* seq_cst: see util_wait.h */
	util_wait_signal_armed(&cntr->wait);
}

static inline void util_cntr_inc(struct util_cntr *cntr)
{
	util_cntr_add(cntr, 1);
}

static inline void util_cntr_inc_err(struct util_cntr *cntr)
{
	atomic_fetch_add(&cntr->err, 1);
	util_wait_signal_armed(&cntr->wait);
}

#endif /* WEFT_UTIL_CNTR_H */
