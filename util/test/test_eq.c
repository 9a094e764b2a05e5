/* SPDX-License-Identifier: MIT */
#include "util_test.h"
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

static struct fid_eq *eq_open(struct test_env *env, enum fi_wait_obj wait)
{
	struct fi_eq_attr attr = { .wait_obj = wait };
	struct fid_eq *eq = NULL;

	assert_int_equal(fi_eq_open(env->fabric, &attr, &eq, NULL), 0);
	return eq;
}

static void test_eq_write_read_order(void **state)
{
	struct test_env env;
	struct fid_eq *eq;
	struct fi_eq_entry in, out;
	uint32_t event;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	eq = eq_open(&env, FI_WAIT_NONE);
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 -FI_EAGAIN);
	for (int i = 0; i < 5; i++) {
		in = (struct fi_eq_entry){ .context = (void *)(uintptr_t)i,
					   .data = 100 + i };
		assert_int_equal(fi_eq_write(eq, FI_NOTIFY + (uint32_t)i, &in,
					     sizeof(in), 0), sizeof(in));
	}
	/* FI_PEEK leaves the event */
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), FI_PEEK),
			 sizeof(out));
	assert_int_equal(event, FI_NOTIFY);
	for (int i = 0; i < 5; i++) {
		memset(&out, 0, sizeof(out));
		assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
				 sizeof(out));
		assert_int_equal(event, FI_NOTIFY + (uint32_t)i);
		assert_ptr_equal(out.context, (void *)(uintptr_t)i);
		assert_int_equal(out.data, 100 + i);
	}
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 -FI_EAGAIN);
	/* a buffer too small is refused and the event stays */
	assert_int_equal(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
			 sizeof(in));
	assert_int_equal(fi_eq_read(eq, &event, &out, 4, 0), -FI_ETOOSMALL);
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 sizeof(out));
	/* oversized events are refused */
	static char big[UTIL_EQ_MAX_EVENT + 1];
	assert_int_equal(fi_eq_write(eq, FI_NOTIFY, big, sizeof(big), 0),
			 -FI_EINVAL);
	assert_int_equal(fi_close(&eq->fid), 0);
	test_env_close(&env);
}

static const char *test_eq_prov_strerror(int prov_errno,
					 const void *err_data, char *buf,
					 size_t len)
{
	static char own[32];

	if (!buf || !len) {
		buf = own;
		len = sizeof(own);
	}
	snprintf(buf, len, "prov %d %s", prov_errno, (const char *)err_data);
	return buf;
}

static void test_eq_errors(void **state)
{
	struct test_env env;
	struct fid_eq *eq;
	struct fi_eq_entry out;
	struct fi_eq_err_entry err = { 0 }, in = {
		.context = (void *)5, .data = 6, .err = FI_EADDRNOTAVAIL,
		.prov_errno = 3, .err_data = (void *)"abcdef",
		.err_data_size = 7,
	};
	char user[4];
	uint32_t event;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	eq = eq_open(&env, FI_WAIT_UNSPEC);
	util_eq_write(to_util_eq(eq), FI_NOTIFY, &out, sizeof(out));
	assert_int_equal(util_eq_write_err(to_util_eq(eq), &in), 0);
	util_eq_write(to_util_eq(eq), FI_MR_COMPLETE, &out, sizeof(out));

	assert_int_equal(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN);
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 sizeof(out));
	assert_int_equal(event, FI_NOTIFY);
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 -FI_EAVAIL);
	err.err_data = user;
	err.err_data_size = sizeof(user);
	assert_int_equal(fi_eq_readerr(eq, &err, 0), sizeof(err));
	assert_ptr_equal(err.context, (void *)5);
	assert_int_equal(err.data, 6);
	assert_int_equal(err.err, FI_EADDRNOTAVAIL);
	assert_int_equal(err.prov_errno, 3);
	assert_ptr_equal(err.err_data, user);
	assert_int_equal(err.err_data_size, sizeof(user));
	assert_memory_equal(user, "abcd", 4);
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 sizeof(out));
	assert_int_equal(event, FI_MR_COMPLETE);

	/* without a user buffer err_data points into the EQ */
	assert_int_equal(util_eq_write_err(to_util_eq(eq), &in), 0);
	memset(&err, 0, sizeof(err));
	assert_int_equal(fi_eq_readerr(eq, &err, 0), sizeof(err));
	assert_int_equal(err.err_data_size, 7);
	assert_string_equal(err.err_data, "abcdef");
	char buf[64];
	assert_string_equal(fi_eq_strerror(eq, FI_EIO, NULL, buf, sizeof(buf)),
			    fi_strerror(FI_EIO));
	/* a provider's text, also for a caller without a buffer */
	to_util_eq(eq)->strerror = test_eq_prov_strerror;
	assert_string_equal(fi_eq_strerror(eq, 7, "xy", buf, sizeof(buf)),
			    "prov 7 xy");
	assert_string_equal(fi_eq_strerror(eq, 8, "zw", NULL, 0), "prov 8 zw");
	/* an error left unread is freed at close */
	assert_int_equal(util_eq_write_err(to_util_eq(eq), &in), 0);
	assert_int_equal(fi_close(&eq->fid), 0);
	test_env_close(&env);
}

static void *eq_writer(void *p)
{
	struct fi_eq_entry e = { .data = 42 };

	usleep(20000);
	util_eq_write(p, FI_NOTIFY, &e, sizeof(e));
	return NULL;
}

static void test_eq_sread(void **state)
{
	struct test_env env;
	struct fid_eq *eq;
	struct fi_eq_entry out;
	uint32_t event;
	pthread_t t;
	int fd;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	eq = eq_open(&env, FI_WAIT_UNSPEC);
	assert_int_equal(fi_eq_sread(eq, &event, &out, sizeof(out), 5, 0),
			 -FI_EAGAIN);
	alarm(30);
	assert_int_equal(pthread_create(&t, NULL, eq_writer, to_util_eq(eq)),
			 0);
	assert_int_equal(fi_eq_sread(eq, &event, &out, sizeof(out), -1, 0),
			 sizeof(out));
	alarm(0);
	pthread_join(t, NULL);
	assert_int_equal(event, FI_NOTIFY);
	assert_int_equal(out.data, 42);

	/* fd and trywait */
	struct fid *fids[1] = { &eq->fid };
	assert_int_equal(fi_control(&eq->fid, FI_GETWAIT, &fd), 0);
	assert_int_equal(fi_trywait(env.fabric, fids, 1), 0);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0);
	util_eq_write(to_util_eq(eq), FI_NOTIFY, &out, sizeof(out));
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);

	/* the fabric cannot close while the EQ is open */
	assert_int_equal(fi_close(&env.fabric->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&eq->fid), 0);
	test_env_close(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eq_write_read_order),
		cmocka_unit_test(test_eq_errors),
		cmocka_unit_test(test_eq_sread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
