/* SPDX-License-Identifier: MIT */
/*
 * shm provider: RMA and atomics, checked by the target against its MR map,
 * with errors reported as error completions at the initiator.
 */
#include "shm_prov_test.h"

static struct tctx T;
static uint8_t *tbuf;		/* target region, registered on ep[1] */
static struct fid_mr *mr, *ro_mr;
static uint64_t key, ro_key;
static uint8_t ro_buf[4096];

#define TLEN (2u << 20)
#define CAPS (FI_MSG | FI_RMA | FI_ATOMIC | FI_REMOTE_READ | \
	      FI_REMOTE_WRITE | FI_READ | FI_WRITE)

/* Remote address of byte off of a region, per the domain's mr_mode. */
static uint64_t raddr(const void *base, size_t off)
{
	if (T.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uintptr_t)base + off;
	return off;
}

static int setup(void **state)
{
	(void)state;
	t_open(&T, CAPS, 2);
	tbuf = calloc(1, TLEN);
	assert_non_null(tbuf);
	assert_int_equal(fi_mr_reg(T.domain, tbuf, TLEN,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 1, 0,
				   &mr, NULL), 0);
	key = fi_mr_key(mr);
	assert_int_equal(fi_mr_reg(T.domain, ro_buf, sizeof(ro_buf),
				   FI_REMOTE_READ, 0, 2, 0, &ro_mr, NULL), 0);
	ro_key = fi_mr_key(ro_mr);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(fi_close(&mr->fid), 0);
	assert_int_equal(fi_close(&ro_mr->fid), 0);
	free(tbuf);
	t_close(&T);
	return 0;
}

static void t_write_read(size_t off, size_t len, unsigned seed)
{
	uint8_t *src = malloc(len + 1), *dst = malloc(len + 1);
	struct fi_context wc, rc;
	struct fi_cq_tagged_entry e;

	t_fill(src, len, seed);
	memset(dst, 0, len + 1);
	T_POST(&T, fi_write(T.ep[0], src, len, NULL, T.addr[1],
			    raddr(tbuf, off), key, &wc));
	e = t_wait_ok(&T, &wc);
	assert_true(e.flags & FI_WRITE);
	assert_int_equal(t_check(tbuf + off, len, seed), -1);
	T_POST(&T, fi_read(T.ep[0], dst, len, NULL, T.addr[1],
			   raddr(tbuf, off), key, &rc));
	e = t_wait_ok(&T, &rc);
	assert_true(e.flags & FI_READ);
	assert_int_equal(t_check(dst, len, seed), -1);
	free(src);
	free(dst);
}

static void test_write_read(void **state)
{
	size_t sizes[] = { 1, 8, 900, 1000, 1040, 1041, 4096, 4112, 4113, 65536, 1 << 20 };
	size_t i;

	(void)state;
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++)
		t_write_read(i * 16, sizes[i], (unsigned)i);
}

static void test_writedata_inject(void **state)
{
	uint64_t v = 0x1122334455667788ull, back = 0;
	struct fi_context wc, rc;
	struct fi_cq_tagged_entry e;

	(void)state;
	T_POST(&T, fi_writedata(T.ep[0], &v, 8, NULL, 0xabcdef, T.addr[1],
				raddr(tbuf, 64), key, &wc));
	t_wait_ok(&T, &wc);
	/* The target's completion carries the data and no context. */
	e = t_wait_ok(&T, NULL);
	assert_true(e.flags & FI_REMOTE_WRITE);
	assert_true(e.flags & FI_REMOTE_CQ_DATA);
	assert_int_equal(e.data, 0xabcdef);
	v = 42;
	T_POST(&T, fi_inject_write(T.ep[0], &v, 8, T.addr[1],
				   raddr(tbuf, 128), key));
	/* Ordered behind the inject: the read sees its value. */
	T_POST(&T, fi_read(T.ep[0], &back, 8, NULL, T.addr[1],
			   raddr(tbuf, 128), key, &rc));
	t_wait_ok(&T, &rc);
	assert_int_equal(back, 42);
}

static void t_expect_err(ssize_t post, void *ctx, int err)
{
	struct fi_cq_err_entry e;

	assert_int_equal(post, 0);
	e = t_wait_err(&T, ctx);
	assert_int_equal(e.err, err);
}

static void test_rma_errors(void **state)
{
	static uint8_t big[1 << 20];
	uint64_t v = 1;
	struct fi_context c;

	(void)state;
	/* Wrong key. */
	t_expect_err(fi_write(T.ep[0], &v, 8, NULL, T.addr[1],
			      raddr(tbuf, 0), key + 1000, &c), &c, FI_ENOKEY);
	/* Past the end, inline and CMA-sized. */
	t_expect_err(fi_write(T.ep[0], &v, 8, NULL, T.addr[1],
			      raddr(tbuf, TLEN - 4), key, &c), &c, FI_EINVAL);
	t_expect_err(fi_read(T.ep[0], big, sizeof(big), NULL, T.addr[1],
			     raddr(tbuf, TLEN - 4096), key, &c), &c,
		     FI_EINVAL);
	t_expect_err(fi_write(T.ep[0], big, sizeof(big), NULL, T.addr[1],
			      raddr(tbuf, 0) - 4096, key, &c), &c, FI_EINVAL);
	/* Write into a read-only region. */
	t_expect_err(fi_write(T.ep[0], &v, 8, NULL, T.addr[1],
			      raddr(ro_buf, 0), ro_key, &c), &c, FI_EACCES);
	/* Nothing was written by any of the above. */
	assert_int_equal(ro_buf[0], 0);
	assert_int_equal(tbuf[TLEN - 1], 0);
	/* Reading it is allowed. */
	ro_buf[5] = 5;
	T_POST(&T, fi_read(T.ep[0], &v, 8, NULL, T.addr[1],
			   raddr(ro_buf, 0), ro_key, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(((uint8_t *)&v)[5], 5);
}

static void test_atomic_sum(void **state)
{
	int32_t *t32 = (int32_t *)(tbuf + 4096);
	int64_t *t64 = (int64_t *)(tbuf + 8192);
	int32_t add32[4] = { 1, 2, 3, -4 };
	int64_t add64[2] = { 1ll << 40, -7 }, old64[2];
	struct fi_context c;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		t32[i] = 100 * i;
	t64[0] = 5;
	t64[1] = 10;
	T_POST(&T, fi_atomic(T.ep[0], add32, 4, NULL, T.addr[1],
			     raddr(tbuf, 4096), key, FI_INT32, FI_SUM, &c));
	assert_true(t_wait_ok(&T, &c).flags & FI_ATOMIC);
	for (i = 0; i < 4; i++)
		assert_int_equal(t32[i], 100 * i + add32[i]);
	T_POST(&T, fi_fetch_atomic(T.ep[0], add64, 2, NULL, old64, NULL,
				   T.addr[1], raddr(tbuf, 8192), key,
				   FI_INT64, FI_SUM, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(old64[0], 5);
	assert_int_equal(old64[1], 10);
	assert_int_equal(t64[0], 5 + (1ll << 40));
	assert_int_equal(t64[1], 3);
}

static void test_atomic_write_cswap(void **state)
{
	uint64_t *t = (uint64_t *)(tbuf + 12288);
	uint32_t *t32 = (uint32_t *)(tbuf + 12800);
	uint64_t v = 77, cmp, swap, old = 0;
	uint32_t c32 = 9, s32 = 10, o32 = 0;
	struct fi_context c;

	(void)state;
	*t = 1;
	T_POST(&T, fi_atomic(T.ep[0], &v, 1, NULL, T.addr[1],
			     raddr(tbuf, 12288), key, FI_UINT64,
			     FI_ATOMIC_WRITE, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(*t, 77);
	/* Compare fails: old value back, target unchanged. */
	cmp = 5;
	swap = 6;
	T_POST(&T, fi_compare_atomic(T.ep[0], &swap, 1, NULL, &cmp, NULL,
				     &old, NULL, T.addr[1],
				     raddr(tbuf, 12288), key, FI_UINT64,
				     FI_CSWAP, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(old, 77);
	assert_int_equal(*t, 77);
	cmp = 77;
	T_POST(&T, fi_compare_atomic(T.ep[0], &swap, 1, NULL, &cmp, NULL,
				     &old, NULL, T.addr[1],
				     raddr(tbuf, 12288), key, FI_UINT64,
				     FI_CSWAP, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(old, 77);
	assert_int_equal(*t, 6);
	*t32 = 9;
	T_POST(&T, fi_compare_atomic(T.ep[0], &s32, 1, NULL, &c32, NULL, &o32,
				     NULL, T.addr[1], raddr(tbuf, 12800), key,
				     FI_INT32, FI_CSWAP, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(o32, 9);
	assert_int_equal(*t32, 10);
	/* Atomics are checked like RMA. */
	t_expect_err(fi_atomic(T.ep[0], &v, 1, NULL, T.addr[1],
			       raddr(ro_buf, 0), ro_key, FI_UINT64, FI_SUM,
			       &c), &c, FI_EACCES);
	t_expect_err(fi_atomic(T.ep[0], &v, 1, NULL, T.addr[1],
			       raddr(tbuf, 0), key + 99, FI_UINT64, FI_SUM,
			       &c), &c, FI_ENOKEY);
}

static void test_atomic_valid(void **state)
{
	size_t count = 0;

	(void)state;
	assert_int_equal(fi_atomicvalid(T.ep[0], FI_INT64, FI_SUM, &count), 0);
	assert_true(count >= 1);
	assert_int_equal(fi_compare_atomicvalid(T.ep[0], FI_UINT32, FI_CSWAP,
						&count), 0);
	assert_true(count >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writedata_inject, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rma_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_sum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_write_cswap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_valid, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
