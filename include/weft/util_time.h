/* SPDX-License-Identifier: MIT */
/*
 * Monotonic clocks, in nanoseconds. Both read through the vDSO (no
 * syscall). util_time_ns is CLOCK_MONOTONIC: fine grained and the same
 * clock in every process of the host, so timestamps written by another
 * process compare with ours. util_time_coarse_ns is CLOCK_MONOTONIC_COARSE:
 * cheaper, but only as fine as the kernel tick (1-10 ms); for deadlines
 * and timeouts checked often, never for measuring.
 */
#ifndef WEFT_UTIL_TIME_H
#define WEFT_UTIL_TIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t util_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t util_time_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* WEFT_UTIL_TIME_H */
