/* SPDX-License-Identifier: MIT */
/*
 * shm transport: everything the shm provider builds on (regions, the
 * queue, peers, CMA, bounce segments); fi_shm(7) walks through the
 * protocol on top.
 */
#ifndef SHM_TRANSPORT_H
#define SHM_TRANSPORT_H

#include "weft/compat.h"
#include "shm_region.h"
#include "shm_queue.h"
#include "shm_peer.h"
#include "shm_cma.h"
#include "shm_bounce.h"

#endif /* SHM_TRANSPORT_H */
