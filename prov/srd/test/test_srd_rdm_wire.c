/* SPDX-License-Identifier: MIT */
/*
 * The srd RDM endpoint against a hand-driven peer: a raw SRD QP of the
 * device layer (softsrd) that speaks the wire format directly. It checks
 * the handshake from an unknown address, that malformed or forged packets
 * are dropped without a completion (and the endpoint keeps working), that
 * a flood of them gets a few warning lines, not one each, and that
 * out-of-order messages and MEDIUM segments are matched in msg_id order
 * and reassembled by offset.
 */
#include "test_srd_rdm_common.h"
#include "../src/dev/srd_dev.h"
#include "../src/rdm/srd_rdm.h"
#include "../src/rdm/srd_pkt.h"
#include "../soft/softsrd.h"
#include "weft/util_atomic.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../../core/test/capture.h"

#define SLOTS 16
#define SLOT 9216

struct raw {
	struct srd_dev *dev;
	struct srd_dev_cq *cq;
	struct srd_dev_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;			/* SLOTS send slots, then SLOTS recv */
	struct srd_dev_ah *ah;
	struct srd_ep_name peer;	/* the endpoint under test */
	struct srd_ep_name name;
	uint32_t id_at_peer;		/* what to put in base.peer_id */
	unsigned int slot;
	int sent, send_err, recvd;
	uint8_t last[512];
};

static void raw_on_send(struct srd_dev_cq *cq, const struct srd_dev_wc *wc,
			void *arg)
{
	((struct raw *)arg)->sent++;
}

static void raw_on_recv(struct srd_dev_cq *cq, const struct srd_dev_wc *wc,
			void *arg)
{
	struct raw *r = arg;
	size_t n = wc->byte_len < sizeof(r->last) ? wc->byte_len :
						    sizeof(r->last);

	memcpy(r->last, r->buf + (SLOTS + wc->wr_id) * SLOT, n);
	r->recvd++;
}

static void raw_on_error(struct srd_dev_cq *cq, const struct srd_dev_wc *wc,
			 void *arg)
{
	((struct raw *)arg)->send_err++;
}

static void raw_on_batch(struct srd_dev_cq *cq, int n, void *arg)
{
}

static const struct srd_dev_cq_ops raw_ops = {
	.on_wc = {
		[IBV_WC_SEND] = raw_on_send,
		[IBV_WC_RECV] = raw_on_recv,
	},
	.on_unknown = raw_on_error,
	.on_error = raw_on_error,
	.on_batch_end = raw_on_batch,
};

static void raw_post_recv(struct raw *r, uint64_t i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(r->buf + (SLOTS + i) * SLOT),
		.length = SLOT, .lkey = r->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	assert_int_equal(ibv_post_recv(r->qp->ibv_qp, &wr, &bad), 0);
}

static void raw_open(struct raw *r, const void *peer_name)
{
	struct srd_settings s;
	struct srd_dev_qp_attr qa = { .sq_depth = 64, .rq_depth = 64 };
	struct srd_dev_cq_attr ca = { .batch = 16, .depth = 256 };
	union ibv_gid gid;
	uint64_t i;

	memset(r, 0, sizeof(*r));
	srd_settings_default(&s);
	assert_int_equal(srd_dev_open(&softsrd_verbs_ops, NULL, &r->dev), 0);
	ca.arg = r;
	assert_int_equal(srd_dev_cq_open(r->dev, &ca, &raw_ops, &r->cq), 0);
	qa.send_cq = qa.recv_cq = r->cq->cq;
	assert_int_equal(srd_dev_qp_create(r->dev, &s, &qa, &r->qp), 0);
	srd_ep_name_build(r->qp, &r->name);
	r->buf = calloc(2 * SLOTS, SLOT);
	r->mr = r->dev->verbs->reg_mr(r->dev->pd, r->buf, 2 * SLOTS * SLOT,
				      IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(r->mr);
	memcpy(&r->peer, peer_name, sizeof(r->peer));
	memcpy(gid.raw, r->peer.gid, sizeof(gid.raw));
	assert_int_equal(srd_dev_ah_get(r->dev, &gid, &r->ah), 0);
	for (i = 0; i < SLOTS; i++)
		raw_post_recv(r, i);
	r->id_at_peer = SRD_PEER_ID_NONE;
}

static void raw_close(struct raw *r)
{
	srd_dev_ah_put(r->dev, r->ah);
	srd_dev_qp_destroy(r->qp);
	r->dev->verbs->dereg_mr(r->mr);
	srd_dev_cq_close(r->cq);
	srd_dev_close(r->dev);
	free(r->buf);
}

/* Send len bytes of pkt and wait until the device took it. */
static void raw_send(struct tfab *f, struct raw *r, const void *pkt,
		     size_t len)
{
	uint8_t *slot = r->buf + (r->slot++ % SLOTS) * SLOT;
	int want = r->sent + 1;
	long i;

	memcpy(slot, pkt, len);
	ibv_wr_start(r->qp->qpx);
	r->qp->qpx->wr_id = 1;
	r->qp->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(r->qp->qpx);
	ibv_wr_set_sge(r->qp->qpx, r->mr->lkey, (uintptr_t)slot,
		       (uint32_t)len);
	ibv_wr_set_ud_addr(r->qp->qpx, r->ah->ibv_ah, r->peer.qpn,
			   r->peer.qkey);
	assert_int_equal(ibv_wr_complete(r->qp->qpx), 0);
	for (i = 0; i < 1000000 && r->sent + r->send_err < want; i++) {
		srd_dev_cq_poll(r->cq);
		tfab_poll(f);
	}
	assert_int_equal(r->sent, want);
}

/* Let the endpoint under test handle what arrived. */
static void settle(struct tfab *f, struct raw *r)
{
	int i;

	for (i = 0; i < 3000; i++) {
		srd_dev_cq_poll(r->cq);
		tfab_poll(f);
	}
}

static void base_fill(struct srd_pkt_base *b, uint8_t type, uint16_t flags,
		      uint32_t peer_id)
{
	b->version = SRD_PROTO_VERSION;
	b->type = type;
	b->flags = flags;
	b->peer_id = peer_id;
}

static size_t hello_build(struct raw *r, uint8_t type, uint8_t *out,
			  const struct srd_ep_name *name)
{
	struct srd_pkt_hello h;

	memset(&h, 0, sizeof(h));
	base_fill(&h.base, type, 0, SRD_PEER_ID_NONE);
	memcpy(h.name, name, sizeof(h.name));
	h.sender_id = 5;
	memcpy(out, &h, sizeof(h));
	return sizeof(h);
}

static size_t msg_build(struct raw *r, uint8_t *out, uint8_t type,
			uint32_t msg_id, uint64_t total, uint64_t off,
			const uint8_t *payload, uint32_t seg)
{
	struct srd_pkt_msg m;

	memset(&m, 0, sizeof(m));
	base_fill(&m.base, type, SRD_PKT_F_TAGGED, r->id_at_peer);
	m.msg_id = msg_id;
	m.tag = 0x77;
	m.total_len = total;
	m.offset = off;
	m.seg_len = seg;
	memcpy(out, &m, sizeof(m));
	memcpy(out + sizeof(m), payload, seg);
	return sizeof(m) + seg;
}

/* The handshake from an address the endpoint's AV does not have. */
static void raw_handshake(struct tfab *f, struct raw *r)
{
	uint8_t pkt[256];
	struct srd_pkt_hello ack;

	raw_send(f, r, pkt, hello_build(r, SRD_PKT_HELLO, pkt, &r->name));
	settle(f, r);
	assert_int_equal(r->recvd, 1);
	memcpy(&ack, r->last, sizeof(ack));
	assert_int_equal(ack.base.type, SRD_PKT_HELLO_ACK);
	assert_int_equal(ack.base.peer_id, 5);
	r->id_at_peer = ack.sender_id;
	raw_post_recv(r, 0);
}

static void test_forged_and_malformed_dropped(void **state)
{
	struct tfab f;
	struct raw r;
	uint8_t pkt[1024], payload[64];
	struct srd_ep_name other;
	struct srd_pkt_ctrl c;
	struct srd_pkt_iov iov = { .addr = 0x1000, .len = 10, .key = 1 };
	size_t n;

	tfab_open(&f, 0, true);
	raw_open(&r, f.b.name);
	memset(payload, 0xab, sizeof(payload));

	/* before any handshake: short garbage, unknown peer ids */
	raw_send(&f, &r, "xyz", 3);
	n = msg_build(&r, pkt, SRD_PKT_EAGER, 0, 8, 0, payload, 8);
	((struct srd_pkt_base *)pkt)->peer_id = 999;
	raw_send(&f, &r, pkt, n);
	((struct srd_pkt_base *)pkt)->peer_id = 0;	/* a's id, not ours */
	raw_send(&f, &r, pkt, n);
	/* HELLO naming another QP; HELLO_ACK from a stranger */
	other = r.name;
	other.qpn ^= 1;
	raw_send(&f, &r, pkt, hello_build(&r, SRD_PKT_HELLO, pkt, &other));
	raw_send(&f, &r, pkt, hello_build(&r, SRD_PKT_HELLO_ACK, pkt, &r.name));
	settle(&f, &r);
	assert_int_equal(r.recvd, 0);

	raw_handshake(&f, &r);

	/* lengths that do not add up */
	n = msg_build(&r, pkt, SRD_PKT_EAGER, 0, 9, 0, payload, 8);
	raw_send(&f, &r, pkt, n);
	n = msg_build(&r, pkt, SRD_PKT_MEDIUM, 0, 16, 12, payload, 8);
	raw_send(&f, &r, pkt, n);
	n = msg_build(&r, pkt, SRD_PKT_LONG_RTS, 0, 11, 0, (uint8_t *)&iov,
		      sizeof(iov));
	raw_send(&f, &r, pkt, n);
	/* a READ_DONE for nothing, a CTS */
	memset(&c, 0, sizeof(c));
	base_fill(&c.base, SRD_PKT_READ_DONE, 0, r.id_at_peer);
	c.tx_id = 12345;
	raw_send(&f, &r, &c, sizeof(c));
	c.base.type = SRD_PKT_CTS;
	c.len = 8;
	raw_send(&f, &r, &c, sizeof(c));
	settle(&f, &r);
	assert_int_equal(f.b.n, 0);

	/* the endpoint still works, for a and for us */
	{
		char in[16];
		int ctx;

		assert_int_equal(fi_trecv(f.b.ep, in, sizeof(in), NULL,
					  FI_ADDR_UNSPEC, 0x77, 0, &ctx), 0);
		n = msg_build(&r, pkt, SRD_PKT_EAGER, 0, 6, 0,
			      (const uint8_t *)"hello", 6);
		raw_send(&f, &r, pkt, n);
		tfab_wait(&f, &f.b, 1);
		struct tent t = tfab_take(&f.b);

		assert_int_equal(t.err, 0);
		assert_int_equal(t.src, FI_ADDR_NOTAVAIL);
		assert_string_equal(in, "hello");
	}
	raw_close(&r);
	tfab_close(&f);
}

/* The forged and malformed packets above, again and again, from a peer
 * that did the handshake: every one is dropped, the warnings are a few
 * lines per kind and FI_LOG_INTERVAL. */
#define FLOOD_ROUNDS 1000
#define FLOOD_KINDS 8

#define FLOOD_INTERVAL_MS 500	/* FI_LOG_INTERVAL, set in main */

static uint64_t flood_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_forged_flood(void **state)
{
	struct tfab f;
	struct raw r;
	uint8_t pkt[1024], payload[64];
	struct srd_ep_name other;
	struct srd_pkt_ctrl c;
	struct capture cap;
	const char *out;
	uint64_t t0;
	int i, lines, bound;
	size_t n;

	(void)state;
	tfab_open(&f, 0, true);
	raw_open(&r, f.b.name);
	memset(payload, 0xab, sizeof(payload));
	raw_handshake(&f, &r);
	other = r.name;
	other.qpn ^= 1;
	/* The tests before warned from the same places: a fresh interval. */
	usleep((FLOOD_INTERVAL_MS + 100) * 1000);
	t0 = flood_now_ms();
	capture_start(&cap);
	for (i = 0; i < FLOOD_ROUNDS; i++) {
		raw_send(&f, &r, "xyz", 3);
		n = msg_build(&r, pkt, SRD_PKT_EAGER, 0, 8, 0, payload, 8);
		((struct srd_pkt_base *)pkt)->peer_id = 999;
		raw_send(&f, &r, pkt, n);
		((struct srd_pkt_base *)pkt)->peer_id = 0;
		raw_send(&f, &r, pkt, n);
		raw_send(&f, &r, pkt,
			 hello_build(&r, SRD_PKT_HELLO, pkt, &other));
		n = msg_build(&r, pkt, SRD_PKT_EAGER, 0, 9, 0, payload, 8);
		raw_send(&f, &r, pkt, n);
		n = msg_build(&r, pkt, SRD_PKT_MEDIUM, 0, 16, 12, payload, 8);
		raw_send(&f, &r, pkt, n);
		memset(&c, 0, sizeof(c));
		base_fill(&c.base, SRD_PKT_CTS, 0, r.id_at_peer);
		c.tx_id = 12345 + (uint32_t)i;
		c.len = 8;
		raw_send(&f, &r, &c, sizeof(c));
		base_fill(&c.base, SRD_PKT_READ_DONE, 0, r.id_at_peer);
		raw_send(&f, &r, &c, sizeof(c));
	}
	settle(&f, &r);
	out = capture_stop(&cap);
	lines = capture_count(out, "libfabric:");
	bound = FLOOD_KINDS *
		(int)(2 + (flood_now_ms() - t0) / FLOOD_INTERVAL_MS);
	print_message("%d forged packets: %d warning lines (bound %d)\n",
		      FLOOD_ROUNDS * FLOOD_KINDS, lines, bound);
	if (lines > bound)
		print_message("first lines:\n%.1500s\n", out);
	assert_true(lines > 0);
	assert_true(lines <= bound);
	capture_free(&cap);
	assert_int_equal(f.b.n, 0);
	raw_close(&r);
	tfab_close(&f);
}

/* Messages 2, 1, then 0 in three MEDIUM segments sent backwards with a
 * late duplicate: matched 0, 1, 2 in that order and reassembled. */
static void test_reorder_and_reassembly(void **state)
{
	struct tfab f;
	struct raw r;
	uint8_t pkt[2048], src[300], dst[3][300];
	int ctx[3], i;
	size_t n;

	tfab_open(&f, 0, true);
	raw_open(&r, f.b.name);
	raw_handshake(&f, &r);
	tfab_fill(src, sizeof(src), 3);

	n = msg_build(&r, pkt, SRD_PKT_EAGER, 2, 20, 0, src + 200, 20);
	raw_send(&f, &r, pkt, n);
	n = msg_build(&r, pkt, SRD_PKT_EAGER, 1, 30, 0, src + 100, 30);
	raw_send(&f, &r, pkt, n);
	settle(&f, &r);
	for (i = 0; i < 3; i++)
		assert_int_equal(fi_trecv(f.b.ep, dst[i], sizeof(dst[i]), NULL,
					  FI_ADDR_UNSPEC, 0x77, 0, &ctx[i]), 0);
	settle(&f, &r);
	assert_int_equal(f.b.n, 0);	/* 1 and 2 wait for 0 */
	n = msg_build(&r, pkt, SRD_PKT_MEDIUM, 0, 300, 200, src + 200, 100);
	raw_send(&f, &r, pkt, n);
	n = msg_build(&r, pkt, SRD_PKT_MEDIUM, 0, 300, 100, src + 100, 100);
	raw_send(&f, &r, pkt, n);
	settle(&f, &r);
	/* 0 is matched (to the first receive) and still arriving; 1 and 2
	 * followed it and are complete */
	assert_int_equal(f.b.n, 2);
	n = msg_build(&r, pkt, SRD_PKT_MEDIUM, 0, 300, 0, src, 100);
	raw_send(&f, &r, pkt, n);
	tfab_wait(&f, &f.b, 3);
	/* a duplicate of a finished message finds no transfer: dropped
	 * (SRD itself delivers once; duplicates of a message still
	 * arriving are not detected) */
	raw_send(&f, &r, pkt, n);
	settle(&f, &r);
	assert_int_equal(f.b.n, 3);
	for (i = 0; i < 3; i++) {
		struct tent t = tfab_take(&f.b);
		int k = (int)((int *)t.e.op_context - ctx);

		assert_int_equal(t.err, 0);
		assert_true(k >= 0 && k < 3);
		assert_int_equal(t.e.len, k == 0 ? 300 : k == 1 ? 30 : 20);
	}
	tfab_check(dst[0], 300, 3);
	assert_memory_equal(dst[1], src + 100, 30);
	assert_memory_equal(dst[2], src + 200, 20);
	raw_close(&r);
	tfab_close(&f);
}

/* The endpoint under test with FI_ATOMIC and a buffer registered for
 * remote reads and writes (key, base: what a peer names it by). */
static void atomic_open(struct tfab *f, uint8_t *mem, size_t len,
			struct fid_mr **mr, uint64_t *key, uint64_t *base)
{
	struct fi_info *hints = fi_allocinfo();

	memset(f, 0, sizeof(*f));
	assert_non_null(hints);
	hints->caps = FI_MSG | FI_TAGGED | FI_ATOMIC;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_LOCAL;
	hints->fabric_attr->prov_name = strdup("srd");
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				    &f->info), 0);
	fi_freeinfo(hints);
	tfab_open_info(f, FI_MSG | FI_TAGGED | FI_ATOMIC, true);
	assert_int_equal(fi_mr_reg(f->domain, mem, len,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				   mr, NULL), 0);
	*key = fi_mr_key(*mr);
	*base = f->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
		(uintptr_t)mem : 0;
}

static struct srd_pkt_resp atomic_ask(struct tfab *f, struct raw *r,
				      uint32_t tx_id, uint64_t addr,
				      uint64_t key, uint32_t count)
{
	struct srd_pkt_atomic q;
	struct srd_pkt_resp resp;
	int want = r->recvd + 1;

	memset(&q, 0, sizeof(q));
	base_fill(&q.base, SRD_PKT_ATOMIC_REQ, 0, r->id_at_peer);
	q.tx_id = tx_id;
	q.op = FI_ATOMIC_READ;
	q.datatype = FI_UINT64;
	q.kind = UTIL_ATOMIC_FETCH;
	q.addr = addr;
	q.key = key;
	q.count = count;
	raw_send(f, r, &q, sizeof(q));
	settle(f, r);
	assert_int_equal(r->recvd, want);
	raw_post_recv(r, 0);
	memcpy(&resp, r->last, sizeof(resp));
	assert_int_equal(resp.base.type, SRD_PKT_ATOMIC_RESP);
	assert_int_equal(resp.tx_id, tx_id);
	return resp;
}

/* A fetch READ carries no operands, so a 40-byte request may ask for more
 * old values than one answer holds: it gets -FI_EMSGSIZE and the target
 * writes nothing past its packet buffer (it once wrote them all). */
static void test_atomic_answer_too_big(void **state)
{
	enum { N = 8192 };
	uint64_t *mem = calloc(N, sizeof(uint64_t)), key, base;
	struct srd_pkt_resp resp;
	struct fid_mr *mr;
	struct tfab f;
	struct raw r;

	assert_non_null(mem);
	for (size_t i = 0; i < N; i++)
		mem[i] = 1000 + i;
	atomic_open(&f, (uint8_t *)mem, N * sizeof(uint64_t), &mr, &key,
		    &base);
	raw_open(&r, f.b.name);
	raw_handshake(&f, &r);

	resp = atomic_ask(&f, &r, 7, base, key, N);
	assert_int_equal(resp.status, -FI_EMSGSIZE);
	assert_int_equal(resp.seg_len, 0);
	/* the largest answer that fits one packet is still served */
	resp = atomic_ask(&f, &r, 8, base + 8, key,
			  (uint32_t)((f.mtu - sizeof(resp)) / 8));
	assert_int_equal(resp.status, 0);
	assert_int_equal(resp.seg_len, (f.mtu - sizeof(resp)) / 8 * 8);
	assert_memory_equal(r.last + sizeof(resp), mem + 1,
			    sizeof(r.last) - sizeof(resp));
	for (size_t i = 0; i < N; i++)
		assert_int_equal(mem[i], 1000 + i);

	raw_close(&r);
	assert_int_equal(fi_close(&mr->fid), 0);
	tfab_close(&f);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forged_and_malformed_dropped),
		cmocka_unit_test(test_forged_flood),
		cmocka_unit_test(test_reorder_and_reassembly),
		cmocka_unit_test(test_atomic_answer_too_big),
	};

	tfab_env();
	/* test_forged_flood counts warning lines: they must be on. */
	setenv("FI_LOG_LEVEL", "warn", 1);
	setenv("FI_LOG_INTERVAL", "500", 1);
	return cmocka_run_group_tests_name("srd_rdm_wire", tests, NULL, NULL);
}
