/* SPDX-License-Identifier: MIT */
/*
 * Micro-benchmark of util's hot paths (not a test: prints ns per op).
 * Usage: util/test/bench_util [iterations]
 */
#include "weft/compat.h"
#include "weft/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct fi_provider bench_prov = {
	.version = FI_VERSION(1, 0), .fi_version = FI_VERSION(1, 17),
	.name = "bench",
};

static const struct fi_ops_fabric bench_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.passive_ep = util_no_passive_ep, .eq_open = util_eq_open,
	.wait_open = util_no_wait_open, .trywait = util_fabric_trywait,
	.domain2 = util_no_domain2,
};

static const struct fi_ops_domain bench_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = util_av_open, .cq_open = util_cq_open,
	.endpoint = util_no_endpoint, .scalable_ep = util_no_scalable_ep,
	.cntr_open = util_cntr_open, .poll_open = util_no_poll_open,
	.stx_ctx = util_no_stx_ctx, .srx_ctx = util_no_srx_ctx,
	.query_atomic = util_domain_query_atomic,
	.query_collective = util_no_query_collective,
	.endpoint2 = util_no_endpoint2,
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void bench_cq(struct util_domain *dom, const char *label, long iters)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 1024 };
	struct fi_cq_tagged_entry e[16];
	struct fid_cq *cq;
	double t0;
	long i;

	if (fi_cq_open(&dom->domain_fid, &attr, &cq, NULL))
		exit(1);
	t0 = now_ns();
	for (i = 0; i < iters; i += 16) {
		for (int k = 0; k < 16; k++)
			util_cq_write_src(to_util_cq(cq), (void *)(uintptr_t)k,
					  FI_RECV | FI_TAGGED, 8, NULL, 0, k, 0);
		if (fi_cq_read(cq, e, 16) != 16)
			exit(2);
	}
	printf("cq write+read (%s, batches of 16): %.1f ns/completion\n",
	       label, (now_ns() - t0) / (double)i);
	fi_close(&cq->fid);
}

struct brx {
	struct util_rx_entry util;
};

static void bench_match(long iters)
{
	struct util_match_queue q;
	struct brx rx[64];
	double t0;
	long i;

	util_match_queue_init(&q, true);
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		struct brx *r = &rx[i & 63];

		util_rx_entry_init(&r->util, FI_ADDR_UNSPEC, (uint64_t)i, 0,
				   r, 0, NULL, 0);
		util_match_post(&q, &r->util);
		if (!util_match_rx(&q, 3, (uint64_t)i))
			exit(3);
	}
	printf("match post+match (queue depth 1): %.1f ns/message\n",
	       (now_ns() - t0) / (double)iters);
}

static void bench_atomic(long iters)
{
	int64_t dst[16] = { 0 }, src[16], res[16];
	double t0;
	long i;

	for (int k = 0; k < 16; k++)
		src[k] = k;
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		util_atomic_apply(FI_SUM, FI_INT64, dst, src, NULL, res, 16);
	printf("atomic fetch-SUM int64: %.2f ns/element\n",
	       (now_ns() - t0) / (double)iters / 16);
}

static void bench_pool(long iters)
{
	struct util_pool pool;
	void *o[8];
	double t0;
	long i;

	util_pool_init(&pool, 256, 64, 64, 64, 0, NULL, NULL);
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		for (int k = 0; k < 8; k++)
			o[k] = util_pool_get(&pool);
		for (int k = 0; k < 8; k++)
			util_pool_put(&pool, o[k]);
	}
	printf("pool get+put: %.2f ns/object\n",
	       (now_ns() - t0) / (double)iters / 8);
	util_pool_fini(&pool);
}

static int bench_domain_close(struct fid *fid)
{
	return 0;
}

static const struct fi_ops bench_domain_fi_ops = {
	.size = sizeof(struct fi_ops), .close = bench_domain_close,
	.bind = util_domain_bind, .control = util_no_control,
	.ops_open = util_no_ops_open, .tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 10000000;
	struct fi_fabric_attr fattr = { .api_version = FI_VERSION(1, 17) };
	struct fi_domain_attr dattr = { 0 };
	struct fi_info info = { .domain_attr = &dattr };
	struct util_domain dom;
	struct fid_fabric *fabric;

	if (util_fabric_open(&bench_prov, &fattr, &bench_fabric_ops, &fabric,
			     NULL))
		return 1;
	for (int safe = 0; safe < 2; safe++) {
		dattr.threading = safe ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
		if (util_domain_init(&dom, to_util_fabric(fabric), &info,
				     &bench_domain_fi_ops, &bench_domain_ops,
				     NULL))
			return 1;
		bench_cq(&dom, safe ? "FI_THREAD_SAFE" : "FI_THREAD_DOMAIN",
			 iters);
		util_domain_fini(&dom);
	}
	bench_match(iters);
	bench_atomic(iters / 4);
	bench_pool(iters);
	fi_close(&fabric->fid);
	return 0;
}
