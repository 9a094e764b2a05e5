/* SPDX-License-Identifier: MIT */
/*
 * Address handles, one per remote GID and shared by every peer endpoint
 * behind it (a host runs many endpoints, and devices have few AHs).
 * Control path only: the AV takes a reference at insert, drops it at
 * remove; a peer endpoint takes one when it is first seen. Every domain
 * shares the device, so the table has its own lock.
 */
#include "weft/compat.h"
#include "srd_dev.h"

#include <stdlib.h>
#include <string.h>

#define SRD_AHN_UNKNOWN 0xffff

static uint16_t srd_dev_ah_number(struct srd_dev *dev, struct ibv_ah *ibv_ah)
{
	struct efadv_ah_attr attr;

	if (!dev->verbs->efadv_query_ah)
		return SRD_AHN_UNKNOWN;
	memset(&attr, 0, sizeof(attr));
	if (dev->verbs->efadv_query_ah(ibv_ah, &attr, sizeof(attr)))
		return SRD_AHN_UNKNOWN;
	return attr.ahn;
}

static struct ibv_ah *srd_dev_ah_create(struct srd_dev *dev,
					const union ibv_gid *gid)
{
	struct ibv_ah_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.port_num = dev->caps.port_num;
	attr.grh.dgid = *gid;
	return dev->verbs->create_ah(dev->pd, &attr);
}

static int srd_dev_ah_get_locked(struct srd_dev *dev, const union ibv_gid *gid,
				 struct srd_dev_ah **ah_out)
{
	struct srd_dev_ah *ah;

	HASH_FIND(hh, dev->ah_by_gid, gid, sizeof(*gid), ah);
	if (ah) {
		ah->refcnt++;
		*ah_out = ah;
		return 0;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -FI_ENOMEM;
	ah->gid = *gid;
	ah->ibv_ah = srd_dev_ah_create(dev, gid);
	if (!ah->ibv_ah) {
		int err = errno ? errno : EINVAL;

		FI_WARN(&srd_prov, FI_LOG_AV,
			"%s: cannot create an address handle for the peer's GID "
			"(different subnet or bad address?): %s\n",
			dev->name, strerror(err));
		free(ah);
		return -err;
	}
	ah->ahn = srd_dev_ah_number(dev, ah->ibv_ah);
	ah->refcnt = 1;
	HASH_ADD(hh, dev->ah_by_gid, gid, sizeof(ah->gid), ah);
	*ah_out = ah;
	return 0;
}

int srd_dev_ah_get(struct srd_dev *dev, const union ibv_gid *gid,
		   struct srd_dev_ah **ah_out)
{
	int ret;

	pthread_mutex_lock(&dev->ah_lock);
	ret = srd_dev_ah_get_locked(dev, gid, ah_out);
	pthread_mutex_unlock(&dev->ah_lock);
	return ret;
}

void srd_dev_ah_put(struct srd_dev *dev, struct srd_dev_ah *ah)
{
	pthread_mutex_lock(&dev->ah_lock);
	if (--ah->refcnt == 0) {
		HASH_DEL(dev->ah_by_gid, ah);
		dev->verbs->destroy_ah(ah->ibv_ah);
		free(ah);
	}
	pthread_mutex_unlock(&dev->ah_lock);
}
