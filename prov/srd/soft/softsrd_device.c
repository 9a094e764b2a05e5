/* SPDX-License-Identifier: MIT */
/*
 * softsrd devices (one per local IPv4 address, or FI_SRD_SOFT_DEVICES on
 * one address) and their contexts; the
 * answers of query_device_ex / efadv_query_device / query_port / query_gid
 * come from the FI_SRD_SOFT_* settings read at open.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Non-loopback addresses first: the first device is the one that reaches
 * other hosts. */
static int softsrd_ifa_usable(const struct ifaddrs *ifa, bool loopback)
{
	if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET)
		return 0;
	if (!(ifa->ifa_flags & IFF_UP))
		return 0;
	return !!(ifa->ifa_flags & IFF_LOOPBACK) == loopback;
}

static void softsrd_device_fill(struct softsrd_device *dev,
				const char *ifname, struct in_addr ip, int idx)
{
	memset(dev, 0, sizeof(*dev));
	dev->ip = ip;
	dev->ibdev.node_type = IBV_NODE_UNSPECIFIED;
	dev->ibdev.transport_type = IBV_TRANSPORT_UNSPECIFIED;
	if (idx < 0)
		snprintf(dev->ibdev.name, sizeof(dev->ibdev.name),
			 "softsrd_%.20s", ifname);
	else
		snprintf(dev->ibdev.name, sizeof(dev->ibdev.name),
			 "softsrd_%.20s_%d", ifname, idx);
	snprintf(dev->ibdev.dev_name, sizeof(dev->ibdev.dev_name), "softsrd");
}

/* Device names select devices (fi_info's domain name): a second address on
 * an interface gets the interface name with its index. */
static int softsrd_name_index(const struct softsrd_device *devs, int n,
			      const char *ifname)
{
	char name[IBV_SYSFS_NAME_MAX];
	size_t len;
	int same = 0;

	len = (size_t)snprintf(name, sizeof(name), "softsrd_%.20s", ifname);
	for (int i = 0; i < n; i++) {
		const char *other = devs[i].ibdev.name;

		if (!strncmp(other, name, len) &&
		    (!other[len] || other[len] == '_'))
			same++;
	}
	return same ? same : -1;
}

/* FI_SRD_SOFT_ADDR and FI_SRD_SOFT_IFACE narrow the list; both may be set */
static bool softsrd_ifa_wanted(const struct ifaddrs *ifa, const char *want,
			       struct in_addr want_ip, const char *iface)
{
	struct in_addr ip = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr;

	return (!want[0] || ip.s_addr == want_ip.s_addr) &&
	       (!iface[0] || !strcmp(ifa->ifa_name, iface));
}

/* FI_SRD_SOFT_DEVICES=count: count devices on the first address found,
 * told apart by name and UDP port (the port is in every QP number). */
static int softsrd_devices_scan(struct softsrd_device *devs, int max,
				const char *want, const char *iface,
				int count)
{
	struct ifaddrs *ifas, *ifa;
	struct in_addr want_ip;
	int n = 0;

	if (want[0] && inet_pton(AF_INET, want, &want_ip) != 1) {
		FI_WARN(softsrd_prov, FI_LOG_CORE,
			"FI_SRD_SOFT_ADDR=%s is not an IPv4 address\n", want);
		return 0;
	}
	if (getifaddrs(&ifas)) {
		FI_WARN(softsrd_prov, FI_LOG_CORE, "getifaddrs: %s\n",
			strerror(errno));
		return 0;
	}
	for (int lo = 0; lo < 2; lo++) {
		for (ifa = ifas; ifa && n < max; ifa = ifa->ifa_next) {
			struct in_addr ip;

			if (!softsrd_ifa_usable(ifa, lo))
				continue;
			if (!softsrd_ifa_wanted(ifa, want, want_ip, iface))
				continue;
			ip = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
			if (count) {
				for (n = 0; n < count && n < max; n++)
					softsrd_device_fill(&devs[n],
							    ifa->ifa_name, ip,
							    n);
				goto out;
			}
			softsrd_device_fill(&devs[n], ifa->ifa_name, ip,
					    softsrd_name_index(devs, n,
							       ifa->ifa_name));
			n++;
		}
	}
out:
	freeifaddrs(ifas);
	if ((want[0] || iface[0]) && !n)
		FI_WARN(softsrd_prov, FI_LOG_CORE,
			"no IPv4 address that is up matches FI_SRD_SOFT_ADDR=%s "
			"FI_SRD_SOFT_IFACE=%s\n", want, iface);
	return n;
}

/* One allocation: the NULL-terminated pointer array, then the devices. */
static struct ibv_device **softsrd_get_device_list(int *num_devices)
{
	struct softsrd_config cfg;
	struct softsrd_device *devs;
	struct ibv_device **list;
	int n;

	if (num_devices)
		*num_devices = 0;
	softsrd_config_read(&cfg);
	list = calloc(1, (SOFTSRD_MAX_DEVICES + 1) * sizeof(*list) +
		      SOFTSRD_MAX_DEVICES * sizeof(*devs));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	devs = (struct softsrd_device *)(list + SOFTSRD_MAX_DEVICES + 1);
	n = softsrd_devices_scan(devs, SOFTSRD_MAX_DEVICES, cfg.addr, cfg.iface,
				 (int)cfg.devices);
	for (int i = 0; i < n; i++)
		list[i] = &devs[i].ibdev;
	if (num_devices)
		*num_devices = n;
	return list;
}

static void softsrd_free_device_list(struct ibv_device **list)
{
	free(list);
}

static const char *softsrd_get_device_name(struct ibv_device *device)
{
	return device->name;
}

static int softsrd_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return EOPNOTSUPP;
}

static int softsrd_query_port_sz(struct ibv_context *context,
				 uint8_t port_num,
				 struct ibv_port_attr *attr, size_t attr_len)
{
	struct softsrd_ctx *ctx = to_softsrd_ctx(context);
	struct ibv_port_attr a = {
		.state = IBV_PORT_ACTIVE,
		.max_mtu = IBV_MTU_4096,
		.active_mtu = IBV_MTU_4096,
		.gid_tbl_len = 1,
		.max_msg_sz = ctx->cfg.mtu,
		.pkey_tbl_len = 1,
		.active_width = 1,
		.active_speed = 1,
		.phys_state = 5,	/* LinkUp */
		.link_layer = IBV_LINK_LAYER_UNSPECIFIED,
	};

	if (port_num != 1) {
		FI_WARN(softsrd_prov, FI_LOG_CORE, "no port %u (only 1)\n",
			port_num);
		return EINVAL;
	}
	memcpy(attr, &a, attr_len < sizeof(a) ? attr_len : sizeof(a));
	return 0;
}

static int softsrd_query_port(struct ibv_context *context, uint8_t port_num,
			      struct ibv_port_attr *attr)
{
	return softsrd_query_port_sz(context, port_num, attr, sizeof(*attr));
}

static int softsrd_query_gid(struct ibv_context *context, uint8_t port_num,
			     int index, union ibv_gid *gid)
{
	if (port_num != 1 || index != 0) {
		FI_WARN(softsrd_prov, FI_LOG_CORE,
			"no GID %d on port %u (only index 0 on port 1)\n",
			index, port_num);
		return EINVAL;
	}
	*gid = to_softsrd_ctx(context)->gid;
	return 0;
}

static void softsrd_device_attr(struct softsrd_ctx *ctx,
				struct ibv_device_attr_ex *a)
{
	struct ibv_device_attr *o = &a->orig_attr;

	memset(a, 0, sizeof(*a));
	snprintf(o->fw_ver, sizeof(o->fw_ver), "softsrd-%d",
		 SOFTSRD_WIRE_VERSION);
	memcpy(&o->node_guid, &ctx->gid.raw[8], sizeof(o->node_guid));
	o->sys_image_guid = o->node_guid;
	o->max_mr_size = UINT64_MAX;
	o->page_size_cap = 4096;
	o->vendor_id = 0x1d0f;		/* Amazon, as EFA */
	o->vendor_part_id = 0x5f7f;	/* not a real EFA part */
	o->max_qp = SOFTSRD_QP_PER_CTX;
	o->max_qp_wr = (int)ctx->cfg.max_sq_wr;
	o->max_sge = (int)ctx->cfg.max_sge;
	o->max_cq = 1024;
	o->max_cqe = 1 << 22;
	o->max_mr = 1 << 20;
	o->max_pd = 1 << 16;
	o->max_ah = 1 << 16;
	o->max_pkeys = 1;
	o->phys_port_cnt = 1;
}

static int softsrd_query_device_ex_sz(struct ibv_context *context,
				      const struct ibv_query_device_ex_input *in,
				      struct ibv_device_attr_ex *attr,
				      size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if (in && in->comp_mask)
		return EINVAL;
	softsrd_device_attr(to_softsrd_ctx(context), &a);
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

int softsrd_query_device_ex(struct ibv_context *context,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr)
{
	return softsrd_query_device_ex_sz(context, input, attr, sizeof(*attr));
}

#define SOFTSRD_FITS(type, field, inlen) \
	(offsetof(type, field) + sizeof(((type *)0)->field) <= (inlen))

static int softsrd_efadv_query_device(struct ibv_context *context,
				      struct efadv_device_attr *attr,
				      uint32_t inlen)
{
	struct softsrd_config *cfg = &to_softsrd_ctx(context)->cfg;
	struct efadv_device_attr a = {
		.max_sq_wr = cfg->max_sq_wr,
		.max_rq_wr = cfg->max_rq_wr,
		.max_sq_sge = (uint16_t)cfg->max_sge,
		.max_rq_sge = (uint16_t)cfg->max_sge,
		.inline_buf_size = (uint16_t)cfg->inline_buf_size,
		.max_rdma_size = cfg->max_rdma_size,
	};

	if (!SOFTSRD_FITS(struct efadv_device_attr, inline_buf_size, inlen)) {
		FI_WARN(softsrd_prov, FI_LOG_CORE,
			"efadv_query_device: inlen %u too small\n", inlen);
		return EINVAL;
	}
	if (cfg->rdma_read)
		a.device_caps |= EFADV_DEVICE_ATTR_CAPS_RDMA_READ;
	if (cfg->rnr_retry)
		a.device_caps |= EFADV_DEVICE_ATTR_CAPS_RNR_RETRY;
	if (cfg->rdma_write)
		a.device_caps |= SRD_EFADV_CAPS_RDMA_WRITE;
	memset(attr, 0, inlen);
	memcpy(attr, &a, inlen < sizeof(a) ? inlen : sizeof(a));
	return 0;
}

static struct softsrd_ctx *softsrd_ctx_alloc(struct ibv_device *device)
{
	struct softsrd_device *dev = container_of(device, struct softsrd_device,
						  ibdev);
	struct softsrd_ctx *ctx = calloc(1, sizeof(*ctx));
	struct ibv_context *c;

	if (!ctx)
		return NULL;
	ctx->dev = *dev;
	ctx->ip = dev->ip;
	c = &ctx->vctx.context;
	c->device = &ctx->dev.ibdev;
	c->cmd_fd = -1;
	c->async_fd = -1;
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&c->mutex, NULL);
	ctx->vctx.sz = sizeof(ctx->vctx);
	ctx->vctx.query_port = softsrd_query_port_sz;
	ctx->vctx.query_device_ex = softsrd_query_device_ex_sz;
	return ctx;
}

static struct ibv_context *softsrd_open_device(struct ibv_device *device)
{
	struct softsrd_ctx *ctx;
	char ip[INET_ADDRSTRLEN];

	if (!device) {
		errno = EINVAL;
		return NULL;
	}
	ctx = softsrd_ctx_alloc(device);
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->vctx.context.ops.poll_cq = softsrd_poll_cq;
	ctx->vctx.context.ops.req_notify_cq = softsrd_req_notify_cq;
	ctx->vctx.context.ops.post_recv = softsrd_post_recv;
	ctx->vctx.context.ops.post_send = softsrd_post_send;
	ctx->vctx.create_cq_ex = softsrd_create_cq_ex;
	softsrd_config_read(&ctx->cfg);
	softsrd_rto_ctx_init(ctx);
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->key_gen = (uint32_t)util_time_ns();
	if (softsrd_wire_open(ctx))
		goto err_lock;
	softsrd_gid_from_ip(&ctx->gid, ctx->ip);
	if (softsrd_thread_start(ctx))
		goto err_wire;
	FI_INFO(softsrd_prov, FI_LOG_CORE, "%s open on %s:%u, io %s\n",
		device->name, inet_ntop(AF_INET, &ctx->ip, ip, sizeof(ip)),
		ctx->port, ctx->wire.uring ? "io_uring" : "sendmmsg/recvmmsg");
	return &ctx->vctx.context;

err_wire:
	softsrd_wire_close(ctx);
err_lock:
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	errno = EINVAL;
	return NULL;
}

static int softsrd_close_device(struct ibv_context *context)
{
	struct softsrd_ctx *ctx = to_softsrd_ctx(context);

	for (int i = 1; i <= SOFTSRD_QP_PER_CTX; i++) {
		if (ctx->qps[i]) {
			FI_WARN(softsrd_prov, FI_LOG_CORE,
				"close_device with QP %u still open\n",
				ctx->qps[i]->ibv_qp.qp_num);
			return EBUSY;
		}
	}
	softsrd_thread_stop(ctx);
	softsrd_wire_close(ctx);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&context->mutex);
	free(ctx);
	return 0;
}

const struct srd_verbs_ops softsrd_verbs_ops = {
	.name = "softsrd",
	.get_device_list = softsrd_get_device_list,
	.free_device_list = softsrd_free_device_list,
	.get_device_name = softsrd_get_device_name,
	.open_device = softsrd_open_device,
	.close_device = softsrd_close_device,
	.query_device_ex = softsrd_query_device_ex,
	.efadv_query_device = softsrd_efadv_query_device,
	.query_port = softsrd_query_port,
	.query_gid = softsrd_query_gid,
	.alloc_pd = softsrd_alloc_pd,
	.dealloc_pd = softsrd_dealloc_pd,
	.reg_mr = softsrd_reg_mr,
	.dereg_mr = softsrd_dereg_mr,
	.create_cq_ex = softsrd_create_cq_ex,
	.destroy_cq = softsrd_destroy_cq,
	.efadv_create_qp_ex = softsrd_create_qp,
	.qp_to_qp_ex = softsrd_qp_to_qp_ex,
	.modify_qp = softsrd_modify_qp,
	.query_qp = softsrd_query_qp,
	.query_qp_data_in_order = softsrd_query_qp_data_in_order,
	.destroy_qp = softsrd_destroy_qp,
	.create_ah = softsrd_create_ah,
	.efadv_query_ah = softsrd_efadv_query_ah,
	.destroy_ah = softsrd_destroy_ah,
};
