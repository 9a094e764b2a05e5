/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the shm provider tests: open a fabric/domain/AV/CQ and a few
 * shm endpoints through the public API (fi_getinfo with prov_name "shm"),
 * wait for the completion of one context while keeping the others, and
 * fill/check byte patterns. Every wait has a generous deadline so that a
 * bug fails the test instead of hanging it; nothing asserts on time.
 */
#ifndef SHM_PROV_TEST_H
#define SHM_PROV_TEST_H

#include "weft/compat.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_atomic.h>

#define T_MAX_EP 4
#define T_STASH 1024
#define T_DEADLINE_S 60
#define T_ADDR_LEN 64

struct t_comp {
	bool is_err;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
};

struct tctx {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep[T_MAX_EP];
	char name[T_MAX_EP][T_ADDR_LEN];
	fi_addr_t addr[T_MAX_EP];
	int nep;
	struct t_comp stash[T_STASH];
	int nstash;
};

static inline uint64_t t_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

static inline struct fi_info *t_hints(uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();

	assert_non_null(hints);
	hints->caps = caps;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("shm");
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY |
				      FI_MR_ALLOCATED;
	hints->mode = FI_CONTEXT;
	return hints;
}

static inline void t_open_fabric(struct tctx *t, uint64_t caps)
{
	struct fi_info *hints = t_hints(caps);
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .size = 4096,
				      .wait_obj = FI_WAIT_NONE };

	memset(t, 0, sizeof(*t));
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				    &t->info), 0);
	fi_freeinfo(hints);
	assert_string_equal(t->info->fabric_attr->prov_name, "shm");
	assert_int_equal(fi_fabric(t->info->fabric_attr, &t->fabric, NULL), 0);
	assert_int_equal(fi_domain(t->fabric, t->info, &t->domain, NULL), 0);
	assert_int_equal(fi_av_open(t->domain, &av_attr, &t->av, NULL), 0);
	assert_int_equal(fi_cq_open(t->domain, &cq_attr, &t->cq, NULL), 0);
}

/* One more endpoint on the shared AV and CQ; returns its index. */
static inline int t_add_ep(struct tctx *t)
{
	int i = t->nep++;
	size_t len = T_ADDR_LEN;

	assert_true(i < T_MAX_EP);
	assert_int_equal(fi_endpoint(t->domain, t->info, &t->ep[i], NULL), 0);
	assert_int_equal(fi_ep_bind(t->ep[i], &t->av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(t->ep[i], &t->cq->fid,
				    FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_enable(t->ep[i]), 0);
	assert_int_equal(fi_getname(&t->ep[i]->fid, t->name[i], &len), 0);
	assert_int_equal(len, T_ADDR_LEN);
	assert_int_equal(fi_av_insert(t->av, t->name[i], 1, &t->addr[i], 0,
				      NULL), 1);
	return i;
}

static inline void t_open(struct tctx *t, uint64_t caps, int nep)
{
	int i;

	t_open_fabric(t, caps);
	for (i = 0; i < nep; i++)
		t_add_ep(t);
}

static inline void t_close(struct tctx *t)
{
	int i;

	for (i = 0; i < t->nep; i++)
		assert_int_equal(fi_close(&t->ep[i]->fid), 0);
	assert_int_equal(fi_close(&t->cq->fid), 0);
	assert_int_equal(fi_close(&t->av->fid), 0);
	assert_int_equal(fi_close(&t->domain->fid), 0);
	assert_int_equal(fi_close(&t->fabric->fid), 0);
	fi_freeinfo(t->info);
}

/* Read what is there into the stash; returns entries read. */
static inline int t_poll(struct tctx *t)
{
	struct fi_cq_tagged_entry e[16];
	ssize_t n = fi_cq_read(t->cq, e, 16);
	int i;

	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		struct t_comp *c = &t->stash[t->nstash++];

		assert_true(t->nstash <= T_STASH);
		memset(c, 0, sizeof(*c));
		c->is_err = true;
		assert_int_equal(fi_cq_readerr(t->cq, &c->err, 0), 1);
		return 1;
	}
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		struct t_comp *c = &t->stash[t->nstash++];

		assert_true(t->nstash <= T_STASH);
		memset(c, 0, sizeof(*c));
		c->e = e[i];
	}
	return (int)n;
}

static inline bool t_take(struct tctx *t, void *ctx, struct t_comp *out)
{
	int i;

	for (i = 0; i < t->nstash; i++) {
		struct t_comp *c = &t->stash[i];
		void *cctx = c->is_err ? c->err.op_context : c->e.op_context;

		if (cctx != ctx)
			continue;
		*out = *c;
		memmove(c, c + 1, (size_t)(t->nstash - i - 1) * sizeof(*c));
		t->nstash--;
		return true;
	}
	return false;
}

/* The completion (or error) of ctx. */
static inline struct t_comp t_wait(struct tctx *t, void *ctx)
{
	uint64_t deadline = t_now_s() + T_DEADLINE_S;
	struct t_comp c;

	while (!t_take(t, ctx, &c)) {
		t_poll(t);
		if (t_now_s() > deadline)
			fail_msg("no completion for context %p", ctx);
	}
	return c;
}

static inline struct fi_cq_tagged_entry t_wait_ok(struct tctx *t, void *ctx)
{
	struct t_comp c = t_wait(t, ctx);

	if (c.is_err)
		fail_msg("context %p failed: %s", ctx,
			 fi_strerror(c.err.err));
	return c.e;
}

static inline struct fi_cq_err_entry t_wait_err(struct tctx *t, void *ctx)
{
	struct t_comp c = t_wait(t, ctx);

	if (!c.is_err)
		fail_msg("context %p succeeded, expected an error", ctx);
	return c.err;
}

/* Retry a post while it says -FI_EAGAIN, progressing meanwhile. */
#define T_POST(t, call)							\
	do {								\
		uint64_t _dl = t_now_s() + T_DEADLINE_S;		\
		ssize_t _r;						\
		while ((_r = (call)) == -FI_EAGAIN) {			\
			t_poll(t);					\
			if (t_now_s() > _dl)				\
				fail_msg("%s: stuck on EAGAIN", #call);	\
		}							\
		assert_int_equal(_r, 0);				\
	} while (0)

static inline void t_fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + seed + (i >> 11));
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long t_check(const uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != (uint8_t)(i * 7 + seed + (i >> 11)))
			return (long)i;
	return -1;
}

#endif /* SHM_PROV_TEST_H */
