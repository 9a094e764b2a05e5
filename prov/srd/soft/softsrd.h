/* SPDX-License-Identifier: MIT */
/*
 * softsrd: weft's userspace SRD device, seen through rdma-core's objects.
 *
 * What the rest of weft (the srd provider, tests) may use: the control-path
 * table and the settings. Everything else goes through the ibv objects this
 * table returns, with rdma-core's header inlines.
 */
#ifndef SOFTSRD_H
#define SOFTSRD_H

#include "weft/compat.h"
#include "weft/srd_verbs.h"
#include <rdma/providers/fi_prov.h>

/* Filled by softsrd; the srd provider stores a pointer to it as its device
 * table when FI_SRD_DEVICE=soft. */
extern const struct srd_verbs_ops softsrd_verbs_ops;

/*
 * Define every FI_SRD_SOFT_* setting on prov. The srd provider calls it from
 * its own init (once) with its own struct fi_provider, so `weft_info -e`
 * lists the settings under "srd"; softsrd_init() does the same.
 */
void softsrd_params_define(const struct fi_provider *prov);

/*
 * Make prov the provider softsrd reads its settings from and logs under.
 * Without a call, softsrd uses a provider of its own named "srd". Call before
 * the first get_device_list; later calls are ignored.
 */
void softsrd_init(struct fi_provider *prov);

#endif /* SOFTSRD_H */
