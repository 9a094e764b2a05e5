/* SPDX-License-Identifier: MIT */
/*
 * tcp addresses in util's AV: a struct sockaddr_in (FI_SOCKADDR_IN) or
 * sockaddr_in6 (FI_SOCKADDR_IN6), the domain's family only. Inserted
 * addresses are normalised (sin_zero, flow info cleared) so that the same
 * endpoint always hashes to the same slot (FI_SOURCE reverse lookup).
 */
#include "weft/compat.h"

#include <stdio.h>
#include <string.h>

#include "tcp.h"

static int tcp_av_validate(struct util_av *av, const void *addr, int family)
{
	const union tcp_addr *a = addr;
	union tcp_addr n;
	char buf[64];

	(void)av;
	if (a->sa.sa_family != family) {
		FI_WARN(&tcp_prov, FI_LOG_AV,
			"address of family %u in an AV of family %d\n",
			a->sa.sa_family, family);
		return -FI_EINVAL;
	}
	memset(&n, 0, sizeof(n));
	memcpy(&n, a, tcp_addr_len(a));
	if (!tcp_addr_port(&n)) {
		FI_WARN(&tcp_prov, FI_LOG_AV, "address %s has no port\n",
			tcp_addr_str(&n, buf, sizeof(buf)));
		return -FI_EINVAL;
	}
	return 0;
}

static int tcp_av_validate_in(struct util_av *av, const void *addr)
{
	return tcp_av_validate(av, addr, AF_INET);
}

static int tcp_av_validate_in6(struct util_av *av, const void *addr)
{
	return tcp_av_validate(av, addr, AF_INET6);
}

/* Bumped at every insert: a slot's generation, and a clock that tells
 * endpoints whether an unknown sender may have become known. */
static _Atomic uint64_t tcp_av_gen;

uint64_t tcp_av_gen_now(void)
{
	return atomic_load_explicit(&tcp_av_gen, memory_order_relaxed);
}

/* util copied the address into the slot: normalise it there, before util
 * hashes it. */
static int tcp_av_insert(struct util_av *av, fi_addr_t fi_addr,
			 const void *addr, void *data)
{
	struct tcp_av_data *d = data;
	union tcp_addr n;

	(void)av; (void)fi_addr;
	memset(&n, 0, sizeof(n));
	memcpy(&n, addr, tcp_addr_len(addr));
	tcp_addr_normalize(&n);
	memcpy((void *)addr, &n, tcp_addr_len(&n));
	d->gen = atomic_fetch_add(&tcp_av_gen, 1) + 1;
	return 0;
}

/* gen 0 is never handed out: endpoints' caches of the slot go stale. */
static void tcp_av_remove(struct util_av *av, fi_addr_t fi_addr,
			  const void *addr, void *data)
{
	struct tcp_av_data *d = data;

	(void)av; (void)fi_addr; (void)addr;
	d->gen = 0;
}

static const char *tcp_av_straddr(const void *addr, char *buf, size_t *len)
{
	union tcp_addr a;
	char s[64];
	size_t n;

	memset(&a, 0, sizeof(a));
	memcpy(&a, addr, ((const struct sockaddr *)addr)->sa_family ==
			 AF_INET6 ? sizeof(a.in6) : sizeof(a.in));
	tcp_addr_str(&a, s, sizeof(s));
	n = strlen(s);
	if (*len)
		snprintf(buf, *len, "%s", s);
	*len = n + 1;
	return buf;
}

const struct util_av_prov tcp_av_prov_in = {
	.addrlen = sizeof(struct sockaddr_in),
	.data_size = sizeof(struct tcp_av_data),
	.validate = tcp_av_validate_in,
	.insert = tcp_av_insert,
	.remove = tcp_av_remove,
	.straddr = tcp_av_straddr,
};

const struct util_av_prov tcp_av_prov_in6 = {
	.addrlen = sizeof(struct sockaddr_in6),
	.data_size = sizeof(struct tcp_av_data),
	.validate = tcp_av_validate_in6,
	.insert = tcp_av_insert,
	.remove = tcp_av_remove,
	.straddr = tcp_av_straddr,
};
