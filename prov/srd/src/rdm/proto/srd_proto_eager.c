/* SPDX-License-Identifier: MIT */
/*
 * EAGER: the whole message in one packet (at most eager_max bytes of
 * payload). The receiver copies it into the matched receive, or keeps it
 * in the unexpected entry's data[] until one is posted.
 *
 * Peer failure: an eager send is one packet, either queued toward the
 * peer (srd_peer_fail fails the queue) or held by the device (its
 * completion carries the error); nothing of it is left to a hook.
 */
#include "weft/compat.h"
#include "../srd_proto.h"

static bool srd_eager_fits(const struct srd_ep *ep, const struct srd_peer *peer,
			   uint64_t len)
{
	(void)peer;
	return len <= ep->pc.eager_max;
}

static size_t srd_eager_fast_max(const struct srd_ep *ep)
{
	return ep->pc.eager_max;
}

static int srd_eager_tx_start(struct srd_ep *ep, struct srd_tx_entry *tx,
			      void **desc)
{
	struct srd_txbuf *tb = srd_txbuf_get(ep);

	(void)desc;
	if (WEFT_UNLIKELY(!tb))
		return -FI_EAGAIN;
	srd_tx_segment(ep, tx, tb, SRD_PKT_EAGER, ep->pc.eager_max);
	return 0;
}

static int srd_eager_rx_check(const struct srd_ep *ep,
			      const struct srd_msg_info *m)
{
	return (m->offset || m->seg_len != m->total_len ||
		m->seg_len > ep->pc.eager_max) ? -FI_EINVAL : 0;
}

static void srd_eager_rx_start(struct srd_ep *ep,
			       const struct util_srx_dest *dest,
			       const struct srd_msg_info *m)
{
	size_t n = m->seg_len < dest->cap ? m->seg_len : dest->cap;

	util_iov_copy_to(dest->iov, dest->iov_count, 0, m->payload, n);
	srd_rx_complete(ep, dest, m, n, 0);
}

const struct srd_proto srd_proto_eager = {
	.name = "eager",
	.fits = srd_eager_fits,
	.fast_max = srd_eager_fast_max,
	.tx_start = srd_eager_tx_start,
	.msg_type = SRD_PKT_EAGER,
	.rx_check = srd_eager_rx_check,
	.rx_start = srd_eager_rx_start,
};

