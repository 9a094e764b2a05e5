/* SPDX-License-Identifier: MIT */
/*
 * srd endpoint: util's endpoint, one SRD QP and its CQ (created at open so
 * that fi_getname works before fi_enable), a registered slab of MTU-sized
 * receive buffers (all posted at enable) and one of packet buffers to send
 * from. The protocols that run on it (srd_proto.c) keep their state in it.
 */
#include "weft/compat.h"
#include "srd_proto.h"
#include "srd_opt.h"
#include "proto/srd_stripe.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *srd_slab_alloc(size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, size))
		return NULL;
	memset(p, 0, size);
	return p;
}

static int srd_slab_reg(struct srd_ep *ep, void *buf, size_t len,
			struct ibv_mr **mr)
{
	*mr = srd_dev_reg_mr(ep->dev, buf, len,
			     IBV_ACCESS_LOCAL_WRITE);
	if (!*mr) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"%s: registering %zu bytes of packet buffers: %s\n",
			ep->dev->name, len, strerror(errno ? errno : EIO));
		return errno ? -errno : -FI_EIO;
	}
	return 0;
}

static int srd_ep_rx_slab(struct srd_ep *ep)
{
	uint32_t i;

	ep->rx_count = ep->qp->rq_depth < SRD_RX_BUFS_MAX ?
		       ep->qp->rq_depth : SRD_RX_BUFS_MAX;
	ep->repost_batch = ep->rx_count / 8;
	if (ep->repost_batch > SRD_RX_REPOST_BATCH)
		ep->repost_batch = SRD_RX_REPOST_BATCH;
	if (!ep->repost_batch)
		ep->repost_batch = 1;
	ep->rx_slab = srd_slab_alloc((size_t)ep->rx_count * ep->pkt_stride);
	ep->rxbufs = calloc(ep->rx_count, sizeof(*ep->rxbufs));
	if (!ep->rx_slab || !ep->rxbufs)
		return -FI_ENOMEM;
	for (i = 0; i < ep->rx_count; i++) {
		ep->rxbufs[i].hdr.kind = SRD_WR_RXBUF;
		ep->rxbufs[i].data = ep->rx_slab + (size_t)i * ep->pkt_stride;
	}
	return srd_slab_reg(ep, ep->rx_slab, (size_t)ep->rx_count *
			    ep->pkt_stride, &ep->rx_mr);
}

static int srd_ep_tx_slab(struct srd_ep *ep)
{
	uint32_t i;

	/* Leave send-queue room for RDMA reads and control packets. A
	 * packet buffer is not a send-queue slot (what finds the queue full
	 * waits on its peer's queue), so a shallow queue still gets enough
	 * of them for a message and the handshake it starts. */
	ep->tx_count = ep->qp->sq_depth / 2;
	if (ep->tx_count < SRD_TX_BUFS_MIN)
		ep->tx_count = SRD_TX_BUFS_MIN;
	if (ep->tx_count > SRD_TX_BUFS_MAX)
		ep->tx_count = SRD_TX_BUFS_MAX;
	ep->tx_slab = srd_slab_alloc((size_t)ep->tx_count * ep->pkt_stride);
	ep->txbufs = calloc(ep->tx_count, sizeof(*ep->txbufs));
	if (!ep->tx_slab || !ep->txbufs)
		return -FI_ENOMEM;
	for (i = 0; i < ep->tx_count; i++) {
		ep->txbufs[i].hdr.kind = SRD_WR_TXBUF;
		ep->txbufs[i].data = ep->tx_slab + (size_t)i * ep->pkt_stride;
		LL_PREPEND(ep->tx_free, &ep->txbufs[i]);
	}
	return srd_slab_reg(ep, ep->tx_slab, (size_t)ep->tx_count *
			    ep->pkt_stride, &ep->tx_mr);
}

static int srd_ep_qp_open(struct srd_ep *ep, const struct fi_info *info)
{
	struct srd_dev_qp_attr qa;
	struct srd_dev_cq_attr ca;
	int ret;

	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = ep->pc.tx_size < 2048 ? (uint32_t)ep->pc.tx_size : 2048;
	qa.rq_depth = ep->pc.rx_size < SRD_RX_BUFS_MAX ?
		      (uint32_t)ep->pc.rx_size : SRD_RX_BUFS_MAX;
	qa.tclass = info->tx_attr ? info->tx_attr->tclass : 0;
	memset(&ca, 0, sizeof(ca));
	ca.depth = srd_dev_cq_depth(qa.sq_depth, qa.rq_depth, 1, 0,
				    ep->dev->caps.max_cqe);
	ca.batch = srd_settings.cq_batch;
	ca.arg = ep;
	ret = srd_dev_cq_open(ep->dev, &ca, &srd_ep_cq_ops, &ep->cq);
	if (ret)
		return ret;
	qa.send_cq = qa.recv_cq = ep->cq->cq;
	qa.qp_context = ep;
	ret = srd_dev_qp_create(ep->dev, &srd_settings, &qa, &ep->qp);
	if (ret)
		return ret;
	srd_ep_name_build(ep->qp, &ep->name);
	return 0;
}

static void srd_ep_free(struct srd_ep *ep)
{
	/* The QP first: no work request may still point into what follows. */
	if (ep->qp)
		srd_dev_qp_destroy(ep->qp);
	srd_stripe_qps_destroy(ep);
	srd_peers_free(ep);
	/* Before the protocols' pools: unexpected messages hold buffers. */
	srd_rx_fini(ep);
	srd_tx_fini(ep);
	srd_proto_ep_fini(ep);
	if (ep->rx_mr)
		srd_dev_dereg_mr(ep->dev, ep->rx_mr);
	if (ep->tx_mr)
		srd_dev_dereg_mr(ep->dev, ep->tx_mr);
	if (ep->cq)
		srd_dev_cq_close(ep->cq);
	free(ep->rx_slab);
	free(ep->rxbufs);
	free(ep->tx_slab);
	free(ep->txbufs);
	free(ep->peers);
	free(ep->addr_peer);
	free(ep);
}

static int srd_ep_close(struct fid *fid)
{
	struct srd_ep *ep = container_of(fid, struct srd_ep, util.ep_fid.fid);

	/* shm first: its unexpected messages leave our receive side, and
	 * nothing completes into our transfer entries any more. */
	srd_shm_close(ep);
	util_coll_ep_fini(&ep->util);
	util_ep_fini(&ep->util);
	srd_ep_free(ep);
	return 0;
}

static int srd_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct srd_ep *ep = container_of(fid, struct srd_ep, util.ep_fid.fid);
	size_t len = *addrlen;

	*addrlen = sizeof(ep->name);
	if (!addr || len < sizeof(ep->name))
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->name, sizeof(ep->name));
	return 0;
}

static int srd_ep_enable(struct util_ep *util)
{
	struct srd_ep *ep = to_srd_ep_util(util);
	int ret = srd_shm_open(ep);

	return ret ? ret : srd_rx_post_all(ep);
}

static const struct fi_ops srd_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = srd_ep_close,
	.bind = util_ep_bind,
	.control = util_ep_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static const struct fi_ops_ep srd_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = srd_ep_cancel,
	.getopt = srd_ep_getopt,
	.setopt = srd_ep_setopt,
	.tx_ctx = util_no_tx_ctx,
	.rx_ctx = util_no_rx_ctx,
	.rx_size_left = util_no_size_left,
	.tx_size_left = util_no_size_left,
};

static const struct fi_ops_cm srd_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = util_no_setname,
	.getname = srd_ep_getname,
	.getpeer = util_no_getpeer,
	.connect = util_no_connect,
	.listen = util_no_listen,
	.accept = util_no_accept,
	.reject = util_no_reject,
	.shutdown = util_no_shutdown,
	.join = util_coll_join,
};

static void srd_ep_set_ops(struct srd_ep *ep)
{
	ep->util.ep_fid.fid.ops = UTIL_OPS(&srd_ep_fi_ops);
	ep->util.ep_fid.ops = UTIL_OPS(&srd_ep_ops);
	ep->util.ep_fid.cm = UTIL_OPS(&srd_ep_cm_ops);
	ep->util.ep_fid.msg = UTIL_OPS(&srd_msg_ops);
	ep->util.ep_fid.tagged = UTIL_OPS(&srd_tagged_ops);
	ep->util.ep_fid.rma = UTIL_OPS(&srd_rma_ops);
	ep->util.ep_fid.atomic = UTIL_OPS(&srd_atomic_ops);
	ep->util.enable = srd_ep_enable;
}

/* The iov limits the caller chose in its fi_info (0: ours), never above
 * what the provider handles. */
static size_t srd_ep_iov_limit(size_t asked, size_t max, const char *side)
{
	if (!asked)
		return max;
	if (asked > max) {
		FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
			"%s iov_limit %zu lowered to %zu\n", side, asked, max);
		return max;
	}
	return asked;
}

static int srd_ep_setup(struct srd_ep *ep, const struct fi_info *info)
{
	int ret;

	ep->dev = ep->domain->dev;
	ep->pc = ep->domain->pc;
	ep->pc.tx_iov_limit = srd_ep_iov_limit(info->tx_attr->iov_limit,
					       ep->pc.tx_iov_limit, "tx");
	ep->pc.rx_iov_limit = srd_ep_iov_limit(info->rx_attr->iov_limit,
					       ep->pc.rx_iov_limit, "rx");
	ep->pkt_size = ep->dev->caps.mtu;
	/* Packet headers are read in place: each buffer starts on a cache
	 * line, whatever the MTU (softsrd's may be odd, e.g. 65423). */
	ep->pkt_stride = (ep->pkt_size + SRD_PKT_ALIGN - 1) &
			 ~(uint32_t)(SRD_PKT_ALIGN - 1);
	ep->long_read = ep->dev->caps.rdma_read;
	ep->medium_max = ep->long_read ? SRD_MEDIUM_MAX : SIZE_MAX;
	srd_watch_init(ep);
	ep->rng = (uint64_t)(uintptr_t)ep ^ (uint64_t)time(NULL);
	ep->peers = calloc(SRD_MAX_PEERS, sizeof(*ep->peers));
	if (!ep->peers)
		return -FI_ENOMEM;
	ret = srd_ep_qp_open(ep, info);
	if (!ret) {
		srd_shm_ep_init(ep);
		ret = srd_ep_rx_slab(ep);
	}
	if (!ret)
		ret = srd_ep_tx_slab(ep);
	if (!ret)
		ret = srd_tx_init(ep);
	if (!ret)
		ret = srd_rx_init(ep);
	if (!ret)
		ret = srd_proto_ep_init(ep);
	return ret;
}

int srd_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep_fid, void *context)
{
	struct srd_ep *ep;
	int ret;

	if (!info || !info->ep_attr || !info->tx_attr || !info->rx_attr) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL, "fi_endpoint without info\n");
		return -FI_EINVAL;
	}
	if (info->ep_attr->type != FI_EP_RDM &&
	    info->ep_attr->type != FI_EP_UNSPEC) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"srd endpoints are FI_EP_RDM only\n");
		return -FI_EINVAL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->domain = to_srd_domain(domain);
	ret = util_ep_init(&ep->util, &ep->domain->util, info,
			   srd_ep_progress, context);
	if (ret) {
		free(ep);
		return ret;
	}
	ret = srd_ep_setup(ep, info);
	if (ret) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL, "endpoint setup: %s\n",
			fi_strerror(-ret));
		util_ep_fini(&ep->util);
		srd_ep_free(ep);
		return ret;
	}
	srd_ep_set_ops(ep);
	if (info->caps & FI_COLLECTIVE)
		util_coll_ep_init(&ep->util, &srd_coll_xport);
	*ep_fid = &ep->util.ep_fid;
	return 0;
}
