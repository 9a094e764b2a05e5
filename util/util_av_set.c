/* SPDX-License-Identifier: MIT */
/*
 * fi_av_set: ordered subsets of an AV (rules in include/weft/util_av_set.h).
 * Control path: plain arrays, linear searches (sets are as large as a job).
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_av_set.h"
#include "weft/util_domain.h"
#include "weft/util_noop.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define UTIL_AV_SET_MIN_CAP 16
#define UTIL_AV_SET_FLAGS (FI_UNIVERSE | FI_BARRIER_SET | FI_BROADCAST_SET | \
			   FI_ALLTOALL_SET | FI_ALLREDUCE_SET |		\
			   FI_ALLGATHER_SET | FI_REDUCE_SCATTER_SET |	\
			   FI_REDUCE_SET | FI_SCATTER_SET | FI_GATHER_SET)

/* Ids for fi_av_set_addr: unique per process. */
static atomic_uint_fast64_t util_av_set_next_id = 1;

long util_av_set_find(const struct util_av_set *set, fi_addr_t addr)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		if (set->addrs[i] == addr)
			return (long)i;
	return -1;
}

static int util_av_set_reserve(struct util_av_set *set, size_t want)
{
	size_t cap = set->cap ? set->cap : UTIL_AV_SET_MIN_CAP;
	fi_addr_t *addrs;

	if (want <= set->cap)
		return 0;
	if (want > SIZE_MAX / 2 / sizeof(*addrs))
		return -FI_ENOMEM;
	while (cap < want)
		cap *= 2;
	addrs = realloc(set->addrs, cap * sizeof(*addrs));
	if (!addrs)
		return -FI_ENOMEM;
	set->addrs = addrs;
	set->cap = cap;
	return 0;
}

static int util_av_set_append(struct util_av_set *set, fi_addr_t addr)
{
	int ret = util_av_set_reserve(set, set->count + 1);

	if (ret)
		return ret;
	set->addrs[set->count++] = addr;
	return 0;
}

static int util_av_set_same_av(const struct util_av_set *dst,
			       const struct util_av_set *src, const char *what)
{
	if (dst->av == src->av)
		return 0;
	FI_WARN(util_domain_prov(dst->av->domain), FI_LOG_AV,
		"fi_av_set_%s: the sets belong to different AVs\n", what);
	return -FI_EINVAL;
}

static int util_av_set_union(struct fid_av_set *dst_fid,
			     const struct fid_av_set *src_fid)
{
	struct util_av_set *dst = to_util_av_set(dst_fid);
	const struct util_av_set *src = to_util_av_set(src_fid);
	size_t i;
	int ret = util_av_set_same_av(dst, src, "union");

	if (ret || dst == src)
		return ret;
	ret = util_av_set_reserve(dst, dst->count + src->count);
	for (i = 0; !ret && i < src->count; i++)
		if (util_av_set_find(dst, src->addrs[i]) < 0)
			dst->addrs[dst->count++] = src->addrs[i];
	return ret;
}

/* Keep the members of dst whose presence in src is keep_if_in. */
static void util_av_set_filter(struct util_av_set *dst,
			       const struct util_av_set *src, bool keep_if_in)
{
	size_t i, n = 0;

	for (i = 0; i < dst->count; i++)
		if ((util_av_set_find(src, dst->addrs[i]) >= 0) == keep_if_in)
			dst->addrs[n++] = dst->addrs[i];
	dst->count = n;
}

static int util_av_set_intersect(struct fid_av_set *dst_fid,
				 const struct fid_av_set *src_fid)
{
	struct util_av_set *dst = to_util_av_set(dst_fid);
	const struct util_av_set *src = to_util_av_set(src_fid);
	int ret = util_av_set_same_av(dst, src, "intersect");

	if (!ret && dst != src)
		util_av_set_filter(dst, src, true);
	return ret;
}

static int util_av_set_diff(struct fid_av_set *dst_fid,
			    const struct fid_av_set *src_fid)
{
	struct util_av_set *dst = to_util_av_set(dst_fid);
	const struct util_av_set *src = to_util_av_set(src_fid);
	int ret = util_av_set_same_av(dst, src, "diff");

	if (ret)
		return ret;
	if (dst == src)
		dst->count = 0;
	else
		util_av_set_filter(dst, src, false);
	return 0;
}

static int util_av_set_insert(struct fid_av_set *set_fid, fi_addr_t addr)
{
	struct util_av_set *set = to_util_av_set(set_fid);

	if (!util_av_slot(set->av, addr)) {
		FI_WARN(util_domain_prov(set->av->domain), FI_LOG_AV,
			"fi_av_set_insert: fi_addr %llu is not in the AV\n",
			(unsigned long long)addr);
		return -FI_EINVAL;
	}
	if (util_av_set_find(set, addr) >= 0) {
		FI_WARN(util_domain_prov(set->av->domain), FI_LOG_AV,
			"fi_av_set_insert: fi_addr %llu is already a member\n",
			(unsigned long long)addr);
		return -FI_EINVAL;
	}
	return util_av_set_append(set, addr);
}

static int util_av_set_remove(struct fid_av_set *set_fid, fi_addr_t addr)
{
	struct util_av_set *set = to_util_av_set(set_fid);
	long i = util_av_set_find(set, addr);

	if (i < 0) {
		FI_WARN(util_domain_prov(set->av->domain), FI_LOG_AV,
			"fi_av_set_remove: fi_addr %llu is not a member\n",
			(unsigned long long)addr);
		return -FI_EINVAL;
	}
	memmove(&set->addrs[i], &set->addrs[i + 1],
		(set->count - (size_t)i - 1) * sizeof(*set->addrs));
	set->count--;
	return 0;
}

static int util_av_set_addr(struct fid_av_set *set_fid, fi_addr_t *coll_addr)
{
	if (!coll_addr) {
		FI_WARN(util_domain_prov(to_util_av_set(set_fid)->av->domain),
			FI_LOG_AV, "fi_av_set_addr: NULL coll_addr\n");
		return -FI_EINVAL;
	}
	*coll_addr = UTIL_COLL_SET_ADDR(to_util_av_set(set_fid)->id);
	return 0;
}

static const struct fi_ops_av_set util_av_set_ops = {
	.size = sizeof(struct fi_ops_av_set),
	.set_union = util_av_set_union,
	.intersect = util_av_set_intersect,
	.diff = util_av_set_diff,
	.insert = util_av_set_insert,
	.remove = util_av_set_remove,
	.addr = util_av_set_addr,
};

static int util_av_set_close(struct fid *fid)
{
	struct util_av_set *set = container_of(fid, struct util_av_set,
					       set_fid.fid);

	atomic_fetch_sub(&set->av->ref, 1);
	free(set->addrs);
	free(set);
	return 0;
}

static const struct fi_ops util_av_set_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_av_set_close,
	.bind = util_no_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

/* Every live address of the AV, in fi_addr order. */
static int util_av_set_fill_universe(struct util_av_set *set)
{
	struct util_av *av = set->av;
	uint64_t idx, end;
	int ret = 0;

	util_lock_acquire(&av->lock);
	end = av->next_index;
	for (idx = 0; !ret && idx < end; idx++)
		if (util_av_slot(av, idx))
			ret = util_av_set_append(set, idx);
	util_lock_release(&av->lock);
	return ret;
}

static int util_av_set_fill_range(struct util_av_set *set,
				  const struct fi_av_set_attr *attr)
{
	uint64_t stride = attr->stride ? attr->stride : 1;
	fi_addr_t a, end = attr->end_addr;
	size_t n = 0;
	int ret = 0;

	if (set->av->type != FI_AV_TABLE) {
		FI_WARN(util_domain_prov(set->av->domain), FI_LOG_AV,
			"fi_av_set: start_addr/end_addr need an FI_AV_TABLE AV\n");
		return -FI_EINVAL;
	}
	if (attr->end_addr == FI_ADDR_NOTAVAIL ||
	    attr->end_addr < attr->start_addr) {
		FI_WARN(util_domain_prov(set->av->domain), FI_LOG_AV,
			"fi_av_set: end_addr %llu before start_addr %llu\n",
			(unsigned long long)attr->end_addr,
			(unsigned long long)attr->start_addr);
		return -FI_EINVAL;
	}
	util_lock_acquire(&set->av->lock);
	/* Indices past the AV's highest ever used hold nothing. */
	if (end >= set->av->next_index)
		end = set->av->next_index ? set->av->next_index - 1 : 0;
	for (a = attr->start_addr; !ret && a <= end; a += stride) {
		if (util_av_slot(set->av, a)) {
			ret = util_av_set_append(set, a);
			n++;
		}
		if (end - a < stride)
			break;
	}
	util_lock_release(&set->av->lock);
	if (!ret && attr->count && n > attr->count) {
		FI_WARN(util_domain_prov(set->av->domain), FI_LOG_AV,
			"fi_av_set: the range holds %zu addresses, count is "
			"%zu\n", n, attr->count);
		return -FI_EINVAL;
	}
	return ret;
}

static int util_av_set_check_attr(const struct fi_provider *prov,
				  const struct fi_av_set_attr *attr)
{
	if (attr->flags & ~(uint64_t)UTIL_AV_SET_FLAGS) {
		FI_WARN(prov, FI_LOG_AV,
			"fi_av_set: unknown flags 0x%llx\n",
			(unsigned long long)(attr->flags &
					     ~(uint64_t)UTIL_AV_SET_FLAGS));
		return -FI_EINVAL;
	}
	if (attr->comm_key_size || attr->comm_key) {
		FI_WARN(prov, FI_LOG_AV,
			"fi_av_set: communication keys are not supported\n");
		return -FI_ENOSYS;
	}
	if ((attr->flags & FI_UNIVERSE) &&
	    attr->start_addr != FI_ADDR_NOTAVAIL) {
		FI_WARN(prov, FI_LOG_AV,
			"fi_av_set: FI_UNIVERSE with a start_addr\n");
		return -FI_EINVAL;
	}
	if (attr->start_addr == FI_ADDR_NOTAVAIL &&
	    (attr->end_addr != FI_ADDR_NOTAVAIL || attr->stride)) {
		FI_WARN(prov, FI_LOG_AV,
			"fi_av_set: end_addr or stride without a start_addr\n");
		return -FI_EINVAL;
	}
	return 0;
}

int util_av_set_open(struct fid_av *av_fid, struct fi_av_set_attr *attr,
		     struct fid_av_set **set_fid, void *context)
{
	const struct fi_provider *prov =
		util_domain_prov(av_fid ? to_util_av(av_fid)->domain : NULL);
	struct util_av_set *set;
	int ret;

	if (!av_fid || !attr || !set_fid) {
		FI_WARN(prov, FI_LOG_AV, "fi_av_set: NULL av, attr or set\n");
		return -FI_EINVAL;
	}
	ret = util_av_set_check_attr(prov, attr);
	if (ret)
		return ret;
	set = calloc(1, sizeof(*set));
	if (!set)
		return -FI_ENOMEM;
	set->av = to_util_av(av_fid);
	set->flags = attr->flags;
	set->id = atomic_fetch_add(&util_av_set_next_id, 1);
	/* count is a hint: more than the AV holds is never needed. */
	ret = util_av_set_reserve(set, attr->count < set->av->count ?
				  attr->count : set->av->count);
	if (!ret && (attr->flags & FI_UNIVERSE))
		ret = util_av_set_fill_universe(set);
	else if (!ret && attr->start_addr != FI_ADDR_NOTAVAIL)
		ret = util_av_set_fill_range(set, attr);
	if (ret) {
		free(set->addrs);
		free(set);
		return ret;
	}
	set->set_fid.fid.fclass = FI_CLASS_AV_SET;
	set->set_fid.fid.context = context;
	set->set_fid.fid.ops = UTIL_OPS(&util_av_set_fi_ops);
	set->set_fid.ops = UTIL_OPS(&util_av_set_ops);
	atomic_fetch_add(&set->av->ref, 1);
	*set_fid = &set->set_fid;
	return 0;
}
