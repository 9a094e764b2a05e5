/* SPDX-License-Identifier: MIT */
/*
 * CRC32C (Castagnoli) of datagrams, end to end: UDP's own checksum is
 * optional, and NICs, bridges and memory on the way can flip bits that
 * no link check sees. The sender puts the CRC of header and payload in a
 * 4-byte trailer (SOFTSRD_FLAG_CRC); the receiver drops a datagram whose
 * CRC does not match, so the sender resends it, and never delivers it.
 *
 * With SSE4.2 the crc32 instruction does 8 bytes a step; else a table,
 * a byte a step. Both compute the same function (tested against the
 * standard check value).
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <pthread.h>
#include <string.h>

#define SOFTSRD_CRC32C_POLY 0x82f63b78u	/* reflected */

static uint32_t softsrd_crc_table[256];
static bool softsrd_crc_hw;
static pthread_once_t softsrd_crc_once = PTHREAD_ONCE_INIT;

static void softsrd_crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ SOFTSRD_CRC32C_POLY : c >> 1;
		softsrd_crc_table[i] = c;
	}
#if defined(__x86_64__)
	__builtin_cpu_init();
	softsrd_crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t softsrd_crc_sw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = softsrd_crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t softsrd_crc_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;

		memcpy(&v, p, sizeof(v));
		c = __builtin_ia32_crc32di(c, v);
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

/* Continues crc (start with 0) over len bytes. */
static uint32_t softsrd_crc_update(uint32_t crc, const void *p, size_t len)
{
	crc = ~crc;
#if defined(__x86_64__)
	if (softsrd_crc_hw)
		return ~softsrd_crc_sse42(crc, p, len);
#endif
	return ~softsrd_crc_sw(crc, p, len);
}

/* Before any CRC is computed (device open): the table and the CPU check. */
void softsrd_crc_setup(void)
{
	pthread_once(&softsrd_crc_once, softsrd_crc_init);
}

uint32_t softsrd_crc32c(uint32_t crc, const void *p, size_t len)
{
	return softsrd_crc_update(crc, p, len);
}

uint32_t softsrd_crc32c_iov(const struct iovec *iov, size_t n)
{
	uint32_t crc = 0;

	for (size_t i = 0; i < n; i++)
		crc = softsrd_crc_update(crc, iov[i].iov_base, iov[i].iov_len);
	return crc;
}
