/* SPDX-License-Identifier: MIT */
/*
 * Internals of fi_tostr (core/tostr*.c). The output must be byte-identical
 * to libfabric 1.17's, including how it truncates into a short buffer, so
 * every write goes through weft_sb_printf, which appends exactly as
 * libfabric's ofi_strncatf does (at most size - 2 characters in total).
 */
#ifndef WEFT_TOSTR_H
#define WEFT_TOSTR_H

#include "weft/compat.h"

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>

/* Indentation step of the YAML-like output (no tabs in YAML). */
#define WEFT_TOSTR_TAB "    "

struct weft_strbuf {
	char *buf;
	size_t size;	/* > 0; buf always holds a NUL within size */
};

void weft_sb_printf(struct weft_strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Drop a trailing ", " left by the last flag of a list. */
void weft_sb_trim_comma(struct weft_strbuf *sb);

/* One name per value: enums match exactly, flag tables test bits in
 * table order (which is libfabric's print order, not bit order). */
struct weft_tostr_name {
	uint64_t value;
	const char *name;
};

struct weft_tostr_names {
	const struct weft_tostr_name *entries;
	size_t count;
	/* unknown values with FI_PROV_SPECIFIC set print as such */
	unsigned prov_specific : 1;
};

extern const struct weft_tostr_names weft_names_ep_type;
extern const struct weft_tostr_names weft_names_caps;
extern const struct weft_tostr_names weft_names_op_flags;
extern const struct weft_tostr_names weft_names_addr_format;
extern const struct weft_tostr_names weft_names_threading;
extern const struct weft_tostr_names weft_names_progress;
extern const struct weft_tostr_names weft_names_protocol;
extern const struct weft_tostr_names weft_names_msg_order;
extern const struct weft_tostr_names weft_names_mode;
extern const struct weft_tostr_names weft_names_resource_mgmt;
extern const struct weft_tostr_names weft_names_av_type;
extern const struct weft_tostr_names weft_names_mr_mode;
extern const struct weft_tostr_names weft_names_atomic_type;
extern const struct weft_tostr_names weft_names_atomic_op;
extern const struct weft_tostr_names weft_names_eq_event;
extern const struct weft_tostr_names weft_names_cq_event_flags;
extern const struct weft_tostr_names weft_names_op_type;
extern const struct weft_tostr_names weft_names_collective_op;
extern const struct weft_tostr_names weft_names_hmem_iface;
extern const struct weft_tostr_names weft_names_cq_format;
extern const struct weft_tostr_names weft_names_log_level;
extern const struct weft_tostr_names weft_names_log_subsys;

void weft_tostr_enum(struct weft_strbuf *sb,
		     const struct weft_tostr_names *names, uint64_t value);
void weft_tostr_flags(struct weft_strbuf *sb,
		      const struct weft_tostr_names *names, uint64_t flags);
/* comp_order: FI_ORDER_NONE/FI_ORDER_STRICT are values, not bits */
void weft_tostr_comp_order(struct weft_strbuf *sb, uint64_t flags);

/* An address as the URL-like string of its format ("fi_sockaddr_in://..");
 * NULL prints "(null)", an address the format cannot describe prints
 * nothing. */
void weft_tostr_addr(struct weft_strbuf *sb, uint32_t addr_format,
		     const void *addr);

#endif /* WEFT_TOSTR_H */
