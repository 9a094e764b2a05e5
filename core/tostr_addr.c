/* SPDX-License-Identifier: MIT */
/*
 * Addresses in fi_tostr output: one URL-like form per address format, as
 * libfabric 1.17 prints them (and as FI_ADDR_STR parsers read them back).
 * Provider address blobs are read with memcpy at fixed offsets, because the
 * caller's buffer carries no alignment promise.
 */
#include "weft/compat.h"

#include <arpa/inet.h>
#include <endian.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "core/tostr.h"

/* librdmacm's struct sockaddr_ib, which FI_SOCKADDR_IB addresses hold */
struct weft_sockaddr_ib {
	unsigned short sib_family;
	uint16_t sib_pkey;
	uint32_t sib_flowinfo;
	uint8_t sib_addr[16];
	uint64_t sib_sid;
	uint64_t sib_sid_mask;
	uint64_t sib_scope_id;
};

#define WEFT_ADDRSTRLEN (INET6_ADDRSTRLEN + 8)

/* Where an address string goes: the rest of the buffer, written with
 * snprintf semantics (one character more than weft_sb_printf allows,
 * which is what libfabric's ofi_straddr does). */
struct addr_out {
	char *p;
	size_t len;
};

static void addr_printf(struct addr_out *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void addr_printf(struct addr_out *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->p, out->len, fmt, ap);
	va_end(ap);
}

static uint64_t addr_u64(const void *addr, size_t index)
{
	uint64_t v;

	memcpy(&v, (const char *)addr + index * sizeof(v), sizeof(v));
	return v;
}

static uint32_t addr_u32_at(const void *addr, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)addr + off, sizeof(v));
	return v;
}

static uint16_t addr_u16_at(const void *addr, size_t off)
{
	uint16_t v;

	memcpy(&v, (const char *)addr + off, sizeof(v));
	return v;
}

/*
 * libfabric formats sockaddr_in/_in6 by the family the address itself
 * carries (inet_ntop(sin_family, &sin_addr)), so a mislabelled family reads
 * 4 or 16 bytes at the IP offset; read exactly those bytes, nothing more.
 */
static void addr_ip(struct addr_out *out, const void *addr, size_t ip_off,
		    const char *fmt)
{
	unsigned char ip[16];
	char str[WEFT_ADDRSTRLEN];
	uint16_t family = addr_u16_at(addr, 0);
	uint16_t port = addr_u16_at(addr, 2);

	if (family == AF_INET)
		memcpy(ip, (const char *)addr + ip_off, 4);
	else if (family == AF_INET6)
		memcpy(ip, (const char *)addr + ip_off, 16);
	else
		return;
	if (!inet_ntop(family, ip, str, sizeof(str)))
		return;
	addr_printf(out, fmt, str, ntohs(port));
}

static void addr_sin(struct addr_out *out, const void *addr)
{
	addr_ip(out, addr, offsetof(struct sockaddr_in, sin_addr),
		"fi_sockaddr_in://%s:%" PRIu16);
}

static void addr_sin6(struct addr_out *out, const void *addr)
{
	addr_ip(out, addr, offsetof(struct sockaddr_in6, sin6_addr),
		"fi_sockaddr_in6://[%s]:%" PRIu16);
}

static void addr_sockaddr(struct addr_out *out, const void *addr)
{
	sa_family_t family;

	memcpy(&family, addr, sizeof(family));
	if (family == AF_INET)
		addr_sin(out, addr);
	else if (family == AF_INET6)
		addr_sin6(out, addr);
}

static void addr_sib(struct addr_out *out, const void *addr)
{
	struct weft_sockaddr_ib sib;
	char str[WEFT_ADDRSTRLEN];

	memcpy(&sib, addr, sizeof(sib));
	if (!inet_ntop(AF_INET6, sib.sib_addr, str, INET6_ADDRSTRLEN))
		return;
	addr_printf(out, "fi_sockaddr_ib://[%s]:0x%" PRIx16 ":0x%" PRIx16
		    ":0x%" PRIx8, str, ntohs(sib.sib_pkey),
		    (uint16_t)((be64toh(sib.sib_sid) >> 16) & 0xfff),
		    (uint8_t)(be64toh(sib.sib_scope_id) & 0xff));
}

/* EFA: 16-byte GID, then QPN (u16 at 16) and QKEY (u32 at 20) */
static void addr_efa(struct addr_out *out, const void *addr)
{
	char str[WEFT_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, addr, str, INET6_ADDRSTRLEN))
		return;
	addr_printf(out, "fi_addr_efa://[%s]:%" PRIu16 ":%" PRIu32, str,
		    addr_u16_at(addr, 16), addr_u32_at(addr, 20));
}

/* IB UD: 16-byte GID, QPN (u32 at 16), LID (u16 at 20), P_Key (u16 at 22),
 * SL (u8 at 26) */
static void addr_ib_ud(struct addr_out *out, const void *addr)
{
	char str[WEFT_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, addr, str, INET6_ADDRSTRLEN))
		return;
	addr_printf(out, "fi_addr_ib_ud://%s:%" PRIx32 "/%" PRIx16 "/%" PRIx16
		    "/%" PRIx8, str, addr_u32_at(addr, 16),
		    addr_u16_at(addr, 20), addr_u16_at(addr, 22),
		    ((const uint8_t *)addr)[26]);
}

static void addr_words(struct addr_out *out, uint32_t format,
		       const void *addr)
{
	switch (format) {
	case FI_ADDR_PSMX:
		addr_printf(out, "fi_addr_psmx://%" PRIx64, addr_u64(addr, 0));
		break;
	case FI_ADDR_PSMX2:
		addr_printf(out, "fi_addr_psmx2://%" PRIx64 ":%" PRIx64,
			    addr_u64(addr, 0), addr_u64(addr, 1));
		break;
	case FI_ADDR_PSMX3:
		addr_printf(out, "fi_addr_psmx3://%" PRIx64 ":%" PRIx64 ":%"
			    PRIx64 ":%" PRIx64, addr_u64(addr, 0),
			    addr_u64(addr, 1), addr_u64(addr, 2),
			    addr_u64(addr, 3));
		break;
	case FI_ADDR_GNI:
		addr_printf(out, "fi_addr_gni://%" PRIx64, addr_u64(addr, 0));
		break;
	case FI_ADDR_OPX:
		addr_printf(out, "fi_addr_opx://%016" PRIx64,
			    addr_u64(addr, 0));
		break;
	case FI_ADDR_CXI:
		addr_printf(out, "fi_addr_cxi://0x%08" PRIx32,
			    addr_u32_at(addr, 0));
		break;
	}
}

void weft_tostr_addr(struct weft_strbuf *sb, uint32_t addr_format,
		     const void *addr)
{
	size_t used = strlen(sb->buf);
	struct addr_out out = { .p = sb->buf + used, .len = sb->size - used };

	if (!addr) {
		weft_sb_printf(sb, "(null)");
		return;
	}

	switch (addr_format) {
	case FI_SOCKADDR:
		addr_sockaddr(&out, addr);
		break;
	case FI_SOCKADDR_IN:
		addr_sin(&out, addr);
		break;
	case FI_SOCKADDR_IN6:
		addr_sin6(&out, addr);
		break;
	case FI_SOCKADDR_IB:
		addr_sib(&out, addr);
		break;
	case FI_ADDR_EFA:
		addr_efa(&out, addr);
		break;
	case FI_ADDR_IB_UD:
		addr_ib_ud(&out, addr);
		break;
	case FI_ADDR_BGQ:
		/* opaque blobs: libfabric prints where they are */
		addr_printf(&out, "fi_addr_bgq://%p", addr);
		break;
	case FI_ADDR_MLX:
		addr_printf(&out, "fi_addr_mlx://%p", addr);
		break;
	case FI_ADDR_STR:
		addr_printf(&out, "%s", (const char *)addr);
		break;
	default:
		addr_words(&out, addr_format, addr);
		break;
	}
}
