/* SPDX-License-Identifier: MIT */
/*
 * srd domain: util's domain (threading, CQs, counters, AV) on the device
 * its fi_info names (domain_attr->name, srd_devices.c), with srd_mr.c's registration (device keys) in place
 * of util's software MR map.
 */
#include "weft/compat.h"
#include "srd_rdm.h"

#include <stdlib.h>

static int srd_domain_close(struct fid *fid)
{
	struct srd_domain *d = container_of(fid, struct srd_domain,
					    util.domain_fid.fid);
	int ret = util_domain_fini(&d->util);

	if (ret)
		return ret;
	free(d);
	return 0;
}

static const struct fi_ops srd_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = srd_domain_close,
	.bind = util_domain_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static const struct fi_ops_domain srd_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = util_av_open,
	.cq_open = util_cq_open,
	.endpoint = srd_ep_open,
	.scalable_ep = util_no_scalable_ep,
	.cntr_open = util_cntr_open,
	.poll_open = util_poll_open,
	.stx_ctx = util_no_stx_ctx,
	.srx_ctx = util_no_srx_ctx,
	.query_atomic = util_domain_query_atomic,
	.query_collective = util_coll_query,
	.endpoint2 = util_no_endpoint2,
};

int srd_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain_fid, void *context)
{
	struct srd_domain *d;
	int ret;

	if (!info || !info->domain_attr) {
		FI_WARN(&srd_prov, FI_LOG_DOMAIN, "fi_domain without info\n");
		return -FI_EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	d->dev = srd_device_find(info->domain_attr->name, &ret);
	if (!d->dev)
		goto free_d;
	ret = util_domain_init(&d->util, to_util_fabric(fabric), info,
			       &srd_domain_fi_ops, &srd_domain_ops, context);
	if (ret)
		goto free_d;
	srd_proto_caps_from_dev(&d->dev->caps, &d->pc);
	d->util.av_prov = &srd_av_prov;
	d->util.strerror = srd_strerror;
	d->util.atomic_max_bytes = d->pc.eager_max / 2;
	d->util.domain_fid.mr = UTIL_OPS(&srd_mr_ops);
	*domain_fid = &d->util.domain_fid;
	return 0;

free_d:
	free(d);
	return ret;
}
