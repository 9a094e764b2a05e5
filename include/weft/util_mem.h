/* SPDX-License-Identifier: MIT */
/*
 * util_mem: memory helpers shared by providers.
 */
#ifndef WEFT_UTIL_MEM_H
#define WEFT_UTIL_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fill the page tables of [addr, addr + len) now, writable, so the first
 * pass of a ring over fresh pages takes no page fault per page on the
 * data path (each costs microseconds, more with page-table isolation).
 * Best effort: without MADV_POPULATE_WRITE (Linux < 5.14) pages fault in
 * later as before. Pages around the range may be populated as well. */
void util_mem_prefault(void *addr, size_t len);

/* Whether every byte of [addr, addr + len) is mapped readable, and
 * writable too when write is set, as ibv_reg_mr checks before it pins:
 * 0, -FI_EFAULT (a hole, or the range wraps) or -FI_EACCES (a mapping
 * without the access), with *bad set to the first address at fault.
 * Reads /proc/self/maps: for registration, not for data paths. */
int util_mem_check(const void *addr, size_t len, bool write, uintptr_t *bad);

#endif /* WEFT_UTIL_MEM_H */
