/* SPDX-License-Identifier: MIT */
/*
 * Fake providers for core tests: each returns copies of infos the test
 * controls and records how core called it.
 */
#ifndef WEFT_TEST_FAKE_PROV_H
#define WEFT_TEST_FAKE_PROV_H

#include "weft/compat.h"
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>
#include <string.h>
#include "weft/core.h"

struct fake_call {
	int count;
	uint32_t version;
	const char *node, *service;
	uint64_t flags;
	const struct fi_info *hints;
};

struct fake_prov {
	struct fi_provider prov;
	struct fi_info *infos;		/* what getinfo hands out (copies) */
	int getinfo_ret;		/* non-zero: getinfo fails with it */
	struct fake_call call;
	int fabric_calls;
};

static int fake_getinfo(struct fake_prov *fake, uint32_t version,
			const char *node, const char *service, uint64_t flags,
			const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *head = NULL, **tail = &head, *cur;

	fake->call.count++;
	fake->call.version = version;
	fake->call.node = node;
	fake->call.service = service;
	fake->call.flags = flags;
	fake->call.hints = hints;
	if (fake->getinfo_ret)
		return fake->getinfo_ret;
	for (cur = fake->infos; cur; cur = cur->next) {
		*tail = fi_dupinfo(cur);
		if (!*tail) {
			fi_freeinfo(head);
			return -FI_ENOMEM;
		}
		tail = &(*tail)->next;
	}
	*info = head;
	return head ? 0 : -FI_ENODATA;
}

struct fake_fabric {
	struct fid_fabric fabric;
	struct fake_prov *owner;
};

static int fake_fabric_close(struct fid *fid)
{
	free(container_of(fid, struct fake_fabric, fabric.fid));
	return 0;
}

static struct fi_ops fake_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fake_fabric_close,
};

static int fake_fabric(struct fake_prov *fake, struct fi_fabric_attr *attr,
		       struct fid_fabric **fabric, void *context)
{
	struct fake_fabric *fab = calloc(1, sizeof(*fab));

	if (!fab)
		return -FI_ENOMEM;
	fake->fabric_calls++;
	fab->owner = fake;
	fab->fabric.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric.fid.context = context;
	fab->fabric.fid.ops = &fake_fabric_fi_ops;
	*fabric = &fab->fabric;
	return 0;
}

#define FAKE_PROV_DEFINE(var, pname, fiver)					\
	static struct fake_prov var;					\
	static int var##_getinfo(uint32_t version, const char *node,	\
				 const char *service, uint64_t flags,	\
				 const struct fi_info *hints,		\
				 struct fi_info **info)			\
	{								\
		return fake_getinfo(&var, version, node, service, flags, \
				    hints, info);			\
	}								\
	static int var##_fabric(struct fi_fabric_attr *attr,		\
				struct fid_fabric **fabric, void *context) \
	{								\
		return fake_fabric(&var, attr, fabric, context);	\
	}								\
	static struct fake_prov var = {					\
		.prov = {						\
			.version = FI_VERSION(2, 3),			\
			.fi_version = (fiver),				\
			.name = (pname),				\
			.getinfo = var##_getinfo,			\
			.fabric = var##_fabric,				\
		},							\
	}

/* A full-featured RDM info, the base most tests tweak. */
static inline struct fi_info *fake_info_rdm(const char *fabric, const char *domain)
{
	struct fi_info *info = fi_allocinfo();

	if (!info)
		return NULL;
	info->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_SEND | FI_RECV |
		     FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |
		     FI_MULTI_RECV | FI_SOURCE;
	info->mode = FI_CONTEXT;
	info->addr_format = FI_SOCKADDR_IN;
	info->tx_attr->caps = info->caps & ~(FI_RECV | FI_REMOTE_READ |
		FI_REMOTE_WRITE | FI_MULTI_RECV | FI_SOURCE);
	info->tx_attr->mode = FI_CONTEXT;
	info->tx_attr->msg_order = FI_ORDER_SAS;
	info->tx_attr->comp_order = FI_ORDER_NONE;
	info->tx_attr->inject_size = 64;
	info->tx_attr->size = 1024;
	info->tx_attr->iov_limit = 4;
	info->tx_attr->rma_iov_limit = 1;
	info->rx_attr->caps = info->caps & ~(FI_SEND | FI_READ | FI_WRITE);
	info->rx_attr->mode = FI_CONTEXT;
	info->rx_attr->msg_order = FI_ORDER_SAS;
	info->rx_attr->size = 2048;
	info->rx_attr->iov_limit = 4;
	info->ep_attr->type = FI_EP_RDM;
	info->ep_attr->protocol = FI_PROTO_EFA;
	info->ep_attr->protocol_version = 2;
	info->ep_attr->max_msg_size = 1 << 20;
	info->ep_attr->mem_tag_format = 0xffffffffULL;
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;
	info->domain_attr->name = strdup(domain);
	info->domain_attr->threading = FI_THREAD_SAFE;
	info->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->resource_mgmt = FI_RM_ENABLED;
	info->domain_attr->av_type = FI_AV_UNSPEC;
	info->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				     FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	info->domain_attr->mr_key_size = 4;
	info->domain_attr->cq_data_size = 4;
	info->domain_attr->cq_cnt = 16;
	info->domain_attr->ep_cnt = 16;
	info->domain_attr->tx_ctx_cnt = 1;
	info->domain_attr->rx_ctx_cnt = 1;
	info->domain_attr->max_ep_tx_ctx = 1;
	info->domain_attr->max_ep_rx_ctx = 1;
	info->domain_attr->mr_iov_limit = 1;
	info->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	info->fabric_attr->name = strdup(fabric);
	return info;
}

static inline struct fi_info *fake_info_msg(const char *fabric, const char *domain)
{
	struct fi_info *info = fake_info_rdm(fabric, domain);

	if (info) {
		info->ep_attr->type = FI_EP_MSG;
		info->mode = 0;
		info->tx_attr->mode = info->rx_attr->mode = 0;
	}
	return info;
}

#endif /* WEFT_TEST_FAKE_PROV_H */
