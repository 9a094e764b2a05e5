/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_av.h"
#include "weft/util_av_set.h"
#include "weft/util_domain.h"
#include "weft/util_eq.h"
#include "weft/util_noop.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UTIL_AV_NO_FREE UINT64_MAX
#define UTIL_ALIGN(x, a) (((x) + (a) - 1) & ~((size_t)(a) - 1))

/* Slot by index whether or not it is in use; chunk must exist. */
static struct util_av_slot *util_av_raw_slot(struct util_av *av, uint64_t idx)
{
	uint8_t *base = atomic_load_explicit(&av->chunks[idx >> UTIL_AV_CHUNK_SHIFT],
					     memory_order_relaxed);

	return (struct util_av_slot *)(base + (idx & (UTIL_AV_CHUNK_SLOTS - 1)) *
				       av->slot_size);
}

static int util_av_grow(struct util_av *av)
{
	uint8_t *chunk;

	if (av->nchunks == UTIL_AV_MAX_CHUNKS) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av: full (%u addresses)\n",
			UTIL_AV_MAX_CHUNKS * UTIL_AV_CHUNK_SLOTS);
		return -FI_ENOSPC;
	}
	chunk = aligned_alloc(16, av->slot_size * UTIL_AV_CHUNK_SLOTS);
	if (!chunk)
		return -FI_ENOMEM;
	memset(chunk, 0, av->slot_size * UTIL_AV_CHUNK_SLOTS);
	/* Readers find the chunk without the lock: publish it initialised. */
	atomic_store_explicit(&av->chunks[av->nchunks], chunk,
			      memory_order_release);
	av->nchunks++;
	return 0;
}

/* Take a free index: most recently freed first, else the next new one. */
static int util_av_take_index(struct util_av *av, uint64_t *idx)
{
	struct util_av_slot *slot;
	int ret;

	if (av->free_head != UTIL_AV_NO_FREE) {
		*idx = av->free_head;
		slot = util_av_raw_slot(av, *idx);
		av->free_head = slot->next_free;
		return 0;
	}
	if (av->next_index >= (uint64_t)av->nchunks * UTIL_AV_CHUNK_SLOTS) {
		ret = util_av_grow(av);
		if (ret)
			return ret;
	}
	*idx = av->next_index++;
	return 0;
}

static void util_av_put_index(struct util_av *av, uint64_t idx)
{
	struct util_av_slot *slot = util_av_raw_slot(av, idx);

	slot->next_free = av->free_head;
	av->free_head = idx;
}

/* Called with the AV lock held. */
static int util_av_insert_locked(struct util_av *av, const void *addr,
				 fi_addr_t *fi_addr, fi_addr_t user_id)
{
	const struct util_av_prov *prov = av->prov;
	struct util_av_slot *slot;
	uint64_t idx;
	int ret;

	HASH_FIND(hh, av->by_addr, addr, prov->addrlen, slot);
	if (slot) {
		if (prov->insert_again)
			prov->insert_again(av, slot->fi_addr, slot->bytes,
					   slot->bytes + av->data_off);
		if (user_id != FI_ADDR_NOTAVAIL)
			slot->user_id = user_id;
		*fi_addr = slot->fi_addr;
		return 0;
	}
	ret = util_av_take_index(av, &idx);
	if (ret)
		return ret;
	slot = util_av_raw_slot(av, idx);
	memset(slot->bytes, 0,
	       av->slot_size - offsetof(struct util_av_slot, bytes));
	memcpy(slot->bytes, addr, prov->addrlen);
	if (prov->insert) {
		ret = prov->insert(av, idx, slot->bytes,
				   slot->bytes + av->data_off);
		if (ret) {
			util_av_put_index(av, idx);
			return ret;
		}
	}
	slot->fi_addr = idx;
	slot->user_id = user_id != FI_ADDR_NOTAVAIL ? user_id : idx;
	HASH_ADD_KEYPTR(hh, av->by_addr, slot->bytes, prov->addrlen, slot);
	atomic_thread_fence(memory_order_release);
	slot->in_use = true;
	av->count++;
	*fi_addr = idx;
	return 0;
}

static int util_av_insert_id(struct util_av *av, const void *addr,
			     fi_addr_t *fi_addr, fi_addr_t user_id)
{
	int ret;

	if (!addr) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av insert: NULL address\n");
		return -FI_EINVAL;
	}
	if (av->prov->validate) {
		ret = av->prov->validate(av, addr);
		if (ret)
			return ret;
	}
	util_lock_acquire(&av->lock);
	if (user_id != FI_ADDR_NOTAVAIL)
		av->user_ids = true;
	ret = util_av_insert_locked(av, addr, fi_addr, user_id);
	atomic_fetch_add_explicit(&av->gen, 1, memory_order_release);
	util_lock_release(&av->lock);
	return ret;
}

int util_av_insert_one(struct util_av *av, const void *addr,
		       fi_addr_t *fi_addr)
{
	return util_av_insert_id(av, addr, fi_addr, FI_ADDR_NOTAVAIL);
}

static void util_av_release_slot(struct util_av *av, uint64_t idx,
				 struct util_av_slot *slot)
{
	if (av->prov->remove)
		av->prov->remove(av, idx, slot->bytes,
				 slot->bytes + av->data_off);
	HASH_DELETE(hh, av->by_addr, slot);
	slot->in_use = false;
	av->count--;
	atomic_fetch_add_explicit(&av->gen, 1, memory_order_release);
	util_av_put_index(av, idx);
}

int util_av_remove_one(struct util_av *av, fi_addr_t fi_addr)
{
	struct util_av_slot *slot;
	int ret = 0;

	util_lock_acquire(&av->lock);
	slot = util_av_slot(av, fi_addr);
	if (!slot) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av remove: fi_addr %llu is not in the AV\n",
			(unsigned long long)fi_addr);
		ret = -FI_EINVAL;
		goto unlock;
	}
	util_av_release_slot(av, fi_addr, slot);
unlock:
	util_lock_release(&av->lock);
	return ret;
}

fi_addr_t util_av_reverse_lookup(struct util_av *av, const void *addr)
{
	struct util_av_slot *slot;
	fi_addr_t fi_addr = FI_ADDR_NOTAVAIL;

	util_lock_acquire(&av->lock);
	HASH_FIND(hh, av->by_addr, addr, av->prov->addrlen, slot);
	if (slot)
		fi_addr = slot->fi_addr;
	util_lock_release(&av->lock);
	return fi_addr;
}

/* ---- fi_av ops ---- */

static void util_av_report_err(struct util_av *av, size_t i, int err,
			       void *context, uint64_t flags, bool async)
{
	struct fi_eq_err_entry entry = {
		.fid = &av->av_fid.fid,
		.context = context,
		.data = i,
		.err = -err,
	};

	if (flags & FI_SYNC_ERR) {
		if (context)
			((int *)context)[i] = -err;
	} else if (async) {
		util_eq_write_err(av->eq, &entry);
	}
}

static int util_av_insert(struct fid_av *av_fid, const void *addr,
			  size_t count, fi_addr_t *fi_addr, uint64_t flags,
			  void *context)
{
	struct util_av *av = to_util_av(av_fid);
	bool async = av->eq && !(flags & FI_SYNC_ERR);
	const uint8_t *a = addr;
	fi_addr_t out;
	size_t i;
	int ret, done = 0;

	if (flags & ~(uint64_t)(FI_SYNC_ERR | FI_MORE | FI_AV_USER_ID)) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av insert: unsupported flags 0x%llx\n",
			(unsigned long long)flags);
		return -FI_EINVAL;
	}
	if (count && !addr) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av insert: NULL addr\n");
		return -FI_EINVAL;
	}
	if ((flags & FI_AV_USER_ID) && count && !fi_addr) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av insert: FI_AV_USER_ID without fi_addr[]\n");
		return -FI_EINVAL;
	}
	for (i = 0; i < count; i++) {
		ret = util_av_insert_id(av, a + i * av->prov->addrlen, &out,
					(flags & FI_AV_USER_ID) ? fi_addr[i] :
					FI_ADDR_NOTAVAIL);
		if (ret) {
			FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
				"av insert: address %zu refused: %s\n", i,
				fi_strerror(-ret));
			out = FI_ADDR_NOTAVAIL;
			util_av_report_err(av, i, ret, context, flags, async);
		} else {
			done++;
			if (flags & FI_SYNC_ERR && context)
				((int *)context)[i] = 0;
		}
		if (fi_addr)
			fi_addr[i] = out;
	}
	if (async) {
		struct fi_eq_entry ev = {
			.fid = &av->av_fid.fid,
			.context = context,
			.data = (uint64_t)done,
		};

		util_eq_write(av->eq, FI_AV_COMPLETE, &ev, sizeof(ev));
		return 0;
	}
	return done;
}

static int util_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr,
			  size_t count, uint64_t flags)
{
	struct util_av *av = to_util_av(av_fid);
	int ret = 0, err;
	size_t i;

	if (flags) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av remove: flags must be 0\n");
		return -FI_EINVAL;
	}
	if (count && !fi_addr) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av remove: NULL fi_addr\n");
		return -FI_EINVAL;
	}
	/* Remove what can be removed; report the first failure. */
	for (i = 0; i < count; i++) {
		err = util_av_remove_one(av, fi_addr[i]);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

static int util_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr,
			  void *addr, size_t *addrlen)
{
	struct util_av *av = to_util_av(av_fid);
	struct util_av_slot *slot;
	size_t len = av->prov->addrlen;
	int ret = 0;

	if (!addrlen) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av lookup: NULL addrlen\n");
		return -FI_EINVAL;
	}
	util_lock_acquire(&av->lock);
	slot = util_av_slot(av, fi_addr);
	if (!slot) {
		util_lock_release(&av->lock);
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av lookup: fi_addr %llu is not in the AV\n",
			(unsigned long long)fi_addr);
		return -FI_EINVAL;
	}
	/* fi_av(3): copy what fits, always report the full length. */
	if (addr && *addrlen)
		memcpy(addr, slot->bytes, *addrlen < len ? *addrlen : len);
	if (*addrlen < len)
		ret = -FI_ETOOSMALL;
	util_lock_release(&av->lock);
	*addrlen = len;
	return ret;
}

static const char *util_av_straddr(struct fid_av *av_fid, const void *addr,
				   char *buf, size_t *len)
{
	struct util_av *av = to_util_av(av_fid);
	const uint8_t *a = addr;
	size_t need, i, off = 0;

	if (!addr || !len)
		return NULL;
	if (av->prov->straddr)
		return av->prov->straddr(addr, buf, len);
	need = av->prov->addrlen * 2 + 3;	/* "0x" + hex + NUL */
	if (buf && *len) {
		off = (size_t)snprintf(buf, *len, "0x");
		for (i = 0; i < av->prov->addrlen && off + 2 < *len; i++)
			off += (size_t)snprintf(buf + off, *len - off, "%02x",
						a[i]);
	}
	*len = need;
	return buf;
}

static const struct fi_ops_av util_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = util_av_insert,
	.insertsvc = util_no_av_insertsvc,
	.insertsym = util_no_av_insertsym,
	.remove = util_av_remove,
	.lookup = util_av_lookup,
	.straddr = util_av_straddr,
	.av_set = util_av_set_open,
};

/* ---- open / close ---- */

static void util_av_free(struct util_av *av)
{
	struct util_av_slot *slot;
	uint64_t idx;
	size_t i;

	for (idx = 0; idx < av->next_index; idx++) {
		slot = util_av_raw_slot(av, idx);
		if (slot->in_use)
			util_av_release_slot(av, idx, slot);
	}
	for (i = 0; i < av->nchunks; i++)
		free(atomic_load(&av->chunks[i]));
	free(av->chunks);
	util_lock_fini(&av->lock);
	free(av);
}

static int util_av_close(struct fid *fid)
{
	struct util_av *av = container_of(fid, struct util_av, av_fid.fid);

	if (atomic_load(&av->ref)) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av close: still bound to %d endpoint(s) or AV set(s)\n",
			atomic_load(&av->ref));
		return -FI_EBUSY;
	}
	if (av->eq)
		atomic_fetch_sub(&av->eq->ref, 1);
	util_domain_unref(av->domain);
	util_av_free(av);
	return 0;
}

static int util_av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct util_av *av = container_of(fid, struct util_av, av_fid.fid);

	if (!bfid || bfid->fclass != FI_CLASS_EQ || flags) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av bind: only an EQ, with flags 0\n");
		return -FI_EINVAL;
	}
	if (av->eq) {
		FI_WARN(util_domain_prov(av->domain), FI_LOG_AV,
			"av bind: an EQ is already bound\n");
		return -FI_EINVAL;
	}
	av->eq = container_of(bfid, struct util_eq, eq_fid.fid);
	atomic_fetch_add(&av->eq->ref, 1);
	return 0;
}

static const struct fi_ops util_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_av_close,
	.bind = util_av_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static int util_av_check_attr(const struct util_domain *domain,
			      const struct fi_av_attr *attr)
{
	if (!domain->av_prov || !domain->av_prov->addrlen) {
		FI_WARN(util_domain_prov(domain), FI_LOG_AV,
			"av open: provider set no address description\n");
		return -FI_ENOSYS;
	}
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP &&
	    attr->type != FI_AV_TABLE) {
		FI_WARN(util_domain_prov(domain), FI_LOG_AV,
			"av open: bad type %d\n",
			attr->type);
		return -FI_EINVAL;
	}
	if (attr->name || attr->map_addr) {
		FI_WARN(util_domain_prov(domain), FI_LOG_AV,
			"av open: named/shared AVs are not supported\n");
		return -FI_ENOSYS;
	}
	if (attr->rx_ctx_bits) {
		FI_WARN(util_domain_prov(domain), FI_LOG_AV,
			"av open: rx_ctx_bits not supported\n");
		return -FI_ENOSYS;
	}
	if (attr->flags & ~(uint64_t)(FI_EVENT | FI_SYMMETRIC)) {
		FI_WARN(util_domain_prov(domain), FI_LOG_AV,
			"av open: unsupported flags 0x%llx\n",
			(unsigned long long)attr->flags);
		return -FI_EINVAL;
	}
	return 0;
}

static enum fi_av_type util_av_type(const struct util_domain *domain,
				    enum fi_av_type requested)
{
	if (requested != FI_AV_UNSPEC)
		return requested;
	return domain->av_type == FI_AV_TABLE ? FI_AV_TABLE : FI_AV_MAP;
}

static int util_av_init(struct util_av *av, struct util_domain *domain,
			const struct fi_av_attr *attr, void *context)
{
	const struct util_av_prov *prov = domain->av_prov;
	size_t count = attr->count ? attr->count : UTIL_AV_DEFAULT_COUNT;
	int ret;

	av->domain = domain;
	av->prov = prov;
	av->type = util_av_type(domain, attr->type);
	av->flags = attr->flags;
	av->data_off = UTIL_ALIGN(prov->addrlen, 16);
	av->slot_size = UTIL_ALIGN(sizeof(struct util_av_slot) + av->data_off +
				   prov->data_size, 16);
	av->free_head = UTIL_AV_NO_FREE;
	atomic_init(&av->ref, 0);
	av->chunks = calloc(UTIL_AV_MAX_CHUNKS, sizeof(*av->chunks));
	if (!av->chunks)
		return -FI_ENOMEM;
	ret = util_lock_init(&av->lock, domain->thread_safe);
	if (ret)
		goto free_chunks;
	/* Pre-size to the application's hint so inserts don't allocate. */
	while ((size_t)av->nchunks * UTIL_AV_CHUNK_SLOTS < count &&
	       av->nchunks < UTIL_AV_MAX_CHUNKS) {
		ret = util_av_grow(av);
		if (ret)
			goto free_all;
	}
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = UTIL_OPS(&util_av_fi_ops);
	av->av_fid.ops = UTIL_OPS(&util_av_ops);
	return 0;

free_all:
	while (av->nchunks)
		free(atomic_load(&av->chunks[--av->nchunks]));
	util_lock_fini(&av->lock);
free_chunks:
	free(av->chunks);
	return ret;
}

int util_av_open(struct fid_domain *domain_fid, struct fi_av_attr *attr,
		 struct fid_av **av_fid, void *context)
{
	struct util_domain *domain;
	struct util_av *av;
	int ret;

	domain = domain_fid ? to_util_domain(domain_fid) : NULL;
	if (!domain || !attr || !av_fid) {
		FI_WARN(util_domain_prov(domain), FI_LOG_AV,
			"av open: NULL domain, attr or av\n");
		return -FI_EINVAL;
	}
	ret = util_av_check_attr(domain, attr);
	if (ret)
		return ret;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	ret = util_av_init(av, domain, attr, context);
	if (ret) {
		free(av);
		return ret;
	}
	util_domain_ref(domain);
	*av_fid = &av->av_fid;
	return 0;
}
