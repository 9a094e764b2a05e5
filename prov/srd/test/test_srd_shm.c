/* SPDX-License-Identifier: MIT */
/*
 * srd's peers of one host through shm, with N processes (fabtests
 * launcher; -N puts ranks in network namespaces that stand in for hosts).
 * Every rank sends to every other one and checks, for the peers of its
 * own host and for the others alike:
 *   - tagged matching order: SHM_ORDER_N messages of one tag, sizes from
 *     a few bytes to past shm's inline and split sizes, land in the
 *     receives in posting order, data checked, FI_SOURCE = srd's fi_addr;
 *   - FI_ADDR_UNSPEC receives: one message of every peer, each source
 *     reported and its data checked;
 *   - FI_PEEK then FI_CLAIM of an unexpected message;
 *   - a multi-recv buffer taking the messages of every peer;
 * and then the path: FI_OPT_WEFT_SHM_SENDS counts exactly the messages
 * sent to peers of its host in mode "shm" (-x shm), and none in mode
 * "device" (FI_SRD_USE_SHM=0, -x device) or "off" (fi_setopt of
 * FI_OPT_SHARED_MEMORY_PERMITTED false before fi_enable, -x off).
 * -x kill: rank 1 dies by SIGKILL; rank 0's send to it through shm (a
 * rendezvous that waits for the receiver) ends with an error completion
 * within SHM_KILL_MAX_S seconds.
 * -x jobs: as shm, each rank in a job of its own (FI_SHM_JOB): srd's shm
 * addresses carry no job namespace, so peers of two jobs still go through
 * shm.
 */
#define _GNU_SOURCE
#include "common/ft.h"
#include "weft/fi_ext_weft.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifndef FI_OPT_SHARED_MEMORY_PERMITTED
#define FI_OPT_SHARED_MEMORY_PERMITTED 11	/* libfabric 1.18's value */
#endif

#define SHM_ORDER_N 96
#define SHM_ORDER_MAX (96 * 1024)
#define SHM_TAG_ORDER 0x100
#define SHM_TAG_ANY 0x200
#define SHM_TAG_PEEK 0x300
#define SHM_PEEK_LEN 20000
#define SHM_MR_LEN 300		/* each multi-recv message */
#define SHM_KILL_LEN (1024 * 1024)
#define SHM_KILL_MAX_S 15

enum shm_mode { SHM_MODE_SHM, SHM_MODE_DEVICE, SHM_MODE_OFF, SHM_MODE_KILL };

/* -x jobs: mode shm with every rank in a job of its own (FI_SHM_JOB). */
static bool shm_jobs(struct ft_ctx *ctx)
{
	const char *x = ctx->opts->xopt;

	return x && !strcmp(x, "jobs");
}

static enum shm_mode shm_mode(struct ft_ctx *ctx)
{
	const char *x = ctx->opts->xopt;

	if (x && !strcmp(x, "device"))
		return SHM_MODE_DEVICE;
	if (x && !strcmp(x, "off"))
		return SHM_MODE_OFF;
	if (x && !strcmp(x, "kill"))
		return SHM_MODE_KILL;
	return SHM_MODE_SHM;
}

/* The i-th namespace of -N, as the launcher picks it (rank % count). */
static void shm_ns_of(struct ft_ctx *ctx, int rank, char *out, size_t len)
{
	const char *p = ctx->opts->netns, *end;
	int n = 0, i;

	out[0] = '\0';
	if (!p || !*p)
		return;
	for (end = p; end; end = strchr(end + 1, ','))
		n++;
	for (i = 0; i < rank % n; i++)
		p = strchr(p, ',') + 1;
	end = strchr(p, ',');
	snprintf(out, len, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
}

static bool shm_same_host(struct ft_ctx *ctx, int peer)
{
	char a[128], b[128];

	shm_ns_of(ctx, ctx->rank, a, sizeof(a));
	shm_ns_of(ctx, peer, b, sizeof(b));
	return !strcmp(a, b);
}

static size_t shm_order_len(int i)
{
	static const size_t lens[] = { 1, 64, 700, 4096, 5000, 9000, 33000,
				       SHM_ORDER_MAX };

	return lens[i % (int)(sizeof(lens) / sizeof(lens[0]))];
}

static uint32_t shm_seed(int from, int to, int i)
{
	return (uint32_t)(from * 100000 + to * 1000 + i);
}

static void shm_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	(void)ctx;
	h->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV |
		  FI_MULTI_RECV;
}

static int shm_pre_enable(struct ft_ctx *ctx)
{
	size_t min = SHM_MR_LEN;
	bool no = false, got = true;
	size_t len = sizeof(got);

	if (FT_CHECK(ctx, fi_setopt(&ctx->ep->fid, FI_OPT_ENDPOINT,
				    FI_OPT_MIN_MULTI_RECV, &min,
				    sizeof(min))))
		return -1;
	if (shm_mode(ctx) != SHM_MODE_OFF)
		return 0;
	if (FT_CHECK(ctx, fi_setopt(&ctx->ep->fid, FI_OPT_ENDPOINT,
				    FI_OPT_SHARED_MEMORY_PERMITTED, &no,
				    sizeof(no))) ||
	    FT_CHECK(ctx, fi_getopt(&ctx->ep->fid, FI_OPT_ENDPOINT,
				    FI_OPT_SHARED_MEMORY_PERMITTED, &got,
				    &len)))
		return -1;
	if (got) {
		FT_ERR(ctx, "FI_OPT_SHARED_MEMORY_PERMITTED still true");
		return -1;
	}
	return 0;
}

/* Every peer: SHM_ORDER_N messages of one tag, in order. */
static int shm_order(struct ft_ctx *ctx, char *rbuf, char *sbuf,
		     uint64_t *to_host)
{
	int n = ctx->nranks, me = ctx->rank, p, i, k = 0;
	struct fi_context2 *rctx = calloc((size_t)n * SHM_ORDER_N,
					  sizeof(*rctx));
	struct fi_context2 *sctx = calloc((size_t)n * SHM_ORDER_N,
					  sizeof(*sctx));
	struct ft_comp c;
	int rc = -1;

	if (!rctx || !sctx)
		goto out;
	for (p = 0; p < n; p++)
		for (i = 0; p != me && i < SHM_ORDER_N; i++)
			if (FT_POST(ctx, fi_trecv(ctx->ep,
				rbuf + ((size_t)p * SHM_ORDER_N + i) * SHM_ORDER_MAX,
				SHM_ORDER_MAX, NULL, ctx->peers[p],
				SHM_TAG_ORDER, 0, &rctx[p * SHM_ORDER_N + i])))
				goto out;
	if (ft_barrier_progress(ctx))
		goto out;
	for (i = 0; i < SHM_ORDER_N; i++) {
		for (p = 0; p < n; p++) {
			char *b;

			if (p == me)
				continue;
			b = sbuf + ((size_t)p * SHM_ORDER_N + i) * SHM_ORDER_MAX;
			ft_fill(b, shm_order_len(i), shm_seed(me, p, i));
			if (FT_POST(ctx, fi_tsend(ctx->ep, b, shm_order_len(i),
						  NULL, ctx->peers[p],
						  SHM_TAG_ORDER,
						  &sctx[p * SHM_ORDER_N + i])))
				goto out;
			to_host[p]++;
			k++;
		}
	}
	for (p = 0; p < n; p++) {
		for (i = 0; p != me && i < SHM_ORDER_N; i++) {
			char *b = rbuf + ((size_t)p * SHM_ORDER_N + i) *
					 SHM_ORDER_MAX;

			if (ft_wait_ctx(ctx, &rctx[p * SHM_ORDER_N + i], &c))
				goto out;
			if (c.e.len != shm_order_len(i) ||
			    c.src != ctx->peers[p]) {
				FT_ERR(ctx, "order: receive %d of rank %d: len %zu src %llu, want %zu, %llu",
				       i, p, c.e.len, (unsigned long long)c.src,
				       shm_order_len(i),
				       (unsigned long long)ctx->peers[p]);
				goto out;
			}
			if (ft_verify(ctx, b, shm_order_len(i),
				      shm_seed(p, me, i), "tagged order"))
				goto out;
		}
	}
	for (p = 0; p < n; p++)
		for (i = 0; p != me && i < SHM_ORDER_N; i++)
			if (ft_wait_ctx(ctx, &sctx[p * SHM_ORDER_N + i], &c))
				goto out;
	rc = ft_barrier_progress(ctx);
out:
	free(rctx);
	free(sctx);
	return rc;
}

/* One message of every peer into FI_ADDR_UNSPEC receives. */
static int shm_any_source(struct ft_ctx *ctx, char *rbuf, char *sbuf,
			  uint64_t *to_host)
{
	int n = ctx->nranks, me = ctx->rank, p, k;
	struct fi_context2 rctx[FT_MAX_RANKS], sctx[FT_MAX_RANKS];
	bool seen[FT_MAX_RANKS] = { false };
	struct ft_comp c;

	for (k = 0; k < n - 1; k++)
		if (FT_POST(ctx, fi_trecv(ctx->ep, rbuf + (size_t)k * 4096,
					  4096, NULL, FI_ADDR_UNSPEC,
					  SHM_TAG_ANY, 0, &rctx[k])))
			return -1;
	if (ft_barrier_progress(ctx))
		return -1;
	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		/* the length names the sender too */
		ft_fill(sbuf + (size_t)p * 4096, 1000 + (size_t)me,
			shm_seed(me, p, 7777));
		if (FT_POST(ctx, fi_tsend(ctx->ep, sbuf + (size_t)p * 4096,
					  1000 + (size_t)me, NULL,
					  ctx->peers[p], SHM_TAG_ANY,
					  &sctx[p])))
			return -1;
		to_host[p]++;
	}
	for (k = 0; k < n - 1; k++) {
		if (ft_wait_ctx(ctx, &rctx[k], &c))
			return -1;
		for (p = 0; p < n && (p == me || ctx->peers[p] != c.src); p++)
			;
		if (p == n || seen[p] || c.e.len != 1000 + (size_t)p) {
			FT_ERR(ctx, "any source: src %llu len %zu: no such peer or twice",
			       (unsigned long long)c.src, c.e.len);
			return -1;
		}
		seen[p] = true;
		if (ft_verify(ctx, rbuf + (size_t)k * 4096, c.e.len,
			      shm_seed(p, me, 7777), "any source"))
			return -1;
	}
	for (p = 0; p < n; p++)
		if (p != me && ft_wait_ctx(ctx, &sctx[p], &c))
			return -1;
	return ft_barrier_progress(ctx);
}

/* The completion of op_context, error or not (FI_PEEK's FI_ENOMSG is an
 * answer here, not a failure). */
static int shm_wait_any(struct ft_ctx *ctx, void *op_context,
			struct ft_comp *c)
{
	uint64_t t0 = ft_now_ns();
	int i;

	for (;;) {
		for (i = 0; i < ctx->stash_n; i++) {
			if (ctx->stash[i].e.op_context != op_context)
				continue;
			*c = ctx->stash[i];
			memmove(&ctx->stash[i], &ctx->stash[i + 1],
				(size_t)(ctx->stash_n - i - 1) *
				sizeof(ctx->stash[0]));
			ctx->stash_n--;
			return 0;
		}
		ft_progress(ctx);
		if (ft_now_ns() - t0 >
		    (uint64_t)ctx->opts->op_timeout_ms * 1000000ULL) {
			FT_ERR(ctx, "timeout waiting for %p", op_context);
			return -1;
		}
	}
}

/* FI_PEEK until the next rank's message is there, then FI_CLAIM it. */
static int shm_peek_claim(struct ft_ctx *ctx, char *rbuf, char *sbuf,
			  uint64_t *to_host)
{
	int me = ctx->rank, n = ctx->nranks;
	int to = (me + 1) % n, from = (me + n - 1) % n;
	struct fi_context2 sctx, pctx;
	uint64_t t0 = ft_now_ns();
	struct iovec iov;
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = SHM_TAG_PEEK, .context = &pctx,
	};
	struct ft_comp c;

	ft_fill(sbuf, SHM_PEEK_LEN, shm_seed(me, to, 5));
	if (FT_POST(ctx, fi_tsend(ctx->ep, sbuf, SHM_PEEK_LEN, NULL,
				  ctx->peers[to], SHM_TAG_PEEK, &sctx)))
		return -1;
	to_host[to]++;
	for (;;) {
		iov.iov_base = NULL;
		iov.iov_len = 0;
		if (FT_POST(ctx, fi_trecvmsg(ctx->ep, &m, FI_PEEK | FI_CLAIM |
					     FI_COMPLETION)))
			return -1;
		if (shm_wait_any(ctx, &pctx, &c))
			return -1;
		if (!c.is_err)
			break;
		if (c.err.err != FI_ENOMSG ||
		    ft_now_ns() - t0 > 20ULL * 1000000000ULL) {
			FT_ERR(ctx, "peek: error %d", c.err.err);
			return -1;
		}
		ft_progress(ctx);
	}
	if (c.e.len != SHM_PEEK_LEN || c.src != ctx->peers[from]) {
		FT_ERR(ctx, "peek: len %zu src %llu", c.e.len,
		       (unsigned long long)c.src);
		return -1;
	}
	iov.iov_base = rbuf;
	iov.iov_len = SHM_PEEK_LEN;
	if (FT_POST(ctx, fi_trecvmsg(ctx->ep, &m, FI_CLAIM | FI_COMPLETION)) ||
	    ft_wait_ctx(ctx, &pctx, &c))
		return -1;
	if (c.is_err || c.e.len != SHM_PEEK_LEN ||
	    ft_verify(ctx, rbuf, SHM_PEEK_LEN, shm_seed(from, me, 5), "claim"))
		return -1;
	if (ft_wait_ctx(ctx, &sctx, &c))
		return -1;
	return ft_barrier_progress(ctx);
}

/* One multi-recv buffer that takes exactly one message of every peer. */
static int shm_multi_recv(struct ft_ctx *ctx, char *rbuf, char *sbuf,
			  uint64_t *to_host)
{
	int n = ctx->nranks, me = ctx->rank, p, k;
	struct fi_context2 rctx, sctx[FT_MAX_RANKS];
	struct iovec iov = {
		.iov_base = rbuf, .iov_len = (size_t)(n - 1) * SHM_MR_LEN,
	};
	struct fi_msg m = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.context = &rctx,
	};
	bool seen[FT_MAX_RANKS] = { false };
	struct ft_comp c;

	if (FT_POST(ctx, fi_recvmsg(ctx->ep, &m, FI_MULTI_RECV |
				    FI_COMPLETION)) ||
	    ft_barrier_progress(ctx))
		return -1;
	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		ft_fill(sbuf + (size_t)p * SHM_MR_LEN, SHM_MR_LEN,
			shm_seed(me, p, 9));
		if (FT_POST(ctx, fi_send(ctx->ep, sbuf + (size_t)p * SHM_MR_LEN,
					 SHM_MR_LEN, NULL, ctx->peers[p],
					 &sctx[p])))
			return -1;
		to_host[p]++;
	}
	for (k = 0; k < n - 1; k++) {
		if (ft_wait_ctx(ctx, &rctx, &c))
			return -1;
		for (p = 0; p < n && (p == me || ctx->peers[p] != c.src); p++)
			;
		if (p == n || seen[p] || c.e.len != SHM_MR_LEN ||
		    (char *)c.e.buf < rbuf ||
		    (char *)c.e.buf + SHM_MR_LEN > rbuf + iov.iov_len ||
		    ((c.e.flags & FI_MULTI_RECV) != 0) != (k == n - 2)) {
			FT_ERR(ctx, "multi-recv slice %d: src %llu len %zu flags 0x%llx",
			       k, (unsigned long long)c.src, c.e.len,
			       (unsigned long long)c.e.flags);
			return -1;
		}
		seen[p] = true;
		if (ft_verify(ctx, c.e.buf, SHM_MR_LEN, shm_seed(p, me, 9),
			      "multi-recv"))
			return -1;
	}
	for (p = 0; p < n; p++)
		if (p != me && ft_wait_ctx(ctx, &sctx[p], &c))
			return -1;
	return ft_barrier_progress(ctx);
}

/* The path taken: exactly the messages to peers of this host in mode
 * shm, none otherwise. */
static int shm_check_path(struct ft_ctx *ctx, const uint64_t *to_host)
{
	uint64_t want = 0, got = 0;
	size_t len = sizeof(got);
	int p;

	for (p = 0; p < ctx->nranks; p++)
		if (p != ctx->rank && shm_same_host(ctx, p))
			want += to_host[p];
	if (shm_mode(ctx) != SHM_MODE_SHM)
		want = 0;
	if (FT_CHECK(ctx, fi_getopt(&ctx->ep->fid, FI_OPT_ENDPOINT,
				    FI_OPT_WEFT_SHM_SENDS, &got, &len)))
		return -1;
	if (got != want) {
		FT_ERR(ctx, "sent %llu messages through shm, want %llu",
		       (unsigned long long)got, (unsigned long long)want);
		return -1;
	}
	ft_log(ctx, "%llu messages through shm (mode %s)",
	       (unsigned long long)got,
	       ctx->opts->xopt ? ctx->opts->xopt : "shm");
	return 0;
}

/* Rank 1 dies; rank 0's send to it must fail, not hang. */
static int shm_kill(struct ft_ctx *ctx, char *sbuf)
{
	struct fi_context2 sctx;
	uint64_t t0, got = 0;
	size_t len = sizeof(got);
	struct ft_comp c;

	/* The send waits for its receiver (a rendezvous: rank 1 posts no
	 * receive) when rank 1 dies after the barrier. */
	if (ctx->rank == 0) {
		ft_fill(sbuf, SHM_KILL_LEN, 1);
		if (FT_POST(ctx, fi_tsend(ctx->ep, sbuf, SHM_KILL_LEN, NULL,
					  ctx->peers[1], 1, &sctx)))
			return -1;
	}
	t0 = ft_now_ns();
	if (ft_barrier_progress(ctx))
		return -1;
	if (ctx->rank == 1)
		raise(SIGKILL);
	if (ctx->rank != 0)
		return 0;
	if (shm_wait_any(ctx, &sctx, &c))
		return -1;
	if (!c.is_err) {
		FT_ERR(ctx, "a send to a killed peer succeeded");
		return -1;
	}
	if (ft_now_ns() - t0 > SHM_KILL_MAX_S * 1000000000ULL) {
		FT_ERR(ctx, "the error took more than %d s", SHM_KILL_MAX_S);
		return -1;
	}
	if (FT_CHECK(ctx, fi_getopt(&ctx->ep->fid, FI_OPT_ENDPOINT,
				    FI_OPT_WEFT_SHM_SENDS, &got, &len)) ||
	    got != 1) {
		FT_ERR(ctx, "%llu sends through shm, want 1",
		       (unsigned long long)got);
		return -1;
	}
	ft_log(ctx, "send to the killed peer: %s after %.1f s",
	       fi_strerror(c.err.err), (double)(ft_now_ns() - t0) / 1e9);
	return 0;
}

static int shm_run(struct ft_ctx *ctx)
{
	size_t per = (size_t)ctx->nranks * SHM_ORDER_N * SHM_ORDER_MAX;
	uint64_t to_host[FT_MAX_RANKS] = { 0 };
	char *rbuf = NULL, *sbuf = NULL;
	int rc;

	ctx->cq_readfrom = true;
	ctx->pre_enable = shm_pre_enable;
	/* Before the library reads it (the launcher never calls it). */
	if (shm_jobs(ctx)) {
		char job[32];

		snprintf(job, sizeof(job), "srdjob%d", ctx->rank);
		setenv("FI_SHM_JOB", job, 1);
	}
	rc = ft_open(ctx);
	if (rc)
		goto close;
	if (ft_need_mr_local(ctx)) {
		rc = ft_skip(ctx, "the test posts buffers without descriptors");
		goto close;
	}
	rc = FT_FAIL;
	rbuf = ft_alloc(per);
	sbuf = ft_alloc(per);
	if (!rbuf || !sbuf)
		goto close;
	if (shm_mode(ctx) == SHM_MODE_KILL) {
		rc = shm_kill(ctx, sbuf) ? FT_FAIL : FT_PASS;
		goto close;
	}
	if (shm_order(ctx, rbuf, sbuf, to_host) ||
	    shm_any_source(ctx, rbuf, sbuf, to_host) ||
	    shm_peek_claim(ctx, rbuf, sbuf, to_host) ||
	    shm_multi_recv(ctx, rbuf, sbuf, to_host) ||
	    shm_check_path(ctx, to_host))
		goto close;
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
close:
	free(rbuf);
	free(sbuf);
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "test_srd_shm",
	.desc = "srd peers of one host through shm: order, source, peek, multi-recv, path",
	.nranks = 2,
	.min_ranks = 2,
	.hints = shm_hints,
	.run = shm_run,
	.rank_may_die = true,	/* -x kill */
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
