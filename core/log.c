/* SPDX-License-Identifier: MIT */
/*
 * fi_log and friends. Output matches libfabric 1.17 byte for byte in its
 * prefix, so scripts that grep libfabric logs work on weft:
 *   libfabric:<pid>:<sec>::<prov>:<subsys>:<func>():<line><level> <msg>
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "core_priv.h"

static const char *const log_levels[FI_LOG_MAX] = {
	[FI_LOG_WARN] = "warn",
	[FI_LOG_TRACE] = "trace",
	[FI_LOG_INFO] = "info",
	[FI_LOG_DEBUG] = "debug",
};

static const char *const log_subsys[FI_LOG_SUBSYS_MAX] = {
	[FI_LOG_CORE] = "core",
	[FI_LOG_FABRIC] = "fabric",
	[FI_LOG_DOMAIN] = "domain",
	[FI_LOG_EP_CTRL] = "ep_ctrl",
	[FI_LOG_EP_DATA] = "ep_data",
	[FI_LOG_AV] = "av",
	[FI_LOG_CQ] = "cq",
	[FI_LOG_EQ] = "eq",
	[FI_LOG_MR] = "mr",
	[FI_LOG_CNTR] = "cntr",
};

/* Written by weft_log_configure (once at init, or by tests between cases);
 * read without locks on every log call. */
static struct {
	int level;
	unsigned subsys_mask;
	struct weft_filter prov_filter;
	uint64_t interval_us;
	/* What was wrong, reported by weft_log_report_settings. */
	const char *bad_level;
	int bad_prov, bad_subsys, bad_interval;
	int configured;
} log_cfg = { .level = FI_LOG_WARN, .subsys_mask = ~0u,
	      .interval_us = WEFT_LOG_INTERVAL_DEFAULT_MS * 1000ull };

static int log_parse_level(const char *str)
{
	char *end;
	long num;

	for (int i = 0; i < FI_LOG_MAX; i++) {
		if (!strcasecmp(str, log_levels[i]))
			return i;
	}
	num = strtol(str, &end, 10);
	if (*str && !*end && num >= FI_LOG_WARN && num < FI_LOG_MAX)
		return (int)num;
	return -1;
}

static unsigned log_parse_subsys(const char *spec, int *bad)
{
	struct weft_filter filter;
	unsigned mask = 0;

	*bad = weft_filter_init(&filter, spec) != 0;
	for (int i = 0; i < FI_LOG_SUBSYS_MAX; i++) {
		if (weft_filter_match(&filter, log_subsys[i]))
			mask |= 1u << i;
	}
	weft_filter_fini(&filter);
	return mask;
}

/* Never logs: it runs before logging is configured. */
void weft_log_configure(void)
{
	const char *level, *prov, *subsys, *interval;
	char *end;
	long ms;

	weft_core_settings_define();
	level = weft_param_env(&weft_core_prov, "log_level");
	prov = weft_param_env(&weft_core_prov, "log_prov");
	subsys = weft_param_env(&weft_core_prov, "log_subsys");
	interval = weft_param_env(&weft_core_prov, "log_interval");

	log_cfg.bad_level = NULL;
	log_cfg.level = FI_LOG_WARN;
	if (level && *level) {
		int parsed = log_parse_level(level);

		if (parsed < 0)
			log_cfg.bad_level = level;
		else
			log_cfg.level = parsed;
	}

	weft_filter_fini(&log_cfg.prov_filter);
	log_cfg.bad_prov = weft_filter_init(&log_cfg.prov_filter, prov) == -FI_EINVAL;
	log_cfg.subsys_mask = log_parse_subsys(subsys, &log_cfg.bad_subsys);

	log_cfg.bad_interval = 0;
	log_cfg.interval_us = WEFT_LOG_INTERVAL_DEFAULT_MS * 1000ull;
	if (interval && *interval) {
		ms = strtol(interval, &end, 0);
		if (*end || ms < 0)
			log_cfg.bad_interval = 1;
		else
			log_cfg.interval_us = (uint64_t)ms * 1000;
	}
	log_cfg.configured = 1;
}

void weft_log_report_settings(void)
{
	if (log_cfg.bad_level)
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"FI_LOG_LEVEL=%s is not warn, trace, info, debug or 0-3; using warn\n",
			log_cfg.bad_level);
	if (log_cfg.bad_prov)
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"FI_LOG_PROV is malformed (expected name[,name] or ^name[,name]); logging no provider\n");
	if (log_cfg.bad_subsys)
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"FI_LOG_SUBSYS is malformed (expected name[,name] or ^name[,name]); logging no subsystem\n");
	if (log_cfg.bad_interval)
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"FI_LOG_INTERVAL is not a number of ms; using %d\n",
			WEFT_LOG_INTERVAL_DEFAULT_MS);
}

void weft_log_fini(void)
{
	weft_filter_fini(&log_cfg.prov_filter);
}

WEFT_EXPORT
int fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level,
		   enum fi_log_subsys subsys)
{
	/* A provider may log before fi_getinfo ran weft_init (from a
	 * constructor, say): warnings still show, as libfabric's default. */
	if (WEFT_UNLIKELY(!log_cfg.configured))
		return level == FI_LOG_WARN;
	if ((int)level > log_cfg.level || (unsigned)level >= FI_LOG_MAX)
		return 0;
	if ((unsigned)subsys >= FI_LOG_SUBSYS_MAX ||
	    !(log_cfg.subsys_mask & (1u << subsys)))
		return 0;
	return weft_filter_match(&log_cfg.prov_filter, prov ? prov->name : NULL);
}

static uint64_t log_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

WEFT_EXPORT
int fi_log_ready(const struct fi_provider *prov, enum fi_log_level level,
		 enum fi_log_subsys subsys, uint64_t *showtime)
{
	uint64_t now;

	if (!fi_log_enabled(prov, level, subsys))
		return 0;
	if (!showtime)
		return 1;
	now = log_now_us();
	if (now < *showtime)
		return 0;
	*showtime = now + log_cfg.interval_us;
	return 1;
}

WEFT_EXPORT
void fi_log(const struct fi_provider *prov, enum fi_log_level level,
	    enum fi_log_subsys subsys, const char *func, int line,
	    const char *fmt, ...)
{
	char buf[1024];
	va_list args;
	int len;

	len = snprintf(buf, sizeof(buf), "libfabric:%d:%ld::%s:%s:%s():%d<%s> ",
		       (int)getpid(), (long)time(NULL),
		       prov && prov->name ? prov->name : "core",
		       (unsigned)subsys < FI_LOG_SUBSYS_MAX ? log_subsys[subsys] : "unknown",
		       func ? func : "", line,
		       (unsigned)level < FI_LOG_MAX ? log_levels[level] : "unknown");
	if (len < 0)
		return;
	if ((size_t)len < sizeof(buf)) {
		va_start(args, fmt);
		vsnprintf(buf + len, sizeof(buf) - (size_t)len, fmt, args);
		va_end(args);
	}
	/* Prefix and message in one stdio call, so lines of concurrent
	 * loggers do not interleave mid-line. */
	fputs(buf, stderr);
}

void weft_log_sparse(const struct fi_provider *prov,
		     enum fi_log_subsys subsys, struct weft_log_sparse *s,
		     const char *func, int line, const char *fmt, ...)
{
	uint64_t now, next, n;
	char msg[768];
	va_list args;
	size_t len;

	if (!fi_log_enabled(prov, FI_LOG_WARN, subsys))
		return;
	now = log_now_us();
	next = atomic_load_explicit(&s->next_us, memory_order_relaxed);
	/* One thread of those that get here at once logs; the others
	 * count themselves for the next line. */
	if (now < next ||
	    !atomic_compare_exchange_strong_explicit(
		    &s->next_us, &next, now + log_cfg.interval_us,
		    memory_order_relaxed, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&s->dropped, 1, memory_order_relaxed);
		return;
	}
	n = atomic_exchange_explicit(&s->dropped, 0, memory_order_relaxed);
	va_start(args, fmt);
	vsnprintf(msg, sizeof(msg), fmt, args);
	va_end(args);
	len = strlen(msg);
	if (len && msg[len - 1] == '\n')
		msg[--len] = '\0';
	if (n)
		fi_log(prov, FI_LOG_WARN, subsys, func, line,
		       "%s (and %llu more like it since the last such line)\n",
		       msg, (unsigned long long)n);
	else
		fi_log(prov, FI_LOG_WARN, subsys, func, line, "%s\n", msg);
}
