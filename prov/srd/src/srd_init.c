/* SPDX-License-Identifier: MIT */
/*
 * The srd provider object, its settings (FI_SRD_*) and fi_getinfo. The
 * device is opened once, at the first getinfo, and shared by every
 * domain; with FI_SRD_DEVICE unset and no EFA there is no device and
 * getinfo answers -FI_ENODATA (shm stays the default).
 */
#include "weft/compat.h"
#include "weft/core.h"
#include "srd_rdm.h"
#include "../soft/softsrd.h"

#include <pthread.h>
#include <string.h>
#include <strings.h>

static pthread_mutex_t srd_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srd_device *srd_dev;
static int srd_dev_err;		/* sticky: no device on this host */

struct srd_device *srd_device_get(int *err)
{
	const struct srd_verbs_ops *verbs;

	pthread_mutex_lock(&srd_dev_lock);
	if (!srd_dev && !srd_dev_err) {
		verbs = srd_verbs_select(srd_settings.device);
		if (!verbs)
			srd_dev_err = -FI_ENODATA;
		else
			srd_dev_err = srd_device_open(verbs,
						      srd_settings.device_name,
						      &srd_dev);
		if (srd_dev_err)
			srd_dev = NULL;
	}
	*err = srd_dev ? 0 : (srd_dev_err ? srd_dev_err : -FI_ENODATA);
	pthread_mutex_unlock(&srd_dev_lock);
	return srd_dev;
}

static int srd_getinfo(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       struct fi_info **info)
{
	struct srd_device *dev;
	struct fi_info *fi;
	int err;

	(void)version;
	*info = NULL;
	/* An srd name (GID, QPN, random QKEY) exists only once a QP does:
	 * no host:port can name a peer endpoint. */
	if ((node || service) && !(flags & FI_SOURCE)) {
		FI_INFO(&srd_prov, FI_LOG_CORE,
			"node/service cannot name an srd endpoint; exchange "
			"fi_getname addresses instead\n");
		return -FI_ENODATA;
	}
	if (hints && hints->addr_format != FI_FORMAT_UNSPEC) {
		FI_INFO(&srd_prov, FI_LOG_CORE,
			"addr_format %u: srd names are FI_FORMAT_UNSPEC\n",
			hints->addr_format);
		return -FI_ENODATA;
	}
	dev = srd_device_get(&err);
	if (!dev)
		return -FI_ENODATA;
	fi = fi_dupinfo(NULL);
	if (!fi)
		return -FI_ENOMEM;
	srd_info_fill(&dev->caps, dev->name, fi);
	/* Atomics are emulated over messages: every device can serve them. */
	fi->caps |= FI_ATOMIC;
	fi->tx_attr->caps |= FI_ATOMIC;
	fi->rx_attr->caps |= FI_ATOMIC;
	fi->fabric_attr->prov_name = strdup("srd");
	fi->fabric_attr->prov_version = srd_prov.version;
	fi->fabric_attr->api_version = srd_prov.fi_version;
	/* Tags: the top bit set is what MPI checks for. */
	fi->ep_attr->mem_tag_format = 0xaaaaaaaaaaaaaaaaull;
	*info = fi;
	return 0;
}

static void srd_cleanup(void)
{
	pthread_mutex_lock(&srd_dev_lock);
	if (srd_dev)
		srd_device_close(srd_dev);
	srd_dev = NULL;
	srd_dev_err = 0;
	pthread_mutex_unlock(&srd_dev_lock);
}

struct fi_provider srd_prov = {
	.name = "srd",
	.version = FI_VERSION(0, 1),
	.fi_version = FI_VERSION(1, 17),
	.getinfo = srd_getinfo,
	.fabric = srd_fabric_open,
	.cleanup = srd_cleanup,
};

void srd_settings_default(struct srd_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->device = SRD_DEVICE_AUTO;
	s->poll_mode = SRD_POLL_REQ_AUTO;
	s->cq_batch = SRD_CQ_BATCH_DEFAULT;
	s->low_latency_sl = 8;
	s->rnr_retry = 3;
	s->device_name = NULL;
}

int srd_settings_parse_device(const char *str, enum srd_device_sel *out)
{
	if (!str || !*str || !strcasecmp(str, "auto"))
		*out = SRD_DEVICE_AUTO;
	else if (!strcasecmp(str, "efa"))
		*out = SRD_DEVICE_EFA;
	else if (!strcasecmp(str, "soft"))
		*out = SRD_DEVICE_SOFT;
	else
		return -FI_EINVAL;
	return 0;
}

int srd_settings_parse_poll_mode(const char *str, enum srd_poll_req *out)
{
	if (!str || !*str || !strcasecmp(str, "auto"))
		*out = SRD_POLL_REQ_AUTO;
	else if (!strcasecmp(str, "data"))
		*out = SRD_POLL_REQ_DATA;
	else if (!strcasecmp(str, "completion"))
		*out = SRD_POLL_REQ_COMPLETION;
	else
		return -FI_EINVAL;
	return 0;
}

static void srd_settings_define(void)
{
	fi_param_define(&srd_prov, "device", FI_PARAM_STRING,
			"Device to use: auto (EFA through rdma-core when present), "
			"efa, or soft (softsrd, never chosen by auto). Default: auto");
	fi_param_define(&srd_prov, "device_name", FI_PARAM_STRING,
			"Verbs device name to open (e.g. efa_0); default: the first");
	fi_param_define(&srd_prov, "poll_mode", FI_PARAM_STRING,
			"auto, data (poll message data in memory, needs RDMA write "
			"landing in order) or completion (poll the CQ). Default: auto");
	fi_param_define(&srd_prov, "cq_batch", FI_PARAM_INT,
			"Completions taken per CQ per progress call, 1..256. Default: 32");
	fi_param_define(&srd_prov, "low_latency_sl", FI_PARAM_INT,
			"Service level asked for FI_TC_LOW_LATENCY endpoints where "
			"rdma-core supports it (default 8; falls back to the default SL)");
	fi_param_define(&srd_prov, "rnr_retry", FI_PARAM_INT,
			"Device RNR retries before an RNR completion, 0..7 "
			"(7 = retry forever), where the device allows it. Default: 3");
	fi_param_define(&srd_prov, "ring_slots", FI_PARAM_INT,
			"Data mode: slots of the ring each peer writes small "
			"messages into, per peer and endpoint, a power of two "
			"2..4096 (1 KiB each, read at endpoint open). Default: 32");
	srd_long_params_define();
}

static void srd_settings_get_int(const char *name, int lo, int hi, int *dst)
{
	int v;

	if (fi_param_get_int(&srd_prov, name, &v))
		return;
	if (v < lo || v > hi) {
		FI_WARN(&srd_prov, FI_LOG_CORE,
			"FI_SRD_%s=%d out of range %d..%d, using %d\n", name, v,
			lo, hi, *dst);
		return;
	}
	*dst = v;
}

static void srd_settings_get_enum(const char *name, const char *help_values,
				  int (*parse)(const char *, void *), void *dst)
{
	char *str = NULL;

	if (fi_param_get_str(&srd_prov, name, &str) || !str)
		return;
	if (parse(str, dst))
		FI_WARN(&srd_prov, FI_LOG_CORE,
			"FI_SRD_%s=%s not one of %s, using auto\n", name, str,
			help_values);
}

static int srd_parse_device_cb(const char *str, void *out)
{
	return srd_settings_parse_device(str, out);
}

static int srd_parse_poll_cb(const char *str, void *out)
{
	return srd_settings_parse_poll_mode(str, out);
}

void srd_settings_read(struct srd_settings *s)
{
	char *name = NULL;
	int v;

	srd_settings_default(s);
	srd_settings_get_enum("device", "auto|efa|soft", srd_parse_device_cb,
			      &s->device);
	srd_settings_get_enum("poll_mode", "auto|data|completion",
			      srd_parse_poll_cb, &s->poll_mode);
	v = (int)s->cq_batch;
	srd_settings_get_int("cq_batch", 1, SRD_CQ_BATCH_MAX, &v);
	s->cq_batch = (unsigned int)v;
	v = s->low_latency_sl;
	srd_settings_get_int("low_latency_sl", 0, 15, &v);
	s->low_latency_sl = (uint8_t)v;
	v = s->rnr_retry;
	srd_settings_get_int("rnr_retry", 0, 7, &v);
	s->rnr_retry = (uint8_t)v;
	if (!fi_param_get_str(&srd_prov, "device_name", &name) && name && *name)
		s->device_name = name;
}

/* Which table a device setting means. auto never picks softsrd: a software
 * device must not stand in silently for missing hardware (DESIGN.md 4). */
const struct srd_verbs_ops *srd_verbs_select(enum srd_device_sel sel)
{
	switch (sel) {
	case SRD_DEVICE_AUTO:
	case SRD_DEVICE_EFA:
		return srd_verbs_rdma_ops();
	case SRD_DEVICE_SOFT:
		return &softsrd_verbs_ops;
	default:
		return NULL;
	}
}

struct srd_settings srd_settings;

/* srd_prov_init minus nothing: kept for the device-layer tests. */
struct fi_provider *srd_prov_init_device_only(void)
{
	srd_settings_define();
	/* softsrd defines its FI_SRD_SOFT_* settings and logs under srd. */
	softsrd_init(&srd_prov);
	srd_settings_read(&srd_settings);
	return &srd_prov;
}

/* Listed in core's registry of built-in providers (weft/core.h). */
struct fi_provider *srd_prov_init(void)
{
	return srd_prov_init_device_only();
}
