/* SPDX-License-Identifier: MIT */
/*
 * tcp's transport for the collective engine (util_coll.h): sends of the
 * collective class (tcp_coll_send, frame flag TCP_F_COLL), receives and
 * cancels in util_srx's collective queue, liveness from the fate of the
 * peer's connections (a probe per check), and hosts by IP address.
 */
#include "weft/compat.h"

#include <string.h>

#include "tcp.h"

static ssize_t tcp_xp_send(struct util_ep *ep, const struct iovec *iov,
			   size_t count, fi_addr_t dest, uint64_t tag,
			   void *ctx)
{
	return tcp_coll_send(to_tcp_ep_util(ep), iov, count, dest, tag, ctx);
}

/* Messages of the class that arrived before the AV knew their sender
 * get it now: the collective queue matches by source only. */
static ssize_t tcp_xp_recv(struct util_ep *util, void *buf, size_t len,
			   fi_addr_t src, uint64_t tag, uint64_t ignore,
			   void *ctx)
{
	struct tcp_ep *ep = to_tcp_ep_util(util);

	if (WEFT_UNLIKELY(__atomic_load_n(&ep->unexp_unknown,
					  __ATOMIC_RELAXED)))
		tcp_recv_resolve_src_locked(ep);
	return util_srx_coll_post(&ep->srx, buf, len, src, tag, ignore, ctx);
}

static int tcp_xp_cancel(struct util_ep *ep, void *ctx)
{
	return util_srx_coll_cancel(&to_tcp_ep_util(ep)->srx, ctx);
}

/* A peer whose connection failed (end of stream, reset, timeout, refused
 * connect, bad frame) is gone. Each check of a live-looking peer sends it
 * a PING: toward a peer we have no connection with it connects (a dead
 * process refuses it), on a connection whose peer vanished it makes the
 * kernel notice (reset, or TCP_USER_TIMEOUT), so that a peer we only wait
 * for is found too. */
static bool tcp_xp_peer_alive(struct util_ep *util, fi_addr_t dest)
{
	struct tcp_ep *ep = to_tcp_ep_util(util);
	struct tcp_hdr h = { .op = TCP_OP_PING };
	struct tcp_peer *peer;
	struct tcp_tx *tx;

	if (tcp_peer_tx(ep, dest, &peer))
		return false;
	if (peer->failed)
		return false;
	if (peer->self)
		return true;
	tx = tcp_tx_ctrl(ep);
	if (tx) {
		tcp_tx_frame(tx, &h, NULL, 0);
		tcp_peer_push(ep, peer, tx, false);
	}
	return !peer->failed;
}

/* Endpoints on one host listen on its address: the IP of the name, not
 * the port. */
static uint64_t tcp_xp_host_key(struct util_ep *util, fi_addr_t dest)
{
	struct tcp_ep *ep = to_tcp_ep_util(util);
	const union tcp_addr *a = &ep->name;
	struct tcp_peer *peer;
	const uint8_t *ip;
	size_t n;
	uint64_t h = 0xcbf29ce484222325ull;

	if (dest != FI_ADDR_NOTAVAIL) {
		if (tcp_peer_tx(ep, dest, &peer))
			return 0;
		a = &peer->addr;
	}
	if (a->sa.sa_family == AF_INET6) {
		ip = a->in6.sin6_addr.s6_addr;
		n = sizeof(a->in6.sin6_addr);
	} else {
		ip = (const uint8_t *)&a->in.sin_addr;
		n = sizeof(a->in.sin_addr);
	}
	for (size_t i = 0; i < n; i++) {
		h ^= ip[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

const struct util_coll_xport tcp_coll_xport = {
	.send = tcp_xp_send,
	.recv = tcp_xp_recv,
	.cancel = tcp_xp_cancel,
	.peer_alive = tcp_xp_peer_alive,
	.host_key = tcp_xp_host_key,
};
