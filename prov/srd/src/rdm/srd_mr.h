/* SPDX-License-Identifier: MIT */
/*
 * srd memory registration: every region is registered with the device
 * (lkey for local work requests, rkey for the peer's RDMA) AND kept in
 * util's mr_map, which the target of emulated RMA and atomics checks with
 * util_mr_check. With FI_MR_PROV_KEY the fi key IS the device rkey, so an
 * initiator can put the key it got from the application straight into an
 * RDMA work request; without it (application keys) RMA is emulated.
 */
#ifndef SRD_MR_H
#define SRD_MR_H

#include "weft/compat.h"
#include "srd_rdm.h"

#define SRD_MR_MAGIC 0x73726d72u	/* "srmr": fi_mr_desc sanity check */

struct srd_mr {
	struct fid_mr mr_fid;		/* what the application holds */
	uint32_t magic;
	uint32_t lkey;
	uint32_t rkey;
	bool hw_key;			/* mr_fid.key == rkey */
	struct ibv_mr *ibv;		/* NULL for an empty region */
	struct fid_mr *util;		/* entry of the domain's mr_map */
	struct srd_domain *domain;
};

extern const struct fi_ops_mr srd_mr_ops;

/* fi_mr_desc of an srd region -> its device keys; -FI_EINVAL for
 * anything else (NULL, a foreign descriptor). */
int srd_mr_desc_keys(void *desc, uint32_t *lkey, uint32_t *rkey);

/* Hardware RMA needs provider keys that are rkeys and virtual addresses. */
static inline bool srd_mr_mode_hw_ok(uint64_t mr_mode)
{
	return (mr_mode & FI_MR_PROV_KEY) && (mr_mode & FI_MR_VIRT_ADDR);
}

/* Register a local buffer for one operation (no desc given): slow path,
 * a device registration per call. NULL with *err set on failure. */
struct ibv_mr *srd_mr_reg_local(struct srd_dev *dev, void *buf,
				size_t len, int *err);
void srd_mr_dereg_local(struct srd_dev *dev, struct ibv_mr *mr);

#endif /* SRD_MR_H */
