/* SPDX-License-Identifier: MIT */
/*
 * The protocol table (srd_proto.h) and its loops: which protocols serve
 * an endpoint, the packet and work-request routes to them, the choice of
 * a protocol for a send, and the hooks every protocol may have (peer
 * failure, batch end, liveness, handshake). Control path, except
 * srd_proto_choose_slow (sends above the fast path's size).
 */
#include "weft/compat.h"
#include "srd_proto.h"

/* Priority order: a send goes by the first protocol that fits it. */
static const struct srd_proto *const srd_protos[] = {
	&srd_proto_ring,
	&srd_proto_eager,
	&srd_proto_medium,
	&srd_proto_long_read,
	&srd_proto_cts,
	&srd_proto_rma,
	&srd_proto_stripe,
};

_Static_assert(WEFT_ARRAY_SIZE(srd_protos) <= SRD_PROTO_MAX,
	       "SRD_PROTO_MAX too small");

/* Every protocol's packets are routed, whether it serves here or not: a
 * peer may use one we do not start ourselves (it decides by its own
 * device and our features). A type owned twice is a bug in the table. */
static int srd_proto_routes(struct srd_ep *ep)
{
	const struct srd_proto_pkt *pk;
	const struct srd_proto *p;
	size_t i;

	for (i = 0; i < WEFT_ARRAY_SIZE(srd_protos); i++) {
		p = srd_protos[i];
		if (p->msg_type) {
			ep->pkt_route[p->msg_type].handle = srd_rx_handle_msg;
			ep->pkt_route[p->msg_type].proto = p;
		}
		for (pk = p->pkts; pk && pk->type; pk++) {
			if (pk->type >= SRD_PKT_TYPE_MAX ||
			    ep->pkt_route[pk->type].handle) {
				FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
					"%s: packet type %u taken twice\n",
					p->name, pk->type);
				return -FI_EINVAL;
			}
			ep->pkt_route[pk->type].handle = pk->handle;
			ep->pkt_route[pk->type].proto = p;
		}
		if (p->wr_kind)
			ep->wr_proto[p->wr_kind] = p;
	}
	/* The receiver's "done" ends a send of whichever protocol. */
	ep->pkt_route[SRD_PKT_READ_DONE].handle = srd_tx_handle_done;
	return 0;
}

/* The first message protocol serving here is the fast path for the
 * sizes it takes from every peer. */
static void srd_proto_fast(struct srd_ep *ep)
{
	uint32_t i;

	for (i = 0; i < ep->proto_count; i++) {
		if (!ep->protos[i]->tx_start)
			continue;
		ep->tx_fast = ep->protos[i];
		ep->tx_fast_max = ep->tx_fast->fast_max ?
				  ep->tx_fast->fast_max(ep) : 0;
		return;
	}
}

int srd_proto_ep_init(struct srd_ep *ep)
{
	const struct srd_proto *p;
	size_t i;
	int ret;

	ret = srd_proto_routes(ep);
	for (i = 0; !ret && i < WEFT_ARRAY_SIZE(srd_protos); i++) {
		p = srd_protos[i];
		ret = p->ep_init ? p->ep_init(ep) : 0;
		if (ret == SRD_PROTO_OFF) {
			ret = 0;
			continue;
		}
		if (ret)
			break;
		ep->protos[ep->proto_count++] = p;
		if (p->poll)
			ep->pollers[ep->poller_count++] = p;
	}
	if (ret) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL, "%s at endpoint open: %s\n",
			srd_protos[i]->name, fi_strerror(-ret));
		return ret;
	}
	srd_proto_fast(ep);
	return 0;
}

void srd_proto_ep_fini(struct srd_ep *ep)
{
	uint32_t i = ep->proto_count;

	while (i--)
		if (ep->protos[i]->ep_fini)
			ep->protos[i]->ep_fini(ep);
	ep->proto_count = 0;
	ep->poller_count = 0;
}

const struct srd_proto *srd_proto_choose_slow(const struct srd_ep *ep,
					      const struct srd_peer *peer,
					      uint64_t len)
{
	const struct srd_proto *p;
	uint32_t i;

	for (i = 0; i < ep->proto_count; i++) {
		p = ep->protos[i];
		if (p->fits && p->fits(ep, peer, len))
			return p;
	}
	return NULL;
}

void srd_proto_peer_failed(struct srd_ep *ep, struct srd_peer *peer, int err,
			   int prov_errno)
{
	uint32_t i;

	for (i = 0; i < ep->proto_count; i++)
		if (ep->protos[i]->peer_failed)
			ep->protos[i]->peer_failed(ep, peer, err, prov_errno);
}

void srd_proto_progress(struct srd_ep *ep)
{
	uint32_t i;

	for (i = 0; i < ep->proto_count; i++)
		if (ep->protos[i]->progress)
			ep->protos[i]->progress(ep);
}

bool srd_proto_watch(struct srd_ep *ep, uint64_t *probe)
{
	bool waiting = false;
	uint32_t i;

	for (i = 0; i < ep->proto_count; i++)
		if (ep->protos[i]->watch && ep->protos[i]->watch(ep, probe))
			waiting = true;
	return waiting;
}

void srd_proto_hello_fill(struct srd_ep *ep, struct srd_peer *peer,
			  struct srd_pkt_hello *h)
{
	uint32_t i;

	for (i = 0; i < ep->proto_count; i++)
		if (ep->protos[i]->hello_fill)
			ep->protos[i]->hello_fill(ep, peer, h);
}

void srd_proto_hello_recv(struct srd_ep *ep, struct srd_peer *peer,
			  const struct srd_pkt_hello *h)
{
	uint32_t i;

	for (i = 0; i < ep->proto_count; i++)
		if (ep->protos[i]->hello_recv)
			ep->protos[i]->hello_recv(ep, peer, h);
}

void srd_proto_peer_free(struct srd_ep *ep, struct srd_peer *peer)
{
	uint32_t i;

	for (i = 0; i < ep->proto_count; i++)
		if (ep->protos[i]->peer_free)
			ep->protos[i]->peer_free(ep, peer);
}
