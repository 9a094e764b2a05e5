/* SPDX-License-Identifier: MIT */
/*
 * Domain base: embed struct util_domain in the provider's domain
 * (to_<prov>_domain(fid) = container_of(..., util.domain_fid)).
 *
 * util_domain_init fills domain_fid: fid.ops = the provider's fi_ops (whose
 * close calls util_domain_fini and frees), ops = the provider's
 * fi_ops_domain, mr = util's MR ops on the domain's MR map. Suggested
 * fi_ops_domain:
 *   .av_open = util_av_open, .cq_open = util_cq_open,
 *   .endpoint = <prov>_ep_open, .scalable_ep = util_no_scalable_ep,
 *   .cntr_open = util_cntr_open, .poll_open = util_poll_open,
 *   .stx_ctx = util_no_stx_ctx, .srx_ctx = util_no_srx_ctx,
 *   .query_atomic = util_domain_query_atomic (or util_no_query_atomic),
 *   .query_collective = util_no_query_collective,
 *   .endpoint2 = util_no_endpoint2
 * Suggested fi_ops: .close = <prov>_domain_close, .bind = util_domain_bind,
 *   .control = util_no_control, .ops_open = util_no_ops_open,
 *   .tostr = util_no_tostr, .ops_set = util_no_ops_set
 *
 * Children (AVs, CQs, counters, endpoints, MRs) hold a reference:
 * util_domain_fini returns -FI_EBUSY while any is open.
 */
#ifndef WEFT_UTIL_DOMAIN_H
#define WEFT_UTIL_DOMAIN_H

#include "weft/compat.h"
#include "weft/util_lock.h"
#include "weft/util_fabric.h"
#include "weft/util_mr.h"
#include "weft/util_progress.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <rdma/fi_domain.h>

struct util_av_prov;
struct util_eq;

/* Turns a provider error number (fi_cq_err_entry.prov_errno) and its
 * err_data into text, for fi_cq_strerror/fi_eq_strerror; writes into buf
 * (len bytes) and returns buf. fi_cq_strerror also calls it with buf NULL
 * (as fabtests do): it then returns text it owns. */
typedef const char *(*util_strerror_fn)(int prov_errno, const void *err_data,
					char *buf, size_t len);

struct util_domain {
	struct fid_domain domain_fid;
	struct util_fabric *fabric;
	const struct fi_provider *prov;
	char *name;
	uint32_t api_version;		/* from the fabric */
	enum fi_threading threading;
	bool thread_safe;		/* threading != FI_THREAD_DOMAIN */
	uint64_t caps;			/* info->caps */
	uint64_t mode;			/* info->mode */
	uint64_t mr_mode;		/* normalised: BASIC/SCALABLE mapped */
	enum fi_av_type av_type;	/* domain_attr->av_type */
	size_t cq_data_size;
	atomic_int ref;			/* open children */
	struct util_lock lock;		/* per threading level */
	struct util_mr_map mr_map;
	struct util_eq *eq;		/* fi_domain_bind(eq) */
	/* Every endpoint of the domain: a counter bound to a memory region
	 * (fi_mr_bind) counts RMA aimed at the region through any of them,
	 * so reading it progresses them all. */
	struct util_progress_list eps;

	/* Set by the provider after util_domain_init, before opening
	 * children: */
	const struct util_av_prov *av_prov;	/* required for util_av_open */
	util_strerror_fn strerror;		/* NULL: fi_strerror(prov_errno) */
	uint64_t wait_spin_ns;			/* default UTIL_WAIT_SPIN_NS_DEFAULT */
	int wait_slice_ms;			/* see util_wait.slice_ms; default 1 */
	size_t atomic_max_bytes;		/* per fi_atomic op; 0 = no atomics */
};

static inline struct util_domain *to_util_domain(struct fid_domain *domain)
{
	return container_of(domain, struct util_domain, domain_fid);
}

/* The provider util logs under for this domain and its children (AVs, CQs,
 * counters, endpoints, MRs), so FI_LOG_PROV=<provider> shows util's
 * warnings about that provider's objects. Core's for a NULL domain. */
static inline const struct fi_provider *
util_domain_prov(const struct util_domain *domain)
{
	return domain && domain->prov ? domain->prov : &weft_core_prov;
}

/* Copies what it needs from info (domain_attr must be set; name, threading,
 * mr_mode, av_type, cq_data_size, caps, mode). FI_THREAD_UNSPEC counts as
 * FI_THREAD_SAFE. Takes a reference on the fabric. Returns 0, -FI_EINVAL
 * (NULL info/domain_attr) or -FI_ENOMEM. */
int util_domain_init(struct util_domain *domain, struct util_fabric *fabric,
		     const struct fi_info *info, const struct fi_ops *fid_ops,
		     const struct fi_ops_domain *ops, void *context);

/* -FI_EBUSY while children are open; else releases util state and the
 * fabric reference. */
int util_domain_fini(struct util_domain *domain);

/* fi_domain_bind: an EQ (for asynchronous AV/MR events). */
int util_domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags);

/* fi_query_atomic through util_atomic_query with domain->atomic_max_bytes. */
int util_domain_query_atomic(struct fid_domain *domain,
			     enum fi_datatype datatype, enum fi_op op,
			     struct fi_atomic_attr *attr, uint64_t flags);

static inline void util_domain_ref(struct util_domain *domain)
{
	atomic_fetch_add(&domain->ref, 1);
}

static inline void util_domain_unref(struct util_domain *domain)
{
	atomic_fetch_sub(&domain->ref, 1);
}

#endif /* WEFT_UTIL_DOMAIN_H */
