/* SPDX-License-Identifier: MIT */
/*
 * One place for what configure found. Every HAVE_* here is 0 or 1, never
 * undefined, so code tests it with #if and the compiler catches typos
 * (-Wundef). Newer rdma-core features are used only where these say so.
 */
#ifndef WEFT_COMPAT_H
#define WEFT_COMPAT_H

#include "config.h"

#ifndef ENABLE_DEBUG
#error "config.h must define ENABLE_DEBUG (0 or 1)"
#endif

#define WEFT_HAVE_EFADV_QP_FLAGS          HAVE_EFADV_QP_FLAGS
#define WEFT_HAVE_EFADV_QP_SL             HAVE_EFADV_QP_SL
#define WEFT_HAVE_EFADV_MAX_RDMA_SIZE     HAVE_EFADV_MAX_RDMA_SIZE
#define WEFT_HAVE_UNSOLICITED_WRITE_RECV  HAVE_DECL_EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV
#define WEFT_HAVE_IN_ORDER_RETURN_CAPS    HAVE_DECL_IBV_QUERY_QP_DATA_IN_ORDER_RETURN_CAPS
#define WEFT_HAVE_IN_ORDER_ALIGNED_128    HAVE_DECL_IBV_QUERY_QP_DATA_IN_ORDER_ALIGNED_128_BYTES
#define WEFT_HAVE_IN_ORDER_WHOLE_MSG      HAVE_DECL_IBV_QUERY_QP_DATA_IN_ORDER_WHOLE_MSG
#define WEFT_HAVE_CAPS_RDMA_READ          HAVE_DECL_EFADV_DEVICE_ATTR_CAPS_RDMA_READ
#define WEFT_HAVE_CAPS_RNR_RETRY          HAVE_DECL_EFADV_DEVICE_ATTR_CAPS_RNR_RETRY
#define WEFT_HAVE_CAPS_CQ_WITH_SGID       HAVE_DECL_EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID
#define WEFT_HAVE_CAPS_RDMA_WRITE         HAVE_DECL_EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE
#define WEFT_HAVE_CAPS_UNSOLICITED_WRITE_RECV \
	HAVE_DECL_EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV

/* Endpoint option of libfabric 1.18+ that 1.17's headers lack, with the
 * value newer headers give it (after FI_OPT_CUDA_API_PERMITTED = 10):
 * bool, false keeps an endpoint off shared memory (NCCL plugins set it). */
#ifndef FI_OPT_SHARED_MEMORY_PERMITTED
#define FI_OPT_SHARED_MEMORY_PERMITTED 11
#endif

#define WEFT_EXPORT __attribute__((visibility("default")))
#define WEFT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define WEFT_UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifndef container_of
#include <stddef.h>
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#define WEFT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define WEFT_STR_(x) #x
#define WEFT_STR(x) WEFT_STR_(x)

#endif /* WEFT_COMPAT_H */
