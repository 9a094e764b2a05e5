/* SPDX-License-Identifier: MIT */
/*
 * shm keeps no state at fabric level: util's fabric with shm's ops.
 */
#include "weft/compat.h"

#include "shm.h"
#include "weft/util_fabric.h"
#include "weft/util_noop.h"
#include "weft/util_eq.h"

static const struct fi_ops_fabric shm_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = shm_domain_open,
	.passive_ep = util_no_passive_ep,
	.eq_open = util_eq_open,
	.wait_open = util_no_wait_open,
	.trywait = util_fabric_trywait,
	.domain2 = util_no_domain2,
};

int shm_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	return util_fabric_open(&shm_prov, attr, &shm_fabric_ops, fabric,
				context);
}
