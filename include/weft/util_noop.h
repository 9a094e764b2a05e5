/* SPDX-License-Identifier: MIT */
/*
 * Stubs for every op a provider does not support. Every ops table weft
 * installs is complete: an unsupported op points here and returns
 * -FI_ENOSYS (a few return what libfabric documents instead, noted below),
 * never NULL. The util_no_*_ops tables are complete tables of stubs;
 * util_ep_init installs them so a provider overrides only what it implements.
 */
#ifndef WEFT_UTIL_NOOP_H
#define WEFT_UTIL_NOOP_H

#include "weft/compat.h"
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_eq.h>

/* struct fi_ops */
int util_no_close(struct fid *fid);
int util_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int util_no_control(struct fid *fid, int command, void *arg);
int util_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		     void **ops, void *context);
int util_no_tostr(const struct fid *fid, char *buf, size_t len);
int util_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		    void *ops, void *context);

/* struct fi_ops_fabric */
int util_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_pep **pep, void *context);
int util_no_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		    struct fid_eq **eq, void *context);
int util_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		      struct fid_wait **waitset);
int util_no_trywait(struct fid_fabric *fabric, struct fid **fids, int count);
int util_no_domain2(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **dom, uint64_t flags, void *context);

/* struct fi_ops_domain */
int util_no_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		    struct fid_av **av, void *context);
int util_no_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		    struct fid_cq **cq, void *context);
int util_no_endpoint(struct fid_domain *domain, struct fi_info *info,
		     struct fid_ep **ep, void *context);
int util_no_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			struct fid_ep **sep, void *context);
int util_no_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		      struct fid_cntr **cntr, void *context);
int util_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		      struct fid_poll **pollset);
int util_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
		    struct fid_stx **stx, void *context);
int util_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context);
int util_no_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
			 enum fi_op op, struct fi_atomic_attr *attr,
			 uint64_t flags);
int util_no_query_collective(struct fid_domain *domain,
			     enum fi_collective_op coll,
			     struct fi_collective_attr *attr, uint64_t flags);
int util_no_endpoint2(struct fid_domain *domain, struct fi_info *info,
		      struct fid_ep **ep, uint64_t flags, void *context);

/* struct fi_ops_mr */
int util_no_mr_reg(struct fid *fid, const void *buf, size_t len,
		   uint64_t access, uint64_t offset, uint64_t requested_key,
		   uint64_t flags, struct fid_mr **mr, void *context);
int util_no_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		    uint64_t access, uint64_t offset, uint64_t requested_key,
		    uint64_t flags, struct fid_mr **mr, void *context);
int util_no_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		       uint64_t flags, struct fid_mr **mr);

/* struct fi_ops_av */
int util_no_av_insertsvc(struct fid_av *av, const char *node,
			 const char *service, fi_addr_t *fi_addr,
			 uint64_t flags, void *context);
int util_no_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt,
			 const char *service, size_t svccnt,
			 fi_addr_t *fi_addr, uint64_t flags, void *context);
int util_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		   struct fid_av_set **av_set, void *context);

/* struct fi_ops_ep; util_no_size_left returns -FI_ENOSYS as fi_endpoint(3)
 * allows for rx/tx_size_left. */
ssize_t util_no_cancel(fid_t fid, void *context);
int util_no_getopt(fid_t fid, int level, int optname, void *optval,
		   size_t *optlen);
int util_no_setopt(fid_t fid, int level, int optname, const void *optval,
		   size_t optlen);
int util_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		   struct fid_ep **tx_ep, void *context);
int util_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context);
ssize_t util_no_size_left(struct fid_ep *ep);

/* struct fi_ops_cm */
int util_no_setname(fid_t fid, void *addr, size_t addrlen);
int util_no_getname(fid_t fid, void *addr, size_t *addrlen);
int util_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int util_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		    size_t paramlen);
int util_no_listen(struct fid_pep *pep);
int util_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int util_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		   size_t paramlen);
int util_no_shutdown(struct fid_ep *ep, uint64_t flags);
int util_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		 struct fid_mc **mc, void *context);

/* Complete tables of stubs. */
extern const struct fi_ops util_no_fi_ops;
extern const struct fi_ops_ep util_no_ep_ops;
extern const struct fi_ops_cm util_no_cm_ops;
extern const struct fi_ops_msg util_no_msg_ops;
extern const struct fi_ops_tagged util_no_tagged_ops;
extern const struct fi_ops_rma util_no_rma_ops;
extern const struct fi_ops_atomic util_no_atomic_ops;
extern const struct fi_ops_collective util_no_collective_ops;

/* The fid structs hold non-const ops pointers; weft's tables are const and
 * never written through these pointers. */
#define UTIL_OPS(ops) ((void *)(ops))

#endif /* WEFT_UTIL_NOOP_H */
