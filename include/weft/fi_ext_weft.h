/* SPDX-License-Identifier: MIT */
/*
 * weft's provider-specific endpoint options (fi_getopt/fi_setopt, level
 * FI_OPT_ENDPOINT), in a weft-private range chosen the way rdma/fi_ext.h
 * asks: a 12-bit provider code shifted by 16, options negative.
 *
 * The in-order options answer the question NCCL-style LL/LL128 protocols
 * ask before they poll flag words in their own receive buffers: when data
 * of ONE send (into a posted receive buffer) or of ONE RDMA write lands,
 * does it become visible to CPU loads in increasing address order — for
 * the whole message, or within each aligned 128-byte line? (Across
 * messages nothing is ordered on SRD; FI_ORDER_SAS is the provider's
 * matching order, not a memory ordering.) The answer comes from the device
 * (ibv_query_qp_data_in_order) and holds only for memory not registered
 * with relaxed ordering.
 *
 * This header has no dependency on weft internals: applications may copy
 * it. srd implements every option; other providers answer -FI_ENOPROTOOPT.
 */
#ifndef WEFT_FI_EXT_WEFT_H
#define WEFT_FI_EXT_WEFT_H

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#define FI_PROV_SPECIFIC_WEFT (0x3ef << 16)

/* Bits of FI_OPT_WEFT_SEND_INORDER / FI_OPT_WEFT_WRITE_INORDER. */
#define WEFT_INORDER_NONE 0
#define WEFT_INORDER_WHOLE_MSG (1 << 0)	/* the whole message, in order */
#define WEFT_INORDER_ALIGNED_128 (1 << 1)	/* each aligned 128-byte line */

/* Values of FI_OPT_WEFT_POLL_MODE. */
#define WEFT_POLL_COMPLETION 0	/* messages found by polling the CQ */
#define WEFT_POLL_DATA 1	/* small messages found by polling memory */

enum {
	/* int, get only: WEFT_INORDER_* bits for sends into receive
	 * buffers. */
	FI_OPT_WEFT_SEND_INORDER = -FI_PROV_SPECIFIC_WEFT,
	/* int, get only: WEFT_INORDER_* bits for RDMA writes. */
	FI_OPT_WEFT_WRITE_INORDER,
	/* bool: get = the LL128 condition for sends holds (whole-message
	 * order implies it); set true = require it (-FI_EOPNOTSUPP when the
	 * device cannot), set false always succeeds. Same for writes. */
	FI_OPT_WEFT_SEND_IN_ORDER_ALIGNED_128_BYTES,
	FI_OPT_WEFT_WRITE_IN_ORDER_ALIGNED_128_BYTES,
	/* int, get only: WEFT_POLL_* the endpoint uses. */
	FI_OPT_WEFT_POLL_MODE,
	/* uint64_t, get only: messages the endpoint sent to peers of its
	 * host through shm (srd's peer path; 0 while it is off). */
	FI_OPT_WEFT_SHM_SENDS,
	/* int (srd): devices the endpoint stripes long messages over. get:
	 * rails open; set (before fi_enable): 1..4, as FI_SRD_RAILS. */
	FI_OPT_WEFT_RAILS,
};

#endif /* WEFT_FI_EXT_WEFT_H */
