/* SPDX-License-Identifier: MIT */
/*
 * The epoll engine: edge-triggered readiness, non-blocking readv/sendmsg.
 * A connection that became readable is read until the socket is drained
 * (or its frames stall); one that became writable gets its whole queue
 * in one sendmsg per TCP_TX_IOV_MAX iovecs. A poll that finds nothing
 * costs one epoll_wait.
 *
 * Direct reads (tcp_direct.c): with few connections a poll reads them
 * without epoll_wait; epoll still runs every TCP_EPOLL_WAIT_EVERY polls,
 * for accepts, new connections and writability, and the edges it
 * reports for sockets already drained cost one empty read each.
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
#define TCP_EPOLL_WAIT_EVERY 16u	/* direct polls between two epoll_waits */

struct tcp_epoll {
	int epfd;
	unsigned int direct_polls;
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

/* What the socket refuses waits for EPOLLOUT. */
static void tcp_epoll_write(struct tcp_conn *c)
{
	if (!tcp_direct_write(c))
		c->tx_blocked = true;
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
	while (c->io_flags & TCP_IO_RX_READY) {
		switch (tcp_direct_read(c, false)) {
		case TCP_DIRECT_SHORT:
			/* A short read drained the socket: the next arrival
			 * raises a new edge. Unless the peer already closed:
			 * no edge will say so again, and the next read
			 * returns the end of the stream. */
			if (c->io_flags & TCP_IO_RX_HUP)
				continue;
			/* fallthrough */
		case TCP_DIRECT_EMPTY:
			c->io_flags &= ~TCP_IO_RX_READY;
			return;
		default:
			return;
		}
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
			WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_CTRL,
				"accept: %s\n",
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

static void tcp_epoll_poll_direct(struct tcp_ep *ep)
{
	struct tcp_conn *c;

	/* A frame read here may open a connection (appended, CONNECTING)
	 * or fail this one (marked CLOSED, freed later): neither unlinks. */
	for (c = ep->conns; c; c = c->next) {
		if (c->state != TCP_CONN_READY)
			continue;
		c->io_flags |= TCP_IO_RX_READY;
		tcp_epoll_read(c);
	}
}

static void tcp_epoll_poll(struct tcp_ep *ep)
{
	struct tcp_epoll *e = tcp_epoll(ep);
	int n, i;

	if (++e->direct_polls % TCP_EPOLL_WAIT_EVERY && tcp_direct_ok(ep)) {
		tcp_epoll_poll_direct(ep);
		return;
	}
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
