/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/util_lock.h"

static void util_lock_noop(struct util_lock *lock)
{
	(void)lock;
}

static void util_lock_mutex_acquire(struct util_lock *lock)
{
	pthread_mutex_lock(&lock->mutex);
}

static void util_lock_mutex_release(struct util_lock *lock)
{
	pthread_mutex_unlock(&lock->mutex);
}

int util_lock_init(struct util_lock *lock, bool thread_safe)
{
	pthread_mutexattr_t attr;
	int ret;

	if (!thread_safe) {
		lock->acquire = util_lock_noop;
		lock->release = util_lock_noop;
		return pthread_mutex_init(&lock->mutex, NULL) ? -FI_ENOMEM : 0;
	}
	/* Critical sections are a few stores: an adaptive mutex spins briefly
	 * before sleeping, which suits two vCPUs better than a pure spinlock
	 * (a preempted holder would make a spinner burn its slice). */
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	ret = pthread_mutex_init(&lock->mutex, &attr);
	pthread_mutexattr_destroy(&attr);
	if (ret)
		return -FI_ENOMEM;
	lock->acquire = util_lock_mutex_acquire;
	lock->release = util_lock_mutex_release;
	return 0;
}

void util_lock_fini(struct util_lock *lock)
{
	pthread_mutex_destroy(&lock->mutex);
}

bool util_threading_needs_lock(enum fi_threading threading)
{
	return threading != FI_THREAD_DOMAIN;
}
