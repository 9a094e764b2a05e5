/* SPDX-License-Identifier: MIT */
/*
 * The tcp provider's settings (FI_TCP_*), each stated once in a table
 * (weft/settings.h): defined with fi_param_define and read at provider
 * init; a value out of range keeps the default and says so. Endpoints copy
 * what they use later (tcp_ep.c). man/fi_tcp.7.md documents each one.
 */
#include "weft/compat.h"

#include "weft/settings.h"
#include "tcp.h"

struct tcp_env tcp_env;

#define TCP_FIELD(m) WEFT_SETTING_FIELD(struct tcp_env, m)

/* In the order weft_info -e lists them. */
static const struct weft_setting tcp_setting_table[] = {
	{ .name = "iface", .type = WEFT_SETTING_STRING, TCP_FIELD(iface),
	  .def_text = "every interface",
	  .help = "Interfaces to use, a comma list (e.g. eth0,eth1), in "
		  "order of preference; with several, large messages are "
		  "striped across one connection per interface" },
	{ .name = "conn_timeout_ms", .type = WEFT_SETTING_SIZE,
	  TCP_FIELD(conn_timeout_ms), .def = 10000, .min = 1,
	  .max = 24 * 3600 * 1000,
	  .help = "Milliseconds a connect and handshake may take, and the "
		  "base of keepalive and TCP_USER_TIMEOUT: an unreachable or "
		  "dead peer's operations end in error completions within it" },
	{ .name = "io_uring", .type = WEFT_SETTING_BOOL, TCP_FIELD(io_uring),
	  .def = 1,
	  .help = "Move bytes with io_uring; no uses epoll (also the fallback "
		  "where io_uring is refused)" },
	{ .name = "conns_per_peer", .type = WEFT_SETTING_SIZE,
	  TCP_FIELD(conns_per_peer), .def = 1, .min = 1, .max = TCP_STRIPE_MAX,
	  .help = "Connections per peer over which large messages are "
		  "striped" },
	{ .name = "eager_size", .type = WEFT_SETTING_SIZE,
	  TCP_FIELD(eager_size), .def = 64 * 1024, .min = 1024,
	  .max = 1024 * 1024,
	  .help = "Messages up to this many bytes are sent at once; larger "
		  "ones wait for the receiver's grant (rendezvous)" },
	{ .name = "stripe_min", .type = WEFT_SETTING_SIZE,
	  TCP_FIELD(stripe_min), .def = 256 * 1024, .min = 4096,
	  .help = "Rendezvous messages of at least this many bytes are split "
		  "across a peer's connections" },
	{ .name = "rx_buf_size", .type = WEFT_SETTING_SIZE,
	  TCP_FIELD(rx_buf_size), .def = 64 * 1024, .min = 4096,
	  .max = 16 * 1024 * 1024,
	  .help = "Bytes a connection reads ahead into its buffer" },
	{ .name = "tx_size", .type = WEFT_SETTING_SIZE, TCP_FIELD(tx_size),
	  .def = 1024, .min = 16, .max = 1 << 20,
	  .help = "Transmit operations an endpoint keeps outstanding" },
	{ .name = "rx_size", .type = WEFT_SETTING_SIZE, TCP_FIELD(rx_size),
	  .def = 1024, .min = 16, .max = 1 << 20,
	  .help = "Posted receives an endpoint accepts" },
	{ .name = "unexp_mem", .type = WEFT_SETTING_SIZE,
	  TCP_FIELD(unexp_mem), .def = 64 * 1024 * 1024, .min = 1024 * 1024,
	  .help = "Bytes of unexpected eager messages an endpoint keeps; "
		  "beyond, it stops reading the sender until receives are "
		  "posted" },
	{ .name = "sock_buf", .type = WEFT_SETTING_SIZE, TCP_FIELD(sock_buf),
	  .def = 0, .max = 1 << 30,
	  .help = "SO_SNDBUF and SO_RCVBUF of connections; 0 leaves the "
		  "kernel's autotuning" },
	{ .name = "uring_entries", .type = WEFT_SETTING_SIZE,
	  TCP_FIELD(uring_entries), .def = 256, .min = 8, .max = 4096,
	  .flags = WEFT_SETTING_POW2,
	  .help = "Submission queue entries of an endpoint's io_uring" },
	{ .name = "poll_direct", .type = WEFT_SETTING_SIZE,
	  TCP_FIELD(poll_direct), .def = 2, .max = 64,
	  .help = "While an endpoint has at most this many connections, "
		  "polls read and write them with plain recv/sendmsg instead "
		  "of asking the engine which are ready (one system call per "
		  "arrival); 0 turns it off" },
};

void tcp_params_init(void)
{
	weft_settings_define(&tcp_prov, tcp_setting_table,
			     WEFT_ARRAY_SIZE(tcp_setting_table));
	weft_settings_read(&tcp_prov, tcp_setting_table,
			   WEFT_ARRAY_SIZE(tcp_setting_table), &tcp_env);
}
