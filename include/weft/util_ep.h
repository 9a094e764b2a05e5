/* SPDX-License-Identifier: MIT */
/*
 * Endpoint base: embed struct util_ep in the provider's endpoint
 * (to_<prov>_ep(fid_ep) = container_of(..., util.ep_fid)).
 *
 * util_ep_init sets every ops table of ep_fid to the util_no_* tables; the
 * provider then replaces those it implements:
 *   ep->util.ep_fid.fid.ops = &<prov>_ep_fi_ops;   .close = <prov>_ep_close
 *       (calls util_ep_fini, then frees), .bind = util_ep_bind,
 *       .control = util_ep_control, .ops_open = util_no_ops_open, ...
 *   ep->util.ep_fid.ops = &<prov>_ep_ops;   (cancel, getopt = util_ep_getopt
 *       or the provider's, setopt = util_ep_setopt, size_left ...)
 *   ep->util.ep_fid.msg / tagged / rma / atomic / cm = ...
 * and may set ep->util.enable, called by fi_enable after util's checks.
 *
 * Binding (fi_ep_bind -> util_ep_bind):
 *   CQ   FI_TRANSMIT and/or FI_RECV, optional FI_SELECTIVE_COMPLETION;
 *        one CQ per direction; the ep joins the CQ's progress list.
 *   cntr FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ,
 *        FI_REMOTE_WRITE (any combination); joins the counter's progress.
 *   AV   one; the same domain.  EQ  one.
 * Objects of another domain, unknown flags or a second CQ/AV for the same
 * role: -FI_EINVAL with a log line.
 * fi_enable: RDM and DGRAM endpoints need an AV (-FI_ENOAV); at least one
 * CQ or counter must be bound (-FI_ENOCQ); then ep->enable (if set).
 *
 * Completions: the provider decides at post time whether an op generates
 * an entry (util_ep_tx_wants_comp), then writes it with util_ep_tx_comp /
 * util_ep_rx_comp; errors are always written (util_ep_*_err).
 */
#ifndef WEFT_UTIL_EP_H
#define WEFT_UTIL_EP_H

#include "weft/compat.h"
#include "weft/util_lock.h"
#include "weft/util_progress.h"
#include "weft/util_cq.h"
#include "weft/util_cntr.h"
#include "weft/util_noop.h"
#include <stdbool.h>
#include <rdma/fi_endpoint.h>

struct util_domain;
struct util_av;
struct util_eq;
struct util_coll_ep;
struct util_coll_xport;

enum util_cntr_slot {
	UTIL_CNTR_SEND,
	UTIL_CNTR_RECV,
	UTIL_CNTR_READ,
	UTIL_CNTR_WRITE,
	UTIL_CNTR_REMOTE_READ,
	UTIL_CNTR_REMOTE_WRITE,
	UTIL_CNTR_MAX
};

struct util_ep {
	struct fid_ep ep_fid;
	struct util_domain *domain;
	enum fi_ep_type type;
	uint64_t caps;
	uint64_t tx_op_flags;		/* info->tx_attr->op_flags; FI_SETOPSFLAG */
	uint64_t rx_op_flags;
	uint64_t msg_order;		/* tx_attr->msg_order */
	size_t inject_size;		/* tx_attr->inject_size */
	struct util_cq *tx_cq;
	struct util_cq *rx_cq;
	bool tx_selective;		/* FI_SELECTIVE_COMPLETION on tx bind */
	bool rx_selective;
	struct util_cntr *cntrs[UTIL_CNTR_MAX];
	struct util_av *av;
	struct util_eq *eq;
	util_progress_fn progress;
	/* Called by fi_enable after util's checks; may be NULL. */
	int (*enable)(struct util_ep *ep);
	bool enabled;
	size_t min_multi_recv;		/* FI_OPT_MIN_MULTI_RECV, default 64 */
	struct util_lock lock;		/* per threading level, for the provider */
	/* Collectives (util_coll.h): the provider's transport, the engine's
	 * state (made at the first join), and whether the engine has work
	 * for progress (the one word the provider's progress tests). */
	const struct util_coll_xport *coll_xport;
	struct util_coll_ep *coll;
	uint32_t coll_busy;
};

static inline struct util_ep *to_util_ep(struct fid_ep *ep)
{
	return container_of(ep, struct util_ep, ep_fid);
}

/* fclass FI_CLASS_EP; info must have ep_attr, tx_attr and rx_attr.
 * Takes a domain reference. Returns 0, -FI_EINVAL or -FI_ENOMEM. */
int util_ep_init(struct util_ep *ep, struct util_domain *domain,
		 const struct fi_info *info, util_progress_fn progress,
		 void *context);

/* Unbinds everything (leaves CQ/counter progress lists, drops references)
 * and releases util state. Always succeeds (returns 0). Call it without
 * holding ep->lock: leaving a progress list waits for a concurrent
 * fi_cq_read that may be inside this endpoint's progress (lock order:
 * progress list -> endpoint -> CQ). */
int util_ep_fini(struct util_ep *ep);

int util_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
/* FI_ENABLE, FI_GETOPSFLAG, FI_SETOPSFLAG; others -FI_ENOSYS. */
int util_ep_control(struct fid *fid, int command, void *arg);
/* FI_OPT_ENDPOINT: FI_OPT_MIN_MULTI_RECV; others -FI_ENOPROTOOPT. */
int util_ep_getopt(fid_t fid, int level, int optname, void *optval,
		   size_t *optlen);
int util_ep_setopt(fid_t fid, int level, int optname, const void *optval,
		   size_t optlen);

/* fi_atomicvalid family over util_atomic_query and the domain's
 * atomic_max_bytes. */
int util_ep_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype,
			      enum fi_op op, size_t *count);
int util_ep_atomic_readwritevalid(struct fid_ep *ep,
				  enum fi_datatype datatype, enum fi_op op,
				  size_t *count);
int util_ep_atomic_compwritevalid(struct fid_ep *ep,
				  enum fi_datatype datatype, enum fi_op op,
				  size_t *count);

/* An fi_*msg call (named by call) given a NULL msg: -FI_EINVAL and a
 * warning. For the providers' *msg entry points, before they read msg. */
ssize_t util_ep_null_msg(const struct util_ep *ep, const char *call);

/* Tables for an endpoint before fi_enable (util_ep_off.c): every data
 * transfer returns -FI_EOPBADSTATE with a log line; the atomic *valid
 * queries answer as util_ep_atomic_*valid. A provider installs them at
 * fi_endpoint and its own tables from its ep->enable callback. */
extern const struct fi_ops_msg util_ep_off_msg_ops;
extern const struct fi_ops_tagged util_ep_off_tagged_ops;
extern const struct fi_ops_rma util_ep_off_rma_ops;
extern const struct fi_ops_atomic util_ep_off_atomic_ops;

/*
 * Op flag the fi_inject* calls (fi_inject, fi_tinject, fi_injectdata,
 * fi_inject_write, fi_inject_atomic...) post with: they never produce a
 * completion. FI_INJECT alone, as a flag of the *msg calls or in the tx
 * op_flags, only lets the caller reuse its buffer at return; such an op
 * completes like any other (fi_msg(3), fi_rma(3)). Not a libfabric flag
 * (libfabric 1.17 leaves bit 63 of the op flags unused); flags that come
 * from the application go through util_ep_user_flags, which clears it.
 */
#define UTIL_OP_NO_COMP (1ULL << 63)

/*
 * Op and completion flag of the collective engine's own messages
 * (util_coll.h: UTIL_COLL_FLAG, util_srx.h: UTIL_SRX_F_COLL). Not a
 * libfabric flag either (bits 60-63 are unused); util_ep_user_flags
 * clears it too, so an application cannot send in the collective class.
 */
#define UTIL_OP_COLL (1ULL << 62)

static inline uint64_t util_ep_user_flags(uint64_t flags)
{
	return flags & ~(UTIL_OP_NO_COMP | UTIL_OP_COLL);
}

/* Whether a successful op posted with these op flags (the *msg flags, or
 * ep->tx_op_flags for the short calls, or UTIL_OP_NO_COMP for the inject
 * calls) produces a CQ entry. */
static inline bool util_ep_tx_wants_comp(const struct util_ep *ep,
					 uint64_t flags)
{
	return !(flags & UTIL_OP_NO_COMP) && ep->tx_cq &&
	       (!ep->tx_selective || (flags & FI_COMPLETION));
}

static inline bool util_ep_rx_wants_comp(const struct util_ep *ep,
					 uint64_t flags)
{
	return ep->rx_cq && (!ep->rx_selective || (flags & FI_COMPLETION));
}

/* Successful tx/rx completion entry; flags are the completion flags
 * (FI_SEND|FI_MSG, FI_RECV|FI_TAGGED|FI_REMOTE_CQ_DATA ...). */
static inline int util_ep_tx_comp(struct util_ep *ep, void *context,
				  uint64_t flags, size_t len, void *buf,
				  uint64_t data, uint64_t tag)
{
	return util_cq_write(ep->tx_cq, context, flags, len, buf, data, tag);
}

static inline int util_ep_rx_comp(struct util_ep *ep, void *context,
				  uint64_t flags, size_t len, void *buf,
				  uint64_t data, uint64_t tag, fi_addr_t src)
{
	return util_cq_write_src(ep->rx_cq, context, flags, len, buf, data,
				 tag, src);
}

/* Error entries: written whatever the selective-completion setting (a
 * no-op returning 0 if no CQ is bound for the direction). err is a
 * positive FI_E* value; olen is the truncated length for FI_ETRUNC. */
int util_ep_tx_err(struct util_ep *ep, void *context, uint64_t flags,
		   int err, int prov_errno, size_t len, size_t olen);
int util_ep_rx_err(struct util_ep *ep, void *context, uint64_t flags,
		   int err, int prov_errno, void *buf, size_t len, size_t olen,
		   uint64_t data, uint64_t tag, fi_addr_t src);

/* Count one completion on the counter bound for slot, if any. */
static inline void util_ep_cntr_inc(struct util_ep *ep,
				    enum util_cntr_slot slot)
{
	if (ep->cntrs[slot])
		util_cntr_inc(ep->cntrs[slot]);
}

static inline void util_ep_cntr_inc_err(struct util_ep *ep,
					enum util_cntr_slot slot)
{
	if (ep->cntrs[slot])
		util_cntr_inc_err(ep->cntrs[slot]);
}

#endif /* WEFT_UTIL_EP_H */
