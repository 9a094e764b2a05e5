/* SPDX-License-Identifier: MIT */
/*
 * Retransmission timeouts and the liveness of peers.
 *
 * A peer is not judged by how often one packet went unanswered: on a busy
 * machine a live peer may not run for hundreds of milliseconds (two busy
 * processes per core, a stopped process, a loaded hypervisor), and a
 * lossy network loses answers. A fixed retry count took such peers for
 * gone. So the two questions are kept apart:
 *
 * - When to send again: after the peer's RTO, computed from measured
 *   round trips as TCP does (RFC 6298: smoothed RTT plus four times its
 *   variation), so scheduling delays seen in the round trips lengthen it.
 *   Only packets answered on their first transmission give samples
 *   (Karn's rule: the answer of a retransmitted packet may answer either
 *   copy). Each retry doubles the wait; every wait stays within
 *   FI_SRD_SOFT_RTO_MIN_US..FI_SRD_SOFT_RTO_MAX_US.
 *
 * - When to give up: when nothing at all (data, ACK, a negative verdict,
 *   a read response) came from the peer for FI_SRD_SOFT_DEAD_MS while a
 *   packet waited for it. Any answer means the peer is alive. Silence
 *   counts only while this process itself listened: time it spent away
 *   (not scheduled, stopped) is no evidence against the peer, and before
 *   judging, the socket has been read to the end.
 *
 * A packet still unanswered after 4 * FI_SRD_SOFT_DEAD_MS while its peer
 * keeps talking (a path that loses just that packet) also fails, so no
 * work request waits forever.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

/* One round of progress further than this from the last one: the process
 * was away, and the peers' silence before now proves nothing. */
static uint64_t softsrd_away_ns(const struct softsrd_ctx *ctx)
{
	return (uint64_t)ctx->cfg.dead_ms * 1000000ull / 4;
}

void softsrd_rto_ctx_init(struct softsrd_ctx *ctx)
{
	/* a quarter of the floor: a due packet waits at most 25% more */
	ctx->timer_ns = (uint64_t)ctx->cfg.rto_min_us * 250;
	ctx->last_round = util_time_ns();
	ctx->listen_since = ctx->last_round;
}

void softsrd_rto_peer_init(struct softsrd_ctx *ctx, struct softsrd_peer *peer)
{
	peer->rto = (uint64_t)ctx->cfg.rto_us * 1000;
	peer->srtt = 0;
	peer->rttvar = 0;
	peer->heard = 0;
}

static uint64_t softsrd_rto_clamp(const struct softsrd_config *cfg,
				  uint64_t ns)
{
	uint64_t lo = (uint64_t)cfg->rto_min_us * 1000;
	uint64_t hi = (uint64_t)cfg->rto_max_us * 1000;

	return ns < lo ? lo : ns > hi ? hi : ns;
}

/* A round trip of rtt ns, from a packet answered at its first try. */
void softsrd_rto_sample(struct softsrd_ctx *ctx, struct softsrd_peer *peer,
			uint64_t rtt)
{
	if (!peer->srtt) {
		peer->srtt = rtt ? rtt : 1;
		peer->rttvar = rtt / 2;
	} else {
		uint64_t d = rtt > peer->srtt ? rtt - peer->srtt :
						peer->srtt - rtt;

		peer->rttvar = (3 * peer->rttvar + d) / 4;
		peer->srtt = (7 * peer->srtt + rtt) / 8;
	}
	peer->rto = softsrd_rto_clamp(&ctx->cfg, peer->srtt + 4 * peer->rttvar);
}

/* Wait before the next try of a packet sent tries times already. */
uint64_t softsrd_rto_wait(const struct softsrd_ctx *ctx,
			  const struct softsrd_peer *peer, uint32_t tries)
{
	uint64_t ns = peer->rto << (tries < 20 ? tries : 20);

	return softsrd_rto_clamp(&ctx->cfg, ns);
}

/* The start of a round: a long gap since the previous one means the
 * process was away, and silence starts counting again now. */
void softsrd_rto_round(struct softsrd_ctx *ctx, uint64_t now)
{
	if (now <= ctx->last_round)
		return;		/* a clock read before the lock was taken */
	if (now - ctx->last_round > softsrd_away_ns(ctx))
		ctx->listen_since = now;
	ctx->last_round = now;
}

/* ---- giving up -------------------------------------------------------------- */

static void softsrd_wr_unresponsive(struct softsrd_qp *qp,
				    struct softsrd_swr *wr)
{
	if (wr->status == IBV_WC_SUCCESS)
		wr->vendor_err = SOFTSRD_VE_LOCAL_UNRESP_REMOTE;
	softsrd_swr_fail(qp, wr, IBV_WC_RESP_TIMEOUT_ERR);
}

/*
 * The peer is unresponsive, and so every WR toward it fails now. WRs
 * behind the peer's window would otherwise each wait out their own
 * timeout in turn (128 writes of 1 MiB: ~27 s of errors trickling in),
 * where a device whose timers run in parallel ends them all at once.
 */
static void softsrd_peer_unresponsive(struct softsrd_qp *qp,
				      struct softsrd_peer *peer)
{
	struct softsrd_pkt *pkt, *ptmp;
	struct softsrd_swr *wr, *wtmp;

	FI_INFO(softsrd_prov, FI_LOG_EP_DATA,
		"QP %u: nothing from QP %u for %u ms: unresponsive\n",
		qp->ibv_qp.qp_num, peer->key.qpn, qp->ctx->cfg.dead_ms);
	DL_FOREACH_SAFE(qp->inflight, pkt, ptmp) {
		if (pkt->peer != peer)
			continue;
		wr = pkt->wr;
		softsrd_pkt_release(qp, pkt);
		softsrd_wr_unresponsive(qp, wr);
	}
	DL_FOREACH_SAFE(qp->pending, wr, wtmp)
		if (wr->peer == peer)
			softsrd_wr_unresponsive(qp, wr);
}

/* A due packet: has its peer been silent for too long? */
static bool softsrd_pkt_given_up(const struct softsrd_ctx *ctx,
				 const struct softsrd_pkt *pkt, uint64_t now)
{
	uint64_t dead = (uint64_t)ctx->cfg.dead_ms * 1000000ull;
	uint64_t since = pkt->first;

	/* the device thread's clock is read before it takes the lock, so
	 * what the application did meanwhile may be later than now */
	if (since >= now)
		return false;
	if (now - since >= 4 * dead)
		return true;
	if (pkt->peer->heard > since)
		since = pkt->peer->heard;
	if (ctx->listen_since > since)
		since = ctx->listen_since;
	return since < now && now - since >= dead;
}

/* Retransmit what is due. judge: the socket was read to its end, so a
 * silent peer is really silent and may be given up (which changes
 * qp->inflight, hence the new pass). */
void softsrd_qp_timers(struct softsrd_qp *qp, uint64_t now, bool judge)
{
	struct softsrd_ctx *ctx = qp->ctx;
	struct softsrd_peer *dead;
	struct softsrd_pkt *pkt;

	do {
		dead = NULL;
		DL_FOREACH(qp->inflight, pkt) {
			/* judged before its retry is due: detection takes
			 * FI_SRD_SOFT_DEAD_MS, not that plus a backed-off
			 * RTO */
			if (judge && softsrd_pkt_given_up(ctx, pkt, now)) {
				dead = pkt->peer;
				break;
			}
			if (pkt->deadline > now)
				continue;
			pkt->tries++;
			pkt->sent = now;
			pkt->deadline = now + softsrd_rto_wait(ctx, pkt->peer,
							       pkt->tries);
			softsrd_pkt_tx(qp, pkt);
		}
		if (dead)
			softsrd_peer_unresponsive(qp, dead);
	} while (dead);
}
