/* SPDX-License-Identifier: MIT */
/*
 * Error completions that name the peer: every srd error entry toward or
 * from a known peer carries a struct srd_err_data in err_data (the peer's
 * name, its fi_addr, err and prov_errno), which fi_cq_strerror (srd_strerror)
 * turns into "peer srd://<gid>/qpn=N/qkey=0x.. (fi_addr A): <cause>".
 * util_cq_write_err copies err_data, so the record lives on the stack here.
 */
#include "weft/compat.h"
#include "weft/core.h"
#include "srd_rdm.h"

#include <stdio.h>
#include <string.h>

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

void srd_err_data_init(struct srd_err_data *d, int err, int prov_errno,
		       const struct srd_ep_name *peer, uint64_t fi_addr)
{
	memset(d, 0, sizeof(*d));
	d->magic = SRD_ERR_DATA_MAGIC;
	d->size = sizeof(*d);
	d->err = err;
	d->prov_errno = prov_errno;
	d->fi_addr = fi_addr;
	if (fi_addr != FI_ADDR_NOTAVAIL)
		d->flags |= SRD_ERR_DATA_F_ADDR;
	if (peer) {
		d->peer = *peer;
		d->flags |= SRD_ERR_DATA_F_PEER;
	}
}

static const struct srd_err_data *srd_err_data_get(const void *err_data)
{
	const struct srd_err_data *d = err_data;

	if (!d || d->magic != SRD_ERR_DATA_MAGIC || d->size < sizeof(*d))
		return NULL;
	return d;
}

/* "peer srd://.../qpn=N/qkey=0x.. (fi_addr 3)" or "" */
static void srd_err_peer_str(const struct srd_err_data *d, char *buf,
			     size_t len)
{
	char name[128];
	size_t n;

	buf[0] = '\0';
	if (!d || !(d->flags & SRD_ERR_DATA_F_PEER))
		return;
	if (srd_ep_name_str(&d->peer, name, sizeof(name)))
		snprintf(name, sizeof(name), "qpn %u", d->peer.qpn);
	snprintf(buf, len, "%s", name);
	n = strlen(buf);
	if (d->flags & SRD_ERR_DATA_F_ADDR)
		snprintf(buf + n, len - n, " (fi_addr %llu)",
			 (unsigned long long)d->fi_addr);
}

const char *srd_strerror(int prov_errno, const void *err_data, char *buf,
			 size_t len)
{
	const struct srd_err_data *d = srd_err_data_get(err_data);
	char peer[160], cause[160];
	const char *text = srd_dev_prov_strerror(prov_errno);

	if (!buf || !len) {
		buf = weft_thread_buf(WEFT_TBUF_STRERROR);
		len = WEFT_TBUF_SIZE;
	}
	if (prov_errno == 0 && d && d->err) {
		snprintf(cause, sizeof(cause), "%s (found by the provider)",
			 fi_strerror(d->err));
		text = cause;
	}
	srd_err_peer_str(d, peer, sizeof(peer));
	if (peer[0])
		snprintf(buf, len, "peer %s: %s (prov_errno %d)", peer, text,
			 prov_errno);
	else
		snprintf(buf, len, "%s (prov_errno %d)", text, prov_errno);
	return buf;
}
