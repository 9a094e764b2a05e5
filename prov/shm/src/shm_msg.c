/* SPDX-License-Identifier: MIT */
/*
 * fi_ops_msg and fi_ops_tagged: argument unpacking only; the work is in
 * shm_send.c and util_srx (receives).
 */
#include "weft/compat.h"

#include "shm.h"

static ssize_t shm_msg_send(struct fid_ep *ep_fid, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)desc;
	return shm_send_post(ep, &iov, 1, dest, 0, 0, context,
			     ep->util.tx_op_flags);
}

static ssize_t shm_msg_sendv(struct fid_ep *ep_fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);

	(void)desc;
	return shm_send_post(ep, iov, count, dest, 0, 0, context,
			     ep->util.tx_op_flags);
}

static ssize_t shm_msg_sendmsg(struct fid_ep *ep_fid, const struct fi_msg *msg,
			       uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_shm_ep(ep_fid)->util, "fi_sendmsg");
	return shm_send_post(to_shm_ep(ep_fid), msg->msg_iov, msg->iov_count,
			     msg->addr, 0, msg->data, msg->context,
			     util_ep_user_flags(flags) & ~FI_TAGGED);
}

static ssize_t shm_msg_inject(struct fid_ep *ep_fid, const void *buf,
			      size_t len, fi_addr_t dest)
{
	return shm_inject_post(to_shm_ep(ep_fid), buf, len, dest, 0, 0,
			       FI_INJECT);
}

static ssize_t shm_msg_senddata(struct fid_ep *ep_fid, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)desc;
	return shm_send_post(ep, &iov, 1, dest, 0, data, context,
			     ep->util.tx_op_flags | FI_REMOTE_CQ_DATA);
}

static ssize_t shm_msg_injectdata(struct fid_ep *ep_fid, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest)
{
	return shm_inject_post(to_shm_ep(ep_fid), buf, len, dest, 0, data,
			       FI_INJECT | FI_REMOTE_CQ_DATA);
}

static ssize_t shm_msg_recv(struct fid_ep *ep_fid, void *buf, size_t len,
			    void *desc, fi_addr_t src, void *context)
{
	(void)desc;
	return util_srx_recv(&to_shm_ep(ep_fid)->srx, buf, len, src, context);
}

static ssize_t shm_msg_recvv(struct fid_ep *ep_fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     void *context)
{
	(void)desc;
	return util_srx_recvv(&to_shm_ep(ep_fid)->srx, iov, count, src,
			      context);
}

static ssize_t shm_msg_recvmsg(struct fid_ep *ep_fid, const struct fi_msg *msg,
			       uint64_t flags)
{
	return util_srx_recvmsg(&to_shm_ep(ep_fid)->srx, msg, flags);
}

const struct fi_ops_msg shm_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = shm_msg_recv,
	.recvv = shm_msg_recvv,
	.recvmsg = shm_msg_recvmsg,
	.send = shm_msg_send,
	.sendv = shm_msg_sendv,
	.sendmsg = shm_msg_sendmsg,
	.inject = shm_msg_inject,
	.senddata = shm_msg_senddata,
	.injectdata = shm_msg_injectdata,
};

static ssize_t shm_tag_send(struct fid_ep *ep_fid, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t tag,
			    void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)desc;
	return shm_send_post(ep, &iov, 1, dest, tag, 0, context,
			     ep->util.tx_op_flags | FI_TAGGED);
}

static ssize_t shm_tag_sendv(struct fid_ep *ep_fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t tag, void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);

	(void)desc;
	return shm_send_post(ep, iov, count, dest, tag, 0, context,
			     ep->util.tx_op_flags | FI_TAGGED);
}

static ssize_t shm_tag_sendmsg(struct fid_ep *ep_fid,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (WEFT_UNLIKELY(!msg))
		return util_ep_null_msg(&to_shm_ep(ep_fid)->util,
					"fi_tsendmsg");
	return shm_send_post(to_shm_ep(ep_fid), msg->msg_iov, msg->iov_count,
			     msg->addr, msg->tag, msg->data, msg->context,
			     util_ep_user_flags(flags) | FI_TAGGED);
}

static ssize_t shm_tag_inject(struct fid_ep *ep_fid, const void *buf,
			      size_t len, fi_addr_t dest, uint64_t tag)
{
	return shm_inject_post(to_shm_ep(ep_fid), buf, len, dest, tag, 0,
			       FI_INJECT | FI_TAGGED);
}

static ssize_t shm_tag_senddata(struct fid_ep *ep_fid, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, uint64_t tag, void *context)
{
	struct shm_ep *ep = to_shm_ep(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)desc;
	return shm_send_post(ep, &iov, 1, dest, tag, data, context,
			     ep->util.tx_op_flags | FI_TAGGED |
			     FI_REMOTE_CQ_DATA);
}

static ssize_t shm_tag_injectdata(struct fid_ep *ep_fid, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest,
				  uint64_t tag)
{
	return shm_inject_post(to_shm_ep(ep_fid), buf, len, dest, tag, data,
			       FI_INJECT | FI_TAGGED | FI_REMOTE_CQ_DATA);
}

static ssize_t shm_tag_recv(struct fid_ep *ep_fid, void *buf, size_t len,
			    void *desc, fi_addr_t src, uint64_t tag,
			    uint64_t ignore, void *context)
{
	(void)desc;
	return util_srx_trecv(&to_shm_ep(ep_fid)->srx, buf, len, src, tag,
			      ignore, context);
}

static ssize_t shm_tag_recvv(struct fid_ep *ep_fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     uint64_t tag, uint64_t ignore, void *context)
{
	(void)desc;
	return util_srx_trecvv(&to_shm_ep(ep_fid)->srx, iov, count, src, tag,
			       ignore, context);
}

static ssize_t shm_tag_recvmsg(struct fid_ep *ep_fid,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{
	return util_srx_trecvmsg(&to_shm_ep(ep_fid)->srx, msg, flags);
}

const struct fi_ops_tagged shm_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = shm_tag_recv,
	.recvv = shm_tag_recvv,
	.recvmsg = shm_tag_recvmsg,
	.send = shm_tag_send,
	.sendv = shm_tag_sendv,
	.sendmsg = shm_tag_sendmsg,
	.inject = shm_tag_inject,
	.senddata = shm_tag_senddata,
	.injectdata = shm_tag_injectdata,
};
