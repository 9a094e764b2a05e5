/* SPDX-License-Identifier: MIT */
/*
 * struct iovec arrays as one byte range: its total, copies into and out of
 * it at an offset, a sub-range as another iov array, and where an offset
 * falls. Every function stops at the end of the array: a copy returns the
 * bytes it moved, which is less than asked when the array is shorter.
 */
#ifndef WEFT_UTIL_IOV_H
#define WEFT_UTIL_IOV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct fi_provider;

/* An application's iovec array (count entries, iov not NULL): every entry
 * with bytes has a buffer and the lengths add up without overflow. 0 and
 * the total in *total, or -FI_EINVAL after a warning in prov's log that
 * names the call (what) and the entry. Out of line: for the paths of
 * several entries, where a single buffer's check is inlined by callers. */
int util_iov_check(const struct fi_provider *prov, const char *what,
		   const struct iovec *iov, size_t count, size_t *total);

static inline size_t util_iov_total(const struct iovec *iov, size_t count)
{
	size_t i, n = 0;

	for (i = 0; i < count; i++)
		n += iov[i].iov_len;
	return n;
}

/* Bytes [off, off + len) of the array into dst. */
size_t util_iov_copy_from(const struct iovec *iov, size_t count, size_t off,
			  void *dst, size_t len);

/* len bytes of src into the array from byte off on. */
size_t util_iov_copy_to(const struct iovec *iov, size_t count, size_t off,
			const void *src, size_t len);

/* The part [off, off + len) of the array as iovs in out (at most count of
 * them); returns how many. */
size_t util_iov_slice(const struct iovec *iov, size_t count, size_t off,
		      size_t len, struct iovec *out);

/* Where byte off falls: the index of its iov (count if off is past the
 * end) and, in *in, the offset inside that iov. */
size_t util_iov_seek(const struct iovec *iov, size_t count, uint64_t off,
		     uint64_t *in);

#endif /* WEFT_UTIL_IOV_H */
