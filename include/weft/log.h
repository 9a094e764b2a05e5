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
#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

/* The pseudo-provider that core and util log under ("core"). */
extern struct fi_provider weft_core_prov;

#endif /* WEFT_LOG_H */
