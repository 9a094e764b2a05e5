/* SPDX-License-Identifier: MIT */
/*
 * tcp provider, connections: messages of every size between two
 * endpoints and to oneself, simultaneous connects (one connection per
 * pair survives, nothing lost or reordered), refused and unanswered
 * connects (bounded error completions), a restarted peer, striping over
 * several connections, and fi_close with a dead peer. Loopback only;
 * test_tcp_garbage.c feeds endpoints bad bytes.
 */
#include "tcp_test.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <utlist.h>

#include "../src/tcp_io.h"

static struct tctx T;

#define CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_DIRECTED_RECV | FI_SOURCE)

static int setup(void **state)
{
	(void)state;
	t_open(&T, CAPS, 2);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	t_close(&T);
	return 0;
}

/* One message from endpoint a to b of len bytes, data checked. */
static void t_xfer(struct tctx *t, int a, int b, size_t len, bool tagged,
		   unsigned int seed)
{
	uint8_t *sbuf = malloc(len + 1), *rbuf = malloc(len + 1);
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;

	assert_non_null(sbuf);
	assert_non_null(rbuf);
	t_fill(sbuf, len, seed);
	memset(rbuf, 0xee, len + 1);
	if (tagged)
		T_POST(t, fi_trecv(t->e[b].ep, rbuf, len, NULL, FI_ADDR_UNSPEC,
				   seed, 0, &rctx));
	else
		T_POST(t, fi_recv(t->e[b].ep, rbuf, len, NULL, FI_ADDR_UNSPEC,
				  &rctx));
	if (tagged)
		T_POST(t, fi_tsend(t->e[a].ep, sbuf, len, NULL, t->e[b].self,
				   seed, &sctx));
	else
		T_POST(t, fi_send(t->e[a].ep, sbuf, len, NULL, t->e[b].self,
				  &sctx));
	e = t_next_ok(t, b);
	if (a == b && e.op_context == &sctx)	/* one CQ: either first */
		e = t_next_ok(t, b);
	else if (a == b)
		assert_ptr_equal(t_next_ok(t, a).op_context, &sctx);
	assert_ptr_equal(e.op_context, &rctx);
	assert_int_equal(e.len, len);
	if (a != b) {
		e = t_next_ok(t, a);
		assert_ptr_equal(e.op_context, &sctx);
	}
	assert_int_equal(t_check(rbuf, len, seed), -1);
	assert_int_equal(rbuf[len], 0xee);
	free(sbuf);
	free(rbuf);
}

static const size_t t_sizes[] = {
	0, 1, 8, 255, 256, 257, 4096, 65535, 65536, 65537, 300000, 1 << 20,
};

static void test_pair_sizes(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < WEFT_ARRAY_SIZE(t_sizes); i++) {
		t_xfer(&T, 0, 1, t_sizes[i], false, (unsigned)i);
		t_xfer(&T, 1, 0, t_sizes[i], true, (unsigned)i + 100);
	}
}

/* Zero-byte messages without buffers, as MPI sends its empty messages:
 * into a posted receive, unexpected, and injected, each completing with
 * length 0 and its tag and data (UBSan builds check that no NULL reaches
 * memcpy on the way). */
static void test_zero_null(void **state)
{
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;

	(void)state;
	/* posted first: the receive takes the header at once */
	T_POST(&T, fi_trecv(T.e[1].ep, NULL, 0, NULL, FI_ADDR_UNSPEC, 7, 0,
			    &rctx));
	T_POST(&T, fi_tsenddata(T.e[0].ep, NULL, 0, NULL, 0x5a, T.e[1].self,
				7, &sctx));
	e = t_next_ok(&T, 1);
	assert_ptr_equal(e.op_context, &rctx);
	assert_int_equal(e.len, 0);
	assert_int_equal(e.tag, 7);
	assert_int_equal(e.data, 0x5a);
	assert_true(e.flags & FI_REMOTE_CQ_DATA);
	assert_ptr_equal(t_next_ok(&T, 0).op_context, &sctx);

	/* injected, then found unexpected by a later receive */
	T_POST(&T, fi_tinject(T.e[0].ep, NULL, 0, T.e[1].self, 8));
	T_POST(&T, fi_inject(T.e[0].ep, NULL, 0, T.e[1].self));
	T_POST(&T, fi_tsend(T.e[0].ep, NULL, 0, NULL, T.e[1].self, 9, &sctx));
	assert_ptr_equal(t_next_ok(&T, 0).op_context, &sctx);
	T_POST(&T, fi_trecv(T.e[1].ep, NULL, 0, NULL, FI_ADDR_UNSPEC, 8, 0,
			    &rctx));
	e = t_next_ok(&T, 1);
	assert_ptr_equal(e.op_context, &rctx);
	assert_int_equal(e.len, 0);
	assert_int_equal(e.tag, 8);
	T_POST(&T, fi_recv(T.e[1].ep, NULL, 0, NULL, FI_ADDR_UNSPEC, &rctx));
	e = t_next_ok(&T, 1);
	assert_ptr_equal(e.op_context, &rctx);
	assert_int_equal(e.len, 0);
	assert_true(e.flags & FI_MSG);
	T_POST(&T, fi_trecv(T.e[1].ep, NULL, 0, NULL, FI_ADDR_UNSPEC, 9, 0,
			    &rctx));
	e = t_next_ok(&T, 1);
	assert_int_equal(e.len, 0);
	assert_int_equal(e.tag, 9);
}

/* Progress T's endpoints and ep (its CQ cq) until endpoint 0's send
 * sctx completed and ep's tagged unexpected queue holds n messages. */
static void t_wait_unexp(struct fid_ep *ep, struct fid_cq *cq,
			 struct fi_context *sctx, size_t n)
{
	double deadline = t_now() + T_DEADLINE_S;
	struct fi_cq_tagged_entry e;
	bool sent = false;

	while (!sent || to_tcp_ep(ep)->srx.tag_q.unexp_count < n) {
		(void)fi_cq_read(cq, &e, 0);
		if (fi_cq_read(T.e[0].cq, &e, 1) == 1) {
			assert_ptr_equal(e.op_context, sctx);
			sent = true;
		}
		if (t_now() > deadline)
			fail_msg("%zu unexpected messages never arrived", n);
	}
}

/* A sender's messages that arrive before the receiver's AV has its
 * address (MPI ranks starting at different times) are still the first a
 * directed receive from that sender gets once the address is inserted:
 * a later message from it must not overtake them. */
static void test_unknown_sender(void **state)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .size = 64, .wait_obj = FI_WAIT_NONE };
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct sockaddr_in name;
	size_t len = sizeof(name);
	fi_addr_t to_b, from_a;
	uint64_t out, in[2] = { 0, 0 };
	struct fi_context sctx, rctx[2];
	struct fi_cq_tagged_entry e;
	double deadline;
	int i;

	(void)state;
	/* B: an endpoint whose AV starts empty */
	assert_int_equal(fi_av_open(T.domain, &av_attr, &av, NULL), 0);
	assert_int_equal(fi_cq_open(T.domain, &cq_attr, &cq, NULL), 0);
	assert_int_equal(fi_endpoint(T.domain, T.info, &ep, NULL), 0);
	assert_int_equal(fi_ep_bind(ep, &av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_enable(ep), 0);
	assert_int_equal(fi_getname(&ep->fid, &name, &len), 0);
	assert_int_equal(fi_av_insert(T.av, &name, 1, &to_b, 0, NULL), 1);

	/* A sends 1 while B does not know A, then 2 once it does */
	for (out = 1; out <= 2; out++) {
		T_POST(&T, fi_tsend(T.e[0].ep, &out, sizeof(out), NULL, to_b,
				    42, &sctx));
		t_wait_unexp(ep, cq, &sctx, (size_t)out);
		if (out == 1)
			assert_int_equal(fi_av_insert(av, &T.e[0].name, 1,
						      &from_a, 0, NULL), 1);
	}

	for (i = 0; i < 2; i++)
		T_POST(&T, fi_trecv(ep, &in[i], sizeof(in[i]), NULL, from_a,
				    42, 0, &rctx[i]));
	for (i = 0; i < 2; i++) {
		deadline = t_now() + T_DEADLINE_S;
		while (fi_cq_read(cq, &e, 1) != 1)
			if (t_now() > deadline)
				fail_msg("receive %d never completed", i);
		assert_ptr_equal(e.op_context, &rctx[i]);
	}
	assert_int_equal(in[0], 1);
	assert_int_equal(in[1], 2);

	assert_int_equal(fi_close(&ep->fid), 0);
	assert_int_equal(fi_close(&cq->fid), 0);
	assert_int_equal(fi_close(&av->fid), 0);
}

/* Connections of ep that are not closed, and whether one is rx_only. */
static int t_live_conns(struct tcp_ep *ep, int *rx_only)
{
	struct tcp_conn *c;
	int n = 0;

	*rx_only = 0;
	DL_FOREACH(ep->conns, c) {
		if (c->state == TCP_CONN_CLOSED)
			continue;
		n++;
		*rx_only += c->rx_only;
	}
	return n;
}

static void test_self(void **state)
{
	struct tctx t;
	int rx_only;

	(void)state;
	t_open(&t, CAPS, 1);
	t_xfer(&t, 0, 0, 8, false, 1);
	t_xfer(&t, 0, 0, 70000, true, 2);	/* rendezvous to oneself */
	t_xfer(&t, 0, 0, 1 << 20, false, 3);
	/* One socket carries the frames, the accepted end receives them. */
	assert_int_equal(t_live_conns(t_tcp_ep(&t, 0), &rx_only), 2);
	assert_int_equal(rx_only, 1);
	t_close(&t);
}

/* A free loopback port, for a test to name. */
static uint16_t t_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* Endpoints of one domain listen where their own info says: the domain
 * was opened with port P, a second endpoint from an info with port 0 (as
 * fi_getinfo gives for a node without FI_SOURCE) gets a port of its own
 * instead of failing on P (upstream fabtests' fi_multi_ep). */
static void test_ep_src_addr(void **state)
{
	struct sockaddr_in *src;
	struct tctx t;
	uint16_t port = t_free_port();

	(void)state;
	t_open_fabric(&t, CAPS);
	src = t.info->src_addr;
	src->sin_port = htons(port);
	t_add_ep(&t);
	src->sin_port = 0;
	t_add_ep(&t);
	t_add_ep(&t);
	assert_int_equal(ntohs(t.e[0].name.sin_port), port);
	assert_int_not_equal(t.e[1].name.sin_port, 0);
	assert_int_not_equal(ntohs(t.e[1].name.sin_port), port);
	assert_int_not_equal(t.e[1].name.sin_port, t.e[2].name.sin_port);
	t_xfer(&t, 1, 0, 64, false, 1);
	t_xfer(&t, 0, 2, 100000, true, 2);
	t_xfer(&t, 2, 1, 8, true, 3);
	t_close(&t);
}

#define T_SIM_MSGS 64

/* Both send first, before either progressed: the two connects cross. */
static void test_simultaneous(void **state)
{
	static uint64_t rbuf[2][T_SIM_MSGS], sbuf[2][T_SIM_MSGS];
	struct fi_context ctx[2][2 * T_SIM_MSGS];
	struct fi_cq_tagged_entry e;
	struct tctx t;
	int side, i, rx_only, n;
	int got[2] = { 0, 0 };

	(void)state;
	t_open(&t, CAPS, 2);
	for (side = 0; side < 2; side++)
		for (i = 0; i < T_SIM_MSGS; i++)
			T_POST(&t, fi_trecv(t.e[side].ep, &rbuf[side][i], 8,
					    NULL, FI_ADDR_UNSPEC, 7, 0,
					    &ctx[side][T_SIM_MSGS + i]));
	for (i = 0; i < T_SIM_MSGS; i++) {
		for (side = 0; side < 2; side++) {
			sbuf[side][i] = (uint64_t)side << 32 | (uint64_t)i;
			T_POST(&t, fi_tsend(t.e[side].ep, &sbuf[side][i], 8,
					    NULL, t.e[!side].self, 7,
					    &ctx[side][i]));
		}
	}
	while (got[0] < 2 * T_SIM_MSGS || got[1] < 2 * T_SIM_MSGS) {
		for (side = 0; side < 2; side++) {
			if (got[side] == 2 * T_SIM_MSGS)
				continue;
			e = t_next_ok(&t, side);
			got[side]++;
		}
	}
	/* In order, none lost: the first receive took the first message. */
	for (side = 0; side < 2; side++)
		for (i = 0; i < T_SIM_MSGS; i++)
			assert_int_equal(rbuf[side][i],
					 (uint64_t)!side << 32 | (uint64_t)i);
	/* One connection per pair survived, on each side. */
	for (side = 0; side < 2; side++) {
		for (i = 0; i < 100; i++)
			t_progress_all(&t);
		n = t_live_conns(t_tcp_ep(&t, side), &rx_only);
		assert_int_equal(n, 1);
	}
	(void)e;
	t_close(&t);
}

/* An address nobody listens on. */
static struct sockaddr_in t_dead_addr(void)
{
	struct sockaddr_in a;
	int fd = t_raw_listen(&a);

	close(fd);
	return a;
}

static void test_refused(void **state)
{
	struct sockaddr_in dead = t_dead_addr();
	struct fi_cq_err_entry err;
	struct fi_context ctx[2];
	fi_addr_t addr;
	char buf[8] = "refused";
	int i;

	(void)state;
	assert_int_equal(fi_av_insert(T.av, &dead, 1, &addr, 0, NULL), 1);
	for (i = 0; i < 2; i++) {	/* a second try connects again */
		T_POST(&T, fi_send(T.e[0].ep, buf, sizeof(buf), NULL, addr,
				   &ctx[i]));
		err = t_next_err(&T, 0);
		assert_ptr_equal(err.op_context, &ctx[i]);
		assert_int_equal(err.err, FI_ECONNREFUSED);
	}
	assert_int_equal(fi_av_remove(T.av, &addr, 1, 0), 0);
	/* The endpoint still talks to its real peer. */
	t_xfer(&T, 0, 1, 100, false, 9);
}

/* A peer that accepts (the kernel does) and never answers: the handshake
 * deadline fails every operation waiting on it, each one once. */
static void test_handshake_timeout(void **state)
{
	size_t saved = tcp_env.conn_timeout_ms;
	struct fi_context ctx[3];
	struct fi_cq_err_entry err;
	struct sockaddr_in mute;
	static char big[100000];
	char small[8] = "timeout";
	struct tctx t;
	fi_addr_t addr;
	double t0, dt;
	int fd, i;

	(void)state;
	tcp_env.conn_timeout_ms = 300;
	t_open(&t, CAPS, 1);
	tcp_env.conn_timeout_ms = saved;
	fd = t_raw_listen(&mute);
	assert_int_equal(fi_av_insert(t.av, &mute, 1, &addr, 0, NULL), 1);
	t0 = t_now();
	T_POST(&t, fi_send(t.e[0].ep, small, sizeof(small), NULL, addr,
			   &ctx[0]));
	T_POST(&t, fi_send(t.e[0].ep, big, sizeof(big), NULL, addr, &ctx[1]));
	T_POST(&t, fi_read(t.e[0].ep, small, sizeof(small), NULL, addr, 0, 1,
			   &ctx[2]));
	for (i = 0; i < 3; i++) {
		err = t_next_err(&t, 0);
		assert_ptr_equal(err.op_context, &ctx[i]);
		assert_int_equal(err.err, FI_ETIMEDOUT);
	}
	dt = t_now() - t0;
	/* Not before the deadline, and not much after it. */
	assert_true(dt >= 0.25);
	assert_true(dt < 5.0);
	close(fd);
	t_close(&t);
}

/* The peer closes; a new endpoint on the same address takes its place:
 * the next sends reach the new one. */
static void test_restart(void **state)
{
	struct fi_info *info;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_cq_tagged_entry e;
	struct fi_context sctx, rctx;
	struct sockaddr_in name = T.e[1].name;
	char msg[32] = "to the new incarnation", rbuf[32];
	double deadline;
	ssize_t n;

	(void)state;
	t_xfer(&T, 0, 1, 64, false, 1);
	t_close_ep(&T, 1);
	/* A send before the endpoint saw the close would go down the dead
	 * connection (TCP took it: fi_tcp(7), CONNECTIONS); a real
	 * application finds out the same way, by progress. */
	deadline = t_now() + T_DEADLINE_S;
	while (t_tcp_ep(&T, 0)->peers->state != TCP_PEER_IDLE) {
		t_progress_all(&T);
		assert_true(t_now() < deadline);
	}
	info = fi_dupinfo(T.info);
	free(info->src_addr);
	info->src_addr = malloc(sizeof(name));
	memcpy(info->src_addr, &name, sizeof(name));
	info->src_addrlen = sizeof(name);
	assert_int_equal(fi_domain(T.fabric, info, &domain, NULL), 0);
	assert_int_equal(fi_cq_open(domain, &cq_attr, &cq, NULL), 0);
	assert_int_equal(fi_endpoint(domain, info, &ep, NULL), 0);
	assert_int_equal(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	{
		struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
		struct fid_av *av;

		assert_int_equal(fi_av_open(domain, &av_attr, &av, NULL), 0);
		assert_int_equal(fi_ep_bind(ep, &av->fid, 0), 0);
		assert_int_equal(fi_enable(ep), 0);
		T_POST(&T, fi_recv(ep, rbuf, sizeof(rbuf), NULL,
				   FI_ADDR_UNSPEC, &rctx));
		T_POST(&T, fi_send(T.e[0].ep, msg, sizeof(msg), NULL,
				   T.e[1].self, &sctx));
		deadline = t_now() + T_DEADLINE_S;
		do {
			t_progress_all(&T);
			n = fi_cq_read(cq, &e, 1);
			assert_true(t_now() < deadline);
		} while (n == -FI_EAGAIN);
		assert_int_equal(n, 1);
		assert_ptr_equal(e.op_context, &rctx);
		assert_memory_equal(rbuf, msg, sizeof(msg));
		e = t_next_ok(&T, 0);
		assert_ptr_equal(e.op_context, &sctx);
		assert_int_equal(fi_close(&ep->fid), 0);
		assert_int_equal(fi_close(&av->fid), 0);
	}
	assert_int_equal(fi_close(&cq->fid), 0);
	assert_int_equal(fi_close(&domain->fid), 0);
	fi_freeinfo(info);
	/* The fixture's second endpoint, back for the other tests. */
	T.nep = 1;
	t_add_ep(&T);
}

/* FI_TCP_CONNS_PER_PEER=4: rendezvous data on every connection. */
static void test_stripes(void **state)
{
	size_t saved = tcp_env.conns_per_peer;
	struct tcp_peer *peer;
	struct tcp_ep *ep;
	struct tctx t;
	int k;

	(void)state;
	tcp_env.conns_per_peer = 4;
	t_open(&t, CAPS, 2);
	tcp_env.conns_per_peer = saved;
	t_xfer(&t, 0, 1, 8, false, 1);		/* opens the primary */
	for (k = 0; k < 200; k++)
		t_progress_all(&t);		/* and the stripes */
	t_xfer(&t, 0, 1, 8 << 20, false, 2);
	t_xfer(&t, 1, 0, (8 << 20) + 12345, true, 3);
	ep = t_tcp_ep(&t, 0);
	peer = ep->peers;
	assert_non_null(peer);
	for (k = 0; k < 4; k++) {
		assert_non_null(peer->stripe[k]);
		assert_int_equal(peer->stripe[k]->state, TCP_CONN_READY);
		/* Both directions went over each: 2 MiB and more. */
		assert_true(peer->stripe[k]->tx_bytes > (1u << 20));
		assert_true(peer->stripe[k]->rx_bytes > (1u << 20));
	}
	t_close(&t);
}

/* Unexpected messages beyond FI_TCP_UNEXP_MEM wait in the socket: the
 * receiver stops reading, then takes them all, in order, once receives
 * are posted. */
static void test_unexp_bound(void **state)
{
	size_t saved = tcp_env.unexp_mem;
	enum { N = 48, LEN = 60000 };
	static uint8_t sbuf[N][LEN], rbuf[N][LEN];
	struct fi_context sctx[N], rctx[N];
	struct fi_cq_tagged_entry e;
	struct tcp_ep *rx;
	struct tctx t;
	int i, k;

	(void)state;
	tcp_env.unexp_mem = 1 << 20;
	t_open(&t, CAPS, 2);
	tcp_env.unexp_mem = saved;
	rx = t_tcp_ep(&t, 1);
	for (i = 0; i < N; i++) {
		t_fill(sbuf[i], LEN, (unsigned)i);
		T_POST(&t, fi_send(t.e[0].ep, sbuf[i], LEN, NULL, t.e[1].self,
				   &sctx[i]));
	}
	for (k = 0; k < 2000; k++)
		t_progress_all(&t);
	/* Held back within the bound (the pool holds whole buffers). */
	assert_true(rx->ubuf_pool.in_use * rx->ubuf_pool.obj_size <= 1 << 20);
	assert_true(rx->ubuf_pool.in_use < N);
	for (i = 0; i < N; i++)
		T_POST(&t, fi_recv(t.e[1].ep, rbuf[i], LEN, NULL,
				   FI_ADDR_UNSPEC, &rctx[i]));
	for (i = 0; i < N; i++) {
		e = t_next_ok(&t, 1);
		assert_ptr_equal(e.op_context, &rctx[i]);
		assert_int_equal(t_check(rbuf[i], LEN, (unsigned)i), -1);
	}
	for (i = 0; i < N; i++)
		t_next_ok(&t, 0);
	t_close(&t);
}

/* fi_close with operations pending toward a peer that never answers. */
static void test_close_dead_peer(void **state)
{
	struct sockaddr_in mute;
	static char big[1 << 20];
	struct fi_context ctx[4];
	struct tctx t;
	fi_addr_t addr;
	double t0;
	int fd, i;

	(void)state;
	t_open(&t, CAPS, 1);
	fd = t_raw_listen(&mute);
	assert_int_equal(fi_av_insert(t.av, &mute, 1, &addr, 0, NULL), 1);
	for (i = 0; i < 4; i++)
		T_POST(&t, fi_send(t.e[0].ep, big, sizeof(big), NULL, addr,
				   &ctx[i]));
	for (i = 0; i < 100; i++)
		t_progress_all(&t);
	t0 = t_now();
	t_close(&t);
	assert_true(t_now() - t0 < 1.0);
	close(fd);
}

static void test_delivery_complete(void **state)
{
	char sbuf[16] = "delivered", rbuf[16];
	struct fi_msg msg;
	struct iovec iov = { .iov_base = sbuf, .iov_len = sizeof(sbuf) };
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;

	(void)state;
	T_POST(&T, fi_recv(T.e[1].ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC,
			   &rctx));
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.iov_count = 1;
	msg.addr = T.e[1].self;
	msg.context = &sctx;
	T_POST(&T, fi_sendmsg(T.e[0].ep, &msg, FI_DELIVERY_COMPLETE));
	e = t_next_ok(&T, 0);	/* after the receiver's ACK */
	assert_ptr_equal(e.op_context, &sctx);
	e = t_next_ok(&T, 1);
	assert_ptr_equal(e.op_context, &rctx);
	assert_memory_equal(rbuf, sbuf, sizeof(sbuf));
}

/* A write to a key the target does not have: an error at the initiator. */
static void test_rma_bad_key(void **state)
{
	char buf[64] = "nowhere";
	struct fi_context ctx;
	struct fi_cq_err_entry err;

	(void)state;
	T_POST(&T, fi_write(T.e[0].ep, buf, sizeof(buf), NULL, T.e[1].self, 0,
			    0xdeadbeef, &ctx));
	err = t_next_err(&T, 0);
	assert_ptr_equal(err.op_context, &ctx);
	assert_int_equal(err.err, FI_ENOKEY);
	T_POST(&T, fi_read(T.e[0].ep, buf, sizeof(buf), NULL, T.e[1].self, 0,
			   0xdeadbeef, &ctx));
	err = t_next_err(&T, 0);
	assert_int_equal(err.err, FI_ENOKEY);
}

/* IPv6 endpoints on ::1: names are 28-byte sockaddr_in6, messages of
 * every protocol go through, FI_SOURCE names the sender. */
static void test_ipv6(void **state)
{
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq[2];
	struct fid_ep *ep[2];
	struct sockaddr_in6 name[2];
	fi_addr_t addr[2], from;
	static uint8_t sbuf[100000], rbuf[100000];
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;
	double deadline;
	size_t len, sizes[] = { 8, 100000 };
	int i, k;

	(void)state;
	hints->caps = FI_MSG | FI_SOURCE;
	hints->ep_attr->type = FI_EP_RDM;
	hints->addr_format = FI_SOCKADDR_IN6;
	hints->fabric_attr->prov_name = strdup("tcp");
	if (fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info)) {
		fi_freeinfo(hints);
		print_message("no IPv6 address on lo: IPv6 not tested\n");
		skip();
	}
	fi_freeinfo(hints);
	assert_int_equal(info->addr_format, FI_SOCKADDR_IN6);
	assert_int_equal(info->src_addrlen, sizeof(struct sockaddr_in6));
	assert_int_equal(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	assert_int_equal(fi_domain(fabric, info, &domain, NULL), 0);
	assert_int_equal(fi_av_open(domain, &av_attr, &av, NULL), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(fi_cq_open(domain, &cq_attr, &cq[i], NULL), 0);
		assert_int_equal(fi_endpoint(domain, info, &ep[i], NULL), 0);
		assert_int_equal(fi_ep_bind(ep[i], &av->fid, 0), 0);
		assert_int_equal(fi_ep_bind(ep[i], &cq[i]->fid,
					    FI_TRANSMIT | FI_RECV), 0);
		assert_int_equal(fi_enable(ep[i]), 0);
		len = sizeof(name[i]);
		assert_int_equal(fi_getname(&ep[i]->fid, &name[i], &len), 0);
		assert_int_equal(len, sizeof(struct sockaddr_in6));
		assert_true(len <= FI_NAME_MAX);
		assert_int_equal(name[i].sin6_family, AF_INET6);
		assert_int_equal(fi_av_insert(av, &name[i], 1, &addr[i], 0,
					      NULL), 1);
	}
	for (k = 0; k < 2; k++) {
		t_fill(sbuf, sizes[k], (unsigned)k);
		assert_int_equal(fi_recv(ep[1], rbuf, sizes[k], NULL,
					 FI_ADDR_UNSPEC, &rctx), 0);
		assert_int_equal(fi_send(ep[0], sbuf, sizes[k], NULL, addr[1],
					 &sctx), 0);
		deadline = t_now() + T_DEADLINE_S;
		while (fi_cq_readfrom(cq[1], &e, 1, &from) != 1) {
			(void)fi_cq_read(cq[0], &e, 0);
			assert_true(t_now() < deadline);
		}
		assert_ptr_equal(e.op_context, &rctx);
		assert_int_equal(from, addr[0]);
		assert_int_equal(t_check(rbuf, sizes[k], (unsigned)k), -1);
		while (fi_cq_read(cq[0], &e, 1) != 1)
			assert_true(t_now() < deadline);
	}
	for (i = 0; i < 2; i++) {
		assert_int_equal(fi_close(&ep[i]->fid), 0);
		assert_int_equal(fi_close(&cq[i]->fid), 0);
	}
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fi_close(&domain->fid), 0);
	assert_int_equal(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

/* In a child whose seccomp filter refuses io_uring_setup (as container
 * runtimes do): endpoints open on epoll and work. */
static void test_seccomp_fallback(void **state)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = WEFT_ARRAY_SIZE(filter),
				   .filter = filter };
	bool saved = tcp_env.io_uring;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tctx t;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(3);
		tcp_env.io_uring = true;
		t_open(&t, CAPS, 2);
		if (t_tcp_ep(&t, 0)->io != &tcp_io_epoll)
			_exit(4);
		t_xfer(&t, 0, 1, 70000, false, 5);
		t_close(&t);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	tcp_env.io_uring = saved;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair_sizes),
		cmocka_unit_test(test_zero_null),
		cmocka_unit_test(test_unknown_sender),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_simultaneous),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_handshake_timeout),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_stripes),
		cmocka_unit_test(test_ep_src_addr),
		cmocka_unit_test(test_unexp_bound),
		cmocka_unit_test(test_close_dead_peer),
		cmocka_unit_test(test_delivery_complete),
		cmocka_unit_test(test_rma_bad_key),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_seccomp_fallback),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
