/* SPDX-License-Identifier: MIT */
/*
 * shm transport: the inbound queue of a region.
 *
 * Bounded multi-producer single-consumer queue of fixed-size cells.
 *   producer: pos = tail; the cell at pos is free once the consumer has
 *             released position pos - cell_count, which it counts in
 *             `released` (own line). Producers keep that limit cached and
 *             read the counter again only when they reach it. CAS tail
 *             pos -> pos + 1 claims the cell; fill the payload, then the
 *             first line (header, src, seq = pos + 1, release) publishes.
 *   consumer: cell at head is ready when seq == head + 1 (acquire); after
 *             use, released = position + 1 (release) hands it back.
 * Why a counter and not the cell's seq word for "free": the consumer polls
 * the head cell's first line, so a producer that reads that line before
 * writing it pays two transfers of it (read, then upgrade to write) and a
 * consumer that writes it on release pays another; this way the producer
 * only writes the line (one transfer) and the consumer only reads it.
 * For the same reason the producer does not touch the first line at all
 * until it publishes: the consumer would take the line back between its
 * stores, and each store after that pays another transfer.
 * A small message therefore costs one claim, one or two cache lines of
 * header + inline payload and no syscall.
 *
 * Cell layout (cell_size bytes, a multiple of 64, cell-aligned):
 *   0  seq     transport (do not touch)
 *   8  op      provider: protocol opcode
 *  10  flags   provider
 *  12  src     transport: sender's slot index in the receiver's region
 *  14  src_gen transport: low 16 bits of that slot's generation
 *  16  len     provider: inline payload bytes (checked <= payload cap)
 *  20  proto   provider: free 32-bit protocol field (message id, ...)
 *  24  tag     provider
 *  32  data    provider: CQ data
 *  40  cookie  provider: sender's cookie, echoed by replies
 *  48  payload (cell_size - 48 bytes); the first 16 share the header's line
 */
#ifndef SHM_QUEUE_H
#define SHM_QUEUE_H

#include <string.h>

#include "shm_region.h"

#define SHM_CELL_HDR_SIZE	48
#define SHM_CACHE_LINE		64
/* Payload bytes that share the first line with seq and the header. */
#define SHM_CELL_LINE0_PAYLOAD	(SHM_CACHE_LINE - SHM_CELL_HDR_SIZE)
#define SHM_RESERVE_TRIES	64

struct shm_cell_hdr {
	uint16_t op;
	uint16_t flags;
	uint16_t src;
	uint16_t src_gen;
	uint32_t len;
	uint32_t proto;
	uint64_t tag;
	uint64_t data;
	uint64_t cookie;
};

struct shm_cell {
	_Atomic uint64_t seq;
	struct shm_cell_hdr hdr;
	uint8_t payload[];
};

_Static_assert(offsetof(struct shm_cell, payload) == SHM_CELL_HDR_SIZE,
	       "cell header layout");

static inline uint32_t shm_cell_payload_max(uint32_t cell_size)
{
	return cell_size - SHM_CELL_HDR_SIZE;
}

static inline struct shm_cell *shm_cell_at(uint8_t *cells, uint32_t cell_size,
					   uint64_t idx)
{
	return (struct shm_cell *)(cells + (size_t)idx * cell_size);
}

/* Producer's view of a peer's queue (lives in struct shm_peer). Every
 * value here was validated when the peer was opened; the shared words it
 * points at (tail, seq, claim_pos) are only compared, never used as an
 * index without the mask. */
struct shm_queue_tx {
	uint8_t *cells;
	_Atomic uint64_t *tail;
	_Atomic uint64_t *released;	/* consumer's release counter */
	uint64_t free_end;		/* positions below it are free */
	uint64_t pos;			/* the reserved cell's position */
	_Atomic uint64_t *claim_pos;	/* our slot's intent word */
	uint64_t mask;
	uint32_t cell_size;
	uint16_t src;			/* our slot index there */
	uint16_t src_gen;
	uint32_t faulted;		/* ring chunks whose pages we mapped */
	uint32_t fault_shift;		/* log2 of cells per chunk */
	/* Credits (shm_region_attr.peer_credits): the count of cells we may
	 * have claimed before the owner's consumed counter of our slot is
	 * read again, and how many of them are left (one test and one
	 * decrement per cell; cells claimed = credit_end - credit_left). */
	int64_t credit_left;
	uint64_t credit_end;
	_Atomic uint64_t *consumed;	/* our slot's, in the owner's region */
	uint32_t credits;		/* 0: no limit */
};

/* Start counting credits from the owner's counter as it is now: what an
 * earlier producer of the slot left unconsumed is not ours. */
static inline void shm_queue_credit_init(struct shm_queue_tx *q,
					 _Atomic uint64_t *consumed,
					 uint32_t credits)
{
	q->consumed = consumed;
	q->credits = credits;
	/* No limit: more than a process ever sends. */
	q->credit_left = credits ? credits : INT64_MAX;
	q->credit_end = atomic_load_explicit(consumed, memory_order_relaxed) +
			(uint64_t)q->credit_left;
}

/* Our credits ran out: read the owner's counter. It is the owner's word:
 * whatever it says only limits us toward that owner (a value that goes
 * back gives nothing, one far ahead `credits` at each look). */
static inline bool shm_queue_credit_more(struct shm_queue_tx *q)
{
	uint64_t sent = q->credit_end - (uint64_t)q->credit_left;
	uint64_t end;
	int64_t left;

	if (!q->credits)
		return true;
	end = atomic_load_explicit(q->consumed, memory_order_relaxed) +
	      q->credits;
	left = (int64_t)(end - sent);
	if (left > (int64_t)q->credits)
		left = q->credits;
	if (left < 0)
		left = 0;
	q->credit_left = left;
	q->credit_end = sent + (uint64_t)left;
	return left > 0;
}

#define SHM_QUEUE_FAULT_CHUNKS 32

/* Map the pages of the chunk of the ring that holds position pos (one
 * madvise): the first pass over a peer's ring would otherwise take a page
 * fault per 4 KiB, 2.6 us each on the test VM, while mapping the whole
 * ring when the peer is opened (1.1 MB, 150-250 us) made the first
 * message to every peer wait for it. */
void shm_queue_fault(struct shm_queue_tx *q, uint64_t pos);

static inline void shm_queue_fault_check(struct shm_queue_tx *q, uint64_t pos)
{
	uint32_t bit = 1u << ((pos & q->mask) >> q->fault_shift);

	if (WEFT_UNLIKELY(!(q->faulted & bit)))
		shm_queue_fault(q, pos);
}

/* Claim the next cell of a peer's queue. Returns NULL when the queue is
 * full (the provider answers -FI_EAGAIN). The caller fills the payload,
 * then the header, and calls shm_queue_commit, which fills seq, src and
 * src_gen (not here: see "does not touch the first line" above). Calls on
 * one shm_queue_tx must be serialised by the caller, one reserved cell at
 * a time (the claim intent word is per producer slot). */
static inline struct shm_cell *shm_queue_reserve(struct shm_queue_tx *q)
{
	uint64_t pos = atomic_load_explicit(q->tail, memory_order_relaxed);
	int tries;

	/* Out of credits: the owner has not consumed enough of ours yet,
	 * and the cells we would take are the other producers' share. */
	if (WEFT_UNLIKELY(q->credit_left <= 0) && !shm_queue_credit_more(q))
		return NULL;
	/* Bounded: honest contention resolves in a few rounds; a corrupt
	 * peer region must not make us spin forever (NULL = try later). */
	for (tries = 0; tries < SHM_RESERVE_TRIES; tries++) {
		if (WEFT_UNLIKELY((int64_t)(pos - q->free_end) >= 0)) {
			q->free_end = atomic_load_explicit(
					      q->released,
					      memory_order_acquire) +
				      q->mask + 1;
			if ((int64_t)(pos - q->free_end) >= 0)
				return NULL;
		}
		/* Intent first: the consumer, seeing tail moved past an
		 * unpublished cell, finds the claimer by it. */
		atomic_store_explicit(q->claim_pos, pos, memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(
			    q->tail, &pos, pos + 1, memory_order_seq_cst,
			    memory_order_relaxed)) {
			struct shm_cell *cell = shm_cell_at(
				q->cells, q->cell_size, pos & q->mask);

			q->pos = pos;
			q->credit_left--;
			shm_queue_fault_check(q, pos);
			return cell;
		}
	}
	return NULL;
}

/* Cells a reserve would find free now (other producers may take them
 * first), within our credits. Read from the peer's mapping: clamped to
 * the ring. */
static inline uint64_t shm_queue_free_cells(struct shm_queue_tx *q)
{
	uint64_t tail = atomic_load_explicit(q->tail, memory_order_relaxed);
	uint64_t end = atomic_load_explicit(q->released,
					    memory_order_acquire) +
		       q->mask + 1;
	int64_t n = (int64_t)(end - tail), c;

	if (n <= 0)
		return 0;
	if ((uint64_t)n > q->mask + 1)
		n = (int64_t)(q->mask + 1);
	if (!shm_queue_credit_more(q))
		return 0;
	c = q->credit_left;
	return (uint64_t)(c < n ? c : n);
}

/* Producer: ask for ownership of the payload lines past the first one of
 * a reserved cell before filling it, so that the transfers of lines the
 * consumer read last time overlap instead of coming one by one as the
 * copy's stores drain. The first line is left alone: the consumer is
 * polling it, and it is written last. The consumer holds the payload
 * lines too, since it asks for them as it polls (shm_queue_poll); without
 * this, fi_pingpong 256 B takes 0.52 vs 0.43 us and 1 KiB 0.61 vs 0.49.
 * Only up to SHM_PREFETCHW_MAX bytes: 4 KiB messages lost 10-30% with it
 * (too many outstanding misses hold up the copy's own stores). */
#define SHM_PREFETCHW_MAX 2048

static inline void shm_cell_prefetchw(struct shm_cell *cell, size_t len)
{
	uint8_t *p = cell->payload + SHM_CELL_LINE0_PAYLOAD;
	uint8_t *end = cell->payload + len;

	for (; p < end; p += SHM_CACHE_LINE) {
#if defined(__x86_64__)
		__asm__ __volatile__("prefetchw %0" : : "m"(*p));
#else
		__builtin_prefetch(p, 1);
#endif
	}
}

/* Producer: copy payload into a reserved cell. On x86-64 with ERMS this
 * is rep movsb rather than glibc's memcpy (vector stores). Measured with
 * fi_pingpong, the consumer asking for the payload lines as it polls
 * (shm_queue_poll): 1 KiB 0.47 vs 0.55-0.62 us, 2 KiB 0.54 vs 0.91-1.22,
 * 4 KiB 0.78 vs 0.87-0.92. Whole-line 64-byte vector stores measured worse
 * than either (4 KiB 2.5 us), so it is not the number of stores per
 * line; presumably it is how the string copy takes whole lines that the
 * other core holds. Decided once at load (shm_copy_erms). */
extern bool shm_copy_erms;

static inline void shm_cell_copy_in(void *dst, const void *src, size_t n)
{
	/* ASan does not see inside asm: sanitizer builds check the copy's
	 * bounds through memcpy instead. */
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
	if (WEFT_LIKELY(shm_copy_erms)) {
		__asm__ __volatile__("rep movsb"
				     : "+D"(dst), "+S"(src), "+c"(n)
				     :
				     : "memory");
		return;
	}
#endif
	memcpy(dst, src, n);
}

/* n <= 16 bytes (the payload that shares a cell's first line) with
 * fixed-size moves, two overlapping ones, instead of a variable-length
 * copy: a call to memcpy costs more than the move. */
static inline void shm_copy_small(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

/* Publish the reserved cell. Commit it before the next reserve on the same
 * shm_queue_tx: the claim intent word and q->pos name one cell at a time,
 * and the dead-producer check relies on it. */
static inline void shm_queue_commit(struct shm_queue_tx *q,
				    struct shm_cell *cell)
{
	cell->hdr.src = q->src;
	cell->hdr.src_gen = q->src_gen;
	atomic_store_explicit(&cell->seq, q->pos + 1, memory_order_release);
}

/* Consumer: ask for the lines of the head cell past the first, up to end
 * (cell bytes), with every poll. Sizes tend to repeat, so end is that of
 * the last message: its payload lines then come in the same transfer
 * round as the first line that says the cell is ready, instead of being
 * asked for only once the header is seen (a second cross-core round, 120-
 * 250 ns on the test VM). While the queue is idle these hit in the cache.
 * It pays only because producers write the payload before the first line
 * and never touch the first line early (see the top of this file):
 * measured with fi_pingpong, 256 B 0.43 vs 0.56 us, 1 KiB 0.47 vs 0.62,
 * 8 B unchanged at 0.40. */
static inline void shm_cell_prefetch_to(const struct shm_cell *cell,
					uint32_t end)
{
	const uint8_t *p = (const uint8_t *)cell + SHM_CACHE_LINE;
	const uint8_t *stop = (const uint8_t *)cell + end;

	for (; p < stop; p += SHM_CACHE_LINE)
		__builtin_prefetch(p);
}

/* Consumer, on taking a cell: ask at once for the payload lines the polls
 * did not (a message longer than the last one), so that they come while
 * the provider matches it, and size the next polls by this message. */
static inline void shm_queue_took(struct shm_region *r,
				  const struct shm_cell *cell, uint32_t len)
{
	uint32_t end = SHM_CELL_HDR_SIZE + len;

	if (WEFT_UNLIKELY(end > r->poll_end)) {
		const uint8_t *p = (const uint8_t *)cell + SHM_CACHE_LINE;

		if (r->poll_end > SHM_CACHE_LINE)
			p = (const uint8_t *)cell +
			    ((r->poll_end + SHM_CACHE_LINE - 1) &
			     ~(uint32_t)(SHM_CACHE_LINE - 1));
		for (; p < (const uint8_t *)cell + end; p += SHM_CACHE_LINE)
			__builtin_prefetch(p);
	}
	r->poll_end = end;
}

/* The transport's check of a published cell, on a copy of its header
 * (the sender may still be rewriting the cell): its length within the
 * payload, its sender within the region's slots. */
static inline bool shm_cell_hdr_ok(const struct shm_cell_hdr *hdr,
				   uint32_t cell_size, uint32_t max_peers)
{
	return hdr->len <= cell_size - SHM_CELL_HDR_SIZE &&
	       hdr->src < max_peers;
}

/* Slow path of shm_queue_poll: drops invalid cells, notices a stalled head
 * and skips a cell whose claimer died. Returns a ready cell or NULL. */
struct shm_cell *shm_queue_poll_slow(struct shm_region *region,
				     struct shm_cell_hdr *hdr);

/* Consumer: the next published cell of the own queue, or NULL. On success
 * *hdr is a validated copy of the header (src < max_peers, len <= payload
 * cap): use it, not cell->hdr, which the sender could still change. The
 * payload is read in place. Release every polled cell, in poll order, with
 * shm_queue_release. */
static inline struct shm_cell *shm_queue_poll(struct shm_region *r,
					      struct shm_cell_hdr *hdr)
{
	struct shm_cell *cell = shm_cell_at(r->cells, r->cell_size,
					    r->head & r->mask);
	uint64_t seq;

	shm_cell_prefetch_to(cell, r->poll_end);
	seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
	if (WEFT_LIKELY(seq == r->head + 1)) {
		*hdr = cell->hdr;
		if (WEFT_LIKELY(shm_cell_hdr_ok(hdr, r->cell_size,
						r->max_peers))) {
			shm_queue_took(r, cell, hdr->len);
			r->head++;
			r->idle_polls = 0;
			return cell;
		}
	} else if (WEFT_LIKELY(++r->idle_polls < SHM_STALL_POLLS)) {
		return NULL;
	}
	return shm_queue_poll_slow(r, hdr);
}

/* Give the n oldest polled, unreleased cells back to the producers. More
 * than were polled is capped (it would hand producers a cell that is not
 * consumed yet). One store to the consumer's own line, whatever n. */
static inline void shm_queue_release_n(struct shm_region *r, uint64_t n)
{
	if (WEFT_UNLIKELY(n > r->head - r->rel))
		n = r->head - r->rel;
	if (!n)
		return;
	r->rel += n;
	atomic_store_explicit(&r->hdr->released, r->rel, memory_order_release);
}

static inline void shm_queue_release(struct shm_region *r)
{
	shm_queue_release_n(r, 1);
}

/* Consumer, slow path the provider may call from a timer as well: if the
 * head cell is claimed but unpublished and every producer that could have
 * claimed it is dead, skip it. Returns 1 when a cell was skipped. */
int shm_queue_check_stall(struct shm_region *region);

#endif /* SHM_QUEUE_H */
