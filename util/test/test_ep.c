/* SPDX-License-Identifier: MIT */
/* Fabric, domain and endpoint bases: references, binding, enable, op
 * flags, completion helpers, complete stub tables. */
#include "util_test.h"

static struct fid_cq *cq_open(struct test_env *env)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fid_cq *cq;

	assert_int_equal(fi_cq_open(env->domain, &attr, &cq, NULL), 0);
	return cq;
}

static void test_base_refcounts(void **state)
{
	struct test_env env;
	struct fid_cq *cq;
	struct fid_eq *eq;
	struct fi_eq_attr eattr = { 0 };
	struct test_ep *ep;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_UNSPEC, 0), 0);
	/* FI_THREAD_UNSPEC counts as SAFE: real locks */
	assert_int_equal(env.udom->threading, FI_THREAD_SAFE);
	assert_true(env.udom->thread_safe);
	assert_string_equal(env.udom->name, "utiltest0");
	assert_int_equal(fi_close(&env.fabric->fid), -FI_EBUSY);
	cq = cq_open(&env);
	ep = test_ep_open(&env);
	assert_int_equal(fi_close(&env.domain->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	assert_int_equal(fi_close(&env.domain->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&cq->fid), 0);

	/* domain bind: an EQ, once; the EQ is then busy */
	assert_int_equal(fi_eq_open(env.fabric, &eattr, &eq, NULL), 0);
	assert_int_equal(fi_domain_bind(env.domain, &env.fabric->fid, 0),
			 -FI_EINVAL);
	assert_int_equal(fi_domain_bind(env.domain, &eq->fid, 0), 0);
	assert_ptr_equal(env.udom->eq, to_util_eq(eq));
	assert_int_equal(fi_domain_bind(env.domain, &eq->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_close(&eq->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&env.domain->fid), 0);
	assert_int_equal(fi_close(&eq->fid), 0);
	assert_int_equal(fi_close(&env.fabric->fid), 0);
}

static void test_base_lock_choice(void **state)
{
	struct util_lock a, b;

	assert_false(util_threading_needs_lock(FI_THREAD_DOMAIN));
	assert_true(util_threading_needs_lock(FI_THREAD_SAFE));
	assert_true(util_threading_needs_lock(FI_THREAD_COMPLETION));
	assert_int_equal(util_lock_init(&a, false), 0);
	assert_int_equal(util_lock_init(&b, true), 0);
	/* the no-op lock really does nothing; the real one excludes */
	util_lock_acquire(&a);
	util_lock_acquire(&a);
	util_lock_release(&a);
	util_lock_release(&a);
	assert_int_equal(atomic_load(&a.held), 0);
	util_lock_acquire(&b);
	assert_int_equal(atomic_load(&b.held), 1);
	util_lock_release(&b);
	assert_int_equal(atomic_load(&b.held), 0);
	assert_ptr_not_equal(a.acquire, b.acquire);
	util_lock_fini(&a);
	util_lock_fini(&b);
}

struct lock_race {
	struct util_lock lock;
	uint64_t counter;	/* a read-modify-write that races without the lock */
};

static void *lock_race_thread(void *arg)
{
	struct lock_race *r = arg;

	for (int i = 0; i < 200000; i++) {
		util_lock_acquire(&r->lock);
		uint64_t v = *(volatile uint64_t *)&r->counter;
		*(volatile uint64_t *)&r->counter = v + 1;
		util_lock_release(&r->lock);
	}
	return NULL;
}

/* The real lock excludes: three threads, no increment lost. */
static void test_base_lock_excludes(void **state)
{
	struct lock_race r = { .counter = 0 };
	pthread_t t[3];

	assert_int_equal(util_lock_init(&r.lock, true), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&t[i], NULL, lock_race_thread, &r), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(r.counter, 3 * 200000);
	util_lock_fini(&r.lock);
}

static void check_table(const void *table, size_t size)
{
	const void *const *fn = (const void *const *)((const char *)table +
						      sizeof(size_t));

	assert_int_equal(*(const size_t *)table, size);
	for (size_t i = 0; i < (size - sizeof(size_t)) / sizeof(void *); i++)
		assert_non_null(fn[i]);
}

static void test_base_stub_tables_complete(void **state)
{
	struct test_env env;
	struct test_ep *ep;
	char buf[8];

	check_table(&util_no_fi_ops, sizeof(struct fi_ops));
	check_table(&util_no_ep_ops, sizeof(struct fi_ops_ep));
	check_table(&util_no_cm_ops, sizeof(struct fi_ops_cm));
	check_table(&util_no_msg_ops, sizeof(struct fi_ops_msg));
	check_table(&util_no_tagged_ops, sizeof(struct fi_ops_tagged));
	check_table(&util_no_rma_ops, sizeof(struct fi_ops_rma));
	check_table(&util_no_atomic_ops, sizeof(struct fi_ops_atomic));
	check_table(&util_no_collective_ops, sizeof(struct fi_ops_collective));
	check_table(&util_mr_ops, sizeof(struct fi_ops_mr));

	/* an endpoint nobody filled in answers -FI_ENOSYS everywhere */
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	ep = test_ep_open(&env);
	struct fid_ep *e = &ep->util.ep_fid;
	assert_int_equal(fi_send(e, buf, 8, NULL, 0, NULL), -FI_ENOSYS);
	assert_int_equal(fi_trecv(e, buf, 8, NULL, 0, 1, 0, NULL), -FI_ENOSYS);
	assert_int_equal(fi_write(e, buf, 8, NULL, 0, 0, 0, NULL), -FI_ENOSYS);
	assert_int_equal(fi_atomic(e, buf, 1, NULL, 0, 0, 0, FI_INT32, FI_SUM,
				   NULL), -FI_ENOSYS);
	assert_int_equal(fi_connect(e, buf, NULL, 0), -FI_ENOSYS);
	size_t len = sizeof(buf);
	assert_int_equal(fi_getname(&e->fid, buf, &len), -FI_ENOSYS);
	assert_int_equal(fi_cancel(&e->fid, NULL), -FI_ENOSYS);
	assert_int_equal(fi_barrier(e, 0, NULL), -FI_ENOSYS);
	assert_int_equal(fi_close(&e->fid), 0);
	test_env_close(&env);
}

static void test_ep_bind_and_enable(void **state)
{
	struct test_env env, env2;
	struct fi_av_attr aattr = { .type = FI_AV_MAP };
	static const struct util_av_prov avp = { .addrlen = 8 };
	struct fid_cq *txcq, *rxcq, *other;
	struct fid_av *av;
	struct test_ep *ep;
	struct fid_ep *e;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	assert_int_equal(test_env_open(&env2, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	env.udom->av_prov = &avp;
	txcq = cq_open(&env);
	rxcq = cq_open(&env);
	other = cq_open(&env2);
	assert_int_equal(fi_av_open(env.domain, &aattr, &av, NULL), 0);
	ep = test_ep_open(&env);
	e = &ep->util.ep_fid;

	/* RDM: no AV, no CQ */
	assert_int_equal(fi_enable(e), -FI_ENOAV);
	assert_int_equal(fi_ep_bind(e, &av->fid, 0), 0);
	assert_int_equal(fi_enable(e), -FI_ENOCQ);
	assert_int_equal(ep->enable_calls, 0);

	/* bad CQ binds */
	assert_int_equal(fi_ep_bind(e, &other->fid, FI_TRANSMIT), -FI_EINVAL);
	assert_int_equal(fi_ep_bind(e, &txcq->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_ep_bind(e, &txcq->fid, FI_SELECTIVE_COMPLETION),
			 -FI_EINVAL);
	assert_int_equal(fi_ep_bind(e, &txcq->fid, FI_TRANSMIT | FI_REMOTE_READ),
			 -FI_EINVAL);
	assert_int_equal(fi_ep_bind(e, NULL, FI_TRANSMIT), -FI_EINVAL);
	assert_int_equal(fi_ep_bind(e, &env.domain->fid, 0), -FI_EINVAL);

	assert_int_equal(fi_ep_bind(e, &txcq->fid,
				    FI_TRANSMIT | FI_SELECTIVE_COMPLETION), 0);
	assert_int_equal(fi_ep_bind(e, &rxcq->fid, FI_TRANSMIT), -FI_EINVAL);
	assert_int_equal(fi_ep_bind(e, &rxcq->fid, FI_RECV), 0);
	assert_ptr_equal(ep->util.tx_cq, to_util_cq(txcq));
	assert_ptr_equal(ep->util.rx_cq, to_util_cq(rxcq));
	assert_true(ep->util.tx_selective);
	assert_false(ep->util.rx_selective);

	/* the provider's enable hook runs once, and its error is returned */
	ep->enable_ret = -FI_EOTHER;
	assert_int_equal(fi_enable(e), -FI_EOTHER);
	assert_false(ep->util.enabled);
	ep->enable_ret = 0;
	assert_int_equal(fi_enable(e), 0);
	assert_int_equal(fi_enable(e), 0);
	assert_int_equal(ep->enable_calls, 2);
	assert_true(ep->util.enabled);

	/* selective completion decides tx entries; rx always */
	assert_false(util_ep_tx_wants_comp(&ep->util, 0));
	assert_true(util_ep_tx_wants_comp(&ep->util, FI_COMPLETION));
	assert_true(util_ep_rx_wants_comp(&ep->util, 0));
	/* FI_INJECT as a flag completes; only the inject calls do not */
	assert_true(util_ep_tx_wants_comp(&ep->util,
					  FI_INJECT | FI_COMPLETION));
	assert_false(util_ep_tx_wants_comp(&ep->util, FI_INJECT |
					   FI_COMPLETION | UTIL_OP_NO_COMP));
	assert_int_equal(util_ep_user_flags(FI_INJECT | UTIL_OP_NO_COMP),
			 FI_INJECT);
	/* nor can the application send in the collective class */
	assert_int_equal(util_ep_user_flags(FI_TAGGED | UTIL_OP_COLL),
			 FI_TAGGED);
	assert_true(UTIL_OP_COLL != UTIL_OP_NO_COMP);

	/* completion and error helpers land in the right CQ */
	struct fi_cq_tagged_entry ent;
	struct fi_cq_err_entry err = { 0 };
	fi_addr_t src;
	assert_int_equal(util_ep_tx_comp(&ep->util, (void *)1, FI_SEND | FI_MSG,
					 3, NULL, 0, 0), 0);
	assert_int_equal(util_ep_rx_comp(&ep->util, (void *)2,
					 FI_RECV | FI_TAGGED, 4, (void *)8, 9,
					 10, 11), 0);
	assert_int_equal(fi_cq_read(txcq, &ent, 1), 1);
	assert_ptr_equal(ent.op_context, (void *)1);
	assert_int_equal(ent.flags, FI_SEND | FI_MSG);
	assert_int_equal(fi_cq_readfrom(rxcq, &ent, 1, &src), 1);
	assert_ptr_equal(ent.op_context, (void *)2);
	assert_int_equal(ent.tag, 10);
	assert_int_equal(ent.data, 9);
	assert_int_equal(src, 11);
	assert_int_equal(util_ep_rx_err(&ep->util, (void *)3,
					FI_RECV | FI_TAGGED, FI_ETRUNC, 0,
					(void *)8, 4, 96, 0, 77, 5), 0);
	assert_int_equal(fi_cq_read(rxcq, &ent, 1), -FI_EAVAIL);
	assert_int_equal(fi_cq_readerr(rxcq, &err, 0), 1);
	assert_int_equal(err.err, FI_ETRUNC);
	assert_int_equal(err.olen, 96);
	assert_int_equal(err.tag, 77);
	assert_int_equal(util_ep_tx_err(&ep->util, (void *)4, FI_SEND,
					FI_ECANCELED, 0, 0, 0), 0);
	assert_int_equal(fi_cq_readerr(txcq, &err, 0), 1);
	assert_ptr_equal(err.op_context, (void *)4);
	assert_int_equal(err.err, FI_ECANCELED);

	assert_int_equal(fi_close(&txcq->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&e->fid), 0);
	assert_int_equal(fi_close(&txcq->fid), 0);
	assert_int_equal(fi_close(&rxcq->fid), 0);
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fi_close(&other->fid), 0);
	test_env_close(&env2);
	test_env_close(&env);
}

static void test_ep_counter_only_enable(void **state)
{
	struct test_env env;
	struct fid_cntr *cntr;
	struct test_ep *ep;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	env.eattr.type = FI_EP_MSG;	/* no AV needed */
	ep = test_ep_open(&env);
	assert_int_equal(fi_enable(&ep->util.ep_fid), -FI_ENOCQ);
	assert_int_equal(fi_cntr_open(env.domain, NULL, &cntr, NULL), 0);
	assert_int_equal(fi_ep_bind(&ep->util.ep_fid, &cntr->fid,
				    FI_REMOTE_WRITE), 0);
	assert_int_equal(fi_enable(&ep->util.ep_fid), 0);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	assert_int_equal(fi_close(&cntr->fid), 0);
	test_env_close(&env);
}

static void test_ep_opsflags_and_opts(void **state)
{
	struct test_env env;
	struct test_ep *ep;
	uint64_t flags;
	size_t v, len;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	env.tattr.op_flags = FI_COMPLETION;
	env.rattr.op_flags = FI_MULTI_RECV;
	ep = test_ep_open(&env);
	struct fid *f = &ep->util.ep_fid.fid;

	flags = FI_TRANSMIT;
	assert_int_equal(fi_control(f, FI_GETOPSFLAG, &flags), 0);
	assert_int_equal(flags, FI_COMPLETION);
	flags = FI_RECV;
	assert_int_equal(fi_control(f, FI_GETOPSFLAG, &flags), 0);
	assert_int_equal(flags, FI_MULTI_RECV);
	flags = FI_TRANSMIT | FI_INJECT_COMPLETE;
	assert_int_equal(fi_control(f, FI_SETOPSFLAG, &flags), 0);
	assert_int_equal(ep->util.tx_op_flags, FI_INJECT_COMPLETE);
	assert_int_equal(ep->util.rx_op_flags, FI_MULTI_RECV);
	flags = FI_TRANSMIT | FI_RECV;
	assert_int_equal(fi_control(f, FI_GETOPSFLAG, &flags), -FI_EINVAL);
	flags = 0;
	assert_int_equal(fi_control(f, FI_SETOPSFLAG, &flags), -FI_EINVAL);
	assert_int_equal(fi_control(f, FI_GETOPSFLAG, NULL), -FI_EINVAL);
	assert_int_equal(fi_control(f, FI_GETWAIT, &flags), -FI_ENOSYS);

	/* FI_OPT_MIN_MULTI_RECV round trip */
	len = sizeof(v);
	assert_int_equal(fi_getopt(f, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				   &v, &len), 0);
	assert_int_equal(v, 64);
	v = 512;
	assert_int_equal(fi_setopt(f, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				   &v, sizeof(v)), 0);
	assert_int_equal(ep->util.min_multi_recv, 512);
	v = 0;
	assert_int_equal(fi_getopt(f, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				   &v, &len), 0);
	assert_int_equal(v, 512);
	assert_int_equal(fi_setopt(f, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				   &v, 2), -FI_EINVAL);
	assert_int_equal(fi_setopt(f, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
				   &v, sizeof(v)), -FI_ENOPROTOOPT);
	assert_int_equal(fi_close(f), 0);
	test_env_close(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_refcounts),
		cmocka_unit_test(test_base_lock_choice),
		cmocka_unit_test(test_base_lock_excludes),
		cmocka_unit_test(test_base_stub_tables_complete),
		cmocka_unit_test(test_ep_bind_and_enable),
		cmocka_unit_test(test_ep_counter_only_enable),
		cmocka_unit_test(test_ep_opsflags_and_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
