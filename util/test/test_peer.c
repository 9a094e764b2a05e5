/* SPDX-License-Identifier: MIT */
/*
 * The helpers of the peer-failure contract (weft/util_peer.h): the watch
 * reads no clock while idle, is due one interval after it was armed,
 * stays armed while something waits and goes idle when nothing does; a
 * peer set holds exactly the ids added, across word boundaries.
 */
#include "util_test.h"
#include "weft/util_peer.h"

#include <time.h>

static void test_watch_idle(void **state)
{
	struct util_peer_watch w;
	uint64_t now = 12345;

	(void)state;
	util_peer_watch_init(&w, 1000000);
	assert_false(util_peer_watch_due(&w, &now));
	assert_int_equal(now, 12345);	/* no clock read while idle */
	/* interval 0: the watch is off, arming does nothing */
	util_peer_watch_init(&w, 0);
	util_peer_watch_arm(&w);
	assert_int_equal(w.next_ns, 0);
	assert_false(util_peer_watch_due(&w, &now));
}

static void test_watch_due(void **state)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 3000000 };
	struct util_peer_watch w;
	uint64_t t0 = util_time_ns(), now = 0, armed;

	(void)state;
	util_peer_watch_init(&w, 2000000);	/* 2 ms */
	util_peer_watch_arm(&w);
	armed = w.next_ns;
	assert_true(armed >= t0 + 2000000);
	/* arming again while armed keeps the first deadline */
	util_peer_watch_arm(&w);
	assert_int_equal(w.next_ns, armed);
	if (util_peer_watch_due(&w, &now))
		assert_true(now >= armed);
	nanosleep(&ts, NULL);
	assert_true(util_peer_watch_due(&w, &now));
	assert_true(now >= armed);
	/* still waiting: due again one interval after this check */
	util_peer_watch_next(&w, now, true);
	assert_int_equal(w.next_ns, now + 2000000);
	/* nothing waits any more: idle */
	util_peer_watch_next(&w, now, false);
	assert_int_equal(w.next_ns, 0);
	assert_false(util_peer_watch_due(&w, &now));
}

static void test_peer_set(void **state)
{
	uint64_t set[UTIL_PEER_SET_WORDS(130)] = { 0 };
	uint32_t ids[] = { 0, 63, 64, 129 }, i, n = 0;

	(void)state;
	assert_int_equal(UTIL_PEER_SET_WORDS(130), 3);
	assert_int_equal(UTIL_PEER_SET_WORDS(128), 2);
	for (i = 0; i < 4; i++)
		util_peer_set_add(set, ids[i]);
	util_peer_set_add(set, 64);	/* twice: still one member */
	for (i = 0; i < 130; i++)
		n += util_peer_set_has(set, i);
	assert_int_equal(n, 4);
	for (i = 0; i < 4; i++)
		assert_true(util_peer_set_has(set, ids[i]));
	assert_false(util_peer_set_has(set, 1));
	assert_false(util_peer_set_has(set, 65));
	assert_false(util_peer_set_has(set, 128));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_idle),
		cmocka_unit_test(test_watch_due),
		cmocka_unit_test(test_peer_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
