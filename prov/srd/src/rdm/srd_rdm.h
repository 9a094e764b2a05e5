/* SPDX-License-Identifier: MIT */
/*
 * srd provider, RDM layer: the libfabric objects built on the device layer
 * (dev/srd_dev.h) and the wire format (srd_pkt.h). Completion-poll mode: every
 * packet is a send into a receive buffer the peer posted; one srd_dev_cq per
 * endpoint (send and receive) is polled by the util progress hook.
 *
 * Work requests: wr_id always points at a struct whose first member is
 * struct srd_wr_hdr, so completions (errors included, where only wr_id is
 * valid) find their owner by kind.
 */
#ifndef SRD_RDM_H
#define SRD_RDM_H

#include "weft/compat.h"
#include "weft/util.h"
#include "weft/util_coll.h"
#include "weft/util_peer.h"
#include "../dev/srd_dev.h"
#include "srd_pkt.h"
#include "srd_reorder.h"

#include <sys/uio.h>
#include <utlist.h>

#define SRD_IOV_MAX 4			/* = SRD_PKT_IOV_MAX */
#define SRD_MAX_PEERS 4096		/* per endpoint */
#define SRD_REORDER_WINDOW 256
#define SRD_RX_BUFS_MAX 1024		/* posted receive buffers per ep */
#define SRD_RX_REPOST_BATCH 16		/* used rx buffers reposted at once */
#define SRD_TX_BUFS_MIN 16		/* packet buffers per ep */
#define SRD_TX_BUFS_MAX 1024
#define SRD_TX_ENTRIES_MAX 1024		/* messages in flight per ep */
#define SRD_MEDIUM_MAX (64 * 1024)	/* above: long protocol (RDMA read) */

/* ---- what the device offers, as the RDM layer presents it (srd_info.c) */

enum srd_long_proto {
	SRD_LONG_CTS,		/* receiver grants credits, data by sends */
	SRD_LONG_READ,		/* receiver pulls with RDMA read */
};

struct srd_proto_caps {
	size_t tx_size;
	size_t rx_size;
	size_t tx_iov_limit;
	size_t rx_iov_limit;
	size_t inject_size;
	size_t max_msg_size;
	size_t max_rma_size;		/* 0 without hardware RMA */
	size_t eager_max;		/* payload of one packet */
	bool hw_rma;
	enum srd_long_proto long_proto;
};

#define SRD_PKT_HDR_MAX 64	/* room kept in each packet for protocol headers */
#define SRD_PKT_ALIGN 64	/* of every packet buffer */
/* Largest message: receivers refuse a larger total_len (srd_ep_rx_pkt),
 * so nothing larger is offered or accepted for sending. */
#define SRD_MAX_MSG_SIZE ((size_t)UINT32_MAX)

void srd_proto_caps_from_dev(const struct srd_dev_caps *caps,
			     struct srd_proto_caps *pc);
/* Fill an fi_info allocated with all its attribute structs. */
void srd_info_fill(const struct srd_dev_caps *caps, const char *dev_name,
		   struct fi_info *info);

size_t srd_rounddown_pow2(size_t v);

/* ---- endpoint names (srd_av.c) ------------------------------------------ */

#define SRD_EP_NAME_VERSION 2
/* flags: the endpoint takes peers of its host through shm
 * (srd_shm.c), at the shm address its name derives. */
#define SRD_EP_NAME_F_SHM 0x1u

/* The endpoint name on the wire and in the AV: packed, versioned, at most
 * FI_NAME_MAX bytes. host_key tells endpoints of one host (one boot, one
 * network namespace) from the others: srd_host_key. */
struct srd_ep_name {
	uint8_t version;
	uint8_t flags;			/* SRD_EP_NAME_F_* */
	uint8_t reserved[2];
	uint32_t qpn;
	uint32_t qkey;
	uint8_t gid[16];
	uint64_t host_key;
} __attribute__((packed));

_Static_assert(sizeof(struct srd_ep_name) <= FI_NAME_MAX,
	       "an srd name fits FI_NAME_MAX");

void srd_ep_name_build(const struct srd_dev_qp *qp, struct srd_ep_name *name);
/* Validates untrusted bytes: -FI_EINVAL with a log line when malformed. */
int srd_ep_name_parse(const void *buf, size_t len, struct srd_ep_name *name);
int srd_ep_name_str(const struct srd_ep_name *name, char *buf, size_t len);
/* fi_getinfo's addresses: src_addr is the device's name without a QP
 * (qpn and qkey 0), since an endpoint's QP number comes with its QP and no
 * node or service can choose it; hints->dest_addr, a valid name, is
 * returned as dest_addr. -FI_ENODATA for a hinted source on another device
 * or a malformed hinted destination. */
int srd_info_set_addrs(const struct srd_dev_caps *caps,
		       const struct fi_info *hints, struct fi_info *info);

/* ---- error completions that name the peer (srd_err.c) ----------------- */

/*
 * fi_cq_err_entry.err_data of srd error completions (fi_srd(7)): the peer
 * and the cause, so that fi_cq_strerror can name both. Binary, versioned
 * by size; at most UTIL_CQ_ERR_DATA_MAX bytes.
 */
#define SRD_ERR_DATA_MAGIC 0x45445253u	/* "SRDE" in little endian */
#define SRD_ERR_DATA_F_PEER 0x1u	/* peer is the remote endpoint */
#define SRD_ERR_DATA_F_ADDR 0x2u	/* fi_addr is its address in the AV */

struct srd_err_data {
	uint32_t magic;
	uint16_t size;			/* sizeof(struct srd_err_data) */
	uint16_t flags;			/* SRD_ERR_DATA_F_* */
	int32_t err;			/* the entry's err (positive FI_E*) */
	int32_t prov_errno;
	uint64_t fi_addr;
	struct srd_ep_name peer;
};

void srd_err_data_init(struct srd_err_data *d, int err, int prov_errno,
		       const struct srd_ep_name *peer, uint64_t fi_addr);
/* The domain's strerror (fi_cq_strerror): err_data, when it is ours,
 * names the peer. buf NULL: text in thread-local storage, valid until the
 * thread's next call. */
const char *srd_strerror(int prov_errno, const void *err_data, char *buf,
			 size_t len);

/* ---- objects ------------------------------------------------------------ */

struct srd_domain {
	struct util_domain util;
	struct srd_dev *dev;
	struct srd_proto_caps pc;
};

static inline struct srd_domain *to_srd_domain(struct fid_domain *d)
{
	return container_of(d, struct srd_domain, util.domain_fid);
}

/* Per-address data of the AV (util_av_prov.data_size). */
struct srd_av_entry {
	struct srd_dev_ah *ah;
};

enum srd_wr_kind {
	SRD_WR_RXBUF = 1,	/* a posted receive buffer */
	SRD_WR_TXBUF,		/* a packet send (or a ring write of one) */
	SRD_WR_READ,		/* an RDMA read of a long message */
	SRD_WR_RMA,		/* an RMA or atomic operation's */
	SRD_WR_RING,		/* a data-mode ring's credit-return write */
	SRD_WR_KIND_MAX,
};

struct srd_wr_hdr {
	uint8_t kind;		/* enum srd_wr_kind */
};

struct srd_ep;
struct srd_peer;
struct srd_tx_entry;
struct srd_proto;

/* A registered packet buffer of the ep's tx slab. */
struct srd_txbuf {
	struct srd_wr_hdr hdr;
	struct srd_txbuf *next;		/* free list, or a peer's queue */
	struct srd_peer *peer;
	struct srd_tx_entry *tx;	/* the message it carries, or NULL */
	struct srd_wr_hdr *owner;	/* another owner (RMA), or NULL */
	uint32_t len;
	uint8_t *data;
};

/* A registered receive buffer of the ep's rx slab. */
struct srd_rxbuf {
	struct srd_wr_hdr hdr;
	struct srd_rxbuf *next;		/* repost list */
	uint8_t *data;
};

enum srd_peer_state {
	SRD_PEER_NEW,		/* no handshake: never sent, or failed since */
	SRD_PEER_HELLO_SENT,	/* waiting for HELLO_ACK: data queued */
	SRD_PEER_READY,		/* remote_id known */
};

struct srd_rx_xfer;
struct srd_stripe_peer;		/* proto/srd_stripe.h */
struct srd_ring_peer;		/* proto/srd_ring.h */
struct srd_ring_ep;

struct srd_peer {
	uint32_t id;			/* index in ep->peers; peers echo it */
	uint32_t remote_id;		/* their id for us */
	enum srd_peer_state state;
	fi_addr_t fi_addr;		/* FI_ADDR_NOTAVAIL until the AV has it */
	struct srd_ep_name name;
	struct srd_dev_ah *ah;		/* reference held */
	struct srd_dev_dest dest;	/* ah, qpn and qkey, for posting */
	uint64_t features;		/* SRD_FEAT_* the peer announced */
	uint32_t next_msg_id;		/* of our next message to it */
	struct srd_reorder reorder;	/* its messages to us */
	struct srd_dev_rnr rnr;
	struct srd_txbuf *q_head;	/* packets waiting: handshake, RNR */
	struct srd_txbuf *q_tail;
	struct srd_rx_xfer *rx_xfers;	/* its messages arriving in pieces */
	struct srd_peer *flush_next;	/* ep->flush list */
	bool on_flush;
	bool unreachable;		/* the device failed a send to it */
	UT_hash_handle hh;		/* ep->peer_by_name, key name */
	struct srd_ring_peer *ring;	/* data-mode ring, or NULL */
	struct srd_stripe_peer *stripe;	/* its rails, or NULL */
};

/* A message being sent. id = index | generation << 16, echoed by peers. */
struct srd_tx_entry {
	struct srd_tx_entry *pump_next, *pump_prev;	/* ep->tx_pump */
	const struct srd_proto *proto;
	struct srd_peer *peer;
	void *context;
	uint64_t comp_flags;
	uint64_t tag;
	uint64_t total_len;
	uint64_t sent;			/* bytes handed to packets */
	uint32_t id;
	uint32_t msg_id;
	uint32_t cq_data;
	uint32_t inflight;		/* packets posted, not completed */
	uint16_t pkt_flags;		/* SRD_PKT_F_TAGGED | _CQ_DATA */
	bool want_comp;
	bool done_wait;			/* the receiver's READ_DONE is due */
	bool in_use;
	bool on_pump;
	int err;			/* first error, positive FI_E* */
	int prov_errno;
	size_t iov_count;
	struct iovec iov[SRD_IOV_MAX];
	/* long by read: registered here for the receiver to read, on
	 * rail 0 and on rails 1..rails-1 when striped */
	struct ibv_mr *mr[SRD_IOV_MAX];
	struct ibv_mr *rail_mr[SRD_PKT_RAILS_MAX - 1][SRD_IOV_MAX];
	uint32_t rails;
	/* CTS: the receiver's transfer id and the end of what it granted
	 * (DATA goes for [sent, granted)) */
	uint64_t granted;
	uint32_t rx_id;
	bool cts_seen;
	/* through shm: an inject beyond shm's inject size, copied here */
	uint8_t *shm_bounce;
};

_Static_assert(SRD_IOV_MAX <= UTIL_SRX_IOV_MAX, "a receive fits util_srx");

/* What arrived: the first packet of a message (or a segment), decoded. */
struct srd_msg_info {
	struct srd_peer *peer;
	const struct srd_proto *proto;	/* owner of its type */
	uint8_t type;
	uint16_t flags;
	uint32_t msg_id;
	uint32_t tx_id;
	uint32_t cq_data;
	uint64_t tag;
	uint64_t total_len;
	uint64_t offset;
	uint32_t seg_len;
	const uint8_t *payload;
};

/* An unexpected message: by default its first packet's payload in data[]
 * (EAGER: the message, LONG_RTS: the iovs, CTS_RTS: the first chunk);
 * MEDIUM: the whole message in buf, complete when xfer is NULL. */
struct srd_unexp {
	struct util_srx_unexp srx;
	struct srd_msg_info m;		/* payload points into data/buf */
	struct srd_rx_xfer *xfer;	/* MEDIUM still arriving */
	uint8_t *buf;			/* MEDIUM: total_len bytes */
	struct util_srx_dest then;	/* receive that took it meanwhile */
	bool then_set;
	bool buf_pooled;		/* buf from ux_buf_pool */
	int err;			/* it can no longer arrive whole */
	int prov_errno;
	uint8_t data[];			/* eager_max bytes */
};

/* A message arriving in pieces (MEDIUM segments, RDMA reads, CTS DATA),
 * on its peer's rx_xfers from srd_xfer_get to srd_xfer_free. */
struct srd_rx_xfer {
	struct srd_wr_hdr hdr;		/* RDMA reads point here */
	struct srd_rx_xfer *next, *prev;	/* peer->rx_xfers */
	struct srd_rx_xfer *pump_next, *pump_prev;	/* ep->rx_pump */
	const struct srd_proto *proto;
	struct srd_peer *peer;
	struct srd_msg_info m;		/* payload unused */
	struct util_srx_dest dest;
	struct srd_unexp *ux;		/* landing in an unexpected buffer */
	uint64_t received;		/* bytes landed */
	int err;
	int prov_errno;			/* with err: the device's, or ours */
	bool on_pump;
	/* long by read: the sender's iovs, our registrations, the cursor */
	uint32_t src_count;
	struct srd_pkt_iov src[SRD_IOV_MAX];
	struct ibv_mr *mr[SRD_IOV_MAX];
	/* striped: the sender's keys and our registrations on rails
	 * 1..rails-1, and the rail of the next read */
	uint32_t rails;
	uint32_t next_rail;
	uint64_t stripe_chunk;		/* bytes per read when striped */
	uint32_t rail_key[SRD_PKT_RAILS_MAX - 1][SRD_IOV_MAX];
	struct ibv_mr *rail_mr[SRD_PKT_RAILS_MAX - 1][SRD_IOV_MAX];
	uint64_t read_off;		/* bytes whose read is posted */
	uint32_t reads_inflight;
	/* CTS: the message bytes we want (min of message and buffer), the
	 * end of what we granted; received counts bytes of the message
	 * accounted so far (first chunk included) */
	uint64_t want;
	uint64_t granted;
	uint32_t rx_id;
};

/* A slot of the CTS receive table (rx_id = index | gen << 16). */
struct srd_cts_slot {
	struct srd_rx_xfer *x;
	uint16_t gen;
};

/* What the long protocols did (tests read these). */
struct srd_long_stats {
	uint64_t long_rts;	/* LONG_RTS sent */
	uint64_t cts_rts;	/* CTS_RTS sent */
	uint64_t cts;		/* CTS sent */
	uint64_t data;		/* DATA sent */
	uint64_t done;		/* READ_DONE sent for a CTS transfer */
	uint64_t probes;	/* liveness probes sent */
	uint64_t ux_pool;	/* unexpected MEDIUM buffers from the pool */
	uint64_t ux_heap;	/* ... from the heap (too big, pool full) */
};

typedef void (*srd_pkt_fn)(struct srd_ep *ep, struct srd_peer *peer,
			   const void *pkt, size_t len);

/* Where a received packet type goes (built from the protocols' lists). */
struct srd_pkt_route {
	srd_pkt_fn handle;		/* NULL: nobody owns the type */
	const struct srd_proto *proto;
};

#define SRD_PROTO_MAX 8			/* protocols an endpoint may run */

struct srd_rma_ep;
struct srd_stripe_ep;

struct srd_ep {
	struct util_ep util;
	struct srd_domain *domain;
	struct srd_dev *dev;
	struct srd_proto_caps pc;
	struct srd_dev_cq *cq;
	struct srd_dev_qp *qp;
	struct srd_ep_name name;
	uint32_t pkt_size;		/* MTU */
	uint32_t pkt_stride;		/* MTU rounded up to SRD_PKT_ALIGN */
	uint32_t sq_inflight;		/* send WRs not yet completed */

	/* the protocols serving here (srd_proto.c) and the routes to them */
	const struct srd_proto *tx_fast;	/* sends of <= tx_fast_max */
	size_t tx_fast_max;
	struct srd_pkt_route pkt_route[SRD_PKT_TYPE_MAX];
	const struct srd_proto *wr_proto[SRD_WR_KIND_MAX];
	const struct srd_proto *protos[SRD_PROTO_MAX];
	uint32_t proto_count;
	const struct srd_proto *pollers[SRD_PROTO_MAX];
	uint32_t poller_count;

	/* rx slab: all posted; used ones go back at a batch end once
	 * repost_batch of them are waiting (srd_ep_on_batch_end) */
	uint8_t *rx_slab;
	struct ibv_mr *rx_mr;
	struct srd_rxbuf *rxbufs;
	uint32_t rx_count;
	struct srd_rxbuf *repost;	/* to post at a batch end */
	uint32_t repost_count;
	uint32_t repost_batch;		/* rx_count / 8, 1 to 16 */

	/* tx slab */
	uint8_t *tx_slab;
	struct ibv_mr *tx_mr;
	struct srd_txbuf *txbufs;
	struct srd_txbuf *tx_free;
	uint32_t tx_count;

	/* messages */
	struct srd_tx_entry *tx_entries;
	uint32_t *tx_free_ids;
	uint32_t tx_free_top;
	uint32_t tx_entry_count;
	struct srd_tx_entry *tx_pump;	/* have bytes left to send */
	struct srd_rx_xfer *rx_pump;	/* have reads, grants, DONEs left */

	struct util_srx srx;		/* posted receives, unexpected ones */
	struct util_pool unexp_pool;	/* struct srd_unexp + eager_max */
	struct util_pool xfer_pool;	/* struct srd_rx_xfer */
	bool rx_ready;

	/* peers */
	struct srd_peer **peers;	/* by id */
	uint32_t peer_count;
	struct srd_peer *peer_by_name;	/* uthash */
	uint32_t *addr_peer;		/* fi_addr -> id + 1 (0 = none) */
	size_t addr_peer_len;
	struct srd_peer *flush;		/* peers with queued packets */
	uint64_t rng;

	/* liveness of the peers something waits on (srd_watch.c) */
	struct util_peer_watch watch;

	/* protocols' state */
	size_t medium_max;		/* medium: above, long by read */
	size_t cts_threshold;		/* medium: above, CTS (no read) */
	struct util_pool ux_buf_pool;	/* medium: unexpected buffers */
	size_t ux_buf_size;		/* 0: no pool, heap only */
	bool long_read;			/* long by read: RDMA read here */
	uint64_t cts_window;		/* CTS: bytes granted ahead */
	struct srd_cts_slot *cts_slots;
	uint32_t *cts_free;
	uint32_t cts_free_top;
	uint32_t cts_slot_count;
	struct srd_long_stats lstat;
	struct srd_ring_ep *ring;	/* ring: data mode, or NULL */
	struct srd_rma_ep *rma;		/* RMA and atomics */

	/* peers of this host through shm (srd_shm.c), or NULL */
	struct srd_shm *shm;
	bool shm_permitted;		/* FI_OPT_SHARED_MEMORY_PERMITTED */
	enum srd_use_shm shm_mode;	/* FI_SRD_USE_SHM at open */
	struct srd_stripe_ep *stripe;	/* rails 1.., or NULL */
	uint32_t rails_want;		/* FI_SRD_RAILS / FI_OPT_WEFT_RAILS */
};

static inline struct srd_ep *to_srd_ep(struct fid_ep *ep)
{
	return container_of(ep, struct srd_ep, util.ep_fid);
}

static inline struct srd_ep *to_srd_ep_util(struct util_ep *util)
{
	return container_of(util, struct srd_ep, util);
}

/* Something observes RMA aimed at this endpoint (FI_RMA_EVENT): a
 * counter bound with FI_REMOTE_WRITE or FI_REMOTE_READ. Remote CQ data
 * needs nothing more: a device write with immediate reaches the target. */
static inline bool srd_ep_counts_rma(const struct srd_ep *ep)
{
	return ep->util.cntrs[UTIL_CNTR_REMOTE_WRITE] ||
	       ep->util.cntrs[UTIL_CNTR_REMOTE_READ];
}

/* ---- provider-internal entry points -------------------------------------- */

/* srd_devices.c: the devices offered, opened at the first call. */
#define SRD_DEV_MAX 32
#define SRD_DEV_NAME_MAX 64
/* Up to max of them into devs, in the order fi_getinfo lists them. */
int srd_devices_get(struct srd_dev **devs, int max);
/* The device a domain name names (NULL: the first); NULL with *err
 * -FI_ENODATA (no device) or -FI_ENODEV (no such name). */
struct srd_dev *srd_device_find(const char *name, int *err);
void srd_devices_close(void);

/* srd_fabric.c, srd_domain.c, srd_av.c, srd_ep.c */
int srd_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
int srd_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
extern const struct util_av_prov srd_av_prov;
int srd_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);

/* srd_peer.c: the peer table, the handshake, peer failure. */
int srd_peer_get(struct srd_ep *ep, fi_addr_t addr, struct srd_peer **peer);
struct srd_peer *srd_peer_by_id(struct srd_ep *ep, uint32_t id,
				uint32_t src_qp);
void srd_peer_handle_hello(struct srd_ep *ep, const struct srd_dev_wc *wc,
			   const void *pkt, size_t len);
fi_addr_t srd_peer_fi_addr(struct srd_ep *ep, struct srd_peer *peer);
/* The device reported peer unreachable: every protocol ends its work
 * with it (weft/util_peer.h); a later send starts a new handshake. */
void srd_peer_fail(struct srd_ep *ep, struct srd_peer *peer, int err,
		   int prov_errno);
int srd_peer_hello_send(struct srd_ep *ep, struct srd_peer *peer,
			uint8_t type);
void srd_peer_schedule(struct srd_ep *ep, struct srd_peer *peer);
void srd_peer_report(struct srd_ep *ep, struct srd_peer *peer,
		     int prov_errno);
void srd_peers_free(struct srd_ep *ep);

/* srd_err.c: error completions whose err_data names the peer (NULL: no
 * err_data). */
int srd_ep_tx_err(struct srd_ep *ep, struct srd_peer *peer, void *context,
		  uint64_t flags, int err, int prov_errno, size_t len);
int srd_ep_rx_err(struct srd_ep *ep, struct srd_peer *peer,
		  const struct fi_cq_err_entry *e, fi_addr_t src);

/* srd_send.c: packets out. */
struct srd_txbuf *srd_txbuf_get(struct srd_ep *ep);
void srd_txbuf_put(struct srd_ep *ep, struct srd_txbuf *tb);
void srd_pkt_send(struct srd_ep *ep, struct srd_peer *peer,
		  struct srd_txbuf *tb, size_t len);
int srd_pkt_post(struct srd_ep *ep, struct srd_peer *peer,
		 struct srd_txbuf *tb);
void srd_txbuf_fail(struct srd_ep *ep, struct srd_txbuf *tb, int err,
		    int prov_errno);
void srd_txbuf_done(struct srd_ep *ep, struct srd_txbuf *tb,
		    const struct srd_dev_wc *wc);
void srd_flush_all(struct srd_ep *ep);
bool srd_peer_may_send(struct srd_peer *peer);
int srd_post_rdma(struct srd_ep *ep, struct srd_peer *peer,
		  struct srd_wr_hdr *wr, bool write, uint32_t lkey,
		  void *laddr, size_t len, uint32_t rkey, uint64_t raddr);
/* An RDMA write whose completion at the target carries imm (host order)
 * and consumes one of its posted receives. */
int srd_post_rdma_write_imm(struct srd_ep *ep, struct srd_peer *peer,
			    struct srd_wr_hdr *wr, uint32_t imm, uint32_t lkey,
			    void *laddr, size_t len, uint32_t rkey,
			    uint64_t raddr);

/* srd_tx.c: messages out. */
int srd_tx_init(struct srd_ep *ep);
void srd_tx_fini(struct srd_ep *ep);
ssize_t srd_send_post(struct srd_ep *ep, const struct iovec *iov,
		      void **desc, size_t count, fi_addr_t dest, uint64_t tag,
		      uint64_t data, void *context, uint64_t flags);
void srd_tx_pump(struct srd_ep *ep);
void srd_tx_try_complete(struct srd_ep *ep, struct srd_tx_entry *tx);
struct srd_tx_entry *srd_tx_by_id(struct srd_ep *ep, uint32_t id);
/* srd_coll.c / srd_tx.c: the collective engine's transport. */
extern const struct util_coll_xport srd_coll_xport;
ssize_t srd_coll_send(struct srd_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag, void *ctx);
void srd_tx_handle_done(struct srd_ep *ep, struct srd_peer *peer,
			const void *pkt, size_t len);

/* srd_recv.c: messages in. */
int srd_rx_init(struct srd_ep *ep);
void srd_rx_fini(struct srd_ep *ep);
void srd_rx_handle_msg(struct srd_ep *ep, struct srd_peer *peer,
		       const void *pkt, size_t len);
void srd_rx_pump(struct srd_ep *ep);
void srd_rx_complete_err(struct srd_ep *ep, const struct util_srx_dest *dest,
			 const struct srd_msg_info *m, size_t len, int err,
			 int prov_errno);
static inline void srd_rx_complete(struct srd_ep *ep,
				   const struct util_srx_dest *dest,
				   const struct srd_msg_info *m, size_t len,
				   int err)
{
	srd_rx_complete_err(ep, dest, m, len, err, 0);
}
/* An unexpected message, or the receive that took it, is done with. */
void srd_unexp_ready(struct srd_ep *ep, struct srd_unexp *ux);
void srd_unexp_free(struct srd_ep *ep, struct srd_unexp *ux);

/* srd_watch.c: settings of the long protocols, liveness of the peers
 * something waits on. */
void srd_watch_init(struct srd_ep *ep);
void srd_watch(struct srd_ep *ep, uint64_t now);

/* srd_msg.c: fi_ops_msg / fi_ops_tagged and receive posting. */
extern const struct fi_ops_msg srd_msg_ops;
extern const struct fi_ops_tagged srd_tagged_ops;
ssize_t srd_ep_cancel(fid_t fid, void *context);

/* srd_progress.c */
extern const struct srd_dev_cq_ops srd_ep_cq_ops;
void srd_ep_progress(struct util_ep *util);

/* ---- peers of this host through shm (srd_shm.c) ------------------------ */

/* This host's key: a hash of the boot id and the network namespace. */
uint64_t srd_host_key(void);
/* At open: whether FI_SRD_USE_SHM lets the endpoint offer shm peering. */
void srd_shm_ep_init(struct srd_ep *ep);
/* fi_setopt(FI_OPT_SHARED_MEMORY_PERMITTED), before fi_enable. */
int srd_shm_set_permitted(struct srd_ep *ep, bool permitted);
/* At fi_enable: the shm endpoint, when the name offers it. */
int srd_shm_open(struct srd_ep *ep);
/* At close, before anything the shm endpoint may complete into. */
void srd_shm_close(struct srd_ep *ep);
/* The AV changed: mirror its peers of this host into shm's AV. */
void srd_shm_av_sync(struct srd_ep *ep);
/* Each progress call: shm's progress and its send completions. */
void srd_shm_progress(struct srd_ep *ep);
/* Send tx (filled, sent = total_len) to shm address addr. */
ssize_t srd_shm_post(struct srd_ep *ep, struct srd_tx_entry *tx,
		     fi_addr_t addr, uint64_t flags);

struct srd_shm {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct util_srx_peer peer_srx;
	struct fid_ep *srx_ep;		/* shm's handle on peer_srx */
	size_t inject_size;		/* shm's */
	/* copies of injects between shm's inject size and ours */
	struct util_pool bounce_pool;
	bool bounce_ready;
	uint64_t av_gen;		/* the srd AV's gen last mirrored */
	fi_addr_t *map;			/* srd fi_addr -> shm fi_addr */
	size_t map_len;
	uint64_t sends;			/* messages sent through shm */
	uint32_t idle_polls;		/* progress calls without a device peer */
	uint64_t dev_poll_ns;		/* when the idle device was last polled */
};

/* While no peer uses the device (everything so far went through shm), its
 * CQ is polled at most once in SRD_SHM_DEV_POLL_NS, looked at on one
 * progress call in SRD_SHM_DEV_POLL_EVERY: soon enough for a first HELLO
 * from another host, even from a blocking wait's few calls, while a
 * ping-pong spinning through shm does not pay for the system call an idle
 * softsrd poll is (one every 16 calls made srd 1.46x shm at 8 B, now
 * about 1.26x). Once a device peer exists, every call polls. */
#define SRD_SHM_DEV_POLL_EVERY 16u
#define SRD_SHM_DEV_POLL_NS 20000u

static inline bool srd_shm_dev_due(struct srd_ep *ep)
{
	struct srd_shm *shm = ep->shm;
	uint64_t now;

	if (ep->peer_count || ep->sq_inflight)
		return true;
	if (++shm->idle_polls & (SRD_SHM_DEV_POLL_EVERY - 1))
		return false;
	now = util_time_ns();
	if (now - shm->dev_poll_ns < SRD_SHM_DEV_POLL_NS)
		return false;
	shm->dev_poll_ns = now;
	return true;
}

/* Where a send to dest goes: its shm fi_addr, or FI_ADDR_NOTAVAIL (the
 * device). One predictable branch while shm is off. */
static inline fi_addr_t srd_shm_addr(struct srd_ep *ep, fi_addr_t dest)
{
	struct srd_shm *shm = ep->shm;

	if (WEFT_LIKELY(!shm))
		return FI_ADDR_NOTAVAIL;
	if (WEFT_UNLIKELY(shm->av_gen !=
			  atomic_load_explicit(&ep->util.av->gen,
					       memory_order_acquire)))
		srd_shm_av_sync(ep);
	return dest < shm->map_len ? shm->map[dest] : FI_ADDR_NOTAVAIL;
}
/* What every CQ's batch end runs (rail CQs too, proto/srd_stripe.h). */
void srd_ep_batch_end(struct srd_ep *ep);
int srd_rx_post_all(struct srd_ep *ep);
/* What the owner of a work request (tb->owner, or wr_id) is told. */
void srd_wr_done(struct srd_ep *ep, struct srd_wr_hdr *hdr,
		 const struct srd_dev_wc *wc);

/* The RMA and atomic layer (srd_rma.c, proto/srd_proto_rma_*.c,
 * proto/srd_proto_atomic.c) and memory registration (srd_mr.c). */
extern const struct fi_ops_rma srd_rma_ops;
extern const struct fi_ops_atomic srd_atomic_ops;
extern const struct fi_ops_mr srd_mr_ops;
int srd_mr_desc_keys(void *desc, uint32_t *lkey, uint32_t *rkey);
void srd_rma_handle_imm(struct srd_ep *ep, const struct srd_dev_wc *wc);

/* ---- small helpers --------------------------------------------------------- */

static inline void srd_pkt_base_init(struct srd_pkt_base *b, uint8_t type,
				     uint16_t flags, uint32_t peer_id)
{
	b->version = SRD_PROTO_VERSION;
	b->type = type;
	b->flags = flags;
	b->peer_id = peer_id;
}

static inline struct srd_av_entry *srd_av_entry(struct srd_ep *ep,
						fi_addr_t addr)
{
	return util_av_data(ep->util.av, addr);
}

#endif /* SRD_RDM_H */
