/* SPDX-License-Identifier: MIT */
/*
 * Counters bound to memory regions (fi_mr_bind with FI_RMA_EVENT): the
 * target binds one counter to region A (FI_REMOTE_WRITE), another to
 * region B (FI_REMOTE_WRITE | FI_REMOTE_READ), none to region C, and
 * waits on them with fi_cntr_wait although they are bound to no
 * endpoint (so waiting must progress the domain's endpoints). Each
 * counter must reach exactly the number of operations aimed at its
 * region, and the written data must be there. Bad bindings are refused.
 * srd's regions take no counters (fi_srd(7)): there fi_mr_bind must say
 * -FI_ENOSYS; shm and tcp must count.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <string.h>

#define MRC_LEN 4096
#define MRC_WRITES_A 5
#define MRC_WRITES_B 3
#define MRC_READS_B 2
#define MRC_WRITES_C 4

struct mrc_region {
	struct ft_buf b;
	struct fid_cntr *cntr;
	struct ft_rma_key keys[FT_MAX_RANKS];
};

static struct mrc_region regions[3];	/* A, B, C */

static void mrc_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_MSG | FI_RMA | FI_RMA_EVENT | FI_READ | FI_WRITE |
		  FI_REMOTE_READ | FI_REMOTE_WRITE;
	h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
}

static int mrc_cntr_open(struct ft_ctx *ctx, struct fid_cntr **cntr)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = FI_WAIT_UNSPEC };

	return FT_CHECK(ctx, fi_cntr_open(ctx->domain, &attr, cntr, NULL));
}

/* The refusals fi_mr(3) implies, on region A once it has its counter. */
static int mrc_bad_binds(struct ft_ctx *ctx)
{
	struct fid_cntr *other;
	int rc = 0;

	if (mrc_cntr_open(ctx, &other))
		return -1;
	if (fi_mr_bind(regions[1].b.mr, &other->fid, 0) != -FI_EINVAL ||
	    fi_mr_bind(regions[1].b.mr, &other->fid, FI_SEND) != -FI_EINVAL ||
	    fi_mr_bind(regions[0].b.mr, &other->fid, FI_REMOTE_WRITE) != -FI_EINVAL) {
		FT_ERR(ctx, "a bind with no flags, a bad flag or a second counter "
		       "was not refused with -FI_EINVAL");
		rc = -1;
	}
	if (fi_close(&regions[0].cntr->fid) != -FI_EBUSY) {
		FT_ERR(ctx, "closing a counter bound to a region did not say -FI_EBUSY");
		rc = -1;
	}
	fi_close(&other->fid);
	return rc;
}

/* Target: A counts writes, B writes and reads, C nothing. */
static int mrc_bind(struct ft_ctx *ctx, bool *refused)
{
	static const uint64_t events[2] = { FI_REMOTE_WRITE,
					    FI_REMOTE_WRITE | FI_REMOTE_READ };
	int rc;

	for (int i = 0; i < 2; i++) {
		if (mrc_cntr_open(ctx, &regions[i].cntr))
			return -1;
		rc = fi_mr_bind(regions[i].b.mr, &regions[i].cntr->fid, events[i]);
		if (rc == -FI_ENOSYS && i == 0) {
			*refused = true;
			return 0;
		}
		if (FT_CHECK(ctx, rc) || FT_CHECK(ctx, fi_mr_enable(regions[i].b.mr)))
			return -1;
	}
	return mrc_bad_binds(ctx);
}

static int mrc_post(struct ft_ctx *ctx, struct mrc_region *r, bool write, uint32_t seed,
		    struct ft_buf *local)
{
	struct ft_rma_key *k = &r->keys[1];
	struct fi_context2 fctx;
	struct ft_comp c;
	ssize_t rc;

	if (write) {
		ft_fill(local->p, MRC_LEN, seed);
		rc = FT_POST(ctx, fi_write(ctx->ep, local->p, MRC_LEN, local->desc,
					   ctx->peers[1], k->addr, k->key, &fctx));
	} else {
		rc = FT_POST(ctx, fi_read(ctx->ep, local->p, MRC_LEN, local->desc,
					  ctx->peers[1], k->addr, k->key, &fctx));
	}
	return rc || ft_wait_ctx(ctx, &fctx, &c) ? -1 : 0;
}

static int mrc_initiate(struct ft_ctx *ctx, struct ft_buf *local)
{
	for (int i = 0; i < MRC_WRITES_A; i++)
		if (mrc_post(ctx, &regions[0], true, 100 + i, local))
			return -1;
	for (int i = 0; i < MRC_WRITES_B; i++)
		if (mrc_post(ctx, &regions[1], true, 200 + i, local))
			return -1;
	for (int i = 0; i < MRC_READS_B; i++) {
		if (mrc_post(ctx, &regions[1], false, 0, local) ||
		    ft_verify(ctx, local->p, MRC_LEN, 200 + MRC_WRITES_B - 1, "read of B"))
			return -1;
	}
	for (int i = 0; i < MRC_WRITES_C; i++)
		if (mrc_post(ctx, &regions[2], true, 300 + i, local))
			return -1;
	return 0;
}

static int mrc_expect(struct ft_ctx *ctx, int i, uint64_t want)
{
	int rc = fi_cntr_wait(regions[i].cntr, want, ctx->opts->op_timeout_ms);

	if (rc || fi_cntr_read(regions[i].cntr) != want || fi_cntr_readerr(regions[i].cntr)) {
		FT_ERR(ctx, "region %c: counter %llu (errors %llu), want %llu: %s", 'A' + i,
		       (unsigned long long)fi_cntr_read(regions[i].cntr),
		       (unsigned long long)fi_cntr_readerr(regions[i].cntr),
		       (unsigned long long)want, rc ? fi_strerror(-rc) : "wrong value");
		return -1;
	}
	return 0;
}

/* Target: wait on the region counters alone (bound to no endpoint). */
static int mrc_serve(struct ft_ctx *ctx)
{
	return mrc_expect(ctx, 0, MRC_WRITES_A) ||
	       mrc_expect(ctx, 1, MRC_WRITES_B + MRC_READS_B) ? -1 : 0;
}

/* Target, once the initiator is done: nothing more counted, data there. */
static int mrc_check(struct ft_ctx *ctx)
{
	if (fi_cntr_read(regions[0].cntr) != MRC_WRITES_A ||
	    fi_cntr_read(regions[1].cntr) != MRC_WRITES_B + MRC_READS_B) {
		FT_ERR(ctx, "a counter moved for writes to the region without one");
		return -1;
	}
	return ft_verify(ctx, regions[0].b.p, MRC_LEN, 100 + MRC_WRITES_A - 1, "region A") ||
	       ft_verify(ctx, regions[1].b.p, MRC_LEN, 200 + MRC_WRITES_B - 1, "region B") ||
	       ft_verify(ctx, regions[2].b.p, MRC_LEN, 300 + MRC_WRITES_C - 1, "region C") ?
	       -1 : 0;
}

static void mrc_free(void)
{
	for (int i = 0; i < 3; i++)
		ft_buf_free(&regions[i].b);
	for (int i = 0; i < 3; i++) {
		if (regions[i].cntr)
			fi_close(&regions[i].cntr->fid);
		regions[i].cntr = NULL;
	}
}

static int mrc_exchange(struct ft_ctx *ctx)
{
	for (int i = 0; i < 3; i++) {
		if (ft_buf_alloc(ctx, &regions[i].b, MRC_LEN,
				 FI_REMOTE_WRITE | FI_REMOTE_READ | FI_READ | FI_WRITE) ||
		    ft_rma_key_exchange(ctx, regions[i].b.p, MRC_LEN, regions[i].b.mr,
					regions[i].keys))
			return -1;
	}
	return 0;
}

static int mrc_run(struct ft_ctx *ctx)
{
	struct ft_buf local = { 0 };
	bool refused = false, all[FT_MAX_RANKS];
	int rc;

	rc = ft_open(ctx);
	if (rc)
		goto close;
	rc = FT_FAIL;
	if (mrc_exchange(ctx) || ft_buf_alloc(ctx, &local, MRC_LEN, FI_READ | FI_WRITE))
		goto free;
	if (ctx->rank == 1 && mrc_bind(ctx, &refused))
		goto free;
	if (ft_allgather(ctx, &refused, sizeof(refused), all) || ft_barrier_progress(ctx))
		goto free;
	if (all[1]) {
		if (strcmp(ctx->info->fabric_attr->prov_name, "srd")) {
			FT_ERR(ctx, "fi_mr_bind(counter): -FI_ENOSYS");
			goto free;
		}
		ft_log(ctx, "srd: regions take no counters (-FI_ENOSYS), as documented");
		rc = FT_PASS;
		goto free;
	}
	if (ctx->rank == 0 ? mrc_initiate(ctx, &local) : mrc_serve(ctx))
		goto free;
	if (ft_barrier_progress(ctx) || (ctx->rank == 1 && mrc_check(ctx)))
		goto free;
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&local);
	mrc_free();
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_mr_cntr",
	.desc = "counters bound to memory regions (fi_mr_bind, FI_RMA_EVENT)",
	.nranks = 2,
	.hints = mrc_hints,
	.run = mrc_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
