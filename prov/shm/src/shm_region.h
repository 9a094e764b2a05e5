/* SPDX-License-Identifier: MIT */
/*
 * shm transport: one shared-memory region per endpoint.
 *
 * A region is a POSIX shm object "/weftshm-<uid>-<pid>-<24 hex of getrandom>"
 * (mode 0600, created O_EXCL) that holds, at fixed offsets derived from the
 * sizes in its header:
 *
 *   [ shm_region_hdr | shm_slot x max_peers | cells x cell_count |
 *     shm_bounce_seg headers x seg_count | bounce data x seg_count ]
 *
 * - the inbound queue: a bounded MPSC queue of fixed-size cells (shm_queue.h)
 *   that every peer may produce into and only the owner consumes;
 * - the slot table: a peer that opens this region takes a slot first; its
 *   slot index is the "src" of every cell it sends here, and the slot records
 *   the peer's own region name (so the owner can answer it) and the queue
 *   position the peer is claiming (so a producer that died between claim and
 *   publish can be told apart from a slow one);
 * - a pool of bounce segments that the owner fills when CMA is refused and
 *   its peers drain (shm_bounce.h).
 *
 * The owner holds flock(LOCK_EX) on the shm fd for the region's whole life;
 * anyone holding an fd of the object tests liveness with LOCK_SH|LOCK_NB,
 * which is immune to pid reuse. The owner unlinks at close and at exit;
 * shm_region_reclaim() removes the leftovers of crashed processes.
 */
#ifndef SHM_REGION_H
#define SHM_REGION_H

#include "weft/compat.h"
#include <rdma/fi_errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fi_provider;

/* Transport logs go to this provider; the shm provider points it at its own
 * struct fi_provider in its init (defaults to a "shm" stand-in). */
extern struct fi_provider *shm_xport_prov;

#define SHM_CACHELINE		64
#define SHM_REGION_MAGIC	0x314d48535446455full	/* "WEFTSHM1" */
#define SHM_REGION_VERSION	4	/* 2: cells freed by `released`,
					 * 3: SHM_SLOT_CLOSED,
					 * 4: producer credits */
#define SHM_NAME_PREFIX		"/weftshm-"
/* Generated: "/weftshm-<uid>-<pid>-<24 hex of getrandom>"; chosen by the
 * provider: "/weftshm-<uid>-<namespace>-<short name>", the namespace "n"
 * (none) or "j<16 hex>" (a job: shm_region_set_namespace), the short name
 * [A-Za-z0-9._:-], at most SHM_SHORT_NAME_MAX. Either plus NUL fits
 * SHM_NAME_MAX. */
#define SHM_NAME_MAX		80
#define SHM_SHORT_NAME_MAX	40
#define SHM_NS_MAX		17	/* "j" + 16 hex */

/* ---- compile-time defaults: the one place (the provider turns these into
 * fi_param settings and passes them in struct shm_region_attr) ---------- */
#define SHM_DEF_CELL_SIZE	4288	/* 48 B header + 4240 B inline payload, so a
				 * 4 KiB RMA inject fits with its request (inject_size
				 * 4120); measured, 2-4 KiB messages take 0.8-1.2 us
				 * inline vs 3.4 us by rendezvous */
/* Power of two. 64 cells measured 2-4% lower fi_pingpong latency than 256
 * (the ring's lines and pages stay in the caches and TLBs), but a peer
 * that gets back one ACK per rendezvous send of a window fills a short
 * queue, and clients that do not retry -FI_EAGAIN fail (fabtests'
 * ft_bench_bw did at 64). */
#define SHM_DEF_CELL_COUNT	256
#define SHM_DEF_MAX_PEERS	256	/* slots: distinct producers at once */
#define SHM_DEF_BOUNCE_SEG_SIZE	(64 * 1024)
#define SHM_DEF_BOUNCE_SEGS	16	/* <= 64 */
/* Consumer polls at an unpublished head cell before it looks for a dead
 * producer, and how long the head must have been stuck before it acts. */
#define SHM_STALL_POLLS		4096
#define SHM_STALL_NS		(100ull * 1000 * 1000)

#define SHM_PAGE		4096ull	/* layout and segment granularity */
#define SHM_MIN_CELL_SIZE	128
#define SHM_MAX_CELL_SIZE	(1u << 20)
#define SHM_MAX_CELL_COUNT	(1u << 20)
#define SHM_MAX_PEERS		65535	/* src is 16 bits */
#define SHM_MAX_BOUNCE_SEGS	64	/* in-flight sets are a uint64_t */
#define SHM_MAX_BOUNCE_SEG_SIZE	(16u << 20)

enum shm_cma_mode {
	SHM_CMA_AUTO = 0,	/* probe each peer, bounce where refused */
	SHM_CMA_OFF,		/* never CMA: every peer uses bounce segments */
};

struct shm_region_attr {
	uint32_t cell_size;	/* multiple of 64, >= SHM_MIN_CELL_SIZE */
	uint32_t cell_count;	/* power of two */
	uint32_t max_peers;
	uint32_t bounce_seg_size;	/* multiple of 4096 */
	uint32_t bounce_seg_count;	/* 1..64 */
	enum shm_cma_mode cma_mode;	/* for peers this endpoint opens */
	/* Cells a producer may have here that the owner has not consumed
	 * (shm_region_credit), so that one producer cannot keep the queue
	 * and the owner's buffers to itself; 0: no limit. */
	uint32_t peer_credits;
	/* NULL: unguessable generated name. Else the region is created as
	 * shm_region_name_build(name, ns): -FI_EADDRINUSE while a live owner
	 * holds it, taken over when its owner is dead. ns NULL: this
	 * process's namespace. Not copied: only read during
	 * shm_region_create. */
	const char *name;
	const char *ns;
};

/* Shared header, first bytes of the region. Written once by the creator
 * before it publishes "ready"; every reader treats it as untrusted. */
struct shm_region_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;		/* sizeof(struct shm_region_hdr) */
	uint64_t region_size;		/* == file size */
	uint64_t owner_addr;		/* owner's mapping: CMA probe target */
	uint8_t nonce[16];		/* random part of the name */
	int32_t owner_pid;
	uint32_t owner_uid;
	uint32_t cell_size;
	uint32_t cell_count;
	uint32_t max_peers;
	uint32_t bounce_seg_size;
	uint32_t bounce_seg_count;
	uint32_t flags;
	uint64_t slots_off;
	uint64_t cells_off;
	uint64_t segs_off;
	uint64_t seg_data_off;
	_Atomic uint32_t ready;		/* 1 once the creator filled the rest */
	uint32_t peer_credits;		/* attr.peer_credits */
	/* Producers' claim counter, alone on its line. */
	alignas(SHM_CACHELINE) _Atomic uint64_t tail;
	/* Consumer's release counter (positions below it were consumed),
	 * alone on its line: written by the owner, read by producers only
	 * when their cached limit runs out. */
	alignas(SHM_CACHELINE) _Atomic uint64_t released;
	alignas(SHM_CACHELINE) uint8_t pad_end[SHM_CACHELINE];
};

enum shm_slot_state {
	SHM_SLOT_FREE = 0,
	SHM_SLOT_BUSY,		/* being filled by a peer that just took it */
	SHM_SLOT_READY,
	/* Its producer closed with cells still queued here: they name it by
	 * this slot, so the slot (and the name in it) stays until the owner
	 * has polled past its last claim, then the owner frees it. */
	SHM_SLOT_CLOSED,
};

/* One per producer attached to this region. claim_pos lives on the
 * producer's own line: it stores there before each claim (cheap, the line
 * stays in its cache) and the consumer reads it only when stalled. */
struct shm_slot {
	_Atomic uint32_t state;
	_Atomic uint32_t gen;		/* bumped each time the slot is taken */
	_Atomic int32_t pid;		/* producer pid (informational + BUSY reap) */
	uint32_t pad0;
	_Atomic uint64_t claim_pos;	/* queue position being claimed */
	uint8_t pad1[SHM_CACHELINE - 24];
	char name[SHM_NAME_MAX];	/* producer's own region name */
	uint8_t pad2[SHM_CACHELINE * 2 - SHM_NAME_MAX];
	/* Cells of this slot's producers the owner has consumed, ever:
	 * written by the owner only, on a line of its own, read by the
	 * producer only when its credits run out (shm_queue_reserve). */
	alignas(SHM_CACHELINE) _Atomic uint64_t consumed;
	uint8_t pad3[SHM_CACHELINE - 8];
};

_Static_assert(sizeof(struct shm_slot) == 4 * SHM_CACHELINE,
	       "slot layout");

struct shm_cell;
struct shm_bounce_seg;

/* The owner's private view of its own region. */
struct shm_region {
	struct shm_region_hdr *hdr;	/* == mapping base */
	size_t size;
	int fd;				/* flock(LOCK_EX) held on it */
	pid_t pid;			/* creator; a forked child never unlinks */
	struct shm_slot *slots;
	uint8_t *cells;
	struct shm_bounce_seg *segs;
	uint8_t *seg_data;
	uint32_t cell_size;
	uint32_t max_peers;
	uint64_t mask;			/* cell_count - 1 */
	uint64_t head;			/* next position to poll */
	uint64_t rel;			/* next position to release */
	uint32_t idle_polls;		/* empty polls since the last message */
	uint32_t poll_end;		/* cell bytes each poll asks for */
	uint64_t stall_pos;		/* head position a stall was first seen at */
	uint64_t stall_since_ns;
	uint32_t bounce_next;		/* round-robin start of the segment scan */
	uint64_t seg_owned;		/* bit i: segment i belongs to a transfer */
	uint64_t next_xfer_id;
	uint64_t dropped;		/* invalid or dead-producer cells skipped */
	struct shm_region_attr attr;
	char name[SHM_NAME_MAX];
	struct shm_region *next;	/* process-wide list for the exit hook */
	struct shm_region *prev;
};

/* The layout is a pure function of the sizes, so a reader recomputes it
 * instead of trusting the offsets it finds in a header (shm_layout.c). */
struct shm_region_layout {
	uint64_t slots_off, cells_off, segs_off, seg_data_off, size;
};

/* false when attr is out of range or the region would be too large. */
bool shm_region_layout(const struct shm_region_attr *attr,
		       struct shm_region_layout *l);

/* Defaults above, into *attr. */
void shm_region_attr_default(struct shm_region_attr *attr);

/* Check attr ranges; -FI_EINVAL with a log line when out of range. */
int shm_region_attr_check(const struct shm_region_attr *attr);

/* Bytes a region with these settings occupies (0 when attr is invalid). */
size_t shm_region_size(const struct shm_region_attr *attr);

/* Create this endpoint's region (attr NULL = defaults). Also reclaims, once
 * per process, leftovers of dead processes of this uid. The region's name
 * (shm_region_name) is the endpoint's address. 0 or -FI_E*. */
int shm_region_create(const struct shm_region_attr *attr,
		      struct shm_region **region);

/* Unmap, unlink, release the lock, free. NULL is a no-op. */
void shm_region_close(struct shm_region *region);

static inline const char *shm_region_name(const struct shm_region *region)
{
	return region->name;
}

/* Remove this uid's weft regions whose owner is gone. Returns how many were
 * removed, or -FI_E*. Safe to call at any time, from any process. */
int shm_region_reclaim(void);

/* Full region name of a chosen short name in namespace ns (NULL: this
 * process's) into buf[SHM_NAME_MAX]. -FI_EINVAL (logged) when short_name
 * is not [A-Za-z0-9._:-]{1,40} or ns is not a namespace. */
int shm_region_name_build(const char *short_name, const char *ns, char *buf);

/* The namespace of the names this process chooses: "n" (none, the names
 * of processes started by hand) or "j<16 hex>" (one job's). Set once,
 * before the first region, by the provider (FI_SHM_JOB); "n" until then.
 * -FI_EINVAL for anything else. */
int shm_region_set_namespace(const char *ns);
const char *shm_region_namespace(void);
/* Length of the namespace at the start of s ("n" or "j<16 hex>",
 * followed by '-'), or 0 when s does not start with one. */
size_t shm_region_ns_len(const char *s);

/* Name syntax check: our prefix, this uid, [A-Za-z0-9._:-] after it,
 * bounded length (so never a '/'). */
bool shm_region_name_valid(const char *name);

/* Validate a mapped header against the size of the object it came from:
 * magic, version, uid, sizes and recomputed offsets. 0 or -FI_EINVAL. */
int shm_region_hdr_check(const struct shm_region_hdr *hdr, size_t file_size);

/* Liveness of the owner of an open region fd: true while its owner holds
 * the lock. One flock() call. */
bool shm_region_fd_alive(int fd);

/* Owner side: a cell of slot src's producer is consumed (handled, or its
 * unexpected copy matched): one credit back. One store to a line only
 * the owner writes. src < max_peers (the queue checked it). */
static inline void shm_region_credit(struct shm_region *region, uint16_t src)
{
	_Atomic uint64_t *c = &region->slots[src].consumed;

	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) +
				     1, memory_order_relaxed);
}

/* Owner side, for a cell consumed long after it was polled (an
 * unexpected message): only if slot src still has the producer of
 * generation gen (a new producer of the slot starts with its own
 * credits). */
void shm_region_credit_gen(struct shm_region *region, uint16_t src,
			   uint16_t gen);

/* Owner side: the name of the producer attached at slot src (validated,
 * copied into buf of SHM_NAME_MAX), and its generation. -FI_ENOENT when the
 * slot is not attached, -FI_EINVAL when its contents are bad. */
int shm_region_slot_name(struct shm_region *region, uint16_t src,
			 char *buf, uint32_t *gen);

/* Owner side, slow path: is the producer attached at slot src alive?
 * (opens its region by the name in the slot; false for a free slot) */
bool shm_region_slot_alive(struct shm_region *region, uint16_t src);

/* Owner side, slow path: free slots whose producer is dead or closed and
 * whose cells were all polled. Returns the number of slots freed. */
int shm_region_reap(struct shm_region *region);
/* Owner side: free the closed slots whose cells were all polled; loads
 * only, no system call (the idle queue's periodic check). */
int shm_region_reap_closed(struct shm_region *region);

#endif /* SHM_REGION_H */
