/* SPDX-License-Identifier: MIT */
/* Data patterns, message sizes, time, statistics and report output. */
#define _GNU_SOURCE
#include "ft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* position- and seed-dependent bytes: a shifted, truncated or stale buffer
 * never matches, and neither does another message's pattern */
static inline uint8_t ft_pattern_byte(size_t i, uint32_t seed)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + (uint32_t)(i >> 16);

	return (uint8_t)(x >> 24 ^ x >> 11 ^ seed);
}

void ft_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = ft_pattern_byte(i, seed);
}

int ft_verify(struct ft_ctx *ctx, const void *buf, size_t len, uint32_t seed, const char *what)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++) {
		if (p[i] != ft_pattern_byte(i, seed)) {
			FT_ERR(ctx, "%s: data mismatch at byte %zu of %zu: got 0x%02x, want 0x%02x",
			       what, i, len, p[i], ft_pattern_byte(i, seed));
			return -1;
		}
	}
	return 0;
}

void *ft_alloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len ? len : 1))
		return NULL;
	memset(p, 0, len ? len : 1);
	return p;
}

static int ft_size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static size_t ft_sizes_add(size_t *out, size_t n, size_t cap, size_t v, size_t max)
{
	if (v <= max && n < cap)
		out[n++] = v;
	return n;
}

size_t ft_sizes(struct ft_ctx *ctx, size_t max, size_t *out, size_t cap)
{
	size_t n = 0, inj = ctx->info ? ctx->info->tx_attr->inject_size : 0, m = 0;

	if (ctx->info && ctx->info->ep_attr->max_msg_size < max)
		max = ctx->info->ep_attr->max_msg_size;
	n = ft_sizes_add(out, n, cap, 0, max);
	for (size_t s = 1; s <= max; s <<= 1) {
		n = ft_sizes_add(out, n, cap, s, max);
		if (s >= 4) {
			n = ft_sizes_add(out, n, cap, s - 1, max);
			n = ft_sizes_add(out, n, cap, s + 1, max);
		}
	}
	/* around the provider's advertised thresholds */
	if (inj) {
		n = ft_sizes_add(out, n, cap, inj - 1, max);
		n = ft_sizes_add(out, n, cap, inj, max);
		n = ft_sizes_add(out, n, cap, inj + 1, max);
	}
	n = ft_sizes_add(out, n, cap, max, max);
	qsort(out, n, sizeof(*out), ft_size_cmp);
	for (size_t i = 0; i < n; i++)
		if ((!m || out[m - 1] != out[i]) && out[i] >= ctx->opts->min_size)
			out[m++] = out[i];
	return m;
}

uint64_t ft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int ft_dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double ft_pct(const double *v, int n, double p)
{
	double idx = p * (n - 1);
	int lo = (int)floor(idx), hi = (int)ceil(idx);

	return v[lo] + (v[hi] - v[lo]) * (idx - lo);
}

void ft_stat_compute(double *v, int n, struct ft_stat *s)
{
	qsort(v, (size_t)n, sizeof(*v), ft_dbl_cmp);
	s->min = v[0];
	s->max = v[n - 1];
	s->median = ft_pct(v, n, 0.5);
	s->p10 = ft_pct(v, n, 0.1);
	s->p90 = ft_pct(v, n, 0.9);
}

static const char *ft_prov_name(struct ft_ctx *ctx)
{
	return ctx->info ? ctx->info->fabric_attr->prov_name : "?";
}

void ft_report_begin(struct ft_ctx *ctx, const char *bench)
{
	switch (ctx->opts->out) {
	case FT_OUT_CSV:
		printf("bench,provider,size,iters,usec_median,usec_min,usec_max,usec_p10,usec_p90,"
		       "mbps,mmsgs\n");
		break;
	case FT_OUT_JSON:
		printf("{\"bench\": \"%s\", \"provider\": \"%s\", \"results\": [\n", bench,
		       ft_prov_name(ctx));
		break;
	default:
		printf("# %s over %s (%d reps; median, spread p10..p90)\n", bench,
		       ft_prov_name(ctx), ctx->opts->reps);
		printf("%10s %8s %12s %21s %12s %10s\n", "bytes", "iters", "usec", "p10..p90",
		       "MB/s", "Mmsg/s");
	}
}

void ft_report_row(struct ft_ctx *ctx, const char *bench, const struct ft_report_row *r)
{
	static int rows;

	switch (ctx->opts->out) {
	case FT_OUT_CSV:
		printf("%s,%s,%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.4f\n", bench,
		       ft_prov_name(ctx), r->size, r->iters, r->usec.median, r->usec.min,
		       r->usec.max, r->usec.p10, r->usec.p90, r->mbps, r->mmsgs);
		break;
	case FT_OUT_JSON:
		printf("%s  {\"size\": %zu, \"iters\": %d, \"usec_median\": %.3f, "
		       "\"usec_min\": %.3f, \"usec_max\": %.3f, \"usec_p10\": %.3f, "
		       "\"usec_p90\": %.3f, \"mbps\": %.2f, \"mmsgs\": %.4f}",
		       rows++ ? ",\n" : "", r->size, r->iters, r->usec.median, r->usec.min,
		       r->usec.max, r->usec.p10, r->usec.p90, r->mbps, r->mmsgs);
		break;
	default: {
		char spread[32];

		snprintf(spread, sizeof(spread), "%.2f..%.2f", r->usec.p10, r->usec.p90);
		printf("%10zu %8d %12.3f %21s %12.2f %10.4f\n", r->size, r->iters,
		       r->usec.median, spread, r->mbps, r->mmsgs);
	}
	}
	fflush(stdout);
}

void ft_report_end(struct ft_ctx *ctx, const char *bench)
{
	if (ctx->opts->out == FT_OUT_JSON)
		printf("\n]}\n");
	fflush(stdout);
}
