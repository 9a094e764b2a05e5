/* SPDX-License-Identifier: MIT */
/*
 * shm's fi_getinfo: the info template (per-context caps).
 */
#include "shm_prov_test.h"

#include <rdma/providers/fi_prov.h>

#define V117 FI_VERSION(1, 17)

/* the provider object itself, for its answer before core's narrowing */
extern struct fi_provider shm_prov;

/* The provider's own answer, before core narrows anything: each context
 * carries only what fi_endpoint(3) allows there. */
static void test_template_ctx_caps(void **state)
{
	struct fi_info *info = NULL;

	(void)state;
	assert_int_equal(shm_prov.getinfo(V117, NULL, NULL, 0, NULL, &info), 0);
	assert_true(info->caps & FI_LOCAL_COMM);
	assert_int_equal(info->tx_attr->caps,
			 FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ |
			 FI_WRITE | FI_SEND);
	assert_int_equal(info->rx_attr->caps,
			 FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV |
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV |
			 FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT);
	assert_int_equal(info->domain_attr->caps, FI_LOCAL_COMM);
	fi_freeinfo(info);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_template_ctx_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
