/* SPDX-License-Identifier: MIT */
/*
 * Event queue. util_eq_open is a complete fi_eq_open (put it in the
 * provider's fi_ops_fabric). Control path only, so events are malloc'ed
 * and the lock is always real. fi_eq_write from the application is
 * accepted (attr->flags FI_WRITE is not required). Error events are read
 * in order like CQ errors: fi_eq_read returns -FI_EAVAIL while one is at
 * the head. Events longer than UTIL_EQ_MAX_EVENT bytes are refused.
 */
#ifndef WEFT_UTIL_EQ_H
#define WEFT_UTIL_EQ_H

#include "weft/compat.h"
#include "weft/util_lock.h"
#include "weft/util_wait.h"
#include <stdatomic.h>
#include <rdma/fi_eq.h>

#define UTIL_EQ_MAX_EVENT 4096
#define UTIL_EQ_ERR_DATA_MAX 256

struct util_fabric;
struct util_eq_event;

struct util_eq {
	struct fid_eq eq_fid;
	struct util_fabric *fabric;
	struct util_eq_event *events;	/* FIFO (DL list) */
	struct util_eq_event *err_last;	/* err_data lifetime */
	struct util_lock lock;
	struct util_wait wait;
	uint64_t spin_ns;
	atomic_int ref;			/* bound AVs, domains, endpoints */
	/* Provider's fi_eq_strerror text, or NULL for fi_strerror. Called
	 * with buf NULL too: then it returns storage of its own. */
	const char *(*strerror)(int prov_errno, const void *err_data,
				char *buf, size_t len);
};

static inline struct util_eq *to_util_eq(struct fid_eq *eq)
{
	return container_of(eq, struct util_eq, eq_fid);
}

int util_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		 struct fid_eq **eq, void *context);

/* Provider side. Both copy their input; 0, -FI_EINVAL or -FI_ENOMEM. */
int util_eq_write(struct util_eq *eq, uint32_t event, const void *buf,
		  size_t len);
int util_eq_write_err(struct util_eq *eq, const struct fi_eq_err_entry *err);

#endif /* WEFT_UTIL_EQ_H */
