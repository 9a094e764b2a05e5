/* SPDX-License-Identifier: MIT */
/*
 * Error completions -> (fi errno, prov_errno, text a user can act on).
 * The EFA vendor code says more than ibv_wc_status (it tells "never
 * answered" from "stopped answering" from "no receive posted"), so it wins
 * when the device gave a known one.
 */
#include "weft/compat.h"
#include "srd_dev.h"

#include <rdma/fi_errno.h>
#include <stdio.h>
#include <string.h>

struct srd_err_desc {
	int err;
	const char *text;
};

static const struct srd_err_desc srd_efa_io_desc[SRD_EFA_IO_MAX] = {
	[SRD_EFA_IO_OK] = { 0, "success" },
	[SRD_EFA_IO_FLUSHED] = { FI_ECANCELED,
		"operation flushed: the local queue pair was closed or went to the error state" },
	[SRD_EFA_IO_LOCAL_QP_INTERNAL] = { FI_EIO,
		"local device error: queue pair internal error" },
	[SRD_EFA_IO_LOCAL_UNSUPPORTED_OP] = { FI_EOPNOTSUPP,
		"operation not supported by the local device" },
	[SRD_EFA_IO_LOCAL_INVALID_AH] = { FI_EINVAL,
		"invalid local address handle for the peer (address removed or never inserted?)" },
	[SRD_EFA_IO_LOCAL_INVALID_LKEY] = { FI_EACCES,
		"local buffer not registered, or its key does not match the address" },
	[SRD_EFA_IO_LOCAL_BAD_LENGTH] = { FI_EMSGSIZE,
		"message longer than the device allows" },
	[SRD_EFA_IO_REMOTE_BAD_ADDRESS] = { FI_EACCES,
		"remote refused the RDMA access: key unknown, range outside the region, or access not granted" },
	[SRD_EFA_IO_REMOTE_ABORT] = { FI_ECONNABORTED,
		"remote aborted the transfer (peer closed or reset)" },
	[SRD_EFA_IO_REMOTE_BAD_DEST_QPN] = { FI_ENOTCONN,
		"remote endpoint gone: its queue pair does not exist or is in error (peer closed?)" },
	[SRD_EFA_IO_REMOTE_RNR] = { FI_ENORX,
		"receiver had no buffer posted (RNR), retries exhausted" },
	[SRD_EFA_IO_REMOTE_BAD_LENGTH] = { FI_ETRUNC,
		"receiver's posted buffer too short for the message" },
	[SRD_EFA_IO_REMOTE_BAD_STATUS] = { FI_EREMOTEIO,
		"remote device returned an unexpected status" },
	[SRD_EFA_IO_LOCAL_UNRESP_REMOTE] = { FI_ETIMEDOUT,
		"remote unresponsive: it answered before, then stopped (process died or host down?)" },
	[SRD_EFA_IO_REMOTE_UNKNOWN_PEER] = { FI_ENOTCONN,
		"remote does not know us: RDMA needs the peer to have inserted our address" },
	[SRD_EFA_IO_LOCAL_UNREACH_REMOTE] = { FI_EHOSTUNREACH,
		"remote unreachable: it never answered (wrong address, firewall/security group, or peer not started)" },
	[SRD_EFA_IO_REMOTE_FEATURE_MISMATCH] = { FI_EOPNOTSUPP,
		"remote device lacks a feature this operation needs" },
};

static const struct srd_err_desc srd_dev_wc_desc[] = {
	[IBV_WC_SUCCESS] = { 0, "success" },
	[IBV_WC_LOC_LEN_ERR] = { FI_EMSGSIZE,
		"local length error: message longer than the buffer or the device limit" },
	[IBV_WC_LOC_QP_OP_ERR] = { FI_EIO,
		"local queue pair operation error" },
	[IBV_WC_LOC_EEC_OP_ERR] = { FI_EIO, "local EE context operation error" },
	[IBV_WC_LOC_PROT_ERR] = { FI_EACCES,
		"local protection error: buffer not registered or registered without this access" },
	[IBV_WC_WR_FLUSH_ERR] = { FI_ECANCELED,
		"operation flushed: the local queue pair was closed or went to the error state" },
	[IBV_WC_MW_BIND_ERR] = { FI_EACCES, "memory window bind error" },
	[IBV_WC_BAD_RESP_ERR] = { FI_EREMOTEIO,
		"bad response from the remote device" },
	[IBV_WC_LOC_ACCESS_ERR] = { FI_EACCES,
		"local access error: buffer not registered with the needed access" },
	[IBV_WC_REM_INV_REQ_ERR] = { FI_EREMOTEIO,
		"remote rejected the request (length or operation invalid there)" },
	[IBV_WC_REM_ACCESS_ERR] = { FI_EACCES,
		"remote access error: bad remote key, out of the registered range, or no permission" },
	[IBV_WC_REM_OP_ERR] = { FI_EREMOTEIO,
		"remote could not complete the operation" },
	[IBV_WC_RETRY_EXC_ERR] = { FI_ETIMEDOUT,
		"transport retries exhausted: remote unreachable or not answering" },
	[IBV_WC_RNR_RETRY_EXC_ERR] = { FI_ENORX,
		"receiver had no buffer posted (RNR), retries exhausted" },
	[IBV_WC_LOC_RDD_VIOL_ERR] = { FI_EIO, "local RDD violation" },
	[IBV_WC_REM_INV_RD_REQ_ERR] = { FI_EREMOTEIO,
		"remote rejected the read request" },
	[IBV_WC_REM_ABORT_ERR] = { FI_ECONNABORTED,
		"remote aborted the operation" },
	[IBV_WC_INV_EECN_ERR] = { FI_EIO, "invalid EE context number" },
	[IBV_WC_INV_EEC_STATE_ERR] = { FI_EIO, "invalid EE context state" },
	[IBV_WC_FATAL_ERR] = { FI_EIO, "fatal local device error" },
	[IBV_WC_RESP_TIMEOUT_ERR] = { FI_ETIMEDOUT,
		"remote did not respond in time (peer down or unreachable)" },
	[IBV_WC_GENERAL_ERR] = { FI_EOTHER, "general device error" },
	[IBV_WC_TM_ERR] = { FI_EIO, "tag matching error" },
	[IBV_WC_TM_RNDV_INCOMPLETE] = { FI_EIO, "tag matching rendezvous incomplete" },
};

static bool srd_vendor_known(uint32_t vendor_err)
{
	return vendor_err > SRD_EFA_IO_OK && vendor_err < SRD_EFA_IO_MAX;
}

void srd_dev_wc_err_map(enum ibv_wc_status status, uint32_t vendor_err,
			struct srd_dev_wc_err *out)
{
	if (srd_vendor_known(vendor_err)) {
		out->err = srd_efa_io_desc[vendor_err].err;
		out->prov_errno = (int)vendor_err;
		return;
	}
	if ((unsigned int)status < WEFT_ARRAY_SIZE(srd_dev_wc_desc)) {
		out->err = srd_dev_wc_desc[status].err;
		out->prov_errno = SRD_PROV_ERRNO_WC_BASE + (int)status;
		return;
	}
	out->err = FI_EOTHER;
	out->prov_errno = SRD_PROV_ERRNO_WC_BASE + (int)status;
}

void srd_dev_wc_err_unmap(int prov_errno, struct srd_dev_wc *wc)
{
	int wc_max = SRD_PROV_ERRNO_WC_BASE + (int)WEFT_ARRAY_SIZE(srd_dev_wc_desc);

	wc->status = IBV_WC_GENERAL_ERR;
	wc->vendor_err = 0;
	if (prov_errno > 0 && srd_vendor_known((uint32_t)prov_errno))
		wc->vendor_err = (uint32_t)prov_errno;
	else if (prov_errno > SRD_PROV_ERRNO_WC_BASE && prov_errno < wc_max)
		wc->status = (enum ibv_wc_status)(prov_errno - SRD_PROV_ERRNO_WC_BASE);
}

bool srd_dev_wc_err_is_rnr(enum ibv_wc_status status, uint32_t vendor_err)
{
	if (srd_vendor_known(vendor_err))
		return vendor_err == SRD_EFA_IO_REMOTE_RNR;
	return status == IBV_WC_RNR_RETRY_EXC_ERR;
}

void srd_dev_cq_err_fill(const struct srd_dev_wc *wc, void *op_context,
			 uint64_t flags, struct fi_cq_err_entry *entry)
{
	struct srd_dev_wc_err m;

	srd_dev_wc_err_map(wc->status, wc->vendor_err, &m);
	entry->op_context = op_context;
	entry->flags = flags;
	entry->len = 0;
	entry->buf = NULL;
	entry->data = 0;
	entry->tag = 0;
	entry->olen = 0;
	entry->err = m.err;
	entry->prov_errno = m.prov_errno;
}

const char *srd_dev_prov_strerror(int prov_errno)
{
	int wc = prov_errno - SRD_PROV_ERRNO_WC_BASE;

	if (prov_errno == 0)
		return "no device error behind it: the provider found it (see err)";
	if (prov_errno == SRD_PROV_ERRNO_PEER_LOST)
		return "peer lost: it became unreachable or closed its endpoint while this transfer waited for it";
	if (prov_errno == SRD_PROV_ERRNO_WITHDRAWN)
		return "message withdrawn by its sender before it was read (the sender's send failed or its endpoint closed)";
	if (prov_errno > SRD_EFA_IO_OK && prov_errno < SRD_EFA_IO_MAX)
		return srd_efa_io_desc[prov_errno].text;
	if (wc >= 0 && (size_t)wc < WEFT_ARRAY_SIZE(srd_dev_wc_desc) &&
	    srd_dev_wc_desc[wc].text)
		return srd_dev_wc_desc[wc].text;
	return "unknown device error";
}

const char *srd_dev_err_format(int prov_errno, const char *peer, char *buf,
			       size_t len)
{
	const char *text = srd_dev_prov_strerror(prov_errno);

	if (!buf || !len)
		return text;
	if (peer && *peer)
		snprintf(buf, len, "peer %s: %s (prov_errno %d)", peer, text,
			 prov_errno);
	else
		snprintf(buf, len, "%s (prov_errno %d)", text, prov_errno);
	return buf;
}
