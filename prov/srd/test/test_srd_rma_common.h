/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the srd RMA/atomic tests, on top of the RDM tests' two
 * endpoints over softsrd (test_srd_rdm_common.h): a registered target
 * region at b with guard bytes around it, and waits that progress only
 * the initiator (hardware RMA must complete without the target's CPU)
 * or both (emulated RMA needs the target's progress).
 */
#ifndef TEST_SRD_RMA_COMMON_H
#define TEST_SRD_RMA_COMMON_H

#include "test_srd_rdm_common.h"

#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>

#define TRMA_GUARD 64
#define TRMA_REGION (1u << 20)

struct trma {
	struct tfab f;
	uint8_t *mem;		/* guard + region + guard */
	uint8_t *region;
	struct fid_mr *mr;	/* region, registered at b */
	uint64_t key;
	uint64_t base;		/* remote address of region[0] */
	bool hw;		/* device RMA in use */
	/* trma_open_rma_event: b's counters of RMA aimed at it */
	struct fid_cntr *rw_cntr, *rr_cntr;
};

/* Open a and b, register the region at b with access, finish the
 * handshake a -> b with one message. */
void trma_open(struct trma *t, uint64_t access);
/* The same with FI_RMA_EVENT asked for, and counters bound at b with
 * FI_REMOTE_WRITE (rw_cntr) and FI_REMOTE_READ (rr_cntr). */
void trma_open_rma_event(struct trma *t, uint64_t access);
void trma_close(struct trma *t);
/* Fill region and guards with a pattern of seed. */
void trma_fill_target(struct trma *t, unsigned int seed);
void trma_check_target(struct trma *t, unsigned int seed);
/* Wait for one entry at a; only_a: never progress b. */
struct tent trma_wait_a(struct trma *t, bool only_a);
/* Poll b until it has n entries (progressing a too). */
void trma_wait_b(struct trma *t, int n);

#endif /* TEST_SRD_RMA_COMMON_H */
