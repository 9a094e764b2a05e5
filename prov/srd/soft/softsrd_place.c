/* SPDX-License-Identifier: MIT */
/*
 * Placing received data in application memory so that what
 * query_qp_data_in_order claims holds for a CPU polling that memory:
 * - whole: everything, then the message's last 8 bytes with a release store;
 * - 128:   in every 128-byte-aligned line, the line's last 8 bytes last;
 * - none:  no promise, and softsrd makes sure nobody comes to rely on one by
 *          writing the second half of each piece first.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <string.h>

static inline void softsrd_store_last(uint8_t *dst, const uint8_t *src,
				      size_t n)
{
	atomic_thread_fence(memory_order_release);
	if (n == 8 && !((uintptr_t)dst & 7)) {
		uint64_t v;

		memcpy(&v, src, 8);
		__atomic_store_n((uint64_t *)dst, v, __ATOMIC_RELEASE);
	} else {
		memcpy(dst, src, n);
	}
}

static void softsrd_place_whole(uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t tail = len < 8 ? len : 8;

	memcpy(dst, src, len - tail);
	softsrd_store_last(dst + len - tail, src + len - tail, tail);
}

static void softsrd_place_128(uint8_t *dst, const uint8_t *src, size_t len)
{
	while (len) {
		uintptr_t line_end = ((uintptr_t)dst | 127) + 1;
		size_t n = line_end - (uintptr_t)dst;

		if (n > len)
			n = len;
		if ((uintptr_t)dst + n == line_end && n >= 8)
			softsrd_place_whole(dst, src, n);
		else
			memcpy(dst, src, n);
		dst += n;
		src += n;
		len -= n;
	}
}

void softsrd_place(void *dst, const void *src, size_t len,
		   enum softsrd_order order)
{
	size_t half = len / 2;

	switch (order) {
	case SOFTSRD_ORDER_WHOLE:
		softsrd_place_whole(dst, src, len);
		break;
	case SOFTSRD_ORDER_128:
		softsrd_place_128(dst, src, len);
		break;
	default:
		memcpy((uint8_t *)dst + half, (const uint8_t *)src + half,
		       len - half);
		memcpy(dst, src, half);
		break;
	}
}

/* Copy len bytes to offset off of an SGE list; the SGEs are checked
 * against the MR table again, as an MR may be gone since the post.
 * For whole-message order only the last piece carries the final store. */
int softsrd_scatter(struct softsrd_ctx *ctx, const struct ibv_sge *sge,
		    uint32_t num_sge, uint32_t off, const void *src,
		    uint32_t len, enum softsrd_order order)
{
	const uint8_t *s = src;

	for (uint32_t i = 0; i < num_sge && len; i++) {
		uint32_t n;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		if (!softsrd_sge_valid(ctx, &sge[i]))
			return -1;
		n = sge[i].length - off;
		if (n > len)
			n = len;
		if (order == SOFTSRD_ORDER_WHOLE && n < len)
			memcpy((uint8_t *)(uintptr_t)sge[i].addr + off, s, n);
		else
			softsrd_place((uint8_t *)(uintptr_t)sge[i].addr + off,
				      s, n, order);
		s += n;
		len -= n;
		off = 0;
	}
	return len ? -1 : 0;
}
