/* SPDX-License-Identifier: MIT */
/*
 * fi_ops_msg and fi_ops_tagged: argument unpacking only. Sends go to
 * tcp_send_post / tcp_inject_post with the op flags the call implies;
 * receives go to util_srx.
 */
#include "weft/compat.h"

#include "tcp.h"

#define TCP_IOV1(buf, len) \
	(&(struct iovec){ .iov_base = (void *)(buf), .iov_len = (len) })

static inline struct util_srx *tcp_srx(struct fid_ep *ep_fid)
{
	return &to_tcp_ep(ep_fid)->srx;
}

static inline uint64_t tcp_txf(struct fid_ep *ep_fid)
{
	return to_tcp_ep(ep_fid)->util.tx_op_flags;
}

/* ---- untagged ------------------------------------------------------ */

static ssize_t tcp_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, void *context)
{
	(void)desc;
	return tcp_send_post(to_tcp_ep(ep), TCP_IOV1(buf, len), 1, dest, 0, 0,
			     context, tcp_txf(ep));
}

static ssize_t tcp_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     void *context)
{
	(void)desc;
	return tcp_send_post(to_tcp_ep(ep), iov, count, dest, 0, 0, context,
			     tcp_txf(ep));
}

static ssize_t tcp_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *m,
			       uint64_t flags)
{
	return tcp_send_post(to_tcp_ep(ep), m->msg_iov, m->iov_count, m->addr,
			     0, m->data, m->context,
			     util_ep_user_flags(flags) & ~FI_TAGGED);
}

static ssize_t tcp_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest)
{
	return tcp_inject_post(to_tcp_ep(ep), buf, len, dest, 0, 0, 0);
}

static ssize_t tcp_msg_senddata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, void *context)
{
	(void)desc;
	return tcp_send_post(to_tcp_ep(ep), TCP_IOV1(buf, len), 1, dest, 0,
			     data, context, tcp_txf(ep) | FI_REMOTE_CQ_DATA);
}

static ssize_t tcp_msg_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest)
{
	return tcp_inject_post(to_tcp_ep(ep), buf, len, dest, 0, data,
			       FI_REMOTE_CQ_DATA);
}

static ssize_t tcp_msg_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src, void *context)
{
	(void)desc;
	tcp_recv_resolve_src(to_tcp_ep(ep));
	return util_srx_recv(tcp_srx(ep), buf, len, src, context);
}

static ssize_t tcp_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     void *context)
{
	(void)desc;
	tcp_recv_resolve_src(to_tcp_ep(ep));
	return util_srx_recvv(tcp_srx(ep), iov, count, src, context);
}

static ssize_t tcp_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *m,
			       uint64_t flags)
{
	tcp_recv_resolve_src(to_tcp_ep(ep));
	return util_srx_recvmsg(tcp_srx(ep), m, flags);
}

const struct fi_ops_msg tcp_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = tcp_msg_recv,
	.recvv = tcp_msg_recvv,
	.recvmsg = tcp_msg_recvmsg,
	.send = tcp_msg_send,
	.sendv = tcp_msg_sendv,
	.sendmsg = tcp_msg_sendmsg,
	.inject = tcp_msg_inject,
	.senddata = tcp_msg_senddata,
	.injectdata = tcp_msg_injectdata,
};

/* ---- tagged --------------------------------------------------------- */

static ssize_t tcp_tag_send(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t tag,
			    void *context)
{
	(void)desc;
	return tcp_send_post(to_tcp_ep(ep), TCP_IOV1(buf, len), 1, dest, tag,
			     0, context, tcp_txf(ep) | FI_TAGGED);
}

static ssize_t tcp_tag_sendv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t tag, void *context)
{
	(void)desc;
	return tcp_send_post(to_tcp_ep(ep), iov, count, dest, tag, 0, context,
			     tcp_txf(ep) | FI_TAGGED);
}

static ssize_t tcp_tag_sendmsg(struct fid_ep *ep,
			       const struct fi_msg_tagged *m, uint64_t flags)
{
	return tcp_send_post(to_tcp_ep(ep), m->msg_iov, m->iov_count, m->addr,
			     m->tag, m->data, m->context,
			     util_ep_user_flags(flags) | FI_TAGGED);
}

static ssize_t tcp_tag_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest, uint64_t tag)
{
	return tcp_inject_post(to_tcp_ep(ep), buf, len, dest, tag, 0,
			       FI_TAGGED);
}

static ssize_t tcp_tag_senddata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, uint64_t tag, void *context)
{
	(void)desc;
	return tcp_send_post(to_tcp_ep(ep), TCP_IOV1(buf, len), 1, dest, tag,
			     data, context,
			     tcp_txf(ep) | FI_TAGGED | FI_REMOTE_CQ_DATA);
}

static ssize_t tcp_tag_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest,
				  uint64_t tag)
{
	return tcp_inject_post(to_tcp_ep(ep), buf, len, dest, tag, data,
			       FI_TAGGED | FI_REMOTE_CQ_DATA);
}

static ssize_t tcp_tag_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src, uint64_t tag,
			    uint64_t ignore, void *context)
{
	(void)desc;
	tcp_recv_resolve_src(to_tcp_ep(ep));
	return util_srx_trecv(tcp_srx(ep), buf, len, src, tag, ignore,
			      context);
}

static ssize_t tcp_tag_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     uint64_t tag, uint64_t ignore, void *context)
{
	(void)desc;
	tcp_recv_resolve_src(to_tcp_ep(ep));
	return util_srx_trecvv(tcp_srx(ep), iov, count, src, tag, ignore,
			       context);
}

static ssize_t tcp_tag_recvmsg(struct fid_ep *ep,
			       const struct fi_msg_tagged *m, uint64_t flags)
{
	tcp_recv_resolve_src(to_tcp_ep(ep));
	return util_srx_trecvmsg(tcp_srx(ep), m, flags);
}

const struct fi_ops_tagged tcp_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = tcp_tag_recv,
	.recvv = tcp_tag_recvv,
	.recvmsg = tcp_tag_recvmsg,
	.send = tcp_tag_send,
	.sendv = tcp_tag_sendv,
	.sendmsg = tcp_tag_sendmsg,
	.inject = tcp_tag_inject,
	.senddata = tcp_tag_senddata,
	.injectdata = tcp_tag_injectdata,
};
