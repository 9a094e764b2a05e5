/* SPDX-License-Identifier: MIT */
/*
 * shm provider: RMA between processes, with CMA and with CMA refused
 * (bounce segments), peers killed with SIGKILL in the middle of a
 * bounce RMA on either side, and new operations toward a peer already
 * found dead.
 */
#include "shm_proc_test.h"
#include "../src/shm.h"

#define RLEN ((16u << 20) + (64u << 10))
#define RMA_CAPS (FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | \
		  FI_REMOTE_WRITE)
#define N_CQ_DATA 3

/* ---- a target child -------------------------------------------------- */

static uint8_t *c_target_open(struct cctx *c, struct fid_mr **mr)
{
	uint8_t *buf = calloc(1, RLEN);

	C_CHECK(buf);
	c_open_caps(c, RMA_CAPS);
	C_CHECK(!fi_mr_reg(c->domain, buf, RLEN,
			   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 1, 0, mr,
			   NULL));
	memcpy(B->names[1], c->name, T_ADDR_LEN);
	B->key = fi_mr_key(*mr);
	B->addr = (c->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
		  (uintptr_t)buf : 0;
	B->len = RLEN;
	atomic_fetch_add(&B->ready, 1);
	return buf;
}

/* Serves the parent's RMA until it is done; the remote CQ data must come
 * in order, each exactly once. With refuse, CMA fails here only: the
 * parent's probe (its side) succeeds, as under one-way ptrace rules. */
static void target_child(int refuse)
{
	struct fi_cq_tagged_entry e[16];
	struct fid_mr *mr;
	struct cctx c;
	uint64_t n = 0;
	uint8_t *buf;

	shm_cma_test_refuse = refuse;
	buf = c_target_open(&c, &mr);

	while (!atomic_load(&B->done)) {
		ssize_t r = fi_cq_read(c.cq, e, 16);

		if (r == -FI_EAGAIN)
			continue;
		C_CHECK(r > 0);
		for (ssize_t i = 0; i < r; i++) {
			C_CHECK(e[i].flags == (FI_RMA | FI_REMOTE_WRITE |
					       FI_REMOTE_CQ_DATA));
			C_CHECK(e[i].data == 0xd0 + n);
			n++;
		}
	}
	C_CHECK(n == N_CQ_DATA);
	C_CHECK(!fi_close(&mr->fid));
	c_close(&c);
	free(buf);
	_exit(0);
}

/* Progresses until a bounce RMA of the parent is running here, then never
 * again until it is killed. */
static void stall_target_child(void)
{
	struct fi_cq_tagged_entry e;
	struct fid_mr *mr;
	struct cctx c;
	uint64_t deadline = t_now_s() + T_DEADLINE_S;

	(void)c_target_open(&c, &mr);
	while (!to_shm_ep(c.ep)->rma_xfers) {
		C_CHECK(t_now_s() <= deadline);
		(void)fi_cq_read(c.cq, &e, 1);
	}
	atomic_fetch_add(&B->done, 1);
	for (;;)
		pause();
}

/* ---- the parent's side ------------------------------------------------ */

static fi_addr_t p_open(struct tctx *t, int neps)
{
	fi_addr_t peer;

	t_open_fabric(t, RMA_CAPS);
	while (neps--)
		t_add_ep(t);
	board_wait(&B->ready, 1);
	assert_int_equal(fi_av_insert(t->av, B->names[1], 1, &peer, 0, NULL),
			 1);
	return peer;
}

static void p_write_read(struct tctx *t, fi_addr_t peer, size_t off,
			 size_t len, unsigned seed)
{
	uint8_t *s = malloc(len + 1), *d = calloc(1, len + 1);
	struct fi_context wc, rc;

	assert_non_null(s);
	assert_non_null(d);
	t_fill(s, len, seed);
	T_POST(t, fi_write(t->ep[0], s, len, NULL, peer, B->addr + off,
			   B->key, &wc));
	t_wait_ok(t, &wc);
	T_POST(t, fi_read(t->ep[0], d, len, NULL, peer, B->addr + off,
			  B->key, &rc));
	t_wait_ok(t, &rc);
	assert_int_equal(t_check(d, len, seed), -1);
	assert_int_equal(d[len], 0);
	free(s);
	free(d);
}

static void p_errors(struct tctx *t, fi_addr_t peer)
{
	const size_t len = (1u << 20) + 1;
	uint8_t *buf = malloc(len);
	struct fi_context c;

	assert_non_null(buf);
	T_POST(t, fi_write(t->ep[0], buf, len, NULL, peer, B->addr,
			   B->key + 77, &c));
	assert_int_equal(t_wait_err(t, &c).err, FI_ENOKEY);
	T_POST(t, fi_read(t->ep[0], buf, len, NULL, peer,
			  B->addr + B->len - len + 1, B->key, &c));
	assert_int_equal(t_wait_err(t, &c).err, FI_EINVAL);
	T_POST(t, fi_write(t->ep[0], buf, len, NULL, peer, B->addr - 4096,
			   B->key, &c));
	assert_int_equal(t_wait_err(t, &c).err, FI_EINVAL);
	free(buf);
}

static void p_writedata(struct tctx *t, fi_addr_t peer)
{
	const size_t sizes[N_CQ_DATA] = { 64, 300001, 16u << 20 };
	uint8_t *s = malloc(16u << 20), *d = malloc(16u << 20);
	struct fi_context c;
	int i;

	assert_non_null(s);
	assert_non_null(d);
	for (i = 0; i < N_CQ_DATA; i++) {
		t_fill(s, sizes[i], (unsigned)i + 60);
		T_POST(t, fi_writedata(t->ep[0], s, sizes[i], NULL,
				       0xd0 + (uint64_t)i, peer, B->addr,
				       B->key, &c));
		t_wait_ok(t, &c);
		T_POST(t, fi_read(t->ep[0], d, sizes[i], NULL, peer, B->addr,
				  B->key, &c));
		t_wait_ok(t, &c);
		assert_int_equal(t_check(d, sizes[i], (unsigned)i + 60), -1);
	}
	free(s);
	free(d);
}

static void t_rma_two_processes(int refuse, int child_refuse)
{
	static const size_t sizes[] = { 1, 4064, 4065, 4112, 4113, 4192, 4193,
					4240, 4241, 65535,
					65536, 65537, 1048575, 1048576,
					1048577, 16u << 20 };
	struct tctx *t = calloc(1, sizeof(*t));
	fi_addr_t peer;
	pid_t pid;
	size_t i;

	assert_non_null(t);
	shm_cma_test_refuse = refuse;
	pid = fork();
	if (pid == 0)
		target_child(child_refuse);
	peer = p_open(t, 1);
	for (i = 0; i < WEFT_ARRAY_SIZE(sizes); i++)
		p_write_read(t, peer, (i * 4099) % 8192, sizes[i],
			     (unsigned)i + 1);
	p_errors(t, peer);
	p_writedata(t, peer);
	/* One-way: the first large RMA found out, the rest went bounce. */
	if (child_refuse && !refuse)
		assert_false(to_shm_ep(t->ep[0])->conns->peer->cma);
	atomic_store(&B->done, 1);
	assert_int_equal(reap(pid), 0);
	t_close(t);
	free(t);
	shm_cma_test_refuse = 0;
}

static void test_rma_two_processes_cma(void **state)
{
	(void)state;
	t_rma_two_processes(0, 0);
}

static void test_rma_two_processes_bounce(void **state)
{
	(void)state;
	t_rma_two_processes(1, 1);
}

/* CMA works from the initiator to the target but not back: the target
 * answers the first large RMA with FI_EOPNOTSUPP, the initiator sends it
 * again through bounce segments, and uses them from then on. */
static void test_rma_two_processes_one_way(void **state)
{
	(void)state;
	t_rma_two_processes(0, 1);
}

/* The target dies while a bounce write or read toward it runs: the
 * initiator gets an error completion in bounded time. */
static void t_target_killed(bool write)
{
	struct tctx *t = calloc(1, sizeof(*t));
	uint8_t *buf = malloc(16u << 20);
	struct fi_context c;
	fi_addr_t peer;
	pid_t pid;

	assert_non_null(t);
	assert_non_null(buf);
	memset(B, 0, sizeof(*B));
	pid = fork();
	if (pid == 0)
		stall_target_child();
	peer = p_open(t, 1);
	t_fill(buf, 16u << 20, 4);
	if (write)
		T_POST(t, fi_write(t->ep[0], buf, 16u << 20, NULL, peer,
				   B->addr, B->key, &c));
	else
		T_POST(t, fi_read(t->ep[0], buf, 16u << 20, NULL, peer,
				  B->addr, B->key, &c));
	while (atomic_load(&B->done) < 1)
		t_poll(t);
	for (int i = 0; i < 1000; i++)
		t_poll(t);
	kill(pid, SIGKILL);
	assert_int_equal(reap(pid), 128 + SIGKILL);
	assert_int_not_equal(t_wait_err(t, &c).err, 0);
	t_close(t);
	free(t);
	free(buf);
}

/* ---- an initiator child killed mid-transfer ---------------------------- */

/* Starts a 16 MiB bounce write or read into the parent's region, moves a
 * little of it, then never progresses again. */
static void stall_initiator_child(bool write)
{
	struct fi_cq_tagged_entry e;
	uint8_t *buf = malloc(16u << 20);
	struct fi_context ctx;
	fi_addr_t parent;
	struct cctx c;
	ssize_t r;

	C_CHECK(buf);
	t_fill(buf, 16u << 20, 9);
	c_open_caps(&c, RMA_CAPS);
	board_wait(&B->ready, 1);
	C_CHECK(fi_av_insert(c.av, B->names[0], 1, &parent, 0, NULL) == 1);
	r = write ? fi_write(c.ep, buf, 16u << 20, NULL, parent, B->addr,
			     B->key, &ctx) :
		    fi_read(c.ep, buf, 16u << 20, NULL, parent, B->addr,
			    B->key, &ctx);
	C_CHECK(r == 0);
	while (atomic_load(&B->go) < 1)
		(void)fi_cq_read(c.cq, &e, 1);
	atomic_fetch_add(&B->done, 1);
	for (;;)
		pause();
}

/* The target's part of a dead initiator's transfer is dropped (its bounce
 * segments taken back), and the target keeps working. */
static void t_initiator_killed(bool write)
{
	struct tctx *t = calloc(1, sizeof(*t));
	uint8_t *region = calloc(1, 16u << 20);
	uint64_t deadline = t_now_s() + T_DEADLINE_S;
	struct fid_mr *mr;
	struct fi_context c;
	pid_t pid;

	assert_non_null(t);
	assert_non_null(region);
	memset(B, 0, sizeof(*B));
	pid = fork();
	if (pid == 0)
		stall_initiator_child(write);
	t_open_fabric(t, RMA_CAPS);
	t_add_ep(t);
	t_add_ep(t);
	assert_int_equal(fi_mr_reg(t->domain, region, 16u << 20,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 1, 0,
				   &mr, NULL), 0);
	memcpy(B->names[0], t->name[0], T_ADDR_LEN);
	B->key = fi_mr_key(mr);
	B->addr = (t->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
		  (uintptr_t)region : 0;
	atomic_store(&B->ready, 1);
	while (!to_shm_ep(t->ep[0])->rma_xfers) {
		t_poll(t);
		assert_true(t_now_s() <= deadline);
	}
	/* One progress call moves at most one segment pool's worth (1 MiB):
	 * stopped now, the transfer is in its middle. */
	atomic_store(&B->go, 1);
	board_wait(&B->done, 1);
	assert_non_null(to_shm_ep(t->ep[0])->rma_xfers);
	kill(pid, SIGKILL);
	assert_int_equal(reap(pid), 128 + SIGKILL);
	while (to_shm_ep(t->ep[0])->rma_xfers) {
		t_poll(t);
		assert_true(t_now_s() <= deadline);
	}
	/* ep[0] serves a 16 MiB bounce read (its own segments) again. */
	t_fill(region, 16u << 20, 11);
	{
		uint8_t *d = calloc(1, 16u << 20);

		assert_non_null(d);
		T_POST(t, fi_read(t->ep[1], d, 16u << 20, NULL, t->addr[0],
				  B->addr, B->key, &c));
		t_wait_ok(t, &c);
		assert_int_equal(t_check(d, 16u << 20, 11), -1);
		free(d);
	}
	assert_int_equal(fi_close(&mr->fid), 0);
	t_close(t);
	free(t);
	free(region);
}

static void test_rma_sigkill(void **state)
{
	(void)state;
	shm_cma_test_refuse = 1;
	t_target_killed(true);
	t_target_killed(false);
	t_initiator_killed(true);
	t_initiator_killed(false);
	shm_cma_test_refuse = 0;
}

/* ---- operations posted after the peer was found dead ------------------ */

/* A target that never progresses after opening, until it is killed. */
static void idle_target_child(void)
{
	struct fid_mr *mr;
	struct cctx c;

	(void)c_target_open(&c, &mr);
	for (;;)
		pause();
}

#define DEAD_LARGE ((size_t)1 << 20)
#define DEAD_SMALL 64
/* Seconds a new operation toward a dead peer may take to fail: it
 * should fail at once, this only keeps a regression from hanging. */
#define DEAD_FAIL_S 5

/* ret of an operation posted toward a dead peer: an error now, or an
 * error completion of ctx soon; never -FI_EAGAIN, never success. */
static void expect_failed(struct tctx *t, ssize_t ret, void *ctx,
			  const char *what)
{
	uint64_t deadline = t_now_s() + DEAD_FAIL_S;
	struct t_comp c;

	if (ret) {
		if (ret == -FI_EAGAIN)
			fail_msg("%s: -FI_EAGAIN toward a dead peer", what);
		assert_true(ret < 0);
		return;
	}
	if (!ctx)
		fail_msg("%s: an inject toward a dead peer succeeded", what);
	while (!t_take(t, ctx, &c)) {
		t_poll(t);
		if (t_now_s() > deadline)
			fail_msg("%s: no completion %d s after posting toward a dead peer",
				 what, DEAD_FAIL_S);
	}
	if (!c.is_err)
		fail_msg("%s: completed successfully toward a dead peer",
			 what);
}

static void test_ops_after_death(void **state)
{
	struct tctx *t = calloc(1, sizeof(*t));
	uint8_t *buf = malloc(DEAD_LARGE);
	struct fi_context c[6];
	fi_addr_t peer;
	pid_t pid;
	int i;

	(void)state;
	assert_non_null(t);
	assert_non_null(buf);
	pid = fork();
	if (pid == 0)
		idle_target_child();
	peer = p_open(t, 1);
	t_fill(buf, DEAD_LARGE, 5);

	/* A large send waits for the ACK of a peer that then dies: it
	 * fails when the peer is found dead. */
	T_POST(t, fi_send(t->ep[0], buf, DEAD_LARGE, NULL, peer, &c[0]));
	kill(pid, SIGKILL);
	assert_int_equal(reap(pid), 128 + SIGKILL);
	assert_int_equal(t_wait_err(t, &c[0]).err, FI_EHOSTUNREACH);

	/* Everything posted toward it now fails too. Small sends many
	 * times: enough to fill its queue had they been queued. */
	expect_failed(t, fi_send(t->ep[0], buf, DEAD_LARGE, NULL, peer,
				 &c[1]), &c[1], "1 MiB fi_send");
	expect_failed(t, fi_write(t->ep[0], buf, DEAD_LARGE, NULL, peer,
				  B->addr, B->key, &c[2]), &c[2],
		      "1 MiB fi_write");
	expect_failed(t, fi_read(t->ep[0], buf, DEAD_LARGE, NULL, peer,
				 B->addr, B->key, &c[3]), &c[3],
		      "1 MiB fi_read");
	expect_failed(t, fi_write(t->ep[0], buf, DEAD_SMALL, NULL, peer,
				  B->addr, B->key, &c[4]), &c[4],
		      "small fi_write");
	for (i = 0; i < 2000; i++) {
		expect_failed(t, fi_send(t->ep[0], buf, DEAD_SMALL, NULL, peer,
					 &c[5]), &c[5], "small fi_send");
		expect_failed(t, fi_inject(t->ep[0], buf, DEAD_SMALL, peer),
			      NULL, "fi_inject");
	}
	assert_int_equal(t->nstash, 0);
	t_close(t);
	free(t);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rma_two_processes_cma,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rma_two_processes_bounce,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rma_two_processes_one_way,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rma_sigkill, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ops_after_death, setup,
						teardown),
	};

	/* Bounded failure detection without slowing the test down. */
	setenv("FI_SHM_PEER_TIMEOUT_MS", "200", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
