/* SPDX-License-Identifier: MIT */
/*
 * SRD queue pairs against the mock: the attributes creation asks for per
 * device caps and build, the RESET->INIT->RTR->RTS steps, fallbacks (SL,
 * ENOMEM), failures unwinding, state reports, endpoint names and the
 * per-GID address handle cache.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/dev/srd_dev.h"
#include "../src/rdm/srd_rdm.h"
#include "srd_mock.h"

struct fixture {
	struct srd_dev *dev;
	struct ibv_cq_ex *cqx;
	struct srd_settings s;
	struct srd_dev_qp_attr attr;
	int live_base;
};

static struct fixture fx;

static void fixture_open(void)
{
	memset(&fx, 0, sizeof(fx));
	assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &fx.dev), 0);
	fx.cqx = mock_cq_ex_new(fx.dev->ctx);
	srd_settings_default(&fx.s);
	fx.attr.sq_depth = 1024;
	fx.attr.rq_depth = 4096;
	fx.attr.max_send_sge = 2;
	fx.attr.max_recv_sge = 1;
	fx.attr.max_inline = 32;
	fx.attr.send_cq = ibv_cq_ex_to_cq(fx.cqx);
	fx.attr.recv_cq = ibv_cq_ex_to_cq(fx.cqx);
	fx.attr.qp_context = &fx;
	fx.live_base = mock.live;
}

static int setup(void **state)
{
	(void)state;
	mock_reset();
	fixture_open();
	return 0;
}

/* Tests that change device caps reopen with them. */
static void reopen(void)
{
	mock_cq_ex_free(fx.cqx);
	srd_dev_close(fx.dev);
	fixture_open();
}

static int teardown(void **state)
{
	(void)state;
	mock_cq_ex_free(fx.cqx);
	srd_dev_close(fx.dev);
	assert_int_equal(mock.live, 0);
	return 0;
}

static void test_qp_create_attributes(void **state)
{
	const struct ibv_qp_init_attr_ex *ia = &mock.qp_attr[0];
	const struct efadv_qp_init_attr *ea = &mock.qp_efa[0];
	struct srd_dev_qp *qp;

	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_int_equal(mock.n_qp_create, 1);
	assert_int_equal(ia->qp_type, IBV_QPT_DRIVER);
	assert_int_equal(ea->driver_qp_type, EFADV_QP_DRIVER_TYPE_SRD);
	assert_int_equal(mock.qp_efa_inlen[0], sizeof(struct efadv_qp_init_attr));
	assert_true(ia->comp_mask & IBV_QP_INIT_ATTR_PD);
	assert_true(ia->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
	assert_ptr_equal(ia->pd, fx.dev->pd);
	assert_ptr_equal(ia->send_cq, ibv_cq_ex_to_cq(fx.cqx));
	assert_ptr_equal(ia->recv_cq, ibv_cq_ex_to_cq(fx.cqx));
	assert_ptr_equal(ia->qp_context, &fx);
	assert_int_equal(ia->cap.max_send_wr, 1024);
	assert_int_equal(ia->cap.max_recv_wr, 4096);
	assert_int_equal(ia->cap.max_send_sge, 2);
	assert_int_equal(ia->cap.max_inline_data, 32);
	/* the mock device reads but does not write */
	assert_true(ia->send_ops_flags == (IBV_QP_EX_WITH_SEND |
					   IBV_QP_EX_WITH_SEND_WITH_IMM |
					   IBV_QP_EX_WITH_RDMA_READ));
	assert_true(qp->send_ops_flags == ia->send_ops_flags);
	assert_ptr_equal(qp->qpx, (struct ibv_qp_ex *)qp->ibv_qp);
	assert_int_equal(qp->sq_depth, 1024);
	assert_int_equal(qp->rq_depth, 4096);
	srd_dev_qp_destroy(qp);
	assert_int_equal(mock.live, fx.live_base);
}

static void test_qp_state_steps(void **state)
{
	struct srd_dev_qp *qp;

	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_int_equal(mock.n_modify, 3);
	assert_int_equal(mock.modify_attr[0].qp_state, IBV_QPS_INIT);
	assert_int_equal(mock.modify_mask[0], IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			 IBV_QP_PORT | IBV_QP_QKEY);
	assert_int_equal(mock.modify_attr[0].port_num, 1);
	assert_int_equal(mock.modify_attr[0].qkey, qp->qkey);
	assert_int_equal(mock.modify_attr[1].qp_state, IBV_QPS_RTR);
	assert_int_equal(mock.modify_mask[1], IBV_QP_STATE);
	assert_int_equal(mock.modify_attr[2].qp_state, IBV_QPS_RTS);
	/* the device has the RNR_RETRY cap */
	assert_int_equal(mock.modify_mask[2], IBV_QP_STATE | IBV_QP_SQ_PSN |
			 IBV_QP_RNR_RETRY);
	assert_int_equal(mock.modify_attr[2].rnr_retry, fx.s.rnr_retry);
	assert_int_equal(qp->ibv_qp->state, IBV_QPS_RTS);
	/* a random 31-bit, non-zero QKEY */
	assert_true(qp->qkey != 0 && !(qp->qkey & 0x80000000u));
	srd_dev_qp_destroy(qp);
}

static void test_qp_qkeys_differ(void **state)
{
	struct srd_dev_qp *qp[4];
	int i, same = 0;

	for (i = 0; i < 4; i++)
		assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr,
						   &qp[i]), 0);
	for (i = 1; i < 4; i++)
		same += qp[i]->qkey == qp[0]->qkey;
	assert_true(same < 3);
	for (i = 0; i < 4; i++)
		srd_dev_qp_destroy(qp[i]);
}

static void test_qp_no_rnr_cap(void **state)
{
	struct srd_dev_qp *qp;

	mock.efa.device_caps = EFADV_DEVICE_ATTR_CAPS_RDMA_READ;
	reopen();
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_false(mock.modify_mask[2] & IBV_QP_RNR_RETRY);
	assert_int_equal(mock.modify_attr[2].qp_state, IBV_QPS_RTS);
	srd_dev_qp_destroy(qp);
}

static void test_qp_send_ops_per_caps(void **state)
{
	static const struct {
		uint32_t caps;
		uint64_t ops;
	} cases[] = {
		{ 0, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM },
		{ EFADV_DEVICE_ATTR_CAPS_RDMA_READ,
		  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		  IBV_QP_EX_WITH_RDMA_READ },
		{ SRD_EFADV_CAPS_RDMA_WRITE,
		  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		  IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM },
		{ EFADV_DEVICE_ATTR_CAPS_RDMA_READ | SRD_EFADV_CAPS_RDMA_WRITE,
		  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		  IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_RDMA_WRITE |
		  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM },
	};
	size_t i;

	for (i = 0; i < WEFT_ARRAY_SIZE(cases); i++) {
		struct srd_dev_qp *qp;

		mock_cq_ex_free(fx.cqx);
		srd_dev_close(fx.dev);
		mock_reset();
		mock.efa.device_caps = cases[i].caps;
		fixture_open();
		assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr,
						   &qp), 0);
		assert_true(mock.qp_attr[0].send_ops_flags == cases[i].ops);
		assert_false(mock.qp_attr[0].send_ops_flags &
			     (IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD));
		srd_dev_qp_destroy(qp);
	}
}

static void test_qp_unsolicited_write_recv(void **state)
{
	const bool build = WEFT_HAVE_EFADV_QP_FLAGS &&
			   WEFT_HAVE_UNSOLICITED_WRITE_RECV &&
			   WEFT_HAVE_CAPS_UNSOLICITED_WRITE_RECV;
	struct srd_dev_qp *qp;

	/* A device claiming every cap bit. */
	mock.efa.device_caps = 0xffffffffu;
	reopen();
	fx.attr.want_unsolicited_write_recv = true;
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_int_equal(qp->unsolicited_write_recv, build);
#if WEFT_HAVE_EFADV_QP_FLAGS && WEFT_HAVE_UNSOLICITED_WRITE_RECV
	assert_int_equal(!!(mock.qp_efa[0].flags &
			    EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV), build);
#endif
	srd_dev_qp_destroy(qp);

	/* Not wanted: never set, whatever the device. */
	fx.attr.want_unsolicited_write_recv = false;
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_false(qp->unsolicited_write_recv);
#if WEFT_HAVE_EFADV_QP_FLAGS && WEFT_HAVE_UNSOLICITED_WRITE_RECV
	assert_false(mock.qp_efa[1].flags & EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV);
#endif
	srd_dev_qp_destroy(qp);
}

static void test_qp_unsolicited_needs_device(void **state)
{
	struct srd_dev_qp *qp;

	/* The default mock device lacks the cap: never asked for. */
	fx.attr.want_unsolicited_write_recv = true;
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_false(qp->unsolicited_write_recv);
#if WEFT_HAVE_EFADV_QP_FLAGS && WEFT_HAVE_UNSOLICITED_WRITE_RECV
	assert_false(mock.qp_efa[0].flags & EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV);
#endif
	srd_dev_qp_destroy(qp);
}

static void test_qp_low_latency_sl(void **state)
{
	struct srd_dev_qp *qp;

	fx.attr.tclass = FI_TC_LOW_LATENCY;
#if WEFT_HAVE_EFADV_QP_SL
	/* The device refuses the SL once: retried with the default. */
	mock_fail(MOCK_CREATE_QP, 1, 1, EINVAL);
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_int_equal(mock.n_qp_create, 2);
	assert_int_equal(mock.qp_efa[0].sl, fx.s.low_latency_sl);
	assert_int_equal(mock.qp_efa[1].sl, 0);
	assert_false(qp->low_latency_sl);
	srd_dev_qp_destroy(qp);

	mock_fail(MOCK_CREATE_QP, 0, 0, 0);
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_int_equal(mock.qp_efa[2].sl, fx.s.low_latency_sl);
	assert_true(qp->low_latency_sl);
	srd_dev_qp_destroy(qp);
#else
	/* Headers without efadv sl: one plain creation, no retry. */
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_int_equal(mock.n_qp_create, 1);
	assert_false(qp->low_latency_sl);
	srd_dev_qp_destroy(qp);
	/* And a refusal is then final, not retried as an SL problem. */
	mock_fail(MOCK_CREATE_QP, 2, 1, EINVAL);
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp),
			 -EINVAL);
	assert_int_equal(mock.n_qp_create, 2);
#endif
	assert_int_equal(mock.live, fx.live_base);
}

static void test_qp_enomem_sizes_down(void **state)
{
	struct srd_dev_qp *qp;

	mock_fail(MOCK_CREATE_QP, 1, 2, ENOMEM);
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_int_equal(mock.n_qp_create, 3);
	assert_int_equal(mock.qp_attr[1].cap.max_send_wr, 512);
	assert_int_equal(mock.qp_attr[1].cap.max_recv_wr, 2048);
	assert_int_equal(mock.qp_attr[2].cap.max_send_wr, 256);
	assert_int_equal(mock.qp_attr[2].cap.max_recv_wr, 1024);
	assert_int_equal(qp->sq_depth, 256);
	assert_int_equal(qp->rq_depth, 1024);
	srd_dev_qp_destroy(qp);
}

static void test_qp_enomem_gives_up(void **state)
{
	struct srd_dev_qp *qp;

	mock_fail(MOCK_CREATE_QP, 1, 0, ENOMEM);
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp),
			 -FI_ENOMEM);
	/* 4096 -> 16 for the RQ: 8 halvings, then the final refusal */
	assert_int_equal(mock.calls[MOCK_CREATE_QP], 9);
	assert_int_equal(mock.live, fx.live_base);
}

static void test_qp_modify_fails_each_step(void **state)
{
	unsigned int step;

	for (step = 1; step <= 3; step++) {
		struct srd_dev_qp *qp = NULL;
		unsigned int destroyed = mock.calls[MOCK_DESTROY_QP];

		mock.calls[MOCK_MODIFY_QP] = 0;
		mock_fail(MOCK_MODIFY_QP, step, 1, EINVAL);
		assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr,
						   &qp),
				 -FI_EINVAL);
		assert_null(qp);
		assert_int_equal(mock.calls[MOCK_MODIFY_QP], step);
		assert_int_equal(mock.calls[MOCK_DESTROY_QP], destroyed + 1);
		assert_int_equal(mock.live, fx.live_base);
	}
}

static void test_qp_no_qp_ex(void **state)
{
	struct srd_dev_qp *qp = NULL;

	mock_fail(MOCK_QP_TO_QP_EX, 1, 0, 0);
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp),
			 -FI_ENOSYS);
	assert_null(qp);
	assert_int_equal(mock.live, fx.live_base);
}

static void test_qp_bad_attr(void **state)
{
	struct srd_dev_qp *qp = NULL;

	fx.attr.sq_depth = 0;
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp),
			 -FI_EINVAL);
	fx.attr.sq_depth = 8;
	fx.attr.recv_cq = NULL;
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp),
			 -FI_EINVAL);
	assert_int_equal(mock.calls[MOCK_CREATE_QP], 0);
	assert_null(qp);
}

static void test_qp_describe(void **state)
{
	struct srd_dev_qp *qp;
	char buf[160], want[64];

	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	assert_int_equal(srd_dev_qp_describe(qp, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "state RTS"));
	snprintf(want, sizeof(want), "qkey 0x%x", qp->qkey);
	assert_non_null(strstr(buf, want));
	snprintf(want, sizeof(want), "qpn %u", qp->ibv_qp->qp_num);
	assert_non_null(strstr(buf, want));

	mock_fail(MOCK_QUERY_QP, mock.calls[MOCK_QUERY_QP] + 1, 1, EIO);
	assert_int_equal(srd_dev_qp_describe(qp, buf, sizeof(buf)), -FI_EIO);
	assert_non_null(strstr(buf, "state unknown"));
	srd_dev_qp_destroy(qp);
}

/* ---- endpoint names ------------------------------------------------------ */

static void test_ep_name_roundtrip(void **state)
{
	struct srd_ep_name name, back;
	struct srd_dev_qp *qp;
	char str[128];

	assert_int_equal(sizeof(name), 36);
	assert_int_equal(srd_dev_qp_create(fx.dev, &fx.s, &fx.attr, &qp), 0);
	srd_ep_name_build(qp, &name);
	assert_int_equal(name.version, SRD_EP_NAME_VERSION);
	assert_int_equal(name.qpn, qp->ibv_qp->qp_num);
	assert_int_equal(name.qkey, qp->qkey);
	assert_memory_equal(name.gid, mock.gid.raw, 16);
	assert_int_equal(name.host_key, srd_host_key());
	assert_int_equal(name.flags, 0);

	assert_int_equal(srd_ep_name_parse(&name, sizeof(name), &back), 0);
	assert_memory_equal(&back, &name, sizeof(name));
	assert_int_equal(srd_ep_name_str(&name, str, sizeof(str)), 0);
	assert_non_null(strstr(str, "f0f1:f2f3"));
	assert_int_equal(srd_ep_name_str(&name, str, 10), -FI_ETOOSMALL);
	srd_dev_qp_destroy(qp);
}

static void test_ep_name_rejects_bad_input(void **state)
{
	struct srd_ep_name good = { .version = SRD_EP_NAME_VERSION, .qpn = 7,
				    .qkey = 0x1234 };
	struct srd_ep_name bad, out;

	assert_int_equal(srd_ep_name_parse(&good, sizeof(good) - 1, &out),
			 -FI_EINVAL);
	assert_int_equal(srd_ep_name_parse(NULL, sizeof(good), &out), -FI_EINVAL);
	bad = good;
	bad.version = 1;	/* before the host key */
	assert_int_equal(srd_ep_name_parse(&bad, sizeof(bad), &out), -FI_EINVAL);
	bad = good;
	bad.flags = 0x2;	/* unknown flag */
	assert_int_equal(srd_ep_name_parse(&bad, sizeof(bad), &out), -FI_EINVAL);
	bad = good;
	bad.reserved[1] = 1;
	assert_int_equal(srd_ep_name_parse(&bad, sizeof(bad), &out), -FI_EINVAL);
	bad = good;
	bad.flags = SRD_EP_NAME_F_SHM;
	assert_int_equal(srd_ep_name_parse(&bad, sizeof(bad), &out), 0);
	bad = good;
	bad.qkey = 0;
	assert_int_equal(srd_ep_name_parse(&bad, sizeof(bad), &out), -FI_EINVAL);
	bad = good;
	bad.qkey = 0x80000001u;
	assert_int_equal(srd_ep_name_parse(&bad, sizeof(bad), &out), -FI_EINVAL);
	bad = good;
	bad.qpn = 0x1000000;
	assert_int_equal(srd_ep_name_parse(&bad, sizeof(bad), &out), -FI_EINVAL);
	/* longer buffers (a padded AV entry) are fine */
	{
		uint8_t big[64] = { 0 };

		memcpy(big, &good, sizeof(good));
		assert_int_equal(srd_ep_name_parse(big, sizeof(big), &out), 0);
		assert_int_equal(out.qpn, 7);
	}
}

/* ---- address handles ----------------------------------------------------- */

static void test_ah_shared_per_gid(void **state)
{
	union ibv_gid a, b;
	struct srd_dev_ah *ah1, *ah2, *ah3;

	memset(&a, 0xaa, sizeof(a));
	memset(&b, 0xbb, sizeof(b));
	assert_int_equal(srd_dev_ah_get(fx.dev, &a, &ah1), 0);
	assert_int_equal(mock.ah_attr.is_global, 1);
	assert_int_equal(mock.ah_attr.port_num, 1);
	assert_memory_equal(mock.ah_attr.grh.dgid.raw, a.raw, 16);
	assert_int_equal(srd_dev_ah_get(fx.dev, &a, &ah2), 0);
	assert_ptr_equal(ah1, ah2);
	assert_int_equal(ah1->refcnt, 2);
	assert_int_equal(mock.calls[MOCK_CREATE_AH], 1);
	assert_int_equal(srd_dev_ah_get(fx.dev, &b, &ah3), 0);
	assert_ptr_not_equal(ah3, ah1);
	assert_int_equal(mock.calls[MOCK_CREATE_AH], 2);
	assert_int_not_equal(ah1->ahn, ah3->ahn);

	srd_dev_ah_put(fx.dev, ah1);
	assert_int_equal(mock.calls[MOCK_DESTROY_AH], 0);
	srd_dev_ah_put(fx.dev, ah2);
	assert_int_equal(mock.calls[MOCK_DESTROY_AH], 1);
	/* gone from the cache: the next get creates again */
	assert_int_equal(srd_dev_ah_get(fx.dev, &a, &ah1), 0);
	assert_int_equal(mock.calls[MOCK_CREATE_AH], 3);
	srd_dev_ah_put(fx.dev, ah1);
	srd_dev_ah_put(fx.dev, ah3);
	assert_int_equal(mock.live, fx.live_base);
}

static void test_ah_create_fails(void **state)
{
	union ibv_gid a;
	struct srd_dev_ah *ah = NULL;

	memset(&a, 0x11, sizeof(a));
	mock_fail(MOCK_CREATE_AH, 1, 1, ENETUNREACH);
	assert_int_equal(srd_dev_ah_get(fx.dev, &a, &ah), -FI_ENETUNREACH);
	assert_null(ah);
	assert_null(fx.dev->ah_by_gid);
	/* not cached as a failure either */
	assert_int_equal(srd_dev_ah_get(fx.dev, &a, &ah), 0);
	srd_dev_ah_put(fx.dev, ah);
}

static void test_ah_number_unknown(void **state)
{
	union ibv_gid a;
	struct srd_dev_ah *ah;

	memset(&a, 0x22, sizeof(a));
	mock_fail(MOCK_QUERY_AH, 1, 0, EOPNOTSUPP);
	assert_int_equal(srd_dev_ah_get(fx.dev, &a, &ah), 0);
	assert_int_equal(ah->ahn, 0xffff);
	srd_dev_ah_put(fx.dev, ah);
}

static void test_ah_left_at_close(void **state)
{
	union ibv_gid a;
	struct srd_dev_ah *ah;

	memset(&a, 0x33, sizeof(a));
	assert_int_equal(srd_dev_ah_get(fx.dev, &a, &ah), 0);
	/* teardown closes the device with the AH held: freed, not leaked */
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_qp_create_attributes),
		T(test_qp_state_steps),
		T(test_qp_qkeys_differ),
		T(test_qp_no_rnr_cap),
		T(test_qp_send_ops_per_caps),
		T(test_qp_unsolicited_write_recv),
		T(test_qp_unsolicited_needs_device),
		T(test_qp_low_latency_sl),
		T(test_qp_enomem_sizes_down),
		T(test_qp_enomem_gives_up),
		T(test_qp_modify_fails_each_step),
		T(test_qp_no_qp_ex),
		T(test_qp_bad_attr),
		T(test_qp_describe),
		T(test_ep_name_roundtrip),
		T(test_ep_name_rejects_bad_input),
		T(test_ah_shared_per_gid),
		T(test_ah_create_fails),
		T(test_ah_number_unknown),
		T(test_ah_left_at_close),
	};

	return cmocka_run_group_tests_name("srd_qp", tests, NULL, NULL);
}
