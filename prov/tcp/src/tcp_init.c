/* SPDX-License-Identifier: MIT */
/*
 * The tcp provider's entry points: the struct fi_provider the core
 * registry calls, and fi_getinfo. Core filters and narrows what we return
 * against the hints; here we pick addresses and interfaces, which only
 * the provider understands. Settings are in tcp_param.c.
 */
#include "weft/compat.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/core.h"
#include "tcp.h"

void tcp_params_init(void);
static int tcp_getinfo(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       struct fi_info **info);

struct fi_provider tcp_prov = {
	.version = TCP_PROV_VERSION,
	.fi_version = FI_VERSION(1, 17),
	.name = TCP_PROV_NAME,
	.getinfo = tcp_getinfo,
	.fabric = tcp_fabric_open,
};

/* FI_RMA_EVENT: every RMA and atomic runs in the target's progress
 * (tcp_rma.c, tcp_atomic.c), which counts it on the FI_REMOTE_WRITE /
 * FI_REMOTE_READ counters and reports remote CQ data
 * (tcp_rma_target_events). */
#define TCP_CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | \
		  FI_WRITE | FI_SEND | FI_RECV | FI_REMOTE_READ | \
		  FI_REMOTE_WRITE | FI_DIRECTED_RECV | FI_MULTI_RECV | \
		  FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_RMA_EVENT | \
		  FI_COLLECTIVE)

/* Frames toward one peer go out on one connection in order and the
 * target handles them in order; RMA reads are answered from the target's
 * memory when the answer is written, so a later write may overtake them
 * (no WAR). Rendezvous data may follow later frames (no orders between
 * messages and RMA). */
#define TCP_MSG_ORDER (FI_ORDER_SAS | FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW | \
		       FI_ORDER_RMA_WAW | FI_ORDER_ATOMIC_RAR | \
		       FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | \
		       FI_ORDER_ATOMIC_WAW)

static void tcp_info_fill(struct fi_info *fi, int family)
{
	fi->caps = TCP_CAPS;
	fi->mode = 0;
	fi->addr_format = tcp_family_format(family);

	fi->tx_attr->caps = TCP_CAPS;
	fi->tx_attr->op_flags = 0;
	fi->tx_attr->msg_order = TCP_MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = TCP_INJECT_MAX;
	fi->tx_attr->size = tcp_env.tx_size;
	fi->tx_attr->iov_limit = TCP_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = 1;

	fi->rx_attr->caps = TCP_CAPS;
	fi->rx_attr->op_flags = 0;
	fi->rx_attr->msg_order = TCP_MSG_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = tcp_env.rx_size;
	fi->rx_attr->iov_limit = TCP_IOV_LIMIT;

	fi->ep_attr->type = FI_EP_RDM;
	fi->ep_attr->protocol = FI_PROTO_SOCK_TCP;
	fi->ep_attr->protocol_version = TCP_WIRE_VERSION;
	fi->ep_attr->max_msg_size = TCP_MAX_MSG_SIZE;
	fi->ep_attr->msg_prefix_size = 0;
	fi->ep_attr->max_order_raw_size = TCP_MAX_MSG_SIZE;
	fi->ep_attr->max_order_war_size = 0;
	fi->ep_attr->max_order_waw_size = TCP_MAX_MSG_SIZE;
	fi->ep_attr->mem_tag_format = TCP_TAG_FORMAT;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->threading = FI_THREAD_SAFE;
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = FI_AV_UNSPEC;
	/* Nothing required: targets check keys and bounds themselves, local
	 * buffers need no registration. */
	fi->domain_attr->mr_mode = 0;
	fi->domain_attr->mr_key_size = sizeof(uint64_t);
	fi->domain_attr->cq_data_size = sizeof(uint64_t);
	fi->domain_attr->cq_cnt = 1024;
	fi->domain_attr->ep_cnt = 1024;
	fi->domain_attr->tx_ctx_cnt = 1024;
	fi->domain_attr->rx_ctx_cnt = 1024;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	fi->domain_attr->mode = 0;
	fi->domain_attr->mr_cnt = 1 << 16;
	fi->domain_attr->tclass = FI_TC_UNSPEC;

	fi->fabric_attr->prov_version = TCP_PROV_VERSION;
	fi->fabric_attr->api_version = FI_VERSION(1, 17);
}

static int tcp_set_addr(void **dst, size_t *dstlen, const union tcp_addr *a)
{
	socklen_t len = tcp_addr_len(a);

	*dst = malloc(len);
	if (!*dst)
		return -FI_ENOMEM;
	memcpy(*dst, a, len);
	*dstlen = len;
	return 0;
}

/* "a.b.c.d/24": the subnet of an interface address, the fabric's name. */
static char *tcp_subnet_name(const struct tcp_iface *ifc)
{
	char ip[INET6_ADDRSTRLEN], buf[INET6_ADDRSTRLEN + 8];
	union tcp_addr a = ifc->addr;
	uint8_t *b;
	int bits = ifc->prefix, i, n;

	if (a.sa.sa_family == AF_INET6) {
		b = (uint8_t *)&a.in6.sin6_addr;
		n = 16;
	} else {
		b = (uint8_t *)&a.in.sin_addr;
		n = 4;
	}
	for (i = 0; i < n; i++) {
		int keep = bits >= 8 ? 8 : (bits > 0 ? bits : 0);

		b[i] &= (uint8_t)(0xff << (8 - keep));
		bits -= 8;
	}
	inet_ntop(a.sa.sa_family, b, ip, sizeof(ip));
	snprintf(buf, sizeof(buf), "%s/%d", ip, ifc->prefix);
	return strdup(buf);
}

/* The domain name of an interface: FI_TCP_IFACE as a whole when it names
 * several interfaces and ifc is the first (the endpoint stripes over all
 * of them), else the interface's own name. */
static char *tcp_domain_name(const struct tcp_iface *ifc)
{
	const char *list = tcp_env.iface;
	size_t n = strlen(ifc->name);

	if (list && strchr(list, ',') && !strncmp(list, ifc->name, n) &&
	    list[n] == ',')
		return strdup(list);
	return strdup(ifc->name);
}

/* One info for interface ifc (its address as src unless src is given). */
static int tcp_info_one(const struct tcp_iface *ifc, const union tcp_addr *src,
			const union tcp_addr *dest, struct fi_info **out)
{
	struct fi_info *fi = fi_dupinfo(NULL);
	int ret = 0;

	if (!fi)
		return -FI_ENOMEM;
	tcp_info_fill(fi, ifc->addr.sa.sa_family);
	fi->fabric_attr->name = tcp_subnet_name(ifc);
	fi->fabric_attr->prov_name = strdup(TCP_PROV_NAME);
	fi->domain_attr->name = tcp_domain_name(ifc);
	if (!fi->fabric_attr->name || !fi->fabric_attr->prov_name ||
	    !fi->domain_attr->name)
		ret = -FI_ENOMEM;
	if (!ret)
		ret = tcp_set_addr(&fi->src_addr, &fi->src_addrlen,
				   src ? src : &ifc->addr);
	if (!ret && dest)
		ret = tcp_set_addr(&fi->dest_addr, &fi->dest_addrlen, dest);
	if (ret) {
		fi_freeinfo(fi);
		return ret;
	}
	*out = fi;
	return 0;
}

/* The interface to use for a given local address: the one that holds it,
 * or (a wildcard address) the first one offered. */
static int tcp_iface_for_src(const union tcp_addr *src, struct tcp_iface *ifc)
{
	struct tcp_iface *v;
	size_t n;
	int ret;

	if (!tcp_iface_of_addr(src, ifc))
		return 0;
	ret = tcp_iface_list(src->sa.sa_family, &v, &n);
	if (ret)
		return ret;
	if (!n) {
		free(v);
		return -FI_ENODATA;
	}
	*ifc = v[0];
	free(v);
	return 0;
}

/* A destination: the source is what the route toward it picks. */
static int tcp_info_dest(const union tcp_addr *dest, const union tcp_addr *src,
			 struct fi_info **info)
{
	union tcp_addr s;
	struct tcp_iface ifc;
	char buf[64];
	int ret;

	if (src) {
		s = *src;
	} else if (tcp_iface_route_src(dest, &s)) {
		FI_INFO(&tcp_prov, FI_LOG_CORE, "no route toward %s\n",
			tcp_addr_str(dest, buf, sizeof(buf)));
		return -FI_ENODATA;
	}
	ret = tcp_iface_for_src(&s, &ifc);
	if (ret)
		return ret;
	return tcp_info_one(&ifc, &s, dest, info);
}

/* A local address to listen on (FI_SOURCE, or hints->src_addr). */
static int tcp_info_src(const union tcp_addr *src, const union tcp_addr *dest,
			struct fi_info **info)
{
	struct tcp_iface ifc;
	union tcp_addr s = *src;
	int ret;

	ret = tcp_iface_for_src(&s, &ifc);
	if (ret)
		return ret;
	if (s.sa.sa_family == AF_INET ? s.in.sin_addr.s_addr == INADDR_ANY :
	    IN6_IS_ADDR_UNSPECIFIED(&s.in6.sin6_addr)) {
		uint16_t port = tcp_addr_port(&s);

		s = ifc.addr;
		tcp_addr_set_port(&s, port);
	}
	return tcp_info_one(&ifc, &s, dest, info);
}

/* No address given: one info per usable interface, best first. */
static int tcp_info_all(int family, struct fi_info **info)
{
	struct fi_info *head = NULL, *tail = NULL, *fi;
	struct tcp_iface *v;
	size_t n, i;
	int ret;

	ret = tcp_iface_list(family, &v, &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		/* Further interfaces of a striped FI_TCP_IFACE belong to
		 * the first one's info. */
		if (tcp_env.iface && strchr(tcp_env.iface, ',') && i &&
		    strcmp(v[i].name, v[0].name))
			continue;
		ret = tcp_info_one(&v[i], NULL, NULL, &fi);
		if (ret) {
			fi_freeinfo(head);
			free(v);
			return ret;
		}
		if (tail)
			tail->next = fi;
		else
			head = fi;
		tail = fi;
	}
	free(v);
	if (!head) {
		FI_INFO(&tcp_prov, FI_LOG_CORE, "no usable interface%s%s\n",
			tcp_env.iface ? " in FI_TCP_IFACE=" : "",
			tcp_env.iface ? tcp_env.iface : "");
		return -FI_ENODATA;
	}
	*info = head;
	return 0;
}

/* A sockaddr from hints, of family (0: any of ours). */
static int tcp_hint_addr(const void *addr, size_t len, int family,
			 union tcp_addr *out)
{
	const struct sockaddr *sa = addr;

	if (!addr)
		return 1;
	if (len < sizeof(sa_family_t) ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    (family && sa->sa_family != family) ||
	    len != (sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
					       sizeof(struct sockaddr_in6))) {
		FI_INFO(&tcp_prov, FI_LOG_CORE,
			"hints address is not an IPv4/IPv6 sockaddr\n");
		return -FI_ENODATA;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, addr, len);
	tcp_addr_normalize(out);
	return 0;
}

static int tcp_getinfo_hints(int family, const struct fi_info *hints,
			     struct fi_info **info)
{
	union tcp_addr src, dest;
	int has_src, has_dest;

	has_src = tcp_hint_addr(hints ? hints->src_addr : NULL,
				hints ? hints->src_addrlen : 0, family, &src);
	if (has_src < 0)
		return has_src;
	has_dest = tcp_hint_addr(hints ? hints->dest_addr : NULL,
				 hints ? hints->dest_addrlen : 0, family, &dest);
	if (has_dest < 0)
		return has_dest;
	if (!has_src && !has_dest && src.sa.sa_family != dest.sa.sa_family)
		return -FI_ENODATA;
	if (!has_dest)
		return tcp_info_dest(&dest, has_src ? NULL : &src, info);
	if (!has_src)
		return tcp_info_src(&src, NULL, info);
	return tcp_info_all(family, info);
}

static int tcp_getinfo_node(int family, const char *node, const char *service,
			    uint64_t flags, struct fi_info **info)
{
	union tcp_addr a;
	struct tcp_iface *v;
	size_t n;
	int ret;

	if (!(flags & FI_SOURCE)) {
		if (!node) {
			FI_INFO(&tcp_prov, FI_LOG_CORE,
				"a service without a node names no peer\n");
			return -FI_ENODATA;
		}
		ret = tcp_addr_resolve(node, service, family, false, &a);
		return ret ? ret : tcp_info_dest(&a, NULL, info);
	}
	if (node) {
		ret = tcp_addr_resolve(node, service, family, true, &a);
		return ret ? ret : tcp_info_src(&a, NULL, info);
	}
	/* FI_SOURCE with a service only: that port on the best interface. */
	ret = tcp_iface_list(family, &v, &n);
	if (ret)
		return ret;
	if (!n) {
		free(v);
		return -FI_ENODATA;
	}
	family = v[0].addr.sa.sa_family;
	free(v);
	/* The wildcard address with the port: tcp_info_src puts the best
	 * interface's address in its place. */
	ret = tcp_addr_resolve(NULL, service, family, true, &a);
	return ret ? ret : tcp_info_src(&a, NULL, info);
}

static int tcp_getinfo(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       struct fi_info **info)
{
	int family = 0;

	(void)version;
	if (hints && hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_SOCKADDR) {
		family = tcp_format_family(hints->addr_format);
		if (!family) {
			FI_INFO(&tcp_prov, FI_LOG_CORE,
				"addr_format %u: tcp speaks FI_SOCKADDR_IN "
				"and FI_SOCKADDR_IN6\n", hints->addr_format);
			return -FI_ENODATA;
		}
	}
	if (node || service)
		return tcp_getinfo_node(family, node, service, flags, info);
	return tcp_getinfo_hints(family, hints, info);
}

struct fi_provider *tcp_prov_init(void)
{
	tcp_params_init();
	util_coll_params_init();
	return &tcp_prov;
}
