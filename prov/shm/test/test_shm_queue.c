/* SPDX-License-Identifier: MIT */
/*
 * shm transport: the inbound MPSC queue (order, payload, full, many
 * producers in other processes, dead producers, invalid cells).
 */
#include "weft/compat.h"
#include "../src/shm_transport.h"
#include "shm_test_util.h"

#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

struct q_pair {
	struct shm_region *rx;		/* consumer */
	struct shm_region *tx;		/* producer's own region */
	struct shm_peer *peer;		/* tx's handle to rx */
};

static int q_setup(void **state)
{
	struct q_pair *qp = calloc(1, sizeof(*qp));
	struct shm_region_attr a;

	shm_region_attr_default(&a);
	a.cell_count = 16;
	a.cell_size = 256;
	if (!qp || shm_region_create(&a, &qp->rx) ||
	    shm_region_create(NULL, &qp->tx) ||
	    shm_peer_open(qp->tx, shm_region_name(qp->rx), &qp->peer))
		return -1;
	*state = qp;
	return 0;
}

static int q_teardown(void **state)
{
	struct q_pair *qp = *state;

	shm_peer_close(qp->peer);
	shm_region_close(qp->tx);
	shm_region_close(qp->rx);
	free(qp);
	shm_region_reclaim();		/* regions of killed children */
	return 0;
}

static void q_send(struct shm_peer *p, uint64_t seq, uint32_t len)
{
	struct shm_cell *c = shm_peer_reserve(p);

	assert_non_null(c);
	c->hdr.op = 7;
	c->hdr.flags = (uint16_t)seq;
	c->hdr.len = len;
	c->hdr.proto = (uint32_t)~seq;
	c->hdr.tag = seq * 3;
	c->hdr.data = seq ^ 0x5555;
	c->hdr.cookie = seq + 11;
	shm_test_fill(c->payload, len, seq, 0);
	shm_peer_commit(p, c);
}

static void q_expect(struct shm_region *r, uint64_t seq, uint32_t len,
		     uint16_t src)
{
	struct shm_cell_hdr h;
	struct shm_cell *c = shm_queue_poll(r, &h);

	assert_non_null(c);
	assert_int_equal(h.op, 7);
	assert_int_equal(h.flags, (uint16_t)seq);
	assert_int_equal(h.len, len);
	assert_int_equal(h.proto, (uint32_t)~seq);
	assert_int_equal(h.tag, seq * 3);
	assert_int_equal(h.data, seq ^ 0x5555);
	assert_int_equal(h.cookie, seq + 11);
	assert_int_equal(h.src, src);
	assert_int_equal(shm_test_check(c->payload, len, seq, 0), len);
	shm_queue_release(r);
}

/* Several laps of the 16-cell ring, in bursts of varying size and with
 * every payload length from 0 to the cell's capacity. */
static void test_spsc_order(void **state)
{
	struct q_pair *qp = *state;
	uint32_t cap = shm_peer_payload_max(qp->peer);
	struct shm_cell_hdr h;
	uint64_t sent = 0, got = 0;
	int burst;

	assert_int_equal(cap, 256 - SHM_CELL_HDR_SIZE);
	for (burst = 1; sent < 1000; burst = burst % 16 + 1) {
		int i;

		for (i = 0; i < burst; i++, sent++)
			q_send(qp->peer, sent, (uint32_t)(sent % (cap + 1)));
		for (; got < sent; got++)
			q_expect(qp->rx, got, (uint32_t)(got % (cap + 1)),
				 qp->peer->q.src);
	}
	assert_null(shm_queue_poll(qp->rx, &h));
	assert_int_equal(qp->rx->dropped, 0);
}

/* Polled cells may be held and released later, in order. */
static void test_hold_then_release(void **state)
{
	struct q_pair *qp = *state;
	struct shm_cell_hdr h;
	struct shm_cell *c[3];
	int i;

	for (i = 0; i < 3; i++)
		q_send(qp->peer, (uint64_t)i, 8);
	for (i = 0; i < 3; i++) {
		c[i] = shm_queue_poll(qp->rx, &h);
		assert_non_null(c[i]);
		assert_int_equal(h.tag, (uint64_t)i * 3);
	}
	assert_null(shm_queue_poll(qp->rx, &h));
	for (i = 0; i < 3; i++)
		shm_queue_release(qp->rx);
	q_send(qp->peer, 9, 8);
	q_expect(qp->rx, 9, 8, qp->peer->q.src);
}

static void test_full(void **state)
{
	struct q_pair *qp = *state;
	uint64_t i;

	for (i = 0; i < 16; i++)
		q_send(qp->peer, i, 40);
	assert_null(shm_peer_reserve(qp->peer));
	assert_null(shm_peer_reserve(qp->peer));
	q_expect(qp->rx, 0, 40, qp->peer->q.src);
	q_send(qp->peer, 16, 40);
	assert_null(shm_peer_reserve(qp->peer));
	for (i = 1; i <= 16; i++)
		q_expect(qp->rx, i, 40, qp->peer->q.src);
}

/* A cell whose header is out of range is skipped, not delivered. */
/* Credits: a producer may have peer_credits cells the owner has not
 * consumed (shm_region_credit), however free the ring is; the owner's
 * counter, whatever it says, gives at most peer_credits at each look. */
static void test_credits(void **state)
{
	struct shm_region_attr a;
	struct shm_region *rx, *tx;
	struct shm_peer *p;
	uint16_t src, gen;
	int i;

	(void)state;
	shm_region_attr_default(&a);
	a.cell_count = 16;
	a.cell_size = 256;
	a.peer_credits = 4;
	assert_int_equal(shm_region_create(&a, &rx), 0);
	assert_int_equal(shm_region_create(NULL, &tx), 0);
	assert_int_equal(shm_peer_open(tx, shm_region_name(rx), &p), 0);
	src = p->q.src;
	gen = p->q.src_gen;

	for (i = 0; i < 4; i++)
		q_send(p, (uint64_t)i, 8);
	assert_null(shm_peer_reserve(p));
	/* Polled and handed back, but not consumed: still no credit. */
	for (i = 0; i < 4; i++) {
		q_expect(rx, (uint64_t)i, 8, src);
		shm_queue_release(rx);
	}
	assert_null(shm_peer_reserve(p));
	assert_int_equal(shm_queue_free_cells(&p->q), 0);

	shm_region_credit(rx, src);
	shm_region_credit(rx, src);
	assert_int_equal(shm_queue_free_cells(&p->q), 2);
	q_send(p, 4, 8);
	q_send(p, 5, 8);
	assert_null(shm_peer_reserve(p));
	/* Another producer's generation of the slot: not ours. */
	shm_region_credit_gen(rx, src, (uint16_t)(gen + 1));
	assert_null(shm_peer_reserve(p));
	shm_region_credit_gen(rx, src, gen);
	q_send(p, 6, 8);
	assert_null(shm_peer_reserve(p));

	/* A counter far ahead: peer_credits more at a time, not more. */
	atomic_store(&rx->slots[src].consumed, UINT64_MAX / 2);
	assert_int_equal(shm_queue_free_cells(&p->q), 4);
	/* Gone back: what was granted is used, then nothing. */
	atomic_store(&rx->slots[src].consumed, 0);
	for (i = 7; i < 11; i++)
		q_send(p, (uint64_t)i, 8);
	assert_null(shm_peer_reserve(p));
	assert_int_equal(shm_queue_free_cells(&p->q), 0);
	for (i = 4; i < 11; i++)
		q_expect(rx, (uint64_t)i, 8, src);

	shm_peer_close(p);
	shm_region_close(tx);
	shm_region_close(rx);
}

static void test_invalid_cell_dropped(void **state)
{
	struct q_pair *qp = *state;
	struct shm_cell_hdr h;
	struct shm_cell *c;

	c = shm_peer_reserve(qp->peer);
	assert_non_null(c);
	c->hdr.len = 100000;
	shm_peer_commit(qp->peer, c);
	c = shm_peer_reserve(qp->peer);
	assert_non_null(c);
	c->hdr.len = 4;
	shm_peer_commit(qp->peer, c);
	c->hdr.src = 9999;	/* commit writes src: corrupt it afterwards */
	q_send(qp->peer, 5, 17);
	q_expect(qp->rx, 5, 17, qp->peer->q.src);
	assert_int_equal(qp->rx->dropped, 2);
	assert_null(shm_queue_poll(qp->rx, &h));
}

/* Two senders (two regions, two slots) share one claim counter: their
 * messages interleave in claim order, each tagged with its own src. */
static void test_two_senders(void **state)
{
	struct q_pair *qp = *state;
	struct shm_region *other;
	struct shm_peer *p2;
	uint64_t i, got = 0;

	assert_int_equal(shm_region_create(NULL, &other), 0);
	assert_int_equal(shm_peer_open(other, shm_region_name(qp->rx), &p2), 0);
	assert_int_not_equal(p2->q.src, qp->peer->q.src);
	for (i = 0; i < 40; i++) {
		q_send(i % 2 ? p2 : qp->peer, i, (uint32_t)i);
		/* keep a small backlog so both senders wrap the ring */
		for (; i % 3 == 2 && got + 1 < i; got++)
			q_expect(qp->rx, got, (uint32_t)got,
				 got % 2 ? p2->q.src : qp->peer->q.src);
	}
	for (; got < 40; got++)
		q_expect(qp->rx, got, (uint32_t)got,
			 got % 2 ? p2->q.src : qp->peer->q.src);
	shm_peer_close(p2);
	shm_region_close(other);
}

/* A peer region whose counters are garbage: the producer gives up (NULL)
 * instead of spinning forever, and never indexes past the ring. */
static void test_corrupt_queue_no_hang(void **state)
{
	struct q_pair *qp = *state;
	struct shm_cell *c;

	atomic_store(&qp->rx->hdr->released, UINT64_MAX / 2);
	atomic_store(&qp->rx->hdr->tail, 0);
	qp->peer->q.free_end = 0;
	assert_null(shm_peer_reserve(qp->peer));
	atomic_store(&qp->rx->hdr->tail, 1000);
	atomic_store(&qp->rx->hdr->released, 0);
	qp->peer->q.free_end = 0;
	assert_null(shm_peer_reserve(qp->peer));
	/* released far ahead of tail: cells look free; claims stay in the
	 * ring (only the owner's own queue can be corrupted that way) */
	atomic_store(&qp->rx->hdr->released, 5000);
	qp->peer->q.free_end = 0;
	c = shm_peer_reserve(qp->peer);
	assert_non_null(c);
	assert_true((uint8_t *)c >= qp->peer->q.cells &&
		    (uint8_t *)c < qp->peer->q.cells +
				   (qp->peer->q.mask + 1) * qp->peer->q.cell_size);
}

/* An extra release does not hand out an unconsumed cell. */
static void test_release_without_poll(void **state)
{
	struct q_pair *qp = *state;
	struct shm_cell_hdr h;
	uint64_t i;

	shm_queue_release(qp->rx);
	for (i = 0; i < 16; i++)
		q_send(qp->peer, i, 8);
	shm_queue_release(qp->rx);
	assert_null(shm_peer_reserve(qp->peer));
	for (i = 0; i < 16; i++)
		q_expect(qp->rx, i, 8, qp->peer->q.src);
	shm_queue_release(qp->rx);
	assert_null(shm_queue_poll(qp->rx, &h));
	q_send(qp->peer, 99, 1);
	q_expect(qp->rx, 99, 1, qp->peer->q.src);
}

/* A producer that closes with cells queued leaves its slot closed, its
 * name still there for those cells, until they are polled; then the
 * owner's reap frees it. One that closes drained frees it at once. */
static void test_closed_slot_outlives_cells(void **state)
{
	struct q_pair *qp = *state;
	uint16_t src = qp->peer->q.src;
	struct shm_slot *slot = &qp->rx->slots[src];
	char name[SHM_NAME_MAX];

	q_send(qp->peer, 1, 8);
	q_send(qp->peer, 2, 8);
	shm_peer_close(qp->peer);
	qp->peer = NULL;
	assert_int_equal(atomic_load(&slot->state), SHM_SLOT_CLOSED);
	assert_int_equal(shm_region_slot_name(qp->rx, src, name, NULL), 0);
	assert_string_equal(name, shm_region_name(qp->tx));
	assert_int_equal(shm_region_reap_closed(qp->rx), 0);
	assert_int_equal(shm_region_reap(qp->rx), 0);
	q_expect(qp->rx, 1, 8, src);
	assert_int_equal(shm_region_reap_closed(qp->rx), 0);	/* one left */
	q_expect(qp->rx, 2, 8, src);
	assert_int_equal(shm_region_reap_closed(qp->rx), 1);
	assert_int_equal(atomic_load(&slot->state), SHM_SLOT_FREE);
	assert_int_equal(shm_region_slot_name(qp->rx, src, name, NULL),
			 -FI_ENOENT);

	assert_int_equal(shm_peer_open(qp->tx, shm_region_name(qp->rx),
				       &qp->peer), 0);
	slot = &qp->rx->slots[qp->peer->q.src];
	q_send(qp->peer, 3, 8);
	q_expect(qp->rx, 3, 8, qp->peer->q.src);
	shm_peer_close(qp->peer);
	qp->peer = NULL;
	assert_int_equal(atomic_load(&slot->state), SHM_SLOT_FREE);
}

/* ---- many producers, each in its own process ------------------------ */

#define MP_PRODUCERS	4
#define MP_MESSAGES	20000

struct mp_msg {
	uint32_t producer;
	uint32_t seq;
};

static int mp_child(int rd, int wr, void *arg)
{
	const char *target = arg;
	uint32_t id, i, cap;
	struct shm_region *self;
	struct shm_peer *p;
	char go;

	if (shm_test_read(rd, &id, sizeof(id)) ||
	    shm_region_create(NULL, &self) ||
	    shm_peer_open(self, target, &p))
		return 10;
	cap = shm_peer_payload_max(p);
	shm_test_read(rd, &go, 1);
	for (i = 0; i < MP_MESSAGES; i++) {
		uint32_t len = sizeof(struct mp_msg) +
			       (i * 37 + id) % (cap - sizeof(struct mp_msg) + 1);
		struct mp_msg m = { id, i };
		struct shm_cell *c;

		while (!(c = shm_peer_reserve(p)))
			sched_yield();
		c->hdr.op = 1;
		c->hdr.len = len;
		c->hdr.tag = ((uint64_t)id << 32) | i;
		memcpy(c->payload, &m, sizeof(m));
		shm_test_fill(c->payload + sizeof(m), len - sizeof(m),
			      ((uint64_t)id << 32) | i, 0);
		shm_peer_commit(p, c);
	}
	shm_peer_close(p);
	shm_region_close(self);
	return 0;
}

static void test_multi_producer(void **state)
{
	struct shm_test_child kids[MP_PRODUCERS];
	uint32_t next[MP_PRODUCERS] = { 0 };
	int src_of[MP_PRODUCERS];
	struct shm_region_attr a;
	struct shm_region *rx;
	uint32_t k, total = 0;

	shm_region_attr_default(&a);
	a.cell_count = 64;		/* small: producers hit "full" often */
	assert_int_equal(shm_region_create(&a, &rx), 0);
	for (k = 0; k < MP_PRODUCERS; k++) {
		src_of[k] = -1;
		assert_int_equal(shm_test_fork(&kids[k], mp_child,
					       (void *)shm_region_name(rx)), 0);
		assert_int_equal(shm_test_write(kids[k].to_child, &k,
						sizeof(k)), 0);
	}
	for (k = 0; k < MP_PRODUCERS; k++)
		assert_int_equal(shm_test_write(kids[k].to_child, "g", 1), 0);

	while (total < MP_PRODUCERS * MP_MESSAGES) {
		struct shm_cell_hdr h;
		struct shm_cell *c = shm_queue_poll(rx, &h);
		struct mp_msg m;
		uint32_t plen;

		if (!c) {
			sched_yield();
			continue;
		}
		assert_true(h.len >= sizeof(m));
		memcpy(&m, c->payload, sizeof(m));
		assert_true(m.producer < MP_PRODUCERS);
		/* Exactly once, in each producer's order. */
		assert_int_equal(m.seq, next[m.producer]);
		assert_int_equal(h.tag, ((uint64_t)m.producer << 32) | m.seq);
		if (src_of[m.producer] < 0)
			src_of[m.producer] = h.src;
		assert_int_equal(h.src, src_of[m.producer]);
		plen = sizeof(m) + (m.seq * 37 + m.producer) %
			(shm_cell_payload_max(rx->cell_size) - sizeof(m) + 1);
		assert_int_equal(h.len, plen);
		assert_int_equal(shm_test_check(c->payload + sizeof(m),
						h.len - sizeof(m),
						((uint64_t)m.producer << 32) |
						m.seq, 0),
				 h.len - sizeof(m));
		next[m.producer]++;
		total++;
		shm_queue_release(rx);
	}
	for (k = 0; k < MP_PRODUCERS; k++) {
		assert_int_equal(shm_test_wait(&kids[k]), 0);
		assert_int_equal(next[k], MP_MESSAGES);
	}
	assert_int_equal(rx->dropped, 0);
	shm_region_close(rx);
}

/* ---- a producer that stops between claim and publish ---------------- */

enum { HOLE_DIE, HOLE_WAIT };

struct hole_arg {
	const char *target;
	int mode;
};

/* Claim a cell and never publish it: die (SIGKILL to self, so no
 * cleanup at all), or wait for the parent's word and then publish. */
static int hole_child(int rd, int wr, void *varg)
{
	struct hole_arg *arg = varg;
	struct shm_region *self;
	struct shm_peer *p;
	struct shm_cell *c;
	char go;

	if (shm_region_create(NULL, &self) ||
	    shm_peer_open(self, arg->target, &p))
		return 10;
	c = shm_peer_reserve(p);
	if (!c)
		return 11;
	c->hdr.op = 7;
	c->hdr.len = 0;
	c->hdr.tag = 1234 * 3;
	shm_test_write(wr, "c", 1);
	if (arg->mode == HOLE_DIE)
		raise(SIGKILL);
	shm_test_read(rd, &go, 1);
	c->hdr.flags = 1234;
	c->hdr.proto = ~1234u;
	c->hdr.data = 1234 ^ 0x5555;
	c->hdr.cookie = 1234 + 11;
	shm_peer_commit(p, c);
	shm_test_read(rd, &go, 1);
	return 0;
}

static void test_dead_producer_mid_claim(void **state)
{
	struct q_pair *qp = *state;
	struct hole_arg arg = { shm_region_name(qp->rx), HOLE_DIE };
	struct shm_test_child kid;
	struct shm_cell_hdr h;
	char ack;

	q_send(qp->peer, 1, 3);
	assert_int_equal(shm_test_fork(&kid, hole_child, &arg), 0);
	assert_int_equal(shm_test_read(kid.from_child, &ack, 1), 0);
	q_send(qp->peer, 2, 5);		/* queued behind the hole */
	assert_int_equal(shm_test_wait(&kid), -1);	/* killed */

	q_expect(qp->rx, 1, 3, qp->peer->q.src);
	assert_null(shm_queue_poll(qp->rx, &h));
	assert_int_equal(shm_queue_check_stall(qp->rx), 1);
	q_expect(qp->rx, 2, 5, qp->peer->q.src);
	assert_int_equal(qp->rx->dropped, 1);
	assert_int_equal(shm_queue_check_stall(qp->rx), 0);
	assert_int_equal(shm_region_reap(qp->rx), 1);
}

/* Same, found by polling alone (no explicit check): bounded by the stall
 * timeout, the loop only guards against a hang. */
static void test_dead_producer_poll_recovers(void **state)
{
	struct q_pair *qp = *state;
	struct hole_arg arg = { shm_region_name(qp->rx), HOLE_DIE };
	struct shm_test_child kid;
	struct shm_cell_hdr h;
	struct shm_cell *c = NULL;
	long polls;
	char ack;

	assert_int_equal(shm_test_fork(&kid, hole_child, &arg), 0);
	assert_int_equal(shm_test_read(kid.from_child, &ack, 1), 0);
	assert_int_equal(shm_test_wait(&kid), -1);
	q_send(qp->peer, 3, 9);
	for (polls = 0; !c && polls < 2000000000L; polls++)
		c = shm_queue_poll(qp->rx, &h);
	assert_non_null(c);
	assert_int_equal(h.tag, 9);
	shm_queue_release(qp->rx);
	assert_int_equal(qp->rx->dropped, 1);
}

/* A live producer that is merely slow is never skipped. */
static void test_slow_producer_not_skipped(void **state)
{
	struct q_pair *qp = *state;
	struct hole_arg arg = { shm_region_name(qp->rx), HOLE_WAIT };
	struct shm_test_child kid;
	struct shm_cell_hdr h;
	char ack;

	assert_int_equal(shm_test_fork(&kid, hole_child, &arg), 0);
	assert_int_equal(shm_test_read(kid.from_child, &ack, 1), 0);
	q_send(qp->peer, 4, 4);
	assert_null(shm_queue_poll(qp->rx, &h));
	assert_int_equal(shm_queue_check_stall(qp->rx), 0);
	assert_null(shm_queue_poll(qp->rx, &h));
	assert_int_equal(shm_test_write(kid.to_child, "g", 1), 0);
	while (!shm_queue_poll(qp->rx, &h))
		sched_yield();
	assert_int_equal(h.tag, 1234 * 3);
	assert_int_equal(h.cookie, 1234 + 11);
	shm_queue_release(qp->rx);
	q_expect(qp->rx, 4, 4, qp->peer->q.src);
	assert_int_equal(qp->rx->dropped, 0);
	assert_int_equal(shm_test_wait(&kid), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spsc_order, q_setup,
						q_teardown),
		cmocka_unit_test_setup_teardown(test_hold_then_release,
						q_setup, q_teardown),
		cmocka_unit_test_setup_teardown(test_full, q_setup, q_teardown),
		cmocka_unit_test(test_credits),
		cmocka_unit_test_setup_teardown(test_invalid_cell_dropped,
						q_setup, q_teardown),
		cmocka_unit_test_setup_teardown(test_two_senders, q_setup,
						q_teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_queue_no_hang,
						q_setup, q_teardown),
		cmocka_unit_test_setup_teardown(test_release_without_poll,
						q_setup, q_teardown),
		cmocka_unit_test_setup_teardown(test_closed_slot_outlives_cells,
						q_setup, q_teardown),
		cmocka_unit_test(test_multi_producer),
		cmocka_unit_test_setup_teardown(test_dead_producer_mid_claim,
						q_setup, q_teardown),
		cmocka_unit_test_setup_teardown(
			test_dead_producer_poll_recovers, q_setup, q_teardown),
		cmocka_unit_test_setup_teardown(test_slow_producer_not_skipped,
						q_setup, q_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
