/* SPDX-License-Identifier: MIT */
/*
 * Collective benchmark (a benchmark, not a test): latency and bandwidth of
 * one collective (-x allreduce (default), bcast, allgather,
 * reduce_scatter, alltoall, barrier) over all ranks, float data, FI_SUM.
 * Sizes -M .. -m bytes (the vector of one rank: allreduce and broadcast
 * count, allgather and reduce-scatter the result, alltoall the whole
 * buffer) in powers of two; per size, -W warm-up iterations, then -r
 * repetitions of -I iterations, each repetition's time per operation
 * being the slowest rank's. Columns: median time per operation, algbw =
 * bytes / time, and busbw, what each rank's links carried: algbw x
 * 2(n-1)/n for allreduce, (n-1)/n for allgather, reduce-scatter and
 * alltoall, 1 for broadcast (the conventions of nccl-tests, so that busbw
 * compares with point-to-point bandwidth). contrib/bench/coll_vs_mpi.sh
 * runs Open MPI's MPI_Allreduce with the same columns beside it.
 */
#define _GNU_SOURCE
#include "common/ft.h"
#include "common/ft_coll.h"

#include <stdlib.h>
#include <string.h>

enum bc_kind { BC_ALLREDUCE, BC_BCAST, BC_ALLGATHER, BC_REDSCAT, BC_ALLTOALL,
	       BC_BARRIER };

static const char *bc_names[] = { "allreduce", "bcast", "allgather",
				  "reduce_scatter", "alltoall", "barrier" };

static enum bc_kind bc_kind(const struct ft_opts *o)
{
	for (int k = 0; o->xopt && k <= BC_BARRIER; k++)
		if (!strcmp(o->xopt, bc_names[k]))
			return (enum bc_kind)k;
	return BC_ALLREDUCE;
}

static double bc_bus_factor(enum bc_kind k, int n)
{
	switch (k) {
	case BC_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case BC_BCAST:
		return 1.0;
	case BC_BARRIER:
		return 0.0;
	default:
		return (double)(n - 1) / n;
	}
}

static ssize_t bc_post(struct ft_ctx *ctx, enum bc_kind k,
		       struct ft_coll_group *g, float *in, float *out,
		       size_t bytes, void *fctx)
{
	size_t n = (size_t)g->n, cnt = bytes / sizeof(float);

	switch (k) {
	case BC_ALLREDUCE:
		return fi_allreduce(ctx->ep, in, cnt, NULL, out, NULL, g->addr,
				    FI_FLOAT, FI_SUM, 0, fctx);
	case BC_BCAST:
		return fi_broadcast(ctx->ep, out, cnt, NULL, g->addr,
				    g->members[0], FI_FLOAT, 0, fctx);
	case BC_ALLGATHER:
		return fi_allgather(ctx->ep, in, cnt / n, NULL, out, NULL,
				    g->addr, FI_FLOAT, 0, fctx);
	case BC_REDSCAT:
		return fi_reduce_scatter(ctx->ep, in, cnt / n, NULL, out, NULL,
					 g->addr, FI_FLOAT, FI_SUM, 0, fctx);
	case BC_ALLTOALL:
		return fi_alltoall(ctx->ep, in, cnt / n, NULL, out, NULL,
				   g->addr, FI_FLOAT, 0, fctx);
	default:
		return fi_barrier(ctx->ep, g->addr, fctx);
	}
}

/* iters operations back to back; seconds per operation at this rank. */
static int bc_loop(struct ft_ctx *ctx, enum bc_kind k, struct ft_coll_group *g,
		   float *in, float *out, size_t bytes, int iters, double *sec)
{
	struct fi_context2 fctx;
	struct ft_comp c;
	uint64_t t0 = ft_now_ns();

	for (int i = 0; i < iters; i++)
		if (FT_POST(ctx, bc_post(ctx, k, g, in, out, bytes, &fctx)) ||
		    ft_wait_ctx(ctx, &fctx, &c))
			return -1;
	*sec = (double)(ft_now_ns() - t0) / 1e9 / iters;
	return 0;
}

static int bc_iters(const struct ft_ctx *ctx, size_t bytes)
{
	int it = ctx->opts->iters;

	if (it)
		return it;
	it = bytes >= FT_MIB ? 20 : bytes >= 65536 ? 200 : 1000;
	return ctx->opts->quick ? (it + 9) / 10 : it;
}

static int bc_size(struct ft_ctx *ctx, enum bc_kind k, struct ft_coll_group *g,
		   float *in, float *out, size_t bytes)
{
	int reps = ctx->opts->reps > 0 ? ctx->opts->reps : 5, iters;
	int warm = ctx->opts->warmup ? ctx->opts->warmup : 3;
	double sec, all[FT_MAX_RANKS], slowest[64], t;
	struct ft_stat st;

	iters = bc_iters(ctx, bytes);
	if (reps > 64)
		reps = 64;
	if (bc_loop(ctx, k, g, in, out, bytes, warm, &sec))
		return -1;
	for (int r = 0; r < reps; r++) {
		/* everyone starts together: the barrier progresses */
		if (ft_barrier_progress(ctx) ||
		    bc_loop(ctx, k, g, in, out, bytes, iters, &sec) ||
		    ft_barrier_progress(ctx) ||
		    ft_allgather(ctx, &sec, sizeof(sec), all))
			return -1;
		slowest[r] = 0;
		for (int i = 0; i < ctx->nranks; i++)
			if (all[i] > slowest[r])
				slowest[r] = all[i];
		slowest[r] *= 1e6;
	}
	ft_stat_compute(slowest, reps, &st);
	t = st.median / 1e6;
	if (ctx->rank == 0) {
		double algbw = k == BC_BARRIER ? 0 : bytes / t / 1e9;

		if (ctx->opts->out == FT_OUT_CSV)
			printf("%s,%s,%d,%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f\n",
			       bc_names[k], ctx->info->fabric_attr->prov_name,
			       ctx->nranks, bytes, iters, st.median, st.p10,
			       st.p90, algbw, algbw * bc_bus_factor(k, ctx->nranks));
		else
			printf("%10zu %7d %11.2f %9.2f..%-9.2f %9.3f %9.3f\n",
			       bytes, iters, st.median, st.p10, st.p90, algbw,
			       algbw * bc_bus_factor(k, ctx->nranks));
		fflush(stdout);
	}
	return 0;
}

static int bc_run(struct ft_ctx *ctx)
{
	enum bc_kind k = bc_kind(ctx->opts);
	size_t max = ctx->opts->max_size ? ctx->opts->max_size : 16 * FT_MIB;
	size_t min = ctx->opts->min_size ? ctx->opts->min_size : 8;
	struct ft_coll_group g;
	float *in = NULL, *out = NULL;
	int rc;

	ctx->pre_enable = ft_coll_pre_enable;
	ctx->after_ep_close = ft_coll_after_close;
	rc = ft_open(ctx);
	if (rc)
		goto close;
	rc = FT_FAIL;
	in = aligned_alloc(64, max < 64 ? 64 : max);
	out = aligned_alloc(64, max < 64 ? 64 : max);
	if (!in || !out || ft_coll_join_all(ctx, &g))
		goto close;
	for (size_t i = 0; i < max / sizeof(float); i++)
		in[i] = out[i] = (float)(i % 13);
	if (ctx->rank == 0) {
		if (ctx->opts->out == FT_OUT_CSV)
			printf("coll,provider,ranks,bytes,iters,usec,usec_p10,"
			       "usec_p90,algbw_gbs,busbw_gbs\n");
		else
			printf("# %s over %s, %d ranks (median of the slowest "
			       "rank per repetition)\n%10s %7s %11s %20s %9s "
			       "%9s\n", bc_names[k],
			       ctx->info->fabric_attr->prov_name, ctx->nranks,
			       "bytes", "iters", "usec", "p10..p90", "algbw",
			       "busbw");
	}
	if (k == BC_BARRIER && bc_size(ctx, k, &g, in, out, 0))
		goto leave;
	for (size_t s = min; k != BC_BARRIER && s <= max; s *= 2) {
		/* the collectives that cut the buffer in n need a multiple */
		size_t unit = sizeof(float) * (size_t)ctx->nranks *
			      (size_t)ctx->nranks;
		size_t bytes = k == BC_ALLREDUCE || k == BC_BCAST ? s :
			       s / unit * unit;

		if (bytes && bc_size(ctx, k, &g, in, out, bytes))
			goto leave;
	}
	rc = FT_PASS;
leave:
	ft_coll_leave(&g);
close:
	free(in);
	free(out);
	ft_close(ctx);
	return rc;
}

static void bc_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_COLLECTIVE | FI_MSG;
}

static const struct ft_test test = {
	.name = "ft_bench_coll",
	.desc = "collective latency and bandwidth (allreduce, bcast, "
		"allgather, reduce_scatter, alltoall, barrier)",
	.nranks = 2,
	.hints = bc_hints,
	.run = bc_run,
	.bench = true,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
