/* SPDX-License-Identifier: MIT */
/*
 * Directed receive and FI_SOURCE with 3 processes: ranks 1 and 2 send to
 * rank 0 with the same tag; rank 0 posts a receive for rank 2 first, then one
 * for rank 1, and each must get its own sender's message; fi_cq_readfrom
 * reports the sender's fi_addr_t; a wildcard receive takes either.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>

#define DR_LEN 512

static void dr_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV | FI_SOURCE;
}

static int dr_receiver(struct ft_ctx *ctx, struct ft_buf *b)
{
	struct fi_context2 fctx[4];
	struct ft_comp c;

	/* directed: rank 2 first, then rank 1, both for the same tag */
	for (int k = 0; k < 2; k++) {
		int from = 2 - k;

		if (FT_POST(ctx, fi_trecv(ctx->ep, b->p + (size_t)k * DR_LEN, DR_LEN, b->desc,
					  ctx->peers[from], 9, 0, &fctx[k])))
			return -1;
	}
	/* untagged wildcards */
	for (int k = 2; k < 4; k++)
		if (FT_POST(ctx, fi_recv(ctx->ep, b->p + (size_t)k * DR_LEN, DR_LEN, b->desc,
					 FI_ADDR_UNSPEC, &fctx[k])))
			return -1;
	if (ft_barrier_progress(ctx))
		return -1;
	for (int k = 0; k < 2; k++) {
		int from = 2 - k;

		if (ft_wait_ctx(ctx, &fctx[k], &c) ||
		    ft_verify(ctx, b->p + (size_t)k * DR_LEN, DR_LEN, (uint32_t)from, "directed"))
			return -1;
		if (c.src != ctx->peers[from]) {
			FT_ERR(ctx, "FI_SOURCE: tagged message from rank %d reported as %llu, want %llu",
			       from, (unsigned long long)c.src, (unsigned long long)ctx->peers[from]);
			return -1;
		}
	}
	for (int k = 2; k < 4; k++) {
		int from;

		if (ft_wait_ctx(ctx, &fctx[k], &c))
			return -1;
		from = c.src == ctx->peers[1] ? 1 : c.src == ctx->peers[2] ? 2 : -1;
		if (from < 0) {
			FT_ERR(ctx, "FI_SOURCE: unknown source %llu", (unsigned long long)c.src);
			return -1;
		}
		if (ft_verify(ctx, b->p + (size_t)k * DR_LEN, DR_LEN, (uint32_t)from + 100,
			      "wildcard with source"))
			return -1;
	}
	return 0;
}

static int dr_sender(struct ft_ctx *ctx, struct ft_buf *b)
{
	struct fi_context2 fctx[2];
	struct ft_comp c;

	if (ft_barrier_progress(ctx))
		return -1;
	ft_fill(b->p, DR_LEN, (uint32_t)ctx->rank);
	ft_fill(b->p + DR_LEN, DR_LEN, (uint32_t)ctx->rank + 100);
	if (FT_POST(ctx, fi_tsend(ctx->ep, b->p, DR_LEN, b->desc, ctx->peers[0], 9, &fctx[0])) ||
	    FT_POST(ctx, fi_send(ctx->ep, b->p + DR_LEN, DR_LEN, b->desc, ctx->peers[0], &fctx[1])))
		return -1;
	return ft_wait_ctx(ctx, &fctx[0], &c) || ft_wait_ctx(ctx, &fctx[1], &c) ? -1 : 0;
}

static int dr_run(struct ft_ctx *ctx)
{
	struct ft_buf b = { 0 };
	int rc;

	ctx->cq_readfrom = true;
	rc = ft_open(ctx);
	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ft_buf_alloc(ctx, &b, 4 * DR_LEN, FI_SEND | FI_RECV))
		goto close;
	if (ctx->rank == 0 ? dr_receiver(ctx, &b) : dr_sender(ctx, &b))
		goto free;
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_directed",
	.desc = "FI_DIRECTED_RECV and FI_SOURCE with 3 processes",
	.nranks = 3,
	.min_ranks = 3,
	.hints = dr_hints,
	.run = dr_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
