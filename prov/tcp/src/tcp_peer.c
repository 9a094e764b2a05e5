/* SPDX-License-Identifier: MIT */
/*
 * Peers: the remote endpoints one endpoint talks to, by name (the
 * sockaddr of the peer's first listener). A peer exists from the first
 * send toward it or the first connection from it; its primary connection
 * is made lazily by the first send (or accepted from it), and frames
 * posted meanwhile wait on the peer, in order, until the handshake is
 * done. A peer that fails (connection lost, timeout, bad bytes) fails
 * everything pending on it; the next send makes a new connection.
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "tcp.h"

struct tcp_peer *tcp_peer_get(struct tcp_ep *ep, const union tcp_addr *addr)
{
	struct tcp_peer *peer;
	socklen_t len = tcp_addr_len(addr);

	HASH_FIND(hh, ep->peers, addr, len, peer);
	if (peer)
		return peer;
	peer = calloc(1, sizeof(*peer));
	if (!peer) {
		WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_CTRL,
			"no memory for a peer\n");
		return NULL;
	}
	memcpy(&peer->addr, addr, len);
	peer->ep = ep;
	peer->fi_addr = FI_ADDR_NOTAVAIL;
	peer->eager_max = ep->eager_max;
	peer->self = !tcp_addr_cmp(addr, &ep->name);
	HASH_ADD(hh, ep->peers, addr, len, peer);
	return peer;
}

/* Grow the fi_addr -> peer cache so that fi_addr fits. */
static int tcp_tx_map_fit(struct tcp_ep *ep, fi_addr_t fi_addr)
{
	size_t len = ep->tx_map_len ? ep->tx_map_len : 64;
	struct tcp_tx_map *m;

	while (len <= fi_addr)
		len *= 2;
	if (len == ep->tx_map_len)
		return 0;
	m = realloc(ep->tx_map, len * sizeof(*m));
	if (!m)
		return -FI_ENOMEM;
	memset(m + ep->tx_map_len, 0, (len - ep->tx_map_len) * sizeof(*m));
	ep->tx_map = m;
	ep->tx_map_len = len;
	return 0;
}

int tcp_peer_tx_checked(struct tcp_ep *ep, fi_addr_t fi_addr,
			struct tcp_peer **out)
{
	struct util_av *av = ep->util.av;
	struct util_av_slot *slot = av ? util_av_slot(av, fi_addr) : NULL;
	const struct tcp_av_data *d;
	struct tcp_peer *peer;
	union tcp_addr a;

	if (WEFT_UNLIKELY(!slot)) {
		FI_WARN(&tcp_prov, FI_LOG_EP_DATA,
			"fi_addr %llu is not in the endpoint's AV\n",
			(unsigned long long)fi_addr);
		return -FI_EINVAL;
	}
	d = (const void *)(slot->bytes + av->data_off);
	memset(&a, 0, sizeof(a));
	memcpy(&a, slot->bytes, av->prov->addrlen);
	peer = tcp_peer_get(ep, &a);
	if (!peer)
		return -FI_ENOMEM;
	if (fi_addr <= (1u << 24) && !tcp_tx_map_fit(ep, fi_addr)) {
		ep->tx_map[fi_addr].gen = d->gen;
		ep->tx_map[fi_addr].peer = peer;
	}
	if (peer->fi_addr == FI_ADDR_NOTAVAIL) {
		peer->fi_addr = fi_addr;
		peer->fi_addr_gen = d->gen;
	}
	*out = peer;
	return 0;
}

fi_addr_t tcp_peer_fi_addr_checked(struct tcp_ep *ep, struct tcp_peer *peer)
{
	struct util_av *av = ep->util.av;
	const struct tcp_av_data *d;
	fi_addr_t fi_addr;

	/* An unknown sender stays unknown until the AV gains an address:
	 * no lookup per message meanwhile. */
	if (peer->fi_addr == FI_ADDR_NOTAVAIL &&
	    peer->fi_addr_gen == tcp_av_gen_now())
		return FI_ADDR_NOTAVAIL;
	fi_addr = util_av_reverse_lookup(av, &peer->addr);
	if (fi_addr == FI_ADDR_NOTAVAIL) {
		peer->fi_addr = FI_ADDR_NOTAVAIL;
		peer->fi_addr_gen = tcp_av_gen_now();
		return FI_ADDR_NOTAVAIL;
	}
	d = util_av_data(av, fi_addr);
	peer->fi_addr = fi_addr;
	peer->fi_addr_gen = d ? d->gen : 0;
	return fi_addr;
}

static void tcp_peer_wait(struct tcp_peer *peer, struct tcp_tx *tx)
{
	tx->next = NULL;
	if (peer->wait_tail)
		peer->wait_tail->next = tx;
	else
		peer->wait_head = tx;
	peer->wait_tail = tx;
}

/* Start the primary connection toward peer. */
static void tcp_peer_start(struct tcp_ep *ep, struct tcp_peer *peer)
{
	int ret;

	peer->state = TCP_PEER_CONNECTING;
	peer->deadline_ns = util_time_coarse_ns() + ep->timeout_ns;
	ret = tcp_conn_connect(ep, peer, 0);
	if (ret)
		tcp_peer_fail(ep, peer, -ret, "cannot connect");
}

void tcp_peer_push(struct tcp_ep *ep, struct tcp_peer *peer,
		   struct tcp_tx *tx, bool more)
{
	if (WEFT_LIKELY(peer->state == TCP_PEER_READY)) {
		tcp_conn_push(peer->conn, tx, more);
		return;
	}
	tcp_peer_wait(peer, tx);
	if (peer->state == TCP_PEER_IDLE)
		tcp_peer_start(ep, peer);
}

void tcp_peer_ready(struct tcp_ep *ep, struct tcp_peer *peer)
{
	struct tcp_tx *tx;
	char me[64], him[64];

	/* Once per connection: which pairs connected, on which socket, is
	 * what a connection-setup problem is debugged from. */
	FI_INFO(&tcp_prov, FI_LOG_EP_CTRL, "%s: peer %s connected (fd %d)\n",
		tcp_addr_str(&ep->name, me, sizeof(me)),
		tcp_addr_str(&peer->addr, him, sizeof(him)), peer->conn->fd);
	peer->state = TCP_PEER_READY;
	peer->deadline_ns = 0;
	while ((tx = peer->wait_head)) {
		peer->wait_head = tx->next;
		tcp_conn_push(peer->conn, tx, peer->wait_head != NULL);
	}
	peer->wait_tail = NULL;
	if (peer->conn->tx_head)
		tcp_conn_kick(peer->conn);
}

void tcp_peer_fail(struct tcp_ep *ep, struct tcp_peer *peer, int err,
		   const char *why)
{
	struct tcp_conn *c, *tmp;
	struct tcp_tx *wait = peer->wait_head;
	char buf[64];

	WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_DATA,
		"peer %s: %s (%s): its operations fail\n",
		tcp_addr_str(&peer->addr, buf, sizeof(buf)), why,
		fi_strerror(err));
	DL_FOREACH_SAFE(ep->conns, c, tmp)
		if (c->peer == peer)
			tcp_conn_close(c, err);
	peer->wait_head = peer->wait_tail = NULL;
	tcp_tx_fail_queue(ep, wait, err);
	tcp_op_fail_peer(ep, peer, err);
	peer->state = TCP_PEER_IDLE;
	peer->conn = NULL;
	memset(peer->stripe, 0, sizeof(peer->stripe));
	peer->nonce_known = false;
	peer->deadline_ns = 0;
	peer->failed = true;
}

void tcp_peer_check_timeouts(struct tcp_ep *ep, uint64_t now)
{
	struct tcp_peer *peer, *tmp;

	HASH_ITER(hh, ep->peers, peer, tmp) {
		if (peer->state != TCP_PEER_CONNECTING || !peer->deadline_ns ||
		    now < peer->deadline_ns)
			continue;
		tcp_peer_fail(ep, peer, FI_ETIMEDOUT,
			      "no connection within FI_TCP_CONN_TIMEOUT_MS");
	}
}

/* At endpoint close: nothing is completed any more (the CQs are gone). */
void tcp_peer_free_all(struct tcp_ep *ep)
{
	struct tcp_peer *peer, *tmp;

	HASH_ITER(hh, ep->peers, peer, tmp) {
		HASH_DEL(ep->peers, peer);
		tcp_tx_fail_queue(ep, peer->wait_head, 0);
		free(peer);
	}
}
