/* SPDX-License-Identifier: MIT */
/*
 * srd keeps no state at fabric level: util's fabric with srd's ops. The
 * devices are the provider's (opened once, srd_devices.c); each domain
 * uses the one its fi_info names.
 */
#include "weft/compat.h"
#include "srd_rdm.h"

static const struct fi_ops_fabric srd_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = srd_domain_open,
	.passive_ep = util_no_passive_ep,
	.eq_open = util_eq_open,
	.wait_open = util_no_wait_open,
	.trywait = util_fabric_trywait,
	.domain2 = util_no_domain2,
};

int srd_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	return util_fabric_open(&srd_prov, attr, &srd_fabric_ops, fabric,
				context);
}
