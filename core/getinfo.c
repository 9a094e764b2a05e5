/* SPDX-License-Identifier: MIT */
/*
 * fi_getinfo: validate the request, ask each provider that passes the
 * name filters for its candidates, keep those that serve the hints
 * (weft_info_match), in provider preference order.
 */
#include "weft/compat.h"
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "core_priv.h"

#define GETINFO_FLAGS (FI_NUMERICHOST | FI_SOURCE | FI_PROV_ATTR_ONLY)

struct getinfo_req {
	uint32_t version;
	const char *node;
	const char *service;
	uint64_t flags;
	const struct fi_info *hints;
	struct weft_filter env_filter;		/* FI_PROVIDER */
	struct weft_filter hint_filter;		/* hints->fabric_attr->prov_name */
	struct fi_info *head, **tail;
};

static int getinfo_version_ok(uint32_t version)
{
	return FI_MAJOR(version) == FI_MAJOR_VERSION &&
	       FI_MINOR(version) <= FI_MINOR_VERSION;
}

static int getinfo_bad_addr(const char *which, uint32_t format,
			    const void *addr, size_t len)
{
	const struct sockaddr *sa = addr;
	size_t want = 0;

	if (!addr && !len)
		return 0;
	if (!addr || !len) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"hints: %s is %s but its length is %zu\n", which,
			addr ? "set" : "NULL", len);
		return -FI_EINVAL;
	}
	switch (format) {
	case FI_SOCKADDR:
		if (len >= sizeof(sa_family_t) && sa->sa_family == AF_INET)
			want = sizeof(struct sockaddr_in);
		else if (len >= sizeof(sa_family_t) && sa->sa_family == AF_INET6)
			want = sizeof(struct sockaddr_in6);
		else
			want = (size_t)-1;
		break;
	case FI_SOCKADDR_IN:
		want = len >= sizeof(sa_family_t) && sa->sa_family == AF_INET ?
		       sizeof(struct sockaddr_in) : (size_t)-1;
		break;
	case FI_SOCKADDR_IN6:
		want = len >= sizeof(sa_family_t) && sa->sa_family == AF_INET6 ?
		       sizeof(struct sockaddr_in6) : (size_t)-1;
		break;
	case FI_ADDR_STR:
		if (!memchr(addr, '\0', len)) {
			FI_WARN(&weft_core_prov, FI_LOG_CORE,
				"hints: %s is FI_ADDR_STR but not terminated within %zu bytes\n",
				which, len);
			return -FI_EINVAL;
		}
		return 0;
	default:
		/* Other formats are the provider's to judge. */
		return 0;
	}
	if (want != len) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"hints: %s of %zu bytes does not fit addr_format %u\n",
			which, len, format);
		return -FI_EINVAL;
	}
	return 0;
}

static int getinfo_bad_caps(const char *which, uint64_t caps)
{
	uint64_t unknown = caps & ~weft_caps_known();

	if (!unknown)
		return 0;
	FI_WARN(&weft_core_prov, FI_LOG_CORE,
		"hints: %s has unknown capability bits 0x%llx\n", which,
		(unsigned long long)unknown);
	return -FI_ENODATA;
}

static int getinfo_check_hints(const struct fi_info *hints, uint64_t flags)
{
	int ret;

	ret = getinfo_bad_caps("caps", hints->caps);
	if (!ret && hints->tx_attr)
		ret = getinfo_bad_caps("tx_attr->caps", hints->tx_attr->caps);
	if (!ret && hints->rx_attr)
		ret = getinfo_bad_caps("rx_attr->caps", hints->rx_attr->caps);
	if (!ret && hints->domain_attr)
		ret = getinfo_bad_caps("domain_attr->caps", hints->domain_attr->caps);
	if (ret)
		return ret;
	/* fi_getinfo(3): src_addr in hints is ignored under FI_SOURCE. */
	if (!(flags & FI_SOURCE)) {
		ret = getinfo_bad_addr("src_addr", hints->addr_format,
				       hints->src_addr, hints->src_addrlen);
		if (ret)
			return ret;
	}
	return getinfo_bad_addr("dest_addr", hints->addr_format,
				hints->dest_addr, hints->dest_addrlen);
}

static int getinfo_check_args(uint32_t version, uint64_t flags,
			      const struct fi_info *hints, struct fi_info **info)
{
	if (!info) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE, "fi_getinfo: info is NULL\n");
		return -FI_EINVAL;
	}
	if (flags & ~GETINFO_FLAGS) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"fi_getinfo: unknown flags 0x%llx\n",
			(unsigned long long)(flags & ~GETINFO_FLAGS));
		return -FI_EINVAL;
	}
	if (!getinfo_version_ok(version)) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"fi_getinfo: API %u.%u requested; weft implements 1.0 to %d.%d\n",
			FI_MAJOR(version), FI_MINOR(version),
			FI_MAJOR_VERSION, FI_MINOR_VERSION);
		return -FI_ENODATA;
	}
	return hints ? getinfo_check_hints(hints, flags) : 0;
}

static int getinfo_init_filters(struct getinfo_req *req)
{
	const char *prov_name = req->hints && req->hints->fabric_attr ?
				req->hints->fabric_attr->prov_name : NULL;
	/* Read on every call (so a process may change it between calls),
	 * quietly: fi_param_get would log each read at FI_LOG_INFO. */
	const char *env = weft_param_env(&weft_core_prov, "provider");
	int ret;

	ret = weft_filter_init(&req->env_filter, env);
	if (ret == -FI_EINVAL)
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"FI_PROVIDER=%s is malformed (expected name[,name] or ^name[,name]); no provider matches\n",
			env);
	else if (ret)
		return ret;

	ret = weft_filter_init(&req->hint_filter, prov_name);
	if (ret == -FI_EINVAL)
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"hints->fabric_attr->prov_name=%s is malformed; no provider matches\n",
			prov_name);
	else if (ret) {
		weft_filter_fini(&req->env_filter);
		return ret;
	}
	return 0;
}

static void getinfo_append(struct getinfo_req *req, struct fi_info *info)
{
	info->next = NULL;
	*req->tail = info;
	req->tail = &info->next;
}

static int getinfo_stamp(struct fi_info *info, const struct fi_provider *prov,
			 uint32_t version)
{
	struct fi_fabric_attr *attr = info->fabric_attr;

	if (!attr) {
		attr = calloc(1, sizeof(*attr));
		if (!attr)
			return -FI_ENOMEM;
		info->fabric_attr = attr;
	}
	free(attr->prov_name);
	attr->prov_name = strdup(prov->name);
	if (!attr->prov_name)
		return -FI_ENOMEM;
	attr->prov_version = prov->version;
	attr->api_version = version;
	return 0;
}

static int getinfo_prov_attr_only(struct getinfo_req *req,
				  const struct fi_provider *prov)
{
	struct fi_info *info = fi_dupinfo(NULL);

	if (!info)
		return -FI_ENOMEM;
	if (getinfo_stamp(info, prov, req->version)) {
		fi_freeinfo(info);
		return -FI_ENOMEM;
	}
	getinfo_append(req, info);
	return 0;
}

static int getinfo_from_prov(struct getinfo_req *req, struct fi_provider *prov)
{
	struct fi_info *list = NULL, *cur, *next;
	int ret;

	ret = prov->getinfo(req->version, req->node, req->service, req->flags,
			    req->hints, &list);
	if (ret) {
		FI_INFO(&weft_core_prov, FI_LOG_CORE,
			"provider %s: getinfo returned %d\n", prov->name, ret);
		fi_freeinfo(list);
		return ret == -FI_ENOMEM ? ret : 0;
	}
	for (cur = list; cur; cur = next) {
		next = cur->next;
		cur->next = NULL;
		ret = getinfo_stamp(cur, prov, req->version);
		if (ret) {
			fi_freeinfo(cur);
			fi_freeinfo(next);
			return ret;
		}
		if (weft_info_match(req->version, req->hints, cur))
			getinfo_append(req, cur);
		else
			fi_freeinfo(cur);
	}
	return 0;
}

static int getinfo_prov_selected(struct getinfo_req *req,
				 const struct fi_provider *prov)
{
	if (!weft_filter_match(&req->env_filter, prov->name) ||
	    !weft_filter_match(&req->hint_filter, prov->name))
		return 0;
	if (FI_VERSION_LT(prov->fi_version, req->version)) {
		FI_INFO(&weft_core_prov, FI_LOG_CORE,
			"provider %s implements API %u.%u, older than the %u.%u asked\n",
			prov->name, FI_MAJOR(prov->fi_version),
			FI_MINOR(prov->fi_version), FI_MAJOR(req->version),
			FI_MINOR(req->version));
		return 0;
	}
	return 1;
}

static int getinfo_collect(struct getinfo_req *req)
{
	struct fi_provider **provs;
	size_t count;
	int ret;

	ret = weft_prov_snapshot(&provs, &count);
	if (ret)
		return ret;
	for (size_t i = 0; i < count && !ret; i++) {
		if (!getinfo_prov_selected(req, provs[i]))
			continue;
		if (req->flags & FI_PROV_ATTR_ONLY)
			ret = getinfo_prov_attr_only(req, provs[i]);
		else
			ret = getinfo_from_prov(req, provs[i]);
	}
	free(provs);
	return ret;
}

WEFT_EXPORT
int fi_getinfo(uint32_t version, const char *node, const char *service,
	       uint64_t flags, const struct fi_info *hints,
	       struct fi_info **info)
{
	struct getinfo_req req = {
		.version = version, .node = node, .service = service,
		.flags = flags, .hints = hints,
	};
	int ret;

	weft_init();
	ret = getinfo_check_args(version, flags, hints, info);
	if (ret)
		goto out;
	*info = NULL;
	if (weft_init_running())
		return -FI_ENODATA;

	ret = getinfo_init_filters(&req);
	if (ret)
		goto out;
	req.tail = &req.head;
	ret = getinfo_collect(&req);
	weft_filter_fini(&req.hint_filter);
	weft_filter_fini(&req.env_filter);
	if (ret) {
		fi_freeinfo(req.head);
		goto out;
	}
	if (!req.head)
		return -FI_ENODATA;
	*info = req.head;
	return 0;
out:
	if (info)
		*info = NULL;
	return ret;
}
