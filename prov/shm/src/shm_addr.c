/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "shm_addr.h"
#include "shm_region.h"

int shm_name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
	       c == ':';
}

static int shm_name_check(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || len > SHM_ADDR_NAME_MAX)
		return -FI_EINVAL;
	for (i = 0; i < len; i++)
		if (!shm_name_char_ok(name[i]))
			return -FI_EINVAL;
	return (int)len;
}

int shm_addr_name_len(const void *addr, size_t len)
{
	const char *s = addr;
	size_t n;

	if (!addr || len <= SHM_ADDR_PREFIX_LEN ||
	    memcmp(s, SHM_ADDR_PREFIX, SHM_ADDR_PREFIX_LEN))
		return -FI_EINVAL;
	n = strnlen(s, len);
	/* Applications pass addrlen with or without the NUL. */
	return shm_name_check(s + SHM_ADDR_PREFIX_LEN, n - SHM_ADDR_PREFIX_LEN);
}

static int shm_addr_format(const char *name, size_t len, char *addr, size_t size)
{
	int ret = shm_name_check(name, len);

	if (ret < 0)
		return ret;
	if (size < SHM_ADDR_PREFIX_LEN + len + 1)
		return -FI_ETOOSMALL;
	snprintf(addr, size, "%s%.*s", SHM_ADDR_PREFIX, (int)len, name);
	return 0;
}

static int shm_addr_user(const char *name, char *addr, size_t size)
{
	size_t len = strlen(name);

	if (len > SHM_ADDR_USER_MAX)
		return -FI_EINVAL;
	return shm_addr_format(name, len, addr, size);
}

int shm_addr_from_node(const char *node, const char *service,
		       char *addr, size_t size)
{
	/* A full address (one that fi_getname gave out) passes unchanged. */
	if (node && !strncmp(node, SHM_ADDR_PREFIX, SHM_ADDR_PREFIX_LEN))
		return shm_addr_format(node + SHM_ADDR_PREFIX_LEN,
				       strlen(node + SHM_ADDR_PREFIX_LEN),
				       addr, size);
	if (service && *service)
		return shm_addr_user(service, addr, size);
	return -FI_ENOENT;
}

int shm_addr_process(char *addr, size_t size)
{
	char name[SHM_ADDR_NAME_MAX + 1];
	int n;

	/* The stem of shm_region.c's generated names: SHM_NAME_PREFIX
	 * without its '/', then uid and pid. */
	n = snprintf(name, sizeof(name), "%s%u-%d", SHM_NAME_PREFIX + 1,
		     (unsigned)getuid(), (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(name))
		return -FI_ETOOSMALL;
	return shm_addr_format(name, (size_t)n, addr, size);
}

/* Length of "/weftshm-<digits>-n-" at the start of a named region, or 0. */
static size_t shm_addr_named_prefix(const char *region_name)
{
	static const char pfx[] = "/weftshm-";
	const char *p = region_name + sizeof(pfx) - 1;

	if (strncmp(region_name, pfx, sizeof(pfx) - 1))
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == region_name + sizeof(pfx) - 1 || strncmp(p, "-n-", 3))
		return 0;
	return (size_t)(p + 3 - region_name);
}

int shm_addr_from_region(const char *region_name, char *addr, size_t size)
{
	size_t named;

	if (!region_name || region_name[0] != '/')
		return -FI_EINVAL;
	/* Named endpoints answer to the short name clients derive from
	 * node/service, so both spellings never coexist in an AV. */
	named = shm_addr_named_prefix(region_name);
	region_name += named ? named : 1;
	return shm_addr_format(region_name, strlen(region_name), addr, size);
}

int shm_addr_to_region(const void *addr, size_t len, char *region,
		       size_t size)
{
	const char *name = (const char *)addr + SHM_ADDR_PREFIX_LEN;
	char short_name[SHM_ADDR_NAME_MAX + 1];
	int n = shm_addr_name_len(addr, len);

	if (n < 0)
		return n;
	if (strncmp(name, "weftshm-", 8)) {
		if (size < SHM_NAME_MAX || n > SHM_ADDR_USER_MAX)
			return -FI_EINVAL;
		memcpy(short_name, name, (size_t)n);
		short_name[n] = '\0';
		return shm_region_name_build(short_name, region);
	}
	if (size < (size_t)n + 2)
		return -FI_ETOOSMALL;
	region[0] = '/';
	memcpy(region + 1, name, (size_t)n);
	region[n + 1] = '\0';
	return 0;
}

/* The short name of an address chosen through node/service, or NULL for
 * an address of a generated region. */
int shm_addr_user_name(const void *addr, size_t len, char *buf, size_t size)
{
	const char *name = (const char *)addr + SHM_ADDR_PREFIX_LEN;
	int n = shm_addr_name_len(addr, len);

	if (n < 0 || !strncmp(name, "weftshm-", 8) || n > SHM_ADDR_USER_MAX ||
	    size <= (size_t)n)
		return -FI_EINVAL;
	memcpy(buf, name, (size_t)n);
	buf[n] = '\0';
	return 0;
}
