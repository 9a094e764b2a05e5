/* SPDX-License-Identifier: MIT */
/*
 * Poll on data: two srd endpoints in one process over softsrd with
 * FI_SRD_SOFT_IN_ORDER=TRING_ORDER (whole, 128 or none; one program per
 * value, since the device's answer is cached per process) and
 * FI_SRD_POLL_MODE=data. Small messages must go by RDMA write into the
 * receiver's ring (the ring counters say so), larger ones by send/recv,
 * in send order across both paths, byte for byte; credits must come back
 * so that a stream longer than the ring keeps using it; forged slots are
 * dropped. With in-order "none", data mode must fall back to completions.
 * TRING_SLOTS programs run it all with FI_SRD_RING_SLOTS set (8, 64), so
 * that streams wrap rings of other sizes, data checked byte for byte.
 */
#include "test_srd_rdm_common.h"
#include "../src/rdm/proto/srd_ring.h"
#include "weft/fi_ext_weft.h"

#include <stdlib.h>
#include <string.h>

#ifndef TRING_ORDER
#define TRING_ORDER "whole"
#endif
/* FI_SRD_RING_SLOTS for this program (its default when not set); at most
 * 64: the harness stashes TCQ_MAX completions and streams 8 rings' worth */
#ifndef TRING_SLOTS
#define TRING_SLOTS SRD_RING_SLOTS_DEFAULT
#endif
_Static_assert(8 * TRING_SLOTS <= TCQ_MAX, "TRING_SLOTS too large");

static bool tring_data(void)
{
	return strcmp(TRING_ORDER, "none") != 0;
}

static struct srd_ep *tep_srd(struct tep *e)
{
	return to_srd_ep(e->ep);
}

static struct srd_ring_stats *tstats(struct tep *e)
{
	struct srd_ep *ep = tep_srd(e);

	assert_non_null(ep->ring);
	return &ep->ring->stats;
}

/* e's ring state for its only peer. */
static struct srd_ring_peer *tring_peer(struct tep *e)
{
	struct srd_ep *ep = tep_srd(e);

	assert_int_equal(ep->peer_count, 1);
	assert_non_null(ep->peers[0]->ring);
	return ep->peers[0]->ring;
}

static void tsend(struct tfab *f, struct tep *from, const void *buf,
		  size_t len, bool tagged, uint64_t tag, void *ctx)
{
	ssize_t r = -FI_EAGAIN;
	long i;

	for (i = 0; i < 1000000 && r == -FI_EAGAIN; i++) {
		r = tagged ? fi_tsend(from->ep, buf, len, NULL, from->peer, tag,
				      ctx) :
			     fi_send(from->ep, buf, len, NULL, from->peer, ctx);
		if (r == -FI_EAGAIN)
			tfab_poll(f);
	}
	assert_int_equal(r, 0);
}

static void trecv(struct tep *to, void *buf, size_t len, bool tagged,
		  uint64_t tag, void *ctx)
{
	ssize_t r = tagged ? fi_trecv(to->ep, buf, len, NULL, to->peer, tag, 0,
				      ctx) :
			     fi_recv(to->ep, buf, len, NULL, to->peer, ctx);

	assert_int_equal(r, 0);
}

/* One round trip each way, so that both know the other's ring. */
static void twarm(struct tfab *f)
{
	uint8_t out = 7, in = 0;

	trecv(&f->b, &in, 1, false, 0, &in);
	tsend(f, &f->a, &out, 1, false, 0, &out);
	tfab_wait(f, &f->b, 1);
	tfab_wait(f, &f->a, 1);
	tfab_take(&f->b);
	tfab_take(&f->a);
	trecv(&f->a, &in, 1, false, 0, &in);
	tsend(f, &f->b, &out, 1, false, 0, &out);
	tfab_wait(f, &f->a, 1);
	tfab_wait(f, &f->b, 1);
	tfab_take(&f->b);
	tfab_take(&f->a);
	assert_int_equal(in, 7);
}

static void topen(struct tfab *f)
{
	tfab_open(f, FI_MSG | FI_TAGGED, true);
	twarm(f);
}

/* Largest payload a's messages to b carry through b's ring. */
static size_t tring_max(struct tfab *f)
{
	return tring_peer(&f->a)->tx_max - sizeof(struct srd_pkt_msg);
}

static int tget_int(struct tep *e, int opt)
{
	size_t len = sizeof(int);
	int v = -1;

	assert_int_equal(fi_getopt(&e->ep->fid, FI_OPT_ENDPOINT, opt, &v,
				   &len), 0);
	return v;
}

static void test_poll_mode(void **state)
{
	int want = tring_data() ? WEFT_POLL_DATA : WEFT_POLL_COMPLETION;
	struct tfab f;

	(void)state;
	topen(&f);
	assert_int_equal(tget_int(&f.a, FI_OPT_WEFT_POLL_MODE), want);
	assert_int_equal(tget_int(&f.b, FI_OPT_WEFT_POLL_MODE), want);
	if (!strcmp(TRING_ORDER, "whole"))
		assert_int_equal(tget_int(&f.a, FI_OPT_WEFT_WRITE_INORDER),
				 WEFT_INORDER_WHOLE_MSG | WEFT_INORDER_ALIGNED_128);
	else if (!strcmp(TRING_ORDER, "128"))
		assert_int_equal(tget_int(&f.a, FI_OPT_WEFT_WRITE_INORDER),
				 WEFT_INORDER_ALIGNED_128);
	else
		assert_int_equal(tget_int(&f.a, FI_OPT_WEFT_WRITE_INORDER), 0);
	assert_true(tring_data() == (tep_srd(&f.a)->ring != NULL));
	if (tring_data()) {
		assert_int_equal(tep_srd(&f.a)->ring->slots, TRING_SLOTS);
		twarm(&f);
		/* each side announced its own ring size to the other */
		assert_int_equal(tring_peer(&f.a)->slots, TRING_SLOTS);
		assert_int_equal(tring_peer(&f.a)->rslots, TRING_SLOTS);
		assert_int_equal(tring_peer(&f.b)->rslots, TRING_SLOTS);
	}
	tfab_close(&f);
}

/* FI_SRD_RING_SLOTS: a power of two in 2..4096, else the default with a
 * warning (read at each endpoint open). */
static void test_ring_slots_setting(void **state)
{
	static const struct {
		const char *v;
		uint32_t want;
	} cases[] = {
		{ "2", 2 }, { "8", 8 }, { "4096", 4096 },
		{ "0", SRD_RING_SLOTS_DEFAULT }, { "1", SRD_RING_SLOTS_DEFAULT },
		{ "48", SRD_RING_SLOTS_DEFAULT },
		{ "8192", SRD_RING_SLOTS_DEFAULT },
		{ "-4", SRD_RING_SLOTS_DEFAULT },
	};
	const char *saved = getenv("FI_SRD_RING_SLOTS");
	char *keep = saved ? strdup(saved) : NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("FI_SRD_RING_SLOTS", cases[i].v, 1);
		assert_int_equal(srd_ring_slots_setting(), cases[i].want);
	}
	unsetenv("FI_SRD_RING_SLOTS");
	assert_int_equal(srd_ring_slots_setting(), SRD_RING_SLOTS_DEFAULT);
	if (keep)
		setenv("FI_SRD_RING_SLOTS", keep, 1);
	free(keep);
}

/* FI_SRD_POLL_MODE=completion (set here through the parsed settings)
 * keeps even a capable device on completions. */
static void test_poll_mode_completion_forced(void **state)
{
	enum srd_poll_req saved = srd_settings.poll_mode;
	struct tfab f;

	(void)state;
	srd_settings.poll_mode = SRD_POLL_REQ_COMPLETION;
	tfab_open(&f, FI_MSG | FI_TAGGED, true);
	srd_settings.poll_mode = saved;
	assert_int_equal(tget_int(&f.a, FI_OPT_WEFT_POLL_MODE),
			 WEFT_POLL_COMPLETION);
	assert_null(tep_srd(&f.a)->ring);
	twarm(&f);
	assert_null(tep_srd(&f.b)->peers[0]->ring);
	tfab_close(&f);
}

/* Until e's credit returns have landed at the peer (a credit write's
 * completion means the data is placed there). */
static void twait_credits(struct tfab *f, struct tep *e)
{
	struct srd_ring_peer *rp = tring_peer(e);
	long i;

	for (i = 0; i < 1000000 && (rp->credit_inflight ||
				    rp->head - rp->returned >=
				    TRING_SLOTS / 2); i++)
		tfab_poll(f);
	assert_false(rp->credit_inflight);
}

/* Send sizes[i] from a to b, receives posted first (or after, for
 * unexpected), and check each byte; returns how many went by ring.
 * stream: every 8 sends, wait until b took them and its credits landed. */
static uint64_t tsizes_x(struct tfab *f, const size_t *sizes, int n,
			 bool tagged, bool unexpected, bool stream)
{
	uint64_t before = tring_data() ? tstats(&f->b)->rx_ring : 0;
	uint8_t **out = calloc((size_t)n, sizeof(*out));
	uint8_t **in = calloc((size_t)n, sizeof(*in));
	int i;

	assert_non_null(out);
	assert_non_null(in);
	for (i = 0; i < n; i++) {
		out[i] = malloc(sizes[i] + 1);
		in[i] = calloc(1, sizes[i] + 1);
		tfab_fill(out[i], sizes[i], (unsigned int)i + 1);
		if (!unexpected)
			trecv(&f->b, in[i], sizes[i], tagged, 5, in[i]);
	}
	for (i = 0; i < n; i++) {
		tsend(f, &f->a, out[i], sizes[i], tagged, 5, out[i]);
		if (stream && (i + 1) % 8 == 0) {
			tfab_wait(f, &f->b, i + 1);
			twait_credits(f, &f->b);
		}
	}
	if (unexpected) {
		tfab_wait(f, &f->a, n);
		for (i = 0; i < 200; i++)
			tfab_poll(f);
		assert_int_equal(f->b.n, 0);
		for (i = 0; i < n; i++)
			trecv(&f->b, in[i], sizes[i], tagged, 5, in[i]);
	}
	tfab_wait(f, &f->b, n);
	tfab_wait(f, &f->a, n);
	/* Completions may come out of order (a MEDIUM message completes when
	 * its last segment lands); matching order is what SAS promises, and
	 * message i's bytes in receive i show it. */
	for (i = 0; i < n; i++) {
		struct tent t = tfab_take(&f->b);
		int k;

		for (k = 0; k < n && t.e.op_context != in[k]; k++)
			;
		assert_true(k < n);
		assert_int_equal(t.err, 0);
		assert_int_equal(t.e.len, sizes[k]);
		assert_int_equal(t.src, f->b.peer);
		assert_int_equal(tfab_take(&f->a).err, 0);
	}
	for (i = 0; i < n; i++) {
		tfab_check(in[i], sizes[i], (unsigned int)i + 1);
		free(out[i]);
		free(in[i]);
	}
	free(out);
	free(in);
	return tring_data() ? tstats(&f->b)->rx_ring - before : 0;
}

static uint64_t tsizes(struct tfab *f, const size_t *sizes, int n,
		       bool tagged, bool unexpected)
{
	return tsizes_x(f, sizes, n, tagged, unexpected, false);
}

static void tsizes_case(bool tagged, bool unexpected)
{
	struct tfab f;
	size_t max, sizes[7];
	uint64_t ring;

	topen(&f);
	max = tring_data() ? tring_max(&f) : 256;
	sizes[0] = 0;
	sizes[1] = 1;
	sizes[2] = 64;
	sizes[3] = max - 1;
	sizes[4] = max;
	sizes[5] = max + 1;	/* one byte too many: send/recv */
	sizes[6] = 3000;
	ring = tsizes(&f, sizes, 7, tagged, unexpected);
	if (tring_data()) {
		assert_int_equal(ring, 5);
		assert_int_equal(tstats(&f.a)->tx_ring, 5);
		assert_int_equal(tstats(&f.b)->rx_bad, 0);
	}
	tfab_close(&f);
}

static void test_sizes_msg(void **state)
{
	(void)state;
	tsizes_case(false, false);
}

static void test_sizes_tagged(void **state)
{
	(void)state;
	tsizes_case(true, false);
}

static void test_sizes_msg_unexpected(void **state)
{
	(void)state;
	tsizes_case(false, true);
}

static void test_sizes_tagged_unexpected(void **state)
{
	(void)state;
	tsizes_case(true, true);
}

/* The ring slot size is a property of the ring: documented values. */
static void test_slot_payload(void **state)
{
	struct tfab f;

	(void)state;
	topen(&f);
	assert_int_equal(tring_max(&f),
			 !strcmp(TRING_ORDER, "whole") ? 960 : 904);
	tfab_close(&f);
}

/* Many more messages than slots, the receiver progressing meanwhile:
 * credits come back (by RDMA write: nothing flows the other way) and the
 * ring keeps being used. */
static void test_credits_stream(void **state)
{
	size_t sizes[8 * TRING_SLOTS];
	struct tfab f;
	uint64_t ring;
	int i, n = 8 * TRING_SLOTS;

	(void)state;
	topen(&f);
	for (i = 0; i < n; i++)
		sizes[i] = (size_t)(i * 7) % 200;
	ring = tsizes_x(&f, sizes, n, true, false, tring_data());
	if (tring_data()) {
		assert_int_equal(ring, n);
		assert_int_equal(tstats(&f.a)->tx_ring, n);
		assert_true(tstats(&f.b)->credit_writes >= 2);
		assert_int_equal(tstats(&f.b)->rx_bad, 0);
	}
	tfab_close(&f);
}

/* The sender runs out of credits (the receiver does not progress): the
 * rest go by send/recv and still arrive in order after the ring ones. */
static void test_credits_exhausted(void **state)
{
	int i, n = 3 * TRING_SLOTS;
	uint8_t out[3 * TRING_SLOTS][16], in[3 * TRING_SLOTS][16];
	struct tfab f;

	(void)state;
	topen(&f);
	for (i = 0; i < n; i++) {
		tfab_fill(out[i], 16, (unsigned int)i);
		memset(in[i], 0, 16);
		trecv(&f.b, in[i], 16, true, 9, in[i]);
	}
	/* No progress at all while sending: no credit can come back. */
	for (i = 0; i < n; i++)
		assert_int_equal(fi_tsend(f.a.ep, out[i], 16, NULL, f.a.peer, 9,
					  out[i]), 0);
	if (tring_data()) {
		assert_int_equal(tstats(&f.a)->tx_ring, TRING_SLOTS);
		assert_int_equal(tstats(&f.a)->tx_no_credit,
				 n - TRING_SLOTS);
	}
	tfab_wait(&f, &f.b, n);
	tfab_wait(&f, &f.a, n);
	for (i = 0; i < n; i++) {
		struct tent t = tfab_take(&f.b);

		assert_int_equal(t.err, 0);
		assert_ptr_equal(t.e.op_context, in[i]);
		tfab_check(in[i], 16, (unsigned int)i);
	}
	/* The credits did come back: the ring is used again. */
	if (tring_data()) {
		uint64_t before = tstats(&f.a)->tx_ring;
		size_t sizes[TRING_SLOTS / 2];

		for (i = 0; i < TRING_SLOTS / 2; i++)
			sizes[i] = 32;
		while (f.a.n)
			tfab_take(&f.a);
		twait_credits(&f, &f.b);
		assert_int_equal(tsizes(&f, sizes, TRING_SLOTS / 2, false,
					false), TRING_SLOTS / 2);
		assert_int_equal(tstats(&f.a)->tx_ring - before,
				 TRING_SLOTS / 2);
	}
	tfab_close(&f);
}

/* FI_ORDER_SAS across the two paths: ring-sized and larger messages
 * interleaved, half of them unexpected, all matched in send order. */
static void test_sas_interleaved(void **state)
{
	static const size_t pattern[] = { 8, 2000, 0, 100, 20000, 64, 9000,
					   500 };
	size_t sizes[64];
	struct tfab f;
	int i;

	(void)state;
	topen(&f);
	for (i = 0; i < 64; i++)
		sizes[i] = pattern[i % 8];
	(void)tsizes(&f, sizes, 64, true, false);
	(void)tsizes(&f, sizes, 64, false, true);
	/* 5 of each 8 fit a slot: each went by ring or, out of credits,
	 * by send/recv. */
	if (tring_data()) {
		assert_true(tstats(&f.a)->tx_ring >=
			    (TRING_SLOTS < 2 * 40 ? TRING_SLOTS : 2 * 40));
		assert_int_equal(tstats(&f.a)->tx_ring +
				 tstats(&f.a)->tx_no_credit, 2 * 40);
	}
	tfab_close(&f);
}

/* Both directions at once: ring messages carry credits back. */
static void test_pingpong_piggyback(void **state)
{
	uint8_t out[64], in[64];
	struct tfab f;
	int i;

	(void)state;
	topen(&f);
	for (i = 0; i < 4 * TRING_SLOTS; i++) {
		struct tep *from = i % 2 ? &f.b : &f.a;
		struct tep *to = i % 2 ? &f.a : &f.b;

		tfab_fill(out, sizeof(out), (unsigned int)i);
		memset(in, 0, sizeof(in));
		trecv(to, in, sizeof(in), false, 0, in);
		tsend(&f, from, out, sizeof(out), false, 0, out);
		tfab_wait(&f, to, 1);
		tfab_wait(&f, from, 1);
		assert_int_equal(tfab_take(to).err, 0);
		assert_int_equal(tfab_take(from).err, 0);
		tfab_check(in, sizeof(in), (unsigned int)i);
	}
	if (tring_data()) {
		/* Every message went by ring, and replies carried the
		 * credits: no separate credit write was needed. */
		assert_int_equal(tstats(&f.a)->tx_ring, 2 * TRING_SLOTS);
		/* b's reply in twarm went by ring too */
		assert_int_equal(tstats(&f.b)->tx_ring, 2 * TRING_SLOTS + 1);
		assert_int_equal(tstats(&f.a)->credit_writes, 0);
		assert_int_equal(tstats(&f.b)->credit_writes, 0);
	}
	tfab_close(&f);
}

/* ---- forged slots ---------------------------------------------------- */

static uint8_t *tslot(struct srd_ring_peer *rp, uint32_t ahead)
{
	return rp->base + (size_t)((rp->head + ahead) & (TRING_SLOTS - 1)) *
			  SRD_RING_SLOT_SIZE;
}

static void tflag(uint8_t *at, uint32_t len, uint32_t seq)
{
	struct srd_ring_flag fl = { .len = len, .seq = seq };
	uint64_t w;

	memcpy(&w, &fl, sizeof(w));
	__atomic_store_n((uint64_t *)(void *)at, w, __ATOMIC_RELEASE);
}

/* Write a forged record of a packet of len bytes into the head slot, as
 * the device would (flag words last). */
static void tforge(struct srd_ring_peer *rp, const uint8_t *pkt,
		   uint32_t len, uint32_t flag_len, uint32_t seq)
{
	uint8_t *slot = tslot(rp, 0);
	uint32_t rec = srd_ring_rec_len(len), i, lines;

	if (!strcmp(TRING_ORDER, "whole")) {
		uint8_t *r = slot + SRD_RING_SLOT_SIZE - 8 - rec;

		memset(r, 0, rec);
		memcpy(r, pkt, len);
		tflag(slot + SRD_RING_SLOT_SIZE - 8, flag_len, seq);
		return;
	}
	lines = (rec + SRD_RING_LINE_DATA - 1) / SRD_RING_LINE_DATA;
	for (i = 0; i < lines; i++) {
		uint32_t off = i * SRD_RING_LINE_DATA;
		uint32_t n = len > off ? len - off : 0;

		n = n < SRD_RING_LINE_DATA ? n : SRD_RING_LINE_DATA;
		memset(slot + i * SRD_RING_LINE, 0, SRD_RING_LINE_DATA);
		memcpy(slot + i * SRD_RING_LINE, pkt + off, n);
		tflag(slot + i * SRD_RING_LINE + SRD_RING_LINE_DATA, flag_len,
		      seq);
	}
}

static void tpoll_n(struct tfab *f, int n)
{
	while (n--)
		tfab_poll(f);
}

static void test_forged_slots(void **state)
{
	struct srd_ring_peer *rp;
	struct srd_pkt_msg h;
	uint8_t pkt[300], in[300];
	struct tfab f;
	uint64_t bad;
	uint32_t head;
	size_t i;

	(void)state;
	topen(&f);
	rp = tring_peer(&f.b);
	trecv(&f.b, in, sizeof(in), false, 0, in);

	/* Wrong sequence number: not a message at all. */
	head = rp->head;
	memset(pkt, 0xa5, sizeof(pkt));
	tforge(rp, pkt, 100, 100, rp->head + 1 + TRING_SLOTS);
	tpoll_n(&f, 50);
	assert_int_equal(rp->head, head);
	bad = tstats(&f.b)->rx_bad;

	/* Right sequence number, impossible length. */
	tforge(rp, pkt, 100, 60000, rp->head + 1);
	tpoll_n(&f, 50);
	assert_int_equal(tstats(&f.b)->rx_bad, ++bad);
	assert_int_equal(rp->head, ++head);

	/* Length below a header. */
	tforge(rp, pkt, 100, 4, rp->head + 1);
	tpoll_n(&f, 50);
	assert_int_equal(tstats(&f.b)->rx_bad, ++bad);

	/* Garbage packet. */
	for (i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i * 37 + 11);
	tforge(rp, pkt, 200, 200, rp->head + 1);
	tpoll_n(&f, 50);
	assert_int_equal(tstats(&f.b)->rx_bad, ++bad);

	/* A well-formed EAGER packet claiming another peer id. */
	memset(&h, 0, sizeof(h));
	h.base.version = SRD_PROTO_VERSION;
	h.base.type = SRD_PKT_EAGER;
	h.base.peer_id = 77;
	h.msg_id = 1000;
	h.total_len = h.seg_len = 16;
	memcpy(pkt, &h, sizeof(h));
	tforge(rp, pkt, sizeof(h) + 16, sizeof(h) + 16, rp->head + 1);
	tpoll_n(&f, 50);
	assert_int_equal(tstats(&f.b)->rx_bad, ++bad);

	/* A well-formed packet of another type. */
	h.base.peer_id = tep_srd(&f.b)->peers[0]->id;
	h.base.type = SRD_PKT_MEDIUM;
	h.total_len = 100;
	memcpy(pkt, &h, sizeof(h));
	tforge(rp, pkt, sizeof(h) + 16, sizeof(h) + 16, rp->head + 1);
	tpoll_n(&f, 50);
	assert_int_equal(tstats(&f.b)->rx_bad, ++bad);

	if (!strcmp(TRING_ORDER, "128")) {
		/* Two lines needed, the second not there yet: wait. */
		head = rp->head;
		memset(pkt, 0x3c, sizeof(pkt));
		tforge(rp, pkt, 200, 200, rp->head + 1);
		tflag(tslot(rp, 0) + SRD_RING_LINE + SRD_RING_LINE_DATA, 200,
		      rp->head + 1 - TRING_SLOTS);
		tpoll_n(&f, 50);
		assert_int_equal(rp->head, head);
		/* The second line disagrees on the length. */
		tflag(tslot(rp, 0) + SRD_RING_LINE + SRD_RING_LINE_DATA, 300,
		      rp->head + 1);
		tpoll_n(&f, 50);
		assert_int_equal(tstats(&f.b)->rx_bad, ++bad);
	}
	/* Nothing reached the posted receive, and b still works. */
	assert_int_equal(f.b.n, 0);
	assert_int_equal(fi_cancel(&f.b.ep->fid, in), 0);
	tfab_wait(&f, &f.b, 1);
	assert_int_equal(tfab_take(&f.b).err, FI_ECANCELED);
	{
		uint8_t o[32], r[32];

		tfab_fill(o, sizeof(o), 3);
		trecv(&f.a, r, sizeof(r), false, 0, r);
		tsend(&f, &f.b, o, sizeof(o), false, 0, o);
		tfab_wait(&f, &f.a, 1);
		tfab_wait(&f, &f.b, 1);
		assert_int_equal(tfab_take(&f.a).err, 0);
		tfab_check(r, sizeof(r), 3);
	}
	tfab_close(&f);
}

int main(void)
{
	const struct CMUnitTest data_tests[] = {
		cmocka_unit_test(test_poll_mode),
		cmocka_unit_test(test_poll_mode_completion_forced),
		cmocka_unit_test(test_ring_slots_setting),
		cmocka_unit_test(test_slot_payload),
		cmocka_unit_test(test_sizes_msg),
		cmocka_unit_test(test_sizes_tagged),
		cmocka_unit_test(test_sizes_msg_unexpected),
		cmocka_unit_test(test_sizes_tagged_unexpected),
		cmocka_unit_test(test_credits_stream),
		cmocka_unit_test(test_credits_exhausted),
		cmocka_unit_test(test_sas_interleaved),
		cmocka_unit_test(test_pingpong_piggyback),
		cmocka_unit_test(test_forged_slots),
	};
	/* in-order "none": the fallback, and that messages still work. */
	const struct CMUnitTest none_tests[] = {
		cmocka_unit_test(test_poll_mode),
		cmocka_unit_test(test_sizes_msg),
		cmocka_unit_test(test_sizes_tagged_unexpected),
		cmocka_unit_test(test_credits_exhausted),
		cmocka_unit_test(test_sas_interleaved),
	};

	setenv("FI_SRD_SOFT_IN_ORDER", TRING_ORDER, 1);
	setenv("FI_SRD_POLL_MODE", "data", 1);
	if (TRING_SLOTS != SRD_RING_SLOTS_DEFAULT) {
		char v[16];

		snprintf(v, sizeof(v), "%d", TRING_SLOTS);
		setenv("FI_SRD_RING_SLOTS", v, 1);
	}
	if (tring_data())
		return cmocka_run_group_tests(data_tests, NULL, NULL);
	return cmocka_run_group_tests(none_tests, NULL, NULL);
}
