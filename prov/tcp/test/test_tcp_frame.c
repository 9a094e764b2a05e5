/* SPDX-License-Identifier: MIT */
/*
 * The tcp provider's wire format: every op's header round trip, every
 * check of tcp_frame_decode and tcp_hello_decode refusing what it must,
 * and random bytes that never crash the parsers (decoded headers
 * re-encode to the very bytes they came from).
 */
#include "weft/compat.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/tcp_proto.h"

static const struct tcp_limits lim = {
	.eager_max = 65536, .max_msg = (uint64_t)1 << 40,
	.atomic_max = 128, .data_max = (uint64_t)1 << 40,
};

static struct tcp_hdr t_hdr(uint8_t op)
{
	struct tcp_hdr h;

	memset(&h, 0, sizeof(h));
	h.op = op;
	return h;
}

/* Encode h, decode it back and compare the fields op carries. */
static void t_roundtrip(struct tcp_hdr h)
{
	uint8_t buf[TCP_HDR_MAX + 8];
	struct tcp_hdr d;
	const char *why = NULL;
	uint32_t hlen;

	memset(&d, 0xa5, sizeof(d));
	hlen = tcp_frame_encode(&h, buf);
	assert_int_equal(hlen, tcp_frame_hlen(h.op));
	assert_int_equal(hlen % 8, 0);
	if (tcp_frame_decode(buf, hlen, &lim, &d, &why))
		fail_msg("op %u: %s", h.op, why);
	assert_int_equal(d.op, h.op);
	assert_int_equal(d.flags, h.flags);
	assert_int_equal(d.len, h.len);
	assert_int_equal(d.hlen, hlen);
	switch (h.op) {
	case TCP_OP_RTS:
		assert_int_equal(d.size, h.size);
		/* fall through */
	case TCP_OP_MSG:
		assert_int_equal(d.id, h.id);
		assert_int_equal(d.tag, h.tag);
		assert_int_equal(d.data, h.data);
		break;
	case TCP_OP_CTS:
		assert_int_equal(d.id, h.id);
		assert_int_equal(d.xfer, h.xfer);
		assert_int_equal(d.size, h.size);
		break;
	case TCP_OP_DATA:
		assert_int_equal(d.xfer, h.xfer);
		assert_int_equal(d.offset, h.offset);
		break;
	case TCP_OP_ATOMIC:
		assert_int_equal(d.atomic_op, h.atomic_op);
		assert_int_equal(d.datatype, h.datatype);
		assert_int_equal(d.kind, h.kind);
		assert_int_equal(d.count, h.count);
		/* fall through */
	case TCP_OP_WRITE:
		assert_int_equal(d.data, h.data);
		/* fall through */
	case TCP_OP_READ:
		assert_int_equal(d.id, h.id);
		assert_int_equal(d.key, h.key);
		assert_int_equal(d.addr, h.addr);
		if (h.op == TCP_OP_READ)
			assert_int_equal(d.size, h.size);
		break;
	case TCP_OP_ACK:
	case TCP_OP_READ_RESP:
	case TCP_OP_ATOMIC_RESP:
		assert_int_equal(d.id, h.id);
		assert_int_equal(d.status, h.status);
		break;
	default:
		break;
	}
	/* Fewer bytes than the header: refused, never read past them. */
	assert_int_equal(tcp_frame_decode(buf, hlen - 1, &lim, &d, &why),
			 -TCP_EPROTO);
}

static void test_roundtrip_all_ops(void **state)
{
	struct tcp_hdr h;

	(void)state;
	h = t_hdr(TCP_OP_MSG);
	h.flags = TCP_F_TAGGED | TCP_F_CQ_DATA | TCP_F_ACK_REQ;
	h.len = 65536;
	h.id = 0x1122334455667788ull;
	h.tag = 0xfedcba9876543210ull;
	h.data = 42;
	t_roundtrip(h);
	h.flags = TCP_F_TAGGED | TCP_F_COLL;	/* the collective class */
	t_roundtrip(h);
	h = t_hdr(TCP_OP_RTS);
	h.flags = TCP_F_TAGGED;
	h.size = (uint64_t)1 << 40;
	h.id = 7;
	h.tag = 9;
	t_roundtrip(h);
	h.flags = TCP_F_TAGGED | TCP_F_COLL;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_CTS);
	h.id = 3;
	h.xfer = 0xabcdef0123ull;
	h.size = 1 << 20;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_DATA);
	h.xfer = 5;
	h.offset = 4096;
	h.len = 1 << 20;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_ACK);
	h.id = 11;
	h.status = 5;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_WRITE);
	h.flags = TCP_F_CQ_DATA;
	h.id = 1;
	h.key = 2;
	h.addr = 3;
	h.data = 4;
	h.len = 100;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_READ);
	h.id = 1;
	h.key = 2;
	h.addr = 3;
	h.size = 4;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_READ_RESP);
	h.id = 1;
	h.len = 10;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_ATOMIC);
	h.id = 1;
	h.key = 2;
	h.addr = 3;
	h.data = 4;
	h.atomic_op = 5;
	h.datatype = 6;
	h.kind = 2;
	h.count = 16;
	h.len = 256;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_ATOMIC_RESP);
	h.id = 9;
	h.len = 128;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_PING);
	t_roundtrip(h);
	h = t_hdr(TCP_OP_PONG);
	t_roundtrip(h);
	h = t_hdr(TCP_OP_HELLO);
	h.len = TCP_HELLO_FIXED_LEN + TCP_WIRE_ADDR_LEN;
	t_roundtrip(h);
	h = t_hdr(TCP_OP_REJECT);
	h.len = TCP_REJECT_LEN;
	t_roundtrip(h);
}

/* A header that must be refused after byte i is set to v. */
static void t_refuse_byte(struct tcp_hdr h, size_t i, uint8_t v)
{
	uint8_t buf[TCP_HDR_MAX];
	struct tcp_hdr d;
	const char *why = NULL;
	uint32_t hlen = tcp_frame_encode(&h, buf);

	buf[i] = v;
	assert_int_equal(tcp_frame_decode(buf, hlen, &lim, &d, &why),
			 -TCP_EPROTO);
	assert_non_null(why);
}

static void t_refuse(struct tcp_hdr h)
{
	uint8_t buf[TCP_HDR_MAX];
	struct tcp_hdr d;
	const char *why = NULL;
	uint32_t hlen = tcp_frame_encode(&h, buf);

	assert_int_equal(tcp_frame_decode(buf, hlen, &lim, &d, &why),
			 -TCP_EPROTO);
	assert_non_null(why);
}

static void test_base_checks(void **state)
{
	struct tcp_hdr h = t_hdr(TCP_OP_MSG);

	(void)state;
	t_refuse_byte(h, 0, 0);			/* version 0 */
	t_refuse_byte(h, 0, 2);			/* a version we do not speak */
	t_refuse_byte(h, 1, 0);			/* op 0 */
	t_refuse_byte(h, 1, TCP_OP_MAX);	/* unknown op */
	t_refuse_byte(h, 1, 0xff);
	t_refuse_byte(h, 1, TCP_OP_DATA);	/* op whose length differs */
	t_refuse_byte(h, 4, 6);			/* header length */
	t_refuse_byte(h, 5, 1);			/* reserved bytes */
	t_refuse_byte(h, 6, 1);
	t_refuse_byte(h, 7, 0x80);
	h.flags = 0x4000;			/* no such flag */
	t_refuse(h);
	h = t_hdr(TCP_OP_WRITE);
	h.flags = TCP_F_COLL;			/* messages only */
	t_refuse(h);
	h = t_hdr(TCP_OP_CTS);
	h.flags = TCP_F_TAGGED;			/* not a CTS flag */
	t_refuse(h);
	h = t_hdr(TCP_OP_DATA);
	h.len = 1;
	h.flags = TCP_F_CQ_DATA;
	t_refuse(h);
}

static void test_length_checks(void **state)
{
	struct tcp_hdr h;

	(void)state;
	h = t_hdr(TCP_OP_MSG);
	h.len = lim.eager_max + 1;
	t_refuse(h);
	h = t_hdr(TCP_OP_RTS);
	h.len = 1;				/* an offer has no payload */
	t_refuse(h);
	h = t_hdr(TCP_OP_RTS);
	h.size = lim.max_msg + 1;
	t_refuse(h);
	h = t_hdr(TCP_OP_CTS);
	h.size = lim.max_msg + 1;
	t_refuse(h);
	h = t_hdr(TCP_OP_DATA);
	h.len = 0;				/* data of nothing */
	t_refuse(h);
	h = t_hdr(TCP_OP_DATA);
	h.len = 4096;
	h.offset = UINT64_MAX - 100;		/* offset + len wraps */
	t_refuse(h);
	h.offset = lim.max_msg - 4095;		/* ends past max_msg */
	t_refuse(h);
	h = t_hdr(TCP_OP_WRITE);
	h.len = lim.max_msg + 1;
	t_refuse(h);
	h = t_hdr(TCP_OP_READ);
	h.len = 8;
	t_refuse(h);
	h = t_hdr(TCP_OP_ATOMIC);
	h.count = 0;
	t_refuse(h);
	h.count = 1;
	h.kind = 3;
	t_refuse(h);
	h.kind = 0;
	h.len = 2 * lim.atomic_max + 1;
	t_refuse(h);
	h = t_hdr(TCP_OP_ATOMIC_RESP);
	h.len = lim.atomic_max + 1;
	t_refuse(h);
	h = t_hdr(TCP_OP_ACK);
	h.len = 1;
	t_refuse(h);
	h = t_hdr(TCP_OP_PING);
	h.len = 1;
	t_refuse(h);
	h = t_hdr(TCP_OP_HELLO);
	h.len = TCP_HELLO_FIXED_LEN;		/* no address */
	t_refuse(h);
	h.len = TCP_HELLO_MAX_LEN + 1;
	t_refuse(h);
	h = t_hdr(TCP_OP_REJECT);
	h.len = 4;
	t_refuse(h);
	h = t_hdr(TCP_OP_ACK);
	t_refuse_byte(h, 28, 1);		/* reserved after status */
	h = t_hdr(TCP_OP_ATOMIC);
	h.count = 1;
	t_refuse_byte(h, 51, 1);
}

static void t_hello(struct tcp_hello *h, uint16_t naddr)
{
	uint16_t i;

	memset(h, 0, sizeof(*h));
	h->ver_min = 1;
	h->ver_max = 3;
	h->role = 2;
	h->naddr = naddr;
	h->eager_max = 65536;
	h->nonce = 0x0123456789abcdefull;
	for (i = 0; i < naddr; i++) {
		h->addr[i].family = TCP_WIRE_AF_INET6;
		h->addr[i].port = (uint16_t)(1000 + i);
		h->addr[i].scope_id = i;
		h->addr[i].ip[0] = 0xfd;
		h->addr[i].ip[15] = (uint8_t)i;
	}
}

static void test_hello(void **state)
{
	uint8_t buf[TCP_HELLO_MAX_LEN];
	struct tcp_hello h, d;
	const char *why = NULL;
	size_t len;

	(void)state;
	t_hello(&h, TCP_STRIPE_MAX);
	len = tcp_hello_encode(&h, buf);
	assert_int_equal(len, TCP_HELLO_MAX_LEN);
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), 0);
	assert_int_equal(d.nonce, h.nonce);
	assert_int_equal(d.role, 2);
	assert_int_equal(d.naddr, TCP_STRIPE_MAX);
	assert_memory_equal(d.addr, h.addr, sizeof(h.addr));
	assert_int_equal(tcp_hello_version(&d), TCP_WIRE_VERSION_MAX);

	/* Each check refuses. */
	assert_int_equal(tcp_hello_decode(buf, len - 1, &d, &why), -TCP_EPROTO);
	buf[0] = 'X';
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
	t_hello(&h, 1);
	h.ver_min = 4;
	h.ver_max = 2;
	len = tcp_hello_encode(&h, buf);
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
	t_hello(&h, 1);
	h.role = TCP_STRIPE_MAX;
	len = tcp_hello_encode(&h, buf);
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
	t_hello(&h, 2);
	h.addr[1].family = TCP_WIRE_AF_INET;	/* mixed families */
	len = tcp_hello_encode(&h, buf);
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
	t_hello(&h, 1);
	h.addr[0].family = 5;
	len = tcp_hello_encode(&h, buf);
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
	t_hello(&h, 1);
	h.addr[0].port = 0;
	len = tcp_hello_encode(&h, buf);
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
	t_hello(&h, 1);
	h.addr[0].family = TCP_WIRE_AF_INET;	/* IPv6 bytes in IPv4 */
	h.addr[0].ip[9] = 1;
	len = tcp_hello_encode(&h, buf);
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
	t_hello(&h, 1);
	len = tcp_hello_encode(&h, buf);
	buf[14] = 9;				/* naddr above the max */
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
	buf[14] = 0;				/* no address */
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
	buf[14] = 2;				/* more than the length holds */
	assert_int_equal(tcp_hello_decode(buf, len, &d, &why), -TCP_EPROTO);
}

static void test_hello_version(void **state)
{
	struct tcp_hello h;

	(void)state;
	t_hello(&h, 1);
	h.ver_min = 1;
	h.ver_max = 1;
	assert_int_equal(tcp_hello_version(&h), 1);
	h.ver_min = 2;				/* only newer than ours */
	h.ver_max = 9;
	assert_int_equal(tcp_hello_version(&h), 0);
	h.ver_min = 0;
	h.ver_max = 0;
	assert_int_equal(tcp_hello_version(&h), 0);
}

static void test_reject(void **state)
{
	uint8_t buf[TCP_REJECT_LEN];
	const char *why = NULL;
	uint32_t reason;

	(void)state;
	assert_int_equal(tcp_reject_encode(TCP_REJECT_DUPLICATE, buf),
			 TCP_REJECT_LEN);
	assert_int_equal(tcp_reject_decode(buf, TCP_REJECT_LEN, &reason, &why),
			 0);
	assert_int_equal(reason, TCP_REJECT_DUPLICATE);
	assert_int_equal(tcp_reject_decode(buf, 4, &reason, &why), -TCP_EPROTO);
	tcp_reject_encode(0, buf);
	assert_int_equal(tcp_reject_decode(buf, TCP_REJECT_LEN, &reason, &why),
			 -TCP_EPROTO);
	tcp_reject_encode(TCP_REJECT_MAX, buf);
	assert_int_equal(tcp_reject_decode(buf, TCP_REJECT_LEN, &reason, &why),
			 -TCP_EPROTO);
}

static uint64_t t_rand_state = 0x9e3779b97f4a7c15ull;

static uint64_t t_rand(void)
{
	t_rand_state ^= t_rand_state << 13;
	t_rand_state ^= t_rand_state >> 7;
	t_rand_state ^= t_rand_state << 17;
	return t_rand_state;
}

/* Random headers: mostly valid base bytes, random rest. Whatever decodes
 * re-encodes to the same bytes (one encoding per header, so nothing
 * hides in bytes the decoder skips). */
static void test_random_headers(void **state)
{
	uint8_t buf[TCP_HDR_MAX], out[TCP_HDR_MAX];
	struct tcp_hdr d;
	const char *why;
	size_t i, j, ok = 0;

	(void)state;
	for (i = 0; i < 200000; i++) {
		for (j = 0; j < sizeof(buf); j += 8) {
			uint64_t r = t_rand();

			memcpy(buf + j, &r, 8);
		}
		if (i & 1) {
			buf[0] = TCP_WIRE_VERSION;
			buf[1] = (uint8_t)(1 + t_rand() % (TCP_OP_MAX - 1));
			buf[4] = (uint8_t)(tcp_frame_hlen(buf[1]) / 8);
			buf[5] = buf[6] = buf[7] = 0;
			buf[2] &= 0x7;
			buf[3] = 0;
			if (t_rand() & 1)
				memset(buf + 9, 0, 7);	/* small lengths */
		}
		if (tcp_frame_decode(buf, t_rand() % (sizeof(buf) + 1), &lim,
				     &d, &why))
			continue;
		ok++;
		memset(out, 0, sizeof(out));
		assert_int_equal(tcp_frame_encode(&d, out), d.hlen);
		assert_memory_equal(out, buf, d.hlen);
	}
	assert_true(ok > 1000);		/* the valid half was exercised */
}

static void test_random_hello(void **state)
{
	uint8_t buf[TCP_HELLO_MAX_LEN + 8];
	struct tcp_hello h;
	const char *why;
	size_t i, j, len;

	(void)state;
	for (i = 0; i < 100000; i++) {
		for (j = 0; j < sizeof(buf); j += 8) {
			uint64_t r = t_rand();

			memcpy(buf + j, &r, 8);
		}
		if (i & 1) {
			memcpy(buf, TCP_HELLO_MAGIC, TCP_HELLO_MAGIC_LEN);
			buf[14] = (uint8_t)(t_rand() % 10);
			buf[15] = 0;
		}
		len = t_rand() % sizeof(buf);
		if (tcp_hello_decode(buf, len, &h, &why))
			assert_non_null(why);
		else
			assert_true(h.naddr >= 1 && h.naddr <= TCP_STRIPE_MAX);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_all_ops),
		cmocka_unit_test(test_base_checks),
		cmocka_unit_test(test_length_checks),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_hello_version),
		cmocka_unit_test(test_reject),
		cmocka_unit_test(test_random_headers),
		cmocka_unit_test(test_random_hello),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
