/* SPDX-License-Identifier: MIT */
#include "util_test.h"

struct obj {
	void *link;		/* clobbered while free */
	uint64_t stamp;
	char pad[40];
};

static int inits;

static void obj_init(void *p, void *arg)
{
	struct obj *o = p;

	o->stamp = (uint64_t)(uintptr_t)arg;
	inits++;
}

static void test_pool_get_put(void **state)
{
	struct util_pool pool;
	struct obj *o[10];

	inits = 0;
	assert_int_equal(util_pool_init(&pool, sizeof(struct obj), 64, 4, 3, 0,
					obj_init, (void *)0xabc), 0);
	assert_int_equal(pool.nobjs, 6);	/* two chunks of 3 */
	assert_int_equal(inits, 6);
	for (int i = 0; i < 10; i++) {
		o[i] = util_pool_get(&pool);
		assert_non_null(o[i]);
		assert_int_equal((uintptr_t)o[i] % 64, 0);
		assert_int_equal(o[i]->stamp, 0xabc);
		memset(o[i]->pad, i, sizeof(o[i]->pad));
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(o[i], o[j]);
	}
	/* grew by whole chunks, never per object */
	assert_int_equal(pool.nobjs, 12);
	assert_int_equal(inits, 12);
	assert_int_equal(pool.in_use, 10);
	/* objects do not overlap: each still holds its pattern */
	for (int i = 0; i < 10; i++)
		for (size_t k = 0; k < sizeof(o[i]->pad); k++)
			assert_int_equal(o[i]->pad[k], i);
	/* LIFO reuse without growth */
	util_pool_put(&pool, o[3]);
	assert_ptr_equal(util_pool_get(&pool), o[3]);
	for (int i = 0; i < 10; i++)
		util_pool_put(&pool, o[i]);
	assert_int_equal(pool.in_use, 0);
	for (int i = 0; i < 12; i++)
		assert_non_null(util_pool_get(&pool));
	assert_int_equal(pool.nobjs, 12);
	util_pool_fini(&pool);
}

static void test_pool_max(void **state)
{
	struct util_pool pool;
	void *o[5];

	assert_int_equal(util_pool_init(&pool, 24, 0, 2, 2, 5, NULL, NULL), 0);
	for (int i = 0; i < 5; i++)
		assert_non_null(o[i] = util_pool_get(&pool));
	assert_null(util_pool_get(&pool));
	assert_int_equal(util_pool_grow(&pool), -FI_EAGAIN);
	util_pool_put(&pool, o[0]);
	assert_ptr_equal(util_pool_get(&pool), o[0]);
	util_pool_fini(&pool);

	/* bad parameters */
	assert_int_equal(util_pool_init(&pool, 0, 0, 0, 0, 0, NULL, NULL),
			 -FI_EINVAL);
	assert_int_equal(util_pool_init(&pool, 8, 24, 0, 0, 0, NULL, NULL),
			 -FI_EINVAL);
	assert_int_equal(util_pool_init(&pool, 8, 0, 10, 0, 5, NULL, NULL),
			 -FI_EINVAL);
	/* tiny objects still hold the free-list link */
	assert_int_equal(util_pool_init(&pool, 1, 1, 8, 8, 0, NULL, NULL), 0);
	assert_true(pool.obj_size >= sizeof(void *));
	util_pool_fini(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_get_put),
		cmocka_unit_test(test_pool_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
