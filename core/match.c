/* SPDX-License-Identifier: MIT */
/*
 * weft_info_match: can one provider info serve the application's hints,
 * and if so, narrow it to what was asked. Rules follow fi_getinfo(3):
 * non-zero hints must be met, zero hints are wildcards, except mode bits,
 * where zero means "the application supports no mode".
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "core_priv.h"

#define PRIMARY_CAPS (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_MULTICAST | \
		      FI_NAMED_RX_CTX | FI_DIRECTED_RECV | FI_VARIABLE_MSG | \
		      FI_HMEM | FI_COLLECTIVE | FI_XPU_TRIGGER)
#define MODIFIER_CAPS (FI_READ | FI_WRITE | FI_RECV | FI_SEND | \
		       FI_REMOTE_READ | FI_REMOTE_WRITE)
#define SECONDARY_CAPS (FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | \
			FI_SHARED_AV | FI_TRIGGER | FI_FENCE | FI_LOCAL_COMM | \
			FI_REMOTE_COMM | FI_SOURCE_ERR | FI_RMA_PMEM | \
			FI_REMOTE_CQ_DATA | FI_AV_USER_ID | FI_PEER)
/* fi_endpoint(3): the capabilities that apply to transmit and to receive
 * attributes. Domain-wide bits (FI_LOCAL_COMM, FI_REMOTE_COMM,
 * FI_SHARED_AV) and the other direction's bits have no place there. */
#define TX_ATTR_CAPS (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_READ | \
		      FI_WRITE | FI_SEND | FI_HMEM | FI_TRIGGER | FI_FENCE | \
		      FI_MULTICAST | FI_RMA_PMEM | FI_NAMED_RX_CTX | \
		      FI_COLLECTIVE | FI_XPU_TRIGGER)
#define RX_ATTR_CAPS (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
		      FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RECV | FI_HMEM | \
		      FI_TRIGGER | FI_RMA_PMEM | FI_DIRECTED_RECV | \
		      FI_VARIABLE_MSG | FI_MULTI_RECV | FI_SOURCE | \
		      FI_RMA_EVENT | FI_SOURCE_ERR | FI_COLLECTIVE | \
		      FI_XPU_TRIGGER)

/* FI_MR_BASIC as a set of modern bits. */
#define MR_BASIC_MAP (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)
#define MR_RMA_TARGET (FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | \
		       FI_MR_RMA_EVENT)

uint64_t weft_caps_known(void)
{
	return PRIMARY_CAPS | MODIFIER_CAPS | SECONDARY_CAPS;
}

/* Logs why an info does not serve the hints; always returns 0. */
static int info_mismatch(const struct fi_info *info, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int info_mismatch(const struct fi_info *info, const char *fmt, ...)
{
	char reason[256];
	va_list args;

	if (!fi_log_enabled(&weft_core_prov, FI_LOG_INFO, FI_LOG_CORE))
		return 0;
	va_start(args, fmt);
	vsnprintf(reason, sizeof(reason), fmt, args);
	va_end(args);
	FI_INFO(&weft_core_prov, FI_LOG_CORE, "%s: %s",
		info->fabric_attr && info->fabric_attr->prov_name ?
		info->fabric_attr->prov_name : "provider", reason);
	return 0;
}

#define MISMATCH(info, ...) return info_mismatch(info, __VA_ARGS__)

/* Ranked from most to least capable: a provider serves a request when
 * its rank is at least as good as the one asked. */
static int rank_threading(enum fi_threading t)
{
	switch (t) {
	case FI_THREAD_SAFE: return 1;
	case FI_THREAD_FID: return 2;
	case FI_THREAD_ENDPOINT: return 3;
	case FI_THREAD_COMPLETION: return 4;
	case FI_THREAD_DOMAIN: return 5;
	case FI_THREAD_UNSPEC: return 6;
	}
	return -1;
}

static int rank_progress(enum fi_progress p)
{
	switch (p) {
	case FI_PROGRESS_AUTO: return 1;
	case FI_PROGRESS_MANUAL: return 2;
	case FI_PROGRESS_UNSPEC: return 3;
	}
	return -1;
}

static int rank_rm(enum fi_resource_mgmt rm)
{
	switch (rm) {
	case FI_RM_ENABLED: return 1;
	case FI_RM_DISABLED: return 2;
	case FI_RM_UNSPEC: return 3;
	}
	return -1;
}

static int addr_format_ok(uint32_t prov, uint32_t user)
{
	if (user == FI_FORMAT_UNSPEC || user == prov)
		return 1;
	/* A generic sockaddr covers its specific families. */
	return user == FI_SOCKADDR &&
	       (prov == FI_SOCKADDR_IN || prov == FI_SOCKADDR_IN6 ||
		prov == FI_SOCKADDR_IB);
}

static int rma_target_allowed(uint64_t caps)
{
	if (!(caps & (FI_RMA | FI_ATOMIC)))
		return 0;
	if (!(caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return 1;
	return !!(caps & (FI_REMOTE_READ | FI_REMOTE_WRITE));
}

/* The provider's mr_mode that matters for these caps: key and address
 * bits only bind an application that is an RMA target. */
static int mr_mode_for_caps(uint64_t caps, int prov_mode)
{
	prov_mode &= ~(FI_MR_BASIC | FI_MR_SCALABLE);
	if (rma_target_allowed(caps))
		return prov_mode;
	/* Without local registration nothing else in mr_mode applies. */
	if (!(prov_mode & (FI_MR_LOCAL | FI_MR_HMEM)))
		return 0;
	return prov_mode & ~MR_RMA_TARGET;
}

static int mr_basic_ok(int prov_mode)
{
	return (prov_mode & FI_MR_BASIC) ||
	       !(prov_mode & ~(MR_BASIC_MAP | FI_MR_LOCAL | FI_MR_SCALABLE));
}

static int mr_scalable_ok(int prov_mode)
{
	return (prov_mode & FI_MR_SCALABLE) ||
	       !(prov_mode & ~(FI_MR_LOCAL | FI_MR_BASIC));
}

/* Returns the mr_mode to report, or -1 on mismatch. */
static int mr_mode_match(uint32_t version, const struct fi_info *hints,
			 uint64_t caps, int prov_mode)
{
	int user = hints->domain_attr->mr_mode;
	int need;

	if (FI_VERSION_LT(version, FI_VERSION(1, 5)) ||
	    user == FI_MR_BASIC || user == FI_MR_SCALABLE) {
		if (user & FI_MR_LOCAL)
			user &= ~FI_MR_LOCAL;
		if ((prov_mode & FI_MR_LOCAL) && !(hints->mode & FI_LOCAL_MR) &&
		    !(hints->domain_attr->mr_mode & FI_MR_LOCAL))
			return -1;
		switch (user) {
		case FI_MR_UNSPEC:
			if (mr_basic_ok(prov_mode))
				return FI_MR_BASIC;
			return mr_scalable_ok(prov_mode) ? FI_MR_SCALABLE : -1;
		case FI_MR_BASIC:
			return mr_basic_ok(prov_mode) ? FI_MR_BASIC : -1;
		case FI_MR_SCALABLE:
			return mr_scalable_ok(prov_mode) ? FI_MR_SCALABLE : -1;
		default:
			return -1;
		}
	}
	if (user & (FI_MR_BASIC | FI_MR_SCALABLE))
		return -1;	/* old bits mixed with new ones */
	if (hints->mode & FI_LOCAL_MR)
		user |= FI_MR_LOCAL;
	need = mr_mode_for_caps(caps, prov_mode);
	return (user & need) == need ? need : -1;
}

static int caps_match(const struct fi_info *hints, const struct fi_info *info)
{
	if (hints->caps & ~info->caps)
		MISMATCH(info, "caps 0x%llx not offered\n",
			 (unsigned long long)(hints->caps & ~info->caps));
	/* Mode bits the provider needs must be ones the app supports. */
	if (info->mode & ~hints->mode & ~FI_LOCAL_MR)
		MISMATCH(info, "needs mode 0x%llx the application lacks\n",
			 (unsigned long long)(info->mode & ~hints->mode));
	if ((info->mode & FI_LOCAL_MR) && !(hints->mode & FI_LOCAL_MR) &&
	    !(hints->domain_attr && (hints->domain_attr->mr_mode & FI_MR_LOCAL)))
		MISMATCH(info, "needs FI_LOCAL_MR\n");
	if (!addr_format_ok(info->addr_format, hints->addr_format))
		MISMATCH(info, "addr_format %u, asked %u\n", info->addr_format,
			 hints->addr_format);
	return 1;
}

static int fabric_match(const struct fi_fabric_attr *user,
			const struct fi_info *info)
{
	const struct fi_fabric_attr *prov = info->fabric_attr;

	if (!user || !prov)
		return 1;
	if (user->name && (!prov->name || strcmp(user->name, prov->name)))
		MISMATCH(info, "fabric %s, asked %s\n",
			 prov->name ? prov->name : "(none)", user->name);
	if (user->prov_version && user->prov_version > prov->prov_version &&
	    prov->prov_version)
		MISMATCH(info, "provider version too old\n");
	return 1;
}

#define CHECK_MAX(info, user, prov, field)				\
	do {								\
		if ((user)->field > (prov)->field)			\
			MISMATCH(info, #field " %zu, asked %zu\n",	\
				 (size_t)(prov)->field, (size_t)(user)->field); \
	} while (0)

#define CHECK_BITS(info, user, prov, field)				\
	do {								\
		if ((user)->field & ~(prov)->field)			\
			MISMATCH(info, #field " 0x%llx not offered\n",	\
				 (unsigned long long)((user)->field & ~(prov)->field)); \
	} while (0)

static int domain_match(uint32_t version, const struct fi_info *hints,
			const struct fi_info *info)
{
	const struct fi_domain_attr *user = hints->domain_attr;
	const struct fi_domain_attr *prov = info->domain_attr;
	uint64_t caps = hints->caps ? hints->caps : info->caps;

	if (!user || !prov)
		return 1;
	if (user->name && (!prov->name || strcmp(user->name, prov->name)))
		MISMATCH(info, "domain %s, asked %s\n",
			 prov->name ? prov->name : "(none)", user->name);
	if (rank_threading(user->threading) < 0 ||
	    rank_threading(user->threading) < rank_threading(prov->threading))
		MISMATCH(info, "threading %d, asked %d\n", prov->threading,
			 user->threading);
	if (rank_progress(user->control_progress) < 0 ||
	    rank_progress(user->control_progress) < rank_progress(prov->control_progress))
		MISMATCH(info, "control progress %d, asked %d\n",
			 prov->control_progress, user->control_progress);
	if (rank_progress(user->data_progress) < 0 ||
	    rank_progress(user->data_progress) < rank_progress(prov->data_progress))
		MISMATCH(info, "data progress %d, asked %d\n",
			 prov->data_progress, user->data_progress);
	if (rank_rm(user->resource_mgmt) < 0 ||
	    rank_rm(user->resource_mgmt) < rank_rm(prov->resource_mgmt))
		MISMATCH(info, "resource_mgmt %d, asked %d\n",
			 prov->resource_mgmt, user->resource_mgmt);
	if (user->av_type != FI_AV_UNSPEC && prov->av_type != FI_AV_UNSPEC &&
	    user->av_type != prov->av_type)
		MISMATCH(info, "av_type %d, asked %d\n", prov->av_type,
			 user->av_type);
	if (user->av_type > FI_AV_TABLE)
		MISMATCH(info, "unknown av_type %d\n", user->av_type);
	if (mr_mode_match(version, hints, caps, prov->mr_mode) < 0)
		MISMATCH(info, "mr_mode 0x%x, application supports 0x%x\n",
			 prov->mr_mode, user->mr_mode);
	if (prov->mode & ~user->mode)
		MISMATCH(info, "needs domain mode 0x%llx\n",
			 (unsigned long long)(prov->mode & ~user->mode));
	CHECK_BITS(info, user, prov, caps);
	CHECK_MAX(info, user, prov, mr_key_size);
	CHECK_MAX(info, user, prov, cq_data_size);
	CHECK_MAX(info, user, prov, cq_cnt);
	CHECK_MAX(info, user, prov, ep_cnt);
	CHECK_MAX(info, user, prov, tx_ctx_cnt);
	CHECK_MAX(info, user, prov, rx_ctx_cnt);
	CHECK_MAX(info, user, prov, max_ep_tx_ctx);
	CHECK_MAX(info, user, prov, max_ep_rx_ctx);
	CHECK_MAX(info, user, prov, max_ep_stx_ctx);
	CHECK_MAX(info, user, prov, max_ep_srx_ctx);
	CHECK_MAX(info, user, prov, cntr_cnt);
	CHECK_MAX(info, user, prov, mr_iov_limit);
	CHECK_MAX(info, user, prov, max_err_data);
	CHECK_MAX(info, user, prov, mr_cnt);
	return 1;
}

static int ep_match(const struct fi_ep_attr *user, const struct fi_info *info)
{
	const struct fi_ep_attr *prov = info->ep_attr;

	if (!user || !prov)
		return 1;
	if (user->type != FI_EP_UNSPEC && user->type != prov->type)
		MISMATCH(info, "ep_type %d, asked %d\n", prov->type, user->type);
	if (user->protocol != FI_PROTO_UNSPEC && user->protocol != prov->protocol)
		MISMATCH(info, "protocol %u, asked %u\n", prov->protocol,
			 user->protocol);
	CHECK_MAX(info, user, prov, protocol_version);
	CHECK_MAX(info, user, prov, max_msg_size);
	CHECK_MAX(info, user, prov, max_order_raw_size);
	CHECK_MAX(info, user, prov, max_order_war_size);
	CHECK_MAX(info, user, prov, max_order_waw_size);
	/* Tag bits the app wants to use must all exist at the provider. */
	if (user->mem_tag_format && prov->mem_tag_format &&
	    (user->mem_tag_format & ~prov->mem_tag_format))
		MISMATCH(info, "tag format 0x%llx, asked 0x%llx\n",
			 (unsigned long long)prov->mem_tag_format,
			 (unsigned long long)user->mem_tag_format);
	/* fi_endpoint(3): FI_SHARED_CONTEXT asks for fi_stx_context /
	 * fi_srx_context; a provider offers them through max_ep_stx_ctx /
	 * max_ep_srx_ctx, and without them they would fail only later. */
	if (user->tx_ctx_cnt == FI_SHARED_CONTEXT) {
		if (!info->domain_attr || !info->domain_attr->max_ep_stx_ctx)
			MISMATCH(info, "shared transmit contexts not offered\n");
	} else {
		CHECK_MAX(info, user, prov, tx_ctx_cnt);
	}
	if (user->rx_ctx_cnt == FI_SHARED_CONTEXT) {
		if (!info->domain_attr || !info->domain_attr->max_ep_srx_ctx)
			MISMATCH(info, "shared receive contexts not offered\n");
	} else {
		CHECK_MAX(info, user, prov, rx_ctx_cnt);
	}
	return 1;
}

static int tx_match(const struct fi_info *hints, const struct fi_info *info)
{
	const struct fi_tx_attr *user = hints->tx_attr;
	const struct fi_tx_attr *prov = info->tx_attr;
	uint64_t user_mode;

	if (!user || !prov)
		return 1;
	user_mode = user->mode ? user->mode : hints->mode;
	if (prov->mode & ~user_mode & ~FI_LOCAL_MR)
		MISMATCH(info, "needs tx mode 0x%llx\n",
			 (unsigned long long)(prov->mode & ~user_mode));
	/* Bits that do not apply to transmit are ignored, as libfabric
	 * does: applications copy info->caps into tx_attr->caps. */
	if (user->caps & TX_ATTR_CAPS & ~prov->caps)
		MISMATCH(info, "tx caps 0x%llx not offered\n",
			 (unsigned long long)(user->caps & TX_ATTR_CAPS &
					      ~prov->caps));
	CHECK_BITS(info, user, prov, msg_order);
	CHECK_BITS(info, user, prov, comp_order);
	CHECK_MAX(info, user, prov, inject_size);
	CHECK_MAX(info, user, prov, size);
	CHECK_MAX(info, user, prov, iov_limit);
	CHECK_MAX(info, user, prov, rma_iov_limit);
	if (user->tclass && prov->tclass && user->tclass != prov->tclass)
		MISMATCH(info, "tclass 0x%x, asked 0x%x\n", prov->tclass,
			 user->tclass);
	return 1;
}

static int rx_match(const struct fi_info *hints, const struct fi_info *info)
{
	const struct fi_rx_attr *user = hints->rx_attr;
	const struct fi_rx_attr *prov = info->rx_attr;
	uint64_t user_mode;

	if (!user || !prov)
		return 1;
	user_mode = user->mode ? user->mode : hints->mode;
	if (prov->mode & ~user_mode & ~FI_LOCAL_MR)
		MISMATCH(info, "needs rx mode 0x%llx\n",
			 (unsigned long long)(prov->mode & ~user_mode));
	if (user->caps & RX_ATTR_CAPS & ~prov->caps)
		MISMATCH(info, "rx caps 0x%llx not offered\n",
			 (unsigned long long)(user->caps & RX_ATTR_CAPS &
					      ~prov->caps));
	CHECK_BITS(info, user, prov, msg_order);
	CHECK_BITS(info, user, prov, comp_order);
	CHECK_MAX(info, user, prov, total_buffered_recv);
	CHECK_MAX(info, user, prov, size);
	CHECK_MAX(info, user, prov, iov_limit);
	return 1;
}

static int info_check(uint32_t version, const struct fi_info *hints,
		      const struct fi_info *info)
{
	return caps_match(hints, info) &&
	       fabric_match(hints->fabric_attr, info) &&
	       domain_match(version, hints, info) &&
	       ep_match(hints->ep_attr, info) &&
	       tx_match(hints, info) &&
	       rx_match(hints, info);
}

/* What was asked, the modifiers that go with it when none were named,
 * and the secondary caps the provider has anyway. */
static uint64_t narrow_caps(uint64_t user, uint64_t prov)
{
	uint64_t caps;

	if (!user)
		return prov;
	caps = user | (prov & SECONDARY_CAPS);
	if (!(user & MODIFIER_CAPS)) {
		if (user & (FI_MSG | FI_TAGGED | FI_COLLECTIVE | FI_MULTICAST))
			caps |= prov & (FI_SEND | FI_RECV);
		if (user & (FI_RMA | FI_ATOMIC))
			caps |= prov & (FI_READ | FI_WRITE | FI_REMOTE_READ |
					FI_REMOTE_WRITE);
	}
	return caps;
}

static void narrow_domain(uint32_t version, const struct fi_info *hints,
			  struct fi_info *info)
{
	const struct fi_domain_attr *user = hints->domain_attr;
	struct fi_domain_attr *attr = info->domain_attr;
	int mr_mode;

	if (!attr || !user)
		return;
	if (user->threading != FI_THREAD_UNSPEC)
		attr->threading = user->threading;
	if (user->control_progress != FI_PROGRESS_UNSPEC)
		attr->control_progress = user->control_progress;
	if (user->data_progress != FI_PROGRESS_UNSPEC)
		attr->data_progress = user->data_progress;
	if (user->resource_mgmt != FI_RM_UNSPEC)
		attr->resource_mgmt = user->resource_mgmt;
	if (user->av_type != FI_AV_UNSPEC)
		attr->av_type = user->av_type;
	mr_mode = mr_mode_match(version, hints, info->caps, attr->mr_mode);
	if (mr_mode >= 0)
		attr->mr_mode = mr_mode;
	attr->caps = user->caps ? (user->caps | (attr->caps & SECONDARY_CAPS)) :
		     attr->caps;
	attr->mode &= user->mode;
}

/* Modes the provider requires (the app offered them all, or it would
 * not match). FI_LOCAL_MR is how API < 1.5 says FI_MR_LOCAL; newer
 * applications read it from mr_mode instead. */
static uint64_t narrow_mode(uint32_t version, uint64_t prov_mode,
			    int prov_mr_mode)
{
	uint64_t mode = prov_mode & ~FI_LOCAL_MR;

	if (FI_VERSION_LT(version, FI_VERSION(1, 5)) &&
	    ((prov_mode & FI_LOCAL_MR) || (prov_mr_mode & FI_MR_LOCAL)))
		mode |= FI_LOCAL_MR;
	return mode;
}

static void narrow_tx(uint32_t version, const struct fi_info *hints,
		      struct fi_info *info, int prov_mr_mode)
{
	struct fi_tx_attr *attr = info->tx_attr;
	const struct fi_tx_attr *user = hints->tx_attr;

	if (!attr)
		return;
	attr->caps = (user && user->caps ? user->caps : info->caps) &
		     attr->caps;
	attr->mode = narrow_mode(version, attr->mode, prov_mr_mode);
	if (user && user->op_flags)
		attr->op_flags = user->op_flags;
}

static void narrow_rx(uint32_t version, const struct fi_info *hints,
		      struct fi_info *info, int prov_mr_mode)
{
	struct fi_rx_attr *attr = info->rx_attr;
	const struct fi_rx_attr *user = hints->rx_attr;

	if (!attr)
		return;
	attr->caps = (user && user->caps ? user->caps : info->caps) &
		     attr->caps;
	attr->mode = narrow_mode(version, attr->mode, prov_mr_mode);
	if (user && user->op_flags)
		attr->op_flags = user->op_flags;
}

static void info_legacy_mr(struct fi_info *info);

static void info_narrow(uint32_t version, const struct fi_info *hints,
			struct fi_info *info)
{
	int prov_mr_mode = info->domain_attr ? info->domain_attr->mr_mode : 0;

	info->caps = narrow_caps(hints->caps, info->caps);
	info->mode = narrow_mode(version, info->mode, prov_mr_mode);
	narrow_domain(version, hints, info);
	if (!hints->domain_attr && FI_VERSION_LT(version, FI_VERSION(1, 5)))
		info_legacy_mr(info);
	narrow_tx(version, hints, info, prov_mr_mode);
	narrow_rx(version, hints, info, prov_mr_mode);
	if (hints->ep_attr && info->ep_attr && hints->ep_attr->mem_tag_format)
		info->ep_attr->mem_tag_format = hints->ep_attr->mem_tag_format;
	/* fi_info(3): a pep handle in the hints comes back in the info. */
	if (hints->handle && hints->handle->fclass == FI_CLASS_PEP)
		info->handle = hints->handle;
}

/* No hints from an API < 1.5 application: it still speaks mr_mode as
 * FI_MR_BASIC / FI_MR_SCALABLE and local registration as FI_LOCAL_MR. */
static void info_legacy_mr(struct fi_info *info)
{
	int mr_mode;

	if (!info->domain_attr)
		return;
	mr_mode = info->domain_attr->mr_mode;
	info->mode = narrow_mode(FI_VERSION(1, 4), info->mode, mr_mode);
	info->domain_attr->mr_mode = mr_basic_ok(mr_mode) ? FI_MR_BASIC :
				     FI_MR_SCALABLE;
}

/* A context carries only the bits fi_endpoint(3) lets it carry, and only
 * ones the endpoint has: whatever the provider's template says, with or
 * without hints. */
static void info_ctx_caps(struct fi_info *info)
{
	if (info->tx_attr)
		info->tx_attr->caps &= TX_ATTR_CAPS & info->caps;
	if (info->rx_attr)
		info->rx_attr->caps &= RX_ATTR_CAPS & info->caps;
}

int weft_info_match(uint32_t version, const struct fi_info *hints,
		    struct fi_info *info)
{
	if (!hints) {
		if (FI_VERSION_LT(version, FI_VERSION(1, 5)))
			info_legacy_mr(info);
		info_ctx_caps(info);
		return 1;
	}
	if (!info_check(version, hints, info))
		return 0;
	info_narrow(version, hints, info);
	info_ctx_caps(info);
	return 1;
}
