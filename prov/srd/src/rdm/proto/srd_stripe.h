/* SPDX-License-Identifier: MIT */
/*
 * Striping (multi-rail): an endpoint with FI_SRD_RAILS=N (or the endpoint
 * option FI_OPT_WEFT_RAILS) opens a QP and CQ on N-1 more devices, its
 * rails 1..N-1 (rail 0 is its own QP). The handshake tells each peer the
 * rails' QPs (SRD_FEAT_RAILS, struct srd_pkt_rails); both sides use
 * min(their count, ours). Only long messages by RDMA read use them: the
 * sender registers its memory on every rail and sends each rail's keys in
 * LONG_RTS (SRD_PKT_F_RAILS), the receiver reads one share per rail; the message still starts, matches and completes through rail
 * 0, so ordering and completion semantics do not change.
 */
#ifndef SRD_STRIPE_H
#define SRD_STRIPE_H

#include "../srd_rdm.h"

#define SRD_RAILS_MAX SRD_PKT_RAILS_MAX
/* Messages up to this size stay on rail 0. */
#define SRD_STRIPE_MIN (256 * 1024)
#define SRD_STRIPE_ALIGN 4096

/* Reads of a striped message: one share per rail, page-aligned, taken
 * round-robin (a read is one work request however large, so fewer and
 * larger reads keep each rail's queue as busy with less overhead). */
static inline uint64_t srd_stripe_chunk(uint64_t len, uint32_t rails)
{
	uint64_t share = (len + rails - 1) / rails;

	return (share + SRD_STRIPE_ALIGN - 1) & ~(uint64_t)(SRD_STRIPE_ALIGN - 1);
}

struct srd_rail {
	struct srd_ep *ep;
	struct srd_dev *dev;
	struct srd_dev_cq *cq;
	struct srd_dev_qp *qp;
	uint32_t sq_inflight;		/* reads posted, not completed */
	uint64_t reads;			/* reads posted (tests read it) */
};

struct srd_stripe_ep {
	uint32_t count;			/* rails, rail 0 included */
	struct srd_rail rail[SRD_RAILS_MAX - 1];	/* rails 1.. */
};

/* What a peer's handshake said about its rails. */
struct srd_stripe_peer {
	uint32_t count;			/* usable toward it, rail 0 included */
	struct srd_dev_ah *ah[SRD_RAILS_MAX - 1];
	struct srd_dev_dest dest[SRD_RAILS_MAX - 1];
};

/* Rails toward peer: 1 unless both ends have more. */
static inline uint32_t srd_stripe_rails(const struct srd_ep *ep,
					const struct srd_peer *peer)
{
	return ep->stripe && peer->stripe && peer->state == SRD_PEER_READY ?
	       peer->stripe->count : 1;
}

/* Rails are the same physical memory on another device: register there.
 * k >= 1. NULL with a log line when the device refuses. */
struct ibv_mr *srd_stripe_reg(struct srd_ep *ep, uint32_t k, void *buf,
			      size_t len, int access);
void srd_stripe_dereg(struct srd_ep *ep, uint32_t k, struct ibv_mr *mr);
/* One RDMA read on rail k (>= 1) from peer's rail k; -FI_EAGAIN when the
 * rail's send queue is full or the peer cannot be sent to now. */
int srd_stripe_read(struct srd_ep *ep, struct srd_peer *peer, uint32_t k,
		    struct srd_wr_hdr *wr, uint32_t lkey, void *laddr,
		    size_t len, uint32_t rkey, uint64_t raddr);
/* Progress: one batch from each rail's CQ. */
void srd_stripe_poll(struct srd_ep *ep);
/* Destroy the rails' QPs (before the transfers that may use them go). */
void srd_stripe_qps_destroy(struct srd_ep *ep);
/* FI_OPT_WEFT_RAILS: rails in use; set before fi_enable. */
int srd_stripe_get_rails(const struct srd_ep *ep);
int srd_stripe_set_rails(struct srd_ep *ep, int rails);

#endif /* SRD_STRIPE_H */
