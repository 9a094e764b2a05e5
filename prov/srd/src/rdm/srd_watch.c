/* SPDX-License-Identifier: MIT */
/*
 * Settings of the long protocols, and the liveness of the peers that
 * transfers wait on: the detection half of the peer-failure contract
 * (weft/util_peer.h).
 *
 * A long send waits for its receiver (CTS, READ_DONE), possibly for a long
 * time: an unexpected message waits until the application posts a receive,
 * so no fixed timeout is right. A partly received message waits for its
 * sender, and a receiver that sends nothing never learns from its own
 * sends that the sender is gone. What must not happen is waiting forever
 * on a peer that is gone. So while something waits on peers, each of
 * them is probed every long_probe_ms: with HELLO_ACK when its handshake
 * is done (idempotent at the receiver: it repeats the handshake's
 * answer), with HELLO when it failed since (a new handshake: the answer
 * says it is back). The device acknowledges a probe only when the peer's
 * QP exists; one it cannot deliver completes with an error, and
 * srd_peer_fail ends everything waiting on that peer with that error
 * (FI_ENOTCONN: the endpoint is gone, FI_ETIMEDOUT: unresponsive, ...).
 *
 * What waits: sends for their receiver's READ_DONE (any protocol),
 * transfers arriving in pieces (every peer's rx_xfers, unexpected ones
 * included), and whatever a protocol's watch hook reports (RMA waiting
 * for its target's answers).
 */
#include "weft/compat.h"
#include "srd_proto.h"

/* At endpoint open (read again each time, so a process may change them
 * in between): the limits of the long protocols (medium, CTS) and the
 * probe interval. */
void srd_watch_init(struct srd_ep *ep)
{
	struct srd_settings s;

	srd_settings_read_one("cts_threshold", &s);
	srd_settings_read_one("cts_window", &s);
	srd_settings_read_one("long_probe_ms", &s);
	/* The window depends on the device: the table cannot check it. */
	if (s.cts_window < ep->pkt_size) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"FI_SRD_CTS_WINDOW=%zu is below the MTU %u: using %d\n",
			s.cts_window, ep->pkt_size, SRD_CTS_WINDOW_DEFAULT);
		s.cts_window = SRD_CTS_WINDOW_DEFAULT;
	}
	/* CTS needs more than what the RTS carries, so never below it. */
	ep->cts_threshold = s.cts_threshold > ep->pc.eager_max ?
			    s.cts_threshold : ep->pc.eager_max;
	ep->cts_window = s.cts_window;
	util_peer_watch_init(&ep->watch,
			     (uint64_t)s.long_probe_ms * 1000000ull);
}

/* Something started waiting on a peer: make sure a batch end checks. */
void srd_watch_arm(struct srd_ep *ep)
{
	util_peer_watch_arm(&ep->watch);
}

/* Sends that still wait for their receiver. */
static bool srd_watch_tx(struct srd_ep *ep, uint64_t *probe)
{
	bool waiting = false;
	uint32_t i;

	for (i = 0; i < ep->tx_entry_count; i++) {
		struct srd_tx_entry *tx = &ep->tx_entries[i];

		if (!tx->in_use || !tx->done_wait || tx->err)
			continue;
		waiting = true;
		util_peer_set_add(probe, tx->peer->id);
	}
	return waiting;
}

/* Peers whose messages are arriving in pieces. */
static bool srd_watch_rx(struct srd_ep *ep, uint64_t *probe)
{
	bool waiting = false;
	uint32_t i;

	for (i = 0; i < ep->peer_count && i < SRD_MAX_PEERS; i++) {
		if (!ep->peers[i] || !ep->peers[i]->rx_xfers)
			continue;
		waiting = true;
		util_peer_set_add(probe, ep->peers[i]->id);
	}
	return waiting;
}

static void srd_watch_probe(struct srd_ep *ep, const uint64_t *probe)
{
	uint32_t i;

	for (i = 0; i < ep->peer_count && i < SRD_MAX_PEERS; i++) {
		struct srd_peer *peer = ep->peers[i];
		uint8_t type;

		if (!util_peer_set_has(probe, i) || !peer)
			continue;
		if (peer->state == SRD_PEER_READY)
			type = SRD_PKT_HELLO_ACK;
		else if (peer->state == SRD_PEER_NEW)
			type = SRD_PKT_HELLO;
		else
			continue;	/* its HELLO is out: the answer tells */
		if (!srd_peer_hello_send(ep, peer, type))
			ep->lstat.probes++;
		/* A full send queue left it queued: have the flush post it. */
		srd_peer_schedule(ep, peer);
	}
}

/* A check is due (util_peer_watch_due at a batch end). */
void srd_watch(struct srd_ep *ep, uint64_t now)
{
	uint64_t probe[UTIL_PEER_SET_WORDS(SRD_MAX_PEERS)] = { 0 };
	bool waiting;

	waiting = srd_watch_tx(ep, probe);
	waiting = srd_watch_rx(ep, probe) || waiting;
	waiting = srd_proto_watch(ep, probe) || waiting;
	srd_watch_probe(ep, probe);
	/* Disarmed when nothing waits: idle progress never reads a clock. */
	util_peer_watch_next(&ep->watch, now, waiting);
}
