/* SPDX-License-Identifier: MIT */
/*
 * util_mem: memory helpers shared by providers.
 */
#ifndef WEFT_UTIL_MEM_H
#define WEFT_UTIL_MEM_H

#include <stddef.h>

/* Fill the page tables of [addr, addr + len) now, writable, so the first
 * pass of a ring over fresh pages takes no page fault per page on the
 * data path (each costs microseconds, more with page-table isolation).
 * Best effort: without MADV_POPULATE_WRITE (Linux < 5.14) pages fault in
 * later as before. Pages around the range may be populated as well. */
void util_mem_prefault(void *addr, size_t len);

#endif /* WEFT_UTIL_MEM_H */
