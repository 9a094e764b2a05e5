/* SPDX-License-Identifier: MIT */
/*
 * srd's limits and bad input, over softsrd: a NULL buffer with a nonzero
 * length, iov counts beyond the endpoint's iov_limit, iov lengths whose sum
 * overflows and messages beyond max_msg_size are refused at post time with
 * -FI_EINVAL, while what is advertised works (data checked).
 */
#include "test_srd_rdm_common.h"
#include "../src/rdm/srd_rdm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fi_tagged.h>

#define CHILD_TIMEOUT_S 60

/*
 * Device settings are read once per process (at the first fi_getinfo), so
 * a case that needs other FI_SRD_SOFT_* values runs this program again
 * with them and the name of a child group (main). A child that hangs is
 * killed by its alarm, which fails the case.
 */
static void run_child(const char *group, const char *const *env)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		for (; env[0]; env += 2)
			setenv(env[0], env[1], 1);
		alarm(CHILD_TIMEOUT_S);
		/* its report must not mix into the parent's TAP stream */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execl("/proc/self/exe", "test_srd_rdm_limits", group,
		      (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("child group %s: %s %d", group,
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) :
					     WTERMSIG(status));
}

/* The next completion of e: no error, context ctx, len bytes. */
static void expect_ok(struct tfab *f, struct tep *e, void *ctx, size_t len)
{
	struct tent t;

	tfab_wait(f, e, 1);
	t = tfab_take(e);
	assert_int_equal(t.err, 0);
	assert_ptr_equal(t.e.op_context, ctx);
	if (t.e.flags & FI_RECV)
		assert_int_equal(t.e.len, len);
}

/* One message of len bytes a -> b after the refused calls: nothing they
 * did was left posted (the receive of len bytes takes it, not a stale
 * one), and the data is right. */
static void check_alive(struct tfab *f, size_t len, unsigned int seed)
{
	uint8_t *src = malloc(len), *dst = calloc(1, len);
	int sctx, rctx;

	assert_non_null(src);
	assert_non_null(dst);
	tfab_fill(src, len, seed);
	tfab_recv(f, dst, len, 0, false, &rctx);
	tfab_send(f, src, len, 0, false, &sctx);
	expect_ok(f, &f->b, &rctx, len);
	expect_ok(f, &f->a, &sctx, len);
	tfab_check(dst, len, seed);
	free(src);
	free(dst);
}

/* A receive into NULL with a nonzero length, in every posting variant,
 * is refused; before, recvv/recvmsg took it and the arrival of a message
 * wrote through NULL. */
static void test_null_buffer(void **state)
{
	struct iovec iov = { .iov_base = NULL, .iov_len = 100 };
	struct fi_msg_tagged tmsg = { .msg_iov = &iov, .iov_count = 1,
				      .addr = FI_ADDR_UNSPEC };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1,
			      .addr = FI_ADDR_UNSPEC };
	struct tfab f;

	(void)state;
	tfab_open(&f, 0, true);
	tfab_hello(&f);
	assert_int_equal(fi_recv(f.b.ep, NULL, 100, NULL, FI_ADDR_UNSPEC,
				 NULL), -FI_EINVAL);
	assert_int_equal(fi_trecv(f.b.ep, NULL, 100, NULL, FI_ADDR_UNSPEC, 1,
				  0, NULL), -FI_EINVAL);
	assert_int_equal(fi_recvv(f.b.ep, &iov, NULL, 1, FI_ADDR_UNSPEC, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_trecvv(f.b.ep, &iov, NULL, 1, FI_ADDR_UNSPEC, 1, 0,
				   NULL), -FI_EINVAL);
	assert_int_equal(fi_recvmsg(f.b.ep, &msg, 0), -FI_EINVAL);
	assert_int_equal(fi_trecvmsg(f.b.ep, &tmsg, 0), -FI_EINVAL);
	/* the sending side: nothing to read the payload from */
	assert_int_equal(fi_send(f.a.ep, NULL, 100, NULL, f.a.peer, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_sendv(f.a.ep, &iov, NULL, 1, f.a.peer, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_inject(f.a.ep, NULL, 8, f.a.peer), -FI_EINVAL);
	check_alive(&f, 100, 3);
	/* NULL with length 0 is a zero-byte message, as before */
	assert_int_equal(fi_recv(f.b.ep, NULL, 0, NULL, FI_ADDR_UNSPEC, &f),
			 0);
	TFAB_POST(&f, fi_send(f.a.ep, NULL, 0, NULL, f.a.peer, &f.a));
	expect_ok(&f, &f.b, &f, 0);
	expect_ok(&f, &f.a, &f.a, 0);
	tfab_close(&f);
}

/* A NULL message descriptor to any *msg call is refused where it is made,
 * not dereferenced; the endpoint goes on working. */
static void test_null_msg(void **state)
{
	struct fi_ioc res = { 0 };
	struct tfab f;

	(void)state;
	tfab_open(&f, 0, true);
	tfab_hello(&f);
	assert_int_equal(fi_sendmsg(f.a.ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_tsendmsg(f.a.ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_recvmsg(f.b.ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_trecvmsg(f.b.ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_readmsg(f.a.ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_writemsg(f.a.ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_atomicmsg(f.a.ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_fetch_atomicmsg(f.a.ep, NULL, &res, NULL, 1, 0),
			 -FI_EINVAL);
	assert_int_equal(fi_compare_atomicmsg(f.a.ep, NULL, &res, NULL, 1,
					      &res, NULL, 1, 0), -FI_EINVAL);
	check_alive(&f, 100, 3);
	tfab_close(&f);
}

/* Four iovs each way (the advertised iov_limit) at the eager, medium and
 * long sizes: every byte lands where it should. */
static void iov4_roundtrip(struct tfab *f, size_t len, unsigned int seed)
{
	uint8_t *src = malloc(len), *dst = calloc(1, len + 1);
	const size_t cut[4] = { 0, len / 7, len / 2, len - len / 5 };
	struct iovec siov[4], riov[4];
	int sctx, rctx, i;

	assert_non_null(src);
	assert_non_null(dst);
	tfab_fill(src, len, seed);
	for (i = 0; i < 4; i++) {
		size_t end = i < 3 ? cut[i + 1] : len;

		siov[i].iov_base = src + cut[i];
		siov[i].iov_len = end - cut[i];
		/* the receive cuts elsewhere, so pieces straddle */
		riov[i].iov_base = dst + (i ? len / 4 * (size_t)i + 1 : 0);
		riov[i].iov_len = (i < 3 ? len / 4 * (size_t)(i + 1) + 1 :
				   len) - (i ? len / 4 * (size_t)i + 1 : 0);
	}
	TFAB_POST(f, fi_recvv(f->b.ep, riov, NULL, 4, FI_ADDR_UNSPEC, &rctx));
	TFAB_POST(f, fi_sendv(f->a.ep, siov, NULL, 4, f->a.peer, &sctx));
	expect_ok(f, &f->b, &rctx, len);
	expect_ok(f, &f->a, &sctx, len);
	tfab_check(dst, len, seed);
	assert_int_equal(dst[len], 0);
	free(src);
	free(dst);
}

static void test_iov_limit(void **state)
{
	uint8_t buf[64] = { 0 };
	struct iovec iov[5];
	struct fid_ep *ep2;
	struct fi_info *info2;
	struct tfab f;
	int i, ctx;

	(void)state;
	tfab_open(&f, 0, true);
	assert_int_equal(f.info->tx_attr->iov_limit, 4);
	assert_int_equal(f.info->rx_attr->iov_limit, 4);
	iov4_roundtrip(&f, 64, 1);
	iov4_roundtrip(&f, 3 * f.mtu + 5, 2);
	iov4_roundtrip(&f, 1 << 20, 3);
	for (i = 0; i < 5; i++) {
		iov[i].iov_base = buf + 8 * i;
		iov[i].iov_len = 8;
	}
	assert_int_equal(fi_sendv(f.a.ep, iov, NULL, 5, f.a.peer, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_recvv(f.b.ep, iov, NULL, 5, FI_ADDR_UNSPEC, NULL),
			 -FI_EINVAL);

	/* an endpoint opened with iov_limit 2 keeps to it */
	info2 = fi_dupinfo(f.info);
	assert_non_null(info2);
	info2->tx_attr->iov_limit = 2;
	info2->rx_attr->iov_limit = 2;
	assert_int_equal(fi_endpoint(f.domain, info2, &ep2, NULL), 0);
	fi_freeinfo(info2);
	assert_int_equal(fi_ep_bind(ep2, &f.a.cq->fid, FI_TRANSMIT | FI_RECV),
			 0);
	assert_int_equal(fi_ep_bind(ep2, &f.a.av->fid, 0), 0);
	assert_int_equal(fi_enable(ep2), 0);
	for (i = 3; i <= 4; i++) {
		assert_int_equal(fi_sendv(ep2, iov, NULL, (size_t)i, f.a.peer,
					  NULL), -FI_EINVAL);
		assert_int_equal(fi_recvv(ep2, iov, NULL, (size_t)i,
					  FI_ADDR_UNSPEC, NULL), -FI_EINVAL);
	}
	tfab_fill(buf, 16, 9);
	TFAB_POST(&f, fi_recv(f.b.ep, buf + 32, 32, NULL, FI_ADDR_UNSPEC,
			      &ctx));
	TFAB_POST(&f, fi_sendv(ep2, iov, NULL, 2, f.a.peer, &f));
	expect_ok(&f, &f.b, &ctx, 16);
	expect_ok(&f, &f.a, &f, 16);
	tfab_check(buf + 32, 16, 9);
	assert_int_equal(fi_close(&ep2->fid), 0);
	tfab_close(&f);
}

/* iov lengths whose sum wraps around size_t: refused, not truncated to
 * the wrapped sum. */
static void test_iov_overflow(void **state)
{
	uint8_t buf[16];
	struct iovec iov[2] = {
		{ .iov_base = buf, .iov_len = SIZE_MAX - 3 },
		{ .iov_base = buf + 8, .iov_len = 8 },
	};
	struct tfab f;

	(void)state;
	tfab_open(&f, 0, true);
	tfab_hello(&f);
	assert_int_equal(fi_recvv(f.b.ep, iov, NULL, 2, FI_ADDR_UNSPEC, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_sendv(f.a.ep, iov, NULL, 2, f.a.peer, NULL),
			 -FI_EINVAL);
	check_alive(&f, 16, 5);
	tfab_close(&f);
}

/* ---- max_msg_size ------------------------------------------------------ */

static int getinfo_max_msg(size_t max_msg_size, struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	assert_non_null(hints);
	hints->caps = FI_MSG | FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->ep_attr->max_msg_size = max_msg_size;
	hints->fabric_attr->prov_name = strdup("srd");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, info);
	fi_freeinfo(hints);
	return ret;
}

/* Receivers drop messages of 4 GiB and more, so that is not offered, a
 * hint asking for it finds nothing, and a send of it is refused before a
 * byte moves (the iovs below cover 4 GiB of a 16-byte buffer: any
 * attempt to send them would fault or read garbage). */
static void test_max_msg_size(void **state)
{
	uint8_t buf[16] = { 0 };
	struct iovec iov[2] = {
		{ .iov_base = buf, .iov_len = (size_t)1 << 31 },
		{ .iov_base = buf, .iov_len = (size_t)1 << 31 },
	};
	struct fi_info *info = NULL;
	struct tfab f;

	(void)state;
	tfab_open(&f, 0, true);
	assert_true(f.info->ep_attr->max_msg_size == UINT32_MAX);
	assert_int_equal(getinfo_max_msg((size_t)UINT32_MAX + 1, &info),
			 -FI_ENODATA);
	assert_null(info);
	assert_int_equal(getinfo_max_msg(UINT32_MAX, &info), 0);
	assert_true(info->ep_attr->max_msg_size == UINT32_MAX);
	fi_freeinfo(info);
	tfab_hello(&f);
	assert_int_equal(fi_sendv(f.a.ep, iov, NULL, 2, f.a.peer, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_tsendv(f.a.ep, iov, NULL, 2, f.a.peer, 1, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_send(f.a.ep, buf, (size_t)1 << 32, NULL, f.a.peer,
				 NULL), -FI_EINVAL);
	check_alive(&f, 16, 7);
	tfab_close(&f);
}

/* ---- memory registration ---------------------------------------------- */

/* fi_mr_reg of memory that is not mapped as asked: refused, as
 * ibv_reg_mr refuses it (softsrd registered anything, and a peer's RMA
 * then read or wrote past the mapping). */
static void test_mr_unmapped(void **state)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct fid_mr *mr;
	struct tfab f;
	uint8_t *p;

	(void)state;
	tfab_open(&f, 0, true);
	/* one readable page and a hole after it (a lone mapping may have
	 * neighbours, the sanitizers' among them) */
	p = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(munmap(p + pg, pg), 0);
	assert_int_equal(fi_mr_reg(f.domain, p, 1 << 20, FI_REMOTE_READ, 0, 0,
				   0, &mr, NULL), -FI_EFAULT);
	assert_int_equal(fi_mr_reg(f.domain, p, (size_t)1 << 50,
				   FI_REMOTE_READ, 0, 0, 0, &mr, NULL),
			 -FI_EFAULT);
	assert_int_equal(fi_mr_reg(f.domain, p, pg, FI_REMOTE_WRITE, 0, 0, 0,
				   &mr, NULL), -FI_EACCES);
	assert_int_equal(fi_mr_reg(f.domain, p, pg, FI_REMOTE_READ, 0, 0, 0,
				   &mr, NULL), 0);
	assert_int_equal(fi_close(&mr->fid), 0);
	assert_int_equal(munmap(p, pg), 0);
	tfab_close(&f);
}

/* ---- FI_SRD_SOFT_MTU not a multiple of 8 ----------------------------- */

static bool aligned(const void *p)
{
	return (uintptr_t)p % 8 == 0;
}

/* The documented maximum MTU, 65423: every packet buffer is aligned for
 * the headers read in place (UBSan caught misaligned struct srd_pkt_msg
 * accesses before), and messages of every protocol arrive intact. */
static void child_odd_mtu(void **state)
{
	const size_t len[] = { 0, 1, 65423 - 64, 65423 - 63, 65423 * 2 + 3,
			       1 << 20 };
	struct srd_ep *ep;
	struct tfab f;
	uint32_t i;

	(void)state;
	tfab_open(&f, 0, true);
	assert_int_equal(f.mtu, 65423);
	ep = to_srd_ep(f.a.ep);
	for (i = 0; i < ep->tx_count; i++)
		assert_true(aligned(ep->txbufs[i].data));
	for (i = 0; i < ep->rx_count; i++)
		assert_true(aligned(ep->rxbufs[i].data));
	for (i = 0; i < sizeof(len) / sizeof(len[0]); i++)
		check_alive(&f, len[i], i + 1);
	tfab_close(&f);
}

static void test_odd_mtu(void **state)
{
	const char *const env[] = { "FI_SRD_SOFT_MTU", "65423", NULL };

	(void)state;
	run_child("odd_mtu", env);
}

/* ---- a shallow device send queue ----------------------------------- */

/* 8-byte ping-pong both ways, then messages of every protocol: with a
 * send queue of 1 the endpoint could not open ("registering 0 bytes of
 * packet buffers"), with 2 or 3 the first message took the only packet
 * buffer and the handshake it started waited for it forever. */
static void child_small_sq(void **state)
{
	uint64_t ping = 0, pong = 0;
	struct tfab f;
	int i, ctx;

	(void)state;
	tfab_open(&f, 0, true);
	for (i = 0; i < 50; i++) {
		uint64_t v = 0x5eed0000u + (uint64_t)i;

		TFAB_POST(&f, fi_recv(f.b.ep, &ping, 8, NULL, FI_ADDR_UNSPEC,
				      &ctx));
		TFAB_POST(&f, fi_send(f.a.ep, &v, 8, NULL, f.a.peer, &f));
		expect_ok(&f, &f.b, &ctx, 8);
		expect_ok(&f, &f.a, &f, 8);
		assert_int_equal(ping, v);
		TFAB_POST(&f, fi_recv(f.a.ep, &pong, 8, NULL, FI_ADDR_UNSPEC,
				      &ctx));
		TFAB_POST(&f, fi_send(f.b.ep, &ping, 8, NULL, f.b.peer, &f));
		expect_ok(&f, &f.a, &ctx, 8);
		expect_ok(&f, &f.b, &f, 8);
		assert_int_equal(pong, v);
	}
	check_alive(&f, f.eager_max, 1);
	check_alive(&f, 3 * f.mtu + 1, 2);
	check_alive(&f, 1 << 20, 3);
	tfab_close(&f);
}

static void test_small_sq(void **state)
{
	const char *const env1[] = { "FI_SRD_SOFT_MAX_SQ_WR", "1", NULL };
	const char *const env2[] = { "FI_SRD_SOFT_MAX_SQ_WR", "2", NULL };
	const char *const env3[] = { "FI_SRD_SOFT_MAX_SQ_WR", "3", NULL };

	(void)state;
	run_child("small_sq", env1);
	run_child("small_sq", env2);
	run_child("small_sq", env3);
}

/* ---- main -------------------------------------------------------------- */

struct child_group {
	const char *name;
	const struct CMUnitTest *tests;
	size_t count;
};

#define CHILD(n, ...)							\
	{ n, (const struct CMUnitTest[]){ __VA_ARGS__ },		\
	  sizeof((const struct CMUnitTest[]){ __VA_ARGS__ }) /		\
		sizeof(struct CMUnitTest) }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_buffer),
		cmocka_unit_test(test_null_msg),
		cmocka_unit_test(test_iov_limit),
		cmocka_unit_test(test_iov_overflow),
		cmocka_unit_test(test_max_msg_size),
		cmocka_unit_test(test_mr_unmapped),
		cmocka_unit_test(test_odd_mtu),
		cmocka_unit_test(test_small_sq),
	};
	const struct child_group children[] = {
		CHILD("odd_mtu", cmocka_unit_test(child_odd_mtu)),
		CHILD("small_sq", cmocka_unit_test(child_small_sq)),
	};
	size_t i;

	tfab_env();
	if (argc < 2)
		return cmocka_run_group_tests_name("srd_rdm_limits", tests,
						   NULL, NULL);
	for (i = 0; i < sizeof(children) / sizeof(children[0]); i++)
		if (!strcmp(argv[1], children[i].name))
			return _cmocka_run_group_tests(children[i].name,
						       children[i].tests,
						       children[i].count,
						       NULL, NULL);
	fprintf(stderr, "no child group %s\n", argv[1]);
	return 2;
}
