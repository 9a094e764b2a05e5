/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_pool.h"
#include <stdlib.h>
#include <utlist.h>

struct util_pool_chunk {
	struct util_pool_chunk *next;
	void *mem;
};

int util_pool_init(struct util_pool *pool, size_t obj_size, size_t align,
		   size_t initial, size_t chunk_objs, size_t max_objs,
		   void (*init_obj)(void *obj, void *arg), void *init_arg)
{
	int ret;

	if (!align)
		align = 16;
	if (!obj_size || (align & (align - 1)) ||
	    (max_objs && initial > max_objs)) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"pool: bad size %zu / align %zu / initial %zu > max %zu\n",
			obj_size, align, initial, max_objs);
		return -FI_EINVAL;
	}
	if (obj_size < sizeof(struct util_pool_free))
		obj_size = sizeof(struct util_pool_free);
	pool->align = align < sizeof(void *) ? sizeof(void *) : align;
	pool->obj_size = (obj_size + pool->align - 1) & ~(pool->align - 1);
	pool->chunk_objs = chunk_objs ? chunk_objs : 64;
	pool->max_objs = max_objs;
	pool->nobjs = 0;
	pool->in_use = 0;
	pool->free = NULL;
	pool->chunks = NULL;
	pool->init_obj = init_obj;
	pool->init_arg = init_arg;
	while (pool->nobjs < initial) {
		ret = util_pool_grow(pool);
		if (ret) {
			util_pool_fini(pool);
			return ret == -FI_EAGAIN ? -FI_EINVAL : ret;
		}
	}
	return 0;
}

void util_pool_fini(struct util_pool *pool)
{
	struct util_pool_chunk *chunk, *tmp;

	LL_FOREACH_SAFE(pool->chunks, chunk, tmp) {
		LL_DELETE(pool->chunks, chunk);
		free(chunk->mem);
		free(chunk);
	}
	pool->free = NULL;
	pool->nobjs = 0;
}

int util_pool_grow(struct util_pool *pool)
{
	struct util_pool_chunk *chunk;
	size_t n = pool->chunk_objs, i;
	uint8_t *obj;

	if (pool->max_objs) {
		if (pool->nobjs >= pool->max_objs)
			return -FI_EAGAIN;
		if (n > pool->max_objs - pool->nobjs)
			n = pool->max_objs - pool->nobjs;
	}
	chunk = malloc(sizeof(*chunk));
	if (!chunk)
		return -FI_ENOMEM;
	if (posix_memalign(&chunk->mem, pool->align, n * pool->obj_size)) {
		free(chunk);
		return -FI_ENOMEM;
	}
	LL_PREPEND(pool->chunks, chunk);
	/* Push in reverse so objects come out in address order. */
	for (i = n; i-- > 0;) {
		obj = (uint8_t *)chunk->mem + i * pool->obj_size;
		if (pool->init_obj)
			pool->init_obj(obj, pool->init_arg);
		LL_PREPEND(pool->free, (struct util_pool_free *)obj);
	}
	pool->nobjs += n;
	return 0;
}
