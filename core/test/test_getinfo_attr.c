/* SPDX-License-Identifier: MIT */
/*
 * fi_getinfo: what the transmit and receive attributes may carry
 * (fi_endpoint(3)), whatever a provider's template says, and shared
 * contexts, which only a provider that offers them may be asked for.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "fake_prov.h"

#define V117 FI_VERSION(1, 17)

/* fi_endpoint(3), "caps - Capabilities" of fi_tx_attr and fi_rx_attr. */
#define SPEC_TX_CAPS (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_READ | \
		      FI_WRITE | FI_SEND | FI_HMEM | FI_TRIGGER | FI_FENCE | \
		      FI_MULTICAST | FI_RMA_PMEM | FI_NAMED_RX_CTX | \
		      FI_COLLECTIVE | FI_XPU_TRIGGER)
#define SPEC_RX_CAPS (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
		      FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RECV | FI_HMEM | \
		      FI_TRIGGER | FI_RMA_PMEM | FI_DIRECTED_RECV | \
		      FI_VARIABLE_MSG | FI_MULTI_RECV | FI_SOURCE | \
		      FI_RMA_EVENT | FI_SOURCE_ERR | FI_COLLECTIVE | \
		      FI_XPU_TRIGGER)

#define WIDE_CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | \
		   FI_WRITE | FI_SEND | FI_RECV | FI_REMOTE_READ | \
		   FI_REMOTE_WRITE | FI_DIRECTED_RECV | FI_MULTI_RECV | \
		   FI_SOURCE | FI_NAMED_RX_CTX | FI_LOCAL_COMM | \
		   FI_REMOTE_COMM | FI_SHARED_AV)

/* fake_wide copies every capability into both contexts, as templates
 * that forget the per-direction rules do; fake_stx follows them and
 * offers shared transmit (not receive) contexts. */
FAKE_PROV_DEFINE(fake_wide, "fake_wide", V117);
FAKE_PROV_DEFINE(fake_stx, "fake_stx", V117);

static int group_setup(void **state)
{
	struct fi_info *wide = fake_info_rdm("fw", "fw0");
	struct fi_info *stx = fake_info_rdm("fs", "fs0");

	(void)state;
	assert_non_null(wide);
	assert_non_null(stx);
	wide->caps = wide->tx_attr->caps = wide->rx_attr->caps = WIDE_CAPS;
	wide->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV;
	stx->domain_attr->max_ep_stx_ctx = 1;
	fake_wide.infos = wide;
	fake_stx.infos = stx;
	assert_int_equal(weft_prov_register(&fake_wide.prov), 0);
	assert_int_equal(weft_prov_register(&fake_stx.prov), 0);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	weft_prov_unregister_all_extra();
	fi_freeinfo(fake_wide.infos);
	fi_freeinfo(fake_stx.infos);
	return 0;
}

static struct fi_info *hints_rdm(void)
{
	struct fi_info *hints = fi_allocinfo();

	assert_non_null(hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	return hints;
}

static void test_ctx_caps_without_hints(void **state)
{
	struct fi_info *info = NULL;

	(void)state;
	setenv("FI_PROVIDER", "fake_wide", 1);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, NULL, &info), 0);
	assert_int_equal(info->caps, WIDE_CAPS);
	assert_int_equal(info->tx_attr->caps,
			 FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ |
			 FI_WRITE | FI_SEND | FI_NAMED_RX_CTX);
	assert_int_equal(info->rx_attr->caps,
			 FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV |
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV |
			 FI_MULTI_RECV | FI_SOURCE);
	/* domain-wide bits stay where they belong */
	assert_int_equal(info->domain_attr->caps,
			 FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV);
	fi_freeinfo(info);
}

/* What fabtests' getinfo_caps1 checks, over every combination of the
 * primary capabilities the fake offers. */
static void test_ctx_caps_every_primary_combination(void **state)
{
	static const uint64_t prim[] = {
		FI_MSG, FI_TAGGED, FI_RMA, FI_ATOMIC, FI_DIRECTED_RECV,
		FI_NAMED_RX_CTX,
	};
	const size_t n = sizeof(prim) / sizeof(prim[0]);
	struct fi_info *hints = hints_rdm(), *info;

	(void)state;
	setenv("FI_PROVIDER", "fake_wide", 1);
	for (uint32_t combo = 0; combo < (1u << n); combo++) {
		uint64_t caps = 0;

		for (size_t i = 0; i < n; i++)
			if (combo & (1u << i))
				caps |= prim[i];
		hints->caps = caps;
		info = NULL;
		assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
		assert_int_equal(info->tx_attr->caps & ~SPEC_TX_CAPS, 0);
		assert_int_equal(info->rx_attr->caps & ~SPEC_RX_CAPS, 0);
		assert_int_equal(info->tx_attr->caps & ~info->caps, 0);
		assert_int_equal(info->rx_attr->caps & ~info->caps, 0);
		assert_int_equal(info->caps & caps, caps);
		assert_int_equal(info->tx_attr->caps & caps & SPEC_TX_CAPS,
				 caps & SPEC_TX_CAPS);
		assert_int_equal(info->rx_attr->caps & caps & SPEC_RX_CAPS,
				 caps & SPEC_RX_CAPS);
		fi_freeinfo(info);
	}
	fi_freeinfo(hints);
}

/* Applications copy info->caps into tx_attr/rx_attr->caps: the bits that
 * do not apply there are ignored, not held against the provider. */
static void test_ctx_caps_hint_bits_that_do_not_apply(void **state)
{
	struct fi_info *hints = hints_rdm(), *info = NULL;

	(void)state;
	setenv("FI_PROVIDER", "fake_stx", 1);
	hints->caps = FI_MSG;
	hints->tx_attr->caps = FI_MSG | FI_SEND | FI_LOCAL_COMM | FI_RECV;
	hints->rx_attr->caps = FI_MSG | FI_RECV | FI_REMOTE_COMM | FI_SEND;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->tx_attr->caps, FI_MSG | FI_SEND);
	assert_int_equal(info->rx_attr->caps, FI_MSG | FI_RECV);
	fi_freeinfo(info);

	/* what does apply is still checked: fake_stx has no atomics */
	hints->tx_attr->caps = FI_MSG | FI_ATOMIC;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);
	assert_null(info);
	fi_freeinfo(hints);
}

static void test_shared_contexts(void **state)
{
	struct fi_info *hints = hints_rdm(), *info = NULL;

	(void)state;
	hints->caps = FI_MSG;
	/* fake_wide offers no shared context at all */
	setenv("FI_PROVIDER", "fake_wide", 1);
	hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);
	hints->ep_attr->tx_ctx_cnt = 0;
	hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);

	/* fake_stx: transmit yes, receive no */
	setenv("FI_PROVIDER", "fake_stx", 1);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);
	hints->ep_attr->rx_ctx_cnt = 0;
	hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_string_equal(info->fabric_attr->prov_name, "fake_stx");
	assert_int_equal(info->domain_attr->max_ep_stx_ctx, 1);
	fi_freeinfo(info);

	/* a plain count above the provider's is still refused */
	hints->ep_attr->tx_ctx_cnt = 2;
	info = NULL;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);
	fi_freeinfo(hints);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctx_caps_without_hints),
		cmocka_unit_test(test_ctx_caps_every_primary_combination),
		cmocka_unit_test(test_ctx_caps_hint_bits_that_do_not_apply),
		cmocka_unit_test(test_shared_contexts),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
