/* SPDX-License-Identifier: MIT */
/*
 * fi_cancel of posted receives: each cancelled receive completes in error
 * with FI_ECANCELED and its own context, and never receives data; a message
 * sent afterwards lands in the receive posted after the cancellations.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>

#define CANCEL_N 4

static void cancel_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = ctx->opts->tagged ? FI_TAGGED : FI_MSG;
}

static int cancel_receiver(struct ft_ctx *ctx, struct ft_buf *b)
{
	struct fi_context2 fctx[CANCEL_N], good;
	bool seen[CANCEL_N] = { false };
	struct ft_comp c;

	for (int i = 0; i < CANCEL_N; i++)
		if (FT_POST(ctx, ft_recv(ctx, b, (size_t)i * 4096, 4096, 0, 7, &fctx[i])))
			return -1;
	for (int i = 0; i < CANCEL_N; i++) {
		int rc = (int)fi_cancel(&ctx->ep->fid, &fctx[i]);

		if (rc) {
			FT_ERR(ctx, "fi_cancel: %s", fi_strerror(-rc));
			return -1;
		}
	}
	for (int i = 0; i < CANCEL_N; i++) {
		int rc = ft_get_comp(ctx, &c, ctx->opts->op_timeout_ms), k;

		if (rc != -FI_EAVAIL || c.err.err != FI_ECANCELED) {
			FT_ERR(ctx, "cancelled receive: rc %d err %d (%s), want FI_ECANCELED", rc,
			       c.err.err, fi_strerror(c.err.err));
			return -1;
		}
		k = (int)((struct fi_context2 *)c.err.op_context - fctx);
		if (k < 0 || k >= CANCEL_N || seen[k]) {
			FT_ERR(ctx, "FI_ECANCELED with a bad or repeated context %p", c.err.op_context);
			return -1;
		}
		seen[k] = true;
	}
	memset(b->p, 0, (CANCEL_N + 1) * 4096);
	if (FT_POST(ctx, ft_recv(ctx, b, CANCEL_N * 4096, 4096, 0, 7, &good)) ||
	    ft_barrier_progress(ctx))
		return -1;
	if (ft_wait_ctx(ctx, &good, &c) || c.e.len != 1000 ||
	    ft_verify(ctx, b->p + CANCEL_N * 4096, 1000, 99, "after cancel"))
		return -1;
	for (int i = 0; i < CANCEL_N * 4096; i++) {
		if (b->p[i]) {
			FT_ERR(ctx, "a cancelled receive buffer was written at byte %d", i);
			return -1;
		}
	}
	return ft_expect_none(ctx, 20);
}

static int cancel_sender(struct ft_ctx *ctx, struct ft_buf *b)
{
	struct fi_context2 fctx;
	struct ft_comp c;

	if (ft_barrier_progress(ctx))
		return -1;
	ft_fill(b->p, 1000, 99);
	if (FT_POST(ctx, ft_send(ctx, b, 0, 1000, 1, 7, &fctx)) || ft_wait_ctx(ctx, &fctx, &c))
		return -1;
	return 0;
}

static int cancel_run(struct ft_ctx *ctx)
{
	struct ft_buf b = { 0 };
	int rc = ft_open(ctx);

	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ft_buf_alloc(ctx, &b, (CANCEL_N + 1) * 4096, FI_SEND | FI_RECV))
		goto close;
	if (ctx->rank == 0 ? cancel_sender(ctx, &b) : cancel_receiver(ctx, &b))
		goto free;
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_cancel",
	.desc = "fi_cancel of posted receives (-T: tagged)",
	.nranks = 2,
	.hints = cancel_hints,
	.run = cancel_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
