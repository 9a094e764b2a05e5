/* SPDX-License-Identifier: MIT */
/*
 * Yielding the CPU while an application spins on a CQ or counter.
 *
 * A process waiting for a peer calls fi_cq_read or fi_cntr_read in a loop.
 * When more processes spin than there are CPUs (Open MPI with more ranks
 * than cores), the spinner keeps its CPU for its whole time slice
 * (milliseconds) while the peer it waits for cannot run. After `budget`
 * reads in a row that found nothing (FI_POLL_YIELD), the reader yields
 * once, and again after as many more, so the peer runs within
 * microseconds. On a CPU of its own sched_yield returns at once, and a
 * wait shorter than the budget (a ping-pong's) never reaches it.
 *
 * The count is a hint: concurrent readers may lose an increment, so it is
 * loaded and stored, never read-modify-written with a locked instruction.
 */
#ifndef WEFT_UTIL_IDLE_H
#define WEFT_UTIL_IDLE_H

#include "weft/compat.h"
#include <sched.h>
#include <stdint.h>

struct util_idle {
	uint32_t count;		/* empty reads in a row */
	uint32_t budget;	/* 0: never yield */
};

static inline void util_idle_init(struct util_idle *idle, uint32_t budget)
{
	idle->count = 0;
	idle->budget = budget;
}

/* A read found nothing. */
static inline void util_idle_tick(struct util_idle *idle)
{
	uint32_t n = __atomic_load_n(&idle->count, __ATOMIC_RELAXED) + 1;

	if (WEFT_UNLIKELY(n >= idle->budget) && idle->budget) {
		n = 0;
		sched_yield();
	}
	__atomic_store_n(&idle->count, n, __ATOMIC_RELAXED);
}

/* A read found something. */
static inline void util_idle_reset(struct util_idle *idle)
{
	if (__atomic_load_n(&idle->count, __ATOMIC_RELAXED))
		__atomic_store_n(&idle->count, 0, __ATOMIC_RELAXED);
}

#endif /* WEFT_UTIL_IDLE_H */
