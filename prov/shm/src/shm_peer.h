/* SPDX-License-Identifier: MIT */
/*
 * shm transport: a peer's region, opened by name.
 *
 * shm_peer_open maps the peer's region read-write after validating its
 * header, takes a slot in it (our identity there: src), probes once whether
 * process_vm_readv/writev reach the peer, and keeps the fd open for the
 * O(1) liveness test. Opening is slow-path (several syscalls); the provider
 * opens a peer lazily on first use and keeps the handle.
 */
#ifndef SHM_PEER_H
#define SHM_PEER_H

#include "shm_queue.h"

struct shm_peer {
	struct shm_region_hdr *hdr;	/* peer's mapping; contents untrusted */
	size_t size;
	int fd;				/* kept for shm_peer_alive */
	pid_t pid;			/* from the header, confirmed by probe */
	struct shm_queue_tx q;		/* our producer view of its queue */
	struct shm_slot *slots;		/* its slot table */
	struct shm_slot *slot;		/* our slot in its region */
	struct shm_bounce_seg *segs;	/* its bounce pool (we drain it) */
	uint8_t *seg_data;
	uint32_t bounce_seg_size;
	uint32_t bounce_seg_count;
	uint32_t max_peers;
	bool cma;			/* single-copy works toward this peer */
	bool cma_unprobed;		/* cma to be decided at first use */
	bool dead;			/* sticky once seen */
	char name[SHM_NAME_MAX];
};

/* Open peer "name" from endpoint self (whose name goes into the slot and
 * whose attr.cma_mode decides whether CMA is probed). Errors: -FI_EINVAL
 * (bad name or header, logged), -FI_ENOENT (no such region),
 * -FI_ECONNREFUSED (owner dead), -FI_EBUSY (no free slot), -FI_ENOMEM. */
int shm_peer_open(struct shm_region *self, const char *name,
		  struct shm_peer **peer);

/* Give the slot back (if the peer is alive), unmap, close. NULL no-op. */
void shm_peer_close(struct shm_peer *peer);

/* Claim a cell in the peer's queue; NULL = full (-FI_EAGAIN). Then fill
 * hdr.op/flags/len/proto/tag/data/cookie and the payload, and
 * shm_peer_commit(peer, cell). */
static inline struct shm_cell *shm_peer_reserve(struct shm_peer *peer)
{
	return shm_queue_reserve(&peer->q);
}

static inline void shm_peer_commit(struct shm_peer *peer,
				   struct shm_cell *cell)
{
	shm_queue_commit(&peer->q, cell);
}

static inline uint32_t shm_peer_payload_max(const struct shm_peer *peer)
{
	return shm_cell_payload_max(peer->q.cell_size);
}

/* Does single-copy (CMA) work toward this peer? Decided once at open. */
/* The probe behind shm_peer_cma: one small process_vm_readv of the
 * peer's header (35-50 us on the test VM). */
void shm_peer_probe(struct shm_peer *peer);

/* Probed at the first question, not at open: the first small message to
 * a peer needs no CMA and should not wait for the probe. */
static inline bool shm_peer_cma(struct shm_peer *peer)
{
	if (WEFT_UNLIKELY(peer->cma_unprobed))
		shm_peer_probe(peer);
	return peer->cma;
}

/* CMA toward the peer turned out refused after all (its ptrace rules
 * changed since the probe): later transfers choose as if the probe had
 * failed. */
static inline void shm_peer_cma_lost(struct shm_peer *peer)
{
	peer->cma_unprobed = false;
	peer->cma = false;
}

/* Is the peer's owner alive? One flock() syscall; immune to pid reuse.
 * Call it from progress when an operation toward the peer has waited too
 * long, not per message. Once false, stays false. */
bool shm_peer_alive(struct shm_peer *peer);

/* Is the region we mapped still the one under its name? False once its
 * owner closed it (or died) and another endpoint created a region of
 * the same name: a new incarnation, which this mapping does not reach.
 * A few syscalls: control path only. */
bool shm_peer_current(const struct shm_peer *peer);

/* Has the peer consumed (polled and handed back) every cell we committed
 * to its queue? Our cells name us by our slot there, so the slot must stay
 * ours until then. Reads two shared words, no syscall; a peer that never
 * consumes keeps this false (check its liveness separately). */
bool shm_peer_drained(const struct shm_peer *peer);

#endif /* SHM_PEER_H */
