/* SPDX-License-Identifier: MIT */
/*
 * The tcp provider's settings (FI_TCP_*): defined with fi_param_define,
 * read once at provider init; values out of range keep the default and
 * say so. man/fi_tcp.7.md documents each one.
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <string.h>

#include "tcp.h"

struct tcp_env tcp_env = {
	.iface = NULL,
	.conn_timeout_ms = 10000,
	.io_uring = 1,
	.conns_per_peer = 1,
	.eager_size = 64 * 1024,
	.stripe_min = 256 * 1024,
	.rx_buf_size = 64 * 1024,
	.tx_size = 1024,
	.rx_size = 1024,
	.unexp_mem = 64 * 1024 * 1024,
	.sock_buf = 0,
	.uring_entries = 256,
};

static void tcp_params_define(void)
{
	fi_param_define(&tcp_prov, "iface", FI_PARAM_STRING,
			"Interfaces to use, a comma list (e.g. eth0,eth1). "
			"With several, large messages are striped across one "
			"connection per interface. Default: every interface, "
			"the default route's first.");
	fi_param_define(&tcp_prov, "conn_timeout_ms", FI_PARAM_SIZE_T,
			"Milliseconds a connect and handshake may take, and "
			"that unacknowledged data or keepalive probes may wait "
			"before the peer counts as dead: its operations then "
			"end in error completions (default %zu).",
			tcp_env.conn_timeout_ms);
	fi_param_define(&tcp_prov, "io_uring", FI_PARAM_BOOL,
			"Move bytes with io_uring (batched submissions and "
			"completions); 0 uses epoll and non-blocking calls. "
			"Where io_uring is refused, epoll is used anyway "
			"(default 1).");
	fi_param_define(&tcp_prov, "conns_per_peer", FI_PARAM_SIZE_T,
			"Connections per peer over which large messages are "
			"striped, 1..8 (default %zu).", tcp_env.conns_per_peer);
	fi_param_define(&tcp_prov, "eager_size", FI_PARAM_SIZE_T,
			"Messages up to this many bytes are sent at once; "
			"larger ones wait for the receiver's grant "
			"(rendezvous), 1 KiB..1 MiB (default %zu).",
			tcp_env.eager_size);
	fi_param_define(&tcp_prov, "stripe_min", FI_PARAM_SIZE_T,
			"Rendezvous messages of at least this many bytes are "
			"split across a peer's connections (default %zu).",
			tcp_env.stripe_min);
	fi_param_define(&tcp_prov, "rx_buf_size", FI_PARAM_SIZE_T,
			"Bytes a connection reads ahead into its buffer, 4 "
			"KiB..16 MiB (default %zu).", tcp_env.rx_buf_size);
	fi_param_define(&tcp_prov, "tx_size", FI_PARAM_SIZE_T,
			"Transmit operations an endpoint keeps outstanding "
			"(default %zu).", tcp_env.tx_size);
	fi_param_define(&tcp_prov, "rx_size", FI_PARAM_SIZE_T,
			"Posted receives an endpoint accepts (default %zu).",
			tcp_env.rx_size);
	fi_param_define(&tcp_prov, "unexp_mem", FI_PARAM_SIZE_T,
			"Bytes of unexpected eager messages an endpoint keeps; "
			"beyond, it stops reading the sender until receives "
			"are posted (default %zu).", tcp_env.unexp_mem);
	fi_param_define(&tcp_prov, "sock_buf", FI_PARAM_SIZE_T,
			"SO_SNDBUF and SO_RCVBUF of connections; 0 leaves the "
			"kernel's autotuning (default %zu).", tcp_env.sock_buf);
	fi_param_define(&tcp_prov, "uring_entries", FI_PARAM_SIZE_T,
			"Submission queue entries of an endpoint's io_uring, "
			"a power of two 8..4096 (default %zu).",
			tcp_env.uring_entries);
}

static void tcp_param_size(const char *name, size_t *dst, size_t min,
			   size_t max)
{
	size_t v;

	if (fi_param_get_size_t(&tcp_prov, name, &v))
		return;
	if (v < min || v > max) {
		FI_WARN(&tcp_prov, FI_LOG_CORE,
			"FI_TCP_%s=%zu out of range %zu..%zu, using %zu\n",
			name, v, min, max, *dst);
		return;
	}
	*dst = v;
}

static void tcp_params_read(void)
{
	char *s = NULL;
	int b;

	if (!fi_param_get_str(&tcp_prov, "iface", &s) && s && *s)
		tcp_env.iface = strdup(s);
	if (!fi_param_get_bool(&tcp_prov, "io_uring", &b))
		tcp_env.io_uring = !!b;
	tcp_param_size("conn_timeout_ms", &tcp_env.conn_timeout_ms, 1,
		       24 * 3600 * 1000);
	tcp_param_size("conns_per_peer", &tcp_env.conns_per_peer, 1,
		       TCP_STRIPE_MAX);
	tcp_param_size("eager_size", &tcp_env.eager_size, 1024, 1 << 20);
	tcp_param_size("stripe_min", &tcp_env.stripe_min, 4096,
		       TCP_MAX_MSG_SIZE);
	tcp_param_size("rx_buf_size", &tcp_env.rx_buf_size, 4096, 16 << 20);
	tcp_param_size("tx_size", &tcp_env.tx_size, 16, 1 << 20);
	tcp_param_size("rx_size", &tcp_env.rx_size, 16, 1 << 20);
	tcp_param_size("unexp_mem", &tcp_env.unexp_mem, 1 << 20,
		       (size_t)1 << 40);
	tcp_param_size("sock_buf", &tcp_env.sock_buf, 0, 1 << 30);
	tcp_param_size("uring_entries", &tcp_env.uring_entries, 8, 4096);
	if (tcp_env.uring_entries & (tcp_env.uring_entries - 1)) {
		FI_WARN(&tcp_prov, FI_LOG_CORE,
			"FI_TCP_URING_ENTRIES=%zu is not a power of two, "
			"using 256\n", tcp_env.uring_entries);
		tcp_env.uring_entries = 256;
	}
}

void tcp_params_init(void)
{
	tcp_params_define();
	tcp_params_read();
}

void tcp_params_fini(void)
{
	free(tcp_env.iface);
	tcp_env.iface = NULL;
}
