/* SPDX-License-Identifier: MIT */
/*
 * Settings of the long protocols, and the liveness of peers that long
 * transfers wait for.
 *
 * A long send waits for its receiver (CTS, READ_DONE), possibly for a long
 * time: an unexpected message waits until the application posts a receive,
 * so no fixed timeout is right. What must not happen is waiting forever on
 * a peer that is gone. So while long transfers wait, each of their peers
 * is probed every long_probe_ms with a HELLO_ACK (idempotent at the
 * receiver: it repeats the handshake's answer). The device acknowledges a
 * probe only when the peer's QP exists; one it cannot deliver completes
 * with an error, and srd_peer_fail ends every long send waiting on that
 * peer with that error (FI_ENOTCONN: the endpoint is gone, FI_ETIMEDOUT:
 * unresponsive, ...). What else waits on a peer is reported by the
 * protocols' watch hooks (long receives by credits).
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
	ep->probe_ns = (uint64_t)s.long_probe_ms * 1000000ull;
}

/* A long transfer started: make sure a batch end checks on it. */
void srd_watch_arm(struct srd_ep *ep)
{
	if (!ep->watch_ns && ep->probe_ns)
		ep->watch_ns = util_time_ns() + ep->probe_ns;
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
		probe[tx->peer->id / 64] |= 1ull << (tx->peer->id % 64);
	}
	return waiting;
}

static void srd_watch_probe(struct srd_ep *ep, const uint64_t *probe)
{
	uint32_t i;

	for (i = 0; i < ep->peer_count && i < SRD_MAX_PEERS; i++) {
		struct srd_peer *peer = ep->peers[i];

		if (!(probe[i / 64] & (1ull << (i % 64))) || !peer ||
		    peer->state != SRD_PEER_READY)
			continue;
		if (!srd_peer_hello_send(ep, peer, SRD_PKT_HELLO_ACK))
			ep->lstat.probes++;
		/* A full send queue left it queued: have the flush post it. */
		srd_peer_schedule(ep, peer);
	}
}

static bool srd_watch_any(const uint64_t *probe)
{
	size_t i;

	for (i = 0; i < SRD_MAX_PEERS / 64; i++)
		if (probe[i])
			return true;
	return false;
}

void srd_watch(struct srd_ep *ep)
{
	uint64_t probe[SRD_MAX_PEERS / 64] = { 0 };
	uint64_t now = util_time_ns();
	bool waiting;

	if (now < ep->watch_ns)
		return;
	waiting = srd_watch_tx(ep, probe);
	srd_proto_watch(ep, probe);
	waiting = waiting || srd_watch_any(probe) || ep->rx_pump;
	srd_watch_probe(ep, probe);
	/* Disarmed when nothing waits: idle progress never reads a clock. */
	ep->watch_ns = waiting ? now + ep->probe_ns : 0;
}
