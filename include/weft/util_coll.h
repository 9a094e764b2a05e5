/* SPDX-License-Identifier: MIT */
/*
 * The collective engine (fi_collective(3), fi_av_set(3)): every
 * collective of the libfabric API over any provider that moves tagged
 * messages of its own "collective class" for it. The provider fills a
 * const struct util_coll_xport and calls the few hooks below; the engine
 * does membership (fi_join_collective), the algorithms, the reductions,
 * failure handling and the application's completions. Algorithms,
 * settings and the wire rules are documented in fi_coll(7).
 *
 * The collective class. Engine traffic must never be matched by the
 * application's receives (a wildcard fi_trecv with ignore = ~0 included)
 * and must not use its tag bits, so it is a third class of messages beside
 * untagged and tagged ones:
 *   - on the wire, one header flag bit says "collective class" (shm: cell
 *     flag SHM_F_COLL, srd: packet flag SRD_PKT_F_COLL, tcp: frame flag
 *     TCP_F_COLL); the message otherwise travels like a tagged one, with
 *     the engine's 64-bit tag (layout: UTIL_COLL_TAG below), any size, the
 *     provider's usual eager/rendezvous protocols;
 *   - on arrival, such a message is matched against util_srx's collective
 *     queue (UTIL_SRX_COLL: util_srx_match, util_srx_add_unexp and the
 *     provider's usual delivery), by source fi_addr and exact tag, so the
 *     provider must resolve the sender's fi_addr for this class (as for
 *     FI_SOURCE);
 *   - completions of the class never reach the application's CQ or
 *     counters: a receive's completion goes through util_srx_complete,
 *     which hands it to the engine (its comp_flags carry UTIL_COLL_FLAG);
 *     a send's completion is the provider's call to util_coll_send_done.
 *
 * Filling the xport (shm_coll.c and srd_coll.c are examples, a dozen lines
 * each). Every hook is called with ep->lock held, from the engine only
 * (inside an fi_* collective call or inside util_coll_progress):
 *   send     post the class message iov/count (count <= 2) of tag to
 *            dest. Returns 1 when the data was copied out already (the
 *            buffer may change at once, and no completion follows: the
 *            provider drops a later failure of it, which the engine
 *            finds through peer_alive), 0 when posted (exactly one
 *            util_coll_send_done(ep, ctx, err) follows, err a positive
 *            FI_E* or 0), -FI_EAGAIN when out of resources (the engine
 *            retries from progress), or another negative error.
 *   recv     post a receive of the class: util_srx_coll_post does it all
 *            for util_srx providers.
 *   cancel   take a posted receive back without a completion:
 *            util_srx_coll_cancel.
 *   peer_alive  optional: false once the provider knows dest is gone
 *            (called for the peers a stalled operation waits on, every
 *            FI_COLL_LIVENESS_MS). May start a probe whose answer a
 *            later call gives.
 *   host_key optional: equal values for endpoints on one host (dest
 *            FI_ADDR_NOTAVAIL: this endpoint); NULL means one host for
 *            all. Hierarchical algorithms group ranks by it.
 * And the hooks the provider calls:
 *   util_coll_ep_init at endpoint open when info->caps has FI_COLLECTIVE
 *   (it installs the fi_ops_collective table); util_coll_ep_fini at close,
 *   before util_srx_fini; util_coll_progress from its progress function
 *   whenever util_coll_busy() says so (one predictable branch per
 *   progress call); util_coll_join as fi_ops_cm.join; util_coll_query as
 *   fi_ops_domain.query_collective.
 */
#ifndef WEFT_UTIL_COLL_H
#define WEFT_UTIL_COLL_H

#include "weft/compat.h"
#include "weft/util_ep.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <rdma/fi_collective.h>

/* The class's private bit in op and completion flags (util_ep.h keeps
 * the private bits apart and out of the application's flags). */
#define UTIL_COLL_FLAG UTIL_OP_COLL

/* Tag of a class message: group id (12 bits, 0 while joining), then for a
 * joined group the operation's sequence number (20 bits) and the round
 * (32 bits: phase << 24 | round within the phase); while joining, a hash
 * of the membership (36 bits) and the round (16 bits). */
#define UTIL_COLL_GID_BITS	12
#define UTIL_COLL_GID_MAX	(1u << UTIL_COLL_GID_BITS)
#define UTIL_COLL_SEQ_BITS	20
#define UTIL_COLL_SEQ_CTRL	((1u << UTIL_COLL_SEQ_BITS) - 1)
#define UTIL_COLL_TAG(gid, seq, round)					\
	(((uint64_t)(gid) << 52) |					\
	 ((uint64_t)((seq) & UTIL_COLL_SEQ_CTRL) << 32) | (uint32_t)(round))
#define UTIL_COLL_TAG_JOIN(hash, round)					\
	((((uint64_t)(hash) & ((1ULL << 36) - 1)) << 16) |		\
	 ((uint64_t)(round) & 0xffff))
/* Every tag of a group: (tag ^ UTIL_COLL_TAG(gid, 0, 0)) & ~this == 0. */
#define UTIL_COLL_TAG_GROUP_IGNORE ((1ULL << 52) - 1)

struct util_coll_xport {
	ssize_t (*send)(struct util_ep *ep, const struct iovec *iov,
			size_t count, fi_addr_t dest, uint64_t tag, void *ctx);
	ssize_t (*recv)(struct util_ep *ep, void *buf, size_t len,
			fi_addr_t src, uint64_t tag, uint64_t ignore,
			void *ctx);
	int (*cancel)(struct util_ep *ep, void *ctx);
	bool (*peer_alive)(struct util_ep *ep, fi_addr_t dest);
	uint64_t (*host_key)(struct util_ep *ep, fi_addr_t dest);
};

/* Define and read the FI_COLL_* settings, once: a provider that offers
 * FI_COLLECTIVE calls it from its init, so weft_info -e lists them. */
void util_coll_params_init(void);

/* 0, -FI_EINVAL (a required hook missing). */
int util_coll_ep_init(struct util_ep *ep, const struct util_coll_xport *xp);
/* Fails what is in flight (no completions), frees the groups. Takes
 * ep->lock. */
void util_coll_ep_fini(struct util_ep *ep);

static inline bool util_coll_busy(const struct util_ep *ep)
{
	return ep->coll_busy != 0;
}

/* ep->lock held. */
void util_coll_progress(struct util_ep *ep);
void util_coll_send_done(struct util_ep *ep, void *ctx, int err);
void util_coll_recv_done(struct util_ep *ep, void *ctx, size_t len, int err);

int util_coll_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		   struct fid_mc **mc, void *context);
int util_coll_query(struct fid_domain *domain, enum fi_collective_op coll,
		    struct fi_collective_attr *attr, uint64_t flags);

#endif /* WEFT_UTIL_COLL_H */
