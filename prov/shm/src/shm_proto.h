/* SPDX-License-Identifier: MIT */
/*
 * shm wire protocol, version 1: what the provider puts in the transport's
 * cells (shm_queue.h gives the 48-byte header; op, flags, len, proto, tag,
 * data and cookie are ours). Everything below is read from memory another
 * process writes: receivers check every count and length against the cell's
 * validated len before use.
 *
 *   op        payload                                  reply
 *   SEND      message bytes (len)                      -
 *   RTS       shm_rts + iov[iov_cnt] (sender memory)   ACK (status, bytes)
 *   WRITE     shm_rma + rma[rma_cnt] + inline bytes or iov[iov_cnt]   ACK
 *   READ      shm_rma + rma[rma_cnt] + iov[iov_cnt] or nothing (inline) ACK(+data)
 *   ATOMIC    shm_amo + operand[count] + compare[count] ACK (+fetched data)
 *   ACK       fetched bytes (len)                       -
 *   CTS       shm_cts + iov[iov_cnt] (receiver memory)   PUSHED (status)
 *   PUSHED    -                                         -
 * A send with FI_DELIVERY_COMPLETE always goes as an RTS, so that its
 * completion waits for the receiver's ACK. SEND and RTS with SHM_F_COLL
 * belong to the collective engine (their own match queue).
 * Split copy (CMA, messages of at least FI_SHM_SPLIT_SIZE): the receiver
 * answers the RTS with a CTS naming its buffer for the second part of the
 * message, and pulls the first part itself while the sender, on the CTS,
 * pushes the second part; the sender's PUSHED (cookie = the CTS's rx_id)
 * says its part is in, and the receiver then completes and ACKs as usual.
 * cookie: the initiator's operation id, echoed in the ACK; proto: in an ACK,
 * the status (0 or a positive FI_E* code), in an RTS/WRITE/READ the copy mode.
 */
#ifndef SHM_PROTO_H
#define SHM_PROTO_H

#include <stdint.h>

enum shm_op {
	SHM_OP_SEND = 1,
	SHM_OP_RTS,
	SHM_OP_WRITE,
	SHM_OP_READ,
	SHM_OP_ATOMIC,
	SHM_OP_ACK,
	SHM_OP_CTS,
	SHM_OP_PUSHED,
	SHM_OP_MAX,
};

/* Cell flags. The protocol version rides in the top bits so a mismatched
 * peer is refused per cell, not misread. */
#define SHM_F_TAGGED   (1u << 0)
#define SHM_F_CQ_DATA  (1u << 1)
/* The collective class (util_coll.h): a SEND or RTS for the collective
 * engine, matched in its own queue, tag = the engine's, never the
 * application's. */
#define SHM_F_COLL     (1u << 2)
#define SHM_F_FETCH    (1u << 3)	/* atomic returns the old values */
#define SHM_F_COMPARE  (1u << 4)	/* atomic carries compare values */
#define SHM_F_VER_SHIFT 12
#define SHM_F_VER      ((uint16_t)(SHM_PROTO_VERSION << SHM_F_VER_SHIFT))
#define SHM_F_VER_MASK ((uint16_t)(0xfu << SHM_F_VER_SHIFT))

/* How the bytes of an RTS, large WRITE or READ move. */
enum shm_copy_mode {
	SHM_COPY_INLINE = 0,	/* in the cell (WRITE/READ ACK only) */
	SHM_COPY_CMA,		/* target reads/writes initiator memory */
	SHM_COPY_BOUNCE,	/* through the initiator's bounce segments */
};

struct shm_iov {
	uint64_t addr;
	uint64_t len;
};

struct shm_rma_iov {
	uint64_t addr;
	uint64_t len;
	uint64_t key;
};

struct shm_rts {
	uint64_t total;		/* message bytes */
	uint64_t xfer_id;	/* bounce transfer, 0 with CMA */
	uint32_t iov_cnt;
	uint32_t pad;
	struct shm_iov iov[];
};

/* Split copy: the sender writes message bytes [off, off + len) into iov. */
struct shm_cts {
	uint64_t off;
	uint64_t len;
	uint64_t rx_id;		/* the receiver's transfer, echoed by PUSHED */
	uint32_t iov_cnt;
	uint32_t pad;
	struct shm_iov iov[];
};

struct shm_rma {
	uint64_t total;		/* bytes, == sum of rma[].len */
	uint64_t xfer_id;
	uint32_t rma_cnt;
	uint32_t iov_cnt;	/* initiator iovs (CMA) that follow rma[] */
	struct shm_rma_iov rma[];
};

struct shm_amo {
	uint64_t addr;
	uint64_t key;
	uint32_t count;		/* elements */
	uint8_t datatype;	/* enum fi_datatype */
	uint8_t op;		/* enum fi_op */
	uint16_t pad;
	uint8_t operands[];	/* operand[count], then compare[count] */
};

#endif /* SHM_PROTO_H */
