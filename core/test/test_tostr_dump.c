/* SPDX-License-Identifier: MIT */
/*
 * Prints fi_tostr()/fi_tostr_r() of a fixed set of inputs, one section per
 * enum fi_type. Linked against the system libfabric (public API only) so
 * test_tostr_golden.sh can run the same binary on Debian's libfabric and on
 * weft's libfabric.so.1 and diff the two outputs section by section.
 * Pointers printed with %p differ between runs, so they are replaced by
 * stable names before printing.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct ptr_name {
	const void *ptr;
	const char *name;
};

static struct ptr_name ptr_names[16];
static size_t ptr_count;

static void ptr_register(const void *ptr, const char *name)
{
	if (ptr_count < ARRAY_SIZE(ptr_names))
		ptr_names[ptr_count++] = (struct ptr_name){ ptr, name };
}

/* Replace every registered pointer's %p text by its name, in place. */
static void ptr_scrub(char *s)
{
	char text[32], *hit;
	size_t i, tlen, nlen;

	for (i = 0; i < ptr_count; i++) {
		snprintf(text, sizeof(text), "%p", ptr_names[i].ptr);
		tlen = strlen(text);
		nlen = strlen(ptr_names[i].name);
		while ((hit = strstr(s, text))) {
			memmove(hit + nlen, hit + tlen, strlen(hit + tlen) + 1);
			memcpy(hit, ptr_names[i].name, nlen);
		}
	}
}

static void emit(const char *label, const char *out)
{
	char copy[16384];

	printf("--- %s\n", label);
	if (!out) {
		printf("<NULL>\n<<<\n");
		return;
	}
	snprintf(copy, sizeof(copy), "%s", out);
	ptr_scrub(copy);
	printf("%s\n<<<\n", copy);
}

static void section(const char *name)
{
	printf("=== %s\n", name);
}

static void dump(const char *label, const void *data, enum fi_type type)
{
	emit(label, fi_tostr(data, type));
}

static void dump_int_range(enum fi_type type, int lo, int hi)
{
	char label[32];
	int v;

	for (v = lo; v <= hi; v++) {
		snprintf(label, sizeof(label), "%d", v);
		dump(label, &v, type);
	}
}

static void dump_bits64(enum fi_type type)
{
	static const uint64_t extra[] = { 0, 3, ~0ULL, 0x1ff, 0x101ff,
					  0xff000000000ULL, 0x8000000000000000ULL };
	char label[48];
	uint64_t v;
	size_t i;
	int bit;

	for (bit = 0; bit < 64; bit++) {
		v = 1ULL << bit;
		snprintf(label, sizeof(label), "bit %d", bit);
		dump(label, &v, type);
	}
	for (i = 0; i < ARRAY_SIZE(extra); i++) {
		snprintf(label, sizeof(label), "0x%llx",
			 (unsigned long long)extra[i]);
		dump(label, &extra[i], type);
	}
}

static int fid_tostr_fixed(const struct fid *fid, char *buf, size_t len)
{
	size_t used = strnlen(buf, len);

	snprintf(buf + used, len - used, "fixed-fid-text class %zu\n",
		 fid->fclass);
	return 0;
}

static struct fi_ops ops_with_tostr = {
	.size = sizeof(struct fi_ops),
	.tostr = fid_tostr_fixed,
};

/* size too small to reach the tostr member: libfabric must not call it */
static struct fi_ops ops_short = {
	.size = offsetof(struct fi_ops, tostr),
	.tostr = fid_tostr_fixed,
};

static struct fid fid_tostr = { .fclass = FI_CLASS_EP, .ops = &ops_with_tostr };
static struct fid fid_plain = { .fclass = FI_CLASS_CQ, .ops = &ops_short };

static struct fi_tx_attr tx_sample = {
	.caps = FI_MSG | FI_TAGGED | FI_SEND | FI_HMEM,
	.mode = FI_CONTEXT | FI_MSG_PREFIX,
	.op_flags = FI_COMPLETION | FI_INJECT_COMPLETE,
	.msg_order = FI_ORDER_SAS | FI_ORDER_RMA_RAW,
	.comp_order = FI_ORDER_DATA,
	.inject_size = 64,
	.size = 1024,
	.iov_limit = 4,
	.rma_iov_limit = 1,
	.tclass = FI_TC_BULK_DATA,
};

static struct fi_rx_attr rx_sample = {
	.caps = FI_MSG | FI_RECV | FI_MULTI_RECV,
	.mode = FI_RX_CQ_DATA,
	.op_flags = FI_MULTI_RECV,
	.msg_order = FI_ORDER_SAS,
	.comp_order = FI_ORDER_STRICT,
	.total_buffered_recv = 65536,
	.size = 2048,
	.iov_limit = 8,
};

static struct fi_ep_attr ep_sample = {
	.type = FI_EP_RDM,
	.protocol = FI_PROTO_EFA,
	.protocol_version = 4,
	.max_msg_size = SIZE_MAX,
	.msg_prefix_size = 0,
	.max_order_raw_size = 4096,
	.max_order_war_size = 0,
	.max_order_waw_size = 8192,
	.mem_tag_format = 0xaaaaaaaaaaaaaaaaULL,
	.tx_ctx_cnt = 1,
	.rx_ctx_cnt = FI_SHARED_CONTEXT,
	.auth_key_size = 0,
};

static struct fi_domain_attr dom_sample = {
	.name = "efa_0-rdm",
	.threading = FI_THREAD_DOMAIN,
	.control_progress = FI_PROGRESS_AUTO,
	.data_progress = FI_PROGRESS_MANUAL,
	.resource_mgmt = FI_RM_ENABLED,
	.av_type = FI_AV_TABLE,
	.mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		   FI_MR_PROV_KEY | FI_MR_HMEM,
	.mr_key_size = 4,
	.cq_data_size = 4,
	.cq_cnt = 128,
	.ep_cnt = 4096,
	.tx_ctx_cnt = 1,
	.rx_ctx_cnt = 1,
	.max_ep_tx_ctx = 1,
	.max_ep_rx_ctx = 1,
	.max_ep_stx_ctx = 0,
	.max_ep_srx_ctx = 0,
	.cntr_cnt = 16,
	.mr_iov_limit = 1,
	.caps = FI_LOCAL_COMM | FI_REMOTE_COMM,
	.mode = FI_ASYNC_IOV,
	.auth_key_size = 0,
	.max_err_data = 256,
	.mr_cnt = 65536,
	.tclass = FI_TC_LOW_LATENCY,
};

static struct fi_fabric_attr fab_sample = {
	.name = "efa",
	.prov_name = "efa;ofi_rxd",
	.prov_version = FI_VERSION(117, 0),
	.api_version = FI_VERSION(1, 17),
};

static void dump_attrs(enum fi_type type, const void *sample, size_t size)
{
	unsigned char zero[512], ones[512];

	memset(zero, 0, sizeof(zero));
	memset(ones, 0xff, sizeof(ones));
	if (size > sizeof(zero))
		abort();
	dump("sample", sample, type);
	if (type != FI_TYPE_DOMAIN_ATTR && type != FI_TYPE_FABRIC_ATTR) {
		/* these two print strings: no garbage pointers */
		dump("zero", zero, type);
		dump("ones", ones, type);
	} else {
		dump("zero", zero, type);
	}
}

static void info_fill(struct fi_info *info, struct fi_tx_attr *tx,
		      struct fi_rx_attr *rx, struct fi_ep_attr *ep,
		      struct fi_domain_attr *dom, struct fi_fabric_attr *fab)
{
	memset(info, 0, sizeof(*info));
	info->caps = FI_MSG | FI_RMA | FI_TAGGED | FI_READ | FI_WRITE |
		     FI_RECV | FI_SEND | FI_REMOTE_READ | FI_REMOTE_WRITE |
		     FI_MULTI_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM;
	info->mode = FI_CONTEXT | FI_BUFFERED_RECV;
	info->tx_attr = tx;
	info->rx_attr = rx;
	info->ep_attr = ep;
	info->domain_attr = dom;
	info->fabric_attr = fab;
}

struct addr_case {
	const char *label;
	uint32_t format;
	const void *addr;
	size_t len;
};

static void dump_info_addrs(struct fi_info *info)
{
	static struct sockaddr_in sin;
	static struct sockaddr_in6 sin6;
	static struct sockaddr_un sun;
	static uint64_t words[4] = { 0x1122334455667788ULL, 0xabcdefULL,
				     0x42ULL, 0xdeadbeefULL };
	static unsigned char gidbuf[64];
	static char longstr[300];
	static char shortstr[] = "fi_shm://4242";
	struct addr_case cases[] = {
		{ "sockaddr_in", FI_SOCKADDR_IN, &sin, sizeof(sin) },
		{ "sockaddr_in6", FI_SOCKADDR_IN6, &sin6, sizeof(sin6) },
		{ "sockaddr(in)", FI_SOCKADDR, &sin, sizeof(sin) },
		{ "sockaddr(in6)", FI_SOCKADDR, &sin6, sizeof(sin6) },
		{ "sockaddr(unix)", FI_SOCKADDR, &sun, sizeof(sun) },
		{ "sockaddr_ib", FI_SOCKADDR_IB, gidbuf, sizeof(gidbuf) },
		{ "psmx", FI_ADDR_PSMX, words, 8 },
		{ "psmx2", FI_ADDR_PSMX2, words, 16 },
		{ "psmx3", FI_ADDR_PSMX3, words, 32 },
		{ "gni", FI_ADDR_GNI, words, 8 },
		{ "bgq", FI_ADDR_BGQ, words, 8 },
		{ "mlx", FI_ADDR_MLX, words, 8 },
		{ "opx", FI_ADDR_OPX, words, 8 },
		{ "cxi", FI_ADDR_CXI, words, 4 },
		{ "ib_ud", FI_ADDR_IB_UD, gidbuf, 32 },
		{ "efa", FI_ADDR_EFA, gidbuf, 32 },
		{ "str", FI_ADDR_STR, shortstr, sizeof(shortstr) },
		{ "str_long", FI_ADDR_STR, longstr, sizeof(longstr) },
		{ "unspec", FI_FORMAT_UNSPEC, &sin, sizeof(sin) },
		{ "prov_specific", FI_PROV_SPECIFIC | 7, &sin, sizeof(sin) },
		{ "unknown", 999, &sin, sizeof(sin) },
	};
	size_t i;

	sin.sin_family = AF_INET;
	sin.sin_port = htons(9228);
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(4711);
	inet_pton(AF_INET6, "fe80::1:2", &sin6.sin6_addr);
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, "/tmp/x");
	for (i = 0; i < sizeof(gidbuf); i++)
		gidbuf[i] = (unsigned char)(i * 7 + 1);
	memset(longstr, 'a', sizeof(longstr) - 1);
	longstr[sizeof(longstr) - 1] = '\0';
	ptr_register(words, "<words>");

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		info->addr_format = cases[i].format;
		info->src_addr = (void *)cases[i].addr;
		info->src_addrlen = cases[i].len;
		info->dest_addr = (void *)cases[i].addr;
		info->dest_addrlen = cases[i].len;
		dump(cases[i].label, info, FI_TYPE_INFO);
	}
}

static void dump_info(void)
{
	struct fi_tx_attr tx = tx_sample;
	struct fi_rx_attr rx = rx_sample;
	struct fi_ep_attr ep = ep_sample;
	struct fi_domain_attr dom = dom_sample;
	struct fi_fabric_attr fab = fab_sample;
	struct fi_info info;

	section("INFO");
	info_fill(&info, &tx, &rx, &ep, &dom, &fab);
	dump("full, no addresses", &info, FI_TYPE_INFO);

	info.handle = &fid_tostr;
	dump("handle with tostr", &info, FI_TYPE_INFO);
	info.handle = &fid_plain;
	dump("handle without tostr", &info, FI_TYPE_INFO);
	info.handle = NULL;

	memset(&info, 0, sizeof(info));
	dump("all attrs NULL", &info, FI_TYPE_INFO);

	info_fill(&info, &tx, &rx, &ep, &dom, &fab);
	dom.name = NULL;
	fab.name = NULL;
	fab.prov_name = NULL;
	dump("NULL names", &info, FI_TYPE_INFO);
	dom = dom_sample;
	fab = fab_sample;

	info.caps = ~0ULL;
	info.mode = ~0ULL;
	tx.caps = rx.caps = dom.caps = ~0ULL;
	tx.op_flags = rx.op_flags = ~0ULL;
	tx.msg_order = rx.msg_order = ~0ULL;
	tx.comp_order = rx.comp_order = ~0ULL;
	dom.mr_mode = ~0;
	dump("all bits", &info, FI_TYPE_INFO);

	info_fill(&info, &tx_sample, &rx_sample, &ep_sample, &dom_sample,
		  &fab_sample);
	dump_info_addrs(&info);
}

static void dump_tostr_r(void)
{
	static const size_t sizes[] = { 1, 2, 3, 8, 9, 10, 11, 64, 100, 300 };
	struct fi_info info;
	uint64_t caps = FI_MSG | FI_RMA | FI_TAGGED;
	char label[64], buf[512];
	char *ret;
	size_t i;
	int ep = FI_EP_RDM;

	section("TOSTR_R");
	info_fill(&info, &tx_sample, &rx_sample, (struct fi_ep_attr *)&ep_sample,
		  &dom_sample, &fab_sample);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(buf, 'X', sizeof(buf));
		ret = fi_tostr_r(buf, sizes[i], &caps, FI_TYPE_CAPS);
		snprintf(label, sizeof(label), "caps len %zu ret %s", sizes[i],
			 ret == buf ? "buf" : ret ? "other" : "NULL");
		emit(label, ret ? buf : NULL);

		memset(buf, 'X', sizeof(buf));
		ret = fi_tostr_r(buf, sizes[i], &info, FI_TYPE_INFO);
		snprintf(label, sizeof(label), "info len %zu ret %s", sizes[i],
			 ret == buf ? "buf" : ret ? "other" : "NULL");
		emit(label, ret ? buf : NULL);

		memset(buf, 'X', sizeof(buf));
		ret = fi_tostr_r(buf, sizes[i], &ep, FI_TYPE_EP_TYPE);
		snprintf(label, sizeof(label), "ep_type len %zu ret %s",
			 sizes[i], ret == buf ? "buf" : ret ? "other" : "NULL");
		emit(label, ret ? buf : NULL);
	}
	memset(buf, 'X', sizeof(buf));
	emit("len 0", fi_tostr_r(buf, 0, &caps, FI_TYPE_CAPS));
	emit("buf NULL", fi_tostr_r(NULL, 64, &caps, FI_TYPE_CAPS));
	emit("data NULL", fi_tostr_r(buf, sizeof(buf), NULL, FI_TYPE_CAPS));
	emit("bad type", fi_tostr_r(buf, sizeof(buf), &caps, 1000));
}

static void dump_misc(void)
{
	uint64_t zero64 = 0;
	int t;

	section("VERSION");
	dump("version", "1", FI_TYPE_VERSION);

	section("FID");
	dump("fid with tostr", &fid_tostr, FI_TYPE_FID);
	dump("fid without tostr", &fid_plain, FI_TYPE_FID);

	section("UNKNOWN_TYPE");
	dump("type 29", &zero64, (enum fi_type)29);
	dump("type 30", &zero64, (enum fi_type)30);
	dump("type 1000", &zero64, (enum fi_type)1000);
	dump("type -1", &zero64, (enum fi_type)-1);

	section("STRERROR");
	{
		static const int codes[] = { 0, 1, -1, 11, -11, 61, 255, 256,
			-256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266,
			267, 268, 269, -269, 270, 271, 300, 1000, -1000, 133, 134,
			INT_MAX, INT_MIN, INT_MIN + 1 };
		size_t i;

		for (i = 0; i < ARRAY_SIZE(codes); i++) {
			char label[32];

			snprintf(label, sizeof(label), "%d", codes[i]);
			emit(label, fi_strerror(codes[i]));
		}
	}

	section("NULL_DATA");
	for (t = FI_TYPE_INFO; t <= FI_TYPE_LOG_SUBSYS + 1; t++) {
		char label[32];

		snprintf(label, sizeof(label), "type %d", t);
		dump(label, NULL, (enum fi_type)t);
	}
}

int main(void)
{
	int mr;

	ptr_register(&fid_tostr, "<fid_tostr>");
	ptr_register(&fid_plain, "<fid_plain>");

	dump_info();

	section("EP_TYPE");
	dump_int_range(FI_TYPE_EP_TYPE, -1, 8);
	section("CAPS");
	dump_bits64(FI_TYPE_CAPS);
	section("OP_FLAGS");
	dump_bits64(FI_TYPE_OP_FLAGS);
	section("ADDR_FORMAT");
	dump_int_range(FI_TYPE_ADDR_FORMAT, -1, 24);
	{
		uint32_t v = FI_PROV_SPECIFIC | 3;
		dump("prov specific", &v, FI_TYPE_ADDR_FORMAT);
	}
	section("TX_ATTR");
	dump_attrs(FI_TYPE_TX_ATTR, &tx_sample, sizeof(tx_sample));
	section("RX_ATTR");
	dump_attrs(FI_TYPE_RX_ATTR, &rx_sample, sizeof(rx_sample));
	section("EP_ATTR");
	dump_attrs(FI_TYPE_EP_ATTR, &ep_sample, sizeof(ep_sample));
	section("DOMAIN_ATTR");
	dump_attrs(FI_TYPE_DOMAIN_ATTR, &dom_sample, sizeof(dom_sample));
	section("FABRIC_ATTR");
	dump_attrs(FI_TYPE_FABRIC_ATTR, &fab_sample, sizeof(fab_sample));
	section("THREADING");
	dump_int_range(FI_TYPE_THREADING, -1, 8);
	section("PROGRESS");
	dump_int_range(FI_TYPE_PROGRESS, -1, 5);
	section("PROTOCOL");
	dump_int_range(FI_TYPE_PROTOCOL, -1, 40);
	{
		uint32_t v = FI_PROV_SPECIFIC | 3;
		dump("prov specific", &v, FI_TYPE_PROTOCOL);
	}
	section("MSG_ORDER");
	dump_bits64(FI_TYPE_MSG_ORDER);
	section("MODE");
	dump_bits64(FI_TYPE_MODE);
	section("AV_TYPE");
	dump_int_range(FI_TYPE_AV_TYPE, -1, 4);
	section("ATOMIC_TYPE");
	dump_int_range(FI_TYPE_ATOMIC_TYPE, -1, 20);
	section("ATOMIC_OP");
	dump_int_range(FI_TYPE_ATOMIC_OP, -1, 24);
	section("EQ_EVENT");
	dump_int_range(FI_TYPE_EQ_EVENT, -1, 9);
	section("CQ_EVENT_FLAGS");
	dump_bits64(FI_TYPE_CQ_EVENT_FLAGS);
	section("MR_MODE");
	for (mr = 0; mr < 32; mr++) {
		int v = (int)(1U << mr);
		char label[16];

		snprintf(label, sizeof(label), "bit %d", mr);
		dump(label, &v, FI_TYPE_MR_MODE);
	}
	dump_int_range(FI_TYPE_MR_MODE, -1, 0);
	section("OP_TYPE");
	dump_int_range(FI_TYPE_OP_TYPE, -1, 14);
	section("COLLECTIVE_OP");
	dump_int_range(FI_TYPE_COLLECTIVE_OP, -1, 12);
	section("HMEM_IFACE");
	dump_int_range(FI_TYPE_HMEM_IFACE, -1, 8);
	section("CQ_FORMAT");
	dump_int_range(FI_TYPE_CQ_FORMAT, -1, 7);
	section("LOG_LEVEL");
	dump_int_range(FI_TYPE_LOG_LEVEL, -1, 6);
	section("LOG_SUBSYS");
	dump_int_range(FI_TYPE_LOG_SUBSYS, -1, 12);

	dump_misc();
	dump_tostr_r();
	return 0;
}
