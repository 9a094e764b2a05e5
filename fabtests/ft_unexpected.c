/* SPDX-License-Identifier: MIT */
/*
 * Unexpected messages: the sender posts messages of many sizes (inline,
 * around inject_size, and large ones that need a rendezvous) before the
 * receiver posts anything. Tagged (-T): receives are posted in reverse tag
 * order and each must get its own message. Untagged: receives are posted in
 * order and FI_ORDER_SAS must hold.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>
#include <unistd.h>

#define UX_MAX 24

static void ux_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = ctx->opts->tagged ? FI_TAGGED : FI_MSG;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
}

static size_t ux_sizes(struct ft_ctx *ctx, size_t *sz)
{
	size_t inj = ctx->info->tx_attr->inject_size, big = ctx->opts->quick ? 256 * 1024 : 4 * FT_MIB;
	size_t base[] = { 0, 1, 8, 64, inj ? inj - 1 : 2, inj, inj + 1, 1000, 4096, 8192,
			  65536, 65537, big / 2, big, 3, 17 };
	size_t n = sizeof(base) / sizeof(base[0]);

	memcpy(sz, base, sizeof(base));
	return n;
}

static int ux_run(struct ft_ctx *ctx)
{
	struct fi_context2 fctx[UX_MAX];
	size_t sz[UX_MAX], off[UX_MAX], total = 0, n;
	struct ft_buf b = { 0 };
	struct ft_comp c;
	int rc = ft_open(ctx);

	if (rc)
		goto close;
	rc = FT_FAIL;
	n = ux_sizes(ctx, sz);
	for (size_t i = 0; i < n; i++) {
		off[i] = total;
		total += (sz[i] + 4095) & ~4095UL;
	}
	if (ft_buf_alloc(ctx, &b, total + 4096, FI_SEND | FI_RECV))
		goto close;
	if (ctx->rank == 0) {
		for (size_t i = 0; i < n; i++) {
			ft_fill(b.p + off[i], sz[i], (uint32_t)(i * 977 + 1));
			if (FT_POST(ctx, ft_send(ctx, &b, off[i], sz[i], 1, 100 + i, &fctx[i])))
				goto free;
		}
	}
	/* the receiver posts nothing until every send was issued */
	if (ft_barrier_progress(ctx))
		goto free;
	if (ctx->rank == 1) {
		/* let the eager data arrive and sit in the unexpected queue */
		for (int i = 0; i < 200; i++) {
			ft_progress(ctx);
			usleep(100);
		}
		if (ctx->stash_n) {
			FT_ERR(ctx, "a completion arrived before any receive was posted");
			goto free;
		}
		for (size_t k = 0; k < n; k++) {
			size_t i = ctx->opts->tagged ? n - 1 - k : k;

			if (FT_POST(ctx, ft_recv(ctx, &b, off[i], sz[i], 0, 100 + i, &fctx[i])))
				goto free;
		}
		for (size_t i = 0; i < n; i++) {
			if (ft_wait_ctx(ctx, &fctx[i], &c))
				goto free;
			if (c.e.len != sz[i] ||
			    (ctx->opts->tagged && c.e.tag != 100 + i)) {
				FT_ERR(ctx, "message %zu: len %zu tag %llu, want %zu and %zu", i,
				       c.e.len, (unsigned long long)c.e.tag, sz[i], 100 + i);
				goto free;
			}
			if (ft_verify(ctx, b.p + off[i], sz[i], (uint32_t)(i * 977 + 1), "unexpected"))
				goto free;
		}
	} else {
		for (size_t i = 0; i < n; i++)
			if (ft_wait_ctx(ctx, &fctx[i], &c))
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
	.name = "ft_unexpected",
	.desc = "messages sent before the receive is posted (-T: tagged, out of order)",
	.nranks = 2,
	.hints = ux_hints,
	.run = ux_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
