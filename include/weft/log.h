/* SPDX-License-Identifier: MIT */
/*
 * Logging goes through libfabric's own macros (FI_WARN, FI_INFO, FI_DBG ...
 * from rdma/providers/fi_log.h) so FI_LOG_LEVEL / FI_LOG_PROV / FI_LOG_SUBSYS
 * behave as in libfabric. FI_DBG is compiled out unless --enable-debug, which
 * is what the data path may use; nothing else logs on a per-message path.
 */
#ifndef WEFT_LOG_H
#define WEFT_LOG_H

#include "weft/compat.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

/* The pseudo-provider that core and util log under ("core"). */
extern struct fi_provider weft_core_prov;

/*
 * Warnings that a remote peer can trigger again and again (a malformed
 * cell, datagram or frame, a flood of them) are rate limited, so that a
 * broken or hostile peer cannot fill the log: WEFT_WARN_SPARSE logs the
 * first one of its call site, then at most one per FI_LOG_INTERVAL, each
 * saying how many like it were not shown since the last. libfabric's
 * FI_WARN_SPARSE only drops them (and races on its time stamp); weft uses
 * this one everywhere instead. The state is per call site and process
 * wide, in the library's data (no TLS).
 */
struct weft_log_sparse {
	_Atomic uint64_t next_us;	/* monotonic time of the next line */
	_Atomic uint64_t dropped;	/* not shown since the last line */
};

void weft_log_sparse(const struct fi_provider *prov,
		     enum fi_log_subsys subsys, struct weft_log_sparse *s,
		     const char *func, int line, const char *fmt, ...)
	__attribute__((format(printf, 6, 7), cold));

#define WEFT_WARN_SPARSE(prov, subsys, ...)				\
	do {								\
		static struct weft_log_sparse weft_sparse_;		\
		weft_log_sparse((prov), (subsys), &weft_sparse_,	\
				__func__, __LINE__, __VA_ARGS__);	\
	} while (0)

#endif /* WEFT_LOG_H */
