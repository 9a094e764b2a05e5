/* SPDX-License-Identifier: MIT */
/*
 * Atomics on 32- and 64-bit unsigned integers at one target, from every
 * other rank at once (default 4 processes):
 *  - FI_SUM, non-fetching: the target holds the exact total;
 *  - FI_SUM, fetching (add 1): every fetched value is distinct and together
 *    they are 0..N-1, so no update was lost or duplicated;
 *  - FI_CSWAP: a compare-and-swap increment loop reaches the exact total;
 *  - FI_ATOMIC_WRITE, fetching and not: the old value comes back, the new
 *    one stays.
 * A combination the provider does not list in fi_atomicvalid is skipped
 * with a note; the test skips only when none is valid.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <stdlib.h>
#include <string.h>

#define AT_OPS 100
#define AT_SLOTS 16

static void at_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_MSG | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
}

struct at_state {
	struct ft_buf target, local;
	struct ft_rma_key keys[FT_MAX_RANKS];
	enum fi_datatype dt;
	size_t dsz;
	int tested;
};

static uint64_t at_get(const struct at_state *st, const void *p)
{
	return st->dsz == 4 ? *(const uint32_t *)p : *(const uint64_t *)p;
}

static void at_set(const struct at_state *st, void *p, uint64_t v)
{
	if (st->dsz == 4)
		*(uint32_t *)p = (uint32_t)v;
	else
		*(uint64_t *)p = v;
}

static uint64_t at_raddr(struct at_state *st, int slot)
{
	return st->keys[0].addr + (uint64_t)slot * 8;
}

static bool at_valid(struct ft_ctx *ctx, struct at_state *st, enum fi_op op, int kind)
{
	size_t count = 0;
	int rc = kind == 0 ? fi_atomicvalid(ctx->ep, st->dt, op, &count) :
		 kind == 1 ? fi_fetch_atomicvalid(ctx->ep, st->dt, op, &count) :
			     fi_compare_atomicvalid(ctx->ep, st->dt, op, &count);

	return rc == 0 && count >= 1;
}

static int at_wait(struct ft_ctx *ctx, void *fctx)
{
	struct ft_comp c;

	return ft_wait_ctx(ctx, fctx, &c);
}

/* slot 0: non-fetching sum of the rank number */
static int at_sum(struct ft_ctx *ctx, struct at_state *st)
{
	struct fi_context2 fctx;
	char *op = st->local.p;

	at_set(st, op, (uint64_t)ctx->rank);
	for (int i = 0; i < AT_OPS; i++)
		if (FT_POST(ctx, fi_atomic(ctx->ep, op, 1, st->local.desc, ctx->peers[0],
					   at_raddr(st, 0), st->keys[0].key, st->dt, FI_SUM, &fctx)) ||
		    at_wait(ctx, &fctx))
			return -1;
	return 0;
}

/* slot 1: fetch-and-add 1; the fetched values are gathered at rank 0 */
static int at_fetch_sum(struct ft_ctx *ctx, struct at_state *st, uint64_t *fetched)
{
	struct fi_context2 fctx;
	char *op = st->local.p, *res = st->local.p + 8;

	at_set(st, op, 1);
	for (int i = 0; i < AT_OPS; i++) {
		if (FT_POST(ctx, fi_fetch_atomic(ctx->ep, op, 1, st->local.desc, res, st->local.desc,
						 ctx->peers[0], at_raddr(st, 1), st->keys[0].key,
						 st->dt, FI_SUM, &fctx)) ||
		    at_wait(ctx, &fctx))
			return -1;
		fetched[i] = at_get(st, res);
	}
	return 0;
}

/* slot 2: increment by compare-and-swap until AT_OPS successes */
static int at_cswap(struct ft_ctx *ctx, struct at_state *st)
{
	struct fi_context2 fctx;
	char *op = st->local.p, *cmp = st->local.p + 16, *res = st->local.p + 8;
	uint64_t guess = 0;
	int done = 0, tries = 0;

	while (done < AT_OPS) {
		if (++tries > AT_OPS * 1000) {
			FT_ERR(ctx, "compare-and-swap made no progress");
			return -1;
		}
		at_set(st, cmp, guess);
		at_set(st, op, guess + 1);
		if (FT_POST(ctx, fi_compare_atomic(ctx->ep, op, 1, st->local.desc, cmp,
						   st->local.desc, res, st->local.desc,
						   ctx->peers[0], at_raddr(st, 2), st->keys[0].key,
						   st->dt, FI_CSWAP, &fctx)) ||
		    at_wait(ctx, &fctx))
			return -1;
		if (at_get(st, res) == guess) {
			done++;
			guess++;
		} else {
			guess = at_get(st, res);
		}
	}
	return 0;
}

/* slot 3 + rank: atomic write, then fetching write returns it */
static int at_write(struct ft_ctx *ctx, struct at_state *st)
{
	struct fi_context2 fctx;
	char *op = st->local.p, *res = st->local.p + 8;
	uint64_t v1 = 0x1100 + (uint64_t)ctx->rank, v2 = 0x2200 + (uint64_t)ctx->rank;

	at_set(st, op, v1);
	if (FT_POST(ctx, fi_atomic(ctx->ep, op, 1, st->local.desc, ctx->peers[0],
				   at_raddr(st, 3 + ctx->rank), st->keys[0].key, st->dt,
				   FI_ATOMIC_WRITE, &fctx)) || at_wait(ctx, &fctx))
		return -1;
	at_set(st, op, v2);
	if (FT_POST(ctx, fi_fetch_atomic(ctx->ep, op, 1, st->local.desc, res, st->local.desc,
					 ctx->peers[0], at_raddr(st, 3 + ctx->rank), st->keys[0].key,
					 st->dt, FI_ATOMIC_WRITE, &fctx)) || at_wait(ctx, &fctx))
		return -1;
	if (at_get(st, res) != v1) {
		FT_ERR(ctx, "fetching atomic write returned 0x%llx, want 0x%llx",
		       (unsigned long long)at_get(st, res), (unsigned long long)v1);
		return -1;
	}
	return 0;
}

static int at_check_target(struct ft_ctx *ctx, struct at_state *st, const bool *ran,
			   uint64_t *all_fetched)
{
	uint64_t n = (uint64_t)ctx->nranks - 1, ranksum = n * (n + 1) / 2;
	char *t = st->target.p;

	if (ran[0] && at_get(st, t) != ranksum * AT_OPS) {
		FT_ERR(ctx, "FI_SUM total %llu, want %llu", (unsigned long long)at_get(st, t),
		       (unsigned long long)(ranksum * AT_OPS));
		return -1;
	}
	if (ran[1]) {
		size_t total = (size_t)n * AT_OPS;
		char *seen = calloc(total, 1);

		if (at_get(st, t + 8) != total) {
			FT_ERR(ctx, "fetching FI_SUM total %llu, want %zu",
			       (unsigned long long)at_get(st, t + 8), total);
			free(seen);
			return -1;
		}
		for (size_t i = 0; i < total; i++) {
			uint64_t v = all_fetched[AT_OPS + i]; /* rank 0's slice is unused */

			if (v >= total || seen[v]++) {
				FT_ERR(ctx, "fetched value %llu out of range or seen twice",
				       (unsigned long long)v);
				free(seen);
				return -1;
			}
		}
		free(seen);
	}
	if (ran[2] && at_get(st, t + 16) != n * AT_OPS) {
		FT_ERR(ctx, "FI_CSWAP total %llu, want %llu", (unsigned long long)at_get(st, t + 16),
		       (unsigned long long)(n * AT_OPS));
		return -1;
	}
	for (int r = 1; ran[3] && r < ctx->nranks; r++) {
		if (at_get(st, t + (size_t)(3 + r) * 8) != 0x2200 + (uint64_t)r) {
			FT_ERR(ctx, "FI_ATOMIC_WRITE slot of rank %d holds 0x%llx", r,
			       (unsigned long long)at_get(st, t + (size_t)(3 + r) * 8));
			return -1;
		}
	}
	return 0;
}

static int at_one_type(struct ft_ctx *ctx, struct at_state *st)
{
	uint64_t fetched[AT_OPS] = { 0 }, *all = calloc((size_t)ctx->nranks, sizeof(fetched));
	bool ran[4] = {
		at_valid(ctx, st, FI_SUM, 0),
		at_valid(ctx, st, FI_SUM, 1),
		at_valid(ctx, st, FI_CSWAP, 2),
		at_valid(ctx, st, FI_ATOMIC_WRITE, 0) && at_valid(ctx, st, FI_ATOMIC_WRITE, 1),
	};
	int rc = -1;

	if (!all)
		return -1;
	memset(st->target.p, 0, AT_SLOTS * 8);
	if (ft_barrier_progress(ctx))
		goto out;
	if (ctx->rank != 0 &&
	    ((ran[0] && at_sum(ctx, st)) || (ran[1] && at_fetch_sum(ctx, st, fetched)) ||
	     (ran[2] && at_cswap(ctx, st)) || (ran[3] && at_write(ctx, st))))
		goto out;
	if (ft_barrier_progress(ctx) || ft_allgather(ctx, fetched, sizeof(fetched), all))
		goto out;
	if (ctx->rank == 0 && at_check_target(ctx, st, ran, all))
		goto out;
	for (int i = 0; i < 4; i++) {
		static const char *names[] = { "sum", "fetch sum", "cswap", "write" };

		if (!ran[i] && ctx->rank == 0)
			printf("note: %s on %zu-bit integers not valid for this provider\n", names[i],
			       st->dsz * 8);
		st->tested += ran[i];
	}
	rc = 0;
out:
	free(all);
	return rc;
}

static int at_run(struct ft_ctx *ctx)
{
	struct at_state st = { 0 };
	int rc = ft_open(ctx);

	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ft_buf_alloc(ctx, &st.target, AT_SLOTS * 8, FI_REMOTE_READ | FI_REMOTE_WRITE) ||
	    ft_buf_alloc(ctx, &st.local, 64, FI_READ | FI_WRITE) ||
	    ft_rma_key_exchange(ctx, st.target.p, AT_SLOTS * 8, st.target.mr, st.keys))
		goto free;
	st.dt = FI_UINT32;
	st.dsz = 4;
	if (at_one_type(ctx, &st))
		goto free;
	st.dt = FI_UINT64;
	st.dsz = 8;
	if (at_one_type(ctx, &st))
		goto free;
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
	if (rc == FT_PASS && !st.tested)
		rc = ft_skip(ctx, "no atomic operation of the test is valid for this provider");
free:
	ft_buf_free(&st.local);
	ft_buf_free(&st.target);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_atomic",
	.desc = "atomics: sum, write, compare-swap, fetching and not, from many ranks",
	.nranks = 4,
	.hints = at_hints,
	.run = at_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
