/* SPDX-License-Identifier: MIT */
/*
 * Fabric objects of one rank: getinfo with hints, fabric/domain/cq/av/ep,
 * address exchange (out of band, or node/service as libfabric clients do),
 * memory registration and completion handling.
 */
#define _GNU_SOURCE
#include "ft.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FT_FI_VERSION FI_VERSION(1, 17)

int ft_skip(struct ft_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->skip_reason, sizeof(ctx->skip_reason), fmt, ap);
	va_end(ap);
	return FT_SKIP;
}

const char *ft_caps_str(uint64_t caps, char *buf, size_t len)
{
	char *s = fi_tostr(&caps, FI_TYPE_CAPS);

	snprintf(buf, len, "%s", s ? s : "?");
	return buf;
}

bool ft_need_mr_local(struct ft_ctx *ctx)
{
	return ctx->info && (ctx->info->domain_attr->mr_mode & FI_MR_LOCAL);
}

static struct fi_info *ft_make_hints(struct ft_ctx *ctx, const struct ft_test *t)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = t->caps;
	h->mode = FI_CONTEXT | FI_CONTEXT2 | t->mode;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				  FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->domain_attr->av_type = ctx->opts->av_type;
	if (ctx->opts->prov)
		h->fabric_attr->prov_name = strdup(ctx->opts->prov);
	return h;
}

static int ft_getinfo(struct ft_ctx *ctx)
{
	const char *node = NULL;
	char service[16];
	uint64_t flags = 0;
	char cbuf[512];
	int rc;

	if (ctx->opts->addr_mode == FT_ADDR_NODE) {
		/* the launcher's OOB port is unique per run; derive the service from it */
		uint32_t port;

		if (ctx->rank == 0)
			port = 20000 + (uint32_t)(getpid() % 20000);
		if (ft_allgather(ctx, &port, sizeof(port), cbuf))
			return FT_FAIL;
		memcpy(&port, cbuf, sizeof(port));
		snprintf(service, sizeof(service), "%u", port);
		node = ctx->opts->node;
		if (ctx->rank == 0)
			flags = FI_SOURCE;
	}
	rc = fi_getinfo(FT_FI_VERSION, node, node ? service : NULL, flags, ctx->hints,
			&ctx->info);
	if (rc == -FI_ENODATA || rc == -FI_ENOSYS) {
		return ft_skip(ctx, "provider %s lacks caps %s (fi_getinfo: %s)",
			       ctx->opts->prov ? ctx->opts->prov : "(any)",
			       ft_caps_str(ctx->hints->caps, cbuf, sizeof(cbuf)), fi_strerror(-rc));
	}
	if (rc) {
		FT_ERR(ctx, "fi_getinfo: %s", fi_strerror(-rc));
		return FT_FAIL;
	}
	if (ctx->opts->addr_mode == FT_ADDR_NODE && ctx->rank != 0 && !ctx->info->dest_addr) {
		FT_ERR(ctx, "fi_getinfo(%s, %s) gave no dest_addr", node, service);
		return FT_FAIL;
	}
	ft_dbg(ctx, "provider %s, fabric %s", ctx->info->fabric_attr->prov_name,
	       ctx->info->fabric_attr->name);
	return FT_PASS;
}

static int ft_open_objects(struct ft_ctx *ctx)
{
	struct fi_cq_attr cq_attr = {
		.format = ctx->cq_format,
		.wait_obj = ctx->cq_wait,
		.size = 0,
	};
	struct fi_av_attr av_attr = {
		.type = ctx->info->domain_attr->av_type,
		.count = (size_t)ctx->nranks * 2,
	};
	int rc;

	rc = FT_CHECK(ctx, fi_fabric(ctx->info->fabric_attr, &ctx->fabric, NULL));
	if (rc)
		return rc;
	rc = FT_CHECK(ctx, fi_domain(ctx->fabric, ctx->info, &ctx->domain, NULL));
	if (rc)
		return rc;
	rc = FT_CHECK(ctx, fi_cq_open(ctx->domain, &cq_attr, &ctx->cq, NULL));
	if (rc)
		return rc;
	rc = FT_CHECK(ctx, fi_av_open(ctx->domain, &av_attr, &ctx->av, NULL));
	if (rc)
		return rc;
	rc = FT_CHECK(ctx, fi_endpoint(ctx->domain, ctx->info, &ctx->ep, NULL));
	if (rc)
		return rc;
	rc = FT_CHECK(ctx, fi_ep_bind(ctx->ep, &ctx->av->fid, 0));
	if (rc)
		return rc;
	rc = FT_CHECK(ctx, fi_ep_bind(ctx->ep, &ctx->cq->fid, FI_TRANSMIT | FI_RECV));
	if (rc)
		return rc;
	if (ctx->pre_enable && (rc = ctx->pre_enable(ctx)))
		return rc;
	return FT_CHECK(ctx, fi_enable(ctx->ep));
}

static int ft_getname(struct ft_ctx *ctx)
{
	size_t len = 0;
	int rc;

	rc = fi_getname(&ctx->ep->fid, NULL, &len);
	if (rc != -FI_ETOOSMALL || !len) {
		FT_ERR(ctx, "fi_getname(size): %d", rc);
		return FT_FAIL;
	}
	/* names may differ in length between ranks: pad to a fixed slot */
	ctx->namelen = 256;
	if (len > ctx->namelen) {
		FT_ERR(ctx, "address of %zu bytes is too long", len);
		return FT_FAIL;
	}
	ctx->name = calloc(1, ctx->namelen);
	if (FT_CHECK(ctx, fi_getname(&ctx->ep->fid, ctx->name, &len)))
		return FT_FAIL;
	return FT_PASS;
}

static int ft_exchange_oob(struct ft_ctx *ctx)
{
	int rc;

	ctx->peer_names = calloc((size_t)ctx->nranks, ctx->namelen);
	if (ft_allgather(ctx, ctx->name, ctx->namelen, ctx->peer_names))
		return FT_FAIL;
	/* one at a time: the slots are padded, fi_av_insert strides by addrlen */
	for (int i = 0; i < ctx->nranks; i++) {
		rc = fi_av_insert(ctx->av, (char *)ctx->peer_names + (size_t)i * ctx->namelen, 1,
				  &ctx->peers[i], 0, NULL);
		if (rc != 1) {
			FT_ERR(ctx, "fi_av_insert of rank %d: %d", i, rc);
			return FT_FAIL;
		}
	}
	return FT_PASS;
}

/* node/service: rank 1 reaches rank 0 through info->dest_addr, then sends
 * its own name in band so that rank 0 can insert it (what fabtests do). */
static int ft_exchange_node(struct ft_ctx *ctx)
{
	struct fi_context2 fctx;
	fi_addr_t addr;
	struct ft_comp c;
	int rc;

	ctx->peer_names = calloc((size_t)ctx->nranks, ctx->namelen);
	memcpy((char *)ctx->peer_names + (size_t)ctx->rank * ctx->namelen, ctx->name,
	       ctx->namelen);
	if (ctx->rank == 0) {
		char *slot = (char *)ctx->peer_names + ctx->namelen;

		if (FT_POST(ctx, fi_recv(ctx->ep, slot, ctx->namelen, NULL, FI_ADDR_UNSPEC, &fctx)))
			return FT_FAIL;
		if (ft_barrier(ctx) || ft_wait_ctx(ctx, &fctx, &c))
			return FT_FAIL;
		if (fi_av_insert(ctx->av, ctx->peer_names, 1, &ctx->peers[0], 0, NULL) != 1 ||
		    fi_av_insert(ctx->av, slot, 1, &ctx->peers[1], 0, NULL) != 1) {
			FT_ERR(ctx, "fi_av_insert of the in-band address failed");
			return FT_FAIL;
		}
	} else {
		rc = fi_av_insert(ctx->av, ctx->info->dest_addr, 1, &addr, 0, NULL);
		if (rc != 1) {
			FT_ERR(ctx, "fi_av_insert(dest_addr): %d", rc);
			return FT_FAIL;
		}
		if (ft_barrier(ctx))
			return FT_FAIL;
		if (FT_POST(ctx, fi_send(ctx->ep, ctx->name, ctx->namelen, NULL, addr, &fctx)) ||
		    ft_wait_ctx(ctx, &fctx, &c))
			return FT_FAIL;
		ctx->peers[0] = addr;
		if (fi_av_insert(ctx->av, ctx->name, 1, &ctx->peers[1], 0, NULL) != 1) {
			FT_ERR(ctx, "fi_av_insert(self) failed");
			return FT_FAIL;
		}
	}
	/* keep rank 1's view consistent: peers[0] is the server */
	return ft_barrier_progress(ctx) ? FT_FAIL : FT_PASS;
}

/* open everything; the outcome is agreed by all ranks, so a provider that
 * lacks a cap makes every rank skip together */
int ft_open(struct ft_ctx *ctx)
{
	int rc, all[FT_MAX_RANKS];

	ctx->hints = ft_make_hints(ctx, ctx->test);
	if (!ctx->hints)
		return FT_FAIL;
	if (ctx->test->hints)
		ctx->test->hints(ctx, ctx->hints);
	rc = ft_getinfo(ctx);
	if (rc == FT_PASS)
		rc = ft_open_objects(ctx) ? FT_FAIL : FT_PASS;
	if (rc == FT_PASS)
		rc = ft_getname(ctx);
	if (ft_allgather(ctx, &rc, sizeof(rc), all))
		return FT_FAIL;
	for (int i = 0; i < ctx->nranks; i++) {
		if (all[i] == FT_FAIL)
			return FT_FAIL;
		if (all[i] == FT_SKIP) {
			if (!ctx->skip_reason[0])
				ft_skip(ctx, "a peer cannot run this test");
			rc = FT_SKIP;
		}
	}
	if (rc != FT_PASS)
		return rc;
	if (ctx->opts->addr_mode == FT_ADDR_NODE)
		return ft_exchange_node(ctx);
	return ft_exchange_oob(ctx);
}

void ft_close(struct ft_ctx *ctx)
{
	if (ctx->ep)
		fi_close(&ctx->ep->fid);
	if (ctx->after_ep_close)
		ctx->after_ep_close(ctx);
	if (ctx->av)
		fi_close(&ctx->av->fid);
	if (ctx->cq)
		fi_close(&ctx->cq->fid);
	if (ctx->domain)
		fi_close(&ctx->domain->fid);
	if (ctx->fabric)
		fi_close(&ctx->fabric->fid);
	fi_freeinfo(ctx->info);
	fi_freeinfo(ctx->hints);
	free(ctx->name);
	free(ctx->peer_names);
	ctx->ep = NULL;
	ctx->av = NULL;
	ctx->cq = NULL;
	ctx->domain = NULL;
	ctx->fabric = NULL;
	ctx->info = ctx->hints = NULL;
	ctx->name = ctx->peer_names = NULL;
	ctx->stash_n = 0;
}

int ft_mr_reg(struct ft_ctx *ctx, void *buf, size_t len, uint64_t access,
	      struct fid_mr **mr, void **desc)
{
	uint64_t key = ctx->next_key++ + ((uint64_t)ctx->rank << 16);
	int rc;

	rc = fi_mr_reg(ctx->domain, buf, len, access, 0, key, 0, mr, NULL);
	if (rc) {
		FT_ERR(ctx, "fi_mr_reg(%zu bytes): %s", len, fi_strerror(-rc));
		return FT_FAIL;
	}
	if (ctx->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
		if (FT_CHECK(ctx, fi_mr_bind(*mr, &ctx->ep->fid, 0)) ||
		    FT_CHECK(ctx, fi_mr_enable(*mr)))
			return FT_FAIL;
	}
	if (desc)
		*desc = fi_mr_desc(*mr);
	return FT_PASS;
}

int ft_rma_key_exchange(struct ft_ctx *ctx, void *buf, size_t len, struct fid_mr *mr,
			struct ft_rma_key *keys)
{
	struct ft_rma_key mine = {
		.addr = (ctx->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
			(uint64_t)(uintptr_t)buf : 0,
		.key = fi_mr_key(mr),
		.len = len,
	};

	if (mine.key == FI_KEY_NOTAVAIL) {
		FT_ERR(ctx, "fi_mr_key: key not available (raw keys unsupported here)");
		return FT_FAIL;
	}
	return ft_allgather(ctx, &mine, sizeof(mine), keys) ? FT_FAIL : FT_PASS;
}

int ft_buf_alloc(struct ft_ctx *ctx, struct ft_buf *b, size_t len, uint64_t access)
{
	memset(b, 0, sizeof(*b));
	b->len = len;
	b->p = ft_alloc(len);
	if (!b->p) {
		FT_ERR(ctx, "out of memory for %zu bytes", len);
		return FT_FAIL;
	}
	if (ft_need_mr_local(ctx) || (access & (FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return ft_mr_reg(ctx, b->p, len ? len : 1, access, &b->mr, &b->desc);
	return FT_PASS;
}

void ft_buf_free(struct ft_buf *b)
{
	if (b->mr)
		fi_close(&b->mr->fid);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

ssize_t ft_send(struct ft_ctx *ctx, const struct ft_buf *b, size_t off, size_t len,
		int peer, uint64_t tag, void *fctx)
{
	if (ctx->opts->tagged)
		return fi_tsend(ctx->ep, b->p + off, len, b->desc, ctx->peers[peer], tag, fctx);
	return fi_send(ctx->ep, b->p + off, len, b->desc, ctx->peers[peer], fctx);
}

ssize_t ft_recv(struct ft_ctx *ctx, const struct ft_buf *b, size_t off, size_t len,
		int peer, uint64_t tag, void *fctx)
{
	fi_addr_t src = peer < 0 ? FI_ADDR_UNSPEC : ctx->peers[peer];

	if (ctx->opts->tagged)
		return fi_trecv(ctx->ep, b->p + off, len, b->desc, src, tag, 0, fctx);
	return fi_recv(ctx->ep, b->p + off, len, b->desc, src, fctx);
}

/* ---- completions ----------------------------------------------------------- */

static size_t ft_cq_entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT: return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG: return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA: return sizeof(struct fi_cq_data_entry);
	default: return sizeof(struct fi_cq_tagged_entry);
	}
}

/* widen one entry of the CQ's format into a tagged entry */
static void ft_cq_widen(enum fi_cq_format f, const void *src, struct fi_cq_tagged_entry *e)
{
	memset(e, 0, sizeof(*e));
	memcpy(e, src, ft_cq_entry_size(f));
}

static void ft_stash_push(struct ft_ctx *ctx, const struct ft_comp *c)
{
	if (ctx->stash_n == FT_STASH_SIZE) {
		FT_ERR(ctx, "completion stash overflow: a completion is lost");
		return;
	}
	ctx->stash[ctx->stash_n++] = *c;
}

/* read what the CQ has into the stash */
void ft_progress(struct ft_ctx *ctx)
{
	char buf[16 * sizeof(struct fi_cq_tagged_entry)];
	fi_addr_t src[16];
	size_t esz = ft_cq_entry_size(ctx->cq_format);
	ssize_t n;
	struct ft_comp c;

	n = ctx->cq_readfrom ? fi_cq_readfrom(ctx->cq, buf, 16, src) :
			       fi_cq_read(ctx->cq, buf, 16);
	if (n == -FI_EAVAIL) {
		memset(&c, 0, sizeof(c));
		c.is_err = true;
		if (fi_cq_readerr(ctx->cq, &c.err, 0) == 1) {
			/* fi_cq(3) says err is a positive errno; some libfabric 1.17
			 * providers report -FI_ETRUNC: accept both, say so */
			if (c.err.err < 0) {
				ft_dbg(ctx, "provider reported negative err %d", c.err.err);
				c.err.err = -c.err.err;
			}
			c.e.op_context = c.err.op_context;
			c.e.flags = c.err.flags;
			c.e.len = c.err.len;
			c.e.tag = c.err.tag;
			c.e.data = c.err.data;
			c.e.buf = c.err.buf;
			ft_stash_push(ctx, &c);
		}
		return;
	}
	if (n < 0 && n != -FI_EAGAIN) {
		FT_ERR(ctx, "fi_cq_read: %s", fi_strerror((int)-n));
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		memset(&c, 0, sizeof(c));
		ft_cq_widen(ctx->cq_format, buf + (size_t)i * esz, &c.e);
		c.src = ctx->cq_readfrom ? src[i] : FI_ADDR_NOTAVAIL;
		ft_stash_push(ctx, &c);
	}
}

void ft_relax(unsigned *spins)
{
	/* two busy pollers sharing a vCPU starve each other: yield now and then */
	if ((++*spins & 63) == 0)
		sched_yield();
}

int ft_get_comp(struct ft_ctx *ctx, struct ft_comp *c, int timeout_ms)
{
	uint64_t t0 = ft_now_ns();
	unsigned spins = 0;

	for (;;) {
		if (ctx->stash_n) {
			*c = ctx->stash[0];
			memmove(&ctx->stash[0], &ctx->stash[1],
				(size_t)(--ctx->stash_n) * sizeof(ctx->stash[0]));
			return c->is_err ? -FI_EAVAIL : 0;
		}
		ft_progress(ctx);
		if (!ctx->stash_n) {
			ft_relax(&spins);
			if ((spins & 255) == 0 &&
			    ft_now_ns() - t0 > (uint64_t)timeout_ms * 1000000ULL)
				return -FI_ETIMEDOUT;
		}
	}
}

/* wait for the completion of one operation; others stay stashed */
int ft_wait_ctx(struct ft_ctx *ctx, void *op_context, struct ft_comp *c)
{
	uint64_t t0 = ft_now_ns();
	unsigned spins = 0;
	int seen = 0;

	for (;;) {
		for (int i = seen; i < ctx->stash_n; i++) {
			if (ctx->stash[i].e.op_context != op_context)
				continue;
			*c = ctx->stash[i];
			memmove(&ctx->stash[i], &ctx->stash[i + 1],
				(size_t)(ctx->stash_n - i - 1) * sizeof(ctx->stash[0]));
			ctx->stash_n--;
			if (c->is_err) {
				FT_ERR(ctx, "error completion for %p: %s (prov_errno %d)",
				       op_context, fi_strerror(c->err.err), c->err.prov_errno);
				return -FI_EAVAIL;
			}
			return 0;
		}
		seen = ctx->stash_n;
		ft_progress(ctx);
		if (ctx->stash_n == seen) {
			ft_relax(&spins);
			if ((spins & 255) == 0 &&
			    ft_now_ns() - t0 > (uint64_t)ctx->opts->op_timeout_ms * 1000000ULL) {
				FT_ERR(ctx, "timeout waiting for completion of %p", op_context);
				return -FI_ETIMEDOUT;
			}
		}
	}
}

int ft_wait_n(struct ft_ctx *ctx, int n)
{
	struct ft_comp c;

	while (n-- > 0) {
		int rc = ft_get_comp(ctx, &c, ctx->opts->op_timeout_ms);

		if (rc == -FI_EAVAIL) {
			FT_ERR(ctx, "error completion: %s", fi_strerror(c.err.err));
			return rc;
		}
		if (rc) {
			FT_ERR(ctx, "timeout waiting for %d more completions", n + 1);
			return rc;
		}
	}
	return 0;
}

int ft_expect_none(struct ft_ctx *ctx, int ms)
{
	uint64_t t0 = ft_now_ns();
	unsigned spins = 0;

	while (ft_now_ns() - t0 < (uint64_t)ms * 1000000ULL) {
		ft_progress(ctx);
		if (ctx->stash_n) {
			FT_ERR(ctx, "unexpected completion: context %p flags 0x%llx len %zu",
			       ctx->stash[0].e.op_context,
			       (unsigned long long)ctx->stash[0].e.flags, ctx->stash[0].e.len);
			return -1;
		}
		ft_relax(&spins);
	}
	return 0;
}

int ft_poll_once(struct fid_cq *cq, void *buf, size_t count)
{
	return (int)fi_cq_read(cq, buf, count);
}
