/* SPDX-License-Identifier: MIT */
/*
 * Address vector. util_av_open is a complete fi_av_open driven by the
 * provider's description of its addresses (struct util_av_prov, set in
 * util_domain.av_prov before the application opens an AV).
 *
 * Addresses have a fixed length (prov->addrlen). Each fi_addr_t is the
 * index of a slot, for FI_AV_MAP as for FI_AV_TABLE: TABLE hands out
 * 0, 1, 2 ... in insertion order; removed slots are reused by later
 * inserts (most recently freed first). Inserting an address already present
 * returns its existing fi_addr (fi_av(3) leaves duplicates to the provider)
 * and tells the provider (insert_again): the same address may now name a
 * new endpoint, one that replaced a closed one under the same name. Slots
 * live in fixed chunks that never move,
 * so pointers from util_av_addr/util_av_data stay valid until the address
 * is removed, and lookups need no lock.
 *
 * Each slot carries prov->data_size bytes of provider data (zeroed before
 * prov->insert), e.g. shm's mapping of the peer's region. Reverse lookup
 * (address bytes -> fi_addr, for FI_SOURCE) is a uthash on the address.
 *
 * fi_av_insert: per fi_av(3). Synchronous by default: returns the number
 * inserted; failed entries get FI_ADDR_NOTAVAIL in fi_addr[], and with
 * FI_SYNC_ERR their error in ((int *)context)[i]. With an EQ bound the
 * call returns 0 and writes FI_AV_COMPLETE (data = number inserted) plus
 * one error event per failed address (data = its index).
 * insertsvc/insertsym: -FI_ENOSYS; av_set: util_av_set.h.
 *
 * FI_AV_USER_ID (fi_av_insert flag): fi_addr[] is read first, each entry
 * the identifier that completions report for that address instead of its
 * fi_addr (a peer provider's owner passes its own fi_addrs), then written
 * with the fi_addrs as usual, which the caller needs to send.
 * util_av_user_id reads it back; without the flag it is the fi_addr.
 */
#ifndef WEFT_UTIL_AV_H
#define WEFT_UTIL_AV_H

#include "weft/compat.h"
#include "weft/util_lock.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>
#include <rdma/fi_domain.h>

#define UTIL_AV_CHUNK_SHIFT 8			/* 256 slots per chunk */
#define UTIL_AV_CHUNK_SLOTS (1u << UTIL_AV_CHUNK_SHIFT)
#define UTIL_AV_MAX_CHUNKS 4096			/* 1M addresses */
#define UTIL_AV_DEFAULT_COUNT 128

struct util_av;
struct util_eq;

struct util_av_prov {
	size_t addrlen;		/* every address is exactly this long */
	size_t data_size;	/* provider bytes per slot (may be 0) */
	/* Reject malformed addresses before anything else: 0 or -FI_EINVAL
	 * (log what is wrong). May be NULL. */
	int (*validate)(struct util_av *av, const void *addr);
	/* After the slot is taken and the address copied; a negative return
	 * frees the slot and fails that address. May be NULL. */
	int (*insert)(struct util_av *av, fi_addr_t fi_addr, const void *addr,
		      void *data);
	/* An address already in the AV was inserted again (its fi_addr is
	 * returned as it is): the endpoint behind it may have been replaced
	 * since, so the provider must not trust what it learnt of the old
	 * one. Called with the AV lock held. May be NULL. */
	void (*insert_again)(struct util_av *av, fi_addr_t fi_addr,
			     const void *addr, void *data);
	/* Before the slot is freed (and at AV close for every live slot).
	 * May be NULL. */
	void (*remove)(struct util_av *av, fi_addr_t fi_addr, const void *addr,
		       void *data);
	/* fi_av_straddr: format addr into buf (*len bytes), set *len to the
	 * full length incl. NUL. NULL: util prints the bytes in hex. */
	const char *(*straddr)(const void *addr, char *buf, size_t *len);
};

struct util_av_slot {
	UT_hash_handle hh;	/* av->by_addr, key = addr bytes */
	fi_addr_t fi_addr;	/* this slot's own index */
	fi_addr_t user_id;	/* FI_AV_USER_ID's, else fi_addr */
	uint64_t next_free;	/* while free: index of the next free slot */
	bool in_use;
	/* addr (addrlen bytes, 8-aligned), then provider data (16-aligned) */
	_Alignas(16) uint8_t bytes[];
};

struct util_av {
	struct fid_av av_fid;
	struct util_domain *domain;
	const struct util_av_prov *prov;
	enum fi_av_type type;
	uint64_t flags;
	size_t slot_size;		/* sizeof(slot) + addr + data, aligned */
	size_t data_off;		/* provider data offset in bytes[] */
	_Atomic(uint8_t *) *chunks;/* UTIL_AV_MAX_CHUNKS pointers */
	size_t nchunks;
	uint64_t next_index;		/* never used yet */
	uint64_t free_head;		/* UINT64_MAX = none */
	size_t count;			/* addresses in use */
	struct util_av_slot *by_addr;	/* reverse lookup */
	struct util_eq *eq;
	struct util_lock lock;		/* insert/remove/reverse lookup */
	atomic_int ref;			/* endpoint bindings, AV sets */
	void *prov_ctx;			/* the provider's, NULL at open */
	bool user_ids;			/* an insert used FI_AV_USER_ID */
	/* Bumped by every insert and remove: whoever mirrors the AV (srd's
	 * shm peering) notices a change with one load. */
	_Atomic uint64_t gen;
};

static inline struct util_av *to_util_av(struct fid_av *av)
{
	return container_of(av, struct util_av, av_fid);
}

int util_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		 struct fid_av **av, void *context);

/* Slot of a live address, or NULL (out of range or removed). */
static inline struct util_av_slot *util_av_slot(struct util_av *av,
						fi_addr_t fi_addr)
{
	uint64_t chunk = fi_addr >> UTIL_AV_CHUNK_SHIFT;
	uint8_t *base;
	struct util_av_slot *slot;

	if (WEFT_UNLIKELY(chunk >= UTIL_AV_MAX_CHUNKS))
		return NULL;
	base = atomic_load_explicit(&av->chunks[chunk], memory_order_acquire);
	if (WEFT_UNLIKELY(!base))
		return NULL;
	slot = (struct util_av_slot *)(base + (fi_addr & (UTIL_AV_CHUNK_SLOTS - 1)) *
				       av->slot_size);
	return slot->in_use ? slot : NULL;
}

/* Provider address bytes of fi_addr, or NULL. */
/* What completions report as the source fi_addr (FI_AV_USER_ID). */
static inline fi_addr_t util_av_user_id(struct util_av *av, fi_addr_t fi_addr)
{
	struct util_av_slot *slot = util_av_slot(av, fi_addr);

	return slot ? slot->user_id : FI_ADDR_NOTAVAIL;
}

static inline const void *util_av_addr(struct util_av *av, fi_addr_t fi_addr)
{
	struct util_av_slot *slot = util_av_slot(av, fi_addr);

	return slot ? slot->bytes : NULL;
}

/* Provider data of fi_addr, or NULL. */
static inline void *util_av_data(struct util_av *av, fi_addr_t fi_addr)
{
	struct util_av_slot *slot = util_av_slot(av, fi_addr);

	return slot ? slot->bytes + av->data_off : NULL;
}

/* Address bytes -> fi_addr, FI_ADDR_NOTAVAIL when absent. Takes the AV
 * lock (it may be called from progress of several endpoints). */
fi_addr_t util_av_reverse_lookup(struct util_av *av, const void *addr);

/* Internal insert of one address (also what fi_av_insert uses): 0 with
 * *fi_addr set, or a negative error. */
int util_av_insert_one(struct util_av *av, const void *addr,
		       fi_addr_t *fi_addr);
int util_av_remove_one(struct util_av *av, fi_addr_t fi_addr);

#endif /* WEFT_UTIL_AV_H */
