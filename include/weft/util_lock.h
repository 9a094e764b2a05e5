/* SPDX-License-Identifier: MIT */
/*
 * The one lock type of util. Whether it locks is decided once, when the
 * object that owns it is opened: FI_THREAD_DOMAIN promises that the
 * application serialises every call into a domain, so its objects get the
 * no-op variant; every other threading level gets a real mutex. Callers never
 * branch on the threading level, they call util_lock_acquire/release.
 */
#ifndef WEFT_UTIL_LOCK_H
#define WEFT_UTIL_LOCK_H

#include "weft/compat.h"
#include <pthread.h>
#include <stdbool.h>
#include <rdma/fabric.h>

struct util_lock {
	void (*acquire)(struct util_lock *lock);
	void (*release)(struct util_lock *lock);
	pthread_mutex_t mutex;
};

/* thread_safe false: acquire/release do nothing. Returns 0 or -FI_ENOMEM. */
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
