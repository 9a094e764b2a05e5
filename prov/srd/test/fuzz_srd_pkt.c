/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of srd's packet validation (srd_pkt.c): the input is
 * one received datagram, as srd_ep_rx_pkt (CQ) and srd_ring_consume (ring)
 * hand it to srd_pkt_validate. Besides not crashing (ASan/UBSan watch),
 * every packet that passes must satisfy what the handlers then take for
 * granted: every length it carries lies inside the datagram, counts fit
 * the arrays the handlers copy them into, sums and ranges do not wrap,
 * and the answer a request asks for fits one packet buffer. A broken
 * invariant traps, and libFuzzer reports the input. LLVMFuzzerInitialize
 * writes a valid packet of every type as seeds (WEFT_FUZZ_SEEDS), so the
 * fuzzer starts past version, type and length. test_srd_fuzz.sh builds
 * and runs it.
 */
#include "weft/compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srd_rdm.h"
#include "srd_pkt.h"
#include "weft/util_atomic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* srd_pkt.c logs under the provider; nothing else of it is used here. */
struct fi_provider srd_prov = { .name = "srd" };

/* The receive buffers' size: softsrd's default MTU. A device never
 * delivers more, and the target answers a request in a buffer of it. */
#define FUZZ_PKT_SIZE 8928
/* A smaller message limit than the CQ path's, to reach the limit checks. */
#define FUZZ_SMALL_MAX ((uint64_t)1 << 20)

#define FUZZ_ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)

/* a + b <= limit, without wrapping */
static bool fits(uint64_t a, uint64_t b, uint64_t limit)
{
	return a <= limit && b <= limit - a;
}

static bool status_ok(int32_t s)
{
	return s <= 0 && s >= SRD_PKT_STATUS_MIN;
}

static void check_hello(const uint8_t *buf, size_t len)
{
	const struct srd_pkt_hello *h = (const void *)buf;
	const struct srd_pkt_rails *r = (const void *)(h + 1);

	FUZZ_ASSERT(h->name[0] == SRD_EP_NAME_VERSION);
	FUZZ_ASSERT(h->sender_id != SRD_PEER_ID_NONE);
	if (h->features & SRD_FEAT_RAILS) {
		/* srd_stripe_hello_recv reads count rails after the header */
		FUZZ_ASSERT(len >= sizeof(*h) + sizeof(*r));
		FUZZ_ASSERT(r->count >= 1 && r->count < SRD_PKT_RAILS_MAX);
		FUZZ_ASSERT(len == srd_pkt_hello_len(h, r->count));
		for (uint32_t i = 0; i < r->count; i++) {
			struct srd_pkt_rail rail;

			memcpy(&rail, &r->rail[i], sizeof(rail));
			FUZZ_ASSERT(rail.qpn && rail.qpn <= SRD_QPN_MASK);
			FUZZ_ASSERT(!(rail.qkey & ~SRD_QKEY_MASK));
		}
	} else {
		FUZZ_ASSERT(len == sizeof(*h));
	}
	if (h->features & SRD_FEAT_DATA_RING) {
		FUZZ_ASSERT(h->ring_slots && h->ring_slot_size);
		FUZZ_ASSERT(fits(h->ring_addr, (uint64_t)h->ring_slots *
				 h->ring_slot_size, UINT64_MAX));
	} else {
		FUZZ_ASSERT(!h->ring_addr && !h->ring_key && !h->ring_slots &&
			    !h->ring_slot_size);
	}
}

/* LONG_RTS: the iovs (and a striped one's keys) that srd_long_rx_start
 * copies into its SRD_IOV_MAX-entry arrays lie inside the payload. */
static void check_rts(const struct srd_pkt_msg *m)
{
	const uint8_t *payload = (const uint8_t *)(m + 1);
	const uint8_t *end = payload + m->seg_len;
	const uint8_t *iovs = srd_pkt_rts_iovs(m->base.flags, payload);
	size_t n = srd_pkt_rts_iov_count(m->base.flags, payload, m->seg_len);
	uint64_t sum = 0;

	FUZZ_ASSERT(!m->offset);
	FUZZ_ASSERT(n >= 1 && n <= SRD_IOV_MAX && n <= SRD_PKT_IOV_MAX);
	FUZZ_ASSERT(iovs >= payload);
	FUZZ_ASSERT((size_t)(end - iovs) >= n * sizeof(struct srd_pkt_iov));
	for (size_t i = 0; i < n; i++) {
		struct srd_pkt_iov v;

		memcpy(&v, iovs + i * sizeof(v), sizeof(v));
		FUZZ_ASSERT(fits(v.addr, v.len, UINT64_MAX));
		FUZZ_ASSERT(fits(sum, v.len, m->total_len));
		sum += v.len;
	}
	FUZZ_ASSERT(sum == m->total_len);
	if (m->base.flags & SRD_PKT_F_RAILS) {
		const struct srd_pkt_stripe *st = (const void *)payload;

		FUZZ_ASSERT(st->rails >= 2 && st->rails <= SRD_PKT_RAILS_MAX);
		FUZZ_ASSERT(iovs + n * sizeof(struct srd_pkt_iov) +
			    (st->rails - 1) * n * sizeof(uint32_t) == end);
	} else {
		FUZZ_ASSERT(iovs + n * sizeof(struct srd_pkt_iov) == end);
	}
}

static void check_msg(const uint8_t *buf, size_t len, int type, uint64_t max)
{
	const struct srd_pkt_msg *m = (const void *)buf;

	/* srd_rx_decode: the payload is seg_len bytes after the header */
	FUZZ_ASSERT(m->seg_len == len - sizeof(*m));
	FUZZ_ASSERT(m->total_len <= max);
	FUZZ_ASSERT((m->base.flags & SRD_PKT_F_TAGGED) || !m->tag);
	FUZZ_ASSERT((m->base.flags & SRD_PKT_F_CQ_DATA) || !m->cq_data);
	switch (type) {
	case SRD_PKT_EAGER:
		FUZZ_ASSERT(!m->offset && m->seg_len == m->total_len);
		break;
	case SRD_PKT_MEDIUM:
		FUZZ_ASSERT(m->seg_len);
		FUZZ_ASSERT(fits(m->offset, m->seg_len, m->total_len));
		break;
	case SRD_PKT_CTS_RTS:
		FUZZ_ASSERT(!m->offset && m->seg_len <= m->total_len);
		break;
	default:
		check_rts(m);
		break;
	}
}

static void check_ctrl(const uint8_t *buf, size_t len, int type,
		       uint64_t max)
{
	const struct srd_pkt_ctrl *c = (const void *)buf;

	FUZZ_ASSERT(len == sizeof(*c));
	FUZZ_ASSERT(status_ok(c->status) && !c->reserved);
	if (type == SRD_PKT_READ_DONE) {
		FUZZ_ASSERT(!c->offset && c->len <= max);
	} else {
		/* srd_cts_handle_cts: a window inside the message limit */
		FUZZ_ASSERT(!c->status && c->len);
		FUZZ_ASSERT(fits(c->offset, c->len, max));
	}
}

static void check_rma(const uint8_t *buf, size_t len, int type, uint64_t max)
{
	const struct srd_pkt_rma *r = (const void *)buf;

	FUZZ_ASSERT(!r->reserved);
	FUZZ_ASSERT((r->base.flags & SRD_PKT_F_CQ_DATA) || !r->cq_data);
	FUZZ_ASSERT(r->len <= max && fits(r->addr, r->len, UINT64_MAX));
	if (type == SRD_PKT_WRITE) {
		FUZZ_ASSERT(r->seg_len == len - sizeof(*r));
		/* the segment lands inside the range the MR check covered */
		FUZZ_ASSERT(fits(r->offset, r->seg_len, r->len));
		FUZZ_ASSERT((r->base.flags & SRD_PKT_F_LAST) || !r->cq_data);
	} else {
		FUZZ_ASSERT(len == sizeof(*r) && !r->seg_len && !r->offset);
	}
}

static void check_resp(const uint8_t *buf, size_t len, int type,
		       uint64_t max)
{
	const struct srd_pkt_resp *r = (const void *)buf;

	FUZZ_ASSERT(r->seg_len == len - sizeof(*r));
	FUZZ_ASSERT(status_ok(r->status) && !r->reserved);
	FUZZ_ASSERT(!r->status || (!r->seg_len && !r->offset));
	if (type == SRD_PKT_READ_RESP)
		FUZZ_ASSERT(fits(r->offset, r->seg_len, max));
	else if (type == SRD_PKT_RMA_ACK)
		FUZZ_ASSERT(!r->seg_len && !r->offset);
	else
		FUZZ_ASSERT(!r->offset);
}

/* srd_atomic_handle_req applies count elements at addr, reads operands
 * (and compare values) after the header, and writes the old values of a
 * fetch into its answer, a packet buffer of FUZZ_PKT_SIZE bytes, once
 * srd_pkt_atomic_answer_check let it. */
static void check_atomic(const uint8_t *buf, size_t len)
{
	const struct srd_pkt_atomic *a = (const void *)buf;
	size_t dt = util_atomic_datatype_size(a->datatype);
	uint64_t bytes = (uint64_t)a->count * dt, operands;
	int ret;

	FUZZ_ASSERT(a->kind <= UTIL_ATOMIC_COMPARE && !a->reserved);
	FUZZ_ASSERT(!util_atomic_kind_valid(a->kind, a->op, a->datatype));
	FUZZ_ASSERT(dt && a->count);
	FUZZ_ASSERT((a->base.flags & SRD_PKT_F_CQ_DATA) || !a->cq_data);
	operands = a->kind == UTIL_ATOMIC_COMPARE ? 2 * bytes :
		   a->op == FI_ATOMIC_READ ? 0 : bytes;
	FUZZ_ASSERT(len - sizeof(*a) == operands);
	FUZZ_ASSERT(fits(a->addr, bytes, UINT64_MAX));
	ret = srd_pkt_atomic_answer_check(a, FUZZ_PKT_SIZE);
	FUZZ_ASSERT(!ret || ret == -FI_EMSGSIZE);
	if (!ret && a->kind != UTIL_ATOMIC_WRITE)
		FUZZ_ASSERT(sizeof(struct srd_pkt_resp) + bytes <=
			    FUZZ_PKT_SIZE);
}

static void check_accepted(const uint8_t *buf, size_t len, int type,
			   uint64_t max)
{
	const struct srd_pkt_base *b = (const void *)buf;

	FUZZ_ASSERT(type > 0 && type < SRD_PKT_TYPE_MAX && type == b->type);
	FUZZ_ASSERT(b->version == SRD_PROTO_VERSION);
	FUZZ_ASSERT(srd_pkt_hdr_size(type) >= sizeof(*b));
	FUZZ_ASSERT(len >= srd_pkt_hdr_size(type));
	FUZZ_ASSERT(strcmp(srd_pkt_type_str(type), "unknown"));
	FUZZ_ASSERT(type == SRD_PKT_HELLO || b->peer_id != SRD_PEER_ID_NONE);
	switch (type) {
	case SRD_PKT_HELLO:
	case SRD_PKT_HELLO_ACK:
		check_hello(buf, len);
		break;
	case SRD_PKT_EAGER:
	case SRD_PKT_MEDIUM:
	case SRD_PKT_LONG_RTS:
	case SRD_PKT_CTS_RTS:
		check_msg(buf, len, type, max);
		break;
	case SRD_PKT_READ_DONE:
	case SRD_PKT_CTS:
		check_ctrl(buf, len, type, max);
		break;
	case SRD_PKT_DATA: {
		const struct srd_pkt_data *d = (const void *)buf;

		FUZZ_ASSERT(d->seg_len && d->seg_len == len - sizeof(*d));
		FUZZ_ASSERT(fits(d->offset, d->seg_len, max));
		break;
	}
	case SRD_PKT_WRITE:
	case SRD_PKT_READ_REQ:
		check_rma(buf, len, type, max);
		break;
	case SRD_PKT_READ_RESP:
	case SRD_PKT_RMA_ACK:
	case SRD_PKT_ATOMIC_RESP:
		check_resp(buf, len, type, max);
		break;
	case SRD_PKT_ATOMIC_REQ:
		check_atomic(buf, len);
		break;
	default:
		__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf;
	int type, small;

	if (size > FUZZ_PKT_SIZE)
		return 0;
	/* exactly the datagram's bytes, so ASan sees any read past it */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	type = srd_pkt_validate(buf, size, SRD_MAX_MSG_SIZE);
	if (type > 0)
		check_accepted(buf, size, type, SRD_MAX_MSG_SIZE);
	else
		FUZZ_ASSERT(type == -FI_EINVAL);
	/* a lower limit only ever refuses more */
	small = srd_pkt_validate(buf, size, FUZZ_SMALL_MAX);
	if (small > 0) {
		FUZZ_ASSERT(small == type);
		check_accepted(buf, size, small, FUZZ_SMALL_MAX);
	}
	free(buf);
	return 0;
}

/* ---- seeds: one valid packet of each type, and the variants ---------- */

static void seed_base(uint8_t *buf, unsigned int type, uint16_t flags)
{
	struct srd_pkt_base *b = (void *)buf;

	b->version = SRD_PROTO_VERSION;
	b->type = (uint8_t)type;
	b->flags = flags;
	b->peer_id = type == SRD_PKT_HELLO ? SRD_PEER_ID_NONE : 3;
}

static size_t seed_hello(uint8_t *buf, unsigned int type, bool rails)
{
	struct srd_pkt_hello *h = (void *)buf;
	struct srd_pkt_rails *r = (void *)(h + 1);

	seed_base(buf, type, 0);
	h->name[0] = SRD_EP_NAME_VERSION;
	h->sender_id = 5;
	h->features = SRD_FEAT_RDMA_READ | SRD_FEAT_DATA_RING;
	h->ring_addr = 0x10000;
	h->ring_key = 0x55;
	h->ring_slots = 64;
	h->ring_slot_size = 256;
	if (!rails)
		return sizeof(*h);
	h->features |= SRD_FEAT_RAILS;
	r->count = 2;
	for (uint32_t k = 0; k < 2; k++) {
		r->rail[k].qpn = 0x1234 + k;
		r->rail[k].qkey = 0x777;
	}
	return srd_pkt_hello_len(h, 2);
}

static size_t seed_msg(uint8_t *buf, unsigned int type, bool rails)
{
	struct srd_pkt_msg *m = (void *)buf;
	uint8_t *p = (uint8_t *)(m + 1);
	struct srd_pkt_iov iov[2] = {
		{ .addr = 0x1000, .len = 5000, .key = 1 },
		{ .addr = 0x9000, .len = 3000, .key = 2 },
	};

	seed_base(buf, type, SRD_PKT_F_TAGGED | SRD_PKT_F_CQ_DATA);
	m->msg_id = 42;
	m->tag = 0xabcdef;
	m->cq_data = 0x1234;
	m->seg_len = 100;
	m->total_len = type == SRD_PKT_CTS_RTS ? 100000 : 100;
	if (type == SRD_PKT_MEDIUM) {
		m->offset = 200;
		m->total_len = 300;
	}
	if (type != SRD_PKT_LONG_RTS)
		return sizeof(*m) + m->seg_len;
	m->total_len = 8000;
	if (rails) {
		struct srd_pkt_stripe st = { .rails = 3, .iov_count = 2 };

		m->base.flags |= SRD_PKT_F_RAILS;
		memcpy(p, &st, sizeof(st));
		p += sizeof(st);
		m->seg_len = (uint32_t)srd_pkt_stripe_len(3, 2);
	} else {
		m->seg_len = sizeof(iov);
	}
	memcpy(p, iov, sizeof(iov));
	return sizeof(*m) + m->seg_len;
}

static size_t seed_other(uint8_t *buf, unsigned int type, int variant)
{
	struct srd_pkt_ctrl *c = (void *)buf;
	struct srd_pkt_data *d = (void *)buf;
	struct srd_pkt_rma *r = (void *)buf;
	struct srd_pkt_resp *s = (void *)buf;
	struct srd_pkt_atomic *a = (void *)buf;

	seed_base(buf, type, 0);
	switch (type) {
	case SRD_PKT_READ_DONE:
	case SRD_PKT_CTS:
		c->offset = type == SRD_PKT_CTS ? 65536 : 0;
		c->len = 65536;
		return sizeof(*c);
	case SRD_PKT_DATA:
		d->seg_len = 128;
		d->offset = 4096;
		return sizeof(*d) + d->seg_len;
	case SRD_PKT_WRITE:
		r->base.flags = SRD_PKT_F_ACK_REQ | SRD_PKT_F_LAST |
				SRD_PKT_F_CQ_DATA;
		r->cq_data = 77;
		r->seg_len = 200;
		r->len = 4000;
		r->offset = 3800;
		r->addr = 0x7f0000001000;
		return sizeof(*r) + r->seg_len;
	case SRD_PKT_READ_REQ:
		r->len = 1 << 20;
		r->addr = 0x7f0000001000;
		return sizeof(*r);
	case SRD_PKT_ATOMIC_REQ:
		a->datatype = FI_UINT64;
		a->count = 2;
		a->addr = 0x1000;
		if (variant) {	/* fetch READ: no operands */
			a->op = FI_ATOMIC_READ;
			a->kind = UTIL_ATOMIC_FETCH;
			return sizeof(*a);
		}
		a->op = FI_CSWAP;
		a->kind = UTIL_ATOMIC_COMPARE;
		return sizeof(*a) + 2 * 2 * sizeof(uint64_t);
	default:	/* READ_RESP, RMA_ACK, ATOMIC_RESP */
		if (variant) {
			s->status = -FI_EACCES;
			return sizeof(*s);
		}
		s->seg_len = type == SRD_PKT_RMA_ACK ? 0 : 16;
		s->offset = type == SRD_PKT_READ_RESP ? 8192 : 0;
		return sizeof(*s) + s->seg_len;
	}
}

static void seed_write(const char *dir, int n, const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%02d", dir, n);
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(buf, 1, len, f);
	fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("WEFT_FUZZ_SEEDS");
	uint8_t buf[512];
	int n = 0;
	size_t len;

	(void)argc;
	(void)argv;
	if (!dir)
		return 0;
	for (unsigned int t = SRD_PKT_HELLO; t < SRD_PKT_TYPE_MAX; t++) {
		for (int v = 0; v < 2; v++) {
			memset(buf, 0, sizeof(buf));
			if (t == SRD_PKT_HELLO || t == SRD_PKT_HELLO_ACK)
				len = seed_hello(buf, t, v);
			else if (t >= SRD_PKT_EAGER && t <= SRD_PKT_CTS_RTS &&
				 t != SRD_PKT_READ_DONE)
				len = seed_msg(buf, t, v);
			else
				len = seed_other(buf, t, v);
			seed_write(dir, n++, buf, len);
		}
	}
	return 0;
}
