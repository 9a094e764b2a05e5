/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_ep.h"
#include "weft/util_domain.h"
#include "weft/util_av.h"
#include "weft/util_eq.h"
#include "weft/util_atomic.h"
#include <string.h>

#define UTIL_EP_MIN_MULTI_RECV_DEFAULT 64

static const uint64_t util_cntr_slot_flag[UTIL_CNTR_MAX] = {
	[UTIL_CNTR_SEND] = FI_SEND,
	[UTIL_CNTR_RECV] = FI_RECV,
	[UTIL_CNTR_READ] = FI_READ,
	[UTIL_CNTR_WRITE] = FI_WRITE,
	[UTIL_CNTR_REMOTE_READ] = FI_REMOTE_READ,
	[UTIL_CNTR_REMOTE_WRITE] = FI_REMOTE_WRITE,
};

int util_ep_init(struct util_ep *ep, struct util_domain *domain,
		 const struct fi_info *info, util_progress_fn progress,
		 void *context)
{
	int ret;

	if (!domain || !info || !info->ep_attr || !info->tx_attr ||
	    !info->rx_attr) {
		FI_WARN(util_domain_prov(domain), FI_LOG_EP_CTRL,
			"ep init: needs a domain and info with ep/tx/rx attrs\n");
		return -FI_EINVAL;
	}
	memset(ep, 0, sizeof(*ep));
	ret = util_lock_init(&ep->lock, domain->thread_safe);
	if (ret)
		return ret;
	ret = util_progress_add(&domain->eps, ep);
	if (ret) {
		util_lock_fini(&ep->lock);
		return ret;
	}
	ep->domain = domain;
	ep->type = info->ep_attr->type;
	ep->caps = info->caps;
	ep->tx_op_flags = util_ep_user_flags(info->tx_attr->op_flags);
	ep->rx_op_flags = util_ep_user_flags(info->rx_attr->op_flags);
	ep->msg_order = info->tx_attr->msg_order;
	ep->inject_size = info->tx_attr->inject_size;
	ep->progress = progress;
	ep->min_multi_recv = UTIL_EP_MIN_MULTI_RECV_DEFAULT;

	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = UTIL_OPS(&util_no_fi_ops);
	ep->ep_fid.ops = UTIL_OPS(&util_no_ep_ops);
	ep->ep_fid.cm = UTIL_OPS(&util_no_cm_ops);
	ep->ep_fid.msg = UTIL_OPS(&util_no_msg_ops);
	ep->ep_fid.rma = UTIL_OPS(&util_no_rma_ops);
	ep->ep_fid.tagged = UTIL_OPS(&util_no_tagged_ops);
	ep->ep_fid.atomic = UTIL_OPS(&util_no_atomic_ops);
	ep->ep_fid.collective = UTIL_OPS(&util_no_collective_ops);
	util_domain_ref(domain);
	return 0;
}

static void util_ep_unbind_cq(struct util_ep *ep, struct util_cq *cq)
{
	util_progress_del(&cq->progress, ep);
	atomic_fetch_sub(&cq->ref, 1);
}

int util_ep_fini(struct util_ep *ep)
{
	int i;

	if (ep->tx_cq)
		util_ep_unbind_cq(ep, ep->tx_cq);
	if (ep->rx_cq)
		util_ep_unbind_cq(ep, ep->rx_cq);
	ep->tx_cq = ep->rx_cq = NULL;
	for (i = 0; i < UTIL_CNTR_MAX; i++) {
		if (!ep->cntrs[i])
			continue;
		util_progress_del(&ep->cntrs[i]->progress, ep);
		atomic_fetch_sub(&ep->cntrs[i]->ref, 1);
		ep->cntrs[i] = NULL;
	}
	if (ep->av)
		atomic_fetch_sub(&ep->av->ref, 1);
	if (ep->eq)
		atomic_fetch_sub(&ep->eq->ref, 1);
	ep->av = NULL;
	ep->eq = NULL;
	util_progress_del(&ep->domain->eps, ep);
	util_lock_fini(&ep->lock);
	util_domain_unref(ep->domain);
	return 0;
}

ssize_t util_ep_null_msg(const struct util_ep *ep, const char *call)
{
	FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_DATA,
		"%s: msg is NULL\n", call);
	return -FI_EINVAL;
}

/* ---- bind ---- */

static int util_ep_bind_cq_dir(struct util_ep *ep, struct util_cq *cq,
			       struct util_cq **slot, bool *selective,
			       bool sel)
{
	int ret = util_progress_add(&cq->progress, ep);

	if (ret)
		return ret;
	atomic_fetch_add(&cq->ref, 1);
	*slot = cq;
	*selective = sel;
	return 0;
}

static int util_ep_bind_cq(struct util_ep *ep, struct util_cq *cq,
			   uint64_t flags)
{
	const uint64_t valid = FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION;
	bool sel = flags & FI_SELECTIVE_COMPLETION;
	int ret;

	if ((flags & ~valid) || !(flags & (FI_TRANSMIT | FI_RECV))) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep bind cq: flags 0x%llx (need FI_TRANSMIT and/or FI_RECV, optional FI_SELECTIVE_COMPLETION)\n",
			(unsigned long long)flags);
		return -FI_EINVAL;
	}
	if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
	    ((flags & FI_RECV) && ep->rx_cq)) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep bind cq: a CQ is already bound for this direction\n");
		return -FI_EINVAL;
	}
	if (flags & FI_TRANSMIT) {
		ret = util_ep_bind_cq_dir(ep, cq, &ep->tx_cq,
					  &ep->tx_selective, sel);
		if (ret)
			return ret;
	}
	if (flags & FI_RECV) {
		ret = util_ep_bind_cq_dir(ep, cq, &ep->rx_cq,
					  &ep->rx_selective, sel);
		if (ret && (flags & FI_TRANSMIT)) {
			util_ep_unbind_cq(ep, cq);
			ep->tx_cq = NULL;
		}
		return ret;
	}
	return 0;
}

static int util_ep_bind_cntr(struct util_ep *ep, struct util_cntr *cntr,
			     uint64_t flags)
{
	uint64_t valid = 0;
	int i, ret;

	for (i = 0; i < UTIL_CNTR_MAX; i++)
		valid |= util_cntr_slot_flag[i];
	if (!flags || (flags & ~valid)) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep bind cntr: bad flags 0x%llx\n",
			(unsigned long long)flags);
		return -FI_EINVAL;
	}
	for (i = 0; i < UTIL_CNTR_MAX; i++) {
		if ((flags & util_cntr_slot_flag[i]) && ep->cntrs[i]) {
			FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
				"ep bind cntr: a counter is already bound for 0x%llx\n",
				(unsigned long long)util_cntr_slot_flag[i]);
			return -FI_EINVAL;
		}
	}
	for (i = 0; i < UTIL_CNTR_MAX; i++) {
		if (!(flags & util_cntr_slot_flag[i]))
			continue;
		ret = util_progress_add(&cntr->progress, ep);
		if (ret)
			return ret;
		atomic_fetch_add(&cntr->ref, 1);
		ep->cntrs[i] = cntr;
	}
	return 0;
}

static int util_ep_bind_av(struct util_ep *ep, struct util_av *av)
{
	if (ep->av) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep bind av: an AV is already bound\n");
		return -FI_EINVAL;
	}
	ep->av = av;
	atomic_fetch_add(&av->ref, 1);
	return 0;
}

static int util_ep_bind_eq(struct util_ep *ep, struct util_eq *eq)
{
	if (ep->eq) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep bind eq: an EQ is already bound\n");
		return -FI_EINVAL;
	}
	ep->eq = eq;
	atomic_fetch_add(&eq->ref, 1);
	return 0;
}

static struct util_domain *util_ep_bfid_domain(struct fid *bfid)
{
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		return container_of(bfid, struct util_cq, cq_fid.fid)->domain;
	case FI_CLASS_CNTR:
		return container_of(bfid, struct util_cntr, cntr_fid.fid)->domain;
	case FI_CLASS_AV:
		return container_of(bfid, struct util_av, av_fid.fid)->domain;
	default:
		return NULL;
	}
}

int util_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct util_ep *ep = container_of(fid, struct util_ep, ep_fid.fid);
	struct util_domain *domain;

	if (!bfid) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep bind: NULL fid\n");
		return -FI_EINVAL;
	}
	domain = util_ep_bfid_domain(bfid);
	if (domain && domain != ep->domain) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep bind: object belongs to another domain\n");
		return -FI_EINVAL;
	}
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		return util_ep_bind_cq(ep, container_of(bfid, struct util_cq,
							cq_fid.fid), flags);
	case FI_CLASS_CNTR:
		return util_ep_bind_cntr(ep, container_of(bfid, struct util_cntr,
							  cntr_fid.fid), flags);
	case FI_CLASS_AV:
		return util_ep_bind_av(ep, container_of(bfid, struct util_av,
							av_fid.fid));
	case FI_CLASS_EQ:
		return util_ep_bind_eq(ep, container_of(bfid, struct util_eq,
							eq_fid.fid));
	default:
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep bind: cannot bind fid class %zu\n", bfid->fclass);
		return -FI_EINVAL;
	}
}

/* ---- control ---- */

static int util_ep_enable(struct util_ep *ep)
{
	bool any_cntr = false;
	int i, ret;

	if (ep->enabled)
		return 0;
	if ((ep->type == FI_EP_RDM || ep->type == FI_EP_DGRAM) && !ep->av) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep enable: no AV bound\n");
		return -FI_ENOAV;
	}
	for (i = 0; i < UTIL_CNTR_MAX; i++)
		any_cntr |= ep->cntrs[i] != NULL;
	if (!ep->tx_cq && !ep->rx_cq && !any_cntr) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep enable: no CQ or counter bound\n");
		return -FI_ENOCQ;
	}
	if (ep->enable) {
		ret = ep->enable(ep);
		if (ret)
			return ret;
	}
	ep->enabled = true;
	return 0;
}

static int util_ep_opsflag(struct util_ep *ep, uint64_t *arg, bool set)
{
	uint64_t *target;

	if (!arg) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep control: NULL flags\n");
		return -FI_EINVAL;
	}
	switch (*arg & (FI_TRANSMIT | FI_RECV)) {
	case FI_TRANSMIT:
		target = &ep->tx_op_flags;
		break;
	case FI_RECV:
		target = &ep->rx_op_flags;
		break;
	default:
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"ep control: ops flags need exactly one of FI_TRANSMIT, FI_RECV\n");
		return -FI_EINVAL;
	}
	if (set)
		*target = util_ep_user_flags(*arg) &
			  ~(uint64_t)(FI_TRANSMIT | FI_RECV);
	else
		*arg = *target;
	return 0;
}

int util_ep_control(struct fid *fid, int command, void *arg)
{
	struct util_ep *ep = container_of(fid, struct util_ep, ep_fid.fid);

	switch (command) {
	case FI_ENABLE:
		return util_ep_enable(ep);
	case FI_GETOPSFLAG:
		return util_ep_opsflag(ep, arg, false);
	case FI_SETOPSFLAG:
		return util_ep_opsflag(ep, arg, true);
	default:
		return -FI_ENOSYS;
	}
}

int util_ep_getopt(fid_t fid, int level, int optname, void *optval,
		   size_t *optlen)
{
	struct util_ep *ep = container_of(fid, struct util_ep, ep_fid.fid);

	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_MIN_MULTI_RECV)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen || *optlen < sizeof(size_t)) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"getopt: FI_OPT_MIN_MULTI_RECV needs a size_t\n");
		return -FI_EINVAL;
	}
	*(size_t *)optval = ep->min_multi_recv;
	*optlen = sizeof(size_t);
	return 0;
}

int util_ep_setopt(fid_t fid, int level, int optname, const void *optval,
		   size_t optlen)
{
	struct util_ep *ep = container_of(fid, struct util_ep, ep_fid.fid);

	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_MIN_MULTI_RECV)
		return -FI_ENOPROTOOPT;
	if (!optval || optlen != sizeof(size_t)) {
		FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_CTRL,
			"setopt: FI_OPT_MIN_MULTI_RECV needs a size_t\n");
		return -FI_EINVAL;
	}
	ep->min_multi_recv = *(const size_t *)optval;
	return 0;
}

/* ---- error completions ---- */

int util_ep_tx_err(struct util_ep *ep, void *context, uint64_t flags,
		   int err, int prov_errno, size_t len, size_t olen)
{
	struct fi_cq_err_entry entry = {
		.op_context = context,
		.flags = flags,
		.len = len,
		.olen = olen,
		.err = err,
		.prov_errno = prov_errno,
	};

	return ep->tx_cq ? util_cq_write_err(ep->tx_cq, &entry,
					     FI_ADDR_NOTAVAIL) : 0;
}

int util_ep_rx_err(struct util_ep *ep, void *context, uint64_t flags,
		   int err, int prov_errno, void *buf, size_t len, size_t olen,
		   uint64_t data, uint64_t tag, fi_addr_t src)
{
	struct fi_cq_err_entry entry = {
		.op_context = context,
		.flags = flags,
		.len = len,
		.buf = buf,
		.data = data,
		.tag = tag,
		.olen = olen,
		.err = err,
		.prov_errno = prov_errno,
	};

	return ep->rx_cq ? util_cq_write_err(ep->rx_cq, &entry, src) : 0;
}

/* ---- fi_atomicvalid ---- */

static int util_ep_atomic_valid(struct fid_ep *ep_fid, enum fi_datatype dt,
				enum fi_op op, size_t *count, uint64_t flags)
{
	struct util_ep *ep = to_util_ep(ep_fid);
	struct fi_atomic_attr attr;
	int ret;

	if (!ep->domain->atomic_max_bytes)
		return -FI_EOPNOTSUPP;
	ret = util_atomic_query(dt, op, &attr, flags,
				ep->domain->atomic_max_bytes);
	if (ret)
		return ret;
	if (count)
		*count = attr.count;
	return 0;
}

int util_ep_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype,
			      enum fi_op op, size_t *count)
{
	return util_ep_atomic_valid(ep, datatype, op, count, 0);
}

int util_ep_atomic_readwritevalid(struct fid_ep *ep,
				  enum fi_datatype datatype, enum fi_op op,
				  size_t *count)
{
	return util_ep_atomic_valid(ep, datatype, op, count, FI_FETCH_ATOMIC);
}

int util_ep_atomic_compwritevalid(struct fid_ep *ep,
				  enum fi_datatype datatype, enum fi_op op,
				  size_t *count)
{
	return util_ep_atomic_valid(ep, datatype, op, count,
				    FI_COMPARE_ATOMIC);
}
