/* SPDX-License-Identifier: MIT */
/*
 * FI_THREAD_SAFE with 2 processes: in each, FT_THR_SENDERS threads send
 * tagged messages to the peer on one shared endpoint while as many
 * receiver threads post receives for their own tag, and every thread reads
 * the one shared CQ (so posting, progress and completion reads race). A
 * completion is handed to whichever thread owns its context. Sizes cycle
 * through one packet, several packets and a rendezvous-sized message; each
 * message carries (sender, sequence) in its pattern, and each tag's
 * receives must get their sender's messages in order, none lost.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define FT_THR_SENDERS 2
#define FT_THR_MSGS 400
#define FT_THR_QUICK_MSGS 100
#define FT_THR_WINDOW 8		/* operations each thread keeps posted */

static const size_t thr_sizes[] = { 8, 1000, 9000, 70000, 300000 };
#define FT_THR_NSIZES (sizeof(thr_sizes) / sizeof(thr_sizes[0]))
#define FT_THR_MAX_LEN 300000

/* One posted operation: the context first, so a completion's op_context
 * leads back to it. */
struct thr_op {
	struct fi_context2 fctx;
	atomic_int done;		/* 1 ok, -1 error */
	uint32_t seq;
	size_t len;
	struct ft_buf buf;
};

struct thr_shared {
	struct ft_ctx *ctx;
	int msgs;
	atomic_int failed;
};

struct thr_arg {
	struct thr_shared *sh;
	int id;				/* tag and pattern owner */
	bool sender;
	struct thr_op ops[FT_THR_WINDOW];
};

static uint32_t thr_seed(int rank, int id, uint32_t seq)
{
	return ((uint32_t)rank << 24) ^ ((uint32_t)id << 16) ^ seq;
}

static size_t thr_len(uint32_t seq)
{
	return thr_sizes[seq % FT_THR_NSIZES];
}

/* Read the shared CQ once and mark whatever it returned, whoever owns it. */
static void thr_poll(struct thr_shared *sh)
{
	struct fi_cq_tagged_entry e[8];
	struct fi_cq_err_entry err = { 0 };
	ssize_t n = fi_cq_read(sh->ctx->cq, e, 8);

	for (ssize_t i = 0; i < n; i++)
		atomic_store(&((struct thr_op *)e[i].op_context)->done, 1);
	if (n == -FI_EAVAIL && fi_cq_readerr(sh->ctx->cq, &err, 0) == 1) {
		FT_ERR(sh->ctx, "error completion: %s", fi_strerror(err.err));
		if (err.op_context)
			atomic_store(&((struct thr_op *)err.op_context)->done, -1);
		atomic_store(&sh->failed, 1);
	}
}

static int thr_wait(struct thr_shared *sh, struct thr_op *op)
{
	uint64_t t0 = ft_now_ns();

	while (!atomic_load(&op->done)) {
		if (atomic_load(&sh->failed))
			return -1;
		thr_poll(sh);
		if (ft_now_ns() - t0 > 60ULL * 1000000000ULL) {
			FT_ERR(sh->ctx, "operation %u never completed", op->seq);
			return -1;
		}
	}
	return atomic_load(&op->done) == 1 ? 0 : -1;
}

static ssize_t thr_post(struct thr_arg *a, struct thr_op *op, uint32_t seq)
{
	struct ft_ctx *ctx = a->sh->ctx;
	ssize_t ret;

	op->seq = seq;
	op->len = thr_len(seq);
	atomic_store(&op->done, 0);
	if (a->sender)
		ft_fill(op->buf.p, op->len, thr_seed(ctx->rank, a->id, seq));
	else
		memset(op->buf.p, 0, op->len);
	do {
		ret = a->sender ?
		      fi_tsend(ctx->ep, op->buf.p, op->len, op->buf.desc,
			       ctx->peers[1 - ctx->rank], (uint64_t)a->id,
			       &op->fctx) :
		      fi_trecv(ctx->ep, op->buf.p, op->len, op->buf.desc,
			       ctx->peers[1 - ctx->rank], (uint64_t)a->id, 0,
			       &op->fctx);
		if (ret == -FI_EAGAIN)
			thr_poll(a->sh);
	} while (ret == -FI_EAGAIN && !atomic_load(&a->sh->failed));
	if (ret)
		FT_ERR(ctx, "thread %d post %u: %s", a->id, seq,
		       fi_strerror((int)-ret));
	return ret;
}

/* A receive of the peer's thread a->id: its sequence number's pattern. */
static int thr_check(struct thr_arg *a, struct thr_op *op)
{
	struct ft_ctx *ctx = a->sh->ctx;

	return ft_verify(ctx, op->buf.p, op->len,
			 thr_seed(1 - ctx->rank, a->id, op->seq), "threaded");
}

static void *thr_main(void *arg)
{
	struct thr_arg *a = arg;
	struct thr_shared *sh = a->sh;
	uint32_t next = 0, done = 0;

	while (done < (uint32_t)sh->msgs && !atomic_load(&sh->failed)) {
		struct thr_op *op = &a->ops[done % FT_THR_WINDOW];

		for (; next < (uint32_t)sh->msgs && next - done < FT_THR_WINDOW;
		     next++)
			if (thr_post(a, &a->ops[next % FT_THR_WINDOW], next))
				goto fail;
		if (thr_wait(sh, op) || (!a->sender && thr_check(a, op)))
			goto fail;
		done++;
	}
	return NULL;
fail:
	atomic_store(&sh->failed, 1);
	return NULL;
}

static void thr_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_TAGGED | FI_DIRECTED_RECV;
	h->domain_attr->threading = FI_THREAD_SAFE;
}

static int thr_bufs(struct ft_ctx *ctx, struct thr_arg *args, int n, bool alloc)
{
	for (int t = 0; t < n; t++)
		for (int i = 0; i < FT_THR_WINDOW; i++) {
			if (!alloc) {
				ft_buf_free(&args[t].ops[i].buf);
				continue;
			}
			if (ft_buf_alloc(ctx, &args[t].ops[i].buf,
					 FT_THR_MAX_LEN, FI_SEND | FI_RECV))
				return -1;
		}
	return 0;
}

static int thr_run(struct ft_ctx *ctx)
{
	enum { N = 2 * FT_THR_SENDERS };
	struct thr_shared sh = { .ctx = ctx };
	struct thr_arg *args = calloc(N, sizeof(*args));
	pthread_t th[N];
	int rc, started = 0;

	if (!args)
		return FT_FAIL;
	sh.msgs = ctx->opts->iters ? ctx->opts->iters :
		  ctx->opts->quick ? FT_THR_QUICK_MSGS : FT_THR_MSGS;
	rc = ft_open(ctx);
	if (rc)
		goto out;
	if (ctx->info->domain_attr->threading != FI_THREAD_SAFE) {
		rc = ft_skip(ctx, "provider gave threading %d, not FI_THREAD_SAFE",
			     ctx->info->domain_attr->threading);
		goto close;
	}
	rc = FT_FAIL;
	for (int t = 0; t < N; t++)
		args[t] = (struct thr_arg){ .sh = &sh, .id = t % FT_THR_SENDERS,
					    .sender = t < FT_THR_SENDERS };
	if (thr_bufs(ctx, args, N, true) || ft_barrier_progress(ctx))
		goto free;
	for (; started < N; started++)
		if (pthread_create(&th[started], NULL, thr_main, &args[started])) {
			atomic_store(&sh.failed, 1);
			break;
		}
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	if (!atomic_load(&sh.failed) && !ft_barrier_progress(ctx))
		rc = FT_PASS;
free:
	thr_bufs(ctx, args, N, false);
close:
	ft_close(ctx);
out:
	free(args);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_threads",
	.desc = "FI_THREAD_SAFE: threads sending, receiving and reading one CQ at once",
	.nranks = 2,
	.min_ranks = 2,
	.hints = thr_hints,
	.run = thr_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
