/* SPDX-License-Identifier: MIT */
/*
 * Settings tables (weft/settings.h): definition, help text and reading,
 * all from the one description of each setting.
 */
#include "weft/compat.h"
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "weft/settings.h"
#include "core_priv.h"

#define SETTING_TEXT_MAX 1024	/* a help text */
#define SETTING_PART_MAX 256	/* a part: default, range or names */

static const char *const setting_kind[] = {
	[WEFT_SETTING_BOOL] = "a boolean (0/1, yes/no, on/off, true/false)",
	[WEFT_SETTING_INT] = "an integer",
	[WEFT_SETTING_SIZE] = "a size",
	[WEFT_SETTING_ENUM] = "one of",
	[WEFT_SETTING_STRING] = "a string",
	[WEFT_SETTING_STRBUF] = "a string",
};

static bool setting_numeric(const struct weft_setting *s)
{
	return s->type == WEFT_SETTING_INT || s->type == WEFT_SETTING_SIZE;
}

static uint64_t setting_type_max(const struct weft_setting *s)
{
	return s->type == WEFT_SETTING_INT ? (uint64_t)INT_MAX :
					      (uint64_t)SIZE_MAX;
}

static uint64_t setting_max(const struct weft_setting *s)
{
	return s->max ? s->max : setting_type_max(s);
}

static uint64_t setting_field_max(size_t size)
{
	return size >= sizeof(uint64_t) ? UINT64_MAX :
					  (1ull << (size * 8)) - 1;
}

static bool setting_value_ok(const struct weft_setting *s, uint64_t v)
{
	return v >= s->min && v <= setting_max(s) &&
	       (!s->multiple || !(v % s->multiple)) &&
	       (!(s->flags & WEFT_SETTING_POW2) || (v && !(v & (v - 1))));
}

/* "1..256", "at least 16", "a power of two in 2..4096", "a multiple of 64
 * in 128..1048576", or "" when any value of the type goes. */
static void setting_range(const struct weft_setting *s, char *buf,
			  size_t len)
{
	char prefix[64] = "", bounds[64] = "";
	uint64_t max = setting_max(s);

	if (s->flags & WEFT_SETTING_POW2)
		snprintf(prefix, sizeof(prefix), "a power of two");
	else if (s->multiple)
		snprintf(prefix, sizeof(prefix), "a multiple of %llu",
			 (unsigned long long)s->multiple);
	if (max != setting_type_max(s))
		snprintf(bounds, sizeof(bounds), "%llu..%llu",
			 (unsigned long long)s->min, (unsigned long long)max);
	else if (s->min)
		snprintf(bounds, sizeof(bounds), "at least %llu",
			 (unsigned long long)s->min);
	snprintf(buf, len, "%s%s%s", prefix,
		 *prefix && *bounds ? (max != setting_type_max(s) ? " in " :
				       ", ") : "", bounds);
}

/* "auto, efa, soft" */
static void setting_names(const struct weft_setting *s, char *buf,
			  size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; s->names[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? ", " : "", s->names[i]);
}

static void setting_default_text(const struct weft_setting *s, char *buf,
				 size_t len)
{
	switch (s->type) {
	case WEFT_SETTING_BOOL:
		snprintf(buf, len, "%s", s->def ? "yes" : "no");
		break;
	case WEFT_SETTING_INT:
	case WEFT_SETTING_SIZE:
		snprintf(buf, len, "%llu", (unsigned long long)s->def);
		break;
	case WEFT_SETTING_ENUM:
		snprintf(buf, len, "%s", s->names[s->def]);
		break;
	case WEFT_SETTING_STRING:
	case WEFT_SETTING_STRBUF:
		snprintf(buf, len, "%s", s->def_text ? s->def_text : "unset");
		break;
	}
}

/* What a valid value looks like: "an integer, 1..256", "one of auto, efa,
 * soft", "at most 15 characters". */
static void setting_expected(const struct weft_setting *s, char *buf,
			     size_t len)
{
	char detail[SETTING_PART_MAX];

	detail[0] = '\0';
	if (setting_numeric(s))
		setting_range(s, detail, sizeof(detail));
	else if (s->type == WEFT_SETTING_ENUM)
		setting_names(s, detail, sizeof(detail));
	if (s->type == WEFT_SETTING_STRBUF)
		snprintf(buf, len, "at most %zu characters", s->size - 1);
	else if (s->type == WEFT_SETTING_ENUM)
		snprintf(buf, len, "one of %s", detail);
	else
		snprintf(buf, len, "%s%s%s", setting_kind[s->type],
			 *detail ? ", " : "", detail);
}

/* "<help> (default: 32; 1..256)": the tail is what weft_info -e shows and
 * what the man page test compares with the man pages. */
static void setting_help(const struct weft_setting *s, char *buf, size_t len)
{
	char def[SETTING_PART_MAX], extra[SETTING_PART_MAX + 8];

	setting_default_text(s, def, sizeof(def));
	extra[0] = '\0';
	if (setting_numeric(s)) {
		setting_range(s, extra, sizeof(extra));
	} else if (s->type == WEFT_SETTING_ENUM) {
		char names[SETTING_PART_MAX];

		setting_names(s, names, sizeof(names));
		snprintf(extra, sizeof(extra), "one of %s", names);
	}
	snprintf(buf, len, "%s (default: %s%s%s)", s->help, def,
		 *extra ? "; " : "", extra);
}

static size_t setting_name_count(const struct weft_setting *s)
{
	size_t n = 0;

	while (s->names && s->names[n])
		n++;
	return n;
}

static const char *setting_check_one(const struct weft_setting *s)
{
	bool int_field = s->size == 1 || s->size == 2 || s->size == 4 ||
			 s->size == 8;

	if (!s->name || !*s->name || !s->help)
		return "no name or help";
	if (!s->size)	/* read by its owner: only the help is ours */
		return s->type == WEFT_SETTING_ENUM && !setting_name_count(s) ?
		       "no names" : NULL;
	switch (s->type) {
	case WEFT_SETTING_BOOL:
		return !int_field ? "field is not an integer" :
		       s->def > 1 ? "default is not 0 or 1" : NULL;
	case WEFT_SETTING_INT:
	case WEFT_SETTING_SIZE:
		if (!int_field)
			return "field is not an integer";
		if (setting_max(s) > setting_type_max(s) ||
		    setting_max(s) > setting_field_max(s->size))
			return "maximum does not fit the type or the field";
		return setting_value_ok(s, s->def) ? NULL :
		       "default is outside its own range";
	case WEFT_SETTING_ENUM:
		if (!int_field || !setting_name_count(s))
			return "no names, or field is not an integer";
		if (s->def >= setting_name_count(s) ||
		    setting_name_count(s) - 1 > setting_field_max(s->size))
			return "default or names do not fit";
		return NULL;
	case WEFT_SETTING_STRING:
		return s->size == sizeof(const char *) ? NULL :
		       "field is not a pointer";
	case WEFT_SETTING_STRBUF:
		return s->size >= 2 ? NULL : "buffer too small";
	}
	return "unknown type";
}

int weft_settings_check(const struct weft_setting *table, size_t count)
{
	const char *why;
	int ret = 0;

	for (size_t i = 0; i < count; i++) {
		why = setting_check_one(&table[i]);
		if (!why)
			continue;
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"settings table: %s: %s\n",
			table[i].name ? table[i].name : "(null)", why);
		ret = -FI_EINVAL;
	}
	return ret;
}

static enum fi_param_type setting_param_type(const struct weft_setting *s)
{
	switch (s->type) {
	case WEFT_SETTING_BOOL:
		return FI_PARAM_BOOL;
	case WEFT_SETTING_INT:
		return FI_PARAM_INT;
	case WEFT_SETTING_SIZE:
		return FI_PARAM_SIZE_T;
	default:
		return FI_PARAM_STRING;
	}
}

void weft_settings_define(const struct fi_provider *prov,
			  const struct weft_setting *table, size_t count)
{
	char help[SETTING_TEXT_MAX];

	for (size_t i = 0; i < count; i++) {
		if (weft_settings_check(&table[i], 1))
			continue;
		setting_help(&table[i], help, sizeof(help));
		fi_param_define(prov, table[i].name,
				setting_param_type(&table[i]), "%s", help);
	}
}

static void setting_store(const struct weft_setting *s, void *base,
			  uint64_t v)
{
	uint8_t *p = (uint8_t *)base + s->offset;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	/* memcpy: the field may be a bool, an enum or any unsigned width. */
	switch (s->size) {
	case 1:
		memcpy(p, &v8, 1);
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

static void setting_set_default(const struct weft_setting *s, void *base)
{
	char *p = (char *)base + s->offset;
	const char *none = NULL;

	if (!s->size)
		return;
	switch (s->type) {
	case WEFT_SETTING_STRING:
		memcpy(p, &none, sizeof(none));
		break;
	case WEFT_SETTING_STRBUF:
		p[0] = '\0';
		break;
	default:
		setting_store(s, base, s->def);
		break;
	}
}

void weft_settings_default(const struct weft_setting *table, size_t count,
			   void *base)
{
	for (size_t i = 0; i < count; i++)
		setting_set_default(&table[i], base);
}

int weft_setting_parse_enum(const struct weft_setting *s, const char *str)
{
	if (!str || !*str)
		return (int)s->def;
	for (size_t i = 0; s->names[i]; i++) {
		if (!strcasecmp(str, s->names[i]))
			return (int)i;
	}
	return -FI_EINVAL;
}

/* Parse str as s's type into *v (or the field, for strings): 0 or
 * -FI_EINVAL. */
static int setting_parse(const struct weft_setting *s, const char *str,
			 void *base, uint64_t *v)
{
	char *p = (char *)base + s->offset;
	size_t z;
	int i, ret;

	switch (s->type) {
	case WEFT_SETTING_STRING:
		if (*str)
			memcpy(p, &str, sizeof(str));
		return 1;
	case WEFT_SETTING_STRBUF:
		if (strlen(str) >= s->size)
			return -FI_EINVAL;
		memcpy(p, str, strlen(str) + 1);
		return 1;
	case WEFT_SETTING_ENUM:
		ret = weft_setting_parse_enum(s, str);
		*v = (uint64_t)ret;
		return ret < 0 ? ret : 0;
	case WEFT_SETTING_BOOL:
		ret = weft_param_parse_bool(str, &i);
		*v = (uint64_t)i;
		return ret;
	case WEFT_SETTING_INT:
		ret = weft_param_parse_int(str, &i);
		if (ret || i < 0)
			return -FI_EINVAL;
		*v = (uint64_t)i;
		return setting_value_ok(s, *v) ? 0 : -FI_EINVAL;
	case WEFT_SETTING_SIZE:
		ret = weft_param_parse_size(str, &z);
		*v = (uint64_t)z;
		return ret ? ret : setting_value_ok(s, *v) ? 0 : -FI_EINVAL;
	}
	return -FI_EINVAL;
}

static void setting_read_one(const struct fi_provider *prov,
			     const struct weft_setting *s, void *base)
{
	char expected[SETTING_PART_MAX + 32], def[SETTING_PART_MAX];
	const char *str = weft_param_env(prov, s->name);
	char *env;
	uint64_t v = 0;
	int ret;

	setting_set_default(s, base);
	if (!str || !s->size)
		return;
	env = weft_param_env_name(prov, s->name);
	ret = setting_parse(s, str, base, &v);
	if (ret < 0) {
		setting_expected(s, expected, sizeof(expected));
		setting_default_text(s, def, sizeof(def));
		FI_WARN(prov, FI_LOG_CORE,
			"%s=%s: expected %s; keeping the default (%s)\n",
			env ? env : s->name, str, expected, def);
	} else {
		if (!ret)
			setting_store(s, base, v);
		FI_INFO(prov, FI_LOG_CORE, "%s=%s\n", env ? env : s->name, str);
	}
	free(env);
}

void weft_settings_read(const struct fi_provider *prov,
			const struct weft_setting *table, size_t count,
			void *base)
{
	for (size_t i = 0; i < count; i++)
		setting_read_one(prov, &table[i], base);
}

const struct weft_setting *weft_setting_find(const struct weft_setting *table,
					     size_t count, const char *name)
{
	for (size_t i = 0; i < count; i++) {
		if (!strcmp(table[i].name, name))
			return &table[i];
	}
	return NULL;
}

int weft_setting_read(const struct fi_provider *prov,
		      const struct weft_setting *table, size_t count,
		      const char *name, void *base)
{
	const struct weft_setting *s = weft_setting_find(table, count, name);

	if (!s)
		return -FI_ENOENT;
	setting_read_one(prov, s, base);
	return 0;
}
