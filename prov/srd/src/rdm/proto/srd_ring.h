/* SPDX-License-Identifier: MIT */
/*
 * Poll on data (fi_srd(7), "Poll modes"): per peer, the receiver owns a ring of
 * slots in registered memory that the peer RDMA-writes small messages
 * into, and finds them by polling memory instead of the CQ. Documented in
 * man/fi_srd.7 ("Poll modes").
 *
 * A ring message is an ordinary EAGER packet (struct srd_pkt_msg + payload,
 * with the peer's msg_id), so the receiver hands it to srd_rx_handle_msg
 * and the same reorder window orders it against send/recv messages: that
 * is what keeps FI_ORDER_SAS across both paths. The protocol itself (the
 * ring's entry in the protocol table) is srd_proto_ring.c.
 *
 * Region announced in HELLO/HELLO_ACK (ring_addr, ring_key, ring_slots,
 * ring_slot_size): ring_slots slots of ring_slot_size bytes (128-byte
 * aligned), then one 128-byte control line whose first 4 bytes the PEER
 * RDMA-writes with the number of OUR messages it has consumed (credits for
 * our sends into its ring). Bytes 64..71 of that line are local: the
 * source of our own credit writes.
 *
 * Record: the packet, zeroes up to a multiple of 8, then struct
 * srd_ring_credit (our consumed count of the peer's ring, piggybacked).
 * Framing, by the receiver's ring flavour (SRD_FEAT_RING_LINE128 or not):
 * - SEQ (whole message lands in order): the record followed by one
 *   struct srd_ring_flag is written right-aligned, so the flag is the
 *   slot's last 8 bytes: a fixed address to poll, and the last bytes the
 *   device writes. The write is only as long as the message needs.
 * - LINE128 (each aligned 128-byte line lands in order): the record is
 *   cut into 120-byte pieces, each followed by a flag in the line's last 8
 *   bytes; every line used must show the expected sequence number.
 * The sequence number of the n-th message (n from 0) is n + 1, in slot
 * n % ring_slots, so what a slot held a lap earlier never matches.
 */
#ifndef SRD_RING_H
#define SRD_RING_H

#include "weft/compat.h"
#include "../srd_proto.h"

#define SRD_RING_SLOTS_DEFAULT 32	/* per peer (FI_SRD_RING_SLOTS) */
#define SRD_RING_SLOTS_MIN 2
#define SRD_RING_SLOT_SIZE 1024		/* multiple of SRD_RING_LINE */
#define SRD_RING_LINE 128
#define SRD_RING_LINE_DATA (SRD_RING_LINE - sizeof(struct srd_ring_flag))
#define SRD_RING_CTRL SRD_RING_LINE	/* control line after the slots */
#define SRD_RING_CTRL_SRC 64		/* our credit-write source word */
/* What we accept from a peer's announcement. */
#define SRD_RING_SLOTS_MAX 4096
#define SRD_RING_SLOT_SIZE_MAX 65536

/* Last 8 bytes of a slot (SEQ) or of each line (LINE128). seq is the
 * last word: the one the device writes last. */
struct srd_ring_flag {
	uint32_t len;		/* packet bytes */
	uint32_t seq;		/* message number + 1 */
};

/* After the (8-byte padded) packet. */
struct srd_ring_credit {
	uint32_t consumed;	/* sender's consumed count of our ring */
	uint32_t reserved;	/* 0 */
};

_Static_assert(sizeof(struct srd_ring_flag) == 8, "ring flag");
_Static_assert(sizeof(struct srd_ring_credit) == 8, "ring credit");
_Static_assert(SRD_RING_SLOT_SIZE % SRD_RING_LINE == 0, "slot size");
_Static_assert((SRD_RING_SLOTS_DEFAULT & (SRD_RING_SLOTS_DEFAULT - 1)) == 0,
	       "slots");

struct srd_ring_stats {
	uint64_t tx_ring;	/* messages sent by RDMA write into a ring */
	uint64_t tx_no_credit;	/* small messages sent by send/recv instead */
	uint64_t rx_ring;	/* messages found by polling a ring */
	uint64_t rx_bad;	/* slots dropped as malformed */
	uint64_t credit_writes;	/* credit returns by RDMA write */
};

struct srd_ring_peer;
typedef bool (*srd_ring_poll_fn)(struct srd_ep *ep, struct srd_ring_peer *rp);
/* Writes tx's EAGER packet (len bytes) into dst framed for the peer's
 * ring: returns the bytes to write from dst, and where (raddr). */
typedef uint32_t (*srd_ring_frame_fn)(struct srd_ring_peer *rp,
				      struct srd_tx_entry *tx, uint8_t *dst,
				      uint32_t len, uint64_t *raddr);

/* Per endpoint in data mode (ep->ring; NULL in completion mode). */
struct srd_ring_ep {
	struct srd_dev_poll_choice choice;
	srd_ring_poll_fn poll;		/* our rings' flavour, chosen once */
	uint64_t features;		/* SRD_FEAT_DATA_RING [| _LINE128] */
	uint32_t budget;		/* slots per ring per progress call */
	uint32_t slots;			/* per ring we own: a power of two */
	uint32_t pkt_max;		/* packet bytes one of our slots holds */
	struct srd_ring_peer *active;	/* rings peers may write into */
	uint8_t *stage;			/* LINE128: a slot's record, gathered */
	struct srd_ring_stats stats;
};

/* Per peer, both directions. */
struct srd_ring_peer {
	struct srd_wr_hdr hdr;		/* credit writes (SRD_WR_RING) */
	struct srd_peer *peer;
	struct srd_ring_peer *next;	/* ring_ep->active */
	/* rx: our ring for its messages */
	uint8_t *base;			/* slots, then the control line */
	struct ibv_mr *mr;
	uint32_t slots;			/* of this ring (ep->ring->slots) */
	uint32_t head;			/* its messages consumed */
	uint32_t returned;		/* consumed count it was told */
	bool credit_inflight;
	bool active;
	/* tx: its ring for our messages */
	bool tx_ready;
	srd_ring_frame_fn frame;	/* its ring's flavour */
	uint32_t tx_max;		/* packet bytes its slots hold */
	uint32_t rslots;
	uint32_t rslot_size;
	uint32_t rkey;
	uint64_t raddr;
	uint32_t sent;			/* our messages written */
	uint32_t credit;		/* its consumed count, as last seen */
};

/* srd_ring.c: setup, handshake, credits. */
/* FI_SRD_RING_SLOTS, read at endpoint open: out of range or not a power of
 * two keeps the default, with a warning. */
uint32_t srd_ring_slots_setting(void);
/* SRD_PROTO_OFF unless the endpoint polls on data. */
int srd_ring_ep_init(struct srd_ep *ep);
void srd_ring_ep_fini(struct srd_ep *ep);
/* Our ring for peer, allocated on first use; fills the hello fields.
 * Nothing is announced (features 0) when the ring cannot be allocated. */
void srd_ring_hello_fill(struct srd_ep *ep, struct srd_peer *peer,
			 struct srd_pkt_hello *h);
/* The peer's HELLO/HELLO_ACK: its ring for us, if it announced one. */
void srd_ring_hello_recv(struct srd_ep *ep, struct srd_peer *peer,
			 const struct srd_pkt_hello *h);
void srd_ring_peer_fail(struct srd_peer *peer);
void srd_ring_peer_free(struct srd_ep *ep, struct srd_peer *peer);
void srd_ring_credit_seen(struct srd_ring_peer *rp, uint32_t consumed);
void srd_ring_credit_return(struct srd_ep *ep, struct srd_ring_peer *rp);
void srd_ring_wc(struct srd_ep *ep, struct srd_wr_hdr *hdr,
		 const struct srd_dev_wc *wc);
size_t srd_ring_bytes(uint32_t slots, uint32_t slot_size);

/* srd_proto_ring.c: the framings (chosen per peer at the handshake) and
 * the pollers (chosen per endpoint). */
uint32_t srd_ring_frame_seq(struct srd_ring_peer *rp, struct srd_tx_entry *tx,
			    uint8_t *dst, uint32_t len, uint64_t *raddr);
uint32_t srd_ring_frame_line(struct srd_ring_peer *rp, struct srd_tx_entry *tx,
			     uint8_t *dst, uint32_t len, uint64_t *raddr);
bool srd_ring_poll_seq(struct srd_ep *ep, struct srd_ring_peer *rp);
bool srd_ring_poll_line(struct srd_ep *ep, struct srd_ring_peer *rp);

/* Our ring's control line (credits the peer writes for our sends). */
static inline uint8_t *srd_ring_ctrl(const struct srd_ring_peer *rp)
{
	return rp->base + (size_t)rp->slots * SRD_RING_SLOT_SIZE;
}

static inline uint32_t srd_ring_pad8(uint32_t len)
{
	return (len + 7u) & ~7u;
}

/* Record bytes of a packet of len bytes. */
static inline uint32_t srd_ring_rec_len(uint32_t len)
{
	return srd_ring_pad8(len) + (uint32_t)sizeof(struct srd_ring_credit);
}

#endif /* SRD_RING_H */
