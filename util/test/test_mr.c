/* SPDX-License-Identifier: MIT */
#include "util_test.h"

#include <sys/mman.h>
#include <unistd.h>

static void test_mr_prov_key_virt_addr(void **state)
{
	struct test_env env;
	struct fid_mr *mr1, *mr2;
	struct util_mr_map *map;
	static char buf[4096];
	void *local;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN,
				       FI_MR_PROV_KEY | FI_MR_VIRT_ADDR), 0);
	map = &env.udom->mr_map;
	assert_int_equal(fi_mr_reg(env.domain, buf, 1024, FI_REMOTE_READ, 0,
				   0, 0, &mr1, (void *)1), 0);
	assert_int_equal(fi_mr_reg(env.domain, buf + 1024, 2048,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				   &mr2, NULL), 0);
	assert_int_not_equal(fi_mr_key(mr1), fi_mr_key(mr2));
	assert_non_null(fi_mr_desc(mr1));
	assert_ptr_equal(mr1->fid.context, (void *)1);

	uint64_t k1 = fi_mr_key(mr1), k2 = fi_mr_key(mr2);
	uint64_t base1 = (uintptr_t)buf, base2 = (uintptr_t)buf + 1024;

	assert_int_equal(util_mr_check(map, k1, base1 + 10, 100,
				       FI_REMOTE_READ, &local), 0);
	assert_ptr_equal(local, buf + 10);
	/* whole region, and zero bytes at its end */
	assert_int_equal(util_mr_check(map, k1, base1, 1024, FI_REMOTE_READ,
				       &local), 0);
	assert_int_equal(util_mr_check(map, k1, base1 + 1024, 0,
				       FI_REMOTE_READ, &local), 0);
	/* bounds */
	assert_int_equal(util_mr_check(map, k1, base1 + 1, 1024,
				       FI_REMOTE_READ, &local), -FI_EINVAL);
	assert_int_equal(util_mr_check(map, k1, base1 - 1, 1, FI_REMOTE_READ,
				       &local), -FI_EINVAL);
	assert_int_equal(util_mr_check(map, k1, base1 + 1025, 0,
				       FI_REMOTE_READ, &local), -FI_EINVAL);
	/* overflowing arithmetic must not wrap into the region */
	assert_int_equal(util_mr_check(map, k1, base1 + 8, SIZE_MAX,
				       FI_REMOTE_READ, &local), -FI_EINVAL);
	assert_int_equal(util_mr_check(map, k1, UINT64_MAX, 2,
				       FI_REMOTE_READ, &local), -FI_EINVAL);
	/* access */
	assert_int_equal(util_mr_check(map, k1, base1, 8, FI_REMOTE_WRITE,
				       &local), -FI_EACCES);
	assert_int_equal(util_mr_check(map, k2, base2 + 2040, 8,
				       FI_REMOTE_WRITE | FI_REMOTE_READ,
				       &local), 0);
	assert_ptr_equal(local, buf + 1024 + 2040);
	/* one region's key does not reach the other's memory */
	assert_int_equal(util_mr_check(map, k1, base2, 8, FI_REMOTE_READ,
				       &local), -FI_EINVAL);
	/* unknown key */
	assert_int_equal(util_mr_check(map, k1 + k2 + 100, base1, 8,
				       FI_REMOTE_READ, &local), -FI_ENOKEY);

	/* the domain cannot close with a region open */
	assert_int_equal(fi_close(&env.domain->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&mr1->fid), 0);
	assert_int_equal(util_mr_check(map, k1, base1, 8, FI_REMOTE_READ,
				       &local), -FI_ENOKEY);
	assert_int_equal(fi_close(&mr2->fid), 0);
	test_env_close(&env);
}

/* A provider replaces the key with its device's; the old key stops working,
 * the new one reaches the same memory, and a taken key is refused. */
static void test_mr_rekey(void **state)
{
	struct test_env env;
	struct fid_mr *mr1, *mr2;
	struct util_mr_map *map;
	static char buf[256];
	void *local;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN,
				       FI_MR_PROV_KEY | FI_MR_VIRT_ADDR), 0);
	map = &env.udom->mr_map;
	assert_int_equal(fi_mr_reg(env.domain, buf, 128, FI_REMOTE_WRITE, 0,
				   0, 0, &mr1, NULL), 0);
	assert_int_equal(fi_mr_reg(env.domain, buf + 128, 128, FI_REMOTE_WRITE,
				   0, 0, 0, &mr2, NULL), 0);
	uint64_t old = fi_mr_key(mr1), k2 = fi_mr_key(mr2);

	assert_int_equal(util_mr_rekey(map, to_util_mr(mr1), 0xabcd1234), 0);
	assert_int_equal(fi_mr_key(mr1), 0xabcd1234);
	assert_int_equal(util_mr_check(map, 0xabcd1234, (uintptr_t)buf + 8, 8,
				       FI_REMOTE_WRITE, &local), 0);
	assert_ptr_equal(local, buf + 8);
	assert_int_equal(util_mr_check(map, old, (uintptr_t)buf, 8,
				       FI_REMOTE_WRITE, &local), -FI_ENOKEY);
	/* same key again: no change; another region's key: refused */
	assert_int_equal(util_mr_rekey(map, to_util_mr(mr1), 0xabcd1234), 0);
	assert_int_equal(util_mr_rekey(map, to_util_mr(mr2), 0xabcd1234),
			 -FI_ENOKEY);
	assert_int_equal(fi_mr_key(mr2), k2);
	assert_int_equal(util_mr_check(map, k2, (uintptr_t)buf + 128, 8,
				       FI_REMOTE_WRITE, &local), 0);
	assert_int_equal(fi_close(&mr1->fid), 0);
	assert_int_equal(util_mr_check(map, 0xabcd1234, (uintptr_t)buf, 8,
				       FI_REMOTE_WRITE, &local), -FI_ENOKEY);
	assert_int_equal(fi_close(&mr2->fid), 0);
	test_env_close(&env);
}

static void test_mr_user_key_offset(void **state)
{
	struct test_env env;
	struct fid_mr *mr, *dup;
	struct util_mr_map *map;
	static char buf[256];
	void *local;

	/* no VIRT_ADDR: addresses are offsets; no PROV_KEY: user keys */
	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_SAFE, 0), 0);
	map = &env.udom->mr_map;
	assert_int_equal(fi_mr_reg(env.domain, buf, sizeof(buf), 0, 0, 77, 0,
				   &mr, NULL), 0);
	assert_int_equal(fi_mr_key(mr), 77);
	assert_int_equal(fi_mr_reg(env.domain, buf, 8, FI_REMOTE_READ, 0, 77,
				   0, &dup, NULL), -FI_ENOKEY);
	/* access 0 = everything */
	assert_int_equal(util_mr_check(map, 77, 16, 32,
				       FI_REMOTE_READ | FI_REMOTE_WRITE,
				       &local), 0);
	assert_ptr_equal(local, buf + 16);
	assert_int_equal(util_mr_check(map, 77, 250, 6, FI_REMOTE_WRITE,
				       &local), 0);
	assert_int_equal(util_mr_check(map, 77, 250, 7, FI_REMOTE_WRITE,
				       &local), -FI_EINVAL);
	assert_int_equal(util_mr_check(map, 77, (uintptr_t)buf, 1,
				       FI_REMOTE_WRITE, &local), -FI_EINVAL);
	assert_int_equal(fi_close(&mr->fid), 0);
	/* the key is free again */
	assert_int_equal(fi_mr_reg(env.domain, buf, 8, FI_REMOTE_READ, 0, 77,
				   0, &mr, NULL), 0);
	assert_int_equal(fi_close(&mr->fid), 0);
	test_env_close(&env);
}

static void test_mr_bad_input(void **state)
{
	struct test_env env;
	struct fid_mr *mr;
	static char buf[64];
	struct iovec iov[2] = { { buf, 8 }, { buf + 8, 8 } };
	struct fi_mr_attr attr = { .mr_iov = iov, .iov_count = 1,
				   .access = FI_REMOTE_READ,
				   .iface = FI_HMEM_CUDA };

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN, FI_MR_PROV_KEY), 0);
	assert_int_equal(fi_mr_regv(env.domain, iov, 2, FI_REMOTE_READ, 0, 0,
				    0, &mr, NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_reg(env.domain, buf, 8, FI_REMOTE_READ, 4, 0,
				   0, &mr, NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_reg(env.domain, buf, 8, 1ull << 60, 0, 0, 0,
				   &mr, NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_reg(env.domain, NULL, 8, FI_REMOTE_READ, 0, 0,
				   0, &mr, NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_regattr(env.domain, &attr, 0, &mr), -FI_ENOSYS);
	attr.iface = FI_HMEM_SYSTEM;
	assert_int_equal(fi_mr_regattr(env.domain, &attr, 0, &mr), 0);
	assert_int_equal(fi_close(&mr->fid), 0);
	/* many provider keys stay unique */
	struct fid_mr *mrs[100];
	for (int i = 0; i < 100; i++) {
		assert_int_equal(fi_mr_reg(env.domain, buf, 8, FI_READ, 0,
					   0, 0, &mrs[i], NULL), 0);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(fi_mr_key(mrs[i]),
					     fi_mr_key(mrs[j]));
	}
	for (int i = 0; i < 100; i++)
		assert_int_equal(fi_close(&mrs[i]->fid), 0);
	test_env_close(&env);
}

/* A region must be mapped with the access asked for, as ibv_reg_mr
 * checks: before, 1 MiB over a 4 KiB mapping or 2^50 bytes registered,
 * and a peer's RMA then read or wrote past the mapping. Three pages:
 * read-write, read-only, then a hole. */
static void test_mr_unmapped(void **state)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct test_env env;
	struct fid_mr *mr;
	uint8_t *p;

	assert_int_equal(test_env_open(&env, FI_VERSION(1, 17),
				       FI_THREAD_DOMAIN,
				       FI_MR_PROV_KEY | FI_MR_VIRT_ADDR), 0);
	p = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(mprotect(p + pg, pg, PROT_READ), 0);
	assert_int_equal(munmap(p + 2 * pg, pg), 0);

	assert_int_equal(fi_mr_reg(env.domain, p, 1 << 20, FI_REMOTE_READ, 0,
				   0, 0, &mr, NULL), -FI_EFAULT);
	assert_int_equal(fi_mr_reg(env.domain, p, (size_t)1 << 50,
				   FI_REMOTE_READ, 0, 0, 0, &mr, NULL),
			 -FI_EFAULT);
	assert_int_equal(fi_mr_reg(env.domain, p + 2 * pg, 8, FI_REMOTE_READ,
				   0, 0, 0, &mr, NULL), -FI_EFAULT);
	/* the read-only page: readable, not writable (access 0 is all) */
	assert_int_equal(fi_mr_reg(env.domain, p, 2 * pg, FI_REMOTE_WRITE, 0,
				   0, 0, &mr, NULL), -FI_EACCES);
	assert_int_equal(fi_mr_reg(env.domain, p + pg, 8, 0, 0, 0, 0, &mr,
				   NULL), -FI_EACCES);
	assert_int_equal(fi_mr_reg(env.domain, p + pg, 8, FI_RECV, 0, 0, 0,
				   &mr, NULL), -FI_EACCES);
	assert_int_equal(fi_mr_reg(env.domain, p, 2 * pg,
				   FI_REMOTE_READ | FI_SEND | FI_WRITE, 0, 0,
				   0, &mr, NULL), 0);
	assert_int_equal(fi_close(&mr->fid), 0);
	assert_int_equal(fi_mr_reg(env.domain, p + 8, pg - 8, FI_REMOTE_WRITE,
				   0, 0, 0, &mr, NULL), 0);
	assert_int_equal(fi_close(&mr->fid), 0);
	/* a range that wraps around the address space */
	assert_int_equal(fi_mr_reg(env.domain, p, SIZE_MAX, FI_REMOTE_READ, 0,
				   0, 0, &mr, NULL), -FI_EFAULT);
	assert_int_equal(munmap(p, 2 * pg), 0);
	test_env_close(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mr_prov_key_virt_addr),
		cmocka_unit_test(test_mr_rekey),
		cmocka_unit_test(test_mr_user_key_offset),
		cmocka_unit_test(test_mr_bad_input),
		cmocka_unit_test(test_mr_unmapped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
