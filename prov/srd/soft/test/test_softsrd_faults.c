/* SPDX-License-Identifier: MIT */
/*
 * softsrd when the network misbehaves: loss, duplication, reordering and
 * delay (every message exactly once), a peer that is gone (an error
 * completion, not a hang), malformed datagrams (ignored, nothing touched),
 * and two processes (fork) talking over the wire.
 */
#include "weft/compat.h"
#include "softsrd_test.h"
#include "prov/srd/soft/softsrd_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int setup(void **state)
{
	treset();
	return 0;
}

static void pair_open(struct tnode *a, struct tnode *b, size_t len)
{
	tnode_open(a, len, T_ACCESS_ALL, 4096, 7);
	tnode_open(b, len, T_ACCESS_ALL, 4096, 7);
	tnode_connect(a, &b->gid, b->qpn, b->qkey);
	tnode_connect(b, &a->gid, a->qpn, a->qkey);
}

/* n messages a -> b, each once, whatever the wire did */
static void exchange(struct tnode *a, struct tnode *b, int n, uint32_t size)
{
	uint8_t *seen = calloc((size_t)n, 1);
	int sends = 0, recvs = 0, posted = 0;
	struct tcomp c;

	assert_non_null(seen);
	for (int i = 0; i < n; i++)
		assert_int_equal(tpost_recv(b, (uint64_t)i, b->buf + (size_t)i * size,
					    size, b->mr->lkey), 0);
	while (sends < n || recvs < n) {
		while (posted < n) {
			uint8_t *p = a->buf + (size_t)posted * size;

			tfill(p + 4, size - 4, (uint32_t)posted);
			memcpy(p, &posted, 4);
			if (tpost_send(a, (uint64_t)posted, p, size, a->mr->lkey,
				       false, 0))
				break;	/* queue full: reap first */
			posted++;
		}
		if (tpoll_for(a, &c, 0)) {
			assert_int_equal(c.status, IBV_WC_SUCCESS);
			sends++;
		}
		if (tpoll_for(b, &c, 0)) {
			int k;

			assert_int_equal(c.status, IBV_WC_SUCCESS);
			assert_int_equal(c.byte_len, size);
			memcpy(&k, b->buf + c.wr_id * size, 4);
			assert_true(k >= 0 && k < n);
			assert_int_equal(seen[k], 0);
			seen[k] = 1;
			assert_true(tcheck(b->buf + c.wr_id * size + 4, size - 4,
					   (uint32_t)k));
			recvs++;
		}
	}
	/* and nothing more shows up later (a duplicate delivered late) */
	assert_false(tpoll_for(b, &c, 30));
	free(seen);
}

static void test_faults_send(void **state)
{
	struct tnode a, b;

	tset("LOSS", "15");
	tset("DUP", "15");
	tset("REORDER", "25");
	tset("RTO_US", "500");
	pair_open(&a, &b, 600 * 512);
	exchange(&a, &b, 600, 512);
	tnode_close(&a);
	tnode_close(&b);
}

/* One side of echo(): a receive completion of a message k, checked and
 * marked; the echo side answers it with the same bytes. */
static void echo_recv(struct tnode *n, const struct tcomp *c, uint8_t *seen,
		      int cnt, uint32_t size)
{
	uint8_t *p = n->buf + c->wr_id * size;
	int k;

	assert_int_equal(c->status, IBV_WC_SUCCESS);
	assert_int_equal(c->byte_len, size);
	memcpy(&k, p, 4);
	assert_true(k >= 0 && k < cnt);
	assert_int_equal(seen[k], 0);
	seen[k] = 1;
	assert_true(tcheck(p + 4, size - 4, (uint32_t)k));
}

/* cnt messages a -> b, each answered b -> a with the same bytes: both
 * directions carry data, so acknowledgements ride on it (and are lost,
 * duplicated and reordered with it); every message exactly once. */
static void echo(struct tnode *a, struct tnode *b, int cnt, uint32_t size)
{
	uint8_t *seen_a = calloc((size_t)cnt, 1), *seen_b = calloc((size_t)cnt, 1);
	size_t half = (size_t)cnt * size;
	int posted = 0, sends = 0, got_a = 0, got_b = 0;
	struct tcomp c;

	assert_non_null(seen_a);
	assert_non_null(seen_b);
	for (int i = 0; i < cnt; i++) {
		assert_int_equal(tpost_recv(a, (uint64_t)i, a->buf + (size_t)i * size,
					    size, a->mr->lkey), 0);
		assert_int_equal(tpost_recv(b, (uint64_t)i, b->buf + (size_t)i * size,
					    size, b->mr->lkey), 0);
	}
	while (sends < 2 * cnt || got_a < cnt || got_b < cnt) {
		/* a few in flight at a time, as a ping-pong with a window */
		if (posted < cnt && posted - got_a < 8) {
			uint8_t *p = a->buf + half + (size_t)posted * size;

			memcpy(p, &posted, 4);
			tfill(p + 4, size - 4, (uint32_t)posted);
			if (!tpost_send(a, 1u << 20 | (uint64_t)posted, p, size,
					a->mr->lkey, false, 0))
				posted++;
		}
		if (tpoll_for(a, &c, 0)) {
			if (c.wr_id & 1u << 20) {
				assert_int_equal(c.status, IBV_WC_SUCCESS);
				sends++;
			} else {
				echo_recv(a, &c, seen_a, cnt, size);
				got_a++;
			}
		}
		if (tpoll_for(b, &c, 0)) {
			if (c.wr_id & 1u << 20) {
				assert_int_equal(c.status, IBV_WC_SUCCESS);
				sends++;
				continue;
			}
			echo_recv(b, &c, seen_b, cnt, size);
			got_b++;
			/* the echo goes from b's second half */
			memcpy(b->buf + half + c.wr_id * size,
			       b->buf + c.wr_id * size, size);
			assert_int_equal(tpost_send(b, 1u << 20 | c.wr_id,
						    b->buf + half + c.wr_id * size,
						    size, b->mr->lkey, false, 0), 0);
		}
	}
	assert_false(tpoll_for(a, &c, 30));
	assert_false(tpoll_for(b, &c, 30));
	free(seen_a);
	free(seen_b);
}

static void test_faults_echo(void **state)
{
	struct tnode a, b;

	tset("LOSS", "10");
	tset("DUP", "10");
	tset("REORDER", "20");
	tset("RTO_US", "2000");
	tset("ACK_DELAY_US", "400");
	pair_open(&a, &b, 2 * 400 * 256);
	echo(&a, &b, 400, 256);
	tnode_close(&a);
	tnode_close(&b);
}

static void test_faults_rdma(void **state)
{
	size_t len = 256 * 1024;
	struct tnode a, b;
	struct tcomp c;

	tset("LOSS", "10");
	tset("DUP", "10");
	tset("REORDER", "20");
	tset("DELAY_US", "50");
	tset("RTO_US", "500");
	pair_open(&a, &b, 2 * len);
	tfill(a.buf, len, 77);
	assert_int_equal(tpost_rdma(&a, true, 1, a.buf, (uint32_t)len, a.mr->lkey,
				    b.mr->rkey, (uintptr_t)b.buf), 0);
	tpoll(&a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_true(tcheck(b.buf, len, 77));
	tfill(b.buf + len, len, 78);
	assert_int_equal(tpost_rdma(&a, false, 2, a.buf + len, (uint32_t)len,
				    a.mr->lkey, b.mr->rkey, (uintptr_t)b.buf + len), 0);
	tpoll(&a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_true(tcheck(a.buf + len, len, 78));
	tnode_close(&a);
	tnode_close(&b);
}

/* CRC32C as softsrd computes it: the standard check value, and the same
 * result in pieces as whole (the trailer covers header and payload, sent
 * as separate pieces). */
static void test_crc_known(void **state)
{
	const char *check = "123456789";
	uint8_t big[1000];

	(void)state;
	softsrd_crc_setup();
	assert_int_equal(softsrd_crc32c(0, check, 9), 0xe3069283u);
	assert_int_equal(softsrd_crc32c(0, NULL, 0), 0);
	tfill(big, sizeof(big), 3);
	assert_int_equal(softsrd_crc32c(softsrd_crc32c(0, big, 333), big + 333,
					sizeof(big) - 333),
			 softsrd_crc32c(0, big, sizeof(big)));
}

/* One datagram in five has a bit flipped on the way (after its CRC was
 * computed): with FI_SRD_SOFT_CRC every corrupted one is dropped and sent
 * again, so every message and RDMA transfer arrives exactly once and
 * intact. Without the CRC the same run delivers wrong data or wrong
 * headers' effects (run with CRC 0 to see it fail). */
static void test_crc_corrupt(void **state)
{
	size_t len = 256 * 1024;
	struct tnode a, b;
	struct tcomp c;

	tset("CRC", "1");
	tset("CORRUPT", "20");
	tset("RTO_US", "500");
	pair_open(&a, &b, 300 * 1024);
	exchange(&a, &b, 300, 1024);
	tfill(a.buf, len, 77);
	assert_int_equal(tpost_rdma(&a, true, 1, a.buf, (uint32_t)len, a.mr->lkey,
				    b.mr->rkey, (uintptr_t)b.buf), 0);
	tpoll(&a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_true(tcheck(b.buf, len, 77));
	memset(a.buf, 0, len);
	assert_int_equal(tpost_rdma(&a, false, 2, a.buf, (uint32_t)len,
				    a.mr->lkey, b.mr->rkey, (uintptr_t)b.buf), 0);
	tpoll(&a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_true(tcheck(a.buf, len, 77));
	tnode_close(&a);
	tnode_close(&b);
}

/* Writes with immediate under loss, duplication, reordering and RNR: each
 * lands whole and consumes exactly one receive, with its own immediate. */
static void test_faults_write_imm(void **state)
{
	enum { N = 24, SLOT = 20000 };
	uint8_t seen[N] = { 0 };
	int recvs = 0, sends = 0;
	struct tnode a, b;
	struct tcomp c;

	tset("LOSS", "10");
	tset("DUP", "10");
	tset("REORDER", "20");
	tset("RNR", "30");
	tset("RNR_DELAY_US", "20");
	tset("RTO_US", "500");
	pair_open(&a, &b, (size_t)N * SLOT);
	for (int i = 0; i < N; i++) {
		assert_int_equal(tpost_recv(&b, 100 + (uint64_t)i, NULL, 0,
					    b.mr->lkey), 0);
		tfill(a.buf + (size_t)i * SLOT, SLOT, (uint32_t)i);
		assert_int_equal(tpost_write_imm(&a, (uint64_t)i,
						 a.buf + (size_t)i * SLOT, SLOT,
						 a.mr->lkey, b.mr->rkey,
						 (uintptr_t)b.buf + (size_t)i * SLOT,
						 0xabc00000u | (uint32_t)i), 0);
	}
	while (recvs < N || sends < N) {
		if (sends < N && tpoll_for(&a, &c, 0)) {
			assert_int_equal(c.status, IBV_WC_SUCCESS);
			sends++;
		}
		if (recvs < N && tpoll_for(&b, &c, 0)) {
			uint32_t k = c.imm & 0xfffff;

			assert_int_equal(c.status, IBV_WC_SUCCESS);
			assert_int_equal(c.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
			assert_int_equal(c.wr_id, 100 + (uint64_t)recvs);
			assert_int_equal(c.imm & 0xfff00000u, 0xabc00000u);
			assert_true(k < N);
			assert_int_equal(seen[k], 0);
			seen[k] = 1;
			assert_int_equal(c.byte_len, SLOT);
			assert_true(tcheck(b.buf + (size_t)k * SLOT, SLOT, k));
			recvs++;
		}
	}
	assert_false(tpoll_for(&b, &c, 30));
	tnode_close(&a);
	tnode_close(&b);
}

static void test_faults_rnr(void **state)
{
	struct tnode a, b;

	/* receives are posted, yet half the sends are refused: rnr_retry 7
	 * resends them until they land, once each */
	tset("RNR", "50");
	tset("RNR_DELAY_US", "20");
	pair_open(&a, &b, 200 * 256);
	exchange(&a, &b, 200, 256);
	tnode_close(&a);
	tnode_close(&b);
}

/* the sendmmsg/recvmmsg path, as where io_uring is refused */
static void test_io_mmsg(void **state)
{
	struct tnode a, b;

	tset("IO", "mmsg");
	tset("LOSS", "5");
	tset("RTO_US", "500");
	pair_open(&a, &b, 300 * 1024);
	exchange(&a, &b, 300, 1024);
	tnode_close(&a);
	tnode_close(&b);
}

static void expect_gone(struct tnode *a, enum ibv_wc_status status,
			uint32_t vendor_err)
{
	struct tcomp c;

	assert_int_equal(tpost_send(a, 11, a->buf, 64, a->mr->lkey, false, 0), 0);
	assert_int_equal(tpost_rdma(a, true, 12, a->buf, 4096, a->mr->lkey, 1234,
				    0x1000), 0);
	assert_int_equal(tpost_rdma(a, false, 13, a->buf, 100, a->mr->lkey, 1234,
				    0x1000), 0);
	for (int i = 0; i < 3; i++) {
		tpoll(a, &c);
		assert_true(c.wr_id >= 11 && c.wr_id <= 13);
		assert_int_equal(c.status, status);
		assert_int_equal(c.vendor_err, vendor_err);
		assert_int_equal(c.qp_num, a->qpn);
	}
}

/* A peer whose QP is gone answers "no such QP" at once; a peer whose
 * process is gone does not answer: the WR fails after the retries. */
static void test_peer_gone(void **state)
{
	struct tnode a, b;
	union ibv_gid gid;
	uint32_t qpn, qkey;

	/* 1 s of silence is death here: b's answer to the first phase
	 * comes from its device thread, which a loaded machine may not run
	 * for a while, but any answer resets the count. */
	tset("RTO_US", "1000");
	tset("DEAD_MS", "1000");
	pair_open(&a, &b, 4096);
	gid = b.gid;
	qpn = b.qpn;
	qkey = b.qkey;
	/* b's QP first: its device still answers */
	assert_int_equal(V->destroy_qp(b.qp), 0);
	expect_gone(&a, IBV_WC_REM_INV_RD_REQ_ERR, 9);
	/* now the whole device of b */
	assert_int_equal(V->dereg_mr(b.mr), 0);
	assert_int_equal(V->destroy_ah(b.ah), 0);
	assert_int_equal(V->destroy_cq(ibv_cq_ex_to_cq(b.cq)), 0);
	assert_int_equal(V->dealloc_pd(b.pd), 0);
	assert_int_equal(V->close_device(b.ctx), 0);
	free(b.buf);
	tnode_connect(&a, &gid, qpn, qkey);
	expect_gone(&a, IBV_WC_RESP_TIMEOUT_ERR, 13);
	tnode_close(&a);
}

static void fuzz_send(int fd, const struct sockaddr_in *to, const void *p,
		      size_t len)
{
	assert_int_equal(sendto(fd, p, len, 0, (const struct sockaddr *)to,
				sizeof(*to)), (ssize_t)len);
}

/* Datagrams from a socket that is no softsrd QP, and forged ones from a
 * real peer's port: nothing lands, and the device keeps working. */
static void test_fuzz(void **state)
{
	struct tnode a, b;
	struct sockaddr_in to = { .sin_family = AF_INET }, me = to;
	socklen_t ml = sizeof(me);
	uint8_t pkt[2048], *copy;
	struct tcomp c;
	struct fhdr h;
	unsigned int seed = 12345;
	int fd;

	pair_open(&a, &b, 65536);
	memset(b.buf, 0x5a, b.len);
	copy = malloc(b.len);
	memcpy(copy, b.buf, b.len);
	for (int i = 0; i < 8; i++)
		assert_int_equal(tpost_recv(&b, (uint64_t)i, b.buf + i * 4096, 4096,
					    b.mr->lkey), 0);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons((uint16_t)(b.qpn >> 8));
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &ml), 0);

	/* random garbage of every length */
	for (int i = 0; i < 2000; i++) {
		size_t len = (size_t)rand_r(&seed) % sizeof(pkt);

		for (size_t k = 0; k < len; k++)
			pkt[k] = (uint8_t)rand_r(&seed);
		fuzz_send(fd, &to, pkt, len);
	}
	/* well-formed headers from this socket's own "QP" with hostile
	 * fields: writes out of bounds, wrapping offsets, lying lengths */
	for (int i = 0; i < 3000; i++) {
		memset(&h, 0, sizeof(h));
		h.version = 3;
		h.type = (uint8_t)(1 + rand_r(&seed) % 6);
		h.flags = (uint8_t)rand_r(&seed);
		h.status = (uint8_t)rand_r(&seed);
		h.src_qpn = (uint32_t)ntohs(me.sin_port) << 8 | (uint32_t)(rand_r(&seed) % 4);
		h.dst_qpn = i % 7 ? b.qpn : (uint32_t)rand_r(&seed);
		h.qkey = i % 3 ? b.qkey : (uint32_t)rand_r(&seed);
		h.incarnation = (uint32_t)rand_r(&seed) % 3;
		h.psn = (uint64_t)rand_r(&seed) % 1000;
		h.floor = i % 5 ? 0 : UINT64_MAX - (uint64_t)rand_r(&seed) % 4;
		h.rkey = i % 2 ? b.mr->rkey : (uint32_t)rand_r(&seed);
		h.raddr = (uintptr_t)b.buf + (uint64_t)(rand_r(&seed) % 200000) -
			  (i % 4 == 0 ? 100000 : 0);
		h.msg_len = (uint32_t)rand_r(&seed) % 200000;
		h.seg_off = i % 6 ? (uint32_t)rand_r(&seed) % 200000 : UINT32_MAX - 5;
		h.seg_len = (uint32_t)rand_r(&seed) % 2000;
		/* acknowledgements of PSNs b never sent, or of the wrong
		 * incarnation, or wrapping: b has nothing in flight to lose */
		h.ack_psn = i % 3 ? (uint64_t)rand_r(&seed) % 1000 :
				    UINT64_MAX - (uint64_t)rand_r(&seed) % 4;
		h.ack_cnt = i % 4 ? (uint32_t)rand_r(&seed) % 600 : UINT32_MAX;
		h.ack_incarnation = (uint32_t)rand_r(&seed);
		if (h.type == 2 && i % 2) {	/* plausible write, past the MR */
			h.raddr = (uintptr_t)b.buf + b.len - 8;
			h.msg_len = 512;
			h.seg_off = 0;
			h.seg_len = 512;
		}
		memcpy(pkt, &h, sizeof(h));
		fuzz_send(fd, &to, pkt, sizeof(h) + (size_t)(rand_r(&seed) % 1024));
	}
	close(fd);
	/* let b's thread eat it all, then check nothing moved; sends with a
	 * wrong qkey or a non-RTS peer were dropped, never received */
	assert_false(tpoll_for(&b, &c, 200));
	assert_memory_equal(copy, b.buf, b.len);
	/* b still works */
	tfill(a.buf, 1000, 3);
	assert_int_equal(tpost_send(&a, 1, a.buf, 1000, a.mr->lkey, false, 0), 0);
	tpoll(&b, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_int_equal(c.byte_len, 1000);
	assert_true(tcheck(b.buf + c.wr_id * 4096, 1000, 3));
	tpoll(&a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	free(copy);
	tnode_close(&a);
	tnode_close(&b);
}

/* ---- two processes ------------------------------------------------------- */

struct wire_info {
	union ibv_gid gid;
	uint32_t qpn, qkey, rkey;
	uint64_t addr;
};

static void xwrite(int fd, const void *p, size_t n)
{
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

/* a pipe read with a hang guard: a dead or stuck child fails the test */
static void xread(int fd, void *p, size_t n)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	assert_int_equal(poll(&pfd, 1, 30000), 1);
	assert_int_equal(read(fd, p, n), (ssize_t)n);
}

static void node_info(const struct tnode *n, struct wire_info *w)
{
	w->gid = n->gid;
	w->qpn = n->qpn;
	w->qkey = n->qkey;
	w->rkey = n->mr->rkey;
	w->addr = (uintptr_t)n->buf;
}

/* Child: receive 100 sends, check them, echo each back; then check what the
 * parent wrote by RDMA. Exit status 0 only if all data was right. */
static int child_run(int rd, int wr)
{
	struct wire_info me, peer;
	struct tnode n;
	struct tcomp c;
	int bad = 0;
	char go;

	tnode_open(&n, 1 << 20, T_ACCESS_ALL, 1024, 7);
	node_info(&n, &me);
	xwrite(wr, &me, sizeof(me));
	xread(rd, &peer, sizeof(peer));
	tnode_connect(&n, &peer.gid, peer.qpn, peer.qkey);
	for (int i = 0; i < 100; i++)
		tpost_recv(&n, (uint64_t)i, n.buf + i * 4096, 4096, n.mr->lkey);
	xwrite(wr, "r", 1);
	for (int got = 0; got < 100;) {
		uint32_t k;

		tpoll(&n, &c);
		if (c.status != IBV_WC_SUCCESS)
			return 2;
		if (c.opcode == IBV_WC_SEND)
			continue;
		if (c.byte_len != 3000)
			return 3;
		memcpy(&k, n.buf + c.wr_id * 4096, 4);
		bad |= !tcheck(n.buf + c.wr_id * 4096 + 4, 2996, k);
		/* echo: the same buffer back, with its index */
		if (tpost_send(&n, 1000 + k, n.buf + c.wr_id * 4096, 3000,
			       n.mr->lkey, true, k))
			return 4;
		got++;
	}
	xread(rd, &go, 1);	/* parent's RDMA write is complete */
	bad |= !tcheck(n.buf + 512 * 1024, 256 * 1024, 99) << 1;
	tnode_close(&n);
	return bad;
}

static void test_fork(void **state)
{
	int p2c[2], c2p[2], status;
	struct wire_info me, peer;
	struct tnode n;
	struct tcomp c;
	uint8_t seen[100] = { 0 };
	int got = 0, sent = 0;
	pid_t pid;
	char r;

	tset("LOSS", "5");
	tset("REORDER", "10");
	tset("RTO_US", "1000");
	assert_int_equal(pipe(p2c), 0);
	assert_int_equal(pipe(c2p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* never outlive the parent, never hang the suite */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(60);
		_exit(child_run(p2c[0], c2p[1]));
	}
	tnode_open(&n, 1 << 20, T_ACCESS_ALL, 1024, 7);
	node_info(&n, &me);
	xread(c2p[0], &peer, sizeof(peer));
	xwrite(p2c[1], &me, sizeof(me));
	tnode_connect(&n, &peer.gid, peer.qpn, peer.qkey);
	for (int i = 0; i < 100; i++)
		assert_int_equal(tpost_recv(&n, (uint64_t)i, n.buf + (512 + i * 4) * 1024,
					    4096, n.mr->lkey), 0);
	xread(c2p[0], &r, 1);
	for (uint32_t i = 0; i < 100; i++) {
		uint8_t *p = n.buf + i * 4096;

		memcpy(p, &i, 4);
		tfill(p + 4, 2996, i);
		assert_int_equal(tpost_send(&n, i, p, 3000, n.mr->lkey, false, 0), 0);
	}
	while (got < 100 || sent < 100) {
		tpoll(&n, &c);
		assert_int_equal(c.status, IBV_WC_SUCCESS);
		if (c.opcode == IBV_WC_SEND) {
			sent++;
			continue;
		}
		assert_int_equal(c.opcode, IBV_WC_RECV);
		assert_true(c.imm < 100);
		assert_int_equal(seen[c.imm], 0);
		seen[c.imm] = 1;
		assert_true(tcheck(n.buf + (512 + c.wr_id * 4) * 1024 + 4, 2996, c.imm));
		got++;
	}
	tfill(n.buf, 256 * 1024, 99);
	assert_int_equal(tpost_rdma(&n, true, 7, n.buf, 256 * 1024, n.mr->lkey,
				    peer.rkey, peer.addr + 512 * 1024), 0);
	tpoll(&n, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	xwrite(p2c[1], "g", 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	tnode_close(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_faults_send, setup),
		cmocka_unit_test_setup(test_faults_echo, setup),
		cmocka_unit_test_setup(test_faults_rdma, setup),
		cmocka_unit_test_setup(test_crc_known, setup),
		cmocka_unit_test_setup(test_crc_corrupt, setup),
		cmocka_unit_test_setup(test_faults_write_imm, setup),
		cmocka_unit_test_setup(test_faults_rnr, setup),
		cmocka_unit_test_setup(test_io_mmsg, setup),
		cmocka_unit_test_setup(test_peer_gone, setup),
		cmocka_unit_test_setup(test_fuzz, setup),
		cmocka_unit_test_setup(test_fork, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
