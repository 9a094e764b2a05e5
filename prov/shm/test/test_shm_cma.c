/* SPDX-License-Identifier: MIT */
/*
 * shm transport: single-copy (CMA) and the bounce-segment fallback, both
 * checked byte by byte across sizes, offsets and iovec shapes.
 */
#include "weft/compat.h"
#include "../src/shm_transport.h"
#include "shm_test_util.h"

#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#define BIG	(16u << 20)
#define PAD	64

static const size_t sizes[] = {
	0, 1, 7, 1039, 1040, 1041, 4095, 4096, 4111, 4112, 4113, 4239, 4240, 4241, 65535, 65536, 65537,
	1u << 20, (1u << 20) + 13, BIG,
};

/* Buffers shared by parent and child at the same addresses (fork). */
static uint8_t *src_buf, *dst_buf;

static int cma_group_setup(void **state)
{
	src_buf = mmap(NULL, BIG + PAD, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst_buf = mmap(NULL, BIG + PAD, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return src_buf == MAP_FAILED || dst_buf == MAP_FAILED;
}

static int cma_group_teardown(void **state)
{
	munmap(src_buf, BIG + PAD);
	munmap(dst_buf, BIG + PAD);
	return 0;
}

/* Cut [base, base+len) into n pieces of uneven sizes, every 11th empty;
 * the last piece takes the rest. Returns the total (always len). */
static size_t cut_iov(struct iovec *iov, size_t n, uint8_t *base, size_t len,
		      unsigned salt)
{
	size_t i, off = 0;

	for (i = 0; i < n; i++) {
		size_t left = len - off;
		size_t piece = len / n + (i * 7 + salt) % 5;

		if ((i + salt) % 11 == 0)
			piece = 0;
		if (piece > left || i + 1 == n)
			piece = left;
		iov[i].iov_base = base + off;
		iov[i].iov_len = piece;
		off += piece;
	}
	return off;
}

/* The child rewrites its private copy of src_buf with pattern "seed" and
 * waits; the parent reads it by CMA into dst_buf. */
static int child_fill_wait(int rd, int wr, void *arg)
{
	uint64_t seed = (uintptr_t)arg;
	char go;

	shm_test_fill(src_buf, BIG + PAD, seed, 0);
	shm_test_write(wr, "r", 1);
	shm_test_read(rd, &go, 1);
	return 0;
}

static void test_cma_read_sizes(void **state)
{
	struct shm_test_child kid;
	struct iovec l, r;
	size_t i, k;
	char ack;

	shm_test_fill(src_buf, BIG + PAD, 1, 0);	/* parent's copy differs */
	assert_int_equal(shm_test_fork(&kid, child_fill_wait, (void *)2), 0);
	assert_int_equal(shm_test_read(kid.from_child, &ack, 1), 0);
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++) {
		static const size_t offs[][2] = { { 0, 0 }, { 3, 5 }, { 61, 1 } };

		for (k = 0; k < WEFT_ARRAY_SIZE(offs); k++) {
			size_t len = sizes[i], ro = offs[k][0], lo = offs[k][1];

			memset(dst_buf, 0xee, len + PAD);
			l = (struct iovec){ dst_buf + lo, len };
			r = (struct iovec){ src_buf + ro, len };
			assert_int_equal(shm_cma_read(kid.pid, &l, 1, &r, 1),
					 (ssize_t)len);
			assert_int_equal(shm_test_check(dst_buf + lo, len, 2, ro),
					 len);
			assert_int_equal(dst_buf[lo + len], 0xee);
		}
	}
	assert_int_equal(shm_test_wait(&kid), 0);
}

/* Lists of different lengths (a split copy reads its part out of a remote
 * list that names the whole message): exactly the shorter side's bytes
 * move, the rest of the longer side is left alone. */
static void test_cma_read_uneven(void **state)
{
	struct shm_test_child kid;
	struct iovec l, r, r2[2];
	size_t i;
	char ack;

	shm_test_fill(src_buf, BIG + PAD, 1, 0);
	assert_int_equal(shm_test_fork(&kid, child_fill_wait, (void *)5), 0);
	assert_int_equal(shm_test_read(kid.from_child, &ack, 1), 0);
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++) {
		size_t len = sizes[i];

		/* remote longer than local */
		memset(dst_buf, 0xee, BIG + PAD);
		l = (struct iovec){ dst_buf, len };
		r = (struct iovec){ src_buf, BIG };
		assert_int_equal(shm_cma_read(kid.pid, &l, 1, &r, 1),
				 (ssize_t)len);
		assert_int_equal(shm_test_check(dst_buf, len, 5, 0), len);
		assert_int_equal(dst_buf[len], 0xee);
		/* two remote pieces, the second only partly used */
		memset(dst_buf, 0xee, BIG + PAD);
		r2[0] = (struct iovec){ src_buf, len / 2 };
		r2[1] = (struct iovec){ src_buf + len / 2, BIG - len / 2 };
		assert_int_equal(shm_cma_read(kid.pid, &l, 1, r2, 2),
				 (ssize_t)len);
		assert_int_equal(shm_test_check(dst_buf, len, 5, 0), len);
		assert_int_equal(dst_buf[len], 0xee);
		/* local longer than remote */
		memset(dst_buf, 0xee, BIG + PAD);
		l = (struct iovec){ dst_buf, BIG };
		r = (struct iovec){ src_buf + 3, len };
		assert_int_equal(shm_cma_read(kid.pid, &l, 1, &r, 1),
				 (ssize_t)len);
		assert_int_equal(shm_test_check(dst_buf, len, 5, 3), len);
		assert_int_equal(dst_buf[len], 0xee);
	}
	assert_int_equal(shm_test_wait(&kid), 0);
}

/* More elements than IOV_MAX on both sides, cut differently; also a local
 * side longer than the remote one (min of both is copied). */
static void test_cma_read_many_iov(void **state)
{
	enum { NL = 3000, NR = 2500 };
	struct iovec *l = calloc(NL, sizeof(*l)), *r = calloc(NR, sizeof(*r));
	size_t len = (1u << 20) + 77, total_l, total_r;
	struct shm_test_child kid;
	char ack;

	assert_non_null(l);
	assert_non_null(r);
	assert_true(NL > IOV_MAX);
	assert_int_equal(shm_test_fork(&kid, child_fill_wait, (void *)3), 0);
	assert_int_equal(shm_test_read(kid.from_child, &ack, 1), 0);
	memset(dst_buf, 0, len + PAD);
	total_l = cut_iov(l, NL, dst_buf + 1, len, 1);
	total_r = cut_iov(r, NR, src_buf + 9, len, 2);
	assert_int_equal(total_l, len);
	assert_int_equal(total_r, len);
	assert_int_equal(shm_cma_read(kid.pid, l, NL, r, NR), (ssize_t)len);
	assert_int_equal(shm_test_check(dst_buf + 1, len, 3, 9), len);

	r[NR - 1].iov_len -= 100;
	memset(dst_buf, 0, len + PAD);
	assert_int_equal(shm_cma_read(kid.pid, l, NL, r, NR),
			 (ssize_t)(len - 100));
	assert_int_equal(shm_test_check(dst_buf + 1, len - 100, 3, 9),
			 len - 100);
	assert_int_equal(dst_buf[1 + len - 100], 0);
	assert_int_equal(shm_test_wait(&kid), 0);
	free(l);
	free(r);
}

/* The parent writes into the child's dst_buf; the child checks and
 * reports through its exit status. */
static int child_wait_check(int rd, int wr, void *arg)
{
	size_t len;

	memset(dst_buf, 0, BIG + PAD);
	shm_test_write(wr, "r", 1);
	if (shm_test_read(rd, &len, sizeof(len)))
		return 2;
	return shm_test_check(dst_buf + 7, len, 4, 0) == len &&
	       dst_buf[7 + len] == 0 && dst_buf[6] == 0 ? 0 : 1;
}

static void test_cma_write(void **state)
{
	size_t i;

	shm_test_fill(src_buf, BIG + PAD, 4, 0);
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++) {
		struct iovec l[4], r[3];
		struct shm_test_child kid;
		size_t len = sizes[i];
		char ack;

		cut_iov(l, 4, src_buf, len, 5);
		cut_iov(r, 3, dst_buf + 7, len, 6);
		assert_int_equal(shm_test_fork(&kid, child_wait_check, NULL), 0);
		assert_int_equal(shm_test_read(kid.from_child, &ack, 1), 0);
		assert_int_equal(shm_cma_write(kid.pid, l, 4, r, 3),
				 (ssize_t)len);
		shm_test_write(kid.to_child, &len, sizeof(len));
		assert_int_equal(shm_test_wait(&kid), 0);
	}
}

static void test_cma_errors(void **state)
{
	struct iovec l = { dst_buf, 4096 };
	struct iovec bad = { (void *)(uintptr_t)0x10, 4096 };
	struct iovec r = { src_buf, 4096 };

	assert_int_equal(shm_cma_read(getpid(), &l, 1, &bad, 1), -FI_EFAULT);
	/* Valid first element, unmapped second: partial, then the fault. */
	{
		struct iovec two[2] = { { src_buf, 4096 }, { (void *)0x10, 10 } };
		struct iovec big = { dst_buf, 8192 };

		assert_int_equal(shm_cma_read(getpid(), &big, 1, two, 2),
				 -FI_EFAULT);
	}
	shm_cma_test_refuse = 1;
	assert_int_equal(shm_cma_read(getpid(), &l, 1, &r, 1), -FI_EPERM);
	assert_int_equal(shm_cma_write(getpid(), &l, 1, &r, 1), -FI_EPERM);
	shm_cma_test_refuse = 0;
	assert_int_equal(shm_cma_read(getpid(), &l, 1, NULL, 1), -FI_EINVAL);
}

/* A copy from a process that is gone fails with -FI_ESHUTDOWN, and the
 * transfer completes with the cause, FI_EHOSTUNREACH (a dead peer), not
 * FI_EIO; refusal and short copies keep theirs. */
static void test_cma_cause(void **state)
{
	struct iovec l = { dst_buf, 64 }, r = { src_buf, 64 };
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(shm_cma_read(pid, &l, 1, &r, 1), -FI_ESHUTDOWN);
	assert_int_equal(shm_cma_cause(-FI_ESHUTDOWN), FI_EHOSTUNREACH);
	assert_int_equal(shm_cma_cause(-FI_EPERM), FI_EOPNOTSUPP);
	assert_int_equal(shm_cma_cause(-FI_EFAULT), FI_EFAULT);
	assert_int_equal(shm_cma_cause(10), FI_EIO);
	assert_int_equal(shm_cma_status(64, 64), 0);
	assert_int_equal(shm_cma_status(-FI_ESHUTDOWN, 64), FI_EHOSTUNREACH);
}

/* Probe result per peer: on when CMA works here, off when the endpoint
 * says so or CMA is refused. */
static void test_cma_probe(void **state)
{
	struct shm_region_attr a;
	struct shm_region *self, *other;
	struct shm_peer *p;
	struct iovec l = { dst_buf, 8 }, r = { src_buf, 8 };

	assert_int_equal(shm_region_create(NULL, &self), 0);
	assert_int_equal(shm_region_create(NULL, &other), 0);
	assert_int_equal(shm_peer_open(self, shm_region_name(other), &p), 0);
	if (shm_cma_read(getpid(), &l, 1, &r, 1) == 8)
		assert_true(shm_peer_cma(p));
	shm_peer_close(p);

	shm_cma_test_refuse = 1;
	assert_int_equal(shm_peer_open(self, shm_region_name(other), &p), 0);
	assert_false(shm_peer_cma(p));
	shm_peer_close(p);
	shm_cma_test_refuse = 0;
	shm_region_close(self);

	shm_region_attr_default(&a);
	a.cma_mode = SHM_CMA_OFF;
	assert_int_equal(shm_region_create(&a, &self), 0);
	assert_int_equal(shm_peer_open(self, shm_region_name(other), &p), 0);
	assert_false(shm_peer_cma(p));
	shm_peer_close(p);
	shm_region_close(self);
	shm_region_close(other);
}

/* ---- bounce segments ---------------------------------------------- */

struct bounce_pair {
	struct shm_region *pusher;
	struct shm_region *puller;
	struct shm_peer *peer;		/* puller's handle to the pusher */
};

static void bounce_open(struct bounce_pair *bp, uint32_t seg_size,
			uint32_t segs)
{
	struct shm_region_attr a;

	shm_region_attr_default(&a);
	a.bounce_seg_size = seg_size;
	a.bounce_seg_count = segs;
	a.cma_mode = SHM_CMA_OFF;
	assert_int_equal(shm_region_create(&a, &bp->pusher), 0);
	assert_int_equal(shm_region_create(&a, &bp->puller), 0);
	assert_int_equal(shm_peer_open(bp->puller, shm_region_name(bp->pusher),
				       &bp->peer), 0);
	assert_false(shm_peer_cma(bp->peer));
}

static void bounce_close(struct bounce_pair *bp)
{
	shm_peer_close(bp->peer);
	shm_region_close(bp->puller);
	shm_region_close(bp->pusher);
}

/* One process, alternating push and pull, iovecs cut differently on each
 * side, pattern checked and the bytes beyond untouched. */
static void test_bounce_sizes(void **state)
{
	struct bounce_pair bp;
	size_t i;

	bounce_open(&bp, 64 * 1024, 4);
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++) {
		size_t len = sizes[i];
		struct iovec siov[5], diov[3];
		struct shm_bounce_tx tx = { .iov = siov, .iov_count = 5,
					    .total = len };
		struct shm_bounce_rx rx = { .iov = diov, .iov_count = 3,
					    .total = len };
		int done_tx = 0, done_rx = 0;

		shm_test_fill(src_buf, len + 3, (uint64_t)i, 0);
		memset(dst_buf, 0xee, len + PAD);
		cut_iov(siov, 5, src_buf + 3, len, (unsigned)i);
		cut_iov(diov, 3, dst_buf + 5, len, (unsigned)i + 1);
		tx.xfer_id = rx.xfer_id = shm_bounce_xfer_id(bp.pusher);
		while (!done_tx || !done_rx) {
			done_tx = shm_bounce_push(bp.pusher, &tx);
			assert_true(done_tx >= 0);
			if (!done_rx)
				done_rx = shm_bounce_pull(bp.peer, &rx);
			assert_true(done_rx >= 0);
		}
		assert_int_equal(shm_test_check(dst_buf + 5, len, i, 3), len);
		assert_int_equal(dst_buf[5 + len], 0xee);
		assert_int_equal(dst_buf[4], 0xee);
		assert_int_equal(bp.pusher->seg_owned, 0);
	}
	bounce_close(&bp);
}

/* Two transfers share the pool with a window each; their segments never
 * mix up. */
static void test_bounce_two_transfers(void **state)
{
	size_t len = (1u << 20) + 5;
	struct iovec s1 = { src_buf, len }, s2 = { src_buf + (4u << 20), len };
	struct iovec d1 = { dst_buf, len }, d2 = { dst_buf + (4u << 20), len };
	struct shm_bounce_tx t1 = { &s1, 1, len }, t2 = { &s2, 1, len };
	struct shm_bounce_rx r1 = { &d1, 1, len }, r2 = { &d2, 1, len };
	struct bounce_pair bp;
	int a = 0, b = 0, c = 0, d = 0;

	bounce_open(&bp, 4096, 8);
	shm_test_fill(s1.iov_base, len, 21, 0);
	shm_test_fill(s2.iov_base, len, 22, 0);
	t1.window = t2.window = 3;
	t1.xfer_id = r1.xfer_id = shm_bounce_xfer_id(bp.pusher);
	t2.xfer_id = r2.xfer_id = shm_bounce_xfer_id(bp.pusher);
	assert_int_not_equal(t1.xfer_id, t2.xfer_id);
	while (!a || !b || !c || !d) {
		a = shm_bounce_push(bp.pusher, &t1);
		b = shm_bounce_push(bp.pusher, &t2);
		assert_true(__builtin_popcountll(t1.inflight) <= 3);
		if (!d)
			d = shm_bounce_pull(bp.peer, &r2);
		if (!c)
			c = shm_bounce_pull(bp.peer, &r1);
	}
	assert_int_equal(shm_test_check(d1.iov_base, len, 21, 0), len);
	assert_int_equal(shm_test_check(d2.iov_base, len, 22, 0), len);
	bounce_close(&bp);
}

/* A segment with our id but out-of-range offset/len is refused. */
static void test_bounce_malformed(void **state)
{
	struct iovec s = { src_buf, 100 }, d = { dst_buf, 100 };
	struct shm_bounce_tx tx = { &s, 1, 100 };
	struct shm_bounce_rx rx = { &d, 1, 100 };
	struct bounce_pair bp;

	bounce_open(&bp, 4096, 2);
	tx.xfer_id = rx.xfer_id = shm_bounce_xfer_id(bp.pusher);
	assert_int_equal(shm_bounce_push(bp.pusher, &tx), 0);
	/* Each malformed header is refused and the segment marked
	 * rejected (filled again here, as a buggy pusher would). */
	bp.pusher->segs[0].len = 5000;
	assert_int_equal(shm_bounce_pull(bp.peer, &rx), -FI_EINVAL);
	assert_int_equal(atomic_load(&bp.pusher->segs[0].state),
			 SHM_SEG_REJECTED);
	atomic_store(&bp.pusher->segs[0].state, SHM_SEG_FILLED);
	bp.pusher->segs[0].len = 60;
	bp.pusher->segs[0].offset = 50;
	assert_int_equal(shm_bounce_pull(bp.peer, &rx), -FI_EINVAL);
	atomic_store(&bp.pusher->segs[0].state, SHM_SEG_FILLED);
	bp.pusher->segs[0].offset = UINT64_MAX - 10;
	assert_int_equal(shm_bounce_pull(bp.peer, &rx), -FI_EINVAL);
	assert_int_equal(rx.received, 0);
	/* Other ids are not ours: ignored, even filled. */
	atomic_store(&bp.pusher->segs[0].state, SHM_SEG_FILLED);
	rx.xfer_id++;
	assert_int_equal(shm_bounce_pull(bp.peer, &rx), 0);
	assert_int_equal(atomic_load(&bp.pusher->segs[0].state),
			 SHM_SEG_FILLED);
	shm_bounce_tx_abort(bp.pusher, &tx);
	assert_int_equal(bp.pusher->seg_owned, 0);
	assert_int_equal(atomic_load(&bp.pusher->segs[0].state), SHM_SEG_FREE);
	bounce_close(&bp);
}

/* The pusher of a transfer whose segment was rejected takes back all its
 * segments and ends it with -FI_EIO, without waiting for drains that
 * will never come. */
static void test_bounce_rejected(void **state)
{
	struct iovec s = { src_buf, 3 * 4096 }, d = { dst_buf, 3 * 4096 };
	struct shm_bounce_tx tx = { &s, 1, 3 * 4096 };
	struct shm_bounce_rx rx = { &d, 1, 3 * 4096 };
	struct bounce_pair bp;

	(void)state;
	bounce_open(&bp, 4096, 4);
	tx.xfer_id = rx.xfer_id = shm_bounce_xfer_id(bp.pusher);
	assert_int_equal(shm_bounce_push(bp.pusher, &tx), 0);
	assert_int_equal(__builtin_popcountll(bp.pusher->seg_owned), 3);
	assert_int_equal(atomic_load(&bp.pusher->segs[1].state),
			 SHM_SEG_FILLED);
	bp.pusher->segs[1].len = 4097;
	assert_int_equal(shm_bounce_pull(bp.peer, &rx), -FI_EINVAL);
	assert_int_equal(shm_bounce_push(bp.pusher, &tx), 1);
	assert_int_equal(tx.err, -FI_EIO);
	assert_int_equal(tx.inflight, 0);
	assert_int_equal(bp.pusher->seg_owned, 0);
	assert_int_equal(atomic_load(&bp.pusher->segs[0].state), SHM_SEG_FREE);
	assert_int_equal(atomic_load(&bp.pusher->segs[1].state), SHM_SEG_FREE);
	bounce_close(&bp);
}

/* Pusher and puller in two processes running at once: the pipelined
 * case. The child pulls 16 MiB + 3 and checks every byte. */
static int child_pull(int rd, int wr, void *arg)
{
	const char *name = arg;
	struct shm_region *self;
	struct shm_peer *p;
	struct iovec d = { dst_buf, BIG + 3 };
	struct shm_bounce_rx rx = { &d, 1, BIG + 3 };
	int ret;

	if (shm_test_read(rd, &rx.xfer_id, sizeof(rx.xfer_id)) ||
	    shm_region_create(NULL, &self) || shm_peer_open(self, name, &p))
		return 2;
	memset(dst_buf, 0, BIG + PAD);
	while (!(ret = shm_bounce_pull(p, &rx)))
		;
	if (ret < 0)
		return 3;
	ret = shm_test_check(dst_buf, BIG + 3, 31, 0) == BIG + 3 ? 0 : 1;
	shm_peer_close(p);
	shm_region_close(self);
	return ret;
}

static void test_bounce_cross_process(void **state)
{
	struct iovec s = { src_buf, BIG + 3 };
	struct shm_bounce_tx tx = { &s, 1, BIG + 3 };
	struct shm_region_attr a;
	struct shm_test_child kid;
	struct shm_region *self;

	shm_region_attr_default(&a);
	assert_int_equal(shm_region_create(&a, &self), 0);
	shm_test_fill(src_buf, BIG + 3, 31, 0);
	tx.xfer_id = shm_bounce_xfer_id(self);
	tx.window = 8;
	assert_int_equal(shm_test_fork(&kid, child_pull,
				       (void *)shm_region_name(self)), 0);
	shm_test_write(kid.to_child, &tx.xfer_id, sizeof(tx.xfer_id));
	while (!shm_bounce_push(self, &tx))
		sched_yield();
	assert_int_equal(shm_test_wait(&kid), 0);
	shm_region_close(self);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cma_read_sizes),
		cmocka_unit_test(test_cma_read_many_iov),
		cmocka_unit_test(test_cma_read_uneven),
		cmocka_unit_test(test_cma_write),
		cmocka_unit_test(test_cma_errors),
		cmocka_unit_test(test_cma_cause),
		cmocka_unit_test(test_cma_probe),
		cmocka_unit_test(test_bounce_sizes),
		cmocka_unit_test(test_bounce_two_transfers),
		cmocka_unit_test(test_bounce_malformed),
		cmocka_unit_test(test_bounce_rejected),
		cmocka_unit_test(test_bounce_cross_process),
	};

	return cmocka_run_group_tests(tests, cma_group_setup,
				      cma_group_teardown);
}
