/* SPDX-License-Identifier: MIT */
/*
 * The control path of a verbs device, as a table of function pointers.
 *
 * The srd provider never calls rdma-core by name: the exported functions of
 * libibverbs/libefa it needs are reached through this table, which is filled
 * from rdma-core (dlopen/dlvsym), from softsrd, or from a test mock. Every
 * member has the signature of the rdma-core function of the same name (the
 * API-level one: query_port takes a struct ibv_port_attr, query_device_ex is
 * the inline's), so the rdma-core filler can store the symbols directly or
 * through a one-line wrapper.
 *
 * The data path is NOT here: ibv_wr_*, ibv_post_recv, ibv_start_poll and
 * friends, ibv_wc_read_*, ibv_poll_cq are rdma-core header inlines that jump
 * through pointers inside the ibv objects, which every implementation fills.
 */
#ifndef WEFT_SRD_VERBS_H
#define WEFT_SRD_VERBS_H

#include "weft/compat.h"
#include <infiniband/verbs.h>
#include <infiniband/efadv.h>

struct srd_verbs_ops {
	/* "rdma-core", "softsrd", "mock", ...: for logs. */
	const char *name;

	struct ibv_device **(*get_device_list)(int *num_devices);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *device);
	struct ibv_context *(*open_device)(struct ibv_device *device);
	int (*close_device)(struct ibv_context *context);

	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr);
	int (*efadv_query_device)(struct ibv_context *ibvctx,
				  struct efadv_device_attr *attr,
				  uint32_t inlen);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_gid)(struct ibv_context *context, uint8_t port_num,
			 int index, union ibv_gid *gid);

	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 int access);
	int (*dereg_mr)(struct ibv_mr *mr);

	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *cq_attr);
	int (*destroy_cq)(struct ibv_cq *cq);

	struct ibv_qp *(*efadv_create_qp_ex)(struct ibv_context *ibvctx,
					     struct ibv_qp_init_attr_ex *attr_ex,
					     struct efadv_qp_init_attr *efa_attr,
					     uint32_t inlen);
	struct ibv_qp_ex *(*qp_to_qp_ex)(struct ibv_qp *qp);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*destroy_qp)(struct ibv_qp *qp);

	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
	int (*efadv_query_ah)(struct ibv_ah *ibvah, struct efadv_ah_attr *attr,
			      uint32_t inlen);
	int (*destroy_ah)(struct ibv_ah *ah);
};

/*
 * Values of newer rdma-core enums, so code built against rdma-core 44 can
 * still ask for (and softsrd can answer) what newer devices report. The
 * numbers are rdma-core's own.
 */
#if WEFT_HAVE_IN_ORDER_RETURN_CAPS
#define SRD_IN_ORDER_RETURN_CAPS IBV_QUERY_QP_DATA_IN_ORDER_RETURN_CAPS
#else
#define SRD_IN_ORDER_RETURN_CAPS (1U << 0)
#endif
#if WEFT_HAVE_IN_ORDER_WHOLE_MSG
#define SRD_IN_ORDER_WHOLE_MSG IBV_QUERY_QP_DATA_IN_ORDER_WHOLE_MSG
#else
#define SRD_IN_ORDER_WHOLE_MSG (1U << 0)
#endif
#if WEFT_HAVE_IN_ORDER_ALIGNED_128
#define SRD_IN_ORDER_ALIGNED_128 IBV_QUERY_QP_DATA_IN_ORDER_ALIGNED_128_BYTES
#else
#define SRD_IN_ORDER_ALIGNED_128 (1U << 1)
#endif
#if WEFT_HAVE_CAPS_RDMA_WRITE
#define SRD_EFADV_CAPS_RDMA_WRITE EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE
#else
#define SRD_EFADV_CAPS_RDMA_WRITE (1U << 3)
#endif

#endif /* WEFT_SRD_VERBS_H */
