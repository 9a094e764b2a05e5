/* SPDX-License-Identifier: MIT */
/*
 * util logs under the provider that owns the object: with
 * FI_LOG_PROV=<provider>, util's warnings about that provider's CQs, AVs,
 * counters, EQs, MRs and poll sets are printed and carry its name; with
 * another provider's name (core's included) they are not.
 */
#include "util_test.h"
#include "weft/core.h"
#include "../../core/test/capture.h"

static const struct util_av_prov log_av_prov = { .addrlen = 8 };

static void fire_cq_readerr(struct test_env *env)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fid_cq *cq;

	assert_int_equal(fi_cq_open(env->domain, &attr, &cq, NULL), 0);
	assert_int_equal(fi_cq_readerr(cq, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_close(&cq->fid), 0);
}

static void fire_cq_open(struct test_env *env)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT,
				   .size = SIZE_MAX };
	struct fid_cq *cq = NULL;

	assert_int_equal(fi_cq_open(env->domain, &attr, &cq, NULL),
			 -FI_EINVAL);
	assert_null(cq);
}

static void fire_av_lookup(struct test_env *env)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE };
	char addr[8];
	size_t len = sizeof(addr);
	struct fid_av *av;

	env->udom->av_prov = &log_av_prov;
	assert_int_equal(fi_av_open(env->domain, &attr, &av, NULL), 0);
	assert_int_equal(fi_av_lookup(av, 4242, addr, &len), -FI_EINVAL);
	assert_int_equal(fi_close(&av->fid), 0);
}

static void fire_av_insert(struct test_env *env)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE };
	char addr[8] = "peer";
	fi_addr_t fa;
	struct fid_av *av;

	env->udom->av_prov = &log_av_prov;
	assert_int_equal(fi_av_open(env->domain, &attr, &av, NULL), 0);
	assert_int_equal(fi_av_insert(av, addr, 1, &fa, FI_TAGGED, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_close(&av->fid), 0);
}

static void fire_cntr_open(struct test_env *env)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP + 1 };
	struct fid_cntr *cntr = NULL;

	assert_int_equal(fi_cntr_open(env->domain, &attr, &cntr, NULL),
			 -FI_ENOSYS);
	assert_null(cntr);
}

static void fire_eq_read(struct test_env *env)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_NONE };
	uint32_t event;
	struct fid_eq *eq;

	assert_int_equal(fi_eq_open(env->fabric, &attr, &eq, NULL), 0);
	assert_int_equal(fi_eq_read(eq, &event, NULL, 0, FI_SEND),
			 -FI_EINVAL);
	assert_int_equal(fi_close(&eq->fid), 0);
}

static void fire_mr_reg(struct test_env *env)
{
	char buf[64] = "";
	struct fid_mr *mr = NULL;

	assert_int_equal(fi_mr_reg(env->domain, buf, sizeof(buf), FI_READ, 1,
				   0, 0, &mr, NULL), -FI_EINVAL);
	assert_null(mr);
}

static void fire_poll_open(struct test_env *env)
{
	struct fi_poll_attr attr = { .flags = 1 };
	struct fid_poll *ps = NULL;

	assert_int_equal(fi_poll_open(env->domain, &attr, &ps), -FI_EINVAL);
	assert_null(ps);
}

static const struct trigger {
	const char *what;
	const char *needle;	/* the warning util prints */
	void (*fire)(struct test_env *env);
} triggers[] = {
	{ "cq readerr", ":utiltest:cq:", fire_cq_readerr },
	{ "cq open", ":utiltest:cq:", fire_cq_open },
	{ "av lookup", ":utiltest:av:", fire_av_lookup },
	{ "av insert", ":utiltest:av:", fire_av_insert },
	{ "cntr open", ":utiltest:cntr:", fire_cntr_open },
	{ "eq read", ":utiltest:eq:", fire_eq_read },
	{ "mr reg", ":utiltest:mr:", fire_mr_reg },
	{ "poll open", ":utiltest:domain:", fire_poll_open },
};

/* Lines util printed while firing t with FI_LOG_PROV=log_prov (NULL:
 * unset), and how many of them name the fake provider and t's subsystem. */
static int fire_counted(const struct trigger *t, const char *log_prov,
			int *lines)
{
	struct test_env env;
	struct capture cap;
	const char *out;
	int tagged;

	if (log_prov)
		setenv("FI_LOG_PROV", log_prov, 1);
	else
		unsetenv("FI_LOG_PROV");
	weft_log_configure();
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	capture_start(&cap);
	t->fire(&env);
	out = capture_stop(&cap);
	*lines = capture_count(out, "libfabric:");
	tagged = capture_count(out, t->needle);
	capture_free(&cap);
	test_env_close(&env);
	return tagged;
}

static void test_owner_shown(void **state)
{
	int lines;

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(triggers); i++) {
		print_message("%s\n", triggers[i].what);
		assert_int_equal(fire_counted(&triggers[i], "utiltest",
					      &lines), 1);
		assert_int_equal(lines, 1);
		/* No filter: the same line, under the same name. */
		assert_int_equal(fire_counted(&triggers[i], NULL, &lines), 1);
		assert_int_equal(lines, 1);
	}
}

static void test_other_hidden(void **state)
{
	const char *others[] = { "core", "shm", "srd" };
	int lines;

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(triggers); i++) {
		for (size_t j = 0; j < WEFT_ARRAY_SIZE(others); j++) {
			print_message("%s, FI_LOG_PROV=%s\n", triggers[i].what,
				      others[j]);
			assert_int_equal(fire_counted(&triggers[i], others[j],
						      &lines), 0);
			assert_int_equal(lines, 0);
		}
	}
}

static int reset(void **state)
{
	unsetenv("FI_LOG_PROV");
	unsetenv("FI_LOG_LEVEL");
	unsetenv("FI_LOG_SUBSYS");
	weft_log_configure();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_owner_shown, reset, reset),
		cmocka_unit_test_setup_teardown(test_other_hidden, reset, reset),
	};

	weft_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
