/* SPDX-License-Identifier: MIT */
/*
 * shm transport: slow paths of the inbound queue (invalid cells, stalls).
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "shm_transport.h"

#include "weft/util_mem.h"
#include "weft/util_time.h"

#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

bool shm_copy_erms;

/* Enhanced rep movsb (CPUID.7.0:EBX bit 9): without it the string copy
 * has a slow start and memcpy is the better choice. */
static void __attribute__((constructor)) shm_copy_detect(void)
{
#if defined(__x86_64__)
	unsigned int a, b, c, d;

	if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
		shm_copy_erms = b & (1u << 9);
#endif
}

void shm_queue_fault(struct shm_queue_tx *q, uint64_t pos)
{
	uint64_t first = (pos & q->mask) >> q->fault_shift << q->fault_shift;

	util_mem_prefault(shm_cell_at(q->cells, q->cell_size, first),
			  ((size_t)q->cell_size) << q->fault_shift);
	q->faulted |= 1u << (first >> q->fault_shift);
}

/* Hand the head cell back without delivering it. Only when nothing polled
 * is still held, so releases stay in position order. */
static bool shm_queue_skip_head(struct shm_region *r)
{
	if (r->rel != r->head)
		return false;
	r->head++;
	shm_queue_release_n(r, 1);
	r->dropped++;
	return true;
}

/* Was the head position claimed by producers that are all dead? The live
 * claimer's intent store precedes its claim, so it is visible here once
 * tail is; stale intents of dead producers that lost the race are harmless
 * because any live candidate vetoes the skip. */
static bool shm_queue_claimer_dead(struct shm_region *r)
{
	uint32_t i, dead = 0;

	for (i = 0; i < r->max_peers; i++) {
		struct shm_slot *slot = &r->slots[i];

		if (atomic_load_explicit(&slot->state, memory_order_acquire) ==
			    SHM_SLOT_FREE ||
		    atomic_load_explicit(&slot->claim_pos,
					 memory_order_relaxed) != r->head)
			continue;
		if (shm_region_slot_alive(r, (uint16_t)i))
			return false;
		dead++;
	}
	return dead > 0;
}

int shm_queue_check_stall(struct shm_region *r)
{
	struct shm_cell *cell = shm_cell_at(r->cells, r->cell_size,
					    r->head & r->mask);
	uint64_t tail;

	if (atomic_load_explicit(&cell->seq, memory_order_acquire) ==
	    r->head + 1)
		return 0;
	tail = atomic_load_explicit(&r->hdr->tail, memory_order_acquire);
	if ((int64_t)(tail - r->head) <= 0 || !shm_queue_claimer_dead(r))
		return 0;
	if (!shm_queue_skip_head(r))
		return 0;
	WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_DATA,
		"shm region %s: skipped queue position %llu claimed by a dead "
		"producer\n", r->name, (unsigned long long)(r->head - 1));
	return 1;
}

/* Head not ready after many polls: act only once it has been stuck at the
 * same position for SHM_STALL_NS, so an idle queue costs a clock read per
 * SHM_STALL_POLLS polls and nothing more. */
static bool shm_queue_stalled(struct shm_region *r)
{
	uint64_t now = util_time_ns();

	r->idle_polls = 0;
	if (r->stall_pos != r->head || !r->stall_since_ns) {
		r->stall_pos = r->head;
		r->stall_since_ns = now;
		return false;
	}
	if (now - r->stall_since_ns < SHM_STALL_NS)
		return false;
	r->stall_since_ns = now;
	/* Idle: a good time to give back the slots of closed producers. */
	shm_region_reap_closed(r);
	return shm_queue_check_stall(r) > 0;
}

struct shm_cell *shm_queue_poll_slow(struct shm_region *r,
				     struct shm_cell_hdr *hdr)
{
	for (;;) {
		struct shm_cell *cell = shm_cell_at(r->cells, r->cell_size,
						    r->head & r->mask);
		uint64_t seq = atomic_load_explicit(&cell->seq,
						    memory_order_acquire);

		if (seq == r->head + 1) {
			*hdr = cell->hdr;
			if (shm_cell_hdr_ok(hdr, r->cell_size, r->max_peers)) {
				shm_queue_took(r, cell, hdr->len);
				r->head++;
				r->idle_polls = 0;
				return cell;
			}
			if (!shm_queue_skip_head(r))
				return NULL;
			WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_DATA,
				"shm region %s: dropped a cell with len %u "
				"src %u\n", r->name, hdr->len, hdr->src);
			continue;
		}
		if (r->idle_polls < SHM_STALL_POLLS || !shm_queue_stalled(r))
			return NULL;
	}
}
