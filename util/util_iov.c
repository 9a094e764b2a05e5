/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_iov.h"

#include <string.h>

int util_iov_check(const struct fi_provider *prov, const char *what,
		   const struct iovec *iov, size_t count, size_t *total)
{
	size_t i, n = 0;

	for (i = 0; i < count; i++) {
		if (!iov[i].iov_base && iov[i].iov_len) {
			FI_WARN(prov, FI_LOG_EP_DATA,
				"%s: iov[%zu] of %zu bytes has a NULL buffer\n",
				what, i, iov[i].iov_len);
			return -FI_EINVAL;
		}
		if (iov[i].iov_len > SIZE_MAX - n) {
			FI_WARN(prov, FI_LOG_EP_DATA,
				"%s: iov lengths add up to more than SIZE_MAX (at iov[%zu])\n",
				what, i);
			return -FI_EINVAL;
		}
		n += iov[i].iov_len;
	}
	*total = n;
	return 0;
}

/* The piece of iov[i] a copy at *off of at most want bytes touches (0:
 * none, *off consumed by iov[i]). */
static size_t util_iov_piece(const struct iovec *iov, size_t *off,
			     size_t want)
{
	size_t n;

	if (*off >= iov->iov_len) {
		*off -= iov->iov_len;
		return 0;
	}
	n = iov->iov_len - *off;
	return n < want ? n : want;
}

size_t util_iov_copy_from(const struct iovec *iov, size_t count, size_t off,
			  void *dst, size_t len)
{
	size_t i, done = 0;

	for (i = 0; i < count && done < len; i++) {
		size_t n = util_iov_piece(&iov[i], &off, len - done);

		if (!n)
			continue;
		memcpy((uint8_t *)dst + done, (uint8_t *)iov[i].iov_base + off,
		       n);
		done += n;
		off = 0;
	}
	return done;
}

size_t util_iov_copy_to(const struct iovec *iov, size_t count, size_t off,
			const void *src, size_t len)
{
	size_t i, done = 0;

	for (i = 0; i < count && done < len; i++) {
		size_t n = util_iov_piece(&iov[i], &off, len - done);

		if (!n)
			continue;
		memcpy((uint8_t *)iov[i].iov_base + off,
		       (const uint8_t *)src + done, n);
		done += n;
		off = 0;
	}
	return done;
}

size_t util_iov_slice(const struct iovec *iov, size_t count, size_t off,
		      size_t len, struct iovec *out)
{
	size_t i, n = 0;

	for (i = 0; i < count && len; i++) {
		size_t take = util_iov_piece(&iov[i], &off, len);

		if (!take)
			continue;
		out[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		out[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

size_t util_iov_seek(const struct iovec *iov, size_t count, uint64_t off,
		     uint64_t *in)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (off < iov[i].iov_len)
			break;
		off -= iov[i].iov_len;
	}
	*in = off;
	return i;
}
