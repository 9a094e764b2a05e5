/* SPDX-License-Identifier: MIT */
#include "util_test.h"
#include "weft/core.h"
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

static struct fid_cntr *cntr_open(struct test_env *env, enum fi_wait_obj wait)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = wait };
	struct fid_cntr *cntr = NULL;

	assert_int_equal(fi_cntr_open(env->domain, &attr, &cntr, NULL), 0);
	return cntr;
}

static void test_cntr_values(void **state)
{
	struct test_env env;
	struct fid_cntr *cntr;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cntr = cntr_open(&env, FI_WAIT_NONE);
	assert_int_equal(fi_cntr_read(cntr), 0);
	assert_int_equal(fi_cntr_readerr(cntr), 0);
	assert_int_equal(fi_cntr_add(cntr, 5), 0);
	assert_int_equal(fi_cntr_add(cntr, 7), 0);
	assert_int_equal(fi_cntr_read(cntr), 12);
	assert_int_equal(fi_cntr_set(cntr, 3), 0);
	assert_int_equal(fi_cntr_read(cntr), 3);
	assert_int_equal(fi_cntr_adderr(cntr, 2), 0);
	assert_int_equal(fi_cntr_readerr(cntr), 2);
	assert_int_equal(fi_cntr_seterr(cntr, 9), 0);
	assert_int_equal(fi_cntr_readerr(cntr), 9);
	/* values are independent */
	assert_int_equal(fi_cntr_read(cntr), 3);
	util_cntr_inc(to_util_cntr(cntr));
	util_cntr_inc_err(to_util_cntr(cntr));
	assert_int_equal(fi_cntr_read(cntr), 4);
	assert_int_equal(fi_cntr_readerr(cntr), 10);
	assert_int_equal(fi_close(&cntr->fid), 0);
	test_env_close(&env);
}

static void test_cntr_wait(void **state)
{
	struct test_env env;
	enum fi_wait_obj waits[] = { FI_WAIT_NONE, FI_WAIT_UNSPEC, FI_WAIT_FD,
				     FI_WAIT_YIELD };

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	for (size_t i = 0; i < WEFT_ARRAY_SIZE(waits); i++) {
		struct fid_cntr *cntr = cntr_open(&env, waits[i]);

		assert_int_equal(fi_cntr_wait(cntr, 1, 5), -FI_ETIMEDOUT);
		assert_int_equal(fi_cntr_add(cntr, 2), 0);
		assert_int_equal(fi_cntr_wait(cntr, 2, 5), 0);
		assert_int_equal(fi_cntr_wait(cntr, 1, 0), 0);
		assert_int_equal(fi_cntr_wait(cntr, 3, 0), -FI_ETIMEDOUT);
		/* the error count is unchanged by a timeout */
		assert_int_equal(fi_cntr_readerr(cntr), 0);
		assert_int_equal(fi_close(&cntr->fid), 0);
	}
	test_env_close(&env);
}

struct adder_arg {
	struct fid_cntr *cntr;
	bool err;
};

static void *adder_thread(void *p)
{
	struct adder_arg *a = p;

	for (int i = 0; i < 10; i++) {
		usleep(2000);
		if (a->err)
			util_cntr_inc_err(to_util_cntr(a->cntr));
		else
			util_cntr_inc(to_util_cntr(a->cntr));
	}
	return NULL;
}

static void test_cntr_wait_woken(void **state)
{
	struct test_env env;
	struct fid_cntr *cntr;
	struct adder_arg arg;
	pthread_t t;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	env.udom->wait_slice_ms = -1;
	cntr = cntr_open(&env, FI_WAIT_FD);
	arg = (struct adder_arg){ .cntr = cntr };
	alarm(30);
	assert_int_equal(pthread_create(&t, NULL, adder_thread, &arg), 0);
	assert_int_equal(fi_cntr_wait(cntr, 10, -1), 0);
	assert_true(fi_cntr_read(cntr) >= 10);
	pthread_join(t, NULL);
	assert_int_equal(fi_cntr_read(cntr), 10);

	/* an error completion ends the wait with -FI_EAVAIL */
	arg.err = true;
	assert_int_equal(pthread_create(&t, NULL, adder_thread, &arg), 0);
	assert_int_equal(fi_cntr_wait(cntr, 1000, -1), -FI_EAVAIL);
	pthread_join(t, NULL);
	alarm(0);
	assert_int_equal(fi_cntr_readerr(cntr), 10);
	assert_int_equal(fi_close(&cntr->fid), 0);
	test_env_close(&env);
}

static int cntr_progress_adds;

static void cntr_ep_progress(struct util_ep *ep)
{
	cntr_progress_adds++;
	util_ep_cntr_inc(ep, UTIL_CNTR_RECV);
}

static void test_cntr_bound_progress(void **state)
{
	struct test_env env;
	struct fid_cntr *cntr, *rcntr;
	struct test_ep *ep;
	struct fid *fids[1];
	int fd;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cntr = cntr_open(&env, FI_WAIT_FD);
	rcntr = cntr_open(&env, FI_WAIT_NONE);
	ep = test_ep_open(&env);
	ep->util.progress = cntr_ep_progress;
	assert_int_equal(fi_ep_bind(&ep->util.ep_fid, &cntr->fid,
				    FI_SEND | FI_READ | FI_WRITE), 0);
	assert_int_equal(fi_ep_bind(&ep->util.ep_fid, &rcntr->fid, FI_RECV), 0);
	assert_ptr_equal(ep->util.cntrs[UTIL_CNTR_SEND], to_util_cntr(cntr));
	assert_ptr_equal(ep->util.cntrs[UTIL_CNTR_READ], to_util_cntr(cntr));
	assert_ptr_equal(ep->util.cntrs[UTIL_CNTR_WRITE], to_util_cntr(cntr));
	assert_null(ep->util.cntrs[UTIL_CNTR_REMOTE_READ]);
	/* a second counter for the same event is refused */
	assert_int_equal(fi_ep_bind(&ep->util.ep_fid, &rcntr->fid, FI_SEND),
			 -FI_EINVAL);
	assert_int_equal(fi_ep_bind(&ep->util.ep_fid, &rcntr->fid, 0),
			 -FI_EINVAL);

	/* reading either counter runs the endpoint's progress (once per
	 * read even though cntr is bound three times) */
	cntr_progress_adds = 0;
	assert_int_equal(fi_cntr_read(rcntr), 1);
	assert_int_equal(fi_cntr_read(cntr), 0);
	assert_int_equal(cntr_progress_adds, 2);
	assert_int_equal(fi_cntr_wait(rcntr, 5, 1000), 0);
	assert_true(fi_cntr_read(rcntr) >= 5);

	util_ep_cntr_inc(&ep->util, UTIL_CNTR_WRITE);
	util_ep_cntr_inc_err(&ep->util, UTIL_CNTR_SEND);
	util_ep_cntr_inc(&ep->util, UTIL_CNTR_REMOTE_WRITE);	/* none bound */
	assert_int_equal(fi_cntr_read(cntr), 1);
	assert_int_equal(fi_cntr_readerr(cntr), 1);

	/* fd wait: trywait arms, an increment makes the fd readable */
	assert_int_equal(fi_control(&cntr->fid, FI_GETWAIT, &fd), 0);
	fids[0] = &cntr->fid;
	ep->util.progress = NULL;
	assert_int_equal(fi_trywait(env.fabric, fids, 1), 0);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0);
	util_cntr_inc(to_util_cntr(cntr));
	assert_int_equal(poll(&pfd, 1, 0), 1);

	assert_int_equal(fi_close(&cntr->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	assert_int_equal(fi_close(&cntr->fid), 0);
	assert_int_equal(fi_close(&rcntr->fid), 0);
	test_env_close(&env);
}

/* Reads that see no change count towards FI_POLL_YIELD (and yield at
 * the budget); a changed value resets the count. */
static void test_cntr_idle_yield_budget(void **state)
{
	struct test_env env;
	struct fid_cntr *cntr;
	struct util_cntr *uc;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cntr = cntr_open(&env, FI_WAIT_NONE);
	uc = to_util_cntr(cntr);
	assert_int_equal(uc->idle.budget, weft_poll_yield);
	uc->idle.budget = 5;
	for (int i = 1; i < 5; i++) {
		assert_int_equal(fi_cntr_read(cntr), 0);
		assert_int_equal(uc->idle.count, i);
	}
	assert_int_equal(fi_cntr_read(cntr), 0);
	assert_int_equal(uc->idle.count, 0);
	assert_int_equal(fi_cntr_read(cntr), 0);
	assert_int_equal(fi_cntr_add(cntr, 3), 0);
	assert_int_equal(fi_cntr_read(cntr), 3);
	assert_int_equal(uc->idle.count, 0);
	assert_int_equal(fi_cntr_read(cntr), 3);
	assert_int_equal(uc->idle.count, 1);
	assert_int_equal(fi_close(&cntr->fid), 0);
	test_env_close(&env);
}

static void test_cntr_bad_attr(void **state)
{
	struct test_env env;
	struct fi_cntr_attr attr = { .events = 5 };
	struct fid_cntr *cntr;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	assert_int_equal(fi_cntr_open(env.domain, &attr, &cntr, NULL),
			 -FI_ENOSYS);
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.wait_obj = FI_WAIT_SET;
	assert_int_equal(fi_cntr_open(env.domain, &attr, &cntr, NULL),
			 -FI_ENOSYS);
	/* NULL attr: defaults */
	assert_int_equal(fi_cntr_open(env.domain, NULL, &cntr, NULL), 0);
	assert_int_equal(fi_close(&cntr->fid), 0);
	test_env_close(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cntr_values),
		cmocka_unit_test(test_cntr_wait),
		cmocka_unit_test(test_cntr_wait_woken),
		cmocka_unit_test(test_cntr_bound_progress),
		cmocka_unit_test(test_cntr_idle_yield_budget),
		cmocka_unit_test(test_cntr_bad_attr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
