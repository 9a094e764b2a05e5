/* SPDX-License-Identifier: MIT */
/*
 * The srd device layer on softsrd's real verbs table (no mock): device
 * open and caps, CQ and QP creation through RTS, the in-order query, state
 * report, an empty poll, and a clean close.
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
#include "../soft/softsrd.h"

static int batches;

static void on_any(struct srd_dev_cq *cq, const struct srd_dev_wc *wc,
		   void *arg)
{
	fail_msg("unexpected completion wr_id %llu status %d",
		 (unsigned long long)wc->wr_id, wc->status);
}

static void on_batch(struct srd_dev_cq *cq, int n, void *arg)
{
	batches++;
}

static void test_device_layer_on_softsrd(void **state)
{
	static const struct srd_dev_cq_ops ops = {
		.on_unknown = on_any, .on_error = on_any, .on_batch_end = on_batch,
	};
	const struct srd_dev_inorder *io;
	struct srd_dev_poll_choice choice;
	struct srd_settings s;
	struct srd_dev *dev;
	struct srd_dev_qp_attr qa = { .sq_depth = 64, .rq_depth = 64 };
	struct srd_dev_cq_attr ca = { .batch = 8 };
	struct srd_ep_name name, back;
	struct srd_dev_cq *cq;
	struct srd_dev_qp *qp;
	char buf[160];

	assert_ptr_equal(srd_prov_init_device_only(), &srd_prov);
	assert_ptr_equal(srd_dev_verbs_select(SRD_DEVICE_SOFT),
			 &softsrd_verbs_ops);
	srd_settings_default(&s);

	assert_int_equal(srd_dev_open(&softsrd_verbs_ops, NULL, &dev), 0);
	print_message("# softsrd device %s: sq %u rq %u mtu %u caps 0x%x\n",
		      dev->name, dev->caps.max_sq_wr, dev->caps.max_rq_wr,
		      dev->caps.mtu, dev->caps.efadv_caps);
	assert_true(dev->caps.max_sq_wr > 0 && dev->caps.max_rq_wr > 0);
	assert_true(dev->caps.mtu > SRD_PKT_HDR_MAX);

	ca.depth = srd_dev_cq_depth(qa.sq_depth, qa.rq_depth, 1, 0,
				    dev->caps.max_cqe);
	assert_int_equal(srd_dev_cq_open(dev, &ca, &ops, &cq), 0);
	qa.send_cq = qa.recv_cq = cq->cq;
	assert_int_equal(srd_dev_qp_create(dev, &s, &qa, &qp), 0);
	assert_non_null(qp->qpx);
	assert_int_equal(srd_dev_qp_describe(qp, buf, sizeof(buf)), 0);
	print_message("# %s\n", buf);
	assert_non_null(strstr(buf, "state RTS"));

	srd_ep_name_build(qp, &name);
	assert_int_equal(srd_ep_name_parse(&name, sizeof(name), &back), 0);
	assert_int_equal(back.qpn, qp->ibv_qp->qp_num);

	assert_int_equal(srd_dev_inorder_get(dev, qp, &io), 0);
	srd_dev_poll_choose(SRD_POLL_REQ_AUTO, io, &dev->caps, false, &choice);
	print_message("# in-order send %d write %d -> %s\n", io->send,
		      io->rdma_write, srd_dev_poll_mode_str(choice.mode));
	/* data mode exactly when the device writes RDMA data in order */
	assert_int_equal(choice.mode == SRD_POLL_DATA,
			 dev->caps.rdma_write && io->rdma_write != 0);

	assert_int_equal(srd_dev_cq_poll(cq), 0);
	assert_int_equal(batches, 1);

	srd_dev_qp_destroy(qp);
	srd_dev_cq_close(cq);
	srd_dev_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_layer_on_softsrd),
	};

	return cmocka_run_group_tests_name("srd_soft_device", tests, NULL, NULL);
}
