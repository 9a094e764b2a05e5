/* SPDX-License-Identifier: MIT */
/*
 * shm provider internals shared by its files (never by other providers).
 *
 * One endpoint = one transport region (its inbound queue is the endpoint's
 * receive side) + the peers it talks to (struct shm_conn, one per remote
 * endpoint, found by AV address on transmit and by transport slot on
 * receive). Small messages go inline in one cell; large ones as an RTS that
 * the receiver answers with an ACK once it pulled the data (CMA or bounce).
 * RMA and atomics run at the target, which checks keys and bounds and ACKs.
 */
#ifndef SHM_H
#define SHM_H

#include "weft/compat.h"

#include <stdint.h>
#include <sys/uio.h>
#include <uthash.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/providers/fi_prov.h>

#include "weft/log.h"
#include "weft/util.h"
#include "weft/util_coll.h"
#include "shm_addr.h"
#include "shm_transport.h"
#include "shm_proto.h"

#define SHM_PROV_NAME      "shm"
#define SHM_PROV_VERSION   FI_VERSION(1, 0)
#define SHM_PROTO_VERSION  1
#define SHM_IOV_LIMIT      4
#define SHM_MAX_MSG_SIZE   ((size_t)1 << 40)
#define SHM_TAG_FORMAT     0xAAAAAAAAAAAAAAAAULL
/* Default FI_SHM_SPLIT_SIZE: from here on, two copy streams beat one by
 * more than the extra CTS/PUSHED exchange costs (measured, see
 * man/fi_shm.7.md). */
#define SHM_DEF_SPLIT_SIZE ((size_t)128 * 1024)
/* A split copy's receiver part is split_share / SHM_SPLIT_ONE of it. */
#define SHM_SPLIT_ONE      (1u << 16)
/* FI_SHM_TX_SIZE's maximum: tx entries are a table of this many (~0.5
 * KiB each) allocated at fi_endpoint; more only fails that allocation. */
#define SHM_MAX_TX_SIZE    (1u << 16)
/* Cells handled per progress call before completions are looked at. */
#define SHM_PROGRESS_BATCH 64

_Static_assert(SHM_ADDR_LEN <= FI_NAME_MAX, "a name fits FI_NAME_MAX");

/* Settings, read once at provider init (FI_SHM_*). */
struct shm_env {
	size_t tx_size;
	size_t rx_size;
	uint32_t cell_size;
	uint32_t cell_count;
	uint32_t max_peers;
	uint32_t bounce_seg_size;
	uint32_t bounce_seg_count;
	uint32_t bounce_peer_segs;	/* cap per peer, 0 = half the pool */
	int disable_cma;
	int remote_comm;
	size_t peer_timeout_ms;
	size_t unexp_count;
	size_t split_size;		/* split copies from this size, 0 = never */
	const char *job;		/* FI_SHM_JOB, NULL when unset */
};

extern struct shm_env shm_env;
extern struct fi_provider shm_prov;
extern const struct util_av_prov shm_av_prov;

struct shm_domain {
	struct util_domain util;
};

static inline struct shm_domain *to_shm_domain(struct fid *fid)
{
	return container_of(fid, struct shm_domain, util.domain_fid.fid);
}

/* Per AV slot: bumped at every insert so endpoints notice reuse. */
struct shm_av_data {
	uint64_t gen;
};

/* A remote endpoint as this endpoint knows it. */
struct shm_conn {
	UT_hash_handle hh;		/* ep->conns, key = name */
	char name[SHM_NAME_MAX];	/* its region ("/weftshm-...") */
	struct shm_peer *peer;		/* its region mapped, opened lazily */
	fi_addr_t fi_addr;		/* reverse AV lookup, cached */
	size_t inflight;		/* our ops waiting on it */
	uint32_t split_share;		/* our part of a split copy from it,
					 * in 1/SHM_SPLIT_ONE of the message */
	/* Its bounce RMA in progress here (shm_rma_bounce.c): its later
	 * cells wait, which keeps the advertised RMA/send orders. */
	uint32_t rma_busy;
	uint32_t bounce_segs;		/* our segments its transfers hold */
	uint32_t refusals;		/* full-queue refusals (liveness checks) */
	bool dead;
	/* Its AV address was removed: the mapping goes once idle. */
	bool av_removed;
	/* An endpoint replaced it under its name (shm_conn_renew): it
	 * left ep->conns for ep->retired, where it stays until the endpoint
	 * closes (queued messages and caches may point at it). */
	struct shm_conn *retired_next;
	uint32_t acks_pending;		/* our replies waiting for its queue */
	uint64_t ack_flush_seq;		/* shm_ack_flush pass that found it full */
	/* Its slot's consumed counter in our region, where the credits of
	 * the cells it sends us go back (set when its first cell comes). */
	_Atomic uint64_t *credit;
};

/* A cell of conn was consumed: its credit back (shm_region_credit). */
static inline void shm_conn_credit(struct shm_conn *conn)
{
	atomic_store_explicit(conn->credit,
			      atomic_load_explicit(conn->credit,
						   memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* What a cell handler returns besides 0 (consumed: its sender gets its
 * credit back now) and -FI_EAGAIN (held, retried later): an unexpected
 * entry keeps a copy, and the credit comes back when that entry goes
 * (shm_unexp_put). */
#define SHM_CELL_KEPT 1

/* What a handler of a cell of conn returned, passed on: a consumed cell
 * (not held, not kept) gives its credit back. */
static inline int shm_cell_done(struct shm_conn *conn, int ret)
{
	if (ret != -FI_EAGAIN && ret != SHM_CELL_KEPT)
		shm_conn_credit(conn);
	return ret;
}

/* fi_addr -> conn cache of the transmit side. */
struct shm_tx_map {
	uint64_t gen;			/* shm_av_data.gen it was made for */
	struct shm_conn *conn;
};

/* In shm_tx_map.gen (conn NULL): the peer of that address, at that
 * generation, is dead; operations to it fail until the address is
 * inserted again. AV generations never reach this bit. */
#define SHM_TX_MAP_DEAD (1ULL << 63)

/* transport src slot -> conn cache of the receive side. */
struct shm_src_map {
	struct shm_conn *conn;
	uint16_t gen;
};

/* An initiator operation that waits for an ACK (large send, RMA, atomic,
 * delivery-complete send). Its index and generation form the cookie. */
struct shm_tx_entry {
	struct shm_tx_entry *prev, *next;	/* ep->tx_active */
	uint32_t idx;
	uint32_t gen;
	struct shm_conn *conn;
	void *context;
	uint64_t comp_flags;
	size_t len;
	uint64_t deadline_ns;
	enum util_cntr_slot cntr;
	bool want_comp;
	bool bounce_active;
	bool split_ok;			/* a CMA RTS: a CTS may ask for a push */
	uint8_t pushes;			/* CTS pushes done (SHM_SPLIT_PUSHES) */
	bool pull_active;		/* bounce read: draining the target */
	/* A CMA RMA keeps its request: if the target turns out unable to
	 * reach our memory (ptrace rules can be one-way), it is sent again
	 * through bounce segments (shm_rma_cma_refused). */
	bool rma_cma;
	bool rma_resend;		/* that resend waits for a cell */
	uint16_t rma_op;
	uint16_t rma_cflags;
	uint64_t rma_data;
	size_t rma_cnt;
	struct fi_rma_iov rma[SHM_IOV_LIMIT];
	struct iovec iov[SHM_IOV_LIMIT];	/* data source (bounce, push) */
	size_t iov_cnt;
	struct iovec res[SHM_IOV_LIMIT];	/* inline read / fetch results */
	size_t res_cnt;
	struct shm_bounce_tx bounce;
	struct shm_bounce_rx brx;	/* bounce read */
};

_Static_assert(SHM_IOV_LIMIT <= UTIL_SRX_IOV_MAX, "a receive fits util_srx");

/* An unexpected message: the cell's header and payload, copied out
 * (size and data in srx). */
struct shm_unexp {
	struct util_srx_unexp srx;
	struct shm_ep *ep;		/* the srx may be an owner's */
	struct shm_conn *conn;
	uint16_t op;
	uint16_t cflags;
	uint16_t slot, slot_gen;	/* the cell's sender, owed a credit */
	uint32_t proto;
	uint32_t len;			/* payload bytes */
	uint64_t cookie;
	uint8_t payload[];
};

/* A large receive in flight: through bounce segments, or a split copy
 * waiting for the sender's PUSHED. */
struct shm_pull {
	struct shm_pull *prev, *next;
	struct shm_conn *conn;
	bool split;
	bool cts_pending;		/* our CTS is still to be sent */
	bool split_refused;		/* our part's read was refused */
	int split_err;			/* of our own part */
	uint64_t split_id;		/* rx_id of our CTS */
	uint64_t split_t0, split_t1;	/* our part's copy: start, end (ns) */
	uint64_t split_mine;		/* our part's bytes */
	uint64_t split_want;		/* both parts' bytes */
	struct shm_bounce_rx brx;
	struct util_srx_dest dest;
	uint64_t cookie;
	uint64_t size;			/* message bytes */
	uint16_t cflags;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;
};

/* One arriving message, from a cell or from an unexpected entry. */
struct shm_msg_info {
	struct shm_conn *conn;
	uint16_t op;
	uint16_t cflags;
	uint16_t slot, slot_gen;	/* the cell's sender (hdr src, src_gen) */
	uint32_t proto;
	uint32_t len;			/* payload bytes */
	uint64_t size;			/* message bytes */
	uint64_t data;
	uint64_t tag;
	uint64_t cookie;
	fi_addr_t src;
	const uint8_t *payload;
};

/* An RTS descriptor after validation. */
struct shm_rts_local {
	uint64_t total;
	uint64_t xfer_id;
	uint32_t iov_cnt;
	struct iovec iov[SHM_IOV_LIMIT];
};

/* A reply that found the initiator's queue full (shm_reply.c). */
struct shm_ack_pending {
	struct shm_ack_pending *next;
	struct shm_conn *conn;
	uint64_t cookie;
	uint64_t tag, data;
	uint32_t status;
	uint16_t op;			/* ACK or PUSHED */
	bool heap;			/* payload malloc'ed, not pooled */
	uint32_t len;			/* payload bytes to send */
	uint8_t *payload;		/* read bytes, fetched values */
};

/* A reply being made: a reserved cell of the initiator's queue, or a
 * waiting reply when that queue is full. */
struct shm_reply {
	struct shm_conn *conn;
	struct shm_cell *cell;
	struct shm_ack_pending *pending;
	uint8_t *payload;		/* where its data goes */
};

struct shm_ep {
	struct util_ep util;
	struct shm_region *region;
	char addr[SHM_ADDR_LEN];
	uint32_t payload_max;		/* of our own cells */

	struct shm_conn *conns;		/* hash by name */
	struct shm_tx_map *tx_map;	/* indexed by fi_addr */
	size_t tx_map_len;
	struct shm_src_map *src_map;	/* indexed by transport src */
	uint32_t src_map_len;

	struct shm_tx_entry *tx_entries;	/* tx_size of them */
	uint32_t *tx_free;		/* stack of free indices */
	size_t tx_free_top;
	size_t tx_size;
	struct shm_tx_entry *tx_active;	/* oldest first */

	struct util_srx srx;		/* posted receives, unexpected ones */
	/* Where arriving messages match: &srx, or the receive side of the
	 * provider that owns this endpoint as its peer (fi_srx_context with
	 * FI_PEER, shm_peer_srx.c), whose CQs and counters then report them. */
	struct util_srx *rx;
	struct util_pool unexp_pool;	/* struct shm_unexp + payload */
	struct util_pool pull_pool;	/* struct shm_pull */
	struct util_pool ack_pool;	/* struct shm_ack_pending */
	struct util_pool ack_data_pool;	/* their payloads, payload_max each */
	struct util_pool rma_pool;	/* struct shm_rma_xfer */
	struct shm_pull *pulls;
	struct shm_ack_pending *acks;	/* oldest first */
	struct shm_ack_pending **acks_tail;
	uint64_t ack_flush_seq;
	struct shm_rma_xfer *rma_xfers;	/* bounce RMA we are the target of */

	/* A polled cell that could not be handled yet (no reply cell, no
	 * unexpected buffer): retried before anything else. */
	struct shm_cell *held;
	struct shm_cell_hdr held_hdr;
	/* Cells handled but handed back only at the next progress call. */
	uint32_t rel_pending;

	uint64_t progress_calls;
	/* Next looks at what waits on peers (shm_check_due): the deadlines
	 * of operations waiting for an ACK, the senders of pulls. */
	uint64_t tx_check_ns, pull_check_ns;
	uint64_t split_seq;		/* last CTS rx_id */
	/* SHM_AV_* bits: an address left an AV (set by fi_av_remove),
	 * releases are deferred; progress sweeps while nonzero. */
	_Atomic uint32_t av_dirty;
	uint32_t conns_removed;		/* conns with av_removed set */
	struct shm_conn *retired;	/* replaced peers, see shm_conn */
	uint32_t retired_mapped;	/* those whose mapping is still open */
	struct shm_ep *av_prev, *av_next;	/* every shm endpoint */
};

#define SHM_AV_CHANGED 1u
#define SHM_AV_PENDING 2u

/* Whether a look at what waits on peers is due, rearming it. By time,
 * not by a count of progress calls: an application that polls seldom (or
 * is starved of CPU) must see a dead peer's errors within peer_timeout_ms
 * all the same. The coarse clock costs a few ns and no syscall; callers
 * ask only while something waits. */
#define SHM_CHECK_NS (1000000ull)	/* 1 ms */

static inline bool shm_check_due(uint64_t *next_ns)
{
	uint64_t now = util_time_coarse_ns();

	if (now < *next_ns)
		return false;
	*next_ns = now + SHM_CHECK_NS;
	return true;
}

static inline struct shm_ep *to_shm_ep(struct fid_ep *ep_fid)
{
	return container_of(ep_fid, struct shm_ep, util.ep_fid);
}

static inline struct shm_ep *to_shm_ep_util(struct util_ep *util)
{
	return container_of(util, struct shm_ep, util);
}

/* shm_av.c: fi_av_remove flags every endpoint (SHM_AV_CHANGED). */
void shm_av_ep_add(struct shm_ep *ep);
void shm_av_ep_del(struct shm_ep *ep);

/* shm_init.c */
void shm_env_region_attr(struct shm_region_attr *attr);
/* The job namespace of chosen names and what named it, for logs:
 * "none", or "j<hex> (PMIX_NAMESPACE=...)". */
const char *shm_job_described(void);

/* shm_fabric.c, shm_domain.c, shm_ep.c */
int shm_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
int shm_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int shm_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);

/* shm_conn.c: peers. The lookups below are inline for their cached case
 * and call the _checked function otherwise. */
int shm_conn_tx_checked(struct shm_ep *ep, fi_addr_t fi_addr,
			struct shm_conn **conn);
/* false (and its operations failed) once the peer is found dead. */
bool shm_conn_check(struct shm_ep *ep, struct shm_conn *conn);
struct shm_conn *shm_conn_by_src_checked(struct shm_ep *ep,
					 const struct shm_cell_hdr *hdr);
int shm_conn_open_peer(struct shm_ep *ep, struct shm_conn *conn);
fi_addr_t shm_conn_fi_addr_checked(struct shm_ep *ep, struct shm_conn *conn);
void shm_conn_close_all(struct shm_ep *ep);
/* Progress, once ep->av_dirty is set: unmap the peers whose address left
 * the AV and that nothing uses any more. */
void shm_conn_sweep(struct shm_ep *ep);

/* Every progress call: one load of a word of ep. */
static inline void shm_conn_sweep_check(struct shm_ep *ep)
{
	if (WEFT_UNLIKELY(atomic_load_explicit(&ep->av_dirty,
					       memory_order_relaxed)))
		shm_conn_sweep(ep);
}

/* Whether no address left the AV since the last sweep, which drops the
 * caches below of those that did: while so, a cached entry is current. */
static inline bool shm_conn_caches_current(struct shm_ep *ep)
{
	return !atomic_load_explicit(&ep->av_dirty, memory_order_relaxed);
}

/* The peer of a destination fi_addr. */
static inline int shm_conn_tx(struct shm_ep *ep, fi_addr_t fi_addr,
			      struct shm_conn **conn)
{
	struct shm_conn *c;

	if (WEFT_LIKELY(fi_addr < ep->tx_map_len &&
			shm_conn_caches_current(ep))) {
		c = ep->tx_map[fi_addr].conn;
		if (WEFT_LIKELY(c && c->peer)) {
			*conn = c;
			return 0;
		}
	}
	return shm_conn_tx_checked(ep, fi_addr, conn);
}

/* The sender of a cell (NULL: unknown or stale, drop the cell). */
static inline struct shm_conn *shm_conn_by_src(struct shm_ep *ep,
					       const struct shm_cell_hdr *hdr)
{
	const struct shm_src_map *m;

	if (WEFT_LIKELY(hdr->src < ep->src_map_len)) {
		m = &ep->src_map[hdr->src];
		if (WEFT_LIKELY(m->conn && m->gen == hdr->src_gen))
			return m->conn;
	}
	return shm_conn_by_src_checked(ep, hdr);
}

/* conn's address in our AV, FI_ADDR_NOTAVAIL if it has none. */
static inline fi_addr_t shm_conn_fi_addr(struct shm_ep *ep,
					 struct shm_conn *conn)
{
	if (WEFT_LIKELY(conn->fi_addr != FI_ADDR_NOTAVAIL &&
			shm_conn_caches_current(ep)))
		return conn->fi_addr;
	return shm_conn_fi_addr_checked(ep, conn);
}

/* The source a receive reports: the fi_addr, or the identifier the AV
 * was given for it (FI_AV_USER_ID: a peer owner's own fi_addr). */
static inline fi_addr_t shm_conn_src(struct shm_ep *ep, struct shm_conn *conn)
{
	fi_addr_t a = shm_conn_fi_addr(ep, conn);

	if (WEFT_UNLIKELY(ep->util.av->user_ids) && a != FI_ADDR_NOTAVAIL)
		return util_av_user_id(ep->util.av, a);
	return a;
}
/* shm_bounce_push for a transfer toward conn, within its share of the
 * pool (shm_env.bounce_peer_segs); shm_bounce_tx_abort likewise. */
int shm_conn_bounce_push(struct shm_ep *ep, struct shm_conn *conn,
			 struct shm_bounce_tx *b);
void shm_conn_bounce_abort(struct shm_ep *ep, struct shm_conn *conn,
			   struct shm_bounce_tx *b);
/* -FI_EAGAIN while the peer may drain its queue, an error once it is
 * found dead (checked only every so many refusals). */
ssize_t shm_conn_full(struct shm_ep *ep, struct shm_conn *conn);

/* shm_tx.c: initiator operations awaiting an ACK. */
int shm_tx_init(struct shm_ep *ep, size_t size);
void shm_tx_fini(struct shm_ep *ep);
struct shm_tx_entry *shm_tx_get(struct shm_ep *ep, struct shm_conn *conn);
void shm_tx_put(struct shm_ep *ep, struct shm_tx_entry *tx);
uint64_t shm_tx_bounce_push(struct shm_ep *ep, struct shm_tx_entry *tx,
			    size_t count, size_t len);
void shm_tx_activate(struct shm_ep *ep, struct shm_tx_entry *tx);
uint64_t shm_tx_cookie(const struct shm_tx_entry *tx);
void shm_tx_complete(struct shm_ep *ep, struct shm_tx_entry *tx, int err);
void shm_tx_handle_ack(struct shm_ep *ep, struct shm_conn *conn,
		       const struct shm_cell_hdr *hdr, const uint8_t *payload);
void shm_tx_progress(struct shm_ep *ep);
void shm_tx_fail_conn(struct shm_ep *ep, struct shm_conn *conn, int err);
/* The active entry a reply from conn names by cookie, or NULL. */
struct shm_tx_entry *shm_tx_find(struct shm_ep *ep, struct shm_conn *conn,
				 uint64_t cookie);

/* shm_msg.c / shm_tagged.c: posting. */
extern const struct fi_ops_msg shm_msg_ops;
extern const struct fi_ops_tagged shm_tagged_ops;
ssize_t shm_send_post(struct shm_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag,
		      uint64_t data, void *context, uint64_t flags);
/* shm_coll.c: the collective engine's transport. */
extern const struct util_coll_xport shm_coll_xport;
ssize_t shm_coll_send(struct shm_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag, void *ctx);
/* fi_inject and variants (flags: FI_INJECT, FI_TAGGED, FI_REMOTE_CQ_DATA). */
ssize_t shm_inject_post(struct shm_ep *ep, const void *buf, size_t len,
			fi_addr_t dest, uint64_t tag, uint64_t data,
			uint64_t flags);

/* shm_recv.c: the receive side of messages. */
int shm_rx_init(struct shm_ep *ep);
void shm_rx_fini(struct shm_ep *ep);
void shm_unexp_put(struct shm_ep *ep, struct shm_unexp *ux);

/* 0, SHM_CELL_KEPT or -FI_EAGAIN, as above. */
int shm_rx_handle_msg(struct shm_ep *ep, struct shm_conn *conn,
		      const struct shm_cell_hdr *hdr, const uint8_t *payload);
void shm_rx_progress(struct shm_ep *ep);
int shm_rx_deliver(struct shm_ep *ep, const struct util_srx_dest *dest,
		   const struct shm_msg_info *m);
ssize_t shm_ep_cancel(fid_t fid, void *context);
extern const struct util_srx_ops shm_srx_ops;

/* shm_peer_srx.c: an owner's receive side (FI_PEER) */
int shm_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		       struct fid_ep **rx_ep, void *context);
int shm_ep_bind_peer_srx(struct shm_ep *ep, struct fid *bfid);
void shm_peer_srx_detach(struct shm_ep *ep);
void shm_rx_fail_conn(struct shm_ep *ep, struct shm_conn *conn);

/* shm_reply.c: replies, sent now or waiting for the initiator's queue. */
int shm_reply_init(struct shm_ep *ep);
void shm_reply_fini(struct shm_ep *ep);
/* Start a reply to conn with up to len bytes of data at r->payload:
 * 0, or -FI_ENOMEM (hold the request and retry). */
int shm_reply_open(struct shm_ep *ep, struct shm_conn *conn, uint32_t len,
		   struct shm_reply *r);
/* Send (or queue) it with len bytes of data. */
void shm_reply_close(struct shm_ep *ep, struct shm_reply *r, uint16_t op,
		     uint64_t cookie, int status, uint64_t tag, uint64_t data,
		     uint32_t len);
/* ACK toward conn, now or queued; never fails (errors are logged). */
void shm_ack_send(struct shm_ep *ep, struct shm_conn *conn, uint64_t cookie,
		  int status);
/* The same for any bodiless reply (ACK, PUSHED). */
void shm_reply_send(struct shm_ep *ep, struct shm_conn *conn, uint16_t op,
		    uint64_t cookie, int status);
/* ... with tag and data as given (instead of 0). */
void shm_reply_send_data(struct shm_ep *ep, struct shm_conn *conn,
			 uint16_t op, uint64_t cookie, int status,
			 uint64_t tag, uint64_t data);
struct shm_pull *shm_pull_new(struct shm_ep *ep, const struct util_srx_dest *dest,
			      const struct shm_msg_info *m);
void shm_pull_finish(struct shm_ep *ep, struct shm_pull *p, int err);

/* shm_split.c: large CMA messages copied by both sides at once. */
/* 0: the receive completes once the sender's part is in too; -FI_EAGAIN:
 * not split (no reply cell or entry), copy it all here. */
int shm_split_start(struct shm_ep *ep, const struct util_srx_dest *dest,
		    const struct shm_msg_info *m, const struct shm_rts_local *r,
		    size_t want);
/* Pushes a sender makes for one send: the CTS of a split, and one more
 * for the receiver's part if the receiver's own read is refused. */
#define SHM_SPLIT_PUSHES 2
/* The whole message of an RTS pushed by its sender (we may not read its
 * memory, it may write ours). 0, or -FI_ENOMEM. */
int shm_split_push_all(struct shm_ep *ep, const struct util_srx_dest *dest,
		       const struct shm_msg_info *m, size_t want);
/* Send p's CTS (the sender writes bytes [split_mine, split_want) of the
 * message into our buffer). -FI_EAGAIN while its queue is full. */
int shm_split_send_cts(struct shm_pull *p);
/* Our read of conn's memory was refused after its probe had allowed it
 * (its ptrace rules changed): no CMA reads of it from now on, and the
 * message of m is pushed whole by its sender. 0, or -FI_ENOMEM. */
int shm_split_cma_refused(struct shm_ep *ep, const struct util_srx_dest *dest,
			  const struct shm_msg_info *m, size_t want);
void shm_split_handle_cts(struct shm_ep *ep, struct shm_conn *conn,
			  const struct shm_cell_hdr *hdr,
			  const uint8_t *payload);
void shm_split_handle_pushed(struct shm_ep *ep, struct shm_conn *conn,
			     const struct shm_cell_hdr *hdr);
void shm_ack_flush(struct shm_ep *ep);

/* shm_rma.c / shm_atomic.c */
extern const struct fi_ops_rma shm_rma_ops;
extern const struct fi_ops_atomic shm_atomic_ops;
int shm_rma_handle(struct shm_ep *ep, struct shm_conn *conn,
		   const struct shm_cell_hdr *hdr, const uint8_t *payload);

/* An RMA request as the target sees it, copied out of the cell. */
struct shm_rma_req {
	struct shm_rma hdr;
	struct shm_rma_iov rma[SHM_IOV_LIMIT];
	struct iovec local[SHM_IOV_LIMIT];
	struct iovec remote[SHM_IOV_LIMIT];
	const uint8_t *inline_data;
	size_t inline_len;
};

/* Target regions -> local iovs, every one checked; positive FI_E*. */
int shm_rma_map(struct shm_ep *ep, struct shm_rma_req *req, uint64_t access);
void shm_rma_target_events(struct shm_ep *ep, struct shm_conn *conn,
			   uint16_t op, uint16_t flags, uint64_t data,
			   const struct shm_rma_req *req);
/* Initiator: the target of CMA RMA tx answered FI_EOPNOTSUPP (CMA refused
 * from its side): bounce from now on toward it, and tx again that way. */
void shm_rma_cma_refused(struct shm_ep *ep, struct shm_tx_entry *tx);
/* Send tx's request again through bounce segments once a cell is free. */
void shm_rma_resend(struct shm_ep *ep, struct shm_tx_entry *tx);

/* shm_rma_bounce.c: RMA through bounce segments where CMA is refused. */
int shm_rma_bounce_init(struct shm_ep *ep);
void shm_rma_bounce_fini(struct shm_ep *ep);
/* Initiator: the transfer behind a WRITE/READ cell r of tx. */
void shm_rma_bounce_start(struct shm_ep *ep, struct shm_tx_entry *tx,
			  enum shm_op op, struct shm_rma *r,
			  const struct iovec *iov, size_t count, size_t len);
/* Target: a WRITE/READ cell with SHM_COPY_BOUNCE; -FI_EAGAIN: hold it. */
int shm_rma_bounce_handle(struct shm_ep *ep, struct shm_conn *conn,
			  const struct shm_cell_hdr *hdr,
			  const uint8_t *payload);
void shm_rma_bounce_progress(struct shm_ep *ep);
void shm_rma_bounce_fail_conn(struct shm_ep *ep, struct shm_conn *conn);
int shm_atomic_handle(struct shm_ep *ep, struct shm_conn *conn,
		      const struct shm_cell_hdr *hdr, const uint8_t *payload);

/* shm_progress.c */
void shm_ep_progress(struct util_ep *util);
void shm_ep_progress_locked(struct shm_ep *ep);

/*
 * inject_size: what every inject can carry in one cell, RMA writes
 * included, whose request (up to SHM_IOV_LIMIT remote iovs) shares the
 * cell with the data. Messages alone could carry the whole cell payload.
 */
static inline size_t shm_inject_max(uint32_t cell_size)
{
	size_t payload = shm_cell_payload_max(cell_size);
	size_t req = sizeof(struct shm_rma) +
		     SHM_IOV_LIMIT * sizeof(struct shm_rma_iov);

	return payload > req ? payload - req : 0;
}

/* shm_cell.c: what a peer's cell carries, checked against the cell's
 * validated length (hdr->len) and our limits before anything is used. */
/* A status from another process (0 or a positive FI_E*), made sane. */
int shm_wire_status(uint32_t status);
/* An RTS descriptor, in local memory: 0 or -FI_EINVAL. */
int shm_rts_parse(const uint8_t *payload, uint32_t len, struct shm_rts_local *r);
/* Bytes of a WRITE/READ request's header with rma_cnt target regions. */
static inline size_t shm_rma_hdr_size(size_t rma_cnt)
{
	return sizeof(struct shm_rma) + rma_cnt * sizeof(struct shm_rma_iov);
}
/* Copy and check the request against the cell length; positive FI_E*. */
int shm_rma_parse(const struct shm_cell_hdr *hdr, const uint8_t *payload,
		  struct shm_rma_req *req);
/* An ATOMIC request into amo (positive FI_E* or 0); bytes: its operand
 * bytes, what a fetch returns (at most reply_max). */
int shm_amo_parse(const struct shm_cell_hdr *hdr, const uint8_t *payload,
		  uint32_t reply_max, struct shm_amo *amo, size_t *bytes);
/* A CTS's receiver buffers, checked against the tx_len bytes the send
 * has: the window [*off, *off + *len) and the iov count, or -FI_EINVAL. */
int shm_cts_parse(uint64_t tx_len, const struct shm_cell_hdr *hdr,
		  const struct shm_cts *cts, uint64_t *off, uint64_t *len,
		  struct iovec *theirs);

#endif /* SHM_H */
