/* SPDX-License-Identifier: MIT */
/*
 * weft's endpoint options (include/weft/fi_ext_weft.h) for srd: what the
 * device promises about in-order data placement for sends and RDMA
 * writes, and the poll mode. The decision itself is srd_dev_poll_choose's
 * (srd_dev_inorder.c); this file only reports it.
 */
#include "weft/compat.h"
#include "weft/fi_ext_weft.h"
#include "srd_rdm.h"
#include "srd_opt.h"
#include "proto/srd_ring.h"
#include "proto/srd_stripe.h"

#include <stdbool.h>

static int srd_opt_inorder_bits(int caps)
{
	return (caps & SRD_INORDER_WHOLE ? WEFT_INORDER_WHOLE_MSG : 0) |
	       (caps & SRD_INORDER_128 ? WEFT_INORDER_ALIGNED_128 : 0);
}

/* Whole-message order lets a reader poll any line too. */
static bool srd_opt_has_128(int caps)
{
	return caps & (SRD_INORDER_WHOLE | SRD_INORDER_128);
}

static int srd_opt_put_int(int v, void *optval, size_t *optlen)
{
	if (*optlen < sizeof(int)) {
		*optlen = sizeof(int);
		return -FI_ETOOSMALL;
	}
	*(int *)optval = v;
	*optlen = sizeof(int);
	return 0;
}

static int srd_opt_put_bool(bool v, void *optval, size_t *optlen)
{
	if (*optlen < sizeof(bool)) {
		*optlen = sizeof(bool);
		return -FI_ETOOSMALL;
	}
	*(bool *)optval = v;
	*optlen = sizeof(bool);
	return 0;
}

int srd_opt_get(const struct srd_dev_poll_choice *c, int optname, void *optval,
		size_t *optlen)
{
	if (!optval || !optlen) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"getopt %d: NULL optval or optlen\n", optname);
		return -FI_EINVAL;
	}
	switch (optname) {
	case FI_OPT_WEFT_SEND_INORDER:
		return srd_opt_put_int(srd_opt_inorder_bits(c->send_inorder),
				       optval, optlen);
	case FI_OPT_WEFT_WRITE_INORDER:
		return srd_opt_put_int(srd_opt_inorder_bits(c->write_inorder),
				       optval, optlen);
	case FI_OPT_WEFT_SEND_IN_ORDER_ALIGNED_128_BYTES:
		return srd_opt_put_bool(srd_opt_has_128(c->send_inorder),
					optval, optlen);
	case FI_OPT_WEFT_WRITE_IN_ORDER_ALIGNED_128_BYTES:
		return srd_opt_put_bool(srd_opt_has_128(c->write_inorder),
					optval, optlen);
	case FI_OPT_WEFT_POLL_MODE:
		return srd_opt_put_int(c->mode == SRD_POLL_DATA ?
				       WEFT_POLL_DATA : WEFT_POLL_COMPLETION,
				       optval, optlen);
	default:
		return -FI_ENOPROTOOPT;
	}
}

static int srd_opt_require_128(int caps, const char *what, bool want)
{
	if (!want || srd_opt_has_128(caps))
		return 0;
	FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
		"setopt: %s do not land in order per 128 bytes on this device\n",
		what);
	return -FI_EOPNOTSUPP;
}

int srd_opt_set(const struct srd_dev_poll_choice *c, int optname,
		const void *optval, size_t optlen)
{
	switch (optname) {
	case FI_OPT_WEFT_SEND_IN_ORDER_ALIGNED_128_BYTES:
	case FI_OPT_WEFT_WRITE_IN_ORDER_ALIGNED_128_BYTES:
		break;
	case FI_OPT_WEFT_SEND_INORDER:
	case FI_OPT_WEFT_WRITE_INORDER:
	case FI_OPT_WEFT_POLL_MODE:
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"setopt %d: read-only option\n", optname);
		return -FI_EINVAL;
	default:
		return -FI_ENOPROTOOPT;
	}
	if (!optval || optlen != sizeof(bool)) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"setopt %d: needs a bool (optlen %zu)\n", optname,
			optlen);
		return -FI_EINVAL;
	}
	if (optname == FI_OPT_WEFT_SEND_IN_ORDER_ALIGNED_128_BYTES)
		return srd_opt_require_128(c->send_inorder, "sends",
					   *(const bool *)optval);
	return srd_opt_require_128(c->write_inorder, "RDMA writes",
				   *(const bool *)optval);
}

/* The endpoint's choice: what srd_ring_ep_init decided in data mode;
 * otherwise the device's answer with completion mode. */
static int srd_opt_choice(struct srd_ep *ep, struct srd_dev_poll_choice *c)
{
	const struct srd_dev_inorder *io;
	int ret;

	if (ep->ring) {
		*c = ep->ring->choice;
		return 0;
	}
	if (!ep->qp) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"in-order options: endpoint has no queue pair yet\n");
		return -FI_EOPBADSTATE;
	}
	ret = srd_dev_inorder_get(ep->dev, ep->qp, &io);
	if (ret)
		return ret;
	srd_dev_poll_choose(SRD_POLL_REQ_COMPLETION, io, &ep->dev->caps, false,
			    c);
	return 0;
}

static bool srd_opt_is_weft(int optname)
{
	return optname >= FI_OPT_WEFT_SEND_INORDER &&
	       optname <= FI_OPT_WEFT_POLL_MODE;
}

static int srd_opt_shm(struct srd_ep *ep, bool set, void *optval,
		       size_t *optlen)
{
	if (!optval || !optlen || *optlen < sizeof(bool) ||
	    (set && *optlen != sizeof(bool))) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"FI_OPT_SHARED_MEMORY_PERMITTED needs a bool\n");
		return -FI_EINVAL;
	}
	if (set)
		return srd_shm_set_permitted(ep, *(bool *)optval);
	*(bool *)optval = ep->shm_permitted;
	*optlen = sizeof(bool);
	return 0;
}

static int srd_opt_shm_sends(struct srd_ep *ep, void *optval,
			     size_t *optlen)
{
	uint64_t n;

	if (!optval || !optlen || *optlen < sizeof(n)) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"FI_OPT_WEFT_SHM_SENDS needs a uint64_t\n");
		return -FI_EINVAL;
	}
	util_lock_acquire(&ep->util.lock);
	n = ep->shm ? ep->shm->sends : 0;
	util_lock_release(&ep->util.lock);
	memcpy(optval, &n, sizeof(n));
	*optlen = sizeof(n);
	return 0;
}

static int srd_opt_rails(struct srd_ep *ep, bool set, void *optval,
			 size_t *optlen)
{
	if (!optval || !optlen || *optlen < sizeof(int)) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"FI_OPT_WEFT_RAILS: needs an int\n");
		if (optlen && !set)
			*optlen = sizeof(int);
		return set ? -FI_EINVAL : -FI_ETOOSMALL;
	}
	if (set)
		return srd_stripe_set_rails(ep, *(const int *)optval);
	*(int *)optval = srd_stripe_get_rails(ep);
	*optlen = sizeof(int);
	return 0;
}

int srd_ep_getopt(fid_t fid, int level, int optname, void *optval,
		  size_t *optlen)
{
	struct srd_ep *ep = container_of(fid, struct srd_ep, util.ep_fid.fid);
	struct srd_dev_poll_choice c;
	int ret;

	if (level == FI_OPT_ENDPOINT &&
	    optname == FI_OPT_SHARED_MEMORY_PERMITTED)
		return srd_opt_shm(ep, false, optval, optlen);
	if (level == FI_OPT_ENDPOINT && optname == FI_OPT_WEFT_SHM_SENDS)
		return srd_opt_shm_sends(ep, optval, optlen);
	if (level == FI_OPT_ENDPOINT && optname == FI_OPT_WEFT_RAILS)
		return srd_opt_rails(ep, false, optval, optlen);
	if (level != FI_OPT_ENDPOINT || !srd_opt_is_weft(optname))
		return util_ep_getopt(fid, level, optname, optval, optlen);
	ret = srd_opt_choice(ep, &c);
	return ret ? ret : srd_opt_get(&c, optname, optval, optlen);
}

int srd_ep_setopt(fid_t fid, int level, int optname, const void *optval,
		  size_t optlen)
{
	struct srd_ep *ep = container_of(fid, struct srd_ep, util.ep_fid.fid);
	struct srd_dev_poll_choice c;
	int ret;

	if (level == FI_OPT_ENDPOINT &&
	    optname == FI_OPT_SHARED_MEMORY_PERMITTED)
		return srd_opt_shm(ep, true, (void *)optval, &optlen);
	if (level == FI_OPT_ENDPOINT && optname == FI_OPT_WEFT_SHM_SENDS) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"setopt FI_OPT_WEFT_SHM_SENDS: read-only option\n");
		return -FI_EINVAL;
	}
	if (level == FI_OPT_ENDPOINT && optname == FI_OPT_WEFT_RAILS) {
		size_t len = optlen;

		if (optlen != sizeof(int)) {
			FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
				"FI_OPT_WEFT_RAILS: needs an int\n");
			return -FI_EINVAL;
		}
		util_lock_acquire(&ep->util.lock);
		ret = srd_opt_rails(ep, true, (void *)optval, &len);
		util_lock_release(&ep->util.lock);
		return ret;
	}
	if (level != FI_OPT_ENDPOINT || !srd_opt_is_weft(optname))
		return util_ep_setopt(fid, level, optname, optval, optlen);
	ret = srd_opt_choice(ep, &c);
	return ret ? ret : srd_opt_set(&c, optname, optval, optlen);
}
