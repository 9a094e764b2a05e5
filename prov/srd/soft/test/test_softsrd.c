/* SPDX-License-Identifier: MIT */
/*
 * softsrd through its verbs objects: capabilities, sends, immediate data,
 * RDMA, RDMA write with immediate, MR checks, RNR, MTU, CQ batching and
 * overrun, in-order claims.
 * Two device contexts in one process, on 127.0.0.1.
 */
#include "weft/compat.h"
#include "softsrd_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pair {
	struct tnode a, b;
};

static void pair_open(struct pair *p, size_t len, int b_access, int cqe,
		      uint8_t rnr_retry)
{
	tnode_open(&p->a, len, T_ACCESS_ALL, cqe, rnr_retry);
	tnode_open(&p->b, len, b_access, cqe, rnr_retry);
	tnode_connect(&p->a, &p->b.gid, p->b.qpn, p->b.qkey);
	tnode_connect(&p->b, &p->a.gid, p->a.qpn, p->a.qkey);
}

static void pair_close(struct pair *p)
{
	tnode_close(&p->a);
	tnode_close(&p->b);
}

static int setup(void **state)
{
	treset();
	return 0;
}

static void test_caps(void **state)
{
	struct ibv_device_attr_ex dattr;
	struct efadv_device_attr eattr;
	struct ibv_port_attr pattr;
	struct verbs_context *vctx;
	struct tnode n;

	tset("MTU", "4096");
	tset("MAX_SGE", "3");
	tset("INLINE_BUF_SIZE", "64");
	tset("RDMA_WRITE", "0");
	tnode_open(&n, 4096, T_ACCESS_ALL, 64, 0);
	assert_int_equal(V->efadv_query_device(n.ctx, &eattr, sizeof(eattr)), 0);
	assert_int_equal(eattr.max_sq_sge, 3);
	assert_int_equal(eattr.inline_buf_size, 64);
	assert_true(eattr.device_caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ);
	assert_true(eattr.device_caps & EFADV_DEVICE_ATTR_CAPS_RNR_RETRY);
	assert_false(eattr.device_caps & SRD_EFADV_CAPS_RDMA_WRITE);
	/* what ibv_query_port / ibv_query_device_ex dispatch to */
	vctx = verbs_get_ctx_op(n.ctx, query_port);
	assert_non_null(vctx);
	assert_int_equal(vctx->query_port(n.ctx, 1, &pattr, sizeof(pattr)), 0);
	assert_int_equal(pattr.max_msg_sz, 4096);
	assert_int_equal(pattr.state, IBV_PORT_ACTIVE);
	vctx = verbs_get_ctx_op(n.ctx, query_device_ex);
	assert_non_null(vctx);
	assert_int_equal(vctx->query_device_ex(n.ctx, NULL, &dattr, sizeof(dattr)), 0);
	assert_int_equal(dattr.orig_attr.max_sge, 3);
	assert_int_equal(dattr.orig_attr.phys_port_cnt, 1);
	assert_int_equal(V->query_device_ex(n.ctx, NULL, &dattr), 0);
	assert_int_equal(dattr.orig_attr.max_qp_wr, 4096);
	/* GID is the IPv4-mapped address */
	assert_int_equal(n.gid.raw[10], 0xff);
	assert_int_equal(n.gid.raw[12], 127);
	assert_int_equal(V->query_port(n.ctx, 2, &pattr), EINVAL);
	tnode_close(&n);
}

static void test_send_recv(void **state)
{
	enum { N = 64 };
	struct pair p;
	struct tcomp c;
	uint32_t seen = 0, sends = 0;
	size_t slot = 8192;

	pair_open(&p, N * slot, T_ACCESS_ALL, 256, 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(tpost_recv(&p.b, 1000 + i, p.b.buf + i * slot,
					    (uint32_t)slot, p.b.mr->lkey), 0);
	for (int i = 0; i < N; i++) {
		uint32_t len = 1 + (uint32_t)i * 127;

		tfill(p.a.buf + i * slot, len, (uint32_t)i);
		assert_int_equal(tpost_send(&p.a, (uint64_t)i, p.a.buf + i * slot,
					    len, p.a.mr->lkey, false, 0), 0);
	}
	while (sends < N) {
		tpoll(&p.a, &c);
		assert_int_equal(c.status, IBV_WC_SUCCESS);
		assert_int_equal(c.opcode, IBV_WC_SEND);
		assert_int_equal(c.qp_num, p.a.qpn);
		sends++;
	}
	while (seen < N) {
		int i;

		tpoll(&p.b, &c);
		assert_int_equal(c.status, IBV_WC_SUCCESS);
		assert_int_equal(c.opcode, IBV_WC_RECV);
		assert_int_equal(c.src_qp, p.a.qpn);
		assert_int_equal(c.qp_num, p.b.qpn);
		assert_false(c.wc_flags & IBV_WC_WITH_IMM);
		/* receives are consumed in posting order, messages arrive in
		 * any: the length says which message landed in this buffer */
		i = (int)(c.wr_id - 1000);
		assert_true((c.byte_len - 1) % 127 == 0);
		assert_true(tcheck(p.b.buf + i * slot, c.byte_len,
				   (c.byte_len - 1) / 127));
		seen++;
	}
	assert_false(tpoll_for(&p.b, &c, 5));
	pair_close(&p);
}

static void test_send_imm(void **state)
{
	struct pair p;
	struct tcomp c;

	pair_open(&p, 4096, T_ACCESS_ALL, 64, 0);
	assert_int_equal(tpost_recv(&p.b, 7, p.b.buf, 4096, p.b.mr->lkey), 0);
	assert_int_equal(tpost_recv(&p.b, 8, p.b.buf + 2048, 2048, p.b.mr->lkey), 0);
	tfill(p.a.buf, 100, 42);
	assert_int_equal(tpost_send(&p.a, 1, p.a.buf, 100, p.a.mr->lkey, true,
				    0xdeadbeef), 0);
	tpoll(&p.b, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_int_equal(c.wr_id, 7);
	assert_true(c.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(c.imm, 0xdeadbeef);
	assert_int_equal(c.byte_len, 100);
	assert_true(tcheck(p.b.buf, 100, 42));
	tpoll(&p.a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	/* zero-length send with immediate data only */
	assert_int_equal(tpost_send(&p.a, 2, p.a.buf, 0, p.a.mr->lkey, true, 5), 0);
	tpoll(&p.b, &c);
	assert_int_equal(c.wr_id, 8);
	assert_int_equal(c.byte_len, 0);
	assert_int_equal(c.imm, 5);
	tpoll(&p.a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	pair_close(&p);
}

static void test_rdma(void **state)
{
	size_t len = 300000;	/* many packets, odd size */
	struct pair p;
	struct tcomp c;

	pair_open(&p, 2 * len, T_ACCESS_ALL, 64, 0);
	tfill(p.a.buf, len, 1);
	/* unaligned target address: segments follow 128-byte lines */
	assert_int_equal(tpost_rdma(&p.a, true, 1, p.a.buf, (uint32_t)len - 3,
				    p.a.mr->lkey, p.b.mr->rkey,
				    (uintptr_t)p.b.buf + 3), 0);
	tpoll(&p.a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_int_equal(c.opcode, IBV_WC_RDMA_WRITE);
	assert_int_equal(c.wr_id, 1);
	assert_int_equal(p.b.buf[0], 0);
	assert_memory_equal(p.b.buf + 3, p.a.buf, len - 3);
	assert_int_equal(p.b.buf[len], 0);
	/* and back by RDMA read into the second half */
	tfill(p.b.buf + len, len, 9);
	assert_int_equal(tpost_rdma(&p.a, false, 2, p.a.buf + len, (uint32_t)len,
				    p.a.mr->lkey, p.b.mr->rkey,
				    (uintptr_t)p.b.buf + len), 0);
	tpoll(&p.a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_int_equal(c.opcode, IBV_WC_RDMA_READ);
	assert_true(tcheck(p.a.buf + len, len, 9));
	/* no completion on the target side for RDMA */
	assert_false(tpoll_for(&p.b, &c, 5));
	pair_close(&p);
}

/* The target's one completion for a write with immediate: the receive's
 * wr_id, the whole write's length, the immediate, the sender's QP. */
static void expect_write_imm_recv(struct pair *p, uint64_t wr_id,
				  uint32_t len, uint32_t imm)
{
	struct efadv_ah_attr ah_attr;
	struct tcomp c;

	tpoll(&p->b, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_int_equal(c.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(c.wr_id, wr_id);
	assert_int_equal(c.byte_len, len);
	assert_true(c.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(c.imm, imm);
	assert_int_equal(c.src_qp, p->a.qpn);
	assert_int_equal(c.qp_num, p->b.qpn);
	/* slid: b's AH number for a's GID, 0xffff once b has none */
	if (p->b.ah) {
		assert_int_equal(V->efadv_query_ah(p->b.ah, &ah_attr,
						   sizeof(ah_attr)), 0);
		assert_int_equal(c.slid, ah_attr.ahn);
	} else {
		assert_int_equal(c.slid, 0xffff);
	}
}

static void expect_send_done(struct tnode *n, uint64_t wr_id,
			     enum ibv_wc_status status,
			     enum ibv_wc_opcode opcode)
{
	struct tcomp c;

	tpoll(n, &c);
	assert_int_equal(c.wr_id, wr_id);
	assert_int_equal(c.status, status);
	if (status == IBV_WC_SUCCESS)
		assert_int_equal(c.opcode, opcode);
}

static void test_write_imm(void **state)
{
	size_t len = 300000;	/* many packets, odd size */
	struct pair p;
	struct tcomp c;
	uint8_t *rbuf;

	pair_open(&p, 2 * len + 4096, T_ACCESS_ALL, 64, 0);
	rbuf = p.b.buf + 2 * len;
	memset(rbuf, 0x5c, 4096);
	assert_int_equal(tpost_recv(&p.b, 41, rbuf, 4096, p.b.mr->lkey), 0);
	assert_int_equal(tpost_recv(&p.b, 42, rbuf, 4096, p.b.mr->lkey), 0);
	tfill(p.a.buf, len, 11);
	assert_int_equal(tpost_write_imm(&p.a, 1, p.a.buf, (uint32_t)len - 5,
					 p.a.mr->lkey, p.b.mr->rkey,
					 (uintptr_t)p.b.buf + 5, 0xfeedf00d), 0);
	expect_write_imm_recv(&p, 41, (uint32_t)len - 5, 0xfeedf00d);
	/* the whole message has landed when the completion shows */
	assert_int_equal(p.b.buf[4], 0);
	assert_memory_equal(p.b.buf + 5, p.a.buf, len - 5);
	assert_int_equal(p.b.buf[len], 0);
	expect_send_done(&p.a, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	/* zero length: immediate only, the receive's buffer untouched */
	assert_int_equal(tpost_write_imm(&p.a, 2, p.a.buf, 0, p.a.mr->lkey, 0, 0,
					 7), 0);
	expect_write_imm_recv(&p, 42, 0, 7);
	expect_send_done(&p.a, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	/* b's AH to a goes away: later completions carry no AH number */
	assert_int_equal(V->destroy_ah(p.b.ah), 0);
	p.b.ah = NULL;
	assert_int_equal(tpost_recv(&p.b, 43, rbuf, 4096, p.b.mr->lkey), 0);
	assert_int_equal(tpost_write_imm(&p.a, 3, p.a.buf, 8, p.a.mr->lkey,
					 p.b.mr->rkey, (uintptr_t)p.b.buf, 8), 0);
	expect_write_imm_recv(&p, 43, 8, 8);
	expect_send_done(&p.a, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	for (int i = 0; i < 4096; i++)
		assert_int_equal(rbuf[i], 0x5c);
	/* exactly one receive per message */
	assert_false(tpoll_for(&p.b, &c, 5));
	pair_close(&p);
}

/* ibv_poll_cq reports the same fields as the extended CQ */
static void test_write_imm_poll_cq(void **state)
{
	struct pair p;
	struct ibv_wc wc;
	int n;

	pair_open(&p, 8192, T_ACCESS_ALL, 64, 0);
	assert_int_equal(tpost_recv(&p.b, 9, p.b.buf + 4096, 64, p.b.mr->lkey), 0);
	tfill(p.a.buf, 1000, 3);
	assert_int_equal(tpost_write_imm(&p.a, 1, p.a.buf, 1000, p.a.mr->lkey,
					 p.b.mr->rkey, (uintptr_t)p.b.buf, 0x01020304), 0);
	do
		n = ibv_poll_cq(ibv_cq_ex_to_cq(p.b.cq), 1, &wc);
	while (n == 0);
	assert_int_equal(n, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(wc.byte_len, 1000);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(be32toh(wc.imm_data), 0x01020304);
	assert_int_equal(wc.src_qp, p.a.qpn);
	assert_true(tcheck(p.b.buf, 1000, 3));
	expect_send_done(&p.a, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	pair_close(&p);
}

/* No receive posted: RNR as for a send, retried until the receive comes
 * (rnr_retry 7), or an error when the retries run out. */
static void test_write_imm_rnr(void **state)
{
	size_t len = 40000;
	struct pair p;
	struct tcomp c;

	tset("RNR_DELAY_US", "100");
	pair_open(&p, len, T_ACCESS_ALL, 64, 7);
	tfill(p.a.buf, len, 21);
	assert_int_equal(tpost_write_imm(&p.a, 3, p.a.buf, (uint32_t)len,
					 p.a.mr->lkey, p.b.mr->rkey,
					 (uintptr_t)p.b.buf, 99), 0);
	assert_false(tpoll_for(&p.a, &c, 30));
	assert_false(tpoll_for(&p.b, &c, 1));
	assert_int_equal(tpost_recv(&p.b, 5, NULL, 0, p.b.mr->lkey), 0);
	expect_write_imm_recv(&p, 5, (uint32_t)len, 99);
	assert_true(tcheck(p.b.buf, len, 21));
	expect_send_done(&p.a, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	pair_close(&p);

	pair_open(&p, len, T_ACCESS_ALL, 64, 1);
	assert_int_equal(tpost_write_imm(&p.a, 4, p.a.buf, (uint32_t)len,
					 p.a.mr->lkey, p.b.mr->rkey,
					 (uintptr_t)p.b.buf, 1), 0);
	tpoll(&p.a, &c);
	assert_int_equal(c.wr_id, 4);
	assert_int_equal(c.status, IBV_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(c.vendor_err, 10);
	assert_int_equal(tpost_recv(&p.b, 6, NULL, 0, p.b.mr->lkey), 0);
	assert_false(tpoll_for(&p.b, &c, 20));
	pair_close(&p);
}

/* A key or bounds violation fails at the initiator, touches nothing and
 * consumes no receive; a QP without the operation refuses the post. */
static void test_write_imm_errors(void **state)
{
	size_t len = 65536;
	struct pair p;
	struct tcomp c;

	pair_open(&p, len, T_ACCESS_ALL, 64, 0);
	memset(p.b.buf, 0x33, len);
	tfill(p.a.buf, len, 8);
	assert_int_equal(tpost_recv(&p.b, 70, NULL, 0, p.b.mr->lkey), 0);
	assert_int_equal(tpost_write_imm(&p.a, 1, p.a.buf, 100, p.a.mr->lkey,
					 p.b.mr->rkey ^ 0x10000, (uintptr_t)p.b.buf,
					 1), 0);
	tpoll(&p.a, &c);
	assert_int_equal(c.status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(c.vendor_err, 7);
	assert_int_equal(tpost_write_imm(&p.a, 2, p.a.buf, (uint32_t)len,
					 p.a.mr->lkey, p.b.mr->rkey,
					 (uintptr_t)p.b.buf + 1, 1), 0);
	tpoll(&p.a, &c);
	assert_int_equal(c.wr_id, 2);
	assert_int_equal(c.status, IBV_WC_REM_ACCESS_ERR);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(p.b.buf[i], 0x33);
	assert_false(tpoll_for(&p.b, &c, 5));
	/* the receive is still there for the next good one */
	assert_int_equal(tpost_write_imm(&p.a, 3, p.a.buf, 64, p.a.mr->lkey,
					 p.b.mr->rkey, (uintptr_t)p.b.buf, 2), 0);
	expect_write_imm_recv(&p, 70, 64, 2);
	expect_send_done(&p.a, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	assert_true(tcheck(p.b.buf, 64, 8));
	pair_close(&p);

	/* a device without RDMA write offers no write with immediate */
	tset("RDMA_WRITE", "0");
	pair_open(&p, 4096, T_ACCESS_ALL, 64, 0);
	assert_int_equal(tpost_write_imm(&p.a, 1, p.a.buf, 64, p.a.mr->lkey,
					 p.b.mr->rkey, (uintptr_t)p.b.buf, 1),
			 EOPNOTSUPP);
	pair_close(&p);
}

/* Devices cutting RDMA into different packet sizes still read and write
 * each other's memory, both ways. */
static void test_rdma_pkt_mix(void **state)
{
	size_t len = 200000;
	struct pair p;
	struct tcomp c;

	tset("RDMA_PKT", "1000");	/* rounded down to 896 */
	tnode_open(&p.a, 2 * len, T_ACCESS_ALL, 64, 0);
	tset("RDMA_PKT", "65408");
	tnode_open(&p.b, 2 * len, T_ACCESS_ALL, 64, 0);
	tnode_connect(&p.a, &p.b.gid, p.b.qpn, p.b.qkey);
	tnode_connect(&p.b, &p.a.gid, p.a.qpn, p.a.qkey);
	for (int dir = 0; dir < 2; dir++) {
		struct tnode *x = dir ? &p.b : &p.a, *y = dir ? &p.a : &p.b;

		tfill(x->buf, len, 30 + (uint32_t)dir);
		assert_int_equal(tpost_rdma(x, true, 1, x->buf, (uint32_t)len,
					    x->mr->lkey, y->mr->rkey,
					    (uintptr_t)y->buf + 1), 0);
		tpoll(x, &c);
		assert_int_equal(c.status, IBV_WC_SUCCESS);
		assert_true(tcheck(y->buf + 1, len, 30 + (uint32_t)dir));
		tfill(y->buf + len, len, 40 + (uint32_t)dir);
		assert_int_equal(tpost_rdma(x, false, 2, x->buf + len, (uint32_t)len,
					    x->mr->lkey, y->mr->rkey,
					    (uintptr_t)y->buf + len), 0);
		tpoll(x, &c);
		assert_int_equal(c.status, IBV_WC_SUCCESS);
		assert_true(tcheck(x->buf + len, len, 40 + (uint32_t)dir));
	}
	pair_close(&p);
}

static void expect_rdma_error(struct pair *p, bool write, uint32_t rkey,
			      uint64_t raddr, uint32_t len)
{
	struct tcomp c;

	assert_int_equal(tpost_rdma(&p->a, write, 99, p->a.buf, len,
				    p->a.mr->lkey, rkey, raddr), 0);
	tpoll(&p->a, &c);
	assert_int_equal(c.wr_id, 99);
	assert_int_equal(c.status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(c.vendor_err, 7);	/* EFA's REMOTE_BAD_ADDRESS */
	assert_int_equal(c.qp_num, p->a.qpn);
}

static void test_mr_violations(void **state)
{
	size_t len = 65536;
	struct pair p;
	uint8_t *copy;

	/* b's MR allows remote read only */
	pair_open(&p, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 64, 0);
	tfill(p.a.buf, len, 3);
	tfill(p.b.buf, len, 4);
	copy = malloc(len);
	memcpy(copy, p.b.buf, len);
	/* missing REMOTE_WRITE */
	expect_rdma_error(&p, true, p.b.mr->rkey, (uintptr_t)p.b.buf, 1000);
	/* bad key */
	expect_rdma_error(&p, true, p.b.mr->rkey ^ 0x5a5a0000, (uintptr_t)p.b.buf, 64);
	expect_rdma_error(&p, false, p.b.mr->rkey + 2, (uintptr_t)p.b.buf, 64);
	/* out of bounds: one byte past the end, and before the start */
	expect_rdma_error(&p, false, p.b.mr->rkey, (uintptr_t)p.b.buf + len - 100, 101);
	expect_rdma_error(&p, false, p.b.mr->rkey, (uintptr_t)p.b.buf - 1, 10);
	assert_memory_equal(copy, p.b.buf, len);
	pair_close(&p);

	/* writable MR, write running past its end over several packets */
	pair_open(&p, len, T_ACCESS_ALL, 64, 0);
	tfill(p.a.buf, len, 5);
	memset(p.b.buf, 0x77, len);
	expect_rdma_error(&p, true, p.b.mr->rkey, (uintptr_t)p.b.buf + 4096,
			  (uint32_t)len - 4095);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(p.b.buf[i], 0x77);
	free(copy);
	pair_close(&p);
}

static void test_rnr_exhausted(void **state)
{
	struct pair p;
	struct tcomp c;

	tset("RNR_DELAY_US", "200");
	pair_open(&p, 4096, T_ACCESS_ALL, 64, 2);
	tfill(p.a.buf, 64, 1);
	assert_int_equal(tpost_send(&p.a, 5, p.a.buf, 64, p.a.mr->lkey, false, 0), 0);
	tpoll(&p.a, &c);
	assert_int_equal(c.wr_id, 5);
	assert_int_equal(c.status, IBV_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(c.vendor_err, 10);	/* EFA's REMOTE_RNR */
	/* nothing was delivered; a receive posted now stays unused */
	assert_int_equal(tpost_recv(&p.b, 1, p.b.buf, 4096, p.b.mr->lkey), 0);
	assert_false(tpoll_for(&p.b, &c, 20));
	pair_close(&p);
}

static void test_rnr_then_recv(void **state)
{
	struct pair p;
	struct tcomp c;

	tset("RNR_DELAY_US", "100");
	pair_open(&p, 4096, T_ACCESS_ALL, 64, 7);	/* 7: retry forever */
	tfill(p.a.buf, 200, 8);
	assert_int_equal(tpost_send(&p.a, 5, p.a.buf, 200, p.a.mr->lkey, false, 0), 0);
	assert_false(tpoll_for(&p.a, &c, 30));
	assert_false(tpoll_for(&p.b, &c, 1));
	assert_int_equal(tpost_recv(&p.b, 1, p.b.buf, 4096, p.b.mr->lkey), 0);
	tpoll(&p.b, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_int_equal(c.byte_len, 200);
	assert_true(tcheck(p.b.buf, 200, 8));
	tpoll(&p.a, &c);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	assert_int_equal(c.wr_id, 5);
	/* exactly once */
	assert_int_equal(tpost_recv(&p.b, 2, p.b.buf, 4096, p.b.mr->lkey), 0);
	assert_false(tpoll_for(&p.b, &c, 20));
	pair_close(&p);
}

static void test_mtu(void **state)
{
	struct pair p;
	struct tcomp c;

	tset("MTU", "2000");
	pair_open(&p, 8192, T_ACCESS_ALL, 64, 0);
	assert_int_equal(tpost_recv(&p.b, 1, p.b.buf, 4096, p.b.mr->lkey), 0);
	tfill(p.a.buf, 2001, 6);
	assert_int_equal(tpost_send(&p.a, 1, p.a.buf, 2001, p.a.mr->lkey,
				    false, 0), EINVAL);
	assert_int_equal(tpost_send(&p.a, 2, p.a.buf, 2000, p.a.mr->lkey,
				    false, 0), 0);
	tpoll(&p.a, &c);
	assert_int_equal(c.wr_id, 2);
	assert_int_equal(c.status, IBV_WC_SUCCESS);
	tpoll(&p.b, &c);
	assert_int_equal(c.byte_len, 2000);
	assert_true(tcheck(p.b.buf, 2000, 6));
	/* receive buffer too small: error on both sides */
	assert_int_equal(tpost_recv(&p.b, 3, p.b.buf, 100, p.b.mr->lkey), 0);
	assert_int_equal(tpost_send(&p.a, 4, p.a.buf, 101, p.a.mr->lkey,
				    false, 0), 0);
	tpoll(&p.b, &c);
	assert_int_equal(c.wr_id, 3);
	assert_int_equal(c.status, IBV_WC_LOC_LEN_ERR);
	tpoll(&p.a, &c);
	assert_int_equal(c.wr_id, 4);
	assert_int_equal(c.status, IBV_WC_REM_INV_REQ_ERR);
	pair_close(&p);
}

static void test_cq_batch(void **state)
{
	enum { N = 300, BATCH = 16 };
	struct ibv_poll_cq_attr attr = { 0 };
	uint8_t seen[N] = { 0 };
	struct ibv_wc wc[BATCH];
	int got = 0, sent = 0;
	struct pair p;
	struct tcomp c;

	pair_open(&p, N * 64, T_ACCESS_ALL, 1024, 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(tpost_recv(&p.b, (uint64_t)i, p.b.buf + i * 64, 64,
					    p.b.mr->lkey), 0);
	for (int i = 0; i < N; i++) {
		p.a.buf[i * 64] = (uint8_t)i;
		p.a.buf[i * 64 + 1] = (uint8_t)(i >> 8);
		while (tpost_send(&p.a, (uint64_t)i, p.a.buf + i * 64, 2,
				  p.a.mr->lkey, false, 0) == ENOMEM) {
			/* send queue full: reap */
			assert_true(tpoll_for(&p.a, &c, 20000));
			assert_int_equal(c.status, IBV_WC_SUCCESS);
			sent++;
		}
	}
	/* start/next/end, at most BATCH per round */
	while (got < N) {
		int ret = ibv_start_poll(p.b.cq, &attr), n = 0;

		if (ret == ENOENT)
			continue;
		assert_int_equal(ret, 0);
		do {
			int k;

			assert_int_equal(p.b.cq->status, IBV_WC_SUCCESS);
			assert_int_equal(ibv_wc_read_byte_len(p.b.cq), 2);
			k = p.b.buf[p.b.cq->wr_id * 64] | p.b.buf[p.b.cq->wr_id * 64 + 1] << 8;
			assert_true(k < N);
			assert_int_equal(seen[k], 0);
			seen[k] = 1;
			got++;
		} while (++n < BATCH && ibv_next_poll(p.b.cq) == 0);
		ibv_end_poll(p.b.cq);
	}
	/* the sender's completions through ibv_poll_cq */
	while (sent < N) {
		int n = ibv_poll_cq(ibv_cq_ex_to_cq(p.a.cq), BATCH, wc);

		assert_true(n >= 0);
		for (int i = 0; i < n; i++)
			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		sent += n;
	}
	assert_int_equal(ibv_poll_cq(ibv_cq_ex_to_cq(p.a.cq), BATCH, wc), 0);
	pair_close(&p);
}

static void test_cq_overrun(void **state)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct pair p;
	struct tcomp c;
	int ret;

	tnode_open(&p.a, 4096, T_ACCESS_ALL, 64, 0);
	tnode_open(&p.b, 4096, T_ACCESS_ALL, 4, 0);
	tnode_connect(&p.a, &p.b.gid, p.b.qpn, p.b.qkey);
	assert_int_equal(p.b.cq->cqe, 4);
	for (int i = 0; i < 8; i++)
		assert_int_equal(tpost_recv(&p.b, (uint64_t)i, p.b.buf + i * 64, 64,
					    p.b.mr->lkey), 0);
	for (int i = 0; i < 8; i++)
		assert_int_equal(tpost_send(&p.a, (uint64_t)i, p.a.buf, 8,
					    p.a.mr->lkey, false, 0), 0);
	for (int i = 0; i < 8; i++)
		tpoll(&p.a, &c);
	/* the CQ held 4: it is now in error for good */
	ret = ibv_start_poll(p.b.cq, &attr);
	assert_int_equal(ret, EOVERFLOW);
	assert_int_equal(ibv_poll_cq(ibv_cq_ex_to_cq(p.b.cq), 1, (struct ibv_wc[1]){}),
			 -EOVERFLOW);
	pair_close(&p);
}

/* QP to the error state: every posted receive and unfinished send ends
 * as a flush error, and nothing is delivered to it afterwards. */
static void test_qp_error_flush(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	uint8_t seen[4] = { 0 };
	struct pair p;
	struct tcomp c;

	pair_open(&p, 4096, T_ACCESS_ALL, 64, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(tpost_recv(&p.b, (uint64_t)i, p.b.buf, 64,
					    p.b.mr->lkey), 0);
	assert_int_equal(V->modify_qp(p.b.qp, &attr, IBV_QP_STATE), 0);
	for (int i = 0; i < 4; i++) {
		tpoll(&p.b, &c);
		assert_int_equal(c.status, IBV_WC_WR_FLUSH_ERR);
		assert_int_equal(c.vendor_err, 1);
		assert_true(c.wr_id < 4);
		assert_int_equal(seen[c.wr_id], 0);
		seen[c.wr_id] = 1;
	}
	assert_int_equal(tpost_recv(&p.b, 9, p.b.buf, 64, p.b.mr->lkey), EINVAL);
	assert_false(tpoll_for(&p.b, &c, 5));
	pair_close(&p);
}

static void test_in_order_answers(void **state)
{
	static const struct { const char *set; int whole; int caps; } cases[] = {
		{ "none", 0, 0 },
		{ "128", 0, SRD_IN_ORDER_ALIGNED_128 },
		{ "whole", 1, SRD_IN_ORDER_WHOLE_MSG },
	};

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(cases); i++) {
		struct tnode n;

		tset("IN_ORDER", cases[i].set);
		tnode_open(&n, 64, T_ACCESS_ALL, 8, 0);
		assert_int_equal(V->query_qp_data_in_order(n.qp, IBV_WR_SEND, 0),
				 cases[i].whole);
		assert_int_equal(V->query_qp_data_in_order(n.qp, IBV_WR_RDMA_WRITE, 0),
				 cases[i].whole);
		assert_int_equal(V->query_qp_data_in_order(n.qp, IBV_WR_RDMA_WRITE,
							   SRD_IN_ORDER_RETURN_CAPS),
				 cases[i].caps);
		assert_int_equal(V->query_qp_data_in_order(n.qp, IBV_WR_RDMA_READ,
							   SRD_IN_ORDER_RETURN_CAPS), 0);
		tnode_close(&n);
	}
}

/*
 * What is claimed holds for a CPU polling target memory: with "whole", once
 * the message's last word shows generation g the whole buffer does; with
 * "128", once a line's last word shows g that line does. b's device thread
 * places the data while this thread polls b's memory.
 */
static void check_in_order(bool whole)
{
	enum { LEN = 128 * 1024, GENS = 12 };
	struct pair p;
	struct tcomp c;

	tset("IN_ORDER", whole ? "whole" : "128");
	tset("REORDER", "30");	/* packets of one write land out of order */
	pair_open(&p, LEN, T_ACCESS_ALL, 64, 0);
	for (uint64_t g = 1; g <= GENS; g++) {
		volatile uint64_t *w = (volatile uint64_t *)p.b.buf;
		uint64_t *src = (uint64_t *)p.a.buf;
		size_t words = LEN / 8;

		for (size_t i = 0; i < words; i++)
			src[i] = g;
		bool done = false;

		assert_int_equal(tpost_rdma(&p.a, true, g, p.a.buf, LEN, p.a.mr->lkey,
					    p.b.mr->rkey, (uintptr_t)p.b.buf), 0);
		if (whole) {
			while (__atomic_load_n(&w[words - 1], __ATOMIC_ACQUIRE) != g) {
				if (!done && tpoll_for(&p.a, &c, 0)) {
					assert_int_equal(c.status, IBV_WC_SUCCESS);
					done = c.wr_id == g;
				}
			}
			for (size_t i = 0; i < words; i++)
				assert_int_equal(w[i], g);
		} else {
			/* lines in reverse: the last packets may land first */
			for (size_t l = LEN / 128; l-- > 0;) {
				while (__atomic_load_n(&w[l * 16 + 15], __ATOMIC_ACQUIRE) != g)
					;
				for (size_t i = 0; i < 16; i++)
					assert_int_equal(w[l * 16 + i], g);
			}
		}
		while (!done) {
			tpoll(&p.a, &c);
			assert_int_equal(c.status, IBV_WC_SUCCESS);
			done = c.wr_id == g;
		}
	}
	pair_close(&p);
}

static void test_in_order_whole(void **state)
{
	check_in_order(true);
}

static void test_in_order_128(void **state)
{
	check_in_order(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_caps, setup),
		cmocka_unit_test_setup(test_send_recv, setup),
		cmocka_unit_test_setup(test_send_imm, setup),
		cmocka_unit_test_setup(test_rdma, setup),
		cmocka_unit_test_setup(test_rdma_pkt_mix, setup),
		cmocka_unit_test_setup(test_write_imm, setup),
		cmocka_unit_test_setup(test_write_imm_poll_cq, setup),
		cmocka_unit_test_setup(test_write_imm_rnr, setup),
		cmocka_unit_test_setup(test_write_imm_errors, setup),
		cmocka_unit_test_setup(test_mr_violations, setup),
		cmocka_unit_test_setup(test_rnr_exhausted, setup),
		cmocka_unit_test_setup(test_rnr_then_recv, setup),
		cmocka_unit_test_setup(test_mtu, setup),
		cmocka_unit_test_setup(test_cq_batch, setup),
		cmocka_unit_test_setup(test_cq_overrun, setup),
		cmocka_unit_test_setup(test_qp_error_flush, setup),
		cmocka_unit_test_setup(test_in_order_answers, setup),
		cmocka_unit_test_setup(test_in_order_whole, setup),
		cmocka_unit_test_setup(test_in_order_128, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
