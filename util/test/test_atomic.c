/* SPDX-License-Identifier: MIT */
#include "util_test.h"
#include <complex.h>
#include <pthread.h>

#define N 8

/* Reference semantics straight from fi_atomic(3), element by element. */
#define REF_COMMON(op, o, s, c, nv, ok)					\
	case FI_MIN: nv = (o < s) ? o : s; break;			\
	case FI_MAX: nv = (o > s) ? o : s; break;			\
	case FI_LOR: nv = o || s; break;				\
	case FI_LAND: nv = o && s; break;				\
	case FI_LXOR: nv = (o && !s) || (!o && s); break;		\
	case FI_ATOMIC_READ: nv = o; break;				\
	case FI_ATOMIC_WRITE: nv = s; break;				\
	case FI_CSWAP: nv = (c == o) ? s : o; break;			\
	case FI_CSWAP_NE: nv = (c != o) ? s : o; break;			\
	case FI_CSWAP_LE: nv = (c <= o) ? s : o; break;			\
	case FI_CSWAP_LT: nv = (c < o) ? s : o; break;			\
	case FI_CSWAP_GE: nv = (c >= o) ? s : o; break;			\
	case FI_CSWAP_GT: nv = (c > o) ? s : o; break;

#define REF_INT(name, T)						\
static bool ref_##name(enum fi_op op, T *d, const T *s, const T *c)	\
{									\
	for (int i = 0; i < N; i++) {					\
		T o = d[i], nv;						\
		switch (op) {						\
		REF_COMMON(op, o, s[i], c[i], nv, ok)			\
		case FI_SUM: nv = (T)((uint64_t)o + (uint64_t)s[i]); break; \
		case FI_PROD: nv = (T)((uint64_t)o * (uint64_t)s[i]); break; \
		case FI_BOR: nv = o | s[i]; break;			\
		case FI_BAND: nv = o & s[i]; break;			\
		case FI_BXOR: nv = o ^ s[i]; break;			\
		case FI_MSWAP: nv = (s[i] & c[i]) | (o & ~c[i]); break;	\
		default: return false;					\
		}							\
		d[i] = nv;						\
	}								\
	return true;							\
}

#define REF_REAL(name, T)						\
static bool ref_##name(enum fi_op op, T *d, const T *s, const T *c)	\
{									\
	for (int i = 0; i < N; i++) {					\
		T o = d[i], nv;						\
		switch (op) {						\
		REF_COMMON(op, o, s[i], c[i], nv, ok)			\
		case FI_SUM: nv = o + s[i]; break;			\
		case FI_PROD: nv = o * s[i]; break;			\
		default: return false;					\
		}							\
		d[i] = nv;						\
	}								\
	return true;							\
}

#define REF_CPLX(name, T)						\
static bool ref_##name(enum fi_op op, T *d, const T *s, const T *c)	\
{									\
	for (int i = 0; i < N; i++) {					\
		T o = d[i], nv;						\
		switch (op) {						\
		case FI_SUM: nv = o + s[i]; break;			\
		case FI_PROD: nv = o * s[i]; break;			\
		case FI_LOR: nv = o || s[i]; break;			\
		case FI_LAND: nv = o && s[i]; break;			\
		case FI_LXOR: nv = (o && !s[i]) || (!o && s[i]); break;	\
		case FI_ATOMIC_READ: nv = o; break;			\
		case FI_ATOMIC_WRITE: nv = s[i]; break;			\
		case FI_CSWAP: nv = (c[i] == o) ? s[i] : o; break;	\
		case FI_CSWAP_NE: nv = (c[i] != o) ? s[i] : o; break;	\
		default: return false;					\
		}							\
		d[i] = nv;						\
	}								\
	return true;							\
}

REF_INT(int8, int8_t)
REF_INT(uint8, uint8_t)
REF_INT(int16, int16_t)
REF_INT(uint16, uint16_t)
REF_INT(int32, int32_t)
REF_INT(uint32, uint32_t)
REF_INT(int64, int64_t)
REF_INT(uint64, uint64_t)
REF_REAL(float, float)
REF_REAL(double, double)
REF_CPLX(fcomplex, float complex)
REF_CPLX(dcomplex, double complex)

/* Operand sets with overflow, negatives, zeros and ties. */
#define VALS(T, a) T a##_dst[N] = { 100, (T)-3, 0, 7, 5, (T)-128, 1, 42 }, \
	a##_src[N] = { 100, 4, 0, (T)-7, 5, 3, 0, 41 },		\
	a##_cmp[N] = { 100, (T)-3, 1, 7, 6, (T)-128, 0, 43 }

#define CHECK_TYPE(name, T, DT)						\
static void check_##name(void)						\
{									\
	for (int op = 0; op < FI_ATOMIC_OP_LAST; op++) {		\
		VALS(T, v);						\
		T ref[N], res[N];					\
		memcpy(ref, v_dst, sizeof(ref));			\
		memset(res, 0x5a, sizeof(res));				\
		bool supported = ref_##name(op, ref, v_src, v_cmp);	\
		if (!supported) {					\
			assert_int_equal(util_atomic_valid(op, DT, N),	\
					 -FI_EOPNOTSUPP);		\
			assert_int_equal(util_atomic_apply(op, DT, v_dst, \
				v_src, v_cmp, res, N), -FI_EOPNOTSUPP);	\
			continue;					\
		}							\
		assert_int_equal(util_atomic_valid(op, DT, N), 0);	\
		T orig[N];						\
		memcpy(orig, v_dst, sizeof(orig));			\
		assert_int_equal(util_atomic_apply(op, DT, v_dst,	\
			op == FI_ATOMIC_READ ? NULL : v_src, v_cmp, res, N), 0); \
		if (memcmp(v_dst, ref, sizeof(ref)))			\
			fail_msg("%s op %d: target differs from reference", \
				 #name, op);				\
		if (memcmp(res, orig, sizeof(res)))			\
			fail_msg("%s op %d: fetched values differ", #name, op); \
		/* without a result buffer */				\
		memcpy(v_dst, orig, sizeof(orig));			\
		assert_int_equal(util_atomic_apply(op, DT, v_dst, v_src, \
						   v_cmp, NULL, N), 0);	\
		assert_memory_equal(v_dst, ref, sizeof(ref));		\
	}								\
}

CHECK_TYPE(int8, int8_t, FI_INT8)
CHECK_TYPE(uint8, uint8_t, FI_UINT8)
CHECK_TYPE(int16, int16_t, FI_INT16)
CHECK_TYPE(uint16, uint16_t, FI_UINT16)
CHECK_TYPE(int32, int32_t, FI_INT32)
CHECK_TYPE(uint32, uint32_t, FI_UINT32)
CHECK_TYPE(int64, int64_t, FI_INT64)
CHECK_TYPE(uint64, uint64_t, FI_UINT64)
CHECK_TYPE(float, float, FI_FLOAT)
CHECK_TYPE(double, double, FI_DOUBLE)
CHECK_TYPE(fcomplex, float complex, FI_FLOAT_COMPLEX)
CHECK_TYPE(dcomplex, double complex, FI_DOUBLE_COMPLEX)

static void test_atomic_integers(void **state)
{
	check_int8();
	check_uint8();
	check_int16();
	check_uint16();
	check_int32();
	check_uint32();
	check_int64();
	check_uint64();
}

static void test_atomic_reals(void **state)
{
	check_float();
	check_double();
}

static void test_atomic_complex(void **state)
{
	check_fcomplex();
	check_dcomplex();
}

static void test_atomic_valid_and_query(void **state)
{
	struct fi_atomic_attr attr;

	assert_int_equal(util_atomic_valid(FI_SUM, FI_LONG_DOUBLE, 1),
			 -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_valid(FI_SUM, FI_UINT128, 1),
			 -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_valid(FI_SUM, 300, 1), -FI_EINVAL);
	assert_int_equal(util_atomic_valid(99, FI_INT32, 1), -FI_EINVAL);
	assert_int_equal(util_atomic_valid(FI_SUM, FI_INT32, 0), -FI_EINVAL);
	assert_int_equal(util_atomic_valid(FI_BOR, FI_DOUBLE, 1),
			 -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_valid(FI_MSWAP, FI_FLOAT, 1),
			 -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_datatype_size(FI_DOUBLE_COMPLEX), 16);
	assert_int_equal(util_atomic_datatype_size(FI_LONG_DOUBLE), 0);

	/* call families */
	assert_int_equal(util_atomic_kind_valid(UTIL_ATOMIC_WRITE,
						FI_ATOMIC_READ, FI_INT32),
			 -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_kind_valid(UTIL_ATOMIC_FETCH,
						FI_ATOMIC_READ, FI_INT32), 0);
	assert_int_equal(util_atomic_kind_valid(UTIL_ATOMIC_WRITE, FI_CSWAP,
						FI_INT32), -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_kind_valid(UTIL_ATOMIC_COMPARE,
						FI_CSWAP_GT, FI_UINT64), 0);
	assert_int_equal(util_atomic_kind_valid(UTIL_ATOMIC_COMPARE, FI_SUM,
						FI_UINT64), -FI_EOPNOTSUPP);

	assert_int_equal(util_atomic_query(FI_INT32, FI_SUM, &attr, 0, 4096), 0);
	assert_int_equal(attr.size, 4);
	assert_int_equal(attr.count, 1024);
	assert_int_equal(util_atomic_query(FI_DOUBLE, FI_ATOMIC_READ, &attr,
					   FI_FETCH_ATOMIC, 64), 0);
	assert_int_equal(attr.count, 8);
	assert_int_equal(util_atomic_query(FI_DOUBLE, FI_ATOMIC_READ, &attr, 0,
					   64), -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_query(FI_INT64, FI_CSWAP, &attr,
					   FI_COMPARE_ATOMIC, 64), 0);
	assert_int_equal(util_atomic_query(FI_INT64, FI_CSWAP, &attr,
					   FI_COMPARE_ATOMIC | FI_FETCH_ATOMIC,
					   64), -FI_EINVAL);
	assert_int_equal(util_atomic_query(FI_INT64, FI_SUM, &attr, FI_TAGGED,
					   64), -FI_EOPNOTSUPP);
}

static struct fi_ops_atomic test_atomic_ops;

static void test_atomic_domain_and_ep_valid(void **state)
{
	struct test_env env;
	struct fi_atomic_attr attr;
	struct test_ep *ep;
	size_t count;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	ep = test_ep_open(&env);
	test_atomic_ops = util_no_atomic_ops;
	test_atomic_ops.writevalid = util_ep_atomic_writevalid;
	test_atomic_ops.readwritevalid = util_ep_atomic_readwritevalid;
	test_atomic_ops.compwritevalid = util_ep_atomic_compwritevalid;
	ep->util.ep_fid.atomic = UTIL_OPS(&test_atomic_ops);
	/* no atomics until the provider sets a size */
	assert_int_equal(fi_query_atomic(env.domain, FI_INT32, FI_SUM, &attr,
					 0), -FI_EOPNOTSUPP);
	assert_int_equal(fi_atomicvalid(&ep->util.ep_fid, FI_INT32, FI_SUM,
					&count), -FI_EOPNOTSUPP);
	env.udom->atomic_max_bytes = 256;
	assert_int_equal(fi_query_atomic(env.domain, FI_INT32, FI_SUM, &attr,
					 0), 0);
	assert_int_equal(attr.count, 64);
	assert_int_equal(fi_atomicvalid(&ep->util.ep_fid, FI_INT64, FI_SUM,
					&count), 0);
	assert_int_equal(count, 32);
	assert_int_equal(fi_fetch_atomicvalid(&ep->util.ep_fid, FI_INT64,
					      FI_ATOMIC_READ, &count), 0);
	assert_int_equal(fi_atomicvalid(&ep->util.ep_fid, FI_INT64,
					FI_ATOMIC_READ, &count),
			 -FI_EOPNOTSUPP);
	assert_int_equal(fi_compare_atomicvalid(&ep->util.ep_fid, FI_DOUBLE,
						FI_CSWAP_LE, &count), 0);
	assert_int_equal(count, 32);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	test_env_close(&env);
}

static void test_atomic_unaligned_target(void **state)
{
	uint8_t raw[64] = { 0 };
	int32_t v = 10, add = 5, res = 0, out;

	/* target at an odd address: still correct (locked path) */
	memcpy(raw + 1, &v, sizeof(v));
	assert_int_equal(util_atomic_apply(FI_SUM, FI_INT32, raw + 1, &add,
					   NULL, &res, 1), 0);
	memcpy(&out, raw + 1, sizeof(out));
	assert_int_equal(out, 15);
	assert_int_equal(res, 10);
	/* operands unaligned too */
	memcpy(raw + 9, &add, sizeof(add));
	assert_int_equal(util_atomic_apply(FI_SUM, FI_INT32, raw + 1, raw + 9,
					   NULL, raw + 17, 1), 0);
	memcpy(&out, raw + 1, sizeof(out));
	assert_int_equal(out, 20);
	memcpy(&out, raw + 17, sizeof(out));
	assert_int_equal(out, 15);
}

struct race {
	int64_t *i64;
	double *dbl;
	double complex *dc;
};

#define RACE_ITERS 20000

static void *race_thread(void *p)
{
	struct race *r = p;
	int64_t one = 1;
	double done = 1.0;
	double complex cone = 1.0;

	for (int i = 0; i < RACE_ITERS; i++) {
		util_atomic_apply(FI_SUM, FI_INT64, r->i64, &one, NULL, NULL, 1);
		util_atomic_apply(FI_SUM, FI_DOUBLE, r->dbl, &done, NULL, NULL, 1);
		util_atomic_apply(FI_SUM, FI_DOUBLE_COMPLEX, r->dc, &cone,
				  NULL, NULL, 1);
	}
	return NULL;
}

static void test_atomic_concurrent_sum(void **state)
{
	int64_t i64 = 0;
	double dbl = 0;
	double complex dc = 0;
	struct race r = { &i64, &dbl, &dc };
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, race_thread, &r), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(i64, 2 * RACE_ITERS);
	assert_true(dbl == 2.0 * RACE_ITERS);
	assert_true(creal(dc) == 2.0 * RACE_ITERS);
}

/* ---- whole-vector reductions (the collective engine's) ------------------- */

/* Reference of one op on integers of bits width (two's complement). */
static uint64_t rd_int_ref(enum fi_op op, uint64_t a, uint64_t b, int bits,
			   bool sgn)
{
	uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, r;
	int64_t sa = (int64_t)(a << (64 - bits)) >> (64 - bits);
	int64_t sb = (int64_t)(b << (64 - bits)) >> (64 - bits);

	a &= mask;
	b &= mask;
	switch (op) {
	case FI_MIN: r = sgn ? (sb < sa ? b : a) : (b < a ? b : a); break;
	case FI_MAX: r = sgn ? (sa < sb ? b : a) : (a < b ? b : a); break;
	case FI_SUM: r = a + b; break;
	case FI_PROD: r = a * b; break;
	case FI_LOR: r = a || b; break;
	case FI_LAND: r = a && b; break;
	case FI_BOR: r = a | b; break;
	case FI_BAND: r = a & b; break;
	case FI_LXOR: r = !a != !b; break;
	default: r = a ^ b; break;
	}
	return r & mask;
}

static void test_reduce_integers(void **state)
{
	static const struct { enum fi_datatype dt; int bits; bool sgn; } t[] = {
		{ FI_INT8, 8, true }, { FI_UINT8, 8, false },
		{ FI_INT16, 16, true }, { FI_UINT16, 16, false },
		{ FI_INT32, 32, true }, { FI_UINT32, 32, false },
		{ FI_INT64, 64, true }, { FI_UINT64, 64, false },
	};
	uint8_t a[8 * 17 + 1], b[8 * 17 + 1], d[8 * 17 + 1];

	(void)state;
	for (size_t ti = 0; ti < sizeof(t) / sizeof(t[0]); ti++) {
		size_t sz = (size_t)t[ti].bits / 8;

		for (int op = FI_MIN; op <= FI_BXOR; op++) {
			assert_int_equal(util_atomic_reduce_valid(op, t[ti].dt), 0);
			for (size_t i = 0; i < sizeof(a); i++) {
				a[i] = (uint8_t)(i * 37 + op);
				b[i] = (uint8_t)(i % 3 ? i * 91 : 0);
			}
			/* unaligned, 17 elements (vector body and tail) */
			assert_int_equal(util_atomic_reduce(op, t[ti].dt, d + 1,
							    a + 1, b + 1, 17), 0);
			for (size_t i = 0; i < 17; i++) {
				uint64_t x = 0, y = 0, z = 0;

				memcpy(&x, a + 1 + i * sz, sz);
				memcpy(&y, b + 1 + i * sz, sz);
				memcpy(&z, d + 1 + i * sz, sz);
				assert_int_equal(z, rd_int_ref(op, x, y,
							       t[ti].bits,
							       t[ti].sgn));
			}
		}
	}
}

static void test_reduce_reals_complex_aliasing(void **state)
{
	double a[9], b[9], r[9];
	double complex ca[5], cb[5];
	long double la[3] = { 1.5L, -2, 0 }, lb[3] = { 2, -3, 0 };

	(void)state;
	for (int i = 0; i < 9; i++) {
		a[i] = i - 4.5;
		b[i] = 2.0 * i;
	}
	memcpy(r, a, sizeof(a));
	/* dst is a: in place */
	assert_int_equal(util_atomic_reduce(FI_SUM, FI_DOUBLE, r, r, b, 9), 0);
	for (int i = 0; i < 9; i++)
		assert_true(r[i] == a[i] + b[i]);
	/* dst is b, and MAX */
	memcpy(r, b, sizeof(b));
	assert_int_equal(util_atomic_reduce(FI_MAX, FI_DOUBLE, r, a, r, 9), 0);
	for (int i = 0; i < 9; i++)
		assert_true(r[i] == (a[i] > b[i] ? a[i] : b[i]));
	for (int i = 0; i < 5; i++) {
		ca[i] = i + 1.0 * I;
		cb[i] = 2.0 - i * I;
	}
	assert_int_equal(util_atomic_reduce(FI_PROD, FI_DOUBLE_COMPLEX, ca, ca,
					    cb, 5), 0);
	for (int i = 0; i < 5; i++)
		assert_true(ca[i] == (i + 1.0 * I) * (2.0 - i * I));
	assert_int_equal(util_atomic_reduce(FI_LAND, FI_LONG_DOUBLE, la, la, lb,
					    3), 0);
	assert_true(la[0] == 1 && la[1] == 1 && la[2] == 0);
	/* what does not exist is said so */
	assert_int_equal(util_atomic_reduce_valid(FI_BOR, FI_FLOAT),
			 -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_reduce_valid(FI_MIN, FI_FLOAT_COMPLEX),
			 -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_reduce_valid(FI_CSWAP, FI_INT32),
			 -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_reduce_valid(FI_SUM, FI_VOID), -FI_EINVAL);
	assert_int_equal(util_atomic_reduce(FI_BXOR, FI_DOUBLE, r, a, b, 9),
			 -FI_EOPNOTSUPP);
	assert_int_equal(util_atomic_any_size(FI_LONG_DOUBLE_COMPLEX),
			 sizeof(long double complex));
	assert_int_equal(util_atomic_any_size(FI_UINT128), 16);
	assert_int_equal(util_atomic_any_size(FI_VOID), 0);
}

static void test_reduce_int128(void **state)
{
	unsigned __int128 a[3], b[3], d[3];
	__int128 sa[2] = { -5, 7 }, sb[2] = { 3, -9 }, sd[2];

	(void)state;
	for (int i = 0; i < 3; i++) {
		a[i] = ((unsigned __int128)~0ull << 64) | (unsigned)i;
		b[i] = 1;
	}
	assert_int_equal(util_atomic_reduce(FI_SUM, FI_UINT128, d, a, b, 3), 0);
	for (int i = 0; i < 3; i++)
		assert_true(d[i] == a[i] + 1);
	assert_int_equal(util_atomic_reduce(FI_MIN, FI_INT128, sd, sa, sb, 2), 0);
	assert_true(sd[0] == -5 && sd[1] == -9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_atomic_integers),
		cmocka_unit_test(test_atomic_reals),
		cmocka_unit_test(test_atomic_complex),
		cmocka_unit_test(test_atomic_valid_and_query),
		cmocka_unit_test(test_atomic_domain_and_ep_valid),
		cmocka_unit_test(test_atomic_unaligned_target),
		cmocka_unit_test(test_atomic_concurrent_sum),
		cmocka_unit_test(test_reduce_integers),
		cmocka_unit_test(test_reduce_reals_complex_aliasing),
		cmocka_unit_test(test_reduce_int128),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
