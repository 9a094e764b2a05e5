/* SPDX-License-Identifier: MIT */
/*
 * Data-transfer tables of an endpoint that is not enabled yet: every
 * operation fails with -FI_EOPBADSTATE and a log line (fi_endpoint(3): an
 * endpoint must be enabled before data transfers). A provider installs
 * them at fi_endpoint and its real tables in its enable callback, so the
 * check costs the enabled endpoint nothing.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_ep.h"
#include "weft/util_domain.h"

static ssize_t util_ep_off(struct fid_ep *ep_fid, const char *op)
{
	struct util_ep *ep = to_util_ep(ep_fid);

	FI_WARN(util_domain_prov(ep->domain), FI_LOG_EP_DATA,
		"%s on an endpoint that is not enabled: call fi_enable after binding its AV and CQ\n",
		op);
	return -FI_EOPBADSTATE;
}

/* ---- fi_ops_msg ---- */

static ssize_t off_msg_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src, void *context)
{
	return util_ep_off(ep, "fi_recv");
}

static ssize_t off_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     void *context)
{
	return util_ep_off(ep, "fi_recvv");
}

static ssize_t off_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	return util_ep_off(ep, "fi_recvmsg");
}

static ssize_t off_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, void *context)
{
	return util_ep_off(ep, "fi_send");
}

static ssize_t off_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     void *context)
{
	return util_ep_off(ep, "fi_sendv");
}

static ssize_t off_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	return util_ep_off(ep, "fi_sendmsg");
}

static ssize_t off_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest)
{
	return util_ep_off(ep, "fi_inject");
}

static ssize_t off_msg_senddata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, void *context)
{
	return util_ep_off(ep, "fi_senddata");
}

static ssize_t off_msg_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest)
{
	return util_ep_off(ep, "fi_injectdata");
}

const struct fi_ops_msg util_ep_off_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = off_msg_recv,
	.recvv = off_msg_recvv,
	.recvmsg = off_msg_recvmsg,
	.send = off_msg_send,
	.sendv = off_msg_sendv,
	.sendmsg = off_msg_sendmsg,
	.inject = off_msg_inject,
	.senddata = off_msg_senddata,
	.injectdata = off_msg_injectdata,
};

/* ---- fi_ops_tagged ---- */

static ssize_t off_tag_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src, uint64_t tag,
			    uint64_t ignore, void *context)
{
	return util_ep_off(ep, "fi_trecv");
}

static ssize_t off_tag_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     uint64_t tag, uint64_t ignore, void *context)
{
	return util_ep_off(ep, "fi_trecvv");
}

static ssize_t off_tag_recvmsg(struct fid_ep *ep,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{
	return util_ep_off(ep, "fi_trecvmsg");
}

static ssize_t off_tag_send(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t tag,
			    void *context)
{
	return util_ep_off(ep, "fi_tsend");
}

static ssize_t off_tag_sendv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t tag, void *context)
{
	return util_ep_off(ep, "fi_tsendv");
}

static ssize_t off_tag_sendmsg(struct fid_ep *ep,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{
	return util_ep_off(ep, "fi_tsendmsg");
}

static ssize_t off_tag_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest, uint64_t tag)
{
	return util_ep_off(ep, "fi_tinject");
}

static ssize_t off_tag_senddata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, uint64_t tag, void *context)
{
	return util_ep_off(ep, "fi_tsenddata");
}

static ssize_t off_tag_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest,
				  uint64_t tag)
{
	return util_ep_off(ep, "fi_tinjectdata");
}

const struct fi_ops_tagged util_ep_off_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = off_tag_recv,
	.recvv = off_tag_recvv,
	.recvmsg = off_tag_recvmsg,
	.send = off_tag_send,
	.sendv = off_tag_sendv,
	.sendmsg = off_tag_sendmsg,
	.inject = off_tag_inject,
	.senddata = off_tag_senddata,
	.injectdata = off_tag_injectdata,
};

/* ---- fi_ops_rma ---- */

static ssize_t off_rma_read(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src, uint64_t addr,
			    uint64_t key, void *context)
{
	return util_ep_off(ep, "fi_read");
}

static ssize_t off_rma_readv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     uint64_t addr, uint64_t key, void *context)
{
	return util_ep_off(ep, "fi_readv");
}

static ssize_t off_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			       uint64_t flags)
{
	return util_ep_off(ep, "fi_readmsg");
}

static ssize_t off_rma_write(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, fi_addr_t dest, uint64_t addr,
			     uint64_t key, void *context)
{
	return util_ep_off(ep, "fi_write");
}

static ssize_t off_rma_writev(struct fid_ep *ep, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest,
			      uint64_t addr, uint64_t key, void *context)
{
	return util_ep_off(ep, "fi_writev");
}

static ssize_t off_rma_writemsg(struct fid_ep *ep,
				const struct fi_msg_rma *msg, uint64_t flags)
{
	return util_ep_off(ep, "fi_writemsg");
}

static ssize_t off_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest, uint64_t addr, uint64_t key)
{
	return util_ep_off(ep, "fi_inject_write");
}

static ssize_t off_rma_writedata(struct fid_ep *ep, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest, uint64_t addr, uint64_t key,
				 void *context)
{
	return util_ep_off(ep, "fi_writedata");
}

static ssize_t off_rma_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest,
				  uint64_t addr, uint64_t key)
{
	return util_ep_off(ep, "fi_inject_writedata");
}

const struct fi_ops_rma util_ep_off_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = off_rma_read,
	.readv = off_rma_readv,
	.readmsg = off_rma_readmsg,
	.write = off_rma_write,
	.writev = off_rma_writev,
	.writemsg = off_rma_writemsg,
	.inject = off_rma_inject,
	.writedata = off_rma_writedata,
	.injectdata = off_rma_injectdata,
};

/* ---- fi_ops_atomic (the *valid queries work before fi_enable) ---- */

static ssize_t off_amo_write(struct fid_ep *ep, const void *buf, size_t count,
			     void *desc, fi_addr_t dest, uint64_t addr,
			     uint64_t key, enum fi_datatype datatype,
			     enum fi_op op, void *context)
{
	return util_ep_off(ep, "fi_atomic");
}

static ssize_t off_amo_writev(struct fid_ep *ep, const struct fi_ioc *iov,
			      void **desc, size_t count, fi_addr_t dest,
			      uint64_t addr, uint64_t key,
			      enum fi_datatype datatype, enum fi_op op,
			      void *context)
{
	return util_ep_off(ep, "fi_atomicv");
}

static ssize_t off_amo_writemsg(struct fid_ep *ep,
				const struct fi_msg_atomic *msg, uint64_t flags)
{
	return util_ep_off(ep, "fi_atomicmsg");
}

static ssize_t off_amo_inject(struct fid_ep *ep, const void *buf, size_t count,
			      fi_addr_t dest, uint64_t addr, uint64_t key,
			      enum fi_datatype datatype, enum fi_op op)
{
	return util_ep_off(ep, "fi_inject_atomic");
}

static ssize_t off_amo_readwrite(struct fid_ep *ep, const void *buf,
				 size_t count, void *desc, void *result,
				 void *result_desc, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	return util_ep_off(ep, "fi_fetch_atomic");
}

static ssize_t off_amo_readwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				  void **desc, size_t count,
				  struct fi_ioc *resultv, void **result_desc,
				  size_t result_count, fi_addr_t dest,
				  uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op,
				  void *context)
{
	return util_ep_off(ep, "fi_fetch_atomicv");
}

static ssize_t off_amo_readwritemsg(struct fid_ep *ep,
				    const struct fi_msg_atomic *msg,
				    struct fi_ioc *resultv,
				    void **result_desc, size_t result_count,
				    uint64_t flags)
{
	return util_ep_off(ep, "fi_fetch_atomicmsg");
}

static ssize_t off_amo_compwrite(struct fid_ep *ep, const void *buf,
				 size_t count, void *desc, const void *compare,
				 void *compare_desc, void *result,
				 void *result_desc, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	return util_ep_off(ep, "fi_compare_atomic");
}

static ssize_t off_amo_compwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				  void **desc, size_t count,
				  const struct fi_ioc *comparev,
				  void **compare_desc, size_t compare_count,
				  struct fi_ioc *resultv, void **result_desc,
				  size_t result_count, fi_addr_t dest,
				  uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op,
				  void *context)
{
	return util_ep_off(ep, "fi_compare_atomicv");
}

static ssize_t off_amo_compwritemsg(struct fid_ep *ep,
				    const struct fi_msg_atomic *msg,
				    const struct fi_ioc *comparev,
				    void **compare_desc, size_t compare_count,
				    struct fi_ioc *resultv,
				    void **result_desc, size_t result_count,
				    uint64_t flags)
{
	return util_ep_off(ep, "fi_compare_atomicmsg");
}

const struct fi_ops_atomic util_ep_off_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = off_amo_write,
	.writev = off_amo_writev,
	.writemsg = off_amo_writemsg,
	.inject = off_amo_inject,
	.readwrite = off_amo_readwrite,
	.readwritev = off_amo_readwritev,
	.readwritemsg = off_amo_readwritemsg,
	.compwrite = off_amo_compwrite,
	.compwritev = off_amo_compwritev,
	.compwritemsg = off_amo_compwritemsg,
	.writevalid = util_ep_atomic_writevalid,
	.readwritevalid = util_ep_atomic_readwritevalid,
	.compwritevalid = util_ep_atomic_compwritevalid,
};
