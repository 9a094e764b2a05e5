/* SPDX-License-Identifier: MIT */
/*
 * Frame headers and handshake payloads: encoding, and the checks every
 * byte from the wire passes before the provider uses it. No state, no
 * logging (callers log the reason with the peer's name): the fuzz
 * harness and the unit tests drive these functions directly.
 *
 * Base header (16 bytes): ver u8, op u8, flags u16, hlen u8 (header
 * length in 8-byte words), 3 reserved zero bytes, len u64 (payload).
 * Op fields follow at offset 16; their layout is in tcp_frame_hlen's
 * table and the encode/decode switches below, and in fi_tcp(7).
 */
#include "weft/compat.h"

#include <endian.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "tcp_proto.h"

static inline void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static inline uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static const uint8_t tcp_hlen_table[TCP_OP_MAX] = {
	[TCP_OP_HELLO] = 16, [TCP_OP_HELLO_ACK] = 16, [TCP_OP_REJECT] = 16,
	[TCP_OP_MSG] = 40, [TCP_OP_RTS] = 48, [TCP_OP_CTS] = 40,
	[TCP_OP_DATA] = 32, [TCP_OP_ACK] = 32, [TCP_OP_WRITE] = 48,
	[TCP_OP_READ] = 48, [TCP_OP_READ_RESP] = 32, [TCP_OP_ATOMIC] = 56,
	[TCP_OP_ATOMIC_RESP] = 32, [TCP_OP_PING] = 16, [TCP_OP_PONG] = 16,
};

/* Flags each op may carry; anything else is a protocol error. */
static const uint16_t tcp_flags_table[TCP_OP_MAX] = {
	[TCP_OP_MSG] = TCP_F_TAGGED | TCP_F_CQ_DATA | TCP_F_ACK_REQ |
		       TCP_F_COLL,
	[TCP_OP_RTS] = TCP_F_TAGGED | TCP_F_CQ_DATA | TCP_F_COLL,
	[TCP_OP_WRITE] = TCP_F_CQ_DATA,
	[TCP_OP_ATOMIC] = TCP_F_CQ_DATA,
};

uint32_t tcp_frame_hlen(uint8_t op)
{
	return op < TCP_OP_MAX ? tcp_hlen_table[op] : 0;
}

uint32_t tcp_frame_encode(struct tcp_hdr *h, uint8_t *buf)
{
	uint32_t hlen = tcp_frame_hlen(h->op);

	h->ver = TCP_WIRE_VERSION;
	h->hlen = hlen;
	buf[0] = h->ver;
	buf[1] = h->op;
	put16(buf + 2, h->flags);
	put32(buf + 4, hlen / 8);	/* hlen byte, then 3 zero bytes */
	put64(buf + 8, h->len);
	switch (h->op) {
	case TCP_OP_RTS:
		put64(buf + 40, h->size);
		/* fall through */
	case TCP_OP_MSG:
		put64(buf + 16, h->id);
		put64(buf + 24, h->tag);
		put64(buf + 32, h->data);
		break;
	case TCP_OP_CTS:
		put64(buf + 16, h->id);
		put64(buf + 24, h->xfer);
		put64(buf + 32, h->size);
		break;
	case TCP_OP_DATA:
		put64(buf + 16, h->xfer);
		put64(buf + 24, h->offset);
		break;
	case TCP_OP_ACK:
	case TCP_OP_READ_RESP:
	case TCP_OP_ATOMIC_RESP:
		put64(buf + 16, h->id);
		put32(buf + 24, h->status);
		put32(buf + 28, 0);
		break;
	case TCP_OP_ATOMIC:
		buf[48] = h->atomic_op;
		buf[49] = h->datatype;
		buf[50] = h->kind;
		buf[51] = 0;
		put32(buf + 52, h->count);
		/* fall through */
	case TCP_OP_WRITE:
	case TCP_OP_READ:
		put64(buf + 16, h->id);
		put64(buf + 24, h->key);
		put64(buf + 32, h->addr);
		put64(buf + 40, h->op == TCP_OP_READ ? h->size : h->data);
		break;
	default:
		break;
	}
	return hlen;
}

int tcp_frame_peek(const uint8_t *buf, size_t avail, uint32_t *hlen,
		   const char **why)
{
	uint8_t op = buf[1];

	(void)avail;
	if (buf[0] != TCP_WIRE_VERSION) {
		*why = "unknown wire version";
		return -TCP_EPROTO;
	}
	if (op == 0 || op >= TCP_OP_MAX) {
		*why = "unknown op";
		return -TCP_EPROTO;
	}
	if ((uint32_t)buf[4] * 8 != tcp_hlen_table[op] || buf[5] || buf[6] ||
	    buf[7]) {
		*why = "header length does not fit the op";
		return -TCP_EPROTO;
	}
	if (get16(buf + 2) & ~tcp_flags_table[op]) {
		*why = "flags not allowed for the op";
		return -TCP_EPROTO;
	}
	*hlen = tcp_hlen_table[op];
	return 0;
}

/* len (payload) and the sizes in h against what the receiver allows. */
static const char *tcp_frame_check(const struct tcp_hdr *h,
				   const struct tcp_limits *lim)
{
	switch (h->op) {
	case TCP_OP_HELLO:
	case TCP_OP_HELLO_ACK:
		if (h->len < TCP_HELLO_FIXED_LEN + TCP_WIRE_ADDR_LEN ||
		    h->len > TCP_HELLO_MAX_LEN)
			return "handshake payload of a bad length";
		return NULL;
	case TCP_OP_REJECT:
		return h->len == TCP_REJECT_LEN ? NULL :
		       "reject payload of a bad length";
	case TCP_OP_MSG:
		return h->len <= lim->eager_max ? NULL :
		       "eager message longer than allowed";
	case TCP_OP_RTS:
		return h->len == 0 && h->size <= lim->max_msg ? NULL :
		       "rendezvous offer with payload or too large";
	case TCP_OP_CTS:
		return h->len == 0 && h->size <= lim->max_msg ? NULL :
		       "rendezvous grant with payload or too large";
	case TCP_OP_DATA:
		return h->len && h->len <= lim->data_max &&
		       h->offset <= lim->max_msg &&
		       h->len <= lim->max_msg - h->offset ? NULL :
		       "rendezvous data out of range";
	case TCP_OP_WRITE:
	case TCP_OP_READ_RESP:
		return h->len <= lim->max_msg ? NULL : "RMA payload too large";
	case TCP_OP_READ:
		return h->len == 0 && h->size <= lim->max_msg ? NULL :
		       "RMA read request with payload or too large";
	case TCP_OP_ATOMIC:
		return h->count && h->len <= 2 * lim->atomic_max &&
		       h->kind <= 2 ? NULL : "atomic request out of range";
	case TCP_OP_ATOMIC_RESP:
		return h->len <= lim->atomic_max ? NULL :
		       "atomic response too large";
	default:	/* ACK, PING, PONG */
		return h->len == 0 ? NULL : "control frame with payload";
	}
}

static const char *tcp_frame_fields(const uint8_t *buf, struct tcp_hdr *h)
{
	switch (h->op) {
	case TCP_OP_RTS:
		h->size = get64(buf + 40);
		/* fall through */
	case TCP_OP_MSG:
		h->id = get64(buf + 16);
		h->tag = get64(buf + 24);
		h->data = get64(buf + 32);
		break;
	case TCP_OP_CTS:
		h->id = get64(buf + 16);
		h->xfer = get64(buf + 24);
		h->size = get64(buf + 32);
		break;
	case TCP_OP_DATA:
		h->xfer = get64(buf + 16);
		h->offset = get64(buf + 24);
		break;
	case TCP_OP_ACK:
	case TCP_OP_READ_RESP:
	case TCP_OP_ATOMIC_RESP:
		h->id = get64(buf + 16);
		h->status = get32(buf + 24);
		if (get32(buf + 28))
			return "reserved bytes set";
		break;
	case TCP_OP_ATOMIC:
		h->atomic_op = buf[48];
		h->datatype = buf[49];
		h->kind = buf[50];
		h->count = get32(buf + 52);
		if (buf[51])
			return "reserved byte set";
		/* fall through */
	case TCP_OP_WRITE:
	case TCP_OP_READ:
		h->id = get64(buf + 16);
		h->key = get64(buf + 24);
		h->addr = get64(buf + 32);
		if (h->op == TCP_OP_READ)
			h->size = get64(buf + 40);
		else
			h->data = get64(buf + 40);
		break;
	default:
		break;
	}
	return NULL;
}

int tcp_frame_take(const uint8_t *buf, size_t avail,
		   const struct tcp_limits *lim, struct tcp_hdr *h,
		   const char **why)
{
	uint32_t hlen;

	if (avail < TCP_BASE_LEN)
		return 0;
	if (tcp_frame_peek(buf, avail, &hlen, why))
		return -TCP_EPROTO;
	if (avail < hlen)
		return 0;
	h->ver = buf[0];
	h->op = buf[1];
	h->flags = get16(buf + 2);
	h->hlen = hlen;
	h->len = get64(buf + 8);
	*why = tcp_frame_fields(buf, h);
	if (!*why)
		*why = tcp_frame_check(h, lim);
	return *why ? -TCP_EPROTO : (int)hlen;
}

int tcp_frame_decode(const uint8_t *buf, size_t avail,
		     const struct tcp_limits *lim, struct tcp_hdr *h,
		     const char **why)
{
	int ret = tcp_frame_take(buf, avail, lim, h, why);

	if (!ret)
		*why = "short header";
	return ret > 0 ? 0 : -TCP_EPROTO;
}

/* ---- handshake payloads -------------------------------------------------- */

size_t tcp_hello_encode(const struct tcp_hello *hello, uint8_t *buf)
{
	const struct tcp_wire_addr *a;
	uint8_t *p;
	uint16_t i;

	memcpy(buf, TCP_HELLO_MAGIC, TCP_HELLO_MAGIC_LEN);
	put16(buf + 8, hello->ver_min);
	put16(buf + 10, hello->ver_max);
	put16(buf + 12, hello->role);
	put16(buf + 14, hello->naddr);
	put32(buf + 16, hello->features);
	put32(buf + 20, hello->eager_max);
	put64(buf + 24, hello->nonce);
	for (i = 0; i < hello->naddr; i++) {
		a = &hello->addr[i];
		p = buf + TCP_HELLO_FIXED_LEN + (size_t)i * TCP_WIRE_ADDR_LEN;
		put16(p, a->family);
		put16(p + 2, a->port);
		put32(p + 4, a->scope_id);
		memcpy(p + 8, a->ip, sizeof(a->ip));
	}
	return TCP_HELLO_FIXED_LEN + (size_t)hello->naddr * TCP_WIRE_ADDR_LEN;
}

static const char *tcp_wire_addr_decode(const uint8_t *p,
					struct tcp_wire_addr *a)
{
	static const uint8_t zero[12];

	a->family = get16(p);
	a->port = get16(p + 2);
	a->scope_id = get32(p + 4);
	memcpy(a->ip, p + 8, sizeof(a->ip));
	if (a->family != TCP_WIRE_AF_INET && a->family != TCP_WIRE_AF_INET6)
		return "address of an unknown family";
	if (a->port == 0)
		return "address without a port";
	if (a->family == TCP_WIRE_AF_INET &&
	    (a->scope_id || memcmp(a->ip + 4, zero, sizeof(zero))))
		return "IPv4 address with IPv6 bytes set";
	return NULL;
}

int tcp_hello_decode(const uint8_t *buf, size_t len, struct tcp_hello *hello,
		     const char **why)
{
	uint16_t i;

	*why = NULL;
	if (len < TCP_HELLO_FIXED_LEN ||
	    memcmp(buf, TCP_HELLO_MAGIC, TCP_HELLO_MAGIC_LEN)) {
		*why = "not a weft tcp handshake";
		return -TCP_EPROTO;
	}
	hello->ver_min = get16(buf + 8);
	hello->ver_max = get16(buf + 10);
	hello->role = get16(buf + 12);
	hello->naddr = get16(buf + 14);
	hello->features = get32(buf + 16);
	hello->eager_max = get32(buf + 20);
	hello->nonce = get64(buf + 24);
	if (hello->ver_min > hello->ver_max)
		*why = "version range upside down";
	else if (hello->naddr == 0 || hello->naddr > TCP_STRIPE_MAX)
		*why = "address count out of range";
	else if (len != TCP_HELLO_FIXED_LEN +
			(size_t)hello->naddr * TCP_WIRE_ADDR_LEN)
		*why = "length does not match the address count";
	else if (hello->role >= TCP_STRIPE_MAX)
		*why = "stripe index out of range";
	for (i = 0; !*why && i < hello->naddr; i++) {
		*why = tcp_wire_addr_decode(buf + TCP_HELLO_FIXED_LEN +
					    (size_t)i * TCP_WIRE_ADDR_LEN,
					    &hello->addr[i]);
		if (!*why && hello->addr[i].family != hello->addr[0].family)
			*why = "addresses of mixed families";
	}
	return *why ? -TCP_EPROTO : 0;
}

uint16_t tcp_hello_version(const struct tcp_hello *hello)
{
	uint16_t hi = hello->ver_max < TCP_WIRE_VERSION_MAX ?
		      hello->ver_max : TCP_WIRE_VERSION_MAX;
	uint16_t lo = hello->ver_min > TCP_WIRE_VERSION_MIN ?
		      hello->ver_min : TCP_WIRE_VERSION_MIN;

	return hi >= lo ? hi : 0;
}

size_t tcp_reject_encode(uint32_t reason, uint8_t *buf)
{
	put32(buf, reason);
	put32(buf + 4, 0);
	return TCP_REJECT_LEN;
}

int tcp_reject_decode(const uint8_t *buf, size_t len, uint32_t *reason,
		      const char **why)
{
	if (len != TCP_REJECT_LEN) {
		*why = "reject of a bad length";
		return -TCP_EPROTO;
	}
	*reason = get32(buf);
	if (*reason == 0 || *reason >= TCP_REJECT_MAX) {
		*why = "unknown reject reason";
		return -TCP_EPROTO;
	}
	return 0;
}
