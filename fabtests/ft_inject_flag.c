/* SPDX-License-Identifier: MIT */
/*
 * FI_INJECT as a flag (fi_msg(3), fi_tagged(3)): fi_sendmsg / fi_tsendmsg
 * with FI_INJECT | FI_COMPLETION let the caller reuse the buffer at return
 * and still complete, with the posted context; only the fi_inject* calls
 * complete silently. The sender overwrites its buffer as soon as a post
 * returns, so the receiver's data check also proves the copy was taken.
 * Upstream fabtests' fi_msg_inject runs the same contract.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>

#define INJ_LEN 32
#define INJ_ROUNDS 8

static void inj_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	(void)ctx;
	h->caps = FI_MSG | FI_TAGGED;
}

/* Round r: a sendmsg, a tsendmsg (both with FI_INJECT | FI_COMPLETION)
 * and an fi_inject, each INJ_LEN bytes of pattern 3r+k. */
static int inj_send_round(struct ft_ctx *ctx, struct ft_buf *b, int r)
{
	struct iovec iov = { .iov_base = b->p, .iov_len = INJ_LEN };
	struct fi_context2 mctx, tctx;
	struct fi_msg m = { .msg_iov = &iov, .desc = &b->desc, .iov_count = 1,
			    .addr = ctx->peers[1], .context = &mctx };
	struct fi_msg_tagged t = { .msg_iov = &iov, .desc = &b->desc, .iov_count = 1,
				   .addr = ctx->peers[1], .tag = 0x1a, .context = &tctx };
	struct ft_comp c;

	ft_fill(b->p, INJ_LEN, 3 * r);
	if (FT_POST(ctx, fi_sendmsg(ctx->ep, &m, FI_INJECT | FI_COMPLETION)))
		return -1;
	ft_fill(b->p, INJ_LEN, 3 * r + 1);
	if (FT_POST(ctx, fi_tsendmsg(ctx->ep, &t, FI_INJECT | FI_COMPLETION)))
		return -1;
	ft_fill(b->p, INJ_LEN, 3 * r + 2);
	if (FT_POST(ctx, fi_inject(ctx->ep, b->p, INJ_LEN, ctx->peers[1])))
		return -1;
	memset(b->p, 0xee, INJ_LEN);
	if (ft_wait_ctx(ctx, &mctx, &c) || ft_wait_ctx(ctx, &tctx, &c))
		return -1;
	return 0;
}

static int inj_recv_post(struct ft_ctx *ctx, struct ft_buf *b, struct fi_context2 *fctx)
{
	if (FT_POST(ctx, fi_recv(ctx->ep, b->p, INJ_LEN, b->desc, ctx->peers[0], &fctx[0])) ||
	    FT_POST(ctx, fi_trecv(ctx->ep, b->p + INJ_LEN, INJ_LEN, b->desc, ctx->peers[0],
				  0x1a, 0, &fctx[1])) ||
	    FT_POST(ctx, fi_recv(ctx->ep, b->p + 2 * INJ_LEN, INJ_LEN, b->desc, ctx->peers[0],
				 &fctx[2])))
		return -1;
	return 0;
}

static int inj_recv_check(struct ft_ctx *ctx, struct ft_buf *b, struct fi_context2 *fctx,
			  int r)
{
	struct ft_comp c;

	for (int k = 0; k < 3; k++)
		if (ft_wait_ctx(ctx, &fctx[k], &c))
			return -1;
	if (ft_verify(ctx, b->p, INJ_LEN, 3 * r, "fi_sendmsg FI_INJECT") ||
	    ft_verify(ctx, b->p + INJ_LEN, INJ_LEN, 3 * r + 1, "fi_tsendmsg FI_INJECT") ||
	    ft_verify(ctx, b->p + 2 * INJ_LEN, INJ_LEN, 3 * r + 2, "fi_inject"))
		return -1;
	return 0;
}

static int inj_run(struct ft_ctx *ctx)
{
	struct fi_context2 fctx[3];
	struct ft_buf b = { 0 };
	int rc = ft_open(ctx);

	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ctx->info->tx_attr->inject_size < INJ_LEN) {
		rc = ft_skip(ctx, "inject_size %zu < %d", ctx->info->tx_attr->inject_size,
			     INJ_LEN);
		goto close;
	}
	if (ft_buf_alloc(ctx, &b, 3 * INJ_LEN, FI_SEND | FI_RECV))
		goto close;
	for (int r = 0; r < INJ_ROUNDS; r++) {
		if (ctx->rank == 1 && inj_recv_post(ctx, &b, fctx))
			goto free;
		if (ft_barrier_progress(ctx))
			goto free;
		if (ctx->rank == 0 ? inj_send_round(ctx, &b, r) :
				     inj_recv_check(ctx, &b, fctx, r))
			goto free;
		if (ft_barrier_progress(ctx))
			goto free;
	}
	/* the fi_inject calls left nothing behind */
	if (ctx->rank == 0 && ft_expect_none(ctx, 100))
		goto free;
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_inject_flag",
	.desc = "FI_INJECT as a flag of fi_sendmsg/fi_tsendmsg completes; fi_inject does not",
	.nranks = 2,
	.hints = inj_hints,
	.run = inj_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
