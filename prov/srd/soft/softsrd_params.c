/* SPDX-License-Identifier: MIT */
/*
 * FI_SRD_SOFT_* settings. They are read at every open_device, so a test can
 * open devices with different settings in one process.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The srd provider owns the real one; until it calls softsrd_init(), softsrd
 * reads settings and logs under this stand-in of the same name. */
static struct fi_provider softsrd_default_prov = {
	.name = "srd",
	.version = FI_VERSION(0, 1),
	.fi_version = FI_VERSION(1, 17),
};

struct fi_provider *softsrd_prov = &softsrd_default_prov;
static pthread_once_t softsrd_once = PTHREAD_ONCE_INIT;

void softsrd_params_define(const struct fi_provider *prov)
{
	fi_param_define(prov, "soft_addr", FI_PARAM_STRING,
			"softsrd: IPv4 address of the one device to offer "
			"(default: one device per IPv4 address that is up)");
	fi_param_define(prov, "soft_iface", FI_PARAM_STRING,
			"softsrd: offer only the devices of this network "
			"interface, e.g. veth0 (default: all)");
	fi_param_define(prov, "soft_mtu", FI_PARAM_INT,
			"softsrd: largest send in bytes, also the RDMA packet "
			"size (default 8928, like EFA)");
	fi_param_define(prov, "soft_max_sq_wr", FI_PARAM_INT,
			"softsrd: send queue depth limit (default 4096)");
	fi_param_define(prov, "soft_max_rq_wr", FI_PARAM_INT,
			"softsrd: receive queue depth limit (default 32768)");
	fi_param_define(prov, "soft_max_sge", FI_PARAM_INT,
			"softsrd: SGEs per work request (default 2, max 16)");
	fi_param_define(prov, "soft_inline_buf_size", FI_PARAM_INT,
			"softsrd: inline payload limit in bytes (default 32)");
	fi_param_define(prov, "soft_max_rdma_size", FI_PARAM_INT,
			"softsrd: largest RDMA read/write in bytes "
			"(default 1073741824)");
	fi_param_define(prov, "soft_rdma_read", FI_PARAM_BOOL,
			"softsrd: offer RDMA read (default yes)");
	fi_param_define(prov, "soft_rdma_write", FI_PARAM_BOOL,
			"softsrd: offer RDMA write (default yes)");
	fi_param_define(prov, "soft_rnr_retry", FI_PARAM_BOOL,
			"softsrd: offer the RNR retry capability (default yes)");
	fi_param_define(prov, "soft_in_order", FI_PARAM_STRING,
			"softsrd: in-order data placement within a message "
			"it claims and keeps: none, 128 or whole (default none)");
	fi_param_define(prov, "soft_io", FI_PARAM_STRING,
			"softsrd: datagram batching: auto, uring or mmsg "
			"(default auto: io_uring unless refused)");
	fi_param_define(prov, "soft_loss", FI_PARAM_INT,
			"softsrd: percent of outgoing datagrams dropped (0)");
	fi_param_define(prov, "soft_dup", FI_PARAM_INT,
			"softsrd: percent of outgoing datagrams sent twice (0)");
	fi_param_define(prov, "soft_reorder", FI_PARAM_INT,
			"softsrd: percent of outgoing datagrams held back "
			"behind later ones (0)");
	fi_param_define(prov, "soft_delay_us", FI_PARAM_INT,
			"softsrd: delay added to every outgoing datagram (0)");
	fi_param_define(prov, "soft_rnr", FI_PARAM_INT,
			"softsrd: percent of incoming sends refused with RNR "
			"even with a receive posted (0)");
	fi_param_define(prov, "soft_rto_us", FI_PARAM_INT,
			"softsrd: first retransmission timeout (default 2000), "
			"doubling per retry up to 32x");
	fi_param_define(prov, "soft_retries", FI_PARAM_INT,
			"softsrd: retransmissions before a work request fails "
			"with IBV_WC_RESP_TIMEOUT_ERR (default 16, about 0.8 s "
			"with the default RTO: a peer starved of CPU is not gone)");
	fi_param_define(prov, "soft_rnr_delay_us", FI_PARAM_INT,
			"softsrd: wait before resending a send refused with "
			"RNR (default 100)");
	fi_param_define(prov, "soft_ack_delay_us", FI_PARAM_INT,
			"softsrd: how long the acknowledgement of a received "
			"send may wait for a packet going back to carry it "
			"(default 50, 0: never waits; at most a quarter of "
			"FI_SRD_SOFT_RTO_US)");
	fi_param_define(prov, "soft_pkts_per_qp", FI_PARAM_INT,
			"softsrd: packets in flight per QP (default 1024)");
	fi_param_define(prov, "soft_rdma_pkt", FI_PARAM_INT,
			"softsrd: payload bytes per RDMA read/write packet, "
			"rounded down to 128 (default 0: 65408 when the socket "
			"got a 4 MiB receive buffer, else the MTU)");
	fi_param_define(prov, "soft_window", FI_PARAM_INT,
			"softsrd: packets in flight per peer QP (default 64, "
			"max 256): bounds what a receiver's socket must hold");
}

static void softsrd_init_once(void)
{
	softsrd_params_define(softsrd_prov);
}

void softsrd_init(struct fi_provider *prov)
{
	if (prov)
		softsrd_prov = prov;
	pthread_once(&softsrd_once, softsrd_init_once);
}

static void softsrd_get_u32(const char *name, uint32_t *val,
			    uint32_t min, uint32_t max)
{
	int v;

	if (fi_param_get_int(softsrd_prov, name, &v))
		return;
	if (v < (int64_t)min || (uint32_t)v > max) {
		FI_WARN(softsrd_prov, FI_LOG_CORE,
			"FI_SRD_%s=%d out of range [%u, %u], keeping %u\n",
			name, v, min, max, *val);
		return;
	}
	*val = (uint32_t)v;
}

static void softsrd_get_bool(const char *name, bool *val)
{
	int v;

	if (!fi_param_get_bool(softsrd_prov, name, &v))
		*val = !!v;
}

static int softsrd_get_choice(const char *name, const char *const *choices,
			      int n, int *val)
{
	char *s = NULL;

	if (fi_param_get_str(softsrd_prov, name, &s) || !s)
		return 0;
	for (int i = 0; i < n; i++) {
		if (!strcasecmp(s, choices[i])) {
			*val = i;
			return 0;
		}
	}
	FI_WARN(softsrd_prov, FI_LOG_CORE, "FI_SRD_%s=%s is not one of the "
		"accepted values\n", name, s);
	return -FI_EINVAL;
}

int softsrd_config_read(struct softsrd_config *cfg)
{
	static const char *const orders[] = { "none", "128", "whole" };
	static const char *const ios[] = { "auto", "uring", "mmsg" };
	int order = SOFTSRD_ORDER_NONE, io = SOFTSRD_IO_AUTO;
	char *addr = NULL, *iface = NULL;

	softsrd_init(NULL);
	*cfg = (struct softsrd_config) {
		.mtu = 8928,
		.max_sq_wr = 4096,
		.max_rq_wr = 32768,
		.max_sge = 2,
		.inline_buf_size = 32,
		.max_rdma_size = 1u << 30,
		.rdma_read = true,
		.rdma_write = true,
		.rnr_retry = true,
		.rto_us = 2000,
		.retries = 16,
		.rnr_delay_us = 100,
		.ack_delay_us = 50,
		.pkts_per_qp = 1024,
		.window = 64,
	};
	softsrd_get_u32("soft_mtu", &cfg->mtu, SOFTSRD_MIN_MTU, SOFTSRD_MAX_MTU);
	softsrd_get_u32("soft_max_sq_wr", &cfg->max_sq_wr, 1, 1u << 20);
	softsrd_get_u32("soft_max_rq_wr", &cfg->max_rq_wr, 1, 1u << 20);
	softsrd_get_u32("soft_max_sge", &cfg->max_sge, 1, SOFTSRD_MAX_SGE);
	softsrd_get_u32("soft_inline_buf_size", &cfg->inline_buf_size, 0, 4096);
	softsrd_get_u32("soft_max_rdma_size", &cfg->max_rdma_size, 1, 1u << 30);
	softsrd_get_bool("soft_rdma_read", &cfg->rdma_read);
	softsrd_get_bool("soft_rdma_write", &cfg->rdma_write);
	softsrd_get_bool("soft_rnr_retry", &cfg->rnr_retry);
	softsrd_get_u32("soft_loss", &cfg->loss, 0, 100);
	softsrd_get_u32("soft_dup", &cfg->dup, 0, 100);
	softsrd_get_u32("soft_reorder", &cfg->reorder, 0, 100);
	softsrd_get_u32("soft_rnr", &cfg->rnr, 0, 100);
	softsrd_get_u32("soft_delay_us", &cfg->delay_us, 0, 10000000);
	softsrd_get_u32("soft_rto_us", &cfg->rto_us, 10, 10000000);
	softsrd_get_u32("soft_retries", &cfg->retries, 0, 1000);
	softsrd_get_u32("soft_rnr_delay_us", &cfg->rnr_delay_us, 0, 10000000);
	softsrd_get_u32("soft_ack_delay_us", &cfg->ack_delay_us, 0, 10000000);
	/* the peer must get its answer well before it resends (its RTO is
	 * not known here: this device's is the best guess) */
	if (cfg->ack_delay_us > cfg->rto_us / 4)
		cfg->ack_delay_us = cfg->rto_us / 4;
	softsrd_get_u32("soft_pkts_per_qp", &cfg->pkts_per_qp, 16, 1u << 16);
	softsrd_get_u32("soft_window", &cfg->window, 1, SOFTSRD_WIN);
	softsrd_get_u32("soft_rdma_pkt", &cfg->rdma_pkt, 0, SOFTSRD_MAX_RDMA_PKT);
	if (cfg->rdma_pkt && cfg->rdma_pkt < 128)
		cfg->rdma_pkt = 128;
	if (softsrd_get_choice("soft_in_order", orders, 3, &order) ||
	    softsrd_get_choice("soft_io", ios, 3, &io))
		return -FI_EINVAL;
	cfg->in_order = order;
	cfg->io = io;
	if (!fi_param_get_str(softsrd_prov, "soft_addr", &addr) && addr)
		snprintf(cfg->addr, sizeof(cfg->addr), "%s", addr);
	if (!fi_param_get_str(softsrd_prov, "soft_iface", &iface) && iface) {
		if (strlen(iface) >= sizeof(cfg->iface)) {
			FI_WARN(softsrd_prov, FI_LOG_CORE,
				"FI_SRD_SOFT_IFACE=%s: name too long\n", iface);
			return -FI_EINVAL;
		}
		snprintf(cfg->iface, sizeof(cfg->iface), "%s", iface);
	}
	return 0;
}
