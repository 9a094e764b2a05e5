/* SPDX-License-Identifier: MIT */
/*
 * util_srx through a fake provider: its unexpected messages keep their
 * payload in the entry, and a message can be set to land later (a
 * transfer), which is how out-of-order slice completions are made.
 */
#include "util_test.h"

#define NUX 16
#define NPEND 8

struct fux {
	struct util_srx_unexp srx;
	uint8_t payload[128];
	bool used;
};

/* A message whose data lands later: its dest and description. */
struct pend {
	struct util_srx_dest dest;
	struct util_srx_msg m;
	uint8_t payload[128];
};

static struct {
	struct test_env env;
	struct fid_cq *cq;
	struct util_ep ep;
	struct util_srx srx;
	struct fux ux[NUX];
	struct pend pend[NPEND];
	int npend;
	bool defer;		/* matched messages land later */
	int delivered, discarded, freed, errs_written;
} T;

#define FUX(u) container_of(u, struct fux, srx)

static struct util_srx_msg msg_of(const struct util_srx_unexp *u)
{
	return (struct util_srx_msg){
		.src = u->match.src, .tag = u->match.tag, .size = u->size,
		.data = u->data, .flags = u->flags,
	};
}

/* Land a message in dest now, or later when T.defer is set. */
static void land(const struct util_srx_dest *dest,
		 const struct util_srx_msg *m, const uint8_t *payload)
{
	size_t n = m->size < dest->cap ? m->size : dest->cap;

	if (T.defer) {
		assert_true(T.npend < NPEND);
		T.pend[T.npend].dest = *dest;
		T.pend[T.npend].m = *m;
		memcpy(T.pend[T.npend].payload, payload, m->size);
		T.npend++;
		return;
	}
	util_iov_copy_to(dest->iov, dest->iov_count, 0, payload, n);
	util_srx_complete(&T.srx, dest, m, n, 0, 0);
}

static void land_pending(int i)
{
	struct pend *p = &T.pend[i];
	size_t n = p->m.size < p->dest.cap ? p->m.size : p->dest.cap;

	util_iov_copy_to(p->dest.iov, p->dest.iov_count, 0, p->payload, n);
	util_srx_complete(&T.srx, &p->dest, &p->m, n, 0, 0);
}

static int fake_deliver(struct util_srx *srx, const struct util_srx_dest *dest,
			struct util_srx_unexp *u)
{
	struct util_srx_msg m = msg_of(u);

	assert_ptr_equal(srx, &T.srx);
	land(dest, &m, FUX(u)->payload);
	FUX(u)->used = false;
	T.delivered++;
	return 0;
}

static void fake_discard(struct util_srx *srx, struct util_srx_unexp *u)
{
	(void)srx;
	FUX(u)->used = false;
	T.discarded++;
}

static void fake_free(struct util_srx *srx, struct util_srx_unexp *u)
{
	(void)srx;
	FUX(u)->used = false;
	T.freed++;
}

static int fake_write_err(struct util_srx *srx, const struct fi_cq_err_entry *e,
			  const struct util_srx_msg *m)
{
	T.errs_written++;
	return util_cq_write_err(srx->ep->rx_cq, e, m->src);
}

static const struct util_srx_ops fake_ops = {
	.deliver = fake_deliver,
	.discard = fake_discard,
	.free_unexp = fake_free,
};

static const struct util_srx_ops fake_ops_err = {
	.deliver = fake_deliver,
	.discard = fake_discard,
	.free_unexp = fake_free,
	.write_err = fake_write_err,
};

static void setup(uint64_t caps, size_t rx_size, bool selective,
		  const struct util_srx_ops *ops)
{
	struct fi_cq_attr cattr = { .format = FI_CQ_FORMAT_TAGGED };
	struct util_srx_attr attr = {
		.prov = &util_test_prov, .ops = ops, .rx_size = rx_size,
		.iov_limit = 2,
	};

	memset(&T, 0, sizeof(T));
	assert_int_equal(test_env_open(&T.env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	assert_int_equal(fi_cq_open(T.env.domain, &cattr, &T.cq, NULL), 0);
	T.ep.caps = caps;
	T.ep.min_multi_recv = 64;
	T.ep.rx_cq = to_util_cq(T.cq);
	T.ep.rx_selective = selective;
	assert_int_equal(util_lock_init(&T.ep.lock, false), 0);
	assert_int_equal(util_srx_init(&T.srx, &T.ep, &attr), 0);
}

static void teardown(void)
{
	util_srx_fini(&T.srx);
	util_lock_fini(&T.ep.lock);
	assert_int_equal(fi_close(&T.cq->fid), 0);
	test_env_close(&T.env);
}

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i);
}

static void check(const uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		assert_int_equal(p[i], (uint8_t)(seed + i));
}

/* A message of class cls arrives: to its receive, or queued unexpected. */
static void arrive_cls(unsigned int cls, fi_addr_t src, uint64_t tag,
		       size_t size, uint8_t seed, uint64_t data)
{
	struct util_srx_msg m = {
		.src = src, .tag = tag, .size = size, .data = data,
		.flags = data ? FI_REMOTE_CQ_DATA : 0,
	};
	struct util_srx_entry *e = util_srx_match(&T.srx, cls, src, tag);
	struct util_srx_dest dest;
	uint8_t payload[128];
	int i;

	assert_true(size <= sizeof(payload));
	fill(payload, size, seed);
	if (e) {
		util_srx_dest(&T.srx, e, size, &dest);
		land(&dest, &m, payload);
		return;
	}
	for (i = 0; i < NUX && T.ux[i].used; i++)
		;
	assert_true(i < NUX);
	T.ux[i].used = true;
	memcpy(T.ux[i].payload, payload, size);
	util_srx_unexp_init(&T.ux[i].srx, src, tag, size, data, m.flags);
	util_srx_add_unexp(&T.srx, cls, &T.ux[i].srx);
}

static void arrive(bool tagged, fi_addr_t src, uint64_t tag, size_t size,
		   uint8_t seed, uint64_t data)
{
	arrive_cls(tagged, src, tag, size, seed, data);
}

/* Completions of the collective class, as the engine would get them. */
static struct {
	void *ctx[8];
	size_t len[8];
	int err[8];
	int n;
} C;

static void coll_done(struct util_ep *ep, void *ctx, size_t len, int err)
{
	assert_ptr_equal(ep, &T.ep);
	assert_true(C.n < 8);
	C.ctx[C.n] = ctx;
	C.len[C.n] = len;
	C.err[C.n] = err;
	C.n++;
}

static struct fi_cq_tagged_entry get(void *context)
{
	struct fi_cq_tagged_entry e;

	assert_int_equal(fi_cq_read(T.cq, &e, 1), 1);
	assert_ptr_equal(e.op_context, context);
	return e;
}

static struct fi_cq_err_entry get_err(void *context)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = { 0 };

	assert_int_equal(fi_cq_read(T.cq, &e, 1), -FI_EAVAIL);
	assert_int_equal(fi_cq_readerr(T.cq, &err, 0), 1);
	assert_ptr_equal(err.op_context, context);
	return err;
}

static void no_comp(void)
{
	struct fi_cq_tagged_entry e;

	assert_int_equal(fi_cq_read(T.cq, &e, 1), -FI_EAGAIN);
}

static void test_srx_post(void **state)
{
	uint8_t a[40], b[10], c[30], t[20];
	struct iovec iov[3] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, 1 } };
	int ca, cb, ct, cx;
	struct fi_cq_tagged_entry e;

	(void)state;
	setup(FI_MSG | FI_TAGGED, 3, false, &fake_ops);
	assert_int_equal(util_srx_recv(&T.srx, a, sizeof(a), 0, &ca), 0);
	assert_int_equal(util_srx_recvv(&T.srx, &iov[1], 2, 0, &cb), 0);
	assert_int_equal(util_srx_trecv(&T.srx, t, sizeof(t), 0, 0x70, 0x0f,
					&ct), 0);
	/* the pool holds rx_size entries */
	assert_int_equal(util_srx_recv(&T.srx, a, 1, 0, &cx), -FI_EAGAIN);
	/* bad arguments are refused before anything is queued */
	assert_int_equal(util_srx_recvv(&T.srx, iov, 3, 0, &cx), -FI_EINVAL);
	assert_int_equal(util_srx_recv(&T.srx, NULL, 8, 0, &cx), -FI_EINVAL);
	assert_int_equal(util_srx_post(&T.srx, iov, 2, 0, 0, 0, &cx,
				       FI_MULTI_RECV), -FI_EINVAL);
	assert_int_equal(T.srx.msg_q.posted_count, 2);
	assert_int_equal(T.srx.tag_q.posted_count, 1);

	/* a tagged message goes only to the tagged receive, tag bits masked */
	arrive(true, 5, 0x7a, 16, 1, 0);
	e = get(&ct);
	assert_true(e.flags == (FI_RECV | FI_TAGGED));
	assert_int_equal(e.len, 16);
	assert_int_equal(e.tag, 0x7a);
	check(t, 16, 1);
	/* untagged ones in posting order; the second spans two iovs */
	arrive(false, 5, 0, 40, 2, 0x1234);
	e = get(&ca);
	assert_true(e.flags == (FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA));
	assert_int_equal(e.data, 0x1234);
	check(a, 40, 2);
	arrive(false, 5, 0, 11, 3, 0);
	e = get(&cb);
	assert_int_equal(e.len, 11);
	check(b, 10, 3);
	assert_int_equal(c[0], (uint8_t)(3 + 10));
	no_comp();
	assert_int_equal(T.srx.rx_pool.in_use, 0);
	teardown();
}

static void test_srx_unexpected_then_post(void **state)
{
	uint8_t a[64], b[64];
	int ca, cb, ct;
	struct fi_cq_tagged_entry e;

	(void)state;
	setup(FI_MSG | FI_TAGGED, 8, false, &fake_ops);
	arrive(false, 1, 0, 20, 10, 0);
	arrive(false, 1, 0, 30, 20, 7);
	arrive(true, 1, 0x5, 12, 30, 0);
	no_comp();
	/* oldest first, each through the deliver hook */
	assert_int_equal(util_srx_recv(&T.srx, a, sizeof(a), 0, &ca), 0);
	e = get(&ca);
	assert_int_equal(e.len, 20);
	check(a, 20, 10);
	assert_int_equal(util_srx_recv(&T.srx, b, sizeof(b), 0, &cb), 0);
	e = get(&cb);
	assert_int_equal(e.len, 30);
	assert_int_equal(e.data, 7);
	check(b, 30, 20);
	assert_int_equal(T.delivered, 2);
	/* a tagged receive for another tag leaves the tagged message */
	assert_int_equal(util_srx_trecv(&T.srx, a, sizeof(a), 0, 0x6, 0, &ct),
			 0);
	no_comp();
	assert_int_equal(T.srx.tag_q.unexp_count, 1);
	assert_int_equal(util_srx_trecv(&T.srx, b, sizeof(b), 0, 0x5, 0, &cb),
			 0);
	e = get(&cb);
	assert_int_equal(e.tag, 0x5);
	check(b, 12, 30);
	assert_int_equal(T.srx.rx_pool.in_use, 1);	/* the 0x6 one */
	teardown();
}

static ssize_t trecvmsg(void *buf, size_t len, uint64_t tag, void *ctx,
			uint64_t flags)
{
	struct iovec iov = { buf, len };
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = buf ? 1 : 0, .addr = 0,
		.tag = tag, .ignore = 0, .context = ctx,
	};

	return util_srx_trecvmsg(&T.srx, &m, flags);
}

static void test_srx_peek_claim_discard(void **state)
{
	struct fi_context pctx, cctx, dctx;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	uint8_t buf[64];
	int c;

	(void)state;
	setup(FI_MSG | FI_TAGGED, 8, false, &fake_ops);
	/* nothing there: FI_ENOMSG */
	assert_int_equal(trecvmsg(NULL, 0, 9, &pctx, FI_PEEK), 0);
	err = get_err(&pctx);
	assert_int_equal(err.err, FI_ENOMSG);
	arrive(true, 3, 9, 25, 40, 0xdd);
	/* a peek reports the message and leaves it queued */
	assert_int_equal(trecvmsg(NULL, 0, 9, &pctx, FI_PEEK), 0);
	e = get(&pctx);
	assert_int_equal(e.len, 25);
	assert_int_equal(e.tag, 9);
	assert_int_equal(e.data, 0xdd);
	assert_true(e.flags & FI_REMOTE_CQ_DATA);
	assert_int_equal(T.srx.tag_q.unexp_count, 1);
	/* claimed: no receive can take it, FI_CLAIM with the context can */
	assert_int_equal(trecvmsg(NULL, 0, 9, &cctx, FI_PEEK | FI_CLAIM), 0);
	get(&cctx);
	assert_int_equal(trecvmsg(buf, sizeof(buf), 9, &c, 0), 0);
	no_comp();
	assert_int_equal(trecvmsg(buf, sizeof(buf), 9, &dctx, FI_CLAIM),
			 -FI_EINVAL);	/* dctx claimed nothing */
	assert_int_equal(trecvmsg(buf, sizeof(buf), 9, &cctx, FI_CLAIM), 0);
	e = get(&cctx);
	assert_int_equal(e.len, 25);
	check(buf, 25, 40);
	/* FI_PEEK | FI_DISCARD: reported and dropped through the hook */
	arrive(true, 3, 10, 5, 50, 0);
	assert_int_equal(trecvmsg(NULL, 0, 10, &pctx, FI_PEEK | FI_DISCARD), 0);
	e = get(&pctx);
	assert_int_equal(e.len, 5);
	assert_int_equal(T.discarded, 1);
	assert_int_equal(T.srx.tag_q.unexp_count, 0);
	/* FI_CLAIM | FI_DISCARD: a completion of length 0 */
	arrive(true, 3, 11, 6, 60, 0);
	assert_int_equal(trecvmsg(NULL, 0, 11, &cctx, FI_PEEK | FI_CLAIM), 0);
	get(&cctx);
	assert_int_equal(trecvmsg(NULL, 0, 11, &cctx, FI_CLAIM | FI_DISCARD),
			 0);
	e = get(&cctx);
	assert_int_equal(e.len, 0);
	assert_int_equal(e.tag, 11);
	assert_int_equal(T.discarded, 2);
	/* the plain receive posted meanwhile still waits */
	arrive(true, 3, 9, 3, 70, 0);
	e = get(&c);
	check(buf, 3, 70);
	teardown();
}

static void post_mrecv(uint8_t *buf, size_t len, void *ctx, uint64_t flags)
{
	struct iovec iov = { buf, len };
	struct fi_msg m = { .msg_iov = &iov, .iov_count = 1,
			    .addr = FI_ADDR_UNSPEC, .context = ctx };

	assert_int_equal(util_srx_recvmsg(&T.srx, &m, FI_MULTI_RECV | flags),
			 0);
}

static void test_srx_multi_recv(void **state)
{
	uint8_t buf[100];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int mc;

	(void)state;
	setup(FI_MSG | FI_MULTI_RECV, 4, false, &fake_ops);
	T.ep.min_multi_recv = 30;
	post_mrecv(buf, sizeof(buf), &mc, 0);
	/* 40 + 40 leaves 20 < 30: released with the second */
	arrive(false, 1, 0, 40, 1, 0);
	e = get(&mc);
	assert_ptr_equal(e.buf, buf);
	assert_int_equal(e.len, 40);
	assert_false(e.flags & FI_MULTI_RECV);
	arrive(false, 1, 0, 40, 2, 0);
	e = get(&mc);
	assert_ptr_equal(e.buf, buf + 40);
	assert_true(e.flags == (FI_RECV | FI_MSG | FI_MULTI_RECV));
	check(buf, 40, 1);
	check(buf + 40, 40, 2);
	assert_int_equal(T.srx.rx_pool.in_use, 0);
	/* the next message is unexpected */
	arrive(false, 1, 0, 10, 3, 0);
	no_comp();
	assert_int_equal(T.srx.msg_q.unexp_count, 1);

	/* a message larger than what is left is truncated and releases */
	T.ep.min_multi_recv = 1;
	post_mrecv(buf, sizeof(buf), &mc, 0);
	e = get(&mc);		/* the unexpected one, at post time */
	assert_int_equal(e.len, 10);
	check(buf, 10, 3);
	arrive(false, 1, 0, 120, 4, 0);
	err = get_err(&mc);
	assert_int_equal(err.err, FI_ETRUNC);
	assert_int_equal(err.len, 90);
	assert_int_equal(err.olen, 30);
	assert_ptr_equal(err.buf, buf + 10);
	assert_true(err.flags & FI_MULTI_RECV);
	check(buf + 10, 90, 4);
	assert_int_equal(T.srx.rx_pool.in_use, 0);
	teardown();
}

/* Unexpected messages taken by a multi-recv buffer at post time, in order,
 * until it is released; the rest stays queued. */
static void test_srx_multi_recv_unexpected(void **state)
{
	uint8_t buf[100];
	struct fi_cq_tagged_entry e;
	int mc, i;

	(void)state;
	setup(FI_MSG | FI_MULTI_RECV, 4, false, &fake_ops);
	T.ep.min_multi_recv = 50;
	for (i = 0; i < 4; i++)
		arrive(false, 1, 0, 30, (uint8_t)(10 * i), 0);
	post_mrecv(buf, sizeof(buf), &mc, 0);
	for (i = 0; i < 2; i++) {
		e = get(&mc);
		assert_ptr_equal(e.buf, buf + 30 * i);
		assert_int_equal(!!(e.flags & FI_MULTI_RECV), i == 1);
		check(buf + 30 * i, 30, (uint8_t)(10 * i));
	}
	no_comp();
	assert_int_equal(T.srx.msg_q.unexp_count, 2);
	assert_int_equal(T.srx.rx_pool.in_use, 0);
	teardown();
}

/* Slices that land out of order: the release rides on the completion that
 * comes last, not on the slice that filled the buffer. */
static void test_srx_multi_recv_late_slice(void **state)
{
	uint8_t buf[100];
	struct fi_cq_tagged_entry e;
	int mc;

	(void)state;
	setup(FI_MSG | FI_MULTI_RECV, 4, false, &fake_ops);
	T.ep.min_multi_recv = 50;
	post_mrecv(buf, sizeof(buf), &mc, 0);
	T.defer = true;
	arrive(false, 1, 0, 30, 1, 0);		/* lands later */
	T.defer = false;
	arrive(false, 1, 0, 30, 2, 0);		/* fills the buffer, lands now */
	e = get(&mc);
	assert_ptr_equal(e.buf, buf + 30);
	assert_false(e.flags & FI_MULTI_RECV);
	assert_int_equal(T.srx.rx_pool.in_use, 1);
	land_pending(0);
	e = get(&mc);
	assert_ptr_equal(e.buf, buf);
	assert_true(e.flags & FI_MULTI_RECV);
	check(buf, 30, 1);
	check(buf + 30, 30, 2);
	assert_int_equal(T.srx.rx_pool.in_use, 0);
	teardown();
}

/* FI_SELECTIVE_COMPLETION: the messages are not reported, the release is. */
static void test_srx_multi_recv_selective(void **state)
{
	uint8_t buf[100];
	struct fi_cq_tagged_entry e;
	int mc;

	(void)state;
	setup(FI_MSG | FI_MULTI_RECV, 4, true, &fake_ops);
	T.ep.min_multi_recv = 30;
	post_mrecv(buf, sizeof(buf), &mc, 0);
	arrive(false, 1, 0, 40, 1, 0);
	no_comp();
	arrive(false, 1, 0, 40, 2, 0);
	e = get(&mc);
	assert_true(e.flags & FI_MULTI_RECV);
	assert_ptr_equal(e.buf, buf + 40);
	/* with FI_COMPLETION every message is reported */
	post_mrecv(buf, sizeof(buf), &mc, FI_COMPLETION);
	arrive(false, 1, 0, 40, 3, 0);
	e = get(&mc);
	assert_false(e.flags & FI_MULTI_RECV);
	teardown();
}

static void test_srx_cancel(void **state)
{
	uint8_t a[16], buf[100];
	struct fi_cq_err_entry err;
	struct fi_cq_tagged_entry e;
	int ca, ct, mc;

	(void)state;
	setup(FI_MSG | FI_TAGGED | FI_MULTI_RECV, 4, false, &fake_ops);
	assert_int_equal(util_srx_recv(&T.srx, a, sizeof(a), 0, &ca), 0);
	assert_int_equal(util_srx_trecv(&T.srx, a, sizeof(a), 0, 1, 0, &ct),
			 0);
	assert_int_equal(util_srx_cancel(&T.srx, &ct), 0);
	assert_int_equal(util_srx_cancel(&T.srx, &ct), -FI_ENOENT);
	err = get_err(&ct);
	assert_int_equal(err.err, FI_ECANCELED);
	assert_true(err.flags == (FI_RECV | FI_TAGGED));
	assert_int_equal(util_srx_cancel(&T.srx, &ca), 0);
	err = get_err(&ca);
	assert_true(err.flags == (FI_RECV | FI_MSG));
	/* a cancelled message never receives */
	arrive(false, 1, 0, 4, 1, 0);
	no_comp();
	assert_int_equal(T.srx.rx_pool.in_use, 0);

	/* a multi-recv buffer: its cancel reports its release */
	T.ep.min_multi_recv = 10;
	post_mrecv(buf, sizeof(buf), &mc, 0);
	e = get(&mc);			/* the message that waited */
	assert_false(e.flags & FI_MULTI_RECV);
	assert_int_equal(util_srx_cancel(&T.srx, &mc), 0);
	err = get_err(&mc);
	assert_int_equal(err.err, FI_ECANCELED);
	assert_true(err.flags & FI_MULTI_RECV);
	assert_int_equal(T.srx.rx_pool.in_use, 0);

	/* ... unless a slice still lands: then that one reports it */
	post_mrecv(buf, sizeof(buf), &mc, 0);
	T.defer = true;
	arrive(false, 1, 0, 20, 5, 0);
	T.defer = false;
	assert_int_equal(util_srx_cancel(&T.srx, &mc), 0);
	err = get_err(&mc);
	assert_false(err.flags & FI_MULTI_RECV);
	assert_int_equal(T.srx.rx_pool.in_use, 1);
	land_pending(0);
	e = get(&mc);
	assert_true(e.flags & FI_MULTI_RECV);
	check(buf, 20, 5);
	assert_int_equal(T.srx.rx_pool.in_use, 0);
	teardown();
}

static void test_srx_directed(void **state)
{
	uint8_t a[8], b[8];
	struct fi_cq_tagged_entry e;
	int ca, cb;

	(void)state;
	setup(FI_MSG | FI_DIRECTED_RECV, 4, false, &fake_ops);
	assert_int_equal(util_srx_recv(&T.srx, a, sizeof(a), 2, &ca), 0);
	assert_int_equal(util_srx_recv(&T.srx, b, sizeof(b), FI_ADDR_UNSPEC,
				       &cb), 0);
	/* the fast path's test declines a receive for one source */
	assert_null(util_srx_first1(&T.srx, false, 0));
	arrive(false, 1, 0, 4, 1, 0);	/* not from 2: the second receive */
	e = get(&cb);
	check(b, 4, 1);
	arrive(false, 2, 0, 4, 2, 0);
	e = get(&ca);
	assert_int_equal(e.len, 4);
	check(a, 4, 2);
	/* unexpected: a directed receive takes its source's message */
	arrive(false, 1, 0, 4, 3, 0);
	arrive(false, 2, 0, 4, 4, 0);
	assert_int_equal(util_srx_recv(&T.srx, a, sizeof(a), 2, &ca), 0);
	get(&ca);
	check(a, 4, 4);
	teardown();

	/* without FI_DIRECTED_RECV the source is ignored */
	setup(FI_MSG, 4, false, &fake_ops);
	assert_int_equal(util_srx_recv(&T.srx, a, sizeof(a), 2, &ca), 0);
	assert_non_null(util_srx_first1(&T.srx, false, 0));
	arrive(false, 1, 0, 4, 5, 0);
	get(&ca);
	check(a, 4, 5);
	teardown();
}

static void test_srx_truncation(void **state)
{
	uint8_t a[10] = { 0 }, big[64];
	struct iovec iov[2] = { { a, 4 }, { a + 4, 6 } };
	struct fi_cq_err_entry err;
	int ca;

	(void)state;
	setup(FI_MSG, 4, false, &fake_ops_err);
	assert_int_equal(util_srx_recvv(&T.srx, iov, 2, 0, &ca), 0);
	arrive(false, 1, 0, 25, 1, 0x99);
	err = get_err(&ca);
	assert_int_equal(err.err, FI_ETRUNC);
	assert_int_equal(err.len, 10);
	assert_int_equal(err.olen, 15);
	assert_int_equal(err.data, 0x99);
	assert_true(err.flags & FI_REMOTE_CQ_DATA);
	check(a, 10, 1);
	assert_int_equal(T.errs_written, 1);	/* through the hook */
	/* an unexpected one taken by a smaller receive: the same */
	arrive(false, 1, 0, 64, 2, 0);
	assert_int_equal(util_srx_recv(&T.srx, big, 32, 0, &ca), 0);
	err = get_err(&ca);
	assert_int_equal(err.olen, 32);
	check(big, 32, 2);
	assert_int_equal(T.errs_written, 2);
	teardown();
}

/* The fast path: the first posted one-buffer receive, taken whole. */
static void test_srx_fast_path(void **state)
{
	uint8_t a[8], b[8], c[8];
	struct iovec iov[2] = { { b, 4 }, { c, 4 } };
	struct util_srx_msg m = { .src = 1, .size = 8 };
	struct util_srx_entry *e;
	struct fi_cq_tagged_entry ce;
	int ca, cb;

	(void)state;
	setup(FI_MSG | FI_TAGGED, 4, false, &fake_ops);
	assert_null(util_srx_first1(&T.srx, false, 0));
	assert_int_equal(util_srx_recv(&T.srx, a, sizeof(a), 0, &ca), 0);
	assert_int_equal(util_srx_recvv(&T.srx, iov, 2, 0, &cb), 0);
	assert_null(util_srx_first1(&T.srx, true, 0));	/* other queue */
	e = util_srx_first1(&T.srx, false, 0);
	assert_non_null(e);
	assert_ptr_equal(e->iov[0].iov_base, a);
	util_srx_take_first(&T.srx, false, e);
	util_srx_report(&T.srx, &T.ep, e->match.context, e->comp_flags,
			e->iov[0].iov_base, e->iov[0].iov_len, true, &m, 8, 0,
			0);
	util_srx_entry_put(&T.srx, e);
	ce = get(&ca);
	assert_int_equal(ce.len, 8);
	/* a two-iov receive is not the fast path's */
	assert_null(util_srx_first1(&T.srx, false, 0));
	teardown();
}

static void test_srx_fini_frees_unexpected(void **state)
{
	(void)state;
	setup(FI_MSG | FI_TAGGED, 4, false, &fake_ops);
	arrive(false, 1, 0, 4, 1, 0);
	arrive(true, 1, 3, 4, 1, 0);
	teardown();
	assert_int_equal(T.freed, 2);
}

/* The collective class: its own queue, matched by source and exact tag,
 * invisible to the application's wildcards, fi_cancel and rx_size, and
 * its completions go to the engine, never to the CQ. */
static void test_srx_coll_class(void **state)
{
	uint8_t app[64], c1[16], c2[16], c3[4];
	int capp, k1, k2, k3, k4;

	(void)state;
	setup(FI_MSG | FI_TAGGED, 1, false, &fake_ops);
	memset(&C, 0, sizeof(C));
	T.srx.coll_done = coll_done;
	/* the application's widest receive */
	assert_int_equal(util_srx_trecv(&T.srx, app, sizeof(app), 0, 0, ~0ull,
					&capp), 0);
	/* the engine's receives do not count against rx_size (1) */
	assert_int_equal(util_srx_coll_post(&T.srx, c1, sizeof(c1), 3, 0x55,
					    0, &k1), 0);
	assert_int_equal(util_srx_coll_post(&T.srx, c2, sizeof(c2), 4, 0x55,
					    0, &k2), 0);
	/* a collective message from 4 with tag 0x55: k2, not the wildcard,
	 * not k1 (another source) */
	arrive_cls(UTIL_SRX_COLL, 4, 0x55, 12, 7, 0);
	assert_int_equal(C.n, 1);
	assert_ptr_equal(C.ctx[0], &k2);
	assert_int_equal(C.len[0], 12);
	assert_int_equal(C.err[0], 0);
	check(c2, 12, 7);
	no_comp();
	/* another tag from 3 waits unexpected, then a post takes it */
	arrive_cls(UTIL_SRX_COLL, 3, 0x56, 8, 9, 0);
	assert_int_equal(C.n, 1);
	assert_int_equal(util_srx_coll_post(&T.srx, c3, sizeof(c3), 3, 0x56,
					    0, &k3), 0);
	assert_int_equal(C.n, 2);
	assert_ptr_equal(C.ctx[1], &k3);
	assert_int_equal(C.err[1], FI_ETRUNC);	/* 8 bytes into 4 */
	check(c3, 4, 9);
	/* fi_cancel does not see the engine's receive; the engine's cancel
	 * takes it back without a completion */
	assert_int_equal(util_srx_cancel(&T.srx, &k1), -FI_ENOENT);
	assert_int_equal(util_srx_coll_cancel(&T.srx, &k1), 0);
	assert_int_equal(util_srx_coll_cancel(&T.srx, &k1), -FI_ENOENT);
	/* a receive for any source, with ignored tag bits */
	assert_int_equal(util_srx_coll_post(&T.srx, NULL, 0, FI_ADDR_UNSPEC,
					    0x100, 0xff, &k4), 0);
	arrive_cls(UTIL_SRX_COLL, 9, 0x1ab, 0, 0, 0);
	assert_int_equal(C.n, 3);
	assert_ptr_equal(C.ctx[2], &k4);
	/* the application's receive still waits for an application message */
	no_comp();
	arrive(true, 1, 42, 5, 3, 0);
	assert_int_equal(get(&capp).len, 5);
	assert_int_equal(C.n, 3);
	teardown();
}

/* The owner's end of a peer receive context: a weft peer finds the
 * util_srx behind it; another owner's table is not taken for ours, and
 * the generic operations a foreign peer would call are refused. */
static void test_srx_peer_owner(void **state)
{
	struct util_srx srx;
	struct util_srx_peer p;
	struct fi_ops_srx_owner other = { .size = sizeof(other) };
	struct fid_peer_srx foreign = { .owner_ops = &other };
	struct fi_peer_rx_entry *entry = NULL;

	(void)state;
	memset(&srx, 0, sizeof(srx));
	util_srx_peer_init(&p, &srx);
	assert_int_equal(p.peer_srx.ep_fid.fid.fclass, FI_CLASS_SRX_CTX);
	assert_ptr_equal(util_srx_of_peer(&p.peer_srx), &srx);
	assert_null(util_srx_of_peer(&foreign));
	assert_null(util_srx_of_peer(NULL));
	assert_int_equal(p.peer_srx.owner_ops->get_tag(&p.peer_srx, 0, 1,
							&entry), -FI_ENOSYS);
	assert_int_equal(p.peer_srx.owner_ops->get_msg(&p.peer_srx, 0, 1,
							&entry), -FI_ENOSYS);
	assert_null(entry);
	assert_int_equal(fi_close(&p.peer_srx.ep_fid.fid), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srx_coll_class),
		cmocka_unit_test(test_srx_post),
		cmocka_unit_test(test_srx_unexpected_then_post),
		cmocka_unit_test(test_srx_peek_claim_discard),
		cmocka_unit_test(test_srx_multi_recv),
		cmocka_unit_test(test_srx_multi_recv_unexpected),
		cmocka_unit_test(test_srx_multi_recv_late_slice),
		cmocka_unit_test(test_srx_multi_recv_selective),
		cmocka_unit_test(test_srx_cancel),
		cmocka_unit_test(test_srx_directed),
		cmocka_unit_test(test_srx_truncation),
		cmocka_unit_test(test_srx_fast_path),
		cmocka_unit_test(test_srx_fini_frees_unexpected),
		cmocka_unit_test(test_srx_peer_owner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
