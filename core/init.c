/* SPDX-License-Identifier: MIT */
/*
 * Library start-up and shut-down.
 */
#include "weft/compat.h"
#include <pthread.h>
#include <stdlib.h>
#include "weft/settings.h"
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

/* Before weft_init reads FI_POLL_YIELD, so util objects made without it
 * (util's unit tests) still get the default. */
unsigned int weft_poll_yield = WEFT_POLL_YIELD_DEFAULT;

/* Core's settings. FI_LOG_* and FI_PROVIDER have no field: the log module
 * reads FI_LOG_* before logging works, and fi_getinfo reads FI_PROVIDER at
 * every call, both with their own syntax (levels, name filters); the table
 * defines and documents them. poll_yield's field is weft_poll_yield, the
 * base core_settings_read passes. */
static const struct weft_setting core_settings[] = {
	{ .name = "log_level", .type = WEFT_SETTING_STRING, .def_text = "warn",
	  .help = "Specify logging level: warn, trace, info, debug, or 0-3" },
	{ .name = "log_prov", .type = WEFT_SETTING_STRING, .def_text = "all",
	  .help = "Specify specific provider to log (name[,name], or "
		  "^name[,name]: all but those)" },
	{ .name = "log_subsys", .type = WEFT_SETTING_STRING, .def_text = "all",
	  .help = "Specify specific subsystem to log (name[,name], or "
		  "^name[,name]: all but those)" },
	{ .name = "log_interval", .type = WEFT_SETTING_INT,
	  .def = WEFT_LOG_INTERVAL_DEFAULT_MS,
	  .help = "Delay in ms between rate limited log messages" },
	{ .name = "provider", .type = WEFT_SETTING_STRING,
	  .def_text = "all available",
	  .help = "Only use specified provider (name[,name], or ^name[,name]: "
		  "all but those)" },
	{ .name = "poll_yield", .type = WEFT_SETTING_INT,
	  .offset = 0, .size = sizeof(weft_poll_yield),
	  .def = WEFT_POLL_YIELD_DEFAULT,
	  .help = "Empty fi_cq_read calls in a row after which the caller "
		  "yields its CPU once (sched_yield), so that a peer process "
		  "sharing the CPU runs; 0 never yields" },
};

void weft_core_settings_define(void)
{
	weft_settings_define(&weft_core_prov, core_settings,
			     WEFT_ARRAY_SIZE(core_settings));
}

/* Once logging works: the settings with a field. */
static void core_settings_read(void)
{
	weft_settings_read(&weft_core_prov, core_settings,
			   WEFT_ARRAY_SIZE(core_settings), &weft_poll_yield);
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
	core_settings_read();
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
