/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the srd RDM tests: two endpoints of the srd provider in one
 * process over softsrd (FI_SRD_DEVICE=soft on 127.0.0.1), each with one
 * CQ for both directions, and a poller that stashes what both CQs report
 * so that waiting on one endpoint still progresses the other.
 */
#ifndef TEST_SRD_RDM_COMMON_H
#define TEST_SRD_RDM_COMMON_H

#include "weft/compat.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define TCQ_MAX 512

struct tent {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	int err;		/* positive FI_E*, 0 for a success entry */
	size_t olen;
	int prov_errno;
};

struct tep {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_cntr *rx_cntr;
	struct fid_cntr *extra_cntr[2];	/* closed with the endpoint */
	char name[64];
	size_t namelen;
	fi_addr_t peer;		/* the other endpoint in this one's AV */
	struct tent ents[TCQ_MAX];
	int n;
};

struct tfab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	bool fabric_shared;	/* the caller's: tfab_close leaves it open */
	struct fid_domain *domain;
	struct tep a, b;
	size_t eager_max;	/* info->tx_attr->inject_size */
	size_t mtu;
};

/* setenv FI_SRD_DEVICE=soft (and loopback) before the first getinfo. */
void tfab_env(void);
/* caps: the fi_info caps to ask for (0: FI_MSG | FI_TAGGED). insert_b:
 * whether b's AV knows a (a always knows b). */
void tfab_open(struct tfab *f, uint64_t caps, bool insert_b);
/* The same on f->info, which the caller set (f otherwise zeroed); f owns
 * it from here. A fabric the caller set in f->fabric is used, not
 * opened, and stays open at tfab_close. */
void tfab_open_info(struct tfab *f, uint64_t caps, bool insert_b);
void tfab_close(struct tfab *f);
/* Progress both and stash completions; returns entries stashed. */
int tfab_poll(struct tfab *f);
/* Wait until e has at least n entries (bounded number of polls). */
void tfab_wait(struct tfab *f, struct tep *e, int n);
/* Take the oldest stashed entry of e. */
struct tent tfab_take(struct tep *e);
/* a sends (tagged or not) to b; b posts a receive from anyone. Both
 * progress and retry on -FI_EAGAIN; anything else fails the test. */
void tfab_send(struct tfab *f, const void *buf, size_t len, uint64_t tag,
	       bool tagged, void *ctx);
void tfab_recv(struct tfab *f, void *buf, size_t len, uint64_t tag,
	       bool tagged, void *ctx);
void tfab_fill(uint8_t *buf, size_t len, unsigned int seed);
/* Post call, progressing f while it answers -FI_EAGAIN; anything but 0
 * then fails the test. */
#define TFAB_POST(f, call)						\
	do {								\
		ssize_t tfab_ret_;					\
									\
		while ((tfab_ret_ = (call)) == -FI_EAGAIN)		\
			tfab_poll(f);					\
		assert_int_equal(tfab_ret_, 0);				\
	} while (0)
void tfab_check(const uint8_t *buf, size_t len, unsigned int seed);
/* One small message a -> b, both completed without error: the handshake
 * is over afterwards. */
void tfab_hello(struct tfab *f);

#endif /* TEST_SRD_RDM_COMMON_H */
