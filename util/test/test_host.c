/* SPDX-License-Identifier: MIT */
#include "util_test.h"
#include "weft/util_host.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <unistd.h>

static void test_host_names_of_this_host(void **state)
{
	char name[HOST_NAME_MAX + 1];

	(void)state;
	assert_true(util_host_is_local("localhost", false));
	assert_true(util_host_is_local("LocalHost", false));
	assert_int_equal(gethostname(name, sizeof(name)), 0);
	name[sizeof(name) - 1] = '\0';
	assert_true(util_host_is_local(name, false));
	/* FI_NUMERICHOST: names are not looked up */
	assert_false(util_host_is_local("localhost", true));
	assert_false(util_host_is_local(name, true));
}

static void test_host_loopback_addresses(void **state)
{
	(void)state;
	assert_true(util_host_is_local("127.0.0.1", true));
	assert_true(util_host_is_local("127.0.1.1", true));
	assert_true(util_host_is_local("::1", true));
	assert_true(util_host_is_local("127.0.0.1", false));
}

/* Every IPv4 address of this host's interfaces names it. */
static void test_host_interface_addresses(void **state)
{
	struct ifaddrs *ifs, *ifa;
	char buf[INET_ADDRSTRLEN];
	int seen = 0;

	(void)state;
	assert_int_equal(getifaddrs(&ifs), 0);
	for (ifa = ifs; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr_in *sin = (const void *)ifa->ifa_addr;

		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET)
			continue;
		assert_non_null(inet_ntop(AF_INET, &sin->sin_addr, buf,
					  sizeof(buf)));
		assert_true(util_host_is_local(buf, true));
		seen++;
	}
	freeifaddrs(ifs);
	/* lo at least */
	assert_true(seen > 0);
}

static void test_host_others(void **state)
{
	(void)state;
	assert_false(util_host_is_local(NULL, false));
	assert_false(util_host_is_local("", false));
	/* RFC 6761: .invalid never resolves */
	assert_false(util_host_is_local("g00n13s.invalid", false));
	/* RFC 5737 documentation range: no host has it */
	assert_false(util_host_is_local("192.0.2.1", true));
	assert_false(util_host_is_local("2001:db8::1", true));
	assert_false(util_host_is_local("not an address", true));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_names_of_this_host),
		cmocka_unit_test(test_host_loopback_addresses),
		cmocka_unit_test(test_host_interface_addresses),
		cmocka_unit_test(test_host_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
