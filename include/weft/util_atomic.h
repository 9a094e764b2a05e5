/* SPDX-License-Identifier: MIT */
/*
 * Atomic operations on behalf of a target (fi_atomic(3) semantics), for
 * providers that execute atomics in software (shm, emulated RMA).
 *
 * Supported (op x datatype):
 *   integers INT8..UINT64: every op FI_MIN .. FI_MSWAP;
 *   FLOAT, DOUBLE: MIN, MAX, SUM, PROD, LOR, LAND, LXOR, ATOMIC_READ,
 *     ATOMIC_WRITE, CSWAP, CSWAP_NE/LE/LT/GE/GT;
 *   FLOAT_COMPLEX, DOUBLE_COMPLEX: SUM, PROD, LOR, LAND, LXOR,
 *     ATOMIC_READ, ATOMIC_WRITE, CSWAP, CSWAP_NE;
 *   LONG_DOUBLE*, INT128/UINT128: not supported.
 * Each element is updated atomically with respect to other weft callers
 * (compare-and-swap loops on the element's bits; 16-byte DOUBLE_COMPLEX
 * under a process-wide striped lock), so targets in shared memory may be
 * hit by several processes at once. Operands (src, compare) and results
 * may be unaligned; dst must be naturally aligned for cross-process
 * atomicity (unaligned dst falls back to the striped lock).
 */
#ifndef WEFT_UTIL_ATOMIC_H
#define WEFT_UTIL_ATOMIC_H

#include "weft/compat.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_atomic.h>

/* Which call family an op belongs to. */
enum util_atomic_kind {
	UTIL_ATOMIC_WRITE,	/* fi_atomic: MIN .. ATOMIC_WRITE, no READ */
	UTIL_ATOMIC_FETCH,	/* fi_fetch_atomic: MIN .. ATOMIC_WRITE */
	UTIL_ATOMIC_COMPARE,	/* fi_compare_atomic: CSWAP .. MSWAP */
};

/* Size of one element, 0 for unknown/unsupported types. */
size_t util_atomic_datatype_size(enum fi_datatype datatype);

/* 0 if util can apply op to count elements of datatype (count >= 1),
 * -FI_EOPNOTSUPP for a combination it does not support, -FI_EINVAL for
 * values outside the enums or count 0. */
int util_atomic_valid(enum fi_op op, enum fi_datatype datatype, size_t count);

/* Same, for one call family (e.g. FI_ATOMIC_READ is FETCH only). */
int util_atomic_kind_valid(enum util_atomic_kind kind, enum fi_op op,
			   enum fi_datatype datatype);

/* fi_query_atomic: flags 0, FI_FETCH_ATOMIC or FI_COMPARE_ATOMIC (FI_TAGGED
 * is refused); fills attr->size and attr->count = max_bytes / size.
 * 0, -FI_EOPNOTSUPP or -FI_EINVAL. Logs nothing: it knows no provider. */
int util_atomic_query(enum fi_datatype datatype, enum fi_op op,
		      struct fi_atomic_attr *attr, uint64_t flags,
		      size_t max_bytes);

/* Apply op to count elements at dst. src: operand (ignored by READ,
 * required otherwise); compare: required by compare ops; result (may be
 * NULL): receives the old value of every element. The combination must
 * have passed util_atomic_valid (otherwise -FI_EOPNOTSUPP, nothing done).
 * Returns 0. */
int util_atomic_apply(enum fi_op op, enum fi_datatype datatype, void *dst,
		      const void *src, const void *compare, void *result,
		      size_t count);

/* ---- reductions of whole vectors (the collective engine) ----------------
 * Same operators, no atomicity: dst[i] = a[i] (op) b[i], with a[i] in the
 * role of the target's old value and b[i] in that of the operand (which
 * decides MIN/MAX ties and NaNs). dst may be a or b, no other overlap;
 * any alignment. Ops FI_MIN .. FI_BXOR:
 *   integers INT8..UINT64, INT128, UINT128: all ten;
 *   FLOAT, DOUBLE, LONG_DOUBLE: MIN, MAX, SUM, PROD, LOR, LAND, LXOR;
 *   the three complex types: SUM, PROD, LOR, LAND, LXOR.
 */

/* Element size of any datatype up to FI_UINT128, 0 for others. */
size_t util_atomic_any_size(enum fi_datatype datatype);
/* 0, -FI_EOPNOTSUPP (no such reduction) or -FI_EINVAL (no such type/op). */
int util_atomic_reduce_valid(enum fi_op op, enum fi_datatype datatype);
int util_atomic_reduce(enum fi_op op, enum fi_datatype datatype, void *dst,
		       const void *a, const void *b, size_t count);

/* ---- the posting side of emulated atomics (srd, tcp) --------------------
 * One fi_ops_atomic call in a single form, whatever entry point made it;
 * the provider checks it and carries it to the target. */
struct util_atomic_args {
	uint8_t kind;			/* enum util_atomic_kind */
	const struct fi_ioc *iov;
	size_t count;
	const struct fi_ioc *cmp;
	size_t cmp_count;
	struct fi_ioc *res;
	size_t res_count;
	fi_addr_t addr;
	const struct fi_rma_ioc *rma;
	size_t rma_count;
	enum fi_datatype datatype;
	enum fi_op op;
	uint64_t data;
	void *context;
	uint64_t flags;
};

/* Elements in an ioc list. */
size_t util_atomic_ioc_total(const struct fi_ioc *ioc, size_t n);
/* At most max iocs, a list wherever n > 0, and want elements in all. */
bool util_atomic_iocs_ok(const struct fi_ioc *ioc, size_t n, size_t max,
			 size_t want);
/* Copy the elements of an ioc list to dst; returns the bytes copied. */
size_t util_atomic_gather(const struct fi_ioc *ioc, size_t n, size_t dtsize,
			  uint8_t *dst);

#endif /* WEFT_UTIL_ATOMIC_H */
