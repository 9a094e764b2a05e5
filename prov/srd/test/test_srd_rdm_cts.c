/* SPDX-License-Identifier: MIT */
/*
 * The receiver-granted-credit (CTS) long protocol end to end, two srd
 * endpoints in one process over softsrd with RDMA read switched off
 * (FI_SRD_SOFT_RDMA_READ=0), so every long message must go by credits:
 * the endpoints' protocol counters (struct srd_long_stats) prove which
 * packets went. Data is checked byte for byte: sizes around the threshold
 * (a non-default FI_SRD_CTS_THRESHOLD), 1 MiB and 16 MiB, msg and tagged,
 * expected and unexpected (no DATA before the receive exists), truncation
 * (FI_ETRUNC with olen), fi_cancel of a receive an RTS matched, many long
 * messages in flight, FI_ORDER_SAS with eager messages around them, and a
 * peer endpoint closed after the RTS on either side (error completion, no
 * hang).
 */
#include "test_srd_rdm_common.h"
#include "../src/rdm/srd_proto.h"

#include <stdlib.h>
#include <string.h>

#define THRESHOLD 70000		/* FI_SRD_CTS_THRESHOLD of this test */
#define MIB (1024 * 1024)

static struct srd_long_stats *stats(struct tep *e)
{
	return &to_srd_ep(e->ep)->lstat;
}

static struct tent take_ok(struct tfab *f, struct tep *e, void *ctx)
{
	struct tent t;

	tfab_wait(f, e, 1);
	t = tfab_take(e);
	assert_int_equal(t.err, 0);
	assert_ptr_equal(t.e.op_context, ctx);
	return t;
}

static void poll_n(struct tfab *f, int n)
{
	while (n--)
		tfab_poll(f);
}

/* One message a -> b; the counters say whether it went by credits. */
static void roundtrip(struct tfab *f, size_t len, bool tagged,
		      bool unexpected, unsigned int seed)
{
	uint8_t *src = malloc(len + 1), *dst = malloc(len + 1);
	struct srd_long_stats a0 = *stats(&f->a), b0 = *stats(&f->b);
	bool cts = len > THRESHOLD;
	int sctx, rctx;
	struct tent t;

	assert_non_null(src);
	assert_non_null(dst);
	tfab_fill(src, len, seed);
	memset(dst, 0xee, len + 1);
	if (!unexpected)
		tfab_recv(f, dst, len, 9, tagged, &rctx);
	tfab_send(f, src, len, 9, tagged, &sctx);
	if (unexpected) {
		poll_n(f, 3000);
		/* The RTS waits: no grant, no DATA before the receive. */
		assert_int_equal(stats(&f->b)->cts, b0.cts);
		assert_int_equal(stats(&f->a)->data, a0.data);
		tfab_recv(f, dst, len, 9, tagged, &rctx);
	}
	t = take_ok(f, &f->b, &rctx);
	assert_int_equal(t.e.len, len);
	assert_true(t.e.flags & (tagged ? FI_TAGGED : FI_MSG));
	take_ok(f, &f->a, &sctx);
	tfab_check(dst, len, seed);
	assert_int_equal(dst[len], 0xee);
	assert_int_equal(stats(&f->a)->long_rts, a0.long_rts);
	assert_int_equal(stats(&f->a)->cts_rts, a0.cts_rts + cts);
	if (cts) {
		assert_true(stats(&f->b)->cts > b0.cts);
		assert_int_equal(stats(&f->b)->done, b0.done + 1);
		assert_true(stats(&f->a)->data > a0.data);
	}
	free(src);
	free(dst);
}

static void run_sizes(bool tagged, bool unexpected)
{
	const size_t s[] = { THRESHOLD - 1, THRESHOLD, THRESHOLD + 1, MIB,
			     16 * MIB };
	struct tfab f;
	size_t i;

	tfab_open(&f, 0, true);
	assert_int_equal(to_srd_ep(f.a.ep)->cts_threshold, THRESHOLD);
	assert_false(to_srd_ep(f.a.ep)->long_read);
	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		roundtrip(&f, s[i], tagged, unexpected, (unsigned int)i + 11);
	tfab_close(&f);
}

static void test_msg_expected(void **state)
{
	(void)state;
	run_sizes(false, false);
}

static void test_msg_unexpected(void **state)
{
	(void)state;
	run_sizes(false, true);
}

static void test_tagged_expected(void **state)
{
	(void)state;
	run_sizes(true, false);
}

static void test_tagged_unexpected(void **state)
{
	(void)state;
	run_sizes(true, true);
}

/* A buffer shorter than the message: FI_ETRUNC with olen, the bytes that
 * fit are right, nothing past the buffer is written, the sender completes
 * without error and never sends what the receiver did not grant. */
static void trunc_one(struct tfab *f, size_t len, size_t cap,
		      unsigned int seed)
{
	uint8_t *src = malloc(len), *dst = malloc(cap + 64);
	struct srd_long_stats a0 = *stats(&f->a);
	int sctx, rctx;
	struct tent t;

	assert_non_null(src);
	assert_non_null(dst);
	tfab_fill(src, len, seed);
	memset(dst, 0xee, cap + 64);
	tfab_recv(f, dst, cap, 0, false, &rctx);
	tfab_send(f, src, len, 0, false, &sctx);
	tfab_wait(f, &f->b, 1);
	t = tfab_take(&f->b);
	assert_int_equal(t.err, FI_ETRUNC);
	assert_ptr_equal(t.e.op_context, &rctx);
	assert_int_equal(t.olen, len - cap);
	tfab_check(dst, cap, seed);
	assert_int_equal(dst[cap], 0xee);
	assert_int_equal(dst[cap + 63], 0xee);
	take_ok(f, &f->a, &sctx);
	assert_int_equal(stats(&f->a)->cts_rts, a0.cts_rts + 1);
	/* DATA covers at most the granted bytes. */
	assert_true((stats(&f->a)->data - a0.data) * (f->mtu - 24) <=
		    cap + f->mtu);
	free(src);
	free(dst);
}

static void test_truncation(void **state)
{
	struct tfab f;

	(void)state;
	tfab_open(&f, 0, true);
	trunc_one(&f, MIB, 300000, 1);
	trunc_one(&f, THRESHOLD + 1, 100, 2);	/* inside the first chunk */
	trunc_one(&f, 16 * MIB, 5 * MIB + 3, 3);
	tfab_close(&f);
}

/* fi_cancel of a receive an RTS already matched: too late to cancel
 * (-FI_ENOENT), the message still arrives whole. Expected (matched as the
 * RTS arrives) and unexpected (matched when the receive is posted). */
static void cancel_one(struct tfab *f, bool unexpected, unsigned int seed)
{
	size_t len = 4 * MIB;
	uint8_t *src = malloc(len), *dst = malloc(len);
	uint64_t cts0 = stats(&f->b)->cts;
	int sctx, rctx, i;
	struct tent t;

	assert_non_null(src);
	assert_non_null(dst);
	tfab_fill(src, len, seed);
	if (!unexpected)
		tfab_recv(f, dst, len, 3, true, &rctx);
	tfab_send(f, src, len, 3, true, &sctx);
	if (unexpected) {
		poll_n(f, 2000);
		tfab_recv(f, dst, len, 3, true, &rctx);
	}
	for (i = 0; i < 1000000 && stats(&f->b)->cts == cts0; i++)
		tfab_poll(f);
	assert_true(stats(&f->b)->cts > cts0);
	assert_int_equal(fi_cancel(&f->b.ep->fid, &rctx), -FI_ENOENT);
	t = take_ok(f, &f->b, &rctx);
	assert_int_equal(t.e.len, len);
	take_ok(f, &f->a, &sctx);
	tfab_check(dst, len, seed);
	free(src);
	free(dst);
}

static void test_cancel_matched(void **state)
{
	struct tfab f;

	(void)state;
	tfab_open(&f, 0, true);
	cancel_one(&f, false, 4);
	cancel_one(&f, true, 5);
	tfab_close(&f);
}

#define NMSG 24

/* Eager and long messages alternate on one untagged queue: with
 * FI_ORDER_SAS, receive i gets message i whatever completes first. Many
 * long messages are in flight to one peer at once. */
static void sas_run(struct tfab *f, bool unexpected)
{
	static uint8_t *src[NMSG], *dst[NMSG];
	static size_t len[NMSG];
	int sctx[NMSG], rctx[NMSG], i, j;
	struct tent t;

	for (i = 0; i < NMSG; i++) {
		len[i] = (i % 2) ? THRESHOLD + 1 + (size_t)i * 40000 :
				   (size_t)i + 1;
		src[i] = malloc(len[i]);
		dst[i] = malloc(MIB + 1);
		assert_non_null(src[i]);
		assert_non_null(dst[i]);
		tfab_fill(src[i], len[i], (unsigned int)i + 100);
		memset(dst[i], 0xee, MIB + 1);
		if (!unexpected)
			tfab_recv(f, dst[i], MIB, 0, false, &rctx[i]);
	}
	for (i = 0; i < NMSG; i++)
		tfab_send(f, src[i], len[i], 0, false, &sctx[i]);
	if (unexpected) {
		poll_n(f, 2000);
		for (i = 0; i < NMSG; i++)
			tfab_recv(f, dst[i], MIB, 0, false, &rctx[i]);
	}
	tfab_wait(f, &f->b, NMSG);
	tfab_wait(f, &f->a, NMSG);
	for (j = 0; j < NMSG; j++) {
		t = tfab_take(&f->b);
		assert_int_equal(t.err, 0);
		i = (int)((int *)t.e.op_context - rctx);
		assert_true(i >= 0 && i < NMSG);
		assert_int_equal(t.e.len, len[i]);
		tfab_check(dst[i], len[i], (unsigned int)i + 100);
		assert_int_equal(dst[i][len[i]], 0xee);
		assert_int_equal(tfab_take(&f->a).err, 0);
	}
	for (i = 0; i < NMSG; i++) {
		free(src[i]);
		free(dst[i]);
	}
}

static void test_sas_many_in_flight(void **state)
{
	struct tfab f;
	uint64_t rts0;

	(void)state;
	tfab_open(&f, 0, true);
	rts0 = stats(&f.a)->cts_rts;
	sas_run(&f, false);
	sas_run(&f, true);
	assert_int_equal(stats(&f.a)->cts_rts, rts0 + NMSG);
	tfab_close(&f);
}

/* Wait for one completion with a larger bound than tfab_wait: the probe
 * interval is wall-clock time. */
static struct tent wait_err(struct tfab *f, struct tep *e)
{
	long i;

	for (i = 0; i < 200000000L && !e->n; i++)
		tfab_poll(f);
	assert_true(e->n > 0);
	return tfab_take(e);
}

/* The receiver's endpoint closes while the sender waits at its RTS (never
 * matched): the liveness probe fails, the send ends with an error naming
 * the cause, nothing hangs. */
static void test_receiver_gone(void **state)
{
	struct tfab f;
	uint8_t *src = calloc(1, MIB);
	int sctx, i;
	struct tent t;
	char msg[256];

	(void)state;
	assert_non_null(src);
	tfab_open(&f, 0, true);
	tfab_hello(&f);
	tfab_send(&f, src, MIB, 0, false, &sctx);
	for (i = 0; i < 1000000 && !to_srd_ep(f.b.ep)->srx.msg_q.unexp; i++)
		tfab_poll(&f);
	assert_non_null(to_srd_ep(f.b.ep)->srx.msg_q.unexp);
	assert_int_equal(fi_close(&f.b.ep->fid), 0);
	f.b.ep = NULL;
	t = wait_err(&f, &f.a);
	assert_ptr_equal(t.e.op_context, &sctx);
	assert_int_not_equal(t.err, 0);
	assert_int_not_equal(t.prov_errno, 0);
	assert_true(stats(&f.a)->probes > 0);
	assert_non_null(fi_cq_strerror(f.a.cq, t.prov_errno, NULL, msg,
				       sizeof(msg)));
	free(src);
	tfab_close(&f);
}

/* The sender's endpoint closes after its RTS: the receive that matches it
 * later ends with an error instead of waiting for DATA forever. */
static void test_sender_gone(void **state)
{
	struct tfab f;
	uint8_t *src = calloc(1, MIB), *dst = malloc(MIB);
	int sctx, rctx, i;
	struct tent t;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	tfab_open(&f, 0, true);
	tfab_hello(&f);
	tfab_send(&f, src, MIB, 0, false, &sctx);
	for (i = 0; i < 1000000 && !to_srd_ep(f.b.ep)->srx.msg_q.unexp; i++)
		tfab_poll(&f);
	assert_non_null(to_srd_ep(f.b.ep)->srx.msg_q.unexp);
	assert_int_equal(fi_close(&f.a.ep->fid), 0);
	f.a.ep = NULL;
	tfab_recv(&f, dst, MIB, 0, false, &rctx);
	t = wait_err(&f, &f.b);
	assert_ptr_equal(t.e.op_context, &rctx);
	assert_int_not_equal(t.err, 0);
	free(src);
	free(dst);
	tfab_close(&f);
}

/* The waiting CTS send of ep, or NULL. */
static struct srd_tx_entry *cts_tx(struct srd_ep *ep)
{
	uint32_t i;

	for (i = 0; i < ep->tx_entry_count; i++)
		if (ep->tx_entries[i].in_use &&
		    ep->tx_entries[i].proto == &srd_proto_cts)
			return &ep->tx_entries[i];
	return NULL;
}

static struct srd_rx_xfer *cts_rx(struct srd_ep *ep)
{
	uint32_t i;

	for (i = 0; i < ep->cts_slot_count; i++)
		if (ep->cts_slots[i].x)
			return ep->cts_slots[i].x;
	return NULL;
}

static void cts_inject(struct srd_ep *ep, uint32_t tx_id, uint32_t rx_id,
		       uint64_t off, uint64_t len)
{
	struct srd_pkt_ctrl c;

	memset(&c, 0, sizeof(c));
	srd_pkt_base_init(&c.base, SRD_PKT_CTS, 0, 0);
	c.tx_id = tx_id;
	c.rx_id = rx_id;
	c.offset = off;
	c.len = len;
	ep->pkt_route[SRD_PKT_CTS].handle(ep, ep->peers[0], &c, sizeof(c));
}

static void data_inject(struct srd_ep *ep, uint32_t rx_id, uint64_t off,
			uint32_t seg)
{
	uint8_t buf[4096];
	struct srd_pkt_data *d = (struct srd_pkt_data *)buf;

	assert_true(seg <= sizeof(buf) - sizeof(*d));
	memset(buf, 0x5a, sizeof(buf));
	srd_pkt_base_init(&d->base, SRD_PKT_DATA, 0, 0);
	d->rx_id = rx_id;
	d->seg_len = seg;
	d->offset = off;
	ep->pkt_route[SRD_PKT_DATA].handle(ep, ep->peers[0], buf,
					   sizeof(*d) + seg);
}

/* CTS and DATA that passed srd_pkt_validate but do not fit the transfer
 * they name: unknown ids, windows outside the message or the grant, the
 * first chunk again. Each is dropped, changes nothing, and the message
 * still arrives byte for byte. */
static void test_bad_cts_data_dropped(void **state)
{
	struct tfab f;
	size_t len = 2 * MIB;
	uint8_t *src = malloc(len), *dst = malloc(len);
	struct srd_ep *a, *b;
	struct srd_tx_entry *tx;
	struct srd_rx_xfer *x;
	uint64_t granted, received;
	int sctx, rctx;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	tfab_fill(src, len, 77);
	tfab_open(&f, 0, true);
	a = to_srd_ep(f.a.ep);
	b = to_srd_ep(f.b.ep);
	tfab_hello(&f);
	tfab_send(&f, src, len, 0, false, &sctx);
	tx = cts_tx(a);
	assert_non_null(tx);
	granted = tx->granted;
	cts_inject(a, tx->id ^ 0x10000, 0, granted, 4096);	/* old id */
	cts_inject(a, tx->id, 0, len - 100, 4096);	/* past the end */
	cts_inject(a, tx->id, 0, 0, 4096);		/* the first chunk */
	assert_int_equal(tx->granted, granted);
	assert_false(tx->cts_seen);
	assert_false(tx->on_pump);
	poll_n(&f, 2000);
	tfab_recv(&f, dst, len, 0, false, &rctx);
	x = cts_rx(b);
	assert_non_null(x);
	received = x->received;
	data_inject(b, x->rx_id ^ 0x10000, x->received, 1000);	/* stale */
	data_inject(b, x->rx_id + 1, x->received, 1000);	/* unknown */
	data_inject(b, x->rx_id, 0, 1000);		/* first chunk */
	data_inject(b, x->rx_id, x->granted - 10, 1000);	/* past grant */
	assert_int_equal(x->received, received);
	take_ok(&f, &f.b, &rctx);
	take_ok(&f, &f.a, &sctx);
	tfab_check(dst, len, 77);
	free(src);
	free(dst);
	tfab_close(&f);
}

#define NUX 70	/* more than the 64 buffers of the pool */

static void ux_round(struct tfab *f, int n, unsigned int seed)
{
	static uint8_t *src[NUX], *dst[NUX];
	int sctx[NUX], rctx[NUX], i, j;
	struct tent t;

	for (i = 0; i < n; i++) {
		src[i] = malloc(THRESHOLD);
		dst[i] = malloc(THRESHOLD);
		assert_non_null(src[i]);
		assert_non_null(dst[i]);
		tfab_fill(src[i], THRESHOLD, seed + (unsigned int)i);
		tfab_send(f, src[i], THRESHOLD, 0, false, &sctx[i]);
	}
	tfab_wait(f, &f->a, n);
	for (i = 0; i < n; i++)
		assert_int_equal(tfab_take(&f->a).err, 0);
	for (i = 0; i < n; i++)
		tfab_recv(f, dst[i], THRESHOLD, 0, false, &rctx[i]);
	tfab_wait(f, &f->b, n);
	for (j = 0; j < n; j++) {
		t = tfab_take(&f->b);
		assert_int_equal(t.err, 0);
		i = (int)((int *)t.e.op_context - rctx);
		assert_true(i >= 0 && i < n);
		tfab_check(dst[i], THRESHOLD, seed + (unsigned int)i);
	}
	for (i = 0; i < n; i++) {
		free(src[i]);
		free(dst[i]);
	}
}

/* Unexpected MEDIUM messages take their buffers from the endpoint's pool
 * (64 of them); only those beyond it come from the heap, and the pool's
 * buffers serve again once receives took the messages. */
static void test_unexpected_medium_pool(void **state)
{
	struct tfab f;
	struct srd_long_stats *st;

	(void)state;
	tfab_open(&f, 0, true);
	tfab_hello(&f);
	st = stats(&f.b);
	ux_round(&f, NUX, 300);
	assert_int_equal(st->ux_pool, 64);
	assert_int_equal(st->ux_heap, NUX - 64);
	ux_round(&f, 10, 400);
	assert_int_equal(st->ux_pool, 74);
	assert_int_equal(st->ux_heap, NUX - 64);
	assert_int_equal(stats(&f.a)->cts_rts, 0);
	tfab_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msg_expected),
		cmocka_unit_test(test_msg_unexpected),
		cmocka_unit_test(test_tagged_expected),
		cmocka_unit_test(test_tagged_unexpected),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_cancel_matched),
		cmocka_unit_test(test_sas_many_in_flight),
		cmocka_unit_test(test_receiver_gone),
		cmocka_unit_test(test_sender_gone),
		cmocka_unit_test(test_bad_cts_data_dropped),
		cmocka_unit_test(test_unexpected_medium_pool),
	};

	tfab_env();
	setenv("FI_SRD_SOFT_RDMA_READ", "0", 1);
	setenv("FI_SRD_CTS_THRESHOLD", "70000", 1);
	setenv("FI_SRD_LONG_PROBE_MS", "20", 1);
	return cmocka_run_group_tests_name("srd_rdm_cts", tests, NULL, NULL);
}
