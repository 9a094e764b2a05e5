/* SPDX-License-Identifier: MIT */
/*
 * shm transport: everything the shm provider builds on. See
 * /tmp/weft-notes/shm-transport.md for the walk-through.
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
