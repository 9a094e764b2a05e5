/* SPDX-License-Identifier: MIT */
/*
 * shm as a peer provider: an owner (srd, for peers on its host) opens an
 * shm endpoint of its own and gives it its receive side through
 * fi_srx_context(FI_PEER) + fi_ep_bind before fi_enable. Arriving
 * messages then match in the owner's util_srx (util_srx.h, "sharing the
 * receive side"), complete on the owner's CQs and counters, and report
 * the source the owner gave each address (FI_AV_USER_ID). Only a weft
 * owner is accepted; a foreign one is refused with -FI_ENOSYS.
 */
#include "weft/compat.h"

#include <rdma/fi_ext.h>

#include "shm.h"

int shm_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		       struct fid_ep **rx_ep, void *context)
{
	struct fi_peer_srx_context *pc = context;

	(void)domain;
	if (!attr || !(attr->op_flags & FI_PEER)) {
		FI_WARN(&shm_prov, FI_LOG_DOMAIN,
			"shared receive contexts: only a peer owner's "
			"(FI_PEER) is supported\n");
		return -FI_ENOSYS;
	}
	if (!rx_ep || !pc || pc->size < sizeof(*pc) ||
	    !util_srx_of_peer(pc->srx)) {
		FI_WARN(&shm_prov, FI_LOG_DOMAIN,
			"FI_PEER receive context: not a weft owner's "
			"(only weft's providers peer with shm)\n");
		return -FI_ENOSYS;
	}
	*rx_ep = &pc->srx->ep_fid;
	return 0;
}

/* fi_ep_bind of the owner's receive context (before fi_enable). */
int shm_ep_bind_peer_srx(struct shm_ep *ep, struct fid *bfid)
{
	struct fid_peer_srx *p = container_of(bfid, struct fid_peer_srx,
					      ep_fid.fid);
	struct util_srx *srx = util_srx_of_peer(p);

	if (!srx) {
		FI_WARN(&shm_prov, FI_LOG_EP_CTRL,
			"bound receive context is not a weft peer owner's\n");
		return -FI_ENOSYS;
	}
	if (ep->util.enabled || ep->rx != &ep->srx) {
		FI_WARN(&shm_prov, FI_LOG_EP_CTRL,
			"peer receive context bound %s\n",
			ep->util.enabled ? "after fi_enable" : "twice");
		return -FI_EOPBADSTATE;
	}
	ep->rx = srx;
	return 0;
}

static void shm_peer_srx_drop(struct shm_ep *ep, struct util_match_queue *q)
{
	struct util_unexp_entry *u, *tmp;

	DL_FOREACH_SAFE(q->unexp, u, tmp) {
		struct util_srx_unexp *su =
			container_of(u, struct util_srx_unexp, match);
		struct shm_unexp *ux = container_of(su, struct shm_unexp, srx);

		if (su->ops != &shm_srx_ops || ux->ep != ep)
			continue;
		util_match_remove_unexp(q, u);
		shm_unexp_put(ep, ux);
	}
}

/* At close: our unexpected messages leave the owner's queues before
 * their pool goes (the owner's receive side outlives us). */
void shm_peer_srx_detach(struct shm_ep *ep)
{
	if (ep->rx == &ep->srx)
		return;
	shm_peer_srx_drop(ep, &ep->rx->msg_q);
	shm_peer_srx_drop(ep, &ep->rx->tag_q);
	shm_peer_srx_drop(ep, &ep->rx->coll_q);
	ep->rx = &ep->srx;
}
