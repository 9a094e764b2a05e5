/* SPDX-License-Identifier: MIT */
/*
 * Fabric base. A provider either uses util_fabric_open() as its
 * fi_fabric entry point (no provider state at fabric level), or embeds
 * struct util_fabric in its own fabric and calls util_fabric_init/_fini.
 *
 * Suggested provider ops table:
 *   .domain = <prov>_domain_open, .passive_ep = util_no_passive_ep,
 *   .eq_open = util_eq_open, .wait_open = util_no_wait_open,
 *   .trywait = util_fabric_trywait, .domain2 = util_no_domain2
 */
#ifndef WEFT_UTIL_FABRIC_H
#define WEFT_UTIL_FABRIC_H

#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_lock.h"
#include <stdatomic.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/providers/fi_prov.h>

struct util_fabric {
	struct fid_fabric fabric_fid;
	const struct fi_provider *prov;
	char *name;		/* copy of attr->name */
	uint32_t api_version;	/* attr->api_version, or the provider's */
	atomic_int ref;		/* open domains and EQs */
	struct util_lock lock;	/* always a real lock (control path) */
};

static inline struct util_fabric *to_util_fabric(struct fid_fabric *fabric)
{
	return container_of(fabric, struct util_fabric, fabric_fid);
}

/* The provider util logs under for this fabric and its EQs: they are that
 * provider's objects, so FI_LOG_PROV=<provider> must show util's warnings
 * about them. Core's when there is no fabric (a NULL argument). */
static inline const struct fi_provider *
util_fabric_prov(const struct util_fabric *fabric)
{
	return fabric && fabric->prov ? fabric->prov : &weft_core_prov;
}

/* Fills fabric_fid (fclass FI_CLASS_FABRIC, context, ops). fid_ops->close
 * is the provider's, which calls util_fabric_fini then frees. Returns 0,
 * -FI_EINVAL (NULL attr/prov) or -FI_ENOMEM. */
int util_fabric_init(struct util_fabric *fabric, const struct fi_provider *prov,
		     const struct fi_fabric_attr *attr,
		     const struct fi_ops *fid_ops,
		     const struct fi_ops_fabric *ops, void *context);

/* -FI_EBUSY while domains or EQs are open; 0 after freeing util state. */
int util_fabric_fini(struct util_fabric *fabric);

/* Whole fi_fabric for providers without fabric state: allocates a
 * util_fabric whose close frees it. */
int util_fabric_open(const struct fi_provider *prov,
		     struct fi_fabric_attr *attr, const struct fi_ops_fabric *ops,
		     struct fid_fabric **fabric, void *context);

/* fi_trywait over util CQs, counters and EQs: -FI_EAGAIN if any has
 * something to read (after running progress), else arms all and returns 0;
 * -FI_EINVAL for fids that are not util objects with an FD wait. */
int util_fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
			int count);

#endif /* WEFT_UTIL_FABRIC_H */
