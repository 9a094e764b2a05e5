/* SPDX-License-Identifier: MIT */
/*
 * shm provider: RMA and atomics, checked by the target against its MR map,
 * with errors reported as error completions at the initiator. Every test
 * runs twice: with CMA, and with CMA refused (as under ptrace
 * restrictions), where large RMA goes through bounce segments.
 */
#include "shm_prov_test.h"
#include "../src/shm.h"

static struct tctx T;
static uint8_t *tbuf;		/* target region, registered on ep[1] */
static struct fid_mr *mr, *ro_mr;
static uint64_t key, ro_key;
static uint8_t ro_buf[256 * 1024];
static int no_cma;		/* the group's mode */

#define TLEN ((16u << 20) + (1u << 20))
#define CAPS (FI_MSG | FI_RMA | FI_ATOMIC | FI_REMOTE_READ | \
	      FI_REMOTE_WRITE | FI_READ | FI_WRITE)

/* Remote address of byte off of a region, per the domain's mr_mode. */
static uint64_t raddr(const void *base, size_t off)
{
	if (T.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uintptr_t)base + off;
	return off;
}

static int setup(void **state)
{
	no_cma = *state != NULL;
	shm_cma_test_refuse = no_cma;
	t_open(&T, CAPS, 2);
	tbuf = calloc(1, TLEN);
	assert_non_null(tbuf);
	assert_int_equal(fi_mr_reg(T.domain, tbuf, TLEN,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 1, 0,
				   &mr, NULL), 0);
	key = fi_mr_key(mr);
	assert_int_equal(fi_mr_reg(T.domain, ro_buf, sizeof(ro_buf),
				   FI_REMOTE_READ, 0, 2, 0, &ro_mr, NULL), 0);
	ro_key = fi_mr_key(ro_mr);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(fi_close(&mr->fid), 0);
	assert_int_equal(fi_close(&ro_mr->fid), 0);
	free(tbuf);
	t_close(&T);
	shm_cma_test_refuse = 0;
	return 0;
}

static void t_write_read(size_t off, size_t len, unsigned seed)
{
	uint8_t *src = malloc(len + 1), *dst = malloc(len + 1);
	struct fi_context wc, rc;
	struct fi_cq_tagged_entry e;

	t_fill(src, len, seed);
	memset(dst, 0, len + 1);
	T_POST(&T, fi_write(T.ep[0], src, len, NULL, T.addr[1],
			    raddr(tbuf, off), key, &wc));
	e = t_wait_ok(&T, &wc);
	assert_true(e.flags & FI_WRITE);
	assert_int_equal(t_check(tbuf + off, len, seed), -1);
	T_POST(&T, fi_read(T.ep[0], dst, len, NULL, T.addr[1],
			   raddr(tbuf, off), key, &rc));
	e = t_wait_ok(&T, &rc);
	assert_true(e.flags & FI_READ);
	assert_int_equal(t_check(dst, len, seed), -1);
	free(src);
	free(dst);
}

static void test_write_read(void **state)
{
	size_t sizes[] = { 1, 8, 900, 1000, 1040, 1041, 4096, 4112, 4113,
			   4120, 4192, 4193, 4240, 4241, 65536, 1 << 20 };
	size_t i;

	(void)state;
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++)
		t_write_read(i * 16, sizes[i], (unsigned)i);
}

static void test_writedata_inject(void **state)
{
	uint64_t v = 0x1122334455667788ull, back = 0;
	struct fi_context wc, rc;
	struct fi_cq_tagged_entry e;

	(void)state;
	T_POST(&T, fi_writedata(T.ep[0], &v, 8, NULL, 0xabcdef, T.addr[1],
				raddr(tbuf, 64), key, &wc));
	t_wait_ok(&T, &wc);
	/* The target's completion carries the data and no context. */
	e = t_wait_ok(&T, NULL);
	assert_true(e.flags & FI_REMOTE_WRITE);
	assert_true(e.flags & FI_REMOTE_CQ_DATA);
	assert_int_equal(e.data, 0xabcdef);
	v = 42;
	T_POST(&T, fi_inject_write(T.ep[0], &v, 8, T.addr[1],
				   raddr(tbuf, 128), key));
	/* Ordered behind the inject: the read sees its value. */
	T_POST(&T, fi_read(T.ep[0], &back, 8, NULL, T.addr[1],
			   raddr(tbuf, 128), key, &rc));
	t_wait_ok(&T, &rc);
	assert_int_equal(back, 42);
}

static void t_expect_err(ssize_t post, void *ctx, int err)
{
	struct fi_cq_err_entry e;

	assert_int_equal(post, 0);
	e = t_wait_err(&T, ctx);
	assert_int_equal(e.err, err);
}

static void test_rma_errors(void **state)
{
	static uint8_t big[1 << 20];
	uint64_t v = 1;
	struct fi_context c;

	(void)state;
	/* Wrong key. */
	t_expect_err(fi_write(T.ep[0], &v, 8, NULL, T.addr[1],
			      raddr(tbuf, 0), key + 1000, &c), &c, FI_ENOKEY);
	/* Past the end, inline and CMA-sized. */
	t_expect_err(fi_write(T.ep[0], &v, 8, NULL, T.addr[1],
			      raddr(tbuf, TLEN - 4), key, &c), &c, FI_EINVAL);
	t_expect_err(fi_read(T.ep[0], big, sizeof(big), NULL, T.addr[1],
			     raddr(tbuf, TLEN - 4096), key, &c), &c,
		     FI_EINVAL);
	t_expect_err(fi_write(T.ep[0], big, sizeof(big), NULL, T.addr[1],
			      raddr(tbuf, 0) - 4096, key, &c), &c, FI_EINVAL);
	/* Write into a read-only region. */
	t_expect_err(fi_write(T.ep[0], &v, 8, NULL, T.addr[1],
			      raddr(ro_buf, 0), ro_key, &c), &c, FI_EACCES);
	/* Nothing was written by any of the above. */
	assert_int_equal(ro_buf[0], 0);
	assert_int_equal(tbuf[TLEN - 1], 0);
	/* Reading it is allowed. */
	ro_buf[5] = 5;
	T_POST(&T, fi_read(T.ep[0], &v, 8, NULL, T.addr[1],
			   raddr(ro_buf, 0), ro_key, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(((uint8_t *)&v)[5], 5);
}

/* ---- large RMA: thresholds, iovecs, data checked byte for byte -------- */

/* Write then read back len bytes at tbuf + off; the bytes just outside
 * stay untouched. */
static void t_span(size_t off, size_t len, unsigned seed)
{
	assert_true(off > 0 && off + len < TLEN);
	tbuf[off - 1] = 0xa5;
	tbuf[off + len] = 0x5a;
	t_write_read(off, len, seed);
	assert_int_equal(tbuf[off - 1], 0xa5);
	assert_int_equal(tbuf[off + len], 0x5a);
}

/* Sizes around every internal threshold: the inline write (cell payload
 * minus the request), the inline read (a cell payload in the ACK), one
 * bounce segment, all segments in flight, and 16 MiB. */
static void test_rma_thresholds(void **state)
{
	const size_t cell = SHM_DEF_CELL_SIZE - SHM_CELL_HDR_SIZE;
	const size_t wl = cell - sizeof(struct shm_rma) -
			  sizeof(struct shm_rma_iov);
	const size_t seg = SHM_DEF_BOUNCE_SEG_SIZE;
	const size_t all = seg * SHM_DEF_BOUNCE_SEGS;
	const size_t sizes[] = { wl - 1, wl, wl + 1, cell - 1, cell, cell + 1,
				 seg - 1, seg, seg + 1, 2 * seg - 1,
				 2 * seg + 1, all - 1, all, all + 1,
				 all + seg + 7, 16u << 20 };
	size_t i;

	(void)state;
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++)
		t_span(1 + (i * 61) % 4096, sizes[i], (unsigned)i + 30);
}

/* Remote CQ data arrives with large writes exactly as with small ones. */
static void test_writedata_large(void **state)
{
	const size_t sizes[] = { 4096, SHM_DEF_BOUNCE_SEG_SIZE + 1,
				 (1u << 20) + 3, 16u << 20 };
	uint8_t *src = malloc(16u << 20);
	struct fi_cq_tagged_entry e;
	struct fi_context wc;
	size_t i;

	(void)state;
	assert_non_null(src);
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++) {
		t_fill(src, sizes[i], (unsigned)i + 50);
		T_POST(&T, fi_writedata(T.ep[0], src, sizes[i], NULL,
					0x5150 + i, T.addr[1],
					raddr(tbuf, 8), key, &wc));
		e = t_wait_ok(&T, &wc);
		assert_true(e.flags & FI_WRITE);
		e = t_wait_ok(&T, NULL);
		assert_int_equal(e.flags, FI_RMA | FI_REMOTE_WRITE |
					  FI_REMOTE_CQ_DATA);
		assert_int_equal(e.data, 0x5150 + i);
		assert_int_equal(t_check(tbuf + 8, sizes[i], (unsigned)i + 50),
				 -1);
	}
	free(src);
}

/* Several local iovecs and target regions whose boundaries fall inside
 * bounce segments. */
static void test_rma_iov(void **state)
{
	const size_t l[3] = { 70001, 3, 131071 }, total = 70001 + 3 + 131071;
	const size_t r0 = 100000, off0 = 16, off1 = 1u << 20;
	uint8_t *src = malloc(total), *dst = calloc(1, total);
	struct iovec iov[3];
	struct fi_rma_iov rma[2] = {
		{ raddr(tbuf, off0), r0, key },
		{ raddr(tbuf, off1), total - r0, key },
	};
	struct fi_msg_rma msg = { .msg_iov = iov, .iov_count = 3,
				  .addr = T.addr[1], .rma_iov = rma,
				  .rma_iov_count = 2 };
	struct fi_context c;
	size_t i, o;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	t_fill(src, total, 77);
	for (i = 0, o = 0; i < 3; o += l[i], i++)
		iov[i] = (struct iovec){ src + o, l[i] };
	msg.context = &c;
	T_POST(&T, fi_writemsg(T.ep[0], &msg, 0));
	t_wait_ok(&T, &c);
	assert_memory_equal(tbuf + off0, src, r0);
	assert_memory_equal(tbuf + off1, src + r0, total - r0);
	for (i = 0, o = 0; i < 3; o += l[i], i++)
		iov[i] = (struct iovec){ dst + o, l[i] };
	T_POST(&T, fi_readmsg(T.ep[0], &msg, 0));
	t_wait_ok(&T, &c);
	assert_int_equal(t_check(dst, total, 77), -1);
	free(src);
	free(dst);
}

/* Zero-byte fi_writemsg / fi_readmsg with no local iov array at all
 * (msg_iov NULL, iov_count 0): they complete, and nothing reads through
 * the NULL array (the sanitizer build checks that). */
static void test_rma_no_iov(void **state)
{
	struct fi_rma_iov rma = { raddr(tbuf, 8), 0, key };
	struct fi_msg_rma msg = { .addr = T.addr[1], .rma_iov = &rma,
				  .rma_iov_count = 1 };
	struct fi_context c;
	struct fi_cq_tagged_entry e;

	(void)state;
	msg.context = &c;
	T_POST(&T, fi_writemsg(T.ep[0], &msg, 0));
	e = t_wait_ok(&T, &c);
	assert_true(e.flags & FI_WRITE);
	T_POST(&T, fi_readmsg(T.ep[0], &msg, 0));
	e = t_wait_ok(&T, &c);
	assert_true(e.flags & FI_READ);
}

/* inject_size holds for RMA writes too, with one remote iov or with the
 * most (rma_iov_limit): the inject returns, the source is overwritten at
 * once, and the target holds the bytes as they were at the call. */
static void test_inject_write_at_inject_size(void **state)
{
	const size_t inj = T.info->tx_attr->inject_size;
	const size_t nr = T.info->tx_attr->rma_iov_limit;
	uint8_t *src = malloc(inj), *dst = malloc(inj);
	struct fi_rma_iov rma[SHM_IOV_LIMIT];
	struct iovec iov = { src, inj };
	struct fi_msg_rma msg = { .msg_iov = &iov, .iov_count = 1,
				  .addr = T.addr[1], .rma_iov = rma,
				  .rma_iov_count = nr };
	struct fi_context rc;
	size_t i, part = inj / nr;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	assert_true(inj >= 4096);	/* the default cell holds a 4 KiB page */
	assert_true(nr <= SHM_IOV_LIMIT);
	t_fill(src, inj, 61);
	T_POST(&T, fi_inject_write(T.ep[0], src, inj, T.addr[1],
				   raddr(tbuf, 512), key));
	memset(src, 0xee, inj);
	T_POST(&T, fi_read(T.ep[0], dst, inj, NULL, T.addr[1],
			   raddr(tbuf, 512), key, &rc));
	t_wait_ok(&T, &rc);
	assert_int_equal(t_check(dst, inj, 61), -1);

	/* nr remote pieces, 4 KiB apart, the last takes the remainder */
	t_fill(src, inj, 62);
	for (i = 0; i < nr; i++)
		rma[i] = (struct fi_rma_iov){
			.addr = raddr(tbuf, 65536 + i * 8192),
			.len = i + 1 < nr ? part : inj - part * (nr - 1),
			.key = key };
	T_POST(&T, fi_writemsg(T.ep[0], &msg, FI_INJECT));
	memset(src, 0xee, inj);
	for (i = 0; i < nr; i++) {
		T_POST(&T, fi_read(T.ep[0], dst + i * part, rma[i].len, NULL,
				   T.addr[1], rma[i].addr, key, &rc));
		t_wait_ok(&T, &rc);
	}
	assert_int_equal(t_check(dst, inj, 62), -1);
	free(src);
	free(dst);
}

/* RAW and SAW: a small read and a send posted right after a large write
 * see all of its bytes. */
static void test_rma_order(void **state)
{
	const size_t len = (1u << 20) + 1;
	uint8_t *src = malloc(len);
	uint64_t back = 0, msg = 0x77, got = 0;
	struct fi_context wc, rc, sc, pc;

	(void)state;
	assert_non_null(src);
	t_fill(src, len, 91);
	T_POST(&T, fi_recv(T.ep[1], &got, sizeof(got), NULL, FI_ADDR_UNSPEC,
			   &pc));
	T_POST(&T, fi_write(T.ep[0], src, len, NULL, T.addr[1],
			    raddr(tbuf, 0), key, &wc));
	T_POST(&T, fi_read(T.ep[0], &back, 8, NULL, T.addr[1],
			   raddr(tbuf, len - 8), key, &rc));
	T_POST(&T, fi_send(T.ep[0], &msg, sizeof(msg), NULL, T.addr[1], &sc));
	t_wait_ok(&T, &pc);
	assert_int_equal(got, 0x77);
	assert_int_equal(t_check(tbuf, len, 91), -1);
	t_wait_ok(&T, &rc);
	assert_memory_equal(&back, src + len - 8, 8);
	t_wait_ok(&T, &wc);
	t_wait_ok(&T, &sc);
	free(src);
}

static void test_rma_errors_large(void **state)
{
	const size_t len = SHM_DEF_BOUNCE_SEG_SIZE * 2 + 1;
	uint8_t *buf = malloc(len);
	struct fi_context c;

	(void)state;
	assert_non_null(buf);
	t_fill(buf, len, 5);
	memset(tbuf, 0, len);
	t_expect_err(fi_write(T.ep[0], buf, len, NULL, T.addr[1],
			      raddr(tbuf, 0), key + 1000, &c), &c, FI_ENOKEY);
	t_expect_err(fi_read(T.ep[0], buf, len, NULL, T.addr[1],
			     raddr(tbuf, 0), key + 1000, &c), &c, FI_ENOKEY);
	t_expect_err(fi_write(T.ep[0], buf, len, NULL, T.addr[1],
			      raddr(tbuf, TLEN - len + 1), key, &c), &c,
		     FI_EINVAL);
	t_expect_err(fi_read(T.ep[0], buf, len, NULL, T.addr[1],
			     raddr(tbuf, TLEN - len + 1), key, &c), &c,
		     FI_EINVAL);
	assert_true(len <= sizeof(ro_buf));
	t_expect_err(fi_write(T.ep[0], buf, len, NULL, T.addr[1],
			      raddr(ro_buf, 0), ro_key, &c), &c, FI_EACCES);
	assert_int_equal(tbuf[0], 0);
	assert_int_equal(tbuf[TLEN - 1], 0);
	assert_int_equal(ro_buf[0], 0);
	/* The endpoint still works. */
	t_span(4096, len, 6);
	free(buf);
}

/* A region closed in the middle of a bounce transfer: the target checks
 * every segment, so the transfer stops there with an error completion. */
static void t_close_mid(bool write)
{
	const size_t len = 16u << 20;
	uint8_t *mbuf = calloc(1, len), *buf = malloc(len);
	struct fid_mr *m;
	struct fi_context c;
	uint64_t mkey, deadline = t_now_s() + T_DEADLINE_S;
	struct fi_cq_err_entry err;

	assert_non_null(mbuf);
	assert_non_null(buf);
	t_fill(buf, len, 3);
	assert_int_equal(fi_mr_reg(T.domain, mbuf, len,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 9, 0,
				   &m, NULL), 0);
	mkey = fi_mr_key(m);
	if (write)
		T_POST(&T, fi_write(T.ep[0], buf, len, NULL, T.addr[1],
				    raddr(mbuf, 0), mkey, &c));
	else
		T_POST(&T, fi_read(T.ep[0], buf, len, NULL, T.addr[1],
				   raddr(mbuf, 0), mkey, &c));
	while (!to_shm_ep(T.ep[1])->rma_xfers) {
		t_poll(&T);
		assert_true(t_now_s() <= deadline);
	}
	assert_int_equal(fi_close(&m->fid), 0);
	err = t_wait_err(&T, &c);
	assert_int_equal(err.err, FI_ENOKEY);
	assert_null(to_shm_ep(T.ep[1])->rma_xfers);
	/* Nothing beyond a partial transfer landed, and all still works. */
	if (write)
		assert_int_equal(mbuf[len - 1], 0);
	t_span(64, 1u << 20, 8);
	free(mbuf);
	free(buf);
}

static void test_rma_mr_closed_mid(void **state)
{
	(void)state;
	if (!no_cma)
		return;	/* one CMA call: nothing in the middle */
	t_close_mid(true);
	t_close_mid(false);
}

static void test_atomic_sum(void **state)
{
	int32_t *t32 = (int32_t *)(tbuf + 4096);
	int64_t *t64 = (int64_t *)(tbuf + 8192);
	int32_t add32[4] = { 1, 2, 3, -4 };
	int64_t add64[2] = { 1ll << 40, -7 }, old64[2];
	struct fi_context c;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		t32[i] = 100 * i;
	t64[0] = 5;
	t64[1] = 10;
	T_POST(&T, fi_atomic(T.ep[0], add32, 4, NULL, T.addr[1],
			     raddr(tbuf, 4096), key, FI_INT32, FI_SUM, &c));
	assert_true(t_wait_ok(&T, &c).flags & FI_ATOMIC);
	for (i = 0; i < 4; i++)
		assert_int_equal(t32[i], 100 * i + add32[i]);
	T_POST(&T, fi_fetch_atomic(T.ep[0], add64, 2, NULL, old64, NULL,
				   T.addr[1], raddr(tbuf, 8192), key,
				   FI_INT64, FI_SUM, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(old64[0], 5);
	assert_int_equal(old64[1], 10);
	assert_int_equal(t64[0], 5 + (1ll << 40));
	assert_int_equal(t64[1], 3);
}

/* FI_INJECT as a flag of fi_writemsg / fi_atomicmsg: the buffer is
 * reusable at return and the operation still completes with its context
 * (only fi_inject_write / fi_inject_atomic go without one); over
 * inject_size it is refused. */
static void test_inject_flag_rma(void **state)
{
	const size_t inj = T.info->tx_attr->inject_size;
	uint8_t *src = malloc(inj + 1), *dst = calloc(1, inj);
	struct iovec iov = { src, inj };
	struct fi_rma_iov rma = { .addr = raddr(tbuf, 40960), .len = inj,
				  .key = key };
	struct fi_msg_rma msg = { .msg_iov = &iov, .iov_count = 1,
				  .addr = T.addr[1], .rma_iov = &rma,
				  .rma_iov_count = 1 };
	int64_t add = 5, *t64 = (int64_t *)(tbuf + 36864);
	struct fi_ioc ioc = { .addr = &add, .count = 1 };
	struct fi_rma_ioc rioc = { .addr = raddr(tbuf, 36864), .count = 1,
				   .key = key };
	struct fi_msg_atomic amsg = { .msg_iov = &ioc, .iov_count = 1,
				      .addr = T.addr[1], .rma_iov = &rioc,
				      .rma_iov_count = 1,
				      .datatype = FI_INT64, .op = FI_SUM };
	struct fi_context wc, ac, rc;
	struct fi_cq_tagged_entry e;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	t_fill(src, inj, 71);
	msg.context = &wc;
	T_POST(&T, fi_writemsg(T.ep[0], &msg, FI_INJECT | FI_COMPLETION));
	memset(src, 0xee, inj);
	e = t_wait_ok(&T, &wc);
	assert_true(e.flags & FI_RMA);
	assert_true(e.flags & FI_WRITE);
	T_POST(&T, fi_read(T.ep[0], dst, inj, NULL, T.addr[1], rma.addr, key,
			   &rc));
	t_wait_ok(&T, &rc);
	assert_int_equal(t_check(dst, inj, 71), -1);

	*t64 = 100;
	amsg.context = &ac;
	T_POST(&T, fi_atomicmsg(T.ep[0], &amsg, FI_INJECT | FI_COMPLETION));
	add = 1000;
	e = t_wait_ok(&T, &ac);
	assert_true(e.flags & FI_ATOMIC);
	assert_int_equal(*t64, 105);

	iov.iov_len = inj + 1;
	rma.len = inj + 1;
	assert_int_equal(fi_writemsg(T.ep[0], &msg, FI_INJECT), -FI_EINVAL);
	assert_int_equal(fi_inject_write(T.ep[0], src, inj + 1, T.addr[1],
					 rma.addr, key), -FI_EINVAL);
	free(src);
	free(dst);
}

static void test_atomic_write_cswap(void **state)
{
	uint64_t *t = (uint64_t *)(tbuf + 12288);
	uint32_t *t32 = (uint32_t *)(tbuf + 12800);
	uint64_t v = 77, cmp, swap, old = 0;
	uint32_t c32 = 9, s32 = 10, o32 = 0;
	struct fi_context c;

	(void)state;
	*t = 1;
	T_POST(&T, fi_atomic(T.ep[0], &v, 1, NULL, T.addr[1],
			     raddr(tbuf, 12288), key, FI_UINT64,
			     FI_ATOMIC_WRITE, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(*t, 77);
	/* Compare fails: old value back, target unchanged. */
	cmp = 5;
	swap = 6;
	T_POST(&T, fi_compare_atomic(T.ep[0], &swap, 1, NULL, &cmp, NULL,
				     &old, NULL, T.addr[1],
				     raddr(tbuf, 12288), key, FI_UINT64,
				     FI_CSWAP, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(old, 77);
	assert_int_equal(*t, 77);
	cmp = 77;
	T_POST(&T, fi_compare_atomic(T.ep[0], &swap, 1, NULL, &cmp, NULL,
				     &old, NULL, T.addr[1],
				     raddr(tbuf, 12288), key, FI_UINT64,
				     FI_CSWAP, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(old, 77);
	assert_int_equal(*t, 6);
	*t32 = 9;
	T_POST(&T, fi_compare_atomic(T.ep[0], &s32, 1, NULL, &c32, NULL, &o32,
				     NULL, T.addr[1], raddr(tbuf, 12800), key,
				     FI_INT32, FI_CSWAP, &c));
	t_wait_ok(&T, &c);
	assert_int_equal(o32, 9);
	assert_int_equal(*t32, 10);
	/* Atomics are checked like RMA. */
	t_expect_err(fi_atomic(T.ep[0], &v, 1, NULL, T.addr[1],
			       raddr(ro_buf, 0), ro_key, FI_UINT64, FI_SUM,
			       &c), &c, FI_EACCES);
	t_expect_err(fi_atomic(T.ep[0], &v, 1, NULL, T.addr[1],
			       raddr(tbuf, 0), key + 99, FI_UINT64, FI_SUM,
			       &c), &c, FI_ENOKEY);
}

static void test_atomic_valid(void **state)
{
	size_t count = 0;

	(void)state;
	assert_int_equal(fi_atomicvalid(T.ep[0], FI_INT64, FI_SUM, &count), 0);
	assert_true(count >= 1);
	assert_int_equal(fi_compare_atomicvalid(T.ep[0], FI_UINT32, FI_CSWAP,
						&count), 0);
	assert_true(count >= 1);
}

/* FI_RMA_EVENT (upstream fi_rdm_rma_event): fi_getinfo offers it, and a
 * target endpoint created with it counts every RMA and atomic aimed at it
 * on the counters bound with FI_REMOTE_WRITE / FI_REMOTE_READ, inline,
 * CMA or bounce sized, and reports remote CQ data in its CQ with
 * FI_RMA | FI_REMOTE_WRITE. The counts are checked, and the data. */
static void t_cntr_wait(struct fid_cntr *c, uint64_t want)
{
	uint64_t deadline = t_now_s() + T_DEADLINE_S;

	while (fi_cntr_read(c) < want) {
		t_poll(&T);
		if (t_now_s() > deadline)
			fail_msg("counter at %llu, want %llu",
				 (unsigned long long)fi_cntr_read(c),
				 (unsigned long long)want);
	}
}

static void test_rma_event(void **state)
{
	struct fi_info *hints = t_hints(CAPS | FI_RMA_EVENT), *info;
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *wcntr, *rcntr;
	struct fid_ep *tep;
	char name[T_ADDR_LEN];
	size_t len = sizeof(name), sizes[] = { 8, 4000, 300000 }, i;
	uint8_t *src = malloc(300000), *back = malloc(300000);
	uint64_t add = 7, old = 0, *t64 = (uint64_t *)(tbuf + 2097152);
	struct fi_context c[8];
	struct fi_cq_tagged_entry e;
	fi_addr_t ta;

	(void)state;
	assert_non_null(src);
	assert_non_null(back);
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				    &info), 0);
	assert_true(info->caps & FI_RMA_EVENT);
	assert_int_equal(fi_endpoint(T.domain, info, &tep, NULL), 0);
	assert_int_equal(fi_cntr_open(T.domain, &ca, &wcntr, NULL), 0);
	assert_int_equal(fi_cntr_open(T.domain, &ca, &rcntr, NULL), 0);
	assert_int_equal(fi_ep_bind(tep, &T.av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(tep, &T.cq->fid, FI_TRANSMIT | FI_RECV),
			 0);
	assert_int_equal(fi_ep_bind(tep, &wcntr->fid, FI_REMOTE_WRITE), 0);
	assert_int_equal(fi_ep_bind(tep, &rcntr->fid, FI_REMOTE_READ), 0);
	assert_int_equal(fi_enable(tep), 0);
	assert_int_equal(fi_getname(&tep->fid, name, &len), 0);
	assert_int_equal(fi_av_insert(T.av, name, 1, &ta, 0, NULL), 1);

	for (i = 0; i < 3; i++) {
		t_fill(src, sizes[i], (unsigned)(80 + i));
		memset(back, 0, sizes[i]);
		T_POST(&T, fi_write(T.ep[0], src, sizes[i], NULL, ta,
				    raddr(tbuf, 1 << 20), key, &c[0]));
		t_wait_ok(&T, &c[0]);
		t_cntr_wait(wcntr, i + 1);
		assert_int_equal(t_check(tbuf + (1 << 20), sizes[i], 80 + i),
				 -1);
		T_POST(&T, fi_read(T.ep[0], back, sizes[i], NULL, ta,
				   raddr(tbuf, 1 << 20), key, &c[1]));
		t_wait_ok(&T, &c[1]);
		t_cntr_wait(rcntr, i + 1);
		assert_int_equal(t_check(back, sizes[i], 80 + i), -1);
	}
	T_POST(&T, fi_writedata(T.ep[0], src, 16, NULL, 0x5151, ta,
				raddr(tbuf, 4096), key, &c[2]));
	t_wait_ok(&T, &c[2]);
	e = t_wait_ok(&T, NULL);	/* the target's entry has no context */
	assert_int_equal(e.flags, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
	assert_int_equal(e.data, 0x5151);
	t_cntr_wait(wcntr, 4);
	*t64 = 35;
	T_POST(&T, fi_atomic(T.ep[0], &add, 1, NULL, ta, raddr(tbuf, 2097152),
			     key, FI_UINT64, FI_SUM, &c[3]));
	t_wait_ok(&T, &c[3]);
	t_cntr_wait(wcntr, 5);
	T_POST(&T, fi_fetch_atomic(T.ep[0], &add, 1, NULL, &old, NULL, ta,
				   raddr(tbuf, 2097152), key, FI_UINT64,
				   FI_SUM, &c[4]));
	t_wait_ok(&T, &c[4]);
	t_cntr_wait(rcntr, 4);
	assert_int_equal(old, 42);
	assert_int_equal(*t64, 49);
	/* nothing counted twice, nothing in the error counts */
	assert_int_equal(fi_cntr_read(wcntr), 5);
	assert_int_equal(fi_cntr_read(rcntr), 4);
	assert_int_equal(fi_cntr_readerr(wcntr), 0);
	assert_int_equal(fi_cntr_readerr(rcntr), 0);

	assert_int_equal(fi_av_remove(T.av, &ta, 1, 0), 0);
	assert_int_equal(fi_close(&tep->fid), 0);
	assert_int_equal(fi_close(&wcntr->fid), 0);
	assert_int_equal(fi_close(&rcntr->fid), 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	free(src);
	free(back);
}

/* Two endpoints writing to each other as fast as they can (upstream's
 * fi_rma_bw -o write both ways): each first fills the other's queue with
 * requests without progressing, then both post and progress in turns.
 * Every request's ACK needs a cell in its initiator's queue, which is
 * full of the other side's requests: the target must not wait for that
 * cell with the request in hand, or neither side ever moves again. Inject
 * writes, inline reads and fetching atomics (replies with data), each
 * checked at the end. */
#define XN 1500	/* several times the default 256 cells per queue */

static bool t_cross_post(int kind, int s, int i, uint64_t *src,
			 uint64_t *dst, struct fi_context *ctx)
{
	size_t base = 1048576 + (size_t)s * 65536;	/* s's target area */
	uint64_t at = raddr(tbuf, base + (size_t)i * 8);
	ssize_t r;

	src[i] = ((uint64_t)s << 32) | (uint64_t)(i + 1);
	if (kind == 0)
		r = fi_inject_write(T.ep[s], &src[i], 8, T.addr[!s], at, key);
	else if (kind == 1)
		r = fi_read(T.ep[s], &dst[i], 8, NULL, T.addr[!s], at, key,
			    &ctx[i]);
	else
		r = fi_fetch_atomic(T.ep[s], &src[i], 1, NULL, &dst[i], NULL,
				    T.addr[!s], at, key, FI_UINT64, FI_SUM,
				    &ctx[i]);
	if (r == -FI_EAGAIN)
		return false;
	assert_int_equal(r, 0);
	return true;
}

static void t_cross(int kind)
{
	uint64_t *src[2], *dst[2];
	struct fi_context *ctx[2];
	int sent[2] = { 0, 0 }, s, i;
	uint64_t deadline = t_now_s() + 10;

	for (s = 0; s < 2; s++) {
		src[s] = calloc(XN, 8);
		dst[s] = calloc(XN, 8);
		ctx[s] = calloc(XN, sizeof(**ctx));
		assert_non_null(src[s]);
		assert_non_null(dst[s]);
		assert_non_null(ctx[s]);
		/* reads see, fetches add to, a known value per slot */
		for (i = 0; i < XN; i++)
			((uint64_t *)(tbuf + 1048576 + s * 65536))[i] =
				kind ? 1000 + (uint64_t)i : 0;
	}
	while (sent[0] < XN || sent[1] < XN) {
		for (s = 0; s < 2; s++)
			while (sent[s] < XN &&
			       t_cross_post(kind, s, sent[s], src[s], dst[s],
					    ctx[s]))
				sent[s]++;
		t_poll(&T);
		if (t_now_s() > deadline)
			fail_msg("both sides stuck: %d and %d of %d posted",
				 sent[0], sent[1], XN);
	}
	for (s = 0; s < 2; s++) {
		uint64_t *area = (uint64_t *)(tbuf + 1048576 + s * 65536);

		if (kind == 0) {
			/* a read behind the writes (RMA RAW order) */
			struct fi_context rc;
			uint64_t last = 0;

			T_POST(&T, fi_read(T.ep[s], &last, 8, NULL, T.addr[!s],
					   raddr(tbuf, 1048576 + s * 65536 +
							(XN - 1) * 8), key,
					   &rc));
			t_wait_ok(&T, &rc);
			assert_int_equal(last, src[s][XN - 1]);
		} else {
			for (i = 0; i < XN; i++)
				t_wait_ok(&T, &ctx[s][i]);
		}
		for (i = 0; i < XN; i++) {
			if (kind == 0)
				assert_int_equal(area[i], src[s][i]);
			else
				assert_int_equal(dst[s][i], 1000 + (uint64_t)i);
			if (kind == 2)
				assert_int_equal(area[i],
						 1000 + (uint64_t)i + src[s][i]);
		}
		free(src[s]);
		free(dst[s]);
		free(ctx[s]);
	}
}

static void test_cross_inject_write(void **state)
{
	(void)state;
	t_cross(0);
}

static void test_cross_read(void **state)
{
	(void)state;
	t_cross(1);
}

static void test_cross_fetch_atomic(void **state)
{
	(void)state;
	t_cross(2);
}

/* Each test with CMA, and with CMA refused (initial state non-NULL). */
#define T_RMA(f)							\
	{ "cma/" #f, f, setup, teardown, NULL },			\
	{ "bounce/" #f, f, setup, teardown, (void *)1 }

int main(void)
{
	const struct CMUnitTest tests[] = {
		T_RMA(test_write_read),
		T_RMA(test_writedata_inject),
		T_RMA(test_rma_errors),
		T_RMA(test_rma_thresholds),
		T_RMA(test_writedata_large),
		T_RMA(test_rma_iov),
		T_RMA(test_rma_no_iov),
		T_RMA(test_inject_write_at_inject_size),
		T_RMA(test_rma_order),
		T_RMA(test_rma_errors_large),
		T_RMA(test_rma_mr_closed_mid),
		T_RMA(test_atomic_sum),
		T_RMA(test_atomic_write_cswap),
		T_RMA(test_inject_flag_rma),
		T_RMA(test_rma_event),
		T_RMA(test_cross_inject_write),
		T_RMA(test_cross_read),
		T_RMA(test_cross_fetch_atomic),
		T_RMA(test_atomic_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
