/* SPDX-License-Identifier: MIT */
#include "util_test.h"
#include "weft/core.h"
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static struct fid_cq *cq_open(struct test_env *env, enum fi_cq_format format,
			      size_t size, enum fi_wait_obj wait)
{
	struct fi_cq_attr attr = { .format = format, .size = size,
				   .wait_obj = wait };
	struct fid_cq *cq = NULL;

	assert_int_equal(fi_cq_open(env->domain, &attr, &cq, NULL), 0);
	return cq;
}

static void write_n(struct fid_cq *cq, int n, int base)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(util_cq_write_src(to_util_cq(cq),
				(void *)(uintptr_t)(base + i + 1),
				FI_RECV | FI_TAGGED, 100 + base + i,
				(void *)(uintptr_t)(0x1000 + base + i),
				200 + base + i, 300 + base + i,
				(fi_addr_t)(400 + base + i)), 0);
}

static void test_cq_format_context(void **state)
{
	struct test_env env;
	struct fi_cq_entry e[4];
	struct fid_cq *cq;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	/* UNSPEC reads as CONTEXT. */
	for (int f = 0; f < 2; f++) {
		cq = cq_open(&env, f ? FI_CQ_FORMAT_CONTEXT :
				    FI_CQ_FORMAT_UNSPEC, 0, FI_WAIT_NONE);
		write_n(cq, 3, 0);
		assert_int_equal(fi_cq_read(cq, e, 4), 3);
		for (int i = 0; i < 3; i++)
			assert_ptr_equal(e[i].op_context,
					 (void *)(uintptr_t)(i + 1));
		assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAGAIN);
		assert_int_equal(fi_close(&cq->fid), 0);
	}
	test_env_close(&env);
}

static void test_cq_format_msg(void **state)
{
	struct test_env env;
	struct fi_cq_msg_entry e[4];
	struct fid_cq *cq;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, FI_CQ_FORMAT_MSG, 0, FI_WAIT_NONE);
	write_n(cq, 2, 0);
	assert_int_equal(fi_cq_read(cq, e, 4), 2);
	for (int i = 0; i < 2; i++) {
		assert_ptr_equal(e[i].op_context, (void *)(uintptr_t)(i + 1));
		assert_int_equal(e[i].flags, FI_RECV | FI_TAGGED);
		assert_int_equal(e[i].len, 100 + i);
	}
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

static void test_cq_format_data(void **state)
{
	struct test_env env;
	struct fi_cq_data_entry e[4];
	struct fid_cq *cq;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, FI_CQ_FORMAT_DATA, 0, FI_WAIT_NONE);
	write_n(cq, 2, 0);
	assert_int_equal(fi_cq_read(cq, e, 4), 2);
	for (int i = 0; i < 2; i++) {
		assert_ptr_equal(e[i].op_context, (void *)(uintptr_t)(i + 1));
		assert_int_equal(e[i].flags, FI_RECV | FI_TAGGED);
		assert_int_equal(e[i].len, 100 + i);
		assert_ptr_equal(e[i].buf, (void *)(uintptr_t)(0x1000 + i));
		assert_int_equal(e[i].data, 200 + i);
	}
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

static void test_cq_format_tagged_readfrom(void **state)
{
	struct test_env env;
	struct fi_cq_tagged_entry e[8];
	fi_addr_t src[8];
	struct fid_cq *cq;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, FI_CQ_FORMAT_TAGGED, 0, FI_WAIT_NONE);
	write_n(cq, 5, 0);
	util_cq_write(to_util_cq(cq), (void *)99, FI_SEND, 0, NULL, 0, 0);
	/* Partial reads keep the order. */
	assert_int_equal(fi_cq_readfrom(cq, e, 2, src), 2);
	assert_int_equal(fi_cq_readfrom(cq, e + 2, 8, src + 2), 4);
	for (int i = 0; i < 5; i++) {
		assert_ptr_equal(e[i].op_context, (void *)(uintptr_t)(i + 1));
		assert_int_equal(e[i].len, 100 + i);
		assert_ptr_equal(e[i].buf, (void *)(uintptr_t)(0x1000 + i));
		assert_int_equal(e[i].data, 200 + i);
		assert_int_equal(e[i].tag, 300 + i);
		assert_int_equal(src[i], 400 + i);
	}
	assert_ptr_equal(e[5].op_context, (void *)99);
	assert_int_equal(src[5], FI_ADDR_NOTAVAIL);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

static void write_err(struct fid_cq *cq, void *ctx, int err, const void *data,
		      size_t data_size)
{
	struct fi_cq_err_entry e = {
		.op_context = ctx, .flags = FI_RECV, .len = 5, .olen = 77,
		.err = err, .prov_errno = 1234, .tag = 42,
		.err_data = (void *)data, .err_data_size = data_size,
	};

	assert_int_equal(util_cq_write_err(to_util_cq(cq), &e, 9), 0);
}

static void test_cq_error_in_order(void **state)
{
	struct test_env env;
	struct fi_cq_tagged_entry e[4];
	struct fi_cq_err_entry err;
	char user[16];
	const char data[] = "provider-detail";
	struct fid_cq *cq;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, FI_CQ_FORMAT_TAGGED, 0, FI_WAIT_NONE);
	write_n(cq, 1, 0);
	write_err(cq, (void *)7, FI_ETRUNC, data, sizeof(data));
	write_n(cq, 1, 10);

	/* readerr before the error reaches the head: nothing */
	memset(&err, 0, sizeof(err));
	assert_int_equal(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
	assert_int_equal(fi_cq_read(cq, e, 4), 1);
	assert_ptr_equal(e[0].op_context, (void *)1);
	assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAVAIL);
	assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAVAIL);

	/* API >= 1.5 with a user buffer: copied, cut to its size */
	memset(&err, 0, sizeof(err));
	err.err_data = user;
	err.err_data_size = 4;
	assert_int_equal(fi_cq_readerr(cq, &err, 0), 1);
	assert_ptr_equal(err.op_context, (void *)7);
	assert_int_equal(err.err, FI_ETRUNC);
	assert_int_equal(err.prov_errno, 1234);
	assert_int_equal(err.olen, 77);
	assert_int_equal(err.len, 5);
	assert_int_equal(err.tag, 42);
	assert_ptr_equal(err.err_data, user);
	assert_int_equal(err.err_data_size, 4);
	assert_memory_equal(user, "prov", 4);

	assert_int_equal(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
	assert_int_equal(fi_cq_read(cq, e, 4), 1);
	assert_ptr_equal(e[0].op_context, (void *)11);
	assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAGAIN);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

static void test_cq_err_data_provider_buffer(void **state)
{
	struct test_env env;
	struct fi_cq_err_entry err;
	const char data[] = "0123456789";
	struct fid_cq *cq;

	/* API 1.4: err_data points into the CQ, whatever the caller set. */
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 4),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, FI_CQ_FORMAT_CONTEXT, 0, FI_WAIT_NONE);
	write_err(cq, (void *)3, FI_EIO, data, sizeof(data));
	memset(&err, 0, sizeof(err));
	assert_int_equal(fi_cq_readerr(cq, &err, 0), 1);
	assert_int_equal(err.err, FI_EIO);
	assert_non_null(err.err_data);
	assert_int_equal(err.err_data_size, sizeof(data));
	assert_memory_equal(err.err_data, data, sizeof(data));
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);

	/* API 1.17 with err_data_size 0: also the CQ's buffer. */
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, FI_CQ_FORMAT_CONTEXT, 0, FI_WAIT_NONE);
	write_err(cq, (void *)3, FI_EIO, data, sizeof(data));
	memset(&err, 0, sizeof(err));
	assert_int_equal(fi_cq_readerr(cq, &err, 0), 1);
	assert_int_equal(err.err_data_size, sizeof(data));
	assert_memory_equal(err.err_data, data, sizeof(data));
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

static void test_cq_overflow_keeps_order(void **state)
{
	struct test_env env;
	struct fi_cq_entry e[3];
	struct fi_cq_err_entry err = { 0 };
	struct fid_cq *cq;
	int next = 1, n;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, FI_CQ_FORMAT_CONTEXT, 3, FI_WAIT_NONE);
	/* size 3 rounds up to 4 */
	assert_int_equal(util_cq_space(to_util_cq(cq)), 4);
	write_n(cq, 6, 0);		/* contexts 1..6 */
	write_err(cq, (void *)100, FI_ECANCELED, NULL, 0);
	write_n(cq, 4, 6);		/* contexts 7..10 */
	assert_int_equal(util_cq_space(to_util_cq(cq)), 0);
	assert_int_equal(util_cq_count(to_util_cq(cq)), 11);

	while ((n = (int)fi_cq_read(cq, e, 3)) > 0)
		for (int i = 0; i < n; i++)
			assert_ptr_equal(e[i].op_context,
					 (void *)(uintptr_t)next++);
	assert_int_equal(next, 7);
	assert_int_equal(n, -FI_EAVAIL);
	assert_int_equal(fi_cq_readerr(cq, &err, 0), 1);
	assert_ptr_equal(err.op_context, (void *)100);
	assert_int_equal(err.err, FI_ECANCELED);
	while ((n = (int)fi_cq_read(cq, e, 3)) > 0)
		for (int i = 0; i < n; i++)
			assert_ptr_equal(e[i].op_context,
					 (void *)(uintptr_t)next++);
	assert_int_equal(next, 11);
	assert_int_equal(n, -FI_EAGAIN);
	assert_int_equal(util_cq_space(to_util_cq(cq)), 4);

	/* Overflow nodes are reused and the ring wraps many times. */
	next = 1;
	for (int round = 0; round < 50; round++) {
		write_n(cq, 7, round * 7);
		while ((n = (int)fi_cq_read(cq, e, 3)) > 0)
			for (int i = 0; i < n; i++)
				assert_ptr_equal(e[i].op_context,
						 (void *)(uintptr_t)next++);
	}
	assert_int_equal(next, 351);
	/* close with entries and errors still queued frees them */
	write_n(cq, 9, 0);
	write_err(cq, (void *)5, FI_EIO, "x", 1);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

/* A CQ and a test endpoint bound to it for both directions, so that every
 * read progresses the endpoint once. */
static struct fid_cq *cq_with_ep(struct test_env *env,
				 enum fi_threading threading,
				 enum fi_cq_format format, size_t size,
				 struct test_ep **ep)
{
	struct fid_cq *cq;

	assert_int_equal(test_env_open(env, FI_VERSION(1, 17), threading, 0),
			 0);
	cq = cq_open(env, format, size, FI_WAIT_NONE);
	*ep = test_ep_open(env);
	assert_int_equal(fi_ep_bind(&(*ep)->util.ep_fid, &cq->fid,
				    FI_TRANSMIT | FI_RECV), 0);
	return cq;
}

static void test_cq_read_runs_progress(void **state)
{
	struct test_env env;
	struct fi_cq_entry e[4];
	struct fid_cq *cq;
	struct test_ep *ep;
	fi_addr_t src[4];

	cq = cq_with_ep(&env, FI_THREAD_DOMAIN, FI_CQ_FORMAT_CONTEXT, 0, &ep);
	assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAGAIN);
	assert_int_equal(ep->progress_calls, 1);
	ep->pending[0] = (void *)11;
	ep->pending[1] = (void *)12;
	ep->npending = 2;
	assert_int_equal(fi_cq_readfrom(cq, e, 4, src), 2);
	assert_int_equal(ep->progress_calls, 2);
	assert_ptr_equal(e[0].op_context, (void *)11);
	assert_ptr_equal(e[1].op_context, (void *)12);
	assert_int_equal(src[0], 0);
	assert_int_equal(src[1], 1);

	/* a CQ with a bound endpoint cannot close */
	assert_int_equal(fi_close(&cq->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&env.domain->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	/* no endpoint any more: no progress */
	assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAGAIN);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

static void read_expect(struct fid_cq *cq, ssize_t want, const int *ctx,
			const fi_addr_t *src)
{
	struct fi_cq_tagged_entry e[8];
	fi_addr_t got[8];

	assert_int_equal(fi_cq_readfrom(cq, e, 4, got), want);
	for (ssize_t i = 0; i < want; i++) {
		assert_ptr_equal(e[i].op_context, (void *)(uintptr_t)ctx[i]);
		if (src)
			assert_int_equal(got[i], src[i]);
	}
}

/* Completions written by the progress of a read land in the reader's
 * buffer directly, but never ahead of anything already queued: ring
 * entries, errors, and what did not fit the read stay in order. */
static void test_cq_read_direct_order(void **state)
{
	struct test_env env;
	struct fi_cq_err_entry err = { 0 };
	struct fid_cq *cq;
	struct test_ep *ep;

	/* one ring slot: anything beyond it that went through the ring
	 * would need overflow nodes */
	cq = cq_with_ep(&env, FI_THREAD_SAFE, FI_CQ_FORMAT_TAGGED, 1, &ep);

	/* Nothing queued: all three go to the caller's buffer directly. */
	ep->pending[0] = (void *)1;
	ep->pending[1] = (void *)2;
	ep->pending[2] = (void *)3;
	ep->npending = 3;
	read_expect(cq, 3, (const int[]){ 1, 2, 3 },
		    (const fi_addr_t[]){ 0, 1, 2 });
	assert_null(to_util_cq(cq)->ovf_free);

	/* More than the read takes: the rest waits in the ring. */
	for (int i = 0; i < 6; i++)
		ep->pending[i] = (void *)(uintptr_t)(4 + i);
	ep->npending = 6;
	read_expect(cq, 4, (const int[]){ 4, 5, 6, 7 },
		    (const fi_addr_t[]){ 0, 1, 2, 3 });
	assert_int_equal(util_cq_count(to_util_cq(cq)), 2);
	/* ...and a later completion goes behind it, not into the read (a
	 * one-slot ring hands out one entry per read). */
	ep->pending[0] = (void *)10;
	ep->npending = 1;
	read_expect(cq, 1, (const int[]){ 8 }, (const fi_addr_t[]){ 4 });
	read_expect(cq, 1, (const int[]){ 9 }, (const fi_addr_t[]){ 5 });
	read_expect(cq, 1, (const int[]){ 10 }, (const fi_addr_t[]){ 0 });

	/* An error already queued is not overtaken. */
	write_err(cq, (void *)11, FI_EIO, NULL, 0);
	ep->pending[0] = (void *)12;
	ep->npending = 1;
	assert_int_equal(fi_cq_read(cq, NULL, 0), -FI_EAVAIL);
	read_expect(cq, -FI_EAVAIL, NULL, NULL);
	assert_int_equal(fi_cq_readerr(cq, &err, 0), 1);
	assert_ptr_equal(err.op_context, (void *)11);
	read_expect(cq, 1, (const int[]){ 12 }, NULL);
	assert_int_equal(fi_cq_read(cq, NULL, 0), -FI_EAGAIN);

	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

struct direct_writer {
	struct fid_cq *cq;
	int n;
};

static void *direct_writer_thread(void *arg)
{
	struct direct_writer *w = arg;

	for (int i = 0; i < w->n; i++)
		while (util_cq_write_src(to_util_cq(w->cq),
					 (void *)(uintptr_t)(i + 1), FI_RECV,
					 0, NULL, 0, 0, 7) == -FI_ENOMEM)
			;
	return NULL;
}

/* Another thread's completions never land in a reader's buffer out of
 * order with the ones this thread's progress writes directly: the reader
 * sees the writer's in order, and its own in order, nothing lost. */
static void test_cq_read_direct_threads(void **state)
{
	struct test_env env;
	struct direct_writer w = { .n = 100000 };
	struct fi_cq_entry e[4];
	struct fid_cq *cq;
	struct test_ep *ep;
	uintptr_t next_w = 1, next_own = 1000001, got = 0;
	pthread_t t;
	int queued = 0;

	cq = cq_with_ep(&env, FI_THREAD_SAFE, FI_CQ_FORMAT_CONTEXT, 64, &ep);
	w.cq = cq;
	assert_int_equal(pthread_create(&t, NULL, direct_writer_thread, &w),
			 0);
	while (got < (uintptr_t)w.n + 100000) {
		ssize_t n;

		/* progress runs under the endpoint's lock, the test ep's
		 * pending list is only touched by this thread */
		if (!ep->npending && queued < 100000) {
			ep->pending[0] = (void *)(1000001 + (uintptr_t)queued++);
			ep->npending = 1;
		}
		n = fi_cq_read(cq, e, 4);
		for (ssize_t i = 0; i < n; i++, got++) {
			uintptr_t c = (uintptr_t)e[i].op_context;

			if (c > 1000000)
				assert_int_equal(c, next_own++);
			else
				assert_int_equal(c, next_w++);
		}
	}
	pthread_join(t, NULL);
	assert_int_equal(next_w, (uintptr_t)w.n + 1);
	assert_int_equal(next_own, 1000001 + 100000);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

struct direct_reader {
	struct fid_cq *cq;
	struct test_ep *ep;
	uintptr_t base;			/* ids base+1 .. base+n */
	int n;
	uint8_t *seen;			/* by id - 1, shared */
	atomic_int *got;		/* completions read by both */
	int total;
};

static void *direct_reader_thread(void *arg)
{
	struct direct_reader *r = arg;
	struct fi_cq_entry e[4];
	int queued = 0;

	/* the test ep's progress runs under the CQ's progress-list lock */
	struct util_lock *plock = &to_util_cq(r->cq)->progress.lock;
	/* a lost completion would otherwise spin here forever */
	time_t deadline = time(NULL) + 60;

	while (atomic_load(r->got) < r->total) {
		assert_true(time(NULL) < deadline);
		util_lock_acquire(plock);
		if (queued < r->n && r->ep->npending < TEST_EP_PENDING)
			r->ep->pending[r->ep->npending++] =
				(void *)(r->base + (uintptr_t)++queued);
		util_lock_release(plock);
		ssize_t n = fi_cq_read(r->cq, e, 4);

		for (ssize_t i = 0; i < n; i++) {
			uintptr_t c = (uintptr_t)e[i].op_context;

			assert_true(c >= 1 && c <= (uintptr_t)r->total);
			assert_int_equal(r->seen[c - 1]++, 0);
		}
		if (n > 0)
			atomic_fetch_add(r->got, (int)n);
	}
	return NULL;
}

/* Two threads read one CQ at once, each running the progress that writes
 * the other's completions too: one reader at a time holds the CQ's direct
 * slot, and every completion is read exactly once by one of them. */
static void test_cq_read_direct_two_readers(void **state)
{
	enum { PER_THREAD = 50000 };
	static uint8_t seen[2 * PER_THREAD];
	struct test_env env;
	struct test_ep *ep;
	struct fid_cq *cq;
	atomic_int got = 0;
	struct direct_reader r[2];
	pthread_t t[2];

	memset(seen, 0, sizeof(seen));
	cq = cq_with_ep(&env, FI_THREAD_SAFE, FI_CQ_FORMAT_CONTEXT, 64, &ep);
	for (int i = 0; i < 2; i++) {
		r[i] = (struct direct_reader){
			.cq = cq, .ep = ep, .base = (uintptr_t)i * PER_THREAD,
			.n = PER_THREAD, .seen = seen, .got = &got,
			.total = 2 * PER_THREAD,
		};
		assert_int_equal(pthread_create(&t[i], NULL,
						direct_reader_thread, &r[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2 * PER_THREAD; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

/* An empty read counts towards FI_POLL_YIELD; the read that reaches the
 * budget yields and starts over; a read that finds something resets it. */
static void test_cq_idle_yield_budget(void **state)
{
	struct test_env env;
	struct fi_cq_entry e[4];
	struct fid_cq *cq;
	struct test_ep *ep;
	struct util_cq *ucq;

	cq = cq_with_ep(&env, FI_THREAD_DOMAIN, FI_CQ_FORMAT_CONTEXT, 0, &ep);
	ucq = to_util_cq(cq);
	assert_int_equal(ucq->idle.budget, weft_poll_yield);
	ucq->idle.budget = 10;
	for (int i = 1; i < 10; i++) {
		assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAGAIN);
		assert_int_equal(ucq->idle.count, i);
	}
	assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAGAIN);
	assert_int_equal(ucq->idle.count, 0);
	assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAGAIN);
	ep->pending[0] = (void *)5;
	ep->npending = 1;
	assert_int_equal(fi_cq_read(cq, e, 4), 1);
	assert_int_equal(ucq->idle.count, 0);
	/* 0: never yields, the count keeps growing */
	ucq->idle.budget = 0;
	for (int i = 0; i < 20; i++)
		assert_int_equal(fi_cq_read(cq, e, 4), -FI_EAGAIN);
	assert_int_equal(ucq->idle.count, 20);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

static void test_cq_sread_timeout(void **state)
{
	struct test_env env;
	struct fi_cq_entry e;
	enum fi_wait_obj waits[] = { FI_WAIT_NONE, FI_WAIT_UNSPEC, FI_WAIT_FD,
				     FI_WAIT_YIELD };

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	for (size_t i = 0; i < WEFT_ARRAY_SIZE(waits); i++) {
		struct fid_cq *cq = cq_open(&env, FI_CQ_FORMAT_CONTEXT, 0,
					    waits[i]);

		assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, 0), -FI_EAGAIN);
		assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, 5), -FI_EAGAIN);
		write_n(cq, 1, 0);
		assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, 5), 1);
		assert_ptr_equal(e.op_context, (void *)1);
		assert_int_equal(fi_close(&cq->fid), 0);
	}
	test_env_close(&env);
}

struct writer_arg {
	struct fid_cq *cq;
	int delay_ms;
	bool signal;
};

static void *writer_thread(void *p)
{
	struct writer_arg *a = p;

	usleep((useconds_t)a->delay_ms * 1000);
	if (a->signal)
		fi_cq_signal(a->cq);
	else
		util_cq_write(to_util_cq(a->cq), (void *)0x77, FI_SEND, 0,
			      NULL, 0, 0);
	return NULL;
}

static void test_cq_sread_woken_by_write(void **state)
{
	struct test_env env;
	struct fi_cq_entry e;
	struct writer_arg arg;
	pthread_t t;
	struct fid_cq *cq;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	/* No slices: only the eventfd can wake the reader. */
	env.udom->wait_slice_ms = -1;
	cq = cq_open(&env, FI_CQ_FORMAT_CONTEXT, 0, FI_WAIT_FD);
	arg = (struct writer_arg){ .cq = cq, .delay_ms = 30 };
	alarm(30);	/* a lost wake-up fails the test instead of hanging */
	assert_int_equal(pthread_create(&t, NULL, writer_thread, &arg), 0);
	assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, -1), 1);
	assert_ptr_equal(e.op_context, (void *)0x77);
	pthread_join(t, NULL);

	arg.signal = true;
	assert_int_equal(pthread_create(&t, NULL, writer_thread, &arg), 0);
	assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, -1), -FI_EAGAIN);
	pthread_join(t, NULL);
	alarm(0);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

static void test_cq_fd_wait(void **state)
{
	struct test_env env;
	struct fi_cq_entry e;
	struct fid_cq *cq;
	struct fid *fids[1];
	struct pollfd pfd = { .events = POLLIN };
	int fd = -1;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, FI_CQ_FORMAT_CONTEXT, 0, FI_WAIT_FD);
	assert_int_equal(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	assert_true(fd >= 0);
	fids[0] = &cq->fid;

	assert_int_equal(fi_trywait(env.fabric, fids, 1), 0);
	pfd.fd = fd;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	write_n(cq, 1, 0);
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_true(pfd.revents & POLLIN);
	/* something to read: trywait refuses, and drains the fd */
	assert_int_equal(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	assert_int_equal(fi_cq_read(cq, &e, 1), 1);
	assert_int_equal(fi_trywait(env.fabric, fids, 1), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(fi_close(&cq->fid), 0);

	/* no fd for FI_WAIT_NONE; trywait refuses it */
	cq = cq_open(&env, FI_CQ_FORMAT_CONTEXT, 0, FI_WAIT_NONE);
	assert_int_equal(fi_control(&cq->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	fids[0] = &cq->fid;
	assert_int_equal(fi_trywait(env.fabric, fids, 1), -FI_EINVAL);
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

static void test_cq_bad_attr(void **state)
{
	struct test_env env;
	struct fi_cq_attr attr = { 0 };
	struct fid_cq *cq;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	attr.format = 99;
	assert_int_equal(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_EINVAL);
	attr.format = FI_CQ_FORMAT_MSG;
	attr.wait_obj = FI_WAIT_SET;
	assert_int_equal(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_ENOSYS);
	attr.wait_obj = FI_WAIT_MUTEX_COND;
	assert_int_equal(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_ENOSYS);
	attr.wait_obj = 77;
	assert_int_equal(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_EINVAL);
	attr.wait_obj = FI_WAIT_NONE;
	attr.size = (size_t)1 << 40;
	assert_int_equal(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_EINVAL);
	attr.size = 0;
	attr.wait_cond = 9;
	assert_int_equal(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_EINVAL);
	assert_int_equal(fi_cq_open(env.domain, NULL, &cq, NULL), -FI_EINVAL);
	test_env_close(&env);
}

static const char *test_strerror(int prov_errno, const void *err_data,
				 char *buf, size_t len)
{
	snprintf(buf, len, "prov error %d", prov_errno);
	return buf;
}

static void test_cq_strerror(void **state)
{
	struct test_env env;
	struct fid_cq *cq;
	char buf[64];

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	cq = cq_open(&env, FI_CQ_FORMAT_CONTEXT, 0, FI_WAIT_NONE);
	assert_string_equal(fi_cq_strerror(cq, FI_EIO, NULL, buf, sizeof(buf)),
			    fi_strerror(FI_EIO));
	env.udom->strerror = test_strerror;
	assert_string_equal(fi_cq_strerror(cq, 17, NULL, buf, sizeof(buf)),
			    "prov error 17");
	assert_int_equal(fi_close(&cq->fid), 0);
	test_env_close(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cq_format_context),
		cmocka_unit_test(test_cq_format_msg),
		cmocka_unit_test(test_cq_format_data),
		cmocka_unit_test(test_cq_format_tagged_readfrom),
		cmocka_unit_test(test_cq_error_in_order),
		cmocka_unit_test(test_cq_err_data_provider_buffer),
		cmocka_unit_test(test_cq_overflow_keeps_order),
		cmocka_unit_test(test_cq_read_runs_progress),
		cmocka_unit_test(test_cq_read_direct_order),
		cmocka_unit_test(test_cq_read_direct_threads),
		cmocka_unit_test(test_cq_read_direct_two_readers),
		cmocka_unit_test(test_cq_idle_yield_budget),
		cmocka_unit_test(test_cq_sread_timeout),
		cmocka_unit_test(test_cq_sread_woken_by_write),
		cmocka_unit_test(test_cq_fd_wait),
		cmocka_unit_test(test_cq_bad_attr),
		cmocka_unit_test(test_cq_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
