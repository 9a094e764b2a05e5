/* SPDX-License-Identifier: MIT */
/*
 * shm provider: an address inserted again after its endpoint was replaced
 * (fabtests' multi-client), messages of an endpoint that closed before
 * they were read (fabtests' multi-ep), and poll sets on an shm domain. Endpoints of
 * one process through the public API, data checked.
 */
#include "shm_prov_test.h"

#include <unistd.h>

static struct tctx T;

#define CAPS (FI_MSG | FI_TAGGED | FI_SOURCE)

static int setup(void **state)
{
	(void)state;
	t_open(&T, CAPS, 2);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	t_close(&T);
	return 0;
}

/* Upstream's fi_rdm_multi_client: clients one after the other under the
 * same name (same service), each announcing itself with a message; the
 * server inserts each one's address (never removing it) and answers it.
 * The insert returns the fi_addr it gave the first client, and that
 * fi_addr must now reach the new endpoint, not the closed one. A second
 * insert of a live address keeps its fi_addr and its peer. */
static void test_reinsert_new_incarnation(void **state)
{
	struct fi_info *hints = t_hints(FI_MSG), *cinfo;
	struct fid_ep *cep;
	char svc[32], cname[T_ADDR_LEN];
	size_t len;
	fi_addr_t client, first = FI_ADDR_NOTAVAIL, again;
	uint32_t hello, got, answer, back;
	struct fi_context sc, rc, sc2, rc2;
	int round;

	(void)state;
	snprintf(svc, sizeof(svc), "mc%d", (int)getpid());
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, svc, FI_SOURCE,
				    hints, &cinfo), 0);
	for (round = 0; round < 3; round++) {
		assert_int_equal(fi_endpoint(T.domain, cinfo, &cep, NULL), 0);
		assert_int_equal(fi_ep_bind(cep, &T.av->fid, 0), 0);
		assert_int_equal(fi_ep_bind(cep, &T.cq->fid,
					    FI_TRANSMIT | FI_RECV), 0);
		assert_int_equal(fi_enable(cep), 0);
		len = sizeof(cname);
		assert_int_equal(fi_getname(&cep->fid, cname, &len), 0);

		/* the client says hello; the server learns its address */
		hello = 100 + (uint32_t)round;
		got = 0;
		T_POST(&T, fi_recv(T.ep[0], &got, 4, NULL, FI_ADDR_UNSPEC,
				   &rc));
		T_POST(&T, fi_send(cep, &hello, 4, NULL, T.addr[0], &sc));
		t_wait_ok(&T, &rc);
		t_wait_ok(&T, &sc);
		assert_int_equal(got, 100 + round);
		assert_int_equal(fi_av_insert(T.av, cname, 1, &client, 0, NULL),
				 1);
		if (round == 0)
			first = client;
		assert_int_equal(client, first);

		/* the server answers through that fi_addr */
		answer = 200 + (uint32_t)round;
		back = 0;
		T_POST(&T, fi_recv(cep, &back, 4, NULL, FI_ADDR_UNSPEC, &rc2));
		T_POST(&T, fi_send(T.ep[0], &answer, 4, NULL, client, &sc2));
		t_wait_ok(&T, &sc2);
		t_wait_ok(&T, &rc2);
		assert_int_equal(back, 200 + round);

		/* inserted again while it lives: same fi_addr, still works */
		assert_int_equal(fi_av_insert(T.av, cname, 1, &again, 0, NULL),
				 1);
		assert_int_equal(again, client);
		answer = 300 + (uint32_t)round;
		back = 0;
		T_POST(&T, fi_recv(cep, &back, 4, NULL, FI_ADDR_UNSPEC, &rc2));
		T_POST(&T, fi_send(T.ep[0], &answer, 4, NULL, again, &sc2));
		t_wait_ok(&T, &sc2);
		t_wait_ok(&T, &rc2);
		assert_int_equal(back, 300 + round);
		assert_int_equal(fi_close(&cep->fid), 0);
	}
	fi_freeinfo(cinfo);
	fi_freeinfo(hints);
}

/* fi_poll on an shm domain: the poll set progresses the endpoints bound
 * to its CQ, and reports the CQ once the message has landed. */
static void test_poll_set(void **state)
{
	struct fid_poll *ps;
	struct fi_context sc, rc;
	uint64_t v = 0x1122334455667788ull, r = 0;
	uint64_t deadline = t_now_s() + T_DEADLINE_S;
	void *ctx[2];
	int n;

	(void)state;
	assert_int_equal(fi_poll_open(T.domain, &(struct fi_poll_attr){ 0 },
				      &ps), 0);
	assert_int_equal(fi_poll_add(ps, &T.cq->fid, 0), 0);
	assert_int_equal(fi_poll(ps, ctx, 2), 0);
	T_POST(&T, fi_recv(T.ep[1], &r, 8, NULL, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, fi_send(T.ep[0], &v, 8, NULL, T.addr[1], &sc));
	/* only fi_poll progresses here, nothing reads the CQ */
	while ((n = fi_poll(ps, ctx, 2)) == 0)
		assert_true(t_now_s() <= deadline);
	assert_int_equal(n, 1);
	assert_ptr_equal(ctx[0], T.cq->fid.context);
	while (r != v) {
		fi_poll(ps, ctx, 2);
		assert_true(t_now_s() <= deadline);
	}
	t_wait_ok(&T, &rc);
	t_wait_ok(&T, &sc);
	assert_int_equal(fi_poll(ps, ctx, 2), 0);
	assert_int_equal(fi_poll_del(ps, &T.cq->fid, 0), 0);
	assert_int_equal(fi_close(&ps->fid), 0);
}

/* Upstream's fi_multi_ep: an endpoint sends and closes before its peer
 * reads the queue. Its cells still name it by its slot in the peer's
 * region, so the slot must outlive the close until they are read; the
 * messages then arrive, in order, with their data. */
static void test_close_before_read(void **state)
{
	uint32_t v[3] = { 0x11111111, 0x22222222, 0x33333333 }, r[3] = { 0 };
	struct fi_cq_tagged_entry e;
	struct fi_context rc[3];
	int i;

	(void)state;
	for (i = 0; i < 3; i++)
		T_POST(&T, fi_inject(T.ep[0], &v[i], sizeof(v[i]), T.addr[1]));
	assert_int_equal(fi_close(&T.ep[0]->fid), 0);
	/* the closed endpoint leaves the table; teardown closes the rest */
	T.ep[0] = T.ep[1];
	T.nep = 1;
	for (i = 0; i < 3; i++)
		T_POST(&T, fi_recv(T.ep[0], &r[i], sizeof(r[i]), NULL,
				   FI_ADDR_UNSPEC, &rc[i]));
	for (i = 0; i < 3; i++) {
		e = t_wait_ok(&T, &rc[i]);
		assert_int_equal(e.len, sizeof(r[i]));
		assert_int_equal(r[i], v[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reinsert_new_incarnation,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_before_read, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_poll_set, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
