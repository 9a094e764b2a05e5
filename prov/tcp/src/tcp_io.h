/* SPDX-License-Identifier: MIT */
/*
 * The I/O engine of an endpoint: io_uring (tcp_uring.c) or epoll
 * (tcp_epoll.c), one const table chosen at fi_endpoint and logged.
 *
 * The engine moves bytes; the connection layer says where they go and
 * what they mean. Receiving: the engine reads into the iovecs
 * tcp_rx_iov gives (the connection's buffer, or the rest of a payload
 * straight into its destination followed by the buffer) and reports with
 * tcp_rx_landed. Sending: it writes what tcp_tx_iov gives (the queued
 * frames, one sendmsg for many) and reports with tcp_tx_sent.
 * Connections: tcp_conn_connected when a connect ends, tcp_conn_accepted
 * for a new socket on a listener.
 *
 * Both engines keep a closed connection's memory alive until no request
 * of theirs can touch it (tcp_conn_free_closed asks conn_idle).
 */
#ifndef TCP_IO_H
#define TCP_IO_H

#include <stdbool.h>

struct tcp_ep;
struct tcp_conn;
struct tcp_listener;

struct tcp_io_ops {
	const char *name;
	/* Set up the engine for ep (ep->io_priv). 0, or a negative error
	 * (-FI_ENOSYS: not available here, the caller falls back). */
	int (*open)(struct tcp_ep *ep);
	void (*close)(struct tcp_ep *ep);
	/* Start accepting on l (a listening, non-blocking socket). */
	int (*listen)(struct tcp_ep *ep, struct tcp_listener *l);
	/* A new socket: connecting (c->state CONNECTING) or accepted. */
	int (*conn_add)(struct tcp_ep *ep, struct tcp_conn *c);
	/* c is closing: stop every request on it (its fd is closed by the
	 * caller afterwards). */
	void (*conn_del)(struct tcp_ep *ep, struct tcp_conn *c);
	/* Whether nothing of the engine refers to c any more. */
	bool (*conn_idle)(struct tcp_ep *ep, struct tcp_conn *c);
	/* c has frames queued: write them now if the socket takes them. */
	void (*tx_kick)(struct tcp_ep *ep, struct tcp_conn *c);
	/* c may take bytes again (a stalled frame went through). */
	void (*rx_kick)(struct tcp_ep *ep, struct tcp_conn *c);
	/* One pass: whatever is ready is read, written, accepted. */
	void (*poll)(struct tcp_ep *ep);
	/* Best effort, at close: write what is queued without waiting. */
	void (*flush)(struct tcp_ep *ep, struct tcp_conn *c);
};

/* tcp_direct.c: reading sockets without the engine (see there). */
enum tcp_direct_res {
	TCP_DIRECT_EMPTY,	/* the socket had nothing (EAGAIN) */
	TCP_DIRECT_SHORT,	/* a read got less than asked: drained */
	TCP_DIRECT_EXACT,	/* stop_exact: the rest of a large payload is
				 * next (c->rx_iov holds its iovecs) */
	TCP_DIRECT_STOP,	/* c takes no bytes now (stalled, closed) */
};
/* Whether a poll should read every connection of ep directly. */
bool tcp_direct_ok(struct tcp_ep *ep);
/* Write c's queue: true once it is empty or c failed, false when the
 * socket took no more. */
bool tcp_direct_write(struct tcp_conn *c);
/* Read c until one of the results above. */
enum tcp_direct_res tcp_direct_read(struct tcp_conn *c, bool stop_exact);

extern const struct tcp_io_ops tcp_io_epoll;
extern const struct tcp_io_ops tcp_io_uring;

/* io_flags bits of struct tcp_conn (engine private). */
#define TCP_IO_RX_READY 0x01	/* epoll: readable, not drained */
#define TCP_IO_TX_READY 0x02	/* epoll: writable */
#define TCP_IO_RX_HUP 0x04	/* epoll: the peer closed or reset */
/* io_inflight bits (io_uring requests in flight). */
#define TCP_IO_RX 0x01
#define TCP_IO_TX 0x02
#define TCP_IO_CONNECT 0x04

#endif /* TCP_IO_H */
