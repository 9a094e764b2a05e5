/* SPDX-License-Identifier: MIT */
/*
 * Collective groups for tests: see ft_coll.h.
 */
#define _GNU_SOURCE
#include "ft_coll.h"

#include <string.h>

int ft_coll_pre_enable(struct ft_ctx *ctx)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_NONE };

	if (FT_CHECK(ctx, fi_eq_open(ctx->fabric, &attr, &ctx->eq, NULL)))
		return -1;
	return FT_CHECK(ctx, fi_ep_bind(ctx->ep, &ctx->eq->fid, 0));
}

void ft_coll_after_close(struct ft_ctx *ctx)
{
	if (ctx->eq)
		fi_close(&ctx->eq->fid);
	ctx->eq = NULL;
}

int ft_coll_join_post(struct ft_ctx *ctx, const int *ranks, int n,
		      struct ft_coll_group *g)
{
	struct fi_av_set_attr attr = {
		.count = (size_t)n, .start_addr = FI_ADDR_NOTAVAIL,
		.end_addr = FI_ADDR_NOTAVAIL,
	};
	fi_addr_t set_addr;

	memset(g, 0, sizeof(*g));
	g->n = n;
	g->me = -1;
	if (FT_CHECK(ctx, fi_av_set(ctx->av, &attr, &g->set, NULL)))
		return -1;
	for (int i = 0; i < n; i++) {
		g->members[i] = ctx->peers[ranks[i]];
		if (ranks[i] == ctx->rank)
			g->me = i;
		if (FT_CHECK(ctx, fi_av_set_insert(g->set, g->members[i])))
			return -1;
	}
	if (FT_CHECK(ctx, fi_av_set_addr(g->set, &set_addr)))
		return -1;
	return FT_CHECK(ctx, fi_join_collective(ctx->ep, set_addr, g->set, 0,
						&g->mc, g));
}

int ft_coll_join_wait(struct ft_ctx *ctx, struct ft_coll_group *g)
{
	struct fi_eq_entry e;
	struct fi_eq_err_entry err;
	uint32_t event;
	uint64_t t0 = ft_now_ns();
	unsigned spins = 0;
	ssize_t rd;

	for (;;) {
		rd = fi_eq_read(ctx->eq, &event, &e, sizeof(e), 0);
		if (rd == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_eq_readerr(ctx->eq, &err, 0);
			FT_ERR(ctx, "join failed: %s", fi_strerror(err.err));
			return -1;
		}
		if (rd > 0) {
			if (event != FI_JOIN_COMPLETE || e.context != g ||
			    e.fid != &g->mc->fid) {
				FT_ERR(ctx, "EQ event %u for context %p, want "
				       "FI_JOIN_COMPLETE for %p", event,
				       e.context, (void *)g);
				return -1;
			}
			g->addr = fi_mc_addr(g->mc);
			return 0;
		}
		ft_progress(ctx);
		ft_relax(&spins);
		if (ft_now_ns() - t0 > (uint64_t)ctx->opts->op_timeout_ms * 1000000ULL) {
			FT_ERR(ctx, "no FI_JOIN_COMPLETE");
			return -1;
		}
	}
}

int ft_coll_join(struct ft_ctx *ctx, const int *ranks, int n,
		 struct ft_coll_group *g)
{
	if (ft_coll_join_post(ctx, ranks, n, g))
		return -1;
	return ft_coll_join_wait(ctx, g);
}

int ft_coll_join_all(struct ft_ctx *ctx, struct ft_coll_group *g)
{
	int ranks[FT_MAX_RANKS];

	for (int i = 0; i < ctx->nranks; i++)
		ranks[i] = i;
	return ft_coll_join(ctx, ranks, ctx->nranks, g);
}

void ft_coll_leave(struct ft_coll_group *g)
{
	if (g->mc)
		fi_close(&g->mc->fid);
	if (g->set)
		fi_close(&g->set->fid);
	g->mc = NULL;
	g->set = NULL;
}
