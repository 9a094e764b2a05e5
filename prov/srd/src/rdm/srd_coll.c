/* SPDX-License-Identifier: MIT */
/*
 * srd's transport for the collective engine (util_coll.h): sends of the
 * collective class (srd_coll_send), receives and cancels in util_srx's
 * collective queue, liveness from the device's verdict on packets to the
 * peer (a probe per check), and hosts by GID.
 */
#include "weft/compat.h"
#include "srd_rdm.h"

#include <string.h>

static ssize_t srd_xp_send(struct util_ep *ep, const struct iovec *iov,
			   size_t count, fi_addr_t dest, uint64_t tag,
			   void *ctx)
{
	return srd_coll_send(to_srd_ep_util(ep), iov, count, dest, tag, ctx);
}

static ssize_t srd_xp_recv(struct util_ep *ep, void *buf, size_t len,
			   fi_addr_t src, uint64_t tag, uint64_t ignore,
			   void *ctx)
{
	return util_srx_coll_post(&to_srd_ep_util(ep)->srx, buf, len, src, tag,
				  ignore, ctx);
}

static int srd_xp_cancel(struct util_ep *ep, void *ctx)
{
	return util_srx_coll_cancel(&to_srd_ep_util(ep)->srx, ctx);
}

/* A peer whose packets the device could not deliver is gone. Each check
 * of a live-looking peer sends it a probe (a HELLO_ACK, which it ignores
 * beyond repeating the handshake's answer), so that a peer that died
 * while we only wait for it is found by the device too. */
static bool srd_xp_peer_alive(struct util_ep *util, fi_addr_t dest)
{
	struct srd_ep *ep = to_srd_ep_util(util);
	struct srd_peer *peer;

	if (srd_peer_get(ep, dest, &peer))
		return false;
	if (peer->unreachable)
		return false;
	if (peer->state == SRD_PEER_READY &&
	    !srd_peer_hello_send(ep, peer, SRD_PKT_HELLO_ACK))
		ep->lstat.probes++;
	srd_peer_schedule(ep, peer);
	return true;
}

/* Endpoints on one host share its GID. */
static uint64_t srd_xp_host_key(struct util_ep *util, fi_addr_t dest)
{
	struct srd_ep *ep = to_srd_ep_util(util);
	const struct srd_ep_name *name = &ep->name;
	uint64_t h = 0xcbf29ce484222325ull;

	if (dest != FI_ADDR_NOTAVAIL)
		name = util_av_addr(ep->util.av, dest);
	for (size_t i = 0; name && i < sizeof(name->gid); i++) {
		h ^= name->gid[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

const struct util_coll_xport srd_coll_xport = {
	.send = srd_xp_send,
	.recv = srd_xp_recv,
	.cancel = srd_xp_cancel,
	.peer_alive = srd_xp_peer_alive,
	.host_key = srd_xp_host_key,
};
