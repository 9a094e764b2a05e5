/* SPDX-License-Identifier: MIT */
/*
 * Error completions that name the peer: every srd error entry toward or
 * from a known peer carries a struct srd_err_data in err_data (the peer's
 * name, its fi_addr, err and prov_errno), which fi_cq_strerror (srd_strerror)
 * turns into "peer srd://<gid>/qpn=N/qkey=0x.. (fi_addr A): <cause>".
 * util_cq_write_err copies err_data, so the record lives on the stack here.
 */
#include "weft/compat.h"
#include "srd_rdm.h"

_Static_assert(sizeof(struct srd_err_data) <= UTIL_CQ_ERR_DATA_MAX,
	       "srd_err_data must fit the CQ's err_data copy");

static void srd_err_entry_data(struct srd_ep *ep, struct srd_peer *peer,
			       struct fi_cq_err_entry *e,
			       struct srd_err_data *d)
{
	if (!peer)
		return;
	srd_err_data_init(d, e->err, e->prov_errno, &peer->name,
			  srd_peer_fi_addr(ep, peer));
	e->err_data = d;
	e->err_data_size = sizeof(*d);
}

int srd_ep_tx_err(struct srd_ep *ep, struct srd_peer *peer, void *context,
		  uint64_t flags, int err, int prov_errno, size_t len)
{
	struct fi_cq_err_entry e = {
		.op_context = context,
		.flags = flags,
		.len = len,
		.err = err,
		.prov_errno = prov_errno,
	};
	struct srd_err_data d;

	if (!ep->util.tx_cq)
		return 0;
	srd_err_entry_data(ep, peer, &e, &d);
	return util_cq_write_err(ep->util.tx_cq, &e, FI_ADDR_NOTAVAIL);
}

int srd_ep_rx_err(struct srd_ep *ep, struct srd_peer *peer,
		  const struct fi_cq_err_entry *in, fi_addr_t src)
{
	struct fi_cq_err_entry e = *in;
	struct srd_err_data d;

	if (!ep->util.rx_cq)
		return 0;
	srd_err_entry_data(ep, peer, &e, &d);
	return util_cq_write_err(ep->util.rx_cq, &e, src);
}
