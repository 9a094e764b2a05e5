/* SPDX-License-Identifier: MIT */
/*
 * The peer-failure contract every provider keeps, and two small helpers
 * for it.
 *
 * The contract. Once a provider knows a peer has failed (its endpoint is
 * gone, its process died, the device cannot reach it), everything queued
 * toward that peer or partly received from it ends with an error
 * completion within a bounded time, and nothing ends with a success it
 * did not earn:
 *
 *  - sends and RMA/atomic operations toward the peer that still have
 *    bytes to hand out (queued behind a handshake, a full queue, flow
 *    control) end with the error;
 *  - those that wait for an answer of the peer (a grant, an ack, a "read
 *    done", a response) end with the error without waiting for it;
 *  - those whose bytes the transport still holds end when it gives them
 *    back (a device's error completion), never before: their buffers are
 *    the transport's until then;
 *  - a receive matched to a message partly received from the peer ends
 *    with the error; an unexpected message partly received from it is
 *    marked, so that the receive that takes it later ends with the error
 *    (messages received whole are delivered as usual);
 *  - work done for the peer as a target (answers not sent yet) is
 *    dropped: nobody waits for it locally.
 *
 * Errors carry the cause: err a positive FI_E* (FI_ENOTCONN: the
 * endpoint is gone, FI_ETIMEDOUT: unresponsive, FI_EHOSTUNREACH: not
 * reachable, FI_EIO: lost without a better word), prov_errno the
 * provider's code, and err_data naming the peer where the provider has
 * such a record.
 *
 * Bounded time. A provider learns of a failure when it sends to the peer
 * (the transport's error) or checks on it. Something that only waits on a
 * peer (a receive half way, a send waiting for its grant, a read waiting
 * for its response) sends nothing, so the provider watches: while
 * anything waits on a peer, it checks that peer every interval (a probe
 * the transport must deliver, a process-liveness check). The bound is
 * then the interval plus the transport's own timeout; a provider that
 * lets the application switch the watch off documents that the bound
 * goes with it. The error completions are written by the progress call
 * that learns of the failure.
 *
 * How a provider implements it. One routine per endpoint and peer, run
 * once per detection (a second detection finds only what is left):
 *  1. mark the peer failed, so that no part sends to it any more (in srd
 *     a later send starts a new handshake; in shm it is refused with
 *     -FI_EHOSTUNREACH);
 *  2. fail what is queued toward it in the shared packet queue;
 *  3. run every part's hook: each protocol (srd: the peer_failed member
 *     of its struct srd_proto, srd_peer_fail), or each object kind
 *     (shm: shm_conn_mark_dead calls the tx, rx and RMA bounce hooks)
 *     ends its own work with the peer as above. A hook never sends to the
 *     failed peer and never frees what the transport still holds.
 * And the watch: each progress call that finds util_peer_watch_due runs
 * over what waits, marks the peers in a util_peer_set, checks each of
 * them, and re-arms while anything still waits (util_peer_watch_next).
 */
#ifndef WEFT_UTIL_PEER_H
#define WEFT_UTIL_PEER_H

#include "weft/compat.h"
#include "weft/util_time.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- the watch: when to check on the peers something waits on ------- */

struct util_peer_watch {
	uint64_t interval_ns;	/* 0: never check */
	uint64_t next_ns;	/* next check; 0: nothing waits, not armed */
};

static inline void util_peer_watch_init(struct util_peer_watch *w,
					uint64_t interval_ns)
{
	w->interval_ns = interval_ns;
	w->next_ns = 0;
}

/* Something started waiting on a peer. Reads the clock only when the
 * watch was idle, so a busy endpoint pays nothing per operation. */
static inline void util_peer_watch_arm(struct util_peer_watch *w)
{
	if (!w->next_ns && w->interval_ns)
		w->next_ns = util_time_ns() + w->interval_ns;
}

/* Whether a check is due; *now is the time read. Idle: no clock read. */
static inline bool util_peer_watch_due(const struct util_peer_watch *w,
				       uint64_t *now)
{
	if (WEFT_LIKELY(!w->next_ns))
		return false;
	*now = util_time_ns();
	return *now >= w->next_ns;
}

/* After a check at now: again one interval later if anything still
 * waits, else idle until the next util_peer_watch_arm. */
static inline void util_peer_watch_next(struct util_peer_watch *w,
					uint64_t now, bool waiting)
{
	w->next_ns = waiting && w->interval_ns ? now + w->interval_ns : 0;
}

/* ---- a set of peers by their index in the provider's table ------------- */

#define UTIL_PEER_SET_WORDS(n) (((n) + 63) / 64)

static inline void util_peer_set_add(uint64_t *set, uint32_t id)
{
	set[id / 64] |= 1ull << (id % 64);
}

static inline bool util_peer_set_has(const uint64_t *set, uint32_t id)
{
	return set[id / 64] & (1ull << (id % 64));
}

#endif /* WEFT_UTIL_PEER_H */
