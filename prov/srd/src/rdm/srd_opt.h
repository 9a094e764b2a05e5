/* SPDX-License-Identifier: MIT */
/*
 * Endpoint options of include/weft/fi_ext_weft.h for srd.
 * srd_ep_getopt/srd_ep_setopt go into the endpoint's fi_ops_ep; they
 * answer the weft options and hand everything else to util_ep_getopt/
 * util_ep_setopt. srd_opt_get/srd_opt_set work on a decided poll choice
 * (exposed for tests).
 */
#ifndef SRD_OPT_H
#define SRD_OPT_H

#include "weft/compat.h"
#include "../dev/srd_dev.h"

#include <rdma/fi_endpoint.h>

int srd_ep_getopt(fid_t fid, int level, int optname, void *optval,
		  size_t *optlen);
int srd_ep_setopt(fid_t fid, int level, int optname, const void *optval,
		  size_t optlen);

/* 0, -FI_ENOPROTOOPT (not a weft option), -FI_ETOOSMALL (*optlen set to
 * the size needed), -FI_EINVAL, -FI_EOPNOTSUPP (set: cannot promise). */
int srd_opt_get(const struct srd_dev_poll_choice *c, int optname, void *optval,
		size_t *optlen);
int srd_opt_set(const struct srd_dev_poll_choice *c, int optname,
		const void *optval, size_t optlen);

#endif /* SRD_OPT_H */
