/* SPDX-License-Identifier: MIT */
/*
 * The rails of an endpoint (srd_stripe.h): opening them on the next
 * devices fi_getinfo lists, telling peers about them in the handshake,
 * learning theirs, and posting and completing the RDMA reads the long
 * protocol puts on them (srd_proto_long_read.c). Each rail has its own
 * CQ, polled with the endpoint's; its completions go to the same
 * work-request routes and end in the same batch-end hook as rail 0's.
 *
 * A rail serves any peer its device reaches. Devices are paired by their
 * order on each host, so an endpoint takes only devices of its own kind
 * as rails: a loopback device never stripes with a routed one.
 */
#include "weft/compat.h"
#include "../srd_proto.h"
#include "srd_stripe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SRD_RAIL_SQ_DEPTH 256
#define SRD_RAIL_RQ_DEPTH 16	/* nothing is ever sent to a rail QP */

static bool srd_gid_loopback(const union ibv_gid *gid)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t v6lo[16] = { [15] = 1 };

	if (!memcmp(gid->raw, v6lo, sizeof(v6lo)))
		return true;
	return !memcmp(gid->raw, v4mapped, sizeof(v4mapped)) &&
	       gid->raw[12] == 127;
}

/* Up to want - 1 devices after ep's own in fi_getinfo's order. */
static uint32_t srd_stripe_pick(const struct srd_ep *ep, uint32_t want,
				struct srd_dev **out)
{
	struct srd_dev *devs[SRD_DEV_MAX];
	int n = srd_devices_get(devs, SRD_DEV_MAX), self = -1;
	bool lo = srd_gid_loopback(&ep->dev->caps.gid);
	uint32_t got = 0;

	for (int i = 0; i < n; i++)
		if (devs[i] == ep->dev)
			self = i;
	if (self < 0)
		return 0;
	for (int i = 1; i < n && got + 1 < want; i++) {
		struct srd_dev *d = devs[(self + i) % n];

		if (srd_gid_loopback(&d->caps.gid) == lo)
			out[got++] = d;
	}
	return got;
}

static void srd_rail_on_wc(struct srd_dev_cq *cq, const struct srd_dev_wc *wc,
			   void *arg)
{
	struct srd_rail *rail = arg;
	struct srd_wr_hdr *hdr = (struct srd_wr_hdr *)(uintptr_t)wc->wr_id;

	(void)cq;
	if (WEFT_UNLIKELY(!hdr))
		return;
	rail->sq_inflight--;
	srd_wr_done(rail->ep, hdr, wc);
}

static void srd_rail_on_unknown(struct srd_dev_cq *cq,
				const struct srd_dev_wc *wc, void *arg)
{
	(void)cq;
	(void)arg;
	FI_WARN(&srd_prov, FI_LOG_CQ, "rail completion with opcode %d\n",
		wc->opcode);
}

static void srd_rail_on_batch_end(struct srd_dev_cq *cq, int n, void *arg)
{
	(void)cq;
	(void)n;
	srd_ep_batch_end(((struct srd_rail *)arg)->ep);
}

static const struct srd_dev_cq_ops srd_rail_cq_ops = {
	.on_wc = {
		[IBV_WC_RDMA_READ] = srd_rail_on_wc,
	},
	.on_unknown = srd_rail_on_unknown,
	.on_error = srd_rail_on_wc,
	.on_batch_end = srd_rail_on_batch_end,
};

static int srd_rail_open(struct srd_ep *ep, struct srd_dev *dev,
			 struct srd_rail *rail)
{
	struct srd_dev_qp_attr qa;
	struct srd_dev_cq_attr ca;
	int ret;

	rail->ep = ep;
	rail->dev = dev;
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = SRD_RAIL_SQ_DEPTH;
	qa.rq_depth = SRD_RAIL_RQ_DEPTH;
	memset(&ca, 0, sizeof(ca));
	ca.depth = srd_dev_cq_depth(qa.sq_depth, qa.rq_depth, 1, 0,
				    dev->caps.max_cqe);
	ca.batch = srd_settings.cq_batch;
	ca.arg = rail;
	ret = srd_dev_cq_open(dev, &ca, &srd_rail_cq_ops, &rail->cq);
	if (ret)
		return ret;
	qa.send_cq = qa.recv_cq = rail->cq->cq;
	qa.qp_context = ep;
	return srd_dev_qp_create(dev, &srd_settings, &qa, &rail->qp);
}

static void srd_stripe_close(struct srd_ep *ep)
{
	struct srd_stripe_ep *st = ep->stripe;

	if (!st)
		return;
	srd_stripe_qps_destroy(ep);
	for (uint32_t k = 0; k < SRD_RAILS_MAX - 1; k++)
		if (st->rail[k].cq)
			srd_dev_cq_close(st->rail[k].cq);
	free(st);
	ep->stripe = NULL;
}

static int srd_stripe_open(struct srd_ep *ep)
{
	struct srd_dev *devs[SRD_RAILS_MAX - 1];
	struct srd_stripe_ep *st;
	uint32_t n;
	int ret;

	if (ep->rails_want <= 1)
		return 0;
	n = srd_stripe_pick(ep, ep->rails_want, devs);
	if (!n) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"%u rails asked, but no other device like %s: one rail\n",
			ep->rails_want, ep->dev->name);
		return 0;
	}
	if (n + 1 < ep->rails_want)
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"%u rails asked, %u devices like %s: %u rails\n",
			ep->rails_want, n + 1, ep->dev->name, n + 1);
	st = calloc(1, sizeof(*st));
	if (!st)
		return -FI_ENOMEM;
	ep->stripe = st;
	for (uint32_t k = 0; k < n; k++) {
		ret = srd_rail_open(ep, devs[k], &st->rail[k]);
		if (ret) {
			FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
				"rail %u on %s: %s\n", k + 1, devs[k]->name,
				fi_strerror(-ret));
			srd_stripe_close(ep);
			return ret;
		}
	}
	st->count = n + 1;
	return 0;
}

static int srd_stripe_ep_init(struct srd_ep *ep)
{
	struct srd_settings s;

	srd_settings_default(&s);
	srd_settings_read_one("rails", &s);
	ep->rails_want = s.rails;
	/* Serves on every endpoint so that FI_OPT_WEFT_RAILS can add rails
	 * before fi_enable; without rails its hooks do nothing. */
	return srd_stripe_open(ep);
}

static void srd_stripe_ep_fini(struct srd_ep *ep)
{
	srd_stripe_close(ep);
}

void srd_stripe_qps_destroy(struct srd_ep *ep)
{
	struct srd_stripe_ep *st = ep->stripe;

	if (!st)
		return;
	for (uint32_t k = 0; k < SRD_RAILS_MAX - 1; k++) {
		if (st->rail[k].qp)
			srd_dev_qp_destroy(st->rail[k].qp);
		st->rail[k].qp = NULL;
	}
}

void srd_stripe_poll(struct srd_ep *ep)
{
	struct srd_stripe_ep *st = ep->stripe;

	for (uint32_t k = 0; k + 1 < st->count; k++)
		srd_dev_cq_poll(st->rail[k].cq);
}

int srd_stripe_get_rails(const struct srd_ep *ep)
{
	return ep->stripe ? (int)ep->stripe->count : 1;
}

int srd_stripe_set_rails(struct srd_ep *ep, int rails)
{
	if (rails < 1 || rails > SRD_RAILS_MAX) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"FI_OPT_WEFT_RAILS %d: 1..%d\n", rails, SRD_RAILS_MAX);
		return -FI_EINVAL;
	}
	if (ep->util.enabled) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"FI_OPT_WEFT_RAILS: only before fi_enable\n");
		return -FI_EOPNOTSUPP;
	}
	srd_stripe_close(ep);
	ep->rails_want = (uint32_t)rails;
	return srd_stripe_open(ep);
}

/* ---- handshake ----------------------------------------------------------- */

static void srd_stripe_hello_fill(struct srd_ep *ep, struct srd_peer *peer,
				  struct srd_pkt_hello *h)
{
	struct srd_pkt_rails *r = (struct srd_pkt_rails *)(h + 1);
	struct srd_stripe_ep *st = ep->stripe;
	struct srd_ep_name name;

	(void)peer;
	if (!st)
		return;
	h->features |= SRD_FEAT_RAILS;
	r->count = st->count - 1;
	r->reserved = 0;
	for (uint32_t k = 0; k < r->count; k++) {
		struct srd_pkt_rail rail;

		srd_ep_name_build(st->rail[k].qp, &name);
		rail.qpn = name.qpn;
		rail.qkey = name.qkey;
		memcpy(rail.gid, name.gid, sizeof(rail.gid));
		memcpy(&r->rail[k], &rail, sizeof(rail));
	}
}

static void srd_stripe_peer_free(struct srd_ep *ep, struct srd_peer *peer)
{
	struct srd_stripe_peer *sp = peer->stripe;

	if (!sp)
		return;
	for (uint32_t k = 0; k + 1 < sp->count; k++)
		srd_dev_ah_put(ep->stripe->rail[k].dev, sp->ah[k]);
	free(sp);
	peer->stripe = NULL;
}

/* The peer's rails (validated by srd_pkt_check_hello), as many as we
 * have. A peer's rails live as long as its name, so a second handshake
 * (after a failure) keeps what the first one learned. */
static void srd_stripe_hello_recv(struct srd_ep *ep, struct srd_peer *peer,
				  const struct srd_pkt_hello *h)
{
	const struct srd_pkt_rails *r = (const void *)(h + 1);
	struct srd_stripe_peer *sp;
	uint32_t n;

	if (!ep->stripe || peer->stripe || !(h->features & SRD_FEAT_RAILS))
		return;
	n = r->count + 1 < ep->stripe->count ? r->count + 1 : ep->stripe->count;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return;
	sp->count = 1;
	for (uint32_t k = 0; k + 1 < n; k++) {
		struct srd_pkt_rail rail;
		union ibv_gid gid;

		memcpy(&rail, &r->rail[k], sizeof(rail));
		memcpy(gid.raw, rail.gid, sizeof(gid.raw));
		if (srd_dev_ah_get(ep->stripe->rail[k].dev, &gid,
				   &sp->ah[k])) {
			WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_CTRL,
				"no address handle for rail %u of qpn %u: "
				"%u rails toward it\n", k + 1, peer->name.qpn,
				sp->count);
			break;
		}
		sp->dest[k].ah = sp->ah[k]->ibv_ah;
		sp->dest[k].qpn = rail.qpn;
		sp->dest[k].qkey = rail.qkey;
		sp->count++;
	}
	if (sp->count > 1)
		peer->stripe = sp;
	else
		free(sp);
}

/* ---- data ------------------------------------------------------------------ */

struct ibv_mr *srd_stripe_reg(struct srd_ep *ep, uint32_t k, void *buf,
			      size_t len, int access)
{
	struct srd_dev *dev = ep->stripe->rail[k - 1].dev;
	struct ibv_mr *mr = srd_dev_reg_mr(dev, buf, len, access);

	if (!mr)
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"registering %zu bytes on rail %u (%s): %s\n", len, k,
			dev->name, strerror(errno));
	return mr;
}

void srd_stripe_dereg(struct srd_ep *ep, uint32_t k, struct ibv_mr *mr)
{
	if (mr)
		srd_dev_dereg_mr(ep->stripe->rail[k - 1].dev, mr);
}

int srd_stripe_read(struct srd_ep *ep, struct srd_peer *peer, uint32_t k,
		    struct srd_wr_hdr *wr, uint32_t lkey, void *laddr,
		    size_t len, uint32_t rkey, uint64_t raddr)
{
	struct srd_dev_rdma r = {
		.op = SRD_DEV_RDMA_READ,
		.lkey = lkey, .laddr = laddr, .len = len,
		.rkey = rkey, .raddr = raddr,
	};
	struct srd_rail *rail;
	int ret;

	if (WEFT_UNLIKELY(!ep->stripe || !peer->stripe || !k ||
			  k >= peer->stripe->count))
		return -FI_EINVAL;
	rail = &ep->stripe->rail[k - 1];
	if (rail->sq_inflight >= rail->qp->sq_depth || !srd_peer_may_send(peer))
		return -FI_EAGAIN;
	ret = srd_dev_qp_post_rdma(rail->qp, (uintptr_t)wr, &r,
				   &peer->stripe->dest[k - 1]);
	if (ret) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_EP_DATA,
			"RDMA read of %zu bytes on rail %u from qpn %u: %s\n",
			len, k, peer->stripe->dest[k - 1].qpn, strerror(ret));
		return -FI_EIO;
	}
	rail->sq_inflight++;
	rail->reads++;
	return 0;
}

const struct srd_proto srd_proto_stripe = {
	.name = "stripe",
	.ep_init = srd_stripe_ep_init,
	.ep_fini = srd_stripe_ep_fini,
	.hello_fill = srd_stripe_hello_fill,
	.hello_recv = srd_stripe_hello_recv,
	.peer_free = srd_stripe_peer_free,
};
