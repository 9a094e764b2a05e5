/* SPDX-License-Identifier: MIT */
/*
 * fi_strerror: libfabric's own codes (FI_ERRNO_OFFSET and up) have fixed
 * strings, errno-range codes are the C library's. The strings are those of
 * libfabric 1.17, because applications and tests compare them.
 */
#include "weft/compat.h"

#include <limits.h>
#include <string.h>

#include <rdma/fi_errno.h>

static const char *const weft_errstr[] = {
	[FI_EOTHER - FI_ERRNO_OFFSET] = "Unspecified error",
	[FI_ETOOSMALL - FI_ERRNO_OFFSET] = "Provided buffer is too small",
	[FI_EOPBADSTATE - FI_ERRNO_OFFSET] =
		"Operation not permitted in current state",
	[FI_EAVAIL - FI_ERRNO_OFFSET] = "Error available",
	[FI_EBADFLAGS - FI_ERRNO_OFFSET] = "Flags not supported",
	[FI_ENOEQ - FI_ERRNO_OFFSET] = "Missing or unavailable event queue",
	[FI_EDOMAIN - FI_ERRNO_OFFSET] = "Invalid resource domain",
	[FI_ENOCQ - FI_ERRNO_OFFSET] =
		"Missing or unavailable completion queue",
	[FI_ECRC - FI_ERRNO_OFFSET] = "CRC error",
	[FI_ETRUNC - FI_ERRNO_OFFSET] = "Truncation error",
	[FI_ENOKEY - FI_ERRNO_OFFSET] = "Required key not available",
	[FI_ENOAV - FI_ERRNO_OFFSET] = "Missing or unavailable address vector",
	[FI_EOVERRUN - FI_ERRNO_OFFSET] = "Queue has been overrun",
	[FI_ENORX - FI_ERRNO_OFFSET] =
		"Receiver not ready, no receive buffers available",
};

_Static_assert(WEFT_ARRAY_SIZE(weft_errstr) == FI_ERRNO_MAX - FI_ERRNO_OFFSET,
	       "every FI_E* code above FI_ERRNO_OFFSET needs a string");

WEFT_EXPORT const char *fi_strerror(int errnum)
{
	/* INT_MIN has no positive counterpart; libfabric's negation wraps
	 * and hands it to strerror, so do the same without the overflow. */
	if (errnum == INT_MIN)
		return strerror(errnum);
	if (errnum < 0)
		errnum = -errnum;
	if (errnum < FI_ERRNO_OFFSET)
		return strerror(errnum);
	if (errnum < FI_ERRNO_MAX)
		return weft_errstr[errnum - FI_ERRNO_OFFSET];
	return weft_errstr[FI_EOTHER - FI_ERRNO_OFFSET];
}
