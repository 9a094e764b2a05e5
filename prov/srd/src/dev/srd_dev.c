/* SPDX-License-Identifier: MIT */
/*
 * One verbs device through a verbs table: find it, open it, read what it
 * can do, allocate the PD every endpoint of a domain shares. Every value
 * read here is an upper limit; objects are sized down later where the host
 * refuses (ENOMEM).
 */
#include "weft/compat.h"
#include "srd_dev.h"
#include "../../soft/softsrd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRD_PORT_NUM 1
#define SRD_GID_INDEX 0

/* rdma-core returns positive errno, -1 with errno set, or a negative errno
 * depending on the call; make it one -FI_E* value. */
static int srd_verbs_ret(int ret)
{
	if (ret == -1)
		ret = errno ? errno : EIO;
	return ret < 0 ? ret : -ret;
}

static int srd_query_failed(const char *what, const char *hint, int ret)
{
	ret = srd_verbs_ret(ret);
	FI_WARN(&srd_prov, FI_LOG_CORE, "%s: %s%s\n", what, strerror(-ret), hint);
	return ret;
}

static uint32_t srd_mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ?
	       128u << mtu : 0;
}

static void srd_caps_from_attr_ex(const struct ibv_device_attr_ex *a,
				  struct srd_dev_caps *caps)
{
	const struct ibv_device_attr *o = &a->orig_attr;

	caps->max_mr_size = o->max_mr_size;
	caps->vendor_id = o->vendor_id;
	caps->vendor_part_id = o->vendor_part_id;
	caps->max_qp = o->max_qp > 0 ? (uint32_t)o->max_qp : 0;
	caps->max_qp_wr = o->max_qp_wr > 0 ? (uint32_t)o->max_qp_wr : 0;
	caps->max_sge = o->max_sge > 0 ? (uint32_t)o->max_sge : 0;
	caps->max_cq = o->max_cq > 0 ? (uint32_t)o->max_cq : 0;
	caps->max_cqe = o->max_cqe > 0 ? (uint32_t)o->max_cqe : 0;
	caps->max_mr = o->max_mr > 0 ? (uint32_t)o->max_mr : 0;
	caps->max_pd = o->max_pd > 0 ? (uint32_t)o->max_pd : 0;
	caps->max_ah = o->max_ah > 0 ? (uint32_t)o->max_ah : 0;
	caps->phys_port_cnt = o->phys_port_cnt;
	caps->device_cap_flags_ex = a->device_cap_flags_ex;
	caps->odp_general_caps = a->odp_caps.general_caps;
	caps->odp_ud_caps = a->odp_caps.per_transport_caps.ud_odp_caps;
	caps->pci_atomic_fetch_add = a->pci_atomic_caps.fetch_add;
	caps->pci_atomic_swap = a->pci_atomic_caps.swap;
	caps->pci_atomic_compare_swap = a->pci_atomic_caps.compare_swap;
	caps->completion_timestamp_mask = a->completion_timestamp_mask;
	caps->cq_mod_max_count = a->cq_mod_caps.max_cq_count;
	caps->cq_mod_max_period = a->cq_mod_caps.max_cq_period;
}

static void srd_caps_from_efadv(const struct efadv_device_attr *e,
				struct srd_dev_caps *caps)
{
	caps->max_sq_wr = e->max_sq_wr;
	caps->max_rq_wr = e->max_rq_wr;
	caps->max_sq_sge = e->max_sq_sge;
	caps->max_rq_sge = e->max_rq_sge;
	caps->inline_buf_size = e->inline_buf_size;
	caps->efadv_caps = e->device_caps;
	caps->rdma_read = e->device_caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ;
	caps->rnr_retry = e->device_caps & EFADV_DEVICE_ATTR_CAPS_RNR_RETRY;
	caps->cq_with_sgid = e->device_caps & EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID;
	/* softsrd and newer rdma-core report RDMA write with the same bit;
	 * the rdma-core table hides it where this build cannot use it. */
	caps->rdma_write = e->device_caps & SRD_EFADV_CAPS_RDMA_WRITE;
#if WEFT_HAVE_CAPS_UNSOLICITED_WRITE_RECV
	caps->unsolicited_write_recv =
		e->device_caps & EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV;
#endif
	caps->max_rdma_size = (caps->rdma_read || caps->rdma_write) ?
			      e->max_rdma_size : 0;
}

static void srd_caps_from_port(const struct ibv_port_attr *p,
			       struct srd_dev_caps *caps)
{
	caps->port_state = p->state;
	caps->max_msg_sz = p->max_msg_sz;
	/* An SRD device takes one packet up to max_msg_sz (EFA: ~8 KiB, more
	 * than the IB MTU enum can say), so that is the MTU that counts. */
	caps->mtu = p->max_msg_sz ? p->max_msg_sz : srd_mtu_bytes(p->active_mtu);
}

int srd_dev_query_caps(const struct srd_verbs_ops *verbs,
		       struct ibv_context *ctx, struct srd_dev_caps *caps)
{
	struct ibv_device_attr_ex attr_ex;
	struct efadv_device_attr efa_attr;
	struct ibv_port_attr port_attr;
	int ret;

	memset(caps, 0, sizeof(*caps));
	memset(&attr_ex, 0, sizeof(attr_ex));
	ret = verbs->query_device_ex(ctx, NULL, &attr_ex);
	if (ret)
		return srd_query_failed("ibv_query_device_ex", "", ret);
	srd_caps_from_attr_ex(&attr_ex, caps);

	memset(&efa_attr, 0, sizeof(efa_attr));
	ret = verbs->efadv_query_device(ctx, &efa_attr, sizeof(efa_attr));
	if (ret)
		return srd_query_failed("efadv_query_device",
					" (not an SRD device?)", ret);
	srd_caps_from_efadv(&efa_attr, caps);

	memset(&port_attr, 0, sizeof(port_attr));
	caps->port_num = SRD_PORT_NUM;
	ret = verbs->query_port(ctx, SRD_PORT_NUM, &port_attr);
	if (ret)
		return srd_query_failed("ibv_query_port", "", ret);
	srd_caps_from_port(&port_attr, caps);

	ret = verbs->query_gid(ctx, SRD_PORT_NUM, SRD_GID_INDEX, &caps->gid);
	if (ret)
		return srd_query_failed("ibv_query_gid", "", ret);
	if (!caps->max_sq_wr || !caps->max_rq_wr || !caps->mtu) {
		FI_WARN(&srd_prov, FI_LOG_CORE,
			"device reports an empty queue or MTU (sq %u rq %u mtu %u)\n",
			caps->max_sq_wr, caps->max_rq_wr, caps->mtu);
		return -FI_ENODEV;
	}
	return 0;
}

static struct ibv_device *srd_dev_pick(const struct srd_verbs_ops *verbs,
				       struct ibv_device **list, int n,
				       const char *name)
{
	int i;

	if (!name || !*name)
		return n > 0 ? list[0] : NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(verbs->get_device_name(list[i]), name))
			return list[i];
	return NULL;
}

static struct ibv_context *srd_dev_ctx_open(const struct srd_verbs_ops *verbs,
					    const char *name, char *name_out,
					    size_t name_len)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	struct ibv_device *ibdev;
	int n = 0;

	list = verbs->get_device_list(&n);
	if (!list) {
		FI_INFO(&srd_prov, FI_LOG_CORE, "%s: no device list (%s)\n",
			verbs->name, strerror(errno));
		return NULL;
	}
	ibdev = srd_dev_pick(verbs, list, n, name);
	if (!ibdev) {
		FI_INFO(&srd_prov, FI_LOG_CORE, "%s: no device%s%s\n",
			verbs->name, name && *name ? " named " : "",
			name ? name : "");
		goto free_list;
	}
	snprintf(name_out, name_len, "%s", verbs->get_device_name(ibdev));
	ctx = verbs->open_device(ibdev);
	if (!ctx)
		FI_WARN(&srd_prov, FI_LOG_CORE, "%s: cannot open %s: %s\n",
			verbs->name, name_out, strerror(errno));
free_list:
	/* The list may go once the context is open: rdma-core keeps the device
	 * referenced by the context. */
	verbs->free_device_list(list);
	return ctx;
}

int srd_dev_open(const struct srd_verbs_ops *verbs, const char *name,
		 struct srd_dev **dev_out)
{
	struct srd_dev *dev;
	int ret;

	if (!verbs)
		return -FI_ENODEV;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -FI_ENOMEM;
	dev->verbs = verbs;
	pthread_mutex_init(&dev->ah_lock, NULL);

	dev->ctx = srd_dev_ctx_open(verbs, name, dev->name, sizeof(dev->name));
	if (!dev->ctx) {
		ret = -FI_ENODEV;
		goto free_dev;
	}
	ret = srd_dev_query_caps(verbs, dev->ctx, &dev->caps);
	if (ret)
		goto close_ctx;

	dev->pd = verbs->alloc_pd(dev->ctx);
	if (!dev->pd) {
		FI_WARN(&srd_prov, FI_LOG_CORE, "%s: ibv_alloc_pd: %s\n",
			dev->name, strerror(errno));
		ret = -FI_ENOMEM;
		goto close_ctx;
	}
	*dev_out = dev;
	return 0;

close_ctx:
	verbs->close_device(dev->ctx);
free_dev:
	pthread_mutex_destroy(&dev->ah_lock);
	free(dev);
	return ret;
}

void srd_dev_close(struct srd_dev *dev)
{
	struct srd_dev_ah *ah, *tmp;

	if (!dev)
		return;
	/* AHs still held are a caller bug; free them so the PD can go. */
	HASH_ITER(hh, dev->ah_by_gid, ah, tmp) {
		FI_WARN(&srd_prov, FI_LOG_CORE,
			"%s: address handle still referenced at close\n",
			dev->name);
		HASH_DEL(dev->ah_by_gid, ah);
		dev->verbs->destroy_ah(ah->ibv_ah);
		free(ah);
	}
	srd_dev_inorder_free(dev);
	dev->verbs->dealloc_pd(dev->pd);
	dev->verbs->close_device(dev->ctx);
	pthread_mutex_destroy(&dev->ah_lock);
	free(dev);
}

struct ibv_mr *srd_dev_reg_mr(struct srd_dev *dev, void *buf, size_t len,
			      int access)
{
	struct ibv_mr *mr = dev->verbs->reg_mr(dev->pd, buf, len, access);

	if (!mr && !errno)
		errno = EIO;
	return mr;
}

void srd_dev_dereg_mr(struct srd_dev *dev, struct ibv_mr *mr)
{
	if (mr)
		dev->verbs->dereg_mr(mr);
}

/* Which table a device setting means. auto never picks softsrd: a software
 * device must not stand in silently for missing hardware (fi_srd(7)). */
const struct srd_verbs_ops *srd_dev_verbs_select(enum srd_device_sel sel)
{
	switch (sel) {
	case SRD_DEVICE_AUTO:
	case SRD_DEVICE_EFA:
		return srd_dev_verbs_rdma_ops();
	case SRD_DEVICE_SOFT:
		return &softsrd_verbs_ops;
	default:
		return NULL;
	}
}

void srd_dev_soft_init(struct fi_provider *prov)
{
	softsrd_init(prov);
}
