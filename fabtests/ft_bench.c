/* SPDX-License-Identifier: MIT */
/*
 * Benchmarks over two processes, built as several programs from this file
 * (FT_BENCH selects the default kind; -x overrides it):
 *   pingpong  latency: half a round trip of a message (fi_inject when it fits)
 *   bw        streaming bandwidth: a window of sends outstanding
 *   rate      message rate: the same with small messages and a wider window
 *   write     RMA write bandwidth with a window
 *   read      RMA read bandwidth with a window
 * Sizes 1 B .. max in powers of two, warm-up, repetitions; the report gives
 * the median over repetitions and the p10..p90 spread, as a table, CSV or
 * JSON. Completions are busy-polled with fi_cq_read, yielding now and then.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <stdlib.h>
#include <string.h>

enum bench_kind { B_PINGPONG, B_BW, B_RATE, B_WRITE, B_READ };

static const char *bench_names[] = { "pingpong", "bw", "rate", "write", "read" };

static enum bench_kind bench_kind(const struct ft_opts *o)
{
	if (o->xopt)
		for (int k = 0; k <= B_READ; k++)
			if (!strcmp(o->xopt, bench_names[k]))
				return (enum bench_kind)k;
	return (enum bench_kind)FT_BENCH;
}

static void bench_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	enum bench_kind k = bench_kind(ctx->opts);

	h->caps = FI_MSG;
	if (k == B_WRITE || k == B_READ)
		h->caps |= FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
}

struct bench {
	enum bench_kind kind;
	struct ft_buf sbuf, rbuf;
	struct ft_rma_key keys[FT_MAX_RANKS];
	int window;
	size_t inject;
	struct fi_context2 ctxs[1024];
};

/* spin on the CQ until n completions were read */
static int bench_reap(struct ft_ctx *ctx, int n)
{
	struct fi_cq_tagged_entry e[64];
	uint64_t t0 = 0;
	unsigned spins = 0;

	while (n > 0) {
		ssize_t r = fi_cq_read(ctx->cq, e, n < 64 ? (size_t)n : 64);

		if (r > 0) {
			n -= (int)r;
			continue;
		}
		if (r != -FI_EAGAIN) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(ctx->cq, &err, 0);
			FT_ERR(ctx, "completion error: %s", fi_strerror(err.err < 0 ? -err.err : err.err));
			return -1;
		}
		ft_relax(&spins);
		if ((spins & 4095) == 0) {
			if (!t0)
				t0 = ft_now_ns();
			else if (ft_now_ns() - t0 > (uint64_t)ctx->opts->op_timeout_ms * 1000000ULL) {
				FT_ERR(ctx, "benchmark stalled");
				return -1;
			}
		}
	}
	return 0;
}

static ssize_t bench_send(struct ft_ctx *ctx, struct bench *b, size_t size, void *fctx)
{
	ssize_t r;

	do {
		r = size <= b->inject ?
			    fi_inject(ctx->ep, b->sbuf.p, size, ctx->peers[!ctx->rank]) :
			    fi_send(ctx->ep, b->sbuf.p, size, b->sbuf.desc, ctx->peers[!ctx->rank], fctx);
		if (r == -FI_EAGAIN)
			fi_cq_read(ctx->cq, NULL, 0);
	} while (r == -FI_EAGAIN);
	return r;
}

static ssize_t bench_recv(struct ft_ctx *ctx, struct bench *b, size_t size, void *fctx)
{
	ssize_t r;

	while ((r = fi_recv(ctx->ep, b->rbuf.p, size, b->rbuf.desc, FI_ADDR_UNSPEC, fctx)) ==
	       -FI_EAGAIN)
		fi_cq_read(ctx->cq, NULL, 0);
	return r;
}

/* one round trip; inject sends produce no completion to reap */
static int bench_pingpong_iter(struct ft_ctx *ctx, struct bench *b, size_t size)
{
	int sends = size <= b->inject ? 0 : 1;

	if (ctx->rank == 0) {
		if (bench_recv(ctx, b, size, &b->ctxs[0]) || bench_send(ctx, b, size, &b->ctxs[1]))
			return -1;
		return bench_reap(ctx, 1 + sends);
	}
	if (bench_recv(ctx, b, size, &b->ctxs[0]) || bench_reap(ctx, 1) ||
	    bench_send(ctx, b, size, &b->ctxs[1]))
		return -1;
	return bench_reap(ctx, sends);
}

/* a window of sends; the receiver keeps a window posted and acks at the end */
static int bench_stream_iter(struct ft_ctx *ctx, struct bench *b, size_t size)
{
	int w = b->window;

	if (ctx->rank == 0) {
		for (int i = 0; i < w; i++)
			if (bench_send(ctx, b, size, &b->ctxs[i]))
				return -1;
		return bench_reap(ctx, size <= b->inject ? 0 : w);
	}
	for (int i = 0; i < w; i++)
		if (bench_recv(ctx, b, size, &b->ctxs[i]))
			return -1;
	return bench_reap(ctx, w);
}

static int bench_rma_iter(struct ft_ctx *ctx, struct bench *b, size_t size)
{
	struct ft_rma_key *k = &b->keys[1];

	if (ctx->rank != 0)
		return 0;
	for (int i = 0; i < b->window; i++) {
		ssize_t r;

		do {
			r = b->kind == B_WRITE ?
				    fi_write(ctx->ep, b->sbuf.p, size, b->sbuf.desc, ctx->peers[1],
					     k->addr, k->key, &b->ctxs[i]) :
				    fi_read(ctx->ep, b->sbuf.p, size, b->sbuf.desc, ctx->peers[1],
					    k->addr, k->key, &b->ctxs[i]);
			if (r == -FI_EAGAIN)
				fi_cq_read(ctx->cq, NULL, 0);
		} while (r == -FI_EAGAIN);
		if (r) {
			FT_ERR(ctx, "RMA post: %s", fi_strerror((int)-r));
			return -1;
		}
	}
	return bench_reap(ctx, b->window);
}

/* stream end: a zero-byte message back says the receiver has everything */
static int bench_stream_ack(struct ft_ctx *ctx, struct bench *b)
{
	if (ctx->rank == 0)
		return bench_recv(ctx, b, 0, &b->ctxs[0]) ? -1 : bench_reap(ctx, 1);
	if (fi_send(ctx->ep, b->sbuf.p, 0, b->sbuf.desc, ctx->peers[0], &b->ctxs[0]))
		return -1;
	return bench_reap(ctx, 1);
}

static int bench_iter(struct ft_ctx *ctx, struct bench *b, size_t size)
{
	switch (b->kind) {
	case B_PINGPONG: return bench_pingpong_iter(ctx, b, size);
	case B_BW:
	case B_RATE: return bench_stream_iter(ctx, b, size);
	default: return bench_rma_iter(ctx, b, size);
	}
}

static int bench_iters(struct ft_ctx *ctx, struct bench *b, size_t size)
{
	size_t per_op = b->kind == B_PINGPONG ? 2 : (size_t)b->window;
	size_t budget = ctx->opts->quick ? 64 * FT_MIB : 512 * FT_MIB;
	size_t it = budget / ((size ? size : 1) * per_op);

	if (ctx->opts->iters)
		return ctx->opts->iters;
	if (it > (b->kind == B_PINGPONG ? 10000 : 1000))
		it = b->kind == B_PINGPONG ? 10000 : 1000;
	if (ctx->opts->quick && it > 1000)
		it = 1000;
	return it < 5 ? 5 : (int)it;
}

static int bench_size(struct ft_ctx *ctx, struct bench *b, size_t size)
{
	int iters = bench_iters(ctx, b, size), reps = ctx->opts->reps;
	int warm = ctx->opts->warmup ? ctx->opts->warmup : iters / 10 + 1;
	double *us = calloc((size_t)reps, sizeof(double));
	struct ft_report_row row = { .size = size, .iters = iters };
	double ops = b->kind == B_PINGPONG ? 1 : b->window;

	if (!us)
		return -1;
	for (int r = -1; r < reps; r++) {
		int n = r < 0 ? warm : iters;
		uint64_t t0;

		if (ft_barrier_progress(ctx))
			goto fail;
		t0 = ft_now_ns();
		for (int i = 0; i < n; i++)
			if (bench_iter(ctx, b, size))
				goto fail;
		if ((b->kind == B_BW || b->kind == B_RATE) && bench_stream_ack(ctx, b))
			goto fail;
		if (r >= 0) {
			double t = (double)(ft_now_ns() - t0) / 1000.0;

			/* latency is half a round trip */
			us[r] = b->kind == B_PINGPONG ? t / n / 2 : t / (n * ops);
		}
	}
	ft_stat_compute(us, reps, &row.usec);
	row.mbps = row.usec.median > 0 ? (double)size / row.usec.median : 0;
	row.mmsgs = row.usec.median > 0 ? 1.0 / row.usec.median : 0;
	if (ctx->rank == 0)
		ft_report_row(ctx, bench_names[b->kind], &row);
	free(us);
	return 0;
fail:
	free(us);
	return -1;
}

static int bench_run(struct ft_ctx *ctx)
{
	static struct bench b;
	size_t max, min;
	int rc;

	b.kind = bench_kind(ctx->opts);
	rc = ft_open(ctx);
	if (rc)
		goto close;
	rc = FT_FAIL;
	if (!ctx->opts->reps)
		ctx->opts->reps = ctx->opts->quick ? 3 : 7;
	max = ctx->opts->max_size ? ctx->opts->max_size :
	      b.kind == B_RATE ? 4096 : ctx->opts->quick ? FT_MIB : 16 * FT_MIB;
	min = ctx->opts->min_size ? ctx->opts->min_size : 1;
	b.window = ctx->opts->window ? ctx->opts->window : b.kind == B_RATE ? 256 : 64;
	if (b.window > 1024)
		b.window = 1024;
	if ((size_t)b.window > ctx->info->tx_attr->size)
		b.window = (int)ctx->info->tx_attr->size;
	if ((size_t)b.window > ctx->info->rx_attr->size)
		b.window = (int)ctx->info->rx_attr->size;
	b.inject = b.kind == B_PINGPONG ? ctx->info->tx_attr->inject_size : 0;
	if (ft_buf_alloc(ctx, &b.sbuf, max, FI_SEND | FI_READ | FI_WRITE) ||
	    ft_buf_alloc(ctx, &b.rbuf, max,
			 b.kind >= B_WRITE ? FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE : FI_RECV))
		goto free;
	if (b.kind >= B_WRITE &&
	    ft_rma_key_exchange(ctx, b.rbuf.p, max, b.rbuf.mr, b.keys))
		goto free;
	ft_fill(b.sbuf.p, max, 1);
	if (ctx->rank == 0)
		ft_report_begin(ctx, bench_names[b.kind]);
	for (size_t s = min; s <= max; s = s ? s * 2 : 1)
		if (bench_size(ctx, &b, s))
			goto free;
	if (ctx->rank == 0)
		ft_report_end(ctx, bench_names[b.kind]);
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b.sbuf);
	ft_buf_free(&b.rbuf);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_bench",
	.desc = "benchmarks: -x pingpong|bw|rate|write|read",
	.nranks = 2,
	.hints = bench_hints,
	.run = bench_run,
	.bench = true,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
