/* SPDX-License-Identifier: MIT */
/*
 * srd's fi_getinfo over softsrd: the source address is the device's name
 * without a QP, a source node must be this host, node/service never name
 * a peer, and the source an application copies from one answer into the
 * hints of the next (as fabtests' clients do) is accepted.
 */
#include "test_srd_rdm_common.h"
#include "../src/rdm/srd_rdm.h"

#include <stdlib.h>
#include <string.h>

#define V117 FI_VERSION(1, 17)

static struct fi_info *hints_srd(void)
{
	struct fi_info *hints = fi_allocinfo();

	assert_non_null(hints);
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("srd");
	return hints;
}

static void check_device_name(const struct fi_info *info)
{
	struct srd_ep_name name;

	assert_non_null(info->src_addr);
	assert_int_equal(info->src_addrlen, sizeof(name));
	memcpy(&name, info->src_addr, sizeof(name));
	assert_int_equal(name.version, SRD_EP_NAME_VERSION);
	assert_int_equal(name.qpn, 0);
	assert_int_equal(name.qkey, 0);
}

/* fabtests' getinfo_no_hints1..4, src1..4: a source address always, and
 * it is the device of the endpoints opened from the info. */
static void test_source_address(void **state)
{
	struct fi_info *hints = hints_srd(), *info = NULL;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct srd_ep_name name;
	size_t len = sizeof(name);

	(void)state;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	check_device_name(info);
	assert_int_equal(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	assert_int_equal(fi_domain(fabric, info, &domain, NULL), 0);
	assert_int_equal(fi_endpoint(domain, info, &ep, NULL), 0);
	assert_int_equal(fi_getname(&ep->fid, &name, &len), 0);
	assert_int_equal(len, sizeof(name));
	assert_memory_equal(name.gid,
			    ((struct srd_ep_name *)info->src_addr)->gid, 16);
	assert_int_not_equal(name.qkey, 0);
	assert_int_equal(fi_close(&ep->fid), 0);
	assert_int_equal(fi_close(&domain->fid), 0);
	assert_int_equal(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);

	assert_int_equal(fi_getinfo(V117, NULL, "9228", FI_SOURCE, hints,
				    &info), 0);
	check_device_name(info);
	fi_freeinfo(info);
	assert_int_equal(fi_getinfo(V117, "127.0.0.1", NULL, FI_SOURCE, hints,
				    &info), 0);
	check_device_name(info);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

static void test_source_node_not_this_host(void **state)
{
	struct fi_info *hints = hints_srd(), *info = (void *)0x1;

	(void)state;
	assert_int_equal(fi_getinfo(V117, "192.0.2.1", NULL, FI_SOURCE, hints,
				    &info), -FI_ENODATA);
	assert_null(info);
	assert_int_equal(fi_getinfo(V117, "g00n13s.invalid", "9228", FI_SOURCE,
				    hints, &info), -FI_ENODATA);
	/* and node/service never name a peer */
	assert_int_equal(fi_getinfo(V117, "127.0.0.1", "9228", 0, hints,
				    &info), -FI_ENODATA);
	fi_freeinfo(hints);
}

/* A client started with -s: fi_getinfo(host, NULL, FI_SOURCE), its
 * src_addr into the hints; the next call gets -FI_ENODATA for a
 * node/service destination (srd cannot reach one by name), never
 * -FI_EINVAL for an empty source. */
static void test_source_copied_into_hints(void **state)
{
	struct fi_info *hints = hints_srd(), *src = NULL, *info = NULL;

	(void)state;
	assert_int_equal(fi_getinfo(V117, "127.0.0.1", NULL, FI_SOURCE, hints,
				    &src), 0);
	hints->src_addr = malloc(src->src_addrlen);
	assert_non_null(hints->src_addr);
	memcpy(hints->src_addr, src->src_addr, src->src_addrlen);
	hints->src_addrlen = src->src_addrlen;
	hints->addr_format = src->addr_format;
	assert_int_equal(fi_getinfo(V117, "127.0.0.1", "9228", 0, hints,
				    &info), -FI_ENODATA);
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_memory_equal(info->src_addr, src->src_addr, src->src_addrlen);
	fi_freeinfo(info);
	/* a source on another device */
	((struct srd_ep_name *)hints->src_addr)->gid[0] ^= 0xff;
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);
	fi_freeinfo(src);
	fi_freeinfo(hints);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source_address),
		cmocka_unit_test(test_source_node_not_this_host),
		cmocka_unit_test(test_source_copied_into_hints),
	};

	tfab_env();
	return cmocka_run_group_tests_name("srd_getinfo", tests, NULL, NULL);
}
