/* SPDX-License-Identifier: MIT */
/*
 * Acknowledgements carried by data (wire version 2), against a fake peer:
 * a plain UDP socket that speaks the wire format, so every datagram the
 * device sends is seen and every one it gets is chosen. The RTO is long
 * (10 s), so nothing here is answered by a retransmission unless the test
 * sends it: a completion can only come from what the fake peer sent.
 */
#include "weft/compat.h"
#include "softsrd_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { F_SEND = 1, F_WRITE, F_READ_REQ, F_ACK, F_READ_RESP };

/* A QP that is only a socket: its QPN is (port << 8) | 1, as softsrd's. */
struct fake {
	int fd;
	struct sockaddr_in me;
	uint32_t qpn;
	uint32_t incarnation;
};

static int setup(void **state)
{
	treset();
	/* nothing goes twice unless a test asks for it */
	tset("RTO_US", "10000000");
	tset("RTO_MIN_US", "10000000");
	tset("RTO_MAX_US", "10000000");
	return 0;
}

static void fake_open(struct fake *f)
{
	socklen_t len = sizeof(f->me);

	memset(f, 0, sizeof(*f));
	f->me.sin_family = AF_INET;
	f->me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(f->fd >= 0);
	assert_int_equal(bind(f->fd, (struct sockaddr *)&f->me, sizeof(f->me)), 0);
	assert_int_equal(getsockname(f->fd, (struct sockaddr *)&f->me, &len), 0);
	f->qpn = (uint32_t)ntohs(f->me.sin_port) << 8 | 1;
	f->incarnation = 0x5eed0001;
}

/* The next datagram from the device (hang guard 10 s); its payload length. */
static size_t fake_recv(struct fake *f, struct fhdr *h, uint8_t *payload,
			size_t cap)
{
	struct pollfd pfd = { .fd = f->fd, .events = POLLIN };
	uint8_t buf[70000];
	ssize_t n;

	assert_int_equal(poll(&pfd, 1, 10000), 1);
	n = recv(f->fd, buf, sizeof(buf), 0);
	assert_true(n >= (ssize_t)sizeof(*h));
	memcpy(h, buf, sizeof(*h));
	assert_int_equal(h->version, 3);
	assert_int_equal(h->dst_qpn, f->qpn);
	n -= (ssize_t)sizeof(*h);
	assert_true((size_t)n <= cap);
	memcpy(payload, buf + sizeof(*h), (size_t)n);
	return (size_t)n;
}

static void fake_tx(struct fake *f, const struct tnode *n, struct fhdr *h,
		    const void *data, uint32_t len)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	uint8_t buf[4096];

	assert_true(sizeof(*h) + len <= sizeof(buf));
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons((uint16_t)(n->qpn >> 8));
	h->version = 3;
	h->src_qpn = f->qpn;
	h->dst_qpn = n->qpn;
	memcpy(buf, h, sizeof(*h));
	if (len)
		memcpy(buf + sizeof(*h), data, len);
	assert_int_equal(sendto(f->fd, buf, sizeof(*h) + len, 0,
				(struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)(sizeof(*h) + len));
}

/* A SEND of the fake QP's flow, PSN psn, acknowledging a run of n's. */
static void fake_send(struct fake *f, const struct tnode *n, uint64_t psn,
		      const void *data, uint32_t len, uint64_t ack_psn,
		      uint32_t ack_cnt, uint32_t ack_incarnation)
{
	struct fhdr h = {
		.type = F_SEND,
		.qkey = n->qkey,
		.incarnation = f->incarnation,
		.seg_len = len,
		.psn = psn,
		.msg_len = len,
		.ack_psn = ack_psn,
		.ack_cnt = ack_cnt,
		.ack_incarnation = ack_incarnation,
	};

	fake_tx(f, n, &h, data, len);
}

/* n and the fake peer, n's QP addressed to it; recvs receives posted. */
static void pair_open(struct tnode *n, struct fake *f, int recvs)
{
	tnode_open(n, 1 << 20, T_ACCESS_ALL, 1024, 7);
	fake_open(f);
	tnode_connect(n, &n->gid, f->qpn, 0x77);
	for (int i = 0; i < recvs; i++)
		assert_int_equal(tpost_recv(n, 100 + (uint64_t)i,
					    n->buf + 512 * 1024 + (size_t)i * 4096,
					    4096, n->mr->lkey), 0);
}

static void pair_close(struct tnode *n, struct fake *f)
{
	tnode_close(n);
	close(f->fd);
}

/* n sends len bytes (pattern seed) to the fake peer, which checks them and
 * returns the packet's header. */
static void send_to_fake(struct tnode *n, struct fake *f, uint64_t wr_id,
			 uint32_t len, uint32_t seed, struct fhdr *h)
{
	uint8_t got[4096];
	size_t n_got;

	tfill(n->buf, len, seed);
	assert_int_equal(tpost_send(n, wr_id, n->buf, len, n->mr->lkey,
				    false, 0), 0);
	/* an acknowledgement owed to the fake may come alone first */
	do {
		n_got = fake_recv(f, h, got, sizeof(got));
	} while (h->type == F_ACK && !n_got);
	assert_int_equal(h->type, F_SEND);
	assert_int_equal(n_got, len);
	assert_int_equal(h->seg_len, len);
	assert_int_equal(h->qkey, 0x77);
	assert_true(tcheck(got, len, seed));
}

/* A receive completion for the fake's message of len bytes, pattern seed. */
static void expect_recv(struct tnode *n, const struct fake *f,
			const struct tcomp *c, uint32_t len, uint32_t seed)
{
	assert_int_equal(c->status, IBV_WC_SUCCESS);
	assert_int_equal(c->opcode, IBV_WC_RECV);
	assert_int_equal(c->byte_len, len);
	assert_int_equal(c->src_qp, f->qpn);
	assert_true(c->wr_id >= 100 && c->wr_id < 100 + 64);
	assert_true(tcheck(n->buf + 512 * 1024 + (c->wr_id - 100) * 4096, len,
			   seed));
}

/* The fake's SEND carries the only acknowledgement n ever gets: n's send
 * completes, and the data of the SEND is received as well. */
static void test_ack_on_data(void **state)
{
	uint8_t data[300], p[4096];
	size_t len;
	struct tnode n;
	struct fake f;
	struct fhdr h;
	struct tcomp c;
	bool sent = false, got = false;

	pair_open(&n, &f, 4);
	send_to_fake(&n, &f, 7, 100, 1, &h);
	assert_int_equal(h.ack_cnt, 0);	/* n owed nothing yet */
	assert_false(tpoll_for(&n, &c, 20));	/* not answered: not done */
	tfill(data, sizeof(data), 2);
	fake_send(&f, &n, 0, data, sizeof(data), h.psn, 1, h.incarnation);
	while (!sent || !got) {
		tpoll(&n, &c);
		if (c.opcode == IBV_WC_SEND) {
			assert_false(sent);
			assert_int_equal(c.status, IBV_WC_SUCCESS);
			assert_int_equal(c.wr_id, 7);
			sent = true;
		} else {
			assert_false(got);
			expect_recv(&n, &f, &c, sizeof(data), 2);
			got = true;
		}
	}
	/* n now owes the fake PSN 0: its next packet (or an ACK ahead of it,
	 * if the delay ran out first) acknowledges it */
	tfill(n.buf, 64, 3);
	assert_int_equal(tpost_send(&n, 8, n.buf, 64, n.mr->lkey, false, 0), 0);
	len = fake_recv(&f, &h, p, sizeof(p));
	assert_int_equal(h.ack_cnt, 1);
	assert_int_equal(h.ack_psn, 0);
	assert_int_equal(h.ack_incarnation, f.incarnation);
	if (h.type == F_ACK) {	/* alone: the delay ran out first */
		assert_int_equal(len, 0);
		len = fake_recv(&f, &h, p, sizeof(p));
	}
	assert_int_equal(h.type, F_SEND);
	assert_int_equal(len, 64);
	assert_true(tcheck(p, 64, 3));
	pair_close(&n, &f);
}

/* Acknowledgement fields that do not fit what n sent are ignored: the
 * data of those packets lands, n's send stays unanswered until a right
 * one comes, and a read is never completed by an ACK. */
static void test_ack_forged(void **state)
{
	struct {
		uint64_t psn_delta;	/* from the send's PSN */
		uint64_t psn_abs;	/* used when nonzero */
		uint32_t cnt, inc_delta;
	} bad[] = {
		{ 0, 0, 1, 1 },			/* another incarnation */
		{ 0, 0, 2, 0 },			/* reaches a PSN never sent */
		{ 1, 0, 1, 0 },			/* a PSN never sent */
		{ 0, UINT64_MAX - 1, 4, 0 },	/* wraps */
		{ 0, 0, UINT32_MAX, 0 },	/* longer than any window */
		{ 0, 0, 257, 0 },
	};
	uint32_t nbad = WEFT_ARRAY_SIZE(bad);
	uint8_t data[128], got[4096];
	struct tnode n;
	struct fake f;
	struct fhdr h, rd;
	struct fhdr resp = { .type = F_READ_RESP, .seg_len = 256,
			     .incarnation = 0x5eed0001 };
	struct tcomp c;
	uint32_t recvs = 0;

	pair_open(&n, &f, 16);
	send_to_fake(&n, &f, 7, 200, 1, &h);
	for (uint32_t i = 0; i < nbad; i++) {
		uint64_t psn = bad[i].psn_abs ? bad[i].psn_abs :
						h.psn + bad[i].psn_delta;

		tfill(data, sizeof(data), 10 + i);
		fake_send(&f, &n, i, data, sizeof(data), psn, bad[i].cnt,
			  h.incarnation + bad[i].inc_delta);
	}
	while (recvs < nbad) {
		tpoll(&n, &c);
		assert_int_equal(c.opcode, IBV_WC_RECV);	/* never the send */
		assert_int_equal(c.status, IBV_WC_SUCCESS);
		recvs++;
	}
	assert_false(tpoll_for(&n, &c, 50));

	/* an RDMA read's PSN acknowledged by a run: still waits for data */
	assert_int_equal(tpost_rdma(&n, false, 9, n.buf + 8192, 256, n.mr->lkey,
				    0x1234, 0x10000), 0);
	do {
		assert_int_equal(fake_recv(&f, &rd, got, sizeof(got)), 0);
	} while (rd.type != F_READ_REQ);
	assert_int_equal(rd.seg_len, 256);
	fake_send(&f, &n, nbad, data, 16, rd.psn, 1, rd.incarnation);
	tpoll(&n, &c);
	assert_int_equal(c.opcode, IBV_WC_RECV);
	assert_false(tpoll_for(&n, &c, 50));

	/* answers to the read that do not name n's QP (its incarnation, as
	 * the read request carried it) are not taken: a refusal (forged,
	 * as by anyone who cannot see the traffic, or for an earlier QP)
	 * and wrong data */
	resp.psn = rd.psn;
	resp.status = 2;	/* access refused */
	resp.seg_len = 0;
	resp.ack_incarnation = rd.incarnation + 1;
	fake_tx(&f, &n, &resp, NULL, 0);
	resp.status = 0;
	resp.seg_len = 256;
	tfill(got, 256, 98);
	fake_tx(&f, &n, &resp, got, 256);
	assert_false(tpoll_for(&n, &c, 50));

	/* the right acknowledgement completes the send, the response the
	 * read, with the data the fake gave */
	fake_send(&f, &n, nbad + 1, data, 16, h.psn, 1, h.incarnation);
	resp.ack_incarnation = rd.incarnation;
	tfill(got, 256, 99);
	fake_tx(&f, &n, &resp, got, 256);
	for (int seen = 0; seen != 7;) {
		tpoll(&n, &c);
		assert_int_equal(c.status, IBV_WC_SUCCESS);
		if (c.opcode == IBV_WC_SEND) {
			assert_int_equal(c.wr_id, 7);
			seen |= 1;
		} else if (c.opcode == IBV_WC_RDMA_READ) {
			assert_int_equal(c.wr_id, 9);
			assert_true(tcheck(n.buf + 8192, 256, 99));
			seen |= 2;
		} else {
			assert_int_equal(c.opcode, IBV_WC_RECV);
			assert_false(seen & 4);
			seen |= 4;
		}
	}
	pair_close(&n, &f);
}

/* The packet that carried n's acknowledgement is lost: the fake sends its
 * SEND again, and n answers the duplicate with an ACK of its own, without
 * delivering it twice. */
static void test_ack_lost_piggyback(void **state)
{
	uint8_t data[200], got[4096];
	struct tnode n;
	struct fake f;
	struct fhdr h;
	struct tcomp c;

	pair_open(&n, &f, 4);
	tfill(data, sizeof(data), 5);
	fake_send(&f, &n, 0, data, sizeof(data), 0, 0, 0);
	tpoll(&n, &c);
	expect_recv(&n, &f, &c, sizeof(data), 5);
	/* n's answer, which takes the acknowledgement along: dropped */
	send_to_fake(&n, &f, 7, 64, 6, &h);
	/* the fake never got it: it resends PSN 0 */
	fake_send(&f, &n, 0, data, sizeof(data), 0, 0, 0);
	for (;;) {
		size_t len = fake_recv(&f, &h, got, sizeof(got));
		bool run = h.ack_cnt && h.ack_psn == 0 &&
			   h.ack_incarnation == f.incarnation;

		assert_int_equal(len, 0);
		assert_int_equal(h.type, F_ACK);
		assert_int_equal(h.status, 0);
		if (run || (!h.ack_cnt && h.psn == 0))
			break;
	}
	/* delivered once: the second receive stays posted */
	assert_false(tpoll_for(&n, &c, 50));
	pair_close(&n, &f);
}

/* PSNs and floors come from the wire: a flow whose sender declares a
 * floor at the top of the 64-bit space still has a window there (its end
 * once wrapped to a small number, and the device dropped every packet of
 * the flow from then on). */
static void test_window_at_top(void **state)
{
	uint8_t data[64], p[4096];
	struct tnode n;
	struct fake f;
	struct fhdr h = {
		.type = F_SEND,
		.seg_len = sizeof(data),
		.msg_len = sizeof(data),
		.psn = UINT64_MAX - 1,
		.floor = UINT64_MAX - 1,
	};
	struct tcomp c;

	(void)state;
	pair_open(&n, &f, 2);
	h.qkey = n.qkey;
	h.incarnation = f.incarnation;
	tfill(data, sizeof(data), 4);
	fake_tx(&f, &n, &h, data, sizeof(data));
	tpoll(&n, &c);
	expect_recv(&n, &f, &c, sizeof(data), 4);
	/* the last PSN there is, and its acknowledgement */
	h.psn = UINT64_MAX;
	tfill(data, sizeof(data), 5);
	fake_tx(&f, &n, &h, data, sizeof(data));
	tpoll(&n, &c);
	expect_recv(&n, &f, &c, sizeof(data), 5);
	do {
		assert_int_equal(fake_recv(&f, &h, p, sizeof(p)), 0);
		assert_int_equal(h.type, F_ACK);
	} while (h.ack_psn + h.ack_cnt - 1 != UINT64_MAX);
	assert_int_equal(h.ack_incarnation, f.incarnation);
	pair_close(&n, &f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_ack_on_data, setup),
		cmocka_unit_test_setup(test_ack_forged, setup),
		cmocka_unit_test_setup(test_ack_lost_piggyback, setup),
		cmocka_unit_test_setup(test_window_at_top, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
