/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_domain.h"
#include "weft/util_eq.h"
#include "weft/util_wait.h"
#include "weft/util_atomic.h"
#include "weft/util_noop.h"
#include <stdlib.h>
#include <string.h>

/* API < 1.5 expressed mr_mode as FI_MR_BASIC / FI_MR_SCALABLE. */
static uint64_t util_domain_mr_mode(int mr_mode)
{
	switch (mr_mode) {
	case FI_MR_BASIC:
		return FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
	case FI_MR_SCALABLE:
		return 0;
	default:
		return (uint64_t)mr_mode;
	}
}

int util_domain_init(struct util_domain *domain, struct util_fabric *fabric,
		     const struct fi_info *info, const struct fi_ops *fid_ops,
		     const struct fi_ops_domain *ops, void *context)
{
	const struct fi_domain_attr *attr;
	int ret;

	if (!fabric || !info || !info->domain_attr || !fid_ops || !ops) {
		FI_WARN(util_fabric_prov(fabric), FI_LOG_DOMAIN,
			"domain init: NULL fabric, info, domain_attr or ops\n");
		return -FI_EINVAL;
	}
	attr = info->domain_attr;
	memset(domain, 0, sizeof(*domain));
	domain->fabric = fabric;
	domain->prov = fabric->prov;
	domain->api_version = fabric->api_version;
	domain->threading = attr->threading == FI_THREAD_UNSPEC ?
			    FI_THREAD_SAFE : attr->threading;
	domain->thread_safe = util_threading_needs_lock(domain->threading);
	domain->caps = info->caps;
	domain->mode = info->mode;
	domain->mr_mode = util_domain_mr_mode(attr->mr_mode);
	domain->av_type = attr->av_type;
	domain->cq_data_size = attr->cq_data_size;
	domain->wait_spin_ns = UTIL_WAIT_SPIN_NS_DEFAULT;
	domain->wait_slice_ms = 1;
	atomic_init(&domain->ref, 0);
	if (attr->name) {
		domain->name = strdup(attr->name);
		if (!domain->name)
			return -FI_ENOMEM;
	}
	ret = util_lock_init(&domain->lock, domain->thread_safe);
	if (ret)
		goto free_name;
	ret = util_mr_map_init(&domain->mr_map, domain->mr_mode,
			       domain->thread_safe);
	if (ret)
		goto fini_lock;
	ret = util_progress_list_init(&domain->eps, domain->thread_safe);
	if (ret)
		goto fini_mr;

	domain->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	domain->domain_fid.fid.context = context;
	domain->domain_fid.fid.ops = UTIL_OPS(fid_ops);
	domain->domain_fid.ops = UTIL_OPS(ops);
	domain->domain_fid.mr = UTIL_OPS(&util_mr_ops);
	atomic_fetch_add(&fabric->ref, 1);
	return 0;

fini_mr:
	util_mr_map_fini(&domain->mr_map);
fini_lock:
	util_lock_fini(&domain->lock);
free_name:
	free(domain->name);
	return ret;
}

int util_domain_fini(struct util_domain *domain)
{
	if (atomic_load(&domain->ref)) {
		FI_WARN(util_domain_prov(domain), FI_LOG_DOMAIN,
			"domain close with %d open objects\n",
			atomic_load(&domain->ref));
		return -FI_EBUSY;
	}
	if (domain->eq)
		atomic_fetch_sub(&domain->eq->ref, 1);
	util_progress_list_fini(&domain->eps);
	util_mr_map_fini(&domain->mr_map);
	util_lock_fini(&domain->lock);
	atomic_fetch_sub(&domain->fabric->ref, 1);
	free(domain->name);
	domain->name = NULL;
	return 0;
}

int util_domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct util_domain *domain =
		container_of(fid, struct util_domain, domain_fid.fid);
	struct util_eq *eq;

	if (!bfid || bfid->fclass != FI_CLASS_EQ) {
		FI_WARN(util_domain_prov(domain), FI_LOG_DOMAIN,
			"domain bind: only an EQ can be bound\n");
		return -FI_EINVAL;
	}
	eq = container_of(bfid, struct util_eq, eq_fid.fid);
	if (domain->eq) {
		FI_WARN(util_domain_prov(domain), FI_LOG_DOMAIN,
			"domain bind: an EQ is already bound\n");
		return -FI_EINVAL;
	}
	domain->eq = eq;
	atomic_fetch_add(&eq->ref, 1);
	return 0;
}

int util_domain_query_atomic(struct fid_domain *domain_fid,
			     enum fi_datatype datatype, enum fi_op op,
			     struct fi_atomic_attr *attr, uint64_t flags)
{
	struct util_domain *domain = to_util_domain(domain_fid);
	int ret;

	if (!attr) {
		FI_WARN(util_domain_prov(domain), FI_LOG_DOMAIN,
			"query_atomic: NULL attr\n");
		return -FI_EINVAL;
	}
	if (!domain->atomic_max_bytes)
		return -FI_EOPNOTSUPP;
	ret = util_atomic_query(datatype, op, attr, flags,
				domain->atomic_max_bytes);
	if (ret == -FI_EINVAL && (flags & FI_FETCH_ATOMIC) &&
	    (flags & FI_COMPARE_ATOMIC))
		FI_WARN(util_domain_prov(domain), FI_LOG_DOMAIN,
			"query_atomic: FI_FETCH_ATOMIC and FI_COMPARE_ATOMIC together\n");
	return ret;
}
