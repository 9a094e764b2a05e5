/* SPDX-License-Identifier: MIT */
/*
 * fi_dupinfo / fi_freeinfo: fi_allocinfo's shape, deep copies compared
 * field by field, and the copy's independence from the original (run
 * under ASan, a shared pointer shows up as a use-after-free).
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <cmocka.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

static void assert_zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		assert_int_equal(c[i], 0);
}

static void test_allocinfo(void **state)
{
	struct fi_info *info = fi_allocinfo();

	assert_non_null(info);
	assert_non_null(info->tx_attr);
	assert_non_null(info->rx_attr);
	assert_non_null(info->ep_attr);
	assert_non_null(info->domain_attr);
	assert_non_null(info->fabric_attr);
	assert_null(info->nic);
	assert_null(info->next);
	assert_zero(info->tx_attr, sizeof(*info->tx_attr));
	assert_zero(info->rx_attr, sizeof(*info->rx_attr));
	assert_zero(info->ep_attr, sizeof(*info->ep_attr));
	assert_zero(info->domain_attr, sizeof(*info->domain_attr));
	assert_zero(info->fabric_attr, sizeof(*info->fabric_attr));
	assert_int_equal(info->caps, 0);
	assert_int_equal(info->mode, 0);
	assert_null(info->src_addr);
	fi_freeinfo(info);
}

static void *memdup(const void *p, size_t len)
{
	void *d = malloc(len);

	assert_non_null(d);
	memcpy(d, p, len);
	return d;
}

static int nic_close(struct fid *fid)
{
	struct fid_nic *nic = (struct fid_nic *)fid;

	free(nic->device_attr->name);
	free(nic->device_attr->driver);
	free(nic->device_attr);
	free(nic->bus_attr);
	free(nic->link_attr->address);
	free(nic->link_attr);
	free(nic);
	return 0;
}

static struct fi_ops test_nic_ops = { .size = sizeof(struct fi_ops),
				      .close = nic_close };

static struct fi_info *full_info(void)
{
	struct fi_info *info = fi_allocinfo();
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = htons(1234),
				   .sin_addr.s_addr = htonl(0x7f000001) };
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(4321),
				   .sin_addr.s_addr = htonl(0x0a000002) };
	const uint8_t key[] = { 1, 2, 3, 4, 5 };
	struct fid_nic *nic;

	info->caps = FI_MSG | FI_TAGGED | FI_SOURCE;
	info->mode = FI_CONTEXT;
	info->addr_format = FI_SOCKADDR_IN;
	info->src_addr = memdup(&src, sizeof(src));
	info->src_addrlen = sizeof(src);
	info->dest_addr = memdup(&dst, sizeof(dst));
	info->dest_addrlen = sizeof(dst);
	info->handle = (fid_t)&info;	/* not owned: copied as is */
	*info->tx_attr = (struct fi_tx_attr){ .caps = FI_SEND, .mode = 2,
		.op_flags = 3, .msg_order = 4, .comp_order = 5,
		.inject_size = 6, .size = 7, .iov_limit = 8,
		.rma_iov_limit = 9, .tclass = 10 };
	*info->rx_attr = (struct fi_rx_attr){ .caps = FI_RECV, .mode = 12,
		.op_flags = 13, .msg_order = 14, .comp_order = 15,
		.total_buffered_recv = 16, .size = 17, .iov_limit = 18 };
	*info->ep_attr = (struct fi_ep_attr){ .type = FI_EP_RDM, .protocol = 21,
		.protocol_version = 22, .max_msg_size = 23, .msg_prefix_size = 24,
		.max_order_raw_size = 25, .max_order_war_size = 26,
		.max_order_waw_size = 27, .mem_tag_format = 28,
		.tx_ctx_cnt = 29, .rx_ctx_cnt = 30,
		.auth_key_size = sizeof(key), .auth_key = memdup(key, sizeof(key)) };
	*info->domain_attr = (struct fi_domain_attr){
		.domain = (struct fid_domain *)&info, .name = strdup("dom0"),
		.threading = FI_THREAD_DOMAIN, .control_progress = FI_PROGRESS_AUTO,
		.data_progress = FI_PROGRESS_MANUAL, .resource_mgmt = FI_RM_ENABLED,
		.av_type = FI_AV_TABLE, .mr_mode = FI_MR_LOCAL, .mr_key_size = 31,
		.cq_data_size = 32, .cq_cnt = 33, .ep_cnt = 34, .tx_ctx_cnt = 35,
		.rx_ctx_cnt = 36, .max_ep_tx_ctx = 37, .max_ep_rx_ctx = 38,
		.max_ep_stx_ctx = 39, .max_ep_srx_ctx = 40, .cntr_cnt = 41,
		.mr_iov_limit = 42, .caps = FI_LOCAL_COMM, .mode = 43,
		.auth_key = memdup(key, 3), .auth_key_size = 3,
		.max_err_data = 44, .mr_cnt = 45, .tclass = 46 };
	*info->fabric_attr = (struct fi_fabric_attr){
		.fabric = (struct fid_fabric *)&info, .name = strdup("fab0"),
		.prov_name = strdup("prov0"), .prov_version = 47,
		.api_version = 48 };

	nic = calloc(1, sizeof(*nic));
	nic->fid.fclass = FI_CLASS_NIC;
	nic->fid.ops = &test_nic_ops;
	nic->device_attr = calloc(1, sizeof(*nic->device_attr));
	nic->device_attr->name = strdup("nic0");
	nic->device_attr->driver = strdup("drv");
	nic->bus_attr = calloc(1, sizeof(*nic->bus_attr));
	nic->bus_attr->bus_type = FI_BUS_PCI;
	nic->bus_attr->attr.pci.bus_id = 0x3b;
	nic->link_attr = calloc(1, sizeof(*nic->link_attr));
	nic->link_attr->address = strdup("10.0.0.2");
	nic->link_attr->mtu = 9000;
	nic->link_attr->state = FI_LINK_UP;
	nic->prov_attr = (void *)&info;
	info->nic = nic;
	return info;
}

/* Same bytes, and the owned pointer is a distinct allocation. */
static void assert_copy(const void *a, const void *b, size_t len)
{
	if (!a) {
		assert_null(b);
		return;
	}
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_memory_equal(a, b, len);
}

static void assert_str_copy(const char *a, const char *b)
{
	if (!a) {
		assert_null(b);
		return;
	}
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_string_equal(a, b);
}

static void assert_info_equal(const struct fi_info *a, const struct fi_info *b)
{
	struct fi_ep_attr ep_a = *a->ep_attr, ep_b = *b->ep_attr;
	struct fi_domain_attr dom_a = *a->domain_attr, dom_b = *b->domain_attr;
	struct fi_fabric_attr fab_a = *a->fabric_attr, fab_b = *b->fabric_attr;

	assert_int_equal(a->caps, b->caps);
	assert_int_equal(a->mode, b->mode);
	assert_int_equal(a->addr_format, b->addr_format);
	assert_int_equal(a->src_addrlen, b->src_addrlen);
	assert_int_equal(a->dest_addrlen, b->dest_addrlen);
	assert_ptr_equal(a->handle, b->handle);
	assert_copy(a->src_addr, b->src_addr, a->src_addrlen);
	assert_copy(a->dest_addr, b->dest_addr, a->dest_addrlen);
	assert_copy(a->tx_attr, b->tx_attr, sizeof(*a->tx_attr));
	assert_copy(a->rx_attr, b->rx_attr, sizeof(*a->rx_attr));

	assert_copy(a->ep_attr->auth_key, b->ep_attr->auth_key, a->ep_attr->auth_key_size);
	ep_a.auth_key = ep_b.auth_key = NULL;
	assert_memory_equal(&ep_a, &ep_b, sizeof(ep_a));

	assert_str_copy(a->domain_attr->name, b->domain_attr->name);
	assert_copy(a->domain_attr->auth_key, b->domain_attr->auth_key,
		    a->domain_attr->auth_key_size);
	dom_a.name = dom_b.name = NULL;
	dom_a.auth_key = dom_b.auth_key = NULL;
	assert_memory_equal(&dom_a, &dom_b, sizeof(dom_a));

	assert_str_copy(a->fabric_attr->name, b->fabric_attr->name);
	assert_str_copy(a->fabric_attr->prov_name, b->fabric_attr->prov_name);
	fab_a.name = fab_b.name = fab_a.prov_name = fab_b.prov_name = NULL;
	assert_memory_equal(&fab_a, &fab_b, sizeof(fab_a));

	assert_non_null(b->nic);
	assert_ptr_not_equal(a->nic, b->nic);
	assert_int_equal(b->nic->fid.fclass, FI_CLASS_NIC);
	assert_ptr_equal(a->nic->prov_attr, b->nic->prov_attr);
	assert_str_copy(a->nic->device_attr->name, b->nic->device_attr->name);
	assert_str_copy(a->nic->device_attr->driver, b->nic->device_attr->driver);
	assert_null(b->nic->device_attr->firmware);
	assert_copy(a->nic->bus_attr, b->nic->bus_attr, sizeof(*a->nic->bus_attr));
	assert_str_copy(a->nic->link_attr->address, b->nic->link_attr->address);
	assert_int_equal(a->nic->link_attr->mtu, b->nic->link_attr->mtu);
	assert_int_equal(a->nic->link_attr->state, b->nic->link_attr->state);
}

static void test_dupinfo_deep(void **state)
{
	struct fi_info *orig = full_info(), *dup, *ref;

	dup = fi_dupinfo(orig);
	assert_non_null(dup);
	assert_info_equal(orig, dup);
	/* A reference copy, then destroy the original: the duplicate must
	 * still hold every value (ASan flags any pointer it shared). */
	ref = fi_dupinfo(orig);
	memset(orig->src_addr, 0xee, orig->src_addrlen);
	orig->domain_attr->name[0] = 'X';
	fi_freeinfo(orig);
	assert_info_equal(ref, dup);
	assert_int_equal(((struct sockaddr_in *)dup->src_addr)->sin_port, htons(1234));
	assert_string_equal(dup->domain_attr->name, "dom0");
	fi_freeinfo(dup);
	fi_freeinfo(ref);
}

static void test_dupinfo_single(void **state)
{
	struct fi_info *a = fi_allocinfo(), *dup;

	a->next = fi_allocinfo();
	a->caps = FI_RMA;
	a->next->caps = FI_MSG;
	dup = fi_dupinfo(a);
	assert_null(dup->next);		/* one structure, not the list */
	assert_int_equal(dup->caps, FI_RMA);
	fi_freeinfo(dup);
	fi_freeinfo(a);			/* frees the whole list */
}

static void test_dupinfo_sparse(void **state)
{
	struct fi_info sparse = { .caps = FI_MSG, .src_addrlen = 0 };
	struct fi_info *dup = fi_dupinfo(&sparse);

	assert_non_null(dup);
	assert_int_equal(dup->caps, FI_MSG);
	assert_null(dup->tx_attr);
	assert_null(dup->rx_attr);
	assert_null(dup->ep_attr);
	assert_null(dup->domain_attr);
	assert_null(dup->fabric_attr);
	assert_null(dup->nic);
	fi_freeinfo(dup);
}

static void test_nic_dup_control(void **state)
{
	struct fi_info *orig = full_info(), *dup = fi_dupinfo(orig);
	struct fid *nic2 = NULL;

	/* The copy's nic answers FI_DUP with one more independent copy. */
	assert_int_equal(fi_control(&dup->nic->fid, FI_DUP, &nic2), 0);
	assert_non_null(nic2);
	assert_string_equal(((struct fid_nic *)nic2)->device_attr->name, "nic0");
	assert_int_equal(fi_close(nic2), 0);
	fi_freeinfo(orig);
	fi_freeinfo(dup);
}

static void test_freeinfo_null(void **state)
{
	fi_freeinfo(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allocinfo),
		cmocka_unit_test(test_dupinfo_deep),
		cmocka_unit_test(test_dupinfo_single),
		cmocka_unit_test(test_dupinfo_sparse),
		cmocka_unit_test(test_nic_dup_control),
		cmocka_unit_test(test_freeinfo_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
