/* SPDX-License-Identifier: MIT */
/*
 * Long messages by receiver-granted credits, receiver side. A CTS_RTS is
 * matched like any message (unexpected ones wait on the unexpected queue
 * holding only their first chunk: no data moves before a receive exists).
 * Once matched, the transfer gets an rx_id (index | generation << 16 in
 * the slot table, so DATA for a finished or cancelled transfer is refused
 * instead of landing in memory the application took back), and CTS grants
 * up to cts_window bytes ahead of what arrived, re-granted as DATA lands,
 * never past min(message, buffer). DATA lands by offset straight into the
 * receive buffer. When everything wanted is in, READ_DONE tells the sender
 * to complete (and to stop, when the buffer truncated the message).
 */
#include "weft/compat.h"
#include "../srd_rdm.h"

#include <stdlib.h>
#include <string.h>

#define SRD_CTS_SLOTS 4096	/* concurrent CTS receives per endpoint */
#define SRD_CTS_ID_IDX(id) ((id) & 0xffffu)

int srd_cts_rx_init(struct srd_ep *ep)
{
	uint32_t i;

	ep->cts_slot_count = SRD_CTS_SLOTS;
	ep->cts_slots = calloc(ep->cts_slot_count, sizeof(*ep->cts_slots));
	ep->cts_free = calloc(ep->cts_slot_count, sizeof(*ep->cts_free));
	if (!ep->cts_slots || !ep->cts_free)
		return -FI_ENOMEM;
	for (i = 0; i < ep->cts_slot_count; i++)
		ep->cts_free[i] = ep->cts_slot_count - 1 - i;
	ep->cts_free_top = ep->cts_slot_count;
	return 0;
}

void srd_cts_rx_fini(struct srd_ep *ep)
{
	struct srd_rx_xfer *x, *tmp;
	uint32_t i;

	/* Those waiting to finish without a slot are only on the pump. */
	DL_FOREACH_SAFE2(ep->cts_pump, x, tmp, cts_next) {
		DL_DELETE2(ep->cts_pump, x, cts_prev, cts_next);
		i = SRD_CTS_ID_IDX(x->rx_id);
		if (i >= ep->cts_slot_count || ep->cts_slots[i].x != x)
			srd_xfer_free(ep, x);
	}
	for (i = 0; ep->cts_slots && i < ep->cts_slot_count; i++)
		if (ep->cts_slots[i].x)
			srd_xfer_free(ep, ep->cts_slots[i].x);
	free(ep->cts_slots);
	free(ep->cts_free);
	ep->cts_slots = NULL;
	ep->cts_free = NULL;
	ep->cts_pump = NULL;
}

static int srd_cts_slot_get(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	struct srd_cts_slot *s;
	uint32_t idx;

	if (!ep->cts_free_top)
		return -FI_ENOMEM;
	idx = ep->cts_free[--ep->cts_free_top];
	s = &ep->cts_slots[idx];
	s->gen++;
	s->x = x;
	x->rx_id = idx | ((uint32_t)s->gen << 16);
	return 0;
}

static void srd_cts_slot_put(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	uint32_t idx = SRD_CTS_ID_IDX(x->rx_id);

	if (idx >= ep->cts_slot_count || ep->cts_slots[idx].x != x)
		return;
	ep->cts_slots[idx].x = NULL;
	ep->cts_free[ep->cts_free_top++] = idx;
}

static struct srd_rx_xfer *srd_cts_rx_by_id(struct srd_ep *ep, uint32_t id)
{
	struct srd_rx_xfer *x;

	if (SRD_CTS_ID_IDX(id) >= ep->cts_slot_count)
		return NULL;
	x = ep->cts_slots[SRD_CTS_ID_IDX(id)].x;
	return x && x->rx_id == id ? x : NULL;
}

static void srd_cts_pump_add(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	if (x->on_cts_pump)
		return;
	DL_APPEND2(ep->cts_pump, x, cts_prev, cts_next);
	x->on_cts_pump = true;
}

static void srd_cts_pump_del(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	if (!x->on_cts_pump)
		return;
	DL_DELETE2(ep->cts_pump, x, cts_prev, cts_next);
	x->on_cts_pump = false;
}

/* Everything wanted is in (or the transfer failed): READ_DONE to the
 * sender, complete the receive. -FI_EAGAIN: no packet buffer yet. */
static int srd_cts_finish(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	int ret = 0;

	/* A failed peer gets nothing: a packet would start a handshake. */
	if (x->peer->state == SRD_PEER_READY)
		ret = srd_long_ctrl_send(ep, x, SRD_PKT_READ_DONE, 0,
					x->err ? 0 : x->want,
					x->err ? -x->err : 0);
	if (ret) {
		srd_cts_pump_add(ep, x);
		return ret;
	}
	ep->lstat.done++;
	srd_cts_pump_del(ep, x);
	srd_cts_slot_put(ep, x);
	srd_rx_complete_err(ep, &x->dest, &x->m, x->err ? 0 : x->want, x->err,
			    x->prov_errno);
	srd_xfer_free(ep, x);
	return 0;
}

/* Grant more once half the window has landed. -FI_EAGAIN: retry later. */
static int srd_cts_grant(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	uint64_t end;
	int ret;

	if (x->granted >= x->want ||
	    x->granted - x->received > ep->cts_window / 2)
		return 0;
	end = x->want - x->received < ep->cts_window ? x->want :
		x->received + ep->cts_window;
	ret = srd_long_ctrl_send(ep, x, SRD_PKT_CTS, x->granted,
				end - x->granted, 0);
	if (ret) {
		srd_cts_pump_add(ep, x);
		return ret;
	}
	ep->lstat.cts++;
	x->granted = end;
	return 0;
}

/* Next step of x: grant, or finish. */
static int srd_cts_step(struct srd_ep *ep, struct srd_rx_xfer *x)
{
	if (x->err || x->received >= x->want)
		return srd_cts_finish(ep, x);
	return srd_cts_grant(ep, x);
}

void srd_cts_pump(struct srd_ep *ep)
{
	struct srd_rx_xfer *x, *tmp;

	DL_FOREACH_SAFE2(ep->cts_pump, x, tmp, cts_next) {
		srd_cts_pump_del(ep, x);
		if (srd_cts_step(ep, x) == -FI_EAGAIN)
			return;
	}
}

/* A matched CTS_RTS (m: its first chunk in payload). */
void srd_cts_rx_start(struct srd_ep *ep, const struct util_srx_dest *dest,
		      const struct srd_msg_info *m)
{
	struct srd_rx_xfer *x = srd_xfer_get(ep, dest, m);
	uint64_t n;

	if (!x) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"no transfer entry for a long message of %llu bytes\n",
			(unsigned long long)m->total_len);
		srd_rx_complete(ep, dest, m, 0, FI_ENOMEM);
		return;
	}
	x->cts = true;
	x->want = m->total_len < dest->cap ? m->total_len : dest->cap;
	n = m->seg_len < x->want ? m->seg_len : x->want;
	util_iov_copy_to(dest->iov, dest->iov_count, 0, m->payload, n);
	x->received = m->seg_len;
	x->granted = m->seg_len;
	if (x->received < x->want && srd_cts_slot_get(ep, x)) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"more than %u long receives in progress: message of "
			"%llu bytes refused\n", ep->cts_slot_count,
			(unsigned long long)m->total_len);
		x->err = FI_ENOMEM;
	}
	srd_long_watch_arm(ep);
	srd_cts_step(ep, x);
}

static bool srd_cts_data_ok(const struct srd_rx_xfer *x,
			    const struct srd_pkt_data *d)
{
	/* Inside what we granted and past the first chunk; no more bytes
	 * than are still outstanding (offset + seg_len cannot wrap:
	 * srd_pkt_validate checked it). */
	return d->offset >= x->m.seg_len && d->offset + d->seg_len <=
	       x->granted && d->seg_len <= x->granted - x->received;
}

void srd_cts_handle_data(struct srd_ep *ep, struct srd_peer *peer,
			 const void *pkt, size_t len)
{
	const struct srd_pkt_data *d = pkt;
	struct srd_rx_xfer *x = srd_cts_rx_by_id(ep, d->rx_id);

	(void)len;
	if (!x || x->peer != peer || x->err) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"DATA for no long receive (rx id 0x%x) from qpn %u: "
			"dropped\n", d->rx_id, peer->name.qpn);
		return;
	}
	if (!srd_cts_data_ok(x, d)) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"DATA %llu+%u from qpn %u outside the granted window "
			"(%llu of %llu in, granted to %llu): dropped\n",
			(unsigned long long)d->offset, d->seg_len,
			peer->name.qpn, (unsigned long long)x->received,
			(unsigned long long)x->want,
			(unsigned long long)x->granted);
		return;
	}
	util_iov_copy_to(x->dest.iov, x->dest.iov_count, d->offset, d + 1,
			d->seg_len);
	x->received += d->seg_len;
	if (x->on_cts_pump)
		return;
	srd_cts_step(ep, x);
}

/* Liveness (srd_long_watch): transfers whose sender failed end with an
 * error; the peers of the others are marked for a probe. */
void srd_cts_rx_watch(struct srd_ep *ep, uint64_t *probe)
{
	uint32_t i;

	for (i = 0; i < ep->cts_slot_count; i++) {
		struct srd_rx_xfer *x = ep->cts_slots[i].x;

		if (!x || x->on_cts_pump)
			continue;
		if (x->peer->state != SRD_PEER_READY) {
			x->err = FI_EIO;
			x->prov_errno = SRD_PROV_ERRNO_PEER_LOST;
			srd_cts_step(ep, x);
			continue;
		}
		probe[x->peer->id / 64] |= 1ull << (x->peer->id % 64);
	}
}
