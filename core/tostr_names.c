/* SPDX-License-Identifier: MIT */
/*
 * Names of every enum value and flag fi_tostr knows, in the order libfabric
 * 1.17 prints them. A value missing here prints as "Unknown" (enums) or not
 * at all (flags), exactly like libfabric, so adding a name changes output:
 * check it against test_tostr_golden.sh.
 */
#include "weft/compat.h"

#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>

#include "core/tostr.h"

#define N(sym) { (uint64_t)(sym), #sym }
#define NAMES(var, prov_spec, ...)					\
	static const struct weft_tostr_name var##_entries[] = { __VA_ARGS__ }; \
	const struct weft_tostr_names var = {				\
		.entries = var##_entries,				\
		.count = WEFT_ARRAY_SIZE(var##_entries),		\
		.prov_specific = prov_spec,				\
	}

NAMES(weft_names_ep_type, 0,
      N(FI_EP_UNSPEC), N(FI_EP_MSG), N(FI_EP_DGRAM), N(FI_EP_RDM),
      N(FI_EP_SOCK_STREAM), N(FI_EP_SOCK_DGRAM));

NAMES(weft_names_caps, 0,
      N(FI_MSG), N(FI_RMA), N(FI_TAGGED), N(FI_ATOMIC), N(FI_MULTICAST),
      N(FI_COLLECTIVE),
      N(FI_READ), N(FI_WRITE), N(FI_RECV), N(FI_SEND), N(FI_REMOTE_READ),
      N(FI_REMOTE_WRITE),
      N(FI_MULTI_RECV), N(FI_REMOTE_CQ_DATA), N(FI_TRIGGER), N(FI_FENCE),
      N(FI_VARIABLE_MSG), N(FI_RMA_PMEM), N(FI_SOURCE_ERR), N(FI_LOCAL_COMM),
      N(FI_REMOTE_COMM), N(FI_SHARED_AV), N(FI_RMA_EVENT), N(FI_SOURCE),
      N(FI_NAMED_RX_CTX), N(FI_DIRECTED_RECV), N(FI_HMEM));

NAMES(weft_names_op_flags, 0,
      N(FI_MULTICAST),
      N(FI_MULTI_RECV), N(FI_REMOTE_CQ_DATA), N(FI_MORE), N(FI_PEEK),
      N(FI_TRIGGER), N(FI_FENCE),
      N(FI_COMPLETION), N(FI_INJECT), N(FI_INJECT_COMPLETE),
      N(FI_TRANSMIT_COMPLETE), N(FI_DELIVERY_COMPLETE), N(FI_MATCH_COMPLETE),
      N(FI_AFFINITY),
      N(FI_CLAIM), N(FI_DISCARD));

NAMES(weft_names_addr_format, 1,
      N(FI_FORMAT_UNSPEC), N(FI_SOCKADDR), N(FI_SOCKADDR_IN),
      N(FI_SOCKADDR_IN6), N(FI_SOCKADDR_IB), N(FI_ADDR_PSMX), N(FI_ADDR_GNI),
      N(FI_ADDR_BGQ), N(FI_ADDR_MLX), N(FI_ADDR_STR), N(FI_ADDR_PSMX2),
      N(FI_ADDR_IB_UD), N(FI_ADDR_EFA), N(FI_ADDR_PSMX3), N(FI_ADDR_OPX),
      N(FI_ADDR_CXI));

NAMES(weft_names_threading, 0,
      N(FI_THREAD_UNSPEC), N(FI_THREAD_SAFE), N(FI_THREAD_FID),
      N(FI_THREAD_DOMAIN), N(FI_THREAD_COMPLETION), N(FI_THREAD_ENDPOINT));

NAMES(weft_names_progress, 0,
      N(FI_PROGRESS_UNSPEC), N(FI_PROGRESS_AUTO), N(FI_PROGRESS_MANUAL));

/* FI_PROTO_MXM and FI_PROTO_MRAIL are deliberately absent: libfabric
 * prints them as "Unknown". */
NAMES(weft_names_protocol, 1,
      N(FI_PROTO_UNSPEC), N(FI_PROTO_RDMA_CM_IB_RC), N(FI_PROTO_IWARP),
      N(FI_PROTO_IB_UD), N(FI_PROTO_PSMX), N(FI_PROTO_UDP),
      N(FI_PROTO_SOCK_TCP), N(FI_PROTO_IWARP_RDM), N(FI_PROTO_IB_RDM),
      N(FI_PROTO_GNI), N(FI_PROTO_RXM), N(FI_PROTO_RXD), N(FI_PROTO_MLX),
      N(FI_PROTO_NETWORKDIRECT), N(FI_PROTO_PSMX2), N(FI_PROTO_SHM),
      N(FI_PROTO_RSTREAM), N(FI_PROTO_RDMA_CM_IB_XRC), N(FI_PROTO_EFA),
      N(FI_PROTO_PSMX3), N(FI_PROTO_RXM_TCP), N(FI_PROTO_OPX),
      N(FI_PROTO_CXI), N(FI_PROTO_XNET));

NAMES(weft_names_msg_order, 0,
      N(FI_ORDER_RAR), N(FI_ORDER_RAW), N(FI_ORDER_RAS), N(FI_ORDER_WAR),
      N(FI_ORDER_WAW), N(FI_ORDER_WAS), N(FI_ORDER_SAR), N(FI_ORDER_SAW),
      N(FI_ORDER_SAS),
      N(FI_ORDER_RMA_RAR), N(FI_ORDER_RMA_RAW), N(FI_ORDER_RMA_WAR),
      N(FI_ORDER_RMA_WAW),
      N(FI_ORDER_ATOMIC_RAR), N(FI_ORDER_ATOMIC_RAW), N(FI_ORDER_ATOMIC_WAR),
      N(FI_ORDER_ATOMIC_WAW));

NAMES(weft_names_mode, 0,
      N(FI_CONTEXT), N(FI_MSG_PREFIX), N(FI_ASYNC_IOV), N(FI_RX_CQ_DATA),
      N(FI_LOCAL_MR), N(FI_NOTIFY_FLAGS_ONLY), N(FI_RESTRICTED_COMP),
      N(FI_CONTEXT2), N(FI_BUFFERED_RECV));

NAMES(weft_names_resource_mgmt, 0,
      N(FI_RM_UNSPEC), N(FI_RM_DISABLED), N(FI_RM_ENABLED));

NAMES(weft_names_av_type, 0,
      N(FI_AV_UNSPEC), N(FI_AV_MAP), N(FI_AV_TABLE));

NAMES(weft_names_mr_mode, 0,
      N(FI_MR_BASIC), N(FI_MR_SCALABLE), N(FI_MR_LOCAL), N(FI_MR_RAW),
      N(FI_MR_VIRT_ADDR), N(FI_MR_ALLOCATED), N(FI_MR_PROV_KEY),
      N(FI_MR_MMU_NOTIFY), N(FI_MR_RMA_EVENT), N(FI_MR_ENDPOINT),
      N(FI_MR_HMEM), N(FI_MR_COLLECTIVE));

NAMES(weft_names_atomic_type, 0,
      N(FI_INT8), N(FI_UINT8), N(FI_INT16), N(FI_UINT16), N(FI_INT32),
      N(FI_UINT32), N(FI_INT64), N(FI_UINT64), N(FI_INT128), N(FI_UINT128),
      N(FI_FLOAT), N(FI_DOUBLE), N(FI_FLOAT_COMPLEX), N(FI_DOUBLE_COMPLEX),
      N(FI_LONG_DOUBLE), N(FI_LONG_DOUBLE_COMPLEX));

NAMES(weft_names_atomic_op, 0,
      N(FI_MIN), N(FI_MAX), N(FI_SUM), N(FI_PROD), N(FI_LOR), N(FI_LAND),
      N(FI_BOR), N(FI_BAND), N(FI_LXOR), N(FI_BXOR), N(FI_ATOMIC_READ),
      N(FI_ATOMIC_WRITE), N(FI_CSWAP), N(FI_CSWAP_NE), N(FI_CSWAP_LE),
      N(FI_CSWAP_LT), N(FI_CSWAP_GE), N(FI_CSWAP_GT), N(FI_MSWAP));

NAMES(weft_names_eq_event, 0,
      N(FI_NOTIFY), N(FI_CONNREQ), N(FI_CONNECTED), N(FI_SHUTDOWN),
      N(FI_MR_COMPLETE), N(FI_AV_COMPLETE), N(FI_JOIN_COMPLETE));

NAMES(weft_names_cq_event_flags, 0,
      N(FI_SEND), N(FI_RECV), N(FI_RMA), N(FI_ATOMIC), N(FI_MSG),
      N(FI_TAGGED), N(FI_READ), N(FI_WRITE), N(FI_REMOTE_READ),
      N(FI_REMOTE_WRITE), N(FI_REMOTE_CQ_DATA), N(FI_MULTI_RECV), N(FI_MORE),
      N(FI_CLAIM));

NAMES(weft_names_op_type, 0,
      N(FI_OP_RECV), N(FI_OP_SEND), N(FI_OP_TRECV), N(FI_OP_TSEND),
      N(FI_OP_READ), N(FI_OP_WRITE), N(FI_OP_ATOMIC), N(FI_OP_FETCH_ATOMIC),
      N(FI_OP_COMPARE_ATOMIC), N(FI_OP_CNTR_SET), N(FI_OP_CNTR_ADD));

NAMES(weft_names_collective_op, 0,
      N(FI_BARRIER), N(FI_BROADCAST), N(FI_ALLTOALL), N(FI_ALLREDUCE),
      N(FI_ALLGATHER), N(FI_REDUCE_SCATTER), N(FI_REDUCE), N(FI_SCATTER),
      N(FI_GATHER));

NAMES(weft_names_hmem_iface, 0,
      N(FI_HMEM_SYSTEM), N(FI_HMEM_CUDA), N(FI_HMEM_ROCR), N(FI_HMEM_ZE),
      N(FI_HMEM_NEURON), N(FI_HMEM_SYNAPSEAI));

NAMES(weft_names_cq_format, 0,
      N(FI_CQ_FORMAT_UNSPEC), N(FI_CQ_FORMAT_CONTEXT), N(FI_CQ_FORMAT_MSG),
      N(FI_CQ_FORMAT_DATA), N(FI_CQ_FORMAT_TAGGED));

/* Log levels and subsystems print as the words FI_LOG_LEVEL and
 * FI_LOG_SUBSYS accept, not as C identifiers. */
NAMES(weft_names_log_level, 0,
      { FI_LOG_WARN, "warn" }, { FI_LOG_TRACE, "trace" },
      { FI_LOG_INFO, "info" }, { FI_LOG_DEBUG, "debug" });

NAMES(weft_names_log_subsys, 0,
      { FI_LOG_CORE, "core" }, { FI_LOG_FABRIC, "fabric" },
      { FI_LOG_DOMAIN, "domain" }, { FI_LOG_EP_CTRL, "ep_ctrl" },
      { FI_LOG_EP_DATA, "ep_data" }, { FI_LOG_AV, "av" },
      { FI_LOG_CQ, "cq" }, { FI_LOG_EQ, "eq" }, { FI_LOG_MR, "mr" },
      { FI_LOG_CNTR, "cntr" });

void weft_tostr_enum(struct weft_strbuf *sb,
		     const struct weft_tostr_names *names, uint64_t value)
{
	size_t i;

	for (i = 0; i < names->count; i++) {
		if (names->entries[i].value == value) {
			weft_sb_printf(sb, "%s", names->entries[i].name);
			return;
		}
	}
	if (names->prov_specific && (value & FI_PROV_SPECIFIC))
		weft_sb_printf(sb, "Provider specific");
	else
		weft_sb_printf(sb, "Unknown");
}

void weft_tostr_flags(struct weft_strbuf *sb,
		      const struct weft_tostr_names *names, uint64_t flags)
{
	size_t i;

	for (i = 0; i < names->count; i++)
		if (flags & names->entries[i].value)
			weft_sb_printf(sb, "%s, ", names->entries[i].name);
	weft_sb_trim_comma(sb);
}

void weft_tostr_comp_order(struct weft_strbuf *sb, uint64_t flags)
{
	if ((flags & FI_ORDER_STRICT) == FI_ORDER_NONE)
		weft_sb_printf(sb, "FI_ORDER_NONE, ");
	else if ((flags & FI_ORDER_STRICT) == FI_ORDER_STRICT)
		weft_sb_printf(sb, "FI_ORDER_STRICT, ");
	if (flags & FI_ORDER_DATA)
		weft_sb_printf(sb, "FI_ORDER_DATA, ");
	weft_sb_trim_comma(sb);
}
