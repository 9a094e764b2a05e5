/* SPDX-License-Identifier: MIT */
/*
 * Direct reads: a poll reads an endpoint's sockets with plain
 * non-blocking recv instead of asking its engine which are ready, while
 * it has at most FI_TCP_POLL_DIRECT connections. An arrival then costs
 * one system call, as in a plain socket loop: epoll would need
 * epoll_wait and then the read; io_uring a poll wakeup, task work and
 * an io_uring_enter before the completion shows. With many
 * connections one readiness call is cheaper than a read per socket, so
 * the engines go back to their own way.
 *
 * Bulk transfers are another matter: a socket polled with recv takes
 * its arrivals in small pieces, and its lock, taken by every empty
 * poll, keeps the softirq delivering the stream waiting. For
 * TCP_DIRECT_BULK_NS after a frame of more than
 * TCP_DIRECT_PAYLOAD_MAX payload bytes went either way, the engine
 * moves the bytes; io_uring also takes over the rest of such a payload
 * (one MSG_WAITALL request) when it begins during direct polls.
 *
 * Writes go the same way: a plain non-blocking sendmsg of the queued
 * frames (epoll always, io_uring while it reads directly); what the
 * socket refuses waits for the engine.
 */
#include "weft/compat.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "tcp.h"
#include "tcp_io.h"

bool tcp_direct_ok(struct tcp_ep *ep)
{
	const struct tcp_conn *c;
	size_t n = 0;

	if (WEFT_UNLIKELY(ep->bulk_until_ns)) {
		if (util_time_coarse_ns() < ep->bulk_until_ns)
			return false;
		ep->bulk_until_ns = 0;
	}
	for (c = ep->conns; c; c = c->next) {
		if (++n > tcp_env.poll_direct || c->state != TCP_CONN_READY ||
		    c->tx_blocked || c->rx_stalled)
			return false;
	}
	return n > 0;
}

bool tcp_direct_write(struct tcp_conn *c)
{
	struct msghdr msg = { .msg_iov = c->tx_iov };
	uint64_t bytes;
	ssize_t n;

	while (c->tx_head && c->state != TCP_CONN_CLOSED) {
		msg.msg_iovlen = tcp_tx_iov(c, c->tx_iov, TCP_TX_IOV_MAX,
					    &bytes);
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return false;
			tcp_conn_fail(c, errno, "send failed");
			return true;
		}
		tcp_tx_sent(c, (size_t)n);
		if ((uint64_t)n < bytes)
			return false;	/* the socket is full */
	}
	return true;
}

enum tcp_direct_res tcp_direct_read(struct tcp_conn *c, bool stop_exact)
{
	struct iovec *iov = c->rx_iov;
	size_t cnt, i, want;
	ssize_t n;

	while (tcp_rx_open(c)) {
		cnt = tcp_rx_iov(c, iov, stop_exact ? TCP_DIRECT_PAYLOAD_MAX :
						      UINT64_MAX);
		if (!cnt) {
			tcp_conn_fail(c, TCP_EPROTO, "receive buffer full");
			return TCP_DIRECT_STOP;
		}
		if (stop_exact && c->rx_exact)
			return TCP_DIRECT_EXACT;
		/* recv for one iovec: readv would copy the iovec in too. */
		n = cnt == 1 ? recv(c->fd, iov[0].iov_base, iov[0].iov_len,
				    MSG_DONTWAIT) :
			       readv(c->fd, iov, (int)cnt);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return TCP_DIRECT_EMPTY;
			tcp_rx_landed(c, -errno);
			return TCP_DIRECT_STOP;
		}
		for (i = 0, want = 0; i < cnt; i++)
			want += iov[i].iov_len;
		tcp_rx_landed(c, n);
		if (n == 0)
			return TCP_DIRECT_STOP;
		if ((size_t)n < want)
			return TCP_DIRECT_SHORT;
	}
	return TCP_DIRECT_STOP;
}
