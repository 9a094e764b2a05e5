/* SPDX-License-Identifier: MIT */
/*
 * RDM send/recv (or tagged with -T) with data verification over every size
 * from 0 B to the maximum, around the provider's inject_size, in both
 * directions; remote CQ data on every other message; fi_inject delivers its
 * data and produces no completion.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <stdlib.h>
#include <string.h>

struct msg_state {
	char *sbuf, *rbuf;
	void *sdesc, *rdesc;
	struct fid_mr *smr, *rmr;
	size_t max;
	bool data;
};

static void msg_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	h->caps = ctx->opts->tagged ? FI_TAGGED : FI_MSG;
}

static uint64_t msg_tag(size_t size)
{
	return 0x1000 + size;
}

static ssize_t msg_post_send(struct ft_ctx *ctx, struct msg_state *st, size_t size,
			     fi_addr_t to, void *fctx, bool data)
{
	uint64_t d = size ^ 0xabcdef;

	if (ctx->opts->tagged)
		return data ? fi_tsenddata(ctx->ep, st->sbuf, size, st->sdesc, d, to,
					   msg_tag(size), fctx) :
			      fi_tsend(ctx->ep, st->sbuf, size, st->sdesc, to, msg_tag(size), fctx);
	return data ? fi_senddata(ctx->ep, st->sbuf, size, st->sdesc, d, to, fctx) :
		      fi_send(ctx->ep, st->sbuf, size, st->sdesc, to, fctx);
}

static ssize_t msg_post_inject(struct ft_ctx *ctx, struct msg_state *st, size_t size,
			       fi_addr_t to, bool data)
{
	uint64_t d = size ^ 0xabcdef;

	if (ctx->opts->tagged)
		return data ? fi_tinjectdata(ctx->ep, st->sbuf, size, d, to, msg_tag(size)) :
			      fi_tinject(ctx->ep, st->sbuf, size, to, msg_tag(size));
	return data ? fi_injectdata(ctx->ep, st->sbuf, size, d, to) :
		      fi_inject(ctx->ep, st->sbuf, size, to);
}

static ssize_t msg_post_recv(struct ft_ctx *ctx, void *buf, size_t size, void *desc,
			     fi_addr_t from, void *fctx)
{
	if (ctx->opts->tagged)
		return fi_trecv(ctx->ep, buf, size, desc, from, msg_tag(size), 0, fctx);
	return fi_recv(ctx->ep, buf, size, desc, from, fctx);
}

static int msg_check_recv(struct ft_ctx *ctx, const struct ft_comp *c, const void *buf,
			  size_t size, bool data)
{
	uint64_t kind = ctx->opts->tagged ? FI_TAGGED : FI_MSG;

	if (c->e.len != size) {
		FT_ERR(ctx, "size %zu: completion len %zu", size, c->e.len);
		return -1;
	}
	if (!(c->e.flags & FI_RECV) || !(c->e.flags & kind)) {
		FT_ERR(ctx, "size %zu: completion flags 0x%llx lack FI_RECV|%s", size,
		       (unsigned long long)c->e.flags, ctx->opts->tagged ? "FI_TAGGED" : "FI_MSG");
		return -1;
	}
	if (ctx->opts->tagged && c->e.tag != msg_tag(size)) {
		FT_ERR(ctx, "size %zu: tag 0x%llx", size, (unsigned long long)c->e.tag);
		return -1;
	}
	if (data && (!(c->e.flags & FI_REMOTE_CQ_DATA) || c->e.data != (size ^ 0xabcdef))) {
		FT_ERR(ctx, "size %zu: remote CQ data 0x%llx flags 0x%llx", size,
		       (unsigned long long)c->e.data, (unsigned long long)c->e.flags);
		return -1;
	}
	if (!data && (c->e.flags & FI_REMOTE_CQ_DATA)) {
		FT_ERR(ctx, "size %zu: FI_REMOTE_CQ_DATA set on a message without data", size);
		return -1;
	}
	return ft_verify(ctx, buf, size, (uint32_t)size, "recv");
}

/* one message of each size from sender to receiver, receive posted first */
static int msg_sizes(struct ft_ctx *ctx, struct msg_state *st, int sender)
{
	size_t sizes[256], n = ft_sizes(ctx, st->max, sizes, 256);
	int peer = !sender;
	struct fi_context2 fctx;
	struct ft_comp c;

	for (size_t i = 0; i < n; i++) {
		size_t s = sizes[i];
		bool data = st->data && (i & 1);

		if (ctx->rank == peer) {
			memset(st->rbuf, 0, s + 1);
			if (FT_POST(ctx, msg_post_recv(ctx, st->rbuf, s, st->rdesc,
						       ctx->peers[sender], &fctx)))
				return FT_FAIL;
		}
		if (ft_barrier_progress(ctx))
			return FT_FAIL;
		if (ctx->rank == sender) {
			ft_fill(st->sbuf, s, (uint32_t)s);
			if (FT_POST(ctx, msg_post_send(ctx, st, s, ctx->peers[peer], &fctx, data)) ||
			    ft_wait_ctx(ctx, &fctx, &c))
				return FT_FAIL;
			if (!(c.e.flags & FI_SEND)) {
				FT_ERR(ctx, "send completion flags 0x%llx lack FI_SEND",
				       (unsigned long long)c.e.flags);
				return FT_FAIL;
			}
		} else {
			if (ft_wait_ctx(ctx, &fctx, &c) || msg_check_recv(ctx, &c, st->rbuf, s, data))
				return FT_FAIL;
			if (st->rbuf[s] != 0) {
				FT_ERR(ctx, "size %zu: byte past the message was written", s);
				return FT_FAIL;
			}
		}
		ft_dbg(ctx, "size %zu ok", s);
	}
	return FT_PASS;
}

/* injects complete with no CQ entry; a marker send proves the queue drained */
static int msg_inject(struct ft_ctx *ctx, struct msg_state *st, int sender)
{
	size_t inj = ctx->info->tx_attr->inject_size;
	size_t sizes[] = { 0, 1, inj / 2, inj > 0 ? inj - 1 : 0, inj };
	size_t n = sizeof(sizes) / sizeof(sizes[0]), slot = inj + 64;
	struct fi_context2 rctx[8], mctx;
	struct ft_comp c;
	char *marker;

	if (!inj)
		return FT_PASS;
	marker = st->rbuf + n * slot;
	if (ctx->rank != sender) {
		for (size_t i = 0; i < n; i++)
			if (FT_POST(ctx, msg_post_recv(ctx, st->rbuf + i * slot, sizes[i], st->rdesc,
						       ctx->peers[sender], &rctx[i])))
				return FT_FAIL;
		if (FT_POST(ctx, msg_post_recv(ctx, marker, 8, st->rdesc, ctx->peers[sender], &mctx)))
			return FT_FAIL;
	}
	if (ft_barrier_progress(ctx))
		return FT_FAIL;
	if (ctx->rank == sender) {
		for (size_t i = 0; i < n; i++) {
			ft_fill(st->sbuf, sizes[i], (uint32_t)sizes[i]);
			/* the buffer is reusable as soon as fi_inject returns */
			if (FT_POST(ctx, msg_post_inject(ctx, st, sizes[i], ctx->peers[!sender],
							 st->data && (i & 1))))
				return FT_FAIL;
			memset(st->sbuf, 0xee, sizes[i]);
		}
		ft_fill(st->sbuf, 8, 8);
		if (FT_POST(ctx, msg_post_send(ctx, st, 8, ctx->peers[!sender], &mctx, false)) ||
		    ft_wait_ctx(ctx, &mctx, &c) || ft_expect_none(ctx, 50))
			return FT_FAIL;
	} else {
		for (size_t i = 0; i < n; i++)
			if (ft_wait_ctx(ctx, &rctx[i], &c) ||
			    msg_check_recv(ctx, &c, st->rbuf + i * slot, sizes[i],
					   st->data && (i & 1)))
				return FT_FAIL;
		if (ft_wait_ctx(ctx, &mctx, &c) || msg_check_recv(ctx, &c, marker, 8, false))
			return FT_FAIL;
	}
	return ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
}

static int msg_run(struct ft_ctx *ctx)
{
	struct msg_state st = { 0 };
	int rc = ft_open(ctx);

	if (rc)
		goto close;
	st.max = ctx->opts->max_size ? ctx->opts->max_size :
		 ctx->opts->quick ? FT_MIB : 16 * FT_MIB;
	st.data = ctx->info->domain_attr->cq_data_size >= 4;
	rc = FT_FAIL;
	st.sbuf = ft_alloc(st.max + 4096);
	st.rbuf = ft_alloc(st.max + 16 * 4096 + ctx->info->tx_attr->inject_size * 8);
	if (!st.sbuf || !st.rbuf)
		goto free;
	if (ft_need_mr_local(ctx) &&
	    (ft_mr_reg(ctx, st.sbuf, st.max + 4096, FI_SEND, &st.smr, &st.sdesc) ||
	     ft_mr_reg(ctx, st.rbuf, st.max + 16 * 4096, FI_RECV, &st.rmr, &st.rdesc)))
		goto free;
	ft_dbg(ctx, "inject_size %zu, cq_data_size %zu", ctx->info->tx_attr->inject_size,
	       ctx->info->domain_attr->cq_data_size);
	for (int sender = 0; sender < 2; sender++)
		if (msg_sizes(ctx, &st, sender) || msg_inject(ctx, &st, sender))
			goto free;
	/* peers may still progress our messages: close only once all are done */
	rc = ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
free:
	if (st.smr)
		fi_close(&st.smr->fid);
	if (st.rmr)
		fi_close(&st.rmr->fid);
	free(st.sbuf);
	free(st.rbuf);
close:
	ft_close(ctx);
	return rc;
}

static const struct ft_test test = {
	.name = "ft_msg",
	.desc = "RDM send/recv (-T: tagged) with data verification, inject, CQ data",
	.nranks = 2,
	.hints = msg_hints,
	.run = msg_run,
};

int main(int argc, char **argv)
{
	return ft_main(argc, argv, &test);
}
