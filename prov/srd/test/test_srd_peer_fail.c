/* SPDX-License-Identifier: MIT */
/*
 * The peer-failure contract (weft/util_peer.h) in srd, protocol by
 * protocol: once a peer's endpoint is gone, everything queued toward it or
 * partly received from it ends with an error completion within a bounded
 * time (the liveness probe interval, FI_SRD_LONG_PROBE_MS = 20 here, plus
 * the device's answer), never a wait forever and never a success.
 *
 * Two srd endpoints in one process over softsrd; "dies" is fi_close of an
 * endpoint (its QP is gone: the device answers "remote endpoint gone").
 * One source, three programs (the device's settings are read once per
 * process): TPF_MODE "read" (RDMA read on: eager, medium, long by read,
 * RMA), "cts" (RDMA read off: long by credits), "ring" (poll on data:
 * small messages by RDMA write into the peer's ring).
 *
 * To catch a message half way, the sender keeps only a few packet buffers
 * (the rest of its free list is set aside) and only the receiver
 * progresses: the sender's pump, which would send the rest, never runs
 * before the sender dies.
 */
#include "test_srd_rma_common.h"
#include "../src/rdm/srd_rma.h"
#include "../src/rdm/proto/srd_ring.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TPF_MODE
#define TPF_MODE "read"
#endif

#define PROBE_MS 20
/* What "bounded" means here: probes every 20 ms and an answer from the
 * device, with room for a loaded machine. */
#define BOUND_NS (10ull * 1000000000ull)
#define MIB (1024 * 1024)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Read one entry of e's CQ into its stash (e's progress only). */
static int poll_one(struct tep *e)
{
	struct fi_cq_tagged_entry ent;
	struct fi_cq_err_entry err;
	struct tent *t = &e->ents[e->n];
	ssize_t ret;

	if (!e->ep)
		return 0;
	ret = fi_cq_read(e->cq, &ent, 1);
	if (ret == -FI_EAGAIN)
		return 0;
	assert_true(e->n < TCQ_MAX);
	memset(t, 0, sizeof(*t));
	if (ret == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(fi_cq_readerr(e->cq, &err, 0), 1);
		t->e.op_context = err.op_context;
		t->e.flags = err.flags;
		t->err = err.err;
		t->prov_errno = err.prov_errno;
	} else {
		assert_int_equal(ret, 1);
		t->e = ent;
	}
	e->n++;
	return 1;
}

/* Progress only e until it has n entries; they must all come within
 * BOUND_NS. Returns the time it took. */
static uint64_t wait_n(struct tep *e, int n)
{
	uint64_t t0 = now_ns(), dt = 0;

	while (e->n < n && (dt = now_ns() - t0) < BOUND_NS)
		poll_one(e);
	if (e->n < n)
		fail_msg("%d of %d completions after %llu ms: the peer's "
			 "failure left work waiting", e->n, n,
			 (unsigned long long)(dt / 1000000));
	return dt;
}

/* Run poll until cond holds, within BOUND_NS. */
#define UNTIL(cond, poll)						\
	do {								\
		uint64_t until_t0_ = now_ns();				\
									\
		while (!(cond) && now_ns() - until_t0_ < BOUND_NS)	\
			poll;						\
		if (!(cond))						\
			fail_msg("waited %llu ms for " #cond,		\
				 (unsigned long long)BOUND_NS / 1000000); \
	} while (0)

/* The next entry of e must be an error for ctx, with err and prov_errno. */
static void take_err_is(struct tep *e, void *ctx, int err, int prov_errno)
{
	struct tent t = tfab_take(e);

	if (!t.err)
		fail_msg("a success for %p where the peer died",
			 t.e.op_context);
	assert_ptr_equal(t.e.op_context, ctx);
	print_message("#   %p: %s (prov_errno %d)\n", ctx, fi_strerror(t.err),
		      t.prov_errno);
	assert_int_equal(t.err, err);
	assert_int_equal(t.prov_errno, prov_errno);
}

/* Something of ours toward the dead peer: the device's answer, "remote
 * endpoint gone". */
static void take_err(struct tep *e, void *ctx)
{
	take_err_is(e, ctx, FI_ENOTCONN, SRD_EFA_IO_REMOTE_BAD_DEST_QPN);
}

/* A message from the dead peer that can no longer arrive whole: the
 * peer's failure as the cause (the device's "remote endpoint gone"), so a
 * collective above it names the cause, not a bare FI_EIO. */
static void take_lost(struct tep *e, void *ctx)
{
	take_err_is(e, ctx, FI_ENOTCONN, SRD_PROV_ERRNO_PEER_LOST);
}

static void die(struct tep *e)
{
	assert_int_equal(fi_close(&e->ep->fid), 0);
	e->ep = NULL;
}

static struct srd_ep *sep(struct tep *e)
{
	return to_srd_ep(e->ep);
}

/* Leave e's endpoint n free packet buffers; the others are set aside
 * (they stay in the slab, which the endpoint frees at close). */
static void keep_txbufs(struct tep *e, int n)
{
	struct srd_txbuf *tb = sep(e)->tx_free;

	while (tb && --n > 0)
		tb = tb->next;
	assert_non_null(tb);
	tb->next = NULL;
}

/* The receive-side transfer of e's only peer, NULL when none. */
static struct srd_rx_xfer *rx_xfer(struct tep *e)
{
	struct srd_ep *ep = sep(e);

	return ep->peer_count ? ep->peers[0]->rx_xfers : NULL;
}

/* Whether e found its only peer gone (a new handshake would start). */
static bool peer_failed(struct tep *e)
{
	return sep(e)->peers[0]->state != SRD_PEER_READY;
}

/* Progress b alone until a's message, matched or not, has `bytes` in
 * (and not all of it). */
static void wait_partial(struct tfab *f, uint64_t bytes, uint64_t total)
{
	struct srd_rx_xfer *x;

	UNTIL(rx_xfer(&f->b) && rx_xfer(&f->b)->received >= bytes,
	      poll_one(&f->b));
	x = rx_xfer(&f->b);
	assert_true(x->received < total);
	print_message("#   %llu of %llu bytes in when the sender dies\n",
		      (unsigned long long)x->received,
		      (unsigned long long)total);
}

static int unexp_count(struct tep *e)
{
	struct util_unexp_entry *u;
	int n = 0;

	for (u = sep(e)->srx.msg_q.unexp; u; u = u->next)
		n++;
	return n;
}

/* Two endpoints (their handshake done when asked), and buffers of len
 * bytes, MEDIUM_LEN meaning 8 segments of a medium message. */
#define MEDIUM_LEN 0
struct tpf {
	struct tfab f;
	uint8_t *src;
	uint8_t *dst;
	size_t len;
};

static void pf_open(struct tpf *t, size_t len, bool handshake)
{
	tfab_open(&t->f, 0, true);
	t->len = len == MEDIUM_LEN ? 7 * t->f.eager_max + 100 : len;
	len = t->len;
	t->src = calloc(1, len);
	t->dst = malloc(len);
	assert_non_null(t->src);
	assert_non_null(t->dst);
	if (handshake)
		tfab_hello(&t->f);
}

static void pf_close(struct tpf *t)
{
	free(t->src);
	free(t->dst);
	tfab_close(&t->f);
}

static uint64_t stat_of(struct tep *e, size_t off)
{
	return *(const uint64_t *)((const uint8_t *)&sep(e)->lstat + off);
}

/* ---- eager ---- */

/* Eager sends queued behind the handshake toward an endpoint that is gone:
 * each ends with an error, none with a success. */
static void test_eager_queued(void **state)
{
	struct tpf t;
	int ctx[8], i;

	(void)state;
	pf_open(&t, 64, false);
	die(&t.f.b);
	for (i = 0; i < 8; i++)
		assert_int_equal(fi_send(t.f.a.ep, t.src, t.len, NULL,
					 t.f.a.peer, &ctx[i]), 0);
	wait_n(&t.f.a, 8);
	for (i = 0; i < 8; i++)
		take_err(&t.f.a, &ctx[i]);
	pf_close(&t);
}

/* ---- sends waiting on a receiver that dies ---- */

/* A message of len bytes goes to b, which dies before taking it (unexpected
 * there, or not even arrived); a's send ends with an error. stat: the
 * counter of the protocol the send must have taken (or -1). */
static void receiver_gone(size_t len, long stat)
{
	struct tpf t;
	uint64_t n0;
	int ctx;

	pf_open(&t, len, true);
	len = t.len;
	n0 = stat >= 0 ? stat_of(&t.f.a, (size_t)stat) : 0;
	tfab_send(&t.f, t.src, len, 0, false, &ctx);
	if (stat >= 0) {
		assert_int_equal(stat_of(&t.f.a, (size_t)stat), n0 + 1);
		UNTIL(sep(&t.f.b)->srx.msg_q.unexp, tfab_poll(&t.f));
	}
	die(&t.f.b);
	wait_n(&t.f.a, 1);
	take_err(&t.f.a, &ctx);
	pf_close(&t);
}

/* ---- medium ---- */

/* A medium send toward an endpoint that is gone. */
static void test_medium_receiver_gone(void **state)
{
	(void)state;
	receiver_gone(MEDIUM_LEN, -1);
}

/* The sender dies after `keep` of 8 segments of a medium message: with a
 * receive posted (posted) or none yet. The receive ends with an error,
 * found by the receiver's liveness probe (it sends nothing else to the
 * sender); one posted after the sender died takes the partial message
 * from the unexpected queue and ends with the error too. */
static void medium_partial(bool posted, int keep)
{
	struct tpf t;
	int sctx, rctx;

	pf_open(&t, MEDIUM_LEN, true);
	if (posted)
		tfab_recv(&t.f, t.dst, t.len, 0, false, &rctx);
	keep_txbufs(&t.f.a, keep);
	assert_int_equal(fi_send(t.f.a.ep, t.src, t.len, NULL, t.f.a.peer,
				 &sctx), 0);
	wait_partial(&t.f, keep * t.f.eager_max, t.len);
	assert_true(posted || sep(&t.f.b)->srx.msg_q.unexp);
	die(&t.f.a);
	if (!posted) {
		/* b progresses (its probe finds a gone) before it posts */
		UNTIL(peer_failed(&t.f.b), poll_one(&t.f.b));
		assert_int_equal(fi_recv(t.f.b.ep, t.dst, t.len, NULL,
					 FI_ADDR_UNSPEC, &rctx), 0);
	}
	wait_n(&t.f.b, 1);
	take_lost(&t.f.b, &rctx);
	pf_close(&t);
}

static void test_medium_partial_matched(void **state)
{
	(void)state;
	medium_partial(true, 2);
}

static void test_medium_partial_unexpected(void **state)
{
	(void)state;
	medium_partial(false, 3);
}

/* ---- long by RDMA read ---- */

/* The receiver dies while the sender waits for its READ_DONE. */
static void test_long_read_receiver_gone(void **state)
{
	(void)state;
	receiver_gone(MIB, offsetof(struct srd_long_stats, long_rts));
}

/* Two long messages wait unexpected at the receiver when their sender
 * dies; both receives posted afterwards end with an error: the first
 * finds the sender gone by its RDMA read, the second is posted once the
 * receiver knows, and no read goes to a failed peer before a new
 * handshake, which fails in turn. */
static void test_long_read_sender_gone(void **state)
{
	struct tpf t;
	int sctx[2], rctx[2];

	(void)state;
	pf_open(&t, 2 * MIB, true);
	tfab_send(&t.f, t.src, MIB, 0, false, &sctx[0]);
	tfab_send(&t.f, t.src + MIB, MIB, 0, false, &sctx[1]);
	assert_int_equal(sep(&t.f.a)->lstat.long_rts, 2);
	UNTIL(unexp_count(&t.f.b) == 2, tfab_poll(&t.f));
	die(&t.f.a);
	assert_int_equal(fi_recv(t.f.b.ep, t.dst, MIB, NULL, FI_ADDR_UNSPEC,
				 &rctx[0]), 0);
	wait_n(&t.f.b, 1);
	take_err(&t.f.b, &rctx[0]);
	UNTIL(peer_failed(&t.f.b), poll_one(&t.f.b));
	assert_int_equal(fi_recv(t.f.b.ep, t.dst + MIB, MIB, NULL,
				 FI_ADDR_UNSPEC, &rctx[1]), 0);
	wait_n(&t.f.b, 1);
	take_lost(&t.f.b, &rctx[1]);
	pf_close(&t);
}

/* The sender gives up a long message while it waits unexpected at a
 * receiver that is alive (its device timed the receiver out, say, on a
 * busy machine): its send ends with that error and its buffer's key is
 * revoked. The receive posted afterwards finds the key gone by its read:
 * that is the sender's withdrawal (FI_EIO, "withdrawn by its sender"),
 * not a permission error of the receiving application (FI_EACCES, as
 * before). */
static void test_long_read_sender_gave_up(void **state)
{
	struct tpf t;
	int sctx, rctx;

	(void)state;
	pf_open(&t, MIB, true);
	tfab_send(&t.f, t.src, MIB, 0, false, &sctx);
	UNTIL(unexp_count(&t.f.b) == 1, tfab_poll(&t.f));
	srd_peer_fail(sep(&t.f.a), sep(&t.f.a)->peers[0], FI_ETIMEDOUT,
		      SRD_EFA_IO_LOCAL_UNRESP_REMOTE);
	wait_n(&t.f.a, 1);
	take_err_is(&t.f.a, &sctx, FI_ETIMEDOUT, SRD_EFA_IO_LOCAL_UNRESP_REMOTE);
	assert_int_equal(fi_recv(t.f.b.ep, t.dst, MIB, NULL, FI_ADDR_UNSPEC,
				 &rctx), 0);
	wait_n(&t.f.b, 1);
	take_err_is(&t.f.b, &rctx, FI_EIO, SRD_PROV_ERRNO_WITHDRAWN);
	pf_close(&t);
}

/* ---- long by credits (CTS) ---- */

/* The sender dies part way through a matched CTS transfer: the receive
 * (part of its buffer granted and filled) ends with an error. */
static void test_cts_sender_gone(void **state)
{
	struct tpf t;
	int sctx, rctx;

	(void)state;
	pf_open(&t, 8 * MIB, true);
	tfab_recv(&t.f, t.dst, t.len, 0, false, &rctx);
	keep_txbufs(&t.f.a, 4);
	tfab_send(&t.f, t.src, t.len, 0, false, &sctx);
	assert_int_equal(sep(&t.f.a)->lstat.cts_rts, 1);
	/* both progress: the grant must reach the sender, which sends DATA
	 * four packets at a time */
	UNTIL(rx_xfer(&t.f.b) && rx_xfer(&t.f.b)->received >= 2 * t.f.mtu,
	      tfab_poll(&t.f));
	assert_true(rx_xfer(&t.f.b)->received < t.len);
	die(&t.f.a);
	t.f.a.n = 0;
	wait_n(&t.f.b, 1);
	take_lost(&t.f.b, &rctx);
	pf_close(&t);
}

/* The receiver dies while the sender waits for a grant. */
static void test_cts_receiver_gone(void **state)
{
	(void)state;
	receiver_gone(4 * MIB, offsetof(struct srd_long_stats, cts_rts));
}

/* ---- ring (poll on data) ---- */

/* Small messages toward a peer whose ring is gone: the ring writes fail,
 * each send ends with an error, and nothing more goes into that ring. */
static void test_ring_receiver_gone(void **state)
{
	struct tpf t;
	uint64_t ring0;
	int ctx[4], i;

	(void)state;
	pf_open(&t, 32, true);
	tfab_hello(&t.f);
	assert_non_null(sep(&t.f.a)->ring);
	assert_true(sep(&t.f.a)->peers[0]->ring->tx_ready);
	ring0 = sep(&t.f.a)->ring->stats.tx_ring;
	die(&t.f.b);
	for (i = 0; i < 4; i++)
		assert_int_equal(fi_send(t.f.a.ep, t.src, t.len, NULL,
					 t.f.a.peer, &ctx[i]), 0);
	assert_true(sep(&t.f.a)->ring->stats.tx_ring > ring0);
	wait_n(&t.f.a, 4);
	for (i = 0; i < 4; i++)
		take_err(&t.f.a, &ctx[i]);
	assert_false(sep(&t.f.a)->peers[0]->ring->tx_ready);
	pf_close(&t);
}

/* ---- RMA and atomics ---- */

/* The initiator's only operation in flight. */
static struct srd_rma_op *rma_op(struct trma *t)
{
	struct srd_rma_ep *r = to_srd_ep(t->f.a.ep)->rma;
	int i;

	for (i = 0; i < SRD_RMA_OPS_MAX; i++)
		if (r->ops[i].in_use)
			return &r->ops[i];
	fail_msg("no RMA operation in flight");
	return NULL;
}

enum rma_kind { RMA_READ, RMA_WRITE, RMA_ATOMIC };

/* An emulated operation whose target takes the request (its device
 * received every packet: a's sends completed), then dies before it
 * answers: the operation ends with an error instead of waiting for the
 * answer. Device RDMA toward a target that is gone, and an emulated
 * operation posted after it went (dead_first: its request packet comes
 * back failed): the device's error. */
static void rma_target_gone_at(enum rma_kind kind, bool emulate, bool dead_first)
{
	struct trma t;
	uint8_t buf[64 * 1024] = { 0 };
	uint64_t res = 0;
	ssize_t ret;
	int ctx;

	srd_rma_force_emulation = emulate;
	trma_open(&t, FI_REMOTE_READ | FI_REMOTE_WRITE);
	assert_true(emulate || to_srd_ep(t.f.a.ep)->rma->hw_write);
	if (!emulate || dead_first)
		die(&t.f.b);
	if (kind == RMA_READ)
		ret = fi_read(t.f.a.ep, buf, sizeof(buf), NULL, t.f.a.peer,
			      t.base, t.key, &ctx);
	else if (kind == RMA_WRITE)
		ret = fi_write(t.f.a.ep, buf, sizeof(buf), NULL, t.f.a.peer,
			       t.base, t.key, &ctx);
	else
		ret = fi_fetch_atomic(t.f.a.ep, buf, 1, NULL, &res, NULL,
				      t.f.a.peer, t.base, t.key, FI_UINT64,
				      FI_SUM, &ctx);
	assert_int_equal(ret, 0);
	if (emulate && !dead_first) {
		UNTIL(!rma_op(&t)->sends && rma_op(&t)->inflight,
		      poll_one(&t.f.a));
		die(&t.f.b);
	}
	wait_n(&t.f.a, 1);
	take_err(&t.f.a, &ctx);
	trma_close(&t);
	srd_rma_force_emulation = false;
}

static void rma_target_gone(enum rma_kind kind, bool emulate)
{
	rma_target_gone_at(kind, emulate, false);
}

static void test_rma_emu_read_target_gone(void **state)
{
	(void)state;
	rma_target_gone(RMA_READ, true);
}

static void test_rma_emu_write_target_gone(void **state)
{
	(void)state;
	rma_target_gone(RMA_WRITE, true);
}

static void test_atomic_target_gone(void **state)
{
	(void)state;
	rma_target_gone(RMA_ATOMIC, true);
}

static void test_rma_hw_target_gone(void **state)
{
	(void)state;
	rma_target_gone(RMA_WRITE, false);
}

/* The request's packet fails: the operation names the device's cause,
 * not an unspecified error. */
static void test_atomic_after_target_gone(void **state)
{
	(void)state;
	rma_target_gone_at(RMA_ATOMIC, true, true);
}

static void test_rma_emu_write_after_target_gone(void **state)
{
	(void)state;
	rma_target_gone_at(RMA_WRITE, true, true);
}

/* ---- a target process killed with RMA in flight ---- */

#define DEAD_OPS 128
/* Once the device has declared the peer unresponsive, what is left must
 * drain within this (util_peer.h: detection time plus a bounded drain). */
#define DRAIN_NS (2ull * 1000000000ull)
#define DETECT_NS (7ull * 1000000000ull)

/* What the target process tells the initiator through a pipe. */
struct target_info {
	char name[64];
	size_t namelen;
	uint64_t key;
	uint64_t base;
};

/* The target: an endpoint with a registered region that progresses until
 * it is killed (this program again, run as "target FD"). */
static int target_main(int fd)
{
	struct target_info ti;
	struct trma t;

	trma_open(&t, FI_REMOTE_READ | FI_REMOTE_WRITE);
	memset(&ti, 0, sizeof(ti));
	memcpy(ti.name, t.f.b.name, t.f.b.namelen);
	ti.namelen = t.f.b.namelen;
	ti.key = t.key;
	ti.base = t.base;
	if (write(fd, &ti, sizeof(ti)) != (ssize_t)sizeof(ti))
		return 1;
	close(fd);
	for (;;)
		tfab_poll(&t.f);
}

static pid_t target_start(struct target_info *ti)
{
	char fdstr[16];
	int pfd[2];
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(pfd[0]);
		snprintf(fdstr, sizeof(fdstr), "%d", pfd[1]);
		/* its report must not mix into the parent's TAP stream */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execl("/proc/self/exe", "test_srd_peer_fail", "target", fdstr,
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], ti, sizeof(*ti)), sizeof(*ti));
	close(pfd[0]);
	return pid;
}

/* 128 device writes and reads of 1 MiB toward a process that was killed
 * (it never answers again: every packet times out): all end with an
 * error, and the last within DRAIN_NS of the first. The device used to
 * retry them a window at a time, ~5 errors per second. */
static void test_rma_target_killed(void **state)
{
	struct target_info ti;
	uint64_t t_kill, t_first = 0, t_last = 0;
	fi_addr_t dead;
	uint8_t *buf;
	struct trma t;
	struct tfab *f = &t.f;
	int ctx[DEAD_OPS], i, errs = 0, status;
	pid_t pid;

	(void)state;
	pid = target_start(&ti);
	trma_open(&t, FI_REMOTE_READ | FI_REMOTE_WRITE);
	assert_true(to_srd_ep(f->a.ep)->rma->hw_write);
	assert_int_equal(fi_av_insert(f->a.av, ti.name, 1, &dead, 0, NULL), 1);
	buf = calloc(1, MIB);
	assert_non_null(buf);
	/* alive: one write completes (and the handshake is done) */
	assert_int_equal(fi_write(f->a.ep, buf, MIB, NULL, dead, ti.base,
				  ti.key, &ctx[0]), 0);
	wait_n(&f->a, 1);
	assert_int_equal(tfab_take(&f->a).err, 0);

	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	t_kill = now_ns();
	for (i = 0; i < DEAD_OPS; i++)
		assert_int_equal(i % 2 ?
				 fi_read(f->a.ep, buf, MIB, NULL, dead,
					 ti.base, ti.key, &ctx[i]) :
				 fi_write(f->a.ep, buf, MIB, NULL, dead,
					  ti.base, ti.key, &ctx[i]), 0);
	while (errs < DEAD_OPS && now_ns() - t_kill < BOUND_NS * 6) {
		if (!poll_one(&f->a))
			continue;
		if (!tfab_take(&f->a).err)
			fail_msg("a success from a killed target");
		t_last = now_ns();
		if (!errs++)
			t_first = t_last;
	}
	print_message("#   %d errors: first %llu ms after the kill, last "
		      "%llu ms after the first\n", errs,
		      (unsigned long long)(t_first - t_kill) / 1000000,
		      (unsigned long long)(t_last - t_first) / 1000000);
	assert_int_equal(errs, DEAD_OPS);
	/* detection: softsrd's FI_SRD_SOFT_DEAD_MS of silence (default
	 * 5 s), plus slack for a loaded machine */
	assert_true(t_first - t_kill <= DETECT_NS);
	assert_true(t_last - t_first <= DRAIN_NS);
	free(buf);
	trma_close(&t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest read_tests[] = {
		cmocka_unit_test(test_eager_queued),
		cmocka_unit_test(test_medium_receiver_gone),
		cmocka_unit_test(test_medium_partial_matched),
		cmocka_unit_test(test_medium_partial_unexpected),
		cmocka_unit_test(test_long_read_receiver_gone),
		cmocka_unit_test(test_long_read_sender_gone),
		cmocka_unit_test(test_long_read_sender_gave_up),
		cmocka_unit_test(test_rma_emu_read_target_gone),
		cmocka_unit_test(test_rma_emu_write_target_gone),
		cmocka_unit_test(test_atomic_target_gone),
		cmocka_unit_test(test_rma_hw_target_gone),
		cmocka_unit_test(test_atomic_after_target_gone),
		cmocka_unit_test(test_rma_emu_write_after_target_gone),
		cmocka_unit_test(test_rma_target_killed),
	};
	const struct CMUnitTest cts_tests[] = {
		cmocka_unit_test(test_cts_sender_gone),
		cmocka_unit_test(test_cts_receiver_gone),
		cmocka_unit_test(test_medium_partial_matched),
	};
	const struct CMUnitTest ring_tests[] = {
		cmocka_unit_test(test_ring_receiver_gone),
		cmocka_unit_test(test_eager_queued),
	};
	char probe[16];

	tfab_env();
	if (argc == 3 && !strcmp(argv[1], "target"))
		return target_main(atoi(argv[2]));
	snprintf(probe, sizeof(probe), "%d", PROBE_MS);
	setenv("FI_SRD_LONG_PROBE_MS", probe, 1);
	if (!strcmp(TPF_MODE, "cts")) {
		setenv("FI_SRD_SOFT_RDMA_READ", "0", 1);
		return cmocka_run_group_tests_name("srd_peer_fail_cts",
						   cts_tests, NULL, NULL);
	}
	if (!strcmp(TPF_MODE, "ring")) {
		setenv("FI_SRD_SOFT_IN_ORDER", "whole", 1);
		setenv("FI_SRD_POLL_MODE", "data", 1);
		return cmocka_run_group_tests_name("srd_peer_fail_ring",
						   ring_tests, NULL, NULL);
	}
	return cmocka_run_group_tests_name("srd_peer_fail", read_tests, NULL,
					   NULL);
}
