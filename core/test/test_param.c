/* SPDX-License-Identifier: MIT */
/*
 * fi_param_*: names in the environment, every type, malformed values,
 * unset and undefined params, fi_getparams, concurrent definitions.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>
#include "weft/core.h"
#include "capture.h"

static struct fi_provider tprov = { .name = "tprov", .fi_version = FI_VERSION(1, 17) };
static struct fi_provider mixed = { .name = "TProv2", .fi_version = FI_VERSION(1, 17) };

static int group_setup(void **state)
{
	assert_int_equal(fi_param_define(&tprov, "some_int", FI_PARAM_INT,
					 "an int (default %d)", 7), 0);
	assert_int_equal(fi_param_define(&tprov, "flag", FI_PARAM_BOOL, "a bool"), 0);
	assert_int_equal(fi_param_define(&tprov, "bytes", FI_PARAM_SIZE_T, "a size"), 0);
	assert_int_equal(fi_param_define(&tprov, "label", FI_PARAM_STRING, "a string"), 0);
	assert_int_equal(fi_param_define(NULL, "weft_test_core", FI_PARAM_STRING,
					 "a core string"), 0);
	assert_int_equal(fi_param_define(&mixed, "Knob", FI_PARAM_INT, "mixed case"), 0);
	return 0;
}

static void test_int(void **state)
{
	int value = -1;

	setenv("FI_TPROV_SOME_INT", "42", 1);
	assert_int_equal(fi_param_get_int(&tprov, "some_int", &value), 0);
	assert_int_equal(value, 42);
	setenv("FI_TPROV_SOME_INT", "0x10", 1);
	assert_int_equal(fi_param_get_int(&tprov, "some_int", &value), 0);
	assert_int_equal(value, 16);
	setenv("FI_TPROV_SOME_INT", "-5", 1);
	assert_int_equal(fi_param_get_int(&tprov, "some_int", &value), 0);
	assert_int_equal(value, -5);
	unsetenv("FI_TPROV_SOME_INT");
}

static void test_int_malformed(void **state)
{
	const char *bad[] = { "12abc", "", "abc", "99999999999", "1.5" };
	struct capture cap;
	int value;

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(bad); i++) {
		value = 1234;
		setenv("FI_TPROV_SOME_INT", bad[i], 1);
		capture_start(&cap);
		assert_int_equal(fi_param_get_int(&tprov, "some_int", &value), -FI_EINVAL);
		assert_int_equal(capture_count(capture_stop(&cap),
					       "FI_TPROV_SOME_INT"), 1);
		capture_free(&cap);
		assert_int_equal(value, 1234);	/* untouched */
	}
	unsetenv("FI_TPROV_SOME_INT");
}

static void test_bool(void **state)
{
	const struct { const char *str; int val; } forms[] = {
		{ "0", 0 }, { "1", 1 }, { "yes", 1 }, { "no", 0 },
		{ "true", 1 }, { "false", 0 }, { "on", 1 }, { "off", 0 },
		{ "TRUE", 1 }, { "Off", 0 }, { "YeS", 1 }, { "NO", 0 },
	};
	int value;

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(forms); i++) {
		value = -1;
		setenv("FI_TPROV_FLAG", forms[i].str, 1);
		assert_int_equal(fi_param_get_bool(&tprov, "flag", &value), 0);
		assert_int_equal(value, forms[i].val);
	}
	unsetenv("FI_TPROV_FLAG");
}

static void test_bool_malformed(void **state)
{
	const char *bad[] = { "maybe", "2", "", "yess", "t" };
	struct capture cap;
	int value;

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(bad); i++) {
		value = 7;
		setenv("FI_TPROV_FLAG", bad[i], 1);
		capture_start(&cap);
		assert_int_equal(fi_param_get_bool(&tprov, "flag", &value), -FI_EINVAL);
		assert_int_equal(capture_count(capture_stop(&cap), "<warn>"), 1);
		capture_free(&cap);
		assert_int_equal(value, 7);
	}
	unsetenv("FI_TPROV_FLAG");
}

static void test_size_t(void **state)
{
	const char *bad[] = { "-1", "12abc", "", " -3" };
	size_t value = 0;

	setenv("FI_TPROV_BYTES", "4096", 1);
	assert_int_equal(fi_param_get_size_t(&tprov, "bytes", &value), 0);
	assert_int_equal(value, 4096);
	setenv("FI_TPROV_BYTES", "0x100000000", 1);
	assert_int_equal(fi_param_get_size_t(&tprov, "bytes", &value), 0);
	assert_int_equal(value, 0x100000000ULL);
	for (size_t i = 0; i < WEFT_ARRAY_SIZE(bad); i++) {
		value = 99;
		setenv("FI_TPROV_BYTES", bad[i], 1);
		assert_int_equal(fi_param_get_size_t(&tprov, "bytes", &value), -FI_EINVAL);
		assert_int_equal(value, 99);
	}
	unsetenv("FI_TPROV_BYTES");
}

static void test_string_and_core_names(void **state)
{
	char *str = NULL;
	int value = 0;

	setenv("FI_TPROV_LABEL", "hello world", 1);
	assert_int_equal(fi_param_get_str(&tprov, "label", &str), 0);
	assert_string_equal(str, "hello world");
	unsetenv("FI_TPROV_LABEL");

	/* Core params: no provider part in the name, NULL or weft_core_prov. */
	setenv("FI_WEFT_TEST_CORE", "abc", 1);
	assert_int_equal(fi_param_get_str(NULL, "weft_test_core", &str), 0);
	assert_string_equal(str, "abc");
	str = NULL;
	assert_int_equal(fi_param_get_str(&weft_core_prov, "weft_test_core", &str), 0);
	assert_string_equal(str, "abc");
	unsetenv("FI_WEFT_TEST_CORE");

	/* Mixed-case names are upper-cased. */
	setenv("FI_TPROV2_KNOB", "9", 1);
	assert_int_equal(fi_param_get_int(&mixed, "Knob", &value), 0);
	assert_int_equal(value, 9);
	unsetenv("FI_TPROV2_KNOB");
}

static void test_unset_undefined(void **state)
{
	int value = 5;

	unsetenv("FI_TPROV_SOME_INT");
	assert_int_equal(fi_param_get_int(&tprov, "some_int", &value), -FI_ENODATA);
	assert_int_equal(value, 5);
	setenv("FI_TPROV_NEVER_DEFINED", "1", 1);
	assert_int_equal(fi_param_get_int(&tprov, "never_defined", &value), -FI_ENOENT);
	unsetenv("FI_TPROV_NEVER_DEFINED");
	assert_int_equal(fi_param_get_int(&tprov, NULL, &value), -FI_EINVAL);
	assert_int_equal(fi_param_get(&tprov, "some_int", NULL), -FI_EINVAL);
}

static void test_define_invalid(void **state)
{
	assert_int_equal(fi_param_define(&tprov, NULL, FI_PARAM_INT, "x"), -FI_EINVAL);
	assert_int_equal(fi_param_define(&tprov, "x", (enum fi_param_type)99, "x"),
			 -FI_EINVAL);
	assert_int_equal(fi_param_define(&tprov, "bad-name", FI_PARAM_INT, "x"),
			 -FI_EINVAL);
	assert_int_equal(fi_param_define(&tprov, "", FI_PARAM_INT, "x"), -FI_EINVAL);
	assert_int_equal(fi_param_define(&tprov, "nohelp", FI_PARAM_INT, NULL),
			 -FI_EINVAL);
	/* Redefinition keeps the first definition. */
	assert_int_equal(fi_param_define(&tprov, "some_int", FI_PARAM_STRING, "again"), 0);
}

static const struct fi_param *find_param(const struct fi_param *params, int count,
					 const char *name)
{
	for (int i = 0; i < count; i++) {
		if (!strcmp(params[i].name, name))
			return &params[i];
	}
	return NULL;
}

static void test_getparams(void **state)
{
	struct fi_param *params = NULL;
	const struct fi_param *p;
	int count = 0, seen = 0;

	setenv("FI_TPROV_SOME_INT", "31", 1);
	assert_int_equal(fi_getparams(&params, &count), 0);
	assert_true(count >= 6);
	assert_null(params[count].name);	/* terminator */
	p = find_param(params, count, "FI_TPROV_SOME_INT");
	assert_non_null(p);
	assert_int_equal(p->type, FI_PARAM_INT);
	assert_string_equal(p->help_string, "an int (default 7)");
	assert_string_equal(p->value, "31");
	p = find_param(params, count, "FI_TPROV_FLAG");
	assert_non_null(p);
	assert_null(p->value);
	/* Core settings are listed as well. */
	assert_non_null(find_param(params, count, "FI_LOG_LEVEL"));
	assert_non_null(find_param(params, count, "FI_PROVIDER"));
	for (int i = 0; i < count; i++)
		seen += !strcmp(params[i].name, "FI_TPROV_SOME_INT");
	assert_int_equal(seen, 1);	/* the redefinition was not added */
	fi_freeparams(params);
	unsetenv("FI_TPROV_SOME_INT");
	fi_freeparams(NULL);
	assert_int_equal(fi_getparams(NULL, &count), -FI_EINVAL);
}

#define THREADS 4
#define PER_THREAD 50

static void *define_many(void *arg)
{
	struct fi_provider *prov = arg;
	char name[32];

	for (int i = 0; i < PER_THREAD; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		if (fi_param_define(prov, name, FI_PARAM_INT, "concurrent %d", i))
			return (void *)1;
	}
	return NULL;
}

static void test_concurrent_define(void **state)
{
	static struct fi_provider provs[THREADS];
	static const char *names[THREADS] = { "thra", "thrb", "thrc", "thrd" };
	pthread_t threads[THREADS];
	struct fi_param *params;
	char env[32];
	int count;
	void *ret;

	for (int t = 0; t < THREADS; t++) {
		provs[t].name = names[t];
		assert_int_equal(pthread_create(&threads[t], NULL, define_many, &provs[t]), 0);
	}
	for (int t = 0; t < THREADS; t++) {
		assert_int_equal(pthread_join(threads[t], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(fi_getparams(&params, &count), 0);
	for (int t = 0; t < THREADS; t++) {
		for (int i = 0; i < PER_THREAD; i++) {
			snprintf(env, sizeof(env), "FI_THR%c_P%d", 'A' + t, i);
			assert_non_null(find_param(params, count, env));
		}
	}
	fi_freeparams(params);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_int_malformed),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_bool_malformed),
		cmocka_unit_test(test_size_t),
		cmocka_unit_test(test_string_and_core_names),
		cmocka_unit_test(test_unset_undefined),
		cmocka_unit_test(test_define_invalid),
		cmocka_unit_test(test_getparams),
		cmocka_unit_test(test_concurrent_define),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
