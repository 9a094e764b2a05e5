/* SPDX-License-Identifier: MIT */
/*
 * Reorder window: a simulated receiver feeds shuffled packets of
 * multi-segment messages (with duplicates, across msg_id wrap-around, far
 * beyond the window) through srd_reorder exactly as the RDM layer does, and
 * checks that messages are matched in msg_id order and that every segment
 * arrives once, byte for byte.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/dev/srd_dev.h"
#include "../src/rdm/srd_reorder.h"
#include "../../../core/test/capture.h"

#define MAXSEG 4

struct tpkt {
	uint32_t msg_id;
	uint16_t seg;
	uint16_t nseg;
	uint32_t len;		/* payload bytes */
	uint32_t pad;
	uint8_t data[];
};

struct sim {
	struct srd_reorder r;
	uint32_t first;		/* msg_id of message 0 */
	unsigned int nmsg;
	uint32_t *matched;	/* msg_ids in match order */
	unsigned int nmatched;
	uint8_t (*got)[MAXSEG];	/* segments received per message */
	unsigned int dups;
	unsigned int held;
	unsigned int behind;
};

static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint8_t byte_of(uint32_t msg_id, unsigned int seg, size_t i)
{
	return (uint8_t)(msg_id * 31 + seg * 7 + i * 13 + (i >> 8));
}

static struct tpkt *tpkt_new(uint32_t msg_id, unsigned int seg,
			     unsigned int nseg, size_t len)
{
	struct tpkt *p = malloc(sizeof(*p) + len);
	size_t i;

	assert_non_null(p);
	p->msg_id = msg_id;
	p->seg = (uint16_t)seg;
	p->nseg = (uint16_t)nseg;
	p->len = (uint32_t)len;
	p->pad = 0;
	for (i = 0; i < len; i++)
		p->data[i] = byte_of(msg_id, seg, i);
	return p;
}

static void check_bytes(const struct tpkt *p, size_t len)
{
	size_t i;

	assert_int_equal(len, sizeof(*p) + p->len);
	for (i = 0; i < p->len; i++)
		if (p->data[i] != byte_of(p->msg_id, p->seg, i))
			fail_msg("msg %u seg %u byte %zu differs", p->msg_id,
				 p->seg, i);
}

static unsigned int msg_index(struct sim *s, uint32_t msg_id)
{
	unsigned int idx = msg_id - s->first;

	assert_true(idx < s->nmsg);
	return idx;
}

static void sim_segment(struct sim *s, const struct tpkt *p, size_t len)
{
	unsigned int idx = msg_index(s, p->msg_id);

	check_bytes(p, len);
	if (s->got[idx][p->seg])
		s->dups++;
	s->got[idx][p->seg] = 1;
}

static void sim_handle(struct sim *s, const struct tpkt *p, size_t len,
		       bool popped);

/* The RDM layer's loop after a message was matched. */
static void sim_drain(struct sim *s)
{
	const void *q;
	size_t len;

	while ((q = srd_reorder_pop(&s->r, &len))) {
		sim_handle(s, q, len, true);
		srd_reorder_release(&s->r, q);
	}
}

static void sim_handle(struct sim *s, const struct tpkt *p, size_t len,
		       bool popped)
{
	int ret = srd_reorder_arrive(&s->r, p->msg_id, p, len);

	switch (ret) {
	case SRD_REORDER_NOW:
		s->matched[s->nmatched++] = p->msg_id;
		sim_segment(s, p, len);
		srd_reorder_advance(&s->r);
		sim_drain(s);
		break;
	case SRD_REORDER_BEHIND:
		s->behind++;
		sim_segment(s, p, len);
		break;
	case SRD_REORDER_HELD:
		assert_false(popped);
		s->held++;
		break;
	default:
		fail_msg("arrive returned %d", ret);
	}
}

/* Packets of nmsg messages (1..MAXSEG segments, 0..maxlen bytes each),
 * plus ndup duplicates, in *out; returns the count. */
static unsigned int make_pkts(uint32_t first, unsigned int nmsg,
			      size_t maxlen, unsigned int ndup,
			      struct tpkt ***out)
{
	unsigned int cap = nmsg * MAXSEG + ndup, n = 0, m, k, nseg;
	struct tpkt **v = calloc(cap, sizeof(*v));

	assert_non_null(v);
	for (m = 0; m < nmsg; m++) {
		nseg = 1 + rnd() % MAXSEG;
		for (k = 0; k < nseg; k++)
			v[n++] = tpkt_new(first + m, k, nseg,
					  rnd() % (maxlen + 1));
	}
	for (k = 0; k < ndup; k++) {
		struct tpkt *o = v[rnd() % n];

		v[n++] = tpkt_new(o->msg_id, o->seg, o->nseg, o->len);
	}
	*out = v;
	return n;
}

/* Fisher-Yates; dist > 0 limits how far a packet moves (in-window). */
static void shuffle(struct tpkt **v, unsigned int n, unsigned int dist)
{
	unsigned int i, j, span;
	struct tpkt *t;

	for (i = 0; i + 1 < n; i++) {
		span = n - i;
		if (dist && span > dist)
			span = dist;
		j = i + rnd() % span;
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

static void run_sim(uint64_t seed, uint32_t first, unsigned int nmsg,
		    uint32_t window, unsigned int dist, size_t maxlen,
		    unsigned int ndup)
{
	struct tpkt **pkts, *copy;
	unsigned int n, i, m;
	struct sim s = { .first = first, .nmsg = nmsg };
	size_t len;

	rng = seed;
	n = make_pkts(first, nmsg, maxlen, ndup, &pkts);
	shuffle(pkts, n, dist);
	s.matched = calloc(nmsg, sizeof(*s.matched));
	s.got = calloc(nmsg, sizeof(*s.got));
	assert_non_null(s.matched);
	assert_non_null(s.got);
	assert_int_equal(srd_reorder_init(&s.r, window), 0);
	s.r.next = first;

	for (i = 0; i < n; i++) {
		/* The rx buffer is reused once arrive returns: feed a copy
		 * and scribble over it afterwards. */
		len = sizeof(*pkts[i]) + pkts[i]->len;
		copy = malloc(len);
		assert_non_null(copy);
		memcpy(copy, pkts[i], len);
		sim_handle(&s, copy, len, false);
		memset(copy, 0xee, len);
		free(copy);
	}

	assert_int_equal(s.nmatched, nmsg);
	for (m = 0; m < nmsg; m++)
		assert_int_equal(s.matched[m], first + m);
	assert_int_equal(s.dups, ndup);
	assert_int_equal(s.r.held, 0);
	assert_int_equal(s.r.next, first + nmsg);
	/* every generated segment arrived */
	for (i = 0; i < n; i++)
		assert_true(s.got[pkts[i]->msg_id - first][pkts[i]->seg]);

	srd_reorder_fini(&s.r);
	for (i = 0; i < n; i++)
		free(pkts[i]);
	free(pkts);
	free(s.matched);
	free(s.got);
}

static void test_init_window(void **state)
{
	struct srd_reorder r;
	struct capture cap;

	capture_start(&cap);
	assert_int_equal(srd_reorder_init(&r, 0), -FI_EINVAL);
	assert_int_equal(srd_reorder_init(&r, 3), -FI_EINVAL);
	assert_int_equal(srd_reorder_init(&r, SRD_REORDER_WINDOW_MAX * 2),
			 -FI_EINVAL);
	assert_non_null(strstr(capture_stop(&cap), "window"));
	capture_free(&cap);
	assert_int_equal(srd_reorder_init(&r, 1), 0);
	assert_int_equal(r.next, 0);
	srd_reorder_fini(&r);
	srd_reorder_fini(&r);	/* twice is harmless */
}

/* The contract step by step, with a window of 4. */
static void test_basic_sequence(void **state)
{
	struct srd_reorder r;
	const uint8_t *q;
	uint8_t pkt[8];
	size_t len;

	assert_int_equal(srd_reorder_init(&r, 4), 0);
	assert_null(srd_reorder_pop(&r, &len));
	pkt[0] = 10;
	assert_int_equal(srd_reorder_arrive(&r, 10, pkt, 1), SRD_REORDER_HELD);
	pkt[0] = 2;
	assert_int_equal(srd_reorder_arrive(&r, 2, pkt, 1), SRD_REORDER_HELD);
	pkt[0] = 0x21;
	assert_int_equal(srd_reorder_arrive(&r, 1, pkt, 1), SRD_REORDER_HELD);
	pkt[0] = 0x12;
	assert_int_equal(srd_reorder_arrive(&r, 1, pkt, 1), SRD_REORDER_HELD);
	assert_int_equal(r.held, 4);
	/* nothing poppable before message 0 */
	assert_null(srd_reorder_pop(&r, &len));
	assert_int_equal(srd_reorder_arrive(&r, 0, pkt, 1), SRD_REORDER_NOW);
	srd_reorder_advance(&r);
	/* msg 1's packets in arrival order; the first one matches */
	q = srd_reorder_pop(&r, &len);
	assert_non_null(q);
	assert_int_equal(len, 1);
	assert_int_equal(q[0], 0x21);
	assert_int_equal(srd_reorder_arrive(&r, 1, q, len), SRD_REORDER_NOW);
	srd_reorder_release(&r, q);
	srd_reorder_advance(&r);
	/* its second segment is now behind, then message 2 */
	q = srd_reorder_pop(&r, &len);
	assert_int_equal(q[0], 0x12);
	assert_int_equal(srd_reorder_arrive(&r, 1, q, len), SRD_REORDER_BEHIND);
	srd_reorder_release(&r, q);
	q = srd_reorder_pop(&r, &len);
	assert_int_equal(q[0], 2);
	srd_reorder_release(&r, q);
	srd_reorder_advance(&r);
	assert_null(srd_reorder_pop(&r, &len));
	/* 10 is still beyond the window of 3..6: held, not poppable */
	assert_int_equal(r.held, 1);
	assert_int_equal(srd_reorder_arrive(&r, 0, pkt, 1),
			 SRD_REORDER_BEHIND);
	/* fini frees the held copy (ASan checks) */
	srd_reorder_fini(&r);
}

static void test_shuffled_many_seeds(void **state)
{
	uint64_t seed;

	for (seed = 1; seed <= 200; seed++)
		run_sim(seed * 0x9e3779b97f4a7c15ull, 0, 64, 64, 0, 300, 0);
}

static void test_bounded_disorder_in_window(void **state)
{
	uint64_t seed;

	for (seed = 1; seed <= 50; seed++)
		run_sim(seed, 0, 500, 256, 16, 64, 0);
}

static void test_duplicates(void **state)
{
	uint64_t seed;

	for (seed = 1; seed <= 50; seed++)
		run_sim(seed + 1000, 7, 100, 32, 0, 100, 40);
}

static void test_wraparound(void **state)
{
	uint64_t seed;

	for (seed = 1; seed <= 50; seed++)
		run_sim(seed + 2000, UINT32_MAX - 60, 150, 16, 0, 80, 5);
	/* in-order across the wrap: never held */
	run_sim(3, UINT32_MAX - 3, 10, 4, 1, 16, 0);
}

static void test_beyond_window(void **state)
{
	uint64_t seed;

	/* window 1 and 2: almost everything goes to the overflow list */
	for (seed = 1; seed <= 30; seed++) {
		run_sim(seed + 3000, 0, 80, 1, 0, 50, 0);
		run_sim(seed + 4000, UINT32_MAX - 20, 80, 2, 0, 50, 3);
	}
}

/* Payload sizes across the small, big and malloc'ed copy classes. */
static void test_large_packets(void **state)
{
	uint64_t seed;

	for (seed = 1; seed <= 10; seed++)
		run_sim(seed + 5000, 100, 40, 8, 0, SRD_REORDER_BIG_MAX + 500,
			4);
}

/* In-order traffic is never copied: the pools stay empty. */
static void test_in_order_no_copy(void **state)
{
	struct srd_reorder r;
	uint8_t pkt[64] = { 0 };
	uint32_t i;

	assert_int_equal(srd_reorder_init(&r, 8), 0);
	for (i = 0; i < 10000; i++) {
		assert_int_equal(srd_reorder_arrive(&r, i, pkt, sizeof(pkt)),
				 SRD_REORDER_NOW);
		srd_reorder_advance(&r);
		assert_null(srd_reorder_pop(&r, &(size_t){ 0 }));
	}
	assert_int_equal(r.small.nobjs + r.big.nobjs, 0);
	srd_reorder_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_window),
		cmocka_unit_test(test_basic_sequence),
		cmocka_unit_test(test_shuffled_many_seeds),
		cmocka_unit_test(test_bounded_disorder_in_window),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_beyond_window),
		cmocka_unit_test(test_large_packets),
		cmocka_unit_test(test_in_order_no_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
