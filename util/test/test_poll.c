/* SPDX-License-Identifier: MIT */
/*
 * Poll sets: fi_poll runs the members' progress (a completion the test
 * endpoint writes only from progress shows up), reports a CQ while it is
 * not empty and a counter once per change (fi_cntr_set/add move its
 * baseline), honours count, and add/del/close refuse what fi_poll(3)
 * forbids.
 */
#include "util_test.h"

static int ctx_cq1, ctx_cq2, ctx_cntr, ctx_eq;

static struct fid_cq *cq_open(struct test_env *env, void *ctx)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT,
				   .size = 16 };
	struct fid_cq *cq = NULL;

	assert_int_equal(fi_cq_open(env->domain, &attr, &cq, ctx), 0);
	return cq;
}

/* The contexts fi_poll returns, as a bit set: 1 cq1, 2 cq2, 4 cntr. */
static int polled(struct fid_poll *ps, int count)
{
	void *ctx[8] = { NULL };
	int n = fi_poll(ps, ctx, count), bits = 0, i;

	assert_true(n >= 0 && n <= count);
	for (i = 0; i < n; i++) {
		if (ctx[i] == &ctx_cq1)
			bits |= 1;
		else if (ctx[i] == &ctx_cq2)
			bits |= 2;
		else if (ctx[i] == &ctx_cntr)
			bits |= 4;
		else
			fail_msg("unknown context %p", ctx[i]);
	}
	return bits;
}

static void test_poll_events(void **state)
{
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_cq_entry e[4];
	struct test_env env;
	struct fid_poll *ps;
	struct fid_cq *cq1, *cq2;
	struct fid_cntr *cntr;
	struct test_ep *ep;
	int calls;

	(void)state;
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	cq1 = cq_open(&env, &ctx_cq1);
	cq2 = cq_open(&env, &ctx_cq2);
	assert_int_equal(fi_cntr_open(env.domain, &ca, &cntr, &ctx_cntr), 0);
	ep = test_ep_open(&env);
	assert_int_equal(fi_ep_bind(&ep->util.ep_fid, &cq1->fid,
				    FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_ep_bind(&ep->util.ep_fid, &cntr->fid,
				    FI_RECV), 0);
	assert_int_equal(fi_poll_open(env.domain, &(struct fi_poll_attr){ 0 },
				      &ps), 0);
	assert_int_equal(fi_poll_add(ps, &cq1->fid, 0), 0);
	assert_int_equal(fi_poll_add(ps, &cq2->fid, 0), 0);
	assert_int_equal(fi_poll_add(ps, &cntr->fid, 0), 0);
	assert_int_equal(polled(ps, 8), 0);

	/* a completion that only the endpoint's progress writes */
	ep->pending[ep->npending++] = (void *)0x1234;
	calls = ep->progress_calls;
	assert_int_equal(polled(ps, 8), 1);
	assert_true(ep->progress_calls > calls);
	assert_int_equal(polled(ps, 8), 1);	/* still there */
	assert_int_equal(fi_cq_read(cq1, e, 4), 1);
	assert_ptr_equal(e[0].op_context, (void *)0x1234);
	assert_int_equal(polled(ps, 8), 0);

	/* a counter once per change, errors included */
	util_cntr_inc(to_util_cntr(cntr));
	assert_int_equal(polled(ps, 8), 4);
	assert_int_equal(polled(ps, 8), 0);
	util_cntr_inc_err(to_util_cntr(cntr));
	assert_int_equal(polled(ps, 8), 4);
	assert_int_equal(polled(ps, 8), 0);
	/* fi_cntr_add / fi_cntr_set are not events, and move the baseline */
	assert_int_equal(fi_cntr_add(cntr, 3), 0);
	assert_int_equal(polled(ps, 8), 0);
	assert_int_equal(fi_cntr_set(cntr, 100), 0);
	assert_int_equal(polled(ps, 8), 0);
	util_cntr_inc(to_util_cntr(cntr));
	assert_int_equal(polled(ps, 8), 4);
	assert_int_equal(fi_cntr_read(cntr), 101);

	/* count bounds what is returned; the rest comes next time */
	util_cq_write(to_util_cq(cq2), (void *)0x55, FI_SEND, 0, NULL, 0, 0);
	ep->pending[ep->npending++] = (void *)0x66;
	util_cntr_inc(to_util_cntr(cntr));
	{
		int first = polled(ps, 1), rest;

		assert_true(first == 1 || first == 2 || first == 4);
		rest = polled(ps, 8);
		assert_int_equal(first | rest, 7);
	}
	assert_int_equal(fi_cq_read(cq1, e, 4), 1);
	assert_int_equal(fi_cq_read(cq2, e, 4), 1);
	assert_ptr_equal(e[0].op_context, (void *)0x55);
	assert_int_equal(polled(ps, 8), 0);

	/* after del, a member's events are not reported */
	assert_int_equal(fi_poll_del(ps, &cq2->fid, 0), 0);
	util_cq_write(to_util_cq(cq2), (void *)0x77, FI_SEND, 0, NULL, 0, 0);
	assert_int_equal(polled(ps, 8), 0);
	assert_int_equal(fi_cq_read(cq2, e, 4), 1);

	assert_int_equal(fi_poll_del(ps, &cq1->fid, 0), 0);
	assert_int_equal(fi_poll_del(ps, &cntr->fid, 0), 0);
	assert_int_equal(fi_close(&ps->fid), 0);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	assert_int_equal(fi_close(&cq1->fid), 0);
	assert_int_equal(fi_close(&cq2->fid), 0);
	assert_int_equal(fi_close(&cntr->fid), 0);
	test_env_close(&env);
}

static void test_poll_errors(void **state)
{
	struct fi_eq_attr eqa = { .size = 8 };
	struct test_env env, other;
	struct fid_poll *ps;
	struct fid_cq *cq, *ocq;
	struct fid_eq *eq;
	void *ctx[2];

	(void)state;
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	assert_int_equal(test_env_open(&other, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, &ctx_cq1);
	ocq = cq_open(&other, &ctx_cq2);
	assert_int_equal(fi_eq_open(env.fabric, &eqa, &eq, &ctx_eq), 0);
	assert_int_equal(fi_poll_open(env.domain,
				      &(struct fi_poll_attr){ .flags = 1 },
				      &ps), -FI_EINVAL);
	assert_int_equal(fi_poll_open(env.domain, NULL, &ps), 0);
	assert_int_equal(fi_poll_add(ps, &eq->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_poll_add(ps, &ocq->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_poll_add(ps, &cq->fid, 1), -FI_EINVAL);
	assert_int_equal(fi_poll_del(ps, &cq->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_poll_add(ps, &cq->fid, 0), 0);
	assert_int_equal(fi_poll_add(ps, &cq->fid, 0), -FI_EALREADY);
	assert_int_equal(fi_poll(ps, NULL, 2), -FI_EINVAL);
	assert_int_equal(fi_poll(ps, ctx, -1), -FI_EINVAL);
	assert_int_equal(fi_poll(ps, ctx, 0), 0);
	/* members and sets stay while they are tied */
	assert_int_equal(fi_close(&cq->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&ps->fid), -FI_EBUSY);
	assert_int_equal(fi_poll_del(ps, &cq->fid, 0), 0);
	assert_int_equal(fi_close(&ps->fid), 0);
	assert_int_equal(fi_close(&cq->fid), 0);
	assert_int_equal(fi_close(&ocq->fid), 0);
	assert_int_equal(fi_close(&eq->fid), 0);
	test_env_close(&other);
	test_env_close(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poll_events),
		cmocka_unit_test(test_poll_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
