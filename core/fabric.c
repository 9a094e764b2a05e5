/* SPDX-License-Identifier: MIT */
/*
 * fi_fabric, fi_version, fi_open.
 */
#include "weft/compat.h"
#include <stdlib.h>
#include <string.h>
#include "core_priv.h"

WEFT_EXPORT
uint32_t fi_version(void)
{
	return WEFT_API_VERSION;
}

/* No prov_name: the provider that offers a fabric of that name. */
static struct fi_provider *fabric_find_by_name(const char *fabric_name,
					       uint32_t version)
{
	struct fi_fabric_attr fabric_attr = { .name = (char *)fabric_name };
	struct fi_info hints = { .fabric_attr = &fabric_attr };
	struct fi_info *info = NULL;
	struct fi_provider *prov = NULL;

	if (fi_getinfo(version, NULL, NULL, 0, &hints, &info))
		return NULL;
	prov = weft_prov_find(info->fabric_attr->prov_name);
	fi_freeinfo(info);
	return prov;
}

WEFT_EXPORT
int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
	      void *context)
{
	struct fi_provider *prov;
	uint32_t version;
	int ret;

	if (!attr || !fabric || (!attr->prov_name && !attr->name)) {
		FI_WARN(&weft_core_prov, FI_LOG_FABRIC,
			"fi_fabric: needs attr with prov_name or name, and fabric\n");
		return -FI_EINVAL;
	}
	weft_init();
	version = attr->api_version ? attr->api_version : WEFT_API_VERSION;
	prov = attr->prov_name ? weft_prov_find(attr->prov_name) :
	       fabric_find_by_name(attr->name, version);
	if (!prov || !prov->fabric) {
		FI_WARN(&weft_core_prov, FI_LOG_FABRIC,
			"fi_fabric: no provider %s serves fabric %s\n",
			attr->prov_name ? attr->prov_name : "",
			attr->name ? attr->name : "");
		return -FI_ENODEV;
	}
	ret = prov->fabric(attr, fabric, context);
	/* The fabric remembers the API its user speaks, as in libfabric. */
	if (!ret && *fabric && attr->api_version)
		(*fabric)->api_version = attr->api_version;
	return ret;
}

WEFT_EXPORT
int fi_open(uint32_t version, const char *name, void *attr, size_t attr_len,
	    uint64_t flags, struct fid **fid, void *context)
{
	if (!name || !fid) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"fi_open: NULL %s\n", name ? "fid" : "name");
		return -FI_EINVAL;
	}
	/* libfabric's "mr_cache" and "logging" imports are not offered:
	 * weft providers keep their own caches and log through fi_log. */
	FI_INFO(&weft_core_prov, FI_LOG_CORE,
		"fi_open: \"%s\" is not supported\n", name);
	return -FI_ENOSYS;
}
