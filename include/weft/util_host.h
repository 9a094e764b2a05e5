/* SPDX-License-Identifier: MIT */
/*
 * util_host: whether a node name, as fi_getinfo receives it, names this
 * host. A provider that reaches peers on this host only (shm) refuses any
 * other node up front (-FI_ENODATA) instead of failing at the first send.
 */
#ifndef WEFT_UTIL_HOST_H
#define WEFT_UTIL_HOST_H

#include <stdbool.h>

/* true for "localhost", this host's name, a loopback address, or a name or
 * address that resolves to an address of one of this host's interfaces.
 * numeric_only (FI_NUMERICHOST): node must be a numeric address, and no
 * name is looked up. false for anything else, including names that do not
 * resolve. */
bool util_host_is_local(const char *node, bool numeric_only);

#endif /* WEFT_UTIL_HOST_H */
