/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/util_time.h"
#include "softsrd_test.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const struct srd_verbs_ops *V = &softsrd_verbs_ops;

/* A hang guard, not a timing assertion: a lost completion fails the test
 * instead of blocking the suite. */
#define T_GUARD_NS (10ull * 1000000000ull)

void tset(const char *name, const char *value)
{
	char env[128];

	snprintf(env, sizeof(env), "FI_SRD_SOFT_%s", name);
	if (value)
		setenv(env, value, 1);
	else
		unsetenv(env);
}

void treset(void)
{
	static const char *const names[] = {
		"MTU", "LOSS", "DUP", "REORDER", "DELAY_US", "RNR", "IN_ORDER",
		"RTO_US", "RTO_MIN_US", "RTO_MAX_US", "DEAD_MS", "RNR_DELAY_US", "IO", "MAX_SGE",
		"INLINE_BUF_SIZE", "RDMA_READ", "RDMA_WRITE", "MAX_SQ_WR",
		"RDMA_PKT", "IFACE", "ACK_DELAY_US", "WINDOW", "CRC", "CORRUPT",
	};

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(names); i++)
		tset(names[i], NULL);
	tset("ADDR", "127.0.0.1");
}

static void tnode_qp(struct tnode *n, uint8_t rnr_retry)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = ibv_cq_ex_to_cq(n->cq),
		.recv_cq = ibv_cq_ex_to_cq(n->cq),
		.cap = { .max_send_wr = 256, .max_recv_wr = 1024,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 32 },
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = n->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
	};
	struct efadv_qp_init_attr efa = { .driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qkey = 0x11220000u | (uint32_t)rand() % 0xffff };
	struct efadv_device_attr caps;

	/* RDMA ops only where the device offers them */
	assert_int_equal(V->efadv_query_device(n->ctx, &caps, sizeof(caps)), 0);
	if (!(caps.device_caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ))
		a.send_ops_flags &= ~(uint64_t)IBV_QP_EX_WITH_RDMA_READ;
	if (!(caps.device_caps & SRD_EFADV_CAPS_RDMA_WRITE))
		a.send_ops_flags &= ~(uint64_t)(IBV_QP_EX_WITH_RDMA_WRITE |
						IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	n->qp = V->efadv_create_qp_ex(n->ctx, &a, &efa, sizeof(efa));
	assert_non_null(n->qp);
	n->qpx = V->qp_to_qp_ex(n->qp);
	assert_ptr_equal(&n->qpx->qp_base, n->qp);
	assert_int_equal(V->modify_qp(n->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				      IBV_QP_PORT | IBV_QP_QKEY), 0);
	attr.qp_state = IBV_QPS_RTR;
	assert_int_equal(V->modify_qp(n->qp, &attr, IBV_QP_STATE), 0);
	attr.qp_state = IBV_QPS_RTS;
	attr.rnr_retry = rnr_retry;
	assert_int_equal(V->modify_qp(n->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
				      IBV_QP_RNR_RETRY), 0);
	n->qpn = n->qp->qp_num;
	n->qkey = attr.qkey;
}

void tnode_open(struct tnode *n, size_t buf_len, int access, int cqe,
		uint8_t rnr_retry)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = (uint32_t)cqe,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
			    IBV_WC_EX_WITH_SLID,
	};
	struct ibv_device **list;
	int num = 0;

	memset(n, 0, sizeof(*n));
	list = V->get_device_list(&num);
	assert_non_null(list);
	assert_int_equal(num, 1);
	n->ctx = V->open_device(list[0]);
	V->free_device_list(list);
	assert_non_null(n->ctx);
	n->pd = V->alloc_pd(n->ctx);
	assert_non_null(n->pd);
	/* the rdma-core inline, through verbs_context */
	n->cq = ibv_create_cq_ex(n->ctx, &ca);
	assert_non_null(n->cq);
	tnode_qp(n, rnr_retry);
	assert_int_equal(V->query_gid(n->ctx, 1, 0, &n->gid), 0);
	n->len = buf_len;
	n->buf = aligned_alloc(4096, (buf_len + 4095) & ~(size_t)4095);
	assert_non_null(n->buf);
	memset(n->buf, 0, buf_len);
	n->mr = V->reg_mr(n->pd, n->buf, buf_len, access);
	assert_non_null(n->mr);
}

void tnode_close(struct tnode *n)
{
	if (n->ah)
		assert_int_equal(V->destroy_ah(n->ah), 0);
	assert_int_equal(V->destroy_qp(n->qp), 0);
	assert_int_equal(V->dereg_mr(n->mr), 0);
	assert_int_equal(V->destroy_cq(ibv_cq_ex_to_cq(n->cq)), 0);
	assert_int_equal(V->dealloc_pd(n->pd), 0);
	assert_int_equal(V->close_device(n->ctx), 0);
	free(n->buf);
	memset(n, 0, sizeof(*n));
}

void tnode_connect(struct tnode *a, const union ibv_gid *gid, uint32_t qpn,
		   uint32_t qkey)
{
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1,
				    .grh = { .dgid = *gid } };

	if (a->ah)
		V->destroy_ah(a->ah);
	a->ah = V->create_ah(a->pd, &attr);
	assert_non_null(a->ah);
	a->peer_qpn = qpn;
	a->peer_qkey = qkey;
}

int tpost_send(struct tnode *a, uint64_t wr_id, void *addr, uint32_t len,
	       uint32_t lkey, bool imm, uint32_t imm_data)
{
	ibv_wr_start(a->qpx);
	a->qpx->wr_id = wr_id;
	a->qpx->wr_flags = IBV_SEND_SIGNALED;
	if (imm)
		ibv_wr_send_imm(a->qpx, htobe32(imm_data));
	else
		ibv_wr_send(a->qpx);
	ibv_wr_set_ud_addr(a->qpx, a->ah, a->peer_qpn, a->peer_qkey);
	ibv_wr_set_sge(a->qpx, lkey, (uintptr_t)addr, len);
	return ibv_wr_complete(a->qpx);
}

int tpost_rdma(struct tnode *a, bool write, uint64_t wr_id, void *addr,
	       uint32_t len, uint32_t lkey, uint32_t rkey, uint64_t raddr)
{
	ibv_wr_start(a->qpx);
	a->qpx->wr_id = wr_id;
	a->qpx->wr_flags = IBV_SEND_SIGNALED;
	if (write)
		ibv_wr_rdma_write(a->qpx, rkey, raddr);
	else
		ibv_wr_rdma_read(a->qpx, rkey, raddr);
	ibv_wr_set_ud_addr(a->qpx, a->ah, a->peer_qpn, a->peer_qkey);
	ibv_wr_set_sge(a->qpx, lkey, (uintptr_t)addr, len);
	return ibv_wr_complete(a->qpx);
}

int tpost_write_imm(struct tnode *a, uint64_t wr_id, void *addr, uint32_t len,
		    uint32_t lkey, uint32_t rkey, uint64_t raddr, uint32_t imm)
{
	ibv_wr_start(a->qpx);
	a->qpx->wr_id = wr_id;
	a->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(a->qpx, rkey, raddr, htobe32(imm));
	ibv_wr_set_ud_addr(a->qpx, a->ah, a->peer_qpn, a->peer_qkey);
	ibv_wr_set_sge(a->qpx, lkey, (uintptr_t)addr, len);
	return ibv_wr_complete(a->qpx);
}

int tpost_recv(struct tnode *n, uint64_t wr_id, void *addr, uint32_t len,
	       uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad = NULL;

	return ibv_post_recv(n->qp, &wr, &bad);
}

static void tcomp_read(struct ibv_cq_ex *cq, struct tcomp *c)
{
	memset(c, 0, sizeof(*c));
	c->wr_id = cq->wr_id;
	c->status = cq->status;
	c->qp_num = ibv_wc_read_qp_num(cq);
	c->vendor_err = ibv_wc_read_vendor_err(cq);
	if (c->status != IBV_WC_SUCCESS)
		return;
	c->opcode = ibv_wc_read_opcode(cq);
	c->byte_len = ibv_wc_read_byte_len(cq);
	c->wc_flags = ibv_wc_read_wc_flags(cq);
	c->src_qp = ibv_wc_read_src_qp(cq);
	c->slid = ibv_wc_read_slid(cq);
	if (c->wc_flags & IBV_WC_WITH_IMM)
		c->imm = be32toh(ibv_wc_read_imm_data(cq));
}

bool tpoll_for(struct tnode *n, struct tcomp *c, unsigned int spin_ms)
{
	struct ibv_poll_cq_attr attr = { 0 };
	uint64_t end = util_time_ns() + (uint64_t)spin_ms * 1000000ull;

	do {
		int ret = ibv_start_poll(n->cq, &attr);

		if (!ret) {
			tcomp_read(n->cq, c);
			ibv_end_poll(n->cq);
			return true;
		}
		assert_int_equal(ret, ENOENT);
		sched_yield();
	} while (util_time_ns() < end);
	return false;
}

void tpoll(struct tnode *n, struct tcomp *c)
{
	assert_true(tpoll_for(n, c, (unsigned int)(T_GUARD_NS / 1000000ull)));
}

void tfill(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

bool tcheck(const uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		if (p[i] != (uint8_t)(x >> 16))
			return false;
	}
	return true;
}
