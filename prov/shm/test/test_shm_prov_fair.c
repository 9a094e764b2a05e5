/* SPDX-License-Identifier: MIT */
/*
 * Fair service between the peers of one endpoint (fi_shm(7), "Fairness"):
 * a peer that sends as fast as it can (a loop of fi_tinject retried at
 * once on -FI_EAGAIN) must not keep a second peer's messages out of the
 * receiver's queue. Three processes: the flooder floods with tag 1 until
 * the legit sender is done, the legit sender sends LEGIT_MSGS numbered
 * messages with tag 2 and measures, for each, the time from its first
 * attempt to its completion, and the receiver checks that the legit
 * messages arrive whole and in order. The receiver either takes every
 * message (a wildcard receive: the flood competes for queue cells) or
 * only tag 2 (the flood stays unexpected: before credits, it filled the
 * receiver's unexpected buffers, and the receiver stopped reading its
 * queue until the legit sender's test deadline).
 */
#include "shm_proc_test.h"

#define LEGIT_MSGS	2000
#define FLOOD_LEN	64
#define LEGIT_LEN	64
#define RX_POSTED	64
/* What a legit message may wait, first attempt to completion: far above
 * the scheduling delays of three busy processes on two loaded cores
 * (tens of ms), far below the 13 s of the starvation report. */
#define LEGIT_BOUND_US	(1000 * 1000)

struct fair_board {
	bool unexp;			/* the receiver takes tag 2 only */
	atomic_int ready;
	atomic_int legit_done;
	atomic_int rx_done;
	char name[T_ADDR_LEN];
	uint64_t legit_max_us;
	uint64_t legit_total_us;
	uint64_t flood_sent;
	uint64_t rx_legit, rx_flood;
};

static struct fair_board *FB;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void fair_wait(atomic_int *v, int n)
{
	uint64_t deadline = t_now_s() + T_DEADLINE_S;

	while (atomic_load(v) < n) {
		C_CHECK(t_now_s() <= deadline);
		usleep(100);
	}
}

/* Legit messages carry their number; the rest of the buffer is a
 * pattern of it, so a torn or mixed-up cell shows. */
static void legit_fill(uint8_t *buf, uint32_t i)
{
	memcpy(buf, &i, sizeof(i));
	t_fill(buf + sizeof(i), LEGIT_LEN - sizeof(i), i);
}

static bool legit_ok(const uint8_t *buf, uint32_t i)
{
	uint32_t got;

	memcpy(&got, buf, sizeof(got));
	return got == i && t_check(buf + sizeof(i), LEGIT_LEN - sizeof(i), i) ==
				   -1;
}

static uint64_t rx_tag(void)
{
	return FB->unexp ? 2 : 0;
}

static uint64_t rx_ignore(void)
{
	return FB->unexp ? 0 : ~0ull;
}

static void fair_receiver(void)
{
	static uint8_t bufs[RX_POSTED][LEGIT_LEN];
	static struct fi_context ctx[RX_POSTED];
	struct fi_cq_tagged_entry e[16];
	uint64_t deadline = t_now_s() + T_DEADLINE_S;
	uint32_t next = 0;
	struct cctx c;
	int i;

	c_open(&c);
	memcpy(FB->name, c.name, T_ADDR_LEN);
	for (i = 0; i < RX_POSTED; i++)
		C_CHECK(!fi_trecv(c.ep, bufs[i], LEGIT_LEN, NULL,
				  FI_ADDR_UNSPEC, rx_tag(), rx_ignore(), &ctx[i]));
	atomic_fetch_add(&FB->ready, 1);
	while (next < LEGIT_MSGS) {
		ssize_t r = fi_cq_read(c.cq, e, 16);

		if (r == -FI_EAGAIN) {
			C_CHECK(t_now_s() <= deadline);
			continue;
		}
		C_CHECK(r > 0);
		for (i = 0; i < r; i++) {
			struct fi_context *x = e[i].op_context;
			int k = (int)(x - ctx);

			C_CHECK(k >= 0 && k < RX_POSTED);
			if (e[i].tag == 2) {
				C_CHECK(e[i].len == LEGIT_LEN);
				C_CHECK(legit_ok(bufs[k], next));
				next++;
				FB->rx_legit++;
			} else {
				C_CHECK(e[i].tag == 1);
				FB->rx_flood++;
			}
			C_CHECK(!fi_trecv(c.ep, bufs[k], LEGIT_LEN, NULL,
					  FI_ADDR_UNSPEC, rx_tag(), rx_ignore(),
					  x));
		}
	}
	atomic_store(&FB->rx_done, 1);
	/* The flooder stops when the legit sender is done; keep draining
	 * so that it is never left blocked on a full queue. */
	while (atomic_load(&FB->ready) < 3) {
		ssize_t r = fi_cq_read(c.cq, e, 16);

		for (i = 0; i < r; i++)
			C_CHECK(!fi_trecv(c.ep, bufs[(struct fi_context *)
						     e[i].op_context - ctx],
					  LEGIT_LEN, NULL, FI_ADDR_UNSPEC,
					  rx_tag(), rx_ignore(),
					  e[i].op_context));
	}
	c_close(&c);
	_exit(0);
}

static void fair_flooder(void)
{
	uint8_t buf[FLOOD_LEN];
	uint64_t sent = 0;
	fi_addr_t dst;
	struct cctx c;

	memset(buf, 0xf1, sizeof(buf));
	c_open(&c);
	fair_wait(&FB->ready, 1);
	C_CHECK(fi_av_insert(c.av, FB->name, 1, &dst, 0, NULL) == 1);
	atomic_fetch_add(&FB->ready, 1);
	while (!atomic_load_explicit(&FB->legit_done, memory_order_relaxed)) {
		ssize_t r = fi_tinject(c.ep, buf, sizeof(buf), dst, 1);

		C_CHECK(r == 0 || r == -FI_EAGAIN);
		sent += r == 0;
	}
	FB->flood_sent = sent;
	atomic_fetch_add(&FB->ready, 1);
	c_close(&c);
	_exit(0);
}

static void fair_legit(void)
{
	uint8_t buf[LEGIT_LEN];
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	uint64_t start, t0, dt, max = 0;
	fi_addr_t dst;
	struct cctx c;
	uint32_t i;
	ssize_t r;

	c_open(&c);
	fair_wait(&FB->ready, 2);
	C_CHECK(fi_av_insert(c.av, FB->name, 1, &dst, 0, NULL) == 1);
	/* Let the flood fill the queue first. */
	usleep(20 * 1000);
	start = now_us();
	for (i = 0; i < LEGIT_MSGS; i++) {
		legit_fill(buf, i);
		t0 = now_us();
		while ((r = fi_tsend(c.ep, buf, sizeof(buf), NULL, dst, 2,
				     &ctx)) == -FI_EAGAIN) {
			C_CHECK(now_us() - t0 < T_DEADLINE_S * 1000000ull);
			(void)fi_cq_read(c.cq, &e, 0);
		}
		C_CHECK(r == 0);
		while ((r = fi_cq_read(c.cq, &e, 1)) == -FI_EAGAIN)
			C_CHECK(now_us() - t0 < T_DEADLINE_S * 1000000ull);
		C_CHECK(r == 1 && e.op_context == &ctx);
		dt = now_us() - t0;
		if (dt > max)
			max = dt;
	}
	FB->legit_total_us = now_us() - start;
	FB->legit_max_us = max;
	atomic_store(&FB->legit_done, 1);
	fair_wait(&FB->rx_done, 1);
	c_close(&c);
	_exit(0);
}

static void run_flood(bool unexp)
{
	pid_t rx, flood, legit;

	FB->unexp = unexp;
	rx = fork();
	if (!rx)
		fair_receiver();
	flood = fork();
	if (!flood)
		fair_flooder();
	legit = fork();
	if (!legit)
		fair_legit();
	assert_int_equal(reap(legit), 0);
	assert_int_equal(reap(flood), 0);
	assert_int_equal(reap(rx), 0);
	print_message("legit: %d messages in %.1f ms, longest wait %.1f ms; "
		      "flood: %llu sent; receiver took %llu legit, %llu flood\n",
		      LEGIT_MSGS, FB->legit_total_us / 1e3,
		      FB->legit_max_us / 1e3,
		      (unsigned long long)FB->flood_sent,
		      (unsigned long long)FB->rx_legit,
		      (unsigned long long)FB->rx_flood);
	assert_int_equal(FB->rx_legit, LEGIT_MSGS);
	assert_true(FB->legit_max_us < LEGIT_BOUND_US);
}

static void test_flood_taken(void **state)
{
	(void)state;
	run_flood(false);
	/* Nothing starved the flood either. */
	assert_true(FB->rx_flood > 0);
}

/* Nobody receives the flood: the flooder gets as far as its credits
 * (FI_SHM_CELL_COUNT + FI_SHM_UNEXP_COUNT / 2), and then -FI_EAGAIN,
 * while the legit sender's messages go on. */
static void test_flood_unexpected(void **state)
{
	(void)state;
	run_flood(true);
	assert_int_equal(FB->rx_flood, 0);
	assert_int_equal(FB->flood_sent, 256 + 1024 / 2);
}

static int fair_setup(void **state)
{
	(void)state;
	FB = mmap(NULL, sizeof(*FB), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(FB != MAP_FAILED);
	memset(FB, 0, sizeof(*FB));
	return 0;
}

static int fair_teardown(void **state)
{
	(void)state;
	munmap(FB, sizeof(*FB));
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_flood_taken, fair_setup,
						fair_teardown),
		cmocka_unit_test_setup_teardown(test_flood_unexpected,
						fair_setup, fair_teardown),
	};

	/* The flooder's credits: cell_count + unexp_count / 2. */
	setenv("FI_SHM_CELL_COUNT", "256", 1);
	setenv("FI_SHM_UNEXP_COUNT", "1024", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
