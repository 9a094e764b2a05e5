/* SPDX-License-Identifier: MIT */
/*
 * Library start-up and shut-down.
 */
#include "weft/compat.h"
#include <pthread.h>
#include <stdlib.h>
#include "core_priv.h"

struct fi_provider weft_core_prov = {
	.name = "core",
	.version = WEFT_API_VERSION,
	.fi_version = WEFT_API_VERSION,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static __thread int init_running;

int weft_init_running(void)
{
	return init_running;
}

unsigned int weft_poll_yield = WEFT_POLL_YIELD_DEFAULT;

static void init_core_params(void)
{
	int v;

	fi_param_define(&weft_core_prov, "provider", FI_PARAM_STRING,
			"Only use specified provider (default: all available)");
	fi_param_define(&weft_core_prov, "poll_yield", FI_PARAM_INT,
			"Empty fi_cq_read calls in a row after which the caller "
			"yields its CPU once (sched_yield), so that a peer "
			"process sharing the CPU runs; 0 never yields "
			"(default: " WEFT_STR(WEFT_POLL_YIELD_DEFAULT) ")");
	if (fi_param_get_int(&weft_core_prov, "poll_yield", &v) == FI_SUCCESS) {
		if (v >= 0)
			weft_poll_yield = (unsigned int)v;
		else
			FI_WARN(&weft_core_prov, FI_LOG_CORE,
				"FI_POLL_YIELD=%d: must be 0 or more, keeping %u\n",
				v, weft_poll_yield);
	}
}

/* Says which library answered: its lines look like libfabric's, so this
 * is how a user (and core/test/test_abi.sh) tells weft is loaded. */
static void init_banner(void)
{
	struct fi_provider **provs;
	size_t count;

	if (weft_prov_snapshot(&provs, &count))
		return;
	FI_INFO(&weft_core_prov, FI_LOG_CORE,
		"weft %s (libfabric API %d.%d): %zu built-in provider(s)\n",
		PACKAGE_VERSION, FI_MAJOR_VERSION, FI_MINOR_VERSION, count);
	free(provs);
}

static void init_once_fn(void)
{
	init_running = 1;
	weft_log_configure();
	weft_log_report_settings();
	init_core_params();
	weft_prov_init_builtin();
	init_banner();
	init_running = 0;
}

void weft_init(void)
{
	/* A provider's init calling back into an entry point would wait on
	 * its own pthread_once forever. */
	if (WEFT_UNLIKELY(init_running))
		return;
	pthread_once(&init_once, init_once_fn);
}

__attribute__((destructor))
static void weft_fini(void)
{
	weft_prov_cleanup_all();
	weft_param_fini();
	weft_log_fini();
}
