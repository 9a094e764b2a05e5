/* SPDX-License-Identifier: MIT */
/*
 * The srd RDM provider end to end, two endpoints in one process over
 * softsrd: data checked byte for byte at every protocol threshold (eager,
 * medium, long by RDMA read), expected and unexpected, tagged order,
 * truncation, the handshake with an unknown sender, peek/claim/discard,
 * cancel, multi-recv, remote CQ data, inject, iovs, bad arguments.
 */
#include "test_srd_rdm_common.h"
#include "../src/rdm/srd_rdm.h"

#include <stdlib.h>
#include <string.h>

#define MEDIUM_MAX (64 * 1024)	/* SRD_MEDIUM_MAX */

static size_t sizes[16];
static int nsizes;

static void sizes_init(const struct tfab *f)
{
	const size_t s[] = {
		0, 1, f->eager_max - 1, f->eager_max, f->eager_max + 1,
		f->mtu - 1, f->mtu, f->mtu + 1, 2 * f->eager_max + 3,
		MEDIUM_MAX - 1, MEDIUM_MAX, MEDIUM_MAX + 1, 1 << 20,
	};

	nsizes = (int)(sizeof(s) / sizeof(s[0]));
	memcpy(sizes, s, sizeof(s));
}

static void check_recv(struct tfab *f, void *ctx, size_t len, uint64_t tag,
		       bool tagged)
{
	struct tent t;

	tfab_wait(f, &f->b, 1);
	t = tfab_take(&f->b);
	assert_int_equal(t.err, 0);
	assert_ptr_equal(t.e.op_context, ctx);
	assert_int_equal(t.e.len, len);
	assert_true(t.e.flags & FI_RECV);
	assert_true(t.e.flags & (tagged ? FI_TAGGED : FI_MSG));
	if (tagged)
		assert_int_equal(t.e.tag, tag);
	assert_int_equal(t.src, f->b.peer);
}

static void check_send(struct tfab *f, void *ctx)
{
	struct tent t;

	tfab_wait(f, &f->a, 1);
	t = tfab_take(&f->a);
	assert_int_equal(t.err, 0);
	assert_ptr_equal(t.e.op_context, ctx);
	assert_true(t.e.flags & FI_SEND);
}

static void roundtrip(struct tfab *f, size_t len, bool tagged,
		      bool unexpected, unsigned int seed)
{
	uint8_t *src = malloc(len + 1), *dst = malloc(len + 1);
	int sctx, rctx;
	int i;

	assert_non_null(src);
	assert_non_null(dst);
	tfab_fill(src, len, seed);
	memset(dst, 0xee, len + 1);
	if (!unexpected)
		tfab_recv(f, dst, len, 7, tagged, &rctx);
	tfab_send(f, src, len, 7, tagged, &sctx);
	if (unexpected) {
		for (i = 0; i < 2000; i++)
			tfab_poll(f);
		tfab_recv(f, dst, len, 7, tagged, &rctx);
	}
	check_recv(f, &rctx, len, 7, tagged);
	check_send(f, &sctx);
	tfab_check(dst, len, seed);
	assert_int_equal(dst[len], 0xee);
	free(src);
	free(dst);
}

static void run_sizes(bool tagged, bool unexpected)
{
	struct tfab f;
	int i;

	tfab_open(&f, 0, true);
	sizes_init(&f);
	for (i = 0; i < nsizes; i++)
		roundtrip(&f, sizes[i], tagged, unexpected, (unsigned int)i + 1);
	tfab_close(&f);
}

static void test_sizes_msg_expected(void **state)
{
	run_sizes(false, false);
}

static void test_sizes_msg_unexpected(void **state)
{
	run_sizes(false, true);
}

static void test_sizes_tagged_expected(void **state)
{
	run_sizes(true, false);
}

static void test_sizes_tagged_unexpected(void **state)
{
	run_sizes(true, true);
}

/* Messages of one tag, mixed protocols, arrive in send order (SAS). */
static void test_tagged_order(void **state)
{
	enum { N = 24 };
	struct tfab f;
	size_t len[N];
	uint8_t *src[N], *dst[N];
	int sctx[N], rctx[N], i, round;

	tfab_open(&f, 0, true);
	sizes_init(&f);
	for (round = 0; round < 2; round++) {
		for (i = 0; i < N; i++) {
			len[i] = sizes[(i * 5 + round) % nsizes];
			src[i] = malloc(len[i] + 1);
			dst[i] = calloc(1, len[i] + 1);
			tfab_fill(src[i], len[i], (unsigned int)(i + 100));
			if (round)
				tfab_recv(&f, dst[i], len[i], 42, true,
					 &rctx[i]);
		}
		for (i = 0; i < N; i++)
			tfab_send(&f, src[i], len[i], 42, true, &sctx[i]);
		if (!round)
			for (i = 0; i < N; i++)
				tfab_recv(&f, dst[i], len[i], 42, true,
					 &rctx[i]);
		tfab_wait(&f, &f.b, N);
		tfab_wait(&f, &f.a, N);
		/* Completions may come in any order (a long message
		 * completes after its reads); matching is in send order:
		 * receive i holds message i. */
		for (i = 0; i < N; i++) {
			struct tent t = tfab_take(&f.b);
			int k = (int)((int *)t.e.op_context - rctx);

			assert_int_equal(t.err, 0);
			assert_true(k >= 0 && k < N);
			assert_int_equal(t.e.len, len[k]);
			tfab_check(dst[k], len[k], (unsigned int)(k + 100));
		}
		while (f.a.n)
			assert_int_equal(tfab_take(&f.a).err, 0);
		for (i = 0; i < N; i++) {
			free(src[i]);
			free(dst[i]);
		}
	}
	tfab_close(&f);
}

static void trunc_one(struct tfab *f, size_t len, unsigned int seed)
{
	size_t cap = len / 2;
	uint8_t *src = malloc(len), *dst = calloc(1, cap + 1);
	int sctx, rctx;
	struct tent t;

	tfab_fill(src, len, seed);
	tfab_recv(f, dst, cap, 3, true, &rctx);
	tfab_send(f, src, len, 3, true, &sctx);
	tfab_wait(f, &f->b, 1);
	t = tfab_take(&f->b);
	assert_int_equal(t.err, FI_ETRUNC);
	assert_ptr_equal(t.e.op_context, &rctx);
	assert_int_equal(t.olen, len - cap);
	tfab_check(dst, cap, seed);
	assert_int_equal(dst[cap], 0);
	check_send(f, &sctx);
	free(src);
	free(dst);
}

static void test_truncation(void **state)
{
	struct tfab f;

	tfab_open(&f, 0, true);
	trunc_one(&f, 100, 1);
	trunc_one(&f, 3 * f.eager_max, 2);
	trunc_one(&f, 300000, 3);
	tfab_close(&f);
}

/* b does not know a: HELLO creates the peer, the source is NOTAVAIL until
 * b inserts a; then b can answer. */
static void test_handshake_unknown_source(void **state)
{
	struct tfab f;
	char buf[16] = "hello", in[16];
	int sctx, rctx;
	struct tent t;

	tfab_open(&f, FI_MSG | FI_TAGGED | FI_SOURCE, false);
	tfab_recv(&f, in, sizeof(in), 0, false, &rctx);
	tfab_send(&f, buf, sizeof(buf), 0, false, &sctx);
	tfab_wait(&f, &f.b, 1);
	t = tfab_take(&f.b);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.src, FI_ADDR_NOTAVAIL);
	assert_string_equal(in, "hello");
	check_send(&f, &sctx);

	assert_int_equal(fi_av_insert(f.b.av, f.a.name, 1, &f.b.peer, 0,
				      NULL), 1);
	roundtrip(&f, 10, false, false, 9);
	/* and back: b -> a over the peer the HELLO created */
	assert_int_equal(fi_recv(f.a.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC,
				 &rctx), 0);
	assert_int_equal(fi_send(f.b.ep, "back", 5, NULL, f.b.peer, &sctx), 0);
	tfab_wait(&f, &f.a, 1);
	t = tfab_take(&f.a);
	assert_int_equal(t.err, 0);
	assert_ptr_equal(t.e.op_context, &rctx);
	assert_string_equal(in, "back");
	assert_int_equal(t.src, f.a.peer);
	tfab_wait(&f, &f.b, 1);
	assert_int_equal(tfab_take(&f.b).err, 0);
	tfab_close(&f);
}

static ssize_t trecvmsg(struct tfab *f, void *buf, size_t len, uint64_t tag,
			void *ctx, uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = buf ? 1 : 0,
		.addr = FI_ADDR_UNSPEC, .tag = tag, .context = ctx,
	};

	return fi_trecvmsg(f->b.ep, &m, flags);
}

static void test_peek_claim_discard(void **state)
{
	struct tfab f;
	struct fi_context pctx, cctx;
	size_t mlen;
	uint8_t *src, *dst;
	int sctx[3], i;
	struct tent t;

	tfab_open(&f, 0, true);
	mlen = 3 * f.eager_max + 5;
	src = malloc(mlen);
	dst = calloc(1, mlen);
	tfab_fill(src, mlen, 77);
	/* nothing yet */
	assert_int_equal(trecvmsg(&f, NULL, 0, 5, &pctx, FI_PEEK), 0);
	tfab_wait(&f, &f.b, 1);
	assert_int_equal(tfab_take(&f.b).err, FI_ENOMSG);

	tfab_send(&f, src, 10, 5, true, &sctx[0]);
	tfab_send(&f, src, mlen, 6, true, &sctx[1]);
	tfab_send(&f, src, 20, 8, true, &sctx[2]);
	tfab_wait(&f, &f.a, 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(tfab_take(&f.a).err, 0);

	assert_int_equal(trecvmsg(&f, NULL, 0, 5, &pctx, FI_PEEK), 0);
	tfab_wait(&f, &f.b, 1);
	t = tfab_take(&f.b);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.e.len, 10);
	assert_int_equal(t.e.tag, 5);

	assert_int_equal(trecvmsg(&f, NULL, 0, 6, &cctx, FI_PEEK | FI_CLAIM),
			 0);
	tfab_wait(&f, &f.b, 1);
	assert_int_equal(tfab_take(&f.b).e.len, mlen);
	/* claimed: an ordinary receive of tag 6 no longer sees it */
	assert_int_equal(trecvmsg(&f, NULL, 0, 6, &pctx, FI_PEEK), 0);
	tfab_wait(&f, &f.b, 1);
	assert_int_equal(tfab_take(&f.b).err, FI_ENOMSG);
	assert_int_equal(trecvmsg(&f, dst, mlen, 6, &cctx, FI_CLAIM), 0);
	tfab_wait(&f, &f.b, 1);
	t = tfab_take(&f.b);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.e.len, mlen);
	tfab_check(dst, mlen, 77);
	/* a claim with a context that claimed nothing */
	assert_int_equal(trecvmsg(&f, dst, mlen, 6, &pctx, FI_CLAIM),
			 -FI_EINVAL);

	assert_int_equal(trecvmsg(&f, NULL, 0, 8, &pctx, FI_PEEK | FI_DISCARD),
			 0);
	tfab_wait(&f, &f.b, 1);
	assert_int_equal(tfab_take(&f.b).e.len, 20);
	assert_int_equal(trecvmsg(&f, NULL, 0, 8, &pctx, FI_PEEK), 0);
	tfab_wait(&f, &f.b, 1);
	assert_int_equal(tfab_take(&f.b).err, FI_ENOMSG);
	/* tag 5 is still there */
	memset(dst, 0, mlen);
	tfab_recv(&f, dst, 10, 5, true, &sctx[0]);
	tfab_wait(&f, &f.b, 1);
	assert_int_equal(tfab_take(&f.b).e.len, 10);
	tfab_check(dst, 10, 77);
	free(src);
	free(dst);
	tfab_close(&f);
}

static void test_cancel(void **state)
{
	struct tfab f;
	char buf[8];
	int ctx;
	struct tent t;

	tfab_open(&f, 0, true);
	tfab_recv(&f, buf, sizeof(buf), 1, true, &ctx);
	assert_int_equal(fi_cancel(&f.b.ep->fid, &ctx), 0);
	assert_int_equal(fi_cancel(&f.b.ep->fid, &ctx), -FI_ENOENT);
	tfab_wait(&f, &f.b, 1);
	t = tfab_take(&f.b);
	assert_int_equal(t.err, FI_ECANCELED);
	assert_ptr_equal(t.e.op_context, &ctx);
	tfab_close(&f);
}

static void test_multi_recv(void **state)
{
	struct tfab f;
	size_t lens[3], total, min = 64;
	uint8_t *buf, *src;
	struct iovec iov;
	struct fi_msg m = { .msg_iov = &iov, .iov_count = 1,
			    .addr = FI_ADDR_UNSPEC };
	int ctx, sctx, i;

	tfab_open(&f, FI_MSG | FI_MULTI_RECV, true);
	lens[0] = 100;
	lens[1] = 2 * f.eager_max + 1;
	lens[2] = 50;
	total = lens[0] + lens[1] + lens[2] + min - 1;
	buf = calloc(1, total);
	src = malloc(lens[1]);
	iov.iov_base = buf;
	iov.iov_len = total;
	m.context = &ctx;
	assert_int_equal(fi_setopt(&f.b.ep->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
			 0);
	assert_int_equal(fi_recvmsg(f.b.ep, &m, FI_MULTI_RECV), 0);
	for (i = 0; i < 3; i++) {
		tfab_fill(src, lens[i], (unsigned int)i + 30);
		tfab_send(&f, src, lens[i], 0, false, &sctx);
		tfab_wait(&f, &f.a, 1);
		assert_int_equal(tfab_take(&f.a).err, 0);
		tfab_wait(&f, &f.b, 1);
		struct tent t = tfab_take(&f.b);

		assert_int_equal(t.err, 0);
		assert_int_equal(t.e.len, lens[i]);
		assert_non_null(t.e.buf);
		tfab_check(t.e.buf, lens[i], (unsigned int)i + 30);
		assert_int_equal(!!(t.e.flags & FI_MULTI_RECV), i == 2);
	}
	free(buf);
	free(src);
	tfab_close(&f);
}

/* Messages unexpected at b before its multi-recv buffer is posted: the
 * buffer takes them at post time, in order, data checked. */
static void test_multi_recv_unexpected(void **state)
{
	struct tfab f;
	size_t lens[3] = { 40, 300, 7 }, total = 40 + 300 + 7;
	uint8_t *buf, src[300];
	struct iovec iov;
	struct fi_msg m = { .msg_iov = &iov, .iov_count = 1,
			    .addr = FI_ADDR_UNSPEC };
	size_t min = 1, off = 0;
	int ctx, sctx[3], i;
	struct tent t;

	tfab_open(&f, FI_MSG | FI_MULTI_RECV, true);
	buf = calloc(1, total);
	for (i = 0; i < 3; i++) {
		tfab_fill(src, lens[i], (unsigned int)i + 60);
		tfab_send(&f, src, lens[i], 0, false, &sctx[i]);
		check_send(&f, &sctx[i]);
	}
	/* all three wait unexpected at b */
	for (i = 0; i < 20000; i++)
		tfab_poll(&f);
	assert_int_equal(f.b.n, 0);
	iov.iov_base = buf;
	iov.iov_len = total;
	m.context = &ctx;
	assert_int_equal(fi_setopt(&f.b.ep->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
			 0);
	assert_int_equal(fi_recvmsg(f.b.ep, &m, FI_MULTI_RECV), 0);
	for (i = 0; i < 3; i++) {
		tfab_wait(&f, &f.b, 1);
		t = tfab_take(&f.b);
		assert_int_equal(t.err, 0);
		assert_int_equal(t.e.len, lens[i]);
		assert_ptr_equal(t.e.buf, buf + off);
		tfab_check(buf + off, lens[i], (unsigned int)i + 60);
		off += lens[i];
	}
	free(buf);
	tfab_close(&f);
}

/* The remaining send and receive calls: fi_sendmsg, fi_injectdata,
 * fi_tsendv/fi_trecvv, fi_tsendmsg with CQ data, fi_tinject,
 * fi_tsenddata; a claimed message with CQ data discarded. */
static void test_api_variants(void **state)
{
	struct tfab f;
	uint8_t s1[50], s2[70], r1[60], r2[60], small[64];
	struct iovec siov[2] = { { s1, sizeof(s1) }, { s2, sizeof(s2) } };
	struct iovec riov[2] = { { r1, sizeof(r1) }, { r2, sizeof(r2) } };
	struct fi_msg m = { .msg_iov = siov, .iov_count = 2 };
	struct fi_msg_tagged tm = { .msg_iov = siov, .iov_count = 1,
				    .tag = 6, .data = 0xabc };
	struct fi_context cctx;
	int ctx, rctx;
	struct tent t;

	tfab_open(&f, 0, true);
	tfab_fill(s1, sizeof(s1), 1);
	tfab_fill(s2, sizeof(s2), 2);
	m.addr = f.a.peer;
	m.context = &ctx;
	tm.addr = f.a.peer;
	tm.context = &ctx;

	/* fi_sendmsg, two iovs, into fi_trecvv's sibling fi_recvv */
	assert_int_equal(fi_recvv(f.b.ep, riov, NULL, 2, FI_ADDR_UNSPEC,
				  &rctx), 0);
	assert_int_equal(fi_sendmsg(f.a.ep, &m, FI_COMPLETION), 0);
	check_recv(&f, &rctx, sizeof(s1) + sizeof(s2), 0, false);
	check_send(&f, &ctx);
	assert_memory_equal(r1, s1, sizeof(s1));
	assert_memory_equal(r1 + sizeof(s1), s2, sizeof(r1) - sizeof(s1));
	assert_memory_equal(r2, s2 + sizeof(r1) - sizeof(s1),
			    sizeof(s2) - (sizeof(r1) - sizeof(s1)));

	/* fi_injectdata: data and CQ data, no sender completion */
	assert_int_equal(fi_recv(f.b.ep, small, sizeof(small), NULL,
				 FI_ADDR_UNSPEC, &rctx), 0);
	assert_int_equal(fi_injectdata(f.a.ep, s1, 16, 0x55, f.a.peer), 0);
	tfab_wait(&f, &f.b, 1);
	t = tfab_take(&f.b);
	assert_true(t.e.flags & FI_REMOTE_CQ_DATA);
	assert_int_equal(t.e.data, 0x55);
	assert_memory_equal(small, s1, 16);

	/* fi_tsendv / fi_trecvv */
	memset(r1, 0, sizeof(r1));
	memset(r2, 0, sizeof(r2));
	assert_int_equal(fi_trecvv(f.b.ep, riov, NULL, 2, FI_ADDR_UNSPEC, 5,
				   0, &rctx), 0);
	assert_int_equal(fi_tsendv(f.a.ep, siov, NULL, 2, f.a.peer, 5, &ctx),
			 0);
	check_recv(&f, &rctx, sizeof(s1) + sizeof(s2), 5, true);
	check_send(&f, &ctx);
	assert_memory_equal(r1, s1, sizeof(s1));

	/* fi_tsendmsg with CQ data */
	assert_int_equal(fi_trecv(f.b.ep, small, sizeof(small), NULL,
				  FI_ADDR_UNSPEC, 6, 0, &rctx), 0);
	assert_int_equal(fi_tsendmsg(f.a.ep, &tm,
				     FI_COMPLETION | FI_REMOTE_CQ_DATA), 0);
	tfab_wait(&f, &f.b, 1);
	t = tfab_take(&f.b);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.e.tag, 6);
	assert_int_equal(t.e.data, 0xabc);
	assert_memory_equal(small, s1, sizeof(s1));
	check_send(&f, &ctx);

	/* fi_tinject */
	assert_int_equal(fi_trecv(f.b.ep, small, sizeof(small), NULL,
				  FI_ADDR_UNSPEC, 7, 0, &rctx), 0);
	assert_int_equal(fi_tinject(f.a.ep, s2, 33, f.a.peer, 7), 0);
	tfab_wait(&f, &f.b, 1);
	assert_int_equal(tfab_take(&f.b).e.len, 33);
	assert_memory_equal(small, s2, 33);

	/* fi_tsenddata, unexpected, peeked and claimed, then discarded:
	 * the claim's completion still carries the CQ data */
	assert_int_equal(fi_tsenddata(f.a.ep, s1, 20, NULL, 0x77, f.a.peer,
				      8, &ctx), 0);
	check_send(&f, &ctx);
	do {
		assert_int_equal(trecvmsg(&f, NULL, 0, 8, &cctx,
					  FI_PEEK | FI_CLAIM), 0);
		tfab_wait(&f, &f.b, 1);
		t = tfab_take(&f.b);
	} while (t.err == FI_ENOMSG);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.e.data, 0x77);
	assert_int_equal(trecvmsg(&f, NULL, 0, 8, &cctx,
				  FI_CLAIM | FI_DISCARD), 0);
	tfab_wait(&f, &f.b, 1);
	t = tfab_take(&f.b);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.e.tag, 8);
	assert_int_equal(t.e.data, 0x77);
	assert_true(t.e.flags & FI_REMOTE_CQ_DATA);
	tfab_close(&f);
}

static void test_cq_data_inject_iov(void **state)
{
	struct tfab f;
	uint8_t *src, *dst;
	size_t len;
	struct iovec siov[3], riov[2];
	int ctx;
	struct tent t;
	char small[32];

	tfab_open(&f, 0, true);
	/* senddata: remote CQ data with the receive */
	assert_int_equal(fi_recv(f.b.ep, small, sizeof(small), NULL,
				 FI_ADDR_UNSPEC, &ctx), 0);
	assert_int_equal(fi_senddata(f.a.ep, "data", 5, NULL, 0xdeadbeef,
				     f.a.peer, &ctx), 0);
	tfab_wait(&f, &f.b, 1);
	t = tfab_take(&f.b);
	assert_true(t.e.flags & FI_REMOTE_CQ_DATA);
	assert_int_equal(t.e.data, 0xdeadbeef);
	check_send(&f, &ctx);

	/* inject: no completion at the sender, data arrives */
	assert_int_equal(fi_trecv(f.b.ep, small, sizeof(small), NULL,
				  FI_ADDR_UNSPEC, 9, 0, &ctx), 0);
	assert_int_equal(fi_tinjectdata(f.a.ep, "inj", 4, 17, f.a.peer, 9), 0);
	tfab_wait(&f, &f.b, 1);
	t = tfab_take(&f.b);
	assert_string_equal(small, "inj");
	assert_int_equal(t.e.data, 17);
	assert_int_equal(f.a.n, 0);
	assert_int_equal(fi_inject(f.a.ep, small, f.eager_max + 1, f.a.peer),
			 -FI_EINVAL);

	/* sendv / recvv across iov boundaries, medium sized */
	len = 3 * f.eager_max;
	src = malloc(len);
	dst = calloc(1, len);
	tfab_fill(src, len, 55);
	siov[0] = (struct iovec){ src, 10 };
	siov[1] = (struct iovec){ src + 10, len / 2 };
	siov[2] = (struct iovec){ src + 10 + len / 2, len - 10 - len / 2 };
	riov[0] = (struct iovec){ dst, len / 3 };
	riov[1] = (struct iovec){ dst + len / 3, len - len / 3 };
	assert_int_equal(fi_recvv(f.b.ep, riov, NULL, 2, FI_ADDR_UNSPEC, &ctx),
			 0);
	assert_int_equal(fi_sendv(f.a.ep, siov, NULL, 3, f.a.peer, &ctx), 0);
	check_recv(&f, &ctx, len, 0, false);
	check_send(&f, &ctx);
	tfab_check(dst, len, 55);
	free(src);
	free(dst);
	tfab_close(&f);
}

/* FI_INJECT as a flag of fi_sendmsg / fi_tsendmsg only lets the caller
 * reuse its buffer at return: the send completes with its context (only
 * the fi_inject calls go without one). Over inject_size: -FI_EINVAL. */
static void test_inject_flag_completes(void **state)
{
	struct tfab f;
	uint8_t *src, *dst;
	struct iovec iov;
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1 };
	struct fi_msg_tagged tmsg = { .msg_iov = &iov, .iov_count = 1,
				      .tag = 5 };
	int sctx, tctx, rctx;

	(void)state;
	tfab_open(&f, 0, true);
	src = malloc(f.eager_max + 1);
	dst = calloc(1, f.eager_max + 1);
	assert_non_null(src);
	assert_non_null(dst);
	iov = (struct iovec){ src, f.eager_max };
	msg.addr = tmsg.addr = f.a.peer;

	tfab_fill(src, f.eager_max, 61);
	tfab_recv(&f, dst, f.eager_max, 0, false, &rctx);
	msg.context = &sctx;
	TFAB_POST(&f, fi_sendmsg(f.a.ep, &msg, FI_INJECT | FI_COMPLETION));
	memset(src, 0xee, f.eager_max);
	check_recv(&f, &rctx, f.eager_max, 0, false);
	tfab_check(dst, f.eager_max, 61);
	check_send(&f, &sctx);

	tfab_fill(src, f.eager_max, 62);
	tfab_recv(&f, dst, f.eager_max, 5, true, &rctx);
	tmsg.context = &tctx;
	TFAB_POST(&f, fi_tsendmsg(f.a.ep, &tmsg, FI_INJECT | FI_COMPLETION));
	memset(src, 0xee, f.eager_max);
	check_recv(&f, &rctx, f.eager_max, 5, true);
	tfab_check(dst, f.eager_max, 62);
	check_send(&f, &tctx);

	iov.iov_len = f.eager_max + 1;
	assert_int_equal(fi_sendmsg(f.a.ep, &msg, FI_INJECT), -FI_EINVAL);
	assert_int_equal(fi_tsendmsg(f.a.ep, &tmsg, FI_INJECT), -FI_EINVAL);
	free(src);
	free(dst);
	tfab_close(&f);
}

/* fi_poll on an srd domain: both endpoints' CQs in one set; polling it
 * alone progresses them until the receive's CQ has its entry. */
static void test_poll_set(void **state)
{
	struct fid_poll *ps;
	struct tfab f;
	char msg[] = "poll", got[8] = { 0 };
	void *ctx[4];
	long i;
	int rctx, sctx;

	(void)state;
	tfab_open(&f, 0, true);
	assert_int_equal(fi_poll_open(f.domain, &(struct fi_poll_attr){ 0 },
				      &ps), 0);
	assert_int_equal(fi_poll_add(ps, &f.a.cq->fid, 0), 0);
	assert_int_equal(fi_poll_add(ps, &f.b.cq->fid, 0), 0);
	assert_int_equal(fi_recv(f.b.ep, got, sizeof(got), NULL,
				 FI_ADDR_UNSPEC, &rctx), 0);
	TFAB_POST(&f, fi_send(f.a.ep, msg, sizeof(msg), NULL, f.a.peer,
			      &sctx));
	for (i = 0; i < 4000000 && strcmp(got, "poll"); i++)
		assert_true(fi_poll(ps, ctx, 4) >= 0);
	assert_string_equal(got, "poll");
	assert_true(fi_poll(ps, ctx, 4) >= 1);
	check_recv(&f, &rctx, sizeof(msg), 0, false);
	check_send(&f, &sctx);
	assert_int_equal(fi_poll(ps, ctx, 4), 0);
	assert_int_equal(fi_poll_del(ps, &f.a.cq->fid, 0), 0);
	assert_int_equal(fi_poll_del(ps, &f.b.cq->fid, 0), 0);
	assert_int_equal(fi_close(&ps->fid), 0);
	tfab_close(&f);
}

/* A message with no iov at all (msg_iov NULL, iov_count 0), as Open MPI's
 * ofi MTL sends its MPI_Ssend acknowledgement: a zero-byte message that
 * matches like any other. The sanitizer build checks that nothing reads
 * through the NULL iov array. */
static void test_sendmsg_no_iov(void **state)
{
	struct fi_msg_tagged tmsg = { .addr = FI_ADDR_UNSPEC, .tag = 0x5e };
	struct fi_msg msg = { .addr = FI_ADDR_UNSPEC };
	struct tfab f;
	char buf[8];
	int rctx, sctx;

	tfab_open(&f, 0, true);
	tmsg.addr = f.a.peer;
	tmsg.context = &sctx;
	TFAB_POST(&f, fi_trecv(f.b.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			       0x5e, 0, &rctx));
	TFAB_POST(&f, fi_tsendmsg(f.a.ep, &tmsg, FI_COMPLETION));
	check_recv(&f, &rctx, 0, 0x5e, true);
	check_send(&f, &sctx);

	msg.addr = f.a.peer;
	msg.context = &sctx;
	TFAB_POST(&f, fi_recv(f.b.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			      &rctx));
	TFAB_POST(&f, fi_sendmsg(f.a.ep, &msg, FI_COMPLETION));
	check_recv(&f, &rctx, 0, 0, false);
	check_send(&f, &sctx);

	/* receives with no iov: posted first, and taking an unexpected one */
	tmsg.msg_iov = NULL;
	tmsg.addr = FI_ADDR_UNSPEC;
	tmsg.context = &rctx;
	TFAB_POST(&f, fi_trecvmsg(f.b.ep, &tmsg, FI_COMPLETION));
	TFAB_POST(&f, fi_tsend(f.a.ep, NULL, 0, NULL, f.a.peer, 0x5e, &sctx));
	check_recv(&f, &rctx, 0, 0x5e, true);
	check_send(&f, &sctx);
	TFAB_POST(&f, fi_tsend(f.a.ep, NULL, 0, NULL, f.a.peer, 0x5f, &sctx));
	check_send(&f, &sctx);
	tmsg.tag = 0x5f;
	TFAB_POST(&f, fi_trecvmsg(f.b.ep, &tmsg, FI_COMPLETION));
	check_recv(&f, &rctx, 0, 0x5f, true);
	tfab_close(&f);
}

static void test_bad_args(void **state)
{
	struct tfab f;
	struct iovec iov[5] = { { 0 } };
	char buf[8];

	tfab_open(&f, 0, true);
	assert_int_equal(fi_sendv(f.a.ep, iov, NULL, 5, f.a.peer, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_recvv(f.b.ep, iov, NULL, 5, FI_ADDR_UNSPEC, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_send(f.a.ep, buf, 1, NULL, 99, NULL), -FI_EINVAL);
	tfab_close(&f);
}

/* A peer that is gone gives an error completion, not a hang. */
static void test_peer_gone(void **state)
{
	struct tfab f;
	char buf[64] = "x";
	int ctx, ctx2;
	struct tent t, t2;
	void *big;

	tfab_open(&f, 0, true);
	roundtrip(&f, 8, false, false, 4);
	assert_int_equal(fi_close(&f.b.ep->fid), 0);
	f.b.ep = NULL;
	tfab_send(&f, buf, sizeof(buf), 0, false, &ctx);
	tfab_wait(&f, &f.a, 1);
	t = tfab_take(&f.a);
	assert_int_not_equal(t.err, 0);
	assert_ptr_equal(t.e.op_context, &ctx);
	/* again, after the failure: a new handshake that fails, and a long
	 * message (which would wait for READ_DONE) */
	big = calloc(1, 1 << 20);
	tfab_send(&f, big, 1 << 20, 0, false, &ctx2);
	tfab_send(&f, buf, sizeof(buf), 0, false, &ctx);
	tfab_wait(&f, &f.a, 2);
	t = tfab_take(&f.a);
	assert_int_not_equal(t.err, 0);
	t2 = tfab_take(&f.a);
	assert_int_not_equal(t2.err, 0);
	assert_true((t.e.op_context == &ctx && t2.e.op_context == &ctx2) ||
		    (t.e.op_context == &ctx2 && t2.e.op_context == &ctx));
	free(big);
	tfab_close(&f);
}

/* RDMA read at both ends (softsrd's default): a long message goes by
 * LONG_RTS + RDMA read once the handshake told us the peer can be read
 * from; the first one to a new peer, whose features are not known yet,
 * goes by credits (CTS), which always work. */
static void test_long_protocol_choice(void **state)
{
	struct tfab f;
	struct srd_long_stats *st;
	uint64_t rts, cts;

	(void)state;
	tfab_open(&f, 0, true);
	st = &to_srd_ep(f.a.ep)->lstat;
	roundtrip(&f, 1 << 20, false, false, 21);	/* before the handshake */
	assert_int_equal(st->cts_rts, 1);
	assert_int_equal(st->long_rts, 0);
	rts = st->long_rts;
	cts = st->cts_rts;
	roundtrip(&f, 1 << 20, true, false, 22);
	roundtrip(&f, 1 << 20, false, true, 23);
	assert_int_equal(st->long_rts, rts + 2);
	assert_int_equal(st->cts_rts, cts);
	tfab_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_msg_expected),
		cmocka_unit_test(test_sizes_msg_unexpected),
		cmocka_unit_test(test_sizes_tagged_expected),
		cmocka_unit_test(test_sizes_tagged_unexpected),
		cmocka_unit_test(test_tagged_order),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_handshake_unknown_source),
		cmocka_unit_test(test_peek_claim_discard),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_multi_recv),
		cmocka_unit_test(test_multi_recv_unexpected),
		cmocka_unit_test(test_api_variants),
		cmocka_unit_test(test_cq_data_inject_iov),
		cmocka_unit_test(test_inject_flag_completes),
		cmocka_unit_test(test_poll_set),
		cmocka_unit_test(test_sendmsg_no_iov),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_peer_gone),
		cmocka_unit_test(test_long_protocol_choice),
	};

	tfab_env();
	return cmocka_run_group_tests_name("srd_rdm", tests, NULL, NULL);
}
