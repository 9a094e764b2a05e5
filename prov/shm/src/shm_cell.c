/* SPDX-License-Identifier: MIT */
/*
 * The checks of what a peer's cell carries, past the transport's header
 * check (shm_cell_hdr_ok): the descriptors of RTS, WRITE/READ, ATOMIC and
 * CTS against the cell's validated length and our limits, and an ACK's
 * status. Everything here was written by another process, which may
 * still be rewriting it: each field is read once, into local memory,
 * and only the local copy is checked and used. Functions of their
 * arguments only (shm.h says what each returns), so
 * test/fuzz_shm_cell.c fuzzes them alone; the handlers call them before
 * they use a byte of the payload.
 */
#include "weft/compat.h"

#include <string.h>

#include "shm.h"
#include "weft/util_atomic.h"

/* An RTS descriptor, into local memory. */
int shm_rts_parse(const uint8_t *payload, uint32_t len, struct shm_rts_local *r)
{
	const struct shm_rts *rts = (const void *)payload;
	uint64_t sum = 0;
	uint32_t i, cnt;

	if (len < sizeof(*rts))
		return -FI_EINVAL;
	cnt = rts->iov_cnt;
	if (cnt > SHM_IOV_LIMIT ||
	    len < sizeof(*rts) + cnt * sizeof(struct shm_iov))
		return -FI_EINVAL;
	r->total = rts->total;
	r->xfer_id = rts->xfer_id;
	r->iov_cnt = cnt;
	for (i = 0; i < cnt; i++) {
		r->iov[i].iov_base = (void *)(uintptr_t)rts->iov[i].addr;
		r->iov[i].iov_len = rts->iov[i].len;
		if (r->iov[i].iov_len > SHM_MAX_MSG_SIZE)
			return -FI_EINVAL;
		sum += r->iov[i].iov_len;
	}
	if (sum != r->total)
		return -FI_EINVAL;
	return 0;
}

int shm_rma_parse(const struct shm_cell_hdr *hdr, const uint8_t *payload,
		  struct shm_rma_req *req)
{
	size_t off = sizeof(req->hdr), i;
	const struct shm_iov *riov;
	uint64_t sum = 0;

	if (hdr->len < off)
		return FI_EINVAL;
	memcpy(&req->hdr, payload, off);
	if (req->hdr.rma_cnt == 0 || req->hdr.rma_cnt > SHM_IOV_LIMIT ||
	    req->hdr.iov_cnt > SHM_IOV_LIMIT ||
	    hdr->len < shm_rma_hdr_size(req->hdr.rma_cnt) +
		       req->hdr.iov_cnt * sizeof(struct shm_iov))
		return FI_EINVAL;
	memcpy(req->rma, payload + off, req->hdr.rma_cnt * sizeof(req->rma[0]));
	off += req->hdr.rma_cnt * sizeof(req->rma[0]);
	req->inline_data = payload + off;
	req->inline_len = hdr->len - off;
	riov = (const struct shm_iov *)(payload + off);
	for (i = 0; i < req->hdr.iov_cnt; i++) {
		struct shm_iov v;

		/* once: the length checked and summed is the one used */
		memcpy(&v, &riov[i], sizeof(v));
		req->remote[i].iov_base = (void *)(uintptr_t)v.addr;
		req->remote[i].iov_len = v.len;
		if (v.len > SHM_MAX_MSG_SIZE)
			return FI_EINVAL;
		sum += v.len;
	}
	switch (hdr->proto) {
	case SHM_COPY_INLINE:
		return 0;
	case SHM_COPY_CMA:
		return sum == req->hdr.total ? 0 : FI_EINVAL;
	case SHM_COPY_BOUNCE:
		/* Bytes in segments, none in the cell; a write names the
		 * initiator's transfer. */
		return req->hdr.iov_cnt || !req->hdr.total ||
		       req->hdr.total > SHM_MAX_MSG_SIZE ||
		       (hdr->op == SHM_OP_WRITE && !req->hdr.xfer_id) ?
		       FI_EINVAL : 0;
	default:
		return FI_EINVAL;
	}
}

int shm_amo_parse(const struct shm_cell_hdr *hdr, const uint8_t *payload,
		  uint32_t reply_max, struct shm_amo *amo, size_t *bytes)
{
	bool cmp = hdr->flags & SHM_F_COMPARE;
	size_t size;

	*bytes = 0;
	if (hdr->len < sizeof(*amo))
		return FI_EINVAL;
	memcpy(amo, payload, sizeof(*amo));
	size = util_atomic_datatype_size((enum fi_datatype)amo->datatype);
	if (!size || !amo->count ||
	    util_atomic_valid((enum fi_op)amo->op,
			      (enum fi_datatype)amo->datatype, amo->count))
		return FI_EOPNOTSUPP;
	if (hdr->len < sizeof(*amo) + size * amo->count * (cmp ? 2 : 1) ||
	    ((hdr->flags & SHM_F_FETCH) && size * amo->count > reply_max))
		return FI_EINVAL;
	*bytes = size * amo->count;
	return 0;
}

int shm_cts_parse(uint64_t tx_len, const struct shm_cell_hdr *hdr,
		  const struct shm_cts *cts, uint64_t *off, uint64_t *len,
		  struct iovec *theirs)
{
	uint64_t sum = 0;
	uint32_t i, cnt;

	if (hdr->len < sizeof(*cts))
		return -FI_EINVAL;
	cnt = cts->iov_cnt;
	*off = cts->off;
	*len = cts->len;
	if (cnt > SHM_IOV_LIMIT ||
	    hdr->len < sizeof(*cts) + cnt * sizeof(struct shm_iov) ||
	    *off > tx_len || *len > tx_len - *off)
		return -FI_EINVAL;
	for (i = 0; i < cnt; i++) {
		theirs[i].iov_base = (void *)(uintptr_t)cts->iov[i].addr;
		theirs[i].iov_len = cts->iov[i].len;
		if (theirs[i].iov_len > SHM_MAX_MSG_SIZE)
			return -FI_EINVAL;
		sum += theirs[i].iov_len;
	}
	return sum == *len ? (int)cnt : -FI_EINVAL;
}

/* ACK status is a positive FI_E* code from another process: anything out
 * of range becomes FI_EIO. */
int shm_wire_status(uint32_t status)
{
	if (status == 0)
		return 0;
	return status < FI_ERRNO_MAX ? (int)status : FI_EIO;
}
