/* SPDX-License-Identifier: MIT */
/*
 * Datatypes and values of the collective tests: inputs chosen so that
 * every reduction is exact in every datatype (small integers, powers of
 * two), and a serial reference of each reduction written from
 * fi_atomic(3) alone, so that any order of reduction must match it bit
 * for bit.
 */
#ifndef FT_COLL_VALS_H
#define FT_COLL_VALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/fi_domain.h>

enum dt_kind { K_INT, K_UINT, K_REAL, K_CPLX };

struct dt_info {
	enum fi_datatype dt;
	const char *name;
	size_t size;
	enum dt_kind kind;
};

typedef unsigned __int128 u128;

/* A value of any datatype: integers in i (two's complement, wrapped),
 * real and imaginary parts in re, im. */
struct val {
	u128 i;
	long double re, im;
};

extern const struct dt_info dts[];
extern const size_t ndts;
extern const enum fi_op reduce_ops[];	/* every reduction, ATOMIC_WRITE */
extern const size_t nops;

uint64_t mix(uint64_t x);
/* Member r's input element i for op. */
struct val gen(const struct dt_info *d, enum fi_op op, int r, size_t i);
/* The serial reference: a (op) b, a being the earlier members'. */
struct val apply(const struct dt_info *d, enum fi_op op, struct val a,
		 struct val b);
void store(const struct dt_info *d, void *p, struct val v);
/* Element equality: integers by bits, floating types by value. */
bool same(const struct dt_info *d, const void *a, const void *b);
/* The bytes of member r's element i, for collectives that move data. */
void gen_bytes(uint8_t *p, size_t esize, int r, size_t i);

#endif
