/* SPDX-License-Identifier: MIT */
/*
 * shm provider, messages between endpoints of one process (the protocol is
 * the same as between processes: cells, RTS + CMA or bounce pulls, ACKs).
 */
#include "shm_prov_test.h"

#include "../src/shm.h"

#include <unistd.h>

static struct tctx T;

#define CAPS (FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_MULTI_RECV | \
	      FI_SOURCE)

static size_t t_payload_max(void)
{
	return SHM_DEF_CELL_SIZE - SHM_CELL_HDR_SIZE;
}

/* Sizes around every threshold: the bytes in the cell's first line (the
 * sender copies 1-3, 4-7, 8-16 bytes by different moves), inline payload,
 * bounce segment and window, then large ones. */
static size_t t_sizes(size_t *out)
{
	size_t p = t_payload_max(), seg = SHM_DEF_BOUNCE_SEG_SIZE;
	size_t win = seg * SHM_DEF_BOUNCE_SEGS;
	size_t s[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, p - 1,
		       p, p + 1, 4096, seg - 1, seg, seg + 1, win - 1, win,
		       win + 1, 1 << 20 };

	memcpy(out, s, sizeof(s));
	return WEFT_ARRAY_SIZE(s);
}

static int setup(void **state)
{
	(void)state;
	t_open(&T, CAPS, 3);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	t_close(&T);
	return 0;
}

static void t_xfer(size_t len, bool tagged, bool unexpected, unsigned seed)
{
	uint8_t *sbuf = malloc(len + 1), *rbuf = malloc(len + 1);
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;

	assert_non_null(sbuf);
	assert_non_null(rbuf);
	t_fill(sbuf, len, seed);
	memset(rbuf, 0xee, len + 1);
	if (!unexpected)
		T_POST(&T, tagged ?
		       fi_trecv(T.ep[1], rbuf, len, NULL, FI_ADDR_UNSPEC,
				0x1234, 0, &rctx) :
		       fi_recv(T.ep[1], rbuf, len, NULL, FI_ADDR_UNSPEC,
			       &rctx));
	T_POST(&T, tagged ?
	       fi_tsend(T.ep[0], sbuf, len, NULL, T.addr[1], 0x1234, &sctx) :
	       fi_send(T.ep[0], sbuf, len, NULL, T.addr[1], &sctx));
	if (unexpected) {
		/* Let the message arrive before the receive exists. */
		for (int i = 0; i < 100; i++)
			t_poll(&T);
		T_POST(&T, tagged ?
		       fi_trecv(T.ep[1], rbuf, len, NULL, FI_ADDR_UNSPEC,
				0x1234, 0, &rctx) :
		       fi_recv(T.ep[1], rbuf, len, NULL, FI_ADDR_UNSPEC,
			       &rctx));
	}
	e = t_wait_ok(&T, &rctx);
	assert_int_equal(e.len, len);
	assert_true(e.flags & FI_RECV);
	assert_true(e.flags & (tagged ? FI_TAGGED : FI_MSG));
	if (tagged)
		assert_int_equal(e.tag, 0x1234);
	e = t_wait_ok(&T, &sctx);
	assert_true(e.flags & FI_SEND);
	if (t_check(rbuf, len, seed) != -1)
		fail_msg("size %zu: byte %ld differs", len,
			 t_check(rbuf, len, seed));
	assert_int_equal(rbuf[len], 0xee);
	free(sbuf);
	free(rbuf);
}

static void test_sizes(bool unexpected)
{
	size_t sizes[32], n = t_sizes(sizes), i;

	for (i = 0; i < n; i++) {
		t_xfer(sizes[i], false, unexpected, (unsigned)i);
		t_xfer(sizes[i], true, unexpected, (unsigned)i + 100);
	}
	/* The largest size once per mode: 16 MiB. */
	t_xfer(16 << 20, !unexpected, unexpected, 7);
}

static void test_sizes_posted(void **state)
{
	(void)state;
	test_sizes(false);
}

static void test_sizes_unexpected(void **state)
{
	(void)state;
	test_sizes(true);
}

/* The same with CMA refused: large messages through bounce segments. */
static void test_sizes_bounce(void **state)
{
	(void)state;
	t_close(&T);
	shm_cma_test_refuse = 1;
	t_open(&T, CAPS, 3);
	test_sizes(false);
	test_sizes(true);
	t_close(&T);
	shm_cma_test_refuse = 0;
	t_open(&T, CAPS, 3);
}

/* Split copies (receiver pulls the first half, sender pushes the second):
 * every byte lands where it belongs around the split threshold and the
 * page-aligned split point, with the default threshold and with a tiny one
 * that splits messages just above the smallest splittable size. */
static void test_split_sizes(void **state)
{
	const size_t def = SHM_DEF_SPLIT_SIZE;
	const size_t big[] = { def - 1, def, def + 1, def + 4095, def + 4097,
			       (1 << 20) + 1 };
	const size_t small[] = { 4113, 8191, 8192, 8193, 12287, 12289,
				 65537 };
	size_t saved = shm_env.split_size, i;
	/* CTSs the receiver sent: proof the split path ran. */
	uint64_t seq0 = to_shm_ep(T.ep[1])->split_seq;

	(void)state;
	assert_int_equal(saved, def);
	for (i = 0; i < WEFT_ARRAY_SIZE(big); i++) {
		t_xfer(big[i], false, false, (unsigned)i + 1);
		t_xfer(big[i], true, true, (unsigned)i + 2);
	}
	shm_env.split_size = 4096;
	for (i = 0; i < WEFT_ARRAY_SIZE(small); i++) {
		t_xfer(small[i], false, false, (unsigned)i + 3);
		t_xfer(small[i], true, false, (unsigned)i + 4);
		t_xfer(small[i], false, true, (unsigned)i + 5);
	}
	shm_env.split_size = saved;
	/* Every big one from the threshold on, and the small ones from
	 * 8192 B (at least a page per side). */
	assert_int_equal(to_shm_ep(T.ep[1])->split_seq - seq0,
			 2 * (WEFT_ARRAY_SIZE(big) - 1) + 3 * 5);
}

/* The receiver's part of a split follows what it learned of the two
 * copies' speeds: whatever the share, every byte lands where it belongs,
 * each side keeps at least a page, and what is learned stays within
 * [1/8, 7/8] (one process here: the sender's part runs after ours, a
 * skewed sample that must only hit the bound). */
static void test_split_share(void **state)
{
	static const size_t lens[] = { 8192, 12289, 65537, (1 << 20) + 1 };
	const uint32_t shares[] = { 0, SHM_SPLIT_ONE / 8, SHM_SPLIT_ONE / 3,
				    SHM_SPLIT_ONE * 7 / 8, SHM_SPLIT_ONE };
	struct shm_ep *rx = to_shm_ep(T.ep[1]);
	size_t saved = shm_env.split_size, i, j;
	uint64_t seq0 = rx->split_seq;
	struct shm_conn *conn;

	(void)state;
	shm_env.split_size = 4096;
	t_xfer(8192, false, false, 1);	/* makes the receiver's conn */
	conn = rx->conns;
	assert_non_null(conn);
	assert_null(conn->hh.next);
	for (i = 0; i < WEFT_ARRAY_SIZE(shares); i++)
		for (j = 0; j < WEFT_ARRAY_SIZE(lens); j++) {
			conn->split_share = shares[i];
			t_xfer(lens[j], j & 1, false, (unsigned)(i * 7 + j));
			/* one sample, itself within [1/8, 7/8], weighs a
			 * quarter */
			assert_true(4 * conn->split_share + 4 >=
				    3 * shares[i] + SHM_SPLIT_ONE / 8);
			assert_true(4 * conn->split_share <=
				    3 * shares[i] + SHM_SPLIT_ONE * 7 / 8);
		}
	for (j = 0; j < 50; j++)
		t_xfer(65536, false, false, (unsigned)j);
	assert_true(conn->split_share >= SHM_SPLIT_ONE / 8);
	assert_true(conn->split_share <= SHM_SPLIT_ONE - SHM_SPLIT_ONE / 8);
	assert_int_equal(rx->split_seq - seq0,
			 1 + WEFT_ARRAY_SIZE(shares) * WEFT_ARRAY_SIZE(lens) +
				 50);
	shm_env.split_size = saved;
}

/* A split message between iov arrays whose boundaries fall on neither
 * side of the split point: the halves are cut out of both arrays. */
static void test_split_iov(void **state)
{
	static const size_t slen[] = { 5000, 70001, 100003 };
	static const size_t rlen[] = { 1, 99999, 4096, 80000 };
	size_t total = slen[0] + slen[1] + slen[2], off, i;
	uint8_t *s = malloc(total), *r = malloc(total + 1);
	struct iovec siov[3], riov[4];
	struct fi_context sc, rc;
	size_t saved = shm_env.split_size;

	(void)state;
	assert_non_null(s);
	assert_non_null(r);
	shm_env.split_size = 4096;
	t_fill(s, total, 11);
	memset(r, 0xee, total + 1);
	for (i = 0, off = 0; i < 3; off += slen[i], i++)
		siov[i] = (struct iovec){ s + off, slen[i] };
	for (i = 0, off = 0; i < 4; off += rlen[i], i++)
		riov[i] = (struct iovec){ r + off, rlen[i] };
	uint64_t seq0 = to_shm_ep(T.ep[1])->split_seq;

	T_POST(&T, fi_recvv(T.ep[1], riov, NULL, 4, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, fi_sendv(T.ep[0], siov, NULL, 3, T.addr[1], &sc));
	assert_int_equal(t_wait_ok(&T, &rc).len, total);
	t_wait_ok(&T, &sc);
	assert_int_equal(to_shm_ep(T.ep[1])->split_seq, seq0 + 1);
	assert_int_equal(t_check(r, total, 11), -1);
	assert_int_equal(r[total], 0xee);
	shm_env.split_size = saved;
	free(s);
	free(r);
}

/* fi_rx_size_left counts posted receives, fi_tx_size_left operations
 * waiting for an ACK (a large send), both given back at completion.
 * Deprecated in 1.17's headers, still called by older clients. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void test_size_left(void **state)
{
	size_t len = 1 << 20;
	uint8_t *s = malloc(len), *r = malloc(len);
	struct fi_context sc, rc;
	ssize_t tx0, rx0;

	(void)state;
	assert_non_null(s);
	assert_non_null(r);
	tx0 = fi_tx_size_left(T.ep[0]);
	rx0 = fi_rx_size_left(T.ep[1]);
	/* Capped by the free cells of a peer's queue (fi_shm(7)). */
	assert_true(tx0 > 0 && (size_t)tx0 <= T.info->tx_attr->size);
	assert_int_equal(rx0, T.info->rx_attr->size);
	t_fill(s, len, 21);
	T_POST(&T, fi_recv(T.ep[1], r, len, NULL, FI_ADDR_UNSPEC, &rc));
	assert_int_equal(fi_rx_size_left(T.ep[1]), rx0 - 1);
	T_POST(&T, fi_send(T.ep[0], s, len, NULL, T.addr[1], &sc));
	assert_int_equal(fi_tx_size_left(T.ep[0]), tx0 - 1);
	t_wait_ok(&T, &rc);
	t_wait_ok(&T, &sc);
	assert_int_equal(t_check(r, len, 21), -1);
	assert_int_equal(fi_tx_size_left(T.ep[0]), tx0);
	assert_int_equal(fi_rx_size_left(T.ep[1]), rx0);
	free(s);
	free(r);
}
#pragma GCC diagnostic pop

static void test_tagged_order(void **state)
{
	enum { N = 200 };
	static uint32_t sbuf[N], rbuf[N];
	static struct fi_context sctx[N], rctx[N];
	struct fi_cq_tagged_entry e;
	int i;

	(void)state;
	/* Half unexpected, half posted: order holds across both. */
	for (i = 0; i < N / 2; i++) {
		sbuf[i] = (uint32_t)i;
		T_POST(&T, fi_tsend(T.ep[0], &sbuf[i], 4, NULL, T.addr[1],
				    0x77, &sctx[i]));
	}
	for (i = 0; i < 50; i++)
		t_poll(&T);
	for (i = 0; i < N; i++)
		T_POST(&T, fi_trecv(T.ep[1], &rbuf[i], 4, NULL,
				    FI_ADDR_UNSPEC, 0x70, 0x0f, &rctx[i]));
	for (i = N / 2; i < N; i++) {
		sbuf[i] = (uint32_t)i;
		T_POST(&T, fi_tsend(T.ep[0], &sbuf[i], 4, NULL, T.addr[1],
				    0x77, &sctx[i]));
	}
	for (i = 0; i < N; i++) {
		e = t_wait_ok(&T, &rctx[i]);
		assert_int_equal(e.tag, 0x77);
		assert_int_equal(rbuf[i], i);
		t_wait_ok(&T, &sctx[i]);
	}
}

/* Tags select receives: a later receive for tag B gets B's message even
 * though A's arrived first; a receive for A then gets A's. */
static void test_tag_select(void **state)
{
	uint64_t a = 0xa, b = 0xb, ra = 0, rb = 0;
	struct fi_context sa, sb, ca, cb;

	(void)state;
	T_POST(&T, fi_tsend(T.ep[0], &a, 8, NULL, T.addr[1], 1, &sa));
	T_POST(&T, fi_tsend(T.ep[0], &b, 8, NULL, T.addr[1], 2, &sb));
	T_POST(&T, fi_trecv(T.ep[1], &rb, 8, NULL, FI_ADDR_UNSPEC, 2, 0, &cb));
	assert_int_equal(t_wait_ok(&T, &cb).tag, 2);
	assert_int_equal(rb, 0xb);
	T_POST(&T, fi_trecv(T.ep[1], &ra, 8, NULL, FI_ADDR_UNSPEC, 1, 0, &ca));
	assert_int_equal(t_wait_ok(&T, &ca).tag, 1);
	assert_int_equal(ra, 0xa);
	t_wait_ok(&T, &sa);
	t_wait_ok(&T, &sb);
}

/* FI_DIRECTED_RECV: a receive for ep2's address skips ep0's message. */
static void test_directed(void **state)
{
	uint32_t from0 = 100, from2 = 200, r1 = 0, r2 = 0;
	struct fi_context s0, s2, c1, c2;
	fi_addr_t src[1];
	struct fi_cq_tagged_entry e;
	struct t_comp c;

	(void)state;
	T_POST(&T, fi_tsend(T.ep[0], &from0, 4, NULL, T.addr[1], 5, &s0));
	T_POST(&T, fi_tsend(T.ep[2], &from2, 4, NULL, T.addr[1], 5, &s2));
	T_POST(&T, fi_trecv(T.ep[1], &r2, 4, NULL, T.addr[2], 5, 0, &c2));
	e = t_wait_ok(&T, &c2);
	assert_int_equal(r2, 200);
	T_POST(&T, fi_trecv(T.ep[1], &r1, 4, NULL, FI_ADDR_UNSPEC, 5, 0, &c1));
	t_wait_ok(&T, &c1);
	assert_int_equal(r1, 100);
	t_wait_ok(&T, &s0);
	t_wait_ok(&T, &s2);
	(void)e;
	(void)src;
	(void)c;
}

/* FI_SOURCE: fi_cq_readfrom names the sender. */
static void test_source(void **state)
{
	uint32_t v = 9, r = 0;
	struct fi_context s, rc;
	struct fi_cq_tagged_entry e;
	fi_addr_t src = FI_ADDR_UNSPEC;
	uint64_t deadline = t_now_s() + T_DEADLINE_S;
	ssize_t n;

	(void)state;
	T_POST(&T, fi_recv(T.ep[1], &r, 4, NULL, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, fi_send(T.ep[2], &v, 4, NULL, T.addr[1], &s));
	for (;;) {
		n = fi_cq_readfrom(T.cq, &e, 1, &src);
		if (n == 1 && e.op_context == &rc)
			break;
		if (n == 1) {
			struct t_comp *c = &T.stash[T.nstash++];

			memset(c, 0, sizeof(*c));
			c->e = e;
		}
		assert_true(n == 1 || n == -FI_EAGAIN);
		assert_true(t_now_s() <= deadline);
	}
	assert_int_equal(src, T.addr[2]);
	assert_int_equal(r, 9);
	t_wait_ok(&T, &s);
}

static void test_peek_claim_discard(void **state)
{
	uint64_t v1 = 111, v2 = 222, v3 = 333, r = 0;
	struct fi_context s1, s2, s3, p, c;
	struct fi_msg_tagged msg;
	struct iovec iov = { .iov_base = &r, .iov_len = 8 };
	struct fi_cq_err_entry err;
	struct fi_cq_tagged_entry e;

	(void)state;
	memset(&msg, 0, sizeof(msg));
	msg.addr = FI_ADDR_UNSPEC;
	msg.context = &p;

	/* Nothing there: FI_ENOMSG. */
	msg.tag = 0x500;
	T_POST(&T, fi_trecvmsg(T.ep[1], &msg, FI_PEEK));
	err = t_wait_err(&T, &p);
	assert_int_equal(err.err, FI_ENOMSG);

	T_POST(&T, fi_tsend(T.ep[0], &v1, 8, NULL, T.addr[1], 0x501, &s1));
	T_POST(&T, fi_tsenddata(T.ep[0], &v2, 8, NULL, 42, T.addr[1], 0x502,
				&s2));
	T_POST(&T, fi_tsend(T.ep[0], &v3, 8, NULL, T.addr[1], 0x503, &s3));
	t_wait_ok(&T, &s1);
	t_wait_ok(&T, &s2);
	t_wait_ok(&T, &s3);

	/* Plain peek reports without consuming (arrival is via progress). */
	msg.tag = 0x501;
	do {
		T_POST(&T, fi_trecvmsg(T.ep[1], &msg, FI_PEEK));
	} while (t_wait(&T, &p).is_err);
	msg.tag = 0x501;
	T_POST(&T, fi_trecvmsg(T.ep[1], &msg, FI_PEEK));
	e = t_wait_ok(&T, &p);
	assert_int_equal(e.len, 8);
	assert_int_equal(e.tag, 0x501);

	/* Peek + claim, then claim with a buffer: the data. */
	msg.msg_iov = &iov;
	msg.iov_count = 1;
	msg.tag = 0x502;
	msg.context = &c;
	T_POST(&T, fi_trecvmsg(T.ep[1], &msg, FI_PEEK | FI_CLAIM));
	e = t_wait_ok(&T, &c);
	assert_int_equal(e.data, 42);
	assert_true(e.flags & FI_REMOTE_CQ_DATA);
	/* A claimed message is hidden from ordinary receives. */
	msg.context = &p;
	T_POST(&T, fi_trecvmsg(T.ep[1], &msg, FI_PEEK));
	assert_int_equal(t_wait_err(&T, &p).err, FI_ENOMSG);
	msg.context = &c;
	T_POST(&T, fi_trecvmsg(T.ep[1], &msg, FI_CLAIM));
	e = t_wait_ok(&T, &c);
	assert_int_equal(r, 222);
	assert_int_equal(e.len, 8);

	/* Peek + discard drops 0x503; the first one is still there. */
	msg.tag = 0x503;
	msg.context = &p;
	T_POST(&T, fi_trecvmsg(T.ep[1], &msg, FI_PEEK | FI_DISCARD));
	t_wait_ok(&T, &p);
	T_POST(&T, fi_trecvmsg(T.ep[1], &msg, FI_PEEK));
	assert_int_equal(t_wait_err(&T, &p).err, FI_ENOMSG);
	r = 0;
	T_POST(&T, fi_trecv(T.ep[1], &r, 8, NULL, FI_ADDR_UNSPEC, 0x501, 0,
			    &c));
	t_wait_ok(&T, &c);
	assert_int_equal(r, 111);
}

static void test_cancel(void **state)
{
	uint64_t r;
	struct fi_context c, other;
	struct fi_cq_err_entry err;

	(void)state;
	T_POST(&T, fi_trecv(T.ep[1], &r, 8, NULL, FI_ADDR_UNSPEC, 0x600, 0,
			    &c));
	assert_int_equal(fi_cancel(&T.ep[1]->fid, &c), 0);
	err = t_wait_err(&T, &c);
	assert_int_equal(err.err, FI_ECANCELED);
	assert_int_equal(fi_cancel(&T.ep[1]->fid, &other), -FI_ENOENT);
	T_POST(&T, fi_recv(T.ep[1], &r, 8, NULL, FI_ADDR_UNSPEC, &c));
	assert_int_equal(fi_cancel(&T.ep[1]->fid, &c), 0);
	assert_int_equal(t_wait_err(&T, &c).err, FI_ECANCELED);
}

static void t_trunc(size_t len, size_t cap, bool tagged)
{
	uint8_t *s = malloc(len), *r = malloc(cap + 16);
	struct fi_context sc, rc;
	struct fi_cq_err_entry err;

	t_fill(s, len, 3);
	memset(r, 0xee, cap + 16);
	T_POST(&T, tagged ? fi_trecv(T.ep[1], r, cap, NULL, FI_ADDR_UNSPEC,
				     9, 0, &rc) :
			    fi_recv(T.ep[1], r, cap, NULL, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, tagged ? fi_tsend(T.ep[0], s, len, NULL, T.addr[1], 9, &sc) :
			    fi_send(T.ep[0], s, len, NULL, T.addr[1], &sc));
	err = t_wait_err(&T, &rc);
	assert_int_equal(err.err, FI_ETRUNC);
	assert_int_equal(err.len, cap);
	assert_int_equal(err.olen, len - cap);
	assert_int_equal(t_check(r, cap, 3), -1);
	assert_int_equal(r[cap], 0xee);
	/* The sender's message was delivered (cut): it succeeds. */
	t_wait_ok(&T, &sc);
	free(s);
	free(r);
}

static void test_truncation(void **state)
{
	size_t saved = shm_env.split_size;

	(void)state;
	t_trunc(100, 40, false);
	t_trunc(100, 40, true);
	/* Split copies of what fits: both parts stop at the buffer's end. */
	t_trunc(600000, 300001, false);
	shm_env.split_size = 4096;
	t_trunc(20000, 12289, true);
	t_trunc(20000, 4095, false);
	shm_env.split_size = saved;
	t_trunc(1 << 20, 5000, true);
	t_trunc(1 << 20, 0, false);
}

static void test_multi_recv(void **state)
{
	enum { MSG = 1000, N = 10 };
	static uint8_t buf[4096], s[N][MSG];
	struct fi_context mc, sc[N];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1,
			      .addr = FI_ADDR_UNSPEC, .context = &mc };
	size_t min = 1024, off = 0;
	int i, got = 0;
	bool released = false;

	(void)state;
	assert_int_equal(fi_setopt(&T.ep[1]->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
			 0);
	T_POST(&T, fi_recvmsg(T.ep[1], &msg, FI_MULTI_RECV));
	for (i = 0; i < N; i++) {
		memset(s[i], i + 1, MSG);
		T_POST(&T, fi_send(T.ep[0], s[i], MSG, NULL, T.addr[1],
				   &sc[i]));
	}
	/* 4096 bytes hold 4 messages: the 4th leaves < 1024 free. */
	while (!released) {
		struct fi_cq_tagged_entry e = t_wait_ok(&T, &mc);

		assert_int_equal(e.len, MSG);
		assert_ptr_equal(e.buf, buf + off);
		assert_int_equal(buf[off], got + 1);
		assert_int_equal(buf[off + MSG - 1], got + 1);
		off += MSG;
		got++;
		released = e.flags & FI_MULTI_RECV;
	}
	assert_int_equal(got, 4);
	/* The rest waits for new buffers. */
	for (i = got; i < N; i++) {
		uint8_t r[MSG];
		struct fi_context rc;

		T_POST(&T, fi_recv(T.ep[1], r, MSG, NULL, FI_ADDR_UNSPEC, &rc));
		t_wait_ok(&T, &rc);
		assert_int_equal(r[0], i + 1);
	}
	for (i = 0; i < N; i++)
		t_wait_ok(&T, &sc[i]);
}

/* fi_inject / fi_tinject / injectdata: no completion; a send after them
 * gives the only transmit completion. */
static void test_inject(void **state)
{
	uint32_t a = 1, b = 2, c = 3, d = 4, r[4] = { 0 };
	struct fi_context rc[4], sc;
	int i, tx = 0;

	(void)state;
	T_POST(&T, fi_inject(T.ep[0], &a, 4, T.addr[1]));
	T_POST(&T, fi_tinject(T.ep[0], &b, 4, T.addr[1], 0x800));
	T_POST(&T, fi_injectdata(T.ep[0], &c, 4, 77, T.addr[1]));
	a = b = c = 0;	/* inject buffers are reusable at once */
	T_POST(&T, fi_send(T.ep[0], &d, 4, NULL, T.addr[1], &sc));
	T_POST(&T, fi_recv(T.ep[1], &r[0], 4, NULL, FI_ADDR_UNSPEC, &rc[0]));
	T_POST(&T, fi_trecv(T.ep[1], &r[1], 4, NULL, FI_ADDR_UNSPEC, 0x800, 0,
			    &rc[1]));
	T_POST(&T, fi_recv(T.ep[1], &r[2], 4, NULL, FI_ADDR_UNSPEC, &rc[2]));
	T_POST(&T, fi_recv(T.ep[1], &r[3], 4, NULL, FI_ADDR_UNSPEC, &rc[3]));
	for (i = 0; i < 4; i++)
		t_wait_ok(&T, &rc[i]);
	t_wait_ok(&T, &sc);
	for (i = 0; i < 100; i++)
		t_poll(&T);
	for (i = 0; i < T.nstash; i++)
		if (!T.stash[i].is_err && (T.stash[i].e.flags & FI_SEND))
			tx++;
	assert_int_equal(tx, 0);
	assert_int_equal(r[0], 1);
	assert_int_equal(r[1], 2);
	assert_int_equal(r[2], 3);
	assert_int_equal(r[3], 4);
}

/* FI_INJECT as a flag of fi_sendmsg / fi_tsendmsg (and in the tx op
 * flags) only lets the caller reuse the buffer at return: the send still
 * completes with its context, and the receiver gets the bytes as they
 * were at the call. Beyond inject_size it is refused. */
static void test_inject_flag_completes(void **state)
{
	const size_t inj = T.info->tx_attr->inject_size;
	uint8_t *src = malloc(inj + 1), *dst = calloc(1, inj + 1);
	struct iovec iov = { .iov_base = src, .iov_len = inj };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1,
			      .addr = T.addr[1] };
	struct fi_msg_tagged tmsg = { .msg_iov = &iov, .iov_count = 1,
				      .addr = T.addr[1], .tag = 0x44 };
	struct fi_context sc[3], rc[3];
	struct fi_cq_tagged_entry e;
	uint64_t opflags = FI_TRANSMIT | FI_INJECT;
	uint32_t v = 0x5eed, r = 0;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	t_fill(src, inj, 31);
	msg.context = &sc[0];
	T_POST(&T, fi_sendmsg(T.ep[0], &msg, FI_INJECT | FI_COMPLETION));
	memset(src, 0xee, inj);	/* reusable at return */
	T_POST(&T, fi_recv(T.ep[1], dst, inj, NULL, FI_ADDR_UNSPEC, &rc[0]));
	e = t_wait_ok(&T, &rc[0]);
	assert_int_equal(e.len, inj);
	assert_int_equal(t_check(dst, inj, 31), -1);
	e = t_wait_ok(&T, &sc[0]);
	assert_true(e.flags & FI_SEND);
	assert_true(e.flags & FI_MSG);

	t_fill(src, inj, 32);
	tmsg.context = &sc[1];
	T_POST(&T, fi_tsendmsg(T.ep[0], &tmsg, FI_INJECT | FI_COMPLETION));
	memset(src, 0xee, inj);
	T_POST(&T, fi_trecv(T.ep[1], dst, inj, NULL, FI_ADDR_UNSPEC, 0x44, 0,
			    &rc[1]));
	t_wait_ok(&T, &rc[1]);
	assert_int_equal(t_check(dst, inj, 32), -1);
	e = t_wait_ok(&T, &sc[1]);
	assert_true(e.flags & FI_TAGGED);

	/* The same as a tx op flag, for the plain calls. */
	assert_int_equal(fi_control(&T.ep[0]->fid, FI_SETOPSFLAG, &opflags), 0);
	T_POST(&T, fi_send(T.ep[0], &v, sizeof(v), NULL, T.addr[1], &sc[2]));
	v = 0;
	T_POST(&T, fi_recv(T.ep[1], &r, sizeof(r), NULL, FI_ADDR_UNSPEC,
			   &rc[2]));
	t_wait_ok(&T, &rc[2]);
	assert_int_equal(r, 0x5eed);
	t_wait_ok(&T, &sc[2]);
	opflags = FI_TRANSMIT;
	assert_int_equal(fi_control(&T.ep[0]->fid, FI_SETOPSFLAG, &opflags), 0);

	/* One byte over inject_size: refused, for the flag and the calls. */
	iov.iov_len = inj + 1;
	assert_int_equal(fi_sendmsg(T.ep[0], &msg, FI_INJECT), -FI_EINVAL);
	assert_int_equal(fi_tsendmsg(T.ep[0], &tmsg, FI_INJECT), -FI_EINVAL);
	assert_int_equal(fi_inject(T.ep[0], src, inj + 1, T.addr[1]),
			 -FI_EINVAL);
	assert_int_equal(fi_tinject(T.ep[0], src, inj + 1, T.addr[1], 1),
			 -FI_EINVAL);
	free(src);
	free(dst);
}

static void test_cq_data(void **state)
{
	uint32_t v = 5, r = 0;
	struct fi_context sc, rc;
	struct fi_cq_tagged_entry e;
	uint64_t data = 0xfedcba9876543210ull;

	(void)state;
	T_POST(&T, fi_recv(T.ep[1], &r, 4, NULL, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, fi_senddata(T.ep[0], &v, 4, NULL, data, T.addr[1], &sc));
	e = t_wait_ok(&T, &rc);
	assert_true(e.flags & FI_REMOTE_CQ_DATA);
	assert_int_equal(e.data, data);
	t_wait_ok(&T, &sc);
}

/* Messages and receives with no iov array at all (msg_iov NULL,
 * iov_count 0), as Open MPI's ofi MTL sends its MPI_Ssend acknowledgement:
 * zero-byte messages that match like any other, whether the receive or
 * the message comes first. The sanitizer build checks that nothing reads
 * through the NULL iov arrays. */
static void test_no_iov(void **state)
{
	struct fi_msg_tagged m = { .addr = FI_ADDR_UNSPEC, .tag = 0x5e };
	struct fi_context sc, rc;
	struct fi_cq_tagged_entry e;
	char buf[8];

	(void)state;
	T_POST(&T, fi_trecv(T.ep[1], buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			    0x5e, 0, &rc));
	m.addr = T.addr[1];
	m.context = &sc;
	T_POST(&T, fi_tsendmsg(T.ep[0], &m, FI_COMPLETION));
	e = t_wait_ok(&T, &rc);
	assert_int_equal(e.len, 0);
	assert_int_equal(e.tag, 0x5e);
	t_wait_ok(&T, &sc);

	m.addr = FI_ADDR_UNSPEC;
	m.context = &rc;
	T_POST(&T, fi_trecvmsg(T.ep[1], &m, FI_COMPLETION));
	T_POST(&T, fi_tsend(T.ep[0], NULL, 0, NULL, T.addr[1], 0x5e, &sc));
	e = t_wait_ok(&T, &rc);
	assert_int_equal(e.len, 0);
	t_wait_ok(&T, &sc);

	T_POST(&T, fi_tsend(T.ep[0], NULL, 0, NULL, T.addr[1], 0x5f, &sc));
	t_wait_ok(&T, &sc);
	m.tag = 0x5f;
	T_POST(&T, fi_trecvmsg(T.ep[1], &m, FI_COMPLETION));
	e = t_wait_ok(&T, &rc);
	assert_int_equal(e.len, 0);
	assert_int_equal(e.tag, 0x5f);
}

static void test_getinfo_addr(void **state)
{
	struct fi_info *hints = t_hints(FI_MSG), *info;
	char dest[T_ADDR_LEN] = "fi_shm://peer-1";

	(void)state;
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, "9228",
				    FI_SOURCE, hints, &info), 0);
	assert_int_equal(info->addr_format, FI_ADDR_STR);
	assert_string_equal((char *)info->src_addr, "fi_shm://9228");
	assert_int_equal(info->src_addrlen, T_ADDR_LEN);
	assert_true(info->ep_attr->mem_tag_format >> 63);
	assert_true(info->caps & FI_LOCAL_COMM);
	fi_freeinfo(info);

	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "9228", 0,
				    hints, &info), 0);
	assert_string_equal((char *)info->dest_addr, "fi_shm://9228");
	fi_freeinfo(info);

	hints->dest_addr = malloc(T_ADDR_LEN);
	memcpy(hints->dest_addr, dest, T_ADDR_LEN);
	hints->dest_addrlen = T_ADDR_LEN;
	hints->addr_format = FI_ADDR_STR;
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				    &info), 0);
	assert_string_equal((char *)info->dest_addr, dest);
	fi_freeinfo(info);

	free(hints->dest_addr);
	hints->dest_addr = NULL;
	hints->dest_addrlen = 0;
	hints->addr_format = FI_SOCKADDR_IN;
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				    &info), -FI_ENODATA);
	fi_freeinfo(hints);
}

/* Names fit FI_NAME_MAX (Open MPI's buffer), a smaller buffer learns the
 * size it needs, names packed back to back insert in one call and resolve
 * to the endpoints they name, and fi_av_straddr prints them as text. */
static void test_getname_fits(void **state)
{
	char packed[3 * FI_NAME_MAX], small[8], str[FI_NAME_MAX + 16];
	fi_addr_t addr[3];
	size_t len = FI_NAME_MAX, slen;

	(void)state;
	assert_int_equal(fi_getname(&T.ep[0]->fid, packed, &len), 0);
	assert_true(len <= FI_NAME_MAX);
	for (int i = 1; i < 3; i++) {
		size_t l = FI_NAME_MAX;

		assert_int_equal(fi_getname(&T.ep[i]->fid, packed + i * len,
					    &l), 0);
		assert_int_equal(l, len);
	}
	slen = sizeof(small);
	assert_int_equal(fi_getname(&T.ep[0]->fid, small, &slen),
			 -FI_ETOOSMALL);
	assert_int_equal(slen, len);
	slen = 0;
	assert_int_equal(fi_getname(&T.ep[0]->fid, NULL, &slen),
			 -FI_ETOOSMALL);
	assert_int_equal(slen, len);

	assert_int_equal(fi_av_insert(T.av, packed, 3, addr, 0, NULL), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(addr[i], T.addr[i]);
	t_xfer(64, false, false, 7);

	slen = sizeof(str);
	assert_non_null(fi_av_straddr(T.av, packed + len, str, &slen));
	assert_string_equal(str, packed + len);
	assert_int_equal(strncmp(str, "fi_shm://", 9), 0);
}

/* Bad addresses never reach the transport. */
static void test_av_bad_addr(void **state)
{
	char bad[T_ADDR_LEN] = "fi_shm://../../etc";
	char pad[T_ADDR_LEN] = "fi_shm://ok";
	fi_addr_t a;

	(void)state;
	pad[40] = 'x';
	assert_int_equal(fi_av_insert(T.av, bad, 1, &a, 0, NULL), 0);
	assert_int_equal(a, FI_ADDR_NOTAVAIL);
	assert_int_equal(fi_av_insert(T.av, pad, 1, &a, 0, NULL), 0);
}

/* An address that names no endpoint: the send fails, nothing hangs. */
static void test_send_no_peer(void **state)
{
	char name[T_ADDR_LEN] = "fi_shm://weftshm-0-0-nobody";
	fi_addr_t a;
	uint32_t v = 0;

	(void)state;
	assert_int_equal(fi_av_insert(T.av, name, 1, &a, 0, NULL), 1);
	assert_int_not_equal(fi_send(T.ep[0], &v, 4, NULL, a, NULL), 0);
	assert_int_equal(fi_av_remove(T.av, &a, 1, 0), 0);
}

/* fabtests style: the server binds to a service, the client derives the
 * same address from node + service and sends to it; FI_SOURCE names the
 * client. */
static void test_named_endpoint(void **state)
{
	struct fi_info *hints = t_hints(FI_MSG | FI_SOURCE), *sinfo, *cinfo;
	struct fid_ep *sep;
	char svc[32], name[T_ADDR_LEN], expect[T_ADDR_LEN];
	size_t len = sizeof(name);
	fi_addr_t server, client;
	uint32_t v = 3, r = 0;
	struct fi_context sc, rc;
	fi_addr_t src = FI_ADDR_UNSPEC;
	struct fi_cq_tagged_entry e;
	uint64_t deadline = t_now_s() + T_DEADLINE_S;

	(void)state;
	snprintf(svc, sizeof(svc), "t%d", (int)getpid());
	snprintf(expect, sizeof(expect), "fi_shm://%s", svc);
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, svc, FI_SOURCE,
				    hints, &sinfo), 0);
	assert_int_equal(fi_endpoint(T.domain, sinfo, &sep, NULL), 0);
	assert_int_equal(fi_ep_bind(sep, &T.av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(sep, &T.cq->fid, FI_TRANSMIT | FI_RECV),
			 0);
	assert_int_equal(fi_enable(sep), 0);
	assert_int_equal(fi_getname(&sep->fid, name, &len), 0);
	assert_string_equal(name, expect);
	/* A second endpoint cannot take a live name. */
	assert_int_not_equal(fi_endpoint(T.domain, sinfo, &T.ep[3], NULL), 0);

	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", svc, 0,
				    hints, &cinfo), 0);
	assert_int_equal(fi_av_insert(T.av, cinfo->dest_addr, 1, &server, 0,
				      NULL), 1);
	T_POST(&T, fi_recv(sep, &r, 4, NULL, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, fi_send(T.ep[0], &v, 4, NULL, server, &sc));
	for (;;) {
		ssize_t n = fi_cq_readfrom(T.cq, &e, 1, &src);

		if (n == 1 && e.op_context == &rc)
			break;
		if (n == 1) {
			struct t_comp *c = &T.stash[T.nstash++];

			memset(c, 0, sizeof(*c));
			c->e = e;
		}
		assert_true(t_now_s() <= deadline);
	}
	client = T.addr[0];
	assert_int_equal(src, client);
	assert_int_equal(r, 3);
	t_wait_ok(&T, &sc);
	assert_int_equal(fi_close(&sep->fid), 0);
	fi_freeinfo(sinfo);
	fi_freeinfo(cinfo);
	fi_freeinfo(hints);
}

/* A named endpoint that goes away is found dead by a send that waits for
 * it; after fi_av_remove, a new endpoint under the same name, inserted
 * again, gets the next message (a restarted server keeps its address). */
static void test_named_endpoint_restart(void **state)
{
	struct fi_info *hints = t_hints(FI_MSG), *sinfo, *cinfo;
	struct fid_ep *sep;
	char svc[32];
	fi_addr_t server;
	uint32_t v = 5, r = 0;
	struct fi_context sc, rc;
	struct fi_msg msg;
	struct iovec iov = { &v, sizeof(v) };
	int round;

	(void)state;
	snprintf(svc, sizeof(svc), "r%d", (int)getpid());
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, svc, FI_SOURCE,
				    hints, &sinfo), 0);
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", svc, 0,
				    hints, &cinfo), 0);
	for (round = 0; round < 2; round++) {
		assert_int_equal(fi_endpoint(T.domain, sinfo, &sep, NULL), 0);
		assert_int_equal(fi_ep_bind(sep, &T.av->fid, 0), 0);
		assert_int_equal(fi_ep_bind(sep, &T.cq->fid,
					    FI_TRANSMIT | FI_RECV), 0);
		assert_int_equal(fi_enable(sep), 0);
		assert_int_equal(fi_av_insert(T.av, cinfo->dest_addr, 1,
					      &server, 0, NULL), 1);
		v = 5 + (uint32_t)round;
		r = 0;
		T_POST(&T, fi_recv(sep, &r, 4, NULL, FI_ADDR_UNSPEC, &rc));
		T_POST(&T, fi_send(T.ep[0], &v, 4, NULL, server, &sc));
		t_wait_ok(&T, &sc);
		t_wait_ok(&T, &rc);
		assert_int_equal(r, 5 + round);
		assert_int_equal(fi_close(&sep->fid), 0);
		/* a send that waits for the closed server finds it dead */
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.iov_count = 1;
		msg.addr = server;
		msg.context = &sc;
		T_POST(&T, fi_sendmsg(T.ep[0], &msg, FI_DELIVERY_COMPLETE));
		assert_int_not_equal(t_wait_err(&T, &sc).err, 0);
		assert_int_equal(fi_av_remove(T.av, &server, 1, 0), 0);
	}
	fi_freeinfo(sinfo);
	fi_freeinfo(cinfo);
	fi_freeinfo(hints);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getinfo_addr),
		cmocka_unit_test_setup_teardown(test_sizes_posted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sizes_unexpected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sizes_bounce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_iov, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_share, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tagged_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tag_select, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peek_claim_discard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multi_recv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inject, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inject_flag_completes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cq_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_iov, setup, teardown),
		cmocka_unit_test_setup_teardown(test_getname_fits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_av_bad_addr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_no_peer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_named_endpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_named_endpoint_restart, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
