/* SPDX-License-Identifier: MIT */
/*
 * Address vectors, FI_AV_MAP and FI_AV_TABLE in turn: lookup returns the
 * inserted name, straddr formats it, and a peer removed and inserted again
 * (three times) is reachable through its new fi_addr_t in both directions.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>

static void av_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_MSG;
}

static int av_pingpong(struct ft_ctx *ctx, struct ft_buf *b, fi_addr_t peer, uint32_t seed)
{
	struct fi_context2 sctx, rctx;
	struct ft_comp c;

	if (FT_POST(ctx, fi_recv(ctx->ep, b->p + 4096, 4096, b->desc, FI_ADDR_UNSPEC, &rctx)))
		return -1;
	if (ft_barrier_progress(ctx))
		return -1;
	ft_fill(b->p, 1500, seed + (uint32_t)ctx->rank);
	if (FT_POST(ctx, fi_send(ctx->ep, b->p, 1500, b->desc, peer, &sctx)) ||
	    ft_wait_ctx(ctx, &sctx, &c) || ft_wait_ctx(ctx, &rctx, &c))
		return -1;
	if (c.e.len != 1500 ||
	    ft_verify(ctx, b->p + 4096, 1500, seed + (uint32_t)!ctx->rank, "after av insert"))
		return -1;
	return 0;
}

static int av_lookup(struct ft_ctx *ctx, fi_addr_t addr, int rank)
{
	char name[256], str[512];
	size_t len = sizeof(name), slen = sizeof(str);
	const char *want = (const char *)ctx->peer_names + (size_t)rank * ctx->namelen;

	if (FT_CHECK(ctx, fi_av_lookup(ctx->av, addr, name, &len)))
		return -1;
	if (len > sizeof(name) || memcmp(name, want, len)) {
		FT_ERR(ctx, "fi_av_lookup of rank %d returned another name (%zu bytes)", rank, len);
		return -1;
	}
	if (!fi_av_straddr(ctx->av, name, str, &slen) || !str[0]) {
		FT_ERR(ctx, "fi_av_straddr gave nothing");
		return -1;
	}
	ft_dbg(ctx, "rank %d is %s", rank, str);
	return 0;
}

static int av_one_type(struct ft_ctx *ctx, enum fi_av_type type)
{
	struct ft_buf b = { 0 };
	int rc, peer = !ctx->rank;

	ctx->opts->av_type = type;
	rc = ft_open(ctx);
	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ctx->info->domain_attr->av_type != type) {
		FT_ERR(ctx, "asked for AV type %d, got %d", type, ctx->info->domain_attr->av_type);
		goto close;
	}
	if (ft_buf_alloc(ctx, &b, 8192, FI_SEND | FI_RECV))
		goto close;
	if (av_lookup(ctx, ctx->peers[peer], peer) ||
	    av_pingpong(ctx, &b, ctx->peers[peer], 10))
		goto free;
	for (uint32_t round = 0; round < 3; round++) {
		fi_addr_t addr;

		/* nothing of ours may still be in flight to the peer */
		if (ft_barrier_progress(ctx))
			goto free;
		if (FT_CHECK(ctx, fi_av_remove(ctx->av, &ctx->peers[peer], 1, 0)))
			goto free;
		rc = fi_av_insert(ctx->av, (char *)ctx->peer_names + (size_t)peer * ctx->namelen, 1,
				  &addr, 0, NULL);
		if (rc != 1 || addr == FI_ADDR_NOTAVAIL) {
			FT_ERR(ctx, "insert again after remove: %d", rc);
			rc = FT_FAIL;
			goto free;
		}
		rc = FT_FAIL;
		ft_dbg(ctx, "round %u: peer was %llu, now %llu", round,
		       (unsigned long long)ctx->peers[peer], (unsigned long long)addr);
		ctx->peers[peer] = addr;
		if (av_lookup(ctx, addr, peer) || av_pingpong(ctx, &b, addr, 20 + round * 2))
			goto free;
	}
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b);
close:
	ft_close(ctx);
	return rc;
}

static int av_run(struct ft_ctx *ctx)
{
	int map = av_one_type(ctx, FI_AV_MAP), table;

	if (map == FT_FAIL)
		return FT_FAIL;
	table = av_one_type(ctx, FI_AV_TABLE);
	if (table == FT_FAIL)
		return FT_FAIL;
	if (map == FT_SKIP && table == FT_SKIP)
		return FT_SKIP;
	if (ctx->rank == 0 && (map == FT_SKIP || table == FT_SKIP))
		printf("note: FI_AV_%s not offered by the provider\n", map == FT_SKIP ? "MAP" : "TABLE");
	return FT_PASS;
}

static const struct ft_test test = {
	.name = "ft_av",
	.desc = "AV insert/lookup/remove/insert again with FI_AV_MAP and FI_AV_TABLE",
	.nranks = 2,
	.hints = av_hints,
	.run = av_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
