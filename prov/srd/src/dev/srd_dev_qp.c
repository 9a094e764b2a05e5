/* SPDX-License-Identifier: MIT */
/*
 * One SRD queue pair per endpoint, and the endpoint name built from it.
 * Creation asks for what the device said it can do and no more (send ops,
 * unsolicited write-recv, service level), then steps the QP from RESET to
 * RTS. The queue depths are upper limits: on ENOMEM they are halved and
 * creation retried, and a refused low-latency SL is retried with the
 * default one.
 */
#include "weft/compat.h"
#include "srd_dev.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define SRD_QP_MIN_DEPTH 16

uint64_t srd_dev_qp_send_ops_flags(const struct srd_dev_caps *caps)
{
	uint64_t flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

	if (caps->rdma_read)
		flags |= IBV_QP_EX_WITH_RDMA_READ;
	if (caps->rdma_write)
		flags |= IBV_QP_EX_WITH_RDMA_WRITE |
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	return flags;
}

static uint32_t srd_qkey_random(void)
{
	uint32_t key;
	uint64_t seed;

	if (getrandom(&key, sizeof(key), GRND_NONBLOCK) == sizeof(key))
		return (key & SRD_QKEY_MASK) ? key & SRD_QKEY_MASK : 1;
	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^
	       (uint64_t)(uintptr_t)&key;
	key = (uint32_t)srd_dev_rng_next(&seed) & SRD_QKEY_MASK;
	return key ? key : 1;
}

static bool srd_dev_qp_unsolicited_ok(const struct srd_dev *dev,
				      const struct srd_dev_qp_attr *attr)
{
#if WEFT_HAVE_EFADV_QP_FLAGS && WEFT_HAVE_UNSOLICITED_WRITE_RECV
	return attr->want_unsolicited_write_recv &&
	       dev->caps.unsolicited_write_recv && dev->caps.rdma_write;
#else
	(void)dev;
	(void)attr;
	return false;
#endif
}

struct srd_dev_qp_try {
	uint32_t sq;
	uint32_t rq;
	bool sl;
	bool unsolicited;
};

static struct ibv_qp *srd_dev_qp_create_once(struct srd_dev_qp *qp,
					     const struct srd_settings *s,
					     const struct srd_dev_qp_attr *attr,
					     const struct srd_dev_qp_try *t)
{
	struct srd_dev *dev = qp->dev;
	struct ibv_qp_init_attr_ex ia;
	struct efadv_qp_init_attr ea;

	memset(&ia, 0, sizeof(ia));
	ia.qp_context = attr->qp_context;
	ia.send_cq = attr->send_cq;
	ia.recv_cq = attr->recv_cq;
	ia.cap.max_send_wr = t->sq;
	ia.cap.max_recv_wr = t->rq;
	ia.cap.max_send_sge = attr->max_send_sge ? attr->max_send_sge : 1;
	ia.cap.max_recv_sge = attr->max_recv_sge ? attr->max_recv_sge : 1;
	ia.cap.max_inline_data = attr->max_inline;
	ia.qp_type = IBV_QPT_DRIVER;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = dev->pd;
	ia.send_ops_flags = qp->send_ops_flags;

	memset(&ea, 0, sizeof(ea));
	ea.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD;
#if WEFT_HAVE_EFADV_QP_FLAGS && WEFT_HAVE_UNSOLICITED_WRITE_RECV
	if (t->unsolicited)
		ea.flags |= EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV;
#endif
#if WEFT_HAVE_EFADV_QP_SL
	if (t->sl)
		ea.sl = s->low_latency_sl;
#else
	(void)s;
#endif
	return dev->verbs->efadv_create_qp_ex(dev->ctx, &ia, &ea, sizeof(ea));
}

/* Whether to ask for the low-latency SL: only where the headers let us. */
static bool srd_dev_qp_want_sl(const struct srd_dev_qp_attr *attr)
{
#if WEFT_HAVE_EFADV_QP_SL
	return attr->tclass == FI_TC_LOW_LATENCY;
#else
	(void)attr;
	return false;
#endif
}

static int srd_dev_qp_create_ibv(struct srd_dev_qp *qp,
				 const struct srd_settings *s,
				 const struct srd_dev_qp_attr *attr)
{
	struct srd_dev_qp_try t = {
		.sq = attr->sq_depth,
		.rq = attr->rq_depth,
		.sl = srd_dev_qp_want_sl(attr),
		.unsolicited = srd_dev_qp_unsolicited_ok(qp->dev, attr),
	};
	int err;

	for (;;) {
		qp->ibv_qp = srd_dev_qp_create_once(qp, s, attr, &t);
		if (qp->ibv_qp)
			break;
		err = errno ? errno : EIO;
		if (t.sl) {
			FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
				"%s: low-latency SL %u refused (%s), using the default\n",
				qp->dev->name, s->low_latency_sl, strerror(err));
			t.sl = false;
			continue;
		}
		if (err == ENOMEM &&
		    (t.sq > SRD_QP_MIN_DEPTH || t.rq > SRD_QP_MIN_DEPTH)) {
			t.sq = t.sq / 2 > SRD_QP_MIN_DEPTH ? t.sq / 2 : SRD_QP_MIN_DEPTH;
			t.rq = t.rq / 2 > SRD_QP_MIN_DEPTH ? t.rq / 2 : SRD_QP_MIN_DEPTH;
			FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
				"%s: QP out of memory, retrying with sq %u rq %u\n",
				qp->dev->name, t.sq, t.rq);
			continue;
		}
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"%s: efadv_create_qp_ex(SRD, sq %u rq %u): %s\n",
			qp->dev->name, t.sq, t.rq, strerror(err));
		return -err;
	}
	qp->sq_depth = t.sq;
	qp->rq_depth = t.rq;
	qp->low_latency_sl = t.sl;
	qp->unsolicited_write_recv = t.unsolicited;
	return 0;
}

static int srd_dev_qp_modify(struct srd_dev_qp *qp, struct ibv_qp_attr *a,
			     int mask, const char *step)
{
	int ret = qp->dev->verbs->modify_qp(qp->ibv_qp, a, mask);

	if (ret) {
		ret = ret < 0 ? ret : -ret;
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL, "%s: QP %u to %s: %s\n",
			qp->dev->name, qp->ibv_qp->qp_num, step, strerror(-ret));
	}
	return ret;
}

static int srd_dev_qp_to_rts(struct srd_dev_qp *qp,
			     const struct srd_settings *s)
{
	struct ibv_qp_attr a;
	int mask, ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = qp->dev->caps.port_num;
	a.qkey = qp->qkey;
	ret = srd_dev_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_QKEY, "INIT");
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ret = srd_dev_qp_modify(qp, &a, IBV_QP_STATE, "RTR");
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	/* Devices without the cap reject the attribute. */
	if (qp->dev->caps.rnr_retry) {
		a.rnr_retry = s->rnr_retry;
		mask |= IBV_QP_RNR_RETRY;
	}
	return srd_dev_qp_modify(qp, &a, mask, "RTS");
}

int srd_dev_qp_create(struct srd_dev *dev, const struct srd_settings *s,
		      const struct srd_dev_qp_attr *attr,
		      struct srd_dev_qp **qp_out)
{
	struct srd_dev_qp *qp;
	int ret;

	if (!attr->sq_depth || !attr->rq_depth || !attr->send_cq ||
	    !attr->recv_cq) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"QP needs non-zero depths and both CQs\n");
		return -FI_EINVAL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -FI_ENOMEM;
	qp->dev = dev;
	qp->qkey = srd_qkey_random();
	qp->send_ops_flags = srd_dev_qp_send_ops_flags(&dev->caps);

	ret = srd_dev_qp_create_ibv(qp, s, attr);
	if (ret)
		goto free_qp;
	ret = srd_dev_qp_to_rts(qp, s);
	if (ret)
		goto destroy_ibv_qp;
	qp->qpx = dev->verbs->qp_to_qp_ex(qp->ibv_qp);
	if (!qp->qpx) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"%s: QP has no extended send interface\n", dev->name);
		ret = -FI_ENOSYS;
		goto destroy_ibv_qp;
	}
	*qp_out = qp;
	return 0;

destroy_ibv_qp:
	dev->verbs->destroy_qp(qp->ibv_qp);
free_qp:
	free(qp);
	return ret;
}

void srd_dev_qp_destroy(struct srd_dev_qp *qp)
{
	if (!qp)
		return;
	qp->dev->verbs->destroy_qp(qp->ibv_qp);
	free(qp);
}

static const char *srd_dev_qp_state_str(enum ibv_qp_state st)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	if ((unsigned int)st < WEFT_ARRAY_SIZE(names) && names[st])
		return names[st];
	return "UNKNOWN";
}

int srd_dev_qp_describe(struct srd_dev_qp *qp, char *buf, size_t len)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&init, 0, sizeof(init));
	ret = qp->dev->verbs->query_qp(qp->ibv_qp, &a,
				       IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_CAP,
				       &init);
	if (ret) {
		ret = ret < 0 ? ret : -ret;
		snprintf(buf, len, "qpn %u: state unknown (query failed: %s)",
			 qp->ibv_qp->qp_num, strerror(-ret));
		return ret;
	}
	snprintf(buf, len, "qpn %u state %s qkey 0x%x sq %u rq %u%s",
		 qp->ibv_qp->qp_num, srd_dev_qp_state_str(a.qp_state), a.qkey,
		 a.cap.max_send_wr, a.cap.max_recv_wr,
		 qp->low_latency_sl ? " sl low-latency" : "");
	return 0;
}

int srd_dev_qp_post_rdma(struct srd_dev_qp *qp, uint64_t wr_id,
			 const struct srd_dev_rdma *r,
			 const struct srd_dev_dest *dest)
{
	struct ibv_qp_ex *qpx = qp->qpx;

	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	if (r->op == SRD_DEV_RDMA_READ)
		ibv_wr_rdma_read(qpx, r->rkey, r->raddr);
	else if (r->op == SRD_DEV_RDMA_WRITE)
		ibv_wr_rdma_write(qpx, r->rkey, r->raddr);
	else
		ibv_wr_rdma_write_imm(qpx, r->rkey, r->raddr, htobe32(r->imm));
	ibv_wr_set_sge(qpx, r->lkey, (uintptr_t)r->laddr, (uint32_t)r->len);
	ibv_wr_set_ud_addr(qpx, dest->ah, dest->qpn, dest->qkey);
	return ibv_wr_complete(qpx);
}

const char *srd_dev_rdma_op_str(enum srd_dev_rdma_op op)
{
	static const char *const names[] = { "read", "write", "write-imm" };

	return (size_t)op < WEFT_ARRAY_SIZE(names) ? names[op] : "unknown";
}

int srd_dev_qp_post_recv(struct srd_dev_qp *qp, uint32_t lkey, uint32_t len,
			 const struct srd_dev_recv *r, uint32_t n)
{
	struct ibv_recv_wr wr[SRD_DEV_RECV_BATCH], *bad;
	struct ibv_sge sge[SRD_DEV_RECV_BATCH];
	uint32_t i;

	if (!n || n > SRD_DEV_RECV_BATCH)
		return EINVAL;
	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)r[i].addr;
		sge[i].length = len;
		sge[i].lkey = lkey;
		wr[i].wr_id = r[i].wr_id;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibv_post_recv(qp->ibv_qp, wr, &bad);
}
