/* SPDX-License-Identifier: MIT */
/*
 * RMA: fi_write, fi_read and fi_writedata over every size up to the maximum
 * into a registered remote buffer, with data verification at both ends:
 * writes land exactly in the target range (guard bytes around it stay), reads
 * return the target's data, and fi_writedata raises a completion at the
 * target with FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA and the data sent.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>

#define RMA_GUARD 64

static void rma_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	/* the target checks its memory right after the writer's completion */
	h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
}

struct rma_state {
	struct ft_buf local, target;
	struct ft_rma_key keys[FT_MAX_RANKS];
	size_t max;
};

static int rma_check_guards(struct ft_ctx *ctx, struct rma_state *st, size_t size)
{
	const unsigned char *t = (const unsigned char *)st->target.p;

	for (size_t i = 0; i < RMA_GUARD; i++) {
		if (t[i] != 0xa5 || t[RMA_GUARD + size + i] != 0xa5) {
			FT_ERR(ctx, "size %zu: write outside the target range", size);
			return -1;
		}
	}
	return 0;
}

static int rma_write_one(struct ft_ctx *ctx, struct rma_state *st, size_t size, bool data)
{
	struct ft_rma_key *k = &st->keys[1];
	struct fi_context2 fctx;
	struct ft_comp c;

	if (ctx->rank == 1)
		memset(st->target.p, 0xa5, size + 2 * RMA_GUARD);
	if (ft_barrier_progress(ctx))
		return -1;
	if (ctx->rank == 0) {
		ft_fill(st->local.p, size, (uint32_t)size + 1);
		if (data ? FT_POST(ctx, fi_writedata(ctx->ep, st->local.p, size, st->local.desc,
						     size ^ 0x5a5a, ctx->peers[1], k->addr + RMA_GUARD,
						     k->key, &fctx)) :
			   FT_POST(ctx, fi_write(ctx->ep, st->local.p, size, st->local.desc,
						 ctx->peers[1], k->addr + RMA_GUARD, k->key, &fctx)))
			return -1;
		if (ft_wait_ctx(ctx, &fctx, &c))
			return -1;
		if (!(c.e.flags & FI_RMA) || !(c.e.flags & FI_WRITE)) {
			FT_ERR(ctx, "write completion flags 0x%llx", (unsigned long long)c.e.flags);
			return -1;
		}
	} else if (data) {
		if (ft_get_comp(ctx, &c, ctx->opts->op_timeout_ms)) {
			FT_ERR(ctx, "size %zu: no target completion for fi_writedata", size);
			return -1;
		}
		if (!(c.e.flags & FI_REMOTE_CQ_DATA) || c.e.data != (size ^ 0x5a5a) ||
		    !(c.e.flags & FI_REMOTE_WRITE)) {
			FT_ERR(ctx, "size %zu: target completion flags 0x%llx data 0x%llx", size,
			       (unsigned long long)c.e.flags, (unsigned long long)c.e.data);
			return -1;
		}
	}
	if (ft_barrier_progress(ctx))
		return -1;
	if (ctx->rank == 1 &&
	    (ft_verify(ctx, st->target.p + RMA_GUARD, size, (uint32_t)size + 1, "fi_write") ||
	     rma_check_guards(ctx, st, size)))
		return -1;
	return 0;
}

static int rma_read_one(struct ft_ctx *ctx, struct rma_state *st, size_t size)
{
	struct ft_rma_key *k = &st->keys[1];
	struct fi_context2 fctx;
	struct ft_comp c;

	if (ctx->rank == 1)
		ft_fill(st->target.p + RMA_GUARD, size, (uint32_t)size + 7);
	if (ft_barrier_progress(ctx))
		return -1;
	if (ctx->rank == 0) {
		memset(st->local.p, 0, size + RMA_GUARD);
		if (FT_POST(ctx, fi_read(ctx->ep, st->local.p, size, st->local.desc, ctx->peers[1],
					 k->addr + RMA_GUARD, k->key, &fctx)) ||
		    ft_wait_ctx(ctx, &fctx, &c))
			return -1;
		if (!(c.e.flags & FI_RMA) || !(c.e.flags & FI_READ)) {
			FT_ERR(ctx, "read completion flags 0x%llx", (unsigned long long)c.e.flags);
			return -1;
		}
		if (ft_verify(ctx, st->local.p, size, (uint32_t)size + 7, "fi_read"))
			return -1;
		for (size_t i = size; i < size + RMA_GUARD; i++)
			if (st->local.p[i]) {
				FT_ERR(ctx, "fi_read of %zu wrote past the local buffer", size);
				return -1;
			}
	}
	return ft_barrier_progress(ctx) ? -1 : 0;
}

static int rma_run(struct ft_ctx *ctx)
{
	struct rma_state st = { 0 };
	size_t sizes[256], n;
	bool data;
	int rc = ft_open(ctx);

	if (rc)
		goto close;
	rc = FT_FAIL;
	st.max = ctx->opts->max_size ? ctx->opts->max_size :
		 ctx->opts->quick ? FT_MIB : 16 * FT_MIB;
	if (ctx->info->ep_attr->max_msg_size < st.max)
		st.max = ctx->info->ep_attr->max_msg_size;
	data = ctx->info->domain_attr->cq_data_size >= 4;
	if (ft_buf_alloc(ctx, &st.local, st.max + 2 * RMA_GUARD, FI_READ | FI_WRITE) ||
	    ft_buf_alloc(ctx, &st.target, st.max + 2 * RMA_GUARD, FI_REMOTE_READ | FI_REMOTE_WRITE) ||
	    ft_rma_key_exchange(ctx, st.target.p, st.max + 2 * RMA_GUARD, st.target.mr, st.keys))
		goto free;
	n = ft_sizes(ctx, st.max, sizes, 256);
	for (size_t i = 0; i < n; i++) {
		if (rma_write_one(ctx, &st, sizes[i], false) || rma_read_one(ctx, &st, sizes[i]) ||
		    (data && (i % 3 == 0) && rma_write_one(ctx, &st, sizes[i], true)))
			goto free;
		ft_dbg(ctx, "size %zu ok", sizes[i]);
	}
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&st.local);
	ft_buf_free(&st.target);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_rma",
	.desc = "fi_write, fi_read, fi_writedata with remote CQ data",
	.nranks = 2,
	.hints = rma_hints,
	.run = rma_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
