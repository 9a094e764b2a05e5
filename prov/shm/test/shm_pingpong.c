/* SPDX-License-Identifier: MIT */
/*
 * shm transport floor: one shared cache line passed back and forth, then a
 * two-process pingpong through the cell queues
 * (no provider on top) and CMA / bounce bandwidth. Not a test: numbers
 * only, the floor the provider's own latency and bandwidth are held to.
 *
 *   shm_pingpong [-i iterations] [-r repeats] [-c cell_size] [-n] [-L]
 *     -n: do not pin the two processes to CPUs 0 and 1
 *     -L: only the shared cache line (which of its modes a VM is in:
 *         the test VM flips between ~80 and ~220 ns)
 *
 * Latency is half a round trip (median over repeats), including copying
 * the payload out of the cell into a receive buffer, like a real receive.
 */
#include "weft/compat.h"
#include "weft/util_time.h"
#include "../src/shm_transport.h"
#include "shm_test_util.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define MAX_REPEATS 31

/* Spin, then yield: on an oversubscribed host a pure spinner can hold
 * the CPU its peer needs for a whole time slice. At each yield, give up
 * if the other process is gone, rather than wait for it forever. */
static inline void pp_idle(struct shm_peer *peer, unsigned *spins)
{
	if (++*spins >= 1000) {
		*spins = 0;
		sched_yield();
		if (!shm_peer_alive(peer)) {
			fprintf(stderr, "shm_pingpong: the other process died\n");
			exit(1);
		}
	}
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct pp {
	struct shm_region *self;
	struct shm_peer *peer;
	uint8_t sbuf[65536];
	uint8_t rbuf[65536];
};

static void pp_send(struct pp *pp, uint32_t len)
{
	struct shm_cell *c;
	unsigned spins = 0;

	while (!(c = shm_peer_reserve(pp->peer)))
		pp_idle(pp->peer, &spins);
	/* As the provider does: payload past the first line, then the first
	 * line (shm_queue.h says why). */
	if (len <= SHM_PREFETCHW_MAX)
		shm_cell_prefetchw(c, len);
	if (len > SHM_CELL_LINE0_PAYLOAD)
		shm_cell_copy_in(c->payload + SHM_CELL_LINE0_PAYLOAD,
				 pp->sbuf + SHM_CELL_LINE0_PAYLOAD,
				 len - SHM_CELL_LINE0_PAYLOAD);
	c->hdr.op = 1;
	c->hdr.len = len;
	c->hdr.tag = 42;
	memcpy(c->payload, pp->sbuf,
	       len < SHM_CELL_LINE0_PAYLOAD ? len : SHM_CELL_LINE0_PAYLOAD);
	shm_peer_commit(pp->peer, c);
}

static void pp_recv(struct pp *pp)
{
	struct shm_cell_hdr h;
	struct shm_cell *c;
	unsigned spins = 0;

	while (!(c = shm_queue_poll(pp->self, &h)))
		pp_idle(pp->peer, &spins);
	memcpy(pp->rbuf, c->payload, h.len);
	shm_queue_release(pp->self);
}

static uint64_t pp_run(struct pp *pp, bool initiator, uint32_t len, long iters)
{
	uint64_t t0 = util_time_ns();
	long i;

	for (i = 0; i < iters; i++) {
		if (initiator) {
			pp_send(pp, len);
			pp_recv(pp);
		} else {
			pp_recv(pp);
			pp_send(pp, len);
		}
	}
	return util_time_ns() - t0;
}

/* Both sides: region, exchange names over the pipe, open each other. */
static int pp_connect(struct pp *pp, const struct shm_region_attr *a,
		      int rd, int wr)
{
	char name[SHM_NAME_MAX] = { 0 };

	if (shm_region_create(a, &pp->self))
		return -1;
	strcpy(name, shm_region_name(pp->self));
	if (shm_test_write(wr, name, sizeof(name)) ||
	    shm_test_read(rd, name, sizeof(name)))
		return -1;
	return shm_peer_open(pp->self, name, &pp->peer);
}

struct opts {
	long iters;
	int repeats;
	bool pin;
	bool line_only;
	struct shm_region_attr attr;
};

static const uint32_t lat_sizes[] = { 8, 64, 256, 1024, 4096 };

/* The hardware floor the queue is measured against: one cache line that
 * the two processes take turns writing (a counter each side waits for and
 * then bumps), so each half round trip is one line moving between cores. */
static _Atomic uint64_t *line_flag;

static pid_t line_other;	/* the child (in the parent), or the parent */

/* Every 2^20 spins of a wait that should take a microsecond: is the other
 * process still there? (A dead child is a zombie until reaped, so the
 * parent reaps; the child watches for being reparented.) */
static void line_check_other(bool initiator)
{
	if (initiator ? waitpid(line_other, NULL, WNOHANG) == line_other :
			getppid() != line_other) {
		fprintf(stderr, "shm_pingpong: the other process died\n");
		exit(1);
	}
}

static uint64_t line_run(bool initiator, long iters)
{
	uint64_t t0 = util_time_ns(), v = initiator ? 0 : 1;
	unsigned long spins = 0;
	long i;

	for (i = 0; i < iters; i++, v += 2) {
		if (initiator)
			atomic_store_explicit(line_flag, v + 1,
					      memory_order_release);
		while (atomic_load_explicit(line_flag, memory_order_acquire) !=
		       v + (initiator ? 2 : 0))
			if (!(++spins & ((1ul << 20) - 1)))
				line_check_other(initiator);
		if (!initiator)
			atomic_store_explicit(line_flag, v + 1,
					      memory_order_release);
	}
	return util_time_ns() - t0;
}

static int pp_child(int rd, int wr, void *arg)
{
	struct opts *o = arg;
	struct pp *pp = calloc(1, sizeof(*pp));
	size_t s;
	int r;

	line_other = getppid();
	if (o->pin)
		pin(1);
	for (r = 0; r <= o->repeats; r++)
		line_run(false, o->iters);
	if (o->line_only) {
		free(pp);
		return 0;
	}
	if (!pp || pp_connect(pp, &o->attr, rd, wr))
		return 1;
	for (s = 0; s < WEFT_ARRAY_SIZE(lat_sizes); s++) {
		if (lat_sizes[s] > shm_peer_payload_max(pp->peer))
			continue;
		pp_run(pp, false, lat_sizes[s], o->iters / 10);
		for (r = 0; r < o->repeats; r++)
			pp_run(pp, false, lat_sizes[s], o->iters);
	}
	shm_peer_close(pp->peer);
	shm_region_close(pp->self);
	free(pp);
	return 0;
}

static void bench_latency(struct opts *o)
{
	struct shm_test_child kid;
	struct pp *pp = calloc(1, sizeof(*pp));
	uint64_t t[MAX_REPEATS];
	size_t s;
	int r;

	line_flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (line_flag == MAP_FAILED)
		exit(1);
	atomic_store(line_flag, 0);
	if (!pp || shm_test_fork(&kid, pp_child, o))
		exit(1);
	line_other = kid.pid;
	if (o->pin)
		pin(0);
	line_run(true, o->iters);
	for (r = 0; r < o->repeats; r++)
		t[r] = line_run(true, o->iters);
	qsort(t, (size_t)o->repeats, sizeof(t[0]), cmp_u64);
	printf("one shared cache line, half round trip: median %.1f ns\n",
	       (double)t[o->repeats / 2] / (2.0 * (double)o->iters));
	if (o->line_only) {
		shm_test_wait(&kid);
		free(pp);
		return;
	}
	if (pp_connect(pp, &o->attr, kid.from_child, kid.to_child)) {
		fprintf(stderr, "connect failed\n");
		exit(1);
	}
	printf("queue pingpong (cell %u B, %u cells), half round trip:\n",
	       o->attr.cell_size, o->attr.cell_count);
	for (s = 0; s < WEFT_ARRAY_SIZE(lat_sizes); s++) {
		if (lat_sizes[s] > shm_peer_payload_max(pp->peer))
			continue;
		pp_run(pp, true, lat_sizes[s], o->iters / 10);
		for (r = 0; r < o->repeats; r++)
			t[r] = pp_run(pp, true, lat_sizes[s], o->iters);
		qsort(t, (size_t)o->repeats, sizeof(t[0]), cmp_u64);
		printf("  %6u B  median %7.1f ns  min %7.1f ns\n", lat_sizes[s],
		       (double)t[o->repeats / 2] / (2.0 * (double)o->iters),
		       (double)t[0] / (2.0 * (double)o->iters));
	}
	shm_test_wait(&kid);
	shm_peer_close(pp->peer);
	shm_region_close(pp->self);
	free(pp);
}

/* ---- bandwidth: CMA reads from the child's buffer, and bounce -------- */

#define BW_MAX (16u << 20)
static uint8_t *bw_buf;

static int bw_child(int rd, int wr, void *arg)
{
	struct opts *o = arg;
	struct pp pp_ = { 0 }, *pp = &pp_;
	uint8_t *dst = malloc(BW_MAX);
	char cmd;

	if (o->pin)
		pin(1);
	memset(bw_buf, 1, BW_MAX);
	if (!dst || pp_connect(pp, &o->attr, rd, wr))
		return 1;
	/* Then serve bounce pulls: for each (id, len) pull into dst. */
	unsigned spins = 0;

	while (!shm_test_read(rd, &cmd, 1) && cmd == 'b') {
		struct shm_bounce_rx rx = { 0 };
		struct iovec d = { dst, 0 };

		shm_test_read(rd, &rx.xfer_id, sizeof(rx.xfer_id));
		shm_test_read(rd, &d.iov_len, sizeof(d.iov_len));
		rx.iov = &d;
		rx.iov_count = 1;
		rx.total = d.iov_len;
		while (!shm_bounce_pull(pp->peer, &rx))
			pp_idle(pp->peer, &spins);
	}
	shm_peer_close(pp->peer);
	shm_region_close(pp->self);
	free(dst);
	return 0;
}

static double bw_cma(pid_t pid, uint8_t *dst, size_t len, int reps)
{
	struct iovec l = { dst, len }, r = { bw_buf, len };
	uint64_t t0;
	int i;

	shm_cma_read(pid, &l, 1, &r, 1);
	t0 = util_time_ns();
	for (i = 0; i < reps; i++)
		if (shm_cma_read(pid, &l, 1, &r, 1) != (ssize_t)len)
			return -1;
	return (double)len * reps / (double)(util_time_ns() - t0);
}

static double bw_bounce(struct pp *pp, int to_child, size_t len, int reps)
{
	uint64_t t0 = util_time_ns();
	unsigned spins = 0;
	int i;

	for (i = 0; i < reps; i++) {
		struct iovec s = { bw_buf, len };
		struct shm_bounce_tx tx = { &s, 1, len };

		tx.xfer_id = shm_bounce_xfer_id(pp->self);
		shm_test_write(to_child, "b", 1);
		shm_test_write(to_child, &tx.xfer_id, sizeof(tx.xfer_id));
		shm_test_write(to_child, &len, sizeof(len));
		while (!shm_bounce_push(pp->self, &tx))
			pp_idle(pp->peer, &spins);
	}
	return (double)len * reps / (double)(util_time_ns() - t0);
}

static void bench_bandwidth(struct opts *o)
{
	struct shm_test_child kid;
	struct pp pp_ = { 0 }, *pp = &pp_;
	uint8_t *dst = malloc(BW_MAX);
	size_t len;

	bw_buf = mmap(NULL, BW_MAX, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!dst || bw_buf == MAP_FAILED || shm_test_fork(&kid, bw_child, o))
		exit(1);
	if (o->pin)
		pin(0);
	memset(bw_buf, 2, BW_MAX);
	memset(dst, 0, BW_MAX);
	if (pp_connect(pp, &o->attr, kid.from_child, kid.to_child))
		exit(1);
	printf("bandwidth (GB/s)        CMA read   bounce (%u x %u KiB)%s\n",
	       o->attr.bounce_seg_count, o->attr.bounce_seg_size / 1024,
	       shm_peer_cma(pp->peer) ? "" : "  [CMA refused here]");
	for (len = 64 * 1024; len <= BW_MAX; len *= 4) {
		int reps = (int)((64u << 20) / len);

		printf("  %8zu KiB  %9.2f  %9.2f\n", len / 1024,
		       shm_peer_cma(pp->peer) ? bw_cma(kid.pid, dst, len, reps) : 0.0,
		       bw_bounce(pp, kid.to_child, len, reps));
	}
	shm_test_write(kid.to_child, "q", 1);
	shm_test_wait(&kid);
	shm_peer_close(pp->peer);
	shm_region_close(pp->self);
	free(dst);
}

int main(int argc, char **argv)
{
	struct opts o = { .iters = 20000, .repeats = 5, .pin = true };
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	shm_region_attr_default(&o.attr);
	while ((c = getopt(argc, argv, "i:r:c:nL")) != -1) {
		switch (c) {
		case 'i':
			o.iters = atol(optarg);
			break;
		case 'r':
			o.repeats = atoi(optarg);
			break;
		case 'c':
			o.attr.cell_size = (uint32_t)atoi(optarg);
			break;
		case 'n':
			o.pin = false;
			break;
		case 'L':
			o.line_only = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-i iters] [-r repeats] "
				"[-c cell_size] [-n] [-L]\n", argv[0]);
			return 2;
		}
	}
	if (o.iters < 10 || o.repeats < 1 || o.repeats > MAX_REPEATS ||
	    shm_region_attr_check(&o.attr)) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		o.pin = false;
	bench_latency(&o);
	if (!o.line_only)
		bench_bandwidth(&o);
	return 0;
}
