/* SPDX-License-Identifier: MIT */
/*
 * srd RMA over softsrd, two endpoints in one process: fi_write/fi_read of
 * many sizes (byte for byte, guards around the target untouched), iovecs,
 * wrong key / out of bounds / missing access giving an error completion
 * at the initiator with the target untouched, fi_writedata delivering its
 * 4 bytes in a remote CQ entry, fi_inject_write. Run twice: with the
 * device's RDMA (completing while only the initiator progresses) and with
 * the emulated protocol forced.
 */
#include "test_srd_rma_common.h"
#include "../src/rdm/srd_rma.h"
#include "../src/rdm/srd_opt.h"
#include "weft/fi_ext_weft.h"

#include <stdlib.h>
#include <string.h>

#define SEED_TARGET 11
#define SEED_SRC 77

static const size_t sizes[] = {
	1, 7, 64, 4095, 8192, 8864, 8865, 3 * 8864 + 5, 65536, 262147,
	TRMA_REGION - 128,
};

static struct trma *T(void **state)
{
	return *state;
}

/* Only the initiator progresses on the hardware path: completion without
 * the target's help is what shows the device did the work. */
static bool only_a(struct trma *t)
{
	return t->hw;
}

static int setup(void **state, bool emulate)
{
	struct trma *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	srd_rma_force_emulation = emulate;
	trma_open(t, FI_REMOTE_READ | FI_REMOTE_WRITE);
	t->hw = to_srd_ep(t->f.a.ep)->rma->hw_write;
	print_message("# %s RMA (device write %d read %d)\n",
		      t->hw ? "hardware" : "emulated",
		      to_srd_ep(t->f.a.ep)->rma->hw_write,
		      to_srd_ep(t->f.a.ep)->rma->hw_read);
	*state = t;
	return 0;
}

static int setup_hw(void **state)
{
	return setup(state, false);
}

static int setup_emu(void **state)
{
	return setup(state, true);
}

static int teardown(void **state)
{
	trma_close(T(state));
	free(T(state));
	srd_rma_force_emulation = false;
	return 0;
}

static void expect_ok(struct trma *t, void *ctx, uint64_t flags)
{
	struct tent e = trma_wait_a(t, only_a(t));

	if (e.err)
		fail_msg("error completion %d (prov_errno %d)", e.err,
			 e.prov_errno);
	assert_ptr_equal(e.e.op_context, ctx);
	assert_true((e.e.flags & flags) == flags);
}

static void expect_err(struct trma *t, void *ctx)
{
	struct tent e = trma_wait_a(t, false);

	assert_int_not_equal(e.err, 0);
	assert_ptr_equal(e.e.op_context, ctx);
	print_message("#   error completion: %s\n", fi_strerror(e.err));
}

static void test_write_sizes(void **state)
{
	struct trma *t = T(state);
	uint8_t *src = malloc(TRMA_REGION), *exp = malloc(TRMA_REGION +
							  2 * TRMA_GUARD);
	struct fid_mr *mr;
	size_t i, off;
	int ctx;

	assert_non_null(src);
	assert_non_null(exp);
	assert_int_equal(fi_mr_reg(t->f.domain, src, TRMA_REGION,
				   FI_WRITE | FI_READ, 0, 0, 0, &mr, NULL), 0);
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++) {
		off = (i * 13) % 97;
		trma_fill_target(t, SEED_TARGET);
		memcpy(exp, t->mem, TRMA_REGION + 2 * TRMA_GUARD);
		tfab_fill(src, sizes[i], SEED_SRC + (unsigned int)i);
		memcpy(exp + TRMA_GUARD + off, src, sizes[i]);
		/* every other size without desc: registered on the fly */
		assert_int_equal(fi_write(t->f.a.ep, src, sizes[i],
					  i % 2 ? fi_mr_desc(mr) : NULL,
					  t->f.a.peer, t->base + off, t->key,
					  &ctx), 0);
		expect_ok(t, &ctx, FI_RMA | FI_WRITE);
		if (memcmp(exp, t->mem, TRMA_REGION + 2 * TRMA_GUARD))
			fail_msg("write of %zu bytes at %zu: target differs",
				 sizes[i], off);
	}
	assert_int_equal(fi_close(&mr->fid), 0);
	free(src);
	free(exp);
}

static void test_read_sizes(void **state)
{
	struct trma *t = T(state);
	uint8_t *dst = malloc(TRMA_REGION + 2 * TRMA_GUARD);
	size_t i, off;
	int ctx;

	assert_non_null(dst);
	trma_fill_target(t, SEED_TARGET);
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++) {
		off = (i * 29) % 61;
		memset(dst, 0xee, TRMA_REGION + 2 * TRMA_GUARD);
		assert_int_equal(fi_read(t->f.a.ep, dst + TRMA_GUARD, sizes[i],
					 NULL, t->f.a.peer, t->base + off,
					 t->key, &ctx), 0);
		expect_ok(t, &ctx, FI_RMA | FI_READ);
		if (memcmp(dst + TRMA_GUARD, t->region + off, sizes[i]))
			fail_msg("read of %zu bytes at %zu differs", sizes[i],
				 off);
		for (off = 0; off < TRMA_GUARD; off++) {
			assert_int_equal(dst[off], 0xee);
			assert_int_equal(dst[TRMA_GUARD + sizes[i] + off], 0xee);
		}
	}
	trma_check_target(t, SEED_TARGET);
	free(dst);
}

static void test_iov(void **state)
{
	struct trma *t = T(state);
	uint8_t a[100], b[9000], c[3], back[100 + 9000 + 3];
	struct iovec w[3] = {
		{ a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) },
	};
	struct iovec r[2] = {
		{ back, 5000 }, { back + 5000, sizeof(back) - 5000 },
	};
	int ctx;

	tfab_fill(a, sizeof(a), 1);
	tfab_fill(b, sizeof(b), 2);
	tfab_fill(c, sizeof(c), 3);
	trma_fill_target(t, SEED_TARGET);
	assert_int_equal(fi_writev(t->f.a.ep, w, NULL, 3, t->f.a.peer,
				   t->base + 10, t->key, &ctx), 0);
	expect_ok(t, &ctx, FI_RMA | FI_WRITE);
	assert_memory_equal(t->region + 10, a, sizeof(a));
	assert_memory_equal(t->region + 110, b, sizeof(b));
	assert_memory_equal(t->region + 9110, c, sizeof(c));
	memset(back, 0, sizeof(back));
	assert_int_equal(fi_readv(t->f.a.ep, r, NULL, 2, t->f.a.peer,
				  t->base + 10, t->key, &ctx), 0);
	expect_ok(t, &ctx, FI_RMA | FI_READ);
	assert_memory_equal(back, a, sizeof(a));
	assert_memory_equal(back + 100, b, sizeof(b));
	assert_memory_equal(back + 9100, c, sizeof(c));
}

static void test_bad_key(void **state)
{
	struct trma *t = T(state);
	uint8_t src[256], dst[256];
	int ctx;

	tfab_fill(src, sizeof(src), 5);
	trma_fill_target(t, SEED_TARGET);
	assert_int_equal(fi_write(t->f.a.ep, src, sizeof(src), NULL,
				  t->f.a.peer, t->base, t->key ^ 0x5a5a0,
				  &ctx), 0);
	expect_err(t, &ctx);
	assert_int_equal(fi_read(t->f.a.ep, dst, sizeof(dst), NULL,
				 t->f.a.peer, t->base, t->key ^ 0x5a5a0,
				 &ctx), 0);
	expect_err(t, &ctx);
	trma_check_target(t, SEED_TARGET);
}

static void test_out_of_bounds(void **state)
{
	struct trma *t = T(state);
	size_t big = 3 * 8864 + 100;	/* several emulated segments */
	uint8_t *src = malloc(big);
	int ctx;

	assert_non_null(src);
	tfab_fill(src, big, 6);
	trma_fill_target(t, SEED_TARGET);
	/* ends 1 byte past the region */
	assert_int_equal(fi_write(t->f.a.ep, src, big, NULL, t->f.a.peer,
				  t->base + TRMA_REGION - big + 1, t->key,
				  &ctx), 0);
	expect_err(t, &ctx);
	/* starts before it */
	if (t->base) {
		assert_int_equal(fi_write(t->f.a.ep, src, 16, NULL,
					  t->f.a.peer, t->base - 8, t->key,
					  &ctx), 0);
		expect_err(t, &ctx);
	}
	assert_int_equal(fi_read(t->f.a.ep, src, 64, NULL, t->f.a.peer,
				 t->base + TRMA_REGION - 32, t->key, &ctx), 0);
	expect_err(t, &ctx);
	trma_check_target(t, SEED_TARGET);
	free(src);
}

static void test_no_write_access(void **state)
{
	struct trma *t = T(state);
	uint8_t ro[512], src[64];
	struct fid_mr *mr;
	int ctx;

	tfab_fill(ro, sizeof(ro), 9);
	tfab_fill(src, sizeof(src), 10);
	assert_int_equal(fi_mr_reg(t->f.domain, ro, sizeof(ro),
				   FI_REMOTE_READ, 0, 0, 0, &mr, NULL), 0);
	assert_int_equal(fi_write(t->f.a.ep, src, sizeof(src), NULL,
				  t->f.a.peer, t->base ? (uintptr_t)ro : 0,
				  fi_mr_key(mr), &ctx), 0);
	expect_err(t, &ctx);
	tfab_check(ro, sizeof(ro), 9);
	assert_int_equal(fi_close(&mr->fid), 0);
}

static void test_writedata(void **state)
{
	struct trma *t = T(state);
	uint8_t src[300];
	struct tent e;
	int ctx;

	tfab_fill(src, sizeof(src), 12);
	assert_int_equal(fi_writedata(t->f.a.ep, src, sizeof(src), NULL,
				      0xdeadbeef, t->f.a.peer, t->base + 100,
				      t->key, &ctx), 0);
	trma_wait_b(t, 1);
	e = tfab_take(&t->f.b);
	assert_int_equal(e.err, 0);
	assert_true(e.e.flags & FI_REMOTE_CQ_DATA);
	assert_true(e.e.flags & FI_REMOTE_WRITE);
	assert_true(e.e.flags & FI_RMA);
	assert_int_equal(e.e.data, 0xdeadbeef);
	assert_int_equal(e.e.len, sizeof(src));
	expect_ok(t, &ctx, FI_RMA | FI_WRITE);
	assert_memory_equal(t->region + 100, src, sizeof(src));
}

static void test_inject(void **state)
{
	struct trma *t = T(state);
	uint8_t src[200], want[200];
	long i;

	tfab_fill(src, sizeof(src), 13);
	memcpy(want, src, sizeof(src));
	trma_fill_target(t, SEED_TARGET);
	assert_int_equal(fi_inject_write(t->f.a.ep, src, sizeof(src),
					 t->f.a.peer, t->base + 3, t->key), 0);
	memset(src, 0, sizeof(src));	/* the caller's buffer is free */
	for (i = 0; i < 4000000 && memcmp(t->region + 3, want, sizeof(want));
	     i++)
		tfab_poll(&t->f);
	assert_memory_equal(t->region + 3, want, sizeof(want));
	for (i = 0; i < 1000; i++)
		tfab_poll(&t->f);
	assert_int_equal(t->f.a.n, 0);	/* inject: no completion */
}

/* fi_writemsg with FI_INJECT: the buffer is free at return and the write
 * still completes with its context (only fi_inject_write has none). */
static void test_inject_flag(void **state)
{
	struct trma *t = T(state);
	size_t inj = t->f.eager_max;
	uint8_t *src = malloc(inj + 1), *want = malloc(inj);
	struct iovec iov = { src, inj };
	struct fi_rma_iov rv = { .addr = t->base + 64, .len = inj,
				 .key = t->key };
	struct fi_msg_rma m = { .msg_iov = &iov, .iov_count = 1,
				.addr = t->f.a.peer, .rma_iov = &rv,
				.rma_iov_count = 1 };
	int ctx;

	assert_non_null(src);
	assert_non_null(want);
	tfab_fill(src, inj, 41);
	memcpy(want, src, inj);
	trma_fill_target(t, SEED_TARGET);
	m.context = &ctx;
	assert_int_equal(fi_writemsg(t->f.a.ep, &m, FI_INJECT | FI_COMPLETION),
			 0);
	memset(src, 0, inj);
	/* The target's progress may be needed (emulated on this path). */
	{
		struct tent e = trma_wait_a(t, false);

		assert_int_equal(e.err, 0);
		assert_ptr_equal(e.e.op_context, &ctx);
		assert_true((e.e.flags & (FI_RMA | FI_WRITE)) ==
			    (FI_RMA | FI_WRITE));
	}
	assert_memory_equal(t->region + 64, want, inj);
	iov.iov_len = inj + 1;
	rv.len = inj + 1;
	assert_int_equal(fi_writemsg(t->f.a.ep, &m, FI_INJECT), -FI_EINVAL);
	free(src);
	free(want);
}

/* FI_RMA_EVENT (upstream fi_rdm_rma_event): a target with counters bound
 * FI_REMOTE_WRITE / FI_REMOTE_READ counts every write, read and atomic
 * aimed at it, also where the device could have done the RMA without its
 * CPU (its handshake asks the initiator to emulate toward it). */
static void test_rma_event(void **state)
{
	struct trma t;
	uint8_t src[3000], back[3000];
	uint64_t add = 2, *t64;
	uint64_t deadline;
	long i;
	int ctx;

	(void)state;
	srd_rma_force_emulation = false;
	trma_open_rma_event(&t, FI_REMOTE_READ | FI_REMOTE_WRITE);
	print_message("# device write %d read %d\n",
		      to_srd_ep(t.f.a.ep)->rma->hw_write,
		      to_srd_ep(t.f.a.ep)->rma->hw_read);
	for (i = 0; i < 3; i++) {
		tfab_fill(src, sizeof(src), (unsigned)(50 + i));
		assert_int_equal(fi_write(t.f.a.ep, src, sizeof(src), NULL,
					  t.f.a.peer, t.base + 100, t.key,
					  &ctx), 0);
		expect_ok(&t, &ctx, FI_RMA | FI_WRITE);
		assert_memory_equal(t.region + 100, src, sizeof(src));
		memset(back, 0, sizeof(back));
		assert_int_equal(fi_read(t.f.a.ep, back, sizeof(back), NULL,
					 t.f.a.peer, t.base + 100, t.key,
					 &ctx), 0);
		expect_ok(&t, &ctx, FI_RMA | FI_READ);
		assert_memory_equal(back, src, sizeof(back));
	}
	t64 = (uint64_t *)(t.region + 8192);
	*t64 = 40;
	assert_int_equal(fi_atomic(t.f.a.ep, &add, 1, NULL, t.f.a.peer,
				   t.base + 8192, t.key, FI_UINT64, FI_SUM,
				   &ctx), 0);
	expect_ok(&t, &ctx, FI_ATOMIC);
	assert_int_equal(*t64, 42);
	/* the counts land with the target's progress */
	deadline = 4000000;
	for (i = 0; i < (long)deadline && (fi_cntr_read(t.rw_cntr) < 4 ||
					   fi_cntr_read(t.rr_cntr) < 3); i++)
		tfab_poll(&t.f);
	assert_int_equal(fi_cntr_read(t.rw_cntr), 4);
	assert_int_equal(fi_cntr_read(t.rr_cntr), 3);
	assert_int_equal(fi_cntr_readerr(t.rw_cntr), 0);
	trma_close(&t);
}

static void test_mr_key_is_rkey(void **state)
{
	struct trma *t = T(state);
	struct fid_mr *mr2, *mr0;
	uint32_t lkey, rkey;
	uint8_t buf[64];

	assert_int_equal(srd_mr_desc_keys(fi_mr_desc(t->mr), &lkey, &rkey), 0);
	if (t->f.info->domain_attr->mr_mode & FI_MR_PROV_KEY)
		assert_int_equal(t->key, rkey);
	assert_int_not_equal(srd_mr_desc_keys(t, &lkey, &rkey), 0);
	assert_int_not_equal(srd_mr_desc_keys(NULL, &lkey, &rkey), 0);

	/* a second region gets another key; an empty one is legal and has
	 * no device keys */
	assert_int_equal(fi_mr_reg(t->f.domain, buf, sizeof(buf),
				   FI_REMOTE_WRITE, 0, 0, 0, &mr2, NULL), 0);
	assert_int_not_equal(fi_mr_key(mr2), t->key);
	assert_int_equal(fi_mr_reg(t->f.domain, buf, 0, FI_REMOTE_WRITE, 0, 0,
				   0, &mr0, NULL), 0);
	assert_int_not_equal(srd_mr_desc_keys(fi_mr_desc(mr0), &lkey, &rkey),
			     0);
	assert_int_equal(fi_close(&mr0->fid), 0);
	assert_int_equal(fi_close(&mr2->fid), 0);
}

static void test_inorder_opts(void **state)
{
	struct trma *t = T(state);
	fid_t fid = &t->f.a.ep->fid;
	size_t len = sizeof(int);
	int send, write, mode;
	bool b;

	assert_int_equal(fi_getopt(fid, FI_OPT_ENDPOINT,
				       FI_OPT_WEFT_SEND_INORDER, &send, &len),
			 0);
	assert_int_equal(len, sizeof(int));
	assert_int_equal(fi_getopt(fid, FI_OPT_ENDPOINT,
				       FI_OPT_WEFT_WRITE_INORDER, &write, &len),
			 0);
	assert_int_equal(fi_getopt(fid, FI_OPT_ENDPOINT,
				       FI_OPT_WEFT_POLL_MODE, &mode, &len), 0);
	/* polling on data needs RDMA writes that land in order */
	assert_true(mode == WEFT_POLL_COMPLETION ||
		    (write != WEFT_INORDER_NONE && mode == WEFT_POLL_DATA));
	print_message("# in-order: send 0x%x write 0x%x\n", send, write);
	len = sizeof(b);
	assert_int_equal(fi_getopt(fid, FI_OPT_ENDPOINT,
			 FI_OPT_WEFT_WRITE_IN_ORDER_ALIGNED_128_BYTES, &b, &len),
			 0);
	assert_int_equal(b, write != 0);
	b = true;
	assert_int_equal(fi_setopt(fid, FI_OPT_ENDPOINT,
			 FI_OPT_WEFT_WRITE_IN_ORDER_ALIGNED_128_BYTES, &b,
			 sizeof(b)), write ? 0 : -FI_EOPNOTSUPP);
	b = false;
	assert_int_equal(fi_setopt(fid, FI_OPT_ENDPOINT,
			 FI_OPT_WEFT_SEND_IN_ORDER_ALIGNED_128_BYTES, &b,
			 sizeof(b)), 0);
	/* util's own option still answers through srd's handler */
	len = sizeof(size_t);
	assert_int_equal(fi_getopt(fid, FI_OPT_ENDPOINT,
				       FI_OPT_MIN_MULTI_RECV, &(size_t){ 0 },
				       &len), 0);
}

/* The option logic on every device answer, without a device. */
static void test_opt_logic(void **state)
{
	static const struct {
		int caps, bits;
		bool ll128;
	} cases[] = {
		{ SRD_INORDER_NONE, WEFT_INORDER_NONE, false },
		{ SRD_INORDER_WHOLE, WEFT_INORDER_WHOLE_MSG, true },
		{ SRD_INORDER_128, WEFT_INORDER_ALIGNED_128, true },
		{ SRD_INORDER_WHOLE | SRD_INORDER_128,
		  WEFT_INORDER_WHOLE_MSG | WEFT_INORDER_ALIGNED_128, true },
	};
	struct srd_dev_poll_choice c = { .mode = SRD_POLL_DATA };
	size_t i, len;
	int v;
	bool b;

	for (i = 0; i < WEFT_ARRAY_SIZE(cases); i++) {
		c.send_inorder = cases[i].caps;
		c.write_inorder = (int)(WEFT_ARRAY_SIZE(cases) - 1 - i);
		len = sizeof(v);
		assert_int_equal(srd_opt_get(&c, FI_OPT_WEFT_SEND_INORDER, &v,
					     &len), 0);
		assert_int_equal(v, cases[i].bits);
		len = sizeof(b);
		assert_int_equal(srd_opt_get(&c,
			FI_OPT_WEFT_SEND_IN_ORDER_ALIGNED_128_BYTES, &b, &len), 0);
		assert_int_equal(b, cases[i].ll128);
		b = true;
		assert_int_equal(srd_opt_set(&c,
			FI_OPT_WEFT_SEND_IN_ORDER_ALIGNED_128_BYTES, &b,
			sizeof(b)), cases[i].ll128 ? 0 : -FI_EOPNOTSUPP);
		len = sizeof(v);
		assert_int_equal(srd_opt_get(&c, FI_OPT_WEFT_WRITE_INORDER, &v,
					     &len), 0);
		assert_int_equal(v, cases[WEFT_ARRAY_SIZE(cases) - 1 - i].bits);
	}
	len = sizeof(v);
	assert_int_equal(srd_opt_get(&c, FI_OPT_WEFT_POLL_MODE, &v, &len), 0);
	assert_int_equal(v, WEFT_POLL_DATA);
	len = 1;
	assert_int_equal(srd_opt_get(&c, FI_OPT_WEFT_POLL_MODE, &v, &len),
			 -FI_ETOOSMALL);
	assert_int_equal(len, sizeof(int));
	assert_int_equal(srd_opt_get(&c, FI_OPT_MIN_MULTI_RECV, &v, &len),
			 -FI_ENOPROTOOPT);
	assert_int_equal(srd_opt_get(&c, FI_OPT_WEFT_POLL_MODE, NULL, &len),
			 -FI_EINVAL);
	assert_int_equal(srd_opt_set(&c, FI_OPT_WEFT_SEND_INORDER, &v,
				     sizeof(v)), -FI_EINVAL);
	assert_int_equal(srd_opt_set(&c,
		FI_OPT_WEFT_WRITE_IN_ORDER_ALIGNED_128_BYTES, &v, sizeof(v)),
		-FI_EINVAL);
}

#define HW(f) cmocka_unit_test_setup_teardown(f, setup_hw, teardown)
#define EMU(f) cmocka_unit_test_setup_teardown(f, setup_emu, teardown)

/* fi_writemsg (two local iovs, CQ data) and fi_readmsg (two iovs back),
 * fi_inject_writedata: data and completions checked. */
static void test_msg_calls(void **state)
{
	struct trma *t = T(state);
	uint8_t a1[700], a2[1300], b1[1000], b2[1000], want[2000];
	struct iovec wiov[2] = { { a1, sizeof(a1) }, { a2, sizeof(a2) } };
	struct iovec riov[2] = { { b1, sizeof(b1) }, { b2, sizeof(b2) } };
	struct fi_rma_iov rv = { .addr = t->base + 1000, .len = 2000,
				 .key = t->key };
	struct fi_msg_rma m = { .msg_iov = wiov, .iov_count = 2,
				.addr = t->f.a.peer, .rma_iov = &rv,
				.rma_iov_count = 1, .data = 0x1234 };
	uint8_t inj[40];
	struct tent e;
	int wctx, rctx;
	long i;

	tfab_fill(a1, sizeof(a1), 21);
	tfab_fill(a2, sizeof(a2), 22);
	memcpy(want, a1, sizeof(a1));
	memcpy(want + sizeof(a1), a2, sizeof(a2));
	m.context = &wctx;
	assert_int_equal(fi_writemsg(t->f.a.ep, &m,
				     FI_COMPLETION | FI_REMOTE_CQ_DATA), 0);
	trma_wait_b(t, 1);
	e = tfab_take(&t->f.b);
	assert_int_equal(e.err, 0);
	assert_int_equal(e.e.data, 0x1234);
	expect_ok(t, &wctx, FI_RMA | FI_WRITE);
	assert_memory_equal(t->region + 1000, want, sizeof(want));

	memset(b1, 0, sizeof(b1));
	memset(b2, 0, sizeof(b2));
	m.msg_iov = riov;
	m.context = &rctx;
	m.data = 0;
	assert_int_equal(fi_readmsg(t->f.a.ep, &m, FI_COMPLETION), 0);
	expect_ok(t, &rctx, FI_RMA | FI_READ);
	assert_memory_equal(b1, want, sizeof(b1));
	assert_memory_equal(b2, want + sizeof(b1), sizeof(b2));

	tfab_fill(inj, sizeof(inj), 23);
	assert_int_equal(fi_inject_writedata(t->f.a.ep, inj, sizeof(inj), 77,
					     t->f.a.peer, t->base + 5000,
					     t->key), 0);
	trma_wait_b(t, 1);
	e = tfab_take(&t->f.b);
	assert_int_equal(e.err, 0);
	assert_int_equal(e.e.data, 77);
	for (i = 0; i < 4000000 &&
	     memcmp(t->region + 5000, inj, sizeof(inj)); i++)
		tfab_poll(&t->f);
	assert_memory_equal(t->region + 5000, inj, sizeof(inj));
}

/* A write of no bytes, with no iov array at all, that only carries CQ
 * data: the target sees the data, its memory stays as it was. The
 * sanitizer build checks that nothing reads through the NULL arrays. */
static void test_write_no_iov(void **state)
{
	struct trma *t = T(state);
	struct fi_rma_iov rv = { .addr = t->base + 64, .len = 0, .key = t->key };
	struct fi_msg_rma m = { .addr = t->f.a.peer, .rma_iov = &rv,
				.rma_iov_count = 1, .data = 0x5eed };
	struct tent e;
	int ctx;

	trma_fill_target(t, SEED_TARGET);
	m.context = &ctx;
	assert_int_equal(fi_writemsg(t->f.a.ep, &m,
				     FI_COMPLETION | FI_REMOTE_CQ_DATA), 0);
	trma_wait_b(t, 1);
	e = tfab_take(&t->f.b);
	assert_int_equal(e.err, 0);
	assert_true(e.e.flags & FI_REMOTE_CQ_DATA);
	assert_int_equal(e.e.data, 0x5eed);
	assert_int_equal(e.e.len, 0);
	expect_ok(t, &ctx, FI_RMA | FI_WRITE);
	trma_check_target(t, SEED_TARGET);
}

/* Malformed requests fail at once with -FI_EINVAL, nothing sent. */
static void test_bad_args(void **state)
{
	struct trma *t = T(state);
	uint8_t buf[64] = { 0 };
	struct iovec iov[SRD_IOV_MAX + 1];
	struct fi_rma_iov rv[2] = {
		{ .addr = t->base, .len = 64, .key = t->key },
		{ .addr = t->base + 64, .len = 64, .key = t->key },
	};
	struct fi_msg_rma m = { .msg_iov = iov, .iov_count = 1,
				.addr = t->f.a.peer, .rma_iov = rv,
				.rma_iov_count = 2 };
	size_t i;

	for (i = 0; i < WEFT_ARRAY_SIZE(iov); i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = 1;
	}
	/* two remote iovs, none, too many local ones */
	assert_int_equal(fi_writemsg(t->f.a.ep, &m, 0), -FI_EINVAL);
	m.rma_iov_count = 0;
	assert_int_equal(fi_readmsg(t->f.a.ep, &m, 0), -FI_EINVAL);
	m.rma_iov_count = 1;
	m.iov_count = SRD_IOV_MAX + 1;
	assert_int_equal(fi_writemsg(t->f.a.ep, &m, 0), -FI_EINVAL);
	/* more bytes than the remote buffer */
	m.iov_count = 1;
	iov[0].iov_len = 65;
	assert_int_equal(fi_writemsg(t->f.a.ep, &m, 0), -FI_EINVAL);
	/* an inject larger than inject_size */
	assert_int_equal(fi_inject_write(t->f.a.ep, t->region,
					 t->f.info->tx_attr->inject_size + 1,
					 t->f.a.peer, t->base, t->key),
			 -FI_EINVAL);
}

/* n completions at a, each of one of ctx[0..n) exactly once (SRD does
 * not order them), all without error. */
static void expect_all(struct trma *t, int *ctx, int n, uint64_t flags)
{
	char seen[256] = { 0 };
	struct tent e;
	long idx;
	int i;

	assert_true(n <= (int)sizeof(seen));
	for (i = 0; i < n; i++) {
		e = trma_wait_a(t, only_a(t));
		assert_int_equal(e.err, 0);
		assert_true((e.e.flags & flags) == flags);
		idx = (int *)e.e.op_context - ctx;
		assert_true(idx >= 0 && idx < n);
		assert_int_equal(seen[idx]++, 0);
	}
}

/* Many operations at once, more than the send queue holds: the rest wait
 * on the pending queue, and every byte lands. */
static void test_many_in_flight(void **state)
{
	struct trma *t = T(state);
	enum { N = 256, PIECE = TRMA_REGION / N };
	uint8_t *src = malloc(TRMA_REGION), *back = calloc(1, TRMA_REGION);
	int ctx[N], i;

	assert_non_null(src);
	assert_non_null(back);
	tfab_fill(src, TRMA_REGION, 31);
	for (i = 0; i < N; i++) {
		TFAB_POST(&t->f, fi_write(t->f.a.ep, src + (size_t)i * PIECE,
					  PIECE, NULL, t->f.a.peer,
					  t->base + (uint64_t)i * PIECE,
					  t->key, &ctx[i]));
	}
	expect_all(t, ctx, N, FI_RMA | FI_WRITE);
	assert_memory_equal(t->region, src, TRMA_REGION);
	for (i = 0; i < N; i++) {
		TFAB_POST(&t->f, fi_read(t->f.a.ep, back + (size_t)i * PIECE,
					 PIECE, NULL, t->f.a.peer,
					 t->base + (uint64_t)i * PIECE,
					 t->key, &ctx[i]));
	}
	expect_all(t, ctx, N, FI_RMA | FI_READ);
	assert_memory_equal(back, src, TRMA_REGION);
	free(src);
	free(back);
}

int main(void)
{
	/* One group (one TAP plan); each case opens its own endpoints, the
	 * hardware ones with the device's RDMA, the others emulated. */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opt_logic),
		cmocka_unit_test(test_rma_event),
		HW(test_write_sizes),
		HW(test_read_sizes),
		HW(test_iov),
		HW(test_bad_key),
		HW(test_out_of_bounds),
		HW(test_no_write_access),
		HW(test_writedata),
		HW(test_inject),
		HW(test_inject_flag),
		HW(test_mr_key_is_rkey),
		HW(test_inorder_opts),
		HW(test_msg_calls),
		HW(test_write_no_iov),
		HW(test_bad_args),
		HW(test_many_in_flight),
		EMU(test_write_sizes),
		EMU(test_read_sizes),
		EMU(test_iov),
		EMU(test_bad_key),
		EMU(test_out_of_bounds),
		EMU(test_no_write_access),
		EMU(test_writedata),
		EMU(test_inject),
		EMU(test_inject_flag),
		EMU(test_mr_key_is_rkey),
		EMU(test_msg_calls),
		EMU(test_write_no_iov),
		EMU(test_bad_args),
		EMU(test_many_in_flight),
	};

	tfab_env();
	return cmocka_run_group_tests_name("srd_rma", tests, NULL, NULL);
}
