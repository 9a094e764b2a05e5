/* SPDX-License-Identifier: MIT */
/*
 * Counters bound to an endpoint: the send counter and the receive counter
 * reach the number of completed operations (fi_cntr_wait, fi_cntr_read),
 * a truncated receive bumps the error count (fi_cntr_readerr), and
 * fi_cntr_set/fi_cntr_add behave.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>

#define CNTR_N 50

static struct fid_cntr *tx_cntr, *rx_cntr;

static void cntr_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_MSG;
}

static int cntr_bind(struct ft_ctx *ctx)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC };

	if (FT_CHECK(ctx, fi_cntr_open(ctx->domain, &attr, &tx_cntr, NULL)) ||
	    FT_CHECK(ctx, fi_cntr_open(ctx->domain, &attr, &rx_cntr, NULL)) ||
	    FT_CHECK(ctx, fi_ep_bind(ctx->ep, &tx_cntr->fid, FI_SEND)) ||
	    FT_CHECK(ctx, fi_ep_bind(ctx->ep, &rx_cntr->fid, FI_RECV)))
		return FT_FAIL;
	return FT_PASS;
}

/* fi_cntr_wait where the provider has it; otherwise poll and progress */
static int cntr_wait(struct ft_ctx *ctx, struct fid_cntr *cntr, uint64_t want, bool err)
{
	uint64_t t0 = ft_now_ns();
	unsigned spins = 0;
	int rc;

	if (!err) {
		rc = fi_cntr_wait(cntr, want, ctx->opts->op_timeout_ms);
		if (rc == 0)
			return 0;
		if (rc != -FI_ENOSYS && rc != -FI_EOPNOTSUPP) {
			FT_ERR(ctx, "fi_cntr_wait(%llu): %s; value %llu, errors %llu",
			       (unsigned long long)want, fi_strerror(-rc),
			       (unsigned long long)fi_cntr_read(cntr),
			       (unsigned long long)fi_cntr_readerr(cntr));
			return -1;
		}
	}
	while ((err ? fi_cntr_readerr(cntr) : fi_cntr_read(cntr)) < want) {
		ft_progress(ctx);
		ft_relax(&spins);
		if (ft_now_ns() - t0 > (uint64_t)ctx->opts->op_timeout_ms * 1000000ULL) {
			FT_ERR(ctx, "counter stuck at %llu (errors %llu), want %llu",
			       (unsigned long long)fi_cntr_read(cntr),
			       (unsigned long long)fi_cntr_readerr(cntr), (unsigned long long)want);
			return -1;
		}
	}
	return 0;
}

static int cntr_traffic(struct ft_ctx *ctx, struct ft_buf *b)
{
	static struct fi_context2 fctx[CNTR_N + 1];

	if (ctx->rank == 1) {
		for (int i = 0; i < CNTR_N; i++)
			if (FT_POST(ctx, fi_recv(ctx->ep, b->p + (size_t)i * 256, 256, b->desc,
						 FI_ADDR_UNSPEC, &fctx[i])))
				return -1;
		/* too small for the last message: an error completion */
		if (FT_POST(ctx, fi_recv(ctx->ep, b->p + CNTR_N * 256, 8, b->desc, FI_ADDR_UNSPEC,
					 &fctx[CNTR_N])))
			return -1;
	}
	if (ft_barrier_progress(ctx))
		return -1;
	if (ctx->rank == 0) {
		for (int i = 0; i < CNTR_N + 1; i++) {
			ft_fill(b->p + (size_t)i * 256, 256, (uint32_t)i);
			if (FT_POST(ctx, fi_send(ctx->ep, b->p + (size_t)i * 256, 256, b->desc,
						 ctx->peers[1], &fctx[i])))
				return -1;
		}
		if (cntr_wait(ctx, tx_cntr, CNTR_N + 1, false) || fi_cntr_readerr(tx_cntr)) {
			FT_ERR(ctx, "send counter errors %llu",
			       (unsigned long long)fi_cntr_readerr(tx_cntr));
			return -1;
		}
		if (fi_cntr_read(rx_cntr) != 0) {
			FT_ERR(ctx, "receive counter moved without receives");
			return -1;
		}
	} else {
		if (cntr_wait(ctx, rx_cntr, CNTR_N, false) || cntr_wait(ctx, rx_cntr, 1, true))
			return -1;
		for (int i = 0; i < CNTR_N; i++)
			if (ft_verify(ctx, b->p + (size_t)i * 256, 256, (uint32_t)i, "counted recv"))
				return -1;
		if (fi_cntr_read(rx_cntr) != CNTR_N || fi_cntr_readerr(rx_cntr) != 1) {
			FT_ERR(ctx, "receive counter %llu errors %llu, want %d and 1",
			       (unsigned long long)fi_cntr_read(rx_cntr),
			       (unsigned long long)fi_cntr_readerr(rx_cntr), CNTR_N);
			return -1;
		}
	}
	return 0;
}

static int cntr_ops(struct ft_ctx *ctx)
{
	if (FT_CHECK(ctx, fi_cntr_set(tx_cntr, 1000)) || FT_CHECK(ctx, fi_cntr_add(tx_cntr, 24)))
		return -1;
	if (fi_cntr_read(tx_cntr) != 1024) {
		FT_ERR(ctx, "set 1000 + add 24 reads %llu", (unsigned long long)fi_cntr_read(tx_cntr));
		return -1;
	}
	return 0;
}

/* counters go after the endpoint they are bound to, before the domain */
static void cntr_close(struct ft_ctx *ctx)
{
	if (tx_cntr)
		fi_close(&tx_cntr->fid);
	if (rx_cntr)
		fi_close(&rx_cntr->fid);
	tx_cntr = rx_cntr = NULL;
}

static int cntr_run(struct ft_ctx *ctx)
{
	struct ft_buf b = { 0 };
	int rc;

	ctx->pre_enable = cntr_bind;
	ctx->after_ep_close = cntr_close;
	rc = ft_open(ctx);
	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ft_buf_alloc(ctx, &b, (CNTR_N + 2) * 256, FI_SEND | FI_RECV))
		goto close;
	if (cntr_traffic(ctx, &b))
		goto free;
	/* CQ entries came too (no FI_SELECTIVE_COMPLETION): drain them */
	if (ft_barrier_progress(ctx) || cntr_ops(ctx))
		goto free;
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_cntr",
	.desc = "send/receive counters, error counts, fi_cntr_wait/set/add",
	.nranks = 2,
	.hints = cntr_hints,
	.run = cntr_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
