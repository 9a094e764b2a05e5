/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the files of core/ only.
 */
#ifndef WEFT_CORE_PRIV_H
#define WEFT_CORE_PRIV_H

#include "weft/core.h"
#include <stddef.h>
#include <stdint.h>

#define WEFT_API_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* A provider name filter in FI_PROVIDER / FI_LOG_PROV syntax:
 * "a,b" keeps a and b, "^a,b" keeps everything but a and b. A malformed
 * spec (empty element, stray '^') matches nothing. */
struct weft_filter {
	char **names;
	size_t count;
	int exclude;
	int malformed;
};

/* 0, -FI_EINVAL when malformed (the filter then matches nothing; the
 * caller logs, since the log module uses filters while configuring
 * itself), or -FI_ENOMEM. A NULL or empty spec matches everything. */
int weft_filter_init(struct weft_filter *filter, const char *spec);
int weft_filter_match(const struct weft_filter *filter, const char *name);
void weft_filter_fini(struct weft_filter *filter);

/* Every capability bit fi_getinfo(3) of API 1.17 defines. */
uint64_t weft_caps_known(void);

/* Registry. */
void weft_prov_init_builtin(void);
void weft_prov_cleanup_all(void);
/* A copy of the provider list in preference order (free() the array). */
int weft_prov_snapshot(struct fi_provider ***provs, size_t *count);
struct fi_provider *weft_prov_find(const char *name);

/* Core's settings (FI_LOG_*, FI_PROVIDER): fi_param_define each one. */
void weft_core_settings_define(void);

/* Log. weft_log_configure never logs; weft_log_report_settings warns
 * about malformed FI_LOG_* values once logging works. */
#define WEFT_LOG_INTERVAL_DEFAULT_MS 2000
void weft_log_report_settings(void);
void weft_log_fini(void);

/* Params. The env value of a defined-or-not param, without logging (the
 * log module reads its own settings through it). */
const char *weft_param_env(const struct fi_provider *prov, const char *name);
/* "FI_SRD_CQ_BATCH" for ("srd", "cq_batch"), FI_<NAME> for core; free() it. */
char *weft_param_env_name(const struct fi_provider *prov, const char *name);
void weft_param_fini(void);
/* fi_param_get's parsers: 0, or -FI_EINVAL for a malformed value. */
int weft_param_parse_bool(const char *str, int *value);
int weft_param_parse_int(const char *str, int *value);
int weft_param_parse_size(const char *str, size_t *value);

/* True while weft_init runs on this thread (see weft_init). */
int weft_init_running(void);

#endif /* WEFT_CORE_PRIV_H */
