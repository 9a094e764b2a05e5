/* SPDX-License-Identifier: MIT */
/*
 * The srd provider object and its settings (FI_SRD_*).
 *
 * Only the device layer exists so far, so the provider is NOT offered to
 * core: srd_prov_init (the name core's registry looks for) is deliberately
 * not defined. srd_prov_init_device_only() sets everything up for the day
 * the RDM protocol lands and for tests; until then getinfo answers nothing.
 */
#include "weft/compat.h"
#include "srd.h"

#include <string.h>
#include <strings.h>

static int srd_getinfo(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       struct fi_info **info)
{
	(void)version;
	(void)node;
	(void)service;
	(void)flags;
	(void)hints;
	*info = NULL;
	/* No RDM endpoint yet: an srd info would promise messages it cannot
	 * carry. */
	return -FI_ENODATA;
}

static int srd_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		      void *context)
{
	(void)attr;
	(void)fabric;
	(void)context;
	return -FI_ENOSYS;
}

static void srd_cleanup(void)
{
}

struct fi_provider srd_prov = {
	.name = "srd",
	.version = FI_VERSION(0, 1),
	.fi_version = FI_VERSION(1, 17),
	.getinfo = srd_getinfo,
	.fabric = srd_fabric,
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

/* Weak and hidden, as core does for providers: a build (or a static test
 * binary) without softsrd resolves it to NULL instead of failing to link. */
#pragma weak softsrd_verbs_ops
#pragma weak softsrd_init
extern const struct srd_verbs_ops softsrd_verbs_ops
	__attribute__((visibility("hidden")));
extern void softsrd_init(struct fi_provider *prov)
	__attribute__((visibility("hidden")));

/* Which table a device setting means. auto never picks softsrd: a software
 * device must not stand in silently for missing hardware (DESIGN.md 4). */
const struct srd_verbs_ops *srd_verbs_select(enum srd_device_sel sel)
{
	switch (sel) {
	case SRD_DEVICE_AUTO:
	case SRD_DEVICE_EFA:
		return srd_verbs_rdma_ops();
	case SRD_DEVICE_SOFT:
		return &softsrd_verbs_ops ? &softsrd_verbs_ops : NULL;
	default:
		return NULL;
	}
}

struct srd_settings srd_settings;

/* The future srd_prov_init, minus the registration (see the top). */
struct fi_provider *srd_prov_init_device_only(void)
{
	srd_settings_define();
	/* softsrd defines its FI_SRD_SOFT_* settings and logs under srd. */
	if (softsrd_init)
		softsrd_init(&srd_prov);
	srd_settings_read(&srd_settings);
	return &srd_prov;
}
