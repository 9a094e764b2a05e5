/* SPDX-License-Identifier: MIT */
/*
 * The logging entry points FI_WARN and WEFT_WARN_SPARSE need, for libFuzzer harnesses
 * that compile a parser's source file alone instead of linking the
 * library (core/test/fuzz_harness.sh). Every line is formatted, so the
 * sanitizers see the arguments of each log call the fuzzer reaches, and
 * then dropped: a fuzzer run logs millions of refusals.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

#include "weft/log.h"

int fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level,
		   enum fi_log_subsys subsys)
{
	(void)prov;
	(void)level;
	(void)subsys;
	return 1;
}

int fi_log_ready(const struct fi_provider *prov, enum fi_log_level level,
		 enum fi_log_subsys subsys, uint64_t *showtime)
{
	(void)showtime;
	return fi_log_enabled(prov, level, subsys);
}

void fi_log(const struct fi_provider *prov, enum fi_log_level level,
	    enum fi_log_subsys subsys, const char *func, int line,
	    const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	(void)prov;
	(void)level;
	(void)subsys;
	(void)func;
	(void)line;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
}

void weft_log_sparse(const struct fi_provider *prov,
		     enum fi_log_subsys subsys, struct weft_log_sparse *s,
		     const char *func, int line, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	(void)prov;
	(void)subsys;
	(void)s;
	(void)func;
	(void)line;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
}
