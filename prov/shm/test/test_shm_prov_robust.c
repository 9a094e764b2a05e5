/* SPDX-License-Identifier: MIT */
/*
 * shm provider robustness: fi_av_remove releases the peer's mapping (at
 * once when idle, after in-flight operations otherwise) and inserting the
 * address again works; one peer that does not drain cannot take every
 * bounce segment of an endpoint; a malformed bounce segment of a read
 * makes the target give its segments back. Bounce segments are forced the
 * way test_shm_prov_rma does (shm_cma_test_refuse). Data is checked
 * byte by byte; endpoint internals only where the property is internal
 * (a mapping, a segment count). A peer that floods an endpoint with
 * malformed cells gets a few warning lines, not one per cell.
 */
#include "shm_prov_test.h"
#include "../src/shm.h"
#include "../src/shm_bounce.h"
#include "../../../core/test/capture.h"
#include "weft/core.h"

static struct tctx T;

#define CAPS (FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | \
	      FI_REMOTE_WRITE)
#define SMALL 100
#define LARGE ((size_t)1 << 20)
/* How long a transfer that should go on may take before it fails. */
#define SHORT_S 10

static int setup_cma(void **state)
{
	(void)state;
	shm_cma_test_refuse = 0;
	return 0;
}

static int setup_bounce(void **state)
{
	(void)state;
	shm_cma_test_refuse = 1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	shm_cma_test_refuse = 0;
	return 0;
}

static struct shm_ep *iep(int i)
{
	return to_shm_ep(T.ep[i]);
}

/* Endpoint i's conn to endpoint j, or NULL. */
static struct shm_conn *conn_of(int i, int j)
{
	struct shm_conn *c;

	HASH_FIND_STR(iep(i)->conns, shm_region_name(iep(j)->region), c);
	return c;
}

static void progress(int i)
{
	shm_ep_progress(&iep(i)->util);
}

static uint64_t raddr(const void *base, size_t off)
{
	if (T.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uintptr_t)base + off;
	return off;
}

/* Like t_wait, with a short deadline: a transfer that should go on. */
static struct t_comp wait_short(void *ctx)
{
	uint64_t deadline = t_now_s() + SHORT_S;
	struct t_comp c;

	while (!t_take(&T, ctx, &c)) {
		t_poll(&T);
		if (t_now_s() > deadline)
			fail_msg("no completion for %p within %d s", ctx,
				 SHORT_S);
	}
	return c;
}

static void wait_short_ok(void *ctx)
{
	struct t_comp c = wait_short(ctx);

	if (c.is_err)
		fail_msg("context %p failed: %s", ctx, fi_strerror(c.err.err));
}

/* Endpoint 1 registers LARGE filled bytes (seed); endpoint 0 starts
 * reading them into a zeroed buffer with context rc. */
static void t_start_large_read(unsigned seed, uint8_t **tbuf, uint8_t **dst,
			       struct fid_mr **mr, struct fi_context *rc)
{
	*tbuf = malloc(LARGE);
	*dst = calloc(1, LARGE);
	assert_non_null(*tbuf);
	assert_non_null(*dst);
	t_open(&T, CAPS, 2);
	t_fill(*tbuf, LARGE, seed);
	assert_int_equal(fi_mr_reg(T.domain, *tbuf, LARGE, FI_REMOTE_READ, 0,
				   1, 0, mr, NULL), 0);
	T_POST(&T, fi_read(T.ep[0], *dst, LARGE, NULL, T.addr[1],
			   raddr(*tbuf, 0), fi_mr_key(*mr), rc));
}

/* One message of len bytes from i to dest (an fi_addr of j), checked. */
static void send_recv(int i, fi_addr_t dest, int j, size_t len, unsigned seed)
{
	uint8_t *src = malloc(len), *dst = calloc(1, len);
	struct fi_context sc, rc;

	assert_non_null(src);
	assert_non_null(dst);
	t_fill(src, len, seed);
	T_POST(&T, fi_recv(T.ep[j], dst, len, NULL, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, fi_send(T.ep[i], src, len, NULL, dest, &sc));
	wait_short_ok(&sc);
	wait_short_ok(&rc);
	assert_int_equal(t_check(dst, len, seed), -1);
	free(src);
	free(dst);
}

/* Poll until endpoint i's conn to j has no mapping. */
static void wait_unmapped(int i, int j)
{
	uint64_t deadline = t_now_s() + SHORT_S;

	while (conn_of(i, j)->peer) {
		t_poll(&T);
		if (t_now_s() > deadline)
			fail_msg("ep %d still maps ep %d", i, j);
	}
}

static fi_addr_t reinsert(int j)
{
	fi_addr_t a = FI_ADDR_NOTAVAIL;

	assert_int_equal(fi_av_insert(T.av, T.name[j], 1, &a, 0, NULL), 1);
	assert_true(a != FI_ADDR_NOTAVAIL);
	return a;
}

/* insert, send/recv, remove: unmapped and our slot in the peer's region
 * given back; insert again: a new slot, and data moves again. */
static void test_av_remove_reinsert(void **state)
{
	struct shm_region *r1;
	struct shm_conn *c;
	uint8_t buf[SMALL];
	uint16_t src;
	fi_addr_t a;

	(void)state;
	t_open(&T, CAPS, 2);
	r1 = iep(1)->region;
	send_recv(0, T.addr[1], 1, SMALL, 1);
	send_recv(0, T.addr[1], 1, LARGE, 2);
	c = conn_of(0, 1);
	assert_non_null(c);
	assert_non_null(c->peer);
	src = c->peer->q.src;
	assert_int_equal(atomic_load(&r1->slots[src].state), SHM_SLOT_READY);

	assert_int_equal(fi_av_remove(T.av, &T.addr[1], 1, 0), 0);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(fi_send(T.ep[0], buf, sizeof(buf), NULL, T.addr[1],
				 NULL), -FI_EINVAL);
	wait_unmapped(0, 1);
	assert_int_equal(iep(0)->conns_removed, 0);
	assert_int_equal(atomic_load(&r1->slots[src].state), SHM_SLOT_FREE);

	a = reinsert(1);
	send_recv(0, a, 1, SMALL, 3);
	send_recv(0, a, 1, LARGE, 4);
	assert_non_null(conn_of(0, 1)->peer);
	/* Both directions still work, also toward the remover. */
	send_recv(1, T.addr[0], 0, LARGE, 5);

	/* Remove and insert again before any progress: the conn stays. */
	assert_int_equal(fi_av_remove(T.av, &a, 1, 0), 0);
	a = reinsert(1);
	send_recv(0, a, 1, SMALL, 6);
	assert_non_null(conn_of(0, 1)->peer);
	assert_int_equal(iep(0)->conns_removed, 0);
	t_close(&T);
}

/* The removed address's slot goes to another address, which is sent to
 * before any progress: the first peer is still unmapped. */
static void test_av_remove_slot_reused(void **state)
{
	fi_addr_t rm[2], a;

	(void)state;
	t_open(&T, CAPS, 3);
	send_recv(0, T.addr[1], 1, SMALL, 13);
	assert_non_null(conn_of(0, 1)->peer);
	/* Freed last is taken first: ep 2's name lands in ep 1's slot. */
	rm[0] = T.addr[2];
	rm[1] = T.addr[1];
	assert_int_equal(fi_av_remove(T.av, rm, 2, 0), 0);
	a = reinsert(2);
	assert_true(a == T.addr[1]);
	send_recv(0, a, 2, LARGE, 14);
	wait_unmapped(0, 1);
	assert_non_null(conn_of(0, 2)->peer);
	assert_int_equal(iep(0)->conns_removed, 0);
	send_recv(0, reinsert(1), 1, SMALL, 15);
	t_close(&T);
}

/* Endpoint `from` sends a large message to `to` that waits unexpected
 * there while ep 0 removes ep 1's address: ep 0 keeps the mapping until
 * the message is received (its ACK, or the pull from the peer), the data
 * arrives whole, then the mapping goes. */
static void t_remove_while_rts_waits(int from, int to, unsigned seed)
{
	uint8_t *src = malloc(LARGE), *dst = calloc(1, LARGE);
	struct fi_context sc, rc;
	int i;

	assert_non_null(src);
	assert_non_null(dst);
	t_open(&T, CAPS, 2);
	if (from == 1)	/* ep 0 maps ep 1 */
		send_recv(0, T.addr[1], 1, SMALL, seed - 1);
	t_fill(src, LARGE, seed);
	T_POST(&T, fi_send(T.ep[from], src, LARGE, NULL, T.addr[to], &sc));
	for (i = 0; i < 100; i++)
		t_poll(&T);	/* the RTS waits, unexpected */
	assert_int_equal(fi_av_remove(T.av, &T.addr[1], 1, 0), 0);
	for (i = 0; i < 100; i++)
		t_poll(&T);
	assert_non_null(conn_of(0, 1)->peer);	/* deferred */
	assert_int_equal(iep(0)->conns_removed, 1);
	T_POST(&T, fi_recv(T.ep[to], dst, LARGE, NULL, FI_ADDR_UNSPEC, &rc));
	wait_short_ok(&rc);
	wait_short_ok(&sc);
	assert_int_equal(t_check(dst, LARGE, seed), -1);
	wait_unmapped(0, 1);
	assert_int_equal(iep(0)->conns_removed, 0);
	free(src);
	free(dst);
	t_close(&T);
}

/* Our large send toward the removed peer waits for its receive. */
static void test_av_remove_inflight_send(void **state)
{
	(void)state;
	t_remove_while_rts_waits(0, 1, 7);
}

/* The removed peer's large message waits unexpected here: matching it
 * pulls from the peer. */
static void test_av_remove_unexpected_rts(void **state)
{
	(void)state;
	t_remove_while_rts_waits(1, 0, 17);
}

/* A large read drains the target's region through our mapping (bounce)
 * or the target writes into ours (CMA) while the address is removed: it
 * completes with the right bytes, then the mapping goes. */
static void test_av_remove_inflight_read(void **state)
{
	uint8_t *tbuf, *dst;
	struct fi_context rc;
	struct fid_mr *mr;

	(void)state;
	t_start_large_read(8, &tbuf, &dst, &mr, &rc);
	assert_int_equal(fi_av_remove(T.av, &T.addr[1], 1, 0), 0);
	wait_short_ok(&rc);
	assert_int_equal(t_check(dst, LARGE, 8), -1);
	wait_unmapped(0, 1);
	assert_int_equal(fi_close(&mr->fid), 0);
	free(tbuf);
	free(dst);
	t_close(&T);
}

/* Inline messages still in the peer's queue name us by our slot there:
 * the slot is kept until the peer consumed them. */
static void test_av_remove_unconsumed(void **state)
{
	uint8_t src[SMALL], dst[SMALL];
	struct fi_context rc;
	int i;

	(void)state;
	t_open(&T, CAPS, 2);
	t_fill(src, SMALL, 9);
	memset(dst, 0, sizeof(dst));
	T_POST(&T, fi_inject(T.ep[0], src, SMALL, T.addr[1]));
	assert_int_equal(fi_av_remove(T.av, &T.addr[1], 1, 0), 0);
	for (i = 0; i < 100; i++)
		progress(0);	/* ep 1 does not poll */
	assert_non_null(conn_of(0, 1)->peer);
	T_POST(&T, fi_recv(T.ep[1], dst, SMALL, NULL, FI_ADDR_UNSPEC, &rc));
	wait_short_ok(&rc);
	assert_int_equal(t_check(dst, SMALL, 9), -1);
	wait_unmapped(0, 1);
	t_close(&T);
}

/* ep 0 sends a large message to ep 1, which posts no receive (its RTS
 * waits unexpected, nobody drains ep 0's segments), then one to ep 2,
 * which receives: ep 2's transfer must not wait for ep 1. */
static void test_bounce_fair_share(void **state)
{
	size_t big = 4 * LARGE;
	uint8_t *s1 = malloc(big), *d1 = calloc(1, big);
	uint8_t *s2 = malloc(LARGE), *d2 = calloc(1, LARGE);
	struct fi_context sc1, rc1, sc2, rc2;
	uint32_t segs = shm_env.bounce_seg_count;
	int i;

	(void)state;
	assert_non_null(s1);
	assert_non_null(d1);
	assert_non_null(s2);
	assert_non_null(d2);
	t_open(&T, CAPS, 3);
	t_fill(s1, big, 10);
	t_fill(s2, LARGE, 11);
	T_POST(&T, fi_send(T.ep[0], s1, big, NULL, T.addr[1], &sc1));
	for (i = 0; i < 100; i++)
		t_poll(&T);
	/* ep 1's transfer holds its share, not the pool. */
	assert_true(conn_of(0, 1)->bounce_segs > 0);
	assert_true(conn_of(0, 1)->bounce_segs <= segs / 2);
	assert_true(__builtin_popcountll(iep(0)->region->seg_owned) <
		    (int)segs);

	T_POST(&T, fi_recv(T.ep[2], d2, LARGE, NULL, FI_ADDR_UNSPEC, &rc2));
	T_POST(&T, fi_send(T.ep[0], s2, LARGE, NULL, T.addr[2], &sc2));
	wait_short_ok(&rc2);
	wait_short_ok(&sc2);
	assert_int_equal(t_check(d2, LARGE, 11), -1);

	T_POST(&T, fi_recv(T.ep[1], d1, big, NULL, FI_ADDR_UNSPEC, &rc1));
	wait_short_ok(&rc1);
	wait_short_ok(&sc1);
	assert_int_equal(t_check(d1, big, 10), -1);
	assert_int_equal(conn_of(0, 1)->bounce_segs, 0);
	assert_int_equal(conn_of(0, 2)->bounce_segs, 0);
	assert_int_equal(iep(0)->region->seg_owned, 0);
	free(s1);
	free(d1);
	free(s2);
	free(d2);
	t_close(&T);
}

/* A filled segment of ep 1's region that belongs to a read (the top bit
 * of the transfer id), the highest such index, or -1. */
static int read_seg_filled(void)
{
	struct shm_region *r = iep(1)->region;
	int i;

	for (i = (int)r->attr.bounce_seg_count - 1; i >= 0; i--)
		if (atomic_load(&r->segs[i].state) == SHM_SEG_FILLED &&
		    (r->segs[i].xfer_id >> 63))
			return i;
	return -1;
}

/* The target of a bounce read fills a segment whose header is corrupt:
 * the read fails with FI_EIO, and the target takes its segments back and
 * ends its part (else that peer's later cells would wait behind it), so a
 * second read moves the right bytes. */
static void test_bounce_read_malformed(void **state)
{
	uint8_t *tbuf, *dst;
	struct fi_cq_err_entry err;
	struct fi_context rc, rc2;
	struct fid_mr *mr;
	struct shm_conn *c;
	int seg, i;

	(void)state;
	t_start_large_read(12, &tbuf, &dst, &mr, &rc);
	for (i = 0; i < 1000 && (seg = read_seg_filled()) < 0; i++)
		progress(1);	/* only the target: it fills, nobody drains */
	assert_true(seg >= 0);
	iep(1)->region->segs[seg].offset = (uint64_t)1 << 40;

	err = t_wait_err(&T, &rc);
	assert_int_equal(err.err, FI_EIO);
	c = conn_of(1, 0);
	for (i = 0; i < 100 && iep(1)->rma_xfers; i++)
		t_poll(&T);
	assert_null(iep(1)->rma_xfers);
	assert_int_equal(c->rma_busy, 0);
	assert_int_equal(c->bounce_segs, 0);
	assert_int_equal(iep(1)->region->seg_owned, 0);

	memset(dst, 0, LARGE);
	T_POST(&T, fi_read(T.ep[0], dst, LARGE, NULL, T.addr[1],
			   raddr(tbuf, 0), fi_mr_key(mr), &rc2));
	wait_short_ok(&rc2);
	assert_int_equal(t_check(dst, LARGE, 12), -1);
	assert_int_equal(fi_close(&mr->fid), 0);
	free(tbuf);
	free(dst);
	t_close(&T);
}

/* ---- a flood of malformed cells ---------------------------------------- */

#define FLOOD_ROUNDS 2500
#define FLOOD_KINDS 8
#define FLOOD_INTERVAL_MS 500	/* FI_LOG_INTERVAL, set in main */

static uint64_t flood_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A producer that writes what it likes: a region of its own (so its slot
 * names a live region) and a slot in endpoint 0's region. */
struct raw_peer {
	struct shm_region *own;
	struct shm_peer *peer;
};

/* Its own queue takes endpoint 0's answers: read and dropped. */
static void raw_drain(struct raw_peer *r)
{
	struct shm_cell_hdr h;

	while (shm_queue_poll(r->own, &h))
		shm_queue_release(r->own);
}

static void raw_cell(struct raw_peer *r, uint16_t op, uint16_t flags,
		     uint32_t len, uint32_t proto, uint64_t cookie)
{
	struct shm_cell *c;
	int i;

	for (i = 0; !(c = shm_peer_reserve(r->peer)); i++) {
		progress(0);
		raw_drain(r);
		assert_true(i < 1000000);
	}
	memset(c->payload, 0xa5, 256);
	c->hdr.op = op;
	c->hdr.flags = flags;
	c->hdr.len = len;
	c->hdr.proto = proto;
	c->hdr.tag = 0;
	c->hdr.data = 0;
	c->hdr.cookie = cookie;
	shm_peer_commit(r->peer, c);
}

/* One malformed cell of each kind, round after round: kinds that warn
 * (a cell too long for the queue, a slot naming no region, a PUSHED or a
 * CTS for no transfer, a malformed bounce RMA request) and kinds that
 * are refused silently or in the answer (garbage RTS, ATOMIC, ACK, an
 * unknown opcode). Then endpoint 0 still serves endpoint 1. */
static void test_flood_malformed_cells(void **state)
{
	struct shm_region_attr a;
	struct raw_peer r;
	struct capture cap;
	const char *out;
	char good_name[SHM_NAME_MAX];
	uint64_t t0;
	int i, lines, bound;

	(void)state;
	t_open(&T, CAPS, 2);
	shm_region_attr_default(&a);
	assert_int_equal(shm_region_create(&a, &r.own), 0);
	assert_int_equal(shm_peer_open(r.own, shm_region_name(iep(0)->region),
				       &r.peer), 0);
	/* It ignores its credits (dropped cells never give them back). */
	shm_queue_credit_init(&r.peer->q, r.peer->q.consumed, 0);
	memcpy(good_name, r.peer->slot->name, SHM_NAME_MAX);
	/* The tests before warned from the same places: a fresh interval. */
	usleep((FLOOD_INTERVAL_MS + 100) * 1000);
	t0 = flood_now_ms();
	capture_start(&cap);
	for (i = 0; i < FLOOD_ROUNDS; i++) {
		raw_cell(&r, SHM_OP_SEND, SHM_F_VER, UINT32_MAX, 0, 0);
		raw_cell(&r, SHM_OP_PUSHED, SHM_F_VER, 0, 0, 1000 + i);
		raw_cell(&r, SHM_OP_CTS, SHM_F_VER, 0, 0, 1000 + i);
		raw_cell(&r, SHM_OP_WRITE, SHM_F_VER, 8, SHM_COPY_BOUNCE, i);
		raw_cell(&r, SHM_OP_RTS, SHM_F_VER, 8, 0, i);
		raw_cell(&r, SHM_OP_ATOMIC, SHM_F_VER, 8, 0, i);
		raw_cell(&r, SHM_OP_ACK, SHM_F_VER, 0, 0, 0xdead0000u + i);
		progress(0);
		/* A new generation under a slot whose name is garbage: the
		 * endpoint looks the slot up again each time. */
		memset(r.peer->slot->name, '/', 16);
		r.peer->q.src_gen++;
		raw_cell(&r, SHM_OP_MAX, SHM_F_VER, 0, 0, 0);
		progress(0);
		r.peer->q.src_gen--;
		memcpy(r.peer->slot->name, good_name, SHM_NAME_MAX);
		raw_drain(&r);
	}
	for (i = 0; i < 100; i++) {
		progress(0);
		raw_drain(&r);
	}
	out = capture_stop(&cap);
	lines = capture_count(out, "libfabric:");
	/* One line per warning site and FI_LOG_INTERVAL. */
	bound = FLOOD_KINDS *
		(int)(2 + (flood_now_ms() - t0) / FLOOD_INTERVAL_MS);
	print_message("%d malformed cells: %d warning lines (bound %d)\n",
		      FLOOD_ROUNDS * FLOOD_KINDS, lines, bound);
	if (lines > bound)
		print_message("first lines:\n%.2000s\n", out);
	assert_true(lines > 0);
	assert_true(lines <= bound);
	capture_free(&cap);

	shm_peer_close(r.peer);
	shm_region_close(r.own);
	send_recv(1, T.addr[0], 0, SMALL, 21);
	send_recv(0, T.addr[1], 1, SMALL, 22);
	t_close(&T);
}

#define T_BOTH(f)							\
	{ "cma/" #f, f, setup_cma, teardown, NULL },			\
	{ "bounce/" #f, f, setup_bounce, teardown, NULL }
#define T_BOUNCE(f)							\
	{ "bounce/" #f, f, setup_bounce, teardown, NULL }

int main(void)
{
	const struct CMUnitTest tests[] = {
		T_BOTH(test_av_remove_reinsert),
		T_BOTH(test_av_remove_slot_reused),
		T_BOTH(test_av_remove_inflight_send),
		T_BOTH(test_av_remove_unexpected_rts),
		T_BOTH(test_av_remove_inflight_read),
		T_BOTH(test_av_remove_unconsumed),
		T_BOUNCE(test_bounce_fair_share),
		T_BOUNCE(test_bounce_read_malformed),
		T_BOUNCE(test_flood_malformed_cells),
	};

	/* The flood test counts warning lines: they must be on. */
	setenv("FI_LOG_LEVEL", "warn", 1);
	setenv("FI_LOG_INTERVAL", "500", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
