/* SPDX-License-Identifier: MIT */
/*
 * Peers of an endpoint and the handshake (srd_pkt.h). A peer gets an id
 * (its index in ep->peers) the first time we send to it or hear from it;
 * HELLO tells it that id, HELLO_ACK tells us its id for us, which every
 * later packet to it carries. Packets to a peer whose handshake is not
 * complete wait in its queue (packet buffers, no allocation) and go once
 * HELLO_ACK arrives. Control path, except srd_peer_get's array lookup.
 */
#include "weft/compat.h"
#include "srd_proto.h"

#include <stdlib.h>
#include <string.h>

static struct srd_peer *srd_peer_find_name(struct srd_ep *ep,
					   const struct srd_ep_name *name)
{
	struct srd_peer *peer;

	HASH_FIND(hh, ep->peer_by_name, name, sizeof(*name), peer);
	return peer;
}

static int srd_peer_new(struct srd_ep *ep, const struct srd_ep_name *name,
			fi_addr_t fi_addr, struct srd_peer **out)
{
	struct srd_peer *peer;
	union ibv_gid gid;
	int ret;

	if (ep->peer_count >= SRD_MAX_PEERS) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"endpoint already has %u peers\n", SRD_MAX_PEERS);
		return -FI_ENOSPC;
	}
	peer = calloc(1, sizeof(*peer));
	if (!peer)
		return -FI_ENOMEM;
	memcpy(gid.raw, name->gid, sizeof(gid.raw));
	ret = srd_dev_ah_get(ep->dev, &gid, &peer->ah);
	if (ret)
		goto free_peer;
	ret = srd_reorder_init(&peer->reorder, SRD_REORDER_WINDOW);
	if (ret)
		goto put_ah;
	peer->id = ep->peer_count++;
	peer->remote_id = SRD_PEER_ID_NONE;
	peer->fi_addr = fi_addr;
	peer->name = *name;
	peer->dest.ah = peer->ah->ibv_ah;
	peer->dest.qpn = name->qpn;
	peer->dest.qkey = name->qkey;
	ep->peers[peer->id] = peer;
	HASH_ADD(hh, ep->peer_by_name, name, sizeof(peer->name), peer);
	*out = peer;
	return 0;

put_ah:
	srd_dev_ah_put(ep->dev, peer->ah);
free_peer:
	free(peer);
	return ret;
}

static int srd_peer_map_addr(struct srd_ep *ep, fi_addr_t addr,
			     struct srd_peer *peer)
{
	size_t len = ep->addr_peer_len;
	uint32_t *map;

	if (addr >= len) {
		len = len ? len : 64;
		while (len <= addr)
			len *= 2;
		map = realloc(ep->addr_peer, len * sizeof(*map));
		if (!map)
			return -FI_ENOMEM;
		memset(map + ep->addr_peer_len, 0,
		       (len - ep->addr_peer_len) * sizeof(*map));
		ep->addr_peer = map;
		ep->addr_peer_len = len;
	}
	ep->addr_peer[addr] = peer->id + 1;
	peer->fi_addr = addr;
	return 0;
}

/* First send to addr: find or make its peer. */
static int srd_peer_get_slow(struct srd_ep *ep, fi_addr_t addr,
			     struct srd_peer **out)
{
	const struct srd_ep_name *name;
	struct srd_peer *peer;
	int ret;

	name = ep->util.av ? util_av_addr(ep->util.av, addr) : NULL;
	if (!name) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"fi_addr %llu is not in the AV\n",
			(unsigned long long)addr);
		return -FI_EINVAL;
	}
	peer = srd_peer_find_name(ep, name);
	if (!peer) {
		ret = srd_peer_new(ep, name, addr, &peer);
		if (ret)
			return ret;
	}
	ret = srd_peer_map_addr(ep, addr, peer);
	if (ret)
		return ret;
	*out = peer;
	return 0;
}

int srd_peer_get(struct srd_ep *ep, fi_addr_t addr, struct srd_peer **out)
{
	if (WEFT_LIKELY(addr < ep->addr_peer_len && ep->addr_peer[addr])) {
		*out = ep->peers[ep->addr_peer[addr] - 1];
		return 0;
	}
	return srd_peer_get_slow(ep, addr, out);
}

struct srd_peer *srd_peer_by_id(struct srd_ep *ep, uint32_t id,
				uint32_t src_qp)
{
	struct srd_peer *peer;

	if (WEFT_UNLIKELY(id >= ep->peer_count)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"packet from qpn %u with unknown peer id %u: dropped\n",
			src_qp, id);
		return NULL;
	}
	peer = ep->peers[id];
	if (WEFT_UNLIKELY(!peer || peer->name.qpn != src_qp)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"packet from qpn %u claims peer id %u of qpn %u: dropped\n",
			src_qp, id, peer ? peer->name.qpn : 0);
		return NULL;
	}
	return peer;
}

fi_addr_t srd_peer_fi_addr(struct srd_ep *ep, struct srd_peer *peer)
{
	fi_addr_t addr;

	/* The application may have inserted the address since we met. */
	if (WEFT_UNLIKELY(peer->fi_addr == FI_ADDR_NOTAVAIL && ep->util.av)) {
		addr = util_av_reverse_lookup(ep->util.av, &peer->name);
		if (addr != FI_ADDR_NOTAVAIL)
			srd_peer_map_addr(ep, addr, peer);
	}
	return peer->fi_addr;
}

static void srd_peer_hello_fill(struct srd_ep *ep, struct srd_peer *peer,
				struct srd_txbuf *tb, uint8_t type)
{
	struct srd_pkt_hello *h = (struct srd_pkt_hello *)tb->data;

	memset(h, 0, sizeof(*h));
	srd_pkt_base_init(&h->base, type, 0, type == SRD_PKT_HELLO ?
			  SRD_PEER_ID_NONE : peer->remote_id);
	_Static_assert(sizeof(h->name) == sizeof(struct srd_ep_name),
		       "hello name");
	memcpy(h->name, &ep->name, sizeof(h->name));
	h->sender_id = peer->id;
	h->features = (ep->dev->caps.rdma_read ? SRD_FEAT_RDMA_READ : 0) |
		      (ep->dev->caps.rdma_write ? SRD_FEAT_RDMA_WRITE : 0) |
		      (srd_ep_counts_rma(ep) ? SRD_FEAT_RMA_EVENT : 0);
	srd_proto_hello_fill(ep, peer, h);
}

/* HELLO (or HELLO_ACK) to peer, ahead of its queued packets. */
int srd_peer_hello_send(struct srd_ep *ep, struct srd_peer *peer,
			uint8_t type)
{
	struct srd_txbuf *tb = srd_txbuf_get(ep);
	struct srd_pkt_hello *h;

	if (!tb)
		return -FI_EAGAIN;
	srd_peer_hello_fill(ep, peer, tb, type);
	h = (struct srd_pkt_hello *)tb->data;
	tb->peer = peer;
	tb->len = srd_pkt_hello_len(h, (h->features & SRD_FEAT_RAILS) ?
				    ((struct srd_pkt_rails *)(h + 1))->count :
				    0);
	if (srd_pkt_post(ep, peer, tb)) {
		/* The queue keeps order; hello goes first when it drains. */
		tb->next = peer->q_head;
		peer->q_head = tb;
		if (!peer->q_tail)
			peer->q_tail = tb;
	}
	if (type == SRD_PKT_HELLO)
		peer->state = SRD_PEER_HELLO_SENT;
	return 0;
}

static struct srd_peer *srd_peer_from_hello(struct srd_ep *ep,
					    const struct srd_dev_wc *wc,
					    const struct srd_pkt_hello *h)
{
	struct srd_ep_name name;
	struct srd_peer *peer;

	if (srd_ep_name_parse(h->name, sizeof(h->name), &name))
		return NULL;
	if (name.qpn != wc->src_qp) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_CTRL,
			"HELLO naming qpn %u came from qpn %u: dropped\n",
			name.qpn, wc->src_qp);
		return NULL;
	}
	peer = srd_peer_find_name(ep, &name);
	if (peer || h->base.type != SRD_PKT_HELLO)
		return peer;
	if (srd_peer_new(ep, &name, FI_ADDR_NOTAVAIL, &peer))
		return NULL;
	srd_peer_fi_addr(ep, peer);
	return peer;
}

void srd_peer_handle_hello(struct srd_ep *ep, const struct srd_dev_wc *wc,
			   const void *pkt, size_t len)
{
	const struct srd_pkt_hello *h = pkt;
	struct srd_peer *peer;

	if (len < sizeof(*h))
		return;
	peer = srd_peer_from_hello(ep, wc, h);
	if (!peer) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_CTRL,
			"%s from qpn %u for no known peer: dropped\n",
			srd_pkt_type_str(h->base.type), wc->src_qp);
		return;
	}
	if (h->base.type == SRD_PKT_HELLO_ACK && h->base.peer_id != peer->id) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_CTRL,
			"HELLO_ACK for peer id %u, ours is %u: dropped\n",
			h->base.peer_id, peer->id);
		return;
	}
	peer->remote_id = h->sender_id;
	peer->features = h->features;
	srd_proto_hello_recv(ep, peer, h);
	if (peer->state != SRD_PEER_READY)
		peer->state = SRD_PEER_READY;
	if (h->base.type == SRD_PKT_HELLO &&
	    srd_peer_hello_send(ep, peer, SRD_PKT_HELLO_ACK))
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_CTRL,
			"no packet buffer for HELLO_ACK to qpn %u\n",
			peer->name.qpn);
	srd_peer_schedule(ep, peer);
}

/* The contract of weft/util_peer.h: the peer gets nothing more until a
 * new handshake (a later send starts one: it may have been unreachable
 * only for a while), what was queued toward it fails here, and every
 * protocol ends its own work with it. Called once per packet the device
 * could not deliver, so possibly several times for one failure: each
 * pass finds only what is left. */
void srd_peer_fail(struct srd_ep *ep, struct srd_peer *peer, int err,
		   int prov_errno)
{
	struct srd_txbuf *tb;

	peer->state = SRD_PEER_NEW;
	peer->remote_id = SRD_PEER_ID_NONE;
	while ((tb = peer->q_head)) {
		peer->q_head = tb->next;
		srd_txbuf_fail(ep, tb, err, prov_errno);
	}
	peer->q_tail = NULL;
	srd_proto_peer_failed(ep, peer, err, prov_errno);
	/* Sticky for the collective engine: a group that lost a member
	 * fails, even if a later handshake reaches the peer again. */
	peer->unreachable = true;
}

void srd_peers_free(struct srd_ep *ep)
{
	struct srd_peer *peer, *tmp;
	struct srd_rx_xfer *x, *xt;

	HASH_ITER(hh, ep->peer_by_name, peer, tmp) {
		HASH_DEL(ep->peer_by_name, peer);
		DL_FOREACH_SAFE(peer->rx_xfers, x, xt) {
			/* Taken by a receive: no longer on the unexpected
			 * queue that srd_rx_fini empties. */
			if (x->ux && x->ux->then_set)
				srd_unexp_free(ep, x->ux);
			srd_xfer_free(ep, x);
		}
		srd_proto_peer_free(ep, peer);
		srd_reorder_fini(&peer->reorder);
		srd_dev_ah_put(ep->dev, peer->ah);
		free(peer);
	}
	ep->peer_count = 0;
}
