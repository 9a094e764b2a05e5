/* SPDX-License-Identifier: MIT */
#include "util_test.h"

/* Three buffers of 3, 0 and 5 bytes: the empty one must be stepped over. */
static uint8_t a[3], b[1], c[5];
static struct iovec iov[3] = {
	{ .iov_base = a, .iov_len = sizeof(a) },
	{ .iov_base = b, .iov_len = 0 },
	{ .iov_base = c, .iov_len = sizeof(c) },
};

static void test_iov_total(void **state)
{
	(void)state;
	assert_int_equal(util_iov_total(iov, 3), 8);
	assert_int_equal(util_iov_total(iov, 1), 3);
	assert_int_equal(util_iov_total(NULL, 0), 0);
}

/* util_iov_check: NULL buffers count only with bytes; sums that do not
 * fit size_t are refused, not wrapped. */
static void test_iov_check(void **state)
{
	struct iovec bad[2] = { { .iov_base = a, .iov_len = 1 },
				{ .iov_base = NULL, .iov_len = 1 } };
	struct iovec empty[1] = { { .iov_base = NULL, .iov_len = 0 } };
	struct iovec big[2] = { { .iov_base = a, .iov_len = SIZE_MAX },
				{ .iov_base = c, .iov_len = 2 } };
	size_t total = 99;

	(void)state;
	assert_int_equal(util_iov_check(NULL, "t", iov, 3, &total), 0);
	assert_int_equal(total, 8);
	assert_int_equal(util_iov_check(NULL, "t", empty, 1, &total), 0);
	assert_int_equal(total, 0);
	assert_int_equal(util_iov_check(NULL, "t", NULL, 0, &total), 0);
	assert_int_equal(total, 0);
	total = 99;
	assert_int_equal(util_iov_check(NULL, "t", bad, 2, &total),
			 -FI_EINVAL);
	assert_int_equal(util_iov_check(NULL, "t", big, 2, &total),
			 -FI_EINVAL);
	assert_int_equal(total, 99);
	big[1].iov_len = 0;
	assert_int_equal(util_iov_check(NULL, "t", big, 2, &total), 0);
	assert_int_equal(total, SIZE_MAX);
}

static void test_iov_copy(void **state)
{
	const uint8_t src[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t out[8];

	(void)state;
	memset(a, 0, sizeof(a));
	memset(c, 0, sizeof(c));
	/* from byte 2 on: the last of a, then c */
	assert_int_equal(util_iov_copy_to(iov, 3, 2, src, 4), 4);
	assert_int_equal(a[2], 1);
	assert_int_equal(c[0], 2);
	assert_int_equal(c[2], 4);
	assert_int_equal(c[3], 0);
	/* past the end: only what fits */
	assert_int_equal(util_iov_copy_to(iov, 3, 0, src, 8), 8);
	assert_int_equal(util_iov_copy_to(iov, 3, 6, src, 8), 2);
	assert_int_equal(c[3], 1);
	assert_int_equal(c[4], 2);
	memset(out, 0, sizeof(out));
	assert_int_equal(util_iov_copy_from(iov, 3, 1, out, 8), 7);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 3);
	assert_int_equal(out[2], 4);
	assert_int_equal(out[6], 2);
	assert_int_equal(util_iov_copy_from(iov, 3, 8, out, 1), 0);
}

static void test_iov_slice_seek(void **state)
{
	struct iovec out[3];
	uint64_t in;

	(void)state;
	/* bytes [2, 6): one of a, three of c */
	assert_int_equal(util_iov_slice(iov, 3, 2, 4, out), 2);
	assert_ptr_equal(out[0].iov_base, a + 2);
	assert_int_equal(out[0].iov_len, 1);
	assert_ptr_equal(out[1].iov_base, c);
	assert_int_equal(out[1].iov_len, 3);
	assert_int_equal(util_iov_slice(iov, 3, 8, 4, out), 0);
	assert_int_equal(util_iov_seek(iov, 3, 4, &in), 2);
	assert_int_equal(in, 1);
	assert_int_equal(util_iov_seek(iov, 3, 3, &in), 2);
	assert_int_equal(in, 0);
	assert_int_equal(util_iov_seek(iov, 3, 9, &in), 3);
}

static void test_time(void **state)
{
	uint64_t t0 = util_time_ns(), t1 = util_time_ns();

	(void)state;
	assert_true(t0 > 0);
	assert_true(t1 >= t0);
	/* the coarse clock is the same clock, at most a tick behind */
	assert_true(util_time_coarse_ns() <= util_time_ns());
	assert_true(util_time_ns() - util_time_coarse_ns() < 100000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iov_total),
		cmocka_unit_test(test_iov_check),
		cmocka_unit_test(test_iov_copy),
		cmocka_unit_test(test_iov_slice_seek),
		cmocka_unit_test(test_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
