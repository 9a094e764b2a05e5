/* SPDX-License-Identifier: MIT */
/*
 * shm domain: util's domain (MR map, threading, atomics query) with shm's
 * endpoint and address-vector flavour. Registration needs no kernel work:
 * targets check keys and bounds themselves (util_mr_check) before any copy.
 */
#include "weft/compat.h"

#include <stdlib.h>

#include "shm.h"
#include "shm_proto.h"
#include "weft/util_domain.h"
#include "weft/util_noop.h"
#include "weft/util_cq.h"
#include "weft/util_cntr.h"
#include "weft/util_poll.h"
#include "weft/util_av.h"

static int shm_domain_close(struct fid *fid)
{
	struct shm_domain *domain = to_shm_domain(fid);
	int ret;

	ret = util_domain_fini(&domain->util);
	if (ret)
		return ret;
	free(domain);
	return 0;
}

static const struct fi_ops shm_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = shm_domain_close,
	.bind = util_domain_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static const struct fi_ops_domain shm_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = util_av_open,
	.cq_open = util_cq_open,
	.endpoint = shm_ep_open,
	.scalable_ep = util_no_scalable_ep,
	.cntr_open = util_cntr_open,
	.poll_open = util_poll_open,
	.stx_ctx = util_no_stx_ctx,
	.srx_ctx = shm_domain_srx_ctx,
	.query_atomic = util_domain_query_atomic,
	.query_collective = util_coll_query,
	.endpoint2 = util_no_endpoint2,
};

/* Operand and compare values travel together in one cell. */
static size_t shm_domain_atomic_max(void)
{
	size_t room = shm_cell_payload_max(shm_env.cell_size) -
		      sizeof(struct shm_amo);

	return (room / 2) & ~(size_t)15;
}

int shm_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain_fid, void *context)
{
	struct shm_domain *domain;
	int ret;

	if (!info || !info->domain_attr) {
		FI_WARN(&shm_prov, FI_LOG_DOMAIN, "fi_domain without info\n");
		return -FI_EINVAL;
	}
	domain = calloc(1, sizeof(*domain));
	if (!domain)
		return -FI_ENOMEM;
	ret = util_domain_init(&domain->util, to_util_fabric(fabric), info,
			       &shm_domain_fi_ops, &shm_domain_ops, context);
	if (ret)
		goto err_free;
	domain->util.av_prov = &shm_av_prov;
	domain->util.atomic_max_bytes = shm_domain_atomic_max();
	*domain_fid = &domain->util.domain_fid;
	return 0;

err_free:
	free(domain);
	return ret;
}
