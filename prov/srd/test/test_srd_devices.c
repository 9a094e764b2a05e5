/* SPDX-License-Identifier: MIT */
/*
 * One fi_info and one domain per device: softsrd with
 * FI_SRD_SOFT_DEVICES=3 on 127.0.0.1 offers three devices, fi_getinfo
 * lists each once, hints naming a domain get only that one, and domains
 * on all three run traffic at the same time, each through its own device.
 */
#include "test_srd_rdm_common.h"
#include "../src/rdm/srd_rdm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define V117 FI_VERSION(1, 17)
#define NDEV 3

static struct fi_info *hints_srd(const char *domain)
{
	struct fi_info *hints = fi_allocinfo();

	assert_non_null(hints);
	hints->caps = FI_MSG | FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("srd");
	if (domain)
		hints->domain_attr->name = strdup(domain);
	return hints;
}

static int info_count(const struct fi_info *info)
{
	int n = 0;

	for (; info; info = info->next)
		n++;
	return n;
}

static void test_one_info_per_device(void **state)
{
	static const uint8_t lo_gid[16] = { [10] = 0xff, [11] = 0xff,
					    127, 0, 0, 1 };
	struct fi_info *hints = hints_srd(NULL), *info = NULL, *fi;
	char want[32];
	int i = 0;

	(void)state;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info_count(info), NDEV);
	for (fi = info; fi; fi = fi->next, i++) {
		const struct srd_ep_name *name = fi->src_addr;

		snprintf(want, sizeof(want), "softsrd_lo_%d", i);
		assert_string_equal(fi->domain_attr->name, want);
		assert_int_equal(fi->src_addrlen, sizeof(*name));
		assert_memory_equal(name->gid, lo_gid, sizeof(lo_gid));
		assert_int_equal(name->qpn, 0);
	}
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

static void test_hints_name_one_device(void **state)
{
	struct fi_info *hints = hints_srd("softsrd_lo_1"), *info = NULL;

	(void)state;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info_count(info), 1);
	assert_string_equal(info->domain_attr->name, "softsrd_lo_1");
	fi_freeinfo(info);
	fi_freeinfo(hints);

	hints = hints_srd("softsrd_lo_7");
	info = (void *)0x1;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);
	fi_freeinfo(hints);
}

/* An info naming a device that is not there cannot open a domain. */
static void test_domain_of_unknown_device(void **state)
{
	struct fi_info *hints = hints_srd(NULL), *info = NULL;
	struct fid_fabric *fabric;
	struct fid_domain *domain;

	(void)state;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	free(info->domain_attr->name);
	info->domain_attr->name = strdup("softsrd_nowhere");
	assert_int_equal(fi_domain(fabric, info, &domain, NULL), -FI_ENODEV);
	assert_int_equal(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

static int poll_all(struct tfab *f, int n)
{
	int got = 0;

	for (int i = 0; i < n; i++)
		got += tfab_poll(&f[i]);
	return got;
}

static void wait_all(struct tfab *f, int n, int want)
{
	for (long polls = 0; polls < 20000000; polls++) {
		int done = 0;

		for (int i = 0; i < n; i++)
			done += f[i].a.n >= want && f[i].b.n >= want;
		if (done == n)
			return;
		poll_all(f, n);
	}
	fail_msg("domains did not complete %d transfers each", want);
}

/* Each domain's endpoints send a small and a long message (RDMA read)
 * to each other while the other domains do the same. */
static void test_domains_side_by_side(void **state)
{
	static const size_t lens[2] = { 100, 1 << 20 };
	struct fi_info *hints = hints_srd(NULL), *info = NULL, *fi;
	struct fid_fabric *fabric;
	struct tfab f[NDEV];
	uint8_t *src[NDEV][2], *dst[NDEV][2];
	int i = 0;

	(void)state;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	for (fi = info; fi; fi = fi->next, i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].info = fi_dupinfo(fi);
		f[i].fabric = fabric;
		tfab_open_info(&f[i], FI_MSG | FI_TAGGED, true);
	}
	assert_int_equal(i, NDEV);
	/* Different devices: different UDP ports in the QP numbers. */
	for (i = 1; i < NDEV; i++)
		assert_int_not_equal(((struct srd_ep_name *)f[i].a.name)->qpn >> 8,
				     ((struct srd_ep_name *)f[0].a.name)->qpn >> 8);
	for (i = 0; i < NDEV; i++) {
		for (int k = 0; k < 2; k++) {
			src[i][k] = malloc(lens[k]);
			dst[i][k] = calloc(1, lens[k]);
			assert_non_null(src[i][k]);
			assert_non_null(dst[i][k]);
			tfab_fill(src[i][k], lens[k], (unsigned int)(i * 2 + k));
			tfab_recv(&f[i], dst[i][k], lens[k], (uint64_t)k, true,
				  NULL);
		}
	}
	for (i = 0; i < NDEV; i++)
		for (int k = 0; k < 2; k++)
			tfab_send(&f[i], src[i][k], lens[k], (uint64_t)k, true,
				  NULL);
	wait_all(f, NDEV, 2);
	for (i = 0; i < NDEV; i++) {
		for (int k = 0; k < 2; k++) {
			struct tent t = tfab_take(&f[i].b);

			assert_int_equal(t.err, 0);
			assert_int_equal(tfab_take(&f[i].a).err, 0);
			tfab_check(dst[i][t.e.tag], lens[t.e.tag],
				   (unsigned int)(i * 2 + (int)t.e.tag));
		}
		for (int k = 0; k < 2; k++) {
			free(src[i][k]);
			free(dst[i][k]);
		}
		tfab_close(&f[i]);
	}
	assert_int_equal(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_info_per_device),
		cmocka_unit_test(test_hints_name_one_device),
		cmocka_unit_test(test_domain_of_unknown_device),
		cmocka_unit_test(test_domains_side_by_side),
	};

	setenv("FI_SRD_DEVICE", "soft", 1);
	setenv("FI_SRD_SOFT_ADDR", "127.0.0.1", 1);
	setenv("FI_SRD_SOFT_DEVICES", "3", 1);
	/* traffic through each device, not through shm between them */
	setenv("FI_SRD_USE_SHM", "0", 1);
	return cmocka_run_group_tests_name("srd_devices", tests, NULL, NULL);
}
