/* SPDX-License-Identifier: MIT */
/*
 * Everything util offers to providers; each header's opening comment says
 * how a provider uses it.
 */
#ifndef WEFT_UTIL_H
#define WEFT_UTIL_H

#include "weft/util_lock.h"
#include "weft/util_noop.h"
#include "weft/util_wait.h"
#include "weft/util_progress.h"
#include "weft/util_fabric.h"
#include "weft/util_mr.h"
#include "weft/util_domain.h"
#include "weft/util_cq.h"
#include "weft/util_cntr.h"
#include "weft/util_poll.h"
#include "weft/util_eq.h"
#include "weft/util_av.h"
#include "weft/util_av_set.h"
#include "weft/util_ep.h"
#include "weft/util_match.h"
#include "weft/util_srx.h"
#include "weft/util_pool.h"
#include "weft/util_mem.h"
#include "weft/util_atomic.h"
#include "weft/util_iov.h"
#include "weft/util_time.h"
#include "weft/util_host.h"

#endif /* WEFT_UTIL_H */
