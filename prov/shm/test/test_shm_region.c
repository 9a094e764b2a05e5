/* SPDX-License-Identifier: MIT */
/*
 * shm transport: region life cycle, names, header validation, reclaim.
 */
#include "weft/compat.h"
#include "../src/shm_transport.h"
#include "../src/shm_addr.h"
#include "shm_test_util.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <cmocka.h>

static void test_create_close(void **state)
{
	struct shm_region *r;
	char path[128], name[SHM_NAME_MAX];
	struct stat st;

	assert_int_equal(shm_region_create(NULL, &r), 0);
	strcpy(name, shm_region_name(r));
	assert_true(shm_region_name_valid(name));
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_uid, getuid());
	assert_int_equal((size_t)st.st_size, r->size);
	assert_int_equal(r->hdr->magic, SHM_REGION_MAGIC);
	assert_int_equal(r->hdr->owner_pid, getpid());
	assert_int_equal(shm_region_hdr_check(r->hdr, r->size), 0);
	shm_region_close(r);
	assert_false(shm_test_shm_exists(name));
}

/* The random part is 24 hex digits (96 bits: the address must fit
 * FI_NAME_MAX), and differs between regions made by the same process
 * right after each other. */
static void test_names_unguessable(void **state)
{
	struct shm_region *a, *b;
	const char *ra, *rb;

	assert_int_equal(shm_region_create(NULL, &a), 0);
	assert_int_equal(shm_region_create(NULL, &b), 0);
	ra = strrchr(shm_region_name(a), '-') + 1;
	rb = strrchr(shm_region_name(b), '-') + 1;
	assert_int_equal(strlen(ra), 24);
	assert_int_equal(strspn(ra, "0123456789abcdef"), 24);
	assert_string_not_equal(ra, rb);
	assert_memory_not_equal(a->hdr->nonce, b->hdr->nonce, 16);
	shm_region_close(a);
	shm_region_close(b);
}

static void test_attr_check(void **state)
{
	struct shm_region_attr a;
	struct shm_region *r;

	shm_region_attr_default(&a);
	assert_int_equal(shm_region_attr_check(&a), 0);
	a.cell_count = 100;
	assert_int_equal(shm_region_create(&a, &r), -FI_EINVAL);
	shm_region_attr_default(&a);
	a.cell_size = 100;
	assert_int_equal(shm_region_attr_check(&a), -FI_EINVAL);
	shm_region_attr_default(&a);
	a.bounce_seg_count = 65;
	assert_int_equal(shm_region_attr_check(&a), -FI_EINVAL);
	shm_region_attr_default(&a);
	a.max_peers = 0;
	assert_int_equal(shm_region_attr_check(&a), -FI_EINVAL);
	shm_region_attr_default(&a);
	a.bounce_seg_size = 5000;
	assert_int_equal(shm_region_attr_check(&a), -FI_EINVAL);
}

static void test_named(void **state)
{
	struct shm_region_attr a;
	struct shm_region *r, *r2;
	char want[SHM_NAME_MAX];

	shm_region_attr_default(&a);
	a.name = "test.named_1:9228";
	assert_int_equal(shm_region_create(&a, &r), 0);
	snprintf(want, sizeof(want), "/weftshm-%u-n-test.named_1:9228",
		 (unsigned)getuid());
	assert_string_equal(shm_region_name(r), want);
	assert_int_equal(shm_region_create(&a, &r2), -FI_EADDRINUSE);
	shm_region_close(r);
	assert_false(shm_test_shm_exists(want));
	assert_int_equal(shm_region_create(&a, &r), 0);
	shm_region_close(r);

	a.name = "a/b";
	assert_int_equal(shm_region_create(&a, &r), -FI_EINVAL);
	a.name = "";
	assert_int_equal(shm_region_create(&a, &r), -FI_EINVAL);
	a.name = "0123456789012345678901234567890123456789012345678";
	assert_int_equal(shm_region_create(&a, &r), -FI_EINVAL);
}

/* Chosen names in a job's namespace: the same short name in two
 * namespaces is two regions; addresses of our namespace are the short
 * name, of another the full name, and a full chosen name creates in the
 * namespace it names. */
static void test_named_namespace(void **state)
{
	static const char *const bad[] = {
		"", "m", "j", "jabc", "j0123456789ABCDEF", "j0123456789abcdeg",
		"j0123456789abcdef0", "n-", "n0",
	};
	const char *job = "j0123456789abcdef";
	char want[SHM_NAME_MAX], addr[SHM_ADDR_LEN], full[SHM_ADDR_LEN];
	char region[SHM_NAME_MAX], short_name[SHM_ADDR_NAME_MAX + 1];
	char ns[SHM_NS_MAX + 1];
	struct shm_region_attr a;
	struct shm_region *r, *r2;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(shm_region_set_namespace(bad[i]), -FI_EINVAL);
	assert_string_equal(shm_region_namespace(), "n");
	assert_int_equal(shm_region_set_namespace(job), 0);

	shm_region_attr_default(&a);
	a.name = "nsx";
	assert_int_equal(shm_region_create(&a, &r), 0);
	snprintf(want, sizeof(want), "/weftshm-%u-%s-nsx", (unsigned)getuid(),
		 job);
	assert_string_equal(shm_region_name(r), want);
	/* The same short name without a job: another region. */
	a.ns = "n";
	assert_int_equal(shm_region_create(&a, &r2), 0);
	snprintf(want, sizeof(want), "/weftshm-%u-n-nsx", (unsigned)getuid());
	assert_string_equal(shm_region_name(r2), want);

	assert_int_equal(shm_addr_from_region(shm_region_name(r), addr,
					      sizeof(addr)), 0);
	assert_string_equal(addr, "fi_shm://nsx");
	assert_int_equal(shm_addr_to_region(addr, sizeof(addr), region,
					    sizeof(region)), 0);
	assert_string_equal(region, shm_region_name(r));
	assert_int_equal(shm_addr_from_region(shm_region_name(r2), full,
					      sizeof(full)), 0);
	snprintf(want, sizeof(want), "fi_shm://weftshm-%u-n-nsx",
		 (unsigned)getuid());
	assert_string_equal(full, want);
	assert_int_equal(shm_addr_to_region(full, sizeof(full), region,
					    sizeof(region)), 0);
	assert_string_equal(region, shm_region_name(r2));
	assert_int_equal(shm_addr_chosen(full, sizeof(full), short_name,
					 sizeof(short_name), ns), 0);
	assert_string_equal(short_name, "nsx");
	assert_string_equal(ns, "n");
	assert_int_equal(shm_addr_chosen(addr, sizeof(addr), short_name,
					 sizeof(short_name), ns), 0);
	assert_string_equal(short_name, "nsx");
	assert_string_equal(ns, "");
	/* Another user's, or a generated region's: nothing to create. */
	snprintf(full, sizeof(full), "fi_shm://weftshm-%u-n-nsx",
		 (unsigned)getuid() + 1);
	assert_int_equal(shm_addr_chosen(full, sizeof(full), short_name,
					 sizeof(short_name), ns), -FI_EINVAL);
	snprintf(full, sizeof(full), "fi_shm://weftshm-%u-123-0123456789ab",
		 (unsigned)getuid());
	assert_int_equal(shm_addr_chosen(full, sizeof(full), short_name,
					 sizeof(short_name), ns), -FI_EINVAL);

	shm_region_close(r2);
	shm_region_close(r);
	assert_int_equal(shm_region_set_namespace("n"), 0);
}

/* A child creates a region and vanishes without cleanup (as if killed):
 * its object stays behind until someone reclaims it. */
static int child_leave_region(int rd, int wr, void *arg)
{
	struct shm_region_attr a;
	struct shm_region *r;
	char name[SHM_NAME_MAX] = { 0 };

	shm_region_attr_default(&a);
	a.name = arg;
	if (shm_region_create(&a, &r))
		return 1;
	strcpy(name, shm_region_name(r));
	shm_test_write(wr, name, sizeof(name));
	return 0;
}

static void test_named_takeover(void **state)
{
	struct shm_region_attr a;
	struct shm_test_child c;
	struct shm_region *r;
	char name[SHM_NAME_MAX];

	assert_int_equal(shm_test_fork(&c, child_leave_region, "takeover"), 0);
	assert_int_equal(shm_test_read(c.from_child, name, sizeof(name)), 0);
	assert_int_equal(shm_test_wait(&c), 0);
	assert_true(shm_test_shm_exists(name));

	shm_region_attr_default(&a);
	a.name = "takeover";
	assert_int_equal(shm_region_create(&a, &r), 0);
	assert_string_equal(shm_region_name(r), name);
	assert_int_equal(r->hdr->owner_pid, getpid());
	shm_region_close(r);
	assert_false(shm_test_shm_exists(name));
}

/* Any process's first region sweeps dead owners' regions, so another
 * test program running at the same time (make -j2 check) may reclaim the
 * child's region first: that round proves nothing and is tried again. */
static void test_reclaim(void **state)
{
	struct shm_test_child c;
	struct shm_region *mine;
	char name[SHM_NAME_MAX];
	bool proved = false;

	assert_int_equal(shm_region_create(NULL, &mine), 0);
	for (int round = 0; round < 20 && !proved; round++) {
		int n;

		assert_int_equal(shm_test_fork(&c, child_leave_region, NULL),
				 0);
		assert_int_equal(shm_test_read(c.from_child, name,
					       sizeof(name)), 0);
		assert_int_equal(shm_test_wait(&c), 0);
		assert_string_not_equal(name, shm_region_name(mine));
		if (!shm_test_shm_exists(name))
			continue;
		n = shm_region_reclaim();
		assert_false(shm_test_shm_exists(name));
		proved = n >= 1;
	}
	assert_true(proved);
	/* A live owner's region is left alone. */
	assert_true(shm_test_shm_exists(shm_region_name(mine)));
	assert_int_equal(shm_region_hdr_check(mine->hdr, mine->size), 0);
	shm_region_close(mine);
}

/* A young object that never became ready may be one in creation. */
static void test_reclaim_spares_young_unready(void **state)
{
	char name[SHM_NAME_MAX];
	int fd;

	snprintf(name, sizeof(name), "/weftshm-%u-n-young.unready",
		 (unsigned)getuid());
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	shm_region_reclaim();
	assert_true(shm_test_shm_exists(name));
	close(fd);
	shm_unlink(name);
}

static void expect_hdr_rejected(const struct shm_region *r,
				void (*spoil)(struct shm_region_hdr *h),
				size_t file_size)
{
	struct shm_region_hdr *copy = malloc(sizeof(*copy));

	assert_non_null(copy);
	memcpy(copy, r->hdr, sizeof(*copy));
	if (spoil)
		spoil(copy);
	assert_int_equal(shm_region_hdr_check(copy, file_size), -FI_EINVAL);
	free(copy);
}

static void spoil_magic(struct shm_region_hdr *h) { h->magic ^= 1; }
static void spoil_version(struct shm_region_hdr *h) { h->version++; }
static void spoil_hdr_size(struct shm_region_hdr *h) { h->hdr_size--; }
static void spoil_count(struct shm_region_hdr *h) { h->cell_count = 3; }
static void spoil_cell_size(struct shm_region_hdr *h) { h->cell_size += 64; }
static void spoil_peers(struct shm_region_hdr *h) { h->max_peers = 0; }
static void spoil_size(struct shm_region_hdr *h) { h->region_size += 4096; }
static void spoil_cells_off(struct shm_region_hdr *h) { h->cells_off += 64; }
static void spoil_seg_off(struct shm_region_hdr *h) { h->seg_data_off = 0; }
static void spoil_ready(struct shm_region_hdr *h) { atomic_store(&h->ready, 0); }
static void spoil_uid(struct shm_region_hdr *h) { h->owner_uid++; }
static void spoil_pid(struct shm_region_hdr *h) { h->owner_pid = -5; }
static void spoil_segs(struct shm_region_hdr *h) { h->bounce_seg_count = 1000; }

static void test_hdr_validation(void **state)
{
	static void (*const spoil[])(struct shm_region_hdr *) = {
		spoil_magic, spoil_version, spoil_hdr_size, spoil_count,
		spoil_cell_size, spoil_peers, spoil_size, spoil_cells_off,
		spoil_seg_off, spoil_ready, spoil_uid, spoil_pid, spoil_segs,
	};
	struct shm_region *r;
	size_t i;

	assert_int_equal(shm_region_create(NULL, &r), 0);
	for (i = 0; i < WEFT_ARRAY_SIZE(spoil); i++)
		expect_hdr_rejected(r, spoil[i], r->size);
	expect_hdr_rejected(r, NULL, r->size - 4096);
	expect_hdr_rejected(r, NULL, 16);
	shm_region_close(r);
}

/* A peer whose shared header was corrupted in place is not opened. */
static void test_open_corrupt_peer(void **state)
{
	struct shm_region *self, *victim;
	struct shm_peer *p;

	assert_int_equal(shm_region_create(NULL, &self), 0);
	assert_int_equal(shm_region_create(NULL, &victim), 0);
	victim->hdr->cell_count = 1u << 19;
	assert_int_equal(shm_peer_open(self, shm_region_name(victim), &p),
			 -FI_EINVAL);
	victim->hdr->cell_count = victim->attr.cell_count;
	assert_int_equal(shm_peer_open(self, shm_region_name(victim), &p), 0);
	shm_peer_close(p);
	shm_region_close(victim);
	shm_region_close(self);
}

/* An object with our prefix but garbage in it (too small, then sized but
 * zero) is rejected before anything in it is used. */
static void test_open_garbage_object(void **state)
{
	struct shm_region *self;
	struct shm_peer *p;
	char name[SHM_NAME_MAX];
	int fd;

	assert_int_equal(shm_region_create(NULL, &self), 0);
	snprintf(name, sizeof(name), "/weftshm-%u-n-garbage", (unsigned)getuid());
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	assert_int_equal(ftruncate(fd, 8), 0);
	assert_int_equal(shm_peer_open(self, name, &p), -FI_EINVAL);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	assert_int_equal(shm_peer_open(self, name, &p), -FI_EINVAL);
	/* Group/other access bits: refused even with a good header. */
	assert_int_equal(fchmod(fd, 0644), 0);
	assert_int_equal(shm_peer_open(self, name, &p), -FI_EINVAL);
	close(fd);
	shm_unlink(name);
	shm_region_close(self);
}

static void test_open_bad_names(void **state)
{
	static const char *const bad[] = {
		"/etc/passwd", "weftshm-0-n-x", "/weftshm-", "/weftshm-99999-n-x",
		"../weftshm", "/weftshm-%u-n-a/b", "/weftshm-%u-n-a b",
	};
	char name[SHM_NAME_MAX + 8], big[200];
	struct shm_region *self;
	struct shm_peer *p;
	size_t i;

	assert_int_equal(shm_region_create(NULL, &self), 0);
	for (i = 0; i < WEFT_ARRAY_SIZE(bad); i++) {
		snprintf(name, sizeof(name), bad[i], (unsigned)getuid());
		if (!strcmp(bad[i], "/weftshm-99999-n-x") && getuid() == 99999)
			continue;
		assert_int_equal(shm_peer_open(self, name, &p), -FI_EINVAL);
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(name, sizeof(name), "/weftshm-%u-n-", (unsigned)getuid());
	memcpy(big, name, strlen(name));
	assert_int_equal(shm_peer_open(self, big, &p), -FI_EINVAL);
	assert_int_equal(shm_peer_open(self, NULL, &p), -FI_EINVAL);
	snprintf(name, sizeof(name), "/weftshm-%u-n-nosuchregion",
		 (unsigned)getuid());
	assert_int_equal(shm_peer_open(self, name, &p), -FI_ENOENT);
	shm_region_close(self);
}

/* Opening a peer takes a slot there that names us; closing frees it and
 * the next open gets a new generation. */
static void test_slots(void **state)
{
	struct shm_region *a, *b;
	struct shm_peer *p;
	char name[SHM_NAME_MAX];
	uint32_t gen, gen2;
	uint16_t src;

	assert_int_equal(shm_region_create(NULL, &a), 0);
	assert_int_equal(shm_region_create(NULL, &b), 0);
	assert_int_equal(shm_peer_open(a, shm_region_name(b), &p), 0);
	src = p->q.src;
	assert_int_equal(shm_region_slot_name(b, src, name, &gen), 0);
	assert_string_equal(name, shm_region_name(a));
	assert_int_equal((uint16_t)gen, p->q.src_gen);
	assert_true(shm_region_slot_alive(b, src));
	assert_int_equal(shm_region_slot_name(b, src + 1, name, NULL),
			 -FI_ENOENT);
	assert_int_equal(shm_region_slot_name(b, 60000, name, NULL),
			 -FI_EINVAL);
	shm_peer_close(p);
	assert_int_equal(shm_region_slot_name(b, src, name, NULL), -FI_ENOENT);
	assert_int_equal(shm_peer_open(a, shm_region_name(b), &p), 0);
	assert_int_equal(p->q.src, src);
	assert_int_equal(shm_region_slot_name(b, src, name, &gen2), 0);
	assert_int_equal(gen2, gen + 1);
	/* A garbage name written into the slot is refused, not used. */
	memset(b->slots[src].name, '/', SHM_NAME_MAX);
	assert_int_equal(shm_region_slot_name(b, src, name, NULL), -FI_EINVAL);
	shm_peer_close(p);
	shm_region_close(b);
	shm_region_close(a);
}

static void test_slots_full(void **state)
{
	struct shm_region_attr at;
	struct shm_region *a, *b;
	struct shm_peer *p[3];

	shm_region_attr_default(&at);
	at.max_peers = 2;
	assert_int_equal(shm_region_create(NULL, &a), 0);
	assert_int_equal(shm_region_create(&at, &b), 0);
	assert_int_equal(shm_peer_open(a, shm_region_name(b), &p[0]), 0);
	assert_int_equal(shm_peer_open(a, shm_region_name(b), &p[1]), 0);
	assert_int_equal(shm_peer_open(a, shm_region_name(b), &p[2]), -FI_EBUSY);
	shm_peer_close(p[0]);
	assert_int_equal(shm_peer_open(a, shm_region_name(b), &p[2]), 0);
	shm_peer_close(p[1]);
	shm_peer_close(p[2]);
	shm_region_close(b);
	shm_region_close(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_close),
		cmocka_unit_test(test_names_unguessable),
		cmocka_unit_test(test_attr_check),
		cmocka_unit_test(test_named),
		cmocka_unit_test(test_named_namespace),
		cmocka_unit_test(test_named_takeover),
		cmocka_unit_test(test_reclaim),
		cmocka_unit_test(test_reclaim_spares_young_unready),
		cmocka_unit_test(test_hdr_validation),
		cmocka_unit_test(test_open_corrupt_peer),
		cmocka_unit_test(test_open_garbage_object),
		cmocka_unit_test(test_open_bad_names),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_slots_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
