/* SPDX-License-Identifier: MIT */
/*
 * fi_msg and fi_tagged: the ops tables. Receives are util_srx's (posting,
 * FI_PEEK/FI_CLAIM/FI_DISCARD, multi-recv, cancel); sends go to
 * srd_send_post.
 */
#include "weft/compat.h"
#include "srd_rdm.h"

ssize_t srd_ep_cancel(fid_t fid, void *context)
{
	struct srd_ep *ep = container_of(fid, struct srd_ep, util.ep_fid.fid);

	return util_srx_cancel(&ep->srx, context);
}

/* ---- fi_ops_msg ----------------------------------------------------------- */

#define SRD_EP(fid) to_srd_ep(fid)
#define SRD_IOV1(buf, len) (struct iovec){ .iov_base = (buf), .iov_len = (len) }

static ssize_t srd_msg_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src, void *context)
{
	(void)desc;
	return util_srx_recv(&SRD_EP(ep)->srx, buf, len, src, context);
}

static ssize_t srd_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     void *context)
{
	(void)desc;
	return util_srx_recvv(&SRD_EP(ep)->srx, iov, count, src, context);
}

static ssize_t srd_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	return util_srx_recvmsg(&SRD_EP(ep)->srx, msg, flags);
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
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&SRD_EP(ep)->util, "fi_sendmsg");
	return srd_send_post(SRD_EP(ep), msg->msg_iov, msg->desc,
			     msg->iov_count, msg->addr, 0, msg->data,
			     msg->context,
			     util_ep_user_flags(flags) & ~(uint64_t)FI_TAGGED);
}

static ssize_t srd_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, NULL, 1, dest, 0, 0, NULL,
			     FI_INJECT | UTIL_OP_NO_COMP);
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
			     FI_INJECT | FI_REMOTE_CQ_DATA |
			     UTIL_OP_NO_COMP);
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
	(void)desc;
	return util_srx_trecv(&SRD_EP(ep)->srx, buf, len, src, tag, ignore,
			      context);
}

static ssize_t srd_tag_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     uint64_t tag, uint64_t ignore, void *context)
{
	(void)desc;
	return util_srx_trecvv(&SRD_EP(ep)->srx, iov, count, src, tag, ignore,
			       context);
}

static ssize_t srd_tag_recvmsg(struct fid_ep *ep,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{
	return util_srx_trecvmsg(&SRD_EP(ep)->srx, msg, flags);
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
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&SRD_EP(ep)->util, "fi_tsendmsg");
	return srd_send_post(SRD_EP(ep), msg->msg_iov, msg->desc,
			     msg->iov_count, msg->addr, msg->tag, msg->data,
			     msg->context,
			     util_ep_user_flags(flags) | FI_TAGGED);
}

static ssize_t srd_tag_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = SRD_IOV1((void *)buf, len);

	return srd_send_post(SRD_EP(ep), &iov, NULL, 1, dest, tag, 0, NULL,
			     FI_INJECT | FI_TAGGED | UTIL_OP_NO_COMP);
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
			     FI_INJECT | FI_TAGGED | FI_REMOTE_CQ_DATA |
			     UTIL_OP_NO_COMP);
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
