/* SPDX-License-Identifier: MIT */
/*
 * Collectives (fi_collective(3)), every result element checked against a
 * serial computation:
 *   -x matrix  (default) every collective x every datatype x every
 *              reduction op, counts 0, 1, 7, in place and not, roots
 *              varying; fi_query_collective must agree with what the
 *              call does (supported: it works; not: -FI_EOPNOTSUPP);
 *              plus barrier ordering and bitwise equal allreduce results
 *              across ranks and across repeats.
 *   -x sizes   groups of 1 .. n members (the first k ranks), counts at
 *              the algorithm thresholds +-1 (FI_COLL_* set small here,
 *              so the thresholds are small), a few types and ops.
 *   -x hier    as sizes, with every two ranks taken as one host
 *              (FI_COLL_HOST_RANKS=2): hierarchical allreduce.
 *   -x big     16 MiB: allreduce (in place and not), broadcast,
 *              reduce-scatter, allgather, alltoall, with the default
 *              thresholds (pipelined rings).
 *   -x groups  two overlapping groups with collectives in flight on both
 *              at once.
 * Input values are chosen so that every reduction is exact in every
 * datatype (small integers, powers of two), so any order of reduction
 * must give the serial result bit for bit.
 */
#define _GNU_SOURCE
#include "common/ft.h"
#include "common/ft_coll.h"
#include "common/ft_coll_vals.h"

#include <complex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *coll_name[] = {
	[FI_BARRIER] = "barrier", [FI_BROADCAST] = "broadcast",
	[FI_ALLTOALL] = "alltoall", [FI_ALLREDUCE] = "allreduce",
	[FI_ALLGATHER] = "allgather", [FI_REDUCE_SCATTER] = "reduce_scatter",
	[FI_REDUCE] = "reduce", [FI_SCATTER] = "scatter", [FI_GATHER] = "gather",
};

/* ---- one collective ------------------------------------------------------ */

struct job {
	struct ft_ctx *ctx;
	struct ft_coll_group *g;
	enum fi_collective_op coll;
	const struct dt_info *d;
	enum fi_op op;
	size_t count;
	int root;
	bool in_place;
	/* buffers */
	uint8_t *in, *out, *mem;
	size_t in_len, out_len;
};

static bool reduces(enum fi_collective_op c)
{
	return c == FI_ALLREDUCE || c == FI_REDUCE || c == FI_REDUCE_SCATTER;
}

/* Element i of member r's input. */
static void input_elem(const struct job *j, int r, size_t i, uint8_t *p)
{
	if (reduces(j->coll))
		store(j->d, p, gen(j->d, j->op, r, i));
	else
		gen_bytes(p, j->d->size, r, i);
}

/* Expected element i of this rank's result. */
static void expect_elem(const struct job *j, size_t i, uint8_t *p)
{
	int n = j->g->n, me = j->g->me;
	size_t c = j->count, idx = i;
	struct val acc;

	switch (j->coll) {
	case FI_REDUCE_SCATTER:
		idx = (size_t)me * c + i;
		/* fall through */
	case FI_ALLREDUCE:
	case FI_REDUCE:
		acc = gen(j->d, j->op, 0, idx);
		for (int r = 1; r < n; r++)
			acc = apply(j->d, j->op, acc, gen(j->d, j->op, r, idx));
		store(j->d, p, acc);
		return;
	case FI_BROADCAST:
		gen_bytes(p, j->d->size, j->root, i);
		return;
	case FI_ALLGATHER:
	case FI_GATHER:
		gen_bytes(p, j->d->size, (int)(i / c), i % c);
		return;
	case FI_ALLTOALL:
		gen_bytes(p, j->d->size, (int)(i / c), (size_t)me * c + i % c);
		return;
	case FI_SCATTER:
		gen_bytes(p, j->d->size, j->root, (size_t)me * c + i);
		return;
	default:
		return;
	}
}

/* Elements of input and result at this rank. */
static void job_sizes(const struct job *j, size_t *in, size_t *out)
{
	size_t c = j->count, n = (size_t)j->g->n;
	bool root = j->g->me == j->root;

	switch (j->coll) {
	case FI_BROADCAST:
		*in = 0;
		*out = c;
		break;
	case FI_ALLREDUCE:
		*in = *out = c;
		break;
	case FI_REDUCE:
		*in = c;
		*out = root ? c : 0;
		break;
	case FI_ALLGATHER:
		*in = c;
		*out = c * n;
		break;
	case FI_REDUCE_SCATTER:
		*in = c * n;
		*out = c;
		break;
	case FI_ALLTOALL:
		*in = *out = c * n;
		break;
	case FI_SCATTER:
		*in = root ? c * n : 0;
		*out = c;
		break;
	case FI_GATHER:
		*in = c;
		*out = root ? c * n : 0;
		break;
	default:
		*in = *out = 0;
	}
}

/* Lay out in and out: separate, or one buffer as each collective's in
 * place form has it. */
static int job_buffers(struct job *j)
{
	size_t es = j->d->size, in, out, me = (size_t)j->g->me;
	size_t root_off = (size_t)j->root * j->count * es;
	bool root = j->g->me == j->root;

	job_sizes(j, &in, &out);
	j->in_len = in * es;
	j->out_len = out * es;
	j->mem = malloc(j->in_len + j->out_len + 64);
	if (!j->mem)
		return -1;
	memset(j->mem, 0xa5, j->in_len + j->out_len + 64);
	j->in = j->mem;
	j->out = j->mem + j->in_len + 32;
	if (!j->in_place)
		return 0;
	switch (j->coll) {
	case FI_ALLREDUCE:
	case FI_ALLTOALL:
	case FI_REDUCE_SCATTER:
		j->out = j->in;
		break;
	case FI_REDUCE:
		if (root)
			j->out = j->in;
		break;
	case FI_ALLGATHER:
		j->in = j->out + me * j->count * es;
		break;
	case FI_GATHER:
		if (root)
			j->in = j->out + root_off;
		break;
	case FI_SCATTER:
		if (root)
			j->out = j->in + root_off;
		break;
	default:
		break;
	}
	return 0;
}

static ssize_t job_post(struct job *j, void *fctx)
{
	struct fid_ep *ep = j->ctx->ep;
	fi_addr_t coll = j->g->addr, root = j->g->members[j->root];
	enum fi_datatype dt = j->d->dt;
	size_t c = j->count;

	switch (j->coll) {
	case FI_BARRIER:
		return fi_barrier(ep, coll, fctx);
	case FI_BROADCAST:
		return fi_broadcast(ep, j->out, c, NULL, coll, root, dt, 0, fctx);
	case FI_ALLREDUCE:
		return fi_allreduce(ep, j->in, c, NULL, j->out, NULL, coll, dt,
				    j->op, 0, fctx);
	case FI_REDUCE:
		return fi_reduce(ep, j->in, c, NULL, j->out, NULL, coll, root,
				 dt, j->op, 0, fctx);
	case FI_REDUCE_SCATTER:
		return fi_reduce_scatter(ep, j->in, c, NULL, j->out, NULL, coll,
					 dt, j->op, 0, fctx);
	case FI_ALLGATHER:
		return fi_allgather(ep, j->in, c, NULL, j->out, NULL, coll, dt,
				    0, fctx);
	case FI_ALLTOALL:
		return fi_alltoall(ep, j->in, c, NULL, j->out, NULL, coll, dt, 0,
				   fctx);
	case FI_SCATTER:
		return fi_scatter(ep, j->in, c, NULL, j->out, NULL, coll, root,
				  dt, 0, fctx);
	case FI_GATHER:
		return fi_gather(ep, j->in, c, NULL, j->out, NULL, coll, root,
				 dt, 0, fctx);
	}
	return -FI_EINVAL;
}

static void job_fill(struct job *j)
{
	size_t es = j->d->size, in = j->in_len / es;
	int me = j->g->me;

	if (j->coll == FI_BROADCAST) {
		if (me == j->root)
			for (size_t i = 0; i < j->count; i++)
				gen_bytes(j->out + i * es, es, me, i);
		return;
	}
	for (size_t i = 0; i < in; i++)
		input_elem(j, me, i, j->in + i * es);
}

/* The big mode's float sums and maxima, without the generic (long double)
 * reference: same values, same exact results, a tenth of the time. */
static int job_check_float(struct job *j)
{
	size_t out = j->out_len / sizeof(float), off = 0;
	int n = j->g->n;
	float got;

	if (j->coll == FI_REDUCE_SCATTER)
		off = (size_t)j->g->me * j->count;
	for (size_t i = 0; i < out; i++) {
		size_t x = i + off;
		float acc = j->op == FI_SUM ? 0 : -1e30f;

		for (int r = 0; r < n; r++) {
			float v = j->op == FI_SUM ?
				  (float)((int)((r * 7 + x * 13) % 19) - 9) :
				  (float)((int)((r * 37 + x * 11) % 61) - 30);

			acc = j->op == FI_SUM ? acc + v : (v > acc ? v : acc);
		}
		memcpy(&got, j->out + i * sizeof(float), sizeof(got));
		if (got != acc) {
			FT_ERR(j->ctx, "%s float op %d count %zu: element %zu is "
			       "%f, want %f", coll_name[j->coll], j->op,
			       j->count, i, got, acc);
			return -1;
		}
	}
	return 0;
}

static int job_check(struct job *j)
{
	size_t es = j->d->size, out = j->out_len / es;
	uint8_t want[32];

	if (j->d->dt == FI_FLOAT && reduces(j->coll) &&
	    (j->op == FI_SUM || j->op == FI_MAX))
		return job_check_float(j);

	for (size_t i = 0; i < out; i++) {
		expect_elem(j, i, want);
		/* moved data: every byte; reduced: by value */
		if (reduces(j->coll) ? !same(j->d, j->out + i * es, want) :
				       memcmp(j->out + i * es, want, es)) {
			FT_ERR(j->ctx, "%s %s op %d count %zu root %d%s: "
			       "element %zu of %zu wrong (first byte 0x%02x, "
			       "want 0x%02x)", coll_name[j->coll], j->d->name,
			       j->op, j->count, j->root,
			       j->in_place ? " in place" : "", i, out,
			       j->out[i * es], want[0]);
			return -1;
		}
	}
	return 0;
}

/* Whether the engine says it supports it, checked against the answer's
 * element size. -1: the query itself is wrong. */
static int job_supported(struct job *j)
{
	struct fi_collective_attr attr = { .op = j->op, .datatype = j->d->dt };
	int ret = fi_query_collective(j->ctx->domain, j->coll, &attr, 0);

	if (ret == -FI_EOPNOTSUPP)
		return 0;
	if (ret) {
		FT_ERR(j->ctx, "fi_query_collective(%s, %s, op %d): %s",
		       coll_name[j->coll], j->d->name, j->op, fi_strerror(-ret));
		return -1;
	}
	if (j->coll != FI_BARRIER && attr.datatype_attr.size != j->d->size) {
		FT_ERR(j->ctx, "fi_query_collective(%s): size %zu for %s",
		       coll_name[j->coll], attr.datatype_attr.size, j->d->name);
		return -1;
	}
	if ((int)attr.max_members < j->g->n) {
		FT_ERR(j->ctx, "fi_query_collective: max_members %zu",
		       attr.max_members);
		return -1;
	}
	return 1;
}

static int job_run(struct job *j)
{
	struct fi_context2 fctx;
	struct ft_comp c;
	int sup = job_supported(j), rc = -1;
	uint64_t t0;
	ssize_t ret;

	if (sup < 0 || job_buffers(j))
		return -1;
	ft_dbg(j->ctx, "%s %s op %d count %zu root %d%s", coll_name[j->coll],
	       j->d->name, j->op, j->count, j->root,
	       j->in_place ? " in place" : "");
	job_fill(j);
	t0 = ft_now_ns();
	do {
		ret = job_post(j, &fctx);
		if (ret == -FI_EAGAIN)
			ft_progress(j->ctx);
	} while (ret == -FI_EAGAIN);
	if (!sup) {
		/* the query said no: the call must say so too */
		if (ret != -FI_EOPNOTSUPP)
			FT_ERR(j->ctx, "%s %s op %d: query says unsupported, "
			       "the call returned %zd", coll_name[j->coll],
			       j->d->name, j->op, ret);
		else
			rc = 0;
		goto out;
	}
	if (ret) {
		FT_ERR(j->ctx, "%s %s op %d count %zu: %s", coll_name[j->coll],
		       j->d->name, j->op, j->count, fi_strerror((int)-ret));
		goto out;
	}
	if (ft_wait_ctx(j->ctx, &fctx, &c))
		goto out;
	ft_dbg(j->ctx, "  done after %.3f ms", (ft_now_ns() - t0) / 1e6);
	if (!(c.e.flags & FI_COLLECTIVE)) {
		FT_ERR(j->ctx, "completion flags 0x%llx lack FI_COLLECTIVE",
		       (unsigned long long)c.e.flags);
		goto out;
	}
	rc = job_check(j);
out:
	free(j->mem);
	return rc;
}

/* ---- the modes ----------------------------------------------------------- */

static const enum fi_collective_op data_colls[] = {
	FI_BROADCAST, FI_ALLGATHER, FI_ALLTOALL, FI_SCATTER, FI_GATHER,
};
static const enum fi_collective_op red_colls[] = {
	FI_ALLREDUCE, FI_REDUCE, FI_REDUCE_SCATTER,
};

static bool has_in_place(enum fi_collective_op c)
{
	return c != FI_BROADCAST && c != FI_BARRIER;
}

static int run_counts(struct ft_ctx *ctx, struct ft_coll_group *g,
		      enum fi_collective_op coll, const struct dt_info *d,
		      enum fi_op op, const size_t *counts, size_t ncounts,
		      int *seq)
{
	for (size_t ci = 0; ci < ncounts; ci++) {
		for (int ip = 0; ip < (has_in_place(coll) ? 2 : 1); ip++) {
			struct job j = {
				.ctx = ctx, .g = g, .coll = coll, .d = d,
				.op = op, .count = counts[ci],
				.root = (*seq)++ % g->n, .in_place = ip,
			};

			if (job_run(&j))
				return -1;
		}
	}
	return 0;
}

/* A barrier ends nowhere before every member entered it: each member
 * enters late in turn, and all compare their exit time with the latest
 * entry (one host, one monotonic clock). */
static int run_barrier(struct ft_ctx *ctx, struct ft_coll_group *g)
{
	uint64_t t[2], all[2 * FT_MAX_RANKS], last;
	struct fi_context2 fctx;
	struct ft_comp c;

	for (int late = 0; late < g->n && late < 3; late++) {
		if (g->me == late) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
		t[0] = ft_now_ns();
		if (FT_POST(ctx, fi_barrier(ctx->ep, g->addr, &fctx)) ||
		    ft_wait_ctx(ctx, &fctx, &c))
			return -1;
		t[1] = ft_now_ns();
		/* progress until every rank is here: our last messages may
		 * still sit in the provider (manual progress) */
		if (ft_barrier_progress(ctx) ||
		    ft_allgather(ctx, t, sizeof(t), all))
			return -1;
		last = 0;
		for (int r = 0; r < g->n; r++)
			if (all[2 * r] > last)
				last = all[2 * r];
		if (t[1] < last) {
			FT_ERR(ctx, "barrier ended %llu ns before the last "
			       "member entered", (unsigned long long)(last - t[1]));
			return -1;
		}
	}
	return 0;
}

/* Sums that round: every member ends with the same bits, and a repeat
 * gives the same bits again. */
static int run_bitwise(struct ft_ctx *ctx, struct ft_coll_group *g)
{
	enum { N = 1000 };
	double *in = malloc(N * sizeof(double)), *out = malloc(N * sizeof(double));
	double *again = malloc(N * sizeof(double));
	uint64_t h[2], all[2 * FT_MAX_RANKS];
	struct fi_context2 fctx;
	struct ft_comp c;
	int rc = -1;

	if (!in || !out || !again)
		goto out;
	for (int i = 0; i < N; i++)
		in[i] = 1.0 / (g->me + 3) + i * 1e-3 + 1e-9 * g->me;
	for (int rep = 0; rep < 2; rep++) {
		double *res = rep ? again : out;

		if (FT_POST(ctx, fi_allreduce(ctx->ep, in, N, NULL, res, NULL,
					      g->addr, FI_DOUBLE, FI_SUM, 0,
					      &fctx)) ||
		    ft_wait_ctx(ctx, &fctx, &c))
			goto out;
	}
	if (memcmp(out, again, N * sizeof(double))) {
		FT_ERR(ctx, "allreduce of the same doubles gave other bits");
		goto out;
	}
	h[0] = 0;
	for (int i = 0; i < N; i++) {
		uint64_t b;

		memcpy(&b, &out[i], sizeof(b));
		h[0] = mix(h[0] ^ b);
	}
	h[1] = (uint64_t)g->me;
	if (ft_barrier_progress(ctx) || ft_allgather(ctx, h, sizeof(h), all))
		goto out;
	for (int r = 0; r < g->n; r++)
		if (all[2 * r] != h[0]) {
			FT_ERR(ctx, "allreduce results of members 0 and %d "
			       "differ in their bits", r);
			goto out;
		}
	rc = 0;
out:
	free(in);
	free(out);
	free(again);
	return rc;
}

static int mode_matrix(struct ft_ctx *ctx)
{
	static const size_t counts[] = { 0, 1, 7 };
	struct ft_coll_group g;
	int seq = 0, rc = -1;

	if (ft_coll_join_all(ctx, &g))
		return -1;
	if (run_barrier(ctx, &g) || run_bitwise(ctx, &g))
		goto out;
	for (size_t d = 0; d < ndts; d++) {
		for (size_t c = 0; c < sizeof(red_colls) / sizeof(red_colls[0]); c++)
			for (size_t o = 0; o < nops; o++)
				if (run_counts(ctx, &g, red_colls[c], &dts[d],
					       reduce_ops[o], counts, 3, &seq))
					goto out;
		for (size_t c = 0; c < sizeof(data_colls) / sizeof(data_colls[0]); c++)
			if (run_counts(ctx, &g, data_colls[c], &dts[d], FI_NOOP,
				       counts, 3, &seq))
				goto out;
	}
	rc = 0;
out:
	ft_coll_leave(&g);
	return rc;
}

/* Thresholds of the sizes mode (bytes), set before the library starts:
 * counts of 4-byte elements around them cross every algorithm switch. */
static const char *const small_thresholds[] = {
	"FI_COLL_RD_MAX=64", "FI_COLL_RING_MIN=1024",
	"FI_COLL_BCAST_SCATTER_MIN=512", "FI_COLL_ALLGATHER_RING_MIN=512",
	"FI_COLL_TREE_MAX=64", "FI_COLL_CHUNK=96", "FI_COLL_WINDOW=3",
};

static int run_sizes(struct ft_ctx *ctx, struct ft_coll_group *g)
{
	/* int32 elements: 16 = rd_max, 256 = ring_min, 128 = scatter_min,
	 * 16 = tree_max; with members, allgather crosses too */
	static const size_t counts[] = { 0, 1, 15, 16, 17, 31, 127, 128, 129,
					 255, 256, 257, 1000 };
	static const struct { enum fi_datatype dt; enum fi_op op; } red[] = {
		{ FI_INT32, FI_SUM }, { FI_INT32, FI_MAX }, { FI_FLOAT, FI_SUM },
		{ FI_INT32, FI_BXOR }, { FI_INT32, FI_ATOMIC_WRITE },
	};
	int seq = g->n;

	for (size_t c = 0; c < sizeof(red_colls) / sizeof(red_colls[0]); c++)
		for (size_t k = 0; k < sizeof(red) / sizeof(red[0]); k++) {
			const struct dt_info *d = NULL;

			for (size_t x = 0; x < ndts; x++)
				if (dts[x].dt == red[k].dt)
					d = &dts[x];
			if (run_counts(ctx, g, red_colls[c], d, red[k].op, counts,
				       sizeof(counts) / sizeof(counts[0]), &seq))
				return -1;
		}
	for (size_t c = 0; c < sizeof(data_colls) / sizeof(data_colls[0]); c++)
		if (run_counts(ctx, g, data_colls[c], &dts[4], FI_NOOP, counts,
			       sizeof(counts) / sizeof(counts[0]), &seq))
			return -1;
	/* its check gathers out of band from every rank */
	return g->n == ctx->nranks ? run_barrier(ctx, g) : 0;
}

/* Groups of the first k ranks, k = 1 .. n; the others wait. */
static int mode_sizes(struct ft_ctx *ctx)
{
	int ranks[FT_MAX_RANKS], rc = 0;

	for (int i = 0; i < ctx->nranks; i++)
		ranks[i] = i;
	for (int k = 1; k <= ctx->nranks && !rc; k++) {
		struct ft_coll_group g;

		if (ctx->rank < k) {
			rc = ft_coll_join(ctx, ranks, k, &g);
			if (!rc)
				rc = run_sizes(ctx, &g);
			ft_coll_leave(&g);
			if (!rc)
				ft_dbg(ctx, "group of %d: ok", k);
		}
		if (ft_barrier_progress(ctx))
			rc = -1;
	}
	return rc;
}

static int mode_big(struct ft_ctx *ctx)
{
	const size_t total = 16 * FT_MIB;
	const struct dt_info *f = &dts[8];	/* float */
	struct ft_coll_group g;
	size_t per = total / f->size;
	int n = ctx->nranks, rc = -1, seq = 0;
	struct {
		enum fi_collective_op coll;
		enum fi_op op;
		size_t count;
	} big[] = {
		{ FI_ALLREDUCE, FI_SUM, per },
		{ FI_ALLREDUCE, FI_MAX, per + 3 },
		{ FI_BROADCAST, FI_NOOP, per },
		{ FI_REDUCE_SCATTER, FI_SUM, per / n },
		{ FI_REDUCE, FI_SUM, per - 1 },
		{ FI_ALLGATHER, FI_NOOP, per / n },
		{ FI_ALLTOALL, FI_NOOP, per / n / n },
	};

	if (ft_coll_join_all(ctx, &g))
		return -1;
	for (size_t b = 0; b < sizeof(big) / sizeof(big[0]); b++) {
		size_t counts[1] = { big[b].count };

		if (run_counts(ctx, &g, big[b].coll, f, big[b].op, counts, 1,
			       &seq))
			goto out;
	}
	rc = 0;
out:
	ft_coll_leave(&g);
	return rc;
}

/* Two groups (the even ranks; all ranks in reverse order) with
 * allreduces and broadcasts in flight on both at once. */
static int mode_groups(struct ft_ctx *ctx)
{
	enum { OPS = 8, CNT = 300 };
	int evens[FT_MAX_RANKS], rev[FT_MAX_RANKS], ne = 0, n = ctx->nranks;
	struct ft_coll_group ga, gb;
	bool in_a = ctx->rank % 2 == 0;
	int64_t in[OPS][CNT], out[2][OPS][CNT];
	struct fi_context2 fctx[2][OPS];
	struct ft_comp c;
	int rc = -1;

	for (int i = 0; i < n; i++) {
		if (i % 2 == 0)
			evens[ne++] = i;
		rev[i] = n - 1 - i;
	}
	if (in_a && ft_coll_join_post(ctx, evens, ne, &ga))
		return -1;
	if (ft_coll_join_post(ctx, rev, n, &gb))
		return -1;
	if ((in_a && ft_coll_join_wait(ctx, &ga)) || ft_coll_join_wait(ctx, &gb))
		goto out;
	for (int o = 0; o < OPS; o++) {
		for (int i = 0; i < CNT; i++)
			in[o][i] = (int64_t)mix((uint64_t)ctx->rank << 32 |
						 (uint64_t)o << 16 | (uint64_t)i) % 1000;
		if (in_a && FT_POST(ctx, fi_allreduce(ctx->ep, in[o], CNT, NULL,
						      out[0][o], NULL, ga.addr,
						      FI_INT64, FI_SUM, 0,
						      &fctx[0][o])))
			goto out;
		if (FT_POST(ctx, fi_allreduce(ctx->ep, in[o], CNT, NULL,
					      out[1][o], NULL, gb.addr,
					      FI_INT64, FI_MAX, 0, &fctx[1][o])))
			goto out;
	}
	for (int o = 0; o < OPS; o++)
		for (int s = in_a ? 0 : 1; s < 2; s++)
			if (ft_wait_ctx(ctx, &fctx[s][o], &c))
				goto out;
	for (int o = 0; o < OPS; o++)
		for (int i = 0; i < CNT; i++) {
			int64_t sum = 0, max = INT64_MIN, v;

			for (int r = 0; r < n; r++) {
				v = (int64_t)mix((uint64_t)r << 32 |
						 (uint64_t)o << 16 |
						 (uint64_t)i) % 1000;
				if (r % 2 == 0)
					sum += v;
				if (v > max)
					max = v;
			}
			if ((in_a && out[0][o][i] != sum) || out[1][o][i] != max) {
				FT_ERR(ctx, "op %d element %d: sum %lld max %lld, "
				       "want %lld %lld", o, i,
				       (long long)out[0][o][i],
				       (long long)out[1][o][i], (long long)sum,
				       (long long)max);
				goto out;
			}
		}
	rc = 0;
out:
	if (in_a)
		ft_coll_leave(&ga);
	ft_coll_leave(&gb);
	return rc;
}

static int coll_run(struct ft_ctx *ctx)
{
	const char *mode = ctx->opts->xopt ? ctx->opts->xopt : "matrix";
	int rc;

	ctx->pre_enable = ft_coll_pre_enable;
	ctx->after_ep_close = ft_coll_after_close;
	rc = ft_open(ctx);
	if (rc)
		goto close;
	if (!strcmp(mode, "matrix"))
		rc = mode_matrix(ctx);
	else if (!strcmp(mode, "sizes") || !strcmp(mode, "hier"))
		rc = mode_sizes(ctx);
	else if (!strcmp(mode, "big"))
		rc = mode_big(ctx);
	else if (!strcmp(mode, "groups"))
		rc = mode_groups(ctx);
	else
		rc = ft_skip(ctx, "unknown mode %s", mode);
	if (rc == -1)
		rc = FT_FAIL;
	if (rc == FT_PASS && ft_barrier_progress(ctx))
		rc = FT_FAIL;
close:
	ft_close(ctx);
	return rc;
}

static void coll_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_COLLECTIVE | FI_MSG;
}

static const struct ft_test test = {
	.name = "ft_coll",
	.desc = "collectives: every operation, datatype and reduction, "
		"element-wise checks",
	.nranks = 5,
	.hints = coll_hints,
	.run = coll_run,
};

int main(int argc, char **argv)
{
	for (int i = 1; i < argc - 1; i++) {
		if (strcmp(argv[i], "-x"))
			continue;
		if (!strcmp(argv[i + 1], "sizes") || !strcmp(argv[i + 1], "hier"))
			for (size_t k = 0; k < sizeof(small_thresholds) /
					       sizeof(small_thresholds[0]); k++)
				putenv((char *)small_thresholds[k]);
		if (!strcmp(argv[i + 1], "hier"))
			putenv((char *)"FI_COLL_HOST_RANKS=2");
	}
	return ft_main(argc, argv, &test);
}
