/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the tcp provider tests: endpoints through the public API on
 * loopback (FI_TCP_IFACE=lo), each with its own CQ so a test can tell the
 * sides apart, and a fake peer (a raw socket speaking the wire format by
 * hand) to feed endpoints bytes no real peer would send. Waits have
 * generous deadlines so a bug fails the test instead of hanging it.
 */
#ifndef TCP_TEST_H
#define TCP_TEST_H

#include "weft/compat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "weft/core.h"
#include "../src/tcp.h"

#define T_MAX_EP 4
#define T_DEADLINE_S 30

/* A real reference, so that static test binaries pull the provider in
 * (the registry only refers to it weakly). */
__attribute__((used)) static struct fi_provider *(*t_tcp_pull)(void) =
	tcp_prov_init;

struct t_ep {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct sockaddr_in name;
	fi_addr_t self;			/* its own name in the AV */
};

struct tctx {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct t_ep e[T_MAX_EP];
	int nep;
};

static inline double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void t_open_fabric(struct tctx *t, uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	setenv("FI_TCP_IFACE", "lo", 0);
	assert_non_null(hints);
	memset(t, 0, sizeof(*t));
	hints->caps = caps;
	hints->ep_attr->type = FI_EP_RDM;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->fabric_attr->prov_name = strdup("tcp");
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY |
				      FI_MR_ALLOCATED;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->mode = FI_CONTEXT;
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				    &t->info), 0);
	fi_freeinfo(hints);
	assert_string_equal(t->info->fabric_attr->prov_name, "tcp");
	assert_int_equal(fi_fabric(t->info->fabric_attr, &t->fabric, NULL), 0);
	assert_int_equal(fi_domain(t->fabric, t->info, &t->domain, NULL), 0);
	assert_int_equal(fi_av_open(t->domain, &av_attr, &t->av, NULL), 0);
}

/* One more endpoint with a CQ of its own; returns its index. */
static inline int t_add_ep(struct tctx *t)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .size = 1024,
				      .wait_obj = FI_WAIT_NONE };
	int i = t->nep++;
	struct t_ep *e = &t->e[i];
	size_t len = sizeof(e->name);

	assert_true(i < T_MAX_EP);
	assert_int_equal(fi_cq_open(t->domain, &cq_attr, &e->cq, NULL), 0);
	assert_int_equal(fi_endpoint(t->domain, t->info, &e->ep, NULL), 0);
	assert_int_equal(fi_ep_bind(e->ep, &t->av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV),
			 0);
	assert_int_equal(fi_enable(e->ep), 0);
	assert_int_equal(fi_getname(&e->ep->fid, &e->name, &len), 0);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(fi_av_insert(t->av, &e->name, 1, &e->self, 0, NULL),
			 1);
	return i;
}

static inline void t_open(struct tctx *t, uint64_t caps, int nep)
{
	int i;

	t_open_fabric(t, caps);
	for (i = 0; i < nep; i++)
		t_add_ep(t);
}

static inline void t_close_ep(struct tctx *t, int i)
{
	if (!t->e[i].ep)
		return;
	assert_int_equal(fi_close(&t->e[i].ep->fid), 0);
	assert_int_equal(fi_close(&t->e[i].cq->fid), 0);
	t->e[i].ep = NULL;
}

static inline void t_close(struct tctx *t)
{
	int i;

	for (i = 0; i < t->nep; i++)
		t_close_ep(t, i);
	assert_int_equal(fi_close(&t->av->fid), 0);
	assert_int_equal(fi_close(&t->domain->fid), 0);
	assert_int_equal(fi_close(&t->fabric->fid), 0);
	fi_freeinfo(t->info);
}

static inline struct tcp_ep *t_tcp_ep(struct tctx *t, int i)
{
	return to_tcp_ep(t->e[i].ep);
}

/* Progress every endpoint once. */
static inline void t_progress_all(struct tctx *t)
{
	struct fi_cq_tagged_entry dummy;
	int i;

	for (i = 0; i < t->nep; i++)
		if (t->e[i].ep)
			(void)fi_cq_read(t->e[i].cq, &dummy, 0);
}

struct t_comp {
	bool is_err;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
};

/* The next completion of endpoint i (progressing all meanwhile). */
static inline struct t_comp t_next(struct tctx *t, int i)
{
	double deadline = t_now() + T_DEADLINE_S;
	struct t_comp c;
	ssize_t n;
	int k;

	memset(&c, 0, sizeof(c));
	for (;;) {
		for (k = 0; k < t->nep; k++) {
			if (k == i || !t->e[k].ep)
				continue;
			(void)fi_cq_read(t->e[k].cq, &c.e, 0);
		}
		n = fi_cq_read(t->e[i].cq, &c.e, 1);
		if (n == 1)
			return c;
		if (n == -FI_EAVAIL) {
			c.is_err = true;
			assert_int_equal(fi_cq_readerr(t->e[i].cq, &c.err, 0),
					 1);
			return c;
		}
		assert_int_equal(n, -FI_EAGAIN);
		if (t_now() > deadline)
			fail_msg("no completion on endpoint %d", i);
	}
}

static inline struct fi_cq_tagged_entry t_next_ok(struct tctx *t, int i)
{
	struct t_comp c = t_next(t, i);

	if (c.is_err)
		fail_msg("endpoint %d: error completion %s", i,
			 fi_strerror(c.err.err));
	return c.e;
}

static inline struct fi_cq_err_entry t_next_err(struct tctx *t, int i)
{
	struct t_comp c = t_next(t, i);

	if (!c.is_err)
		fail_msg("endpoint %d: expected an error completion", i);
	return c.err;
}

/* Retry a post while it says -FI_EAGAIN, progressing meanwhile. */
#define T_POST(t, call)							\
	do {								\
		double _dl = t_now() + T_DEADLINE_S;			\
		ssize_t _r;						\
		while ((_r = (call)) == -FI_EAGAIN) {			\
			t_progress_all(t);				\
			if (t_now() > _dl)				\
				fail_msg("%s: stuck on EAGAIN", #call);	\
		}							\
		assert_int_equal(_r, 0);				\
	} while (0)

static inline void t_fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + seed + (i >> 11));
}

static inline long t_check(const uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != (uint8_t)(i * 7 + seed + (i >> 11)))
			return (long)i;
	return -1;
}

/* ---- a fake peer: raw sockets speaking the wire by hand ------------- */

static inline int t_raw_listen(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)addr, &len), 0);
	return fd;
}

static inline int t_raw_connect(const struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (const struct sockaddr *)addr,
				 sizeof(*addr)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static inline void t_raw_write(int fd, const void *buf, size_t len)
{
	assert_int_equal(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* A frame: header h (its len is the payload's), then the payload. */
static inline void t_raw_frame(int fd, struct tcp_hdr *h, const void *payload)
{
	uint8_t buf[TCP_HDR_MAX];
	uint32_t hlen = tcp_frame_encode(h, buf);

	t_raw_write(fd, buf, hlen);
	if (h->len)
		t_raw_write(fd, payload, h->len);
}

/* HELLO or HELLO_ACK naming addr, with incarnation nonce. */
static inline void t_raw_hello(int fd, uint8_t op, const struct sockaddr_in *addr,
			       uint64_t nonce, uint16_t role)
{
	uint8_t payload[TCP_HELLO_MAX_LEN];
	struct tcp_hello hello;
	struct tcp_hdr h;

	memset(&hello, 0, sizeof(hello));
	hello.ver_min = hello.ver_max = TCP_WIRE_VERSION;
	hello.role = role;
	hello.naddr = 1;
	hello.eager_max = 65536;
	hello.nonce = nonce;
	hello.addr[0].family = TCP_WIRE_AF_INET;
	hello.addr[0].port = ntohs(addr->sin_port);
	memcpy(hello.addr[0].ip, &addr->sin_addr, 4);
	memset(&h, 0, sizeof(h));
	h.op = op;
	h.len = tcp_hello_encode(&hello, payload);
	t_raw_frame(fd, &h, payload);
}

/* Read one frame header (and skip its payload); false at EOF/timeout. */
static inline bool t_raw_read_frame(int fd, struct tcp_hdr *h, int timeout_ms)
{
	static const struct tcp_limits lim = {
		.eager_max = 1 << 20, .max_msg = (uint64_t)1 << 40,
		.atomic_max = 128, .data_max = (uint64_t)1 << 40,
	};
	uint8_t buf[TCP_HDR_MAX], skip[4096];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	const char *why;
	size_t got = 0, need = TCP_BASE_LEN;
	uint64_t left;
	ssize_t n;
	uint32_t hlen;

	while (got < need) {
		if (poll(&pfd, 1, timeout_ms) != 1)
			return false;
		n = recv(fd, buf + got, need - got, 0);
		if (n <= 0)
			return false;
		got += (size_t)n;
		if (got == TCP_BASE_LEN && need == TCP_BASE_LEN) {
			assert_int_equal(tcp_frame_peek(buf, got, &hlen, &why),
					 0);
			need = hlen;
		}
	}
	assert_int_equal(tcp_frame_decode(buf, got, &lim, h, &why), 0);
	for (left = h->len; left; left -= (uint64_t)n) {
		if (poll(&pfd, 1, timeout_ms) != 1)
			return false;
		n = recv(fd, skip, left < sizeof(skip) ? left : sizeof(skip), 0);
		if (n <= 0)
			return false;
	}
	return true;
}

/* Whether the endpoint closed fd (EOF or reset) within timeout_ms. */
static inline bool t_raw_closed(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double deadline = t_now() + timeout_ms / 1000.0;
	char c[256];
	ssize_t n;

	while (t_now() < deadline) {
		if (poll(&pfd, 1, 10) != 1)
			continue;
		n = recv(fd, c, sizeof(c), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			return true;
	}
	return false;
}

#endif /* TCP_TEST_H */
