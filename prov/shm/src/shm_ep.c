/* SPDX-License-Identifier: MIT */
/*
 * shm endpoint: util's endpoint base plus one transport region, created at
 * open so that fi_getname works before fi_enable.
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <string.h>

#include "shm.h"

static int shm_ep_close(struct fid *fid)
{
	struct shm_ep *ep = container_of(fid, struct shm_ep, util.ep_fid.fid);

	shm_av_ep_del(ep);
	shm_peer_srx_detach(ep);
	util_coll_ep_fini(&ep->util);
	util_ep_fini(&ep->util);
	shm_conn_close_all(ep);
	shm_region_close(ep->region);
	shm_rma_bounce_fini(ep);
	shm_rx_fini(ep);
	shm_tx_fini(ep);
	free(ep->src_map);
	free(ep);
	return 0;
}

static int shm_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct shm_ep *ep = container_of(fid, struct shm_ep, util.ep_fid.fid);
	size_t len = *addrlen;

	*addrlen = SHM_ADDR_LEN;
	if (!addr || len < SHM_ADDR_LEN)
		return -FI_ETOOSMALL;
	memcpy(addr, ep->addr, SHM_ADDR_LEN);
	return 0;
}

static int shm_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct shm_ep *ep = container_of(fid, struct shm_ep, util.ep_fid.fid);

	if (bfid && bfid->fclass == FI_CLASS_SRX_CTX)
		return shm_ep_bind_peer_srx(ep, bfid);
	return util_ep_bind(fid, bfid, flags);
}

static const struct fi_ops shm_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = shm_ep_close,
	.bind = shm_ep_bind,
	.control = util_ep_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

/* Every operation takes a cell in its peer's queue, and those that wait
 * for an ACK (large sends, delivery-complete sends, RMA, atomics) also a
 * tx entry: the free entries, capped by the free cells of the fullest
 * queue among our live peers (a peer not mapped yet has an empty queue,
 * of our cell_count if it runs with our settings). Other senders to the
 * same peer may take cells first: the count holds for one sender. */
static ssize_t shm_ep_tx_size_left(struct fid_ep *ep_fid)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct shm_conn *c, *tmp;
	uint64_t n;

	util_lock_acquire(&ep->util.lock);
	n = ep->tx_free_top < shm_env.cell_count ? ep->tx_free_top :
						   shm_env.cell_count;
	HASH_ITER(hh, ep->conns, c, tmp) {
		uint64_t cells;

		if (!c->peer || c->dead)
			continue;
		cells = shm_queue_free_cells(&c->peer->q);
		if (cells < n)
			n = cells;
	}
	util_lock_release(&ep->util.lock);
	return (ssize_t)n;
}

static ssize_t shm_ep_rx_size_left(struct fid_ep *ep_fid)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	ssize_t n;

	util_lock_acquire(&ep->util.lock);
	n = (ssize_t)(ep->srx.rx_pool.max_objs -
		      ep->srx.rx_pool.in_use);
	util_lock_release(&ep->util.lock);
	return n;
}

static const struct fi_ops_ep shm_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = shm_ep_cancel,
	.getopt = util_ep_getopt,
	.setopt = util_ep_setopt,
	.tx_ctx = util_no_tx_ctx,
	.rx_ctx = util_no_rx_ctx,
	.rx_size_left = shm_ep_rx_size_left,
	.tx_size_left = shm_ep_tx_size_left,
};

static const struct fi_ops_cm shm_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = util_no_setname,
	.getname = shm_ep_getname,
	.getpeer = util_no_getpeer,
	.connect = util_no_connect,
	.listen = util_no_listen,
	.accept = util_no_accept,
	.reject = util_no_reject,
	.shutdown = util_no_shutdown,
	.join = util_coll_join,
};

static int shm_ep_region_open(struct shm_ep *ep, const struct fi_info *info)
{
	struct shm_region_attr attr;
	int ret;

	char short_name[SHM_ADDR_NAME_MAX + 1], ns[SHM_NS_MAX + 1];

	shm_env_region_attr(&attr);
	/* A src_addr from node/service names the region (in the namespace
	 * a full chosen name gives, else in ours); one of a generated
	 * region (a copied fi_getname) cannot be reused: generate anew. */
	if (info->src_addr &&
	    !shm_addr_chosen(info->src_addr, info->src_addrlen, short_name,
			     sizeof(short_name), ns)) {
		attr.name = short_name;
		attr.ns = ns[0] ? ns : NULL;
	}
	ret = shm_region_create(&attr, &ep->region);
	if (ret) {
		FI_WARN(&shm_prov, FI_LOG_EP_CTRL, "endpoint region: %s\n",
			fi_strerror(-ret));
		return ret;
	}
	memset(ep->addr, 0, sizeof(ep->addr));
	/* Named by its full chosen name: fi_getname gives that spelling
	 * back, the one its peers use (srd's peering). */
	ret = attr.ns ? shm_addr_from_region_full(shm_region_name(ep->region),
						  ep->addr, sizeof(ep->addr)) :
			shm_addr_from_region(shm_region_name(ep->region),
					     ep->addr, sizeof(ep->addr));
	if (ret) {
		shm_region_close(ep->region);
		ep->region = NULL;
		return ret;
	}
	ep->payload_max = shm_cell_payload_max(attr.cell_size);
	ep->src_map_len = attr.max_peers;
	ep->src_map = calloc(attr.max_peers, sizeof(*ep->src_map));
	return ep->src_map ? 0 : -FI_ENOMEM;
}

/* fi_enable, after util checked that an AV and a CQ or counter are
 * bound: the data-transfer tables replace util's refusing ones, so the
 * operations never test for an AV or for the enabled state. */
static int shm_ep_enable(struct util_ep *util)
{
	util->ep_fid.msg = UTIL_OPS(&shm_msg_ops);
	util->ep_fid.tagged = UTIL_OPS(&shm_tagged_ops);
	util->ep_fid.rma = UTIL_OPS(&shm_rma_ops);
	util->ep_fid.atomic = UTIL_OPS(&shm_atomic_ops);
	return 0;
}

static void shm_ep_set_ops(struct shm_ep *ep)
{
	ep->util.ep_fid.fid.ops = UTIL_OPS(&shm_ep_fi_ops);
	ep->util.ep_fid.ops = UTIL_OPS(&shm_ep_ops);
	ep->util.ep_fid.cm = UTIL_OPS(&shm_ep_cm_ops);
	ep->util.ep_fid.msg = UTIL_OPS(&util_ep_off_msg_ops);
	ep->util.ep_fid.tagged = UTIL_OPS(&util_ep_off_tagged_ops);
	ep->util.ep_fid.rma = UTIL_OPS(&util_ep_off_rma_ops);
	ep->util.ep_fid.atomic = UTIL_OPS(&util_ep_off_atomic_ops);
	ep->util.enable = shm_ep_enable;
}

int shm_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep_fid, void *context)
{
	struct shm_ep *ep;
	int ret;

	if (!info || !info->ep_attr || !info->tx_attr || !info->rx_attr) {
		FI_WARN(&shm_prov, FI_LOG_EP_CTRL, "fi_endpoint without info\n");
		return -FI_EINVAL;
	}
	if (info->ep_attr->type != FI_EP_RDM &&
	    info->ep_attr->type != FI_EP_UNSPEC) {
		FI_WARN(&shm_prov, FI_LOG_EP_CTRL,
			"shm endpoints are FI_EP_RDM only\n");
		return -FI_EINVAL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ret = util_ep_init(&ep->util, to_util_domain(domain), info,
			   shm_ep_progress, context);
	if (ret)
		goto err_free;
	ret = shm_ep_region_open(ep, info);
	if (ret)
		goto err_util;
	/* What the endpoint enforces: fi_getinfo offers no more, but the
	 * info may have been edited since. */
	if (info->tx_attr->inject_size > shm_inject_max(shm_env.cell_size)) {
		FI_WARN(&shm_prov, FI_LOG_EP_CTRL,
			"tx_attr->inject_size %zu exceeds shm's %zu (FI_SHM_CELL_SIZE)\n",
			info->tx_attr->inject_size,
			shm_inject_max(shm_env.cell_size));
		ret = -FI_EINVAL;
		goto err_region;
	}
	if (info->tx_attr->size > SHM_MAX_TX_SIZE) {
		FI_WARN(&shm_prov, FI_LOG_EP_CTRL,
			"tx_attr->size %zu exceeds the maximum of FI_SHM_TX_SIZE (%u)\n",
			info->tx_attr->size, SHM_MAX_TX_SIZE);
		ret = -FI_EINVAL;
		goto err_region;
	}
	ret = shm_tx_init(ep, info->tx_attr->size ? info->tx_attr->size :
						     shm_env.tx_size);
	if (ret)
		goto err_region;
	ret = shm_rx_init(ep);
	if (ret)
		goto err_tx;
	ret = shm_rma_bounce_init(ep);
	if (ret)
		goto err_rx;
	shm_av_ep_add(ep);
	shm_ep_set_ops(ep);
	if (info->caps & FI_COLLECTIVE)
		util_coll_ep_init(&ep->util, &shm_coll_xport);
	*ep_fid = &ep->util.ep_fid;
	return 0;

err_rx:
	shm_rx_fini(ep);
err_tx:
	shm_tx_fini(ep);
err_region:
	free(ep->src_map);
	shm_region_close(ep->region);
err_util:
	util_ep_fini(&ep->util);
err_free:
	free(ep);
	return ret;
}
