/* SPDX-License-Identifier: MIT */
/*
 * Many peers, all to all (default 8 processes): every rank sends a message to
 * every other rank in rounds of growing size (eager to rendezvous), tagged by
 * source and round, while receiving from all of them; every payload is
 * verified and fi_cq_readfrom (with FI_SOURCE) names the right sender.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <stdlib.h>
#include <string.h>

static void a2a_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_TAGGED;
}

static uint32_t a2a_seed(int src, int dst, int round)
{
	return (uint32_t)(src * 10007 + dst * 101 + round);
}

static int a2a_round(struct ft_ctx *ctx, struct ft_buf *sb, struct ft_buf *rb, size_t size,
		     int round)
{
	int n = ctx->nranks, me = ctx->rank;
	struct fi_context2 *sctx = calloc((size_t)n, sizeof(*sctx));
	struct fi_context2 *rctx = calloc((size_t)n, sizeof(*rctx));
	struct ft_comp c;
	int rc = -1;

	if (!sctx || !rctx)
		goto out;
	for (int p = 0; p < n; p++) {
		if (p == me)
			continue;
		if (FT_POST(ctx, fi_trecv(ctx->ep, rb->p + (size_t)p * size, size, rb->desc,
					  FI_ADDR_UNSPEC, ((uint64_t)round << 16) | (uint64_t)p, 0,
					  &rctx[p])))
			goto out;
	}
	/* stagger the destinations so that not everyone hits rank 0 first */
	for (int k = 1; k < n; k++) {
		int p = (me + k) % n;

		ft_fill(sb->p + (size_t)p * size, size, a2a_seed(me, p, round));
		if (FT_POST(ctx, fi_tsend(ctx->ep, sb->p + (size_t)p * size, size, sb->desc,
					  ctx->peers[p], ((uint64_t)round << 16) | (uint64_t)me,
					  &sctx[p])))
			goto out;
	}
	for (int p = 0; p < n; p++) {
		if (p == me)
			continue;
		if (ft_wait_ctx(ctx, &rctx[p], &c))
			goto out;
		if (c.e.len != size || c.src != ctx->peers[p]) {
			FT_ERR(ctx, "round %d from rank %d: len %zu source %llu", round, p, c.e.len,
			       (unsigned long long)c.src);
			goto out;
		}
		if (ft_verify(ctx, rb->p + (size_t)p * size, size, a2a_seed(p, me, round),
			      "all-to-all"))
			goto out;
	}
	for (int p = 0; p < n; p++)
		if (p != me && ft_wait_ctx(ctx, &sctx[p], &c))
			goto out;
	rc = 0;
out:
	free(sctx);
	free(rctx);
	return rc;
}

static int a2a_run(struct ft_ctx *ctx)
{
	size_t sizes[] = { 8, 4096, 65536, 1024 * 1024 };
	int nsizes = ctx->opts->quick ? 3 : 4;
	size_t max = sizes[nsizes - 1] * (size_t)ctx->nranks;
	struct ft_buf sb = { 0 }, rb = { 0 };
	int rc;

	ctx->cq_readfrom = true;
	rc = ft_open(ctx);
	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ft_buf_alloc(ctx, &sb, max, FI_SEND) || ft_buf_alloc(ctx, &rb, max, FI_RECV))
		goto free;
	for (int r = 0; r < nsizes * 2; r++) {
		if (a2a_round(ctx, &sb, &rb, sizes[r / 2], r))
			goto free;
		ft_dbg(ctx, "round %d (%zu bytes) ok", r, sizes[r / 2]);
	}
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&sb);
	ft_buf_free(&rb);
close:
	ft_close(ctx);
	return rc;
}

static void a2a_caps(struct ft_ctx *ctx, struct fi_info *h)
{
	a2a_hints(ctx, h);
	h->caps |= FI_SOURCE;
}

static const struct ft_test test = {
	.name = "ft_alltoall",
	.desc = "all-to-all tagged exchange among many processes with FI_SOURCE",
	.nranks = 8,
	.hints = a2a_caps,
	.run = a2a_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
