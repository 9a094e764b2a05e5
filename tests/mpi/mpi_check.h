/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the MPI test programs: named checks whose failures are
 * counted on every rank and summed at the end of each check, so rank 0 can
 * print one "ok"/"not ok" line per check, and a data pattern that differs
 * with every byte position and every seed, so a misplaced, shifted or
 * stale buffer never passes for the right one.
 */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mc_state {
	int rank, size;
	const char *name;      /* check in progress */
	long errors;           /* this rank, current check */
	int failed_checks;     /* rank 0: checks that failed so far */
	int checks;
};

static struct mc_state mc;

/* A rank prints at most this many failure details per check: enough to see
 * the pattern of a failure without flooding the log of a broken run. */
#define MC_MAX_DETAILS 5

static inline void mc_init(void)
{
	MPI_Comm_rank(MPI_COMM_WORLD, &mc.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mc.size);
}

static inline void mc_begin(const char *name)
{
	mc.name = name;
	mc.errors = 0;
}

__attribute__((format(printf, 1, 2)))
static inline void mc_fail(const char *fmt, ...)
{
	va_list ap;

	if (mc.errors++ >= MC_MAX_DETAILS)
		return;
	fprintf(stderr, "# rank %d, %s: ", mc.rank, mc.name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

#define MC_CHECK(cond, ...) do { if (!(cond)) mc_fail(__VA_ARGS__); } while (0)

/* Collective: every rank must end every check, in the same order. */
static inline void mc_end(void)
{
	long total = 0;

	MPI_Allreduce(&mc.errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	mc.checks++;
	if (total)
		mc.failed_checks++;
	if (mc.rank == 0) {
		if (total)
			printf("not ok - %s (%ld errors, %d ranks)\n", mc.name, total, mc.size);
		else
			printf("ok - %s (%d ranks)\n", mc.name, mc.size);
		fflush(stdout);
	}
}

/* Exit status of the program: 0 only if every check passed everywhere. */
static inline int mc_finish(void)
{
	int failed = mc.failed_checks;

	MPI_Finalize();
	return failed ? 1 : 0;
}

/* Byte i of the pattern for seed s: a multiplicative hash of (s, i), so two
 * seeds or two offsets never give the same run of bytes for long. */
static inline uint8_t mc_pattern_byte(uint32_t seed, size_t i)
{
	uint32_t x = (uint32_t)i * 0x9E3779B1u + seed * 0x85EBCA77u;

	x ^= x >> 15;
	return (uint8_t)(x ^ (x >> 8));
}

static inline void mc_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = mc_pattern_byte(seed, i);
}

/* Offset of the first byte that differs from the pattern, or -1. */
static inline long mc_verify(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != mc_pattern_byte(seed, i))
			return (long)i;
	return -1;
}

/* Checks a received pattern; reports the first difference. */
static inline void mc_check_pattern(const void *buf, size_t len, uint32_t seed,
				    const char *what)
{
	long bad = mc_verify(buf, len, seed);

	MC_CHECK(bad < 0, "%s: %zu bytes, byte %ld is 0x%02x, expected 0x%02x", what,
		 len, bad, bad < 0 ? 0 : ((const uint8_t *)buf)[bad],
		 bad < 0 ? 0 : mc_pattern_byte(seed, (size_t)bad));
}

static inline void *mc_alloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "# rank %d: out of memory (%zu bytes)\n", mc.rank, len);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

#endif
