/* SPDX-License-Identifier: MIT */
/*
 * fi_msg and fi_tagged: the ops tables, and receive posting. A receive
 * first takes the oldest unexpected message it matches, else joins the
 * posted queue; tagged receives also do FI_PEEK, FI_CLAIM, FI_DISCARD;
 * fi_cancel removes a posted receive.
 */
#include "weft/compat.h"
#include "srd_rdm.h"

#include <string.h>

static uint64_t srd_recv_comp_flags(uint64_t flags)
{
	return FI_RECV | ((flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
}

static void srd_recv_dest(struct srd_ep *ep, const struct iovec *iov,
			  size_t count, void *context, uint64_t flags,
			  struct srd_rx_dest *dest)
{
	memset(dest, 0, sizeof(*dest));
	dest->context = context;
	dest->comp_flags = srd_recv_comp_flags(flags);
	dest->iov_count = count;
	memcpy(dest->iov, iov, count * sizeof(*iov));
	dest->cap = util_iov_total(iov, count);
	dest->want_comp = util_ep_rx_wants_comp(&ep->util, flags);
}

static ssize_t srd_recv_take(struct srd_ep *ep, struct srd_unexp *ux,
			     const struct iovec *iov, size_t count,
			     void *context, uint64_t flags)
{
	struct srd_rx_dest dest;

	srd_recv_dest(ep, iov, count, context, flags, &dest);
	return srd_rx_deliver(ep, &dest, ux);
}

static void srd_unexp_discard(struct srd_ep *ep, struct srd_unexp *ux)
{
	struct srd_rx_dest dest;

	memset(&dest, 0, sizeof(dest));
	dest.discard = true;
	srd_rx_deliver(ep, &dest, ux);
}

static ssize_t srd_recv_post_mrecv(struct srd_ep *ep,
				   struct util_match_queue *q,
				   struct srd_rx_entry *rx)
{
	struct util_unexp_entry *uux;
	struct srd_rx_dest dest;
	bool done = false;

	util_match_post(q, &rx->util);
	while (!done && (uux = util_match_take_unexp(q, rx->util.src,
						     rx->util.tag,
						     rx->util.ignore))) {
		struct srd_unexp *ux = container_of(uux, struct srd_unexp,
						    util);

		srd_rx_dest_from_mrecv(ep, q, rx, ux->m.total_len, &dest,
				       &done);
		srd_rx_deliver(ep, &dest, ux);
	}
	if (done)
		util_pool_put(&ep->rx_pool, rx);
	return 0;
}

static uint64_t srd_unexp_cflags(const struct srd_unexp *ux, uint64_t *data)
{
	*data = 0;
	if (!(ux->m.flags & SRD_PKT_F_CQ_DATA))
		return FI_RECV | FI_TAGGED;
	*data = ux->m.cq_data;
	return FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA;
}

static ssize_t srd_recv_peek(struct srd_ep *ep, struct util_match_queue *q,
			     fi_addr_t src, uint64_t tag, uint64_t ignore,
			     void *context, uint64_t flags)
{
	struct util_unexp_entry *uux = util_match_peek(q, src, tag, ignore);
	struct srd_unexp *ux;
	uint64_t cflags, data, size, mtag;
	fi_addr_t msrc;

	if (!uux)
		return util_ep_rx_err(&ep->util, context, FI_RECV | FI_TAGGED,
				      FI_ENOMSG, 0, NULL, 0, 0, 0, tag,
				      FI_ADDR_NOTAVAIL);
	ux = container_of(uux, struct srd_unexp, util);
	cflags = srd_unexp_cflags(ux, &data);
	size = ux->m.total_len;
	mtag = ux->util.tag;
	msrc = ux->util.src;
	if (flags & FI_CLAIM) {
		util_match_claim(q, uux, context);
	} else if (flags & FI_DISCARD) {
		util_match_remove_unexp(q, uux);
		srd_unexp_discard(ep, ux);
	}
	return util_ep_rx_comp(&ep->util, context, cflags, size, NULL, data,
			       mtag, msrc);
}

static ssize_t srd_recv_claim(struct srd_ep *ep, struct util_match_queue *q,
			      const struct iovec *iov, size_t count,
			      void *context, uint64_t flags)
{
	struct util_unexp_entry *uux = util_match_take_claimed(q, context);
	struct srd_unexp *ux;
	uint64_t cflags, data, tag;
	fi_addr_t src;

	if (!uux) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"FI_CLAIM with a context that claimed nothing\n");
		return -FI_EINVAL;
	}
	ux = container_of(uux, struct srd_unexp, util);
	if (!(flags & FI_DISCARD))
		return srd_recv_take(ep, ux, iov, count, context, flags);
	cflags = srd_unexp_cflags(ux, &data);
	tag = ux->util.tag;
	src = ux->util.src;
	srd_unexp_discard(ep, ux);
	return util_ep_rx_comp(&ep->util, context, cflags, 0, NULL, data, tag,
			       src);
}

static ssize_t srd_recv_post_locked(struct srd_ep *ep,
				    const struct iovec *iov, size_t count,
				    fi_addr_t src, uint64_t tag,
				    uint64_t ignore, void *context,
				    uint64_t flags)
{
	struct util_match_queue *q = (flags & FI_TAGGED) ? &ep->tag_q :
							   &ep->msg_q;
	struct util_unexp_entry *uux;
	struct srd_rx_entry *rx;

	if (flags & FI_PEEK)
		return srd_recv_peek(ep, q, src, tag, ignore, context, flags);
	if (flags & FI_CLAIM)
		return srd_recv_claim(ep, q, iov, count, context, flags);
	rx = util_pool_get(&ep->rx_pool);
	if (!rx)
		return -FI_EAGAIN;
	rx->comp_flags = srd_recv_comp_flags(flags);
	if (flags & FI_MULTI_RECV) {
		util_rx_entry_init(&rx->util, src, tag, ignore, context, flags,
				   iov[0].iov_base, iov[0].iov_len);
		rx->iov_count = 0;
		return srd_recv_post_mrecv(ep, q, rx);
	}
	uux = util_match_take_unexp(q, src, tag, ignore);
	if (uux) {
		util_pool_put(&ep->rx_pool, rx);
		return srd_recv_take(ep, container_of(uux, struct srd_unexp,
						      util),
				     iov, count, context, flags);
	}
	util_rx_entry_init(&rx->util, src, tag, ignore, context, flags, NULL, 0);
	rx->iov_count = count;
	memcpy(rx->iov, iov, count * sizeof(*iov));
	util_match_post(q, &rx->util);
	return 0;
}

static ssize_t srd_recv_post(struct srd_ep *ep, const struct iovec *iov,
			     size_t count, fi_addr_t src, uint64_t tag,
			     uint64_t ignore, void *context, uint64_t flags)
{
	ssize_t ret;

	if (WEFT_UNLIKELY(count > SRD_IOV_MAX || (count && !iov) ||
			  ((flags & FI_MULTI_RECV) && count != 1))) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"bad receive iov count %zu\n", count);
		return -FI_EINVAL;
	}
	if (!(ep->util.caps & FI_DIRECTED_RECV))
		src = FI_ADDR_UNSPEC;
	util_lock_acquire(&ep->util.lock);
	ret = srd_recv_post_locked(ep, iov, count, src, tag, ignore, context,
				   flags);
	util_lock_release(&ep->util.lock);
	return ret;
}

ssize_t srd_ep_cancel(fid_t fid, void *context)
{
	struct srd_ep *ep = container_of(fid, struct srd_ep, util.ep_fid.fid);
	struct util_rx_entry *urx;
	struct srd_rx_entry *rx;

	util_lock_acquire(&ep->util.lock);
	urx = util_match_cancel(&ep->tag_q, context);
	if (!urx)
		urx = util_match_cancel(&ep->msg_q, context);
	if (!urx) {
		util_lock_release(&ep->util.lock);
		return -FI_ENOENT;
	}
	rx = container_of(urx, struct srd_rx_entry, util);
	util_ep_rx_err(&ep->util, context, rx->comp_flags, FI_ECANCELED, 0,
		       NULL, 0, 0, 0, urx->tag, FI_ADDR_NOTAVAIL);
	util_pool_put(&ep->rx_pool, rx);
	util_lock_release(&ep->util.lock);
	return 0;
}

/* ---- fi_ops_msg ----------------------------------------------------------- */

#define SRD_EP(fid) to_srd_ep(fid)
#define SRD_IOV1(buf, len) (struct iovec){ .iov_base = (buf), .iov_len = (len) }

static ssize_t srd_msg_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src, void *context)
{
	struct iovec iov = SRD_IOV1(buf, len);

	(void)desc;
	return srd_recv_post(SRD_EP(ep), &iov, 1, src, 0, 0, context,
			     SRD_EP(ep)->util.rx_op_flags);
}

static ssize_t srd_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     void *context)
{
	(void)desc;
	return srd_recv_post(SRD_EP(ep), iov, count, src, 0, 0, context,
			     SRD_EP(ep)->util.rx_op_flags);
}

static ssize_t srd_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	return srd_recv_post(SRD_EP(ep), msg->msg_iov, msg->iov_count,
			     msg->addr, 0, 0, msg->context,
			     flags & ~(uint64_t)FI_TAGGED);
}

static ssize_t srd_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, &desc, 1, dest, 0, 0, context,
			     SRD_EP(ep)->util.tx_op_flags);
}

static ssize_t srd_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     void *context)
{
	return srd_send_post(SRD_EP(ep), iov, desc, count, dest, 0, 0,
			     context, SRD_EP(ep)->util.tx_op_flags);
}

static ssize_t srd_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	return srd_send_post(SRD_EP(ep), msg->msg_iov, msg->desc,
			     msg->iov_count, msg->addr, 0, msg->data,
			     msg->context, flags & ~(uint64_t)FI_TAGGED);
}

static ssize_t srd_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, NULL, 1, dest, 0, 0, NULL,
			     FI_INJECT);
}

static ssize_t srd_msg_senddata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, void *context)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, &desc, 1, dest, 0, data,
			     context, SRD_EP(ep)->util.tx_op_flags |
			     FI_REMOTE_CQ_DATA);
}

static ssize_t srd_msg_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, NULL, 1, dest, 0, data, NULL,
			     FI_INJECT | FI_REMOTE_CQ_DATA);
}

const struct fi_ops_msg srd_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = srd_msg_recv,
	.recvv = srd_msg_recvv,
	.recvmsg = srd_msg_recvmsg,
	.send = srd_msg_send,
	.sendv = srd_msg_sendv,
	.sendmsg = srd_msg_sendmsg,
	.inject = srd_msg_inject,
	.senddata = srd_msg_senddata,
	.injectdata = srd_msg_injectdata,
};

/* ---- fi_ops_tagged ---------------------------------------------------------- */

static ssize_t srd_tag_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src, uint64_t tag,
			    uint64_t ignore, void *context)
{
	struct iovec iov = SRD_IOV1(buf, len);

	(void)desc;
	return srd_recv_post(SRD_EP(ep), &iov, 1, src, tag, ignore, context,
			     SRD_EP(ep)->util.rx_op_flags | FI_TAGGED);
}

static ssize_t srd_tag_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     uint64_t tag, uint64_t ignore, void *context)
{
	(void)desc;
	return srd_recv_post(SRD_EP(ep), iov, count, src, tag, ignore, context,
			     SRD_EP(ep)->util.rx_op_flags | FI_TAGGED);
}

static ssize_t srd_tag_recvmsg(struct fid_ep *ep,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{
	return srd_recv_post(SRD_EP(ep), msg->msg_iov, msg->iov_count,
			     msg->addr, msg->tag, msg->ignore, msg->context,
			     flags | FI_TAGGED);
}

static ssize_t srd_tag_send(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t tag,
			    void *context)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, &desc, 1, dest, tag, 0, context,
			     SRD_EP(ep)->util.tx_op_flags | FI_TAGGED);
}

static ssize_t srd_tag_sendv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t tag, void *context)
{
	return srd_send_post(SRD_EP(ep), iov, desc, count, dest, tag, 0,
			     context, SRD_EP(ep)->util.tx_op_flags | FI_TAGGED);
}

static ssize_t srd_tag_sendmsg(struct fid_ep *ep,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{
	return srd_send_post(SRD_EP(ep), msg->msg_iov, msg->desc,
			     msg->iov_count, msg->addr, msg->tag, msg->data,
			     msg->context, flags | FI_TAGGED);
}

static ssize_t srd_tag_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, NULL, 1, dest, tag, 0, NULL,
			     FI_INJECT | FI_TAGGED);
}

static ssize_t srd_tag_senddata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, &desc, 1, dest, tag, data,
			     context, SRD_EP(ep)->util.tx_op_flags |
			     FI_TAGGED | FI_REMOTE_CQ_DATA);
}

static ssize_t srd_tag_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest,
				  uint64_t tag)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, NULL, 1, dest, tag, data, NULL,
			     FI_INJECT | FI_TAGGED | FI_REMOTE_CQ_DATA);
}

const struct fi_ops_tagged srd_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = srd_tag_recv,
	.recvv = srd_tag_recvv,
	.recvmsg = srd_tag_recvmsg,
	.send = srd_tag_send,
	.sendv = srd_tag_sendv,
	.sendmsg = srd_tag_sendmsg,
	.inject = srd_tag_inject,
	.senddata = srd_tag_senddata,
	.injectdata = srd_tag_injectdata,
};
