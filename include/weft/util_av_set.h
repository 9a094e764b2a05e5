/* SPDX-License-Identifier: MIT */
/*
 * AV sets (fi_av_set(3)): ordered subsets of an AV's addresses, the
 * membership of a collective group. util_av_open's AVs hand them out
 * (fi_ops_av.av_set = util_av_set_open); the collective engine
 * (util_coll.h) copies a set's members when an endpoint joins it, so a set
 * may change or close once the join was called.
 *
 * Rules (all local, no fabric traffic):
 *   - order is insertion order; union appends the new members at the end,
 *     intersect and diff keep the order of what stays, remove keeps the
 *     order of the rest;
 *   - an address appears at most once (insert of a member: -FI_EINVAL) and
 *     must be live in the AV when inserted;
 *   - set operations need both sets on the same AV (-FI_EINVAL);
 *   - creation: FI_UNIVERSE (every live address, in fi_addr order), a
 *     start_addr..end_addr range with a stride (FI_AV_TABLE only; removed
 *     addresses in the range are skipped), or empty (start_addr and
 *     end_addr FI_ADDR_NOTAVAIL). FI_*_SET flags are accepted (every
 *     collective is supported); communication keys are not
 *     (comm_key_size > 0: -FI_ENOSYS).
 *   - fi_av_set_addr gives an address that names the set in
 *     fi_join_collective (UTIL_COLL_SET_ADDR(id)).
 * An open set holds a reference on its AV (fi_close of the AV: -FI_EBUSY).
 */
#ifndef WEFT_UTIL_AV_SET_H
#define WEFT_UTIL_AV_SET_H

#include "weft/compat.h"
#include "weft/util_av.h"
#include <stddef.h>
#include <stdint.h>
#include <rdma/fi_collective.h>

/* Collective addresses: the top bits tell a set's address (from
 * fi_av_set_addr) and a group's (fi_mc_addr after a join) from each other
 * and from AV indices, the low bits are an id. */
#define UTIL_COLL_ADDR_KIND_MASK	(3ULL << 62)
#define UTIL_COLL_ADDR_SET		(2ULL << 62)
#define UTIL_COLL_ADDR_GROUP		(3ULL << 62)
#define UTIL_COLL_SET_ADDR(id)		(UTIL_COLL_ADDR_SET | (uint64_t)(id))

struct util_av_set {
	struct fid_av_set set_fid;
	struct util_av *av;
	fi_addr_t *addrs;		/* members in order */
	size_t count;
	size_t cap;
	uint64_t flags;			/* creation flags */
	uint64_t id;			/* for fi_av_set_addr */
};

static inline struct util_av_set *to_util_av_set(const struct fid_av_set *s)
{
	return container_of(s, struct util_av_set, set_fid);
}

/* fi_ops_av.av_set of util's AVs. */
int util_av_set_open(struct fid_av *av, struct fi_av_set_attr *attr,
		     struct fid_av_set **set, void *context);

/* Index of addr in set, or -1. */
long util_av_set_find(const struct util_av_set *set, fi_addr_t addr);

#endif /* WEFT_UTIL_AV_SET_H */
