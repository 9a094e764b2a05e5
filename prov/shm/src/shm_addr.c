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

/* Length of "/weftshm-<uid>-<our namespace>-" when region_name is a
 * chosen name of this process's namespace, else 0. */
static size_t shm_addr_own_prefix(const char *region_name)
{
	char pfx[SHM_NAME_MAX];
	int n = snprintf(pfx, sizeof(pfx), SHM_NAME_PREFIX "%u-%s-",
			 (unsigned)getuid(), shm_region_namespace());

	if (n <= 0 || (size_t)n >= sizeof(pfx) ||
	    strncmp(region_name, pfx, (size_t)n))
		return 0;
	return (size_t)n;
}

int shm_addr_from_region(const char *region_name, char *addr, size_t size)
{
	size_t own;

	if (!region_name || region_name[0] != '/')
		return -FI_EINVAL;
	/* Chosen names of our namespace answer to the short name clients
	 * derive from node/service; any other region (generated, or
	 * chosen in another namespace) to its full name, which reaches it
	 * from any namespace. */
	own = shm_addr_own_prefix(region_name);
	region_name += own ? own : 1;
	return shm_addr_format(region_name, strlen(region_name), addr, size);
}

int shm_addr_from_region_full(const char *region_name, char *addr,
			      size_t size)
{
	if (!region_name || region_name[0] != '/')
		return -FI_EINVAL;
	return shm_addr_format(region_name + 1, strlen(region_name + 1), addr,
			       size);
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
		return shm_region_name_build(short_name, NULL, region);
	}
	if (size < (size_t)n + 2)
		return -FI_ETOOSMALL;
	region[0] = '/';
	memcpy(region + 1, name, (size_t)n);
	region[n + 1] = '\0';
	return 0;
}

/* "weftshm-<our uid>-<namespace>-<short>": the namespace's length (the
 * short name starts after it and a '-'), or 0. */
static size_t shm_addr_full_chosen(const char *name, size_t *ns_off)
{
	char pfx[32];
	int n = snprintf(pfx, sizeof(pfx), "weftshm-%u-", (unsigned)getuid());

	if (n <= 0 || strncmp(name, pfx, (size_t)n))
		return 0;
	*ns_off = (size_t)n;
	return shm_region_ns_len(name + n);
}

int shm_addr_chosen(const void *addr, size_t len, char *short_name,
		    size_t size, char ns[SHM_NS_MAX + 1])
{
	const char *name = (const char *)addr + SHM_ADDR_PREFIX_LEN;
	int n = shm_addr_name_len(addr, len);
	size_t ns_len, ns_off = 0;

	if (n < 0)
		return -FI_EINVAL;
	ns[0] = '\0';
	if (strncmp(name, "weftshm-", 8)) {
		if (n > SHM_ADDR_USER_MAX || size <= (size_t)n)
			return -FI_EINVAL;
		memcpy(short_name, name, (size_t)n);
		short_name[n] = '\0';
		return 0;
	}
	/* A full chosen name: created in the namespace it names. */
	ns_len = shm_addr_full_chosen(name, &ns_off);
	if (!ns_len)
		return -FI_EINVAL;
	name += ns_off + ns_len + 1;
	n -= (int)(ns_off + ns_len + 1);
	if (n <= 0 || n > SHM_ADDR_USER_MAX || size <= (size_t)n)
		return -FI_EINVAL;
	memcpy(ns, name - ns_len - 1, ns_len);
	ns[ns_len] = '\0';
	memcpy(short_name, name, (size_t)n);
	short_name[n] = '\0';
	return 0;
}
