/* SPDX-License-Identifier: MIT */
/*
 * The CQ poller against the mock CQ: one start/end per batch, never more
 * than the batch, leftovers on the next call, dispatch by opcode, errors,
 * the ibv_poll_cq path, CQ sizing and creation fallbacks, and an RNR error
 * completion driving a peer's backoff until a send gets through.
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

#define REC_MAX 512

struct recorder {
	struct srd_dev_wc wc[REC_MAX];
	int n;
	int per_opcode[SRD_WC_OPCODE_SLOTS];
	int unknown;
	int errors;
	int batches;
	int batch_n[64];
	bool in_poll_at_batch_end;
};

static struct recorder rec;
static struct ibv_context *ctx;
static struct ibv_cq_ex *cqx;
static struct srd_dev_cq cq;

static void rec_wc(struct srd_dev_cq *c, const struct srd_dev_wc *wc, void *arg)
{
	assert_ptr_equal(arg, &rec);
	assert_true(rec.n < REC_MAX);
	rec.wc[rec.n++] = *wc;
	rec.per_opcode[wc->opcode]++;
}

static void rec_unknown(struct srd_dev_cq *c, const struct srd_dev_wc *wc,
			void *arg)
{
	rec.unknown++;
	rec.wc[rec.n++] = *wc;
}

static void rec_error(struct srd_dev_cq *c, const struct srd_dev_wc *wc,
		      void *arg)
{
	rec.errors++;
	rec.wc[rec.n++] = *wc;
}

static void rec_batch(struct srd_dev_cq *c, int n, void *arg)
{
	if (rec.batches < 64)
		rec.batch_n[rec.batches] = n;
	rec.batches++;
	/* re-posting receives here must happen outside the poll session */
	rec.in_poll_at_batch_end |= mock.in_poll;
}

static struct srd_dev_cq_ops rec_ops = {
	.on_wc = {
		[IBV_WC_SEND] = rec_wc,
		[IBV_WC_RDMA_READ] = rec_wc,
		[IBV_WC_RDMA_WRITE] = rec_wc,
		[IBV_WC_RECV] = rec_wc,
		[IBV_WC_RECV_RDMA_WITH_IMM] = rec_wc,
	},
	.on_unknown = rec_unknown,
	.on_error = rec_error,
	.on_batch_end = rec_batch,
};

static int setup(void **state)
{
	(void)state;
	mock_reset();
	memset(&rec, 0, sizeof(rec));
	ctx = mock_context();
	cqx = mock_cq_ex_new(ctx);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	srd_dev_cq_fini(&cq);
	memset(&cq, 0, sizeof(cq));
	mock_cq_ex_free(cqx);
	mock_verbs_ops.close_device(ctx);
	assert_int_equal(mock.live, 0);
	assert_false(mock.poll_protocol_error);
	return 0;
}

static void init_cq(unsigned int batch, bool legacy)
{
	struct srd_dev_cq_attr attr = {
		.depth = 1024, .batch = batch, .force_legacy = legacy, .arg = &rec,
	};

	assert_int_equal(srd_dev_cq_init(&cq, cqx, NULL, &attr, &rec_ops), 0);
}

static void push_sends(unsigned int n, uint64_t first)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct mock_wc wc = {
			.wr_id = first + i, .status = IBV_WC_SUCCESS,
			.opcode = IBV_WC_SEND, .qp_num = 0x100,
		};

		mock_push_wc(&wc);
	}
}

static void test_batch_one_start_end(void **state)
{
	int i;

	init_cq(4, false);
	push_sends(10, 1000);

	assert_int_equal(srd_dev_cq_poll(&cq), 4);
	assert_int_equal(mock.calls[MOCK_START_POLL], 1);
	assert_int_equal(mock.calls[MOCK_NEXT_POLL], 3);
	assert_int_equal(mock.calls[MOCK_END_POLL], 1);
	assert_int_equal(mock_wc_pending(), 6);

	assert_int_equal(srd_dev_cq_poll(&cq), 4);
	/* leftovers: the last two come on the third call */
	assert_int_equal(srd_dev_cq_poll(&cq), 2);
	assert_int_equal(mock.calls[MOCK_START_POLL], 3);
	assert_int_equal(mock.calls[MOCK_END_POLL], 3);
	/* 3 + 3 + (1 success + 1 ENOENT) */
	assert_int_equal(mock.calls[MOCK_NEXT_POLL], 8);

	/* empty: start_poll says ENOENT and end_poll must not follow */
	assert_int_equal(srd_dev_cq_poll(&cq), 0);
	assert_int_equal(mock.calls[MOCK_START_POLL], 4);
	assert_int_equal(mock.calls[MOCK_END_POLL], 3);

	/* in order, each exactly once */
	assert_int_equal(rec.n, 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(rec.wc[i].wr_id, 1000 + i);
	/* the batch hook ran once per call, outside the poll session, and
	 * also for the empty call (timers and queued sends still progress) */
	assert_int_equal(rec.batches, 4);
	assert_int_equal(rec.batch_n[0], 4);
	assert_int_equal(rec.batch_n[1], 4);
	assert_int_equal(rec.batch_n[2], 2);
	assert_int_equal(rec.batch_n[3], 0);
	assert_false(rec.in_poll_at_batch_end);
}

static void test_batch_never_exceeded(void **state)
{
	static const unsigned int batches[] = { 1, 3, 32, 256 };
	size_t b;

	for (b = 0; b < WEFT_ARRAY_SIZE(batches); b++) {
		unsigned int total = 0, calls = 0;
		int n;

		memset(mock.calls, 0, sizeof(mock.calls));
		memset(&rec, 0, sizeof(rec));
		srd_dev_cq_fini(&cq);
		init_cq(batches[b], false);
		push_sends(300, 0);
		while ((n = srd_dev_cq_poll(&cq)) > 0) {
			assert_true((unsigned int)n <= batches[b]);
			total += (unsigned int)n;
			calls++;
			assert_int_equal(mock.calls[MOCK_START_POLL], calls);
			assert_int_equal(mock.calls[MOCK_END_POLL], calls);
		}
		assert_int_equal(n, 0);
		assert_int_equal(total, 300);
		assert_int_equal(calls, (300 + batches[b] - 1) / batches[b]);
		assert_int_equal(rec.n, 300);
	}
}

static void test_dispatch_by_opcode(void **state)
{
	const struct mock_wc wcs[] = {
		{ .wr_id = 1, .opcode = IBV_WC_SEND, .qp_num = 5 },
		{ .wr_id = 2, .opcode = IBV_WC_RECV, .byte_len = 777, .qp_num = 5,
		  .src_qp = 0x222, .imm_host = 0xdeadbeef,
		  .wc_flags = IBV_WC_WITH_IMM },
		{ .wr_id = 3, .opcode = IBV_WC_RDMA_READ, .byte_len = 4096 },
		{ .wr_id = 4, .opcode = IBV_WC_RECV_RDMA_WITH_IMM, .src_qp = 9,
		  .imm_host = 42, .wc_flags = IBV_WC_WITH_IMM },
		{ .wr_id = 5, .opcode = IBV_WC_BIND_MW },
		{ .wr_id = 6, .opcode = IBV_WC_RECV, .byte_len = 8, .src_qp = 3 },
	};
	size_t i;

	init_cq(16, false);
	for (i = 0; i < WEFT_ARRAY_SIZE(wcs); i++)
		mock_push_wc(&wcs[i]);
	assert_int_equal(srd_dev_cq_poll(&cq), 6);
	assert_int_equal(rec.per_opcode[IBV_WC_SEND], 1);
	assert_int_equal(rec.per_opcode[IBV_WC_RECV], 2);
	assert_int_equal(rec.per_opcode[IBV_WC_RDMA_READ], 1);
	assert_int_equal(rec.per_opcode[IBV_WC_RECV_RDMA_WITH_IMM], 1);
	assert_int_equal(rec.unknown, 1);
	assert_int_equal(rec.errors, 0);

	assert_int_equal(rec.wc[1].byte_len, 777);
	assert_int_equal(rec.wc[1].src_qp, 0x222);
	assert_int_equal(rec.wc[1].imm_data, 0xdeadbeef);	/* host order */
	assert_int_equal(rec.wc[3].imm_data, 42);
	assert_int_equal(rec.wc[3].src_qp, 9);
	assert_int_equal(rec.wc[4].wr_id, 5);
	/* no immediate flag: no immediate value */
	assert_int_equal(rec.wc[5].imm_data, 0);
	/* src_qp is not read for send-side completions */
	assert_int_equal(rec.wc[0].src_qp, 0);
}

static void test_error_completion(void **state)
{
	const struct mock_wc bad = {
		.wr_id = 77, .status = IBV_WC_RNR_RETRY_EXC_ERR,
		.vendor_err = SRD_EFA_IO_REMOTE_RNR, .qp_num = 0x123,
		.opcode = IBV_WC_SEND,
	};

	init_cq(8, false);
	push_sends(1, 1);
	mock_push_wc(&bad);
	push_sends(1, 2);
	assert_int_equal(srd_dev_cq_poll(&cq), 3);
	assert_int_equal(rec.errors, 1);
	assert_int_equal(rec.wc[1].wr_id, 77);
	assert_int_equal(rec.wc[1].status, IBV_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(rec.wc[1].vendor_err, SRD_EFA_IO_REMOTE_RNR);
	assert_int_equal(rec.wc[1].qp_num, 0x123);
	/* the completions around it are intact */
	assert_int_equal(rec.wc[0].wr_id, 1);
	assert_int_equal(rec.wc[2].wr_id, 2);
}

static void test_poll_cq_path(void **state)
{
	int i;

	init_cq(4, true);
	push_sends(6, 50);
	assert_int_equal(srd_dev_cq_poll(&cq), 4);
	assert_int_equal(mock.poll_cq_n, 4);
	assert_int_equal(srd_dev_cq_poll(&cq), 2);
	assert_int_equal(srd_dev_cq_poll(&cq), 0);
	assert_int_equal(mock.calls[MOCK_POLL_CQ], 3);
	assert_int_equal(mock.calls[MOCK_START_POLL], 0);
	assert_int_equal(rec.batches, 3);
	for (i = 0; i < 6; i++)
		assert_int_equal(rec.wc[i].wr_id, 50 + i);
}

static void test_poll_cq_path_data(void **state)
{
	const struct mock_wc wcs[] = {
		{ .wr_id = 9, .opcode = IBV_WC_RECV, .byte_len = 64, .src_qp = 7,
		  .imm_host = 0x01020304, .wc_flags = IBV_WC_WITH_IMM },
		{ .wr_id = 10, .status = IBV_WC_REM_ACCESS_ERR, .vendor_err = 7,
		  .qp_num = 4 },
	};

	init_cq(4, true);
	mock_push_wc(&wcs[0]);
	mock_push_wc(&wcs[1]);
	assert_int_equal(srd_dev_cq_poll(&cq), 2);
	assert_int_equal(rec.wc[0].imm_data, 0x01020304);
	assert_int_equal(rec.wc[0].byte_len, 64);
	assert_int_equal(rec.wc[0].src_qp, 7);
	assert_int_equal(rec.errors, 1);
	assert_int_equal(rec.wc[1].vendor_err, 7);

	mock_fail(MOCK_POLL_CQ, mock.calls[MOCK_POLL_CQ] + 1, 1, EIO);
	assert_int_equal(srd_dev_cq_poll(&cq), -FI_EIO);
}

static void test_cq_without_start_poll_uses_poll_cq(void **state)
{
	mock_cq_ex_free(cqx);
	mock.cq_ex_no_start_poll = true;
	cqx = mock_cq_ex_new(ctx);
	init_cq(8, false);
	push_sends(3, 0);
	assert_int_equal(srd_dev_cq_poll(&cq), 3);
	assert_int_equal(mock.calls[MOCK_POLL_CQ], 1);
}

static void test_start_poll_error(void **state)
{
	init_cq(8, false);
	push_sends(3, 0);
	mock_fail(MOCK_START_POLL, 1, 1, EIO);
	assert_int_equal(srd_dev_cq_poll(&cq), -EIO);
	assert_int_equal(mock.calls[MOCK_END_POLL], 0);
	assert_int_equal(rec.batches, 1);
	assert_int_equal(srd_dev_cq_poll(&cq), 3);
}

static void test_next_poll_error_ends_batch(void **state)
{
	init_cq(8, false);
	push_sends(5, 0);
	mock_fail(MOCK_NEXT_POLL, 2, 1, EIO);
	assert_int_equal(srd_dev_cq_poll(&cq), 2);
	assert_int_equal(mock.calls[MOCK_END_POLL], 1);
	assert_int_equal(srd_dev_cq_poll(&cq), 3);
}

static void test_init_rejects_bad_setup(void **state)
{
	struct srd_dev_cq_attr attr = { .depth = 64, .batch = 0 };
	struct srd_dev_cq_ops no_error = rec_ops;
	struct srd_dev_cq tmp;

	assert_int_equal(srd_dev_cq_init(&tmp, cqx, NULL, &attr, &rec_ops),
			 -FI_EINVAL);
	attr.batch = SRD_CQ_BATCH_MAX + 1;
	assert_int_equal(srd_dev_cq_init(&tmp, cqx, NULL, &attr, &rec_ops),
			 -FI_EINVAL);
	attr.batch = 4;
	no_error.on_error = NULL;
	assert_int_equal(srd_dev_cq_init(&tmp, cqx, NULL, &attr, &no_error),
			 -FI_EINVAL);
	assert_int_equal(srd_dev_cq_init(&tmp, NULL, NULL, &attr, &rec_ops),
			 -FI_EINVAL);
	init_cq(4, false);
}

static void test_cq_depth(void **state)
{
	/* every send and receive WR of every QP, plus unsolicited writes */
	assert_int_equal(srd_dev_cq_depth(256, 1024, 2, 64, 0), 2624);
	assert_int_equal(srd_dev_cq_depth(256, 1024, 0, 0, 0), 1280);
	/* more than the device allows: clamped, with a warning */
	assert_int_equal(srd_dev_cq_depth(4096, 32768, 4, 0, 32768), 32768);
	assert_int_equal(srd_dev_cq_depth(UINT32_MAX, UINT32_MAX, 8, 0, 0),
			 UINT32_MAX);
}

static void test_cq_open_close(void **state)
{
	struct srd_dev *dev;
	struct srd_dev_cq *dcq;
	struct srd_dev_cq_attr attr = { .depth = 4096, .batch = 16,
					.arg = &rec };

	assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &dev), 0);
	/* the host refuses the full size twice: halved each time */
	mock_fail(MOCK_CREATE_CQ_EX, 1, 2, ENOMEM);
	assert_int_equal(srd_dev_cq_open(dev, &attr, &rec_ops, &dcq), 0);
	assert_int_equal(mock.calls[MOCK_CREATE_CQ_EX], 3);
	assert_int_equal(mock.cq_attr.cqe, 1024);
	assert_int_equal(dcq->depth, 1024);
	assert_true(mock.cq_attr.wc_flags & IBV_WC_EX_WITH_QP_NUM);
	assert_true(mock.cq_attr.wc_flags & IBV_WC_EX_WITH_SRC_QP);
	assert_true(mock.cq_attr.wc_flags & IBV_WC_EX_WITH_IMM);
	assert_true(mock.cq_attr.wc_flags & IBV_WC_EX_WITH_BYTE_LEN);
	push_sends(2, 0);
	assert_int_equal(srd_dev_cq_poll(dcq), 2);
	srd_dev_cq_close(dcq);

	/* a refusal that is not ENOMEM is final */
	mock_fail(MOCK_CREATE_CQ_EX, 4, 1, EINVAL);
	assert_int_equal(srd_dev_cq_open(dev, &attr, &rec_ops, &dcq),
			 -FI_EINVAL);
	/* and bad callbacks unwind the created CQ */
	attr.batch = 0;
	assert_int_equal(srd_dev_cq_open(dev, &attr, &rec_ops, &dcq),
			 -FI_EINVAL);
	srd_dev_close(dev);
}

/* ---- RNR: error completion -> per-peer backoff -> success ---------------- */

struct peer {
	uint32_t qpn;
	struct srd_dev_rnr rnr;
};

static struct peer peers[2] = { { .qpn = 0x10 }, { .qpn = 0x20 } };
static uint64_t now_ns;
static uint64_t rng = 12345;

/* wr_id carries the peer index, as the RDM layer's tx entries would. */
static void rnr_on_error(struct srd_dev_cq *c, const struct srd_dev_wc *wc,
			 void *arg)
{
	struct peer *p = &peers[wc->wr_id];

	assert_true(srd_dev_wc_err_is_rnr(wc->status, wc->vendor_err));
	srd_dev_rnr_on_rnr(&p->rnr, now_ns, &rng);
}

static void rnr_on_send(struct srd_dev_cq *c, const struct srd_dev_wc *wc,
			void *arg)
{
	srd_dev_rnr_on_success(&peers[wc->wr_id].rnr);
}

static int try_send(struct peer *p)
{
	return srd_dev_rnr_check(&p->rnr, now_ns);
}

static void test_rnr_backoff_then_success(void **state)
{
	static struct srd_dev_cq_ops ops = {
		.on_wc = { [IBV_WC_SEND] = rnr_on_send },
		.on_error = rnr_on_error,
	};
	struct srd_dev_cq_attr attr = { .depth = 64, .batch = 8 };
	struct mock_wc rnr = {
		.wr_id = 0, .status = IBV_WC_RNR_RETRY_EXC_ERR,
		.vendor_err = SRD_EFA_IO_REMOTE_RNR, .qp_num = 1,
	};
	struct mock_wc ok = { .wr_id = 0, .opcode = IBV_WC_SEND };
	uint32_t first;

	ops.on_unknown = srd_dev_cq_wc_ignore;
	ops.on_batch_end = srd_dev_cq_batch_ignore;
	assert_int_equal(srd_dev_cq_init(&cq, cqx, NULL, &attr, &ops), 0);
	now_ns = 1000000;

	assert_int_equal(try_send(&peers[0]), 0);
	mock_push_wc(&rnr);
	assert_int_equal(srd_dev_cq_poll(&cq), 1);
	first = peers[0].rnr.wait_us;
	assert_true(first >= SRD_RNR_START_MIN_US && first <= SRD_RNR_START_MAX_US);
	/* backed off: -FI_EAGAIN to that peer only */
	assert_int_equal(try_send(&peers[0]), -FI_EAGAIN);
	assert_int_equal(try_send(&peers[1]), 0);
	now_ns += (uint64_t)first * 1000 - 1;
	assert_int_equal(try_send(&peers[0]), -FI_EAGAIN);
	now_ns += 1;
	assert_int_equal(try_send(&peers[0]), 0);

	/* a second RNR doubles the wait */
	mock_push_wc(&rnr);
	assert_int_equal(srd_dev_cq_poll(&cq), 1);
	assert_int_equal(peers[0].rnr.wait_us, first * 2);
	assert_int_equal(try_send(&peers[0]), -FI_EAGAIN);
	now_ns += (uint64_t)first * 2000;

	/* the retry gets through: back to a small first wait next time */
	assert_int_equal(try_send(&peers[0]), 0);
	mock_push_wc(&ok);
	assert_int_equal(srd_dev_cq_poll(&cq), 1);
	assert_int_equal(peers[0].rnr.wait_us, 0);
	assert_int_equal(try_send(&peers[0]), 0);
	mock_push_wc(&rnr);
	assert_int_equal(srd_dev_cq_poll(&cq), 1);
	assert_true(peers[0].rnr.wait_us <= SRD_RNR_START_MAX_US);
	assert_int_equal(peers[0].rnr.events, 3);
}

static void test_rnr_doubles_to_one_second(void **state)
{
	struct srd_dev_rnr r = { 0 };
	uint64_t seed = 99, t = 0;
	uint32_t prev = 0;
	int i;

	for (i = 0; i < 40; i++) {
		srd_dev_rnr_on_rnr(&r, t, &seed);
		if (i == 0)
			assert_true(r.wait_us >= 40 && r.wait_us <= 120);
		else if (prev * 2 <= SRD_RNR_MAX_US)
			assert_int_equal(r.wait_us, prev * 2);
		else
			assert_int_equal(r.wait_us, SRD_RNR_MAX_US);
		assert_true(r.wait_us <= SRD_RNR_MAX_US);
		assert_true(r.until_ns == t + (uint64_t)r.wait_us * 1000);
		prev = r.wait_us;
		t += 5;
	}
	assert_int_equal(r.wait_us, SRD_RNR_MAX_US);
}

static void test_rnr_first_wait_is_random(void **state)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	uint64_t seed = 1;
	int i;

	for (i = 0; i < 2000; i++) {
		struct srd_dev_rnr r = { 0 };

		srd_dev_rnr_on_rnr(&r, 0, &seed);
		assert_true(r.wait_us >= SRD_RNR_START_MIN_US &&
			    r.wait_us <= SRD_RNR_START_MAX_US);
		lo = r.wait_us < lo ? r.wait_us : lo;
		hi = r.wait_us > hi ? r.wait_us : hi;
	}
	/* spread over the range, so colliding senders do not retry together */
	assert_true(lo < 50 && hi > 110);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_batch_one_start_end),
		T(test_batch_never_exceeded),
		T(test_dispatch_by_opcode),
		T(test_error_completion),
		T(test_poll_cq_path),
		T(test_poll_cq_path_data),
		T(test_cq_without_start_poll_uses_poll_cq),
		T(test_start_poll_error),
		T(test_next_poll_error_ends_batch),
		T(test_init_rejects_bad_setup),
		T(test_cq_depth),
		T(test_cq_open_close),
		T(test_rnr_backoff_then_success),
		T(test_rnr_doubles_to_one_second),
		T(test_rnr_first_wait_is_random),
	};

	return cmocka_run_group_tests_name("srd_cq", tests, NULL, NULL);
}
