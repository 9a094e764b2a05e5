/* SPDX-License-Identifier: MIT */
/*
 * Poll sets (fi_poll(3)): a list of CQs and counters of one domain.
 * fi_poll runs the progress of each member (the endpoints bound to it, as
 * reading it would) and returns the contexts of those with events: a CQ
 * that is not empty, a counter whose value or error count changed since
 * the last fi_poll that reported it, fi_cntr_set or fi_cntr_add (the
 * counter keeps that baseline, util_cntr.poll_value/poll_err).
 *
 * A member cannot be closed while in a set (its close returns -FI_EBUSY),
 * and a set cannot be closed while it has members. Providers set
 * .poll_open = util_poll_open in their fi_ops_domain.
 */
#ifndef WEFT_UTIL_POLL_H
#define WEFT_UTIL_POLL_H

#include "weft/compat.h"
#include "weft/util_lock.h"
#include <rdma/fi_domain.h>

struct util_domain;

struct util_poll_member {
	struct util_poll_member *next;
	struct fid *fid;		/* FI_CLASS_CQ or FI_CLASS_CNTR */
};

struct util_poll {
	struct fid_poll poll_fid;
	struct util_domain *domain;
	struct util_poll_member *members;
	struct util_lock lock;		/* members */
};

int util_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		   struct fid_poll **pollset);

#endif /* WEFT_UTIL_POLL_H */
