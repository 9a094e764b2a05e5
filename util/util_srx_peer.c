/* SPDX-License-Identifier: MIT */
/*
 * The owner's end of a peer receive context (util_srx.h): what a weft
 * peer provider recognises, and refusals for a foreign one.
 */
#include "weft/compat.h"
#include "weft/util_srx.h"
#include "weft/util_noop.h"

#include <string.h>

static int util_srx_peer_refuse(const char *what)
{
	FI_WARN(&weft_core_prov, FI_LOG_EP_DATA,
		"peer receive context: %s from a provider outside weft is "
		"not supported\n", what);
	return -FI_ENOSYS;
}

static int util_srx_peer_get_msg(struct fid_peer_srx *srx, fi_addr_t addr,
				 size_t size, struct fi_peer_rx_entry **entry)
{
	(void)srx; (void)addr; (void)size; (void)entry;
	return util_srx_peer_refuse("get_msg");
}

static int util_srx_peer_get_tag(struct fid_peer_srx *srx, fi_addr_t addr,
				 uint64_t tag, struct fi_peer_rx_entry **entry)
{
	(void)srx; (void)addr; (void)tag; (void)entry;
	return util_srx_peer_refuse("get_tag");
}

static int util_srx_peer_queue(struct fi_peer_rx_entry *entry)
{
	(void)entry;
	return util_srx_peer_refuse("queue_msg/queue_tag");
}

static void util_srx_peer_free(struct fi_peer_rx_entry *entry)
{
	(void)entry;
	(void)util_srx_peer_refuse("free_entry");
}

/* Not const: struct fid_peer_srx points at a mutable table. Its address
 * is what identifies a weft owner. */
static struct fi_ops_srx_owner util_srx_owner_ops = {
	.size = sizeof(struct fi_ops_srx_owner),
	.get_msg = util_srx_peer_get_msg,
	.get_tag = util_srx_peer_get_tag,
	.queue_msg = util_srx_peer_queue,
	.queue_tag = util_srx_peer_queue,
	.free_entry = util_srx_peer_free,
};

/* The owner frees the context with itself: fi_close on it does nothing. */
static int util_srx_peer_close(struct fid *fid)
{
	(void)fid;
	return 0;
}

static struct fi_ops util_srx_peer_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_srx_peer_close,
	.bind = util_no_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

void util_srx_peer_init(struct util_srx_peer *p, struct util_srx *srx)
{
	memset(p, 0, sizeof(*p));
	p->peer_srx.ep_fid.fid.fclass = FI_CLASS_SRX_CTX;
	p->peer_srx.ep_fid.fid.context = p;
	p->peer_srx.ep_fid.fid.ops = &util_srx_peer_fi_ops;
	p->peer_srx.owner_ops = &util_srx_owner_ops;
	p->srx = srx;
}

struct util_srx *util_srx_of_peer(struct fid_peer_srx *p)
{
	if (!p || p->owner_ops != &util_srx_owner_ops)
		return NULL;
	return container_of(p, struct util_srx_peer, peer_srx)->srx;
}
