/* SPDX-License-Identifier: MIT */
/*
 * FI_MULTI_RECV: one posted buffer takes many messages; each completion
 * points into the buffer (buf, len), messages are packed in arrival order,
 * the last completion carries FI_MULTI_RECV once less than
 * FI_OPT_MIN_MULTI_RECV bytes remain, and a second buffer takes the rest.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>

#define MR_MSGS 64
#define MR_MSG_LEN 200
#define MR_MIN 256

static void mrecv_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_MSG | FI_MULTI_RECV;
	h->rx_attr->msg_order = FI_ORDER_SAS;
	h->tx_attr->msg_order = FI_ORDER_SAS;
}

static int mrecv_set_min(struct ft_ctx *ctx)
{
	size_t min = MR_MIN;

	return FT_CHECK(ctx, fi_setopt(&ctx->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				       &min, sizeof(min)));
}

static ssize_t mrecv_post(struct ft_ctx *ctx, struct ft_buf *b, size_t off, size_t len,
			  struct fi_context2 *fctx)
{
	struct iovec iov = { .iov_base = b->p + off, .iov_len = len };
	void *desc = b->desc;
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.addr = FI_ADDR_UNSPEC, .context = fctx,
	};

	return fi_recvmsg(ctx->ep, &msg, FI_MULTI_RECV | FI_COMPLETION);
}

static int mrecv_receiver(struct ft_ctx *ctx, struct ft_buf *b)
{
	/* the first buffer holds about half of the messages */
	size_t half = (MR_MSGS / 2) * MR_MSG_LEN + MR_MIN - 1, second = MR_MSGS * MR_MSG_LEN * 2;
	struct fi_context2 fctx[2];
	int got = 0, released = 0, cur = 0;
	char *next = b->p;
	struct ft_comp c;

	if (FT_POST(ctx, mrecv_post(ctx, b, 0, half, &fctx[0])) ||
	    FT_POST(ctx, mrecv_post(ctx, b, half + 64, second, &fctx[1])))
		return -1;
	if (ft_barrier_progress(ctx))
		return -1;
	while (got < MR_MSGS || released < 2) {
		if (ft_get_comp(ctx, &c, ctx->opts->op_timeout_ms)) {
			FT_ERR(ctx, "after %d messages: %s", got,
			       c.is_err ? fi_strerror(c.err.err) : "timeout");
			return -1;
		}
		if (c.e.op_context != &fctx[cur]) {
			FT_ERR(ctx, "completion for buffer %p, expected buffer %d", c.e.op_context, cur);
			return -1;
		}
		if (c.e.flags & FI_RECV) {
			if (c.e.len != MR_MSG_LEN || c.e.buf != next) {
				FT_ERR(ctx, "message %d: len %zu at %p, want %d at %p", got, c.e.len,
				       c.e.buf, MR_MSG_LEN, (void *)next);
				return -1;
			}
			if (ft_verify(ctx, c.e.buf, MR_MSG_LEN, (uint32_t)got + 1, "multi recv"))
				return -1;
			next += MR_MSG_LEN;
			got++;
		}
		if (c.e.flags & FI_MULTI_RECV) {
			released++;
			if (cur == 0) {
				size_t left = half - (size_t)(next - b->p);

				if (left >= MR_MIN) {
					FT_ERR(ctx, "buffer released with %zu bytes left (min %d)", left,
					       MR_MIN);
					return -1;
				}
				cur = 1;
				next = b->p + half + 64;
			} else if (got < MR_MSGS) {
				FT_ERR(ctx, "second buffer released early");
				return -1;
			}
		}
		if (got == MR_MSGS && released == 1) {
			/* the second buffer is still posted: reclaim it */
			if (FT_CHECK(ctx, fi_cancel(&ctx->ep->fid, &fctx[1])))
				return -1;
			if (ft_get_comp(ctx, &c, ctx->opts->op_timeout_ms) != -FI_EAVAIL ||
			    c.err.err != FI_ECANCELED) {
				FT_ERR(ctx, "cancel of the multi-recv buffer: no FI_ECANCELED");
				return -1;
			}
			released++;
		}
	}
	if (cur != 1) {
		FT_ERR(ctx, "the first buffer was never released");
		return -1;
	}
	return 0;
}

static int mrecv_sender(struct ft_ctx *ctx, struct ft_buf *b)
{
	static struct fi_context2 fctx[MR_MSGS];

	if (ft_barrier_progress(ctx))
		return -1;
	for (int i = 0; i < MR_MSGS; i++) {
		ft_fill(b->p + (size_t)i * MR_MSG_LEN, MR_MSG_LEN, (uint32_t)i + 1);
		if (FT_POST(ctx, fi_send(ctx->ep, b->p + (size_t)i * MR_MSG_LEN, MR_MSG_LEN, b->desc,
					 ctx->peers[1], &fctx[i])))
			return -1;
	}
	return ft_wait_n(ctx, MR_MSGS);
}

static int mrecv_run(struct ft_ctx *ctx)
{
	struct ft_buf b = { 0 };
	int rc;

	rc = ft_open(ctx);
	if (rc)
		goto close;
	/* after fi_enable: libfabric 1.17's shm crashes on it before */
	rc = FT_FAIL;
	if (mrecv_set_min(ctx))
		goto close;
	if (ft_buf_alloc(ctx, &b, MR_MSGS * MR_MSG_LEN * 4, FI_SEND | FI_RECV))
		goto close;
	if (ctx->rank == 0 ? mrecv_sender(ctx, &b) : mrecv_receiver(ctx, &b))
		goto free;
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_multi_recv",
	.desc = "FI_MULTI_RECV buffers and FI_OPT_MIN_MULTI_RECV",
	.nranks = 2,
	.hints = mrecv_hints,
	.run = mrecv_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
