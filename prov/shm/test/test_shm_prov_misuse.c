/* SPDX-License-Identifier: MIT */
/*
 * shm provider under API misuse (issue 20's crash reports): each call
 * returns -FI_E* and logs a line naming the problem, and the endpoint
 * still works afterwards (checked by moving data through it). Covered:
 * operations before fi_enable; NULL buffers with bytes, NULL msg
 * structures and iov lengths whose sum overflows; closes in the wrong
 * order; limits (inject_size, tx_size, fi_tx_size_left) kept as stated;
 * endpoint names held by another endpoint or another user.
 */
#include "shm_prov_test.h"
#include "../../../core/test/capture.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#define CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_READ | FI_WRITE | \
	      FI_REMOTE_READ | FI_REMOTE_WRITE | FI_ATOMIC)
#define SMALL 64

static struct tctx T;

/* Run expr with the log captured: it returns want and logs a line that
 * contains needle. */
#define EXPECT_LOGGED(expr, want, needle)				\
	do {								\
		struct capture _cap;					\
		const char *_out;					\
		ssize_t _r;						\
									\
		capture_start(&_cap);					\
		_r = (expr);						\
		_out = capture_stop(&_cap);				\
		if (_r != (ssize_t)(want) ||				\
		    capture_count(_out, needle) < 1)			\
			fail_msg("%s: returned %zd (want %zd), log:\n%s", \
				 #expr, _r, (ssize_t)(want), _out);	\
		capture_free(&_cap);					\
	} while (0)

/* One message from endpoint i to endpoint j, its bytes checked. */
static void send_recv(int i, int j, size_t len, unsigned seed)
{
	uint8_t src[SMALL], dst[SMALL] = { 0 };
	struct fi_context sc, rc;

	assert_true(len <= SMALL);
	t_fill(src, len, seed);
	T_POST(&T, fi_recv(T.ep[j], dst, len, NULL, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, fi_send(T.ep[i], src, len, NULL, T.addr[j], &sc));
	t_wait_ok(&T, &sc);
	assert_int_equal(t_wait_ok(&T, &rc).len, len);
	assert_int_equal(t_check(dst, len, seed), -1);
}

/* Every kind of data transfer on ep fails as not enabled. */
static void expect_not_enabled(struct fid_ep *ep, fi_addr_t dest)
{
	static const char needle[] = "not enabled";
	uint8_t buf[SMALL] = { 0 }, res[8];
	struct fi_context ctx;
	struct iovec iov = { .iov_base = buf, .iov_len = SMALL };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1, .addr = dest,
			      .context = &ctx };

	t_fill(buf, SMALL, 9);

	EXPECT_LOGGED(fi_send(ep, buf, SMALL, NULL, dest, &ctx),
		      -FI_EOPBADSTATE, needle);
	EXPECT_LOGGED(fi_sendmsg(ep, &msg, 0), -FI_EOPBADSTATE, needle);
	EXPECT_LOGGED(fi_inject(ep, buf, SMALL, dest), -FI_EOPBADSTATE,
		      needle);
	EXPECT_LOGGED(fi_tsend(ep, buf, SMALL, NULL, dest, 1, &ctx),
		      -FI_EOPBADSTATE, needle);
	EXPECT_LOGGED(fi_recv(ep, buf, SMALL, NULL, FI_ADDR_UNSPEC, &ctx),
		      -FI_EOPBADSTATE, needle);
	EXPECT_LOGGED(fi_trecv(ep, buf, SMALL, NULL, FI_ADDR_UNSPEC, 1, 0,
			       &ctx), -FI_EOPBADSTATE, needle);
	EXPECT_LOGGED(fi_write(ep, buf, SMALL, NULL, dest, 0, 0, &ctx),
		      -FI_EOPBADSTATE, needle);
	EXPECT_LOGGED(fi_read(ep, buf, SMALL, NULL, dest, 0, 0, &ctx),
		      -FI_EOPBADSTATE, needle);
	EXPECT_LOGGED(fi_atomic(ep, buf, 1, NULL, dest, 0, 0, FI_UINT64,
				FI_SUM, &ctx), -FI_EOPBADSTATE, needle);
	EXPECT_LOGGED(fi_fetch_atomic(ep, buf, 1, NULL, res, NULL, dest, 0, 0,
				      FI_UINT64, FI_SUM, &ctx),
		      -FI_EOPBADSTATE, needle);
}

/* Nothing bound: no AV to resolve dest with (it used to dereference the
 * missing AV). */
static void test_ops_before_bind(void **state)
{
	struct fid_ep *ep;
	size_t count = 0;

	(void)state;
	t_open(&T, CAPS, 1);
	assert_int_equal(fi_endpoint(T.domain, T.info, &ep, NULL), 0);
	expect_not_enabled(ep, T.addr[0]);
	/* Queries are no data transfers: they work before fi_enable. */
	assert_int_equal(fi_atomicvalid(ep, FI_UINT64, FI_SUM, &count), 0);
	assert_true(count > 0);
	EXPECT_LOGGED(fi_enable(ep), -FI_ENOAV, "no AV");
	assert_int_equal(fi_close(&ep->fid), 0);
	send_recv(0, 0, SMALL, 1);	/* the other endpoint was not hurt */
	t_close(&T);
}

/* AV and CQ bound, fi_enable not called: refused too (it used to send),
 * and nothing reaches the peer; fi_enable then makes the same endpoint
 * work. */
static void test_ops_before_enable(void **state)
{
	static const uint8_t zero[SMALL];
	uint8_t dst[SMALL] = { 0 };
	struct fi_context rc;
	size_t len = T_ADDR_LEN;
	struct fid_ep *ep;
	int i;

	(void)state;
	t_open(&T, CAPS, 1);
	assert_int_equal(fi_endpoint(T.domain, T.info, &ep, NULL), 0);
	assert_int_equal(fi_ep_bind(ep, &T.av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(ep, &T.cq->fid, FI_TRANSMIT | FI_RECV), 0);
	T_POST(&T, fi_recv(T.ep[0], dst, SMALL, NULL, FI_ADDR_UNSPEC, &rc));
	expect_not_enabled(ep, T.addr[0]);
	for (i = 0; i < 1000; i++)
		assert_int_equal(t_poll(&T), 0);
	assert_memory_equal(dst, zero, SMALL);
	assert_int_equal(fi_cancel(&T.ep[0]->fid, &rc), 0);
	assert_int_equal(t_wait_err(&T, &rc).err, FI_ECANCELED);

	assert_int_equal(fi_enable(ep), 0);
	T.ep[T.nep] = ep;
	assert_int_equal(fi_getname(&ep->fid, T.name[T.nep], &len), 0);
	assert_int_equal(fi_av_insert(T.av, T.name[T.nep], 1,
				      &T.addr[T.nep], 0, NULL), 1);
	T.nep++;
	send_recv(1, 0, SMALL, 2);
	send_recv(0, 1, SMALL, 3);
	t_close(&T);
}

/* A NULL buffer with a nonzero length is refused where it is posted (it
 * used to crash the sender copying it into a cell, or the receiver when
 * a message arrived); NULL with no bytes is a valid empty message. */
static void test_null_buffers(void **state)
{
	static const char needle[] = "NULL";
	uint8_t buf[SMALL];
	struct fi_context ctx, rc;
	struct iovec iov[2] = { { .iov_base = buf, .iov_len = 8 },
				{ .iov_base = NULL, .iov_len = 8 } };
	fi_addr_t a1;

	(void)state;
	t_open(&T, CAPS, 2);
	a1 = T.addr[1];
	EXPECT_LOGGED(fi_send(T.ep[0], NULL, 100, NULL, a1, &ctx),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_send(T.ep[0], NULL, 1 << 20, NULL, a1, &ctx),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_tsend(T.ep[0], NULL, 100, NULL, a1, 7, &ctx),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_senddata(T.ep[0], NULL, 100, NULL, 5, a1, &ctx),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_inject(T.ep[0], NULL, 100, a1), -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_sendv(T.ep[0], iov, NULL, 2, a1, &ctx), -FI_EINVAL,
		      "iov[1]");
	EXPECT_LOGGED(fi_recv(T.ep[1], NULL, 100, NULL, FI_ADDR_UNSPEC, &rc),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_recvv(T.ep[1], iov, NULL, 2, FI_ADDR_UNSPEC, &rc),
		      -FI_EINVAL, "iov[1]");
	EXPECT_LOGGED(fi_trecvv(T.ep[1], iov, NULL, 2, FI_ADDR_UNSPEC, 0, 0,
				&rc), -FI_EINVAL, "iov[1]");
	EXPECT_LOGGED(fi_write(T.ep[0], NULL, 100, NULL, a1, 0, 0, &ctx),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_read(T.ep[0], NULL, 100, NULL, a1, 0, 0, &ctx),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_readv(T.ep[0], iov, NULL, 2, a1, 0, 0, &ctx),
		      -FI_EINVAL, "iov[1]");
	EXPECT_LOGGED(fi_fetch_atomic(T.ep[0], buf, 1, NULL, NULL, NULL, a1, 0,
				      0, FI_UINT64, FI_SUM, &ctx),
		      -FI_EINVAL, "missing buffers");

	/* Nothing was queued by the refused calls, and an empty message
	 * (NULL, 0) still goes through. */
	T_POST(&T, fi_recv(T.ep[1], NULL, 0, NULL, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, fi_send(T.ep[0], NULL, 0, NULL, a1, &ctx));
	t_wait_ok(&T, &ctx);
	assert_int_equal(t_wait_ok(&T, &rc).len, 0);
	assert_int_equal(T.nstash, 0);
	send_recv(0, 1, SMALL, 4);
	t_close(&T);
}

/* The *msg calls with msg NULL (they used to dereference it). */
static void test_null_msg(void **state)
{
	static const char needle[] = "msg is NULL";
	struct fi_ioc res = { 0 }, cmp = { 0 };
	struct fid_ep *ep;

	(void)state;
	t_open(&T, CAPS, 2);
	ep = T.ep[0];
	EXPECT_LOGGED(fi_sendmsg(ep, NULL, 0), -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_recvmsg(ep, NULL, 0), -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_tsendmsg(ep, NULL, 0), -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_trecvmsg(ep, NULL, 0), -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_writemsg(ep, NULL, 0), -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_readmsg(ep, NULL, 0), -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_atomicmsg(ep, NULL, 0), -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_fetch_atomicmsg(ep, NULL, &res, NULL, 1, 0),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_compare_atomicmsg(ep, NULL, &cmp, NULL, 1, &res,
					   NULL, 1, 0), -FI_EINVAL, needle);
	send_recv(0, 1, SMALL, 5);
	t_close(&T);
}

/* iov lengths whose sum does not fit size_t: refused (the sum used to
 * wrap, and a {buf, SIZE_MAX} + {buf, 2} send went out as 1 byte). */
static void test_iov_overflow(void **state)
{
	static const char needle[] = "SIZE_MAX";
	uint8_t buf[SMALL] = { 0 };
	struct iovec iov[2] = { { .iov_base = buf, .iov_len = SIZE_MAX },
				{ .iov_base = buf, .iov_len = 2 } };
	struct fi_context ctx, rc;
	fi_addr_t a1;

	(void)state;
	t_open(&T, CAPS, 2);
	a1 = T.addr[1];
	EXPECT_LOGGED(fi_sendv(T.ep[0], iov, NULL, 2, a1, &ctx), -FI_EINVAL,
		      needle);
	EXPECT_LOGGED(fi_tsendv(T.ep[0], iov, NULL, 2, a1, 3, &ctx),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_recvv(T.ep[1], iov, NULL, 2, FI_ADDR_UNSPEC, &rc),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_writev(T.ep[0], iov, NULL, 2, a1, 0, 0, &ctx),
		      -FI_EINVAL, needle);
	EXPECT_LOGGED(fi_readv(T.ep[0], iov, NULL, 2, a1, 0, 0, &ctx),
		      -FI_EINVAL, needle);
	for (int i = 0; i < 1000; i++)
		t_poll(&T);
	assert_int_equal(T.nstash, 0);
	send_recv(0, 1, SMALL, 6);
	t_close(&T);
}

/*
 * Closing a parent before its children (domain before endpoint or MR,
 * fabric before domain, AV or CQ while an endpoint is bound) returns
 * -FI_EBUSY with a warning and frees nothing: every object still works,
 * an RMA write into the MR included, and closes in the right order then
 * succeed. What is not guaranteed, as in libfabric: a second fi_close of
 * an object whose first close succeeded. The object is freed by then and
 * fi_close (inline in the application) reads its ops through the freed
 * fid, before any provider code runs.
 */
static void test_close_order(void **state)
{
	uint8_t src[SMALL], tgt[SMALL] = { 0 };
	struct fi_context ctx;
	struct fid_mr *mr;

	(void)state;
	t_open(&T, CAPS, 2);
	assert_int_equal(fi_mr_reg(T.domain, tgt, sizeof(tgt),
				   FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL), 0);
	EXPECT_LOGGED(fi_close(&T.domain->fid), -FI_EBUSY, "open objects");
	EXPECT_LOGGED(fi_close(&T.fabric->fid), -FI_EBUSY, "open domains");
	EXPECT_LOGGED(fi_close(&T.av->fid), -FI_EBUSY, "still bound");
	EXPECT_LOGGED(fi_close(&T.cq->fid), -FI_EBUSY, "still bound");

	send_recv(0, 1, SMALL, 7);
	t_fill(src, SMALL, 8);
	T_POST(&T, fi_write(T.ep[0], src, SMALL, NULL, T.addr[1],
			    (T.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
			    (uintptr_t)tgt : 0, fi_mr_key(mr), &ctx));
	t_wait_ok(&T, &ctx);
	assert_int_equal(t_check(tgt, SMALL, 8), -1);

	/* The endpoints go; the MR still holds the domain. */
	assert_int_equal(fi_close(&T.ep[0]->fid), 0);
	assert_int_equal(fi_close(&T.ep[1]->fid), 0);
	T.nep = 0;
	EXPECT_LOGGED(fi_close(&T.domain->fid), -FI_EBUSY, "open objects");
	assert_int_equal(fi_close(&mr->fid), 0);
	t_close(&T);
}

/* fi_tx_size_left, which libfabric 1.17's header marks deprecated (it
 * is still in the ABI and the ops table). */
static ssize_t tx_left(struct fid_ep *ep)
{
	return ep->ops->tx_size_left(ep);
}

/* fi_tx_size_left is what can be posted: inline sends to a peer that
 * does not drain its queue succeed exactly while it is positive (it used
 * to count only the operations waiting for an ACK, 1024, while the
 * peer's queue refused the 257th send). */
static void test_tx_size_left(void **state)
{
	uint8_t buf[SMALL];
	ssize_t left, n = 0;

	(void)state;
	t_open(&T, CAPS, 2);
	t_fill(buf, SMALL, 10);
	/* No progress below: endpoint 1 takes nothing from its queue. */
	while ((left = tx_left(T.ep[0])) > 0) {
		assert_int_equal(fi_inject(T.ep[0], buf, SMALL, T.addr[1]), 0);
		n++;
		assert_true(n <= 1 << 20);
	}
	assert_int_equal(left, 0);
	assert_int_equal(fi_inject(T.ep[0], buf, SMALL, T.addr[1]),
			 -FI_EAGAIN);
	assert_true(n > 0);
	/* Endpoint 1 drains: the messages are all there, in order. */
	for (ssize_t i = 0; i < n; i++) {
		uint8_t dst[SMALL] = { 0 };
		struct fi_context rc;

		T_POST(&T, fi_recv(T.ep[1], dst, SMALL, NULL, FI_ADDR_UNSPEC,
				   &rc));
		assert_int_equal(t_wait_ok(&T, &rc).len, SMALL);
		assert_int_equal(t_check(dst, SMALL, 10), -1);
	}
	assert_true(tx_left(T.ep[0]) > 0);
	t_close(&T);
}

/* An endpoint asking for more operations than shm can keep is refused
 * with a line naming the limit (it used to fail with -FI_ENOMEM, not
 * saying why). */
static void test_tx_size_huge(void **state)
{
	struct fid_ep *ep;
	size_t size;

	(void)state;
	t_open(&T, CAPS, 1);
	size = T.info->tx_attr->size;
	T.info->tx_attr->size = 1000000000;
	EXPECT_LOGGED(fi_endpoint(T.domain, T.info, &ep, NULL), -FI_EINVAL,
		      "FI_SHM_TX_SIZE");
	T.info->tx_attr->size = size;
	t_close(&T);
}

/* Injects above inject_size are refused whatever the call (the cell has
 * room for more: messages alone could carry up to its payload), and an
 * endpoint asking for a larger inject_size than fi_getinfo offered is
 * refused (it used to take it, and inject up to the cell payload). */
static void test_inject_size(void **state)
{
	size_t max;
	uint8_t *buf;
	struct iovec iov;
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1 };
	struct fi_msg_tagged tmsg = { .msg_iov = &iov, .iov_count = 1 };
	struct fi_context ctx;
	struct fid_ep *ep;

	(void)state;
	t_open(&T, CAPS, 2);
	max = T.info->tx_attr->inject_size;
	T.info->tx_attr->inject_size = max + 79;
	EXPECT_LOGGED(fi_endpoint(T.domain, T.info, &ep, NULL), -FI_EINVAL,
		      "inject_size");
	T.info->tx_attr->inject_size = max;
	buf = calloc(1, max + 128);
	assert_non_null(buf);
	iov.iov_base = buf;
	msg.addr = tmsg.addr = T.addr[1];
	msg.context = tmsg.context = &ctx;
	for (size_t len = max + 1; len < max + 128; len += 13) {
		iov.iov_len = len;
		EXPECT_LOGGED(fi_inject(T.ep[0], buf, len, T.addr[1]),
			      -FI_EINVAL, "inject_size");
		EXPECT_LOGGED(fi_tinject(T.ep[0], buf, len, T.addr[1], 1),
			      -FI_EINVAL, "inject_size");
		EXPECT_LOGGED(fi_injectdata(T.ep[0], buf, len, 2, T.addr[1]),
			      -FI_EINVAL, "inject_size");
		EXPECT_LOGGED(fi_sendmsg(T.ep[0], &msg, FI_INJECT),
			      -FI_EINVAL, "inject_size");
		EXPECT_LOGGED(fi_tsendmsg(T.ep[0], &tmsg, FI_INJECT),
			      -FI_EINVAL, "inject_size");
		EXPECT_LOGGED(fi_inject_write(T.ep[0], buf, len, T.addr[1], 0,
					      0), -FI_EINVAL, "inject_size");
	}
	assert_int_equal(fi_inject(T.ep[0], buf, max, T.addr[1]), 0);
	free(buf);
	t_close(&T);
}

/* The info of an endpoint named by service svc (fabtests' servers). */
static struct fi_info *named_info(const char *svc)
{
	struct fi_info *hints = t_hints(CAPS), *info;

	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, svc, FI_SOURCE,
				    hints, &info), 0);
	fi_freeinfo(hints);
	return info;
}

/* A name a live endpoint of ours holds (two jobs on one service): the
 * second fi_endpoint fails and says who holds it (it used to say only
 * "Address already in use"). */
static void test_name_taken(void **state)
{
	struct fi_info *info;
	struct fid_ep *a, *b;
	char svc[32], pid[32];

	(void)state;
	t_open(&T, CAPS, 0);
	snprintf(svc, sizeof(svc), "taken%d", (int)getpid());
	snprintf(pid, sizeof(pid), "pid %d", (int)getpid());
	info = named_info(svc);
	assert_int_equal(fi_endpoint(T.domain, info, &a, NULL), 0);
	EXPECT_LOGGED(fi_endpoint(T.domain, info, &b, NULL), -FI_EADDRINUSE,
		      pid);
	assert_int_equal(fi_close(&a->fid), 0);
	/* Free again once its holder closed. */
	assert_int_equal(fi_endpoint(T.domain, info, &b, NULL), 0);
	assert_int_equal(fi_close(&b->fid), 0);
	fi_freeinfo(info);
	t_close(&T);
}

/* Another user's file under our name (anyone may create files in
 * /dev/shm): refused, naming its owner. Making a file of another user
 * takes root. */
static void test_name_foreign(void **state)
{
	char svc[32], name[64], uid[32];
	struct capture cap;
	struct fi_info *info;
	struct fid_ep *ep;
	const char *out;
	int fd, ret;

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: only root can create a file owned by another user\n");
		skip();
	}
	snprintf(svc, sizeof(svc), "foreign%d", (int)getpid());
	snprintf(name, sizeof(name), "/weftshm-%u-n-%s", (unsigned)getuid(),
		 svc);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, 4242, 4242), 0);
	close(fd);
	snprintf(uid, sizeof(uid), "uid 4242");
	t_open(&T, CAPS, 0);
	info = named_info(svc);
	capture_start(&cap);
	ret = fi_endpoint(T.domain, info, &ep, NULL);
	out = capture_stop(&cap);
	assert_int_equal(shm_unlink(name), 0);	/* before any assert fails */
	assert_int_equal(ret, -FI_EADDRINUSE);
	assert_int_equal(capture_count(out, uid), 1);
	capture_free(&cap);
	fi_freeinfo(info);
	t_close(&T);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops_before_bind),
		cmocka_unit_test(test_ops_before_enable),
		cmocka_unit_test(test_null_buffers),
		cmocka_unit_test(test_null_msg),
		cmocka_unit_test(test_iov_overflow),
		cmocka_unit_test(test_close_order),
		cmocka_unit_test(test_tx_size_left),
		cmocka_unit_test(test_tx_size_huge),
		cmocka_unit_test(test_inject_size),
		cmocka_unit_test(test_name_taken),
		cmocka_unit_test(test_name_foreign),
	};

	/* The tests read the warnings: make sure they are on. */
	setenv("FI_LOG_LEVEL", "warn", 1);
	/* test_name_foreign makes a name as a process of no job has it,
	 * whatever launcher runs the tests. */
	setenv("FI_SHM_JOB", "none", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
