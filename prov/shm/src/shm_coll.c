/* SPDX-License-Identifier: MIT */
/*
 * shm's transport for the collective engine (util_coll.h): sends of the
 * collective class (shm_coll_send), receives and cancels in util_srx's
 * collective queue, and liveness from shm's own dead-peer checks. Every
 * endpoint reachable over shm is on this host: no host keys.
 */
#include "weft/compat.h"

#include "shm.h"

static ssize_t shm_xp_send(struct util_ep *ep, const struct iovec *iov,
			   size_t count, fi_addr_t dest, uint64_t tag,
			   void *ctx)
{
	return shm_coll_send(to_shm_ep_util(ep), iov, count, dest, tag, ctx);
}

static ssize_t shm_xp_recv(struct util_ep *ep, void *buf, size_t len,
			   fi_addr_t src, uint64_t tag, uint64_t ignore,
			   void *ctx)
{
	return util_srx_coll_post(&to_shm_ep_util(ep)->srx, buf, len, src, tag,
				  ignore, ctx);
}

static int shm_xp_cancel(struct util_ep *ep, void *ctx)
{
	return util_srx_coll_cancel(&to_shm_ep_util(ep)->srx, ctx);
}

/* The peer's process is checked (shm_conn_check): a dead one fails our
 * operations toward it and is remembered dead. */
static bool shm_xp_peer_alive(struct util_ep *util, fi_addr_t dest)
{
	struct shm_ep *ep = to_shm_ep_util(util);
	struct shm_conn *conn;

	if (shm_conn_tx(ep, dest, &conn))
		return false;
	return shm_conn_check(ep, conn);
}

const struct util_coll_xport shm_coll_xport = {
	.send = shm_xp_send,
	.recv = shm_xp_recv,
	.cancel = shm_xp_cancel,
	.peer_alive = shm_xp_peer_alive,
};
