/* SPDX-License-Identifier: MIT */
/*
 * srd RMA and atomics: one struct srd_rma_op per fi_read/fi_write/
 * fi_atomic call, with its own table of ids that targets echo. RMA is one
 * entry of the protocol table (srd_proto_rma, srd_rma.c): it owns the RMA
 * packet types and work requests, retries at each batch end, is watched
 * for liveness and ends its operations with a failed peer. Inside it,
 * each operation is carried, as decided once per operation, by one of
 * three carriers: hardware RDMA work requests (proto/srd_proto_rma_hw.c),
 * emulated WRITE/READ_REQ/READ_RESP/RMA_ACK packets
 * (proto/srd_proto_rma_emu.c), or ATOMIC_REQ/ATOMIC_RESP packets
 * (proto/srd_proto_atomic.c).
 *
 * Why carriers and not protocols of their own: an operation is not a
 * message (no matching, no reorder window, no send protocol to choose
 * by size) and the three share the operation's life (ids, pending queue,
 * completion, counters); what they share with messages is the packet
 * plumbing, progress and peer failure, which the one table entry gives.
 */
#ifndef SRD_RMA_H
#define SRD_RMA_H

#include "weft/compat.h"
#include "srd_proto.h"
#include "srd_mr.h"

#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>

#define SRD_RMA_OPS_MAX 1024		/* operations in flight per ep */
#define SRD_RMA_RESP_MAX 256		/* emulated reads being answered */
#define SRD_RMA_ID_BITS 16

enum srd_rma_kind {
	SRD_RMA_WRITE,
	SRD_RMA_READ,
	SRD_RMA_ATOMIC,
};

/* Atomic operands travel in the request, results come back in the
 * response: both bounded by one packet, so they are copied here at post
 * time (the application may reuse its buffers for non-fetch atomics
 * at once, fi_atomic(3) inject semantics aside). */
struct srd_rma_atomic {
	uint8_t op;
	uint8_t datatype;
	uint8_t kind;			/* enum util_atomic_kind */
	uint32_t count;
	size_t res_count;
	struct iovec res[SRD_IOV_MAX];	/* fetch/compare results */
};

struct srd_rma_op;

/* How an operation goes (decided once per operation). */
struct srd_rma_carrier {
	const char *name;
	/* Post more of op: 0, or -FI_EAGAIN to retry later. NULL: its one
	 * request went at post time. */
	int (*pump)(struct srd_ep *ep, struct srd_rma_op *op);
	/* A work request of op (or a packet of op's) completed. */
	void (*wc)(struct srd_ep *ep, struct srd_rma_op *op,
		   const struct srd_dev_wc *wc);
	/* op->inflight counts answers of the target: when it fails they
	 * will not come (srd_rma_peer_failed). */
	bool answers;
};

extern const struct srd_rma_carrier srd_rma_hw;
extern const struct srd_rma_carrier srd_rma_emu;
extern const struct srd_rma_carrier srd_rma_atomic;

struct srd_rma_op {
	struct srd_wr_hdr hdr;		/* wr_id and txbuf owner point here */
	struct srd_rma_op *next, *prev;	/* rma->pending (utlist DL) */
	const struct srd_rma_carrier *carrier;	/* NULL: not decided yet */
	struct srd_peer *peer;
	void *context;
	uint64_t comp_flags;		/* FI_RMA|FI_WRITE ... for the CQ */
	uint32_t id;			/* slot | generation << 16: tx_id */
	uint8_t kind;			/* enum srd_rma_kind */
	bool in_use;
	bool abandoned;			/* the peer failed: no answers */
	bool want_comp;
	bool on_pending;
	bool all_posted;		/* every WR / packet went out */
	bool keys_ready;		/* lkey[] filled (hw) */
	uint64_t len;
	uint64_t posted;		/* bytes handed to WRs or packets */
	uint64_t done;			/* bytes confirmed */
	uint32_t inflight;		/* WRs / packets awaiting an answer */
	uint32_t sends;			/* our packets awaiting their send
					 * completion (an answer may come
					 * first: the op lives until both) */
	uint32_t nseg;			/* emulated write: packets in all */
	uint32_t acked;
	int err;			/* first error, positive FI_E* */
	int prov_errno;
	uint64_t addr;			/* target address of byte 0 */
	uint64_t key;
	uint32_t cq_data;
	uint16_t pkt_flags;		/* SRD_PKT_F_CQ_DATA */
	size_t iov_count;
	struct iovec iov[SRD_IOV_MAX];
	uint32_t lkey[SRD_IOV_MAX];
	void *desc[SRD_IOV_MAX];
	struct ibv_mr *mr[SRD_IOV_MAX];	/* registered on the fly, hw only */
	struct srd_rma_atomic at;
};

/* An emulated read being answered at the target: data goes out in
 * READ_RESP packets as packet buffers allow. */
struct srd_rma_resp {
	struct srd_rma_resp *next, *prev;	/* rma->responding */
	struct srd_peer *peer;
	uint32_t tx_id;
	const uint8_t *src;
	uint64_t len;
	uint64_t sent;
};

/* A request the target could not answer yet (no packet buffer for the
 * reply): a copy, handled again by progress. */
struct srd_rma_defer {
	struct srd_rma_defer *next, *prev;	/* rma->deferred */
	struct srd_peer *peer;
	size_t len;
	uint8_t pkt[] __attribute__((aligned(16)));
};

struct srd_rma_ep {
	struct srd_rma_op *ops;		/* SRD_RMA_OPS_MAX slots */
	uint32_t *free_ids;
	uint32_t free_top;
	struct srd_rma_op *pending;	/* waiting for resources or peer */
	struct util_pool resp_pool;
	struct srd_rma_resp *responding;
	struct util_pool defer_pool;	/* srd_rma_defer + pkt_size */
	struct srd_rma_defer *deferred;
	uint32_t seg_max;		/* payload bytes of one packet */
	bool hw_write;			/* RDMA write usable for this ep */
	bool hw_read;
	bool hw_imm;			/* write with immediate data too */
	uint64_t max_rma_size;		/* per work request */
};

/* Test hook: force the emulated protocol even where hardware RMA works. */
extern bool srd_rma_force_emulation;

static inline struct srd_rma_op *to_srd_rma_op(struct srd_wr_hdr *hdr)
{
	return container_of(hdr, struct srd_rma_op, hdr);
}

/* srd_rma.c: op table, completion, progress */
struct srd_rma_op *srd_rma_op_get(struct srd_ep *ep);
struct srd_rma_op *srd_rma_op_by_id(struct srd_ep *ep, uint32_t id,
				    struct srd_peer *peer);
/* Start (or queue) a filled op; the op is owned by the RMA layer after. */
void srd_rma_op_start(struct srd_ep *ep, struct srd_rma_op *op);
/* Post more of a started op (after an answer freed the way). */
void srd_rma_op_resume(struct srd_ep *ep, struct srd_rma_op *op);
void srd_rma_op_put(struct srd_ep *ep, struct srd_rma_op *op);
/* Record an error (first one wins). */
void srd_rma_op_fail(struct srd_rma_op *op, int err, int prov_errno);
/* Complete when nothing is in flight and everything (or an error) is in. */
void srd_rma_op_try_complete(struct srd_ep *ep, struct srd_rma_op *op);
int srd_rma_peer(struct srd_ep *ep, fi_addr_t addr, struct srd_peer **peer);
int srd_rma_local_keys(struct srd_ep *ep, struct srd_rma_op *op);
/* Keep a request for later (no reply buffer now); false if even that
 * failed (the request is dropped with a warning). */
bool srd_rma_defer(struct srd_ep *ep, struct srd_peer *peer, const void *pkt,
		   size_t len);

/* proto/srd_proto_rma_emu.c: packets. */
int srd_rma_emu_inject(struct srd_ep *ep, struct srd_rma_op *op);
/* A packet of op's to its target: an answer is due for it. */
void srd_rma_send(struct srd_ep *ep, struct srd_rma_op *op,
		  struct srd_txbuf *tb, size_t len);
void srd_rma_emu_wc(struct srd_ep *ep, struct srd_rma_op *op,
		    const struct srd_dev_wc *wc);
void srd_rma_emu_handle_write(struct srd_ep *ep, struct srd_peer *peer,
			      const void *pkt, size_t len);
void srd_rma_emu_handle_read_req(struct srd_ep *ep, struct srd_peer *peer,
				 const void *pkt, size_t len);
void srd_rma_emu_handle_read_resp(struct srd_ep *ep, struct srd_peer *peer,
				  const void *pkt, size_t len);
void srd_rma_emu_handle_ack(struct srd_ep *ep, struct srd_peer *peer,
			    const void *pkt, size_t len);
void srd_rma_resp_pump(struct srd_ep *ep);
/* A small status answer (RMA_ACK, ATOMIC_RESP without data, READ_RESP
 * error) to peer; -FI_EAGAIN without a packet buffer. */
int srd_rma_send_status(struct srd_ep *ep, struct srd_peer *peer,
			uint8_t type, uint32_t tx_id, int status);
/* Remote side effects of an emulated write or atomic. */
void srd_rma_target_done(struct srd_ep *ep, struct srd_peer *peer,
			 uint64_t flags, bool has_data, uint32_t data,
			 size_t len);

/* proto/srd_proto_atomic.c */
void srd_atomic_handle_req(struct srd_ep *ep, struct srd_peer *peer,
			   const void *pkt, size_t len);
void srd_atomic_handle_resp(struct srd_ep *ep, struct srd_peer *peer,
			    const void *pkt, size_t len);

extern const struct fi_ops_rma srd_rma_ops;

#endif /* SRD_RMA_H */
