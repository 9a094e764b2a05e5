/* SPDX-License-Identifier: MIT */
/*
 * The rdma-core verbs table: with the libraries absent (test hook pointing
 * at sonames that do not exist) or lacking a symbol, srd has no device and
 * nothing crashes; with the real libraries (when installed) every entry is
 * resolved. Also the FI_SRD_* settings.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/dev/srd_dev.h"

static int teardown(void **state)
{
	(void)state;
	srd_dev_verbs_rdma_set_sonames(NULL, NULL);
	return 0;
}

static void test_libs_absent(void **state)
{
	struct srd_dev *dev = (void *)0x1;

	srd_dev_verbs_rdma_set_sonames("libweft-no-such-ibverbs.so.1", NULL);
	assert_null(srd_dev_verbs_rdma_ops());
	/* asked again: still nothing, no retry storm, no crash */
	assert_null(srd_dev_verbs_rdma_ops());
	assert_null(srd_dev_verbs_select(SRD_DEVICE_EFA));
	assert_null(srd_dev_verbs_select(SRD_DEVICE_AUTO));
	assert_int_equal(srd_dev_open(srd_dev_verbs_rdma_ops(), NULL, &dev),
			 -FI_ENODEV);
	assert_ptr_equal(dev, (void *)0x1);
}

static void test_efa_absent(void **state)
{
	srd_dev_verbs_rdma_set_sonames(NULL, "libweft-no-such-efa.so.1");
	assert_null(srd_dev_verbs_rdma_ops());
}

static bool have_rdma_core(void)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	void *e = dlopen("libefa.so.1", RTLD_NOW | RTLD_LOCAL);
	bool ok = h && e;

	if (e)
		dlclose(e);
	if (h)
		dlclose(h);
	return ok;
}

static void test_symbol_missing(void **state)
{
	if (!have_rdma_core()) {
		print_message("# libibverbs.so.1/libefa.so.1 not installed\n");
		skip();
		return;
	}
	/* libibverbs in place of libefa: every efadv_* symbol is missing */
	srd_dev_verbs_rdma_set_sonames(NULL, "libibverbs.so.1");
	assert_null(srd_dev_verbs_rdma_ops());
}

static void test_real_libs_resolve(void **state)
{
	const struct srd_verbs_ops *v;
	struct srd_dev *dev = NULL;
	int ret;

	if (!have_rdma_core()) {
		print_message("# libibverbs.so.1/libefa.so.1 not installed\n");
		skip();
		return;
	}
	v = srd_dev_verbs_rdma_ops();
	assert_non_null(v);
	assert_string_equal(v->name, "rdma-core");
	assert_non_null(v->get_device_list);
	assert_non_null(v->free_device_list);
	assert_non_null(v->get_device_name);
	assert_non_null(v->open_device);
	assert_non_null(v->close_device);
	assert_non_null(v->query_device_ex);
	assert_non_null(v->efadv_query_device);
	assert_non_null(v->query_port);
	assert_non_null(v->query_gid);
	assert_non_null(v->alloc_pd);
	assert_non_null(v->dealloc_pd);
	assert_non_null(v->reg_mr);
	assert_non_null(v->dereg_mr);
	assert_non_null(v->create_cq_ex);
	assert_non_null(v->destroy_cq);
	assert_non_null(v->efadv_create_qp_ex);
	assert_non_null(v->qp_to_qp_ex);
	assert_non_null(v->modify_qp);
	assert_non_null(v->query_qp);
	assert_non_null(v->query_qp_data_in_order);
	assert_non_null(v->destroy_qp);
	assert_non_null(v->create_ah);
	assert_non_null(v->efadv_query_ah);
	assert_non_null(v->destroy_ah);
	/* the same table on the next call */
	assert_ptr_equal(srd_dev_verbs_rdma_ops(), v);

	/* No EFA here is the usual case; a device, if any, opens and closes.
	 * A non-EFA verbs device must be refused (efadv query fails). */
	ret = srd_dev_open(v, "weft-no-such-device", &dev);
	assert_int_equal(ret, -FI_ENODEV);
	ret = srd_dev_open(v, NULL, &dev);
	if (!ret)
		srd_dev_close(dev);
	else
		assert_true(ret < 0);
}

static void test_in_order_legacy_translation(void **state)
{
	const int both = SRD_IN_ORDER_WHOLE_MSG | SRD_IN_ORDER_ALIGNED_128;

	/* asked RETURN_CAPS style, answered by an old library */
	assert_int_equal(srd_dev_in_order_from_legacy(1,
						      SRD_IN_ORDER_RETURN_CAPS),
			 both);
	assert_int_equal(srd_dev_in_order_from_legacy(0,
						      SRD_IN_ORDER_RETURN_CAPS),
			 0);
	assert_int_equal(srd_dev_in_order_from_legacy(-EINVAL,
						      SRD_IN_ORDER_RETURN_CAPS),
			 -EINVAL);
	/* asked the old way: the old answer */
	assert_int_equal(srd_dev_in_order_from_legacy(1, 0), 1);
	assert_int_equal(srd_dev_in_order_from_legacy(0, 0), 0);
}

static void test_device_setting_parse(void **state)
{
	static const struct {
		const char *str;
		int ret;
		enum srd_device_sel sel;
	} cases[] = {
		{ "auto", 0, SRD_DEVICE_AUTO },
		{ "efa", 0, SRD_DEVICE_EFA },
		{ "Soft", 0, SRD_DEVICE_SOFT },
		{ NULL, 0, SRD_DEVICE_AUTO },
		{ "mlx5", -FI_EINVAL, SRD_DEVICE_SOFT },
	};
	size_t i;

	for (i = 0; i < WEFT_ARRAY_SIZE(cases); i++) {
		enum srd_device_sel sel = SRD_DEVICE_SOFT;

		assert_int_equal(srd_settings_parse_device(cases[i].str, &sel),
				 cases[i].ret);
		assert_int_equal(sel, cases[i].sel);
	}
}

static void test_settings_from_env(void **state)
{
	struct srd_settings s;

	setenv("FI_SRD_CQ_BATCH", "64", 1);
	setenv("FI_SRD_POLL_MODE", "completion", 1);
	setenv("FI_SRD_DEVICE", "efa", 1);
	setenv("FI_SRD_RNR_RETRY", "9", 1);	/* out of range: default kept */
	setenv("FI_SRD_DEVICE_NAME", "efa_3", 1);
	assert_ptr_equal(srd_prov_init_device_only(), &srd_prov);
	s = srd_settings;
	assert_int_equal(s.cq_batch, 64);
	assert_int_equal(s.poll_mode, SRD_POLL_REQ_COMPLETION);
	assert_int_equal(s.device, SRD_DEVICE_EFA);
	assert_int_equal(s.rnr_retry, 3);
	assert_string_equal(s.device_name, "efa_3");

	setenv("FI_SRD_CQ_BATCH", "0", 1);
	setenv("FI_SRD_POLL_MODE", "sometimes", 1);
	srd_settings_read(&s);
	assert_int_equal(s.cq_batch, SRD_CQ_BATCH_DEFAULT);
	assert_int_equal(s.poll_mode, SRD_POLL_REQ_AUTO);

	unsetenv("FI_SRD_CQ_BATCH");
	unsetenv("FI_SRD_POLL_MODE");
	unsetenv("FI_SRD_DEVICE");
	unsetenv("FI_SRD_RNR_RETRY");
	unsetenv("FI_SRD_DEVICE_NAME");
	srd_settings_read(&s);
	assert_int_equal(s.cq_batch, SRD_CQ_BATCH_DEFAULT);
	assert_int_equal(s.device, SRD_DEVICE_AUTO);
	assert_null(s.device_name);
}

static void test_provider_offers_nothing_yet(void **state)
{
	struct fi_info *info = (void *)0x1;

	/* FI_SRD_DEVICE unset and no EFA here: no device, no info, so shm
	 * stays the default provider */
	assert_int_equal(srd_prov.getinfo(FI_VERSION(1, 17), NULL, NULL, 0,
					  NULL, &info), -FI_ENODATA);
	assert_null(info);
	assert_string_equal(srd_prov.name, "srd");
	assert_int_equal(srd_prov.fabric(NULL, NULL, NULL), -FI_EINVAL);
	srd_prov.cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_libs_absent, teardown),
		cmocka_unit_test_teardown(test_efa_absent, teardown),
		cmocka_unit_test_teardown(test_symbol_missing, teardown),
		cmocka_unit_test_teardown(test_real_libs_resolve, teardown),
		cmocka_unit_test(test_in_order_legacy_translation),
		cmocka_unit_test(test_device_setting_parse),
		cmocka_unit_test(test_settings_from_env),
		cmocka_unit_test(test_provider_offers_nothing_yet),
	};

	return cmocka_run_group_tests_name("srd_verbs_rdma", tests, NULL, NULL);
}
