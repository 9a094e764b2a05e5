/* SPDX-License-Identifier: MIT */
/*
 * fi_tostr / fi_tostr_r / fi_strerror against explicit expected strings
 * (libfabric 1.17's output), through the internal archive. The exhaustive
 * comparison with Debian's libfabric is test_tostr_golden.sh; this one pins
 * the key cases and the bad-input behaviour (NULL data, unknown types and
 * bits, short buffers, huge output) so it runs even without libfabric1.
 */
#include "weft/compat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

/* glibc's strerror of an unknown code lives only until the next call, so
 * compare against a copy */
static void assert_strerror_is_libc(int code, int errnum)
{
	char expect[128];

	snprintf(expect, sizeof(expect), "%s", strerror(errnum));
	assert_string_equal(fi_strerror(code), expect);
}

static void test_strerror_errno_range(void **state)
{
	assert_strerror_is_libc(FI_EAGAIN, EAGAIN);
	assert_strerror_is_libc(-FI_EAGAIN, EAGAIN);
	assert_strerror_is_libc(FI_SUCCESS, 0);
	assert_strerror_is_libc(-FI_ENODATA, ENODATA);
	assert_strerror_is_libc(255, 255);
	assert_strerror_is_libc(-255, 255);
}

static void test_strerror_fabric_codes(void **state)
{
	assert_string_equal(fi_strerror(-FI_EOTHER), "Unspecified error");
	assert_string_equal(fi_strerror(FI_ETOOSMALL),
			    "Provided buffer is too small");
	assert_string_equal(fi_strerror(-FI_EAVAIL), "Error available");
	assert_string_equal(fi_strerror(-FI_ETRUNC), "Truncation error");
	assert_string_equal(fi_strerror(-FI_ENOAV),
			    "Missing or unavailable address vector");
	assert_string_equal(fi_strerror(-FI_ENORX),
			    "Receiver not ready, no receive buffers available");
}

static void test_strerror_out_of_range(void **state)
{
	assert_string_equal(fi_strerror(FI_ERRNO_MAX), "Unspecified error");
	assert_string_equal(fi_strerror(-100000), "Unspecified error");
	assert_string_equal(fi_strerror(INT_MAX), "Unspecified error");
	assert_strerror_is_libc(INT_MIN, INT_MIN);
}

static void test_enum_known(void **state)
{
	enum fi_ep_type ep = FI_EP_RDM;
	uint32_t proto = FI_PROTO_EFA;
	uint32_t fmt = FI_SOCKADDR_IN6;
	enum fi_log_level level = FI_LOG_INFO;
	enum fi_log_subsys subsys = FI_LOG_EP_DATA;
	enum fi_hmem_iface iface = FI_HMEM_ZE;

	assert_string_equal(fi_tostr(&ep, FI_TYPE_EP_TYPE), "FI_EP_RDM");
	assert_string_equal(fi_tostr(&proto, FI_TYPE_PROTOCOL), "FI_PROTO_EFA");
	assert_string_equal(fi_tostr(&fmt, FI_TYPE_ADDR_FORMAT),
			    "FI_SOCKADDR_IN6");
	assert_string_equal(fi_tostr(&level, FI_TYPE_LOG_LEVEL), "info");
	assert_string_equal(fi_tostr(&subsys, FI_TYPE_LOG_SUBSYS), "ep_data");
	assert_string_equal(fi_tostr(&iface, FI_TYPE_HMEM_IFACE), "FI_HMEM_ZE");
}

static void test_enum_unknown(void **state)
{
	int ep = 99, neg = -1;
	uint32_t fmt = FI_PROV_SPECIFIC | 5, proto = 7; /* FI_PROTO_MXM */

	assert_string_equal(fi_tostr(&ep, FI_TYPE_EP_TYPE), "Unknown");
	assert_string_equal(fi_tostr(&neg, FI_TYPE_THREADING), "Unknown");
	assert_string_equal(fi_tostr(&fmt, FI_TYPE_ADDR_FORMAT),
			    "Provider specific");
	assert_string_equal(fi_tostr(&proto, FI_TYPE_PROTOCOL), "Unknown");
}

static void test_flags(void **state)
{
	uint64_t caps = FI_RMA | FI_MSG | FI_HMEM;
	uint64_t none = 0, unknown = 1ULL << 63, order = FI_ORDER_SAS;
	uint64_t cq = FI_RECV | FI_MSG | FI_SEND;
	int mr = FI_MR_LOCAL | FI_MR_PROV_KEY | (1 << 20);

	assert_string_equal(fi_tostr(&caps, FI_TYPE_CAPS),
			    "FI_MSG, FI_RMA, FI_HMEM");
	assert_string_equal(fi_tostr(&none, FI_TYPE_CAPS), "");
	assert_string_equal(fi_tostr(&unknown, FI_TYPE_CAPS), "");
	assert_string_equal(fi_tostr(&order, FI_TYPE_MSG_ORDER),
			    "FI_ORDER_SAS");
	/* CQ flags have their own order: SEND before RECV before MSG */
	assert_string_equal(fi_tostr(&cq, FI_TYPE_CQ_EVENT_FLAGS),
			    "FI_SEND, FI_RECV, FI_MSG");
	assert_string_equal(fi_tostr(&mr, FI_TYPE_MR_MODE),
			    "FI_MR_LOCAL, FI_MR_PROV_KEY");
}

static void test_bad_type(void **state)
{
	uint64_t v = 0;

	assert_string_equal(fi_tostr(&v, (enum fi_type)1000), "Unknown type");
	assert_string_equal(fi_tostr(&v, (enum fi_type)-1), "Unknown type");
	assert_string_equal(fi_tostr(&v, (enum fi_type)(FI_TYPE_LOG_SUBSYS + 1)),
			    "Unknown type");
}

static void test_null_data(void **state)
{
	char buf[32];
	uint64_t v = FI_MSG;
	int t;

	for (t = FI_TYPE_INFO; t <= FI_TYPE_LOG_SUBSYS + 1; t++)
		assert_null(fi_tostr(NULL, (enum fi_type)t));
	assert_null(fi_tostr_r(NULL, sizeof(buf), &v, FI_TYPE_CAPS));
	assert_null(fi_tostr_r(buf, 0, &v, FI_TYPE_CAPS));
	assert_null(fi_tostr_r(buf, sizeof(buf), NULL, FI_TYPE_CAPS));
}

static void test_version(void **state)
{
	assert_string_equal(fi_tostr("", FI_TYPE_VERSION), "1.17.0");
}

static const char info_all_null[] =
	"fi_info:\n"
	"    caps: [  ]\n"
	"    mode: [  ]\n"
	"    addr_format: FI_FORMAT_UNSPEC\n"
	"    src_addrlen: 0\n"
	"    dest_addrlen: 0\n"
	"    src_addr: (null)\n"
	"    dest_addr: (null)\n"
	"    handle: (nil)\n"
	"    fi_tx_attr: (null)\n"
	"    fi_rx_attr: (null)\n"
	"    fi_ep_attr: (null)\n"
	"    fi_domain_attr: (null)\n"
	"    fi_fabric_attr: (null)\n"
	"    nic: (nil)\n";

static void test_info_null_attrs(void **state)
{
	struct fi_info info;

	memset(&info, 0, sizeof(info));
	assert_string_equal(fi_tostr(&info, FI_TYPE_INFO), info_all_null);
}

static void test_info_addresses(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(9228) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6,
				     .sin6_port = htons(80) };
	char str[] = "fi_shm://4242";
	struct fi_info info;
	const char *out;

	memset(&info, 0, sizeof(info));
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	inet_pton(AF_INET6, "::1", &sin6.sin6_addr);

	info.addr_format = FI_SOCKADDR_IN;
	info.src_addr = &sin;
	info.src_addrlen = sizeof(sin);
	out = fi_tostr(&info, FI_TYPE_INFO);
	assert_non_null(strstr(out, "    addr_format: FI_SOCKADDR_IN\n"));
	assert_non_null(strstr(out, "    src_addr: fi_sockaddr_in://127.0.0.1:9228\n"
				    "    dest_addr: (null)\n"));

	info.addr_format = FI_SOCKADDR;
	info.src_addr = &sin6;
	out = fi_tostr(&info, FI_TYPE_INFO);
	assert_non_null(strstr(out, "    src_addr: fi_sockaddr_in6://[::1]:80\n"));

	info.addr_format = FI_ADDR_STR;
	info.src_addr = str;
	out = fi_tostr(&info, FI_TYPE_INFO);
	assert_non_null(strstr(out, "    src_addr: fi_shm://4242\n"));

	/* a format weft cannot describe prints an empty address, no crash */
	info.addr_format = 999;
	out = fi_tostr(&info, FI_TYPE_INFO);
	assert_non_null(strstr(out, "    addr_format: Unknown\n"
				    "    src_addrlen: 16\n"));
	assert_non_null(strstr(out, "    src_addr: \n"));
}

static const char tx_expected[] =
	"fi_tx_attr:\n"
	"    caps: [ FI_MSG, FI_TAGGED, FI_SEND ]\n"
	"    mode: [ FI_CONTEXT ]\n"
	"    op_flags: [ FI_COMPLETION ]\n"
	"    msg_order: [ FI_ORDER_SAS ]\n"
	"    comp_order: [ FI_ORDER_NONE ]\n"
	"    inject_size: 64\n"
	"    size: 1024\n"
	"    iov_limit: 4\n"
	"    rma_iov_limit: 1\n"
	"    tclass: 0x0\n";

static void test_tx_attr(void **state)
{
	struct fi_tx_attr tx = {
		.caps = FI_MSG | FI_TAGGED | FI_SEND,
		.mode = FI_CONTEXT,
		.op_flags = FI_COMPLETION,
		.msg_order = FI_ORDER_SAS,
		.inject_size = 64,
		.size = 1024,
		.iov_limit = 4,
		.rma_iov_limit = 1,
	};

	assert_string_equal(fi_tostr(&tx, FI_TYPE_TX_ATTR), tx_expected);
}

static void test_ep_attr_shared_context(void **state)
{
	struct fi_ep_attr ep = {
		.type = FI_EP_MSG,
		.protocol = FI_PROTO_SOCK_TCP,
		.tx_ctx_cnt = FI_SHARED_CONTEXT,
		.rx_ctx_cnt = 2,
		.mem_tag_format = 0xff,
	};
	const char *out = fi_tostr(&ep, FI_TYPE_EP_ATTR);

	assert_non_null(strstr(out, "    mem_tag_format: 0x00000000000000ff\n"
				    "    tx_ctx_cnt: FI_SHARED_CONTEXT\n"
				    "    rx_ctx_cnt: 2\n"));
}

static void test_tostr_r_truncation(void **state)
{
	uint64_t caps = FI_MSG | FI_RMA;
	char buf[64];
	size_t i;

	/* libfabric leaves the last byte of the buffer unused */
	memset(buf, 'X', sizeof(buf));
	assert_ptr_equal(fi_tostr_r(buf, 3, &caps, FI_TYPE_CAPS), buf);
	assert_string_equal(buf, "F");
	for (i = 3; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'X');

	/* a flag cut inside its ", " keeps what fits */
	assert_string_equal(fi_tostr_r(buf, 9, &caps, FI_TYPE_CAPS), "FI_MSG,");
	assert_string_equal(fi_tostr_r(buf, 10, &caps, FI_TYPE_CAPS), "FI_MSG");
	assert_string_equal(fi_tostr_r(buf, 1, &caps, FI_TYPE_CAPS), "");
	assert_string_equal(fi_tostr_r(buf, sizeof(buf), &caps, FI_TYPE_CAPS),
			    "FI_MSG, FI_RMA");
}

static void test_huge_output_is_cut(void **state)
{
	size_t len = 3 * 8192;
	char *str = malloc(len);
	struct fi_info info;
	const char *out;

	assert_non_null(str);
	memset(str, 'a', len - 1);
	str[len - 1] = '\0';
	memset(&info, 0, sizeof(info));
	info.addr_format = FI_ADDR_STR;
	info.src_addr = str;
	out = fi_tostr(&info, FI_TYPE_INFO);
	assert_int_equal(strlen(out), 8191);
	free(str);
}

static int fid_tostr_calls;

static int fid_tostr_fixed(const struct fid *fid, char *buf, size_t len)
{
	size_t used = strnlen(buf, len);

	fid_tostr_calls++;
	snprintf(buf + used, len - used, "my fid\n");
	return 0;
}

static void test_fid(void **state)
{
	struct fi_ops full = { .size = sizeof(full), .tostr = fid_tostr_fixed };
	struct fi_ops old = { .size = offsetof(struct fi_ops, tostr),
			      .tostr = fid_tostr_fixed };
	struct fid fid = { .fclass = FI_CLASS_EP, .ops = &full };
	struct fid nofn = { .fclass = FI_CLASS_EP, .ops = NULL };
	char expect[64];

	fid_tostr_calls = 0;
	assert_string_equal(fi_tostr(&fid, FI_TYPE_FID), "my fid\n");
	assert_int_equal(fid_tostr_calls, 1);

	/* an ops table too old to have tostr: print the pointer instead */
	fid.ops = &old;
	snprintf(expect, sizeof(expect), "fid: %p\n", (void *)&fid);
	assert_string_equal(fi_tostr(&fid, FI_TYPE_FID), expect);
	assert_int_equal(fid_tostr_calls, 1);

	/* libfabric would crash on a fid without ops; weft prints it */
	snprintf(expect, sizeof(expect), "fid: %p\n", (void *)&nofn);
	assert_string_equal(fi_tostr(&nofn, FI_TYPE_FID), expect);
}

static void *other_thread_buf(void *arg)
{
	int ep = FI_EP_DGRAM;

	return fi_tostr(&ep, FI_TYPE_EP_TYPE);
}

static void test_buffer_per_thread(void **state)
{
	int ep = FI_EP_MSG;
	char *mine = fi_tostr(&ep, FI_TYPE_EP_TYPE);
	pthread_t thread;
	void *theirs;

	assert_int_equal(pthread_create(&thread, NULL, other_thread_buf, NULL), 0);
	assert_int_equal(pthread_join(thread, &theirs), 0);
	assert_ptr_not_equal(mine, theirs);
	assert_string_equal(mine, "FI_EP_MSG");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror_errno_range),
		cmocka_unit_test(test_strerror_fabric_codes),
		cmocka_unit_test(test_strerror_out_of_range),
		cmocka_unit_test(test_enum_known),
		cmocka_unit_test(test_enum_unknown),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_bad_type),
		cmocka_unit_test(test_null_data),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_info_null_attrs),
		cmocka_unit_test(test_info_addresses),
		cmocka_unit_test(test_tx_attr),
		cmocka_unit_test(test_ep_attr_shared_context),
		cmocka_unit_test(test_tostr_r_truncation),
		cmocka_unit_test(test_huge_output_is_cut),
		cmocka_unit_test(test_fid),
		cmocka_unit_test(test_buffer_per_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
