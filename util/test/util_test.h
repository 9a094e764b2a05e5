/* SPDX-License-Identifier: MIT */
/*
 * Fixture shared by util's unit tests: a provider-less fabric, a domain and
 * endpoints built on util exactly as a provider builds them, and a test
 * endpoint whose progress function writes completions the test queued
 * (so tests see that reads run progress).
 */
#ifndef WEFT_UTIL_TEST_H
#define WEFT_UTIL_TEST_H

#include "weft/compat.h"
#include "weft/util.h"
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static struct fi_provider util_test_prov = {
	.version = FI_VERSION(1, 0),
	.fi_version = FI_VERSION(1, 17),
	.name = "utiltest",
};

struct test_domain {
	struct util_domain util;
};

static int test_domain_close(struct fid *fid)
{
	struct test_domain *d =
		container_of(fid, struct test_domain, util.domain_fid.fid);
	int ret = util_domain_fini(&d->util);

	if (ret)
		return ret;
	free(d);
	return 0;
}

static const struct fi_ops test_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = test_domain_close,
	.bind = util_domain_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static const struct fi_ops_domain test_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = util_av_open,
	.cq_open = util_cq_open,
	.endpoint = util_no_endpoint,
	.scalable_ep = util_no_scalable_ep,
	.cntr_open = util_cntr_open,
	.poll_open = util_poll_open,
	.stx_ctx = util_no_stx_ctx,
	.srx_ctx = util_no_srx_ctx,
	.query_atomic = util_domain_query_atomic,
	.query_collective = util_no_query_collective,
	.endpoint2 = util_no_endpoint2,
};

static const struct fi_ops_fabric test_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = NULL,		/* tests open domains directly */
	.passive_ep = util_no_passive_ep,
	.eq_open = util_eq_open,
	.wait_open = util_no_wait_open,
	.trywait = util_fabric_trywait,
	.domain2 = util_no_domain2,
};

struct test_env {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct util_domain *udom;
	struct fi_info info;
	struct fi_domain_attr dattr;
	struct fi_ep_attr eattr;
	struct fi_tx_attr tattr;
	struct fi_rx_attr rattr;
	struct fi_fabric_attr fattr;
};

static inline int test_env_open(struct test_env *env, uint32_t api,
				enum fi_threading threading, int mr_mode)
{
	struct test_domain *d;
	int ret;

	memset(env, 0, sizeof(*env));
	env->fattr.name = (char *)"utiltest";
	env->fattr.api_version = api;
	env->dattr.name = (char *)"utiltest0";
	env->dattr.threading = threading;
	env->dattr.mr_mode = mr_mode;
	env->dattr.av_type = FI_AV_UNSPEC;
	env->eattr.type = FI_EP_RDM;
	env->tattr.op_flags = 0;
	env->rattr.op_flags = 0;
	env->info.caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV;
	env->info.domain_attr = &env->dattr;
	env->info.ep_attr = &env->eattr;
	env->info.tx_attr = &env->tattr;
	env->info.rx_attr = &env->rattr;
	ret = util_fabric_open(&util_test_prov, &env->fattr, &test_fabric_ops,
			       &env->fabric, NULL);
	if (ret)
		return ret;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	ret = util_domain_init(&d->util, to_util_fabric(env->fabric),
			       &env->info, &test_domain_fi_ops,
			       &test_domain_ops, NULL);
	if (ret) {
		free(d);
		return ret;
	}
	d->util.wait_spin_ns = 1000;	/* keep blocking tests short */
	env->udom = &d->util;
	env->domain = &d->util.domain_fid;
	return 0;
}

static inline void test_env_close(struct test_env *env)
{
	assert_int_equal(fi_close(&env->domain->fid), 0);
	assert_int_equal(fi_close(&env->fabric->fid), 0);
}

/* ---- test endpoint ---- */

#define TEST_EP_PENDING 64

struct test_ep {
	struct util_ep util;
	int progress_calls;
	int enable_calls;
	int enable_ret;
	/* completions written by the next progress call */
	void *pending[TEST_EP_PENDING];
	int npending;
};

static inline struct test_ep *to_test_ep(struct fid_ep *ep)
{
	return container_of(ep, struct test_ep, util.ep_fid);
}

static void test_ep_progress(struct util_ep *uep)
{
	struct test_ep *ep = container_of(uep, struct test_ep, util);
	int i;

	ep->progress_calls++;
	for (i = 0; i < ep->npending; i++)
		util_ep_rx_comp(uep, ep->pending[i], FI_RECV | FI_MSG, 8,
				NULL, 0, 0, (fi_addr_t)i);
	ep->npending = 0;
}

static int test_ep_enable(struct util_ep *uep)
{
	struct test_ep *ep = container_of(uep, struct test_ep, util);

	ep->enable_calls++;
	return ep->enable_ret;
}

static int test_ep_close(struct fid *fid)
{
	struct test_ep *ep = container_of(fid, struct test_ep, util.ep_fid.fid);

	util_ep_fini(&ep->util);
	free(ep);
	return 0;
}

static const struct fi_ops test_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = test_ep_close,
	.bind = util_ep_bind,
	.control = util_ep_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static const struct fi_ops_ep test_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = util_no_cancel,
	.getopt = util_ep_getopt,
	.setopt = util_ep_setopt,
	.tx_ctx = util_no_tx_ctx,
	.rx_ctx = util_no_rx_ctx,
	.rx_size_left = util_no_size_left,
	.tx_size_left = util_no_size_left,
};

static inline struct test_ep *test_ep_open(struct test_env *env)
{
	struct test_ep *ep = calloc(1, sizeof(*ep));

	assert_non_null(ep);
	assert_int_equal(util_ep_init(&ep->util, env->udom, &env->info,
				      test_ep_progress, NULL), 0);
	ep->util.ep_fid.fid.ops = UTIL_OPS(&test_ep_fi_ops);
	ep->util.ep_fid.ops = UTIL_OPS(&test_ep_ops);
	ep->util.enable = test_ep_enable;
	return ep;
}

#endif /* WEFT_UTIL_TEST_H */
