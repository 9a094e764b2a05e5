/* SPDX-License-Identifier: MIT */
/*
 * The collective engine's algorithms without a network: every rank's
 * round generator runs in a simulated group, messages delivered in random
 * order, and a send's data read either when it is posted or only when
 * its receiver takes it (as a rendezvous reads the sender's memory late),
 * so a schedule that forwards data before it is final, or overwrites what
 * a send still reads, gives wrong results. Checked for n = 1..9, 13, 16:
 * every message matches a receive of the same round and length, every
 * result element equals a serial computation (int64 sums, exact), all
 * ranks of an allreduce end bitwise equal (double sums), a barrier
 * completes nowhere before every rank entered it, and a few schedules are
 * spelled out (who exchanges what in each round).
 */
#include "util_test.h"
#include "../util_coll_priv.h"
#include <stdio.h>

#define SIM_MAX_RANKS 16
#define SIM_MAX_MSGS 65536

struct sim_msg {
	uint32_t src, dst, round;
	size_t len;
	bool lazy;
	const uint8_t *from;		/* lazy: sender's memory */
	uint8_t *data;			/* eager: captured at post */
	bool live;
};

struct sim_pending {
	uint32_t round;
	uint32_t peer;
	struct util_coll_ref ref;
	bool done;
};

struct sim_rank {
	struct util_coll_phase ph;
	uint8_t *buf[4];		/* by enum util_coll_buf */
	uint32_t next_start, next_done;
	struct util_coll_round rounds[UC_WIN_MAX];
	struct sim_pending recvs[UC_WIN_MAX][UC_XFER_MAX];
	uint32_t sends_out;
	bool entered, finished;
};

static struct {
	struct sim_rank r[SIM_MAX_RANKS];
	struct sim_msg m[SIM_MAX_MSGS];
	uint32_t nmsg, n;
	enum fi_op op;
	enum fi_datatype dt;
	bool lazy;
	unsigned seed;
} S;

/* xorshift: a plain LCG's low bits cycle too fast for "% n" choices */
static unsigned sim_rand(void)
{
	S.seed ^= S.seed << 13;
	S.seed ^= S.seed >> 17;
	S.seed ^= S.seed << 5;
	return S.seed;
}

static uint8_t *sim_ptr(struct sim_rank *rk, const struct util_coll_ref *ref)
{
	assert_true(ref->buf >= UC_BUF_IN && ref->buf <= UC_BUF_TMP);
	assert_non_null(rk->buf[ref->buf]);
	return rk->buf[ref->buf] + ref->off;
}

static uint32_t sim_group_rank(const struct util_coll_phase *ph, uint32_t p)
{
	return ph->map ? ph->map[p] : p;
}

static void sim_post_send(uint32_t me, const struct util_coll_xfer *x,
			  uint32_t k)
{
	struct sim_rank *rk = &S.r[me];
	struct sim_msg *m;

	assert_true(S.nmsg < SIM_MAX_MSGS);
	m = &S.m[S.nmsg++];
	m->src = me;
	m->dst = sim_group_rank(&rk->ph, x->peer);
	m->round = k;
	m->len = x->ref.len;
	m->lazy = S.lazy;
	m->live = true;
	m->from = x->ref.len ? sim_ptr(rk, &x->ref) : NULL;
	m->data = NULL;
	if (!m->lazy && m->len) {
		m->data = malloc(m->len);
		memcpy(m->data, m->from, m->len);
	}
	if (m->lazy)
		rk->sends_out++;
}

/* Complete rounds in order, start what the window allows. */
static bool sim_advance(uint32_t me)
{
	struct sim_rank *rk = &S.r[me];
	struct util_coll_phase *ph = &rk->ph;
	bool moved = false;

	if (!rk->entered || rk->finished)
		return false;
	for (;;) {
		while (rk->next_done < rk->next_start) {
			uint32_t s = rk->next_done % UC_WIN_MAX;
			struct util_coll_round *r = &rk->rounds[s];
			bool ready = true;

			for (int i = 0; i < r->nrecv; i++)
				ready = ready && rk->recvs[s][i].done;
			if (!ready || (r->fence && rk->sends_out))
				break;
			for (int i = 0; i < r->nact; i++) {
				struct util_coll_act *a = &r->act[i];

				if (a->kind == UC_ACT_COPY) {
					memmove(sim_ptr(rk, &a->dst),
						sim_ptr(rk, &a->a), a->dst.len);
				} else {
					assert_int_equal(util_atomic_reduce(
						S.op, S.dt, sim_ptr(rk, &a->dst),
						sim_ptr(rk, &a->a),
						sim_ptr(rk, &a->b),
						a->dst.len /
						util_atomic_any_size(S.dt)), 0);
				}
			}
			rk->next_done++;
			moved = true;
		}
		if (rk->next_done == ph->nrounds) {
			if (!rk->sends_out) {
				rk->finished = true;
				moved = true;
			}
			return moved;
		}
		if (rk->next_start >= ph->nrounds ||
		    rk->next_start - rk->next_done >= ph->win)
			return moved;
		{
			uint32_t k = rk->next_start, s = k % UC_WIN_MAX;
			struct util_coll_round *r = &rk->rounds[s];

			util_coll_phase_round(ph, k, r);
			assert_true(r->start_after <= k);
			if (r->start_after > rk->next_done)
				return moved;
			for (int i = 0; i < r->nrecv; i++) {
				rk->recvs[s][i].round = k;
				rk->recvs[s][i].peer =
					sim_group_rank(ph, r->recv[i].peer);
				rk->recvs[s][i].ref = r->recv[i].ref;
				rk->recvs[s][i].done = false;
			}
			for (int i = 0; i < r->nsend; i++)
				sim_post_send(me, &r->send[i], k);
			rk->next_start++;
			moved = true;
		}
	}
}

/* Deliver message i if its receiver posted the receive for it. */
static bool sim_deliver(uint32_t i)
{
	struct sim_msg *m = &S.m[i];
	struct sim_rank *rk = &S.r[m->dst];

	for (uint32_t k = rk->next_done; k < rk->next_start; k++) {
		uint32_t s = k % UC_WIN_MAX;
		struct util_coll_round *r = &rk->rounds[s];

		for (int j = 0; j < r->nrecv; j++) {
			struct sim_pending *p = &rk->recvs[s][j];

			if (p->done || p->round != m->round || p->peer != m->src)
				continue;
			assert_int_equal(p->ref.len, m->len);
			if (m->len)
				memcpy(sim_ptr(rk, &p->ref),
				       m->lazy ? m->from : m->data, m->len);
			p->done = true;
			m->live = false;
			free(m->data);
			if (m->lazy)
				S.r[m->src].sends_out--;
			return true;
		}
	}
	return false;
}

/* Run until every rank finished: random deliveries and advances; ranks
 * enter at random moments. */
static void sim_run(void)
{
	uint32_t entered = 0, guard = 0;

	for (;;) {
		bool moved = false, all = true;

		if (++guard >= 10000000) fail_msg("no end: alg %d n %u", S.r[0].ph.alg, S.n);
		for (uint32_t r = 0; r < S.n; r++)
			all = all && S.r[r].finished;
		if (all)
			break;
		if (entered < S.n && sim_rand() % 4 == 0) {
			uint32_t r = sim_rand() % S.n;

			if (!S.r[r].entered) {
				S.r[r].entered = true;
				entered++;
			}
		}
		for (uint32_t t = 0; t < S.nmsg; t++) {
			uint32_t i = (t + sim_rand()) % S.nmsg;

			if (S.m[i].live && sim_rand() % 2 && sim_deliver(i))
				moved = true;
		}
		for (uint32_t t = 0; t < S.n; t++)
			if (sim_advance((t + sim_rand()) % S.n))
				moved = true;
		if (!moved && entered == S.n) {
			/* deliver anything deliverable before concluding */
			for (uint32_t i = 0; i < S.nmsg; i++)
				if (S.m[i].live && sim_deliver(i))
					moved = true;
			for (uint32_t r = 0; r < S.n; r++)
				if (sim_advance(r))
					moved = true;
			if (!moved) {
				for (uint32_t r = 0; r < S.n; r++)
					fprintf(stderr, "rank %u: done %u of "
						"%u started %u\n", r,
						S.r[r].next_done,
						S.r[r].ph.nrounds,
						S.r[r].next_start);
				fail_msg("schedule stalls");
			}
		}
	}
	for (uint32_t i = 0; i < S.nmsg; i++)
		assert_false(S.m[i].live);
}

/* ---- a simulated collective ---------------------------------------------- */

struct sim_case {
	uint8_t alg;
	uint32_t n;
	size_t count;
	uint32_t root;
	size_t chunk;
	uint32_t window;
	bool in_place;
	enum fi_datatype dt;
};

/* Input sizes (elements) per algorithm family, out likewise. */
static void sim_sizes(const struct sim_case *c, size_t *in, size_t *out)
{
	switch (c->alg) {
	case UC_ALG_ALLGATHER_BRUCK:
	case UC_ALG_ALLGATHER_RING:
	case UC_ALG_GATHER_BINOMIAL:
	case UC_ALG_GATHER_LINEAR:
		*in = c->count;
		*out = c->count * c->n;
		break;
	case UC_ALG_SCATTER_BINOMIAL:
	case UC_ALG_SCATTER_LINEAR:
	case UC_ALG_REDSCAT_PAIRWISE:
		*in = c->count * c->n;
		*out = c->count;
		break;
	case UC_ALG_ALLTOALL_PAIRWISE:
		*in = *out = c->count * c->n;
		break;
	default:
		*in = *out = c->count;
		break;
	}
}

static int64_t sim_val(uint32_t rank, size_t i)
{
	return (int64_t)(rank * 1000003u + i * 7919u + 1);
}

static double sim_dval(uint32_t rank, size_t i)
{
	/* values whose sums round, so the order shows */
	return 1.0 / (double)(rank + 3) + (double)i * 0.1 + 1e-7 * rank;
}

static void sim_fill(uint8_t *p, enum fi_datatype dt, uint32_t rank,
		     size_t elems)
{
	for (size_t i = 0; i < elems; i++) {
		if (dt == FI_DOUBLE) {
			double d = sim_dval(rank, i);

			memcpy(p + i * 8, &d, 8);
		} else {
			int64_t v = sim_val(rank, i);

			memcpy(p + i * 8, &v, 8);
		}
	}
}

static int64_t sim_get(const uint8_t *p, size_t i)
{
	int64_t v;

	memcpy(&v, p + i * 8, 8);
	return v;
}

static void sim_setup(const struct sim_case *c)
{
	size_t in, out, esize = 8;

	memset(&S.r, 0, sizeof(S.r));
	for (uint32_t i = 0; i < S.nmsg; i++)
		if (S.m[i].live)
			free(S.m[i].data);
	S.nmsg = 0;
	S.n = c->n;
	S.op = FI_SUM;
	S.dt = c->dt;
	sim_sizes(c, &in, &out);
	for (uint32_t r = 0; r < c->n; r++) {
		struct sim_rank *rk = &S.r[r];
		struct util_coll_phase *ph = &rk->ph;

		ph->alg = c->alg;
		ph->n = c->n;
		ph->me = r;
		ph->root = c->root;
		ph->src = 0;
		ph->count = c->count;
		ph->esize = esize;
		ph->chunk = c->chunk;
		ph->window = c->window;
		ph->in = UC_BUF_IN;
		ph->out = UC_BUF_OUT;
		ph->acc = (r == c->root) ? UC_BUF_OUT : UC_BUF_TMP;
		/* reduce: non-root partials in tmp, before the phase's own */
		ph->acc_off = 0;
		ph->tmp_off = (r == c->root) ? 0 : c->count * esize;
		assert_int_equal(util_coll_phase_setup(ph), 0);
		rk->buf[UC_BUF_IN] = calloc(1, in * esize + 1);
		rk->buf[UC_BUF_OUT] = calloc(1, out * esize + 1);
		rk->buf[UC_BUF_TMP] = calloc(1, ph->tmp_off + ph->tmp_len + 1);
		sim_fill(rk->buf[UC_BUF_IN], c->dt, r, in);
		if (c->alg == UC_ALG_BCAST_BINOMIAL ||
		    c->alg == UC_ALG_BCAST_SCATTER_RING) {
			if (r == c->root)
				sim_fill(rk->buf[UC_BUF_OUT], c->dt, r, out);
		}
		if (c->in_place) {
			/* the result buffer is the input */
			free(rk->buf[UC_BUF_OUT]);
			rk->buf[UC_BUF_OUT] = rk->buf[UC_BUF_IN];
			ph->in = UC_BUF_OUT;
		}
	}
}

static void sim_free(void)
{
	for (uint32_t r = 0; r < S.n; r++) {
		if (S.r[r].buf[UC_BUF_OUT] != S.r[r].buf[UC_BUF_IN])
			free(S.r[r].buf[UC_BUF_OUT]);
		free(S.r[r].buf[UC_BUF_IN]);
		free(S.r[r].buf[UC_BUF_TMP]);
	}
}

/* What rank r's result element i must be. */
static int64_t sim_expect(const struct sim_case *c, uint32_t r, size_t i)
{
	uint32_t n = c->n, src;
	int64_t sum = 0;

	switch (c->alg) {
	case UC_ALG_ALLREDUCE_RD:
	case UC_ALG_ALLREDUCE_RAB:
	case UC_ALG_ALLREDUCE_RING:
	case UC_ALG_REDUCE_BINOMIAL:
	case UC_ALG_REDUCE_RING:
		for (uint32_t q = 0; q < n; q++)
			sum = (int64_t)((uint64_t)sum + (uint64_t)sim_val(q, i));
		return sum;
	case UC_ALG_REDSCAT_PAIRWISE:
		for (uint32_t q = 0; q < n; q++)
			sum = (int64_t)((uint64_t)sum +
					(uint64_t)sim_val(q, r * c->count + i));
		return sum;
	case UC_ALG_BCAST_BINOMIAL:
	case UC_ALG_BCAST_SCATTER_RING:
		return sim_val(c->root, i);
	case UC_ALG_ALLGATHER_BRUCK:
	case UC_ALG_ALLGATHER_RING:
	case UC_ALG_GATHER_BINOMIAL:
	case UC_ALG_GATHER_LINEAR:
		return sim_val((uint32_t)(i / c->count), i % c->count);
	case UC_ALG_SCATTER_BINOMIAL:
	case UC_ALG_SCATTER_LINEAR:
		return sim_val(c->root, r * c->count + i);
	case UC_ALG_ALLTOALL_PAIRWISE:
		src = (uint32_t)(i / c->count);
		return sim_val(src, r * c->count + i % c->count);
	default:
		fail_msg("no expectation for alg %d", c->alg);
		return 0;
	}
}

static bool sim_has_result(const struct sim_case *c, uint32_t r)
{
	switch (c->alg) {
	case UC_ALG_REDUCE_BINOMIAL:
	case UC_ALG_REDUCE_RING:
	case UC_ALG_GATHER_BINOMIAL:
	case UC_ALG_GATHER_LINEAR:
		return r == c->root;
	default:
		return true;
	}
}

static void sim_check(const struct sim_case *c)
{
	size_t in, out;

	sim_sizes(c, &in, &out);
	for (uint32_t r = 0; r < c->n; r++) {
		if (!sim_has_result(c, r))
			continue;
		for (size_t i = 0; i < out; i++) {
			int64_t got = sim_get(S.r[r].buf[UC_BUF_OUT], i);
			int64_t want = sim_expect(c, r, i);

			if (got != want)
				fail_msg("alg %d n %u count %zu root %u chunk "
					 "%zu window %u lazy %d: rank %u "
					 "element %zu is %lld, want %lld",
					 c->alg, c->n, c->count, c->root,
					 c->chunk, c->window, S.lazy, r, i,
					 (long long)got, (long long)want);
		}
	}
}

static void sim_one(const struct sim_case *c)
{
	for (int lazy = 0; lazy < 2; lazy++) {
		S.lazy = lazy;
		sim_setup(c);
		sim_run();
		sim_check(c);
		sim_free();
	}
}

static const size_t sim_counts[] = { 0, 1, 2, 5, 8, 9, 17, 40 };
static const uint32_t sim_ns[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16 };

static void sim_matrix(uint8_t alg, bool rooted)
{
	S.seed = 12345u + alg;
	for (size_t ni = 0; ni < sizeof(sim_ns) / sizeof(sim_ns[0]); ni++) {
		uint32_t n = sim_ns[ni];

		for (size_t ci = 0; ci < sizeof(sim_counts) /
					  sizeof(sim_counts[0]); ci++) {
			struct sim_case c = {
				.alg = alg, .n = n, .count = sim_counts[ci],
				.dt = FI_INT64,
			};
			uint32_t roots[3] = { 0, n - 1, n / 2 };

			for (int ri = 0; ri < (rooted ? 3 : 1); ri++) {
				c.root = roots[ri];
				/* no pieces; 8-byte pieces; 24-byte pieces,
				 * with windows 1, 3 and 16 */
				c.chunk = 0;
				c.window = 1;
				sim_one(&c);
				c.chunk = 8;
				c.window = 3;
				sim_one(&c);
				c.chunk = 24;
				c.window = 16;
				sim_one(&c);
			}
		}
	}
}

static void test_allreduce_rd(void **s) { sim_matrix(UC_ALG_ALLREDUCE_RD, false); }
static void test_allreduce_rab(void **s) { sim_matrix(UC_ALG_ALLREDUCE_RAB, false); }
static void test_allreduce_ring(void **s) { sim_matrix(UC_ALG_ALLREDUCE_RING, false); }
static void test_bcast_binomial(void **s) { sim_matrix(UC_ALG_BCAST_BINOMIAL, true); }
static void test_bcast_scatter_ring(void **s) { sim_matrix(UC_ALG_BCAST_SCATTER_RING, true); }
static void test_reduce_binomial(void **s) { sim_matrix(UC_ALG_REDUCE_BINOMIAL, true); }
static void test_reduce_ring(void **s) { sim_matrix(UC_ALG_REDUCE_RING, true); }
static void test_allgather_bruck(void **s) { sim_matrix(UC_ALG_ALLGATHER_BRUCK, false); }
static void test_allgather_ring(void **s) { sim_matrix(UC_ALG_ALLGATHER_RING, false); }
static void test_redscat(void **s) { sim_matrix(UC_ALG_REDSCAT_PAIRWISE, false); }
static void test_alltoall(void **s) { sim_matrix(UC_ALG_ALLTOALL_PAIRWISE, false); }
static void test_scatter_binomial(void **s) { sim_matrix(UC_ALG_SCATTER_BINOMIAL, true); }
static void test_scatter_linear(void **s) { sim_matrix(UC_ALG_SCATTER_LINEAR, true); }
static void test_gather_binomial(void **s) { sim_matrix(UC_ALG_GATHER_BINOMIAL, true); }
static void test_gather_linear(void **s) { sim_matrix(UC_ALG_GATHER_LINEAR, true); }

/* In place (out is in) where the algorithm allows it. */
static void test_in_place(void **s)
{
	static const uint8_t algs[] = {
		UC_ALG_ALLREDUCE_RD, UC_ALG_ALLREDUCE_RAB,
		UC_ALG_ALLREDUCE_RING,
	};

	S.seed = 777;
	for (size_t a = 0; a < sizeof(algs); a++)
		for (uint32_t n = 1; n <= 9; n++) {
			struct sim_case c = {
				.alg = algs[a], .n = n, .count = 3 * n + 2,
				.chunk = 16, .window = 4, .in_place = true,
				.dt = FI_INT64,
			};

			sim_one(&c);
		}
}

/* Every rank of an allreduce ends with the same bits, with rounding. */
static void test_allreduce_bitwise(void **s)
{
	static const uint8_t algs[] = {
		UC_ALG_ALLREDUCE_RD, UC_ALG_ALLREDUCE_RAB,
		UC_ALG_ALLREDUCE_RING,
	};

	S.seed = 4242;
	for (size_t a = 0; a < sizeof(algs); a++)
		for (uint32_t n = 1; n <= 9; n++) {
			struct sim_case c = {
				.alg = algs[a], .n = n, .count = 2 * n + 3,
				.chunk = 16, .window = 2, .dt = FI_DOUBLE,
			};

			S.lazy = true;
			sim_setup(&c);
			sim_run();
			for (uint32_t r = 1; r < n; r++)
				assert_memory_equal(S.r[r].buf[UC_BUF_OUT],
						    S.r[0].buf[UC_BUF_OUT],
						    c.count * 8);
			sim_free();
		}
}

/* A dissemination barrier completes at no rank before all entered. */
static void test_barrier(void **s)
{
	S.seed = 99;
	for (uint32_t n = 1; n <= 16; n++) {
		struct sim_case c = { .alg = UC_ALG_BARRIER_DISS, .n = n,
				      .dt = FI_INT64 };

		for (int rep = 0; rep < 20; rep++) {
			uint32_t entered = 0, guard = 0;

			S.lazy = false;
			sim_setup(&c);
			/* enter ranks one by one, running all to
			 * quiescence in between */
			for (uint32_t e = 0; e < n; e++) {
				uint32_t r;

				do {
					r = sim_rand() % n;
				} while (S.r[r].entered);
				S.r[r].entered = true;
				entered++;
				for (bool moved = true; moved;) {
					moved = false;
					assert_true(++guard < 100000);
					for (uint32_t i = 0; i < S.nmsg; i++)
						if (S.m[i].live &&
						    sim_deliver(i))
							moved = true;
					for (uint32_t q = 0; q < n; q++)
						if (sim_advance(q))
							moved = true;
				}
				for (uint32_t q = 0; q < n; q++)
					if (S.r[q].finished)
						assert_int_equal(entered, n);
			}
			for (uint32_t q = 0; q < n; q++)
				assert_true(S.r[q].finished);
			sim_free();
		}
	}
}

/* ---- schedules spelled out ----------------------------------------------- */

/* Rank me's rounds as "k:S<peer>/<off>+<len> R<peer>/... A" lines. */
static void sched_str(const struct util_coll_phase *ph, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (uint32_t k = 0; k < ph->nrounds; k++) {
		struct util_coll_round r;

		util_coll_phase_round(ph, k, &r);
		if (!r.nsend && !r.nrecv && !r.nact)
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%u:", k);
		for (int i = 0; i < r.nsend; i++)
			o += (size_t)snprintf(buf + o, len - o, "S%u/%zu+%zu ",
					      r.send[i].peer, r.send[i].ref.off,
					      r.send[i].ref.len);
		for (int i = 0; i < r.nrecv; i++)
			o += (size_t)snprintf(buf + o, len - o, "R%u/%zu+%zu ",
					      r.recv[i].peer, r.recv[i].ref.off,
					      r.recv[i].ref.len);
		if (r.nact)
			o += (size_t)snprintf(buf + o, len - o, "A%u ", r.nact);
	}
}

static void expect_sched(uint8_t alg, uint32_t n, uint32_t me, size_t count,
			 uint32_t root, const char *want)
{
	struct util_coll_phase ph = {
		.alg = alg, .n = n, .me = me, .count = count, .esize = 1,
		.root = root, .window = 1, .in = UC_BUF_IN, .out = UC_BUF_OUT,
		.acc = UC_BUF_OUT,
	};
	char got[1024];

	assert_int_equal(util_coll_phase_setup(&ph), 0);
	sched_str(&ph, got, sizeof(got));
	if (strcmp(got, want))
		fail_msg("alg %d n %u rank %u: got \"%s\", want \"%s\"", alg, n,
			 me, got, want);
}

static void test_spelled_out(void **s)
{
	/* dissemination, n = 5: partners at distance 1, 2, 4 */
	expect_sched(UC_ALG_BARRIER_DISS, 5, 0, 0, 0,
		     "0:S1/0+0 R4/0+0 1:S2/0+0 R3/0+0 2:S4/0+0 R1/0+0 ");
	/* recursive doubling, n = 3: rank 0 folds its input into rank 1,
	 * which exchanges with rank 2, then hands the result back; n = 4:
	 * no fold, two steps, the first sending the input */
	expect_sched(UC_ALG_ALLREDUCE_RD, 3, 0, 4, 0,
		     "0:S1/0+4 2:R1/0+4 ");
	expect_sched(UC_ALG_ALLREDUCE_RD, 3, 1, 4, 0,
		     "0:R0/0+4 A1 1:S2/0+4 R2/0+4 A1 2:S0/0+4 ");
	expect_sched(UC_ALG_ALLREDUCE_RD, 3, 2, 4, 0,
		     "1:S1/0+4 R1/0+4 A1 ");
	expect_sched(UC_ALG_ALLREDUCE_RD, 4, 2, 4, 0,
		     "0:S3/0+4 R3/0+4 A1 1:S0/0+4 R0/0+4 A1 ");
	/* ring, n = 3, 6 bytes: blocks of 2; rank 0 sends its input's
	 * block 2, then block 1 reduced, then forwards block 0 (final
	 * here) and block 2; no copy of the input */
	expect_sched(UC_ALG_ALLREDUCE_RING, 3, 0, 6, 0,
		     "1:S1/4+2 R2/0+2 A1 2:S1/2+2 R2/0+2 A1 "
		     "3:S1/0+2 R2/4+2 4:S1/4+2 R2/2+2 ");
	/* binomial broadcast from rank 2 of 5: vranks 0..4 are ranks
	 * 2, 3, 4, 0, 1 */
	expect_sched(UC_ALG_BCAST_BINOMIAL, 5, 2, 8, 2,
		     "0:S3/0+8 1:S4/0+8 2:S1/0+8 ");
	expect_sched(UC_ALG_BCAST_BINOMIAL, 5, 1, 8, 2,
		     "2:R2/0+8 ");
	/* Bruck allgather, n = 3, 1 byte each: distances 1 and 2 */
	expect_sched(UC_ALG_ALLGATHER_BRUCK, 3, 1, 1, 0,
		     "0:A1 1:S0/0+1 R2/1+1 2:S2/0+1 R0/2+1 3:A2 ");
	/* alltoall, n = 3: to me + k, from me - k */
	expect_sched(UC_ALG_ALLTOALL_PAIRWISE, 3, 0, 2, 0,
		     "0:A1 1:S1/2+2 R2/4+2 2:S2/4+2 R1/2+2 ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spelled_out),
		cmocka_unit_test(test_barrier),
		cmocka_unit_test(test_allreduce_rd),
		cmocka_unit_test(test_allreduce_rab),
		cmocka_unit_test(test_allreduce_ring),
		cmocka_unit_test(test_in_place),
		cmocka_unit_test(test_allreduce_bitwise),
		cmocka_unit_test(test_bcast_binomial),
		cmocka_unit_test(test_bcast_scatter_ring),
		cmocka_unit_test(test_reduce_binomial),
		cmocka_unit_test(test_reduce_ring),
		cmocka_unit_test(test_allgather_bruck),
		cmocka_unit_test(test_allgather_ring),
		cmocka_unit_test(test_redscat),
		cmocka_unit_test(test_alltoall),
		cmocka_unit_test(test_scatter_binomial),
		cmocka_unit_test(test_scatter_linear),
		cmocka_unit_test(test_gather_binomial),
		cmocka_unit_test(test_gather_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
