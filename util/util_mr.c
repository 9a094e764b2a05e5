/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_mr.h"
#include "weft/util_domain.h"
#include "weft/util_mem.h"
#include "weft/util_noop.h"
#include "weft/util_cntr.h"
#include <stdlib.h>

#define UTIL_MR_ACCESS_ALL (FI_READ | FI_WRITE | FI_RECV | FI_SEND | \
			    FI_REMOTE_READ | FI_REMOTE_WRITE)

int util_mr_map_init(struct util_mr_map *map, uint64_t mr_mode,
		     bool thread_safe)
{
	map->by_key = NULL;
	map->mr_mode = mr_mode;
	/* Provider keys start away from 0 so that a zeroed key from a
	 * confused peer never hits a region. */
	map->next_key = 1;
	atomic_init(&map->cntr_binds, 0);
	return util_lock_init(&map->lock, thread_safe);
}

void util_mr_map_fini(struct util_mr_map *map)
{
	/* Regions hold a domain reference, so the map is empty here. */
	util_lock_fini(&map->lock);
}

int util_mr_check(struct util_mr_map *map, uint64_t key, uint64_t addr,
		  size_t len, uint64_t access, void **local)
{
	struct util_mr *mr;
	uint64_t off;
	int ret = 0;

	util_lock_acquire(&map->lock);
	HASH_FIND(hh, map->by_key, &key, sizeof(key), mr);
	if (!mr) {
		ret = -FI_ENOKEY;
		goto unlock;
	}
	if ((mr->access & access) != access) {
		ret = -FI_EACCES;
		goto unlock;
	}
	if (map->mr_mode & FI_MR_VIRT_ADDR) {
		if (addr < (uintptr_t)mr->base) {
			ret = -FI_EINVAL;
			goto unlock;
		}
		off = addr - (uintptr_t)mr->base;
	} else {
		off = addr;
	}
	/* off <= mr->len first, so mr->len - off cannot wrap. */
	if (off > mr->len || len > mr->len - off) {
		ret = -FI_EINVAL;
		goto unlock;
	}
	if (local)
		*local = mr->base + off;
unlock:
	util_lock_release(&map->lock);
	return ret;
}

/* Providers whose remote keys come from a device (an ibv rkey) must hand
 * that key to the application, because the initiator's hardware uses it
 * as is. */
int util_mr_rekey(struct util_mr_map *map, struct util_mr *mr, uint64_t key)
{
	struct util_mr *dup;
	int ret = 0;

	util_lock_acquire(&map->lock);
	HASH_FIND(hh, map->by_key, &key, sizeof(key), dup);
	if (dup && dup != mr) {
		ret = -FI_ENOKEY;
	} else if (!dup) {
		HASH_DELETE(hh, map->by_key, mr);
		mr->mr_fid.key = key;
		HASH_ADD(hh, map->by_key, mr_fid.key, sizeof(mr->mr_fid.key), mr);
	}
	util_lock_release(&map->lock);
	return ret;
}

void util_mr_count_slow(struct util_mr_map *map, uint64_t key,
			uint64_t event)
{
	struct util_mr *mr;

	util_lock_acquire(&map->lock);
	HASH_FIND(hh, map->by_key, &key, sizeof(key), mr);
	if (mr && mr->cntr && (mr->cntr_events & event))
		util_cntr_inc(mr->cntr);
	util_lock_release(&map->lock);
}

/* fi_mr_bind(3): a counter, counting FI_REMOTE_WRITE (writes and
 * atomics) and/or FI_REMOTE_READ aimed at the region. Endpoint bindings
 * are for FI_MR_ENDPOINT, which no weft domain asks for. */
static int util_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct util_mr *mr = container_of(fid, struct util_mr, mr_fid.fid);
	const struct fi_provider *prov = util_domain_prov(mr->domain);
	struct util_mr_map *map = &mr->domain->mr_map;
	struct util_cntr *cntr;

	if (!bfid || bfid->fclass != FI_CLASS_CNTR) {
		FI_WARN(prov, FI_LOG_MR, "mr bind: only a counter binds to a "
			"region (class %d)\n", bfid ? (int)bfid->fclass : -1);
		return -FI_EINVAL;
	}
	if (!flags || (flags & ~(uint64_t)(FI_REMOTE_WRITE | FI_REMOTE_READ))) {
		FI_WARN(prov, FI_LOG_MR, "mr bind: flags 0x%llx (FI_REMOTE_WRITE "
			"and/or FI_REMOTE_READ)\n", (unsigned long long)flags);
		return -FI_EINVAL;
	}
	if (!(mr->domain->caps & FI_RMA_EVENT)) {
		FI_WARN(prov, FI_LOG_MR, "mr bind: the domain was opened "
			"without FI_RMA_EVENT\n");
		return -FI_EINVAL;
	}
	cntr = container_of(bfid, struct util_cntr, cntr_fid.fid);
	if (cntr->domain != mr->domain) {
		FI_WARN(prov, FI_LOG_MR, "mr bind: counter of another domain\n");
		return -FI_EINVAL;
	}
	util_lock_acquire(&map->lock);
	if (mr->cntr) {
		util_lock_release(&map->lock);
		FI_WARN(prov, FI_LOG_MR, "mr bind: the region has a counter "
			"already\n");
		return -FI_EINVAL;
	}
	atomic_fetch_add(&cntr->mr_ref, 1);
	mr->cntr = cntr;
	mr->cntr_events = flags;
	atomic_fetch_add(&map->cntr_binds, 1);
	util_lock_release(&map->lock);
	return 0;
}

/* fi_mr_enable: regions are usable from registration on (no weft domain
 * asks for FI_MR_RMA_EVENT), so there is nothing to enable. */
static int util_mr_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)arg;
	return command == FI_ENABLE ? 0 : -FI_ENOSYS;
}

static int util_mr_close(struct fid *fid)
{
	struct util_mr *mr = container_of(fid, struct util_mr, mr_fid.fid);
	struct util_mr_map *map = &mr->domain->mr_map;

	util_lock_acquire(&map->lock);
	HASH_DELETE(hh, map->by_key, mr);
	if (mr->cntr) {
		atomic_fetch_sub(&mr->cntr->mr_ref, 1);
		atomic_fetch_sub(&map->cntr_binds, 1);
	}
	util_lock_release(&map->lock);
	util_domain_unref(mr->domain);
	free(mr);
	return 0;
}

static const struct fi_ops util_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_mr_close,
	.bind = util_mr_bind,
	.control = util_mr_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

/* The region must exist with the access asked for (access 0 is every
 * access, writes included): RMA from peers and local copies rely on it,
 * as verbs devices do on ibv_reg_mr's same check. */
static int util_mr_mapped_check(const struct util_domain *domain,
				const struct fi_mr_attr *attr)
{
	const uint64_t writes = FI_REMOTE_WRITE | FI_READ | FI_RECV;
	bool write = !attr->access || (attr->access & writes);
	const struct iovec *iov = &attr->mr_iov[0];
	uintptr_t bad;
	int ret;

	ret = util_mem_check(iov->iov_base, iov->iov_len, write, &bad);
	if (ret)
		FI_WARN(util_domain_prov(domain), FI_LOG_MR,
			"mr: %p+%zu is not all mapped %s (at 0x%lx): %s\n",
			iov->iov_base, iov->iov_len,
			write ? "readable and writable" : "readable",
			(unsigned long)bad, fi_strerror(-ret));
	return ret;
}

static int util_mr_attr_check(const struct util_domain *domain,
			      const struct fi_mr_attr *attr, uint64_t flags)
{
	if (attr->iov_count != 1 || !attr->mr_iov) {
		FI_WARN(util_domain_prov(domain), FI_LOG_MR,
			"mr: %zu iovecs (exactly 1 supported)\n",
			attr->iov_count);
		return -FI_EINVAL;
	}
	if (attr->mr_iov[0].iov_len && !attr->mr_iov[0].iov_base) {
		FI_WARN(util_domain_prov(domain), FI_LOG_MR,
			"mr: NULL buffer\n");
		return -FI_EINVAL;
	}
	if (attr->access & ~UTIL_MR_ACCESS_ALL) {
		FI_WARN(util_domain_prov(domain), FI_LOG_MR,
			"mr: unknown access bits 0x%llx\n",
			(unsigned long long)(attr->access & ~UTIL_MR_ACCESS_ALL));
		return -FI_EINVAL;
	}
	if (attr->offset) {
		FI_WARN(util_domain_prov(domain), FI_LOG_MR,
			"mr: offset must be 0 (fi_mr(3))\n");
		return -FI_EINVAL;
	}
	if (attr->iface != FI_HMEM_SYSTEM) {
		FI_WARN(util_domain_prov(domain), FI_LOG_MR,
			"mr: only host memory (FI_HMEM_SYSTEM)\n");
		return -FI_ENOSYS;
	}
	if (flags & ~(uint64_t)FI_RMA_EVENT) {
		FI_WARN(util_domain_prov(domain), FI_LOG_MR,
			"mr: unsupported flags 0x%llx\n",
			(unsigned long long)flags);
		return -FI_EINVAL;
	}
	return util_mr_mapped_check(domain, attr);
}

/* Insert under the map lock: a provider key, or the requested one. */
static int util_mr_map_insert(struct util_mr_map *map, struct util_mr *mr,
			      uint64_t requested_key)
{
	struct util_mr *dup;
	uint64_t key;

	if (map->mr_mode & FI_MR_PROV_KEY) {
		do {
			key = map->next_key++;
			HASH_FIND(hh, map->by_key, &key, sizeof(key), dup);
		} while (dup);
	} else {
		key = requested_key;
		HASH_FIND(hh, map->by_key, &key, sizeof(key), dup);
		if (dup) {
			FI_WARN(util_domain_prov(mr->domain), FI_LOG_MR,
				"mr: key 0x%llx already in use\n",
				(unsigned long long)key);
			return -FI_ENOKEY;
		}
	}
	mr->mr_fid.key = key;
	HASH_ADD(hh, map->by_key, mr_fid.key, sizeof(mr->mr_fid.key), mr);
	return 0;
}

int util_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		    uint64_t flags, struct fid_mr **mr_fid)
{
	struct util_domain *domain;
	struct util_mr *mr;
	int ret;

	domain = fid && fid->fclass == FI_CLASS_DOMAIN ?
		 container_of(fid, struct util_domain, domain_fid.fid) : NULL;
	if (!domain || !attr || !mr_fid) {
		FI_WARN(util_domain_prov(domain), FI_LOG_MR,
			"mr: needs a domain, attr and mr pointer\n");
		return -FI_EINVAL;
	}
	ret = util_mr_attr_check(domain, attr, flags);
	if (ret)
		return ret;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->domain = domain;
	mr->base = attr->mr_iov[0].iov_base;
	mr->len = attr->mr_iov[0].iov_len;
	/* fi_mr(3): access 0 means every access the domain supports. */
	mr->access = attr->access ? attr->access : UTIL_MR_ACCESS_ALL;
	mr->flags = flags;
	mr->iface = attr->iface;
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = attr->context;
	mr->mr_fid.fid.ops = UTIL_OPS(&util_mr_fi_ops);
	mr->mr_fid.mem_desc = mr;

	util_lock_acquire(&domain->mr_map.lock);
	ret = util_mr_map_insert(&domain->mr_map, mr, attr->requested_key);
	util_lock_release(&domain->mr_map.lock);
	if (ret) {
		free(mr);
		return ret;
	}
	util_domain_ref(domain);
	*mr_fid = &mr->mr_fid;
	return 0;
}

int util_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		 uint64_t access, uint64_t offset, uint64_t requested_key,
		 uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return util_mr_regattr(fid, &attr, flags, mr);
}

int util_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		uint64_t offset, uint64_t requested_key, uint64_t flags,
		struct fid_mr **mr, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return util_mr_regv(fid, &iov, 1, access, offset, requested_key,
			    flags, mr, context);
}

const struct fi_ops_mr util_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = util_mr_reg,
	.regv = util_mr_regv,
	.regattr = util_mr_regattr,
};
