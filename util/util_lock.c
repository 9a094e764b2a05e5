/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/util_lock.h"
#include <sched.h>

/* Spins on a plain load before a waiter yields: long enough for any data
 * path critical section of a running holder, short enough that a holder
 * preempted on a 2-vCPU machine is not kept off its CPU for long. */
#define UTIL_LOCK_SPINS 256

static inline void util_lock_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

static void util_lock_noop(struct util_lock *lock)
{
	(void)lock;
}

/* Contended: wait on loads (the line stays shared while the holder runs)
 * and only retry the exchange once the lock looks free. */
static void __attribute__((noinline)) util_lock_spin_wait(struct util_lock *lock)
{
	unsigned int spins = 0;

	do {
		while (atomic_load_explicit(&lock->held, memory_order_relaxed)) {
			if (++spins < UTIL_LOCK_SPINS) {
				util_lock_cpu_relax();
			} else {
				spins = 0;
				sched_yield();
			}
		}
	} while (atomic_exchange_explicit(&lock->held, 1,
					  memory_order_acquire));
}

static void util_lock_spin_acquire(struct util_lock *lock)
{
	if (WEFT_UNLIKELY(atomic_exchange_explicit(&lock->held, 1,
						   memory_order_acquire)))
		util_lock_spin_wait(lock);
}

static void util_lock_spin_release(struct util_lock *lock)
{
	atomic_store_explicit(&lock->held, 0, memory_order_release);
}

int util_lock_init(struct util_lock *lock, bool thread_safe)
{
	atomic_init(&lock->held, 0);
	if (!thread_safe) {
		lock->acquire = util_lock_noop;
		lock->release = util_lock_noop;
		return 0;
	}
	lock->acquire = util_lock_spin_acquire;
	lock->release = util_lock_spin_release;
	return 0;
}

void util_lock_fini(struct util_lock *lock)
{
	(void)lock;
}

bool util_threading_needs_lock(enum fi_threading threading)
{
	return threading != FI_THREAD_DOMAIN;
}
