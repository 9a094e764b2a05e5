/* SPDX-License-Identifier: MIT */
/*
 * The in-order answer -> poll mode: each device answer (whole message,
 * 128-byte lines, none, query error) under each FI_SRD_POLL_MODE, the
 * conditions data mode needs (RDMA write, no relaxed ordering), and the
 * per-device cache.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/dev/srd_dev.h"
#include "srd_mock.h"

struct fixture {
	struct srd_dev *dev;
	struct ibv_cq_ex *cqx;
	struct srd_dev_qp *qp;
	struct srd_settings s;
};

static struct fixture fx;

static void open_all(void)
{
	struct srd_dev_qp_attr attr = { .sq_depth = 64, .rq_depth = 64 };

	assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &fx.dev), 0);
	fx.cqx = mock_cq_ex_new(fx.dev->ctx);
	attr.send_cq = attr.recv_cq = ibv_cq_ex_to_cq(fx.cqx);
	srd_settings_default(&fx.s);
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &attr, &fx.qp), 0);
}

static void close_all(void)
{
	srd_dev_qp_destroy(fx.qp);
	mock_cq_ex_free(fx.cqx);
	srd_dev_close(fx.dev);
	assert_int_equal(mock.live, 0);
	memset(&fx, 0, sizeof(fx));
}

static int setup(void **state)
{
	(void)state;
	mock_reset();
	/* RDMA read and write: data mode is possible where order allows. */
	mock.efa.device_caps = EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
			       SRD_EFADV_CAPS_RDMA_WRITE;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (fx.dev)
		close_all();
	return 0;
}

struct expect {
	enum srd_poll_req req;
	enum srd_poll_mode mode;
	enum srd_ring_flavour ring;
};

/* Open with the device answering `answer` (RETURN_CAPS bits, or <0 for a
 * failing query) to both SEND and RDMA_WRITE, and check each request. */
static void check_answer(int answer, bool query_fails, int want_caps,
			 const struct expect *e, size_t n)
{
	const struct srd_dev_inorder *io;
	size_t i;

	mock.in_order_send = answer;
	mock.in_order_write = answer;
	if (query_fails)
		mock_fail(MOCK_QUERY_IN_ORDER, 1, 0, EOPNOTSUPP);
	open_all();
	assert_int_equal(srd_dev_inorder_get(fx.dev, fx.qp, &io), 0);
	assert_int_equal(io->send, want_caps);
	assert_int_equal(io->rdma_write, want_caps);
	/* asked once per op, RETURN_CAPS style, SEND then RDMA_WRITE */
	assert_int_equal(mock.n_in_order, 2);
	assert_int_equal(mock.in_order_op[0], IBV_WR_SEND);
	assert_int_equal(mock.in_order_op[1], IBV_WR_RDMA_WRITE);
	assert_int_equal(mock.in_order_flags[0], SRD_IN_ORDER_RETURN_CAPS);
	assert_int_equal(mock.in_order_flags[1], SRD_IN_ORDER_RETURN_CAPS);

	for (i = 0; i < n; i++) {
		struct srd_dev_poll_choice c;

		srd_dev_poll_choose(e[i].req, io, &fx.dev->caps, false, &c);
		print_message("# answer %d req %d -> %s\n", answer, e[i].req,
			      srd_dev_poll_mode_str(c.mode));
		assert_int_equal(c.mode, e[i].mode);
		assert_int_equal(c.ring, e[i].ring);
		assert_int_equal(c.write_inorder, want_caps);
		assert_int_equal(c.send_inorder, want_caps);
	}
}

static void test_answer_whole_msg(void **state)
{
	static const struct expect e[] = {
		{ SRD_POLL_REQ_AUTO, SRD_POLL_DATA, SRD_RING_SEQ },
		{ SRD_POLL_REQ_DATA, SRD_POLL_DATA, SRD_RING_SEQ },
		{ SRD_POLL_REQ_COMPLETION, SRD_POLL_COMPLETION, SRD_RING_NONE },
	};

	/* whole message implies every 128-byte line */
	check_answer(SRD_IN_ORDER_WHOLE_MSG, false,
		     SRD_INORDER_WHOLE | SRD_INORDER_128, e, 3);
}

static void test_answer_aligned_128(void **state)
{
	static const struct expect e[] = {
		{ SRD_POLL_REQ_AUTO, SRD_POLL_DATA, SRD_RING_LINE128 },
		{ SRD_POLL_REQ_DATA, SRD_POLL_DATA, SRD_RING_LINE128 },
		{ SRD_POLL_REQ_COMPLETION, SRD_POLL_COMPLETION, SRD_RING_NONE },
	};

	check_answer(SRD_IN_ORDER_ALIGNED_128, false, SRD_INORDER_128, e, 3);
}

static void test_answer_none(void **state)
{
	static const struct expect e[] = {
		{ SRD_POLL_REQ_AUTO, SRD_POLL_COMPLETION, SRD_RING_NONE },
		/* forced data mode cannot work: completion, with a warning */
		{ SRD_POLL_REQ_DATA, SRD_POLL_COMPLETION, SRD_RING_NONE },
		{ SRD_POLL_REQ_COMPLETION, SRD_POLL_COMPLETION, SRD_RING_NONE },
	};

	check_answer(0, false, SRD_INORDER_NONE, e, 3);
}

static void test_answer_query_error(void **state)
{
	static const struct expect e[] = {
		{ SRD_POLL_REQ_AUTO, SRD_POLL_COMPLETION, SRD_RING_NONE },
		{ SRD_POLL_REQ_DATA, SRD_POLL_COMPLETION, SRD_RING_NONE },
		{ SRD_POLL_REQ_COMPLETION, SRD_POLL_COMPLETION, SRD_RING_NONE },
	};

	/* the device would say "whole", but the query fails */
	check_answer(SRD_IN_ORDER_WHOLE_MSG, true, SRD_INORDER_NONE, e, 3);
}

static void test_answer_negative_return(void **state)
{
	static const struct expect e[] = {
		{ SRD_POLL_REQ_AUTO, SRD_POLL_COMPLETION, SRD_RING_NONE },
		{ SRD_POLL_REQ_DATA, SRD_POLL_COMPLETION, SRD_RING_NONE },
	};

	check_answer(-EOPNOTSUPP, false, SRD_INORDER_NONE, e, 2);
}

static void test_send_order_differs_from_write(void **state)
{
	const struct srd_dev_inorder *io;
	struct srd_dev_poll_choice c;

	mock.in_order_send = SRD_IN_ORDER_WHOLE_MSG;
	mock.in_order_write = 0;
	open_all();
	assert_int_equal(srd_dev_inorder_get(fx.dev, fx.qp, &io), 0);
	assert_int_equal(io->send, SRD_INORDER_WHOLE | SRD_INORDER_128);
	assert_int_equal(io->rdma_write, SRD_INORDER_NONE);
	/* data mode rides on RDMA writes: sends in order are not enough */
	srd_dev_poll_choose(SRD_POLL_REQ_AUTO, io, &fx.dev->caps, false, &c);
	assert_int_equal(c.mode, SRD_POLL_COMPLETION);
	assert_int_equal(c.send_inorder, SRD_INORDER_WHOLE | SRD_INORDER_128);
}

static void test_no_rdma_write_no_data_mode(void **state)
{
	const struct srd_dev_inorder *io;
	struct srd_dev_poll_choice c;

	mock.efa.device_caps = EFADV_DEVICE_ATTR_CAPS_RDMA_READ;
	mock.in_order_send = SRD_IN_ORDER_WHOLE_MSG;
	mock.in_order_write = SRD_IN_ORDER_WHOLE_MSG;
	open_all();
	assert_int_equal(srd_dev_inorder_get(fx.dev, fx.qp, &io), 0);
	/* RDMA_WRITE is not even asked about */
	assert_int_equal(mock.n_in_order, 1);
	assert_int_equal(io->rdma_write, SRD_INORDER_NONE);
	srd_dev_poll_choose(SRD_POLL_REQ_AUTO, io, &fx.dev->caps, false, &c);
	assert_int_equal(c.mode, SRD_POLL_COMPLETION);
	srd_dev_poll_choose(SRD_POLL_REQ_DATA, io, &fx.dev->caps, false, &c);
	assert_int_equal(c.mode, SRD_POLL_COMPLETION);
}

static void test_relaxed_ordering_never_in_order(void **state)
{
	const struct srd_dev_inorder *io;
	struct srd_dev_poll_choice c;

	mock.in_order_send = SRD_IN_ORDER_WHOLE_MSG;
	mock.in_order_write = SRD_IN_ORDER_WHOLE_MSG;
	open_all();
	assert_int_equal(srd_dev_inorder_get(fx.dev, fx.qp, &io), 0);
	srd_dev_poll_choose(SRD_POLL_REQ_AUTO, io, &fx.dev->caps, true, &c);
	assert_int_equal(c.mode, SRD_POLL_COMPLETION);
	assert_int_equal(c.ring, SRD_RING_NONE);
	assert_int_equal(c.send_inorder, SRD_INORDER_NONE);
	assert_int_equal(c.write_inorder, SRD_INORDER_NONE);
	srd_dev_poll_choose(SRD_POLL_REQ_DATA, io, &fx.dev->caps, true, &c);
	assert_int_equal(c.mode, SRD_POLL_COMPLETION);
}

static void test_answer_cached_per_device(void **state)
{
	const struct srd_dev_inorder *io1, *io2;
	struct srd_dev_qp_attr attr = { .sq_depth = 64, .rq_depth = 64 };
	struct srd_dev_qp *qp2;

	mock.in_order_write = SRD_IN_ORDER_ALIGNED_128;
	open_all();
	assert_int_equal(srd_dev_inorder_get(fx.dev, fx.qp, &io1), 0);
	attr.send_cq = attr.recv_cq = ibv_cq_ex_to_cq(fx.cqx);
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &attr, &qp2), 0);
	/* the device changing its mind later is not asked again */
	mock.in_order_write = 0;
	assert_int_equal(srd_dev_inorder_get(fx.dev, qp2, &io2), 0);
	assert_ptr_equal(io1, io2);
	assert_int_equal(io2->rdma_write, SRD_INORDER_128);
	assert_int_equal(mock.calls[MOCK_QUERY_IN_ORDER], 2);
	srd_dev_qp_destroy(qp2);
}

static void test_poll_mode_setting_parse(void **state)
{
	static const struct {
		const char *str;
		int ret;
		enum srd_poll_req req;
	} cases[] = {
		{ "auto", 0, SRD_POLL_REQ_AUTO },
		{ "DATA", 0, SRD_POLL_REQ_DATA },
		{ "completion", 0, SRD_POLL_REQ_COMPLETION },
		{ "", 0, SRD_POLL_REQ_AUTO },
		{ "fast", -FI_EINVAL, SRD_POLL_REQ_COMPLETION },
	};
	size_t i;

	for (i = 0; i < WEFT_ARRAY_SIZE(cases); i++) {
		enum srd_poll_req req = SRD_POLL_REQ_COMPLETION;

		assert_int_equal(srd_settings_parse_poll_mode(cases[i].str, &req),
				 cases[i].ret);
		assert_int_equal(req, cases[i].req);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_answer_whole_msg),
		T(test_answer_aligned_128),
		T(test_answer_none),
		T(test_answer_query_error),
		T(test_answer_negative_return),
		T(test_send_order_differs_from_write),
		T(test_no_rdma_write_no_data_mode),
		T(test_relaxed_ordering_never_in_order),
		T(test_answer_cached_per_device),
		T(test_poll_mode_setting_parse),
	};

	return cmocka_run_group_tests_name("srd_inorder", tests, NULL, NULL);
}
