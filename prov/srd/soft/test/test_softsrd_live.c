/* SPDX-License-Identifier: MIT */
/*
 * softsrd's judgement of peers (softsrd_rto.c): a live peer is never
 * declared dead, however long it is descheduled or stopped (below
 * FI_SRD_SOFT_DEAD_MS) and however lossy the wire; a silent one is, within
 * FI_SRD_SOFT_DEAD_MS plus a timer check.
 *
 * The peer is a forked process, so SIGSTOP stops all of it, its device
 * thread included, as a starved or stopped process is.
 */
#include "weft/compat.h"
#include "weft/util_time.h"
#include "softsrd_test.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSGS 64
#define SLOT 4096
#define MSG_LEN 3000

static int setup(void **state)
{
	(void)state;
	treset();
	return 0;
}

struct peer_info {
	union ibv_gid gid;
	uint32_t qpn, qkey, rkey;
	uint64_t addr;
};

static void xwrite(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		_exit(90);
}

/* a pipe read with a hang guard: a dead or stuck peer ends the run */
static bool xread(int fd, void *p, size_t n)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 30000) == 1 && read(fd, p, n) == (ssize_t)n;
}

static void info_of(const struct tnode *n, struct peer_info *w)
{
	w->gid = n->gid;
	w->qpn = n->qpn;
	w->qkey = n->qkey;
	w->rkey = n->mr->rkey;
	w->addr = (uintptr_t)n->buf;
}

/* The child: MSGS receives, each checked; then waits for the parent's
 * word (its RDMA write is done) and checks that too. Exit status 0 only
 * if every byte was right and every completion a success. */
static int child_main(int rd, int wr)
{
	struct peer_info me, peer;
	struct tnode n;
	struct tcomp c;
	int bad = 0;
	char go;

	tnode_open(&n, 1 << 20, T_ACCESS_ALL, 1024, 7);
	info_of(&n, &me);
	xwrite(wr, &me, sizeof(me));
	if (!xread(rd, &peer, sizeof(peer)))
		return 10;
	tnode_connect(&n, &peer.gid, peer.qpn, peer.qkey);
	for (int i = 0; i < MSGS; i++)
		if (tpost_recv(&n, (uint64_t)i, n.buf + i * SLOT, SLOT,
			       n.mr->lkey))
			return 11;
	xwrite(wr, "r", 1);
	for (int got = 0; got < MSGS; got++) {
		uint32_t k;

		if (!tpoll_for(&n, &c, 60000))
			return 12;
		if (c.status != IBV_WC_SUCCESS || c.byte_len != MSG_LEN)
			return 13;
		memcpy(&k, n.buf + c.wr_id * SLOT, 4);
		bad |= !tcheck(n.buf + c.wr_id * SLOT + 4, MSG_LEN - 4, k);
	}
	/* the parent's RDMA write is complete when this arrives; until
	 * then this side keeps answering (a read of its buffer) */
	if (!xread(rd, &go, 1))
		return 14;
	bad |= !tcheck(n.buf + 512 * 1024, 256 * 1024, 99) << 1;
	tnode_close(&n);
	return bad;
}

struct child {
	pid_t pid;
	int rd, wr;
	struct peer_info info;
};

static void child_start(struct child *ch, struct tnode *n)
{
	int p2c[2], c2p[2];
	struct peer_info me;
	char r;

	assert_int_equal(pipe(p2c), 0);
	assert_int_equal(pipe(c2p), 0);
	ch->pid = fork();
	assert_true(ch->pid >= 0);
	if (!ch->pid) {
		/* never outlive the parent, never hang the suite */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(120);
		close(p2c[1]);
		close(c2p[0]);
		_exit(child_main(p2c[0], c2p[1]));
	}
	close(p2c[0]);
	close(c2p[1]);
	ch->rd = c2p[0];
	ch->wr = p2c[1];
	tnode_open(n, 1 << 20, T_ACCESS_ALL, 1024, 7);
	info_of(n, &me);
	assert_true(xread(ch->rd, &ch->info, sizeof(ch->info)));
	xwrite(ch->wr, &me, sizeof(me));
	tnode_connect(n, &ch->info.gid, ch->info.qpn, ch->info.qkey);
	assert_true(xread(ch->rd, &r, 1));
}

static int child_end(struct child *ch)
{
	int status;

	assert_int_equal(waitpid(ch->pid, &status, 0), ch->pid);
	close(ch->rd);
	close(ch->wr);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

/* SIGSTOP, and wait until the child has stopped: until then it may still
 * answer (kill only queues the signal). */
static void child_stop(struct child *ch)
{
	int status;

	assert_int_equal(kill(ch->pid, SIGSTOP), 0);
	assert_int_equal(waitpid(ch->pid, &status, WUNTRACED), ch->pid);
	assert_true(WIFSTOPPED(status));
}

static void post_msgs(struct tnode *n, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++) {
		uint8_t *p = n->buf + i * SLOT;

		memcpy(p, &i, 4);
		tfill(p + 4, MSG_LEN - 4, i);
		assert_int_equal(tpost_send(n, i, p, MSG_LEN, n->mr->lkey,
					    false, 0), 0);
	}
}

/* Polls until every posted send completed, each one a success. */
static void expect_sends_ok(struct tnode *n, uint32_t count)
{
	struct tcomp c;

	for (uint32_t done = 0; done < count; done++) {
		tpoll(n, &c);
		assert_int_equal(c.status, IBV_WC_SUCCESS);
		assert_int_equal(c.opcode, IBV_WC_SEND);
	}
}

/* The rest of the child's script: an RDMA write it checks, an RDMA read
 * of what it wrote (so it must answer), then its verdict. */
static void finish_with_rdma(struct child *ch, struct tnode *n)
{
	struct tcomp c;

	tfill(n->buf + 512 * 1024, 256 * 1024, 99);
	assert_int_equal(tpost_rdma(n, true, 7, n->buf + 512 * 1024, 256 * 1024,
				    n->mr->lkey, ch->info.rkey,
				    ch->info.addr + 512 * 1024), 0);
	tpoll(n, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	memset(n->buf + 768 * 1024, 0, 256 * 1024);
	assert_int_equal(tpost_rdma(n, false, 8, n->buf + 768 * 1024,
				    256 * 1024, n->mr->lkey, ch->info.rkey,
				    ch->info.addr + 512 * 1024), 0);
	tpoll(n, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_true(tcheck(n->buf + 768 * 1024, 256 * 1024, 99));
	xwrite(ch->wr, "g", 1);
	assert_int_equal(child_end(ch), 0);
}

/*
 * The peer is stopped (SIGSTOP: its device thread too) for 2 s with
 * sends in flight toward it, then continued: nothing fails, every
 * message arrives once and intact. With the default settings a fixed
 * retry budget gave up after ~0.8 s ("remote unresponsive").
 */
static void test_stopped_peer_lives(void **state)
{
	struct child ch;
	struct tnode n;
	struct tcomp c;
	uint64_t t0;

	(void)state;
	child_start(&ch, &n);
	post_msgs(&n, 0, MSGS / 2);
	expect_sends_ok(&n, MSGS / 2);
	child_stop(&ch);
	post_msgs(&n, MSGS / 2, MSGS);
	/* no verdict while the peer is stopped: it is not gone */
	t0 = util_time_ns();
	while (util_time_ns() - t0 < 2000000000ull)
		assert_false(tpoll_for(&n, &c, 10));
	assert_int_equal(kill(ch.pid, SIGCONT), 0);
	expect_sends_ok(&n, MSGS - MSGS / 2);
	finish_with_rdma(&ch, &n);
	tnode_close(&n);
}

/*
 * And a peer that stays silent is given up within the bound: with
 * FI_SRD_SOFT_DEAD_MS = 300, a send to the stopped peer fails with
 * "remote unresponsive" no earlier than 300 ms after it was posted and
 * no later than 300 ms plus 2 s of slack for a loaded machine. Every
 * other work request toward it fails with it.
 */
static void test_silent_peer_dead_in_bound(void **state)
{
	struct child ch;
	struct tnode n;
	struct tcomp c;
	uint64_t t0, dt;

	(void)state;
	tset("DEAD_MS", "300");
	child_start(&ch, &n);
	post_msgs(&n, 0, 4);
	expect_sends_ok(&n, 4);
	child_stop(&ch);
	t0 = util_time_ns();
	post_msgs(&n, 4, 8);
	assert_int_equal(tpost_rdma(&n, false, 9, n.buf + 768 * 1024, 4096,
				    n.mr->lkey, ch.info.rkey, ch.info.addr), 0);
	for (int i = 0; i < 5; i++) {
		tpoll(&n, &c);
		assert_int_equal(c.status, IBV_WC_RESP_TIMEOUT_ERR);
		assert_int_equal(c.vendor_err, 13);
		if (!i) {
			dt = util_time_ns() - t0;
			print_message("#   declared unresponsive %llu ms after "
				      "the send (FI_SRD_SOFT_DEAD_MS 300)\n",
				      (unsigned long long)(dt / 1000000));
			assert_true(dt >= 300000000ull);
			assert_true(dt <= 2300000000ull);
		}
	}
	kill(ch.pid, SIGKILL);
	child_end(&ch);
	tnode_close(&n);
}

/*
 * Heavy loss (45 % of datagrams from both sides: 70 % of round trips
 * fail) with the default give-up rule: thousands of sends and RDMA
 * packets all succeed, every byte checked, none delivered twice. A packet
 * whose 17 tries all fail (0.7^17, about 1 in 400) was given up before,
 * with its peer alive. The ceiling of the backed-off RTO is lowered to
 * 20 ms only to keep the run short.
 */
static void test_heavy_loss(void **state)
{
	enum { N = 2000, SZ = 1024 };
	struct tnode a, b;
	uint8_t *seen = calloc(N, 1);
	int sends = 0, recvs = 0, posted = 0, reposted = 0;
	struct tcomp c;

	(void)state;
	assert_non_null(seen);
	tset("LOSS", "45");
	tset("RTO_MAX_US", "20000");
	tnode_open(&a, 2 * N * SZ, T_ACCESS_ALL, 4096, 7);
	tnode_open(&b, 2 * N * SZ, T_ACCESS_ALL, 4096, 7);
	tnode_connect(&a, &b.gid, b.qpn, b.qkey);
	tnode_connect(&b, &a.gid, a.qpn, a.qkey);
	for (; reposted < 1024; reposted++)
		assert_int_equal(tpost_recv(&b, (uint64_t)reposted,
					    b.buf + (size_t)reposted * SZ, SZ,
					    b.mr->lkey), 0);
	while (sends < N || recvs < N) {
		while (posted < N && posted - sends < 512) {
			uint8_t *p = a.buf + (size_t)posted * SZ;

			memcpy(p, &posted, 4);
			tfill(p + 4, SZ - 4, (uint32_t)posted);
			if (tpost_send(&a, (uint64_t)posted, p, SZ, a.mr->lkey,
				       false, 0))
				break;
			posted++;
		}
		if (tpoll_for(&a, &c, 0)) {
			assert_int_equal(c.status, IBV_WC_SUCCESS);
			sends++;
		}
		if (tpoll_for(&b, &c, 0)) {
			int k;

			assert_int_equal(c.status, IBV_WC_SUCCESS);
			assert_int_equal(c.byte_len, SZ);
			memcpy(&k, b.buf + c.wr_id * SZ, 4);
			assert_true(k >= 0 && k < N);
			assert_int_equal(seen[k], 0);
			seen[k] = 1;
			assert_true(tcheck(b.buf + c.wr_id * SZ + 4, SZ - 4,
					   (uint32_t)k));
			recvs++;
			if (reposted < N) {
				assert_int_equal(tpost_recv(&b, (uint64_t)reposted,
					b.buf + (size_t)reposted * SZ, SZ,
					b.mr->lkey), 0);
				reposted++;
			}
		}
	}
	/* RDMA both ways through the same loss, 1 MiB each, checked */
	tfill(a.buf, 1 << 20, 5);
	assert_int_equal(tpost_rdma(&a, true, 1, a.buf, 1 << 20, a.mr->lkey,
				    b.mr->rkey, (uintptr_t)b.buf + (N * SZ)), 0);
	tpoll(&a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_true(tcheck(b.buf + N * SZ, 1 << 20, 5));
	memset(a.buf + N * SZ, 0, 1 << 20);
	assert_int_equal(tpost_rdma(&a, false, 2, a.buf + N * SZ, 1 << 20,
				    a.mr->lkey, b.mr->rkey,
				    (uintptr_t)b.buf + (N * SZ)), 0);
	tpoll(&a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_true(tcheck(a.buf + N * SZ, 1 << 20, 5));
	assert_false(tpoll_for(&b, &c, 30));
	free(seen);
	tnode_close(&a);
	tnode_close(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_stopped_peer_lives, setup),
		cmocka_unit_test_setup(test_silent_peer_dead_in_bound, setup),
		cmocka_unit_test_setup(test_heavy_loss, setup),
	};

	return cmocka_run_group_tests_name("softsrd_live", tests, NULL, NULL);
}
