/* SPDX-License-Identifier: MIT */
/*
 * fi_tostr / fi_tostr_r: YAML-like text for every enum fi_type, identical
 * to libfabric 1.17's output for the same input (core/test/
 * test_tostr_golden.sh diffs the two). Attribute structs are described by
 * field tables so that each printed line is one table row; fi_info, fids and
 * scalars have their own printers, chosen through a table indexed by type.
 */
#include "weft/compat.h"
#include "weft/core.h"
#include "weft/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "core/tostr.h"

/* fi_tostr's buffer size in libfabric; output longer than this is cut. */
#define WEFT_TOSTR_BUFSIZE WEFT_TBUF_SIZE

/* FI_TYPE_VERSION names the libfabric release whose ABI and output weft
 * reproduces; fi_info --version prints it as "libfabric: ...". */
#define WEFT_TOSTR_LIBFABRIC_VERSION "1.17.0"

void weft_sb_printf(struct weft_strbuf *sb, const char *fmt, ...)
{
	size_t len = strnlen(sb->buf, sb->size);
	va_list ap;

	/* ofi_strncatf leaves one byte unused at the end of the buffer; the
	 * truncated output of fi_tostr_r must match it to the byte. */
	if (len + 1 >= sb->size)
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + len, sb->size - 1 - len, fmt, ap);
	va_end(ap);
}

void weft_sb_trim_comma(struct weft_strbuf *sb)
{
	size_t len = strlen(sb->buf);

	if (len >= 2 && !strcmp(sb->buf + len - 2, ", "))
		sb->buf[len - 2] = '\0';
}

/* ---- attribute structs as field tables -------------------------------- */

enum field_kind {
	FIELD_SIZE,		/* size_t, decimal */
	FIELD_CTX_CNT,		/* size_t, or FI_SHARED_CONTEXT */
	FIELD_U32_DEC,		/* uint32_t printed as int (protocol_version) */
	FIELD_U32_HEX,		/* uint32_t, 0x%x (tclass) */
	FIELD_U64_TAG,		/* uint64_t, 0x%016llx (mem_tag_format) */
	FIELD_PTR_HEX,		/* pointer printed as 0x%x of its low bits */
	FIELD_STR,		/* char *, "(null)" when NULL */
	FIELD_VERSION,		/* uint32_t FI_VERSION, major.minor */
	FIELD_ENUM,		/* int enum, names */
	FIELD_ENUM_U32,		/* uint32_t enum (protocol), names */
	FIELD_FLAGS,		/* uint64_t flags, [ A, B ] */
	FIELD_FLAGS_INT,	/* int flags (mr_mode), [ A, B ] */
	FIELD_COMP_ORDER,	/* uint64_t comp_order, [ ... ] */
};

struct field {
	const char *name;
	size_t offset;
	enum field_kind kind;
	const struct weft_tostr_names *names;
};

struct struct_desc {
	const char *tag;	/* "fi_tx_attr" */
	const struct field *fields;
	size_t count;
};

#define F(type, member, kind) \
	{ #member, offsetof(type, member), kind, NULL }
#define FN(type, member, kind, names) \
	{ #member, offsetof(type, member), kind, &(names) }

static const struct field tx_fields[] = {
	FN(struct fi_tx_attr, caps, FIELD_FLAGS, weft_names_caps),
	FN(struct fi_tx_attr, mode, FIELD_FLAGS, weft_names_mode),
	FN(struct fi_tx_attr, op_flags, FIELD_FLAGS, weft_names_op_flags),
	FN(struct fi_tx_attr, msg_order, FIELD_FLAGS, weft_names_msg_order),
	F(struct fi_tx_attr, comp_order, FIELD_COMP_ORDER),
	F(struct fi_tx_attr, inject_size, FIELD_SIZE),
	F(struct fi_tx_attr, size, FIELD_SIZE),
	F(struct fi_tx_attr, iov_limit, FIELD_SIZE),
	F(struct fi_tx_attr, rma_iov_limit, FIELD_SIZE),
	F(struct fi_tx_attr, tclass, FIELD_U32_HEX),
};

static const struct field rx_fields[] = {
	FN(struct fi_rx_attr, caps, FIELD_FLAGS, weft_names_caps),
	FN(struct fi_rx_attr, mode, FIELD_FLAGS, weft_names_mode),
	FN(struct fi_rx_attr, op_flags, FIELD_FLAGS, weft_names_op_flags),
	FN(struct fi_rx_attr, msg_order, FIELD_FLAGS, weft_names_msg_order),
	F(struct fi_rx_attr, comp_order, FIELD_COMP_ORDER),
	F(struct fi_rx_attr, total_buffered_recv, FIELD_SIZE),
	F(struct fi_rx_attr, size, FIELD_SIZE),
	F(struct fi_rx_attr, iov_limit, FIELD_SIZE),
};

static const struct field ep_fields[] = {
	FN(struct fi_ep_attr, type, FIELD_ENUM, weft_names_ep_type),
	FN(struct fi_ep_attr, protocol, FIELD_ENUM_U32, weft_names_protocol),
	F(struct fi_ep_attr, protocol_version, FIELD_U32_DEC),
	F(struct fi_ep_attr, max_msg_size, FIELD_SIZE),
	F(struct fi_ep_attr, msg_prefix_size, FIELD_SIZE),
	F(struct fi_ep_attr, max_order_raw_size, FIELD_SIZE),
	F(struct fi_ep_attr, max_order_war_size, FIELD_SIZE),
	F(struct fi_ep_attr, max_order_waw_size, FIELD_SIZE),
	F(struct fi_ep_attr, mem_tag_format, FIELD_U64_TAG),
	F(struct fi_ep_attr, tx_ctx_cnt, FIELD_CTX_CNT),
	F(struct fi_ep_attr, rx_ctx_cnt, FIELD_CTX_CNT),
	F(struct fi_ep_attr, auth_key_size, FIELD_SIZE),
};

static const struct field domain_fields[] = {
	F(struct fi_domain_attr, domain, FIELD_PTR_HEX),
	F(struct fi_domain_attr, name, FIELD_STR),
	FN(struct fi_domain_attr, threading, FIELD_ENUM, weft_names_threading),
	FN(struct fi_domain_attr, control_progress, FIELD_ENUM,
	   weft_names_progress),
	FN(struct fi_domain_attr, data_progress, FIELD_ENUM,
	   weft_names_progress),
	FN(struct fi_domain_attr, resource_mgmt, FIELD_ENUM,
	   weft_names_resource_mgmt),
	FN(struct fi_domain_attr, av_type, FIELD_ENUM, weft_names_av_type),
	FN(struct fi_domain_attr, mr_mode, FIELD_FLAGS_INT, weft_names_mr_mode),
	F(struct fi_domain_attr, mr_key_size, FIELD_SIZE),
	F(struct fi_domain_attr, cq_data_size, FIELD_SIZE),
	F(struct fi_domain_attr, cq_cnt, FIELD_SIZE),
	F(struct fi_domain_attr, ep_cnt, FIELD_SIZE),
	F(struct fi_domain_attr, tx_ctx_cnt, FIELD_SIZE),
	F(struct fi_domain_attr, rx_ctx_cnt, FIELD_SIZE),
	F(struct fi_domain_attr, max_ep_tx_ctx, FIELD_SIZE),
	F(struct fi_domain_attr, max_ep_rx_ctx, FIELD_SIZE),
	F(struct fi_domain_attr, max_ep_stx_ctx, FIELD_SIZE),
	F(struct fi_domain_attr, max_ep_srx_ctx, FIELD_SIZE),
	F(struct fi_domain_attr, cntr_cnt, FIELD_SIZE),
	F(struct fi_domain_attr, mr_iov_limit, FIELD_SIZE),
	FN(struct fi_domain_attr, caps, FIELD_FLAGS, weft_names_caps),
	FN(struct fi_domain_attr, mode, FIELD_FLAGS, weft_names_mode),
	F(struct fi_domain_attr, auth_key_size, FIELD_SIZE),
	F(struct fi_domain_attr, max_err_data, FIELD_SIZE),
	F(struct fi_domain_attr, mr_cnt, FIELD_SIZE),
	F(struct fi_domain_attr, tclass, FIELD_U32_HEX),
};

static const struct field fabric_fields[] = {
	F(struct fi_fabric_attr, name, FIELD_STR),
	F(struct fi_fabric_attr, prov_name, FIELD_STR),
	F(struct fi_fabric_attr, prov_version, FIELD_VERSION),
	F(struct fi_fabric_attr, api_version, FIELD_VERSION),
};

#define DESC(tag, fields) { tag, fields, WEFT_ARRAY_SIZE(fields) }

static const struct struct_desc tx_desc = DESC("fi_tx_attr", tx_fields);
static const struct struct_desc rx_desc = DESC("fi_rx_attr", rx_fields);
static const struct struct_desc ep_desc = DESC("fi_ep_attr", ep_fields);
static const struct struct_desc domain_desc =
	DESC("fi_domain_attr", domain_fields);
static const struct struct_desc fabric_desc =
	DESC("fi_fabric_attr", fabric_fields);

#define FIELD_READ(base, f, type) \
	({ type v_; memcpy(&v_, (const char *)(base) + (f)->offset, \
			   sizeof(v_)); v_; })

static void field_print_value(struct weft_strbuf *sb, const void *base,
			      const struct field *f)
{
	switch (f->kind) {
	case FIELD_SIZE:
		weft_sb_printf(sb, "%zu", FIELD_READ(base, f, size_t));
		break;
	case FIELD_CTX_CNT: {
		size_t cnt = FIELD_READ(base, f, size_t);

		if (cnt == FI_SHARED_CONTEXT)
			weft_sb_printf(sb, "FI_SHARED_CONTEXT");
		else
			weft_sb_printf(sb, "%zu", cnt);
		break;
	}
	case FIELD_U32_DEC:
		weft_sb_printf(sb, "%d", (int)FIELD_READ(base, f, uint32_t));
		break;
	case FIELD_U32_HEX:
		weft_sb_printf(sb, "0x%x", FIELD_READ(base, f, uint32_t));
		break;
	case FIELD_U64_TAG:
		weft_sb_printf(sb, "0x%016llx",
			       (unsigned long long)FIELD_READ(base, f, uint64_t));
		break;
	case FIELD_PTR_HEX:
		weft_sb_printf(sb, "0x%x", (unsigned int)(uintptr_t)
			       FIELD_READ(base, f, const void *));
		break;
	case FIELD_STR: {
		const char *s = FIELD_READ(base, f, const char *);

		weft_sb_printf(sb, "%s", s ? s : "(null)");
		break;
	}
	case FIELD_VERSION: {
		uint32_t v = FIELD_READ(base, f, uint32_t);

		weft_sb_printf(sb, "%d.%d", FI_MAJOR(v), FI_MINOR(v));
		break;
	}
	case FIELD_ENUM:
		weft_tostr_enum(sb, f->names,
				(uint64_t)(int64_t)FIELD_READ(base, f, int));
		break;
	case FIELD_ENUM_U32:
		weft_tostr_enum(sb, f->names, FIELD_READ(base, f, uint32_t));
		break;
	case FIELD_FLAGS:
		weft_tostr_flags(sb, f->names, FIELD_READ(base, f, uint64_t));
		break;
	case FIELD_FLAGS_INT:
		weft_tostr_flags(sb, f->names,
				 (uint64_t)(int64_t)FIELD_READ(base, f, int));
		break;
	case FIELD_COMP_ORDER:
		weft_tostr_comp_order(sb, FIELD_READ(base, f, uint64_t));
		break;
	}
}

static int field_is_list(const struct field *f)
{
	return f->kind == FIELD_FLAGS || f->kind == FIELD_FLAGS_INT ||
	       f->kind == FIELD_COMP_ORDER;
}

static void struct_print(struct weft_strbuf *sb, const struct struct_desc *d,
			 const void *base, const char *prefix)
{
	size_t i;

	if (!base) {
		weft_sb_printf(sb, "%s%s: (null)\n", prefix, d->tag);
		return;
	}
	weft_sb_printf(sb, "%s%s:\n", prefix, d->tag);
	for (i = 0; i < d->count; i++) {
		const struct field *f = &d->fields[i];

		weft_sb_printf(sb, "%s" WEFT_TOSTR_TAB "%s: %s", prefix,
			       f->name, field_is_list(f) ? "[ " : "");
		field_print_value(sb, base, f);
		weft_sb_printf(sb, "%s\n", field_is_list(f) ? " ]" : "");
	}
}

/* ---- fids and fi_info -------------------------------------------------- */

static void fid_print(struct weft_strbuf *sb, const char *label,
		      const struct fid *fid)
{
	const struct fi_ops *ops = fid ? fid->ops : NULL;

	/* a fid may describe itself through ops->tostr, when its ops table
	 * is new enough to have that member (FI_CHECK_OP) */
	if (!ops || ops->size <= offsetof(struct fi_ops, tostr) ||
	    !ops->tostr) {
		weft_sb_printf(sb, "%s%p\n", label, (const void *)fid);
		return;
	}
	ops->tostr(fid, sb->buf, sb->size - strnlen(sb->buf, sb->size));
}

static void info_print(struct weft_strbuf *sb, const struct fi_info *info)
{
	const char *tab = WEFT_TOSTR_TAB;

	weft_sb_printf(sb, "fi_info:\n");
	weft_sb_printf(sb, "%scaps: [ ", tab);
	weft_tostr_flags(sb, &weft_names_caps, info->caps);
	weft_sb_printf(sb, " ]\n");
	weft_sb_printf(sb, "%smode: [ ", tab);
	weft_tostr_flags(sb, &weft_names_mode, info->mode);
	weft_sb_printf(sb, " ]\n");
	weft_sb_printf(sb, "%saddr_format: ", tab);
	weft_tostr_enum(sb, &weft_names_addr_format, info->addr_format);
	weft_sb_printf(sb, "\n");
	weft_sb_printf(sb, "%ssrc_addrlen: %zu\n", tab, info->src_addrlen);
	weft_sb_printf(sb, "%sdest_addrlen: %zu\n", tab, info->dest_addrlen);
	weft_sb_printf(sb, "%ssrc_addr: ", tab);
	weft_tostr_addr(sb, info->addr_format, info->src_addr);
	weft_sb_printf(sb, "\n");
	weft_sb_printf(sb, "%sdest_addr: ", tab);
	weft_tostr_addr(sb, info->addr_format, info->dest_addr);
	weft_sb_printf(sb, "\n");
	fid_print(sb, WEFT_TOSTR_TAB "handle: ", info->handle);

	struct_print(sb, &tx_desc, info->tx_attr, tab);
	struct_print(sb, &rx_desc, info->rx_attr, tab);
	struct_print(sb, &ep_desc, info->ep_attr, tab);
	struct_print(sb, &domain_desc, info->domain_attr, tab);
	struct_print(sb, &fabric_desc, info->fabric_attr, tab);
	fid_print(sb, WEFT_TOSTR_TAB "nic: ",
		  info->nic ? &info->nic->fid : NULL);
}

/* ---- one printer per fi_type ------------------------------------------ */

struct type_printer {
	void (*print)(struct weft_strbuf *sb, const void *data,
		      const struct type_printer *tp);
	const void *arg;	/* names table or struct_desc */
};

static void print_info(struct weft_strbuf *sb, const void *data,
		       const struct type_printer *tp)
{
	info_print(sb, data);
}

static void print_struct(struct weft_strbuf *sb, const void *data,
			 const struct type_printer *tp)
{
	struct_print(sb, tp->arg, data, "");
}

static void print_enum_int(struct weft_strbuf *sb, const void *data,
			   const struct type_printer *tp)
{
	int v;

	memcpy(&v, data, sizeof(v));
	weft_tostr_enum(sb, tp->arg, (uint64_t)(int64_t)v);
}

static void print_enum_u32(struct weft_strbuf *sb, const void *data,
			   const struct type_printer *tp)
{
	uint32_t v;

	memcpy(&v, data, sizeof(v));
	weft_tostr_enum(sb, tp->arg, v);
}

static void print_flags_u64(struct weft_strbuf *sb, const void *data,
			    const struct type_printer *tp)
{
	uint64_t v;

	memcpy(&v, data, sizeof(v));
	weft_tostr_flags(sb, tp->arg, v);
}

/* mr_mode was an enum before it became flags: it is an int */
static void print_flags_int(struct weft_strbuf *sb, const void *data,
			    const struct type_printer *tp)
{
	int v;

	memcpy(&v, data, sizeof(v));
	weft_tostr_flags(sb, tp->arg, (uint64_t)(int64_t)v);
}

static void print_version(struct weft_strbuf *sb, const void *data,
			  const struct type_printer *tp)
{
	weft_sb_printf(sb, "%s", WEFT_TOSTR_LIBFABRIC_VERSION);
}

static void print_fid(struct weft_strbuf *sb, const void *data,
		      const struct type_printer *tp)
{
	fid_print(sb, "fid: ", data);
}

#define ENUM_INT(names) { print_enum_int, &(names) }
#define ENUM_U32(names) { print_enum_u32, &(names) }
#define FLAGS(names) { print_flags_u64, &(names) }
#define STRUCT(desc) { print_struct, &(desc) }

static const struct type_printer type_printers[] = {
	[FI_TYPE_INFO] = { print_info, NULL },
	[FI_TYPE_EP_TYPE] = ENUM_INT(weft_names_ep_type),
	[FI_TYPE_CAPS] = FLAGS(weft_names_caps),
	[FI_TYPE_OP_FLAGS] = FLAGS(weft_names_op_flags),
	[FI_TYPE_ADDR_FORMAT] = ENUM_U32(weft_names_addr_format),
	[FI_TYPE_TX_ATTR] = STRUCT(tx_desc),
	[FI_TYPE_RX_ATTR] = STRUCT(rx_desc),
	[FI_TYPE_EP_ATTR] = STRUCT(ep_desc),
	[FI_TYPE_DOMAIN_ATTR] = STRUCT(domain_desc),
	[FI_TYPE_FABRIC_ATTR] = STRUCT(fabric_desc),
	[FI_TYPE_THREADING] = ENUM_INT(weft_names_threading),
	[FI_TYPE_PROGRESS] = ENUM_INT(weft_names_progress),
	[FI_TYPE_PROTOCOL] = ENUM_U32(weft_names_protocol),
	[FI_TYPE_MSG_ORDER] = FLAGS(weft_names_msg_order),
	[FI_TYPE_MODE] = FLAGS(weft_names_mode),
	[FI_TYPE_AV_TYPE] = ENUM_INT(weft_names_av_type),
	[FI_TYPE_ATOMIC_TYPE] = ENUM_INT(weft_names_atomic_type),
	[FI_TYPE_ATOMIC_OP] = ENUM_INT(weft_names_atomic_op),
	[FI_TYPE_VERSION] = { print_version, NULL },
	[FI_TYPE_EQ_EVENT] = ENUM_INT(weft_names_eq_event),
	[FI_TYPE_CQ_EVENT_FLAGS] = FLAGS(weft_names_cq_event_flags),
	[FI_TYPE_MR_MODE] = { print_flags_int, &weft_names_mr_mode },
	[FI_TYPE_OP_TYPE] = ENUM_INT(weft_names_op_type),
	[FI_TYPE_FID] = { print_fid, NULL },
	[FI_TYPE_COLLECTIVE_OP] = ENUM_INT(weft_names_collective_op),
	[FI_TYPE_HMEM_IFACE] = ENUM_INT(weft_names_hmem_iface),
	[FI_TYPE_CQ_FORMAT] = ENUM_INT(weft_names_cq_format),
	[FI_TYPE_LOG_LEVEL] = ENUM_INT(weft_names_log_level),
	[FI_TYPE_LOG_SUBSYS] = ENUM_INT(weft_names_log_subsys),
};

WEFT_EXPORT char *fi_tostr_r(char *buf, size_t len, const void *data,
			     enum fi_type datatype)
{
	struct weft_strbuf sb = { .buf = buf, .size = len };
	const struct type_printer *tp;

	if (!data || !buf || !len) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"fi_tostr: nothing to print into or from (data %p, buf %p, len %zu)\n",
			data, (void *)buf, len);
		return NULL;
	}

	buf[0] = '\0';
	/* compare as unsigned so that negative types land in "Unknown" */
	if ((unsigned int)datatype >= WEFT_ARRAY_SIZE(type_printers) ||
	    !type_printers[datatype].print) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"fi_tostr: unknown fi_type %d\n", (int)datatype);
		weft_sb_printf(&sb, "Unknown type");
		return buf;
	}
	tp = &type_printers[datatype];
	tp->print(&sb, data, tp);
	return buf;
}

WEFT_EXPORT char *fi_tostr(const void *data, enum fi_type datatype)
{
	/* one buffer per thread: libfabric's is process-wide, which makes
	 * concurrent callers overwrite each other's strings */
	return fi_tostr_r(weft_thread_buf(WEFT_TBUF_TOSTR), WEFT_TOSTR_BUFSIZE,
			  data, datatype);
}
