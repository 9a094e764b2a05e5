/* SPDX-License-Identifier: MIT */
/*
 * shm transport: bounce segments, the copy path where CMA is refused.
 *
 * Each region has a pool of bounce_seg_count segments of bounce_seg_size
 * bytes. The side that HAS the data (the pusher) fills segments of its OWN
 * pool; the side that wants it (the puller) drains them from its mapping of
 * the pusher's region and frees them. Several segments are in flight per
 * transfer, so filling and draining overlap (pipelined). A transfer is
 * named by an xfer_id the pusher picks (shm_bounce_xfer_id) and sends in
 * the rendezvous cell; each segment carries (xfer_id, offset, len) so the
 * puller places it without trusting anything else.
 *
 * Typical use for a large send without CMA (provider protocol):
 *   sender:   tx = {iov, total, id = shm_bounce_xfer_id(self)};
 *             cell "RTS, bounce id, total" -> receiver;
 *             progress: shm_bounce_push(self, &tx) until it returns 1.
 *   receiver: rx = {iov of the matched buffer, total, id};
 *             progress: shm_bounce_pull(peer, &rx) until it returns 1.
 * shm_bounce_push returns 1 only when every byte was pushed AND drained, so
 * the sender's completion means the receiver has the data.
 */
#ifndef SHM_BOUNCE_H
#define SHM_BOUNCE_H

#include "shm_peer.h"
#include <sys/uio.h>

enum shm_seg_state {
	SHM_SEG_FREE = 0,
	SHM_SEG_FILLED,
	/* The puller found the segment malformed and gave up the transfer:
	 * the pusher takes back all its segments and ends it (tx->err). */
	SHM_SEG_REJECTED,
};

/* Segment header in the pusher's region (data lives separately, page
 * aligned, at seg_data_off + index * bounce_seg_size). */
struct shm_bounce_seg {
	_Atomic uint32_t state;
	uint32_t len;
	uint64_t xfer_id;
	uint64_t offset;		/* byte offset within the transfer */
	uint8_t pad[SHM_CACHELINE - 24];
};

/* Optional per-segment check: called with the segment's byte range of the
 * transfer before it is filled (push) or drained (pull); 0 lets it through,
 * a negative FI_E* stops the transfer (RMA re-checks its MR with it). */
typedef int (*shm_bounce_check_fn)(void *arg, size_t off, size_t len);

/* Pusher's state of one transfer (caller-owned, no allocation). */
struct shm_bounce_tx {
	const struct iovec *iov;
	size_t iov_count;
	size_t total;			/* bytes to move (<= sum of iov) */
	uint64_t xfer_id;
	uint32_t window;		/* max segments in flight, 0 = all */
	shm_bounce_check_fn check;	/* NULL: none */
	void *check_arg;
	/* Set when check refused a segment: nothing more is filled, total
	 * becomes what was pushed, and push returns 1 once that drained. */
	int err;
	/* private */
	size_t pushed;
	size_t iov_idx, iov_off;	/* cursor into iov */
	uint64_t inflight;		/* bit i: segment i holds our data */
};

/* Puller's state of one transfer. */
struct shm_bounce_rx {
	const struct iovec *iov;
	size_t iov_count;
	size_t total;			/* expected bytes (from the RTS) */
	uint64_t xfer_id;
	shm_bounce_check_fn check;	/* NULL: none */
	void *check_arg;
	/* private */
	size_t received;
};

/* A fresh nonzero transfer id of this region. */
uint64_t shm_bounce_xfer_id(struct shm_region *self);

/* Fill free segments of our pool with the next bytes of tx. Returns 1 when
 * every byte was pushed and drained, 0 when more progress is needed (no
 * free segment or still in flight). Never blocks. A segment the puller
 * rejected ends the transfer at once: its segments are taken back, err is
 * -FI_EIO, and 1 is returned. */
int shm_bounce_push(struct shm_region *self, struct shm_bounce_tx *tx);

/* Segments tx holds now (its share of the pool). */
static inline uint32_t shm_bounce_held(const struct shm_bounce_tx *tx)
{
	return (uint32_t)__builtin_popcountll(tx->inflight);
}

/* Give back tx's segments (the puller died or the transfer was cancelled:
 * only after the peer is known dead or will never pull again). */
void shm_bounce_tx_abort(struct shm_region *self, struct shm_bounce_tx *tx);

/* Drain the peer's segments that belong to rx into rx->iov. Returns 1 when
 * rx->total bytes arrived, 0 when more are to come, -FI_EINVAL if a segment
 * with our id is malformed (offset/len outside the transfer: logged, and
 * the segment marked SHM_SEG_REJECTED so the pusher stops and frees its
 * segments; pull no more from rx then), or rx->check's error (that
 * segment is left filled, not copied). */
int shm_bounce_pull(struct shm_peer *peer, struct shm_bounce_rx *rx);

#endif /* SHM_BOUNCE_H */
