/* SPDX-License-Identifier: MIT */
/*
 * shm transport: peer liveness (SIGKILL, clean close, recreated name) and
 * reaping of dead producers' slots.
 */
#include "weft/compat.h"
#include "../src/shm_transport.h"
#include "shm_test_util.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

/* Create a region (named when arg is a short name), report its name,
 * optionally attach to the parent's region, then wait to be killed. */
struct owner_arg {
	const char *short_name;
	const char *attach_to;
};

static int child_owner(int rd, int wr, void *varg)
{
	struct owner_arg *arg = varg;
	struct shm_region_attr a;
	struct shm_region *r;
	struct shm_peer *p = NULL;
	char name[SHM_NAME_MAX] = { 0 };
	char go;

	shm_region_attr_default(&a);
	a.name = arg ? arg->short_name : NULL;
	if (shm_region_create(&a, &r))
		return 1;
	if (arg && arg->attach_to && shm_peer_open(r, arg->attach_to, &p))
		return 2;
	strcpy(name, shm_region_name(r));
	shm_test_write(wr, name, sizeof(name));
	shm_test_read(rd, &go, 1);
	shm_peer_close(p);
	shm_region_close(r);
	return 0;
}

static void test_alive_then_killed(void **state)
{
	struct shm_test_child kid;
	struct shm_region *self;
	struct shm_peer *p, *p2;
	char name[SHM_NAME_MAX];

	assert_int_equal(shm_region_create(NULL, &self), 0);
	assert_int_equal(shm_test_fork(&kid, child_owner, NULL), 0);
	assert_int_equal(shm_test_read(kid.from_child, name, sizeof(name)), 0);
	assert_int_equal(shm_peer_open(self, name, &p), 0);
	assert_int_equal(p->pid, kid.pid);
	assert_true(shm_peer_alive(p));
	assert_true(shm_peer_alive(p));

	assert_int_equal(kill(kid.pid, SIGKILL), 0);
	assert_int_equal(shm_test_wait(&kid), -1);
	assert_false(shm_peer_alive(p));
	assert_false(shm_peer_alive(p));
	/* Its object is still there (no cleanup ran), but not openable. */
	assert_true(shm_test_shm_exists(name));
	assert_int_equal(shm_peer_open(self, name, &p2), -FI_ECONNREFUSED);
	/* Sending into a dead peer's queue still works (no crash) until
	 * the queue is full; the provider stops at the liveness check. */
	assert_non_null(shm_peer_reserve(p));
	shm_peer_close(p);
	assert_true(shm_region_reclaim() >= 1);
	assert_false(shm_test_shm_exists(name));
	shm_region_close(self);
}

static void test_clean_close_is_dead(void **state)
{
	struct shm_region *self, *other;
	struct shm_peer *p;

	assert_int_equal(shm_region_create(NULL, &self), 0);
	assert_int_equal(shm_region_create(NULL, &other), 0);
	assert_int_equal(shm_peer_open(self, shm_region_name(other), &p), 0);
	assert_true(shm_peer_alive(p));
	shm_region_close(other);
	assert_false(shm_peer_alive(p));
	shm_peer_close(p);
	shm_region_close(self);
}

/* A name recreated by a new owner is a new object: the old handle stays
 * dead, a new open reaches the new owner. */
static void test_recreated_name(void **state)
{
	struct owner_arg arg = { "recreated", NULL };
	struct shm_test_child k1, k2;
	struct shm_region *self;
	struct shm_peer *p1, *p2;
	char name[SHM_NAME_MAX];

	assert_int_equal(shm_region_create(NULL, &self), 0);
	assert_int_equal(shm_test_fork(&k1, child_owner, &arg), 0);
	assert_int_equal(shm_test_read(k1.from_child, name, sizeof(name)), 0);
	assert_int_equal(shm_peer_open(self, name, &p1), 0);
	kill(k1.pid, SIGKILL);
	assert_int_equal(shm_test_wait(&k1), -1);

	assert_int_equal(shm_test_fork(&k2, child_owner, &arg), 0);
	assert_int_equal(shm_test_read(k2.from_child, name, sizeof(name)), 0);
	assert_false(shm_peer_alive(p1));
	assert_int_equal(shm_peer_open(self, name, &p2), 0);
	assert_true(shm_peer_alive(p2));
	assert_int_equal(p2->pid, k2.pid);
	assert_memory_not_equal(p1->hdr->nonce, p2->hdr->nonce, 16);
	shm_test_write(k2.to_child, "g", 1);
	assert_int_equal(shm_test_wait(&k2), 0);
	assert_false(shm_peer_alive(p2));
	shm_peer_close(p1);
	shm_peer_close(p2);
	shm_region_close(self);
}

/* Producers that attached to us and died leave slots that reap frees;
 * live ones keep theirs. */
static void test_reap_dead_slots(void **state)
{
	struct shm_test_child dead, live;
	struct shm_region *self;
	struct owner_arg arg;
	char name[SHM_NAME_MAX], got[SHM_NAME_MAX];
	int i, attached = 0;

	assert_int_equal(shm_region_create(NULL, &self), 0);
	arg = (struct owner_arg){ NULL, shm_region_name(self) };
	assert_int_equal(shm_test_fork(&dead, child_owner, &arg), 0);
	assert_int_equal(shm_test_fork(&live, child_owner, &arg), 0);
	assert_int_equal(shm_test_read(dead.from_child, name, sizeof(name)), 0);
	assert_int_equal(shm_test_read(live.from_child, got, sizeof(got)), 0);
	for (i = 0; i < 4; i++)
		attached += !shm_region_slot_name(self, (uint16_t)i, got, NULL);
	assert_int_equal(attached, 2);
	assert_int_equal(shm_region_reap(self), 0);

	kill(dead.pid, SIGKILL);
	assert_int_equal(shm_test_wait(&dead), -1);
	assert_int_equal(shm_region_reap(self), 1);
	for (i = 0, attached = 0; i < 4; i++) {
		if (shm_region_slot_name(self, (uint16_t)i, got, NULL))
			continue;
		attached++;
		assert_string_not_equal(got, name);
	}
	assert_int_equal(attached, 1);
	shm_test_write(live.to_child, "g", 1);
	assert_int_equal(shm_test_wait(&live), 0);
	/* Its clean close gave the slot back already. */
	assert_int_equal(shm_region_reap(self), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(shm_region_slot_name(self, (uint16_t)i, got,
						      NULL), -FI_ENOENT);
	shm_region_reclaim();
	shm_region_close(self);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alive_then_killed),
		cmocka_unit_test(test_clean_close_is_dead),
		cmocka_unit_test(test_recreated_name),
		cmocka_unit_test(test_reap_dead_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
