/* SPDX-License-Identifier: MIT */
/*
 * util_mem: memory helpers shared by providers.
 */
#include "weft/compat.h"
#include "weft/util_mem.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

void util_mem_prefault(void *addr, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = ((uintptr_t)addr + len + page - 1) & ~(page - 1);

	if (!len)
		return;
#ifdef MADV_POPULATE_WRITE
	/* Failure only means the pages fault in later. */
	(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
#else
	(void)start; (void)end;
#endif
}
