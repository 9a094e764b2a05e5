/* SPDX-License-Identifier: MIT */
/*
 * Connections: sockets, the state machine, and the handshake.
 *
 *   connector: CONNECTING --connect done--> HELLO_WAIT (HELLO sent)
 *              --HELLO_ACK--> READY, or --REJECT--> closed
 *   acceptor:  ACCEPTED --HELLO--> READY (HELLO_ACK sent) or closed
 *              (REJECT sent)
 * Every state before READY has a deadline (FI_TCP_CONN_TIMEOUT_MS).
 *
 * One primary connection per pair of endpoints. When both connect at
 * once, the one made by the endpoint with the smaller name survives: the
 * larger endpoint accepts it and drops its own attempt (nothing but HELLO
 * went out on it), the smaller one rejects the other's attempt as a
 * duplicate. A HELLO from a known name with a new incarnation number is
 * a restarted peer: what was pending toward the old one fails first.
 * A connection to oneself is two sockets: the outgoing one carries every
 * frame, the accepted end (rx_only) only receives them.
 */
#include "weft/compat.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <utlist.h>

#include "tcp.h"
#include "tcp_io.h"

#define TCP_LISTEN_BACKLOG 1024

static void tcp_sock_opt(int fd, int level, int name, int val)
{
	(void)setsockopt(fd, level, name, &val, sizeof(val));
}

/* Options of every connection: no Nagle (frames are batched by us), and
 * a dead peer found within the timeout even while no data moves. */
static void tcp_sock_setup(struct tcp_ep *ep, int fd)
{
	uint64_t ms = ep->timeout_ns / 1000000;
	int idle = (int)(ms / 4000);

	tcp_sock_opt(fd, IPPROTO_TCP, TCP_NODELAY, 1);
	tcp_sock_opt(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
	tcp_sock_opt(fd, IPPROTO_TCP, TCP_KEEPIDLE, idle > 0 ? idle : 1);
	tcp_sock_opt(fd, IPPROTO_TCP, TCP_KEEPINTVL, 1);
	tcp_sock_opt(fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
	tcp_sock_opt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT,
		     (int)(ms * 3 / 4 + 1));
	if (tcp_env.sock_buf) {
		tcp_sock_opt(fd, SOL_SOCKET, SO_SNDBUF, (int)tcp_env.sock_buf);
		tcp_sock_opt(fd, SOL_SOCKET, SO_RCVBUF, (int)tcp_env.sock_buf);
	}
}

static struct tcp_conn *tcp_conn_new(struct tcp_ep *ep, int fd, uint8_t state)
{
	struct tcp_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ep = ep;
	c->fd = fd;
	c->state = state;
	c->deadline_ns = util_time_coarse_ns() + ep->timeout_ns;
	if (tcp_rx_conn_init(c)) {
		free(c);
		return NULL;
	}
	DL_APPEND(ep->conns, c);
	return c;
}

/* The local and remote addresses of stripe role toward peer: stripe k
 * pairs our k-th interface with its k-th when both have one, else both
 * first interfaces (FI_TCP_CONNS_PER_PEER). */
static void tcp_conn_ends(struct tcp_ep *ep, struct tcp_peer *peer,
			  uint8_t role, union tcp_addr *local,
			  union tcp_addr *remote)
{
	*remote = peer->addr;
	*local = ep->listeners[0].addr;
	if (role && role < ep->nlisteners && role < peer->naddr) {
		tcp_addr_from_wire(&peer->raddr[role], remote);
		*local = ep->listeners[role].addr;
	}
	tcp_addr_set_port(local, 0);
}

int tcp_conn_connect(struct tcp_ep *ep, struct tcp_peer *peer, uint8_t role)
{
	union tcp_addr local, remote;
	struct tcp_conn *c;
	int fd, ret;

	tcp_conn_ends(ep, peer, role, &local, &remote);
	fd = socket(ep->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	tcp_sock_setup(ep, fd);
	if (bind(fd, &local.sa, tcp_addr_len(&local)) ||
	    (connect(fd, &remote.sa, tcp_addr_len(&remote)) &&
	     errno != EINPROGRESS)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	c = tcp_conn_new(ep, fd, TCP_CONN_CONNECTING);
	if (!c) {
		close(fd);
		return -FI_ENOMEM;
	}
	c->peer = peer;
	c->role = role;
	c->outgoing = true;
	peer->stripe[role] = c;
	if (!role)
		peer->conn = c;
	ret = ep->io->conn_add(ep, c);
	if (ret)
		tcp_conn_close(c, 0);
	return ret;
}

/* What we tell the other side about ourselves. */
static void tcp_conn_hello_fill(struct tcp_ep *ep, uint8_t role,
				struct tcp_hello *h)
{
	size_t i;

	memset(h, 0, sizeof(*h));
	h->ver_min = TCP_WIRE_VERSION_MIN;
	h->ver_max = TCP_WIRE_VERSION_MAX;
	h->role = role;
	h->naddr = (uint16_t)ep->nlisteners;
	h->eager_max = (uint32_t)ep->eager_max;
	h->nonce = ep->nonce;
	for (i = 0; i < ep->nlisteners; i++)
		tcp_addr_to_wire(&ep->listeners[i].addr, &h->addr[i]);
}

static int tcp_conn_send_hello(struct tcp_conn *c, uint8_t op)
{
	struct tcp_tx *tx = tcp_tx_ctrl(c->ep);
	struct tcp_hdr h = { .op = op };
	struct tcp_hello hello;
	struct iovec iov;

	if (!tx)
		return -FI_ENOMEM;
	tcp_conn_hello_fill(c->ep, c->role, &hello);
	iov.iov_base = tx->data;
	iov.iov_len = tcp_hello_encode(&hello, tx->data);
	h.len = iov.iov_len;
	tcp_tx_frame(tx, &h, &iov, 1);
	tcp_conn_push(c, tx, false);
	return 0;
}

void tcp_conn_connected(struct tcp_conn *c, int err)
{
	if (err) {
		tcp_conn_fail(c, err, "connect failed");
		return;
	}
	c->state = TCP_CONN_HELLO_WAIT;
	err = tcp_conn_send_hello(c, TCP_OP_HELLO);
	if (err)
		tcp_conn_fail(c, -err, "cannot send the handshake");
}

void tcp_conn_accepted(struct tcp_ep *ep, int fd)
{
	struct tcp_conn *c;

	tcp_sock_setup(ep, fd);
	c = tcp_conn_new(ep, fd, TCP_CONN_ACCEPTED);
	if (!c) {
		WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_CTRL,
			"no memory for an incoming connection\n");
		close(fd);
		return;
	}
	if (ep->io->conn_add(ep, c))
		tcp_conn_close(c, 0);
}

/* Refuse an accepted connection: REJECT, written directly (nothing else
 * was ever queued on it), then close. */
static void tcp_conn_reject(struct tcp_conn *c, uint32_t reason,
			    const char *why)
{
	uint8_t buf[TCP_HDR_MAX + TCP_REJECT_LEN];
	struct tcp_hdr h = { .op = TCP_OP_REJECT, .len = TCP_REJECT_LEN };
	uint32_t hlen = tcp_frame_encode(&h, buf);
	ssize_t n;

	FI_INFO(&tcp_prov, FI_LOG_EP_CTRL, "connection refused: %s\n", why);
	tcp_reject_encode(reason, buf + hlen);
	n = send(c->fd, buf, hlen + TCP_REJECT_LEN, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)n;
	tcp_conn_close(c, 0);
}

static void tcp_peer_learn(struct tcp_peer *peer, const struct tcp_hello *h)
{
	peer->nonce = h->nonce;
	peer->nonce_known = true;
	peer->eager_max = h->eager_max < peer->ep->eager_max ?
			  h->eager_max : peer->ep->eager_max;
	if (peer->eager_max < 1024)
		peer->eager_max = 1024;
	peer->naddr = h->naddr;
	memcpy(peer->raddr, h->addr, h->naddr * sizeof(h->addr[0]));
}

/* A stripe HELLO: the peer must be the incarnation of our primary. */
static void tcp_conn_hello_stripe(struct tcp_conn *c, struct tcp_peer *peer,
				  const struct tcp_hello *h)
{
	if (peer->state != TCP_PEER_READY || !peer->nonce_known ||
	    peer->nonce != h->nonce || peer->stripe[h->role]) {
		tcp_conn_reject(c, TCP_REJECT_STRIPE,
				"stripe without its primary connection");
		return;
	}
	c->peer = peer;
	c->role = (uint8_t)h->role;
	peer->stripe[h->role] = c;
	c->state = TCP_CONN_READY;
	if (tcp_conn_send_hello(c, TCP_OP_HELLO_ACK))
		tcp_conn_fail(c, FI_ENOMEM, "cannot answer the handshake");
}

/* Simultaneous connects: whether our own attempt toward peer wins over
 * the one arriving (the smaller name's connection survives). */
static bool tcp_conn_ours_wins(struct tcp_ep *ep, struct tcp_peer *peer)
{
	return tcp_addr_cmp(&ep->name, &peer->addr) < 0;
}

/* Make room for an arriving primary connection from peer: false if ours
 * stays and the arriving one is to be refused. */
static bool tcp_conn_hello_settle(struct tcp_ep *ep, struct tcp_peer *peer,
				  const struct tcp_hello *h)
{
	if (peer->nonce_known && peer->nonce != h->nonce &&
	    peer->state != TCP_PEER_IDLE)
		tcp_peer_fail(ep, peer, FI_ECONNRESET,
			      "restarted (new incarnation)");
	if (!peer->conn)
		return true;
	if (tcp_conn_ours_wins(ep, peer))
		return false;
	if (peer->conn->state == TCP_CONN_READY) {
		/* It drops a connection we think works: it lost it. */
		tcp_peer_fail(ep, peer, FI_ECONNRESET,
			      "reconnected: the old connection is gone");
	} else {
		/* Ours carried only HELLO: the waiting frames go on the
		 * arriving connection instead. */
		tcp_conn_close(peer->conn, 0);
		peer->conn = NULL;
		peer->stripe[0] = NULL;
	}
	return true;
}

static void tcp_conn_hello_primary(struct tcp_conn *c, struct tcp_peer *peer,
				   const struct tcp_hello *h)
{
	struct tcp_ep *ep = c->ep;

	if (peer->self) {
		if (h->nonce != ep->nonce) {
			tcp_conn_reject(c, TCP_REJECT_DUPLICATE,
					"another endpoint claims our name");
			return;
		}
		c->peer = peer;
		c->rx_only = true;
		c->state = TCP_CONN_READY;
		if (tcp_conn_send_hello(c, TCP_OP_HELLO_ACK))
			tcp_conn_fail(c, FI_ENOMEM, "cannot answer");
		return;
	}
	if (!tcp_conn_hello_settle(ep, peer, h)) {
		tcp_conn_reject(c, TCP_REJECT_DUPLICATE,
				"simultaneous connect, ours wins");
		return;
	}
	c->peer = peer;
	c->role = 0;
	peer->conn = c;
	peer->stripe[0] = c;
	tcp_peer_learn(peer, h);
	c->state = TCP_CONN_READY;
	if (tcp_conn_send_hello(c, TCP_OP_HELLO_ACK)) {
		tcp_conn_fail(c, FI_ENOMEM, "cannot answer the handshake");
		return;
	}
	tcp_peer_ready(ep, peer);
}

void tcp_conn_on_hello(struct tcp_conn *c, const uint8_t *buf, size_t len)
{
	struct tcp_ep *ep = c->ep;
	struct tcp_hello h;
	struct tcp_peer *peer;
	union tcp_addr name;
	const char *why;

	if (tcp_hello_decode(buf, len, &h, &why)) {
		tcp_conn_fail(c, TCP_EPROTO, why);
		return;
	}
	if (!tcp_hello_version(&h)) {
		tcp_conn_reject(c, TCP_REJECT_VERSION, "no common version");
		return;
	}
	if ((h.addr[0].family == TCP_WIRE_AF_INET6) != (ep->family == AF_INET6)) {
		tcp_conn_reject(c, TCP_REJECT_FAMILY, "address family differs");
		return;
	}
	tcp_addr_from_wire(&h.addr[0], &name);
	peer = tcp_peer_get(ep, &name);
	if (!peer) {
		tcp_conn_close(c, 0);
		return;
	}
	if (h.role)
		tcp_conn_hello_stripe(c, peer, &h);
	else
		tcp_conn_hello_primary(c, peer, &h);
}

/* After the primary is up: the stripes this side opens (the side that
 * made the primary; the other side only accepts them). */
static void tcp_conn_open_stripes(struct tcp_ep *ep, struct tcp_peer *peer)
{
	size_t n = ep->conns_per_peer, by_iface, k;

	by_iface = ep->nlisteners < peer->naddr ? ep->nlisteners : peer->naddr;
	if (by_iface > n)
		n = by_iface;
	if (n > TCP_STRIPE_MAX)
		n = TCP_STRIPE_MAX;
	peer->nstripe = (uint32_t)n;
	for (k = 1; k < n; k++) {
		if (peer->stripe[k])
			continue;
		if (tcp_conn_connect(ep, peer, (uint8_t)k))
			FI_INFO(&tcp_prov, FI_LOG_EP_CTRL,
				"stripe %zu not opened: large messages use "
				"the others\n", k);
	}
}

void tcp_conn_on_hello_ack(struct tcp_conn *c, const uint8_t *buf, size_t len)
{
	struct tcp_ep *ep = c->ep;
	struct tcp_peer *peer = c->peer;
	union tcp_addr name;
	struct tcp_hello h;
	const char *why;

	if (tcp_hello_decode(buf, len, &h, &why)) {
		tcp_conn_fail(c, TCP_EPROTO, why);
		return;
	}
	tcp_addr_from_wire(&h.addr[0], &name);
	if (!tcp_hello_version(&h) || h.role != c->role ||
	    tcp_addr_cmp(&name, &peer->addr)) {
		tcp_conn_fail(c, TCP_EPROTO, "the endpoint answering is not "
			      "the one the address names");
		return;
	}
	c->state = TCP_CONN_READY;
	if (c->role) {
		if (h.nonce != peer->nonce)
			tcp_conn_fail(c, TCP_EPROTO, "stripe to another "
				      "incarnation");
		return;
	}
	tcp_peer_learn(peer, &h);
	tcp_peer_ready(ep, peer);
	if (!peer->self)
		tcp_conn_open_stripes(ep, peer);
}

void tcp_conn_on_reject(struct tcp_conn *c, const uint8_t *buf, size_t len)
{
	struct tcp_peer *peer = c->peer;
	uint32_t reason;
	const char *why;

	if (tcp_reject_decode(buf, len, &reason, &why)) {
		tcp_conn_fail(c, TCP_EPROTO, why);
		return;
	}
	if (reason == TCP_REJECT_DUPLICATE && !c->role) {
		/* Its own connection toward us wins: wait for it (the peer
		 * deadline still runs). */
		tcp_conn_close(c, 0);
		return;
	}
	if (c->role) {
		tcp_conn_close(c, 0);
		return;
	}
	tcp_peer_fail(c->ep, peer, reason == TCP_REJECT_VERSION ?
		      TCP_EPROTO : FI_ECONNREFUSED, "connection refused");
}

void tcp_conn_close(struct tcp_conn *c, int err)
{
	struct tcp_ep *ep = c->ep;
	struct tcp_peer *peer = c->peer;
	struct tcp_tx *q = c->tx_head;
	size_t k;

	if (c->state == TCP_CONN_CLOSED)
		return;
	ep->io->conn_del(ep, c);
	close(c->fd);
	c->fd = -1;
	c->state = TCP_CONN_CLOSED;
	ep->closed_pending = true;
	if (c->on_flush) {
		LL_DELETE2(ep->flush, c, flush_next);
		c->on_flush = false;
	}
	c->tx_head = c->tx_tail = NULL;
	c->tx_queued = 0;
	tcp_tx_fail_queue(ep, q, err);
	tcp_rx_abort(c, err);
	if (!peer)
		return;
	if (peer->conn == c) {
		peer->conn = NULL;
		if (peer->state == TCP_PEER_READY)
			peer->state = TCP_PEER_IDLE;
	}
	for (k = 0; k < TCP_STRIPE_MAX; k++)
		if (peer->stripe[k] == c)
			peer->stripe[k] = NULL;
}

void tcp_conn_fail(struct tcp_conn *c, int err, const char *why)
{
	if (c->state == TCP_CONN_CLOSED)
		return;
	/* Anything that may have carried the application's bytes takes
	 * the whole peer down: its transfers may be split over all of its
	 * connections. A stripe still in its handshake goes alone. */
	if (c->peer && (c->state == TCP_CONN_READY || !c->role)) {
		tcp_peer_fail(c->ep, c->peer, err, why);
		return;
	}
	FI_INFO(&tcp_prov, FI_LOG_EP_CTRL, "connection dropped: %s (%s)\n",
		why, fi_strerror(err));
	tcp_conn_close(c, err);
}

void tcp_conn_check_timeouts(struct tcp_ep *ep, uint64_t now)
{
	struct tcp_conn *c, *tmp;

	DL_FOREACH_SAFE(ep->conns, c, tmp) {
		if (c->state == TCP_CONN_READY || c->state == TCP_CONN_CLOSED ||
		    now < c->deadline_ns)
			continue;
		tcp_conn_fail(c, FI_ETIMEDOUT, "handshake did not finish "
			      "within FI_TCP_CONN_TIMEOUT_MS");
	}
}

static void tcp_conn_free(struct tcp_ep *ep, struct tcp_conn *c)
{
	DL_DELETE(ep->conns, c);
	free(c->rbuf);
	free(c);
}

void tcp_conn_free_closed(struct tcp_ep *ep)
{
	struct tcp_conn *c, *tmp;
	bool left = false;

	DL_FOREACH_SAFE(ep->conns, c, tmp) {
		if (c->state != TCP_CONN_CLOSED)
			continue;
		if (ep->io->conn_idle(ep, c))
			tcp_conn_free(ep, c);
		else
			left = true;
	}
	ep->closed_pending = left;
}

static int tcp_listen_one(struct tcp_ep *ep, const union tcp_addr *src,
			  struct tcp_listener *l)
{
	socklen_t len = sizeof(l->addr);
	char buf[64];
	int fd, ret;

	fd = socket(ep->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	tcp_sock_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1);
	if (bind(fd, &src->sa, tcp_addr_len(src)) ||
	    listen(fd, TCP_LISTEN_BACKLOG) ||
	    getsockname(fd, &l->addr.sa, &len)) {
		ret = -errno;
		FI_WARN(&tcp_prov, FI_LOG_EP_CTRL, "cannot listen on %s: %s\n",
			tcp_addr_str(src, buf, sizeof(buf)), fi_strerror(-ret));
		close(fd);
		return ret;
	}
	tcp_addr_normalize(&l->addr);
	l->fd = fd;
	ret = ep->io->listen(ep, l);
	if (ret)
		close(fd);
	return ret;
}

/* The endpoint's own address: its info's src_addr (endpoints of one
 * domain may each name a port, or port 0 for any), else the domain's. */
static int tcp_listen_src(struct tcp_ep *ep, const struct tcp_domain *domain,
			  const struct fi_info *info, union tcp_addr *src)
{
	const struct sockaddr *sa = info ? info->src_addr : NULL;

	*src = domain->src[0];
	if (!sa)
		return 0;
	if (info->src_addrlen > sizeof(*src) || sa->sa_family != ep->family ||
	    info->src_addrlen != tcp_addr_len((const union tcp_addr *)sa)) {
		FI_WARN(&tcp_prov, FI_LOG_EP_CTRL,
			"src_addr is not a sockaddr of the domain's family\n");
		return -FI_EINVAL;
	}
	memset(src, 0, sizeof(*src));
	memcpy(src, sa, info->src_addrlen);
	tcp_addr_normalize(src);
	return 0;
}

int tcp_listen(struct tcp_ep *ep, struct tcp_domain *domain,
	       const struct fi_info *info)
{
	union tcp_addr src;
	size_t k;
	int ret;

	ret = tcp_listen_src(ep, domain, info, &src);
	if (ret)
		return ret;
	for (k = 0; k < domain->nsrc; k++) {
		ret = tcp_listen_one(ep, k ? &domain->src[k] : &src,
				     &ep->listeners[ep->nlisteners]);
		if (ret && !k)
			return ret;
		if (!ret)
			ep->nlisteners++;
	}
	ep->name = ep->listeners[0].addr;
	return 0;
}

void tcp_conn_flush_all(struct tcp_ep *ep)
{
	struct tcp_conn *c, *tmp;

	/* One write each, without waiting: a dead peer costs nothing. */
	DL_FOREACH_SAFE(ep->conns, c, tmp)
		if (c->state == TCP_CONN_READY && c->tx_head)
			ep->io->flush(ep, c);
}

void tcp_conn_close_all(struct tcp_ep *ep)
{
	struct tcp_conn *c;
	size_t k;

	DL_FOREACH(ep->conns, c)
		tcp_conn_close(c, 0);
	for (k = 0; k < ep->nlisteners; k++)
		close(ep->listeners[k].fd);
}

void tcp_conn_free_all(struct tcp_ep *ep)
{
	struct tcp_conn *c, *tmp;

	DL_FOREACH_SAFE(ep->conns, c, tmp)
		tcp_conn_free(ep, c);
}
