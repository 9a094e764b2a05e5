/* SPDX-License-Identifier: MIT */
/*
 * Resource exhaustion: the sender posts several times its tx queue depth
 * of messages without reading its CQ, so posts run into -FI_EAGAIN; it then
 * reads completions and retries. The receiver posts late, more receives than
 * its rx queue holds (again meeting -FI_EAGAIN). Every message must arrive
 * exactly once, in order (FI_ORDER_SAS), with its data, and every operation
 * must complete exactly once at both ends.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <stdlib.h>
#include <string.h>

#define EX_LEN 128

static void ex_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_MSG;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
}

/* read completions straight from the CQ, checking each context once */
static int ex_reap(struct ft_ctx *ctx, struct fi_context2 *base, int total, char *done,
		   int *ndone, int *order_next, const struct ft_buf *b, bool recv)
{
	struct fi_cq_tagged_entry e[16];
	ssize_t n = fi_cq_read(ctx->cq, e, 16);

	if (n == -FI_EAGAIN)
		return 0;
	if (n < 0) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(ctx->cq, &err, 0);
		FT_ERR(ctx, "completion error: %s", fi_strerror(err.err < 0 ? -err.err : err.err));
		return -1;
	}
	for (ssize_t i = 0; i < n; i++) {
		long k = (struct fi_context2 *)e[i].op_context - base;

		if (k < 0 || k >= total || done[k]) {
			FT_ERR(ctx, "completion for a bad or repeated context (index %ld)", k);
			return -1;
		}
		done[k] = 1;
		(*ndone)++;
		if (recv) {
			/* receive k got message k: order and content */
			if (e[i].len != EX_LEN ||
			    ft_verify(ctx, b->p + (size_t)k * EX_LEN, EX_LEN, (uint32_t)k, "exhaust"))
				return -1;
			if (k != *order_next)
				ft_dbg(ctx, "receive %ld completed before %d", k, *order_next);
			*order_next = (int)k + 1;
		}
	}
	return 0;
}

static int ex_side(struct ft_ctx *ctx, struct ft_buf *b, int total, bool recv)
{
	struct fi_context2 *fctx = calloc((size_t)total, sizeof(*fctx));
	char *done = calloc((size_t)total, 1);
	int posted = 0, ndone = 0, eagain = 0, next = 0, rc = -1;
	uint64_t t0 = ft_now_ns();
	unsigned spins = 0;

	if (!fctx || !done)
		goto out;
	while (ndone < total) {
		if (posted < total) {
			char *p = b->p + (size_t)posted * EX_LEN;
			ssize_t r;

			if (!recv)
				ft_fill(p, EX_LEN, (uint32_t)posted);
			r = recv ? fi_recv(ctx->ep, p, EX_LEN, b->desc, FI_ADDR_UNSPEC, &fctx[posted]) :
				   fi_send(ctx->ep, p, EX_LEN, b->desc, ctx->peers[1], &fctx[posted]);
			if (r == 0) {
				posted++;
				continue;
			}
			if (r != -FI_EAGAIN) {
				FT_ERR(ctx, "post %d: %s", posted, fi_strerror((int)-r));
				goto out;
			}
			eagain++;
		}
		/* only now look at completions: the queue was full (or all posted) */
		if (ex_reap(ctx, fctx, total, done, &ndone, &next, b, recv))
			goto out;
		ft_relax(&spins);
		if (ft_now_ns() - t0 > (uint64_t)ctx->opts->op_timeout_ms * 1000000ULL * 3) {
			FT_ERR(ctx, "stuck: %d posted, %d completed of %d", posted, ndone, total);
			goto out;
		}
	}
	ft_dbg(ctx, "%s: %d operations, %d -FI_EAGAIN", recv ? "recv" : "send", total, eagain);
	if (ctx->opts->verbose || eagain == 0)
		printf("%s: %d operations, -FI_EAGAIN seen %d times\n", recv ? "receiver" : "sender",
		       total, eagain);
	rc = 0;
out:
	free(fctx);
	free(done);
	return rc;
}

static int ex_run(struct ft_ctx *ctx)
{
	struct ft_buf b = { 0 };
	int total, rc = ft_open(ctx);

	if (rc)
		goto close;
	rc = FT_FAIL;
	total = (int)(4 * (ctx->info->tx_attr->size > ctx->info->rx_attr->size ?
			   ctx->info->tx_attr->size : ctx->info->rx_attr->size));
	if (total < 1024)
		total = 1024;
	if (total > 65536)
		total = 65536;
	if (ft_allgather(ctx, &total, sizeof(total), (int[FT_MAX_RANKS]){ 0 }))
		goto close;
	if (ft_buf_alloc(ctx, &b, (size_t)total * EX_LEN, FI_SEND | FI_RECV))
		goto close;
	/* the sender starts first and overruns the receiver's posted buffers */
	if (ctx->rank == 0) {
		if (ft_barrier(ctx) || ex_side(ctx, &b, total, false))
			goto free;
	} else {
		if (ft_barrier(ctx) || ex_side(ctx, &b, total, true))
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
	.name = "ft_exhaust",
	.desc = "queues overrun: -FI_EAGAIN handled, nothing lost or duplicated",
	.nranks = 2,
	.hints = ex_hints,
	.run = ex_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
