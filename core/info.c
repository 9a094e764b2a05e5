/* SPDX-License-Identifier: MIT */
/*
 * fi_dupinfo / fi_freeinfo: every fi_info weft hands out owns each of its
 * attribute structures, strings, addresses, auth keys and nic, so any one
 * can be freed (or replaced) alone.
 */
#include "weft/compat.h"
#include <stdlib.h>
#include <string.h>
#include "core_priv.h"

static void *info_memdup(const void *src, size_t len)
{
	void *dst;

	if (!src || !len)
		return NULL;
	dst = malloc(len);
	if (dst)
		memcpy(dst, src, len);
	return dst;
}

/* Duplicate an optional string: 0 on success (NULL stays NULL). */
static int info_strdup(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -FI_ENOMEM : 0;
}

/* Duplicate an optional buffer held as (pointer, length). */
static int info_bufdup(void **dst, const void *src, size_t len)
{
	*dst = info_memdup(src, len);
	return src && len && !*dst ? -FI_ENOMEM : 0;
}

static void nic_free(struct fid_nic *nic)
{
	if (nic->device_attr) {
		free(nic->device_attr->name);
		free(nic->device_attr->device_id);
		free(nic->device_attr->device_version);
		free(nic->device_attr->vendor_id);
		free(nic->device_attr->driver);
		free(nic->device_attr->firmware);
		free(nic->device_attr);
	}
	free(nic->bus_attr);
	if (nic->link_attr) {
		free(nic->link_attr->address);
		free(nic->link_attr->network_type);
		free(nic->link_attr);
	}
	free(nic);
}

static int nic_close(struct fid *fid)
{
	nic_free(container_of(fid, struct fid_nic, fid));
	return 0;
}

static int nic_control(struct fid *fid, int command, void *arg);

static int nic_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int nic_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
			   void **ops, void *context)
{
	return -FI_ENOSYS;
}

static int nic_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	return -FI_ENOSYS;
}

static int nic_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
			  void *ops, void *context)
{
	return -FI_ENOSYS;
}

static struct fi_ops nic_ops = {
	.size = sizeof(struct fi_ops),
	.close = nic_close,
	.bind = nic_no_bind,
	.control = nic_control,
	.ops_open = nic_no_ops_open,
	.tostr = nic_no_tostr,
	.ops_set = nic_no_ops_set,
};

static int nic_dup_device(struct fi_device_attr **dst, const struct fi_device_attr *src)
{
	struct fi_device_attr *attr;

	if (!src)
		return 0;
	attr = calloc(1, sizeof(*attr));
	if (!attr)
		return -FI_ENOMEM;
	*dst = attr;
	if (info_strdup(&attr->name, src->name) ||
	    info_strdup(&attr->device_id, src->device_id) ||
	    info_strdup(&attr->device_version, src->device_version) ||
	    info_strdup(&attr->vendor_id, src->vendor_id) ||
	    info_strdup(&attr->driver, src->driver) ||
	    info_strdup(&attr->firmware, src->firmware))
		return -FI_ENOMEM;
	return 0;
}

static int nic_dup_link(struct fi_link_attr **dst, const struct fi_link_attr *src)
{
	struct fi_link_attr *attr;

	if (!src)
		return 0;
	attr = malloc(sizeof(*attr));
	if (!attr)
		return -FI_ENOMEM;
	*attr = *src;
	attr->address = attr->network_type = NULL;
	*dst = attr;
	if (info_strdup(&attr->address, src->address) ||
	    info_strdup(&attr->network_type, src->network_type))
		return -FI_ENOMEM;
	return 0;
}

/* prov_attr is opaque to core: the copy shares it, as in libfabric. */
static struct fid_nic *nic_dup(const struct fid_nic *src)
{
	struct fid_nic *nic;

	nic = calloc(1, sizeof(*nic));
	if (!nic)
		return NULL;
	nic->fid.fclass = FI_CLASS_NIC;
	nic->fid.context = src->fid.context;
	nic->fid.ops = &nic_ops;
	nic->prov_attr = src->prov_attr;
	if (nic_dup_device(&nic->device_attr, src->device_attr) ||
	    nic_dup_link(&nic->link_attr, src->link_attr))
		goto free_nic;
	if (src->bus_attr) {
		nic->bus_attr = info_memdup(src->bus_attr, sizeof(*src->bus_attr));
		if (!nic->bus_attr)
			goto free_nic;
	}
	return nic;

free_nic:
	nic_free(nic);
	return NULL;
}

static int nic_control(struct fid *fid, int command, void *arg)
{
	struct fid_nic *dup;

	if (command != FI_DUP || !arg)
		return -FI_ENOSYS;
	dup = nic_dup(container_of(fid, struct fid_nic, fid));
	if (!dup)
		return -FI_ENOMEM;
	*(struct fid **)arg = &dup->fid;
	return 0;
}

static void info_free_one(struct fi_info *info)
{
	free(info->src_addr);
	free(info->dest_addr);
	free(info->tx_attr);
	free(info->rx_attr);
	if (info->ep_attr) {
		free(info->ep_attr->auth_key);
		free(info->ep_attr);
	}
	if (info->domain_attr) {
		free(info->domain_attr->name);
		free(info->domain_attr->auth_key);
		free(info->domain_attr);
	}
	if (info->fabric_attr) {
		free(info->fabric_attr->name);
		free(info->fabric_attr->prov_name);
		free(info->fabric_attr);
	}
	if (info->nic && info->nic->fid.ops && info->nic->fid.ops->close)
		info->nic->fid.ops->close(&info->nic->fid);
	free(info);
}

WEFT_EXPORT
void fi_freeinfo(struct fi_info *info)
{
	struct fi_info *next;

	for (; info; info = next) {
		next = info->next;
		info_free_one(info);
	}
}

static struct fi_info *info_alloc(void)
{
	struct fi_info *info;

	info = calloc(1, sizeof(*info));
	if (!info)
		return NULL;
	info->tx_attr = calloc(1, sizeof(*info->tx_attr));
	info->rx_attr = calloc(1, sizeof(*info->rx_attr));
	info->ep_attr = calloc(1, sizeof(*info->ep_attr));
	info->domain_attr = calloc(1, sizeof(*info->domain_attr));
	info->fabric_attr = calloc(1, sizeof(*info->fabric_attr));
	if (!info->tx_attr || !info->rx_attr || !info->ep_attr ||
	    !info->domain_attr || !info->fabric_attr) {
		info_free_one(info);
		return NULL;
	}
	return info;
}

static int info_dup_ep(struct fi_info *dup, const struct fi_ep_attr *src)
{
	if (!src)
		return 0;
	dup->ep_attr = info_memdup(src, sizeof(*src));
	if (!dup->ep_attr)
		return -FI_ENOMEM;
	return info_bufdup((void **)&dup->ep_attr->auth_key, src->auth_key,
			   src->auth_key_size);
}

static int info_dup_domain(struct fi_info *dup, const struct fi_domain_attr *src)
{
	if (!src)
		return 0;
	dup->domain_attr = info_memdup(src, sizeof(*src));
	if (!dup->domain_attr)
		return -FI_ENOMEM;
	dup->domain_attr->name = NULL;
	dup->domain_attr->auth_key = NULL;
	if (info_strdup(&dup->domain_attr->name, src->name))
		return -FI_ENOMEM;
	return info_bufdup((void **)&dup->domain_attr->auth_key, src->auth_key,
			   src->auth_key_size);
}

static int info_dup_fabric(struct fi_info *dup, const struct fi_fabric_attr *src)
{
	if (!src)
		return 0;
	dup->fabric_attr = info_memdup(src, sizeof(*src));
	if (!dup->fabric_attr)
		return -FI_ENOMEM;
	dup->fabric_attr->name = NULL;
	dup->fabric_attr->prov_name = NULL;
	if (info_strdup(&dup->fabric_attr->name, src->name) ||
	    info_strdup(&dup->fabric_attr->prov_name, src->prov_name))
		return -FI_ENOMEM;
	return 0;
}

static int info_dup_attrs(struct fi_info *dup, const struct fi_info *info)
{
	if (info_bufdup(&dup->src_addr, info->src_addr, info->src_addrlen) ||
	    info_bufdup(&dup->dest_addr, info->dest_addr, info->dest_addrlen))
		return -FI_ENOMEM;
	if (info->tx_attr) {
		dup->tx_attr = info_memdup(info->tx_attr, sizeof(*info->tx_attr));
		if (!dup->tx_attr)
			return -FI_ENOMEM;
	}
	if (info->rx_attr) {
		dup->rx_attr = info_memdup(info->rx_attr, sizeof(*info->rx_attr));
		if (!dup->rx_attr)
			return -FI_ENOMEM;
	}
	if (info_dup_ep(dup, info->ep_attr) ||
	    info_dup_domain(dup, info->domain_attr) ||
	    info_dup_fabric(dup, info->fabric_attr))
		return -FI_ENOMEM;
	if (info->nic) {
		dup->nic = nic_dup(info->nic);
		if (!dup->nic)
			return -FI_ENOMEM;
	}
	return 0;
}

WEFT_EXPORT
struct fi_info *fi_dupinfo(const struct fi_info *info)
{
	struct fi_info *dup;

	if (!info)
		return info_alloc();

	dup = calloc(1, sizeof(*dup));
	if (!dup)
		return NULL;
	/* Scalars and the handle (which fi_dupinfo does not own) first;
	 * every owned pointer is then replaced by a copy. */
	dup->caps = info->caps;
	dup->mode = info->mode;
	dup->addr_format = info->addr_format;
	dup->src_addrlen = info->src_addrlen;
	dup->dest_addrlen = info->dest_addrlen;
	dup->handle = info->handle;
	if (info_dup_attrs(dup, info)) {
		info_free_one(dup);
		return NULL;
	}
	return dup;
}
