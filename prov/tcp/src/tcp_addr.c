/* SPDX-License-Identifier: MIT */
/*
 * Addresses (IPv4/IPv6 sockaddrs, the endpoint names of this provider)
 * and the host's interfaces: which ones the provider offers, in what
 * order, and which one a route picks.
 */
#include "weft/compat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcp.h"

socklen_t tcp_addr_len(const union tcp_addr *a)
{
	switch (a->sa.sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

void tcp_addr_normalize(union tcp_addr *a)
{
	union tcp_addr n;

	memset(&n, 0, sizeof(n));
	n.sa.sa_family = a->sa.sa_family;
	if (a->sa.sa_family == AF_INET) {
		n.in.sin_port = a->in.sin_port;
		n.in.sin_addr = a->in.sin_addr;
	} else if (a->sa.sa_family == AF_INET6) {
		n.in6.sin6_port = a->in6.sin6_port;
		n.in6.sin6_addr = a->in6.sin6_addr;
		if (IN6_IS_ADDR_LINKLOCAL(&a->in6.sin6_addr))
			n.in6.sin6_scope_id = a->in6.sin6_scope_id;
	}
	*a = n;
}

int tcp_addr_cmp(const union tcp_addr *a, const union tcp_addr *b)
{
	socklen_t la = tcp_addr_len(a), lb = tcp_addr_len(b);

	if (la != lb)
		return la < lb ? -1 : 1;
	return memcmp(a, b, la);
}

uint16_t tcp_addr_port(const union tcp_addr *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->in6.sin6_port :
						   a->in.sin_port);
}

void tcp_addr_set_port(union tcp_addr *a, uint16_t port)
{
	if (a->sa.sa_family == AF_INET6)
		a->in6.sin6_port = htons(port);
	else
		a->in.sin_port = htons(port);
}

const char *tcp_addr_str(const union tcp_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (a->sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &a->in6.sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, tcp_addr_port(a));
	} else if (a->sa.sa_family == AF_INET) {
		inet_ntop(AF_INET, &a->in.sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, tcp_addr_port(a));
	} else {
		snprintf(buf, len, "(family %u)", a->sa.sa_family);
	}
	return buf;
}

void tcp_addr_to_wire(const union tcp_addr *a, struct tcp_wire_addr *w)
{
	memset(w, 0, sizeof(*w));
	w->port = tcp_addr_port(a);
	if (a->sa.sa_family == AF_INET6) {
		w->family = TCP_WIRE_AF_INET6;
		w->scope_id = a->in6.sin6_scope_id;
		memcpy(w->ip, &a->in6.sin6_addr, 16);
	} else {
		w->family = TCP_WIRE_AF_INET;
		memcpy(w->ip, &a->in.sin_addr, 4);
	}
}

void tcp_addr_from_wire(const struct tcp_wire_addr *w, union tcp_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (w->family == TCP_WIRE_AF_INET6) {
		a->in6.sin6_family = AF_INET6;
		a->in6.sin6_scope_id = w->scope_id;
		memcpy(&a->in6.sin6_addr, w->ip, 16);
	} else {
		a->in.sin_family = AF_INET;
		memcpy(&a->in.sin_addr, w->ip, 4);
	}
	tcp_addr_set_port(a, w->port);
	tcp_addr_normalize(a);
}

int tcp_format_family(uint32_t addr_format)
{
	switch (addr_format) {
	case FI_SOCKADDR_IN:
		return AF_INET;
	case FI_SOCKADDR_IN6:
		return AF_INET6;
	default:
		return 0;
	}
}

uint32_t tcp_family_format(int family)
{
	return family == AF_INET6 ? FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
}

int tcp_iface_route_src(const union tcp_addr *dst, union tcp_addr *src)
{
	socklen_t len = sizeof(*src);
	int fd, ret = 0;

	fd = socket(dst->sa.sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -FI_ENODATA;
	/* A datagram connect sends nothing: it only asks the routing
	 * table, and getsockname then says which address it chose. */
	if (connect(fd, &dst->sa, tcp_addr_len(dst)) ||
	    getsockname(fd, &src->sa, &len))
		ret = -FI_ENODATA;
	close(fd);
	if (!ret) {
		tcp_addr_set_port(src, 0);
		tcp_addr_normalize(src);
	}
	return ret;
}

/* The address the default route uses, for family (none: -FI_ENODATA). */
static int tcp_iface_default_src(int family, union tcp_addr *src)
{
	union tcp_addr dst;

	memset(&dst, 0, sizeof(dst));
	dst.sa.sa_family = (sa_family_t)family;
	if (family == AF_INET)
		inet_pton(AF_INET, "8.8.8.8", &dst.in.sin_addr);
	else
		inet_pton(AF_INET6, "2001:4860:4860::8888", &dst.in6.sin6_addr);
	tcp_addr_set_port(&dst, 53);
	return tcp_iface_route_src(&dst, src);
}

static int tcp_prefix_len(const struct sockaddr *mask)
{
	const uint8_t *b;
	size_t i, n;
	int bits = 0;

	if (!mask)
		return 0;
	if (mask->sa_family == AF_INET) {
		b = (const uint8_t *)&((const struct sockaddr_in *)mask)->sin_addr;
		n = 4;
	} else {
		b = (const uint8_t *)&((const struct sockaddr_in6 *)mask)->sin6_addr;
		n = 16;
	}
	for (i = 0; i < n; i++)
		bits += __builtin_popcount(b[i]);
	return bits;
}

/* Whether ifa is an address the provider may use for family. Link-local
 * IPv6 is left out: its scope means nothing on another host. */
static bool tcp_iface_usable(const struct ifaddrs *ifa, int family)
{
	const struct sockaddr_in6 *in6;

	if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP))
		return false;
	if (ifa->ifa_addr->sa_family != AF_INET &&
	    ifa->ifa_addr->sa_family != AF_INET6)
		return false;
	if (family != AF_UNSPEC && ifa->ifa_addr->sa_family != family)
		return false;
	if (ifa->ifa_addr->sa_family == AF_INET6) {
		in6 = (const struct sockaddr_in6 *)ifa->ifa_addr;
		if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
			return false;
	}
	return true;
}

/* Whether name is in the comma list (NULL list: every name). */
static int tcp_iface_rank_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;
	int rank = 0;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return rank;
		rank++;
		p = end ? end + 1 : NULL;
	}
	return -1;
}

/* Sort key: FI_TCP_IFACE order, else the default route's interface
 * first, loopback last; IPv4 before IPv6 within a rank. */
static int tcp_iface_rank(const struct tcp_iface *i, unsigned int flags,
			  const union tcp_addr *def4,
			  const union tcp_addr *def6)
{
	int fam = i->addr.sa.sa_family == AF_INET6;
	union tcp_addr a = i->addr;

	if (tcp_env.iface)
		return tcp_iface_rank_in_list(tcp_env.iface, i->name) * 2 + fam;
	tcp_addr_set_port(&a, 0);
	if ((!fam && def4 && !tcp_addr_cmp(&a, def4)) ||
	    (fam && def6 && !tcp_addr_cmp(&a, def6)))
		return fam;
	return ((flags & IFF_LOOPBACK) ? 4 : 2) + fam;
}

struct tcp_iface_sort {
	struct tcp_iface iface;
	int rank;
	size_t seq;
};

static int tcp_iface_sort_cmp(const void *a, const void *b)
{
	const struct tcp_iface_sort *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

int tcp_iface_list(int family, struct tcp_iface **out, size_t *n)
{
	union tcp_addr def4, def6;
	bool have4 = !tcp_iface_default_src(AF_INET, &def4);
	bool have6 = !tcp_iface_default_src(AF_INET6, &def6);
	struct ifaddrs *ifs, *ifa;
	struct tcp_iface_sort *v;
	size_t cnt = 0, i;

	*out = NULL;
	*n = 0;
	if (getifaddrs(&ifs))
		return -FI_ENODATA;
	for (ifa = ifs; ifa; ifa = ifa->ifa_next)
		cnt++;
	v = calloc(cnt ? cnt : 1, sizeof(*v));
	if (!v) {
		freeifaddrs(ifs);
		return -FI_ENOMEM;
	}
	cnt = 0;
	for (ifa = ifs; ifa; ifa = ifa->ifa_next) {
		struct tcp_iface_sort *s = &v[cnt];

		if (!tcp_iface_usable(ifa, family))
			continue;
		snprintf(s->iface.name, sizeof(s->iface.name), "%s",
			 ifa->ifa_name);
		memcpy(&s->iface.addr, ifa->ifa_addr,
		       ifa->ifa_addr->sa_family == AF_INET ?
		       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		tcp_addr_set_port(&s->iface.addr, 0);
		tcp_addr_normalize(&s->iface.addr);
		s->iface.prefix = tcp_prefix_len(ifa->ifa_netmask);
		s->rank = tcp_iface_rank(&s->iface, ifa->ifa_flags,
					 have4 ? &def4 : NULL,
					 have6 ? &def6 : NULL);
		s->seq = cnt;
		if (s->rank >= 0)
			cnt++;
	}
	freeifaddrs(ifs);
	qsort(v, cnt, sizeof(*v), tcp_iface_sort_cmp);
	*out = calloc(cnt ? cnt : 1, sizeof(**out));
	if (!*out) {
		free(v);
		return -FI_ENOMEM;
	}
	for (i = 0; i < cnt; i++)
		(*out)[i] = v[i].iface;
	*n = cnt;
	free(v);
	return 0;
}

int tcp_iface_of_addr(const union tcp_addr *a, struct tcp_iface *out)
{
	struct tcp_iface *v;
	union tcp_addr key = *a;
	size_t n, i;
	int ret;

	tcp_addr_set_port(&key, 0);
	tcp_addr_normalize(&key);
	ret = tcp_iface_list(a->sa.sa_family, &v, &n);
	if (ret)
		return ret;
	ret = -FI_ENODATA;
	for (i = 0; i < n; i++) {
		if (!tcp_addr_cmp(&v[i].addr, &key)) {
			*out = v[i];
			ret = 0;
			break;
		}
	}
	free(v);
	return ret;
}

int tcp_addr_resolve(const char *node, const char *service, int family,
		     bool passive, union tcp_addr *out)
{
	struct addrinfo hints, *res, *ai;
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family ? family : AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	ret = getaddrinfo(node, service, &hints, &res);
	if (ret) {
		FI_INFO(&tcp_prov, FI_LOG_CORE, "%s:%s does not resolve: %s\n",
			node ? node : "", service ? service : "",
			gai_strerror(ret));
		return -FI_ENODATA;
	}
	ret = -FI_ENODATA;
	for (ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		memset(out, 0, sizeof(*out));
		memcpy(out, ai->ai_addr, ai->ai_addrlen);
		tcp_addr_normalize(out);
		ret = 0;
		break;
	}
	freeaddrinfo(res);
	return ret;
}
