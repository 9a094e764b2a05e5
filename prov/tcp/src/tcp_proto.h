/* SPDX-License-Identifier: MIT */
/*
 * The tcp provider's wire format (man/fi_tcp.7 documents it for people).
 *
 * A connection carries frames. Every frame starts with a 16-byte base
 * header: version, op, flags, the header's own length in 8-byte words,
 * and the length of the payload that follows the header. The op decides
 * the fields after the base (fixed per op in version 1). All integers are
 * little-endian. Nothing read from the wire is used before tcp_frame.c
 * checked it against the limits of the receiving endpoint.
 *
 * A connection starts with HELLO (connector) and HELLO_ACK or REJECT
 * (acceptor); their payload is struct tcp_wire_hello. Only then may
 * either side send anything else.
 */
#ifndef TCP_PROTO_H
#define TCP_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/fi_errno.h>

/* A peer broke the protocol: its operations end with this error (the
 * log line says what was wrong). */
#define TCP_EPROTO FI_EIO

/* The wire versions this build speaks (negotiated in the handshake). */
#define TCP_WIRE_VERSION_MIN 1
#define TCP_WIRE_VERSION_MAX 1
#define TCP_WIRE_VERSION 1

/* First eight payload bytes of HELLO/HELLO_ACK: a connection from
 * anything but a weft tcp endpoint fails on its first frame. */
#define TCP_HELLO_MAGIC "WEFT-TCP"
#define TCP_HELLO_MAGIC_LEN 8

enum tcp_opcode {
	TCP_OP_HELLO = 1,	/* connector: who I am (payload: hello) */
	TCP_OP_HELLO_ACK,	/* acceptor: accepted, who I am (hello) */
	TCP_OP_REJECT,		/* acceptor: refused (payload: reject) */
	TCP_OP_MSG,		/* eager message: id, tag, data; payload */
	TCP_OP_RTS,		/* rendezvous offer: id, tag, data, size */
	TCP_OP_CTS,		/* rendezvous grant: id, xfer, size */
	TCP_OP_DATA,		/* rendezvous payload: xfer, offset */
	TCP_OP_ACK,		/* an op of id ended at the target: status */
	TCP_OP_WRITE,		/* RMA write: id, key, addr, data; payload */
	TCP_OP_READ,		/* RMA read request: id, key, addr, size */
	TCP_OP_READ_RESP,	/* id, status; payload (the data read) */
	TCP_OP_ATOMIC,		/* id, key, addr, data, op, dt, kind, count;
				 * payload: operands, then compare values */
	TCP_OP_ATOMIC_RESP,	/* id, status; payload: old values */
	TCP_OP_PING,		/* are you there (answered by PONG) */
	TCP_OP_PONG,
	TCP_OP_MAX
};

/* Frame flags (base header). */
#define TCP_F_TAGGED	0x0001u	/* MSG, RTS: tag is significant */
#define TCP_F_CQ_DATA	0x0002u	/* MSG, RTS, WRITE, ATOMIC: data is CQ data */
#define TCP_F_ACK_REQ	0x0004u	/* MSG: answer with ACK once delivered */
/* MSG, RTS (always with TAGGED): a message of the collective class
 * (util_coll.h), matched in its own queue by sender and tag; the tag is
 * the collective engine's, never the application's. An endpoint opened
 * without FI_COLLECTIVE refuses it (the connection fails). */
#define TCP_F_COLL	0x8000u

#define TCP_BASE_LEN	16u
/* The largest header of version 1 (ATOMIC). */
#define TCP_HDR_MAX	56u

/* Frame header as the code uses it (host order, every field any op has). */
struct tcp_hdr {
	uint8_t ver;
	uint8_t op;
	uint16_t flags;
	uint32_t hlen;		/* header bytes */
	uint64_t len;		/* payload bytes after the header */
	uint64_t id;		/* initiator's op id (echoed in replies) */
	uint64_t tag;		/* MSG, RTS */
	uint64_t data;		/* MSG, RTS, WRITE, ATOMIC: CQ data */
	uint64_t size;		/* RTS: message size; CTS: granted; READ */
	uint64_t xfer;		/* CTS, DATA: receiver's transfer id */
	uint64_t offset;	/* DATA */
	uint64_t key;		/* WRITE, READ, ATOMIC */
	uint64_t addr;		/* WRITE, READ, ATOMIC */
	uint32_t status;	/* ACK, READ_RESP, ATOMIC_RESP: 0 or FI_E* */
	uint32_t count;		/* ATOMIC: elements */
	uint8_t atomic_op;	/* ATOMIC: enum fi_op */
	uint8_t datatype;	/* ATOMIC: enum fi_datatype */
	uint8_t kind;		/* ATOMIC: enum util_atomic_kind */
};

/* A listener address in HELLO (24 bytes on the wire). */
#define TCP_WIRE_AF_INET  4
#define TCP_WIRE_AF_INET6 6
#define TCP_WIRE_ADDR_LEN 24u

/* Stripes per peer: the primary connection plus up to 7 more. */
#define TCP_STRIPE_MAX 8

/* HELLO / HELLO_ACK payload: 32 bytes, then naddr addresses. */
#define TCP_HELLO_FIXED_LEN 32u
#define TCP_HELLO_MAX_LEN (TCP_HELLO_FIXED_LEN + \
			   TCP_STRIPE_MAX * TCP_WIRE_ADDR_LEN)

/* REJECT payload: reason, 4 reserved bytes. */
#define TCP_REJECT_LEN 8u
enum tcp_reject_reason {
	TCP_REJECT_VERSION = 1,	/* no common wire version */
	TCP_REJECT_DUPLICATE,	/* simultaneous connect: the other one wins */
	TCP_REJECT_FAMILY,	/* address family differs from ours */
	TCP_REJECT_STRIPE,	/* stripe for a peer we have no primary with */
	TCP_REJECT_MAX
};

struct tcp_wire_addr {
	uint16_t family;	/* TCP_WIRE_AF_INET / _INET6 */
	uint16_t port;		/* host order */
	uint32_t scope_id;	/* IPv6 link-local scope */
	uint8_t ip[16];		/* IPv4: first 4 bytes */
};

struct tcp_hello {
	uint16_t ver_min, ver_max;
	uint16_t role;		/* 0 primary; k > 0: stripe k */
	uint16_t naddr;		/* listener addresses, the name first */
	uint32_t features;	/* none in version 1 */
	uint32_t eager_max;	/* largest MSG payload the sender accepts */
	uint64_t nonce;		/* the endpoint's incarnation */
	struct tcp_wire_addr addr[TCP_STRIPE_MAX];
};

/* What the receiver of a frame allows (its endpoint's limits). */
struct tcp_limits {
	uint64_t eager_max;	/* MSG payload */
	uint64_t max_msg;	/* RTS size, WRITE/READ length */
	uint64_t atomic_max;	/* ATOMIC operand bytes (compare: twice) */
	uint64_t data_max;	/* DATA payload per frame */
};

/* ---- tcp_frame.c ------------------------------------------------------- */

/* Header bytes of op in version 1 (0: unknown op). */
uint32_t tcp_frame_hlen(uint8_t op);

/* Encode h (op, flags, len and the op's fields) into buf (>= TCP_HDR_MAX
 * bytes); sets h->ver and h->hlen; returns the header length. */
uint32_t tcp_frame_encode(struct tcp_hdr *h, uint8_t *buf);

/* Decode the base header from buf (avail >= TCP_BASE_LEN): version, op,
 * flags and header length checked. 0 and *hlen, or -TCP_EPROTO with a
 * reason in *why. */
int tcp_frame_peek(const uint8_t *buf, size_t avail, uint32_t *hlen,
		   const char **why);

/* The next header of a stream (avail bytes at buf): its length once it
 * is whole and decoded and checked against lim, 0 while bytes are
 * missing, or -TCP_EPROTO with a reason in *why. */
int tcp_frame_take(const uint8_t *buf, size_t avail,
		   const struct tcp_limits *lim, struct tcp_hdr *h,
		   const char **why);

/* The same for a whole header (short input is an error). 0, or
 * -TCP_EPROTO with a reason in *why. */
int tcp_frame_decode(const uint8_t *buf, size_t avail,
		     const struct tcp_limits *lim, struct tcp_hdr *h,
		     const char **why);

/* HELLO payload: encode (returns bytes), and decode + check (0, or
 * -TCP_EPROTO with *why). */
size_t tcp_hello_encode(const struct tcp_hello *hello, uint8_t *buf);
int tcp_hello_decode(const uint8_t *buf, size_t len, struct tcp_hello *hello,
		     const char **why);
/* The highest version both sides speak, 0 if none. */
uint16_t tcp_hello_version(const struct tcp_hello *hello);

size_t tcp_reject_encode(uint32_t reason, uint8_t *buf);
int tcp_reject_decode(const uint8_t *buf, size_t len, uint32_t *reason,
		      const char **why);

#endif /* TCP_PROTO_H */
