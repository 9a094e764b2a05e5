/* SPDX-License-Identifier: MIT */
/*
 * fi_param_*: settings read from the environment. A param of provider
 * "srd" named "cq_batch" is FI_SRD_CQ_BATCH; core's (provider NULL or
 * "core") are FI_<NAME>. Definitions are kept in definition order so
 * fi_getparams (weft_info -e) lists them as providers declared them.
 */
#include "weft/compat.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <utlist.h>
#include "core_priv.h"

struct weft_param {
	char *env_name;
	char *help;
	enum fi_param_type type;
	struct weft_param *prev, *next;
};

static struct weft_param *param_list;
static pthread_mutex_t param_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *param_prov_name(const struct fi_provider *prov)
{
	return prov && prov->name ? prov->name : "core";
}

/* FI_<PROV>_<NAME> upper-cased; FI_<NAME> for core. Caller frees. */
char *weft_param_env_name(const struct fi_provider *prov, const char *name)
{
	const char *prov_name = param_prov_name(prov);
	char *env;
	int ret;

	if (!strcasecmp(prov_name, "core"))
		ret = asprintf(&env, "FI_%s", name);
	else
		ret = asprintf(&env, "FI_%s_%s", prov_name, name);
	if (ret < 0)
		return NULL;
	for (char *c = env; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	return env;
}

/* Called with param_lock held. */
static struct weft_param *param_find(const char *env_name)
{
	struct weft_param *param;

	DL_FOREACH(param_list, param) {
		if (!strcmp(param->env_name, env_name))
			return param;
	}
	return NULL;
}

const char *weft_param_env(const struct fi_provider *prov, const char *name)
{
	char *env_name = weft_param_env_name(prov, name);
	const char *value;

	if (!env_name)
		return NULL;
	value = getenv(env_name);
	free(env_name);
	return value;
}

static int param_valid_type(enum fi_param_type type)
{
	switch (type) {
	case FI_PARAM_STRING:
	case FI_PARAM_INT:
	case FI_PARAM_BOOL:
	case FI_PARAM_SIZE_T:
		return 1;
	}
	return 0;
}

static int param_valid_name(const char *name)
{
	if (!*name)
		return 0;
	for (const char *c = name; *c; c++) {
		if (!isalnum((unsigned char)*c) && *c != '_')
			return 0;
	}
	return 1;
}

WEFT_EXPORT
int fi_param_define(const struct fi_provider *provider, const char *param_name,
		    enum fi_param_type type, const char *help_string_fmt, ...)
{
	struct weft_param *param;
	va_list args;
	int ret;

	if (!param_name || !param_valid_name(param_name) ||
	    !param_valid_type(type) || !help_string_fmt) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"fi_param_define: invalid param (provider %s, name %s, type %d)\n",
			param_prov_name(provider), param_name ? param_name : "(null)",
			(int)type);
		return -FI_EINVAL;
	}

	param = calloc(1, sizeof(*param));
	if (!param)
		return -FI_ENOMEM;
	param->type = type;
	param->env_name = weft_param_env_name(provider, param_name);
	va_start(args, help_string_fmt);
	ret = vasprintf(&param->help, help_string_fmt, args);
	va_end(args);
	if (ret < 0)
		param->help = NULL;
	if (!param->env_name || !param->help) {
		ret = -FI_ENOMEM;
		goto free_param;
	}

	pthread_mutex_lock(&param_lock);
	/* Providers may be initialised more than once (tests); a second
	 * definition of the same setting keeps the first. */
	if (param_find(param->env_name)) {
		pthread_mutex_unlock(&param_lock);
		ret = 0;
		goto free_param;
	}
	DL_APPEND(param_list, param);
	pthread_mutex_unlock(&param_lock);
	return 0;

free_param:
	free(param->help);
	free(param->env_name);
	free(param);
	return ret;
}

int weft_param_parse_bool(const char *str, int *value)
{
	static const char *const no[] = { "0", "no", "false", "off" };
	static const char *const yes[] = { "1", "yes", "true", "on" };

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(no); i++) {
		if (!strcasecmp(str, no[i])) {
			*value = 0;
			return 0;
		}
		if (!strcasecmp(str, yes[i])) {
			*value = 1;
			return 0;
		}
	}
	return -FI_EINVAL;
}

int weft_param_parse_int(const char *str, int *value)
{
	char *end;
	long num;

	errno = 0;
	num = strtol(str, &end, 0);
	if (end == str || *end || errno || num < INT_MIN || num > INT_MAX)
		return -FI_EINVAL;
	*value = (int)num;
	return 0;
}

int weft_param_parse_size(const char *str, size_t *value)
{
	unsigned long long num;
	char *end;

	/* strtoull would quietly wrap "-1" to SIZE_MAX. */
	while (isspace((unsigned char)*str))
		str++;
	if (*str == '-')
		return -FI_EINVAL;
	errno = 0;
	num = strtoull(str, &end, 0);
	if (end == str || *end || errno || num > SIZE_MAX)
		return -FI_EINVAL;
	*value = (size_t)num;
	return 0;
}

static int param_parse(enum fi_param_type type, const char *str, void *value)
{
	switch (type) {
	case FI_PARAM_STRING:
		*(const char **)value = str;
		return 0;
	case FI_PARAM_INT:
		return weft_param_parse_int(str, value);
	case FI_PARAM_BOOL:
		return weft_param_parse_bool(str, value);
	case FI_PARAM_SIZE_T:
		return weft_param_parse_size(str, value);
	}
	return -FI_EINVAL;
}

static const char *const param_type_names[] = {
	[FI_PARAM_STRING] = "string",
	[FI_PARAM_INT] = "integer",
	[FI_PARAM_BOOL] = "boolean (0/1, on/off, true/false, yes/no)",
	[FI_PARAM_SIZE_T] = "size_t",
};

WEFT_EXPORT
int fi_param_get(struct fi_provider *provider, const char *param_name,
		 void *value)
{
	struct weft_param *param;
	enum fi_param_type type;
	const char *str;
	char *env_name;
	int ret;

	if (!param_name || !value) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"fi_param_get: NULL %s\n", param_name ? "value" : "name");
		return -FI_EINVAL;
	}
	env_name = weft_param_env_name(provider, param_name);
	if (!env_name)
		return -FI_ENOMEM;

	pthread_mutex_lock(&param_lock);
	param = param_find(env_name);
	type = param ? param->type : FI_PARAM_STRING;
	pthread_mutex_unlock(&param_lock);

	if (!param) {
		FI_INFO(&weft_core_prov, FI_LOG_CORE,
			"%s: param %s was never defined\n",
			param_prov_name(provider), param_name);
		ret = -FI_ENOENT;
		goto free_name;
	}

	str = getenv(env_name);
	if (!str) {
		FI_INFO(provider ? provider : &weft_core_prov, FI_LOG_CORE,
			"variable %s=<not set>\n", param_name);
		ret = -FI_ENODATA;
		goto free_name;
	}

	ret = param_parse(type, str, value);
	if (ret)
		FI_WARN(provider ? provider : &weft_core_prov, FI_LOG_CORE,
			"%s=%s is not a valid %s; ignored\n",
			env_name, str, param_type_names[type]);
	else
		FI_INFO(provider ? provider : &weft_core_prov, FI_LOG_CORE,
			"read %s var %s=%s\n", param_type_names[type], param_name, str);
free_name:
	free(env_name);
	return ret;
}

WEFT_EXPORT
int fi_getparams(struct fi_param **params, int *count)
{
	struct weft_param *param;
	struct fi_param *out;
	const char *value;
	int len = 0, i = 0;

	if (!params || !count)
		return -FI_EINVAL;
	weft_init();

	pthread_mutex_lock(&param_lock);
	DL_COUNT(param_list, param, len);
	/* One zeroed entry more: fi_freeparams stops at a NULL name. */
	out = calloc((size_t)len + 1, sizeof(*out));
	if (!out)
		goto unlock_nomem;
	DL_FOREACH(param_list, param) {
		out[i].type = param->type;
		out[i].name = strdup(param->env_name);
		out[i].help_string = strdup(param->help);
		value = getenv(param->env_name);
		out[i].value = value ? strdup(value) : NULL;
		if (!out[i].name || !out[i].help_string || (value && !out[i].value))
			goto free_out;
		i++;
	}
	pthread_mutex_unlock(&param_lock);
	*params = out;
	*count = len;
	return 0;

free_out:
	/* Entry i is partly filled; fi_freeparams frees the ones before. */
	free((void *)out[i].name);
	free((void *)out[i].help_string);
	free((void *)out[i].value);
	out[i].name = NULL;
	fi_freeparams(out);
unlock_nomem:
	pthread_mutex_unlock(&param_lock);
	return -FI_ENOMEM;
}

WEFT_EXPORT
void fi_freeparams(struct fi_param *params)
{
	if (!params)
		return;
	for (struct fi_param *p = params; p->name; p++) {
		free((void *)p->name);
		free((void *)p->help_string);
		free((void *)p->value);
	}
	free(params);
}

void weft_param_fini(void)
{
	struct weft_param *param, *tmp;

	pthread_mutex_lock(&param_lock);
	DL_FOREACH_SAFE(param_list, param, tmp) {
		DL_DELETE(param_list, param);
		free(param->help);
		free(param->env_name);
		free(param);
	}
	pthread_mutex_unlock(&param_lock);
}
