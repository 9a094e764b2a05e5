/* SPDX-License-Identifier: MIT */
/*
 * tcp provider, a peer that breaks the protocol: a raw socket sends an
 * endpoint bytes no weft endpoint would (before the handshake, in it,
 * after it, a payload cut short). Each time the endpoint drops that
 * connection, fails what was pending toward that peer with an error
 * completion, and goes on serving its other peers. Peers that do it again
 * and again get a few warning lines, not a few per peer.
 */
#include "tcp_test.h"
#include "../../../core/test/capture.h"

static struct tctx T;

#define CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_SOURCE)

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

/* The fixture's endpoints still talk: the bad peer hurt nobody else. */
static void t_pair_works(void)
{
	char sbuf[100], rbuf[100];
	struct fi_context sctx, rctx;

	memset(sbuf, 0x5a, sizeof(sbuf));
	T_POST(&T, fi_recv(T.e[1].ep, rbuf, sizeof(rbuf), NULL,
			   FI_ADDR_UNSPEC, &rctx));
	T_POST(&T, fi_send(T.e[0].ep, sbuf, sizeof(sbuf), NULL, T.e[1].self,
			   &sctx));
	assert_ptr_equal(t_next_ok(&T, 1).op_context, &rctx);
	assert_ptr_equal(t_next_ok(&T, 0).op_context, &sctx);
	assert_memory_equal(rbuf, sbuf, sizeof(sbuf));
}

/* Progress until the endpoint closed fd. */
static void t_wait_closed(int fd)
{
	double deadline = t_now() + T_DEADLINE_S;

	while (!t_raw_closed(fd, 1)) {
		t_progress_all(&T);
		if (t_now() > deadline)
			fail_msg("the endpoint kept a bad connection open");
	}
}

/* Progress until fd is readable (the endpoint answered). */
static void t_wait_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double deadline = t_now() + T_DEADLINE_S;

	while (poll(&pfd, 1, 0) != 1) {
		t_progress_all(&T);
		if (t_now() > deadline)
			fail_msg("no answer from the endpoint");
	}
}

/* ---- before the handshake: the endpoint accepts from a stranger ------ */

static void test_junk_instead_of_hello(void **state)
{
	uint8_t junk[64];
	size_t i;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	fd = t_raw_connect(&T.e[1].name);
	t_raw_write(fd, junk, sizeof(junk));
	t_wait_closed(fd);
	close(fd);
	t_pair_works();
}

static void test_hello_bad_magic(void **state)
{
	uint8_t payload[TCP_HELLO_FIXED_LEN + TCP_WIRE_ADDR_LEN];
	struct tcp_hdr h = { .op = TCP_OP_HELLO, .len = sizeof(payload) };
	int fd;

	(void)state;
	memset(payload, 'x', sizeof(payload));
	fd = t_raw_connect(&T.e[1].name);
	t_raw_frame(fd, &h, payload);
	t_wait_closed(fd);
	close(fd);
	t_pair_works();
}

static void test_msg_before_hello(void **state)
{
	struct tcp_hdr h = { .op = TCP_OP_MSG, .len = 4 };
	int fd;

	(void)state;
	fd = t_raw_connect(&T.e[1].name);
	t_raw_frame(fd, &h, "abcd");
	t_wait_closed(fd);
	close(fd);
	t_pair_works();
}

/* A HELLO the endpoint cannot accept gets a REJECT with the reason. */
static void t_expect_reject(int fd, uint32_t reason)
{
	uint8_t buf[TCP_HDR_MAX + TCP_REJECT_LEN];
	struct tcp_hdr h;
	const char *why;
	uint32_t got;
	ssize_t n;

	t_wait_readable(fd);
	n = recv(fd, buf, sizeof(buf), MSG_WAITALL);
	assert_int_equal(n, (ssize_t)(16 + TCP_REJECT_LEN));
	assert_int_equal(tcp_frame_decode(buf, 16, &(struct tcp_limits){ 0 },
					  &h, &why), 0);
	assert_int_equal(h.op, TCP_OP_REJECT);
	assert_int_equal(tcp_reject_decode(buf + 16, TCP_REJECT_LEN, &got, &why),
			 0);
	assert_int_equal(got, reason);
	assert_true(t_raw_closed(fd, 5000));
}

static void test_hello_rejected(void **state)
{
	uint8_t payload[TCP_HELLO_MAX_LEN];
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_port = htons(1) };
	struct tcp_hello hello;
	struct tcp_hdr h = { .op = TCP_OP_HELLO };
	int fd;

	(void)state;
	/* Only newer versions than ours. */
	memset(&hello, 0, sizeof(hello));
	hello.ver_min = TCP_WIRE_VERSION_MAX + 1;
	hello.ver_max = TCP_WIRE_VERSION_MAX + 5;
	hello.naddr = 1;
	hello.nonce = 1;
	hello.addr[0].family = TCP_WIRE_AF_INET;
	hello.addr[0].port = 1;
	h.len = tcp_hello_encode(&hello, payload);
	fd = t_raw_connect(&T.e[1].name);
	t_raw_frame(fd, &h, payload);
	t_expect_reject(fd, TCP_REJECT_VERSION);
	close(fd);
	/* An IPv6 name toward an IPv4 endpoint. */
	hello.ver_min = hello.ver_max = TCP_WIRE_VERSION;
	hello.addr[0].family = TCP_WIRE_AF_INET6;
	h.len = tcp_hello_encode(&hello, payload);
	fd = t_raw_connect(&T.e[1].name);
	t_raw_frame(fd, &h, payload);
	t_expect_reject(fd, TCP_REJECT_FAMILY);
	close(fd);
	/* A stripe for a peer it has no primary connection with. */
	fd = t_raw_connect(&T.e[1].name);
	t_raw_hello(fd, TCP_OP_HELLO, &me, 77, 1);
	t_expect_reject(fd, TCP_REJECT_STRIPE);
	close(fd);
	t_pair_works();
}

static void test_half_header_then_eof(void **state)
{
	int fd;

	(void)state;
	fd = t_raw_connect(&T.e[1].name);
	t_raw_write(fd, "\x01\x01\x00", 3);
	close(fd);
	t_progress_all(&T);
	t_pair_works();
}

/* ---- after the handshake: a peer the endpoint connected to ---------- */

struct t_fake {
	int lfd, fd;
	struct sockaddr_in addr;
	fi_addr_t fi_addr;
	struct fi_context ctx[2];
	uint64_t rts_id, read_id;
};

/* Endpoint 0 connects to a fake peer with a rendezvous send and an RMA
 * read pending; the fake completes the handshake and reads both
 * requests. */
static void t_fake_open(struct t_fake *f)
{
	static char big[100000], small[64];
	struct tcp_hdr h;

	f->lfd = t_raw_listen(&f->addr);
	assert_int_equal(fi_av_insert(T.av, &f->addr, 1, &f->fi_addr, 0, NULL),
			 1);
	T_POST(&T, fi_send(T.e[0].ep, big, sizeof(big), NULL, f->fi_addr,
			   &f->ctx[0]));
	T_POST(&T, fi_read(T.e[0].ep, small, sizeof(small), NULL, f->fi_addr,
			   0, 5, &f->ctx[1]));
	t_wait_readable(f->lfd);
	f->fd = accept(f->lfd, NULL, NULL);
	assert_true(f->fd >= 0);
	t_wait_readable(f->fd);
	assert_true(t_raw_read_frame(f->fd, &h, 5000));
	assert_int_equal(h.op, TCP_OP_HELLO);
	t_raw_hello(f->fd, TCP_OP_HELLO_ACK, &f->addr, 0x1234, 0);
	t_wait_readable(f->fd);
	assert_true(t_raw_read_frame(f->fd, &h, 5000));
	assert_int_equal(h.op, TCP_OP_RTS);
	f->rts_id = h.id;
	t_wait_readable(f->fd);
	assert_true(t_raw_read_frame(f->fd, &h, 5000));
	assert_int_equal(h.op, TCP_OP_READ);
	f->read_id = h.id;
}

/* The endpoint closes the fake and fails both pending operations. */
static void t_fake_check(struct t_fake *f)
{
	struct fi_cq_err_entry err;
	int i;

	t_wait_closed(f->fd);
	for (i = 0; i < 2; i++) {
		err = t_next_err(&T, 0);
		assert_ptr_equal(err.op_context, &f->ctx[i]);
		assert_int_equal(err.err, TCP_EPROTO);
	}
	close(f->fd);
	close(f->lfd);
	assert_int_equal(fi_av_remove(T.av, &f->fi_addr, 1, 0), 0);
	t_pair_works();
}

static void t_fake_bytes(const void *buf, size_t len)
{
	struct t_fake f;

	t_fake_open(&f);
	t_raw_write(f.fd, buf, len);
	t_fake_check(&f);
}

static void t_fake_frame(struct tcp_hdr *h, const void *payload)
{
	struct t_fake f;

	t_fake_open(&f);
	t_raw_frame(f.fd, h, payload);
	t_fake_check(&f);
}

static void test_bad_version(void **state)
{
	struct tcp_hdr h = { .op = TCP_OP_PING };
	uint8_t buf[TCP_HDR_MAX];

	(void)state;
	tcp_frame_encode(&h, buf);
	buf[0] = 9;
	t_fake_bytes(buf, 16);
}

/* The collective class toward an endpoint opened without FI_COLLECTIVE. */
static void test_coll_class_refused(void **state)
{
	struct tcp_hdr h = { .op = TCP_OP_MSG,
			     .flags = TCP_F_TAGGED | TCP_F_COLL };

	(void)state;
	t_fake_frame(&h, NULL);
}

static void test_msg_too_long(void **state)
{
	struct tcp_hdr h = { .op = TCP_OP_MSG, .len = 2 << 20 };
	struct t_fake f;
	uint8_t buf[TCP_HDR_MAX];
	uint32_t hlen = tcp_frame_encode(&h, buf);

	(void)state;
	t_fake_open(&f);
	t_raw_write(f.fd, buf, hlen);	/* the header alone is refused */
	t_fake_check(&f);
}

static void test_cts_unknown_id(void **state)
{
	struct tcp_hdr h = { .op = TCP_OP_CTS, .id = 0xffff00000001ull,
			     .xfer = 1, .size = 10 };

	(void)state;
	t_fake_frame(&h, NULL);
}

static void test_cts_too_large(void **state)
{
	struct tcp_hdr h = { .op = TCP_OP_CTS, .xfer = 1, .size = 100001 };
	struct t_fake f;

	(void)state;
	t_fake_open(&f);
	h.id = f.rts_id;		/* the right op, more than it has */
	t_raw_frame(f.fd, &h, NULL);
	t_fake_check(&f);
}

static void test_data_unknown_xfer(void **state)
{
	struct tcp_hdr h = { .op = TCP_OP_DATA, .xfer = 3, .len = 8 };

	(void)state;
	t_fake_frame(&h, "12345678");
}

static void test_hello_after_handshake(void **state)
{
	struct t_fake f;

	(void)state;
	t_fake_open(&f);
	t_raw_hello(f.fd, TCP_OP_HELLO, &f.addr, 0x1234, 0);
	t_fake_check(&f);
}

static void test_read_resp_wrong_len(void **state)
{
	struct tcp_hdr h = { .op = TCP_OP_READ_RESP, .len = 63 };
	uint8_t payload[63] = { 0 };
	struct t_fake f;

	(void)state;
	t_fake_open(&f);
	h.id = f.read_id;
	t_raw_frame(f.fd, &h, payload);
	t_fake_check(&f);
}

static void test_ack_reserved(void **state)
{
	struct tcp_hdr h = { .op = TCP_OP_ACK };
	uint8_t buf[TCP_HDR_MAX];
	struct t_fake f;
	uint32_t hlen;

	(void)state;
	t_fake_open(&f);
	h.id = f.rts_id;
	hlen = tcp_frame_encode(&h, buf);
	buf[30] = 1;
	t_raw_write(f.fd, buf, hlen);
	t_fake_check(&f);
}

/* A sender that dies in the middle of a payload: the receive that took
 * the message ends in error, nothing else. */
static void test_payload_cut_short(void **state)
{
	struct sockaddr_in fake = { .sin_family = AF_INET,
				    .sin_port = htons(9),
				    .sin_addr.s_addr = htonl(0x7f000002) };
	struct tcp_hdr h = { .op = TCP_OP_MSG, .len = 1000 };
	struct fi_cq_err_entry err;
	struct fi_context rctx;
	char rbuf[1000], part[100];
	int fd;

	(void)state;
	memset(part, 1, sizeof(part));
	T_POST(&T, fi_recv(T.e[1].ep, rbuf, sizeof(rbuf), NULL,
			   FI_ADDR_UNSPEC, &rctx));
	fd = t_raw_connect(&T.e[1].name);
	t_raw_hello(fd, TCP_OP_HELLO, &fake, 99, 0);
	t_wait_readable(fd);
	assert_true(t_raw_read_frame(fd, &h, 5000));
	assert_int_equal(h.op, TCP_OP_HELLO_ACK);
	memset(&h, 0, sizeof(h));
	h.op = TCP_OP_MSG;
	h.len = 1000;
	{
		uint8_t buf[TCP_HDR_MAX];
		uint32_t hlen = tcp_frame_encode(&h, buf);

		t_raw_write(fd, buf, hlen);
	}
	t_raw_write(fd, part, sizeof(part));
	close(fd);
	err = t_next_err(&T, 1);
	assert_ptr_equal(err.op_context, &rctx);
	assert_int_equal(err.err, FI_ECONNRESET);
	t_pair_works();
}

/* ---- the same, again and again: the log stays short ----------------- */

#define FLOOD_PEERS 200
#define FLOOD_SITES 4	/* warnings a round may raise: see below */
#define FLOOD_INTERVAL_MS 500	/* FI_LOG_INTERVAL, set in main */

static void test_flood_bad_peers(void **state)
{
	struct tcp_hdr coll = { .op = TCP_OP_MSG,
				.flags = TCP_F_TAGGED | TCP_F_COLL };
	struct tcp_hdr cts = { .op = TCP_OP_CTS, .id = 0x7777 };
	struct capture cap;
	const char *out;
	double t0;
	int i, lines, bound;

	(void)state;
	/* The tests before warned from the same places: a fresh interval. */
	usleep((FLOOD_INTERVAL_MS + 100) * 1000);
	t0 = t_now();
	capture_start(&cap);
	/* Each round a peer fails (a warning naming it) after a frame
	 * that may warn too (the collective class). */
	for (i = 0; i < FLOOD_PEERS; i++) {
		if (i % 2)
			t_fake_frame(&coll, NULL);
		else
			t_fake_frame(&cts, NULL);
	}
	out = capture_stop(&cap);
	lines = capture_count(out, "libfabric:");
	bound = FLOOD_SITES *
		(int)(2 + (t_now() - t0) * 1000 / FLOOD_INTERVAL_MS);
	print_message("%d peers failed on bad frames: %d warning lines "
		      "(bound %d)\n", FLOOD_PEERS, lines, bound);
	if (lines > bound)
		print_message("first lines:\n%.1500s\n", out);
	assert_true(lines > 0);
	assert_true(lines <= bound);
	capture_free(&cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_junk_instead_of_hello),
		cmocka_unit_test(test_hello_bad_magic),
		cmocka_unit_test(test_msg_before_hello),
		cmocka_unit_test(test_hello_rejected),
		cmocka_unit_test(test_half_header_then_eof),
		cmocka_unit_test(test_bad_version),
		cmocka_unit_test(test_coll_class_refused),
		cmocka_unit_test(test_msg_too_long),
		cmocka_unit_test(test_cts_unknown_id),
		cmocka_unit_test(test_cts_too_large),
		cmocka_unit_test(test_data_unknown_xfer),
		cmocka_unit_test(test_hello_after_handshake),
		cmocka_unit_test(test_read_resp_wrong_len),
		cmocka_unit_test(test_ack_reserved),
		cmocka_unit_test(test_payload_cut_short),
		cmocka_unit_test(test_flood_bad_peers),
	};

	/* test_flood_bad_peers counts warning lines: they must be on. */
	setenv("FI_LOG_LEVEL", "warn", 1);
	setenv("FI_LOG_INTERVAL", "500", 1);
	return cmocka_run_group_tests(tests, setup, teardown);
}
