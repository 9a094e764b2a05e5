/* SPDX-License-Identifier: MIT */
/*
 * shm provider under FI_THREAD_SAFE: several threads on one endpoint and
 * one CQ at once. Two threads inject on the same endpoint toward the same
 * peer (the endpoint lock is all that serialises their claims in the
 * peer's queue), a third injects from another endpoint, one thread posts
 * the receives while another reads the shared CQ (so progress, receive
 * posting and completion writes race). Every message carries its sender
 * and sequence number; each tag's receives must get that sender's messages
 * in order, none lost, none twice.
 */
#include "shm_prov_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define T_SENDERS 3
#define T_MSGS 10000
/* Only there to turn a hang into a failure: generous, because five
 * threads yielding to each other on a loaded 2-CPU machine (or next to
 * real-time benchmark processes) can take long. */
#define T_MT_DEADLINE_S 300
#define T_INFLIGHT 256		/* receives posted and not yet completed */
#define T_LEN 64
/* Messages a sender may be ahead of its receives' completions: bounds the
 * unexpected messages (a flood of one tag would fill the unexpected pool
 * and stop the queue while the receiver waits for another tag). */
#define T_AHEAD 64

struct t_slot {
	struct fi_context ctx;		/* first: the receive's context */
	uint32_t tag;
	uint32_t seq;
	uint8_t buf[T_LEN];
};

struct t_mt {
	struct tctx t;
	struct t_slot *slots;		/* T_SENDERS * T_MSGS, by tag then seq */
	atomic_uint completed;
	atomic_uint done[T_SENDERS];	/* completed receives per tag */
	atomic_uint errors;
	atomic_bool stop;
};

static struct t_mt M;

struct t_sender {
	int ep;
	uint32_t tag;
};

static void *t_send_thread(void *arg)
{
	const struct t_sender *s = arg;
	uint8_t msg[T_LEN];
	uint64_t deadline = t_now_s() + T_MT_DEADLINE_S;
	uint32_t seq;
	ssize_t ret;

	for (seq = 0; seq < T_MSGS; seq++) {
		while (seq - atomic_load(&M.done[s->tag]) >= T_AHEAD) {
			if (atomic_load(&M.stop) || t_now_s() > deadline)
				return (void *)1;
			sched_yield();
		}
		memset(msg, (int)(seq & 0xff), sizeof(msg));
		memcpy(msg, &s->tag, sizeof(s->tag));
		memcpy(msg + 4, &seq, sizeof(seq));
		while ((ret = fi_tinject(M.t.ep[s->ep], msg, sizeof(msg),
					 M.t.addr[2], s->tag)) == -FI_EAGAIN) {
			if (atomic_load(&M.stop) || t_now_s() > deadline)
				return (void *)1;
			sched_yield();
		}
		if (ret)
			return (void *)2;
	}
	return NULL;
}

static void t_check_slot(const struct t_slot *sl, uint64_t len)
{
	uint32_t tag, seq, i;

	memcpy(&tag, sl->buf, sizeof(tag));
	memcpy(&seq, sl->buf + 4, sizeof(seq));
	if (len != T_LEN || tag != sl->tag || seq != sl->seq) {
		atomic_fetch_add(&M.errors, 1);
		return;
	}
	for (i = 8; i < T_LEN; i++)
		if (sl->buf[i] != (uint8_t)(seq & 0xff)) {
			atomic_fetch_add(&M.errors, 1);
			return;
		}
}

static void *t_reap_thread(void *arg)
{
	struct fi_cq_tagged_entry e[16];
	uint64_t deadline = t_now_s() + T_MT_DEADLINE_S;
	ssize_t n, i;

	(void)arg;
	while (atomic_load(&M.completed) < T_SENDERS * T_MSGS) {
		n = fi_cq_read(M.t.cq, e, 16);
		if (n == -FI_EAGAIN) {
			if (atomic_load(&M.stop) || t_now_s() > deadline)
				return (void *)1;
			continue;
		}
		if (n < 0)
			return (void *)2;
		for (i = 0; i < n; i++) {
			if (!(e[i].flags & FI_RECV)) {
				atomic_fetch_add(&M.errors, 1);
				continue;
			}
			struct t_slot *sl = e[i].op_context;

			t_check_slot(sl, e[i].len);
			atomic_fetch_add(&M.done[sl->tag % T_SENDERS], 1);
			atomic_fetch_add(&M.completed, 1);
		}
	}
	return NULL;
}

/* Post the receives of every tag in order, at most T_INFLIGHT ahead of
 * the reaper. */
static int t_post_all(void)
{
	uint64_t deadline = t_now_s() + T_MT_DEADLINE_S;
	uint32_t seq, tag;
	unsigned int posted = 0;
	ssize_t ret;

	for (seq = 0; seq < T_MSGS; seq++) {
		for (tag = 0; tag < T_SENDERS; tag++) {
			struct t_slot *sl = &M.slots[tag * T_MSGS + seq];

			sl->tag = tag;
			sl->seq = seq;
			while (posted - atomic_load(&M.completed) >=
			       T_INFLIGHT) {
				if (t_now_s() > deadline)
					return -1;
				sched_yield();
			}
			while ((ret = fi_trecv(M.t.ep[2], sl->buf, T_LEN, NULL,
					       FI_ADDR_UNSPEC, tag, 0,
					       &sl->ctx)) == -FI_EAGAIN)
				if (t_now_s() > deadline)
					return -1;
			if (ret)
				return -1;
			posted++;
		}
	}
	return 0;
}

static void test_thread_safe_msgs(void **state)
{
	struct t_sender snd[T_SENDERS] = { { 0, 0 }, { 0, 1 }, { 1, 2 } };
	pthread_t ts[T_SENDERS], tr;
	void *res;
	int i, post_ret;

	(void)state;
	M.slots = calloc(T_SENDERS * T_MSGS, sizeof(*M.slots));
	assert_non_null(M.slots);
	atomic_init(&M.completed, 0);
	for (i = 0; i < T_SENDERS; i++)
		atomic_init(&M.done[i], 0);
	atomic_init(&M.errors, 0);
	atomic_init(&M.stop, false);
	t_open(&M.t, FI_MSG | FI_TAGGED, 3);
	assert_int_equal(M.t.info->domain_attr->threading, FI_THREAD_SAFE);

	assert_int_equal(pthread_create(&tr, NULL, t_reap_thread, NULL), 0);
	for (i = 0; i < T_SENDERS; i++)
		assert_int_equal(pthread_create(&ts[i], NULL, t_send_thread,
						&snd[i]), 0);
	post_ret = t_post_all();
	if (post_ret)
		atomic_store(&M.stop, true);
	for (i = 0; i < T_SENDERS; i++) {
		pthread_join(ts[i], &res);
		assert_null(res);
	}
	pthread_join(tr, &res);
	assert_int_equal(post_ret, 0);
	assert_null(res);
	assert_int_equal(atomic_load(&M.completed), T_SENDERS * T_MSGS);
	assert_int_equal(atomic_load(&M.errors), 0);
	t_close(&M.t);
	free(M.slots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_safe_msgs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
