/* SPDX-License-Identifier: MIT */
/*
 * srd device open against the mock verbs table: capabilities read from
 * every query, failure at each step unwinding to nothing, and device caps
 * turned into the fi_info template and protocol choices.
 */
#include "weft/compat.h"
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/dev/srd_dev.h"
#include "../src/rdm/srd_rdm.h"
#include "srd_mock.h"

static int setup(void **state)
{
	(void)state;
	mock_reset();
	return 0;
}

static void test_open_reads_every_cap(void **state)
{
	struct srd_dev *dev = NULL;

	mock.efa.max_sq_wr = 1000;
	mock.efa.device_caps |= EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID;
	assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &dev), 0);
	assert_non_null(dev);
	assert_string_equal(dev->name, "mock_0");
	assert_non_null(dev->pd);

	/* ibv_query_device_ex */
	assert_true(dev->caps.max_mr_size == 1ULL << 40);
	assert_int_equal(dev->caps.max_qp, 256);
	assert_int_equal(dev->caps.max_qp_wr, 4096);
	assert_int_equal(dev->caps.max_cqe, 32768);
	assert_int_equal(dev->caps.max_ah, 1024);
	assert_int_equal(dev->caps.vendor_id, 0x1d0f);
	assert_true(dev->caps.device_cap_flags_ex == 1ULL << 40);
	assert_int_equal(dev->caps.odp_general_caps, 1);
	assert_int_equal(dev->caps.completion_timestamp_mask, 0xffffffff);
	assert_int_equal(dev->caps.cq_mod_max_count, 16);
	assert_int_equal(dev->caps.cq_mod_max_period, 100);
	assert_int_equal(dev->caps.pci_atomic_fetch_add, 2);
	/* efadv_query_device */
	assert_int_equal(dev->caps.max_sq_wr, 1000);
	assert_int_equal(dev->caps.max_rq_wr, 32768);
	assert_int_equal(dev->caps.max_sq_sge, 2);
	assert_int_equal(dev->caps.max_rq_sge, 3);
	assert_int_equal(dev->caps.inline_buf_size, 32);
	assert_int_equal(dev->caps.max_rdma_size, 1u << 30);
	assert_true(dev->caps.rdma_read);
	assert_false(dev->caps.rdma_write);
	assert_true(dev->caps.rnr_retry);
	assert_true(dev->caps.cq_with_sgid);
	/* port and GID */
	assert_int_equal(dev->caps.mtu, 8928);
	assert_int_equal(dev->caps.max_msg_sz, 8928);
	assert_int_equal(dev->caps.port_state, IBV_PORT_ACTIVE);
	assert_memory_equal(dev->caps.gid.raw, mock.gid.raw, 16);

	/* the device list is gone once the context is open */
	assert_int_equal(mock.calls[MOCK_FREE_DEVICE_LIST], 1);
	srd_dev_close(dev);
	assert_int_equal(mock.live, 0);
	assert_int_equal(mock.calls[MOCK_CLOSE_DEVICE], 1);
	assert_int_equal(mock.calls[MOCK_DEALLOC_PD], 1);
}

static void test_open_mtu_from_enum(void **state)
{
	struct srd_dev *dev;

	/* A device that leaves max_msg_sz empty: the IB MTU enum counts. */
	mock.port.max_msg_sz = 0;
	mock.port.active_mtu = IBV_MTU_2048;
	assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &dev), 0);
	assert_int_equal(dev->caps.mtu, 2048);
	srd_dev_close(dev);
	assert_int_equal(mock.live, 0);
}

struct fail_step {
	enum mock_op op;
	int err;
	int expect;
	bool list_freed;
	bool ctx_closed;
};

static void test_open_fails_at_each_step(void **state)
{
	static const struct fail_step steps[] = {
		{ MOCK_GET_DEVICE_LIST, ENOSYS, -FI_ENODEV, false, false },
		{ MOCK_OPEN_DEVICE, EACCES, -FI_ENODEV, true, false },
		{ MOCK_QUERY_DEVICE_EX, EIO, -FI_EIO, true, true },
		{ MOCK_EFADV_QUERY_DEVICE, EOPNOTSUPP, -FI_EOPNOTSUPP, true, true },
		{ MOCK_QUERY_PORT, EINVAL, -FI_EINVAL, true, true },
		{ MOCK_QUERY_GID, ENODATA, -FI_ENODATA, true, true },
		{ MOCK_ALLOC_PD, ENOMEM, -FI_ENOMEM, true, true },
	};
	size_t i;

	for (i = 0; i < WEFT_ARRAY_SIZE(steps); i++) {
		struct srd_dev *dev = (void *)0x1;

		mock_reset();
		mock_fail(steps[i].op, 1, 0, steps[i].err);
		print_message("# failing step %zu (mock op %d)\n", i, steps[i].op);
		assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &dev),
				 steps[i].expect);
		assert_ptr_equal(dev, (void *)0x1);
		assert_int_equal(mock.live, 0);
		assert_int_equal(mock.calls[MOCK_FREE_DEVICE_LIST],
				 steps[i].list_freed);
		assert_int_equal(mock.calls[MOCK_CLOSE_DEVICE],
				 steps[i].ctx_closed);
		/* nothing after the failing step was attempted */
		for (size_t j = i + 1; j < WEFT_ARRAY_SIZE(steps); j++)
			assert_int_equal(mock.calls[steps[j].op], 0);
		assert_int_equal(mock.calls[MOCK_DEALLOC_PD], 0);
	}
}

static void test_open_by_name(void **state)
{
	struct srd_dev *dev;

	mock.ndev = 2;
	assert_int_equal(srd_dev_open(&mock_verbs_ops, "mock_1", &dev), 0);
	assert_string_equal(dev->name, "mock_1");
	srd_dev_close(dev);

	assert_int_equal(srd_dev_open(&mock_verbs_ops, "efa_7", &dev),
			 -FI_ENODEV);
	assert_int_equal(mock.calls[MOCK_OPEN_DEVICE], 1);
	assert_int_equal(mock.live, 0);
}

/* Domains share the device and take AH references from their own threads
 * (AV inserts, first packets from new peers): two threads asking for one
 * GID at the same moment must get the same AH, and every reference must
 * be counted. The mock's create_ah sleeps, as the kernel call would. */
#define AH_RACE_ROUNDS 200

struct ah_race {
	struct srd_dev *dev;
	pthread_barrier_t barrier;
	union ibv_gid gid;
	struct srd_dev_ah *got[2];
	int mismatches;
};

struct ah_racer {
	struct ah_race *race;
	int idx;
};

static void *ah_race_thread(void *arg)
{
	struct ah_racer *me = arg;
	struct ah_race *r = me->race;

	for (int i = 0; i < AH_RACE_ROUNDS; i++) {
		pthread_barrier_wait(&r->barrier);
		if (srd_dev_ah_get(r->dev, &r->gid, &r->got[me->idx]))
			r->got[me->idx] = NULL;
		pthread_barrier_wait(&r->barrier);
		if (me->idx == 0 && (!r->got[0] || r->got[0] != r->got[1]))
			r->mismatches++;
		pthread_barrier_wait(&r->barrier);
		if (r->got[me->idx])
			srd_dev_ah_put(r->dev, r->got[me->idx]);
	}
	return NULL;
}

static void test_ah_shared_by_threads(void **state)
{
	struct ah_race race = { 0 };
	struct ah_racer racer[2];
	pthread_t tid[2];
	int live_before;

	(void)state;
	assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &race.dev), 0);
	live_before = mock.live;
	mock.create_ah_yields = true;
	race.gid.raw[15] = 7;
	pthread_barrier_init(&race.barrier, NULL, 2);
	for (int i = 0; i < 2; i++) {
		racer[i] = (struct ah_racer){ .race = &race, .idx = i };
		assert_int_equal(pthread_create(&tid[i], NULL, ah_race_thread,
						&racer[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&race.barrier);
	assert_int_equal(race.mismatches, 0);
	assert_null(race.dev->ah_by_gid);
	assert_int_equal(mock.calls[MOCK_CREATE_AH], AH_RACE_ROUNDS);
	assert_int_equal(mock.calls[MOCK_DESTROY_AH], AH_RACE_ROUNDS);
	assert_int_equal(mock.live, live_before);
	srd_dev_close(race.dev);
	assert_int_equal(mock.live, 0);
}

static void test_open_no_device(void **state)
{
	struct srd_dev *dev;

	mock.ndev = 0;
	assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &dev),
			 -FI_ENODEV);
	assert_int_equal(mock.calls[MOCK_OPEN_DEVICE], 0);
	assert_int_equal(mock.live, 0);
	assert_int_equal(srd_dev_open(NULL, NULL, &dev), -FI_ENODEV);
}

static void test_open_empty_queues_refused(void **state)
{
	struct srd_dev *dev;

	mock.efa.max_rq_wr = 0;
	assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &dev),
			 -FI_ENODEV);
	assert_int_equal(mock.live, 0);
}

/* ---- caps -> fi_info ------------------------------------------------------ */

static struct fi_info *info_new(void)
{
	struct fi_info *info = calloc(1, sizeof(*info));

	assert_non_null(info);
	info->tx_attr = calloc(1, sizeof(*info->tx_attr));
	info->rx_attr = calloc(1, sizeof(*info->rx_attr));
	info->ep_attr = calloc(1, sizeof(*info->ep_attr));
	info->domain_attr = calloc(1, sizeof(*info->domain_attr));
	info->fabric_attr = calloc(1, sizeof(*info->fabric_attr));
	return info;
}

static void info_free(struct fi_info *info)
{
	free(info->domain_attr->name);
	free(info->fabric_attr->name);
	free(info->tx_attr);
	free(info->rx_attr);
	free(info->ep_attr);
	free(info->domain_attr);
	free(info->fabric_attr);
	free(info);
}

static void caps_from_mock(struct srd_dev_caps *caps)
{
	struct srd_dev *dev;

	assert_int_equal(srd_dev_open(&mock_verbs_ops, NULL, &dev), 0);
	*caps = dev->caps;
	srd_dev_close(dev);
}

static void test_rounddown_pow2(void **state)
{
	static const size_t in[] = { 0, 1, 2, 3, 4095, 4096, 4097, 32768, 65535 };
	static const size_t out[] = { 0, 1, 2, 2, 2048, 4096, 4096, 32768, 32768 };
	size_t i;

	for (i = 0; i < WEFT_ARRAY_SIZE(in); i++)
		assert_int_equal(srd_rounddown_pow2(in[i]), out[i]);
}

static void test_info_rdma_read_device(void **state)
{
	struct srd_dev_caps caps;
	struct srd_proto_caps pc;
	struct fi_info *info = info_new();

	mock.efa.max_sq_wr = 3000;	/* not a power of two */
	caps_from_mock(&caps);
	srd_info_fill(&caps, "mock_0", info);
	srd_proto_caps_from_dev(&caps, &pc);

	assert_true(info->caps & FI_RMA);
	assert_true(info->caps & FI_READ);
	assert_true(info->caps & FI_TAGGED);
	assert_true(info->caps & FI_MSG);
	assert_int_equal(pc.long_proto, SRD_LONG_READ);
	assert_int_equal(info->tx_attr->size, 2048);
	/* rx: efadv says 32768 but the QP limit is 4096 */
	assert_int_equal(info->rx_attr->size, 4096);
	/* message iovs are the provider's, not the device's SGEs */
	assert_int_equal(info->tx_attr->iov_limit, SRD_IOV_MAX);
	assert_int_equal(info->rx_attr->iov_limit, SRD_IOV_MAX);
	assert_int_equal(info->tx_attr->inject_size, 8928 - SRD_PKT_HDR_MAX);
	assert_int_equal(info->tx_attr->rma_iov_limit, 1);
	/* the device could register more, receivers take no more */
	assert_true(info->ep_attr->max_msg_size == UINT32_MAX);
	assert_int_equal(info->ep_attr->type, FI_EP_RDM);
	assert_int_equal(pc.max_rma_size, 1u << 30);
	assert_int_equal(info->domain_attr->cq_data_size, 4);
	assert_int_equal(info->domain_attr->ep_cnt, 256);
	assert_int_equal(info->tx_attr->msg_order & FI_ORDER_SAS, FI_ORDER_SAS);
	assert_string_equal(info->domain_attr->name, "mock_0");
	assert_string_equal(info->fabric_attr->name, "srd");
	info_free(info);
}

static void test_info_no_rdma(void **state)
{
	struct srd_dev_caps caps;
	struct srd_proto_caps pc;
	struct fi_info *info = info_new();

	mock.efa.device_caps = EFADV_DEVICE_ATTR_CAPS_RNR_RETRY;
	caps_from_mock(&caps);
	srd_info_fill(&caps, "mock_0", info);
	srd_proto_caps_from_dev(&caps, &pc);

	assert_false(info->caps & (FI_RMA | FI_READ | FI_WRITE |
				   FI_REMOTE_READ | FI_REMOTE_WRITE));
	assert_true(info->caps & FI_MSG);
	assert_false(pc.hw_rma);
	/* long messages go by receiver-granted credits */
	assert_int_equal(pc.long_proto, SRD_LONG_CTS);
	assert_int_equal(pc.max_rma_size, 0);
	assert_int_equal(caps.max_rdma_size, 0);
	assert_int_equal(info->tx_attr->rma_iov_limit, 0);
	info_free(info);
}

static void test_info_write_only(void **state)
{
	struct srd_dev_caps caps;
	struct srd_proto_caps pc;
	struct fi_info *info = info_new();

	mock.efa.device_caps = SRD_EFADV_CAPS_RDMA_WRITE;
	caps_from_mock(&caps);
	assert_true(caps.rdma_write);
	assert_false(caps.rdma_read);
	srd_info_fill(&caps, "mock_0", info);
	srd_proto_caps_from_dev(&caps, &pc);
	assert_true(info->caps & FI_RMA);
	/* writes alone cannot pull a long message: credits */
	assert_int_equal(pc.long_proto, SRD_LONG_CTS);
	assert_int_equal(pc.max_rma_size, 1u << 30);
	info_free(info);
}

static void test_info_small_device(void **state)
{
	struct srd_dev_caps caps;
	struct fi_info *info = info_new();

	mock.efa.max_sq_wr = 100;
	mock.efa.max_rq_wr = 70;
	mock.efa.max_sq_sge = 0;	/* device says nothing */
	mock.port.max_msg_sz = 1024;
	mock.attr_ex.orig_attr.max_qp_wr = 0;
	caps_from_mock(&caps);
	srd_info_fill(&caps, "mock_0", info);
	assert_int_equal(info->tx_attr->size, 64);
	assert_int_equal(info->rx_attr->size, 64);
	assert_int_equal(info->tx_attr->iov_limit, SRD_IOV_MAX);
	assert_int_equal(info->tx_attr->inject_size, 1024 - SRD_PKT_HDR_MAX);
	/* a second fill replaces the strings instead of leaking them */
	srd_info_fill(&caps, "mock_9", info);
	assert_string_equal(info->domain_attr->name, "mock_9");
	info_free(info);
}

/* Each context carries only what fi_endpoint(3) lets it carry; the
 * domain-wide bits go to domain_attr. */
static void test_info_ctx_caps(void **state)
{
	struct srd_dev_caps caps;
	struct fi_info *info = info_new();

	caps_from_mock(&caps);
	srd_info_fill(&caps, "mock_0", info);
	assert_int_equal(info->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM),
			 FI_LOCAL_COMM | FI_REMOTE_COMM);
	assert_int_equal(info->tx_attr->caps,
			 FI_MSG | FI_TAGGED | FI_SEND | FI_RMA | FI_READ |
			 FI_WRITE | FI_COLLECTIVE);
	assert_int_equal(info->rx_attr->caps,
			 FI_MSG | FI_TAGGED | FI_RECV | FI_SOURCE |
			 FI_DIRECTED_RECV | FI_MULTI_RECV | FI_RMA |
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT |
			 FI_COLLECTIVE);
	assert_int_equal(info->domain_attr->caps,
			 FI_LOCAL_COMM | FI_REMOTE_COMM);
	info_free(info);
}

/* src_addr: the device's name without a QP; hinted addresses checked. */
static void test_info_addrs(void **state)
{
	struct srd_dev_caps caps;
	struct fi_info *info = fi_allocinfo(), *hints = fi_allocinfo();
	struct srd_ep_name name, peer = { .version = SRD_EP_NAME_VERSION,
					  .qpn = 7, .qkey = 0x1234 };

	assert_non_null(info);
	assert_non_null(hints);
	caps_from_mock(&caps);
	assert_int_equal(srd_info_set_addrs(&caps, NULL, info), 0);
	assert_int_equal(info->src_addrlen, sizeof(name));
	memcpy(&name, info->src_addr, sizeof(name));
	assert_int_equal(name.version, SRD_EP_NAME_VERSION);
	assert_int_equal(name.qpn, 0);
	assert_int_equal(name.qkey, 0);
	assert_memory_equal(name.gid, mock.gid.raw, 16);
	assert_null(info->dest_addr);
	fi_freeinfo(info);

	/* a source hinted on this device (fabtests copy the one returned) */
	hints->src_addr = malloc(sizeof(name));
	assert_non_null(hints->src_addr);
	memcpy(hints->src_addr, &name, sizeof(name));
	hints->src_addrlen = sizeof(name);
	memcpy(peer.gid, mock.gid.raw, 16);
	peer.gid[15] ^= 1;
	hints->dest_addr = malloc(sizeof(peer));
	assert_non_null(hints->dest_addr);
	memcpy(hints->dest_addr, &peer, sizeof(peer));
	hints->dest_addrlen = sizeof(peer);
	info = fi_allocinfo();
	assert_int_equal(srd_info_set_addrs(&caps, hints, info), 0);
	assert_int_equal(info->dest_addrlen, sizeof(peer));
	assert_memory_equal(info->dest_addr, &peer, sizeof(peer));
	assert_memory_equal(info->src_addr, &name, sizeof(name));
	fi_freeinfo(info);

	/* a destination that is no srd name */
	hints->dest_addrlen = sizeof(peer) - 1;
	info = fi_allocinfo();
	assert_int_equal(srd_info_set_addrs(&caps, hints, info), -FI_ENODATA);
	fi_freeinfo(info);
	((struct srd_ep_name *)hints->dest_addr)->qkey = 0;
	hints->dest_addrlen = sizeof(peer);
	info = fi_allocinfo();
	assert_int_equal(srd_info_set_addrs(&caps, hints, info), -FI_ENODATA);
	fi_freeinfo(info);

	/* a source on another device */
	free(hints->dest_addr);
	hints->dest_addr = NULL;
	hints->dest_addrlen = 0;
	((struct srd_ep_name *)hints->src_addr)->gid[0] ^= 0xff;
	info = fi_allocinfo();
	assert_int_equal(srd_info_set_addrs(&caps, hints, info), -FI_ENODATA);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_open_reads_every_cap, setup),
		cmocka_unit_test_setup(test_open_mtu_from_enum, setup),
		cmocka_unit_test_setup(test_open_fails_at_each_step, setup),
		cmocka_unit_test_setup(test_open_by_name, setup),
		cmocka_unit_test_setup(test_open_no_device, setup),
		cmocka_unit_test_setup(test_ah_shared_by_threads, setup),
		cmocka_unit_test_setup(test_open_empty_queues_refused, setup),
		cmocka_unit_test_setup(test_rounddown_pow2, setup),
		cmocka_unit_test_setup(test_info_rdma_read_device, setup),
		cmocka_unit_test_setup(test_info_no_rdma, setup),
		cmocka_unit_test_setup(test_info_write_only, setup),
		cmocka_unit_test_setup(test_info_small_device, setup),
		cmocka_unit_test_setup(test_info_ctx_caps, setup),
		cmocka_unit_test_setup(test_info_addrs, setup),
	};

	return cmocka_run_group_tests_name("srd_device", tests, NULL, NULL);
}
