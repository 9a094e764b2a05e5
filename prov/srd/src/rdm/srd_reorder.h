/* SPDX-License-Identifier: MIT */
/*
 * Per-peer reorder window: SRD delivers packets reliably but in any order;
 * messages (EAGER, MEDIUM, LONG_RTS, CTS_RTS) carry a per-peer msg_id and
 * are matched in msg_id order, which gives FI_ORDER_SAS.
 *
 * A packet for the next expected message is processed in place (NOW, no
 * copy). One for a later message is copied and held until its turn: in a
 * slot of the window (msg_id - next < window), or in a sorted overflow list
 * beyond it (SRD never resends what it delivered, so nothing is dropped).
 * Several packets may be held per msg_id (MEDIUM segments). Copies come
 * from two util pools (small and MTU-sized packets) that grow a chunk at a
 * time, only when packets are really out of order; in-order traffic never
 * allocates. msg_id wraps: comparisons use serial-number arithmetic, so at
 * most 2^31 messages may be in flight per peer.
 *
 * Not locked: the endpoint lock covers it, like the peer it is embedded in.
 */
#ifndef SRD_REORDER_H
#define SRD_REORDER_H

#include "weft/compat.h"
#include "weft/util_pool.h"

#include <stddef.h>
#include <stdint.h>

/* Copies up to this size come from the small pool, up to
 * SRD_REORDER_BIG_MAX from the big one (EFA and softsrd MTUs are below
 * it); larger packets, which no SRD device delivers today, are malloc'ed. */
#define SRD_REORDER_SMALL_MAX 512
#define SRD_REORDER_BIG_MAX 9216
#define SRD_REORDER_WINDOW_DEFAULT 256
#define SRD_REORDER_WINDOW_MAX (1u << 20)

enum srd_reorder_class {
	SRD_REORDER_CLASS_SMALL,
	SRD_REORDER_CLASS_BIG,
	SRD_REORDER_CLASS_MALLOC,
};

/* One held copy; data is what srd_reorder_pop hands out. */
struct srd_reorder_pkt {
	struct srd_reorder_pkt *next, *prev;	/* utlist DL */
	uint32_t msg_id;
	uint32_t cls;				/* enum srd_reorder_class */
	size_t len;
	unsigned char data[] __attribute__((aligned(16)));
};

struct srd_reorder {
	uint32_t next;		/* msg_id expected next; tests may set it
				 * right after init to exercise wrap-around */
	uint32_t window;	/* power of two */
	uint32_t mask;
	uint32_t held;		/* copies not yet popped */
	struct srd_reorder_pkt **slots;	/* window heads, by msg_id & mask */
	struct srd_reorder_pkt *ready;	/* msg_id < next: pop these first */
	struct srd_reorder_pkt *overflow;	/* beyond the window, sorted */
	struct util_pool small;
	struct util_pool big;
};

enum {
	SRD_REORDER_NOW,	/* next expected message: process it */
	SRD_REORDER_HELD,	/* copied; repost the rx buffer */
	SRD_REORDER_BEHIND,	/* already passed: later segment or dup */
};

/* window: a power of two, 1..SRD_REORDER_WINDOW_MAX. 0, -FI_EINVAL (with a
 * log line), -FI_ENOMEM. Nothing is allocated for held packets yet. */
int srd_reorder_init(struct srd_reorder *r, uint32_t window);
/* Frees held copies (popped but unreleased ones must be released first). */
void srd_reorder_fini(struct srd_reorder *r);

/*
 * A message packet (EAGER, MEDIUM, LONG_RTS, CTS_RTS) with msg_id arrived.
 * NOW: msg_id is the next expected: process it, then call
 * srd_reorder_advance when it was the message's first processed packet.
 * HELD: the packet was copied (caller reposts its rx buffer). BEHIND: msg_id
 * already passed: a later MEDIUM segment of a matched message (caller looks
 * it up in its in-progress transfers) or a duplicate (drop). Never drops.
 * -FI_ENOMEM when a copy could not be allocated (nothing held).
 */
int srd_reorder_arrive(struct srd_reorder *r, uint32_t msg_id,
		       const void *pkt, size_t len);
/* The message next was matched: expect next + 1. Held packets of the old
 * next become poppable (as BEHIND segments), overflow entries that entered
 * the window move into their slots. */
void srd_reorder_advance(struct srd_reorder *r);
/*
 * Held packets that are now in order (msg_id <= next): caller processes
 * each like a fresh arrival, then srd_reorder_release(r, pkt). NULL when
 * none. Leftover segments of passed messages come first, then the packets
 * of msg_id == next in arrival order.
 */
const void *srd_reorder_pop(struct srd_reorder *r, size_t *len);
void srd_reorder_release(struct srd_reorder *r, const void *pkt);

/* Serial-number order: a is before b (RFC 1982 style, 32 bits). */
static inline int srd_reorder_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

#endif /* SRD_REORDER_H */
