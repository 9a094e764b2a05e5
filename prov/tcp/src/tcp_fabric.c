/* SPDX-License-Identifier: MIT */
/*
 * tcp keeps no state at fabric level: util's fabric with tcp's ops.
 */
#include "weft/compat.h"

#include "tcp.h"

static const struct fi_ops_fabric tcp_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = tcp_domain_open,
	.passive_ep = util_no_passive_ep,
	.eq_open = util_eq_open,
	.wait_open = util_no_wait_open,
	.trywait = util_fabric_trywait,
	.domain2 = util_no_domain2,
};

int tcp_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	return util_fabric_open(&tcp_prov, attr, &tcp_fabric_ops, fabric,
				context);
}
