/* SPDX-License-Identifier: MIT */
/*
 * shm provider between processes: fork-based. Children report through
 * their exit status (they never run cmocka asserts: a failing assert in a
 * child would resume the test runner there); the parent checks data and
 * completions with cmocka. Names are exchanged through a MAP_SHARED page.
 */
#include "shm_proc_test.h"
#include "../src/shm.h"

/* ---- 8 processes, all to all ------------------------------------------- */

static size_t a2a_size(int s, int d)
{
	static const size_t sizes[] = { 0, 8, 1040, 1041, 4112, 4113, 4240, 4241,
					70000, 300000 };

	return sizes[(s + 3 * d) % WEFT_ARRAY_SIZE(sizes)];
}

struct a2a_arg {
	void *buf;
	size_t len;
	fi_addr_t peer;
	uint64_t tag;
	struct fi_context *ctx;
};

static ssize_t a2a_recv(struct cctx *c, void *p)
{
	struct a2a_arg *a = p;

	return fi_trecv(c->ep, a->buf, a->len, NULL, a->peer, a->tag, 0,
			a->ctx);
}

static ssize_t a2a_send(struct cctx *c, void *p)
{
	struct a2a_arg *a = p;

	return fi_tsend(c->ep, a->buf, a->len, NULL, a->peer, a->tag, a->ctx);
}

static void a2a_child(int rank)
{
	static struct fi_context rctx[NPROC], sctx[NPROC];
	uint8_t *rbuf[NPROC], *sbuf[NPROC];
	fi_addr_t addr[NPROC];
	struct cctx c;
	int p;

	c_open(&c);
	memcpy(B->names[rank], c.name, T_ADDR_LEN);
	atomic_fetch_add(&B->ready, 1);
	board_wait(&B->ready, NPROC);
	C_CHECK(fi_av_insert(c.av, B->names, NPROC, addr, 0, NULL) == NPROC);
	for (p = 0; p < NPROC; p++) {
		struct a2a_arg a;

		if (p == rank)
			continue;
		rbuf[p] = malloc(a2a_size(p, rank) + 1);
		sbuf[p] = malloc(a2a_size(rank, p) + 1);
		C_CHECK(rbuf[p] && sbuf[p]);
		t_fill(sbuf[p], a2a_size(rank, p), (unsigned)(rank * 16 + p));
		a = (struct a2a_arg){ rbuf[p], a2a_size(p, rank), addr[p],
				      (uint64_t)p, &rctx[p] };
		c_post(&c, a2a_recv, &a);
	}
	for (p = 0; p < NPROC; p++) {
		struct a2a_arg a;

		if (p == rank)
			continue;
		a = (struct a2a_arg){ sbuf[p], a2a_size(rank, p), addr[p],
				      (uint64_t)rank, &sctx[p] };
		c_post(&c, a2a_send, &a);
	}
	c_wait(&c, 2 * (NPROC - 1));
	for (p = 0; p < NPROC; p++) {
		if (p == rank)
			continue;
		C_CHECK(t_check(rbuf[p], a2a_size(p, rank),
				(unsigned)(p * 16 + rank)) == -1);
		free(rbuf[p]);
		free(sbuf[p]);
	}
	/* Nobody leaves while a peer may still pull from it. */
	atomic_fetch_add(&B->done, 1);
	board_wait(&B->done, NPROC);
	c_close(&c);
	_exit(0);
}

static void test_all_to_all(void **state)
{
	pid_t pid[NPROC];
	int i;

	(void)state;
	for (i = 0; i < NPROC; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0)
			a2a_child(i);
	}
	for (i = 0; i < NPROC; i++)
		assert_int_equal(reap(pid[i]), 0);
}

/* ---- SIGKILL of a peer mid-transfer ------------------------------------ */

struct big_arg {
	void *buf;
	fi_addr_t peer;
};

static ssize_t big_send(struct cctx *c, void *p)
{
	struct big_arg *a = p;

	return fi_tsend(c->ep, a->buf, BIG, NULL, a->peer, 1, NULL);
}

/* Sends a big message to the parent (slot 0), then never progresses again
 * until it is killed. */
static void kill_child(int slot)
{
	struct cctx c;
	struct big_arg a;
	fi_addr_t parent;

	c_open(&c);
	memcpy(B->names[slot], c.name, T_ADDR_LEN);
	atomic_fetch_add(&B->ready, 1);
	board_wait(&B->go, 1);
	C_CHECK(fi_av_insert(c.av, B->names[0], 1, &parent, 0, NULL) == 1);
	a.buf = malloc(BIG);
	a.peer = parent;
	C_CHECK(a.buf);
	t_fill(a.buf, BIG, 1);
	c_post(&c, big_send, &a);
	atomic_fetch_add(&B->done, 1);
	for (;;)
		pause();
}

/* A peer that answers: echoes one tagged message back, then leaves. */
static void echo_child(int slot)
{
	struct cctx c;
	fi_addr_t parent;
	uint64_t v = 0;
	struct fi_context rc, sc;

	c_open(&c);
	memcpy(B->names[slot], c.name, T_ADDR_LEN);
	atomic_fetch_add(&B->ready, 1);
	board_wait(&B->go, 1);
	C_CHECK(fi_av_insert(c.av, B->names[0], 1, &parent, 0, NULL) == 1);
	C_CHECK(!fi_trecv(c.ep, &v, 8, NULL, FI_ADDR_UNSPEC, 7, 0, &rc));
	c_wait(&c, 1);
	v++;
	C_CHECK(!fi_tsend(c.ep, &v, 8, NULL, parent, 8, &sc));
	c_wait(&c, 1);
	board_wait(&B->done, 2);
	c_close(&c);
	_exit(0);
}

static void test_sigkill_peer(void **state)
{
	struct tctx *t = calloc(1, sizeof(*t));
	uint8_t *out = malloc(BIG), *in = malloc(BIG);
	struct fi_context sc, rc, ec;
	fi_addr_t victim, echo;
	struct fi_cq_err_entry err;
	uint64_t v = 41, r = 0;
	pid_t kpid, epid;

	(void)state;
	assert_non_null(t);
	kpid = fork();
	if (kpid == 0)
		kill_child(1);
	epid = fork();
	if (epid == 0)
		echo_child(2);
	t_open_fabric(t, FI_MSG | FI_TAGGED | FI_DIRECTED_RECV);
	t_add_ep(t);
	memcpy(B->names[0], t->name[0], T_ADDR_LEN);
	board_wait(&B->ready, 2);
	atomic_store(&B->go, 1);
	assert_int_equal(fi_av_insert(t->av, B->names[1], 1, &victim, 0,
				      NULL), 1);
	assert_int_equal(fi_av_insert(t->av, B->names[2], 1, &echo, 0, NULL),
			 1);

	/* Our big send toward the victim waits for its ACK ... */
	t_fill(out, BIG, 2);
	T_POST(t, fi_tsend(t->ep[0], out, BIG, NULL, victim, 3, &sc));
	/* ... and its big send to us sits unexpected here. */
	board_wait(&B->done, 1);
	for (int i = 0; i < 1000; i++)
		t_poll(t);
	kill(kpid, SIGKILL);
	assert_int_equal(reap(kpid), 128 + SIGKILL);

	/* Both transfers end with an error, in bounded time. */
	err = t_wait_err(t, &sc);
	assert_int_not_equal(err.err, 0);
	T_POST(t, fi_trecv(t->ep[0], in, BIG, NULL, victim, 1, 0, &rc));
	err = t_wait_err(t, &rc);
	assert_int_not_equal(err.err, 0);

	/* The other peer is unaffected. */
	T_POST(t, fi_trecv(t->ep[0], &r, 8, NULL, echo, 8, 0, &rc));
	T_POST(t, fi_tsend(t->ep[0], &v, 8, NULL, echo, 7, &ec));
	t_wait_ok(t, &ec);
	t_wait_ok(t, &rc);
	assert_int_equal(r, 42);
	atomic_fetch_add(&B->done, 1);
	assert_int_equal(reap(epid), 0);
	t_close(t);
	free(t);
	free(out);
	free(in);
}

/* ---- a peer killed in the middle of a split copy ------------------------ */

/* Receives the parent's big message until its split copy has started (its
 * CTS is out and its own half is read), then stops progressing for good:
 * the parent's send waits for an ACK that never comes. */
static void split_recv_child(int slot)
{
	struct cctx c;
	struct fi_context rc;
	struct fi_cq_tagged_entry e;
	fi_addr_t parent;
	uint8_t *buf = malloc(BIG);
	uint64_t deadline;

	C_CHECK(buf);
	c_open(&c);
	memcpy(B->names[slot], c.name, T_ADDR_LEN);
	atomic_fetch_add(&B->ready, 1);
	board_wait(&B->go, 1);
	C_CHECK(fi_av_insert(c.av, B->names[0], 1, &parent, 0, NULL) == 1);
	C_CHECK(!fi_trecv(c.ep, buf, BIG, NULL, parent, 5, 0, &rc));
	deadline = t_now_s() + T_DEADLINE_S;
	while (!to_shm_ep(c.ep)->split_seq) {
		C_CHECK(t_now_s() <= deadline);
		C_CHECK(fi_cq_read(c.cq, &e, 1) == -FI_EAGAIN);
	}
	atomic_fetch_add(&B->done, 1);
	for (;;)
		pause();
}

/* Both directions of a split copy lose their peer half-way: the receive
 * whose sender dies before pushing its half, and the send whose receiver
 * dies before its ACK, end with error completions in bounded time. */
static void test_sigkill_mid_split(void **state)
{
	struct tctx *t = calloc(1, sizeof(*t));
	uint8_t *out = malloc(BIG), *in = malloc(BIG);
	struct fi_context sc, rc;
	fi_addr_t sender, receiver;
	struct fi_cq_err_entry err;
	pid_t spid, rpid;
	uint64_t seq0;

	(void)state;
	assert_non_null(t);
	assert_non_null(out);
	assert_non_null(in);
	spid = fork();
	if (spid == 0)
		kill_child(1);
	rpid = fork();
	if (rpid == 0)
		split_recv_child(2);
	t_open_fabric(t, FI_MSG | FI_TAGGED | FI_DIRECTED_RECV);
	t_add_ep(t);
	memcpy(B->names[0], t->name[0], T_ADDR_LEN);
	board_wait(&B->ready, 2);
	atomic_store(&B->go, 1);
	assert_int_equal(fi_av_insert(t->av, B->names[1], 1, &sender, 0,
				      NULL), 1);
	assert_int_equal(fi_av_insert(t->av, B->names[2], 1, &receiver, 0,
				      NULL), 1);

	/* The sender's big message is here; receive it while it lives: our
	 * half is read, its half never comes (it does not progress). */
	board_wait(&B->done, 1);
	seq0 = to_shm_ep(t->ep[0])->split_seq;
	T_POST(t, fi_trecv(t->ep[0], in, BIG, NULL, sender, 1, 0, &rc));
	while (to_shm_ep(t->ep[0])->split_seq == seq0)
		t_poll(t);
	/* Our big send: the receiver starts its split copy, then stalls. */
	t_fill(out, BIG, 4);
	T_POST(t, fi_tsend(t->ep[0], out, BIG, NULL, receiver, 5, &sc));
	board_wait(&B->done, 2);
	for (int i = 0; i < 1000; i++)
		t_poll(t);
	kill(spid, SIGKILL);
	kill(rpid, SIGKILL);
	assert_int_equal(reap(spid), 128 + SIGKILL);
	assert_int_equal(reap(rpid), 128 + SIGKILL);

	err = t_wait_err(t, &rc);
	assert_int_not_equal(err.err, 0);
	err = t_wait_err(t, &sc);
	assert_int_not_equal(err.err, 0);
	t_close(t);
	free(t);
	free(out);
	free(in);
}

/* ---- two processes, every size ------------------------------------------ */

static void pair_child(int refuse)
{
	static const size_t sizes[] = { 0, 1, 1039, 1040, 1041, 4111, 4112, 4113, 4239,
					4240, 4241, 65536, 1 << 20, 16 << 20 };
	struct cctx c;
	fi_addr_t parent;
	size_t i;

	shm_cma_test_refuse = refuse;
	c_open(&c);
	memcpy(B->names[1], c.name, T_ADDR_LEN);
	atomic_fetch_add(&B->ready, 1);
	board_wait(&B->go, 1);
	C_CHECK(fi_av_insert(c.av, B->names[0], 1, &parent, 0, NULL) == 1);
	/* Echo every message back, byte for byte. */
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++) {
		uint8_t *buf = malloc(sizes[i] + 1);
		struct fi_context rc, sc;

		C_CHECK(buf);
		C_CHECK(!fi_trecv(c.ep, buf, sizes[i], NULL, parent, i, 0,
				  &rc));
		c_wait(&c, 1);
		C_CHECK(t_check(buf, sizes[i], (unsigned)i) == -1);
		while (fi_tsend(c.ep, buf, sizes[i], NULL, parent, i, &sc) ==
		       -FI_EAGAIN)
			;
		c_wait(&c, 1);
		free(buf);
	}
	c_close(&c);
	_exit(0);
}

static void t_two_processes(int child_refuse)
{
	static const size_t sizes[] = { 0, 1, 1039, 1040, 1041, 4111, 4112, 4113, 4239,
					4240, 4241, 65536, 1 << 20, 16 << 20 };
	struct tctx *t = calloc(1, sizeof(*t));
	fi_addr_t peer;
	pid_t pid;
	size_t i;

	pid = fork();
	if (pid == 0)
		pair_child(child_refuse);
	t_open_fabric(t, FI_MSG | FI_TAGGED | FI_DIRECTED_RECV);
	t_add_ep(t);
	memcpy(B->names[0], t->name[0], T_ADDR_LEN);
	board_wait(&B->ready, 1);
	atomic_store(&B->go, 1);
	assert_int_equal(fi_av_insert(t->av, B->names[1], 1, &peer, 0, NULL),
			 1);
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++) {
		uint8_t *s = malloc(sizes[i] + 1), *r = malloc(sizes[i] + 1);
		struct fi_context sc, rc;

		t_fill(s, sizes[i], (unsigned)i);
		memset(r, 0, sizes[i] + 1);
		T_POST(t, fi_trecv(t->ep[0], r, sizes[i], NULL, peer, i, 0,
				   &rc));
		T_POST(t, fi_tsend(t->ep[0], s, sizes[i], NULL, peer, i, &sc));
		t_wait_ok(t, &sc);
		assert_int_equal(t_wait_ok(t, &rc).len, sizes[i]);
		assert_int_equal(t_check(r, sizes[i], (unsigned)i), -1);
		free(s);
		free(r);
	}
	/* One-way: the child could not read us, so every large message
	 * toward it was pushed by us whole (our side still uses CMA). */
	if (child_refuse)
		assert_true(to_shm_ep(t->ep[0])->conns->peer->cma);
	assert_int_equal(reap(pid), 0);
	t_close(t);
	free(t);
}

static void test_two_processes(void **state)
{
	(void)state;
	t_two_processes(0);
}

/* CMA works from us to the child but not back (one-way ptrace rules):
 * the child receives our large messages by having us push them, and its
 * own large messages come through bounce segments. Every size arrives
 * intact both ways. */
static void test_two_processes_one_way(void **state)
{
	(void)state;
	t_two_processes(1);
}

/* ---- CMA refused after the probe allowed it ------------------------------ */

static const size_t refused_sizes[] = { 1 << 20, 65536, 16 << 20 };

/* Sends every size twice: once before the parent loses CMA, once after. */
static void refused_child(void)
{
	struct cctx c;
	fi_addr_t parent;
	uint8_t *buf = malloc(16 << 20);
	size_t i;

	C_CHECK(buf);
	c_open(&c);
	memcpy(B->names[1], c.name, T_ADDR_LEN);
	atomic_fetch_add(&B->ready, 1);
	board_wait(&B->go, 1);
	C_CHECK(fi_av_insert(c.av, B->names[0], 1, &parent, 0, NULL) == 1);
	for (i = 0; i < 2 * WEFT_ARRAY_SIZE(refused_sizes); i++) {
		size_t n = refused_sizes[i % WEFT_ARRAY_SIZE(refused_sizes)];
		struct fi_context sc;

		t_fill(buf, n, (unsigned)i);
		while (fi_tsend(c.ep, buf, n, NULL, parent, i, &sc) ==
		       -FI_EAGAIN)
			;
		c_wait(&c, 1);
	}
	c_close(&c);
	free(buf);
	_exit(0);
}

/* The receiver's CMA reads of the sender start failing after its probe
 * allowed them (the sender's ptrace rules changed): the large messages it
 * was reading, split (1 MiB) or whole (64 KiB), are pushed by the sender
 * instead and arrive intact, and later ones (16 MiB) go that way from the
 * start. Before, each failed with FI_EOPNOTSUPP. */
static void test_cma_refused_after_probe(void **state)
{
	struct tctx *t = calloc(1, sizeof(*t));
	uint8_t *r = malloc((16 << 20) + 1);
	struct shm_peer *peer = NULL;
	fi_addr_t child;
	pid_t pid;
	size_t i;

	(void)state;
	assert_non_null(r);
	pid = fork();
	if (pid == 0)
		refused_child();
	t_open_fabric(t, FI_MSG | FI_TAGGED | FI_DIRECTED_RECV);
	t_add_ep(t);
	memcpy(B->names[0], t->name[0], T_ADDR_LEN);
	board_wait(&B->ready, 1);
	atomic_store(&B->go, 1);
	assert_int_equal(fi_av_insert(t->av, B->names[1], 1, &child, 0, NULL),
			 1);
	for (i = 0; i < 2 * WEFT_ARRAY_SIZE(refused_sizes); i++) {
		size_t n = refused_sizes[i % WEFT_ARRAY_SIZE(refused_sizes)];
		struct fi_context rc;

		if (i == WEFT_ARRAY_SIZE(refused_sizes)) {
			peer = to_shm_ep(t->ep[0])->conns->peer;
			assert_true(shm_peer_cma(peer));
			shm_cma_test_refuse = 1;
		}
		memset(r, 0, n + 1);
		T_POST(t, fi_trecv(t->ep[0], r, n, NULL, child, i, 0, &rc));
		assert_int_equal(t_wait_ok(t, &rc).len, n);
		assert_int_equal(t_check(r, n, (unsigned)i), -1);
		if (i >= WEFT_ARRAY_SIZE(refused_sizes)) {
			assert_non_null(peer);
			assert_false(shm_peer_cma(peer));
		}
		/* Found out on the split; the next message must meet the
		 * refusal again on its own path (whole). */
		if (i == WEFT_ARRAY_SIZE(refused_sizes))
			peer->cma = true;
	}
	assert_int_equal(reap(pid), 0);
	t_close(t);
	free(t);
	free(r);
}

/* Also when the test failed half-way: later tests need CMA. */
static int teardown_refused(void **state)
{
	shm_cma_test_refuse = 0;
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_processes_one_way, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cma_refused_after_probe, setup,
						teardown_refused),
		cmocka_unit_test_setup_teardown(test_all_to_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_peer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_mid_split, setup, teardown),
	};

	/* Bounded failure detection without slowing the test down. */
	setenv("FI_SHM_PEER_TIMEOUT_MS", "200", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
