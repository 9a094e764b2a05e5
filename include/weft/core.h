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
 * order. Idempotent and thread safe (pthread_once). */
void weft_init(void);

/* Add a provider after the built-ins (lowest preference). Unit tests use it
 * to register fake providers. Returns 0, or -FI_EINVAL / -FI_EALREADY. */
int weft_prov_register(struct fi_provider *prov);

/* Drop every provider registered with weft_prov_register (tests). */
void weft_prov_unregister_all_extra(void);

/* Provider init functions, one per built-in provider (fi_prov_ini style):
 * return the provider, or NULL when it cannot run on this host. */
struct fi_provider *shm_prov_init(void);

/* Core's check of hints against one info that a provider offers: 1 when the
 * info can serve the hints, 0 when not (the reason is logged at FI_LOG_INFO).
 * On a match the info is narrowed to what the hints asked (caps, mode, ...). */
int weft_info_match(uint32_t version, const struct fi_info *hints,
		    struct fi_info *info);

#endif /* WEFT_CORE_H */
