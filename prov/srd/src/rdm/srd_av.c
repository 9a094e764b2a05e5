/* SPDX-License-Identifier: MIT */
/*
 * srd addresses in util's AV: the bytes are a struct srd_ep_name (GID,
 * QPN, QKEY, host key and flags); insert takes the shared address handle of the GID, remove
 * drops it. Reverse lookup (FI_SOURCE) is util's hash on the name bytes.
 * The name format itself is here too: built from our QP, parsed (it comes
 * from the application or the wire), printed as srd://<gid>/qpn=N/qkey=K.
 */
#include "weft/compat.h"
#include "srd_rdm.h"

#include <string.h>

static int srd_av_validate(struct util_av *av, const void *addr)
{
	struct srd_ep_name name;

	(void)av;
	return srd_ep_name_parse(addr, sizeof(name), &name);
}

static int srd_av_insert(struct util_av *av, fi_addr_t fi_addr,
			 const void *addr, void *data)
{
	struct srd_domain *d = container_of(av->domain, struct srd_domain,
					    util);
	struct srd_av_entry *e = data;
	struct srd_ep_name name;
	union ibv_gid gid;

	(void)fi_addr;
	memcpy(&name, addr, sizeof(name));
	memcpy(gid.raw, name.gid, sizeof(gid.raw));
	return srd_dev_ah_get(d->dev, &gid, &e->ah);
}

static void srd_av_remove(struct util_av *av, fi_addr_t fi_addr,
			  const void *addr, void *data)
{
	struct srd_domain *d = container_of(av->domain, struct srd_domain,
					    util);
	struct srd_av_entry *e = data;

	(void)fi_addr;
	(void)addr;
	if (e->ah)
		srd_dev_ah_put(d->dev, e->ah);
	e->ah = NULL;
}

static const char *srd_av_straddr(const void *addr, char *buf, size_t *len)
{
	char tmp[128];
	struct srd_ep_name name;
	size_t n;

	memcpy(&name, addr, sizeof(name));
	if (srd_ep_name_str(&name, tmp, sizeof(tmp)))
		tmp[0] = '\0';
	n = strlen(tmp) + 1;
	if (buf && *len)
		snprintf(buf, *len, "%s", tmp);
	*len = n;
	return buf;
}

const struct util_av_prov srd_av_prov = {
	.addrlen = sizeof(struct srd_ep_name),
	.data_size = sizeof(struct srd_av_entry),
	.validate = srd_av_validate,
	.insert = srd_av_insert,
	.remove = srd_av_remove,
	.straddr = srd_av_straddr,
};

void srd_ep_name_build(const struct srd_dev_qp *qp, struct srd_ep_name *name)
{
	memset(name, 0, sizeof(*name));
	name->version = SRD_EP_NAME_VERSION;
	name->qpn = qp->ibv_qp->qp_num;
	name->qkey = qp->qkey;
	memcpy(name->gid, qp->dev->caps.gid.raw, sizeof(name->gid));
	name->host_key = srd_host_key();
}

int srd_ep_name_parse(const void *buf, size_t len, struct srd_ep_name *name)
{
	if (!buf || len < sizeof(*name)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_AV,
			"endpoint name of %zu bytes, need %zu\n", len,
			sizeof(*name));
		return -FI_EINVAL;
	}
	memcpy(name, buf, sizeof(*name));
	if (name->version != SRD_EP_NAME_VERSION) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_AV,
			"endpoint name version %u, this build speaks %u\n",
			name->version, SRD_EP_NAME_VERSION);
		return -FI_EINVAL;
	}
	if ((name->flags & ~SRD_EP_NAME_F_SHM) || name->reserved[0] ||
	    name->reserved[1]) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_AV,
			"endpoint name with unknown flags 0x%x or reserved "
			"bytes set\n", name->flags);
		return -FI_EINVAL;
	}
	if (name->qpn & ~SRD_QPN_MASK) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_AV,
			"endpoint name with qpn 0x%x\n",
			name->qpn);
		return -FI_EINVAL;
	}
	if (!name->qkey || (name->qkey & ~SRD_QKEY_MASK)) {
		WEFT_WARN_SPARSE(&srd_prov, FI_LOG_AV,
			"endpoint name with qkey 0x%x\n",
			name->qkey);
		return -FI_EINVAL;
	}
	return 0;
}

int srd_ep_name_str(const struct srd_ep_name *name, char *buf, size_t len)
{
	const uint8_t *g = name->gid;
	int n;

	n = snprintf(buf, len,
		     "srd://%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x/qpn=%u/qkey=0x%x/host=%016llx%s",
		     g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9],
		     g[10], g[11], g[12], g[13], g[14], g[15], name->qpn,
		     name->qkey, (unsigned long long)name->host_key,
		     (name->flags & SRD_EP_NAME_F_SHM) ? "/shm" : "");
	return n < 0 || (size_t)n >= len ? -FI_ETOOSMALL : 0;
}
