/* SPDX-License-Identifier: MIT */
/*
 * Completion queue. util_cq_open is a complete fi_cq_open: providers put it
 * in their fi_ops_domain and never subclass the CQ. Providers write
 * completions with util_cq_write*(), normally through the util_ep_*_comp
 * helpers of util_ep.h that also honour FI_SELECTIVE_COMPLETION.
 *
 * Storage: a ring of attr->size entries (default UTIL_CQ_DEFAULT_SIZE,
 * rounded up to a power of two) allocated at open; one ring entry is one
 * 64-byte line holding every field any format can need, so the format only
 * matters when the application reads: a copy-out function chosen at open
 * turns entries into FI_CQ_FORMAT_CONTEXT/MSG/DATA/TAGGED records
 * (FI_CQ_FORMAT_UNSPEC reads as CONTEXT).
 *
 * Overflow: the ring never drops an entry. Providers that can apply back
 * pressure (sends) ask util_cq_space() before posting and return -FI_EAGAIN
 * when it is 0; completions that cannot be refused (arriving messages,
 * remote writes with CQ data) go to an overflow list when the ring is full.
 * Overflow nodes are malloc'ed only while the ring is full, kept for reuse,
 * and freed at close; order is preserved (ring first, then overflow).
 *
 * Errors travel in the ring in order: fi_cq_read returns the successful
 * entries before an error entry, then -FI_EAVAIL while the error is at the
 * head; fi_cq_readerr pops it. err_data (up to UTIL_CQ_ERR_DATA_MAX bytes,
 * copied at write time) is returned per fi_cq(3): API >= 1.5 with
 * err_data_size > 0 copies into the caller's buffer, otherwise err_data
 * points at CQ memory valid until the next read of the CQ (at least; a
 * read that finds the CQ empty answers without the lock and leaves it).
 *
 * Completions written while the writing thread is inside fi_cq_read of
 * the same CQ, with nothing queued ahead of them, are copied straight
 * into the reader's buffer (util_cq.c says why). One reader at a time has
 * its buffer registered in the CQ; others read through the ring.
 *
 * Threading: the CQ lock comes from the domain's threading level.
 */
#ifndef WEFT_UTIL_CQ_H
#define WEFT_UTIL_CQ_H

#include "weft/compat.h"
#include "weft/util_idle.h"
#include "weft/util_lock.h"
#include "weft/util_wait.h"
#include "weft/util_progress.h"
#include <stdatomic.h>
#include <stdint.h>
#include <rdma/fi_eq.h>

#define UTIL_CQ_DEFAULT_SIZE 1024
#define UTIL_CQ_MAX_SIZE (1u << 24)
#define UTIL_CQ_ERR_DATA_MAX 64

struct util_domain;
struct util_cq_err;

/* One ring slot: the union of every format's fields. */
struct util_cq_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;			/* FI_ADDR_NOTAVAIL when unknown */
	struct util_cq_err *err;	/* non-NULL: an error entry */
};

struct util_cq_ovf;

typedef void (*util_cq_copy_fn)(void *dst, const struct util_cq_entry *src);

/* The buffer of the fi_cq_read that is running progress (util_cq.c). Only
 * the owning thread touches the fields after owner. */
struct util_cq_direct {
	atomic_uintptr_t owner;		/* pthread_self() of the reader, or 0 */
	uint8_t *out;
	fi_addr_t *src_addr;
	size_t left;
	size_t n;
};

struct util_cq {
	struct fid_cq cq_fid;
	struct util_domain *domain;
	enum fi_cq_format format;
	size_t entry_size;		/* of the application's format */
	util_cq_copy_fn copy_out;	/* chosen at open by format */

	struct util_cq_entry *ring;
	uint64_t mask;			/* ring size - 1 */
	uint64_t head;			/* next to read */
	uint64_t tail;			/* next to write */
	struct util_cq_ovf *ovf;	/* overflow FIFO (DL list) */
	struct util_cq_ovf *ovf_free;	/* spare overflow nodes */
	size_t ovf_count;

	struct util_cq_err *err_free;	/* spare error records */
	struct util_cq_err *err_last;	/* last read error (err_data lifetime) */

	struct util_lock lock;		/* ring, overflow, error records */
	struct util_cq_direct direct;
	bool shared;			/* several threads may read at once */
	struct util_idle idle;		/* empty reads: when to yield */
	struct util_wait wait;
	struct util_progress_list progress;
	uint64_t spin_ns;
	atomic_int ref;			/* endpoint bindings */
	atomic_int poll_ref;		/* poll sets it is in (util_poll.h) */
};

static inline struct util_cq *to_util_cq(struct fid_cq *cq)
{
	return container_of(cq, struct util_cq, cq_fid);
}

/* fi_cq_open (struct fi_ops_domain.cq_open). Accepts wait_obj NONE, UNSPEC,
 * FD, YIELD; wait_cond NONE (THRESHOLD is accepted and treated as NONE);
 * every format. Bad attributes: -FI_EINVAL / -FI_ENOSYS with a log line. */
/* A CQ one provider reads for another from its own progress (srd reading
 * its shm peer's): an empty read there says nothing about the application
 * waiting, so it never yields the CPU (util_idle.h). -FI_EINVAL when cq
 * is not a util CQ. */
int util_cq_no_yield(struct fid_cq *cq);
int util_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		 struct fid_cq **cq, void *context);

/* Write one successful completion. 0, or -FI_ENOMEM if the ring is full
 * and an overflow node cannot be allocated. Wakes an armed sleeper. */
int util_cq_write(struct util_cq *cq, void *context, uint64_t flags,
		  size_t len, void *buf, uint64_t data, uint64_t tag);
/* Same with the source address (fi_cq_readfrom; FI_SOURCE). */
int util_cq_write_src(struct util_cq *cq, void *context, uint64_t flags,
		      size_t len, void *buf, uint64_t data, uint64_t tag,
		      fi_addr_t src);
/* Write an error entry: err->err must be a positive FI_E* value; err_data
 * (err_data_size <= UTIL_CQ_ERR_DATA_MAX, longer is cut) is copied. */
int util_cq_write_err(struct util_cq *cq, const struct fi_cq_err_entry *err,
		      fi_addr_t src);

/* Free ring slots: a provider that can refuse work returns -FI_EAGAIN from
 * a post when this is 0. Advisory without the CQ lock. */
static inline size_t util_cq_space(const struct util_cq *cq)
{
	uint64_t tail = __atomic_load_n(&cq->tail, __ATOMIC_RELAXED);
	uint64_t head = __atomic_load_n(&cq->head, __ATOMIC_RELAXED);

	return (size_t)(cq->mask + 1 - (tail - head));
}

/* Run progress of every endpoint bound to the CQ. */
static inline void util_cq_progress(struct util_cq *cq)
{
	util_progress_run(&cq->progress);
}

/* Entries (ring + overflow) waiting to be read, including error entries. */
size_t util_cq_count(struct util_cq *cq);

#endif /* WEFT_UTIL_CQ_H */
