/* SPDX-License-Identifier: MIT */
/*
 * shm's fi_getinfo: the info template (per-context caps) and how node,
 * service and FI_SOURCE become addresses: a node names a host and must be
 * this one, a service names an endpoint, and a source nothing names is
 * this process's stem, under which every endpoint gets its own name.
 */
#include "shm_prov_test.h"

#include <rdma/providers/fi_prov.h>
#include <unistd.h>

#define V117 FI_VERSION(1, 17)

/* the provider object itself, for its answer before core's narrowing */
extern struct fi_provider shm_prov;

static struct tctx T;

static void stem(char *buf, size_t len)
{
	snprintf(buf, len, "fi_shm://weftshm-%u-%d", (unsigned)getuid(),
		 (int)getpid());
}

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
			 FI_WRITE | FI_SEND | FI_COLLECTIVE);
	assert_int_equal(info->rx_attr->caps,
			 FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV |
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV |
			 FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT |
			 FI_COLLECTIVE);
	assert_int_equal(info->domain_attr->caps, FI_LOCAL_COMM);
	fi_freeinfo(info);
}

/* fabtests' getinfo_no_hints1/src1/src_dest1: a source address always. */
static void test_source_always(void **state)
{
	struct fi_info *hints = t_hints(FI_MSG), *info = NULL;
	char want[T_ADDR_LEN];

	(void)state;
	stem(want, sizeof(want));
	assert_int_equal(fi_getinfo(V117, NULL, NULL, 0, hints, &info), 0);
	assert_non_null(info->src_addr);
	assert_int_equal(info->src_addrlen, T_ADDR_LEN);
	assert_string_equal((char *)info->src_addr, want);
	assert_null(info->dest_addr);
	fi_freeinfo(info);

	assert_int_equal(fi_getinfo(V117, "127.0.0.1", "9228", 0, hints,
				    &info), 0);
	assert_string_equal((char *)info->src_addr, want);
	assert_string_equal((char *)info->dest_addr, "fi_shm://9228");
	fi_freeinfo(info);

	/* a host alone names no endpoint: source stem, no destination */
	assert_int_equal(fi_getinfo(V117, "localhost", NULL, FI_SOURCE, hints,
				    &info), 0);
	assert_string_equal((char *)info->src_addr, want);
	assert_null(info->dest_addr);
	fi_freeinfo(info);
	assert_int_equal(fi_getinfo(V117, "127.0.0.1", NULL, 0, hints, &info),
			 0);
	assert_string_equal((char *)info->src_addr, want);
	assert_null(info->dest_addr);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* fabtests' negative tests (fi_rdm g00n13s): a node that is not this host
 * is refused by fi_getinfo, not by the first send. */
static void test_node_not_this_host(void **state)
{
	struct fi_info *hints = t_hints(FI_MSG), *info = (void *)0x1;

	(void)state;
	assert_int_equal(fi_getinfo(V117, "g00n13s.invalid", "9228", 0, hints,
				    &info), -FI_ENODATA);
	assert_null(info);
	assert_int_equal(fi_getinfo(V117, "192.0.2.1", "9228", 0, hints,
				    &info), -FI_ENODATA);
	assert_int_equal(fi_getinfo(V117, "192.0.2.1", NULL, FI_SOURCE, hints,
				    &info), -FI_ENODATA);
	/* FI_NUMERICHOST: a name is not looked up, so it names nothing */
	assert_int_equal(fi_getinfo(V117, "localhost", "9228", FI_NUMERICHOST,
				    hints, &info), -FI_ENODATA);
	assert_int_equal(fi_getinfo(V117, "::1", "9228", FI_NUMERICHOST,
				    hints, &info), 0);
	assert_string_equal((char *)info->dest_addr, "fi_shm://9228");
	fi_freeinfo(info);
	/* an fi_shm:// node is an address, not a host */
	assert_int_equal(fi_getinfo(V117, "fi_shm://peer-7", "9228", 0, hints,
				    &info), 0);
	assert_string_equal((char *)info->dest_addr, "fi_shm://peer-7");
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* fabtests' clients pass "-s 127.0.0.1": fi_getinfo(host, NULL, FI_SOURCE)
 * and its src_addr in the hints of the next call. Every endpoint opened
 * from that info gets a name of its own under the stem, so several
 * clients (fi_rdm_multi_client) coexist and talk. */
static void test_host_source_endpoints(void **state)
{
	struct fi_info *hints = t_hints(FI_MSG), *src = NULL;
	char want[T_ADDR_LEN];
	uint64_t v = 0x1234567890abcdefull, r = 0;
	struct fi_context sc, rc;
	size_t n;

	(void)state;
	stem(want, sizeof(want));
	n = strlen(want);
	assert_int_equal(fi_getinfo(V117, "127.0.0.1", NULL, FI_SOURCE, hints,
				    &src), 0);
	assert_string_equal((char *)src->src_addr, want);
	t_open_fabric(&T, FI_MSG);
	fi_freeinfo(T.info);
	hints->src_addr = malloc(src->src_addrlen);
	assert_non_null(hints->src_addr);
	memcpy(hints->src_addr, src->src_addr, src->src_addrlen);
	hints->src_addrlen = src->src_addrlen;
	hints->addr_format = FI_ADDR_STR;
	assert_int_equal(fi_getinfo(V117, "127.0.0.1", "9228", 0, hints,
				    &T.info), 0);
	assert_string_equal((char *)T.info->src_addr, want);
	t_add_ep(&T);
	t_add_ep(&T);
	assert_memory_equal(T.name[0], want, n);
	assert_memory_equal(T.name[1], want, n);
	assert_int_equal(T.name[0][n], '-');
	assert_string_not_equal(T.name[0], T.name[1]);
	T_POST(&T, fi_recv(T.ep[1], &r, sizeof(r), NULL, FI_ADDR_UNSPEC, &rc));
	T_POST(&T, fi_send(T.ep[0], &v, sizeof(v), NULL, T.addr[1], &sc));
	t_wait_ok(&T, &sc);
	t_wait_ok(&T, &rc);
	assert_int_equal(r, v);
	t_close(&T);
	fi_freeinfo(src);
	fi_freeinfo(hints);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_template_ctx_caps),
		cmocka_unit_test(test_source_always),
		cmocka_unit_test(test_node_not_this_host),
		cmocka_unit_test(test_host_source_endpoints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
