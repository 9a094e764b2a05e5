/* SPDX-License-Identifier: MIT */
/*
 * Memory registration: every domain owns a util_mr_map; util_domain_init
 * points domain_fid.mr at util_mr_ops, so fi_mr_reg/regv/regattr work on
 * any util domain without provider code.
 *
 * Keys: with FI_MR_PROV_KEY in the domain's mr_mode util allocates keys
 * (unique per domain, never 0-based guessing by the caller); otherwise the
 * application's requested_key is used and a duplicate is refused with
 * -FI_ENOKEY. Addressing: with FI_MR_VIRT_ADDR a remote address is the
 * target's virtual address; without it, an offset from the start of the
 * region. One iovec per region (domain mr_iov_limit 1); offset must be 0.
 *
 * Providers check RMA and atomic targets with util_mr_check(), which also
 * turns (key, addr) into a local pointer.
 */
#ifndef WEFT_UTIL_MR_H
#define WEFT_UTIL_MR_H

#include "weft/compat.h"
#include "weft/util_lock.h"
#include <stdatomic.h>
#include <stdint.h>
#include <uthash.h>
#include <rdma/fi_domain.h>

struct util_domain;
struct util_cntr;

struct util_mr {
	struct fid_mr mr_fid;		/* mem_desc = this struct */
	struct util_domain *domain;
	uint8_t *base;
	size_t len;
	uint64_t access;		/* FI_READ|FI_WRITE|FI_REMOTE_* ... */
	uint64_t flags;
	enum fi_hmem_iface iface;
	struct util_cntr *cntr;		/* fi_mr_bind */
	uint64_t cntr_events;		/* FI_REMOTE_WRITE and/or _READ */
	UT_hash_handle hh;		/* map->by_key, keyed by mr_fid.key */
};

struct util_mr_map {
	struct util_mr *by_key;
	uint64_t mr_mode;
	uint64_t next_key;
	struct util_lock lock;
	atomic_int cntr_binds;		/* regions with a counter bound */
};

static inline struct util_mr *to_util_mr(struct fid_mr *mr)
{
	return container_of(mr, struct util_mr, mr_fid);
}

int util_mr_map_init(struct util_mr_map *map, uint64_t mr_mode,
		     bool thread_safe);
void util_mr_map_fini(struct util_mr_map *map);

/* Validate a remote access to (key, addr, len) needing every bit of
 * `access` (FI_REMOTE_READ, FI_REMOTE_WRITE, or FI_READ/FI_WRITE for local
 * use). On success returns 0 and sets *local to the first byte to access.
 * Errors (all overflow-safe, no logging: this is the data path):
 *   -FI_ENOKEY  no region has this key
 *   -FI_EACCES  the region lacks some of `access`
 *   -FI_EINVAL  [addr, addr+len) is not inside the region
 * len 0 is valid at any address inside or at the end of the region. */
int util_mr_check(struct util_mr_map *map, uint64_t key, uint64_t addr,
		  size_t len, uint64_t access, void **local);

/* A remote operation with this key succeeded at the target: count it on
 * the counter bound to the region (fi_mr_bind) if the binding asked for
 * `event` (FI_REMOTE_WRITE for writes and atomics, FI_REMOTE_READ for
 * reads). One atomic load while no region of the domain has a counter. */
void util_mr_count_slow(struct util_mr_map *map, uint64_t key,
			uint64_t event);

static inline void util_mr_count(struct util_mr_map *map, uint64_t key,
				 uint64_t event)
{
	if (WEFT_UNLIKELY(atomic_load_explicit(&map->cntr_binds,
					       memory_order_relaxed)))
		util_mr_count_slow(map, key, event);
}

/* Give a registered region the key `key` (e.g. a device rkey), so that
 * fi_mr_key returns it. -FI_ENOKEY when another region holds that key (the
 * old key stays). */
int util_mr_rekey(struct util_mr_map *map, struct util_mr *mr, uint64_t key);

/* The registration calls themselves (domain_fid.mr). */
extern const struct fi_ops_mr util_mr_ops;

int util_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		    uint64_t flags, struct fid_mr **mr);
int util_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		 uint64_t access, uint64_t offset, uint64_t requested_key,
		 uint64_t flags, struct fid_mr **mr, void *context);
int util_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		uint64_t offset, uint64_t requested_key, uint64_t flags,
		struct fid_mr **mr, void *context);

#endif /* WEFT_UTIL_MR_H */
