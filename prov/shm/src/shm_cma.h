/* SPDX-License-Identifier: MIT */
/*
 * shm transport: single-copy between processes (cross-memory attach).
 *
 * process_vm_readv/writev with any number of iovecs on either side (split
 * into IOV_MAX batches) and partial results resumed where they stopped.
 * Both functions copy min(sum of local, sum of remote) bytes.
 */
#ifndef SHM_CMA_H
#define SHM_CMA_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Copy from the peer's memory (remote) into ours (local). Returns bytes
 * copied, or -FI_EPERM (CMA refused: use the bounce path), -FI_EFAULT (a
 * remote or local range is not mapped), -FI_ESHUTDOWN (no such process),
 * -FI_EINVAL (iovec count out of range), -FI_EIO (other). */
ssize_t shm_cma_read(pid_t pid, const struct iovec *local, size_t local_cnt,
		     const struct iovec *remote, size_t remote_cnt);

/* Copy from our memory (local) into the peer's (remote); same results. */
ssize_t shm_cma_write(pid_t pid, const struct iovec *local, size_t local_cnt,
		      const struct iovec *remote, size_t remote_cnt);

/* The FI_E* (positive) that a transfer which got n instead of its bytes
 * completes with: its cause where the result names one (a peer process
 * that is gone: FI_EHOSTUNREACH, as for every operation toward a dead
 * peer; CMA refused: FI_EOPNOTSUPP), FI_EIO for a short copy. */
int shm_cma_cause(ssize_t n);

/* 0 when a copy of want bytes got them all, else shm_cma_cause(n). */
int shm_cma_status(ssize_t n, size_t want);

/* Test hook: when set, both functions fail with -FI_EPERM as under
 * ptrace restrictions, and probes fail, so the bounce path is taken. */
extern int shm_cma_test_refuse;

#endif /* SHM_CMA_H */
