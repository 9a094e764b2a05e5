/* SPDX-License-Identifier: MIT */
/*
 * shm transport: bounce segments (copy path where CMA is refused).
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "shm_transport.h"

#include <string.h>

uint64_t shm_bounce_xfer_id(struct shm_region *self)
{
	return ++self->next_xfer_id;
}

/* Copy len bytes between a flat buffer and an iovec list at byte offset
 * off of the list; to_iov picks the direction. Returns bytes copied. */
static size_t shm_iov_copy(const struct iovec *iov, size_t cnt, size_t off,
			   void *buf, size_t len, bool to_iov)
{
	uint8_t *p = buf;
	size_t i, done = 0;

	for (i = 0; i < cnt && done < len; i++) {
		size_t n;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		n = iov[i].iov_len - off;
		if (n > len - done)
			n = len - done;
		if (to_iov)
			memcpy((uint8_t *)iov[i].iov_base + off, p + done, n);
		else
			memcpy(p + done, (uint8_t *)iov[i].iov_base + off, n);
		done += n;
		off = 0;
	}
	return done;
}

/* The puller rejected a segment of tx: it drains none of tx any more, so
 * every segment tx holds is ours again, and nothing more is filled. */
static void shm_bounce_rejected(struct shm_region *self,
				struct shm_bounce_tx *tx, uint32_t i)
{
	WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_DATA,
		"shm region %s: bounce segment %u of transfer %llu rejected by "
		"its reader, transfer ended\n", self->name, i,
		(unsigned long long)tx->xfer_id);
	shm_bounce_tx_abort(self, tx);
	tx->err = -FI_EIO;
	tx->total = tx->pushed;
}

static void shm_bounce_reap(struct shm_region *self, struct shm_bounce_tx *tx)
{
	uint64_t bits = tx->inflight;

	while (bits) {
		uint32_t i = (uint32_t)__builtin_ctzll(bits), state;

		bits &= bits - 1;
		state = atomic_load_explicit(&self->segs[i].state,
					     memory_order_acquire);
		if (state == SHM_SEG_FREE) {
			tx->inflight &= ~(1ull << i);
			self->seg_owned &= ~(1ull << i);
		} else if (WEFT_UNLIKELY(state == SHM_SEG_REJECTED)) {
			shm_bounce_rejected(self, tx, i);
			return;
		}
	}
}

static int shm_bounce_seg_get(struct shm_region *self)
{
	uint32_t n = self->attr.bounce_seg_count, k;

	for (k = 0; k < n; k++) {
		uint32_t i = (self->bounce_next + k) % n;

		if (!(self->seg_owned & (1ull << i))) {
			self->seg_owned |= 1ull << i;
			self->bounce_next = (i + 1) % n;
			return (int)i;
		}
	}
	return -1;
}

static void shm_bounce_fill(struct shm_region *self, struct shm_bounce_tx *tx,
			    uint32_t i)
{
	struct shm_bounce_seg *seg = &self->segs[i];
	size_t len = tx->total - tx->pushed;
	uint8_t *data = self->seg_data + (size_t)i * self->attr.bounce_seg_size;

	if (len > self->attr.bounce_seg_size)
		len = self->attr.bounce_seg_size;
	shm_iov_copy(tx->iov, tx->iov_count, tx->pushed, data, len, false);
	seg->len = (uint32_t)len;
	seg->offset = tx->pushed;
	seg->xfer_id = tx->xfer_id;
	tx->inflight |= 1ull << i;
	tx->pushed += len;
	atomic_store_explicit(&seg->state, SHM_SEG_FILLED,
			      memory_order_release);
}

/* The next segment's bytes, checked; true (and the transfer cut short)
 * when the check refuses them. */
static bool shm_bounce_refused(struct shm_region *self,
			       struct shm_bounce_tx *tx)
{
	size_t len = tx->total - tx->pushed;
	int ret;

	if (len > self->attr.bounce_seg_size)
		len = self->attr.bounce_seg_size;
	ret = tx->check(tx->check_arg, tx->pushed, len);
	if (!ret)
		return false;
	tx->err = ret;
	tx->total = tx->pushed;
	return true;
}

int shm_bounce_push(struct shm_region *self, struct shm_bounce_tx *tx)
{
	uint32_t window = tx->window ? tx->window : SHM_MAX_BOUNCE_SEGS;

	shm_bounce_reap(self, tx);
	while (tx->pushed < tx->total &&
	       (uint32_t)__builtin_popcountll(tx->inflight) < window) {
		int i = shm_bounce_seg_get(self);

		if (i < 0)
			break;
		if (tx->check && shm_bounce_refused(self, tx)) {
			self->seg_owned &= ~(1ull << i);
			break;
		}
		shm_bounce_fill(self, tx, (uint32_t)i);
	}
	return tx->pushed == tx->total && !tx->inflight;
}

void shm_bounce_tx_abort(struct shm_region *self, struct shm_bounce_tx *tx)
{
	uint64_t bits = tx->inflight;

	while (bits) {
		uint32_t i = (uint32_t)__builtin_ctzll(bits);

		bits &= bits - 1;
		atomic_store_explicit(&self->segs[i].state, SHM_SEG_FREE,
				      memory_order_release);
		self->seg_owned &= ~(1ull << i);
	}
	tx->inflight = 0;
}

/* Drain one filled segment of ours. The header words are read once each:
 * the pusher could rewrite them while we copy. */
static int shm_bounce_drain(struct shm_peer *peer, struct shm_bounce_rx *rx,
			    uint32_t i)
{
	struct shm_bounce_seg *seg = &peer->segs[i];
	volatile struct shm_bounce_seg *vs = seg;
	uint64_t off = vs->offset;
	uint32_t len = vs->len;

	if (len > peer->bounce_seg_size || off > rx->total ||
	    len > rx->total - off || len > rx->total - rx->received) {
		WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_DATA,
			"shm peer %s: bounce segment %u out of range "
			"(offset %llu len %u of %zu)\n", peer->name, i,
			(unsigned long long)off, len, rx->total);
		atomic_store_explicit(&seg->state, SHM_SEG_REJECTED,
				      memory_order_release);
		return -FI_EINVAL;
	}
	if (rx->check) {
		int ret = rx->check(rx->check_arg, (size_t)off, len);

		if (ret)
			return ret;
	}
	shm_iov_copy(rx->iov, rx->iov_count, (size_t)off,
		     peer->seg_data + (size_t)i * peer->bounce_seg_size, len,
		     true);
	rx->received += len;
	atomic_store_explicit(&seg->state, SHM_SEG_FREE, memory_order_release);
	return 0;
}

int shm_bounce_pull(struct shm_peer *peer, struct shm_bounce_rx *rx)
{
	uint32_t i;
	int ret;

	for (i = 0; i < peer->bounce_seg_count && rx->received < rx->total;
	     i++) {
		struct shm_bounce_seg *seg = &peer->segs[i];

		if (atomic_load_explicit(&seg->state, memory_order_acquire) !=
			    SHM_SEG_FILLED ||
		    ((volatile struct shm_bounce_seg *)seg)->xfer_id !=
			    rx->xfer_id)
			continue;
		ret = shm_bounce_drain(peer, rx, i);
		if (ret)
			return ret;
	}
	return rx->received >= rx->total;
}
