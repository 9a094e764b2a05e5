/* SPDX-License-Identifier: MIT */
/*
 * Completion queues:
 *  - every format (CONTEXT, MSG, DATA, TAGGED) carries the fields it promises;
 *  - error entries (a cancelled receive) with fi_cq_readerr and a readable
 *    fi_cq_strerror;
 *  - FI_WAIT_UNSPEC: fi_cq_sread times out with -FI_EAGAIN on an empty CQ and
 *    returns the entry once a message arrives;
 *  - FI_WAIT_FD: FI_GETWAIT gives a descriptor, fi_trywait + poll(2) wake up
 *    when a completion is ready.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <poll.h>
#include <string.h>
#include <unistd.h>

#define CQ_LEN 333

static void cq_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = FI_TAGGED | FI_MSG;
}

static const char *cq_fmt_name(enum fi_cq_format f)
{
	static const char *names[] = { "UNSPEC", "CONTEXT", "MSG", "DATA", "TAGGED" };

	return f <= FI_CQ_FORMAT_TAGGED ? names[f] : "?";
}

static int cq_check_entry(struct ft_ctx *ctx, enum fi_cq_format f, const struct ft_comp *c,
			  void *fctx, const char *buf)
{
	bool data = ctx->info->domain_attr->cq_data_size > 0;

	if (c->e.op_context != fctx) {
		FT_ERR(ctx, "%s: op_context %p, want %p", cq_fmt_name(f), c->e.op_context, fctx);
		return -1;
	}
	if (f >= FI_CQ_FORMAT_MSG &&
	    (c->e.len != CQ_LEN || !(c->e.flags & FI_RECV) || !(c->e.flags & FI_TAGGED))) {
		FT_ERR(ctx, "%s: len %zu flags 0x%llx", cq_fmt_name(f), c->e.len,
		       (unsigned long long)c->e.flags);
		return -1;
	}
	if (f >= FI_CQ_FORMAT_DATA && data &&
	    (c->e.data != 0xdada || !(c->e.flags & FI_REMOTE_CQ_DATA))) {
		FT_ERR(ctx, "%s: data 0x%llx", cq_fmt_name(f), (unsigned long long)c->e.data);
		return -1;
	}
	if (f >= FI_CQ_FORMAT_DATA && c->e.buf && c->e.buf != buf) {
		FT_ERR(ctx, "%s: buf %p, want %p or NULL", cq_fmt_name(f), c->e.buf, (void *)buf);
		return -1;
	}
	if (f == FI_CQ_FORMAT_TAGGED && c->e.tag != 0x7a6) {
		FT_ERR(ctx, "%s: tag 0x%llx", cq_fmt_name(f), (unsigned long long)c->e.tag);
		return -1;
	}
	return ft_verify(ctx, buf, CQ_LEN, (uint32_t)f, cq_fmt_name(f));
}

static ssize_t cq_send(struct ft_ctx *ctx, struct ft_buf *b, uint32_t seed, void *fctx)
{
	ft_fill(b->p, CQ_LEN, seed);
	if (ctx->info->domain_attr->cq_data_size)
		return fi_tsenddata(ctx->ep, b->p, CQ_LEN, b->desc, 0xdada, ctx->peers[1], 0x7a6, fctx);
	return fi_tsend(ctx->ep, b->p, CQ_LEN, b->desc, ctx->peers[1], 0x7a6, fctx);
}

static int cq_error_entry(struct ft_ctx *ctx, struct ft_buf *b)
{
	struct fi_context2 fctx;
	struct fi_cq_err_entry err = { 0 };
	char ebuf[128];
	const char *s;
	uint64_t t0 = ft_now_ns();
	ssize_t n;

	if (FT_POST(ctx, fi_trecv(ctx->ep, b->p, 64, b->desc, FI_ADDR_UNSPEC, 0xe, 0, &fctx)) ||
	    FT_CHECK(ctx, fi_cancel(&ctx->ep->fid, &fctx)))
		return -1;
	while ((n = fi_cq_read(ctx->cq, ebuf, 1)) == -FI_EAGAIN &&
	       ft_now_ns() - t0 < 5000000000ULL)
		;
	if (n != -FI_EAVAIL) {
		FT_ERR(ctx, "fi_cq_read after cancel: %zd, want -FI_EAVAIL", n);
		return -1;
	}
	if (fi_cq_readerr(ctx->cq, &err, 0) != 1 || err.op_context != &fctx ||
	    (err.err != FI_ECANCELED && err.err != -FI_ECANCELED)) {
		FT_ERR(ctx, "fi_cq_readerr: context %p err %d", err.op_context, err.err);
		return -1;
	}
	s = fi_cq_strerror(ctx->cq, err.prov_errno, err.err_data, ebuf, sizeof(ebuf));
	if (!s || !s[0]) {
		FT_ERR(ctx, "fi_cq_strerror gave no text");
		return -1;
	}
	/* the error is consumed: the CQ is empty again */
	n = fi_cq_read(ctx->cq, ebuf, 1);
	if (n != -FI_EAGAIN) {
		FT_ERR(ctx, "CQ not empty after fi_cq_readerr: %zd", n);
		return -1;
	}
	return 0;
}

static int cq_formats(struct ft_ctx *ctx)
{
	for (enum fi_cq_format f = FI_CQ_FORMAT_CONTEXT; f <= FI_CQ_FORMAT_TAGGED; f++) {
		struct fi_context2 fctx;
		struct ft_buf b = { 0 };
		struct ft_comp c;
		int rc;

		ctx->cq_format = f;
		rc = ft_open(ctx);
		if (rc) {
			ft_close(ctx);
			return rc;
		}
		rc = FT_FAIL;
		if (ft_buf_alloc(ctx, &b, 4096, FI_SEND | FI_RECV))
			goto close;
		if (ctx->rank == 1 &&
		    (cq_error_entry(ctx, &b) ||
		     FT_POST(ctx, fi_trecv(ctx->ep, b.p, 4096, b.desc, FI_ADDR_UNSPEC, 0x7a6, 0, &fctx))))
			goto free;
		if (ft_barrier_progress(ctx))
			goto free;
		if (ctx->rank == 0 && (FT_POST(ctx, cq_send(ctx, &b, (uint32_t)f, &fctx)) ||
				       ft_wait_ctx(ctx, &fctx, &c)))
			goto free;
		if (ctx->rank == 1 &&
		    (ft_wait_ctx(ctx, &fctx, &c) || cq_check_entry(ctx, f, &c, &fctx, b.p)))
			goto free;
		rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
		ft_buf_free(&b);
close:
		ft_close(ctx);
		if (rc)
			return rc;
		ft_dbg(ctx, "format %s ok", cq_fmt_name(f));
	}
	ctx->cq_format = FI_CQ_FORMAT_TAGGED;
	return FT_PASS;
}

/* receiver side of one blocking wait; the sender sends after a delay */
static int cq_wait_recv(struct ft_ctx *ctx, struct ft_buf *b, bool fd_wait)
{
	struct fi_cq_tagged_entry e;
	struct fi_context2 fctx;
	uint64_t t0;
	ssize_t n;
	int fd = -1;

	if (FT_POST(ctx, fi_trecv(ctx->ep, b->p, 4096, b->desc, FI_ADDR_UNSPEC, 0x7a6, 0, &fctx)))
		return -1;
	if (!fd_wait) {
		ft_watchdog(ctx, 10, "fi_cq_sread with a 50 ms timeout on an empty CQ");
		n = fi_cq_sread(ctx->cq, &e, 1, NULL, 50);
		ft_watchdog_off();
		if (n != -FI_EAGAIN) {
			FT_ERR(ctx, "fi_cq_sread on an empty CQ: %zd, want -FI_EAGAIN", n);
			return -1;
		}
	} else if (FT_CHECK(ctx, fi_control(&ctx->cq->fid, FI_GETWAIT, &fd))) {
		return -1;
	}
	if (ft_barrier(ctx))
		return -1;
	t0 = ft_now_ns();
	for (;;) {
		if (!fd_wait) {
			ft_watchdog(ctx, 20, "fi_cq_sread with a 1 s timeout");
			n = fi_cq_sread(ctx->cq, &e, 1, NULL, 1000);
			ft_watchdog_off();
		} else {
			struct fid *fids[] = { &ctx->cq->fid };
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			if (fi_trywait(ctx->fabric, fids, 1) == FI_SUCCESS)
				poll(&pfd, 1, 1000);
			n = fi_cq_read(ctx->cq, &e, 1);
		}
		if (n == 1)
			break;
		if (n != -FI_EAGAIN) {
			FT_ERR(ctx, "%s: %zd (%s)", fd_wait ? "fi_cq_read" : "fi_cq_sread", n,
			       fi_strerror((int)-n));
			return -1;
		}
		if (ft_now_ns() - t0 > (uint64_t)ctx->opts->op_timeout_ms * 1000000ULL) {
			FT_ERR(ctx, "blocking wait (%s) never returned the message",
			       fd_wait ? "FI_WAIT_FD" : "fi_cq_sread");
			return -1;
		}
	}
	if (e.op_context != &fctx || e.len != CQ_LEN)
		return -1;
	return ft_verify(ctx, b->p, CQ_LEN, 77, "blocking wait");
}

static int cq_wait(struct ft_ctx *ctx, enum fi_wait_obj wait)
{
	struct fi_context2 fctx;
	struct ft_buf b = { 0 };
	struct ft_comp c;
	int rc;

	ctx->cq_wait = wait;
	rc = ft_open(ctx);
	ctx->cq_wait = FI_WAIT_NONE;
	if (rc)
		goto close;
	rc = FT_FAIL;
	if (ft_buf_alloc(ctx, &b, 4096, FI_SEND | FI_RECV))
		goto close;
	if (ctx->rank == 1) {
		if (cq_wait_recv(ctx, &b, wait == FI_WAIT_FD))
			goto free;
	} else {
		if (ft_barrier(ctx))
			goto free;
		/* make the receiver block before the message exists */
		usleep(20000);
		if (FT_POST(ctx, cq_send(ctx, &b, 77, &fctx)) || ft_wait_ctx(ctx, &fctx, &c))
			goto free;
	}
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	ft_buf_free(&b);
close:
	ft_close(ctx);
	return rc;
}

static int cq_run(struct ft_ctx *ctx)
{
	int rc = cq_formats(ctx);

	if (rc)
		return rc;
	rc = cq_wait(ctx, FI_WAIT_UNSPEC);
	if (rc)
		return rc;
	return cq_wait(ctx, FI_WAIT_FD);
}

static const struct ft_test test = {
	.name = "ft_cq",
	.desc = "CQ formats, error entries, fi_cq_sread and FD wait objects",
	.nranks = 2,
	.hints = cq_hints,
	.run = cq_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
