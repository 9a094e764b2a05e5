/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/util_noop.h"

int util_no_close(struct fid *fid)
{
	return -FI_ENOSYS;
}

int util_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int util_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int util_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		     void **ops, void *context)
{
	return -FI_ENOSYS;
}

int util_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	return -FI_ENOSYS;
}

int util_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		    void *ops, void *context)
{
	return -FI_ENOSYS;
}

int util_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_pep **pep, void *context)
{
	return -FI_ENOSYS;
}

int util_no_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		    struct fid_eq **eq, void *context)
{
	return -FI_ENOSYS;
}

int util_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		      struct fid_wait **waitset)
{
	return -FI_ENOSYS;
}

int util_no_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	return -FI_ENOSYS;
}

int util_no_domain2(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **dom, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int util_no_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		    struct fid_av **av, void *context)
{
	return -FI_ENOSYS;
}

int util_no_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		    struct fid_cq **cq, void *context)
{
	return -FI_ENOSYS;
}

int util_no_endpoint(struct fid_domain *domain, struct fi_info *info,
		     struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

int util_no_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			struct fid_ep **sep, void *context)
{
	return -FI_ENOSYS;
}

int util_no_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		      struct fid_cntr **cntr, void *context)
{
	return -FI_ENOSYS;
}

int util_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		      struct fid_poll **pollset)
{
	return -FI_ENOSYS;
}

int util_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
		    struct fid_stx **stx, void *context)
{
	return -FI_ENOSYS;
}

int util_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

int util_no_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
			 enum fi_op op, struct fi_atomic_attr *attr,
			 uint64_t flags)
{
	return -FI_ENOSYS;
}

int util_no_query_collective(struct fid_domain *domain,
			     enum fi_collective_op coll,
			     struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

int util_no_endpoint2(struct fid_domain *domain, struct fi_info *info,
		      struct fid_ep **ep, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int util_no_mr_reg(struct fid *fid, const void *buf, size_t len,
		   uint64_t access, uint64_t offset, uint64_t requested_key,
		   uint64_t flags, struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}

int util_no_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		    uint64_t access, uint64_t offset, uint64_t requested_key,
		    uint64_t flags, struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}

int util_no_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		       uint64_t flags, struct fid_mr **mr)
{
	return -FI_ENOSYS;
}

int util_no_av_insertsvc(struct fid_av *av, const char *node,
			 const char *service, fi_addr_t *fi_addr,
			 uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int util_no_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt,
			 const char *service, size_t svccnt,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int util_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		   struct fid_av_set **av_set, void *context)
{
	return -FI_ENOSYS;
}

ssize_t util_no_cancel(fid_t fid, void *context)
{
	return -FI_ENOSYS;
}

int util_no_getopt(fid_t fid, int level, int optname, void *optval,
		   size_t *optlen)
{
	return -FI_ENOSYS;
}

int util_no_setopt(fid_t fid, int level, int optname, const void *optval,
		   size_t optlen)
{
	return -FI_ENOSYS;
}

int util_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		   struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

int util_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

ssize_t util_no_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

int util_no_setname(fid_t fid, void *addr, size_t addrlen)
{
	return -FI_ENOSYS;
}

int util_no_getname(fid_t fid, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int util_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int util_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		    size_t paramlen)
{
	return -FI_ENOSYS;
}

int util_no_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

int util_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int util_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		   size_t paramlen)
{
	return -FI_ENOSYS;
}

int util_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

int util_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		 struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}
/* Data-path stubs, only reachable through the tables below. */
static ssize_t no_msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			   fi_addr_t src_addr, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src_addr,
			    void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			      uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			   void *desc, fi_addr_t dest_addr, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest_addr,
			    void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			      uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest_addr)
{
	return -FI_ENOSYS;
}

static ssize_t no_msg_senddata(struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, uint64_t data, fi_addr_t dest_addr,
			       void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_msg_injectdata(struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data,
				 fi_addr_t dest_addr)
{
	return -FI_ENOSYS;
}

static ssize_t no_tagged_recv(struct fid_ep *ep, void *buf, size_t len,
			      void *desc, fi_addr_t src_addr, uint64_t tag,
			      uint64_t ignore, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_tagged_recvv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t src_addr,
			       uint64_t tag, uint64_t ignore, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_tagged_recvmsg(struct fid_ep *ep,
				 const struct fi_msg_tagged *msg,
				 uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_tagged_send(struct fid_ep *ep, const void *buf, size_t len,
			      void *desc, fi_addr_t dest_addr, uint64_t tag,
			      void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_tagged_sendv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t dest_addr,
			       uint64_t tag, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_tagged_sendmsg(struct fid_ep *ep,
				 const struct fi_msg_tagged *msg,
				 uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_tagged_inject(struct fid_ep *ep, const void *buf, size_t len,
				fi_addr_t dest_addr, uint64_t tag)
{
	return -FI_ENOSYS;
}

static ssize_t no_tagged_senddata(struct fid_ep *ep, const void *buf,
				  size_t len, void *desc, uint64_t data,
				  fi_addr_t dest_addr, uint64_t tag,
				  void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_tagged_injectdata(struct fid_ep *ep, const void *buf,
				    size_t len, uint64_t data,
				    fi_addr_t dest_addr, uint64_t tag)
{
	return -FI_ENOSYS;
}

static ssize_t no_rma_read(struct fid_ep *ep, void *buf, size_t len,
			   void *desc, fi_addr_t src_addr, uint64_t addr,
			   uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_rma_readv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src_addr,
			    uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			      uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_rma_write(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest_addr, uint64_t addr,
			    uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_rma_writev(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			       uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	return -FI_ENOSYS;
}

static ssize_t no_rma_writedata(struct fid_ep *ep, const void *buf, size_t len,
				void *desc, uint64_t data, fi_addr_t dest_addr,
				uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_rma_injectdata(struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_write(struct fid_ep *ep, const void *buf,
			       size_t count, void *desc, fi_addr_t dest_addr,
			       uint64_t addr, uint64_t key,
			       enum fi_datatype datatype, enum fi_op op,
			       void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov,
				void **desc, size_t count,
				fi_addr_t dest_addr, uint64_t addr,
				uint64_t key, enum fi_datatype datatype,
				enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_writemsg(struct fid_ep *ep,
				  const struct fi_msg_atomic *msg,
				  uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_inject(struct fid_ep *ep, const void *buf,
				size_t count, fi_addr_t dest_addr,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_readwrite(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc, void *result,
				   void *result_desc, fi_addr_t dest_addr,
				   uint64_t addr, uint64_t key,
				   enum fi_datatype datatype, enum fi_op op,
				   void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_readwritev(struct fid_ep *ep,
				    const struct fi_ioc *iov, void **desc,
				    size_t count, struct fi_ioc *resultv,
				    void **result_desc, size_t result_count,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype,
				    enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_readwritemsg(struct fid_ep *ep,
				      const struct fi_msg_atomic *msg,
				      struct fi_ioc *resultv,
				      void **result_desc, size_t result_count,
				      uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_compwrite(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc,
				   const void *compare, void *compare_desc,
				   void *result, void *result_desc,
				   fi_addr_t dest_addr, uint64_t addr,
				   uint64_t key, enum fi_datatype datatype,
				   enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_compwritev(struct fid_ep *ep,
				    const struct fi_ioc *iov, void **desc,
				    size_t count,
				    const struct fi_ioc *comparev,
				    void **compare_desc, size_t compare_count,
				    struct fi_ioc *resultv, void **result_desc,
				    size_t result_count, fi_addr_t dest_addr,
				    uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op,
				    void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_atomic_compwritemsg(struct fid_ep *ep,
				      const struct fi_msg_atomic *msg,
				      const struct fi_ioc *comparev,
				      void **compare_desc,
				      size_t compare_count,
				      struct fi_ioc *resultv,
				      void **result_desc, size_t result_count,
				      uint64_t flags)
{
	return -FI_ENOSYS;
}

static int no_atomic_valid(struct fid_ep *ep, enum fi_datatype datatype,
			   enum fi_op op, size_t *count)
{
	return -FI_ENOSYS;
}

static ssize_t no_coll_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
			       void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_coll_broadcast(struct fid_ep *ep, void *buf, size_t count,
				 void *desc, fi_addr_t coll_addr,
				 fi_addr_t root_addr,
				 enum fi_datatype datatype, uint64_t flags,
				 void *context)
{
	return -FI_ENOSYS;
}

/* alltoall and allgather share a signature. */
static ssize_t no_coll_all(struct fid_ep *ep, const void *buf, size_t count,
			   void *desc, void *result, void *result_desc,
			   fi_addr_t coll_addr, enum fi_datatype datatype,
			   uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

/* allreduce and reduce_scatter share a signature. */
static ssize_t no_coll_reduce_all(struct fid_ep *ep, const void *buf,
				  size_t count, void *desc, void *result,
				  void *result_desc, fi_addr_t coll_addr,
				  enum fi_datatype datatype, enum fi_op op,
				  uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_coll_reduce(struct fid_ep *ep, const void *buf,
			      size_t count, void *desc, void *result,
			      void *result_desc, fi_addr_t coll_addr,
			      fi_addr_t root_addr, enum fi_datatype datatype,
			      enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

/* scatter and gather share a signature. */
static ssize_t no_coll_rooted(struct fid_ep *ep, const void *buf,
			      size_t count, void *desc, void *result,
			      void *result_desc, fi_addr_t coll_addr,
			      fi_addr_t root_addr, enum fi_datatype datatype,
			      uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_coll_msg(struct fid_ep *ep,
			   const struct fi_msg_collective *msg,
			   struct fi_ioc *resultv, void **result_desc,
			   size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_coll_barrier2(struct fid_ep *ep, fi_addr_t coll_addr,
				uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

const struct fi_ops util_no_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_no_close,
	.bind = util_no_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

const struct fi_ops_ep util_no_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = util_no_cancel,
	.getopt = util_no_getopt,
	.setopt = util_no_setopt,
	.tx_ctx = util_no_tx_ctx,
	.rx_ctx = util_no_rx_ctx,
	.rx_size_left = util_no_size_left,
	.tx_size_left = util_no_size_left,
};

const struct fi_ops_cm util_no_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = util_no_setname,
	.getname = util_no_getname,
	.getpeer = util_no_getpeer,
	.connect = util_no_connect,
	.listen = util_no_listen,
	.accept = util_no_accept,
	.reject = util_no_reject,
	.shutdown = util_no_shutdown,
	.join = util_no_join,
};

const struct fi_ops_msg util_no_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = no_msg_recv,
	.recvv = no_msg_recvv,
	.recvmsg = no_msg_recvmsg,
	.send = no_msg_send,
	.sendv = no_msg_sendv,
	.sendmsg = no_msg_sendmsg,
	.inject = no_msg_inject,
	.senddata = no_msg_senddata,
	.injectdata = no_msg_injectdata,
};

const struct fi_ops_tagged util_no_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = no_tagged_recv,
	.recvv = no_tagged_recvv,
	.recvmsg = no_tagged_recvmsg,
	.send = no_tagged_send,
	.sendv = no_tagged_sendv,
	.sendmsg = no_tagged_sendmsg,
	.inject = no_tagged_inject,
	.senddata = no_tagged_senddata,
	.injectdata = no_tagged_injectdata,
};

const struct fi_ops_rma util_no_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = no_rma_read,
	.readv = no_rma_readv,
	.readmsg = no_rma_readmsg,
	.write = no_rma_write,
	.writev = no_rma_writev,
	.writemsg = no_rma_writemsg,
	.inject = no_rma_inject,
	.writedata = no_rma_writedata,
	.injectdata = no_rma_injectdata,
};

const struct fi_ops_atomic util_no_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = no_atomic_write,
	.writev = no_atomic_writev,
	.writemsg = no_atomic_writemsg,
	.inject = no_atomic_inject,
	.readwrite = no_atomic_readwrite,
	.readwritev = no_atomic_readwritev,
	.readwritemsg = no_atomic_readwritemsg,
	.compwrite = no_atomic_compwrite,
	.compwritev = no_atomic_compwritev,
	.compwritemsg = no_atomic_compwritemsg,
	.writevalid = no_atomic_valid,
	.readwritevalid = no_atomic_valid,
	.compwritevalid = no_atomic_valid,
};

const struct fi_ops_collective util_no_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = no_coll_barrier,
	.broadcast = no_coll_broadcast,
	.alltoall = no_coll_all,
	.allreduce = no_coll_reduce_all,
	.allgather = no_coll_all,
	.reduce_scatter = no_coll_reduce_all,
	.reduce = no_coll_reduce,
	.scatter = no_coll_rooted,
	.gather = no_coll_rooted,
	.msg = no_coll_msg,
	.barrier2 = no_coll_barrier2,
};
