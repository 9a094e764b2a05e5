/* SPDX-License-Identifier: MIT */
/*
 * Device capabilities -> what the provider offers (fi_info template) and
 * the protocol choices that depend on the hardware.
 */
#include "weft/compat.h"
#include "srd_rdm.h"

#include <stdlib.h>
#include <string.h>

#define SRD_DOMAIN_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM)
#define SRD_MSG_CAPS (FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_SOURCE | \
		      FI_DIRECTED_RECV | FI_MULTI_RECV | SRD_DOMAIN_CAPS | \
		      FI_COLLECTIVE)
/* FI_RMA_EVENT: the target counts every RMA and atomic aimed at it;
 * an endpoint with a remote counter bound asks its peers to emulate RMA
 * toward it (SRD_FEAT_RMA_EVENT), which the target handles itself. */
#define SRD_RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | \
		      FI_REMOTE_WRITE | FI_RMA_EVENT)
/* What of the above each context may carry (fi_endpoint(3)). */
#define SRD_TX_CAPS (FI_MSG | FI_TAGGED | FI_SEND | FI_RMA | FI_READ | \
		     FI_WRITE | FI_COLLECTIVE)
#define SRD_RX_CAPS (FI_MSG | FI_TAGGED | FI_RECV | FI_SOURCE | \
		     FI_DIRECTED_RECV | FI_MULTI_RECV | FI_RMA | \
		     FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT | \
		     FI_COLLECTIVE)

size_t srd_rounddown_pow2(size_t v)
{
	if (!v)
		return 0;
	return (size_t)1 << (sizeof(unsigned long long) * 8 - 1 -
			     (size_t)__builtin_clzll(v));
}

static size_t srd_min_nz(size_t a, size_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

void srd_proto_caps_from_dev(const struct srd_dev_caps *caps,
			     struct srd_proto_caps *pc)
{
	memset(pc, 0, sizeof(*pc));
	pc->tx_size = srd_rounddown_pow2(srd_min_nz(caps->max_sq_wr,
						    caps->max_qp_wr));
	pc->rx_size = srd_rounddown_pow2(srd_min_nz(caps->max_rq_wr,
						    caps->max_qp_wr));
	/* Message iovs never reach the device as SGEs: they are copied into
	 * packet buffers or cut into one work request per piece, so the
	 * device's SGE limit does not bound them. */
	pc->tx_iov_limit = SRD_IOV_MAX;
	pc->rx_iov_limit = SRD_IOV_MAX;
	pc->eager_max = caps->mtu > SRD_PKT_HDR_MAX ?
			caps->mtu - SRD_PKT_HDR_MAX : 0;
	/* Injected data is copied into a packet buffer, so one packet's worth
	 * can be taken back by the caller at once. */
	pc->inject_size = pc->eager_max;
	/* Long messages are registered for the peer to read: bounded by what
	 * one registration may cover. */
	pc->max_msg_size = caps->max_mr_size &&
			   caps->max_mr_size < SRD_MAX_MSG_SIZE ?
			   caps->max_mr_size : SRD_MAX_MSG_SIZE;
	pc->hw_rma = caps->rdma_read || caps->rdma_write;
	pc->max_rma_size = pc->hw_rma ? caps->max_rdma_size : 0;
	pc->long_proto = caps->rdma_read ? SRD_LONG_READ : SRD_LONG_CTS;
}

static void srd_info_set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = strdup(src);
}

void srd_info_fill(const struct srd_dev_caps *caps, const char *dev_name,
		   struct fi_info *info)
{
	struct srd_proto_caps pc;

	srd_proto_caps_from_dev(caps, &pc);

	info->caps = SRD_MSG_CAPS | (pc.hw_rma ? SRD_RMA_CAPS : 0);
	info->mode = 0;
	info->addr_format = FI_FORMAT_UNSPEC;

	info->tx_attr->caps = info->caps & SRD_TX_CAPS;
	info->tx_attr->msg_order = FI_ORDER_SAS;
	info->tx_attr->comp_order = FI_ORDER_NONE;
	info->tx_attr->inject_size = pc.inject_size;
	info->tx_attr->size = pc.tx_size;
	info->tx_attr->iov_limit = pc.tx_iov_limit;
	info->tx_attr->rma_iov_limit = pc.hw_rma ? 1 : 0;

	info->rx_attr->caps = info->caps & SRD_RX_CAPS;
	info->rx_attr->msg_order = FI_ORDER_SAS;
	info->rx_attr->comp_order = FI_ORDER_NONE;
	info->rx_attr->size = pc.rx_size;
	info->rx_attr->iov_limit = pc.rx_iov_limit;

	info->ep_attr->type = FI_EP_RDM;
	info->ep_attr->protocol = FI_PROTO_UNSPEC;
	info->ep_attr->protocol_version = SRD_EP_NAME_VERSION;
	info->ep_attr->max_msg_size = pc.max_msg_size;
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;

	info->domain_attr->threading = FI_THREAD_SAFE;
	info->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->resource_mgmt = FI_RM_ENABLED;
	info->domain_attr->av_type = FI_AV_UNSPEC;
	info->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR |
				     FI_MR_ALLOCATED;
	info->domain_attr->mr_key_size = sizeof(uint32_t);
	info->domain_attr->cq_data_size = sizeof(uint32_t);
	info->domain_attr->cq_cnt = caps->max_cq;
	info->domain_attr->ep_cnt = caps->max_qp;
	info->domain_attr->tx_ctx_cnt = 1;
	info->domain_attr->rx_ctx_cnt = 1;
	info->domain_attr->max_ep_tx_ctx = 1;
	info->domain_attr->max_ep_rx_ctx = 1;
	info->domain_attr->mr_cnt = caps->max_mr;
	info->domain_attr->mr_iov_limit = 1;
	info->domain_attr->caps = SRD_DOMAIN_CAPS;
	srd_info_set_str(&info->domain_attr->name, dev_name);

	srd_info_set_str(&info->fabric_attr->name, "srd");
}

static int srd_info_addr_dup(void **dst, size_t *dstlen, const void *src)
{
	*dst = malloc(sizeof(struct srd_ep_name));
	if (!*dst)
		return -FI_ENOMEM;
	memcpy(*dst, src, sizeof(struct srd_ep_name));
	*dstlen = sizeof(struct srd_ep_name);
	return 0;
}

/* A source the application names must be on this device; only the GID can
 * be chosen, the QP number comes with the endpoint's QP. */
static int srd_info_check_src(const struct srd_dev_caps *caps,
			      const void *addr, size_t len)
{
	const struct srd_ep_name *name = addr;

	if (len != sizeof(*name) || name->version != SRD_EP_NAME_VERSION) {
		FI_INFO(&srd_prov, FI_LOG_CORE,
			"hints->src_addr of %zu bytes is not an srd name\n",
			len);
		return -FI_ENODATA;
	}
	if (memcmp(name->gid, caps->gid.raw, sizeof(name->gid))) {
		FI_INFO(&srd_prov, FI_LOG_CORE,
			"hints->src_addr names another device\n");
		return -FI_ENODATA;
	}
	return 0;
}

int srd_info_set_addrs(const struct srd_dev_caps *caps,
		       const struct fi_info *hints, struct fi_info *info)
{
	struct srd_ep_name name;
	int ret;

	if (hints && hints->src_addr) {
		ret = srd_info_check_src(caps, hints->src_addr,
					 hints->src_addrlen);
		if (ret)
			return ret;
	}
	if (hints && hints->dest_addr) {
		if (hints->dest_addrlen != sizeof(name)) {
			FI_INFO(&srd_prov, FI_LOG_CORE,
				"hints->dest_addr of %zu bytes is not an srd name\n",
				hints->dest_addrlen);
			return -FI_ENODATA;
		}
		if (srd_ep_name_parse(hints->dest_addr, hints->dest_addrlen,
				      &name))
			return -FI_ENODATA;
		ret = srd_info_addr_dup(&info->dest_addr, &info->dest_addrlen,
					hints->dest_addr);
		if (ret)
			return ret;
	}
	memset(&name, 0, sizeof(name));
	name.version = SRD_EP_NAME_VERSION;
	memcpy(name.gid, caps->gid.raw, sizeof(name.gid));
	return srd_info_addr_dup(&info->src_addr, &info->src_addrlen, &name);
}
