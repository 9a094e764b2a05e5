/* SPDX-License-Identifier: MIT */
/*
 * fi_mr_reg/regv/regattr for srd (see srd_mr.h): a device registration
 * plus util's map entry, keyed by the device rkey under FI_MR_PROV_KEY.
 */
#include "weft/compat.h"
#include "srd_mr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SRD_MR_ACCESS_REMOTE (FI_REMOTE_READ | FI_REMOTE_WRITE)

static struct srd_mr *to_srd_mr(struct fid *fid)
{
	return container_of(fid, struct srd_mr, mr_fid.fid);
}

/* Local write always: receives and RDMA reads land in registered memory
 * whatever the application asked for; remote rights only as asked (0
 * means everything, fi_mr(3)). */
static int srd_mr_ibv_access(uint64_t access)
{
	int a = IBV_ACCESS_LOCAL_WRITE;

	if (!access)
		access = SRD_MR_ACCESS_REMOTE;
	if (access & FI_REMOTE_READ)
		a |= IBV_ACCESS_REMOTE_READ;
	if (access & FI_REMOTE_WRITE)
		a |= IBV_ACCESS_REMOTE_WRITE;
	return a;
}

static int srd_mr_close(struct fid *fid)
{
	struct srd_mr *mr = to_srd_mr(fid);
	int ret;

	ret = fi_close(&mr->util->fid);
	if (ret)
		return ret;
	if (mr->ibv)
		srd_dev_dereg_mr(mr->domain->dev, mr->ibv);
	mr->magic = 0;
	free(mr);
	return 0;
}

static const struct fi_ops srd_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = srd_mr_close,
	.bind = util_no_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static int srd_mr_dev_reg(struct srd_mr *mr, const struct fi_mr_attr *attr)
{
	struct srd_dev *dev = mr->domain->dev;
	void *base = attr->mr_iov[0].iov_base;
	size_t len = attr->mr_iov[0].iov_len;

	/* Devices refuse empty regions; an empty one needs no keys. */
	if (!len)
		return 0;
	mr->ibv = srd_dev_reg_mr(dev, base, len,
				 srd_mr_ibv_access(attr->access));
	if (!mr->ibv) {
		FI_WARN(&srd_prov, FI_LOG_MR,
			"mr: device registration of %p+%zu failed: %s\n", base,
			len, strerror(errno));
		return errno == ENOMEM ? -FI_ENOMEM : -FI_EINVAL;
	}
	mr->lkey = mr->ibv->lkey;
	mr->rkey = mr->ibv->rkey;
	return 0;
}

static int srd_mr_key(struct srd_mr *mr)
{
	struct util_domain *ud = &mr->domain->util;
	int ret;

	if (!mr->ibv || !(ud->mr_mode & FI_MR_PROV_KEY))
		return 0;
	ret = util_mr_rekey(&ud->mr_map, to_util_mr(mr->util), mr->rkey);
	if (ret) {
		FI_WARN(&srd_prov, FI_LOG_MR,
			"mr: device rkey 0x%x already a key of this domain\n",
			mr->rkey);
		return ret;
	}
	mr->hw_key = true;
	return 0;
}

static int srd_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			  uint64_t flags, struct fid_mr **mr_fid)
{
	struct srd_mr *mr;
	int ret;

	if (!fid || fid->fclass != FI_CLASS_DOMAIN || !attr || !mr_fid) {
		FI_WARN(&srd_prov, FI_LOG_MR,
			"mr: needs a domain, attr and mr pointer\n");
		return -FI_EINVAL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->domain = container_of(fid, struct srd_domain, util.domain_fid.fid);
	/* util validates the attributes (one iovec, access, iface, ...). */
	ret = util_mr_regattr(fid, attr, flags, &mr->util);
	if (ret)
		goto free_mr;
	ret = srd_mr_dev_reg(mr, attr);
	if (ret)
		goto close_util;
	ret = srd_mr_key(mr);
	if (ret)
		goto dereg;
	mr->magic = SRD_MR_MAGIC;
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = attr->context;
	mr->mr_fid.fid.ops = UTIL_OPS(&srd_mr_fi_ops);
	mr->mr_fid.mem_desc = mr;
	mr->mr_fid.key = mr->util->key;
	*mr_fid = &mr->mr_fid;
	return 0;

dereg:
	if (mr->ibv)
		srd_dev_dereg_mr(mr->domain->dev, mr->ibv);
close_util:
	fi_close(&mr->util->fid);
free_mr:
	free(mr);
	return ret;
}

static int srd_mr_regv(struct fid *fid, const struct iovec *iov,
		       size_t count, uint64_t access, uint64_t offset,
		       uint64_t requested_key, uint64_t flags,
		       struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return srd_mr_regattr(fid, &attr, flags, mr);
}

static int srd_mr_reg(struct fid *fid, const void *buf, size_t len,
		      uint64_t access, uint64_t offset, uint64_t requested_key,
		      uint64_t flags, struct fid_mr **mr, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return srd_mr_regv(fid, &iov, 1, access, offset, requested_key, flags,
			   mr, context);
}

const struct fi_ops_mr srd_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = srd_mr_reg,
	.regv = srd_mr_regv,
	.regattr = srd_mr_regattr,
};

int srd_mr_desc_keys(void *desc, uint32_t *lkey, uint32_t *rkey)
{
	const struct srd_mr *mr = desc;

	if (!mr || mr->magic != SRD_MR_MAGIC || !mr->ibv)
		return -FI_EINVAL;
	if (lkey)
		*lkey = mr->lkey;
	if (rkey)
		*rkey = mr->rkey;
	return 0;
}

struct ibv_mr *srd_mr_reg_local(struct srd_dev *dev, void *buf,
				size_t len, int *err)
{
	struct ibv_mr *mr = srd_dev_reg_mr(dev, buf, len,
					   IBV_ACCESS_LOCAL_WRITE);

	if (!mr) {
		FI_WARN(&srd_prov, FI_LOG_MR,
			"registering %p+%zu on the fly failed: %s\n", buf, len,
			strerror(errno));
		*err = errno == ENOMEM ? -FI_ENOMEM : -FI_EINVAL;
	}
	return mr;
}

void srd_mr_dereg_local(struct srd_dev *dev, struct ibv_mr *mr)
{
	if (mr)
		srd_dev_dereg_mr(dev, mr);
}
