/* SPDX-License-Identifier: MIT */
#include "util_test.h"

/* Test addresses: 12 bytes, first byte must be 'A' (validate hook), a
 * second byte of 'X' makes the provider's insert hook fail. */
#define ADDRLEN 12

struct peer {
	uint64_t magic;
	fi_addr_t fi_addr;
};

static int inserts, removes, agains;
static fi_addr_t again_addr;

static int av_validate(struct util_av *av, const void *addr)
{
	return ((const char *)addr)[0] == 'A' ? 0 : -FI_EINVAL;
}

static int av_insert(struct util_av *av, fi_addr_t fi_addr, const void *addr,
		     void *data)
{
	struct peer *p = data;

	if (((const char *)addr)[1] == 'X')
		return -FI_EHOSTUNREACH;
	assert_int_equal(p->magic, 0);	/* data is zeroed first */
	p->magic = 0xfeed;
	p->fi_addr = fi_addr;
	inserts++;
	return 0;
}

static void av_remove(struct util_av *av, fi_addr_t fi_addr, const void *addr,
		      void *data)
{
	struct peer *p = data;

	assert_int_equal(p->magic, 0xfeed);
	assert_int_equal(p->fi_addr, fi_addr);
	removes++;
}

/* The same address inserted again: the provider is told, on the slot
 * it already has. */
static void av_insert_again(struct util_av *av, fi_addr_t fi_addr,
			    const void *addr, void *data)
{
	struct peer *p = data;

	assert_int_equal(p->magic, 0xfeed);
	assert_int_equal(p->fi_addr, fi_addr);
	assert_memory_equal(util_av_addr(av, fi_addr), addr, ADDRLEN);
	again_addr = fi_addr;
	agains++;
}

static const struct util_av_prov test_av_prov = {
	.addrlen = ADDRLEN,
	.data_size = sizeof(struct peer),
	.validate = av_validate,
	.insert = av_insert,
	.insert_again = av_insert_again,
	.remove = av_remove,
};

static void mkaddr(char *a, int i)
{
	memset(a, 0, ADDRLEN);
	snprintf(a, ADDRLEN, "A-%08d", i);
}

static struct fid_av *av_open(struct test_env *env, enum fi_av_type type,
			      size_t count)
{
	struct fi_av_attr attr = { .type = type, .count = count };
	struct fid_av *av = NULL;

	env->udom->av_prov = &test_av_prov;
	assert_int_equal(fi_av_open(env->domain, &attr, &av, NULL), 0);
	return av;
}

static void check_av_roundtrip(enum fi_av_type type)
{
	struct test_env env;
	struct fid_av *av;
	char addrs[300][ADDRLEN], out[ADDRLEN];
	fi_addr_t fa[300];
	size_t len;

	inserts = removes = agains = 0;
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	av = av_open(&env, type, 16);	/* grows past its first chunk */
	for (int i = 0; i < 300; i++)
		mkaddr(addrs[i], i);
	assert_int_equal(fi_av_insert(av, addrs, 300, fa, 0, NULL), 300);
	assert_int_equal(inserts, 300);
	for (int i = 0; i < 300; i++) {
		if (type == FI_AV_TABLE)
			assert_int_equal(fa[i], i);
		len = sizeof(out);
		assert_int_equal(fi_av_lookup(av, fa[i], out, &len), 0);
		assert_int_equal(len, ADDRLEN);
		assert_memory_equal(out, addrs[i], ADDRLEN);
		assert_int_equal(util_av_reverse_lookup(to_util_av(av),
							addrs[i]), fa[i]);
		struct peer *p = util_av_data(to_util_av(av), fa[i]);
		assert_non_null(p);
		assert_int_equal(p->fi_addr, fa[i]);
		assert_memory_equal(util_av_addr(to_util_av(av), fa[i]),
				    addrs[i], ADDRLEN);
	}
	/* inserting a known address returns its fi_addr, and the provider
	 * hears of it (the endpoint may have been replaced) */
	fi_addr_t again;
	assert_int_equal(agains, 0);
	assert_int_equal(fi_av_insert(av, addrs[7], 1, &again, 0, NULL), 1);
	assert_int_equal(again, fa[7]);
	assert_int_equal(inserts, 300);
	assert_int_equal(agains, 1);
	assert_int_equal(again_addr, fa[7]);

	/* remove, then the slot is gone and reusable */
	assert_int_equal(fi_av_remove(av, &fa[5], 1, 0), 0);
	assert_int_equal(removes, 1);
	len = sizeof(out);
	assert_int_equal(fi_av_lookup(av, fa[5], out, &len), -FI_EINVAL);
	assert_null(util_av_data(to_util_av(av), fa[5]));
	assert_int_equal(util_av_reverse_lookup(to_util_av(av), addrs[5]),
			 FI_ADDR_NOTAVAIL);
	assert_int_equal(fi_av_remove(av, &fa[5], 1, 0), -FI_EINVAL);
	char fresh[ADDRLEN];
	mkaddr(fresh, 1000);
	assert_int_equal(fi_av_insert(av, fresh, 1, &again, 0, NULL), 1);
	assert_int_equal(again, fa[5]);
	assert_int_equal(util_av_reverse_lookup(to_util_av(av), fresh), fa[5]);
	/* and the old address can come back, in a new slot */
	assert_int_equal(fi_av_insert(av, addrs[5], 1, &again, 0, NULL), 1);
	assert_int_equal(again, 300);
	assert_int_equal(util_av_reverse_lookup(to_util_av(av), addrs[5]),
			 300);

	/* close removes every live address through the hook */
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(removes, 1 + 301);
	test_env_close(&env);
}

static void test_av_map(void **state)
{
	check_av_roundtrip(FI_AV_MAP);
}

static void test_av_table(void **state)
{
	check_av_roundtrip(FI_AV_TABLE);
}

static void test_av_bad_addresses(void **state)
{
	struct test_env env;
	struct fid_av *av;
	char addrs[4][ADDRLEN], out[4];
	fi_addr_t fa[4];
	int errs[4];
	size_t len;

	inserts = removes = 0;
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	av = av_open(&env, FI_AV_TABLE, 0);
	for (int i = 0; i < 4; i++)
		mkaddr(addrs[i], i);
	addrs[1][0] = 'B';		/* refused by validate */
	addrs[2][1] = 'X';		/* refused by the insert hook */
	assert_int_equal(fi_av_insert(av, addrs, 4, fa, FI_SYNC_ERR, errs), 2);
	assert_int_equal(fa[0], 0);
	assert_int_equal(fa[1], FI_ADDR_NOTAVAIL);
	assert_int_equal(fa[2], FI_ADDR_NOTAVAIL);
	assert_int_equal(fa[3], 1);	/* failed slot reused: still dense */
	assert_int_equal(errs[0], 0);
	assert_int_equal(errs[1], FI_EINVAL);
	assert_int_equal(errs[2], FI_EHOSTUNREACH);
	assert_int_equal(errs[3], 0);

	/* lookup: short buffer gets a prefix and the full length */
	len = sizeof(out);
	assert_int_equal(fi_av_lookup(av, fa[3], out, &len), -FI_ETOOSMALL);
	assert_int_equal(len, ADDRLEN);
	assert_memory_equal(out, addrs[3], sizeof(out));
	len = 0;
	assert_int_equal(fi_av_lookup(av, fa[3], NULL, &len), -FI_ETOOSMALL);
	assert_int_equal(len, ADDRLEN);
	assert_int_equal(fi_av_lookup(av, 12345678, out, &len), -FI_EINVAL);
	assert_int_equal(fi_av_lookup(av, FI_ADDR_NOTAVAIL, out, &len),
			 -FI_EINVAL);
	assert_null(util_av_data(to_util_av(av), FI_ADDR_NOTAVAIL));
	assert_null(util_av_data(to_util_av(av), 2));

	/* bad arguments */
	assert_int_equal(fi_av_insert(av, NULL, 1, fa, 0, NULL), -FI_EINVAL);
	assert_int_equal(fi_av_insert(av, addrs, 1, fa, FI_MULTICAST, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_av_remove(av, fa, 1, 1), -FI_EINVAL);
	assert_int_equal(fi_av_insertsvc(av, "a", "b", fa, 0, NULL),
			 -FI_ENOSYS);

	/* straddr: hex by default, length in/out */
	char s[64];
	len = sizeof(s);
	assert_ptr_equal(fi_av_straddr(av, "A-00000001\0\xff", s, &len), s);
	assert_string_equal(s, "0x412d3030303030303031" "00ff");
	assert_int_equal(len, 2 * ADDRLEN + 3);
	len = 5;
	fi_av_straddr(av, addrs[0], s, &len);
	assert_int_equal(strlen(s), 4);
	assert_int_equal(len, 2 * ADDRLEN + 3);
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(removes, 2);
	test_env_close(&env);
}

/* FI_AV_USER_ID: the ids go in through fi_addr[], the fi_addrs come back
 * out; completions would report the id (util_av_user_id). Every change
 * moves gen. */
static void test_av_user_id(void **state)
{
	struct test_env env;
	struct fid_av *av;
	struct util_av *uav;
	char addrs[3][ADDRLEN];
	fi_addr_t fa[3] = { 700, 701, 702 };
	uint64_t gen;

	(void)state;
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	av = av_open(&env, FI_AV_TABLE, 0);
	uav = to_util_av(av);
	for (int i = 0; i < 3; i++)
		mkaddr(addrs[i], i);
	gen = atomic_load(&uav->gen);
	assert_false(uav->user_ids);
	assert_int_equal(fi_av_insert(av, addrs, 2, fa, FI_AV_USER_ID, NULL),
			 2);
	assert_true(uav->user_ids);
	assert_int_equal(fa[0], 0);
	assert_int_equal(fa[1], 1);
	assert_int_equal(util_av_user_id(uav, 0), 700);
	assert_int_equal(util_av_user_id(uav, 1), 701);
	assert_true(atomic_load(&uav->gen) == gen + 2);
	/* without the flag: the fi_addr itself */
	assert_int_equal(fi_av_insert(av, addrs[2], 1, &fa[2], 0, NULL), 1);
	assert_int_equal(util_av_user_id(uav, fa[2]), fa[2]);
	assert_int_equal(util_av_user_id(uav, 99), FI_ADDR_NOTAVAIL);
	/* the ids need an array to come from */
	assert_int_equal(fi_av_insert(av, addrs, 1, NULL, FI_AV_USER_ID, NULL),
			 -FI_EINVAL);
	gen = atomic_load(&uav->gen);
	assert_int_equal(fi_av_remove(av, &fa[0], 1, 0), 0);
	assert_true(atomic_load(&uav->gen) == gen + 1);
	assert_int_equal(fi_close(&av->fid), 0);
	test_env_close(&env);
}

static void test_av_async_eq(void **state)
{
	struct test_env env;
	struct fi_eq_attr eattr = { .wait_obj = FI_WAIT_NONE };
	struct fi_eq_entry ev;
	struct fi_eq_err_entry err = { 0 };
	struct fid_eq *eq;
	struct fid_av *av;
	char addrs[3][ADDRLEN];
	fi_addr_t fa[3];
	uint32_t event;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	assert_int_equal(fi_eq_open(env.fabric, &eattr, &eq, NULL), 0);
	av = av_open(&env, FI_AV_MAP, 0);
	assert_int_equal(fi_av_bind(av, &eq->fid, 0), 0);
	for (int i = 0; i < 3; i++)
		mkaddr(addrs[i], i);
	addrs[1][0] = 'Z';
	assert_int_equal(fi_av_insert(av, addrs, 3, fa, 0, (void *)0xc0), 0);
	assert_int_equal(fa[1], FI_ADDR_NOTAVAIL);
	assert_int_equal(fi_eq_read(eq, &event, &ev, sizeof(ev), 0),
			 -FI_EAVAIL);
	assert_int_equal(fi_eq_readerr(eq, &err, 0), sizeof(err));
	assert_int_equal(err.data, 1);
	assert_int_equal(err.err, FI_EINVAL);
	assert_ptr_equal(err.context, (void *)0xc0);
	assert_int_equal(fi_eq_read(eq, &event, &ev, sizeof(ev), 0),
			 sizeof(ev));
	assert_int_equal(event, FI_AV_COMPLETE);
	assert_int_equal(ev.data, 2);
	assert_ptr_equal(ev.context, (void *)0xc0);
	assert_int_equal(fi_close(&eq->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fi_close(&eq->fid), 0);
	test_env_close(&env);
}

static void test_av_open_errors(void **state)
{
	struct test_env env;
	struct fi_av_attr attr = { .type = FI_AV_MAP };
	struct fid_av *av;
	struct test_ep *ep;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, 0), 0);
	/* the provider did not describe its addresses */
	assert_int_equal(fi_av_open(env.domain, &attr, &av, NULL), -FI_ENOSYS);
	env.udom->av_prov = &test_av_prov;
	attr.type = 17;
	assert_int_equal(fi_av_open(env.domain, &attr, &av, NULL), -FI_EINVAL);
	attr.type = FI_AV_MAP;
	attr.name = "shared";
	assert_int_equal(fi_av_open(env.domain, &attr, &av, NULL), -FI_ENOSYS);
	attr.name = NULL;
	assert_int_equal(fi_av_open(env.domain, &attr, &av, NULL), 0);
	/* bound to an endpoint: busy */
	ep = test_ep_open(&env);
	assert_int_equal(fi_ep_bind(&ep->util.ep_fid, &av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(&ep->util.ep_fid, &av->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_close(&av->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&ep->util.ep_fid.fid), 0);
	assert_int_equal(fi_close(&av->fid), 0);
	test_env_close(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_av_map),
		cmocka_unit_test(test_av_table),
		cmocka_unit_test(test_av_bad_addresses),
		cmocka_unit_test(test_av_user_id),
		cmocka_unit_test(test_av_async_eq),
		cmocka_unit_test(test_av_open_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
