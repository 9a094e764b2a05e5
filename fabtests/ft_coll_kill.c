/* SPDX-License-Identifier: MIT */
/*
 * A member killed in the middle of an allreduce: the last rank posts its
 * part of an allreduce and SIGKILLs itself; every other rank must see an
 * error completion for that allreduce (or for the next one, if its own
 * finished before the death mattered to it) within a bounded time
 * (-x SECONDS, default 10), and then see later collectives of the group
 * fail at once instead of hanging; the error names the cause (FI_EIO
 * does not). -m sets the allreduce size (default
 * 4 MiB, so a pipelined ring is in flight when the rank dies).
 */
#define _GNU_SOURCE
#include "common/ft.h"
#include "common/ft_coll.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define KILL_ROUNDS 3		/* healthy allreduces first */

static int kill_wait(struct ft_ctx *ctx, void *fctx, uint64_t bound_ns,
		     struct ft_comp *c, bool *failed)
{
	uint64_t t0 = ft_now_ns();
	unsigned spins = 0;

	for (;;) {
		for (int i = 0; i < ctx->stash_n; i++) {
			if (ctx->stash[i].e.op_context != fctx)
				continue;
			*c = ctx->stash[i];
			memmove(&ctx->stash[i], &ctx->stash[i + 1],
				(size_t)(ctx->stash_n - i - 1) *
				sizeof(ctx->stash[0]));
			ctx->stash_n--;
			*failed = c->is_err;
			return 0;
		}
		ft_progress(ctx);
		ft_relax(&spins);
		if (ft_now_ns() - t0 > bound_ns) {
			FT_ERR(ctx, "no completion within %llu ms of the "
			       "member's death", (unsigned long long)(bound_ns /
							       1000000));
			return -1;
		}
	}
}

static int kill_run(struct ft_ctx *ctx)
{
	size_t bytes = ctx->opts->max_size ? ctx->opts->max_size : 4 * FT_MIB;
	size_t count = bytes / sizeof(float);
	uint64_t bound = (uint64_t)(ctx->opts->xopt ? atoi(ctx->opts->xopt) :
						      10) * 1000000000ull;
	int victim = ctx->nranks - 1, rc;
	float *in = NULL, *out = NULL;
	struct ft_coll_group g;
	struct fi_context2 fctx;
	struct ft_comp c;
	bool failed = false;
	uint64_t t0;

	ctx->pre_enable = ft_coll_pre_enable;
	ctx->after_ep_close = ft_coll_after_close;
	rc = ft_open(ctx);
	if (rc)
		goto close;
	rc = FT_FAIL;
	in = malloc(count * sizeof(float));
	out = malloc(count * sizeof(float));
	if (!in || !out || ft_coll_join_all(ctx, &g))
		goto close;
	for (size_t i = 0; i < count; i++)
		in[i] = (float)(i % 7);
	for (int round = 0; round < KILL_ROUNDS; round++) {
		if (FT_POST(ctx, fi_allreduce(ctx->ep, in, count, NULL, out,
					      NULL, g.addr, FI_FLOAT, FI_SUM, 0,
					      &fctx)) ||
		    ft_wait_ctx(ctx, &fctx, &c))
			goto leave;
		for (size_t i = 0; i < count; i += 4099)
			if (out[i] != (float)(i % 7) * (float)ctx->nranks) {
				FT_ERR(ctx, "healthy round %d: element %zu is %f",
				       round, i, out[i]);
				goto leave;
			}
	}
	/* No out-of-band collective from here on: the victim is gone. */
	if (ft_barrier_progress(ctx))
		goto leave;
	if (FT_POST(ctx, fi_allreduce(ctx->ep, in, count, NULL, out, NULL,
				      g.addr, FI_FLOAT, FI_SUM, 0, &fctx)))
		goto leave;
	if (ctx->rank == victim) {
		/* some of our part goes out, then we die mid-operation */
		for (int i = 0; i < 200; i++)
			ft_progress(ctx);
		raise(SIGKILL);
	}
	t0 = ft_now_ns();
	if (kill_wait(ctx, &fctx, bound, &c, &failed))
		goto leave;
	if (!failed) {
		/* it finished before the death reached us: the next one
		 * cannot */
		ft_dbg(ctx, "allreduce completed before the member died");
		if (FT_POST(ctx, fi_allreduce(ctx->ep, in, count, NULL, out,
					      NULL, g.addr, FI_FLOAT, FI_SUM, 0,
					      &fctx)) ||
		    kill_wait(ctx, &fctx, bound, &c, &failed))
			goto leave;
		if (!failed) {
			FT_ERR(ctx, "an allreduce without the dead member "
			       "succeeded");
			goto leave;
		}
	}
	ft_dbg(ctx, "error completion after %llu ms: %s",
	       (unsigned long long)((ft_now_ns() - t0) / 1000000),
	       fi_strerror(c.err.err));
	/* The error names the cause (the peer's death, or the transfer's
	 * own error), not a bare FI_EIO. */
	if (c.err.err == FI_EIO) {
		FT_ERR(ctx, "the error completion says FI_EIO, not the cause");
		goto leave;
	}
	/* the group stays failed: a new operation fails at once */
	t0 = ft_now_ns();
	if (FT_POST(ctx, fi_barrier(ctx->ep, g.addr, &fctx)) ||
	    kill_wait(ctx, &fctx, bound, &c, &failed))
		goto leave;
	if (!failed) {
		FT_ERR(ctx, "a barrier with a dead member succeeded");
		goto leave;
	}
	rc = FT_PASS;
leave:
	ft_coll_leave(&g);
close:
	free(in);
	free(out);
	ft_close(ctx);
	return rc;
}

static void kill_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_COLLECTIVE | FI_MSG;
}

static const struct ft_test test = {
	.name = "ft_coll_kill",
	.desc = "a member killed mid-allreduce: error completions elsewhere "
		"in bounded time",
	.nranks = 4,
	.min_ranks = 2,
	.hints = kill_hints,
	.run = kill_run,
	.rank_may_die = true,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
