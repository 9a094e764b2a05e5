/* SPDX-License-Identifier: MIT */
/*
 * util_mem: memory helpers shared by providers.
 */
#include "weft/compat.h"
#include "weft/util_mem.h"

#include <rdma/fi_errno.h>

#include <stdint.h>
#include <stdio.h>
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

/* The mappings in /proc/self/maps are sorted and do not overlap: walk
 * them with a cursor from the start of the range until it reaches the
 * end, a hole, or a mapping without the access. */
int util_mem_check(const void *addr, size_t len, bool write, uintptr_t *bad)
{
	uintptr_t cur = (uintptr_t)addr, end = cur + len;
	unsigned long lo, hi;
	char perms[8], line[512];
	int ret = -FI_EFAULT;
	FILE *f;

	*bad = cur;
	if (!len)
		return 0;
	if (end < cur)
		return -FI_EFAULT;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;	/* cannot tell: the device's own check stands */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 ||
		    hi <= cur)
			continue;
		if (lo > cur)
			break;		/* a hole at cur */
		if (perms[0] != 'r' || (write && perms[1] != 'w')) {
			ret = -FI_EACCES;
			break;
		}
		cur = hi;
		if (cur >= end) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	*bad = cur;
	return ret;
}
