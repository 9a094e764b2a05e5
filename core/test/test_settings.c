/* SPDX-License-Identifier: MIT */
/*
 * Settings tables: the help text fi_getparams lists (default and range from
 * the table), defaults, every type read from the environment, bad values
 * (a warning naming the setting and what it accepts, the default kept),
 * reading one setting, and tables that contradict themselves.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "weft/core.h"
#include "weft/settings.h"
#include "capture.h"

static struct fi_provider sprov = { .name = "tset",
				    .fi_version = FI_VERSION(1, 17) };

enum tcolor { TCOLOR_RED, TCOLOR_GREEN, TCOLOR_BLUE };

struct tsettings {
	bool flag;
	uint8_t small;
	unsigned int count;
	uint32_t slots;
	size_t bytes;
	uint16_t cells;
	enum tcolor color;
	const char *label;
	char iface[8];
};

static const char *const tcolor_names[] = { "red", "green", "blue", NULL };

#define TF(m) WEFT_SETTING_FIELD(struct tsettings, m)

static const struct weft_setting ttable[] = {
	{ .name = "flag", .type = WEFT_SETTING_BOOL, TF(flag), .def = 1,
	  .help = "A flag" },
	{ .name = "small", .type = WEFT_SETTING_INT, TF(small), .def = 8,
	  .max = 15, .help = "A small int" },
	{ .name = "count", .type = WEFT_SETTING_INT, TF(count), .def = 32,
	  .min = 1, .max = 256, .help = "A count" },
	{ .name = "slots", .type = WEFT_SETTING_INT, TF(slots), .def = 32,
	  .min = 2, .max = 4096, .flags = WEFT_SETTING_POW2,
	  .help = "Some slots" },
	{ .name = "bytes", .type = WEFT_SETTING_SIZE, TF(bytes), .def = 1024,
	  .min = 16, .help = "Some bytes" },
	{ .name = "cells", .type = WEFT_SETTING_SIZE, TF(cells), .def = 256,
	  .min = 128, .max = 4096, .multiple = 64, .help = "Cells" },
	{ .name = "color", .type = WEFT_SETTING_ENUM, TF(color),
	  .def = TCOLOR_GREEN, .names = tcolor_names, .help = "A color" },
	{ .name = "label", .type = WEFT_SETTING_STRING, TF(label),
	  .def_text = "no label", .help = "A label" },
	{ .name = "iface", .type = WEFT_SETTING_STRBUF, TF(iface),
	  .def_text = "all interfaces", .help = "An interface" },
	{ .name = "owned", .type = WEFT_SETTING_INT, .def = 7,
	  .help = "Read by its owner" },
};

#define TCOUNT WEFT_ARRAY_SIZE(ttable)

static const char *const tenv[] = {
	"FI_TSET_FLAG", "FI_TSET_SMALL", "FI_TSET_COUNT", "FI_TSET_SLOTS",
	"FI_TSET_BYTES", "FI_TSET_CELLS", "FI_TSET_COLOR", "FI_TSET_LABEL",
	"FI_TSET_IFACE", "FI_TSET_OWNED",
};

static int reset(void **state)
{
	for (size_t i = 0; i < WEFT_ARRAY_SIZE(tenv); i++)
		unsetenv(tenv[i]);
	return 0;
}

static int group_setup(void **state)
{
	assert_int_equal(weft_settings_check(ttable, TCOUNT), 0);
	weft_settings_define(&sprov, ttable, TCOUNT);
	return 0;
}

/* Read with the log captured; returns how many warnings name env. */
static int read_warned(struct tsettings *s, const char *env, const char *what)
{
	struct capture cap;
	const char *out;
	int n;

	memset(s, 0x5a, sizeof(*s));
	capture_start(&cap);
	weft_settings_read(&sprov, ttable, TCOUNT, s);
	out = capture_stop(&cap);
	n = capture_count(out, env);
	if (what)
		assert_int_equal(capture_count(out, what), n);
	assert_int_equal(capture_count(out, "<warn>"), n);
	capture_free(&cap);
	return n;
}

static void assert_defaults(const struct tsettings *s)
{
	assert_true(s->flag);
	assert_int_equal(s->small, 8);
	assert_int_equal(s->count, 32);
	assert_int_equal(s->slots, 32);
	assert_int_equal(s->bytes, 1024);
	assert_int_equal(s->cells, 256);
	assert_int_equal(s->color, TCOLOR_GREEN);
	assert_null(s->label);
	assert_string_equal(s->iface, "");
}

static const struct fi_param *find_param(const struct fi_param *params,
					 int count, const char *name)
{
	for (int i = 0; i < count; i++) {
		if (!strcmp(params[i].name, name))
			return &params[i];
	}
	return NULL;
}

static void test_help_from_table(void **state)
{
	static const struct {
		const char *name;
		enum fi_param_type type;
		const char *help;
	} want[] = {
		{ "FI_TSET_FLAG", FI_PARAM_BOOL, "A flag (default: yes)" },
		{ "FI_TSET_SMALL", FI_PARAM_INT, "A small int (default: 8; 0..15)" },
		{ "FI_TSET_COUNT", FI_PARAM_INT, "A count (default: 32; 1..256)" },
		{ "FI_TSET_SLOTS", FI_PARAM_INT,
		  "Some slots (default: 32; a power of two in 2..4096)" },
		{ "FI_TSET_BYTES", FI_PARAM_SIZE_T,
		  "Some bytes (default: 1024; at least 16)" },
		{ "FI_TSET_CELLS", FI_PARAM_SIZE_T,
		  "Cells (default: 256; a multiple of 64 in 128..4096)" },
		{ "FI_TSET_COLOR", FI_PARAM_STRING,
		  "A color (default: green; one of red, green, blue)" },
		{ "FI_TSET_LABEL", FI_PARAM_STRING, "A label (default: no label)" },
		{ "FI_TSET_IFACE", FI_PARAM_STRING,
		  "An interface (default: all interfaces)" },
		{ "FI_TSET_OWNED", FI_PARAM_INT, "Read by its owner (default: 7)" },
	};
	struct fi_param *params;
	const struct fi_param *p;
	int count;

	assert_int_equal(fi_getparams(&params, &count), 0);
	for (size_t i = 0; i < WEFT_ARRAY_SIZE(want); i++) {
		p = find_param(params, count, want[i].name);
		assert_non_null(p);
		assert_int_equal(p->type, want[i].type);
		assert_string_equal(p->help_string, want[i].help);
	}
	fi_freeparams(params);
}

static void test_defaults(void **state)
{
	struct tsettings s;

	memset(&s, 0x5a, sizeof(s));
	weft_settings_default(ttable, TCOUNT, &s);
	assert_defaults(&s);
	assert_int_equal(read_warned(&s, "FI_TSET", NULL), 0);
	assert_defaults(&s);
}

static void test_valid_values(void **state)
{
	struct tsettings s;

	setenv("FI_TSET_FLAG", "off", 1);
	setenv("FI_TSET_SMALL", "0", 1);
	setenv("FI_TSET_COUNT", "0x100", 1);
	setenv("FI_TSET_SLOTS", "4096", 1);
	setenv("FI_TSET_BYTES", "16", 1);
	setenv("FI_TSET_CELLS", "4096", 1);
	setenv("FI_TSET_COLOR", "BLUE", 1);
	setenv("FI_TSET_LABEL", "hello world", 1);
	setenv("FI_TSET_IFACE", "veth0", 1);
	setenv("FI_TSET_OWNED", "99", 1);
	assert_int_equal(read_warned(&s, "FI_TSET", NULL), 0);
	assert_false(s.flag);
	assert_int_equal(s.small, 0);
	assert_int_equal(s.count, 256);
	assert_int_equal(s.slots, 4096);
	assert_int_equal(s.bytes, 16);
	assert_int_equal(s.cells, 4096);
	assert_int_equal(s.color, TCOLOR_BLUE);
	assert_string_equal(s.label, "hello world");
	assert_string_equal(s.iface, "veth0");
}

static void test_bad_values(void **state)
{
	static const struct {
		const char *env, *value, *expect;
	} cases[] = {
		{ "FI_TSET_FLAG", "maybe", "expected a boolean" },
		{ "FI_TSET_SMALL", "16", "expected an integer, 0..15; keeping "
					 "the default (8)" },
		{ "FI_TSET_COUNT", "0", "expected an integer, 1..256" },
		{ "FI_TSET_COUNT", "-1", "expected an integer, 1..256" },
		{ "FI_TSET_COUNT", "12abc", "expected an integer, 1..256" },
		{ "FI_TSET_SLOTS", "48", "a power of two in 2..4096" },
		{ "FI_TSET_SLOTS", "8192", "a power of two in 2..4096" },
		{ "FI_TSET_BYTES", "15", "expected a size, at least 16; "
					 "keeping the default (1024)" },
		{ "FI_TSET_BYTES", "-16", "at least 16" },
		{ "FI_TSET_CELLS", "200", "a multiple of 64 in 128..4096" },
		{ "FI_TSET_CELLS", "64", "a multiple of 64 in 128..4096" },
		{ "FI_TSET_COLOR", "purple", "expected one of red, green, "
					     "blue; keeping the default (green)" },
		{ "FI_TSET_IFACE", "a-too-long-name",
		  "expected at most 7 characters; keeping the default (all "
		  "interfaces)" },
	};
	struct tsettings s;

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(cases); i++) {
		print_message("%s=%s\n", cases[i].env, cases[i].value);
		setenv(cases[i].env, cases[i].value, 1);
		assert_int_equal(read_warned(&s, cases[i].env, cases[i].expect),
				 1);
		assert_defaults(&s);
		unsetenv(cases[i].env);
	}
}

/* Unset and empty mean the default for enums and strings. */
static void test_empty_values(void **state)
{
	struct tsettings s;

	setenv("FI_TSET_COLOR", "", 1);
	setenv("FI_TSET_LABEL", "", 1);
	setenv("FI_TSET_IFACE", "", 1);
	assert_int_equal(read_warned(&s, "FI_TSET", NULL), 0);
	assert_defaults(&s);
	assert_int_equal(weft_setting_parse_enum(&ttable[6], NULL), TCOLOR_GREEN);
	assert_int_equal(weft_setting_parse_enum(&ttable[6], "Red"), TCOLOR_RED);
	assert_int_equal(weft_setting_parse_enum(&ttable[6], "redd"), -FI_EINVAL);
}

static void test_read_one(void **state)
{
	struct tsettings s;

	memset(&s, 0x5a, sizeof(s));
	setenv("FI_TSET_COUNT", "7", 1);
	setenv("FI_TSET_SMALL", "9", 1);
	assert_int_equal(weft_setting_read(&sprov, ttable, TCOUNT, "count", &s),
			 0);
	assert_int_equal(s.count, 7);
	assert_int_equal(s.small, 0x5a);	/* untouched */
	assert_int_equal(weft_setting_read(&sprov, ttable, TCOUNT, "nosuch",
					   &s), -FI_ENOENT);
	assert_ptr_equal(weft_setting_find(ttable, TCOUNT, "color"), &ttable[6]);
	assert_null(weft_setting_find(ttable, TCOUNT, "colour"));
}

static void test_inconsistent_tables(void **state)
{
	static const struct weft_setting bad[] = {
		{ .name = "def_out", .type = WEFT_SETTING_INT, TF(count),
		  .def = 0, .min = 1, .max = 4, .help = "x" },
		{ .name = "too_wide", .type = WEFT_SETTING_INT, TF(small),
		  .def = 1, .max = 1000, .help = "x" },
		{ .name = "unbounded_narrow", .type = WEFT_SETTING_SIZE,
		  TF(slots), .def = 1, .help = "x" },
		{ .name = "not_pow2", .type = WEFT_SETTING_INT, TF(slots),
		  .def = 3, .max = 8, .flags = WEFT_SETTING_POW2, .help = "x" },
		{ .name = "enum_def", .type = WEFT_SETTING_ENUM, TF(color),
		  .def = 3, .names = tcolor_names, .help = "x" },
		{ .name = "bool_def", .type = WEFT_SETTING_BOOL, TF(flag),
		  .def = 2, .help = "x" },
		{ .name = "str_field", .type = WEFT_SETTING_STRING, TF(small),
		  .help = "x" },
		{ .name = "no_help", .type = WEFT_SETTING_BOOL, TF(flag) },
	};
	struct capture cap;

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(bad); i++) {
		print_message("%s\n", bad[i].name ? bad[i].name : "(null)");
		capture_start(&cap);
		assert_int_equal(weft_settings_check(&bad[i], 1), -FI_EINVAL);
		assert_int_equal(capture_count(capture_stop(&cap),
					       "settings table"), 1);
		capture_free(&cap);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, reset, reset)
		T(test_help_from_table),
		T(test_defaults),
		T(test_valid_values),
		T(test_bad_values),
		T(test_empty_values),
		T(test_read_one),
		T(test_inconsistent_tables),
#undef T
	};

	weft_init();
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
