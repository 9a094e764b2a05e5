/* SPDX-License-Identifier: MIT */
/*
 * shm settings that used to make every fi_endpoint fail: each test runs
 * in a child process, which sets the environment before its first
 * fi_getinfo (settings are read once per process), and reports through
 * its exit status; the parent never initialises the library.
 */
#include "shm_proc_test.h"
#include "../../../core/test/capture.h"

#define NMSG 4

static int run_child(void (*fn)(void))
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	return reap(pid);
}

static ssize_t c_tsend(struct cctx *c, fi_addr_t dest, uint64_t *v,
		       uint64_t tag)
{
	uint64_t deadline = t_now_s() + T_DEADLINE_S;
	struct fi_cq_tagged_entry e;
	ssize_t r;

	while ((r = fi_tsend(c->ep, v, sizeof(*v), NULL, dest, tag,
			     NULL)) == -FI_EAGAIN) {
		C_CHECK(t_now_s() <= deadline);
		(void)fi_cq_read(c->cq, &e, 0);
	}
	return r;
}

/* NMSG messages from a to b, all unexpected at b first, then received
 * in order with their data. */
static void exchange(void)
{
	uint64_t out[NMSG], in[NMSG] = { 0 };
	struct cctx a, b;
	fi_addr_t to_b;
	int i;

	c_open(&a);
	c_open(&b);
	C_CHECK(fi_av_insert(a.av, b.name, 1, &to_b, 0, NULL) == 1);
	for (i = 0; i < NMSG; i++) {
		out[i] = 0x5eed0000u + (uint64_t)i;
		C_CHECK(c_tsend(&a, to_b, &out[i], (uint64_t)i) == 0);
	}
	c_wait(&a, NMSG);
	for (i = 0; i < NMSG; i++)
		C_CHECK(!fi_trecv(b.ep, &in[i], sizeof(in[i]), NULL,
				  FI_ADDR_UNSPEC, (uint64_t)i, 0, NULL));
	c_wait(&b, NMSG);
	for (i = 0; i < NMSG; i++)
		C_CHECK(in[i] == out[i]);
	c_close(&a);
	c_close(&b);
}

/* One unexpected message buffered at a time is a valid setting: the
 * rest wait in the queue (the pool used to be made with 64 up front,
 * above its maximum, and every fi_endpoint failed). */
static void child_unexp_count_1(void)
{
	setenv("FI_SHM_UNEXP_COUNT", "1", 1);
	exchange();
}

static void test_unexp_count_1(void **state)
{
	(void)state;
	assert_int_equal(run_child(child_unexp_count_1), 0);
}

/* A tx_size whose table cannot be allocated is refused when the
 * settings are read, with a line naming the setting, and the default
 * is kept (every fi_endpoint used to fail with -FI_ENOMEM, unexplained). */
static void child_tx_size_huge(void)
{
	struct capture cap;
	struct fi_info *info;
	const char *out;

	setenv("FI_SHM_TX_SIZE", "1000000000", 1);
	setenv("FI_LOG_LEVEL", "warn", 1);
	capture_start(&cap);
	C_CHECK(!fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, NULL, &info));
	out = capture_stop(&cap);
	C_CHECK(capture_count(out, "FI_SHM_TX_SIZE=1000000000") == 1);
	capture_free(&cap);
	fi_freeinfo(info);
	exchange();
}

static void test_tx_size_huge(void **state)
{
	(void)state;
	assert_int_equal(run_child(child_tx_size_huge), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unexp_count_1),
		cmocka_unit_test(test_tx_size_huge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
