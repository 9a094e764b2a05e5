/* SPDX-License-Identifier: MIT */
/*
 * The srd provider object, its settings (FI_SRD_*) and fi_getinfo: one
 * fi_info per device (srd_devices.c).
 */
#include "weft/compat.h"
#include "weft/core.h"
#include "weft/settings.h"
#include "weft/util_host.h"
#include "srd_rdm.h"
#include "proto/srd_ring.h"

#include <pthread.h>
#include <string.h>

/* One device's fi_info; -FI_ENODATA when the hints rule it out. */
static int srd_getinfo_dev(const struct srd_dev *dev,
			   const struct fi_info *hints, struct fi_info **out)
{
	struct fi_info *fi;
	int err;

	if (hints && hints->domain_attr && hints->domain_attr->name &&
	    strcmp(hints->domain_attr->name, dev->name))
		return -FI_ENODATA;
	fi = fi_dupinfo(NULL);
	if (!fi)
		return -FI_ENOMEM;
	srd_info_fill(&dev->caps, dev->name, fi);
	err = srd_info_set_addrs(&dev->caps, hints, fi);
	if (err) {
		fi_freeinfo(fi);
		return err;
	}
	/* Atomics are emulated over messages: every device can serve them. */
	fi->caps |= FI_ATOMIC;
	fi->tx_attr->caps |= FI_ATOMIC;
	fi->rx_attr->caps |= FI_ATOMIC;
	fi->fabric_attr->prov_name = strdup("srd");
	fi->fabric_attr->prov_version = srd_prov.version;
	fi->fabric_attr->api_version = srd_prov.fi_version;
	/* Tags: the top bit set is what MPI checks for. */
	fi->ep_attr->mem_tag_format = 0xaaaaaaaaaaaaaaaaull;
	*out = fi;
	return 0;
}

/* One fi_info per device, in the device table's order. */
static int srd_getinfo_devices(const struct fi_info *hints,
			       struct fi_info **info)
{
	struct srd_dev *devs[SRD_DEV_MAX];
	struct fi_info *fi, **tail = info;
	int n, err;

	n = srd_devices_get(devs, SRD_DEV_MAX);
	for (int i = 0; i < n; i++) {
		err = srd_getinfo_dev(devs[i], hints, &fi);
		if (err == -FI_ENODATA)
			continue;
		if (err) {
			fi_freeinfo(*info);
			*info = NULL;
			return err;
		}
		*tail = fi;
		tail = &fi->next;
	}
	if (!*info && n && hints && hints->domain_attr &&
	    hints->domain_attr->name)
		FI_INFO(&srd_prov, FI_LOG_CORE, "no srd device named %s\n",
			hints->domain_attr->name);
	return *info ? 0 : -FI_ENODATA;
}

static int srd_getinfo(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       struct fi_info **info)
{
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
	/* As a source, a node can only be this host; a service cannot pick
	 * a QP number and is ignored. */
	if (node && !util_host_is_local(node, !!(flags & FI_NUMERICHOST))) {
		FI_INFO(&srd_prov, FI_LOG_CORE,
			"source node '%s' is not this host\n", node);
		return -FI_ENODATA;
	}
	if (hints && hints->addr_format != FI_FORMAT_UNSPEC) {
		FI_INFO(&srd_prov, FI_LOG_CORE,
			"addr_format %u: srd names are FI_FORMAT_UNSPEC\n",
			hints->addr_format);
		return -FI_ENODATA;
	}
	return srd_getinfo_devices(hints, info);
}

static void srd_cleanup(void)
{
	srd_devices_close();
}

struct fi_provider srd_prov = {
	.name = "srd",
	.version = FI_VERSION(0, 1),
	.fi_version = FI_VERSION(1, 17),
	.getinfo = srd_getinfo,
	.fabric = srd_fabric_open,
	.cleanup = srd_cleanup,
};

/* ---- settings: each stated once, here ------------------------------------ */

static const char *const srd_device_names[] = { "auto", "efa", "soft", NULL };
static const char *const srd_poll_names[] = { "auto", "data", "completion",
					      NULL };
static const char *const srd_use_shm_names[] = { "auto", "0", "1", NULL };

#define SRD_FIELD(m) WEFT_SETTING_FIELD(struct srd_settings, m)

static const struct weft_setting srd_setting_table[] = {
	{ .name = "device", .type = WEFT_SETTING_ENUM, SRD_FIELD(device),
	  .def = SRD_DEVICE_AUTO, .names = srd_device_names,
	  .help = "Device to use: auto (EFA through rdma-core when present), "
		  "efa, or soft (softsrd, never chosen by auto)" },
	{ .name = "device_name", .type = WEFT_SETTING_STRING,
	  SRD_FIELD(device_name), .def_text = "every device",
	  .help = "Offer only the verbs device of this name (e.g. efa_0); "
		  "unset, every device is offered, one fi_info (domain) each" },
	{ .name = "poll_mode", .type = WEFT_SETTING_ENUM, SRD_FIELD(poll_mode),
	  .def = SRD_POLL_REQ_AUTO, .names = srd_poll_names,
	  .help = "How receivers find messages: auto, data (poll message data "
		  "in memory, needs RDMA write landing in order) or "
		  "completion (poll the CQ)" },
	{ .name = "cq_batch", .type = WEFT_SETTING_INT, SRD_FIELD(cq_batch),
	  .def = SRD_CQ_BATCH_DEFAULT, .min = 1, .max = SRD_CQ_BATCH_MAX,
	  .help = "Completions taken per CQ per progress call" },
	{ .name = "low_latency_sl", .type = WEFT_SETTING_INT,
	  SRD_FIELD(low_latency_sl), .def = 8, .max = 15,
	  .help = "Service level asked for FI_TC_LOW_LATENCY endpoints where "
		  "rdma-core supports it (falls back to the default SL)" },
	{ .name = "rnr_retry", .type = WEFT_SETTING_INT, SRD_FIELD(rnr_retry),
	  .def = 3, .max = 7,
	  .help = "Device RNR retries before an RNR completion (7 = retry "
		  "forever), where the device allows it" },
	{ .name = "ring_slots", .type = WEFT_SETTING_INT, SRD_FIELD(ring_slots),
	  .def = SRD_RING_SLOTS_DEFAULT, .min = SRD_RING_SLOTS_MIN,
	  .max = SRD_RING_SLOTS_MAX, .flags = WEFT_SETTING_POW2,
	  .help = "Data mode: slots of the ring each peer writes small "
		  "messages into, per peer and endpoint (1 KiB each, read at "
		  "endpoint open)" },
	{ .name = "cts_threshold", .type = WEFT_SETTING_SIZE,
	  SRD_FIELD(cts_threshold), .def = SRD_CTS_THRESHOLD_DEFAULT,
	  .help = "Messages longer than this many bytes go by receiver-"
		  "granted credits (CTS) when RDMA read is not available at "
		  "both ends; shorter ones as MEDIUM segments" },
	{ .name = "cts_window", .type = WEFT_SETTING_SIZE,
	  SRD_FIELD(cts_window), .def = SRD_CTS_WINDOW_DEFAULT,
	  .help = "Bytes a receiver grants ahead of what arrived, per long "
		  "message (below one packet: the default)" },
	{ .name = "long_probe_ms", .type = WEFT_SETTING_INT,
	  SRD_FIELD(long_probe_ms), .def = SRD_LONG_PROBE_MS_DEFAULT,
	  .help = "While a transfer waits for its peer (a long send for its "
		  "receiver, a message arriving in pieces for its sender, an "
		  "emulated RMA or atomic for its target), probe the peer "
		  "this often; a probe the device cannot deliver ends the "
		  "peer's transfers with an error (0: never)" },
	{ .name = "use_shm", .type = WEFT_SETTING_ENUM, SRD_FIELD(use_shm),
	  .def = SRD_USE_SHM_AUTO, .names = srd_use_shm_names,
	  .help = "Peers on this host (same boot and network namespace) "
		  "through an shm endpoint instead of the device: auto (when "
		  "both ends can), 0 (never), 1 (fi_enable fails without shm)" },
	{ .name = "rails", .type = WEFT_SETTING_INT, SRD_FIELD(rails),
	  .def = 1, .min = 1, .max = SRD_PKT_RAILS_MAX,
	  .help = "Devices an endpoint stripes long messages over (read at "
		  "endpoint open): rail 0 is its domain's device, the others "
		  "the next devices fi_getinfo lists; a peer with fewer gets "
		  "fewer" },
};

#define SRD_SETTINGS_COUNT WEFT_ARRAY_SIZE(srd_setting_table)

void srd_settings_default(struct srd_settings *s)
{
	memset(s, 0, sizeof(*s));
	weft_settings_default(srd_setting_table, SRD_SETTINGS_COUNT, s);
}

void srd_settings_read(struct srd_settings *s)
{
	memset(s, 0, sizeof(*s));
	weft_settings_read(&srd_prov, srd_setting_table, SRD_SETTINGS_COUNT, s);
}

void srd_settings_read_one(const char *name, struct srd_settings *s)
{
	weft_setting_read(&srd_prov, srd_setting_table, SRD_SETTINGS_COUNT,
			  name, s);
}

static int srd_settings_parse(const char *name, const char *str)
{
	return weft_setting_parse_enum(weft_setting_find(srd_setting_table,
							 SRD_SETTINGS_COUNT,
							 name), str);
}

int srd_settings_parse_device(const char *str, enum srd_device_sel *out)
{
	int v = srd_settings_parse("device", str);

	if (v < 0)
		return v;
	*out = (enum srd_device_sel)v;
	return 0;
}

int srd_settings_parse_poll_mode(const char *str, enum srd_poll_req *out)
{
	int v = srd_settings_parse("poll_mode", str);

	if (v < 0)
		return v;
	*out = (enum srd_poll_req)v;
	return 0;
}

static void srd_settings_define(void)
{
	weft_settings_define(&srd_prov, srd_setting_table, SRD_SETTINGS_COUNT);
}

struct srd_settings srd_settings;

/* srd_prov_init minus nothing: kept for the device-layer tests. */
struct fi_provider *srd_prov_init_device_only(void)
{
	srd_settings_define();
	/* softsrd defines its FI_SRD_SOFT_* settings and logs under srd. */
	srd_dev_soft_init(&srd_prov);
	srd_settings_read(&srd_settings);
	return &srd_prov;
}

/* Listed in core's registry of built-in providers (weft/core.h). */
struct fi_provider *srd_prov_init(void)
{
	util_coll_params_init();
	return srd_prov_init_device_only();
}
