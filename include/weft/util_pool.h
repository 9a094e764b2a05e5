/* SPDX-License-Identifier: MIT */
/*
 * Fixed-size object pool: a free list of equal objects carved from chunks.
 * util_pool_get pops the free list; only when it is empty does the pool
 * grow, by a whole chunk (never per object), up to max objects. Objects
 * are never returned to the system before util_pool_fini. Not locked: the
 * owner's lock (endpoint, CQ) protects it.
 */
#ifndef WEFT_UTIL_POOL_H
#define WEFT_UTIL_POOL_H

#include "weft/compat.h"
#include <stddef.h>
#include <stdint.h>
#include <utlist.h>

struct util_pool_free {
	struct util_pool_free *next;
};

struct util_pool_chunk;

struct util_pool {
	size_t obj_size;		/* rounded up to align */
	size_t align;
	size_t chunk_objs;		/* objects per growth step */
	size_t max_objs;		/* 0 = unlimited */
	size_t nobjs;			/* allocated so far */
	size_t in_use;
	struct util_pool_free *free;	/* utlist LL */
	struct util_pool_chunk *chunks;	/* utlist LL, for fini */
	void (*init_obj)(void *obj, void *arg);	/* once per object */
	void *init_arg;
};

/* obj_size >= 1; align a power of two (0 = 16); initial objects are
 * allocated now; then chunk_objs at a time up to max_objs (0 = no limit).
 * init_obj (may be NULL) runs once per object when its chunk is made.
 * Returns 0, -FI_EINVAL or -FI_ENOMEM. */
int util_pool_init(struct util_pool *pool, size_t obj_size, size_t align,
		   size_t initial, size_t chunk_objs, size_t max_objs,
		   void (*init_obj)(void *obj, void *arg), void *init_arg);
void util_pool_fini(struct util_pool *pool);

/* Grow by one chunk: 0, -FI_ENOMEM, or -FI_EAGAIN at max_objs. */
int util_pool_grow(struct util_pool *pool);

/* An object, or NULL when the pool is at max_objs (or out of memory):
 * callers return -FI_EAGAIN then. The object's contents are whatever its
 * last user left (its first pointer-sized word is clobbered). */
static inline void *util_pool_get(struct util_pool *pool)
{
	struct util_pool_free *obj = pool->free;

	if (WEFT_UNLIKELY(!obj)) {
		if (util_pool_grow(pool))
			return NULL;
		obj = pool->free;
	}
	LL_DELETE(pool->free, obj);
	pool->in_use++;
	return obj;
}

static inline void util_pool_put(struct util_pool *pool, void *ptr)
{
	struct util_pool_free *obj = ptr;

	LL_PREPEND(pool->free, obj);
	pool->in_use--;
}

#endif /* WEFT_UTIL_POOL_H */
