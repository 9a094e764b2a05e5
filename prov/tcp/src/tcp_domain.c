/* SPDX-License-Identifier: MIT */
/*
 * tcp domain: util's domain (MR map, threading, atomics query) plus the
 * local addresses its endpoints listen on: the info's src_addr, and, when
 * the domain is a striped FI_TCP_IFACE list, one address on each further
 * interface of the list.
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <string.h>

#include "tcp.h"

static int tcp_domain_close(struct fid *fid)
{
	struct tcp_domain *domain =
		container_of(fid, struct tcp_domain, util.domain_fid.fid);
	int ret;

	ret = util_domain_fini(&domain->util);
	if (ret)
		return ret;
	free(domain);
	return 0;
}

static const struct fi_ops tcp_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = tcp_domain_close,
	.bind = util_domain_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static const struct fi_ops_domain tcp_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = util_av_open,
	.cq_open = util_cq_open,
	.endpoint = tcp_ep_open,
	.scalable_ep = util_no_scalable_ep,
	.cntr_open = util_cntr_open,
	.poll_open = util_poll_open,
	.stx_ctx = util_no_stx_ctx,
	.srx_ctx = util_no_srx_ctx,
	.query_atomic = util_domain_query_atomic,
	.query_collective = util_coll_query,
	.endpoint2 = util_no_endpoint2,
};

/* The first address of family on interface name. */
static int tcp_domain_iface_addr(const char *name, size_t len, int family,
				 union tcp_addr *out)
{
	struct tcp_iface *v;
	size_t n, i;
	int ret;

	ret = tcp_iface_list(family, &v, &n);
	if (ret)
		return ret;
	ret = -FI_ENODATA;
	for (i = 0; i < n; i++) {
		if (strlen(v[i].name) == len && !strncmp(v[i].name, name, len)) {
			*out = v[i].addr;
			ret = 0;
			break;
		}
	}
	free(v);
	return ret;
}

/* A domain named "a,b,c" (a striped FI_TCP_IFACE): listen on b and c too. */
static void tcp_domain_stripes(struct tcp_domain *d, const char *name)
{
	const char *p = strchr(name, ',');

	while (p && d->nsrc < TCP_STRIPE_MAX) {
		const char *s = p + 1, *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);

		if (len && !tcp_domain_iface_addr(s, len, d->family,
						  &d->src[d->nsrc]))
			d->nsrc++;
		else
			FI_WARN(&tcp_prov, FI_LOG_DOMAIN,
				"interface %.*s of FI_TCP_IFACE has no "
				"address of the domain's family: not used\n",
				(int)len, s);
		p = end;
	}
}

static int tcp_domain_src(struct tcp_domain *d, const struct fi_info *info)
{
	struct tcp_iface *v;
	size_t n;
	int ret;

	if (info->src_addr) {
		if (info->src_addrlen > sizeof(d->src[0]) ||
		    ((const struct sockaddr *)info->src_addr)->sa_family !=
		    d->family) {
			FI_WARN(&tcp_prov, FI_LOG_DOMAIN,
				"src_addr is not a sockaddr of the domain's "
				"family\n");
			return -FI_EINVAL;
		}
		memcpy(&d->src[0], info->src_addr, info->src_addrlen);
		tcp_addr_normalize(&d->src[0]);
	} else {
		ret = tcp_iface_list(d->family, &v, &n);
		if (ret)
			return ret;
		if (n)
			d->src[0] = v[0].addr;
		free(v);
		if (!n) {
			FI_WARN(&tcp_prov, FI_LOG_DOMAIN,
				"no interface of the domain's family\n");
			return -FI_ENODATA;
		}
	}
	d->nsrc = 1;
	if (info->domain_attr->name && strchr(info->domain_attr->name, ','))
		tcp_domain_stripes(d, info->domain_attr->name);
	return 0;
}

int tcp_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain_fid, void *context)
{
	struct tcp_domain *domain;
	int ret;

	if (!info || !info->domain_attr) {
		FI_WARN(&tcp_prov, FI_LOG_DOMAIN, "fi_domain without info\n");
		return -FI_EINVAL;
	}
	domain = calloc(1, sizeof(*domain));
	if (!domain)
		return -FI_ENOMEM;
	domain->family = tcp_format_family(info->addr_format);
	if (!domain->family && info->src_addr)
		domain->family = ((struct sockaddr *)info->src_addr)->sa_family;
	if (domain->family != AF_INET && domain->family != AF_INET6)
		domain->family = AF_INET;
	ret = tcp_domain_src(domain, info);
	if (ret)
		goto err_free;
	ret = util_domain_init(&domain->util, to_util_fabric(fabric), info,
			       &tcp_domain_fi_ops, &tcp_domain_ops, context);
	if (ret)
		goto err_free;
	domain->util.av_prov = domain->family == AF_INET6 ? &tcp_av_prov_in6 :
							    &tcp_av_prov_in;
	domain->util.atomic_max_bytes = TCP_ATOMIC_MAX;
	*domain_fid = &domain->util.domain_fid;
	return 0;

err_free:
	free(domain);
	return ret;
}
