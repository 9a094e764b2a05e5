/* SPDX-License-Identifier: MIT */
/*
 * Wait objects of CQs, counters and EQs, and the one blocking loop they
 * share.
 *
 * Waking a thread blocked on the other vCPU costs 25-45 us on the machines
 * weft targets, so a blocking read first spins (running progress) for
 * spin_ns, and only then sleeps. Writers pay for a wake-up only when a
 * reader is actually asleep: the sleeper "arms" the wait object before its
 * last check, and util_wait_signal_armed() writes the eventfd only when it
 * finds the object armed (one relaxed load otherwise).
 *
 * Types: FI_WAIT_NONE and FI_WAIT_YIELD have no fd (blocking calls spin,
 * then sched_yield, until the timeout); FI_WAIT_UNSPEC and FI_WAIT_FD use a
 * non-blocking eventfd that fi_control(FI_GETWAIT) hands out.
 * FI_WAIT_SET, FI_WAIT_MUTEX_COND and FI_WAIT_POLLFD are refused
 * (-FI_ENOSYS).
 */
#ifndef WEFT_UTIL_WAIT_H
#define WEFT_UTIL_WAIT_H

#include "weft/compat.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include "weft/util_time.h"

/* Default spin before a blocking call sleeps. */
#define UTIL_WAIT_SPIN_NS_DEFAULT 50000u

struct util_wait {
	const struct fi_provider *prov;	/* logs under it */
	enum fi_wait_obj type;	/* FI_WAIT_NONE, FI_WAIT_YIELD or FI_WAIT_FD */
	int efd;		/* eventfd for FI_WAIT_FD, else -1 */
	atomic_int armed;	/* a reader is (about to be) asleep */
	atomic_int signaled;	/* fi_cq_signal()/explicit wake pending */
	/* While sleeping, wake up after this many ms to run progress again,
	 * for providers whose peers cannot write our eventfd; -1 = sleep the
	 * whole timeout (the provider guarantees a signal). */
	int slice_ms;
};

/* type FI_WAIT_UNSPEC becomes FI_WAIT_FD. prov: the provider of the object
 * the wait belongs to, which its warnings are logged under. Returns 0,
 * -FI_ENOSYS for the unsupported types, -FI_EINVAL for unknown values, or
 * -errno. */
int util_wait_init(struct util_wait *wait, const struct fi_provider *prov,
		   enum fi_wait_obj type);
void util_wait_fini(struct util_wait *wait);

/* Wake the sleeper (if any) unconditionally: one eventfd write. */
void util_wait_signal(struct util_wait *wait);

/* The writer side of every completion: wake only an armed sleeper. Call
 * after the entry is visible (i.e. after releasing the lock that guards
 * it). */
static inline void util_wait_signal_armed(struct util_wait *wait)
{
	/* seq_cst (a plain load on x86): with the sleeper's seq_cst store
	 * of armed and load of the state, one of the two sides sees the
	 * other (store-buffer pattern), so no wake-up is lost. */
	if (WEFT_UNLIKELY(atomic_load(&wait->armed)) &&
	    atomic_exchange(&wait->armed, 0))
		util_wait_signal(wait);
}

/* fi_trywait / the reader's last step before sleeping: drain the eventfd
 * and mark the object armed. The caller then re-checks for work and only
 * sleeps (or lets the application poll the fd) if there is none. */
void util_wait_arm(struct util_wait *wait);

/* Returns 0 if the wait object is FD, with *(int *)arg = the fd
 * (fi_control FI_GETWAIT); -FI_ENODATA otherwise. */
int util_wait_getwait(struct util_wait *wait, void *arg);

/* Returns -FI_EAGAIN while nothing is ready, anything else ends the wait and
 * is returned by util_wait_until (progress is the checker's job). */
typedef ssize_t (*util_wait_check_fn)(void *arg);

/* The blocking loop of sread / cntr wait / eq sread: call check until it
 * returns something other than -FI_EAGAIN; spin for spin_ns, then sleep on
 * the wait object (FD) or yield (NONE/YIELD). timeout_ms < 0 = forever.
 * Returns check's result, -FI_ETIMEDOUT on timeout (fi_cntr_wait; CQ and EQ
 * turn it into -FI_EAGAIN), or -FI_EAGAIN when util_wait_cancel() woke it
 * (fi_cq(3): "signaled and no data available"). */
ssize_t util_wait_until(struct util_wait *wait, util_wait_check_fn check,
			void *arg, int timeout_ms, uint64_t spin_ns);

/* fi_cq_signal: make the current (or next) util_wait_until return
 * -FI_EAGAIN. */
void util_wait_cancel(struct util_wait *wait);


#endif /* WEFT_UTIL_WAIT_H */
