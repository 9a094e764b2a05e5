/* SPDX-License-Identifier: MIT */
#include "util_test.h"

/* Provider-style objects embedding the util entries. */
struct rx {
	int id;
	struct util_rx_entry util;
};

struct ux {
	int id;
	struct util_unexp_entry util;
};

#define RX(e) container_of(e, struct rx, util)
#define UX(e) container_of(e, struct ux, util)

static void post(struct util_match_queue *q, struct rx *r, int id,
		 fi_addr_t src, uint64_t tag, uint64_t ignore, uint64_t flags)
{
	r->id = id;
	util_rx_entry_init(&r->util, src, tag, ignore, (void *)(uintptr_t)id,
			   flags, NULL, 0);
	util_match_post(q, &r->util);
}

static void arrive(struct util_match_queue *q, struct ux *u, int id,
		   fi_addr_t src, uint64_t tag)
{
	u->id = id;
	u->util.src = src;
	u->util.tag = tag;
	util_match_add_unexp(q, &u->util);
}

static void test_match_posting_order(void **state)
{
	struct util_match_queue q;
	struct rx r[4];
	struct util_rx_entry *m;

	util_match_queue_init(&q, false);
	/* three receives that all match tag 0x15; posted order wins */
	post(&q, &r[0], 0, FI_ADDR_UNSPEC, 0x10, 0x0f, 0);
	post(&q, &r[1], 1, FI_ADDR_UNSPEC, 0x15, 0, 0);
	post(&q, &r[2], 2, FI_ADDR_UNSPEC, 0x00, ~0ull, 0);
	post(&q, &r[3], 3, FI_ADDR_UNSPEC, 0x99, 0, 0);
	assert_int_equal(q.posted_count, 4);
	/* 0x25 fits only r[2] (ignores every bit); it leaves the queue */
	m = util_match_rx(&q, 5, 0x25);
	assert_int_equal(RX(m)->id, 2);
	post(&q, &r[2], 2, FI_ADDR_UNSPEC, 0x00, ~0ull, 0);
	m = util_match_rx(&q, 5, 0x15);
	assert_int_equal(RX(m)->id, 0);
	m = util_match_rx(&q, 5, 0x15);
	assert_int_equal(RX(m)->id, 1);
	m = util_match_rx(&q, 5, 0x15);
	assert_int_equal(RX(m)->id, 2);
	assert_null(util_match_rx(&q, 5, 0x15));
	m = util_match_rx(&q, 5, 0x99);
	assert_int_equal(RX(m)->id, 3);
	assert_int_equal(q.posted_count, 0);
	assert_null(q.posted);
}

static void test_match_ignore_bits(void **state)
{
	struct util_match_queue q;
	struct rx r;

	util_match_queue_init(&q, false);
	post(&q, &r, 0, FI_ADDR_UNSPEC, 0xab00, 0x00ff, 0);
	assert_null(util_match_rx(&q, 0, 0xac00));	/* unmasked bit differs */
	assert_null(util_match_rx(&q, 0, 0x1ab00));
	assert_ptr_equal(util_match_rx(&q, 0, 0xab7f), &r.util);
}

static void test_match_directed(void **state)
{
	struct util_match_queue q;
	struct rx r[3];
	struct util_rx_entry *m;

	/* directed queue: the source filters, FI_ADDR_UNSPEC is any */
	util_match_queue_init(&q, true);
	post(&q, &r[0], 0, 7, 1, 0, 0);
	post(&q, &r[1], 1, FI_ADDR_UNSPEC, 1, 0, 0);
	post(&q, &r[2], 2, 7, 1, 0, 0);
	m = util_match_rx(&q, 8, 1);
	assert_int_equal(RX(m)->id, 1);
	assert_null(util_match_rx(&q, 8, 1));
	assert_null(util_match_rx(&q, FI_ADDR_NOTAVAIL, 1));
	m = util_match_rx(&q, 7, 1);
	assert_int_equal(RX(m)->id, 0);
	m = util_match_rx(&q, 7, 1);
	assert_int_equal(RX(m)->id, 2);

	/* not directed: the source is ignored */
	util_match_queue_init(&q, false);
	post(&q, &r[0], 0, 7, 1, 0, 0);
	m = util_match_rx(&q, 8, 1);
	assert_int_equal(RX(m)->id, 0);
}

static void test_match_unexpected(void **state)
{
	struct util_match_queue q;
	struct ux u[4];
	struct util_unexp_entry *m;

	util_match_queue_init(&q, true);
	arrive(&q, &u[0], 0, 3, 0x10);
	arrive(&q, &u[1], 1, 4, 0x10);
	arrive(&q, &u[2], 2, 3, 0x20);
	arrive(&q, &u[3], 3, 3, 0x10);
	assert_int_equal(q.unexp_count, 4);
	/* arrival order among matches; source and tag respected */
	m = util_match_take_unexp(&q, 4, 0x10, 0);
	assert_int_equal(UX(m)->id, 1);
	m = util_match_take_unexp(&q, FI_ADDR_UNSPEC, 0x00, 0xff);
	assert_int_equal(UX(m)->id, 0);
	assert_null(util_match_take_unexp(&q, 4, 0x10, 0));
	m = util_match_take_unexp(&q, 3, 0x10, 0);
	assert_int_equal(UX(m)->id, 3);
	m = util_match_take_unexp(&q, FI_ADDR_UNSPEC, 0x20, 0);
	assert_int_equal(UX(m)->id, 2);
	assert_int_equal(q.unexp_count, 0);
}

static void test_match_peek_claim_discard(void **state)
{
	struct util_match_queue q, other;
	struct ux u[3];
	struct util_unexp_entry *m;
	struct fi_context ctx, ctx2, forged;

	util_match_queue_init(&q, false);
	util_match_queue_init(&other, false);
	arrive(&q, &u[0], 0, 1, 5);
	arrive(&q, &u[1], 1, 1, 5);
	arrive(&q, &u[2], 2, 1, 6);

	/* FI_PEEK: found, still queued */
	m = util_match_peek(&q, FI_ADDR_UNSPEC, 5, 0);
	assert_int_equal(UX(m)->id, 0);
	assert_int_equal(q.unexp_count, 3);
	assert_null(util_match_peek(&q, FI_ADDR_UNSPEC, 7, 0));

	/* FI_PEEK|FI_CLAIM: hidden from other receives and peeks */
	util_match_claim(&q, m, &ctx);
	m = util_match_peek(&q, FI_ADDR_UNSPEC, 5, 0);
	assert_int_equal(UX(m)->id, 1);
	m = util_match_take_unexp(&q, FI_ADDR_UNSPEC, 5, 0);
	assert_int_equal(UX(m)->id, 1);
	assert_null(util_match_take_unexp(&q, FI_ADDR_UNSPEC, 5, 0));

	/* FI_CLAIM with a context that holds no claim, or another queue's */
	memset(&forged, 0, sizeof(forged));
	assert_null(util_match_take_claimed(&q, &forged));
	forged.internal[0] = &u[2].util;
	forged.internal[1] = &q;
	assert_null(util_match_take_claimed(&q, &forged));
	assert_null(util_match_take_claimed(&other, &ctx));
	assert_null(util_match_take_claimed(&q, NULL));

	/* FI_CLAIM: the claimed message, once */
	m = util_match_take_claimed(&q, &ctx);
	assert_non_null(m);
	assert_int_equal(UX(m)->id, 0);
	assert_null(util_match_take_claimed(&q, &ctx));
	assert_int_equal(q.unexp_count, 1);

	/* claim then discard (FI_CLAIM|FI_DISCARD takes it the same way) */
	m = util_match_peek(&q, FI_ADDR_UNSPEC, 6, 0);
	util_match_claim(&q, m, &ctx2);
	m = util_match_take_claimed(&q, &ctx2);
	assert_int_equal(UX(m)->id, 2);
	assert_int_equal(q.unexp_count, 0);
	assert_null(q.unexp);
}

static void test_match_cancel(void **state)
{
	struct util_match_queue q;
	struct rx r[3];
	struct util_rx_entry *m;

	util_match_queue_init(&q, false);
	post(&q, &r[0], 10, FI_ADDR_UNSPEC, 1, 0, 0);
	post(&q, &r[1], 11, FI_ADDR_UNSPEC, 1, 0, 0);
	post(&q, &r[2], 12, FI_ADDR_UNSPEC, 1, 0, FI_MULTI_RECV);
	m = util_match_cancel(&q, (void *)11);
	assert_int_equal(RX(m)->id, 11);
	assert_null(util_match_cancel(&q, (void *)11));
	assert_null(util_match_cancel(&q, (void *)99));
	m = util_match_cancel(&q, (void *)12);	/* multi-recv too */
	assert_int_equal(RX(m)->id, 12);
	m = util_match_rx(&q, 0, 1);
	assert_int_equal(RX(m)->id, 10);
	assert_null(util_match_rx(&q, 0, 1));
}

static void test_match_multi_recv(void **state)
{
	struct util_match_queue q;
	struct rx mr, after;
	static uint8_t buf[100];
	struct util_rx_entry *m;
	size_t avail;
	bool released;
	uint8_t *p;

	util_match_queue_init(&q, false);
	mr.id = 1;
	util_rx_entry_init(&mr.util, FI_ADDR_UNSPEC, 0, 0, (void *)1,
			   FI_MULTI_RECV, buf, sizeof(buf));
	util_match_post(&q, &mr.util);
	post(&q, &after, 2, FI_ADDR_UNSPEC, 0, 0, 0);

	/* messages are packed one after the other, the entry stays */
	m = util_match_rx(&q, 0, 0);
	assert_ptr_equal(m, &mr.util);
	p = util_match_mrecv_take(&q, m, 30, 16, &avail, &released);
	assert_ptr_equal(p, buf);
	assert_int_equal(avail, 30);
	assert_false(released);
	m = util_match_rx(&q, 0, 0);
	assert_ptr_equal(m, &mr.util);
	p = util_match_mrecv_take(&q, m, 40, 16, &avail, &released);
	assert_ptr_equal(p, buf + 30);
	assert_int_equal(avail, 40);
	assert_false(released);	/* 30 left >= 16 */
	/* 20 more leave 10 < min: released with this message */
	m = util_match_rx(&q, 0, 0);
	p = util_match_mrecv_take(&q, m, 20, 16, &avail, &released);
	assert_ptr_equal(p, buf + 70);
	assert_true(released);
	/* next message goes to the receive posted after it */
	m = util_match_rx(&q, 0, 0);
	assert_int_equal(RX(m)->id, 2);

	/* truncation: a message larger than the space left */
	util_rx_entry_init(&mr.util, FI_ADDR_UNSPEC, 0, 0, (void *)1,
			   FI_MULTI_RECV, buf, sizeof(buf));
	util_match_post(&q, &mr.util);
	m = util_match_rx(&q, 0, 0);
	p = util_match_mrecv_take(&q, m, 90, 0, &avail, &released);
	assert_int_equal(avail, 90);
	assert_false(released);
	p = util_match_mrecv_take(&q, m, 50, 0, &avail, &released);
	assert_ptr_equal(p, buf + 90);
	assert_int_equal(avail, 10);	/* truncated */
	assert_true(released);		/* full buffer always released */
	assert_null(util_match_rx(&q, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_posting_order),
		cmocka_unit_test(test_match_ignore_bits),
		cmocka_unit_test(test_match_directed),
		cmocka_unit_test(test_match_unexpected),
		cmocka_unit_test(test_match_peek_claim_discard),
		cmocka_unit_test(test_match_cancel),
		cmocka_unit_test(test_match_multi_recv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
