/* SPDX-License-Identifier: MIT */
/*
 * srd_pkt_validate: a valid packet of every type passes; each field broken
 * on its own fails with -FI_EINVAL and a log line naming it; every
 * truncation and a trailing byte fail; random mutations never crash and
 * whatever passes still satisfies the invariants the receivers rely on.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/dev/srd_dev.h"
#include "../src/rdm/srd_rdm.h"
#include "../src/rdm/srd_pkt.h"
#include "weft/core.h"
#include "weft/util_atomic.h"
#include "../../../core/test/capture.h"

#define MAXMSG ((uint64_t)1 << 32)
#define BUFSZ 512

static void base_fill(void *buf, unsigned int type)
{
	struct srd_pkt_base *b = buf;

	b->version = SRD_PROTO_VERSION;
	b->type = (uint8_t)type;
	b->flags = 0;
	b->peer_id = 7;
}

static size_t build_hello(uint8_t *buf, unsigned int type)
{
	struct srd_pkt_hello *h = (void *)buf;

	base_fill(buf, type);
	h->base.peer_id = type == SRD_PKT_HELLO ? SRD_PEER_ID_NONE : 3;
	h->name[0] = SRD_EP_NAME_VERSION;
	h->sender_id = 5;
	h->features = SRD_FEAT_RDMA_READ | SRD_FEAT_DATA_RING;
	h->ring_addr = 0x10000;
	h->ring_key = 0x55;
	h->ring_slots = 64;
	h->ring_slot_size = 256;
	return sizeof(*h);
}

static size_t build_msg(uint8_t *buf, unsigned int type)
{
	struct srd_pkt_msg *m = (void *)buf;
	struct srd_pkt_iov *iov = (void *)(m + 1);

	base_fill(buf, type);
	m->base.flags = SRD_PKT_F_TAGGED | SRD_PKT_F_CQ_DATA;
	m->msg_id = 42;
	m->tx_id = 9;
	m->tag = 0xabcdef;
	m->cq_data = 0x1234;
	switch (type) {
	case SRD_PKT_EAGER:
		m->seg_len = 100;
		m->total_len = 100;
		break;
	case SRD_PKT_MEDIUM:
		m->seg_len = 100;
		m->offset = 200;
		m->total_len = 300;
		break;
	case SRD_PKT_LONG_RTS:
		m->seg_len = 2 * sizeof(*iov);
		iov[0] = (struct srd_pkt_iov){ .addr = 0x1000, .len = 5000,
					       .key = 1 };
		iov[1] = (struct srd_pkt_iov){ .addr = 0x9000, .len = 3000,
					       .key = 2 };
		m->total_len = 8000;
		break;
	default: /* CTS_RTS */
		m->seg_len = 64;
		m->total_len = 100000;
		break;
	}
	memset(buf + sizeof(*m), 0xa5, type == SRD_PKT_LONG_RTS ? 0 : m->seg_len);
	return sizeof(*m) + m->seg_len;
}

static size_t build_ctrl(uint8_t *buf, unsigned int type)
{
	struct srd_pkt_ctrl *c = (void *)buf;

	base_fill(buf, type);
	c->tx_id = 1;
	c->rx_id = 2;
	c->offset = type == SRD_PKT_CTS ? 65536 : 0;
	c->len = 65536;
	return sizeof(*c);
}

static size_t build_data(uint8_t *buf)
{
	struct srd_pkt_data *d = (void *)buf;

	base_fill(buf, SRD_PKT_DATA);
	d->rx_id = 2;
	d->seg_len = 128;
	d->offset = 4096;
	return sizeof(*d) + d->seg_len;
}

static size_t build_rma(uint8_t *buf, unsigned int type)
{
	struct srd_pkt_rma *r = (void *)buf;

	base_fill(buf, type);
	r->tx_id = 11;
	r->addr = 0x7f0000001000;
	r->key = 17;
	if (type == SRD_PKT_WRITE) {
		r->base.flags = SRD_PKT_F_ACK_REQ | SRD_PKT_F_LAST |
				SRD_PKT_F_CQ_DATA;
		r->cq_data = 77;
		r->seg_len = 200;
		r->len = 4000;
		r->offset = 3800;
	} else {
		r->len = 1 << 20;
	}
	return sizeof(*r) + r->seg_len;
}

static size_t build_resp(uint8_t *buf, unsigned int type)
{
	struct srd_pkt_resp *r = (void *)buf;

	base_fill(buf, type);
	r->tx_id = 11;
	if (type == SRD_PKT_READ_RESP) {
		r->offset = 8192;
		r->seg_len = 256;
	} else if (type == SRD_PKT_ATOMIC_RESP) {
		r->seg_len = 16;
	}
	return sizeof(*r) + r->seg_len;
}

static size_t build_atomic(uint8_t *buf)
{
	struct srd_pkt_atomic *a = (void *)buf;

	base_fill(buf, SRD_PKT_ATOMIC_REQ);
	a->tx_id = 4;
	a->op = FI_CSWAP;
	a->datatype = FI_UINT64;
	a->kind = UTIL_ATOMIC_COMPARE;
	a->addr = 0x1000;
	a->key = 3;
	a->count = 2;
	return sizeof(*a) + 2 * 2 * sizeof(uint64_t);
}

/* A valid packet of type into buf (zeroed first); returns its length. */
static size_t build(uint8_t *buf, unsigned int type)
{
	memset(buf, 0, BUFSZ);
	switch (type) {
	case SRD_PKT_HELLO:
	case SRD_PKT_HELLO_ACK:
		return build_hello(buf, type);
	case SRD_PKT_EAGER:
	case SRD_PKT_MEDIUM:
	case SRD_PKT_LONG_RTS:
	case SRD_PKT_CTS_RTS:
		return build_msg(buf, type);
	case SRD_PKT_READ_DONE:
	case SRD_PKT_CTS:
		return build_ctrl(buf, type);
	case SRD_PKT_DATA:
		return build_data(buf);
	case SRD_PKT_WRITE:
	case SRD_PKT_READ_REQ:
		return build_rma(buf, type);
	case SRD_PKT_READ_RESP:
	case SRD_PKT_RMA_ACK:
	case SRD_PKT_ATOMIC_RESP:
		return build_resp(buf, type);
	case SRD_PKT_ATOMIC_REQ:
		return build_atomic(buf);
	}
	fail_msg("no builder for type %u", type);
	return 0;
}

static void test_valid_each_type(void **state)
{
	uint8_t buf[BUFSZ];
	unsigned int t;
	size_t len;

	for (t = SRD_PKT_HELLO; t < SRD_PKT_TYPE_MAX; t++) {
		len = build(buf, t);
		assert_int_equal(srd_pkt_validate(buf, len, MAXMSG), (int)t);
		assert_true(srd_pkt_hdr_size(t) >= sizeof(struct srd_pkt_base));
		assert_true(srd_pkt_hdr_size(t) <= len);
		assert_string_not_equal(srd_pkt_type_str(t), "unknown");
	}
	assert_int_equal(srd_pkt_hdr_size(0), 0);
	assert_int_equal(srd_pkt_hdr_size(SRD_PKT_TYPE_MAX), 0);
	assert_string_equal(srd_pkt_type_str(0), "unknown");
	assert_string_equal(srd_pkt_type_str(200), "unknown");
	assert_string_equal(srd_pkt_type_str(SRD_PKT_ATOMIC_REQ), "ATOMIC_REQ");
	assert_int_equal(srd_pkt_hdr_size(SRD_PKT_EAGER),
			 sizeof(struct srd_pkt_msg));
}

/* Variants that stay valid: no ring, plain atomics, fetch READ without
 * operands, error responses, zero-length pieces where allowed. */
static void test_valid_variants(void **state)
{
	uint8_t buf[BUFSZ];
	struct srd_pkt_hello *h = (void *)buf;
	struct srd_pkt_atomic *a = (void *)buf;
	struct srd_pkt_resp *r = (void *)buf;
	struct srd_pkt_msg *m = (void *)buf;
	size_t len;

	len = build(buf, SRD_PKT_HELLO);
	h->features = SRD_FEAT_RDMA_WRITE;
	h->ring_addr = h->ring_key = 0;
	h->ring_slots = h->ring_slot_size = 0;
	assert_int_equal(srd_pkt_validate(buf, len, MAXMSG), SRD_PKT_HELLO);

	len = build(buf, SRD_PKT_ATOMIC_REQ);
	a->op = FI_ATOMIC_READ;
	a->kind = UTIL_ATOMIC_FETCH;
	a->datatype = FI_INT32;
	len = sizeof(*a);
	assert_int_equal(srd_pkt_validate(buf, len, MAXMSG),
			 SRD_PKT_ATOMIC_REQ);
	a->op = FI_SUM;
	a->kind = UTIL_ATOMIC_WRITE;
	a->count = 3;
	a->base.flags = SRD_PKT_F_CQ_DATA;
	a->cq_data = 9;
	len = sizeof(*a) + 3 * 4;
	assert_int_equal(srd_pkt_validate(buf, len, MAXMSG),
			 SRD_PKT_ATOMIC_REQ);

	len = build(buf, SRD_PKT_READ_RESP);
	r->status = -FI_EACCES;
	r->offset = 0;
	r->seg_len = 0;
	assert_int_equal(srd_pkt_validate(buf, sizeof(*r), MAXMSG),
			 SRD_PKT_READ_RESP);

	len = build(buf, SRD_PKT_EAGER);
	m->seg_len = 0;
	m->total_len = 0;
	m->base.flags = 0;
	m->tag = 0;
	m->cq_data = 0;
	assert_int_equal(srd_pkt_validate(buf, sizeof(*m), MAXMSG),
			 SRD_PKT_EAGER);

	len = build(buf, SRD_PKT_WRITE);
	((struct srd_pkt_rma *)buf)->seg_len = 0;
	((struct srd_pkt_rma *)buf)->len = 0;
	((struct srd_pkt_rma *)buf)->offset = 0;
	assert_int_equal(srd_pkt_validate(buf, sizeof(struct srd_pkt_rma),
					  MAXMSG), SRD_PKT_WRITE);
	(void)len;
}

#define BASE ((struct srd_pkt_base *)buf)
#define HELLO ((struct srd_pkt_hello *)buf)
#define MSG ((struct srd_pkt_msg *)buf)
#define IOV ((struct srd_pkt_iov *)(buf + sizeof(struct srd_pkt_msg)))
#define CTRL ((struct srd_pkt_ctrl *)buf)
#define DATA ((struct srd_pkt_data *)buf)
#define RMA ((struct srd_pkt_rma *)buf)
#define RESP ((struct srd_pkt_resp *)buf)
#define ATOM ((struct srd_pkt_atomic *)buf)

/* X(type of the valid packet, text expected in the log, how to break it) */
#define CORRUPTIONS(X) \
	X(SRD_PKT_EAGER, "version", BASE->version = 2) \
	X(SRD_PKT_EAGER, "version", BASE->version = 0) \
	X(SRD_PKT_EAGER, "type", BASE->type = 0) \
	X(SRD_PKT_EAGER, "type", BASE->type = SRD_PKT_TYPE_MAX) \
	X(SRD_PKT_EAGER, "type", BASE->type = 255) \
	X(SRD_PKT_EAGER, "flags", BASE->flags |= SRD_PKT_F_ACK_REQ) \
	X(SRD_PKT_EAGER, "flags", BASE->flags |= 0x8000) \
	X(SRD_PKT_EAGER, "peer_id", BASE->peer_id = SRD_PEER_ID_NONE) \
	X(SRD_PKT_HELLO, "flags", BASE->flags = SRD_PKT_F_TAGGED) \
	X(SRD_PKT_HELLO, "name version", HELLO->name[0] = 9) \
	X(SRD_PKT_HELLO, "sender_id", \
		HELLO->sender_id = SRD_PEER_ID_NONE) \
	X(SRD_PKT_HELLO, "ring_slots", HELLO->ring_slots = 0) \
	X(SRD_PKT_HELLO, "ring_slot_size", HELLO->ring_slot_size = 0) \
	X(SRD_PKT_HELLO, "ring_addr + ring size", \
		HELLO->ring_addr = UINT64_MAX - 100) \
	X(SRD_PKT_HELLO, "ring_* without DATA_RING", \
		HELLO->features = 0) \
	X(SRD_PKT_HELLO, "length (trailing bytes)", *len += 1) \
	X(SRD_PKT_HELLO_ACK, "peer_id", \
		BASE->peer_id = SRD_PEER_ID_NONE) \
	X(SRD_PKT_HELLO_ACK, "name version", HELLO->name[0] = 0) \
	X(SRD_PKT_EAGER, "seg_len vs packet length", MSG->seg_len++) \
	X(SRD_PKT_EAGER, "seg_len vs packet length", *len -= 1) \
	X(SRD_PKT_EAGER, "seg_len vs packet length", \
		MSG->seg_len = UINT32_MAX) \
	X(SRD_PKT_EAGER, "total_len vs seg_len", MSG->total_len = 99) \
	X(SRD_PKT_EAGER, "total_len", MSG->total_len = MAXMSG + 1) \
	X(SRD_PKT_EAGER, "offset", MSG->offset = 1) \
	X(SRD_PKT_EAGER, "tag without TAGGED", \
		BASE->flags &= ~SRD_PKT_F_TAGGED) \
	X(SRD_PKT_EAGER, "cq_data without CQ_DATA", \
		BASE->flags &= ~SRD_PKT_F_CQ_DATA) \
	X(SRD_PKT_MEDIUM, "offset + seg_len vs total_len", \
		MSG->offset = 201) \
	X(SRD_PKT_MEDIUM, "offset + seg_len vs total_len", \
		MSG->offset = UINT64_MAX - 10) \
	X(SRD_PKT_MEDIUM, "offset + seg_len vs total_len", \
		MSG->total_len = 299) \
	X(SRD_PKT_MEDIUM, "seg_len", (MSG->seg_len = 0, \
		*len = sizeof(struct srd_pkt_msg))) \
	X(SRD_PKT_MEDIUM, "total_len", MSG->total_len = UINT64_MAX) \
	X(SRD_PKT_LONG_RTS, "offset", MSG->offset = 8) \
	X(SRD_PKT_LONG_RTS, "iov_count (seg_len)", \
		(MSG->seg_len = 0, *len = sizeof(struct srd_pkt_msg))) \
	X(SRD_PKT_LONG_RTS, "iov_count (seg_len)", \
		(MSG->seg_len -= 1, *len -= 1)) \
	X(SRD_PKT_LONG_RTS, "iov_count (seg_len)", \
		(MSG->seg_len = 5 * sizeof(struct srd_pkt_iov), \
		 *len = sizeof(struct srd_pkt_msg) + MSG->seg_len)) \
	X(SRD_PKT_LONG_RTS, "total_len vs iov lens", \
		MSG->total_len = 8001) \
	X(SRD_PKT_LONG_RTS, "iov len sum", \
		IOV[1].len = UINT64_MAX - 0x10000) \
	X(SRD_PKT_LONG_RTS, "iov addr + len", \
		IOV[0].addr = UINT64_MAX - 10) \
	X(SRD_PKT_CTS_RTS, "seg_len vs total_len", MSG->total_len = 10) \
	X(SRD_PKT_CTS_RTS, "offset", MSG->offset = 64) \
	X(SRD_PKT_READ_DONE, "status", CTRL->status = 1) \
	X(SRD_PKT_READ_DONE, "status", CTRL->status = INT32_MIN) \
	X(SRD_PKT_READ_DONE, "reserved", CTRL->reserved = 1) \
	X(SRD_PKT_READ_DONE, "offset", CTRL->offset = 1) \
	X(SRD_PKT_READ_DONE, "len", CTRL->len = MAXMSG + 1) \
	X(SRD_PKT_READ_DONE, "length (trailing bytes)", *len += 8) \
	X(SRD_PKT_READ_DONE, "flags", BASE->flags = SRD_PKT_F_LAST) \
	X(SRD_PKT_CTS, "status", CTRL->status = -FI_EIO) \
	X(SRD_PKT_CTS, "offset + len", CTRL->len = 0) \
	X(SRD_PKT_CTS, "offset + len", CTRL->offset = MAXMSG) \
	X(SRD_PKT_DATA, "seg_len vs packet length", DATA->seg_len = 1) \
	X(SRD_PKT_DATA, "seg_len vs packet length", \
		(DATA->seg_len = 0, *len = sizeof(struct srd_pkt_data))) \
	X(SRD_PKT_DATA, "offset + seg_len", DATA->offset = MAXMSG - 1) \
	X(SRD_PKT_DATA, "flags", BASE->flags = SRD_PKT_F_CQ_DATA) \
	/* more single-field corruptions, of the CTS protocol */ \
	X(SRD_PKT_CTS_RTS, "tag without TAGGED", \
		BASE->flags &= ~SRD_PKT_F_TAGGED) \
	X(SRD_PKT_CTS_RTS, "cq_data without CQ_DATA", \
		BASE->flags &= ~SRD_PKT_F_CQ_DATA) \
	X(SRD_PKT_CTS_RTS, "total_len", MSG->total_len = MAXMSG + 1) \
	X(SRD_PKT_CTS_RTS, "seg_len vs packet length", MSG->seg_len--) \
	X(SRD_PKT_CTS_RTS, "flags", BASE->flags |= SRD_PKT_F_LAST) \
	X(SRD_PKT_CTS, "reserved", CTRL->reserved = 7) \
	X(SRD_PKT_CTS, "offset + len", CTRL->offset = UINT64_MAX - 10) \
	X(SRD_PKT_CTS, "offset + len", CTRL->len = MAXMSG) \
	X(SRD_PKT_CTS, "flags", BASE->flags = SRD_PKT_F_TAGGED) \
	X(SRD_PKT_CTS, "length (trailing bytes)", *len += 8) \
	X(SRD_PKT_DATA, "offset + seg_len", DATA->offset = UINT64_MAX - 10) \
	X(SRD_PKT_DATA, "seg_len vs packet length", DATA->seg_len++) \
	X(SRD_PKT_WRITE, "seg_len vs packet length", RMA->seg_len--) \
	X(SRD_PKT_WRITE, "offset + seg_len vs len", RMA->len = 3999) \
	X(SRD_PKT_WRITE, "offset + seg_len vs len", RMA->offset = UINT64_MAX) \
	X(SRD_PKT_WRITE, "len", RMA->len = MAXMSG + 1) \
	X(SRD_PKT_WRITE, "cq_data before LAST", BASE->flags &= ~SRD_PKT_F_LAST) \
	X(SRD_PKT_WRITE, "addr + len", RMA->addr = UINT64_MAX - 100) \
	X(SRD_PKT_WRITE, "cq_data without CQ_DATA", \
		BASE->flags &= ~SRD_PKT_F_CQ_DATA) \
	X(SRD_PKT_WRITE, "reserved", RMA->reserved = 3) \
	X(SRD_PKT_WRITE, "flags", BASE->flags |= SRD_PKT_F_TAGGED) \
	X(SRD_PKT_READ_REQ, "seg_len/offset", RMA->seg_len = 4) \
	X(SRD_PKT_READ_REQ, "seg_len/offset", RMA->offset = 4) \
	X(SRD_PKT_READ_REQ, "len", RMA->len = MAXMSG + 1) \
	X(SRD_PKT_READ_REQ, "addr + len", RMA->addr = UINT64_MAX - 5) \
	X(SRD_PKT_READ_REQ, "flags", BASE->flags = SRD_PKT_F_ACK_REQ) \
	X(SRD_PKT_READ_REQ, "cq_data without CQ_DATA", RMA->cq_data = 1) \
	X(SRD_PKT_READ_REQ, "length (trailing bytes)", *len += 1) \
	X(SRD_PKT_READ_RESP, "seg_len vs packet length", RESP->seg_len++) \
	X(SRD_PKT_READ_RESP, "payload with an error status", \
		RESP->status = -FI_EINVAL) \
	X(SRD_PKT_READ_RESP, "status", RESP->status = 5) \
	X(SRD_PKT_READ_RESP, "offset + seg_len", \
		RESP->offset = MAXMSG - 255) \
	X(SRD_PKT_READ_RESP, "reserved", RESP->reserved = 1) \
	X(SRD_PKT_RMA_ACK, "seg_len/offset", RESP->offset = 4) \
	X(SRD_PKT_RMA_ACK, "seg_len vs packet length", RESP->seg_len = 4) \
	X(SRD_PKT_RMA_ACK, "status", RESP->status = -100000) \
	X(SRD_PKT_ATOMIC_RESP, "offset", RESP->offset = 8) \
	X(SRD_PKT_ATOMIC_RESP, "payload with an error status", \
		RESP->status = -FI_ENOKEY) \
	X(SRD_PKT_ATOMIC_REQ, "kind", ATOM->kind = 3) \
	X(SRD_PKT_ATOMIC_REQ, "op", ATOM->op = FI_ATOMIC_OP_LAST) \
	X(SRD_PKT_ATOMIC_REQ, "datatype", \
		ATOM->datatype = FI_DATATYPE_LAST) \
	X(SRD_PKT_ATOMIC_REQ, "datatype", ATOM->datatype = 250) \
	X(SRD_PKT_ATOMIC_REQ, "op for this kind/datatype", \
		ATOM->op = FI_SUM) \
	X(SRD_PKT_ATOMIC_REQ, "op for this kind/datatype", \
		ATOM->kind = UTIL_ATOMIC_WRITE) \
	X(SRD_PKT_ATOMIC_REQ, "count", ATOM->count = 0) \
	X(SRD_PKT_ATOMIC_REQ, "count * datatype size vs length", \
		ATOM->count = 3) \
	X(SRD_PKT_ATOMIC_REQ, "count * datatype size vs length", \
		ATOM->count = UINT32_MAX) \
	X(SRD_PKT_ATOMIC_REQ, "count * datatype size vs length", \
		*len -= 8) \
	X(SRD_PKT_ATOMIC_REQ, "count * datatype size vs length", \
		ATOM->datatype = FI_UINT32) \
	X(SRD_PKT_ATOMIC_REQ, "addr + count * size", \
		ATOM->addr = UINT64_MAX - 8) \
	X(SRD_PKT_ATOMIC_REQ, "reserved", ATOM->reserved = 1) \
	X(SRD_PKT_ATOMIC_REQ, "cq_data without CQ_DATA", \
		ATOM->cq_data = 1) \
	X(SRD_PKT_ATOMIC_REQ, "flags", BASE->flags = SRD_PKT_F_TAGGED)

struct corrupt {
	unsigned int type;
	const char *field;
};

#define CORRUPT_ENTRY(t, f, body) { t, f },
static const struct corrupt corruptions[] = { CORRUPTIONS(CORRUPT_ENTRY) };

#define CORRUPT_APPLY(t, f, body) if (i == n++) { body; return; }
static void corrupt_apply(size_t i, uint8_t *buf, size_t *len)
{
	size_t n = 0;

	CORRUPTIONS(CORRUPT_APPLY)
	fail_msg("no corruption %zu", i);
}

static void test_corrupt_fields(void **state)
{
	uint8_t buf[BUFSZ];
	struct capture cap;
	const char *log;
	size_t i, len;
	int ret;

	for (i = 0; i < WEFT_ARRAY_SIZE(corruptions); i++) {
		const struct corrupt *c = &corruptions[i];

		len = build(buf, c->type);
		corrupt_apply(i, buf, &len);
		capture_start(&cap);
		ret = srd_pkt_validate(buf, len, MAXMSG);
		log = capture_stop(&cap);
		if (ret != -FI_EINVAL || !strstr(log, c->field))
			fail_msg("case %zu (%s, %s): ret %d, log '%s'", i,
				 srd_pkt_type_str(c->type), c->field, ret, log);
		capture_free(&cap);
	}
}

static void test_truncated_every_byte(void **state)
{
	uint8_t buf[BUFSZ];
	struct capture cap;
	unsigned int t;
	size_t len, cut;

	capture_start(&cap);
	for (t = SRD_PKT_HELLO; t < SRD_PKT_TYPE_MAX; t++) {
		len = build(buf, t);
		for (cut = 0; cut < len; cut++)
			if (srd_pkt_validate(buf, cut, MAXMSG) != -FI_EINVAL)
				fail_msg("%s truncated to %zu/%zu passed",
					 srd_pkt_type_str(t), cut, len);
		/* one byte too many: a packet is exactly its length */
		if (srd_pkt_validate(buf, len + 1, MAXMSG) != -FI_EINVAL)
			fail_msg("%s with a trailing byte passed",
				 srd_pkt_type_str(t));
	}
	assert_int_equal(srd_pkt_validate(NULL, 64, MAXMSG), -FI_EINVAL);
	capture_stop(&cap);
	capture_free(&cap);
}

/* HELLO announcing two more rails; striped LONG_RTS over three rails of
 * two iovs (the same memory as build_msg's). */
static size_t build_hello_rails(uint8_t *buf)
{
	struct srd_pkt_hello *h = (void *)buf;
	struct srd_pkt_rails *r = (void *)(h + 1);

	memset(buf, 0, BUFSZ);
	build_hello(buf, SRD_PKT_HELLO);
	h->features |= SRD_FEAT_RAILS;
	r->count = 2;
	for (uint32_t k = 0; k < 2; k++) {
		r->rail[k].qpn = 0x1234 + k;
		r->rail[k].qkey = 0x777;
		r->rail[k].gid[10] = r->rail[k].gid[11] = 0xff;
	}
	return srd_pkt_hello_len(h, 2);
}

static size_t build_stripe(uint8_t *buf)
{
	struct srd_pkt_msg *m = (void *)buf;
	struct srd_pkt_stripe *st = (void *)(m + 1);
	struct srd_pkt_iov *iov = (void *)(st + 1);
	uint32_t *keys = (void *)(iov + 2);

	memset(buf, 0, BUFSZ);
	build_msg(buf, SRD_PKT_LONG_RTS);
	memmove(iov, st, 2 * sizeof(*iov));
	memset(st, 0, sizeof(*st));
	st->rails = 3;
	st->iov_count = 2;
	for (int i = 0; i < 4; i++)
		keys[i] = 100 + (uint32_t)i;
	m->base.flags |= SRD_PKT_F_RAILS;
	m->seg_len = (uint32_t)srd_pkt_stripe_len(3, 2);
	return sizeof(*m) + m->seg_len;
}

#define RAILS ((struct srd_pkt_rails *)(buf + sizeof(struct srd_pkt_hello)))
#define STRIPE ((struct srd_pkt_stripe *)(buf + sizeof(struct srd_pkt_msg)))
#define SIOV ((struct srd_pkt_iov *)(STRIPE + 1))

/* X(hello or stripe, text expected in the log, how to break it) */
#define RAIL_CORRUPTIONS(X) \
	X(1, "rails count", RAILS->count = 0) \
	X(1, "rails count", RAILS->count = SRD_PKT_RAILS_MAX) \
	X(1, "rails count", RAILS->count = UINT32_MAX) \
	X(1, "rails count", RAILS->reserved = 1) \
	X(1, "length vs rails count", RAILS->count = 1) \
	X(1, "length vs rails count", *len -= 1) \
	X(1, "length (no rails)", *len = sizeof(struct srd_pkt_hello) + 4) \
	X(1, "length (trailing bytes)", \
		HELLO->features &= ~SRD_FEAT_RAILS) \
	X(1, "rail qpn", RAILS->rail[1].qpn = 0) \
	X(1, "rail qpn", RAILS->rail[0].qpn = SRD_QPN_MASK + 1) \
	X(1, "rail qkey", RAILS->rail[1].qkey = 0x80000000u) \
	X(0, "rails", STRIPE->rails = 1) \
	X(0, "rails", STRIPE->rails = SRD_PKT_RAILS_MAX + 1) \
	X(0, "iov_count", STRIPE->iov_count = 0) \
	X(0, "iov_count", STRIPE->iov_count = SRD_PKT_IOV_MAX + 1) \
	X(0, "stripe reserved", STRIPE->reserved = 1) \
	X(0, "stripe reserved", STRIPE->reserved2 = 1) \
	X(0, "seg_len vs rails, iov_count", STRIPE->rails = 2) \
	X(0, "seg_len vs rails, iov_count", STRIPE->iov_count = 1) \
	X(0, "seg_len vs packet length", *len -= 4) \
	X(0, "seg_len (no stripe)", (MSG->seg_len = 4, \
		*len = sizeof(struct srd_pkt_msg) + 4)) \
	X(0, "total_len vs iov lens", SIOV[1].len = 2999) \
	X(0, "iov addr + len", SIOV[0].addr = UINT64_MAX - 10) \
	X(0, "flags", MSG->base.type = SRD_PKT_CTS_RTS)

static void rail_corrupt(size_t i, uint8_t *buf, size_t *len)
{
	size_t n = 0;

#define RAIL_APPLY(h, f, op) if (n++ == i) { op; return; }
	RAIL_CORRUPTIONS(RAIL_APPLY)
#undef RAIL_APPLY
	fail_msg("no rail corruption %zu", i);
}

/* Rails come from the network: every count, index, key and length of
 * the HELLO trailer and of a striped LONG_RTS is checked. */
static void test_rails_fields(void **state)
{
	static const struct { int hello; const char *field; } cases[] = {
#define RAIL_CASE(h, f, op) { h, f },
		RAIL_CORRUPTIONS(RAIL_CASE)
#undef RAIL_CASE
	};
	uint8_t buf[BUFSZ];
	struct capture cap;
	const char *log;
	size_t len;
	int ret;

	(void)state;
	len = build_hello_rails(buf);
	assert_int_equal(srd_pkt_validate(buf, len, MAXMSG), SRD_PKT_HELLO);
	len = build_stripe(buf);
	assert_int_equal(srd_pkt_validate(buf, len, MAXMSG), SRD_PKT_LONG_RTS);
	assert_int_equal(srd_pkt_rts_iov_count(MSG->base.flags,
					       buf + sizeof(struct srd_pkt_msg),
					       MSG->seg_len), 2);
	for (size_t i = 0; i < WEFT_ARRAY_SIZE(cases); i++) {
		len = cases[i].hello ? build_hello_rails(buf) :
				       build_stripe(buf);
		rail_corrupt(i, buf, &len);
		capture_start(&cap);
		ret = srd_pkt_validate(buf, len, MAXMSG);
		log = capture_stop(&cap);
		if (ret != -FI_EINVAL || !strstr(log, cases[i].field))
			fail_msg("rail case %zu (%s): ret %d, log '%s'", i,
				 cases[i].field, ret, log);
		capture_free(&cap);
	}
}

static void test_max_msg_size(void **state)
{
	uint8_t buf[BUFSZ];
	struct srd_pkt_msg *m = (void *)buf;
	struct capture cap;
	size_t len;

	len = build(buf, SRD_PKT_CTS_RTS);
	assert_int_equal(srd_pkt_validate(buf, len, 100000), SRD_PKT_CTS_RTS);
	capture_start(&cap);
	assert_int_equal(srd_pkt_validate(buf, len, 99999), -FI_EINVAL);
	m->total_len = 64;
	assert_int_equal(srd_pkt_validate(buf, len, 63), -FI_EINVAL);
	assert_non_null(strstr(capture_stop(&cap), "total_len"));
	capture_free(&cap);
}

/* A fetch READ is 40 bytes whatever its count: the old values it asks
 * for are checked against the answer's packet, before anything runs. */
static void test_atomic_answer(void **state)
{
	uint8_t buf[BUFSZ];
	struct srd_pkt_atomic *a = (void *)buf;
	struct capture cap;
	size_t resp = sizeof(struct srd_pkt_resp);

	(void)state;
	build(buf, SRD_PKT_ATOMIC_REQ);
	a->op = FI_ATOMIC_READ;
	a->kind = UTIL_ATOMIC_FETCH;
	a->count = 3074;
	assert_int_equal(srd_pkt_validate(buf, sizeof(*a), MAXMSG),
			 SRD_PKT_ATOMIC_REQ);
	capture_start(&cap);
	assert_int_equal(srd_pkt_atomic_answer_check(a, 8928), -FI_EMSGSIZE);
	assert_non_null(strstr(capture_stop(&cap), "old values"));
	capture_free(&cap);
	a->count = UINT32_MAX;
	assert_int_equal(srd_pkt_atomic_answer_check(a, 8928), -FI_EMSGSIZE);
	a->count = (8928 - resp) / 8;
	assert_int_equal(srd_pkt_atomic_answer_check(a, 8928), 0);
	a->count++;
	assert_int_equal(srd_pkt_atomic_answer_check(a, 8928), -FI_EMSGSIZE);
	assert_int_equal(srd_pkt_atomic_answer_check(a, 8), -FI_EMSGSIZE);
	/* compare: as many old values as compare values, still per packet */
	build(buf, SRD_PKT_ATOMIC_REQ);
	assert_int_equal(srd_pkt_atomic_answer_check(a, resp + 16), 0);
	assert_int_equal(srd_pkt_atomic_answer_check(a, resp + 15),
			 -FI_EMSGSIZE);
	/* a plain atomic answers with its status only */
	a->kind = UTIL_ATOMIC_WRITE;
	a->op = FI_SUM;
	a->count = UINT32_MAX;
	assert_int_equal(srd_pkt_atomic_answer_check(a, 64), 0);
}

static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* What receivers rely on once a packet passed. */
static void check_invariants(const uint8_t *buf, size_t len, int type)
{
	const struct srd_pkt_msg *m = (const void *)buf;
	const struct srd_pkt_resp *r = (const void *)buf;
	const struct srd_pkt_rma *w = (const void *)buf;

	assert_true(len >= srd_pkt_hdr_size(type));
	switch (type) {
	case SRD_PKT_EAGER:
	case SRD_PKT_MEDIUM:
	case SRD_PKT_CTS_RTS:
	case SRD_PKT_LONG_RTS:
		assert_int_equal(m->seg_len, len - sizeof(*m));
		assert_true(m->total_len <= MAXMSG);
		assert_true(m->offset <= m->total_len);
		assert_true(m->seg_len <= m->total_len - m->offset ||
			    type == SRD_PKT_LONG_RTS);
		break;
	case SRD_PKT_READ_RESP:
	case SRD_PKT_ATOMIC_RESP:
	case SRD_PKT_RMA_ACK:
		assert_int_equal(r->seg_len, len - sizeof(*r));
		assert_true(r->status <= 0);
		break;
	case SRD_PKT_WRITE:
		assert_int_equal(w->seg_len, len - sizeof(*w));
		assert_true(w->addr + w->len >= w->addr);
		assert_true(w->offset <= w->len &&
			    w->seg_len <= w->len - w->offset);
		break;
	}
}

static void test_fuzz(void **state)
{
	uint8_t buf[BUFSZ];
	struct capture cap;
	unsigned int passed = 0, i, n, k;
	size_t len;
	int ret;

	rng = 0x5eed5eed12345678ull;
	capture_start(&cap);
	for (i = 0; i < 100000; i++) {
		unsigned int t = 1 + rnd() % (SRD_PKT_TYPE_MAX - 1);

		len = build(buf, t);
		n = 1 + rnd() % 4;
		for (k = 0; k < n; k++) {
			size_t at = rnd() % (len + 8);

			if (rnd() % 2)
				buf[at] ^= (uint8_t)(1u << (rnd() % 8));
			else
				buf[at] = (uint8_t)rnd();
		}
		if (rnd() % 8 == 0)
			len = rnd() % (len + 16);
		ret = srd_pkt_validate(buf, len, MAXMSG);
		if (ret > 0) {
			passed++;
			check_invariants(buf, len, ret);
		} else {
			assert_int_equal(ret, -FI_EINVAL);
		}
	}
	capture_stop(&cap);
	capture_free(&cap);
	print_message("# fuzz: %u of 100000 mutated packets still valid\n",
		      passed);
	/* Flipping tag/payload bytes keeps a packet valid: some must pass,
	 * most must not. */
	assert_true(passed > 0 && passed < 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_each_type),
		cmocka_unit_test(test_valid_variants),
		cmocka_unit_test(test_corrupt_fields),
		cmocka_unit_test(test_truncated_every_byte),
		cmocka_unit_test(test_max_msg_size),
		cmocka_unit_test(test_rails_fields),
		cmocka_unit_test(test_atomic_answer),
		cmocka_unit_test(test_fuzz),
	};

	/* Every case reads its own log line: the rate limit of dropped
	 * packets' warnings (WEFT_WARN_SPARSE) off. */
	setenv("FI_LOG_INTERVAL", "0", 1);
	weft_log_configure();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
