/* SPDX-License-Identifier: MIT */
/*
 * fi_getinfo against fake providers: argument checks, provider selection
 * (FI_PROVIDER, prov_name, API version), ordering, hint matching and
 * narrowing, FI_PROV_ATTR_ONLY, fi_fabric dispatch.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <pthread.h>
#include <cmocka.h>
#include "fake_prov.h"
#include "capture.h"

#define V117 FI_VERSION(1, 17)
#define ALL_FAKES "fake_a,fake_b,fake_old,fake_empty"

FAKE_PROV_DEFINE(fake_a, "fake_a", FI_VERSION(1, 17));
FAKE_PROV_DEFINE(fake_b, "fake_b", FI_VERSION(1, 17));
FAKE_PROV_DEFINE(fake_old, "fake_old", FI_VERSION(1, 5));
FAKE_PROV_DEFINE(fake_empty, "fake_empty", FI_VERSION(1, 17));

static struct fi_info *make_b_info(void)
{
	struct fi_info *info = fake_info_rdm("fb", "fb0");

	info->mode = 0;
	info->tx_attr->mode = info->rx_attr->mode = 0;
	info->addr_format = FI_SOCKADDR_IN6;
	info->domain_attr->threading = FI_THREAD_DOMAIN;
	info->domain_attr->control_progress = FI_PROGRESS_AUTO;
	info->domain_attr->data_progress = FI_PROGRESS_AUTO;
	info->domain_attr->resource_mgmt = FI_RM_DISABLED;
	info->domain_attr->av_type = FI_AV_TABLE;
	info->domain_attr->mr_mode = 0;
	info->tx_attr->size = 64;
	info->tx_attr->msg_order = FI_ORDER_NONE;
	return info;
}

static int group_setup(void **state)
{
	fake_a.infos = fake_info_rdm("fa", "fa0");
	fake_a.infos->next = fake_info_msg("fa", "fa0");
	fake_b.infos = make_b_info();
	fake_old.infos = fake_info_rdm("fo", "fo0");
	fake_empty.infos = NULL;
	assert_int_equal(weft_prov_register(&fake_a.prov), 0);
	assert_int_equal(weft_prov_register(&fake_b.prov), 0);
	assert_int_equal(weft_prov_register(&fake_old.prov), 0);
	assert_int_equal(weft_prov_register(&fake_empty.prov), 0);
	return 0;
}

static int group_teardown(void **state)
{
	weft_prov_unregister_all_extra();
	fi_freeinfo(fake_a.infos);
	fi_freeinfo(fake_b.infos);
	fi_freeinfo(fake_old.infos);
	return 0;
}

/* Only the fakes, so real providers on this host change nothing. */
static int test_setup(void **state)
{
	setenv("FI_PROVIDER", ALL_FAKES, 1);
	memset(&fake_a.call, 0, sizeof(fake_a.call));
	memset(&fake_b.call, 0, sizeof(fake_b.call));
	return 0;
}

static int count_prov(const struct fi_info *info, const char *name)
{
	int n = 0;

	for (; info; info = info->next)
		n += !strcmp(info->fabric_attr->prov_name, name);
	return n;
}

static int list_len(const struct fi_info *info)
{
	int n = 0;

	for (; info; info = info->next)
		n++;
	return n;
}

/* hints -> number of results from provider name (-errno on failure). */
static int results_for(uint32_t version, const struct fi_info *hints,
		       const char *name)
{
	struct fi_info *info = NULL;
	int ret = fi_getinfo(version, NULL, NULL, 0, hints, &info);

	if (ret)
		return ret;
	ret = count_prov(info, name);
	fi_freeinfo(info);
	return ret;
}

static void test_register_errors(void **state)
{
	struct fi_provider nameless = { .getinfo = fake_a.prov.getinfo };

	assert_int_equal(weft_prov_register(NULL), -FI_EINVAL);
	assert_int_equal(weft_prov_register(&nameless), -FI_EINVAL);
	assert_int_equal(weft_prov_register(&fake_a.prov), -FI_EALREADY);
}

static void test_null_info(void **state)
{
	struct capture cap;

	capture_start(&cap);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, NULL, NULL), -FI_EINVAL);
	assert_int_equal(capture_count(capture_stop(&cap), "info is NULL"), 1);
	capture_free(&cap);
}

static void test_unknown_flags(void **state)
{
	struct fi_info *info = (struct fi_info *)&info;

	assert_int_equal(fi_getinfo(V117, NULL, NULL, 1ULL << 3, NULL, &info),
			 -FI_EINVAL);
	assert_null(info);
	assert_int_equal(fake_a.call.count, 0);
}

static void test_unknown_caps(void **state)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	struct capture cap;

	hints->caps = FI_MSG | (1ULL << 63);
	capture_start(&cap);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	assert_int_equal(capture_count(capture_stop(&cap), "unknown capability bits 0x8000000000000000"), 1);
	capture_free(&cap);
	assert_null(info);

	hints->caps = FI_MSG;
	hints->tx_attr->caps = 1ULL << 7;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	fi_freeinfo(hints);
}

static void test_api_version(void **state)
{
	struct fi_info *info = NULL;

	/* Newer than weft itself. */
	assert_int_equal(fi_getinfo(FI_VERSION(1, 18), NULL, NULL, 0, NULL, &info),
			 -FI_ENODATA);
	assert_int_equal(fi_getinfo(FI_VERSION(2, 0), NULL, NULL, 0, NULL, &info),
			 -FI_ENODATA);
	/* Newer than fake_old (1.5): it alone is skipped. */
	setenv("FI_PROVIDER", "fake_old", 1);
	assert_int_equal(fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, NULL, &info),
			 -FI_ENODATA);
	assert_int_equal(results_for(FI_VERSION(1, 5), NULL, "fake_old"), 1);
	setenv("FI_PROVIDER", ALL_FAKES, 1);
	assert_int_equal(results_for(FI_VERSION(1, 10), NULL, "fake_old"), 0);
	assert_int_equal(results_for(FI_VERSION(1, 10), NULL, "fake_a"), 2);
}

static void test_stamp_and_passthrough(void **state)
{
	struct fi_info *info = NULL;

	assert_int_equal(fi_getinfo(FI_VERSION(1, 9), "node1", "4242", FI_SOURCE,
				    NULL, &info), 0);
	assert_string_equal(info->fabric_attr->prov_name, "fake_a");
	assert_int_equal(info->fabric_attr->prov_version, FI_VERSION(2, 3));
	assert_int_equal(info->fabric_attr->api_version, FI_VERSION(1, 9));
	assert_string_equal(info->fabric_attr->name, "fa");
	assert_int_equal(fake_a.call.count, 1);
	assert_int_equal(fake_a.call.version, FI_VERSION(1, 9));
	assert_string_equal(fake_a.call.node, "node1");
	assert_string_equal(fake_a.call.service, "4242");
	assert_int_equal(fake_a.call.flags, FI_SOURCE);
	/* No hints: provider infos come back unnarrowed. */
	assert_int_equal(info->caps, fake_a.infos->caps);
	assert_int_equal(info->mode, FI_CONTEXT);
	fi_freeinfo(info);
}

static void test_preference_order(void **state)
{
	struct fi_info *info = NULL, *cur;
	const char *want[] = { "fake_a", "fake_a", "fake_b" };
	int i = 0;

	/* FI_PROVIDER order does not reorder: registration order rules. */
	setenv("FI_PROVIDER", "fake_b,fake_a", 1);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, NULL, &info), 0);
	for (cur = info; cur; cur = cur->next, i++) {
		assert_true(i < 3);
		assert_string_equal(cur->fabric_attr->prov_name, want[i]);
	}
	assert_int_equal(i, 3);
	/* A provider's own order is kept: RDM first, then MSG. */
	assert_int_equal(info->ep_attr->type, FI_EP_RDM);
	assert_int_equal(info->next->ep_attr->type, FI_EP_MSG);
	fi_freeinfo(info);
}

static void test_fi_provider_forms(void **state)
{
	struct fi_info *info = NULL;
	struct capture cap;

	setenv("FI_PROVIDER", "fake_b", 1);
	assert_int_equal(results_for(V117, NULL, "fake_b"), 1);
	assert_int_equal(results_for(V117, NULL, "fake_a"), 0);

	setenv("FI_PROVIDER", "FAKE_A,fake_b", 1);	/* case-insensitive */
	assert_int_equal(results_for(V117, NULL, "fake_a"), 2);
	assert_int_equal(results_for(V117, NULL, "fake_b"), 1);

	setenv("FI_PROVIDER", "^fake_a", 1);
	assert_int_equal(results_for(V117, NULL, "fake_a"), 0);
	assert_int_equal(results_for(V117, NULL, "fake_b"), 1);

	/* At API 1.5, so that fake_old (1.5) is a candidate too. */
	setenv("FI_PROVIDER", "^fake_a,fake_b", 1);
	assert_int_equal(results_for(FI_VERSION(1, 5), NULL, "fake_a"), 0);
	assert_int_equal(results_for(FI_VERSION(1, 5), NULL, "fake_b"), 0);
	assert_int_equal(results_for(FI_VERSION(1, 5), NULL, "fake_old"), 1);

	setenv("FI_PROVIDER", "nosuch", 1);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, NULL, &info), -FI_ENODATA);

	const char *malformed[] = { "fake_a,,fake_b", "^", "fake_a,^fake_b",
				    "fake_a,", "^^fake_a" };
	for (size_t i = 0; i < WEFT_ARRAY_SIZE(malformed); i++) {
		setenv("FI_PROVIDER", malformed[i], 1);
		capture_start(&cap);
		assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, NULL, &info),
				 -FI_ENODATA);
		assert_int_equal(capture_count(capture_stop(&cap), "FI_PROVIDER"), 1);
		capture_free(&cap);
		assert_null(info);
	}
}

static void test_hint_prov_name(void **state)
{
	struct fi_info *hints = fi_allocinfo();
	struct capture cap;

	hints->mode = ~0ULL;
	hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
	hints->fabric_attr->prov_name = strdup("fake_b");
	assert_int_equal(results_for(V117, hints, "fake_b"), 1);
	assert_int_equal(results_for(V117, hints, "fake_a"), 0);
	free(hints->fabric_attr->prov_name);

	hints->fabric_attr->prov_name = strdup("^fake_b");
	assert_int_equal(results_for(V117, hints, "fake_b"), 0);
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);
	free(hints->fabric_attr->prov_name);

	/* Layered names exist in libfabric only: no weft provider has one. */
	hints->fabric_attr->prov_name = strdup("fake_a;ofi_rxm");
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	free(hints->fabric_attr->prov_name);

	hints->fabric_attr->prov_name = strdup("fake_a,,");
	capture_start(&cap);
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	assert_int_equal(capture_count(capture_stop(&cap), "prov_name=fake_a,, is malformed"), 1);
	capture_free(&cap);
	fi_freeinfo(hints);
}

static void test_prov_attr_only(void **state)
{
	struct fi_info *info = NULL;

	fake_empty.call.count = 0;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &info), 0);
	/* Exactly one per provider, usable or not, without asking it. */
	assert_int_equal(list_len(info), 3);
	assert_int_equal(count_prov(info, "fake_a"), 1);
	assert_int_equal(count_prov(info, "fake_empty"), 1);
	assert_int_equal(count_prov(info, "fake_b"), 1);
	/* ... but still only providers that speak the API asked. */
	assert_int_equal(count_prov(info, "fake_old"), 0);
	assert_int_equal(fake_empty.call.count, 0);
	assert_int_equal(fake_a.call.count, 0);
	assert_int_equal(info->fabric_attr->prov_version, FI_VERSION(2, 3));
	assert_int_equal(info->caps, 0);
	assert_non_null(info->domain_attr);
	fi_freeinfo(info);
}

/* Hints every fake accepts, so each test changes one field. */
static struct fi_info *open_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	hints->mode = ~0ULL;
	hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
	return hints;
}

static void test_hint_ep_type_addr_format(void **state)
{
	struct fi_info *hints = open_hints();

	hints->ep_attr->type = FI_EP_MSG;
	assert_int_equal(results_for(V117, hints, "fake_a"), 1);
	assert_int_equal(results_for(V117, hints, "fake_b"), 0);
	hints->ep_attr->type = FI_EP_DGRAM;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->ep_attr->type = FI_EP_UNSPEC;

	hints->addr_format = FI_SOCKADDR_IN6;
	assert_int_equal(results_for(V117, hints, "fake_a"), 0);
	assert_int_equal(results_for(V117, hints, "fake_b"), 1);
	hints->addr_format = FI_SOCKADDR;	/* generic covers both */
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);
	assert_int_equal(results_for(V117, hints, "fake_b"), 1);
	hints->addr_format = FI_ADDR_STR;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	fi_freeinfo(hints);
}

static void test_hint_caps_narrowing(void **state)
{
	struct fi_info *hints = open_hints(), *info = NULL;

	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	setenv("FI_PROVIDER", "fake_a", 1);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	/* Asked primary + its modifiers + secondaries the provider has. */
	assert_int_equal(info->caps, FI_MSG | FI_SEND | FI_RECV |
			 FI_MULTI_RECV | FI_SOURCE);
	assert_int_equal(info->tx_attr->caps, FI_MSG | FI_SEND);
	assert_int_equal(info->rx_attr->caps, FI_MSG | FI_RECV | FI_MULTI_RECV |
			 FI_SOURCE);
	fi_freeinfo(info);

	/* Explicit modifier: send-only stays send-only. */
	hints->caps = FI_TAGGED | FI_SEND;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->caps, FI_TAGGED | FI_SEND | FI_MULTI_RECV | FI_SOURCE);
	fi_freeinfo(info);

	hints->caps = FI_MSG | FI_ATOMIC;	/* fake_a has no atomics */
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	hints->caps = FI_MSG | FI_RMA_EVENT;	/* nor this secondary cap */
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	hints->caps = 0;
	hints->domain_attr->caps = FI_SHARED_AV;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	fi_freeinfo(hints);
}

static void test_hint_mode(void **state)
{
	struct fi_info *hints = open_hints(), *info = NULL;

	/* fake_a's RDM needs FI_CONTEXT; its MSG and fake_b need nothing. */
	hints->mode = 0;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	assert_int_equal(results_for(V117, hints, "fake_a"), 1);
	assert_int_equal(results_for(V117, hints, "fake_b"), 1);
	hints->mode = FI_CONTEXT | FI_CONTEXT2 | FI_MSG_PREFIX;
	setenv("FI_PROVIDER", "fake_a", 1);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	/* Only what the provider requires stays set. */
	assert_int_equal(info->mode, FI_CONTEXT);
	assert_int_equal(info->next->mode, 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

static void test_hint_mr_mode(void **state)
{
	struct fi_info *hints = open_hints(), *info = NULL;

	setenv("FI_PROVIDER", "fake_a", 1);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_RMA;
	/* fake_a needs LOCAL|VIRT_ADDR|ALLOCATED|PROV_KEY for an RMA target. */
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	hints->domain_attr->mr_mode |= FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, FI_MR_LOCAL | FI_MR_VIRT_ADDR |
			 FI_MR_ALLOCATED | FI_MR_PROV_KEY);
	fi_freeinfo(info);

	/* Not an RMA target: key and address bits don't bind the app. */
	hints->caps = FI_MSG;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, FI_MR_LOCAL | FI_MR_ALLOCATED);
	fi_freeinfo(info);
	/* FI_LOCAL_MR mode stands in for FI_MR_LOCAL. */
	hints->domain_attr->mr_mode = FI_MR_ALLOCATED;
	hints->mode = FI_CONTEXT;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	hints->mode = FI_CONTEXT | FI_LOCAL_MR;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	fi_freeinfo(info);

	/* Old-style values. */
	hints->caps = FI_MSG | FI_RMA;
	hints->domain_attr->mr_mode = FI_MR_BASIC;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, FI_MR_BASIC);
	fi_freeinfo(info);
	hints->domain_attr->mr_mode = FI_MR_SCALABLE;	/* needs PROV_KEY: no */
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	hints->domain_attr->mr_mode = FI_MR_BASIC | FI_MR_SCALABLE;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	/* API 1.4 with FI_MR_UNSPEC: reported as FI_MR_BASIC + FI_LOCAL_MR. */
	hints->domain_attr->mr_mode = FI_MR_UNSPEC;
	assert_int_equal(fi_getinfo(FI_VERSION(1, 4), NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, FI_MR_BASIC);
	assert_true(info->mode & FI_LOCAL_MR);
	fi_freeinfo(info);
	/* fake_b needs no registration mode: FI_MR_SCALABLE fits it. */
	setenv("FI_PROVIDER", "fake_b", 1);
	hints->mode = 0;
	hints->domain_attr->mr_mode = FI_MR_SCALABLE;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, FI_MR_SCALABLE);
	fi_freeinfo(info);

	/* No local registration and not an RMA target: the rest of the
	 * provider's mr_mode does not bind the application. */
	fake_b.infos->domain_attr->mr_mode = FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->mr_mode = 0;
	hints->caps = FI_MSG;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, 0);
	fi_freeinfo(info);
	hints->caps = FI_MSG | FI_RMA;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_ENODATA);
	fake_b.infos->domain_attr->mr_mode = 0;
	fi_freeinfo(hints);

	/* API 1.4 without domain hints still gets old-style values. */
	struct fi_info bare = { .mode = ~0ULL };

	setenv("FI_PROVIDER", "fake_a", 1);
	assert_int_equal(fi_getinfo(FI_VERSION(1, 4), NULL, NULL, 0, &bare, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, FI_MR_BASIC);
	assert_true(info->mode & FI_LOCAL_MR);
	fi_freeinfo(info);
	assert_int_equal(fi_getinfo(FI_VERSION(1, 4), NULL, NULL, 0, NULL, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, FI_MR_BASIC);
	fi_freeinfo(info);
}

static void test_hint_domain_models(void **state)
{
	struct fi_info *hints = open_hints(), *info = NULL;

	/* fake_a: THREAD_SAFE, MANUAL progress, RM_ENABLED, any AV;
	 * fake_b: THREAD_DOMAIN, AUTO progress, RM_DISABLED, AV_TABLE. */
	hints->domain_attr->threading = FI_THREAD_SAFE;
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);
	assert_int_equal(results_for(V117, hints, "fake_b"), 0);
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_prov(info, "fake_a"), 2);
	assert_int_equal(count_prov(info, "fake_b"), 1);
	/* Narrowed to what was asked. */
	assert_int_equal(info->domain_attr->threading, FI_THREAD_DOMAIN);
	fi_freeinfo(info);
	hints->domain_attr->threading = FI_THREAD_UNSPEC;

	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	assert_int_equal(results_for(V117, hints, "fake_a"), 0);
	assert_int_equal(results_for(V117, hints, "fake_b"), 1);
	hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	assert_int_equal(results_for(V117, hints, "fake_b"), 1);
	hints->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
	hints->domain_attr->control_progress = FI_PROGRESS_AUTO;
	assert_int_equal(results_for(V117, hints, "fake_a"), 0);
	hints->domain_attr->control_progress = FI_PROGRESS_UNSPEC;

	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);
	assert_int_equal(results_for(V117, hints, "fake_b"), 0);
	hints->domain_attr->resource_mgmt = FI_RM_UNSPEC;

	hints->domain_attr->av_type = FI_AV_MAP;
	setenv("FI_PROVIDER", "fake_a,fake_b", 1);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_prov(info, "fake_b"), 0);
	assert_int_equal(info->domain_attr->av_type, FI_AV_MAP);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

static void test_hint_sizes(void **state)
{
	struct fi_info *hints = open_hints();

	hints->tx_attr->size = 1024;		/* fake_b: 64 */
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);
	assert_int_equal(results_for(V117, hints, "fake_b"), 0);
	hints->tx_attr->size = 1025;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->tx_attr->size = 0;

	hints->tx_attr->iov_limit = 5;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->tx_attr->iov_limit = 4;
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);
	hints->tx_attr->inject_size = 65;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->tx_attr->inject_size = 0;
	hints->rx_attr->size = 2049;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->rx_attr->size = 2048;
	hints->rx_attr->iov_limit = 8;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->rx_attr->iov_limit = 0;
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);

	hints->ep_attr->max_msg_size = (1 << 20) + 1;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->ep_attr->max_msg_size = 0;
	hints->domain_attr->cq_data_size = 8;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->domain_attr->cq_data_size = 4;
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);
	fi_freeinfo(hints);
}

static void test_hint_order_and_tags(void **state)
{
	struct fi_info *hints = open_hints(), *info = NULL;

	hints->tx_attr->msg_order = FI_ORDER_SAS;	/* fake_b: none */
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);
	assert_int_equal(results_for(V117, hints, "fake_b"), 0);
	hints->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->tx_attr->msg_order = 0;
	hints->rx_attr->msg_order = FI_ORDER_WAW;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->rx_attr->msg_order = 0;
	hints->tx_attr->comp_order = FI_ORDER_STRICT;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->tx_attr->comp_order = 0;

	/* fake_a offers 32 tag bits. */
	hints->ep_attr->mem_tag_format = 0x1ffffffffULL;
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	hints->ep_attr->mem_tag_format = 0xaaaa0000ULL;
	setenv("FI_PROVIDER", "fake_a", 1);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->ep_attr->mem_tag_format, 0xaaaa0000ULL);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

static void test_hint_names(void **state)
{
	struct fi_info *hints = open_hints();

	hints->fabric_attr->name = strdup("fb");
	assert_int_equal(results_for(V117, hints, "fake_a"), 0);
	assert_int_equal(results_for(V117, hints, "fake_b"), 1);
	free(hints->fabric_attr->name);
	hints->fabric_attr->name = NULL;
	hints->domain_attr->name = strdup("fa0");
	assert_int_equal(results_for(V117, hints, "fake_a"), 2);
	assert_int_equal(results_for(V117, hints, "fake_b"), 0);
	free(hints->domain_attr->name);
	hints->domain_attr->name = strdup("nosuch");
	assert_int_equal(results_for(V117, hints, "fake_a"), -FI_ENODATA);
	fi_freeinfo(hints);
}

static void test_bad_addresses(void **state)
{
	struct fi_info *hints = open_hints(), *info = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7) };
	struct capture cap;

	hints->addr_format = FI_SOCKADDR_IN;
	hints->src_addr = &sin;
	hints->src_addrlen = 0;
	capture_start(&cap);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_EINVAL);
	assert_int_equal(capture_count(capture_stop(&cap), "src_addr is set but its length is 0"), 1);
	capture_free(&cap);
	assert_null(info);

	hints->src_addr = NULL;
	hints->src_addrlen = sizeof(sin);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_EINVAL);

	hints->src_addr = &sin;
	hints->src_addrlen = 8;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_EINVAL);
	hints->src_addrlen = sizeof(sin);
	hints->addr_format = FI_SOCKADDR_IN6;	/* family says IPv4 */
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_EINVAL);
	hints->addr_format = FI_SOCKADDR_IN;
	hints->src_addr = NULL;
	hints->src_addrlen = 0;
	hints->dest_addr = "abc";
	hints->dest_addrlen = 3;		/* FI_ADDR_STR without NUL */
	hints->addr_format = FI_ADDR_STR;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), -FI_EINVAL);
	assert_int_equal(fake_a.call.count, 0);

	/* Well-formed: the provider sees the hints (and the address). */
	hints->dest_addr = NULL;
	hints->dest_addrlen = 0;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->src_addr = &sin;
	hints->src_addrlen = sizeof(sin);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_ptr_equal(fake_a.call.hints, hints);
	fi_freeinfo(info);
	hints->src_addr = NULL;	/* not ours to free */
	hints->src_addrlen = 0;
	fi_freeinfo(hints);
}

static void test_failing_provider(void **state)
{
	struct fi_info *info = NULL;

	fake_b.getinfo_ret = -FI_EIO;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, NULL, &info), 0);
	assert_int_equal(count_prov(info, "fake_b"), 0);
	assert_int_equal(count_prov(info, "fake_a"), 2);
	fi_freeinfo(info);
	setenv("FI_PROVIDER", "fake_b", 1);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, NULL, &info), -FI_ENODATA);
	fake_b.getinfo_ret = 0;
}

static void test_fabric_open(void **state)
{
	struct fi_fabric_attr attr = { .prov_name = "fake_b",
				       .api_version = FI_VERSION(1, 9) };
	struct fid_fabric *fabric = NULL;
	int calls_b = fake_b.fabric_calls, calls_a = fake_a.fabric_calls;

	assert_int_equal(fi_fabric(&attr, &fabric, &attr), 0);
	assert_int_equal(fake_b.fabric_calls, calls_b + 1);
	assert_ptr_equal(fabric->fid.context, &attr);
	assert_int_equal(fabric->api_version, FI_VERSION(1, 9));
	fi_close(&fabric->fid);

	/* By fabric name alone. */
	attr.prov_name = NULL;
	attr.name = "fa";
	assert_int_equal(fi_fabric(&attr, &fabric, NULL), 0);
	assert_int_equal(fake_a.fabric_calls, calls_a + 1);
	fi_close(&fabric->fid);

	attr.prov_name = "nosuch";
	assert_int_equal(fi_fabric(&attr, &fabric, NULL), -FI_ENODEV);
	assert_int_equal(fi_fabric(NULL, &fabric, NULL), -FI_EINVAL);
	assert_int_equal(fi_fabric(&attr, NULL, NULL), -FI_EINVAL);
}

static void test_version_and_open(void **state)
{
	struct fid *fid = NULL;

	assert_int_equal(fi_version(), FI_VERSION(1, 17));
	assert_int_equal(fi_open(FI_VERSION(1, 17), "mr_cache", NULL, 0, 0, &fid, NULL),
			 -FI_ENOSYS);
	assert_int_equal(fi_open(FI_VERSION(1, 17), "bogus", NULL, 0, 0, &fid, NULL),
			 -FI_ENOSYS);
	assert_int_equal(fi_open(FI_VERSION(1, 17), NULL, NULL, 0, 0, &fid, NULL),
			 -FI_EINVAL);
	assert_null(fid);
}

#define GETINFO_THREADS 4
#define GETINFO_ROUNDS 200

/* Concurrent fi_getinfo calls each get a complete, private list. */
static void *getinfo_many(void *arg)
{
	struct fi_info *hints = arg, *info;

	for (int i = 0; i < GETINFO_ROUNDS; i++) {
		info = NULL;
		if (fi_getinfo(V117, NULL, NULL, 0, hints, &info))
			return (void *)1;
		if (count_prov(info, "fake_a") != 1 || count_prov(info, "fake_b") != 0 ||
		    info->domain_attr->threading != FI_THREAD_COMPLETION) {
			fi_freeinfo(info);
			return (void *)2;
		}
		fi_freeinfo(info);
	}
	return NULL;
}

static void test_concurrent_getinfo(void **state)
{
	struct fi_info *hints = open_hints();
	pthread_t threads[GETINFO_THREADS];
	void *ret;

	hints->ep_attr->type = FI_EP_MSG;
	hints->domain_attr->threading = FI_THREAD_COMPLETION;
	for (int t = 0; t < GETINFO_THREADS; t++)
		assert_int_equal(pthread_create(&threads[t], NULL, getinfo_many, hints), 0);
	for (int t = 0; t < GETINFO_THREADS; t++) {
		assert_int_equal(pthread_join(threads[t], &ret), 0);
		assert_null(ret);
	}
	fi_freeinfo(hints);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup(name, test_setup)
		T(test_register_errors),
		T(test_null_info),
		T(test_unknown_flags),
		T(test_unknown_caps),
		T(test_api_version),
		T(test_stamp_and_passthrough),
		T(test_preference_order),
		T(test_fi_provider_forms),
		T(test_hint_prov_name),
		T(test_prov_attr_only),
		T(test_hint_ep_type_addr_format),
		T(test_hint_caps_narrowing),
		T(test_hint_mode),
		T(test_hint_mr_mode),
		T(test_hint_domain_models),
		T(test_hint_sizes),
		T(test_hint_order_and_tags),
		T(test_hint_names),
		T(test_bad_addresses),
		T(test_failing_provider),
		T(test_fabric_open),
		T(test_version_and_open),
		T(test_concurrent_getinfo),
#undef T
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
