/* SPDX-License-Identifier: MIT */
/*
 * A mock verbs device for the srd unit tests: a complete srd_verbs_ops table
 * whose every entry counts its calls, can be made to fail (the k-th call
 * onwards, with an errno), and records what it was asked. The ibv_cq_ex and
 * ibv_qp_ex it hands out carry mock function pointers, so the rdma-core
 * inlines (ibv_start_poll, ibv_poll_cq, ibv_wc_read_*) run on them.
 * Every object it creates is counted live until destroyed, so a test can
 * assert a clean unwind without ASan.
 */
#ifndef SRD_MOCK_H
#define SRD_MOCK_H

#include "weft/compat.h"
#include "weft/srd_verbs.h"

#include <stdbool.h>
#include <stdint.h>

enum mock_op {
	MOCK_GET_DEVICE_LIST,
	MOCK_FREE_DEVICE_LIST,
	MOCK_GET_DEVICE_NAME,
	MOCK_OPEN_DEVICE,
	MOCK_CLOSE_DEVICE,
	MOCK_QUERY_DEVICE_EX,
	MOCK_EFADV_QUERY_DEVICE,
	MOCK_QUERY_PORT,
	MOCK_QUERY_GID,
	MOCK_ALLOC_PD,
	MOCK_DEALLOC_PD,
	MOCK_REG_MR,
	MOCK_DEREG_MR,
	MOCK_CREATE_CQ_EX,
	MOCK_DESTROY_CQ,
	MOCK_CREATE_QP,
	MOCK_QP_TO_QP_EX,
	MOCK_MODIFY_QP,
	MOCK_QUERY_QP,
	MOCK_QUERY_IN_ORDER,
	MOCK_DESTROY_QP,
	MOCK_CREATE_AH,
	MOCK_QUERY_AH,
	MOCK_DESTROY_AH,
	/* data path, on the fake CQ */
	MOCK_START_POLL,
	MOCK_NEXT_POLL,
	MOCK_END_POLL,
	MOCK_POLL_CQ,
	MOCK_OP_COUNT,
};

#define MOCK_MAX_MODIFY 8
#define MOCK_MAX_QP_CREATE 16
#define MOCK_MAX_WC 1024

/* One scripted completion. */
struct mock_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t imm_host;		/* host order; stored big endian */
	unsigned int wc_flags;
};

struct mock_state {
	/* what the device answers */
	int ndev;
	const char *dev_names[4];
	struct ibv_device_attr_ex attr_ex;
	struct efadv_device_attr efa;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int in_order_send;		/* returned by query_qp_data_in_order */
	int in_order_write;
	bool cq_ex_no_start_poll;	/* create_cq_ex gives a CQ without it */
	/* create_ah gives up the CPU first, as a kernel call would: opens
	 * the window in which an unlocked AH table races */
	bool create_ah_yields;

	/* failure injection: calls numbered from 1; fail_at 0 = never */
	unsigned int fail_at[MOCK_OP_COUNT];
	unsigned int fail_count[MOCK_OP_COUNT];	/* 0 = every call from fail_at */
	int fail_errno[MOCK_OP_COUNT];

	/* what the provider did */
	unsigned int calls[MOCK_OP_COUNT];
	int live;			/* objects created and not destroyed */
	struct ibv_qp_init_attr_ex qp_attr[MOCK_MAX_QP_CREATE];
	struct efadv_qp_init_attr qp_efa[MOCK_MAX_QP_CREATE];
	uint32_t qp_efa_inlen[MOCK_MAX_QP_CREATE];
	unsigned int n_qp_create;
	struct ibv_qp_attr modify_attr[MOCK_MAX_MODIFY];
	int modify_mask[MOCK_MAX_MODIFY];
	unsigned int n_modify;
	uint32_t in_order_flags[4];
	enum ibv_wr_opcode in_order_op[4];
	unsigned int n_in_order;
	struct ibv_cq_init_attr_ex cq_attr;
	struct ibv_ah_attr ah_attr;
	int poll_cq_n;			/* num_entries of the last ibv_poll_cq */

	/* the fake CQ's scripted completions */
	struct mock_wc wc[MOCK_MAX_WC];
	unsigned int wc_head;
	unsigned int wc_tail;
	bool in_poll;			/* between start_poll and end_poll */
	bool poll_protocol_error;	/* next/end without start, nested start */
};

extern struct mock_state mock;
extern const struct srd_verbs_ops mock_verbs_ops;

/* A device like a current EFA: RDMA read, RNR retry, 8 KiB MTU. */
void mock_reset(void);
void mock_fail(enum mock_op op, unsigned int at, unsigned int count, int err);
void mock_push_wc(const struct mock_wc *wc);
unsigned int mock_wc_pending(void);

/* Objects the mock hands out (tests wrap a CQ without srd_dev_cq_open). */
struct ibv_context *mock_context(void);
struct ibv_cq_ex *mock_cq_ex_new(struct ibv_context *ctx);
void mock_cq_ex_free(struct ibv_cq_ex *cqx);

#endif /* SRD_MOCK_H */
