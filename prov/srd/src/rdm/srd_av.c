/* SPDX-License-Identifier: MIT */
/*
 * srd addresses in util's AV: the bytes are a struct srd_ep_name (GID,
 * QPN, QKEY); insert takes the shared address handle of the GID, remove
 * drops it. Reverse lookup (FI_SOURCE) is util's hash on the name bytes.
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
	return srd_ah_get(d->dev, &gid, &e->ah);
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
		srd_ah_put(d->dev, e->ah);
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
