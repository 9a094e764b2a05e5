/* SPDX-License-Identifier: MIT */
/*
 * What core/ offers to the rest of weft (never to applications).
 */
#ifndef WEFT_CORE_H
#define WEFT_CORE_H

#include "weft/compat.h"
#include "weft/log.h"

/* Run once before any entry point does real work: reads log settings,
 * defines core params, initialises the built-in providers in preference
 * order. Idempotent and thread safe (pthread_once). A provider's init runs
 * inside weft_init, so it may call fi_param_* and log, but must not call
 * fi_getinfo/fi_fabric (those return -FI_ENODATA while init is running on
 * the same thread rather than deadlocking). */
void weft_init(void);

/* Add a provider after the built-ins (lowest preference). Unit tests use it
 * to register fake providers. Returns 0, or -FI_EINVAL (NULL, no name, no
 * getinfo) / -FI_EALREADY (a provider of that name is registered). */
int weft_prov_register(struct fi_provider *prov);

/* Drop every provider registered with weft_prov_register (tests); runs
 * their cleanup hooks. */
void weft_prov_unregister_all_extra(void);

/* Provider init functions, one per built-in provider (fi_prov_ini style):
 * return the provider, or NULL when it cannot run on this host. The registry
 * lists them directly (every provider is always built), so a provider left
 * out of the link is a link error, not a provider silently missing.
 * Preference order: srd, shm, tcp. */
struct fi_provider *srd_prov_init(void);
struct fi_provider *shm_prov_init(void);
struct fi_provider *tcp_prov_init(void);

/* Core's check of hints against one info that a provider offers: 1 when the
 * info can serve the hints, 0 when not (the reason is logged at FI_LOG_INFO).
 * On a match the info is narrowed to what the hints asked (caps, mode,
 * threading, progress, av_type, mr_mode, ...). hints may be NULL. */
int weft_info_match(uint32_t version, const struct fi_info *hints,
		    struct fi_info *info);

/* Re-read FI_LOG_LEVEL / FI_LOG_PROV / FI_LOG_SUBSYS / FI_LOG_INTERVAL.
 * weft_init does it once; tests call it after changing the environment. */
void weft_log_configure(void);

/* FI_POLL_YIELD: empty fi_cq_read calls in a row after which the caller
 * yields its CPU once (0: never). Read at weft_init. */
#define WEFT_POLL_YIELD_DEFAULT 1000
extern unsigned int weft_poll_yield;

/* The launcher's identity of this process's job, the same string in every
 * process of one job: PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid,
 * OMPI_MCA_orte_ess_jobid, FLUX_JOB_ID (the first set), or
 * "<SLURM_JOB_ID>.<SLURM_STEP_ID>" when srun set both. Copied into buf
 * (cut to fit: the same cut in every process of the job); returns the name
 * of what it came from, or NULL when no launcher started this process.
 * Read from the environment at every call: callers keep what they need. */
const char *weft_job_identity(char *buf, size_t size);

/* A buffer of WEFT_TBUF_SIZE bytes private to the calling thread, one per
 * kind, for API calls that return a string they own. Never NULL. */
#define WEFT_TBUF_SIZE 8192	/* fi_tostr's limit in libfabric */
enum weft_tbuf {
	WEFT_TBUF_TOSTR,
	WEFT_TBUF_STRERROR,
	WEFT_TBUF_COUNT
};
char *weft_thread_buf(enum weft_tbuf which);

#endif /* WEFT_CORE_H */
