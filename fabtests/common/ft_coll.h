/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the collective tests and benchmarks (public API only): an
 * EQ for join events, AV sets of chosen ranks, joining and waiting.
 */
#ifndef FT_COLL_H
#define FT_COLL_H

#include "ft.h"
#include <rdma/fi_collective.h>

/* pre_enable / after_ep_close hooks: an EQ bound to the endpoint. */
int ft_coll_pre_enable(struct ft_ctx *ctx);
void ft_coll_after_close(struct ft_ctx *ctx);

struct ft_coll_group {
	struct fid_av_set *set;
	struct fid_mc *mc;
	fi_addr_t addr;			/* fi_mc_addr */
	int n, me;			/* members, my rank among them */
	fi_addr_t members[FT_MAX_RANKS];	/* fi_addr of each member */
};

/* A group of the ranks in ranks[0..n) (in that order; this rank must be
 * one of them): AV set, fi_join_collective, the FI_JOIN_COMPLETE event
 * (the CQ is read meanwhile). 0 or -1 after a log line. */
int ft_coll_join(struct ft_ctx *ctx, const int *ranks, int n,
		 struct ft_coll_group *g);
/* The same, posted but not waited for; ft_coll_join_wait finishes it. */
int ft_coll_join_post(struct ft_ctx *ctx, const int *ranks, int n,
		      struct ft_coll_group *g);
int ft_coll_join_wait(struct ft_ctx *ctx, struct ft_coll_group *g);
/* Every rank, in rank order. */
int ft_coll_join_all(struct ft_ctx *ctx, struct ft_coll_group *g);
void ft_coll_leave(struct ft_coll_group *g);

#endif
