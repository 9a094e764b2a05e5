/* SPDX-License-Identifier: MIT */
/*
 * The mock verbs device (see srd_mock.h).
 */
#include "weft/compat.h"
#include "srd_mock.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mock_state mock;

struct mock_qp {
	struct ibv_qp_ex qpx;		/* first: ibv_qp is its qp_base */
	uint32_t qkey;
	struct ibv_qp_cap cap;
};

static struct ibv_device mock_devices[4];
static unsigned int mock_cur_wc;	/* completion the CQ points at */
static uint32_t mock_next_qpn = 0x100;

void mock_reset(void)
{
	memset(&mock, 0, sizeof(mock));
	mock.ndev = 1;
	mock.dev_names[0] = "mock_0";
	mock.dev_names[1] = "mock_1";

	mock.attr_ex.orig_attr.max_mr_size = 1ULL << 40;
	mock.attr_ex.orig_attr.max_qp = 256;
	mock.attr_ex.orig_attr.max_qp_wr = 4096;
	mock.attr_ex.orig_attr.max_sge = 2;
	mock.attr_ex.orig_attr.max_cq = 512;
	mock.attr_ex.orig_attr.max_cqe = 32768;
	mock.attr_ex.orig_attr.max_mr = 262144;
	mock.attr_ex.orig_attr.max_pd = 256;
	mock.attr_ex.orig_attr.max_ah = 1024;
	mock.attr_ex.orig_attr.phys_port_cnt = 1;
	mock.attr_ex.orig_attr.vendor_id = 0x1d0f;
	mock.attr_ex.device_cap_flags_ex = 1ULL << 40;
	mock.attr_ex.odp_caps.general_caps = 1;
	mock.attr_ex.completion_timestamp_mask = 0xffffffff;
	mock.attr_ex.cq_mod_caps.max_cq_count = 16;
	mock.attr_ex.cq_mod_caps.max_cq_period = 100;
	mock.attr_ex.pci_atomic_caps.fetch_add = 2;

	mock.efa.max_sq_wr = 4096;
	mock.efa.max_rq_wr = 32768;
	mock.efa.max_sq_sge = 2;
	mock.efa.max_rq_sge = 3;
	mock.efa.inline_buf_size = 32;
	mock.efa.max_rdma_size = 1u << 30;
	mock.efa.device_caps = EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
			       EFADV_DEVICE_ATTR_CAPS_RNR_RETRY;

	mock.port.state = IBV_PORT_ACTIVE;
	mock.port.active_mtu = IBV_MTU_4096;
	mock.port.max_msg_sz = 8928;
	for (int i = 0; i < 16; i++)
		mock.gid.raw[i] = (uint8_t)(0xf0 + i);

	mock.in_order_send = 0;
	mock.in_order_write = 0;
	mock_cur_wc = 0;
}

void mock_fail(enum mock_op op, unsigned int at, unsigned int count, int err)
{
	mock.fail_at[op] = at;
	mock.fail_count[op] = count;
	mock.fail_errno[op] = err;
}

/* Count the call; true when this one must fail (errno set). */
static bool mock_enter(enum mock_op op)
{
	unsigned int n = ++mock.calls[op];

	if (!mock.fail_at[op] || n < mock.fail_at[op])
		return false;
	if (mock.fail_count[op] && n >= mock.fail_at[op] + mock.fail_count[op])
		return false;
	errno = mock.fail_errno[op] ? mock.fail_errno[op] : EIO;
	return true;
}

static int mock_err(enum mock_op op)
{
	return mock.fail_errno[op] ? mock.fail_errno[op] : EIO;
}

static void *mock_obj(size_t size)
{
	void *p = calloc(1, size);

	if (p)
		mock.live++;
	return p;
}

static void mock_obj_free(void *p)
{
	if (!p)
		return;
	mock.live--;
	free(p);
}

/* ---- completions ------------------------------------------------------- */

void mock_push_wc(const struct mock_wc *wc)
{
	mock.wc[mock.wc_tail++ % MOCK_MAX_WC] = *wc;
}

unsigned int mock_wc_pending(void)
{
	return mock.wc_tail - mock.wc_head;
}

static const struct mock_wc *mock_cur(void)
{
	return &mock.wc[mock_cur_wc % MOCK_MAX_WC];
}

static int mock_load_next(struct ibv_cq_ex *cqx)
{
	if (mock.wc_head == mock.wc_tail)
		return ENOENT;
	mock_cur_wc = mock.wc_head++;
	cqx->wr_id = mock_cur()->wr_id;
	cqx->status = mock_cur()->status;
	return 0;
}

static int mock_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	int ret;

	if (mock.in_poll || attr->comp_mask)
		mock.poll_protocol_error = true;
	if (mock_enter(MOCK_START_POLL))
		return mock_err(MOCK_START_POLL);
	ret = mock_load_next(cqx);
	if (!ret)
		mock.in_poll = true;
	return ret;
}

static int mock_next_poll(struct ibv_cq_ex *cqx)
{
	if (!mock.in_poll)
		mock.poll_protocol_error = true;
	if (mock_enter(MOCK_NEXT_POLL))
		return mock_err(MOCK_NEXT_POLL);
	return mock_load_next(cqx);
}

static void mock_end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx;
	if (!mock.in_poll)
		mock.poll_protocol_error = true;
	mock_enter(MOCK_END_POLL);
	mock.in_poll = false;
}

static enum ibv_wc_opcode mock_read_opcode(struct ibv_cq_ex *cqx)
{
	return mock_cur()->opcode;
}

static uint32_t mock_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return mock_cur()->vendor_err;
}

static uint32_t mock_read_byte_len(struct ibv_cq_ex *cqx)
{
	return mock_cur()->byte_len;
}

static __be32 mock_read_imm_data(struct ibv_cq_ex *cqx)
{
	return htobe32(mock_cur()->imm_host);
}

static uint32_t mock_read_qp_num(struct ibv_cq_ex *cqx)
{
	return mock_cur()->qp_num;
}

static uint32_t mock_read_src_qp(struct ibv_cq_ex *cqx)
{
	return mock_cur()->src_qp;
}

static unsigned int mock_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return mock_cur()->wc_flags;
}

static int mock_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int i;

	mock.poll_cq_n = n;
	if (mock_enter(MOCK_POLL_CQ))
		return -1;
	for (i = 0; i < n && mock.wc_head != mock.wc_tail; i++) {
		const struct mock_wc *m = &mock.wc[mock.wc_head++ % MOCK_MAX_WC];

		memset(&wc[i], 0, sizeof(wc[i]));
		wc[i].wr_id = m->wr_id;
		wc[i].status = m->status;
		wc[i].opcode = m->opcode;
		wc[i].vendor_err = m->vendor_err;
		wc[i].byte_len = m->byte_len;
		wc[i].qp_num = m->qp_num;
		wc[i].src_qp = m->src_qp;
		wc[i].imm_data = htobe32(m->imm_host);
		wc[i].wc_flags = m->wc_flags;
	}
	return i;
}

struct ibv_cq_ex *mock_cq_ex_new(struct ibv_context *ctx)
{
	struct ibv_cq_ex *cqx = mock_obj(sizeof(*cqx));

	if (!cqx)
		return NULL;
	cqx->context = ctx;
	if (!mock.cq_ex_no_start_poll) {
		cqx->start_poll = mock_start_poll;
		cqx->next_poll = mock_next_poll;
		cqx->end_poll = mock_end_poll;
	}
	cqx->read_opcode = mock_read_opcode;
	cqx->read_vendor_err = mock_read_vendor_err;
	cqx->read_byte_len = mock_read_byte_len;
	cqx->read_imm_data = mock_read_imm_data;
	cqx->read_qp_num = mock_read_qp_num;
	cqx->read_src_qp = mock_read_src_qp;
	cqx->read_wc_flags = mock_read_wc_flags;
	return cqx;
}

void mock_cq_ex_free(struct ibv_cq_ex *cqx)
{
	mock_obj_free(cqx);
}

/* ---- device --------------------------------------------------------------- */

static struct ibv_device **mock_get_device_list(int *num)
{
	struct ibv_device **list;
	int i;

	if (mock_enter(MOCK_GET_DEVICE_LIST))
		return NULL;
	list = mock_obj(sizeof(*list) * (size_t)(mock.ndev + 1));
	if (!list)
		return NULL;
	for (i = 0; i < mock.ndev; i++)
		list[i] = &mock_devices[i];
	*num = mock.ndev;
	return list;
}

static void mock_free_device_list(struct ibv_device **list)
{
	mock_enter(MOCK_FREE_DEVICE_LIST);
	mock_obj_free(list);
}

static const char *mock_get_device_name(struct ibv_device *dev)
{
	mock_enter(MOCK_GET_DEVICE_NAME);
	return mock.dev_names[dev - mock_devices];
}

static struct ibv_context *mock_open_device(struct ibv_device *dev)
{
	struct ibv_context *ctx;

	if (mock_enter(MOCK_OPEN_DEVICE))
		return NULL;
	ctx = mock_obj(sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->device = dev;
	ctx->ops.poll_cq = mock_poll_cq;
	return ctx;
}

struct ibv_context *mock_context(void)
{
	return mock_open_device(&mock_devices[0]);
}

static int mock_close_device(struct ibv_context *ctx)
{
	mock_enter(MOCK_CLOSE_DEVICE);
	mock_obj_free(ctx);
	return 0;
}

static int mock_query_device_ex(struct ibv_context *ctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr)
{
	if (mock_enter(MOCK_QUERY_DEVICE_EX))
		return mock_err(MOCK_QUERY_DEVICE_EX);
	*attr = mock.attr_ex;
	return 0;
}

static int mock_efadv_query_device(struct ibv_context *ctx,
				   struct efadv_device_attr *attr, uint32_t inlen)
{
	if (mock_enter(MOCK_EFADV_QUERY_DEVICE))
		return mock_err(MOCK_EFADV_QUERY_DEVICE);
	if (inlen > sizeof(mock.efa))
		return EINVAL;
	memcpy(attr, &mock.efa, inlen);
	return 0;
}

static int mock_query_port(struct ibv_context *ctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	if (mock_enter(MOCK_QUERY_PORT))
		return mock_err(MOCK_QUERY_PORT);
	if (port != 1)
		return EINVAL;
	*attr = mock.port;
	return 0;
}

static int mock_query_gid(struct ibv_context *ctx, uint8_t port, int index,
			  union ibv_gid *gid)
{
	/* rdma-core's returns -1 with errno. */
	if (mock_enter(MOCK_QUERY_GID))
		return -1;
	*gid = mock.gid;
	return 0;
}

static struct ibv_pd *mock_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd;

	if (mock_enter(MOCK_ALLOC_PD))
		return NULL;
	pd = mock_obj(sizeof(*pd));
	if (pd)
		pd->context = ctx;
	return pd;
}

static int mock_dealloc_pd(struct ibv_pd *pd)
{
	mock_enter(MOCK_DEALLOC_PD);
	mock_obj_free(pd);
	return 0;
}

static struct ibv_mr *mock_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				  int access)
{
	struct ibv_mr *mr;

	if (mock_enter(MOCK_REG_MR))
		return NULL;
	mr = mock_obj(sizeof(*mr));
	if (mr) {
		mr->pd = pd;
		mr->addr = addr;
		mr->length = len;
	}
	return mr;
}

static int mock_dereg_mr(struct ibv_mr *mr)
{
	mock_enter(MOCK_DEREG_MR);
	mock_obj_free(mr);
	return 0;
}

static struct ibv_cq_ex *mock_create_cq_ex(struct ibv_context *ctx,
					   struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *cqx;

	mock.cq_attr = *attr;
	if (mock_enter(MOCK_CREATE_CQ_EX))
		return NULL;
	cqx = mock_cq_ex_new(ctx);
	if (cqx)
		cqx->cqe = (int)attr->cqe;
	return cqx;
}

static int mock_destroy_cq(struct ibv_cq *cq)
{
	mock_enter(MOCK_DESTROY_CQ);
	mock_obj_free(cq);
	return 0;
}

/* ---- QP ------------------------------------------------------------------- */

static struct ibv_qp *mock_create_qp(struct ibv_context *ctx,
				     struct ibv_qp_init_attr_ex *attr,
				     struct efadv_qp_init_attr *efa,
				     uint32_t inlen)
{
	struct mock_qp *qp;
	unsigned int i = mock.n_qp_create;

	if (i < MOCK_MAX_QP_CREATE) {
		mock.qp_attr[i] = *attr;
		memcpy(&mock.qp_efa[i], efa,
		       inlen < sizeof(*efa) ? inlen : sizeof(*efa));
		mock.qp_efa_inlen[i] = inlen;
		mock.n_qp_create++;
	}
	if (mock_enter(MOCK_CREATE_QP))
		return NULL;
	qp = mock_obj(sizeof(*qp));
	if (!qp)
		return NULL;
	qp->qpx.qp_base.context = ctx;
	qp->qpx.qp_base.qp_num = mock_next_qpn++;
	qp->qpx.qp_base.state = IBV_QPS_RESET;
	qp->qpx.qp_base.qp_type = attr->qp_type;
	qp->qpx.qp_base.qp_context = attr->qp_context;
	qp->cap = attr->cap;
	return &qp->qpx.qp_base;
}

static struct ibv_qp_ex *mock_qp_to_qp_ex(struct ibv_qp *qp)
{
	if (mock_enter(MOCK_QP_TO_QP_EX))
		return NULL;
	return (struct ibv_qp_ex *)qp;
}

static int mock_modify_qp(struct ibv_qp *ibv_qp, struct ibv_qp_attr *attr,
			  int mask)
{
	struct mock_qp *qp = (struct mock_qp *)ibv_qp;
	unsigned int i = mock.n_modify;

	if (i < MOCK_MAX_MODIFY) {
		mock.modify_attr[i] = *attr;
		mock.modify_mask[i] = mask;
		mock.n_modify++;
	}
	if (mock_enter(MOCK_MODIFY_QP))
		return mock_err(MOCK_MODIFY_QP);
	if (mask & IBV_QP_STATE)
		ibv_qp->state = attr->qp_state;
	if (mask & IBV_QP_QKEY)
		qp->qkey = attr->qkey;
	return 0;
}

static int mock_query_qp(struct ibv_qp *ibv_qp, struct ibv_qp_attr *attr,
			 int mask, struct ibv_qp_init_attr *init)
{
	struct mock_qp *qp = (struct mock_qp *)ibv_qp;

	if (mock_enter(MOCK_QUERY_QP))
		return mock_err(MOCK_QUERY_QP);
	attr->qp_state = ibv_qp->state;
	attr->qkey = qp->qkey;
	attr->cap = qp->cap;
	init->cap = qp->cap;
	return 0;
}

static int mock_query_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
			       uint32_t flags)
{
	int answer = op == IBV_WR_RDMA_WRITE ? mock.in_order_write :
		     mock.in_order_send;

	if (mock.n_in_order < 4) {
		mock.in_order_flags[mock.n_in_order] = flags;
		mock.in_order_op[mock.n_in_order] = op;
		mock.n_in_order++;
	}
	if (mock_enter(MOCK_QUERY_IN_ORDER))
		return -mock_err(MOCK_QUERY_IN_ORDER);
	if (answer < 0 || (flags & SRD_IN_ORDER_RETURN_CAPS))
		return answer;
	return !!(answer & SRD_IN_ORDER_WHOLE_MSG);
}

static int mock_destroy_qp(struct ibv_qp *qp)
{
	mock_enter(MOCK_DESTROY_QP);
	mock_obj_free(qp);
	return 0;
}

/* ---- AH ------------------------------------------------------------------- */

static uint16_t mock_next_ahn = 1;

struct mock_ah {
	struct ibv_ah ah;
	uint16_t ahn;
};

static struct ibv_ah *mock_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct mock_ah *ah;

	if (mock.create_ah_yields)
		usleep(50);
	mock.ah_attr = *attr;
	if (mock_enter(MOCK_CREATE_AH))
		return NULL;
	ah = mock_obj(sizeof(*ah));
	if (!ah)
		return NULL;
	ah->ah.pd = pd;
	ah->ahn = mock_next_ahn++;
	return &ah->ah;
}

static int mock_query_ah(struct ibv_ah *ah, struct efadv_ah_attr *attr,
			 uint32_t inlen)
{
	if (mock_enter(MOCK_QUERY_AH))
		return mock_err(MOCK_QUERY_AH);
	attr->ahn = ((struct mock_ah *)ah)->ahn;
	return 0;
}

static int mock_destroy_ah(struct ibv_ah *ah)
{
	mock_enter(MOCK_DESTROY_AH);
	mock_obj_free(ah);
	return 0;
}

const struct srd_verbs_ops mock_verbs_ops = {
	.name = "mock",
	.get_device_list = mock_get_device_list,
	.free_device_list = mock_free_device_list,
	.get_device_name = mock_get_device_name,
	.open_device = mock_open_device,
	.close_device = mock_close_device,
	.query_device_ex = mock_query_device_ex,
	.efadv_query_device = mock_efadv_query_device,
	.query_port = mock_query_port,
	.query_gid = mock_query_gid,
	.alloc_pd = mock_alloc_pd,
	.dealloc_pd = mock_dealloc_pd,
	.reg_mr = mock_reg_mr,
	.dereg_mr = mock_dereg_mr,
	.create_cq_ex = mock_create_cq_ex,
	.destroy_cq = mock_destroy_cq,
	.efadv_create_qp_ex = mock_create_qp,
	.qp_to_qp_ex = mock_qp_to_qp_ex,
	.modify_qp = mock_modify_qp,
	.query_qp = mock_query_qp,
	.query_qp_data_in_order = mock_query_in_order,
	.destroy_qp = mock_destroy_qp,
	.create_ah = mock_create_ah,
	.efadv_query_ah = mock_query_ah,
	.destroy_ah = mock_destroy_ah,
};
