/* SPDX-License-Identifier: MIT */
/*
 * The one lock type of util. Whether it locks is decided once, when the
 * object that owns it is opened: FI_THREAD_DOMAIN promises that the
 * application serialises every call into a domain, so its objects get the
 * no-op variant; every other threading level gets a real lock. Callers never
 * branch on the threading level, they call util_lock_acquire/release.
 *
 * The real lock is a test-and-test-and-set spin lock: critical sections
 * are a few dozen instructions on the data path, an uncontended acquire is
 * one atomic exchange and a release one plain release store (a pthread
 * mutex costs two atomic read-modify-writes and ~130 instructions per
 * pair, and every locked instruction waits for the store buffer to drain).
 * A waiter spins on a plain load and yields its vCPU after a while, so a
 * preempted holder gets to run (see util_lock.c).
 */
#ifndef WEFT_UTIL_LOCK_H
#define WEFT_UTIL_LOCK_H

#include "weft/compat.h"
#include <pthread.h>	/* users rely on it being here */
#include <stdatomic.h>
#include <stdbool.h>
#include <rdma/fabric.h>

struct util_lock {
	void (*acquire)(struct util_lock *lock);
	void (*release)(struct util_lock *lock);
	atomic_int held;		/* 1 while a thread holds the real lock */
};

/* thread_safe false: acquire/release do nothing. Returns 0. */
int util_lock_init(struct util_lock *lock, bool thread_safe);
void util_lock_fini(struct util_lock *lock);

/* Whether objects of a domain opened with this threading level need real
 * locks (everything but FI_THREAD_DOMAIN). */
bool util_threading_needs_lock(enum fi_threading threading);

static inline void util_lock_acquire(struct util_lock *lock)
{
	lock->acquire(lock);
}

static inline void util_lock_release(struct util_lock *lock)
{
	lock->release(lock);
}

#endif /* WEFT_UTIL_LOCK_H */
