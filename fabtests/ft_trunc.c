/* SPDX-License-Identifier: MIT */
/*
 * Truncation: a message longer than the receive buffer completes in error
 * with FI_ETRUNC, olen = the bytes that did not fit, the buffer holds the
 * first bytes of the message and nothing past it is written. Small (eager)
 * and large (rendezvous) messages; the endpoint keeps working afterwards.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>

static void trunc_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = ctx->opts->tagged ? FI_TAGGED : FI_MSG;
}

struct trunc_case {
	size_t sent, posted;
};

static int trunc_check(struct ft_ctx *ctx, const struct trunc_case *tc, struct ft_buf *b,
		       struct fi_context2 *fctx, uint32_t seed)
{
	struct ft_comp c;
	int rc = ft_get_comp(ctx, &c, ctx->opts->op_timeout_ms);

	if (rc != -FI_EAVAIL || c.err.err != FI_ETRUNC) {
		FT_ERR(ctx, "%zu into %zu: rc %d err %d (%s), want FI_ETRUNC", tc->sent, tc->posted,
		       rc, c.err.err, fi_strerror(c.err.err));
		return -1;
	}
	if (c.err.op_context != fctx || c.err.olen != tc->sent - tc->posted ||
	    !(c.err.flags & FI_RECV)) {
		FT_ERR(ctx, "%zu into %zu: context %p olen %zu flags 0x%llx, want olen %zu",
		       tc->sent, tc->posted, c.err.op_context, c.err.olen,
		       (unsigned long long)c.err.flags, tc->sent - tc->posted);
		return -1;
	}
	if (c.err.len && c.err.len != tc->posted) {
		FT_ERR(ctx, "%zu into %zu: len %zu", tc->sent, tc->posted, c.err.len);
		return -1;
	}
	if (ft_verify(ctx, b->p, tc->posted, seed, "truncated prefix"))
		return -1;
	for (size_t i = tc->posted; i < tc->posted + 4096; i++) {
		if (b->p[i] != 0x5a) {
			FT_ERR(ctx, "%zu into %zu: byte %zu past the buffer was written", tc->sent,
			       tc->posted, i);
			return -1;
		}
	}
	return 0;
}

static int trunc_run(struct ft_ctx *ctx)
{
	const size_t big = ctx->opts->quick ? 512 * 1024 : 8 * FT_MIB;
	const struct trunc_case cases[] = {
		{ 100, 10 }, { 1, 0 }, { 4096, 100 }, { 65536, 4096 }, { big, 65536 }, { big, big / 2 },
	};
	struct fi_context2 fctx;
	struct ft_buf b = { 0 };
	struct ft_comp c;
	int rc = ft_open(ctx);

	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ft_buf_alloc(ctx, &b, big + 8192, FI_SEND | FI_RECV))
		goto close;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct trunc_case *tc = &cases[i];

		if (ctx->rank == 1) {
			memset(b.p, 0x5a, big + 8192);
			if (FT_POST(ctx, ft_recv(ctx, &b, 0, tc->posted, 0, 5, &fctx)))
				goto free;
		}
		if (ft_barrier_progress(ctx))
			goto free;
		if (ctx->rank == 0) {
			ft_fill(b.p, tc->sent, (uint32_t)i + 1);
			if (FT_POST(ctx, ft_send(ctx, &b, 0, tc->sent, 1, 5, &fctx)) ||
			    ft_wait_ctx(ctx, &fctx, &c))
				goto free;
		} else if (trunc_check(ctx, tc, &b, &fctx, (uint32_t)i + 1)) {
			goto free;
		}
	}
	/* still usable: a message that fits */
	if (ctx->rank == 1 && FT_POST(ctx, ft_recv(ctx, &b, 0, 4096, 0, 5, &fctx)))
		goto free;
	if (ft_barrier_progress(ctx))
		goto free;
	if (ctx->rank == 0) {
		ft_fill(b.p, 4096, 4242);
		if (FT_POST(ctx, ft_send(ctx, &b, 0, 4096, 1, 5, &fctx)) || ft_wait_ctx(ctx, &fctx, &c))
			goto free;
	} else if (ft_wait_ctx(ctx, &fctx, &c) || c.e.len != 4096 ||
		   ft_verify(ctx, b.p, 4096, 4242, "after truncation")) {
		goto free;
	}
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_trunc",
	.desc = "truncated receives: FI_ETRUNC, olen, prefix delivered (-T: tagged)",
	.nranks = 2,
	.hints = trunc_hints,
	.run = trunc_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
