/* SPDX-License-Identifier: MIT */
/*
 * FI_PEEK, FI_CLAIM and FI_DISCARD on tagged receives, as MPI's Iprobe,
 * Improbe/Mrecv and a dropped message use them:
 *  - a peek that finds nothing completes in error with FI_ENOMSG;
 *  - a peek reports length, tag and CQ data without consuming the message;
 *  - FI_PEEK|FI_CLAIM reserves it, FI_CLAIM with the same context receives it;
 *  - FI_CLAIM|FI_DISCARD and FI_PEEK|FI_DISCARD drop it: no later receive
 *    matches it.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <stdlib.h>
#include <string.h>

enum { T_PLAIN = 0x11, T_CLAIM = 0x22, T_CDISC = 0x33, T_PDISC = 0x44, T_LAST = 0x55 };

static void peek_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_TAGGED;
}

static ssize_t peek_post(struct ft_ctx *ctx, struct ft_buf *b, size_t off, size_t len,
			 uint64_t tag, uint64_t flags, struct fi_context2 *fctx)
{
	struct iovec iov = { .iov_base = b->p + off, .iov_len = len };
	void *desc = b->desc;
	struct fi_msg_tagged msg = {
		.msg_iov = len ? &iov : NULL,
		.desc = len ? &desc : NULL,
		.iov_count = len ? 1 : 0,
		.addr = FI_ADDR_UNSPEC,
		.tag = tag,
		.ignore = 0,
		.context = fctx,
	};

	return fi_trecvmsg(ctx->ep, &msg, flags | FI_COMPLETION);
}

/* peek until the message shows up; FI_ENOMSG errors while it has not */
static int peek_until(struct ft_ctx *ctx, struct ft_buf *b, uint64_t tag, uint64_t flags,
		      struct fi_context2 *fctx, struct ft_comp *c)
{
	uint64_t t0 = ft_now_ns();

	for (;;) {
		memset(fctx, 0, sizeof(*fctx));
		if (FT_POST(ctx, peek_post(ctx, b, 0, 0, tag, FI_PEEK | flags, fctx)))
			return -1;
		if (ft_get_comp(ctx, c, ctx->opts->op_timeout_ms) == 0)
			break;
		if (!c->is_err || c->err.err != FI_ENOMSG || c->err.op_context != fctx) {
			FT_ERR(ctx, "peek tag 0x%llx: error %d (%s), context %p",
			       (unsigned long long)tag, c->err.err, fi_strerror(c->err.err),
			       c->err.op_context);
			return -1;
		}
		if (ft_now_ns() - t0 > (uint64_t)ctx->opts->op_timeout_ms * 1000000ULL) {
			FT_ERR(ctx, "peek tag 0x%llx never found the message", (unsigned long long)tag);
			return -1;
		}
	}
	if (c->e.op_context != fctx || c->e.tag != tag || !(c->e.flags & FI_TAGGED)) {
		FT_ERR(ctx, "peek tag 0x%llx: got context %p tag 0x%llx flags 0x%llx",
		       (unsigned long long)tag, c->e.op_context, (unsigned long long)c->e.tag,
		       (unsigned long long)c->e.flags);
		return -1;
	}
	return 0;
}

static size_t peek_len(uint64_t tag)
{
	return (size_t)(tag * 37);
}

static int peek_receiver(struct ft_ctx *ctx, struct ft_buf *b)
{
	struct fi_context2 fctx, cctx;
	struct ft_comp c;
	int rc;

	/* nothing sent yet: a miss */
	if (FT_POST(ctx, peek_post(ctx, b, 0, 0, T_PLAIN, FI_PEEK, &fctx)))
		return -1;
	rc = ft_get_comp(ctx, &c, 5000);
	if (rc != -FI_EAVAIL || c.err.err != FI_ENOMSG || c.err.op_context != &fctx) {
		FT_ERR(ctx, "peek on an empty queue: %s, want an FI_ENOMSG error entry",
		       rc == -FI_ETIMEDOUT ? "no completion in 5 s" : fi_strerror(c.err.err));
		if (!getenv("FT_PEEK_IGNORE_MISS"))
			return -1;
	}
	if (ft_barrier_progress(ctx) || ft_barrier_progress(ctx))
		return -1;

	/* plain peek: reports, consumes nothing; a normal receive then gets it */
	if (peek_until(ctx, b, T_PLAIN, 0, &fctx, &c))
		return -1;
	if (c.e.len != peek_len(T_PLAIN) ||
	    (ctx->info->domain_attr->cq_data_size && c.e.data != T_PLAIN)) {
		FT_ERR(ctx, "peek: len %zu data 0x%llx", c.e.len, (unsigned long long)c.e.data);
		return -1;
	}
	if (peek_until(ctx, b, T_PLAIN, 0, &fctx, &c))
		return -1;
	if (FT_POST(ctx, fi_trecv(ctx->ep, b->p, 4096, b->desc, FI_ADDR_UNSPEC, T_PLAIN, 0, &fctx)) ||
	    ft_wait_ctx(ctx, &fctx, &c) || c.e.len != peek_len(T_PLAIN) ||
	    ft_verify(ctx, b->p, c.e.len, T_PLAIN, "peek then recv"))
		return -1;

	/* peek+claim, then claim with the same context */
	if (peek_until(ctx, b, T_CLAIM, FI_CLAIM, &cctx, &c))
		return -1;
	memset(b->p, 0, 4096);
	if (FT_POST(ctx, peek_post(ctx, b, 0, 4096, T_CLAIM, FI_CLAIM, &cctx)) ||
	    ft_wait_ctx(ctx, &cctx, &c) || c.e.len != peek_len(T_CLAIM) ||
	    ft_verify(ctx, b->p, c.e.len, T_CLAIM, "claim"))
		return -1;

	/* peek+claim, then claim+discard */
	if (peek_until(ctx, b, T_CDISC, FI_CLAIM, &cctx, &c))
		return -1;
	if (FT_POST(ctx, peek_post(ctx, b, 0, 0, T_CDISC, FI_CLAIM | FI_DISCARD, &cctx)) ||
	    ft_wait_ctx(ctx, &cctx, &c))
		return -1;

	/* peek+discard: the message is dropped when found */
	if (peek_until(ctx, b, T_PDISC, FI_DISCARD, &fctx, &c))
		return -1;

	/* the discarded tags are gone: a peek misses them, and the last
	 * message (sent after them) is the next one received */
	for (uint64_t t = T_CDISC; t <= T_PDISC; t += 0x11) {
		if (FT_POST(ctx, peek_post(ctx, b, 0, 0, t, FI_PEEK, &fctx)))
			return -1;
		rc = ft_get_comp(ctx, &c, ctx->opts->op_timeout_ms);
		if (rc != -FI_EAVAIL || c.err.err != FI_ENOMSG) {
			FT_ERR(ctx, "discarded tag 0x%llx still found (rc %d)",
			       (unsigned long long)t, rc);
			return -1;
		}
	}
	if (FT_POST(ctx, fi_trecv(ctx->ep, b->p, 4096, b->desc, FI_ADDR_UNSPEC, 0, ~0ULL, &fctx)) ||
	    ft_wait_ctx(ctx, &fctx, &c) || c.e.tag != T_LAST ||
	    ft_verify(ctx, b->p, c.e.len, T_LAST, "after discard")) {
		FT_ERR(ctx, "the next message is tag 0x%llx, want 0x%x", (unsigned long long)c.e.tag,
		       T_LAST);
		return -1;
	}
	return 0;
}

static int peek_sender(struct ft_ctx *ctx, struct ft_buf *b)
{
	static const uint64_t tags[] = { T_PLAIN, T_CLAIM, T_CDISC, T_PDISC, T_LAST };
	struct fi_context2 fctx[5];
	struct ft_comp c;
	size_t off = 0;

	if (ft_barrier_progress(ctx))
		return -1;
	for (int i = 0; i < 5; i++) {
		size_t len = peek_len(tags[i]);

		ft_fill(b->p + off, len, (uint32_t)tags[i]);
		if (FT_POST(ctx, ctx->info->domain_attr->cq_data_size ?
			    fi_tsenddata(ctx->ep, b->p + off, len, b->desc, tags[i], ctx->peers[1],
					 tags[i], &fctx[i]) :
			    fi_tsend(ctx->ep, b->p + off, len, b->desc, ctx->peers[1], tags[i],
				     &fctx[i])))
			return -1;
		off += 4096;
	}
	if (ft_barrier_progress(ctx))
		return -1;
	for (int i = 0; i < 5; i++)
		if (ft_wait_ctx(ctx, &fctx[i], &c))
			return -1;
	return 0;
}

static int peek_run(struct ft_ctx *ctx)
{
	struct ft_buf b = { 0 };
	int rc = ft_open(ctx);

	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ft_buf_alloc(ctx, &b, 5 * 4096, FI_SEND | FI_RECV))
		goto close;
	if (ctx->rank == 0 ? peek_sender(ctx, &b) : peek_receiver(ctx, &b))
		goto free;
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_peek",
	.desc = "FI_PEEK, FI_CLAIM and FI_DISCARD on tagged receives",
	.nranks = 2,
	.hints = peek_hints,
	.run = peek_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
