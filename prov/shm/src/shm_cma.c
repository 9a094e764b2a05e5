/* SPDX-License-Identifier: MIT */
/*
 * shm transport: cross-memory attach (process_vm_readv / writev).
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_iov.h"
#include "shm_transport.h"

#include <errno.h>
#include <limits.h>
#include <sys/uio.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

int shm_cma_test_refuse;

typedef ssize_t (*shm_cma_fn)(pid_t, const struct iovec *, unsigned long,
			      const struct iovec *, unsigned long,
			      unsigned long);

struct shm_iov_cursor {
	const struct iovec *iov;
	size_t cnt;
	size_t idx;
	size_t off;
};

/* Next batch of at most IOV_MAX elements from the cursor, at most limit
 * bytes in all. */
static unsigned long shm_iov_batch(const struct shm_iov_cursor *c,
				   struct iovec *out, size_t limit)
{
	unsigned long n = 0;
	size_t i, off = c->off;

	for (i = c->idx; i < c->cnt && n < IOV_MAX && limit; i++, off = 0) {
		size_t len = c->iov[i].iov_len - off;

		if (!len)
			continue;
		if (len > limit)
			len = limit;
		out[n].iov_base = (char *)c->iov[i].iov_base + off;
		out[n].iov_len = len;
		limit -= len;
		n++;
	}
	return n;
}

static void shm_iov_advance(struct shm_iov_cursor *c, size_t bytes)
{
	while (bytes && c->idx < c->cnt) {
		size_t left = c->iov[c->idx].iov_len - c->off;

		if (bytes < left) {
			c->off += bytes;
			return;
		}
		bytes -= left;
		c->idx++;
		c->off = 0;
	}
}

static ssize_t shm_cma_errno(int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
	case ENOSYS:
		return -FI_EPERM;
	case EFAULT:
		return -FI_EFAULT;
	case ESRCH:
		return -FI_ESHUTDOWN;
	case ENOMEM:
		return -FI_ENOMEM;
	default:
		return -FI_EIO;
	}
}

int shm_cma_cause(ssize_t n)
{
	switch (n) {
	case -FI_EPERM:
		return FI_EOPNOTSUPP;
	case -FI_ESHUTDOWN:
		return FI_EHOSTUNREACH;
	case -FI_EFAULT:
	case -FI_ENOMEM:
	case -FI_EINVAL:
		return (int)-n;
	default:
		return FI_EIO;
	}
}

int shm_cma_status(ssize_t n, size_t want)
{
	return n == (ssize_t)want ? 0 : shm_cma_cause(n);
}

static ssize_t shm_cma_copy(shm_cma_fn fn, pid_t pid,
			    const struct iovec *local, size_t local_cnt,
			    const struct iovec *remote, size_t remote_cnt)
{
	struct shm_iov_cursor lc = { local, local_cnt, 0, 0 };
	struct shm_iov_cursor rc = { remote, remote_cnt, 0, 0 };
	struct iovec lb[IOV_MAX], rb[IOV_MAX];
	size_t total, rtotal, done = 0;

	if (shm_cma_test_refuse)
		return -FI_EPERM;
	if ((local_cnt && !local) || (remote_cnt && !remote))
		return -FI_EINVAL;
	total = util_iov_total(local, local_cnt);
	rtotal = util_iov_total(remote, remote_cnt);
	if (rtotal < total)
		total = rtotal;

	/* Common case: both lists fit one call and it moves everything.
	 * Only when neither list is longer than what moves: the kernel pins
	 * every page of the remote ranges it is given (up to 1024 at a time)
	 * before it copies, even past the bytes the other side takes. A
	 * split copy's receiver handing it the whole message pinned three
	 * pages for each one it read: 10 GB/s instead of 20. Longer lists
	 * go through the batches below, which are cut to total. */
	if (local_cnt <= IOV_MAX && remote_cnt <= IOV_MAX && total &&
	    total == rtotal && total == util_iov_total(local, local_cnt)) {
		ssize_t n = fn(pid, local, local_cnt, remote, remote_cnt, 0);

		if (n == (ssize_t)total)
			return n;
		if (n < 0 && errno != EINTR)
			return shm_cma_errno(errno);
		if (n > 0) {
			done = (size_t)n;
			shm_iov_advance(&lc, done);
			shm_iov_advance(&rc, done);
		}
	}
	while (done < total) {
		unsigned long ln = shm_iov_batch(&lc, lb, total - done);
		unsigned long rn = shm_iov_batch(&rc, rb, total - done);
		ssize_t n = fn(pid, lb, ln, rb, rn, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return shm_cma_errno(errno);
		/* No progress without an error: a range ends in unmapped
		 * memory on the next element; report it as such. */
		if (n == 0)
			return -FI_EFAULT;
		done += (size_t)n;
		shm_iov_advance(&lc, (size_t)n);
		shm_iov_advance(&rc, (size_t)n);
	}
	return (ssize_t)done;
}

ssize_t shm_cma_read(pid_t pid, const struct iovec *local, size_t local_cnt,
		     const struct iovec *remote, size_t remote_cnt)
{
	return shm_cma_copy(process_vm_readv, pid, local, local_cnt, remote,
			    remote_cnt);
}

ssize_t shm_cma_write(pid_t pid, const struct iovec *local, size_t local_cnt,
		      const struct iovec *remote, size_t remote_cnt)
{
	return shm_cma_copy(process_vm_writev, pid, local, local_cnt, remote,
			    remote_cnt);
}
