/* SPDX-License-Identifier: MIT */
/*
 * One small function per (op, datatype), generated from the operator
 * definitions below and placed in a table indexed [op][datatype], so the
 * data path does one indexed call per fi_atomic instead of switching per
 * element. The same operator definitions generate a second family for
 * the collective engine's reductions (util_atomic_reduce): plain loops
 * over whole vectors, no atomicity, vectorised by the compiler.
 */
#include "weft/compat.h"
#include "weft/util_atomic.h"
#include <complex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef void (*util_atomic_fn)(void *dst, const void *src, const void *cmp,
			       void *res, size_t cnt);

/* Elements that cannot use a native compare-and-swap (16 bytes, or an
 * unaligned target) are updated under one of these, chosen by address. */
#define UTIL_AT_NLOCKS 64
static pthread_mutex_t util_at_locks[UTIL_AT_NLOCKS] = {
	[0 ... UTIL_AT_NLOCKS - 1] = PTHREAD_MUTEX_INITIALIZER
};

static pthread_mutex_t *util_at_lock_of(const void *addr)
{
	return &util_at_locks[((uintptr_t)addr >> 4) % UTIL_AT_NLOCKS];
}

/* Operators: with old = current target element, s = operand, c = compare,
 * COND says whether the target is written and NEW what with (fi_atomic(3)).
 * UT is the element type and UA the arithmetic type (typedefs in each
 * generated function): uint64_t for integers, so SUM/PROD wrap instead of
 * overflowing a signed type. */
#define UTIL_AT_COND_min	!(old < s)
#define UTIL_AT_NEW_min		s
#define UTIL_AT_COND_max	!(old > s)
#define UTIL_AT_NEW_max		s
#define UTIL_AT_COND_sum	1
#define UTIL_AT_NEW_sum		(UT)((UA)old + (UA)s)
#define UTIL_AT_COND_prod	1
#define UTIL_AT_NEW_prod	(UT)((UA)old * (UA)s)
#define UTIL_AT_COND_lor	1
#define UTIL_AT_NEW_lor		(UT)(old || s)
#define UTIL_AT_COND_land	1
#define UTIL_AT_NEW_land	(UT)(old && s)
#define UTIL_AT_COND_bor	1
#define UTIL_AT_NEW_bor		(UT)(old | s)
#define UTIL_AT_COND_band	1
#define UTIL_AT_NEW_band	(UT)(old & s)
#define UTIL_AT_COND_lxor	1
#define UTIL_AT_NEW_lxor	(UT)((old && !s) || (!old && s))
#define UTIL_AT_COND_bxor	1
#define UTIL_AT_NEW_bxor	(UT)(old ^ s)
#define UTIL_AT_COND_read	0
#define UTIL_AT_NEW_read	old
#define UTIL_AT_COND_write	1
#define UTIL_AT_NEW_write	s
#define UTIL_AT_COND_cswap	(c == old)
#define UTIL_AT_NEW_cswap	s
#define UTIL_AT_COND_cswap_ne	(c != old)
#define UTIL_AT_NEW_cswap_ne	s
#define UTIL_AT_COND_cswap_le	(c <= old)
#define UTIL_AT_NEW_cswap_le	s
#define UTIL_AT_COND_cswap_lt	(c < old)
#define UTIL_AT_NEW_cswap_lt	s
#define UTIL_AT_COND_cswap_ge	(c >= old)
#define UTIL_AT_NEW_cswap_ge	s
#define UTIL_AT_COND_cswap_gt	(c > old)
#define UTIL_AT_NEW_cswap_gt	s
#define UTIL_AT_COND_mswap	1
#define UTIL_AT_NEW_mswap	(UT)((s & c) | (old & ~c))

#define UTIL_AT_OP_min		FI_MIN
#define UTIL_AT_OP_max		FI_MAX
#define UTIL_AT_OP_sum		FI_SUM
#define UTIL_AT_OP_prod		FI_PROD
#define UTIL_AT_OP_lor		FI_LOR
#define UTIL_AT_OP_land		FI_LAND
#define UTIL_AT_OP_bor		FI_BOR
#define UTIL_AT_OP_band		FI_BAND
#define UTIL_AT_OP_lxor		FI_LXOR
#define UTIL_AT_OP_bxor		FI_BXOR
#define UTIL_AT_OP_read		FI_ATOMIC_READ
#define UTIL_AT_OP_write	FI_ATOMIC_WRITE
#define UTIL_AT_OP_cswap	FI_CSWAP
#define UTIL_AT_OP_cswap_ne	FI_CSWAP_NE
#define UTIL_AT_OP_cswap_le	FI_CSWAP_LE
#define UTIL_AT_OP_cswap_lt	FI_CSWAP_LT
#define UTIL_AT_OP_cswap_ge	FI_CSWAP_GE
#define UTIL_AT_OP_cswap_gt	FI_CSWAP_GT
#define UTIL_AT_OP_mswap	FI_MSWAP

#define UTIL_AT_DT_int8		FI_INT8
#define UTIL_AT_DT_uint8	FI_UINT8
#define UTIL_AT_DT_int16	FI_INT16
#define UTIL_AT_DT_uint16	FI_UINT16
#define UTIL_AT_DT_int32	FI_INT32
#define UTIL_AT_DT_uint32	FI_UINT32
#define UTIL_AT_DT_int64	FI_INT64
#define UTIL_AT_DT_uint64	FI_UINT64
#define UTIL_AT_DT_float	FI_FLOAT
#define UTIL_AT_DT_double	FI_DOUBLE
#define UTIL_AT_DT_fcomplex	FI_FLOAT_COMPLEX
#define UTIL_AT_DT_dcomplex	FI_DOUBLE_COMPLEX

/* Load operands element i (they may be unaligned, or NULL when unused). */
#define UTIL_AT_OPERANDS(T)						\
	T s, c;								\
	if (src)							\
		memcpy(&s, (const char *)src + i * sizeof(T), sizeof(T)); \
	else								\
		memset(&s, 0, sizeof(T));				\
	if (cmp)							\
		memcpy(&c, (const char *)cmp + i * sizeof(T), sizeof(T)); \
	else								\
		memset(&c, 0, sizeof(T));				\
	(void)s; (void)c

/* Under the striped lock: for 16-byte types and unaligned targets. */
#define UTIL_AT_LOCKED_ELEM(op, T, A)					\
	do {								\
		char *p = (char *)dst + i * sizeof(T);			\
		pthread_mutex_t *lk = util_at_lock_of(p);		\
		T old, nv;						\
		pthread_mutex_lock(lk);					\
		memcpy(&old, p, sizeof(T));				\
		if (UTIL_AT_COND_##op) {				\
			nv = UTIL_AT_NEW_##op;				\
			memcpy(p, &nv, sizeof(T));			\
		}							\
		pthread_mutex_unlock(lk);				\
		if (res)						\
			memcpy((char *)res + i * sizeof(T), &old, sizeof(T)); \
	} while (0)

/* Native compare-and-swap on the element's bits (U has T's size). */
#define UTIL_AT_DEF_CAS(op, name, T, U, A)				\
static void util_at_##op##_##name(void *dst, const void *src,		\
				  const void *cmp, void *res, size_t cnt) \
{									\
	typedef T UT __attribute__((unused));	\
	typedef A UA __attribute__((unused));	\
	for (size_t i = 0; i < cnt; i++) {				\
		UTIL_AT_OPERANDS(T);					\
		U *p = (U *)((char *)dst + i * sizeof(T));		\
		if ((uintptr_t)p % sizeof(T)) {				\
			UTIL_AT_LOCKED_ELEM(op, T, A);			\
			continue;					\
		}							\
		U ob = __atomic_load_n(p, __ATOMIC_ACQUIRE), nb;	\
		T old, nv;						\
		do {							\
			memcpy(&old, &ob, sizeof(T));			\
			if (!(UTIL_AT_COND_##op))			\
				break;					\
			nv = UTIL_AT_NEW_##op;				\
			memcpy(&nb, &nv, sizeof(T));			\
		} while (!__atomic_compare_exchange_n(p, &ob, nb, false,	\
						      __ATOMIC_ACQ_REL,	\
						      __ATOMIC_ACQUIRE)); \
		if (res)						\
			memcpy((char *)res + i * sizeof(T), &old, sizeof(T)); \
	}								\
}

#define UTIL_AT_DEF_LOCKED(op, name, T, U, A)				\
static void util_at_##op##_##name(void *dst, const void *src,		\
				  const void *cmp, void *res, size_t cnt) \
{									\
	typedef T UT __attribute__((unused));	\
	typedef A UA __attribute__((unused));	\
	for (size_t i = 0; i < cnt; i++) {				\
		UTIL_AT_OPERANDS(T);					\
		UTIL_AT_LOCKED_ELEM(op, T, A);				\
	}								\
}

#define UTIL_AT_ENTRY(op, name, T, U, A)				\
	[UTIL_AT_OP_##op][UTIL_AT_DT_##name] = util_at_##op##_##name,

/* Type families: M(op, name, T, bits type, arithmetic type). */
#define UTIL_AT_INTS(M, op)						\
	M(op, int8, int8_t, uint8_t, uint64_t)				\
	M(op, uint8, uint8_t, uint8_t, uint64_t)			\
	M(op, int16, int16_t, uint16_t, uint64_t)			\
	M(op, uint16, uint16_t, uint16_t, uint64_t)			\
	M(op, int32, int32_t, uint32_t, uint64_t)			\
	M(op, uint32, uint32_t, uint32_t, uint64_t)			\
	M(op, int64, int64_t, uint64_t, uint64_t)			\
	M(op, uint64, uint64_t, uint64_t, uint64_t)
#define UTIL_AT_REALS(M, op)						\
	M(op, float, float, uint32_t, float)				\
	M(op, double, double, uint64_t, double)
#define UTIL_AT_CPLX_CAS(M, op)						\
	M(op, fcomplex, float complex, uint64_t, float complex)
#define UTIL_AT_CPLX_LOCKED(M, op)					\
	M(op, dcomplex, double complex, void, double complex)

/* Which ops each family supports (see util_atomic.h). */
#define UTIL_AT_INT_OPS(F)						\
	F(min) F(max) F(sum) F(prod) F(lor) F(land) F(bor) F(band)	\
	F(lxor) F(bxor) F(read) F(write) F(cswap) F(cswap_ne)		\
	F(cswap_le) F(cswap_lt) F(cswap_ge) F(cswap_gt) F(mswap)
#define UTIL_AT_REAL_OPS(F)						\
	F(min) F(max) F(sum) F(prod) F(lor) F(land) F(lxor) F(read)	\
	F(write) F(cswap) F(cswap_ne) F(cswap_le) F(cswap_lt)		\
	F(cswap_ge) F(cswap_gt)
#define UTIL_AT_CPLX_OPS(F)						\
	F(sum) F(prod) F(lor) F(land) F(lxor) F(read) F(write)		\
	F(cswap) F(cswap_ne)

#define UTIL_AT_GEN_INT(op)	UTIL_AT_INTS(UTIL_AT_DEF_CAS, op)
#define UTIL_AT_GEN_REAL(op)	UTIL_AT_REALS(UTIL_AT_DEF_CAS, op)
#define UTIL_AT_GEN_CPLX(op)	UTIL_AT_CPLX_CAS(UTIL_AT_DEF_CAS, op) \
				UTIL_AT_CPLX_LOCKED(UTIL_AT_DEF_LOCKED, op)
#define UTIL_AT_TAB_INT(op)	UTIL_AT_INTS(UTIL_AT_ENTRY, op)
#define UTIL_AT_TAB_REAL(op)	UTIL_AT_REALS(UTIL_AT_ENTRY, op)
#define UTIL_AT_TAB_CPLX(op)	UTIL_AT_CPLX_CAS(UTIL_AT_ENTRY, op) \
				UTIL_AT_CPLX_LOCKED(UTIL_AT_ENTRY, op)

UTIL_AT_INT_OPS(UTIL_AT_GEN_INT)
UTIL_AT_REAL_OPS(UTIL_AT_GEN_REAL)
UTIL_AT_CPLX_OPS(UTIL_AT_GEN_CPLX)

static const util_atomic_fn util_at_table[FI_ATOMIC_OP_LAST][FI_DATATYPE_LAST] = {
	UTIL_AT_INT_OPS(UTIL_AT_TAB_INT)
	UTIL_AT_REAL_OPS(UTIL_AT_TAB_REAL)
	UTIL_AT_CPLX_OPS(UTIL_AT_TAB_CPLX)
};

static const size_t util_at_size[FI_DATATYPE_LAST] = {
	[FI_INT8] = 1, [FI_UINT8] = 1, [FI_INT16] = 2, [FI_UINT16] = 2,
	[FI_INT32] = 4, [FI_UINT32] = 4, [FI_INT64] = 8, [FI_UINT64] = 8,
	[FI_FLOAT] = sizeof(float), [FI_DOUBLE] = sizeof(double),
	[FI_FLOAT_COMPLEX] = sizeof(float complex),
	[FI_DOUBLE_COMPLEX] = sizeof(double complex),
};

size_t util_atomic_datatype_size(enum fi_datatype datatype)
{
	if ((unsigned)datatype >= FI_DATATYPE_LAST)
		return 0;
	return util_at_size[datatype];
}

static util_atomic_fn util_atomic_lookup(enum fi_op op,
					 enum fi_datatype datatype)
{
	if ((unsigned)op >= FI_ATOMIC_OP_LAST ||
	    (unsigned)datatype >= FI_DATATYPE_LAST)
		return NULL;
	return util_at_table[op][datatype];
}

int util_atomic_valid(enum fi_op op, enum fi_datatype datatype, size_t count)
{
	if ((unsigned)op >= FI_ATOMIC_OP_LAST || !count)
		return -FI_EINVAL;
	if ((unsigned)datatype >= FI_DATATYPE_LAST)
		return (unsigned)datatype < FI_UINT128 + 1 ? -FI_EOPNOTSUPP :
							     -FI_EINVAL;
	return util_atomic_lookup(op, datatype) ? 0 : -FI_EOPNOTSUPP;
}

static bool util_atomic_op_in_kind(enum util_atomic_kind kind, enum fi_op op)
{
	switch (kind) {
	case UTIL_ATOMIC_WRITE:
		return op <= FI_ATOMIC_WRITE && op != FI_ATOMIC_READ;
	case UTIL_ATOMIC_FETCH:
		return op <= FI_ATOMIC_WRITE;
	case UTIL_ATOMIC_COMPARE:
		return op >= FI_CSWAP && op <= FI_MSWAP;
	default:
		return false;
	}
}

int util_atomic_kind_valid(enum util_atomic_kind kind, enum fi_op op,
			   enum fi_datatype datatype)
{
	int ret = util_atomic_valid(op, datatype, 1);

	if (ret)
		return ret;
	return util_atomic_op_in_kind(kind, op) ? 0 : -FI_EOPNOTSUPP;
}

int util_atomic_query(enum fi_datatype datatype, enum fi_op op,
		      struct fi_atomic_attr *attr, uint64_t flags,
		      size_t max_bytes)
{
	enum util_atomic_kind kind;
	size_t size;
	int ret;

	if (!attr)
		return -FI_EINVAL;
	if (flags & FI_TAGGED)
		return -FI_EOPNOTSUPP;
	switch (flags & (FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC)) {
	case 0:
		kind = UTIL_ATOMIC_WRITE;
		break;
	case FI_FETCH_ATOMIC:
		kind = UTIL_ATOMIC_FETCH;
		break;
	case FI_COMPARE_ATOMIC:
		kind = UTIL_ATOMIC_COMPARE;
		break;
	default:	/* both: the caller logs it (it knows the provider) */
		return -FI_EINVAL;
	}
	ret = util_atomic_kind_valid(kind, op, datatype);
	if (ret)
		return ret;
	size = util_atomic_datatype_size(datatype);
	attr->size = size;
	attr->count = max_bytes / size;
	return attr->count ? 0 : -FI_EOPNOTSUPP;
}

int util_atomic_apply(enum fi_op op, enum fi_datatype datatype, void *dst,
		      const void *src, const void *compare, void *result,
		      size_t count)
{
	util_atomic_fn fn = util_atomic_lookup(op, datatype);

	if (WEFT_UNLIKELY(!fn))
		return -FI_EOPNOTSUPP;
	fn(dst, src, compare, result, count);
	return 0;
}

/* ---- reductions of whole vectors (collectives) --------------------------- */

typedef void (*util_reduce_fn)(void *dst, const void *a, const void *b,
			       size_t cnt);

/* dst[i] = a[i] (op) b[i] with old = a[i], s = b[i] in the operator
 * definitions above. Element copies through memcpy: the buffers may be
 * unaligned, and dst may be a or b (but no other overlap). O3 here: at
 * -O2 the compiler vectorises only loops whose trip count it knows, and
 * these loops are what a large allreduce spends its CPU on. */
#pragma GCC push_options
#pragma GCC optimize("O3")
#define UTIL_RD_DEF(op, name, T, U, A)					\
static void util_rd_##op##_##name(void *dst, const void *a,		\
				  const void *b, size_t cnt)		\
{									\
	typedef T UT __attribute__((unused));				\
	typedef A UA __attribute__((unused));				\
	for (size_t i = 0; i < cnt; i++) {				\
		T old, s, nv;						\
		memcpy(&old, (const char *)a + i * sizeof(T), sizeof(T)); \
		memcpy(&s, (const char *)b + i * sizeof(T), sizeof(T));	\
		nv = (UTIL_AT_COND_##op) ? (T)(UTIL_AT_NEW_##op) : old;	\
		memcpy((char *)dst + i * sizeof(T), &nv, sizeof(T));	\
	}								\
}

#define UTIL_RD_ENTRY(op, name, T, U, A)				\
	[UTIL_AT_OP_##op][UTIL_AT_DT_##name] = util_rd_##op##_##name,

#define UTIL_AT_DT_ldouble	FI_LONG_DOUBLE
#define UTIL_AT_DT_ldcomplex	FI_LONG_DOUBLE_COMPLEX
#define UTIL_AT_DT_int128	FI_INT128
#define UTIL_AT_DT_uint128	FI_UINT128

/* Reductions cover the types atomics cannot: long double, its complex,
 * and 128-bit integers (arithmetic in unsigned __int128, so it wraps). */
#define UTIL_RD_INTS(M, op)						\
	UTIL_AT_INTS(M, op)						\
	M(op, int128, __int128, void, unsigned __int128)		\
	M(op, uint128, unsigned __int128, void, unsigned __int128)
#define UTIL_RD_REALS(M, op)						\
	UTIL_AT_REALS(M, op)						\
	M(op, ldouble, long double, void, long double)
#define UTIL_RD_CPLX(M, op)						\
	M(op, fcomplex, float complex, void, float complex)		\
	M(op, dcomplex, double complex, void, double complex)		\
	M(op, ldcomplex, long double complex, void, long double complex)

#define UTIL_RD_INT_OPS(F)						\
	F(min) F(max) F(sum) F(prod) F(lor) F(land) F(bor) F(band)	\
	F(lxor) F(bxor)
#define UTIL_RD_REAL_OPS(F)						\
	F(min) F(max) F(sum) F(prod) F(lor) F(land) F(lxor)
#define UTIL_RD_CPLX_OPS(F)						\
	F(sum) F(prod) F(lor) F(land) F(lxor)

#define UTIL_RD_GEN_INT(op)	UTIL_RD_INTS(UTIL_RD_DEF, op)
#define UTIL_RD_GEN_REAL(op)	UTIL_RD_REALS(UTIL_RD_DEF, op)
#define UTIL_RD_GEN_CPLX(op)	UTIL_RD_CPLX(UTIL_RD_DEF, op)
#define UTIL_RD_TAB_INT(op)	UTIL_RD_INTS(UTIL_RD_ENTRY, op)
#define UTIL_RD_TAB_REAL(op)	UTIL_RD_REALS(UTIL_RD_ENTRY, op)
#define UTIL_RD_TAB_CPLX(op)	UTIL_RD_CPLX(UTIL_RD_ENTRY, op)

UTIL_RD_INT_OPS(UTIL_RD_GEN_INT)
UTIL_RD_REAL_OPS(UTIL_RD_GEN_REAL)
UTIL_RD_CPLX_OPS(UTIL_RD_GEN_CPLX)
#pragma GCC pop_options

#define UTIL_RD_NTYPES (FI_UINT128 + 1)

static const util_reduce_fn
util_rd_table[FI_BXOR + 1][UTIL_RD_NTYPES] = {
	UTIL_RD_INT_OPS(UTIL_RD_TAB_INT)
	UTIL_RD_REAL_OPS(UTIL_RD_TAB_REAL)
	UTIL_RD_CPLX_OPS(UTIL_RD_TAB_CPLX)
};

static const size_t util_rd_size[UTIL_RD_NTYPES] = {
	[FI_INT8] = 1, [FI_UINT8] = 1, [FI_INT16] = 2, [FI_UINT16] = 2,
	[FI_INT32] = 4, [FI_UINT32] = 4, [FI_INT64] = 8, [FI_UINT64] = 8,
	[FI_FLOAT] = sizeof(float), [FI_DOUBLE] = sizeof(double),
	[FI_FLOAT_COMPLEX] = sizeof(float complex),
	[FI_DOUBLE_COMPLEX] = sizeof(double complex),
	[FI_LONG_DOUBLE] = sizeof(long double),
	[FI_LONG_DOUBLE_COMPLEX] = sizeof(long double complex),
	[FI_INT128] = sizeof(__int128), [FI_UINT128] = sizeof(__int128),
};

size_t util_atomic_any_size(enum fi_datatype datatype)
{
	if ((unsigned)datatype >= UTIL_RD_NTYPES)
		return 0;
	return util_rd_size[datatype];
}

static util_reduce_fn util_reduce_lookup(enum fi_op op,
					 enum fi_datatype datatype)
{
	if ((unsigned)op > FI_BXOR || (unsigned)datatype >= UTIL_RD_NTYPES)
		return NULL;
	return util_rd_table[op][datatype];
}

int util_atomic_reduce_valid(enum fi_op op, enum fi_datatype datatype)
{
	if (!util_atomic_any_size(datatype))
		return -FI_EINVAL;
	if ((unsigned)op >= FI_ATOMIC_OP_LAST)
		return -FI_EINVAL;
	return util_reduce_lookup(op, datatype) ? 0 : -FI_EOPNOTSUPP;
}

int util_atomic_reduce(enum fi_op op, enum fi_datatype datatype, void *dst,
		       const void *a, const void *b, size_t count)
{
	util_reduce_fn fn = util_reduce_lookup(op, datatype);

	if (WEFT_UNLIKELY(!fn))
		return -FI_EOPNOTSUPP;
	fn(dst, a, b, count);
	return 0;
}

size_t util_atomic_ioc_total(const struct fi_ioc *ioc, size_t n)
{
	size_t i, total = 0;

	for (i = 0; i < n; i++)
		total += ioc[i].count;
	return total;
}

bool util_atomic_iocs_ok(const struct fi_ioc *ioc, size_t n, size_t max,
			 size_t want)
{
	return n <= max && (!n || ioc) && util_atomic_ioc_total(ioc, n) == want;
}

size_t util_atomic_gather(const struct fi_ioc *ioc, size_t n, size_t dtsize,
			  uint8_t *dst)
{
	size_t i, bytes, off = 0;

	for (i = 0; i < n; i++) {
		bytes = ioc[i].count * dtsize;
		memcpy(dst + off, ioc[i].addr, bytes);
		off += bytes;
	}
	return off;
}
