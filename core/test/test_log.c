/* SPDX-License-Identifier: MIT */
/*
 * fi_log filtering by FI_LOG_LEVEL / FI_LOG_PROV / FI_LOG_SUBSYS, the line
 * format, and fi_log_ready's rate limit. stderr goes to a file and the
 * tests read back what was and wasn't printed.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <unistd.h>
#include <cmocka.h>
#include "weft/core.h"
#include "../core_priv.h"
#include "capture.h"

static struct fi_provider tprov = { .name = "tprov" };
static struct fi_provider other = { .name = "other" };

static void set_log_env(const char *level, const char *prov, const char *subsys)
{
	const char *names[] = { "FI_LOG_LEVEL", "FI_LOG_PROV", "FI_LOG_SUBSYS" };
	const char *values[] = { level, prov, subsys };

	for (int i = 0; i < 3; i++) {
		if (values[i])
			setenv(names[i], values[i], 1);
		else
			unsetenv(names[i]);
	}
	weft_log_configure();
}

static int reset(void **state)
{
	unsetenv("FI_LOG_INTERVAL");
	set_log_env(NULL, NULL, NULL);
	return 0;
}

/* One line per level, provider and subsystem asked; returns the text. */
static const char *emit_all(struct capture *cap)
{
	capture_start(cap);
	FI_WARN(&tprov, FI_LOG_CQ, "msg-warn-tprov-cq\n");
	FI_TRACE(&tprov, FI_LOG_CQ, "msg-trace-tprov-cq\n");
	FI_INFO(&tprov, FI_LOG_CQ, "msg-info-tprov-cq\n");
	FI_LOG(&tprov, FI_LOG_DEBUG, FI_LOG_CQ, "msg-debug-tprov-cq\n");
	FI_WARN(&other, FI_LOG_CQ, "msg-warn-other-cq\n");
	FI_WARN(&tprov, FI_LOG_AV, "msg-warn-tprov-av\n");
	FI_WARN(&tprov, FI_LOG_EP_DATA, "msg-warn-tprov-ep_data\n");
	FI_WARN(&tprov, FI_LOG_CNTR, "msg-warn-tprov-cntr\n");
	return capture_stop(cap);
}

static void test_default_level(void **state)
{
	struct capture cap;
	const char *out = emit_all(&cap);

	assert_int_equal(capture_count(out, "msg-warn-tprov-cq"), 1);
	assert_int_equal(capture_count(out, "msg-trace"), 0);
	assert_int_equal(capture_count(out, "msg-info"), 0);
	assert_int_equal(capture_count(out, "msg-debug"), 0);
	assert_int_equal(capture_count(out, "msg-"), 5);
	capture_free(&cap);
}

static void test_levels(void **state)
{
	const struct { const char *level; int lines; } cases[] = {
		{ "warn", 1 }, { "trace", 2 }, { "info", 3 }, { "debug", 4 },
		{ "INFO", 3 }, { "0", 1 }, { "1", 2 }, { "2", 3 }, { "3", 4 },
	};
	struct capture cap;

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(cases); i++) {
		set_log_env(cases[i].level, NULL, NULL);
		assert_int_equal(capture_count(emit_all(&cap), "-tprov-cq"),
				 cases[i].lines);
		capture_free(&cap);
	}
}

static void test_level_malformed(void **state)
{
	struct capture cap;
	const char *out;

	set_log_env("loud", NULL, NULL);
	assert_int_equal(capture_count(emit_all(&cap), "-tprov-cq"), 1);
	capture_free(&cap);
	capture_start(&cap);
	weft_log_report_settings();
	out = capture_stop(&cap);
	assert_int_equal(capture_count(out, "FI_LOG_LEVEL=loud"), 1);
	capture_free(&cap);
	set_log_env("7", NULL, NULL);
	assert_int_equal(fi_log_enabled(&tprov, FI_LOG_INFO, FI_LOG_CQ), 0);
	assert_int_equal(fi_log_enabled(&tprov, FI_LOG_WARN, FI_LOG_CQ), 1);
}

static void test_prov_filter(void **state)
{
	struct capture cap;
	const char *out;

	set_log_env(NULL, "tprov", NULL);
	out = emit_all(&cap);
	assert_int_equal(capture_count(out, "msg-warn-other"), 0);
	assert_int_equal(capture_count(out, "msg-warn-tprov-cq"), 1);
	capture_free(&cap);

	set_log_env(NULL, "^tprov", NULL);
	out = emit_all(&cap);
	assert_int_equal(capture_count(out, "msg-warn-other-cq"), 1);
	assert_int_equal(capture_count(out, "-tprov-"), 0);
	capture_free(&cap);

	set_log_env(NULL, "other,tprov", NULL);
	out = emit_all(&cap);
	assert_int_equal(capture_count(out, "msg-"), 5);
	capture_free(&cap);

	set_log_env(NULL, "tprov,,", NULL);	/* malformed: nothing */
	out = emit_all(&cap);
	assert_int_equal(capture_count(out, "msg-"), 0);
	capture_free(&cap);
}

static void test_subsys_filter(void **state)
{
	struct capture cap;
	const char *out;

	set_log_env(NULL, NULL, "av,cntr");
	out = emit_all(&cap);
	assert_int_equal(capture_count(out, "msg-warn-tprov-av"), 1);
	assert_int_equal(capture_count(out, "msg-warn-tprov-cntr"), 1);
	assert_int_equal(capture_count(out, "-cq"), 0);
	assert_int_equal(capture_count(out, "ep_data"), 0);
	capture_free(&cap);

	set_log_env("info", NULL, "^cq");
	out = emit_all(&cap);
	assert_int_equal(capture_count(out, "-cq"), 0);
	assert_int_equal(capture_count(out, "msg-"), 3);
	capture_free(&cap);
	assert_int_equal(fi_log_enabled(&tprov, FI_LOG_WARN,
					(enum fi_log_subsys)FI_LOG_SUBSYS_MAX), 0);
}

static void test_format(void **state)
{
	struct capture cap;
	regex_t re;
	char pattern[256];
	const char *out;
	int line;

	set_log_env("info", NULL, NULL);
	capture_start(&cap);
	line = __LINE__ + 1;
	FI_INFO(&tprov, FI_LOG_EP_CTRL, "hello %d\n", 42);
	out = capture_stop(&cap);
	/* libfabric 1.17: libfabric:<pid>:<sec>::<prov>:<subsys>:<func>():<line><level> */
	snprintf(pattern, sizeof(pattern),
		 "^libfabric:%d:[0-9]+::tprov:ep_ctrl:test_format\\(\\):%d<info> hello 42\n$",
		 (int)getpid(), line);
	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED), 0);
	if (regexec(&re, out, 0, NULL, 0))
		fail_msg("unexpected log line: %s", out);
	regfree(&re);
	capture_free(&cap);
}

static void test_log_ready(void **state)
{
	uint64_t showtime = 0;

	setenv("FI_LOG_INTERVAL", "100000", 1);	/* 100 s: never elapses here */
	weft_log_configure();
	assert_int_equal(fi_log_ready(&tprov, FI_LOG_WARN, FI_LOG_CQ, &showtime), 1);
	assert_int_equal(fi_log_ready(&tprov, FI_LOG_WARN, FI_LOG_CQ, &showtime), 0);
	assert_int_equal(fi_log_ready(&tprov, FI_LOG_INFO, FI_LOG_CQ, &showtime), 0);

	setenv("FI_LOG_INTERVAL", "0", 1);
	weft_log_configure();
	showtime = 0;
	assert_int_equal(fi_log_ready(&tprov, FI_LOG_WARN, FI_LOG_CQ, &showtime), 1);
	assert_int_equal(fi_log_ready(&tprov, FI_LOG_WARN, FI_LOG_CQ, &showtime), 1);
	/* Disabled levels never become ready. */
	assert_int_equal(fi_log_ready(&tprov, FI_LOG_DEBUG, FI_LOG_CQ, &showtime), 0);
}

static void test_sparse_macro(void **state)
{
	struct capture cap;
	const char *out;

	setenv("FI_LOG_INTERVAL", "100000", 1);
	weft_log_configure();
	capture_start(&cap);
	for (int i = 0; i < 5; i++)
		FI_WARN_SPARSE(&tprov, FI_LOG_CQ, "sparse-msg\n");
	out = capture_stop(&cap);
	assert_int_equal(capture_count(out, "sparse-msg"), 1);
	capture_free(&cap);
}

/* WEFT_WARN_SPARSE: the first line at once, then one per interval that
 * counts what it did not show; nothing while the level is off. */
static void weft_sparse_site(int i)
{
	WEFT_WARN_SPARSE(&tprov, FI_LOG_CQ, "weft-sparse %d\n", i);
}

static void test_weft_sparse(void **state)
{
	struct capture cap;
	const char *out;
	int i;

	(void)state;
	setenv("FI_LOG_INTERVAL", "200", 1);
	weft_log_configure();
	capture_start(&cap);
	for (i = 0; i < 1000; i++)
		weft_sparse_site(i);
	out = capture_stop(&cap);
	assert_int_equal(capture_count(out, "weft-sparse"), 1);
	assert_int_equal(capture_count(out, "weft-sparse 0"), 1);
	assert_int_equal(capture_count(out, "more like it"), 0);
	capture_free(&cap);

	usleep(250 * 1000);
	capture_start(&cap);
	weft_sparse_site(1000);
	weft_sparse_site(1001);
	out = capture_stop(&cap);
	assert_int_equal(capture_count(out, "weft-sparse"), 1);
	assert_int_equal(capture_count(out,
		"weft-sparse 1000 (and 999 more like it since the last such line)"),
		1);
	capture_free(&cap);

	/* Interval 0: no limit; the first line still counts the one the
	 * interval above held back (1001). */
	setenv("FI_LOG_INTERVAL", "0", 1);
	weft_log_configure();
	usleep(250 * 1000);
	capture_start(&cap);
	for (i = 0; i < 3; i++)
		weft_sparse_site(2000);
	out = capture_stop(&cap);
	assert_int_equal(capture_count(out, "weft-sparse 2000"), 3);
	assert_int_equal(capture_count(out, "weft-sparse 2000 (and 1 more"),
			 1);
	capture_free(&cap);

	setenv("FI_LOG_PROV", "nothing", 1);
	weft_log_configure();
	capture_start(&cap);
	weft_sparse_site(3000);
	out = capture_stop(&cap);
	assert_int_equal(capture_count(out, "weft-sparse"), 0);
	capture_free(&cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, reset, reset)
		T(test_default_level),
		T(test_levels),
		T(test_level_malformed),
		T(test_prov_filter),
		T(test_subsys_filter),
		T(test_format),
		T(test_log_ready),
		T(test_sparse_macro),
		T(test_weft_sparse),
#undef T
	};

	weft_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
