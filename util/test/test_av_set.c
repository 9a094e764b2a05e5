/* SPDX-License-Identifier: MIT */
/*
 * fi_av_set: creation (empty, FI_UNIVERSE, ranges with strides), the set
 * operations and their order rules, fi_av_set_addr, and the errors
 * (util_av_set.h).
 */
#include "util_test.h"
#include "weft/util_av_set.h"
#include <rdma/fi_collective.h>

#define ADDRLEN 8

static const struct util_av_prov set_av_prov = {
	.addrlen = ADDRLEN,
};

struct fixture {
	struct test_env env;
	struct fid_av *av;
	fi_addr_t fa[16];
};

static int setup_type(void **state, enum fi_av_type type)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct fi_av_attr attr = { .type = type, .count = 16 };
	char addrs[16][ADDRLEN];

	assert_non_null(f);
	assert_int_equal(test_env_open(&f->env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	f->env.udom->av_prov = &set_av_prov;
	assert_int_equal(fi_av_open(f->env.domain, &attr, &f->av, NULL), 0);
	for (int i = 0; i < 16; i++)
		snprintf(addrs[i], ADDRLEN, "a%d", i);
	assert_int_equal(fi_av_insert(f->av, addrs, 16, f->fa, 0, NULL), 16);
	*state = f;
	return 0;
}

static int setup_table(void **state)
{
	return setup_type(state, FI_AV_TABLE);
}

static int setup_map(void **state)
{
	return setup_type(state, FI_AV_MAP);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(fi_close(&f->av->fid), 0);
	test_env_close(&f->env);
	free(f);
	return 0;
}

static struct fid_av_set *set_empty(struct fixture *f)
{
	struct fi_av_set_attr attr = {
		.start_addr = FI_ADDR_NOTAVAIL, .end_addr = FI_ADDR_NOTAVAIL,
	};
	struct fid_av_set *set;

	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), 0);
	return set;
}

/* The members of set, in order, are exactly want[0..n). */
static void check_members(struct fid_av_set *set, const fi_addr_t *want,
			  size_t n)
{
	struct util_av_set *s = to_util_av_set(set);

	assert_int_equal(s->count, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(s->addrs[i], want[i]);
}

static void test_insert_remove(void **state)
{
	struct fixture *f = *state;
	struct fid_av_set *set = set_empty(f);
	fi_addr_t a[3];

	check_members(set, NULL, 0);
	assert_int_equal(fi_av_set_insert(set, f->fa[5]), 0);
	assert_int_equal(fi_av_set_insert(set, f->fa[2]), 0);
	assert_int_equal(fi_av_set_insert(set, f->fa[9]), 0);
	a[0] = f->fa[5]; a[1] = f->fa[2]; a[2] = f->fa[9];
	check_members(set, a, 3);
	/* a member twice, an address the AV does not hold */
	assert_int_equal(fi_av_set_insert(set, f->fa[2]), -FI_EINVAL);
	assert_int_equal(fi_av_set_insert(set, 1000), -FI_EINVAL);
	assert_int_equal(fi_av_set_insert(set, FI_ADDR_NOTAVAIL), -FI_EINVAL);
	check_members(set, a, 3);
	/* remove keeps the order of the rest */
	assert_int_equal(fi_av_set_remove(set, f->fa[5]), 0);
	check_members(set, a + 1, 2);
	assert_int_equal(fi_av_set_remove(set, f->fa[5]), -FI_EINVAL);
	assert_int_equal(fi_close(&set->fid), 0);
}

static void test_universe(void **state)
{
	struct fixture *f = *state;
	struct fi_av_set_attr attr = {
		.start_addr = FI_ADDR_NOTAVAIL, .end_addr = FI_ADDR_NOTAVAIL,
		.flags = FI_UNIVERSE,
	};
	struct fid_av_set *set;
	fi_addr_t want[15];
	size_t n = 0;

	/* a removed address is not a member */
	assert_int_equal(fi_av_remove(f->av, &f->fa[3], 1, 0), 0);
	for (int i = 0; i < 16; i++)
		if (i != 3)
			want[n++] = f->fa[i];
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), 0);
	check_members(set, want, n);
	assert_int_equal(fi_close(&set->fid), 0);
}

static void test_range(void **state)
{
	struct fixture *f = *state;
	struct fi_av_set_attr attr = {
		.start_addr = 2, .end_addr = 11, .stride = 3,
	};
	struct fid_av_set *set;
	fi_addr_t want[] = { 2, 5, 8, 11 }, want2[] = { 2, 8, 11 };

	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), 0);
	check_members(set, want, 4);
	assert_int_equal(fi_close(&set->fid), 0);
	/* removed addresses are skipped; end past the AV is clamped */
	assert_int_equal(fi_av_remove(f->av, &f->fa[5], 1, 0), 0);
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), 0);
	check_members(set, want2, 3);
	assert_int_equal(fi_close(&set->fid), 0);
	attr.start_addr = 14;
	attr.end_addr = UINT64_MAX - 1;
	attr.stride = 1;
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), 0);
	assert_int_equal(to_util_av_set(set)->count, 2);
	assert_int_equal(fi_close(&set->fid), 0);
	/* more addresses than count says, end before start */
	attr.start_addr = 0;
	attr.end_addr = 15;
	attr.count = 4;
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), -FI_EINVAL);
	attr.count = 0;
	attr.start_addr = 9;
	attr.end_addr = 3;
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), -FI_EINVAL);
}

static void test_range_needs_table(void **state)
{
	struct fixture *f = *state;
	struct fi_av_set_attr attr = { .start_addr = 0, .end_addr = 3 };
	struct fid_av_set *set;

	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), -FI_EINVAL);
}

static struct fid_av_set *set_of(struct fixture *f, const int *idx, size_t n)
{
	struct fid_av_set *set = set_empty(f);

	for (size_t i = 0; i < n; i++)
		assert_int_equal(fi_av_set_insert(set, f->fa[idx[i]]), 0);
	return set;
}

static void test_set_ops(void **state)
{
	struct fixture *f = *state;
	const int ia[] = { 4, 1, 7, 3 }, ib[] = { 3, 9, 4, 0 };
	fi_addr_t u[] = { f->fa[4], f->fa[1], f->fa[7], f->fa[3], f->fa[9],
			  f->fa[0] };
	fi_addr_t in[] = { f->fa[4], f->fa[3] }, d[] = { f->fa[1], f->fa[7] };
	struct fid_av_set *a, *b;

	/* union appends the new members at the end, in src order */
	a = set_of(f, ia, 4);
	b = set_of(f, ib, 4);
	assert_int_equal(fi_av_set_union(a, b), 0);
	check_members(a, u, 6);
	assert_int_equal(fi_close(&a->fid), 0);
	/* intersect and diff keep dst order */
	a = set_of(f, ia, 4);
	assert_int_equal(fi_av_set_intersect(a, b), 0);
	check_members(a, in, 2);
	assert_int_equal(fi_close(&a->fid), 0);
	a = set_of(f, ia, 4);
	assert_int_equal(fi_av_set_diff(a, b), 0);
	check_members(a, d, 2);
	/* with itself */
	assert_int_equal(fi_av_set_union(a, a), 0);
	check_members(a, d, 2);
	assert_int_equal(fi_av_set_intersect(a, a), 0);
	check_members(a, d, 2);
	assert_int_equal(fi_av_set_diff(a, a), 0);
	check_members(a, NULL, 0);
	assert_int_equal(fi_close(&a->fid), 0);
	assert_int_equal(fi_close(&b->fid), 0);
}

static void test_other_av(void **state)
{
	struct fixture *f = *state;
	struct fi_av_attr attr = { .type = FI_AV_TABLE };
	struct fid_av *av2;
	struct fid_av_set *a = set_empty(f), *b;
	struct fi_av_set_attr sattr = {
		.start_addr = FI_ADDR_NOTAVAIL, .end_addr = FI_ADDR_NOTAVAIL,
	};

	assert_int_equal(fi_av_open(f->env.domain, &attr, &av2, NULL), 0);
	assert_int_equal(fi_av_set(av2, &sattr, &b, NULL), 0);
	assert_int_equal(fi_av_set_union(a, b), -FI_EINVAL);
	assert_int_equal(fi_av_set_intersect(a, b), -FI_EINVAL);
	assert_int_equal(fi_av_set_diff(a, b), -FI_EINVAL);
	/* the AV stays while a set of it is open */
	assert_int_equal(fi_close(&av2->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&b->fid), 0);
	assert_int_equal(fi_close(&av2->fid), 0);
	assert_int_equal(fi_close(&a->fid), 0);
}

static void test_addr(void **state)
{
	struct fixture *f = *state;
	struct fid_av_set *a = set_empty(f), *b = set_empty(f);
	fi_addr_t ca, cb, ca2;

	assert_int_equal(fi_av_set_addr(a, &ca), 0);
	assert_int_equal(fi_av_set_addr(b, &cb), 0);
	assert_int_equal(fi_av_set_addr(a, &ca2), 0);
	assert_int_equal(ca, ca2);
	assert_int_not_equal(ca, cb);
	assert_int_equal(ca & UTIL_COLL_ADDR_KIND_MASK, UTIL_COLL_ADDR_SET);
	assert_int_equal(fi_av_set_addr(a, NULL), -FI_EINVAL);
	assert_int_equal(fi_close(&a->fid), 0);
	assert_int_equal(fi_close(&b->fid), 0);
}

static void test_bad_attr(void **state)
{
	struct fixture *f = *state;
	uint8_t key[4] = { 1, 2, 3, 4 };
	struct fi_av_set_attr attr = {
		.start_addr = FI_ADDR_NOTAVAIL, .end_addr = FI_ADDR_NOTAVAIL,
	};
	struct fid_av_set *set;

	assert_int_equal(fi_av_set(f->av, NULL, &set, NULL), -FI_EINVAL);
	attr.flags = FI_SEND;
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), -FI_EINVAL);
	attr.flags = FI_ALLREDUCE_SET | FI_BARRIER_SET;
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), 0);
	assert_int_equal(fi_close(&set->fid), 0);
	attr.flags = 0;
	attr.comm_key = key;
	attr.comm_key_size = sizeof(key);
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), -FI_ENOSYS);
	attr.comm_key = NULL;
	attr.comm_key_size = 0;
	attr.stride = 2;	/* a stride without a range */
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), -FI_EINVAL);
	attr.stride = 0;
	attr.flags = FI_UNIVERSE;
	attr.start_addr = 0;
	attr.end_addr = 1;
	assert_int_equal(fi_av_set(f->av, &attr, &set, NULL), -FI_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_insert_remove, setup_map,
						teardown),
		cmocka_unit_test_setup_teardown(test_universe, setup_map,
						teardown),
		cmocka_unit_test_setup_teardown(test_range, setup_table,
						teardown),
		cmocka_unit_test_setup_teardown(test_range_needs_table,
						setup_map, teardown),
		cmocka_unit_test_setup_teardown(test_set_ops, setup_table,
						teardown),
		cmocka_unit_test_setup_teardown(test_other_av, setup_table,
						teardown),
		cmocka_unit_test_setup_teardown(test_addr, setup_table,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_attr, setup_table,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
