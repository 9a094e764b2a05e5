/* SPDX-License-Identifier: MIT */
/*
 * util_host: does a node name this host? Called by fi_getinfo only, never
 * on a data path: it may resolve a name.
 */
#include "weft/compat.h"
#include "weft/util_host.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static bool util_host_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *sin6 = (const void *)sa;
	const struct sockaddr_in *sin = (const void *)sa;

	if (sa->sa_family == AF_INET)
		return (ntohl(sin->sin_addr.s_addr) >> 24) == IN_LOOPBACKNET;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
	return false;
}

static bool util_host_same_addr(const struct sockaddr *a,
				const struct sockaddr *b)
{
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;

	if (!a || !b || a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return !memcmp(&a6->sin6_addr, &b6->sin6_addr,
			       sizeof(a6->sin6_addr));
	return false;
}

static bool util_host_addr_local(const struct sockaddr *sa,
				 const struct ifaddrs *ifs)
{
	const struct ifaddrs *ifa;

	if (util_host_loopback(sa))
		return true;
	for (ifa = ifs; ifa; ifa = ifa->ifa_next)
		if (util_host_same_addr(sa, ifa->ifa_addr))
			return true;
	return false;
}

static bool util_host_is_own_name(const char *node)
{
	char name[HOST_NAME_MAX + 1];

	if (!strcasecmp(node, "localhost"))
		return true;
	if (gethostname(name, sizeof(name)))
		return false;
	name[sizeof(name) - 1] = '\0';
	return !strcasecmp(node, name);
}

bool util_host_is_local(const char *node, bool numeric_only)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_flags = numeric_only ? AI_NUMERICHOST : 0,
	};
	struct addrinfo *res = NULL, *ai;
	struct ifaddrs *ifs = NULL;
	bool local = false;

	if (!node || !*node)
		return false;
	if (!numeric_only && util_host_is_own_name(node))
		return true;
	if (getaddrinfo(node, NULL, &hints, &res))
		return false;
	/* Without the interface list only loopback addresses are known. */
	if (getifaddrs(&ifs))
		ifs = NULL;
	for (ai = res; ai && !local; ai = ai->ai_next)
		local = util_host_addr_local(ai->ai_addr, ifs);
	if (ifs)
		freeifaddrs(ifs);
	freeaddrinfo(res);
	return local;
}
