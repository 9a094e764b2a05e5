/* SPDX-License-Identifier: MIT */
/*
 * Validation of received packets (wire format version 1, srd_pkt.h).
 * Everything here comes from the network: each check names the field it
 * refused. Failures are rare and worth a line in the log; the success path
 * logs nothing.
 */
#include "weft/compat.h"
#include "srd_rdm.h"
#include "srd_pkt.h"
#include "weft/util_atomic.h"

#include <rdma/fi_errno.h>
#include <stdbool.h>
#include <string.h>

#define SRD_PKT_FLAGS_MSG (SRD_PKT_F_TAGGED | SRD_PKT_F_CQ_DATA | SRD_PKT_F_COLL)
#define SRD_PKT_FLAGS_WRITE (SRD_PKT_F_CQ_DATA | SRD_PKT_F_ACK_REQ | \
			     SRD_PKT_F_LAST)

struct srd_pkt_check {
	const char *name;
	size_t hdr;
	uint16_t flags;		/* allowed base.flags */
	int (*check)(const void *buf, size_t len, uint64_t max);
};

static int srd_pkt_bad(const char *type, const char *what,
		       unsigned long long val)
{
	WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
		"dropping %s packet: bad %s (%llu / 0x%llx)\n", type, what, val,
		val);
	return -FI_EINVAL;
}

/* a + b > limit, without wrapping. */
static bool srd_pkt_exceeds(uint64_t a, uint64_t b, uint64_t limit)
{
	return a > limit || b > limit - a;
}

static bool srd_pkt_status_ok(int32_t status)
{
	return status <= 0 && status >= SRD_PKT_STATUS_MIN;
}

/* The rails a HELLO announces: count in range, exactly that many, each
 * a valid QP number and QKEY (the GID is only ever an AH lookup). */
static int srd_pkt_check_rails(const struct srd_pkt_hello *h, size_t len)
{
	const struct srd_pkt_rails *r = (const void *)(h + 1);
	const char *t = "HELLO";

	if (!(h->features & SRD_FEAT_RAILS))
		return len == sizeof(*h) ? 0 :
		       srd_pkt_bad(t, "length (trailing bytes)", len);
	if (len < sizeof(*h) + sizeof(*r))
		return srd_pkt_bad(t, "length (no rails)", len);
	if (!r->count || r->count >= SRD_PKT_RAILS_MAX || r->reserved)
		return srd_pkt_bad(t, "rails count", r->count);
	if (len != srd_pkt_hello_len(h, r->count))
		return srd_pkt_bad(t, "length vs rails count", len);
	for (uint32_t i = 0; i < r->count; i++) {
		struct srd_pkt_rail rail;

		memcpy(&rail, &r->rail[i], sizeof(rail));
		if (!rail.qpn || rail.qpn > SRD_QPN_MASK)
			return srd_pkt_bad(t, "rail qpn", rail.qpn);
		if (rail.qkey & ~SRD_QKEY_MASK)
			return srd_pkt_bad(t, "rail qkey", rail.qkey);
	}
	return 0;
}

static int srd_pkt_check_hello(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_hello *h = buf;
	const char *t = "HELLO";
	uint64_t bytes;
	int ret = srd_pkt_check_rails(h, len);

	if (ret)
		return ret;
	if (h->name[0] != SRD_EP_NAME_VERSION)
		return srd_pkt_bad(t, "name version", h->name[0]);
	if (h->sender_id == SRD_PEER_ID_NONE)
		return srd_pkt_bad(t, "sender_id", h->sender_id);
	if (!(h->features & SRD_FEAT_DATA_RING)) {
		if (h->ring_addr || h->ring_key || h->ring_slots ||
		    h->ring_slot_size)
			return srd_pkt_bad(t, "ring_* without DATA_RING",
					   h->ring_addr);
		return 0;
	}
	if (!h->ring_slots)
		return srd_pkt_bad(t, "ring_slots", h->ring_slots);
	if (!h->ring_slot_size)
		return srd_pkt_bad(t, "ring_slot_size", h->ring_slot_size);
	bytes = (uint64_t)h->ring_slots * h->ring_slot_size;
	if (srd_pkt_exceeds(h->ring_addr, bytes, UINT64_MAX))
		return srd_pkt_bad(t, "ring_addr + ring size", h->ring_addr);
	return 0;
}

static int srd_pkt_check_msg_common(const struct srd_pkt_msg *m, size_t len,
				    uint64_t max, const char *t)
{
	if (m->seg_len != len - sizeof(*m))
		return srd_pkt_bad(t, "seg_len vs packet length", m->seg_len);
	if (m->total_len > max)
		return srd_pkt_bad(t, "total_len", m->total_len);
	if (!(m->base.flags & SRD_PKT_F_TAGGED) && m->tag)
		return srd_pkt_bad(t, "tag without TAGGED", m->tag);
	if (!(m->base.flags & SRD_PKT_F_CQ_DATA) && m->cq_data)
		return srd_pkt_bad(t, "cq_data without CQ_DATA", m->cq_data);
	return 0;
}

static int srd_pkt_check_eager(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_msg *m = buf;
	int ret = srd_pkt_check_msg_common(m, len, max, "EAGER");

	if (ret)
		return ret;
	if (m->offset)
		return srd_pkt_bad("EAGER", "offset", m->offset);
	if (m->total_len != m->seg_len)
		return srd_pkt_bad("EAGER", "total_len vs seg_len",
				   m->total_len);
	return 0;
}

static int srd_pkt_check_medium(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_msg *m = buf;
	int ret = srd_pkt_check_msg_common(m, len, max, "MEDIUM");

	if (ret)
		return ret;
	if (!m->seg_len)
		return srd_pkt_bad("MEDIUM", "seg_len", 0);
	if (srd_pkt_exceeds(m->offset, m->seg_len, m->total_len))
		return srd_pkt_bad("MEDIUM", "offset + seg_len vs total_len",
				   m->offset);
	return 0;
}

static int srd_pkt_check_rts_iovs(const struct srd_pkt_msg *m)
{
	const uint8_t *p = srd_pkt_rts_iovs(m->base.flags,
					    (const uint8_t *)(m + 1));
	size_t n = srd_pkt_rts_iov_count(m->base.flags,
					 (const uint8_t *)(m + 1), m->seg_len);
	size_t i;
	struct srd_pkt_iov iov;
	uint64_t sum = 0;

	for (i = 0; i < n; i++) {
		/* The payload follows a 48-byte header: aligned, but copy
		 * anyway so no caller ever depends on that. */
		memcpy(&iov, p + i * sizeof(iov), sizeof(iov));
		if (srd_pkt_exceeds(iov.addr, iov.len, UINT64_MAX))
			return srd_pkt_bad("LONG_RTS", "iov addr + len",
					   iov.addr);
		if (srd_pkt_exceeds(sum, iov.len, m->total_len))
			return srd_pkt_bad("LONG_RTS", "iov len sum",
					   iov.len);
		sum += iov.len;
	}
	if (sum != m->total_len)
		return srd_pkt_bad("LONG_RTS", "total_len vs iov lens",
				   m->total_len);
	return 0;
}

/* A striped LONG_RTS: rails and iov_count in range and seg_len exactly
 * what they say, then the iovs as in any LONG_RTS. */
static int srd_pkt_check_stripe(const struct srd_pkt_msg *m)
{
	const struct srd_pkt_stripe *st = (const void *)(m + 1);

	if (m->seg_len < sizeof(*st))
		return srd_pkt_bad("LONG_RTS", "seg_len (no stripe)",
				   m->seg_len);
	if (st->rails < 2 || st->rails > SRD_PKT_RAILS_MAX)
		return srd_pkt_bad("LONG_RTS", "rails", st->rails);
	if (!st->iov_count || st->iov_count > SRD_PKT_IOV_MAX)
		return srd_pkt_bad("LONG_RTS", "iov_count", st->iov_count);
	if (st->reserved || st->reserved2)
		return srd_pkt_bad("LONG_RTS", "stripe reserved", st->reserved);
	if (m->seg_len != srd_pkt_stripe_len(st->rails, st->iov_count))
		return srd_pkt_bad("LONG_RTS", "seg_len vs rails, iov_count",
				   m->seg_len);
	return srd_pkt_check_rts_iovs(m);
}

static int srd_pkt_check_long_rts(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_msg *m = buf;
	int ret = srd_pkt_check_msg_common(m, len, max, "LONG_RTS");
	size_t n;

	if (ret)
		return ret;
	if (m->offset)
		return srd_pkt_bad("LONG_RTS", "offset", m->offset);
	if (m->base.flags & SRD_PKT_F_RAILS)
		return srd_pkt_check_stripe(m);
	n = m->seg_len / sizeof(struct srd_pkt_iov);
	if (m->seg_len % sizeof(struct srd_pkt_iov) || !n ||
	    n > SRD_PKT_IOV_MAX)
		return srd_pkt_bad("LONG_RTS", "iov_count (seg_len)",
				   m->seg_len);
	return srd_pkt_check_rts_iovs(m);
}

static int srd_pkt_check_cts_rts(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_msg *m = buf;
	int ret = srd_pkt_check_msg_common(m, len, max, "CTS_RTS");

	if (ret)
		return ret;
	if (m->offset)
		return srd_pkt_bad("CTS_RTS", "offset", m->offset);
	if (m->seg_len > m->total_len)
		return srd_pkt_bad("CTS_RTS", "seg_len vs total_len",
				   m->seg_len);
	return 0;
}

static int srd_pkt_check_ctrl_common(const struct srd_pkt_ctrl *c,
				     const char *t)
{
	if (!srd_pkt_status_ok(c->status))
		return srd_pkt_bad(t, "status", (uint32_t)c->status);
	if (c->reserved)
		return srd_pkt_bad(t, "reserved", c->reserved);
	return 0;
}

static int srd_pkt_check_read_done(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_ctrl *c = buf;
	int ret = srd_pkt_check_ctrl_common(c, "READ_DONE");

	if (ret)
		return ret;
	if (c->offset)
		return srd_pkt_bad("READ_DONE", "offset", c->offset);
	if (c->len > max)
		return srd_pkt_bad("READ_DONE", "len", c->len);
	return 0;
}

static int srd_pkt_check_cts(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_ctrl *c = buf;
	int ret = srd_pkt_check_ctrl_common(c, "CTS");

	if (ret)
		return ret;
	if (c->status)
		return srd_pkt_bad("CTS", "status", (uint32_t)c->status);
	if (!c->len || srd_pkt_exceeds(c->offset, c->len, max))
		return srd_pkt_bad("CTS", "offset + len", c->len);
	return 0;
}

static int srd_pkt_check_data(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_data *d = buf;

	if (!d->seg_len || d->seg_len != len - sizeof(*d))
		return srd_pkt_bad("DATA", "seg_len vs packet length",
				   d->seg_len);
	if (srd_pkt_exceeds(d->offset, d->seg_len, max))
		return srd_pkt_bad("DATA", "offset + seg_len", d->offset);
	return 0;
}

static int srd_pkt_check_rma_common(const struct srd_pkt_rma *r,
				    const char *t)
{
	if (!(r->base.flags & SRD_PKT_F_CQ_DATA) && r->cq_data)
		return srd_pkt_bad(t, "cq_data without CQ_DATA", r->cq_data);
	if (r->reserved)
		return srd_pkt_bad(t, "reserved", r->reserved);
	return 0;
}

static int srd_pkt_check_write(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_rma *r = buf;
	int ret = srd_pkt_check_rma_common(r, "WRITE");

	if (ret)
		return ret;
	if (r->seg_len != len - sizeof(*r))
		return srd_pkt_bad("WRITE", "seg_len vs packet length",
				   r->seg_len);
	if (r->len > max)
		return srd_pkt_bad("WRITE", "len", r->len);
	if (srd_pkt_exceeds(r->offset, r->seg_len, r->len))
		return srd_pkt_bad("WRITE", "offset + seg_len vs len",
				   r->offset);
	if (srd_pkt_exceeds(r->addr, r->len, UINT64_MAX))
		return srd_pkt_bad("WRITE", "addr + len", r->addr);
	if (!(r->base.flags & SRD_PKT_F_LAST) && r->cq_data)
		return srd_pkt_bad("WRITE", "cq_data before LAST", r->cq_data);
	return 0;
}

static int srd_pkt_check_read_req(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_rma *r = buf;
	int ret = srd_pkt_check_rma_common(r, "READ_REQ");

	if (ret)
		return ret;
	if (r->seg_len || r->offset)
		return srd_pkt_bad("READ_REQ", "seg_len/offset", r->seg_len);
	if (r->len > max)
		return srd_pkt_bad("READ_REQ", "len", r->len);
	if (srd_pkt_exceeds(r->addr, r->len, UINT64_MAX))
		return srd_pkt_bad("READ_REQ", "addr + len", r->addr);
	return 0;
}

static int srd_pkt_check_resp_common(const struct srd_pkt_resp *r,
				     size_t len, const char *t)
{
	if (!srd_pkt_status_ok(r->status))
		return srd_pkt_bad(t, "status", (uint32_t)r->status);
	if (r->reserved)
		return srd_pkt_bad(t, "reserved", r->reserved);
	if (r->seg_len != len - sizeof(*r))
		return srd_pkt_bad(t, "seg_len vs packet length", r->seg_len);
	if (r->status && (r->seg_len || r->offset))
		return srd_pkt_bad(t, "payload with an error status",
				   r->seg_len);
	return 0;
}

static int srd_pkt_check_read_resp(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_resp *r = buf;
	int ret = srd_pkt_check_resp_common(r, len, "READ_RESP");

	if (ret)
		return ret;
	if (srd_pkt_exceeds(r->offset, r->seg_len, max))
		return srd_pkt_bad("READ_RESP", "offset + seg_len", r->offset);
	return 0;
}

static int srd_pkt_check_rma_ack(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_resp *r = buf;
	int ret = srd_pkt_check_resp_common(r, len, "RMA_ACK");

	if (ret)
		return ret;
	if (r->seg_len || r->offset)
		return srd_pkt_bad("RMA_ACK", "seg_len/offset", r->seg_len);
	return 0;
}

static int srd_pkt_check_atomic_resp(const void *buf, size_t len,
				     uint64_t max)
{
	const struct srd_pkt_resp *r = buf;
	int ret = srd_pkt_check_resp_common(r, len, "ATOMIC_RESP");

	if (ret)
		return ret;
	if (r->offset)
		return srd_pkt_bad("ATOMIC_RESP", "offset", r->offset);
	return 0;
}

/* Operand bytes an ATOMIC_REQ must carry after its header. */
static uint64_t srd_pkt_atomic_payload(const struct srd_pkt_atomic *a,
				       size_t dtsize)
{
	uint64_t one = (uint64_t)a->count * dtsize;

	if (a->kind == UTIL_ATOMIC_COMPARE)
		return 2 * one;
	return a->op == FI_ATOMIC_READ ? 0 : one;
}

static int srd_pkt_check_atomic_req(const void *buf, size_t len, uint64_t max)
{
	const struct srd_pkt_atomic *a = buf;
	const char *t = "ATOMIC_REQ";
	size_t dtsize;

	if (!(a->base.flags & SRD_PKT_F_CQ_DATA) && a->cq_data)
		return srd_pkt_bad(t, "cq_data without CQ_DATA", a->cq_data);
	if (a->reserved)
		return srd_pkt_bad(t, "reserved", a->reserved);
	if (a->kind > UTIL_ATOMIC_COMPARE)
		return srd_pkt_bad(t, "kind", a->kind);
	if (a->op >= FI_ATOMIC_OP_LAST)
		return srd_pkt_bad(t, "op", a->op);
	dtsize = util_atomic_datatype_size(a->datatype);
	if (a->datatype >= FI_DATATYPE_LAST || !dtsize)
		return srd_pkt_bad(t, "datatype", a->datatype);
	if (util_atomic_kind_valid(a->kind, a->op, a->datatype))
		return srd_pkt_bad(t, "op for this kind/datatype", a->op);
	if (!a->count)
		return srd_pkt_bad(t, "count", 0);
	if (srd_pkt_atomic_payload(a, dtsize) != len - sizeof(*a))
		return srd_pkt_bad(t, "count * datatype size vs length",
				   a->count);
	if (srd_pkt_exceeds(a->addr, (uint64_t)a->count * dtsize,
			    UINT64_MAX))
		return srd_pkt_bad(t, "addr + count * size", a->addr);
	return 0;
}

int srd_pkt_atomic_answer_check(const struct srd_pkt_atomic *a,
				size_t pkt_size)
{
	uint64_t bytes = (uint64_t)a->count *
			 util_atomic_datatype_size(a->datatype);

	if (a->kind == UTIL_ATOMIC_WRITE ||
	    (pkt_size >= sizeof(struct srd_pkt_resp) &&
	     bytes <= pkt_size - sizeof(struct srd_pkt_resp)))
		return 0;
	WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
		"refusing ATOMIC_REQ: %llu bytes of old values do not fit an "
		"answer of %zu bytes\n", (unsigned long long)bytes, pkt_size);
	return -FI_EMSGSIZE;
}

static const struct srd_pkt_check srd_pkt_checks[SRD_PKT_TYPE_MAX] = {
	[SRD_PKT_HELLO] = { "HELLO", sizeof(struct srd_pkt_hello), 0,
			    srd_pkt_check_hello },
	[SRD_PKT_HELLO_ACK] = { "HELLO_ACK", sizeof(struct srd_pkt_hello), 0,
				srd_pkt_check_hello },
	[SRD_PKT_EAGER] = { "EAGER", sizeof(struct srd_pkt_msg),
			    SRD_PKT_FLAGS_MSG, srd_pkt_check_eager },
	[SRD_PKT_MEDIUM] = { "MEDIUM", sizeof(struct srd_pkt_msg),
			     SRD_PKT_FLAGS_MSG, srd_pkt_check_medium },
	[SRD_PKT_LONG_RTS] = { "LONG_RTS", sizeof(struct srd_pkt_msg),
			       SRD_PKT_FLAGS_MSG | SRD_PKT_F_RAILS,
			       srd_pkt_check_long_rts },
	[SRD_PKT_READ_DONE] = { "READ_DONE", sizeof(struct srd_pkt_ctrl), 0,
				srd_pkt_check_read_done },
	[SRD_PKT_CTS_RTS] = { "CTS_RTS", sizeof(struct srd_pkt_msg),
			      SRD_PKT_FLAGS_MSG, srd_pkt_check_cts_rts },
	[SRD_PKT_CTS] = { "CTS", sizeof(struct srd_pkt_ctrl), 0,
			  srd_pkt_check_cts },
	[SRD_PKT_DATA] = { "DATA", sizeof(struct srd_pkt_data), 0,
			   srd_pkt_check_data },
	[SRD_PKT_WRITE] = { "WRITE", sizeof(struct srd_pkt_rma),
			    SRD_PKT_FLAGS_WRITE, srd_pkt_check_write },
	[SRD_PKT_READ_REQ] = { "READ_REQ", sizeof(struct srd_pkt_rma), 0,
			       srd_pkt_check_read_req },
	[SRD_PKT_READ_RESP] = { "READ_RESP", sizeof(struct srd_pkt_resp), 0,
				srd_pkt_check_read_resp },
	[SRD_PKT_ATOMIC_REQ] = { "ATOMIC_REQ", sizeof(struct srd_pkt_atomic),
				 SRD_PKT_F_CQ_DATA, srd_pkt_check_atomic_req },
	[SRD_PKT_ATOMIC_RESP] = { "ATOMIC_RESP", sizeof(struct srd_pkt_resp),
				  0, srd_pkt_check_atomic_resp },
	[SRD_PKT_RMA_ACK] = { "RMA_ACK", sizeof(struct srd_pkt_resp), 0,
			      srd_pkt_check_rma_ack },
};

static const struct srd_pkt_check *srd_pkt_check_of(unsigned int type)
{
	if (!type || type >= SRD_PKT_TYPE_MAX)
		return NULL;
	return &srd_pkt_checks[type];
}

size_t srd_pkt_hdr_size(unsigned int type)
{
	const struct srd_pkt_check *c = srd_pkt_check_of(type);

	return c ? c->hdr : 0;
}

const char *srd_pkt_type_str(unsigned int type)
{
	const struct srd_pkt_check *c = srd_pkt_check_of(type);

	return c ? c->name : "unknown";
}

/* Packets without payload are exactly their header; payload packets are
 * checked against seg_len by their own check (HELLO: against the rails it
 * announces). */
static bool srd_pkt_has_payload(unsigned int type)
{
	return type == SRD_PKT_HELLO || type == SRD_PKT_HELLO_ACK ||
	       type == SRD_PKT_EAGER || type == SRD_PKT_MEDIUM ||
	       type == SRD_PKT_LONG_RTS || type == SRD_PKT_CTS_RTS ||
	       type == SRD_PKT_DATA || type == SRD_PKT_WRITE ||
	       type == SRD_PKT_READ_RESP || type == SRD_PKT_ATOMIC_REQ ||
	       type == SRD_PKT_ATOMIC_RESP;
}

static int srd_pkt_check_base(const struct srd_pkt_base *b, size_t len,
			      const struct srd_pkt_check *c)
{
	if (len < c->hdr)
		return srd_pkt_bad(c->name, "length (short header)", len);
	if (!srd_pkt_has_payload(b->type) && len != c->hdr)
		return srd_pkt_bad(c->name, "length (trailing bytes)", len);
	if (b->flags & ~c->flags)
		return srd_pkt_bad(c->name, "flags", b->flags);
	if (b->type != SRD_PKT_HELLO && b->peer_id == SRD_PEER_ID_NONE)
		return srd_pkt_bad(c->name, "peer_id", b->peer_id);
	return 0;
}

int srd_pkt_validate(const void *buf, size_t len, uint64_t max_msg_size)
{
	const struct srd_pkt_base *b = buf;
	const struct srd_pkt_check *c;
	int ret;

	if (WEFT_UNLIKELY(!buf || len < sizeof(*b)))
		return srd_pkt_bad("any", "length (short base header)", len);
	if (WEFT_UNLIKELY(b->version != SRD_PROTO_VERSION))
		return srd_pkt_bad("any", "version", b->version);
	c = srd_pkt_check_of(b->type);
	if (WEFT_UNLIKELY(!c))
		return srd_pkt_bad("any", "type", b->type);
	ret = srd_pkt_check_base(b, len, c);
	if (!ret)
		ret = c->check(buf, len, max_msg_size);
	return ret ? ret : b->type;
}
