/* SPDX-License-Identifier: MIT */
/*
 * srd RDM protocol, wire format version 1 (documented in man/fi_srd.7).
 *
 * Every packet starts with struct srd_pkt_base. Fields are little-endian
 * (weft builds only for little-endian hosts; the version byte changes if
 * that ever changes). Everything here arrives from the network: a receiver
 * validates type, version, lengths, counts and ids (srd_pkt_validate) before
 * it reads anything past the base header, and drops what fails with a log
 * line.
 *
 * Peers: a sender's first packet to a peer is HELLO, carrying its endpoint
 * name and the id it gave the peer in its own table; the receiver answers
 * HELLO_ACK with its id for the sender. From then on every packet carries
 * the receiver's id for the sender (base.peer_id), so a lookup is an array
 * index, cross-checked against the completion's source QPN. Data waits
 * for the handshake (one round trip, first message to a peer only).
 *
 * Ordering: messages (EAGER, MEDIUM, LONG_RTS, CTS_RTS) carry a per-peer
 * msg_id; the receiver matches them in msg_id order through its reorder
 * window, which gives FI_ORDER_SAS over SRD's unordered delivery. Packets
 * addressed to an already-matched transfer (MEDIUM after the first
 * segment, DATA, READ_DONE, CTS, responses) skip the window.
 */
#ifndef SRD_PKT_H
#define SRD_PKT_H

#include <stddef.h>
#include <stdint.h>

#define SRD_PROTO_VERSION 1
#define SRD_PEER_ID_NONE UINT32_MAX

enum srd_pkt_type {
	SRD_PKT_HELLO = 1,	/* handshake request */
	SRD_PKT_HELLO_ACK,	/* handshake reply */
	SRD_PKT_EAGER,		/* whole message in one packet */
	SRD_PKT_MEDIUM,		/* one segment of a multi-packet message */
	SRD_PKT_LONG_RTS,	/* long message: sender's memory to RDMA-read */
	SRD_PKT_READ_DONE,	/* receiver has what it wanted (LONG, CTS) */
	SRD_PKT_CTS_RTS,	/* long message, receiver-granted credits */
	SRD_PKT_CTS,		/* receiver grants a window of bytes */
	SRD_PKT_DATA,		/* bytes inside a granted window */
	SRD_PKT_WRITE,		/* emulated RMA write, one segment */
	SRD_PKT_READ_REQ,	/* emulated RMA read request */
	SRD_PKT_READ_RESP,	/* emulated RMA read data, one segment */
	SRD_PKT_ATOMIC_REQ,	/* emulated atomic (write, fetch, compare) */
	SRD_PKT_ATOMIC_RESP,	/* result of a fetch/compare atomic, or status */
	SRD_PKT_RMA_ACK,	/* emulated write landed (status) */
	SRD_PKT_TYPE_MAX,
};

/* base.flags */
#define SRD_PKT_F_TAGGED	(1u << 0)
#define SRD_PKT_F_CQ_DATA	(1u << 1)	/* cq_data is valid */
#define SRD_PKT_F_ACK_REQ	(1u << 2)	/* WRITE: answer with RMA_ACK */
#define SRD_PKT_F_LAST		(1u << 3)	/* last segment of a WRITE */
/* EAGER, MEDIUM, LONG_RTS, CTS_RTS (always with TAGGED): a message of the
 * collective class (util_coll.h), matched in its own queue; the tag is
 * the collective engine's, never the application's. */
#define SRD_PKT_F_COLL		(1u << 4)
/* LONG_RTS: the sender's memory may be read over several rails (struct
 * srd_pkt_stripe leads the payload). */
#define SRD_PKT_F_RAILS		(1u << 5)

/* Handshake features (srd_pkt_hello.features). */
#define SRD_FEAT_RDMA_READ	(1ull << 0)	/* may be RDMA-read from */
#define SRD_FEAT_RDMA_WRITE	(1ull << 1)
#define SRD_FEAT_DATA_RING	(1ull << 2)	/* hello carries a slot ring */
/* with DATA_RING: the ring is framed in 128-byte lines, a flag word in
 * each (srd_ring.h); without it, one sequence word per slot */
#define SRD_FEAT_RING_LINE128	(1ull << 3)
/* The sender counts RMA aimed at it (remote-write/read counters bound,
 * FI_RMA_EVENT): its peers emulate RMA toward it, because a device RDMA
 * write or read without immediate never reaches the target's CPU. */
#define SRD_FEAT_RMA_EVENT	(1ull << 4)
/* The sender stripes over more devices: struct srd_pkt_rails (its other
 * rails' QPs) follows the HELLO header. */
#define SRD_FEAT_RAILS		(1ull << 5)

struct srd_pkt_base {
	uint8_t version;
	uint8_t type;		/* enum srd_pkt_type */
	uint16_t flags;
	uint32_t peer_id;	/* receiver's id for the sender; NONE in HELLO */
};

/* HELLO and HELLO_ACK. */
struct srd_pkt_hello {
	struct srd_pkt_base base;
	uint8_t name[36];	/* struct srd_ep_name of the sender */
	uint32_t sender_id;	/* sender's id for the receiver: put it in
				 * base.peer_id of packets to the sender */
	uint64_t features;
	/* SRD_FEAT_DATA_RING: the sender's slot ring for the receiver */
	uint64_t ring_addr;
	uint64_t ring_key;
	uint32_t ring_slots;
	uint32_t ring_slot_size;
};

/* SRD_FEAT_RAILS: the sender's rails 1..count (rail 0 is the QP of its
 * name), count in 1..SRD_PKT_RAILS_MAX - 1. */
#define SRD_PKT_RAILS_MAX 4
struct srd_pkt_rail {
	uint32_t qpn;
	uint32_t qkey;
	uint8_t gid[16];
};
struct srd_pkt_rails {
	uint32_t count;
	uint32_t reserved;	/* 0 */
	struct srd_pkt_rail rail[];
};

/* Bytes of a HELLO whose header says what follows it. */
static inline size_t srd_pkt_hello_len(const struct srd_pkt_hello *h,
				       uint32_t rails)
{
	return sizeof(*h) + ((h->features & SRD_FEAT_RAILS) ?
			     sizeof(struct srd_pkt_rails) +
			     rails * sizeof(struct srd_pkt_rail) : 0);
}

/* EAGER, MEDIUM, LONG_RTS, CTS_RTS: the start (or a segment) of a message. */
struct srd_pkt_msg {
	struct srd_pkt_base base;
	uint32_t msg_id;	/* per-peer, in send order, wraps */
	uint32_t tx_id;		/* sender's transfer id, echoed in replies */
	uint64_t tag;
	uint64_t total_len;	/* the whole message */
	uint64_t offset;	/* of this payload (MEDIUM); 0 otherwise */
	uint32_t cq_data;	/* SRD_PKT_F_CQ_DATA */
	uint32_t seg_len;	/* payload bytes after the header */
};
/* LONG_RTS payload: seg_len / sizeof(struct srd_pkt_iov) entries (1 ..
 * SRD_PKT_IOV_MAX) describing the sender's registered memory, whose
 * lengths add up to total_len. CTS_RTS may carry the first seg_len bytes. */
struct srd_pkt_iov {
	uint64_t addr;
	uint64_t len;
	uint64_t key;
};
#define SRD_PKT_IOV_MAX 4
/* LONG_RTS with SRD_PKT_F_RAILS: this, then iov_count struct srd_pkt_iov
 * (rail 0's keys), then uint32_t keys[rails - 1][iov_count]: the same
 * memory's key on the sender's rail 1, 2, ... */
struct srd_pkt_stripe {
	uint8_t rails;		/* 2..SRD_PKT_RAILS_MAX */
	uint8_t iov_count;	/* 1..SRD_PKT_IOV_MAX */
	uint16_t reserved;	/* 0 */
	uint32_t reserved2;	/* 0 */
};

/* READ_DONE, CTS: replies about a transfer (reserved 0). */
struct srd_pkt_ctrl {
	struct srd_pkt_base base;
	uint32_t tx_id;		/* the sender's transfer (READ_DONE, CTS) */
	uint32_t rx_id;		/* the receiver's transfer (CTS -> DATA) */
	uint64_t offset;	/* CTS: window start */
	uint64_t len;		/* CTS: window bytes; READ_DONE: bytes read */
	int32_t status;		/* 0 or a negative -FI_E* (truncation etc.) */
	uint32_t reserved;
};

/* DATA: bytes of a CTS window. */
struct srd_pkt_data {
	struct srd_pkt_base base;
	uint32_t rx_id;
	uint32_t seg_len;
	uint64_t offset;
};

/*
 * WRITE (emulated, one segment), READ_REQ. An emulated write of several
 * segments sends all but the last with ACK_REQ, and the LAST one (which
 * carries CQ_DATA and bumps the target's remote-write counter) only when
 * every other segment was acknowledged, so the target keeps no state.
 */
struct srd_pkt_rma {
	struct srd_pkt_base base;
	uint32_t tx_id;		/* initiator's transfer, echoed in responses */
	uint32_t seg_len;	/* WRITE payload bytes; READ_REQ: 0 */
	uint64_t addr;		/* target address (or offset) of the whole
				 * write or read */
	uint64_t key;
	uint64_t len;		/* bytes of the whole write or read: every
				 * segment is checked against all of it, so a
				 * refused write touches no byte */
	uint64_t offset;	/* WRITE: of this segment in the write;
				 * READ_REQ: 0 */
	uint32_t cq_data;	/* SRD_PKT_F_CQ_DATA (LAST only), else 0 */
	uint32_t reserved;	/* 0 */
};

/*
 * READ_RESP, RMA_ACK, ATOMIC_RESP. A failed check at the target (key,
 * bounds, access, op) gives one response with status < 0 and no payload;
 * READ_RESP segments carry offset within the read; RMA_ACK answers one
 * WRITE segment; ATOMIC_RESP carries the old values of a fetch/compare
 * atomic (count * size bytes) or nothing for a plain one.
 */
struct srd_pkt_resp {
	struct srd_pkt_base base;
	uint32_t tx_id;
	int32_t status;		/* 0 or -FI_E* from the target's checks */
	uint64_t offset;	/* READ_RESP: of this payload; else 0 */
	uint32_t seg_len;	/* payload bytes after the header */
	uint32_t reserved;	/* 0 */
};

/* ATOMIC_REQ: count operands of the datatype's size follow the header
 * (none for FI_ATOMIC_READ), then, for compare atomics, count compare
 * values. The op/kind pair must be one util_atomic_kind_valid accepts. */
struct srd_pkt_atomic {
	struct srd_pkt_base base;
	uint32_t tx_id;
	uint8_t op;		/* enum fi_op */
	uint8_t datatype;	/* enum fi_datatype */
	uint8_t kind;		/* UTIL_ATOMIC_WRITE, _FETCH, _COMPARE */
	uint8_t reserved;	/* 0 */
	uint64_t addr;
	uint64_t key;
	uint32_t count;		/* elements, >= 1 */
	uint32_t cq_data;	/* SRD_PKT_F_CQ_DATA, else 0 */
};

/* Status values on the wire: 0 or a negative fi_errno down to this. */
#define SRD_PKT_STATUS_MIN (-4095)

/* The wire layout is frozen by version 1: natural alignment, no padding. */
_Static_assert(sizeof(struct srd_pkt_base) == 8, "base");
_Static_assert(sizeof(struct srd_pkt_hello) == 80, "hello");
_Static_assert(sizeof(struct srd_pkt_msg) == 48, "msg");
_Static_assert(sizeof(struct srd_pkt_iov) == 24, "iov");
_Static_assert(sizeof(struct srd_pkt_rail) == 24, "rail");
_Static_assert(sizeof(struct srd_pkt_rails) == 8, "rails");
_Static_assert(sizeof(struct srd_pkt_stripe) == 8, "stripe");
_Static_assert(sizeof(struct srd_pkt_ctrl) == 40, "ctrl");
_Static_assert(sizeof(struct srd_pkt_data) == 24, "data");
_Static_assert(sizeof(struct srd_pkt_rma) == 56, "rma");
_Static_assert(sizeof(struct srd_pkt_resp) == 32, "resp");
_Static_assert(sizeof(struct srd_pkt_atomic) == 40, "atomic");

/* Room every payload-carrying packet keeps for its header (srd_rdm.h
 * SRD_PKT_HDR_MAX); HELLO carries no payload and may be larger. */
_Static_assert(sizeof(struct srd_pkt_msg) <= 64, "msg header");
_Static_assert(sizeof(struct srd_pkt_rma) <= 64, "rma header");
_Static_assert(sizeof(struct srd_pkt_atomic) <= 64, "atomic header");

/*
 * Validation of a received packet of len bytes: version, type, the header
 * size of that type, and every length/count against len and limits.
 * Returns the type (> 0) or -FI_EINVAL after a FI_WARN naming what was
 * wrong. Fields that need endpoint state (peer_id range, msg_id window,
 * rx_id/tx_id lookup, MR checks) are checked by their users.
 */
int srd_pkt_validate(const void *buf, size_t len, uint64_t max_msg_size);
/*
 * A validated ATOMIC_REQ against the packet its answer goes in: a fetch
 * or compare answers with count old values in one ATOMIC_RESP, and a
 * fetch READ carries no operands, so a 40-byte request may ask for any
 * number of them. 0, or -FI_EMSGSIZE after a FI_WARN when they would not
 * fit pkt_size bytes (the target then answers with that status).
 */
int srd_pkt_atomic_answer_check(const struct srd_pkt_atomic *a,
				size_t pkt_size);
/* Header bytes of a packet type (0 for an unknown type). */
size_t srd_pkt_hdr_size(unsigned int type);
/* "EAGER", ...; "unknown" for anything else. */
const char *srd_pkt_type_str(unsigned int type);
/* Entries of a validated LONG_RTS (payload: its seg_len bytes). */
static inline size_t srd_pkt_rts_iov_count(uint16_t flags,
					   const uint8_t *payload,
					   uint32_t seg_len)
{
	if (flags & SRD_PKT_F_RAILS)
		return ((const struct srd_pkt_stripe *)payload)->iov_count;
	return seg_len / sizeof(struct srd_pkt_iov);
}

static inline const uint8_t *srd_pkt_rts_iovs(uint16_t flags,
					      const uint8_t *payload)
{
	return payload + ((flags & SRD_PKT_F_RAILS) ?
			  sizeof(struct srd_pkt_stripe) : 0);
}

/* Payload bytes of a striped LONG_RTS. */
static inline size_t srd_pkt_stripe_len(size_t rails, size_t iov_count)
{
	return sizeof(struct srd_pkt_stripe) +
	       iov_count * sizeof(struct srd_pkt_iov) +
	       (rails - 1) * iov_count * sizeof(uint32_t);
}

#endif /* SRD_PKT_H */
