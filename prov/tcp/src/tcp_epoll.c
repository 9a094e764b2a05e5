/* SPDX-License-Identifier: MIT */
/*
 * The epoll engine: edge-triggered readiness, non-blocking readv/sendmsg.
 * A connection that became readable is read until the socket is drained
 * (or its frames stall); one that became writable gets its whole queue
 * in one sendmsg per TCP_TX_IOV_MAX iovecs. A poll that finds nothing
 * costs one epoll_wait.
 */
#include "weft/compat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"
#include "tcp_io.h"

#define TCP_EPOLL_EVENTS 64
#define TCP_EPOLL_LISTENER 1ull	/* low bit of a listener's epoll data */

struct tcp_epoll {
	int epfd;
	struct epoll_event ev[TCP_EPOLL_EVENTS];
};

static struct tcp_epoll *tcp_epoll(struct tcp_ep *ep)
{
	return ep->io_priv;
}

static int tcp_epoll_open(struct tcp_ep *ep)
{
	struct tcp_epoll *e = calloc(1, sizeof(*e));

	if (!e)
		return -FI_ENOMEM;
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e->epfd < 0) {
		free(e);
		return -errno;
	}
	ep->io_priv = e;
	return 0;
}

static void tcp_epoll_close(struct tcp_ep *ep)
{
	struct tcp_epoll *e = tcp_epoll(ep);

	if (!e)
		return;
	close(e->epfd);
	free(e);
	ep->io_priv = NULL;
}

static int tcp_epoll_listen(struct tcp_ep *ep, struct tcp_listener *l)
{
	struct epoll_event ev = {
		.events = EPOLLIN,
		.data.u64 = (uintptr_t)l | TCP_EPOLL_LISTENER,
	};

	return epoll_ctl(tcp_epoll(ep)->epfd, EPOLL_CTL_ADD, l->fd, &ev) ?
	       -errno : 0;
}

static int tcp_epoll_conn_add(struct tcp_ep *ep, struct tcp_conn *c)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
		.data.ptr = c,
	};

	c->io_flags = 0;
	return epoll_ctl(tcp_epoll(ep)->epfd, EPOLL_CTL_ADD, c->fd, &ev) ?
	       -errno : 0;
}

static void tcp_epoll_conn_del(struct tcp_ep *ep, struct tcp_conn *c)
{
	(void)epoll_ctl(tcp_epoll(ep)->epfd, EPOLL_CTL_DEL, c->fd, NULL);
}

static bool tcp_epoll_conn_idle(struct tcp_ep *ep, struct tcp_conn *c)
{
	(void)ep; (void)c;
	return true;
}

static void tcp_epoll_write(struct tcp_conn *c)
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
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				c->tx_blocked = true;
				return;
			}
			tcp_conn_fail(c, errno, "send failed");
			return;
		}
		tcp_tx_sent(c, (size_t)n);
		if ((uint64_t)n < bytes) {
			/* The socket is full: EPOLLOUT says when it drains. */
			c->tx_blocked = true;
			return;
		}
	}
}

static void tcp_epoll_tx_kick(struct tcp_ep *ep, struct tcp_conn *c)
{
	(void)ep;
	if (c->state == TCP_CONN_CONNECTING || c->tx_blocked)
		return;
	tcp_epoll_write(c);
}

static void tcp_epoll_read(struct tcp_conn *c)
{
	struct iovec *iov = c->rx_iov;
	size_t cnt, i, want;
	ssize_t n;

	while (tcp_rx_open(c) && (c->io_flags & TCP_IO_RX_READY)) {
		cnt = tcp_rx_iov(c, iov);
		if (!cnt) {
			tcp_conn_fail(c, TCP_EPROTO, "receive buffer full");
			return;
		}
		n = readv(c->fd, iov, (int)cnt);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				c->io_flags &= ~TCP_IO_RX_READY;
				return;
			}
			tcp_rx_landed(c, -errno);
			return;
		}
		for (i = 0, want = 0; i < cnt; i++)
			want += iov[i].iov_len;
		tcp_rx_landed(c, n);
		/* A short read drained the socket: the next arrival raises
		 * a new edge, no need to try (and fail) again now. Unless
		 * the peer already closed: no edge will say so again, and
		 * the next read returns the end of the stream. */
		if (n > 0 && (size_t)n < want && !(c->io_flags & TCP_IO_RX_HUP))
			c->io_flags &= ~TCP_IO_RX_READY;
		if (n == 0)
			return;
	}
}

static void tcp_epoll_rx_kick(struct tcp_ep *ep, struct tcp_conn *c)
{
	(void)ep;
	tcp_epoll_read(c);
}

static void tcp_epoll_accept(struct tcp_ep *ep, struct tcp_listener *l)
{
	int fd;

	for (;;) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			tcp_conn_accepted(ep, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			FI_WARN(&tcp_prov, FI_LOG_EP_CTRL, "accept: %s\n",
				strerror(errno));
		return;
	}
}

static void tcp_epoll_connected(struct tcp_conn *c)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	tcp_conn_connected(c, err);
}

static void tcp_epoll_event(struct tcp_ep *ep, struct tcp_conn *c,
			    uint32_t events)
{
	if (c->state == TCP_CONN_CLOSED)
		return;
	if (c->state == TCP_CONN_CONNECTING) {
		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		tcp_epoll_connected(c);
		if (c->state == TCP_CONN_CLOSED)
			return;
	}
	if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
		c->tx_blocked = false;
		if (c->tx_head)
			tcp_epoll_write(c);
	}
	if (events & (EPOLLRDHUP | EPOLLERR | EPOLLHUP))
		c->io_flags |= TCP_IO_RX_HUP;
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) {
		c->io_flags |= TCP_IO_RX_READY;
		tcp_epoll_read(c);
	}
}

static void tcp_epoll_poll(struct tcp_ep *ep)
{
	struct tcp_epoll *e = tcp_epoll(ep);
	int n, i;

	n = epoll_wait(e->epfd, e->ev, TCP_EPOLL_EVENTS, 0);
	for (i = 0; i < n; i++) {
		uint64_t d = e->ev[i].data.u64;

		if (d & TCP_EPOLL_LISTENER)
			tcp_epoll_accept(ep, (struct tcp_listener *)(uintptr_t)
					 (d & ~TCP_EPOLL_LISTENER));
		else
			tcp_epoll_event(ep, e->ev[i].data.ptr, e->ev[i].events);
	}
}

static void tcp_epoll_flush(struct tcp_ep *ep, struct tcp_conn *c)
{
	(void)ep;
	c->tx_blocked = false;
	tcp_epoll_write(c);
}

const struct tcp_io_ops tcp_io_epoll = {
	.name = "epoll",
	.open = tcp_epoll_open,
	.close = tcp_epoll_close,
	.listen = tcp_epoll_listen,
	.conn_add = tcp_epoll_conn_add,
	.conn_del = tcp_epoll_conn_del,
	.conn_idle = tcp_epoll_conn_idle,
	.tx_kick = tcp_epoll_tx_kick,
	.rx_kick = tcp_epoll_rx_kick,
	.poll = tcp_epoll_poll,
	.flush = tcp_epoll_flush,
};
