/* SPDX-License-Identifier: MIT */
/*
 * FI_SRD_SOFT_* settings. They are read at every open_device, so a test can
 * open devices with different settings in one process.
 */
#include "weft/compat.h"
#include "weft/settings.h"
#include "softsrd_priv.h"

#include <string.h>

/* The srd provider owns the real one; until it calls softsrd_init(), softsrd
 * reads settings and logs under this stand-in of the same name. */
static struct fi_provider softsrd_default_prov = {
	.name = "srd",
	.version = FI_VERSION(0, 1),
	.fi_version = FI_VERSION(1, 17),
};

struct fi_provider *softsrd_prov = &softsrd_default_prov;
static pthread_once_t softsrd_once = PTHREAD_ONCE_INIT;

static const char *const softsrd_order_names[] = { "none", "128", "whole",
						    NULL };
static const char *const softsrd_io_names[] = { "auto", "uring", "mmsg", NULL };

#define SOFT_FIELD(m) WEFT_SETTING_FIELD(struct softsrd_config, m)
#define SOFT_U32(n, m, d, lo, hi, h)					\
	{ .name = n, .type = WEFT_SETTING_INT, SOFT_FIELD(m), .def = d,	\
	  .min = lo, .max = hi, .help = h }
#define SOFT_BOOL(n, m, d, h)						\
	{ .name = n, .type = WEFT_SETTING_BOOL, SOFT_FIELD(m),		\
	  .def = d, .help = h }

/* FI_SRD_SOFT_*, each stated once, in the order weft_info -e lists them. */
static const struct weft_setting softsrd_setting_table[] = {
	{ .name = "soft_addr", .type = WEFT_SETTING_STRBUF, SOFT_FIELD(addr),
	  .def_text = "one device per IPv4 address that is up",
	  .help = "softsrd: IPv4 address of the one device to offer" },
	{ .name = "soft_iface", .type = WEFT_SETTING_STRBUF, SOFT_FIELD(iface),
	  .def_text = "all interfaces",
	  .help = "softsrd: offer only the devices of this network "
		  "interface, e.g. veth0" },
	SOFT_U32("soft_devices", devices, 0, 0, SOFTSRD_MAX_DEVICES,
		 "softsrd: offer this many devices on one address (that of "
		 "FI_SRD_SOFT_ADDR, else the first that is up) instead of one "
		 "per address, each with its own UDP port, to test several "
		 "devices or striping on one host (0: one per address)"),
	SOFT_U32("soft_mtu", mtu, 8928, SOFTSRD_MIN_MTU, SOFTSRD_MAX_MTU,
		 "softsrd: largest send in bytes, also the RDMA packet size "
		 "(the default is EFA's)"),
	SOFT_U32("soft_max_sq_wr", max_sq_wr, 4096, 1, 1u << 20,
		 "softsrd: send queue depth limit"),
	SOFT_U32("soft_max_rq_wr", max_rq_wr, 32768, 1, 1u << 20,
		 "softsrd: receive queue depth limit"),
	SOFT_U32("soft_max_sge", max_sge, 2, 1, SOFTSRD_MAX_SGE,
		 "softsrd: SGEs per work request"),
	SOFT_U32("soft_inline_buf_size", inline_buf_size, 32, 0, 4096,
		 "softsrd: inline payload limit in bytes"),
	SOFT_U32("soft_max_rdma_size", max_rdma_size, 1u << 30, 1, 1u << 30,
		 "softsrd: largest RDMA read/write in bytes"),
	SOFT_BOOL("soft_rdma_read", rdma_read, 1,
		  "softsrd: offer RDMA read"),
	SOFT_BOOL("soft_rdma_write", rdma_write, 1,
		  "softsrd: offer RDMA write"),
	SOFT_BOOL("soft_rnr_retry", rnr_retry, 1,
		  "softsrd: offer the RNR retry capability"),
	{ .name = "soft_in_order", .type = WEFT_SETTING_ENUM,
	  SOFT_FIELD(in_order), .def = SOFTSRD_ORDER_NONE,
	  .names = softsrd_order_names,
	  .help = "softsrd: in-order data placement within a message it "
		  "claims and keeps" },
	{ .name = "soft_io", .type = WEFT_SETTING_ENUM, SOFT_FIELD(io),
	  .def = SOFTSRD_IO_AUTO, .names = softsrd_io_names,
	  .help = "softsrd: datagram batching (auto: io_uring unless "
		  "refused)" },
	SOFT_U32("soft_loss", loss, 0, 0, 100,
		 "softsrd: percent of outgoing datagrams dropped"),
	SOFT_U32("soft_dup", dup, 0, 0, 100,
		 "softsrd: percent of outgoing datagrams sent twice"),
	SOFT_U32("soft_reorder", reorder, 0, 0, 100,
		 "softsrd: percent of outgoing datagrams held back behind "
		 "later ones"),
	SOFT_U32("soft_corrupt", corrupt, 0, 0, 100,
		 "softsrd: percent of outgoing datagrams with one bit flipped "
		 "after the CRC was computed"),
	SOFT_BOOL("soft_crc", crc, 0,
		  "softsrd: CRC32C of every datagram, sent and required: a "
		  "corrupted datagram is dropped and sent again, never "
		  "delivered (both ends must agree)"),
	SOFT_U32("soft_delay_us", delay_us, 0, 0, 10000000,
		 "softsrd: delay added to every outgoing datagram"),
	SOFT_U32("soft_rnr", rnr, 0, 0, 100,
		 "softsrd: percent of incoming sends refused with RNR even "
		 "with a receive posted"),
	SOFT_U32("soft_rto_us", rto_us, 2000, 10, 10000000,
		 "softsrd: retransmission timeout toward a peer before a "
		 "round trip to it was measured"),
	SOFT_U32("soft_rto_min_us", rto_min_us, 1000, 10, 10000000,
		 "softsrd: floor of the retransmission timeout (measured "
		 "round trip plus four times its variation, doubling per "
		 "retry)"),
	SOFT_U32("soft_rto_max_us", rto_max_us, 100000, 10, 10000000,
		 "softsrd: ceiling of the retransmission timeout, also after "
		 "doubling"),
	SOFT_U32("soft_dead_ms", dead_ms, 5000, 1, 3600000,
		 "softsrd: a peer that has sent nothing at all for this long "
		 "while a packet waits for it is unresponsive: its work "
		 "requests fail with IBV_WC_RESP_TIMEOUT_ERR (a peer starved "
		 "of CPU or stopped for less is not gone)"),
	SOFT_U32("soft_rnr_delay_us", rnr_delay_us, 100, 0, 10000000,
		 "softsrd: wait before resending a send refused with RNR"),
	SOFT_U32("soft_ack_delay_us", ack_delay_us, 50, 0, 10000000,
		 "softsrd: how long the acknowledgement of a received send "
		 "may wait for a packet going back to carry it (0: never "
		 "waits; at most a quarter of FI_SRD_SOFT_RTO_MIN_US)"),
	SOFT_U32("soft_pkts_per_qp", pkts_per_qp, 1024, 16, 1u << 16,
		 "softsrd: packets in flight per QP"),
	SOFT_U32("soft_rdma_pkt", rdma_pkt, 0, 0, SOFTSRD_MAX_RDMA_PKT,
		 "softsrd: payload bytes per RDMA read/write packet, rounded "
		 "down to 128 (0: 65408 when the socket got a 4 MiB receive "
		 "buffer, else the MTU)"),
	SOFT_U32("soft_window", window, 64, 1, SOFTSRD_WIN,
		 "softsrd: packets in flight per peer QP: bounds what a "
		 "receiver's socket must hold"),
};

void softsrd_params_define(const struct fi_provider *prov)
{
	weft_settings_define(prov, softsrd_setting_table,
			     WEFT_ARRAY_SIZE(softsrd_setting_table));
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

void softsrd_config_read(struct softsrd_config *cfg)
{
	softsrd_init(NULL);
	softsrd_crc_setup();
	memset(cfg, 0, sizeof(*cfg));
	weft_settings_read(softsrd_prov, softsrd_setting_table,
			   WEFT_ARRAY_SIZE(softsrd_setting_table), cfg);
	/* the peer must get its answer well before it resends (its RTO is
	 * not known here: this device's is the best guess) */
	if (cfg->rto_min_us > cfg->rto_max_us) {
		FI_WARN(softsrd_prov, FI_LOG_CORE,
			"FI_SRD_SOFT_RTO_MIN_US=%u is above FI_SRD_SOFT_RTO_MAX_US="
			"%u: using %u for both\n", cfg->rto_min_us,
			cfg->rto_max_us, cfg->rto_max_us);
		cfg->rto_min_us = cfg->rto_max_us;
	}
	if (cfg->rto_us < cfg->rto_min_us)
		cfg->rto_us = cfg->rto_min_us;
	if (cfg->rto_us > cfg->rto_max_us)
		cfg->rto_us = cfg->rto_max_us;
	if (cfg->ack_delay_us > cfg->rto_min_us / 4)
		cfg->ack_delay_us = cfg->rto_min_us / 4;
	if (cfg->rdma_pkt && cfg->rdma_pkt < 128)
		cfg->rdma_pkt = 128;
}
