/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_fabric.h"
#include "weft/util_cq.h"
#include "weft/util_cntr.h"
#include "weft/util_eq.h"
#include "weft/util_noop.h"
#include <stdlib.h>
#include <string.h>

int util_fabric_init(struct util_fabric *fabric, const struct fi_provider *prov,
		     const struct fi_fabric_attr *attr,
		     const struct fi_ops *fid_ops,
		     const struct fi_ops_fabric *ops, void *context)
{
	int ret;

	if (!prov || !attr || !fid_ops || !ops) {
		FI_WARN(prov ? prov : &weft_core_prov, FI_LOG_FABRIC,
			"fabric init: NULL provider, attr or ops\n");
		return -FI_EINVAL;
	}
	memset(fabric, 0, sizeof(*fabric));
	fabric->prov = prov;
	fabric->api_version = attr->api_version ? attr->api_version :
			      prov->fi_version;
	if (attr->name) {
		fabric->name = strdup(attr->name);
		if (!fabric->name)
			return -FI_ENOMEM;
	}
	ret = util_lock_init(&fabric->lock, true);
	if (ret) {
		free(fabric->name);
		return ret;
	}
	atomic_init(&fabric->ref, 0);
	fabric->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fabric->fabric_fid.fid.context = context;
	fabric->fabric_fid.fid.ops = UTIL_OPS(fid_ops);
	fabric->fabric_fid.ops = UTIL_OPS(ops);
	fabric->fabric_fid.api_version = fabric->api_version;
	return 0;
}

int util_fabric_fini(struct util_fabric *fabric)
{
	if (atomic_load(&fabric->ref)) {
		FI_WARN(util_fabric_prov(fabric), FI_LOG_FABRIC,
			"fabric close with %d open domains/EQs\n",
			atomic_load(&fabric->ref));
		return -FI_EBUSY;
	}
	util_lock_fini(&fabric->lock);
	free(fabric->name);
	fabric->name = NULL;
	return 0;
}

static int util_fabric_close(struct fid *fid)
{
	struct util_fabric *fabric =
		container_of(fid, struct util_fabric, fabric_fid.fid);
	int ret = util_fabric_fini(fabric);

	if (ret)
		return ret;
	free(fabric);
	return 0;
}

static const struct fi_ops util_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_fabric_close,
	.bind = util_no_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

int util_fabric_open(const struct fi_provider *prov,
		     struct fi_fabric_attr *attr, const struct fi_ops_fabric *ops,
		     struct fid_fabric **fabric_fid, void *context)
{
	struct util_fabric *fabric;
	int ret;

	if (!fabric_fid) {
		FI_WARN(prov ? prov : &weft_core_prov, FI_LOG_FABRIC,
			"fabric: NULL fid\n");
		return -FI_EINVAL;
	}
	fabric = calloc(1, sizeof(*fabric));
	if (!fabric)
		return -FI_ENOMEM;
	ret = util_fabric_init(fabric, prov, attr, &util_fabric_fi_ops, ops,
			       context);
	if (ret) {
		free(fabric);
		return ret;
	}
	*fabric_fid = &fabric->fabric_fid;
	return 0;
}

/* 1: something to read, 0: nothing (armed), <0: not a util waitable. */
static int util_fabric_trywait_one(struct fid *fid)
{
	switch (fid->fclass) {
	case FI_CLASS_CQ: {
		struct util_cq *cq = container_of(fid, struct util_cq, cq_fid.fid);

		if (cq->wait.type != FI_WAIT_FD)
			return -FI_EINVAL;
		util_cq_progress(cq);
		util_wait_arm(&cq->wait);
		return util_cq_count(cq) ? 1 : 0;
	}
	case FI_CLASS_CNTR: {
		struct util_cntr *cntr =
			container_of(fid, struct util_cntr, cntr_fid.fid);

		if (cntr->wait.type != FI_WAIT_FD)
			return -FI_EINVAL;
		util_progress_run(&cntr->progress);
		util_wait_arm(&cntr->wait);
		/* A counter has no "unread" state: its fd fires on change. */
		return 0;
	}
	case FI_CLASS_EQ: {
		struct util_eq *eq = container_of(fid, struct util_eq, eq_fid.fid);

		if (eq->wait.type != FI_WAIT_FD)
			return -FI_EINVAL;
		util_wait_arm(&eq->wait);
		return eq->events ? 1 : 0;
	}
	default:
		return -FI_EINVAL;
	}
}

int util_fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
			int count)
{
	const struct fi_provider *prov =
		util_fabric_prov(fabric ? to_util_fabric(fabric) : NULL);
	int i, ret;

	if (count < 0 || (count && !fids)) {
		FI_WARN(prov, FI_LOG_FABRIC,
			"trywait: bad fid array\n");
		return -FI_EINVAL;
	}
	for (i = 0; i < count; i++) {
		ret = util_fabric_trywait_one(fids[i]);
		if (ret < 0) {
			FI_WARN(prov, FI_LOG_FABRIC,
				"trywait: fid %d (class %zu) has no fd wait object\n",
				i, fids[i]->fclass);
			return ret;
		}
		if (ret)
			return -FI_EAGAIN;
	}
	return 0;
}
