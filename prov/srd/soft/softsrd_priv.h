/* SPDX-License-Identifier: MIT */
/*
 * softsrd internals: the objects behind the ibv structures, the wire format
 * and the functions the files of softsrd share.
 *
 * Locking: one mutex per device context (ctx->lock) covers every object of
 * that context. The application takes it in its own calls (post, poll), the
 * background thread only while the application is away.
 */
#ifndef SOFTSRD_PRIV_H
#define SOFTSRD_PRIV_H

#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_time.h"
#include "softsrd.h"

#include <inttypes.h>
#include <netinet/in.h>
#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <liburing.h>
#include <uthash.h>
#include <utlist.h>

extern struct fi_provider *softsrd_prov;

/* ---- settings --------------------------------------------------------- */

enum softsrd_order { SOFTSRD_ORDER_NONE, SOFTSRD_ORDER_128, SOFTSRD_ORDER_WHOLE };
enum softsrd_io { SOFTSRD_IO_AUTO, SOFTSRD_IO_URING, SOFTSRD_IO_MMSG };

#define SOFTSRD_MAX_SGE       16
#define SOFTSRD_MAX_DEVICES   16
#define SOFTSRD_CRC_LEN       4	/* CRC32C trailer (SOFTSRD_FLAG_CRC) */
#define SOFTSRD_MAX_MTU       (65507 - (int)sizeof(struct softsrd_hdr) - \
			       SOFTSRD_CRC_LEN)
#define SOFTSRD_MIN_MTU       256
/* largest RDMA packet: whole 128-byte lines in the largest UDP payload */
#define SOFTSRD_MAX_RDMA_PKT  ((uint32_t)SOFTSRD_MAX_MTU & ~127u)
/* socket receive buffer below which RDMA packets stay at the MTU */
#define SOFTSRD_BIG_PKT_RCVBUF (4 << 20)
#define SOFTSRD_QP_PER_CTX    255
#define SOFTSRD_WIN           256	/* packets in flight per peer */
#define SOFTSRD_FINAL_ACK_COPIES 3	/* OK verdicts resent at QP destroy */
#define SOFTSRD_PEERS_MAX     4096	/* per QP: bounds memory a flood can take */
#define SOFTSRD_MR_CACHE      16	/* MR lookups cached, a power of two */

struct softsrd_config {
	uint32_t mtu;
	uint32_t max_sq_wr;
	uint32_t max_rq_wr;
	uint32_t max_sge;
	uint32_t inline_buf_size;
	uint32_t max_rdma_size;
	bool rdma_read;
	bool rdma_write;
	bool rnr_retry;
	enum softsrd_order in_order;
	enum softsrd_io io;
	uint32_t loss, dup, reorder, rnr, corrupt;	/* percent */
	bool crc;		/* CRC32C trailers sent and required */
	uint32_t delay_us;
	uint32_t rto_us;	/* before the first RTT sample */
	uint32_t rto_min_us, rto_max_us;
	uint32_t dead_ms;	/* silence that makes a peer unresponsive */
	uint32_t rnr_delay_us;
	uint32_t ack_delay_us;	/* an OK verdict may wait this long for data */
	uint32_t pkts_per_qp;
	uint32_t window;	/* packets in flight per peer, <= SOFTSRD_WIN */
	uint32_t rdma_pkt;	/* RDMA packet size; 0: auto (set at open) */
	uint32_t devices;	/* devices on one address; 0: one per address */
	char addr[64];
	char iface[IF_NAMESIZE];
};

/* FI_SRD_SOFT_* (bad values: a warning, the default kept). */
void softsrd_config_read(struct softsrd_config *cfg);

/* ---- wire format ------------------------------------------------------- */

#define SOFTSRD_WIRE_VERSION 3

enum softsrd_pkt_type {
	SOFTSRD_PKT_SEND = 1,
	SOFTSRD_PKT_WRITE,
	SOFTSRD_PKT_READ_REQ,
	SOFTSRD_PKT_ACK,
	SOFTSRD_PKT_READ_RESP,
};

enum softsrd_pkt_flag {
	SOFTSRD_FLAG_IMM = 1 << 0,
	SOFTSRD_FLAG_CRC = 1 << 1,	/* a CRC32C trailer follows the payload */
};

/* Target's verdict on a packet, carried by ACK and READ_RESP. */
enum softsrd_status {
	SOFTSRD_ST_OK = 0,
	SOFTSRD_ST_RNR,
	SOFTSRD_ST_ACCESS,	/* key, bounds or access flags */
	SOFTSRD_ST_INV_REQ,	/* length, QP state */
	SOFTSRD_ST_OP,		/* operation not enabled on the device */
	SOFTSRD_ST_BAD_QPN,	/* no such QP at the target */
	SOFTSRD_ST_MAX,
};

/* vendor_err of error completions: the numbers of rdma-core's EFA
 * (enum efa_io_comp_status), so one mapping serves EFA and softsrd. */
enum softsrd_vendor_err {
	SOFTSRD_VE_FLUSHED = 1,
	SOFTSRD_VE_LOCAL_INVALID_LKEY = 5,
	SOFTSRD_VE_LOCAL_BAD_LENGTH = 6,
	SOFTSRD_VE_REMOTE_BAD_ADDRESS = 7,
	SOFTSRD_VE_REMOTE_BAD_DEST_QPN = 9,
	SOFTSRD_VE_REMOTE_RNR = 10,
	SOFTSRD_VE_REMOTE_BAD_LENGTH = 11,
	SOFTSRD_VE_REMOTE_BAD_STATUS = 12,
	SOFTSRD_VE_LOCAL_UNRESP_REMOTE = 13,
};

/*
 * All fields little endian. 80 bytes. Version 3 added the CRC32C trailer
 * (SOFTSRD_FLAG_CRC: 4 bytes after the payload, little endian, the CRC of
 * header and payload). Version 2 added the last three
 * fields: any packet from QP B to QP A may acknowledge, as answered OK,
 * the PSNs [ack_psn, ack_psn + ack_cnt) of the flow A -> B (ack_cnt 0:
 * nothing), so a reply carries the acknowledgement of what it answers.
 */
struct softsrd_hdr {
	uint8_t version;
	uint8_t type;
	uint8_t flags;
	uint8_t status;
	uint32_t src_qpn;
	uint32_t dst_qpn;
	uint32_t qkey;
	uint32_t incarnation;	/* sender QP's random id: a new QP starts a new flow */
	uint32_t seg_len;	/* payload of this packet (READ_REQ: bytes asked) */
	uint64_t psn;
	uint64_t floor;		/* sender never retransmits a PSN below this */
	uint64_t raddr;		/* RDMA: target address of the whole message */
	uint32_t rkey;
	uint32_t msg_len;	/* RDMA: length of the whole message */
	uint32_t seg_off;	/* RDMA: offset of this packet in the message */
	uint32_t imm;		/* immediate data, as the application gave it */
	uint64_t ack_psn;
	uint32_t ack_cnt;
	uint32_t ack_incarnation; /* of the acknowledged flow's sender QP */
} __attribute__((packed));

_Static_assert(sizeof(struct softsrd_hdr) == 80, "softsrd wire header");

/* A received datagram as softsrd_wire_parse leaves it: the header's
 * fields in host order (imm as it came: the application's bytes) and the
 * payload between the header and the CRC trailer. */
struct softsrd_wire_pkt {
	uint8_t type, flags, status;
	uint32_t src_qpn, dst_qpn, qkey, incarnation;
	uint32_t seg_len, rkey, msg_len, seg_off, imm;
	uint32_t ack_cnt, ack_incarnation;
	uint64_t psn, floor, raddr, ack_psn;
	const uint8_t *payload;
	size_t len;
};

/* ---- objects ------------------------------------------------------------ */

struct softsrd_device {
	struct ibv_device ibdev;
	struct in_addr ip;
};

struct softsrd_mr {
	struct ibv_mr ibv_mr;
	int access;
	UT_hash_handle hh;	/* ctx->mrs, by ibv_mr.rkey */
};

struct softsrd_pd {
	struct ibv_pd ibv_pd;
};

/* One per GID with live AHs: EFA gives all AHs to one GID the same number. */
struct softsrd_ahn {
	union ibv_gid gid;
	uint16_t ahn;
	uint32_t refs;
	UT_hash_handle hh;	/* ctx->ahns, by gid */
};

struct softsrd_ah {
	struct ibv_ah ibv_ah;
	struct sockaddr_in sin;
	struct softsrd_ahn *ahn;
};

struct softsrd_cqe {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
	uint16_t slid;
};

struct softsrd_ctx;

struct softsrd_cq {
	struct ibv_cq_ex ibv_cq;
	struct softsrd_ctx *ctx;
	struct softsrd_cqe *ring;
	uint32_t mask;
	uint64_t head;		/* next to read: the consumer's */
	uint64_t tail;		/* next to write: under the device lock */
	uint64_t seen;		/* tail when start_poll looked */
	uint64_t cur;		/* entry start/next_poll showed */
	bool overrun;
};

/* A send-side work request, from wr_send* / wr_rdma_* until its completion. */
struct softsrd_swr {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	unsigned int flags;
	uint32_t num_sge;
	struct ibv_sge sge[SOFTSRD_MAX_SGE];
	uint8_t *inl;		/* inline payload copy, or NULL */
	uint32_t len;
	uint32_t imm;
	bool has_imm;
	uint64_t raddr;
	uint32_t rkey;
	struct softsrd_peer *peer;
	uint32_t peer_qkey;
	uint32_t npkts;		/* packets the message needs */
	uint32_t nsent;		/* packets handed out (each holds a PSN) */
	uint32_t ndone;		/* packets answered OK */
	uint32_t ninflight;
	uint32_t rnr_left;	/* UINT32_MAX: forever (rnr_retry 7) */
	uint64_t not_before;	/* RNR backoff */
	enum ibv_wc_status status;
	uint32_t vendor_err;
	bool queued;
	struct softsrd_swr *prev, *next;	/* qp->pending */
};

struct softsrd_rwr {
	uint64_t wr_id;
	uint32_t num_sge;
	struct ibv_sge sge[SOFTSRD_MAX_SGE];
};

/* One packet of a WR that holds a PSN until answered or abandoned. */
struct softsrd_pkt {
	struct softsrd_swr *wr;
	struct softsrd_peer *peer;
	uint64_t psn;
	uint32_t off;
	uint32_t len;
	uint64_t deadline;
	uint64_t first;		/* first transmission: a wait starts here */
	uint64_t sent;		/* last transmission: RTT sample if tries 0 */
	uint32_t tries;
	struct softsrd_pkt *prev, *next;	/* qp->inflight or qp->pkt_free */
};

struct softsrd_peer_key {
	uint32_t ip;		/* network order */
	uint32_t qpn;
};

struct softsrd_rx_slot {
	uint64_t psn;
	uint8_t status;
	bool valid;
};

/* What one QP knows about one remote QP, in both directions. */
struct softsrd_peer {
	struct softsrd_peer_key key;
	UT_hash_handle hh;	/* qp->peers */
	struct sockaddr_in sin;
	uint16_t slid;		/* ahn of the peer's GID, valid at slid_gen */
	uint32_t slid_gen;
	/* liveness: anything that came from the peer counts */
	uint64_t heard;
	/* retransmission timeout from the measured round trips (RFC 6298):
	 * smoothed RTT and its variation, ns; srtt 0 until the first sample */
	uint64_t srtt, rttvar, rto;
	/* initiator */
	uint64_t next_psn;
	uint64_t tx_floor;
	struct softsrd_pkt *tx_win[SOFTSRD_WIN];
	/* target */
	bool rx_known;
	uint32_t rx_incarnation;
	uint64_t rx_floor;
	struct softsrd_rx_slot rx_ring[2 * SOFTSRD_WIN];
	/* OK verdicts not yet sent: one run of consecutive PSNs, waiting
	 * until ack_due for a packet going back to carry it */
	uint64_t ack_psn;
	uint32_t ack_cnt;
	uint64_t ack_due;
	struct softsrd_peer *ack_prev, *ack_next;	/* qp->ack_owed */
};

struct softsrd_qp {
	/* Same layout as rdma-core's struct verbs_qp, so libibverbs'
	 * ibv_qp_to_qp_ex() works on it as on a real QP. */
	union {
		struct ibv_qp ibv_qp;
		struct ibv_qp_ex ibv_qpx;
	};
	uint32_t verbs_comp_mask;
	void *verbs_xrcd;

	struct softsrd_ctx *ctx;
	uint32_t idx;
	uint32_t qkey;
	uint32_t incarnation;
	uint8_t rnr_retry;
	bool sq_sig_all;
	uint64_t send_ops_flags;
	struct softsrd_cq *scq, *rcq;
	struct ibv_qp_cap cap;

	/* send queue: slots complete out of order, hence a free stack */
	struct softsrd_swr *swr;
	uint32_t *swr_free;
	uint32_t swr_nfree;
	uint8_t *inl_bufs;
	struct softsrd_swr *cur;	/* WR being built in wr_start..complete */
	struct softsrd_swr *batch[64];
	uint32_t nbatch;
	int batch_err;
	struct softsrd_swr *pending;	/* WRs with packets left to send */

	/* receive queue: SRD consumes receives in posting order */
	struct softsrd_rwr *rq;
	uint32_t rq_size;
	uint64_t rq_head, rq_tail;

	struct softsrd_pkt *pkts;
	struct softsrd_pkt *pkt_free;
	struct softsrd_pkt *inflight;
	struct softsrd_peer *peers;
	struct softsrd_peer *peer_last;	/* most packets come from the last */
	uint32_t npeers;
	struct softsrd_peer *ack_owed;	/* peers with a run of acks to send */
};

/* A datagram being sent: header plus up to 1 + SOFTSRD_MAX_SGE pieces,
 * and the CRC trailer. msg is its entry of the wire's tx_mmsg, pointing
 * at sin and iov (softsrd_wire_open): staging sets only msg_iovlen. */
struct softsrd_txd {
	struct softsrd_hdr hdr;
	uint32_t crc;
	struct iovec iov[2 + SOFTSRD_MAX_SGE];
	struct sockaddr_in sin;
	struct msghdr *msg;
};

/* A datagram held back by fault injection (delay, reorder). */
struct softsrd_held {
	uint64_t due;
	struct sockaddr_in sin;
	size_t len;
	struct softsrd_held *next;
	uint8_t data[];
};

#define SOFTSRD_TX_BATCH 32
#define SOFTSRD_RX_BATCH 32
#define SOFTSRD_RX_ROUNDS 4	/* batches read per progress round */

struct softsrd_wire {
	int fd;
	bool uring;
	struct io_uring ring;
	struct softsrd_txd tx[SOFTSRD_TX_BATCH];
	struct mmsghdr tx_mmsg[SOFTSRD_TX_BATCH];
	uint32_t ntx;
	uint8_t *rx_buf;
	size_t rx_buf_size;
	struct mmsghdr rx_mmsg[SOFTSRD_RX_BATCH];
	struct iovec rx_iov[SOFTSRD_RX_BATCH];
	struct sockaddr_in rx_sin[SOFTSRD_RX_BATCH];
	struct softsrd_held *held;
	unsigned int seed;
	bool faults;
};

struct softsrd_ctx {
	struct verbs_context vctx;	/* holds the ibv_context: keep first */
	struct softsrd_device dev;	/* context.device: outlives the list */
	struct softsrd_config cfg;
	pthread_mutex_t lock;
	struct in_addr ip;
	uint16_t port;			/* host order */
	union ibv_gid gid;
	struct softsrd_wire wire;
	struct softsrd_qp *qps[SOFTSRD_QP_PER_CTX + 1];
	uint32_t qp_hi;			/* highest slot ever used */
	struct softsrd_mr *mrs;
	struct softsrd_mr *mr_cache[SOFTSRD_MR_CACHE]; /* saves the hash */
	uint32_t key_gen;
	struct softsrd_ahn *ahns;
	uint32_t ahn_gen;		/* changes whenever an ahn comes or goes */
	uint16_t next_ahn;
	uint64_t next_timer_check;
	uint64_t timer_ns;		/* interval of the timer checks */
	uint64_t last_round;		/* this context's previous progress */
	uint64_t listen_since;		/* silence counts from here: not
					 * while this process itself was away */
	uint64_t now;			/* time of the current call or round */
	pthread_t thread;
	int wake_fd;			/* eventfd: wakes the thread from ppoll */
	atomic_bool stop;
	atomic_bool thread_waits;	/* the thread is (about to be) in ppoll */
	atomic_uint_fast64_t app_ns;	/* last time the application progressed */
};

/* ---- converters ------------------------------------------------------- */

static inline struct softsrd_ctx *to_softsrd_ctx(struct ibv_context *c)
{
	return container_of(c, struct softsrd_ctx, vctx.context);
}

static inline struct softsrd_pd *to_softsrd_pd(struct ibv_pd *pd)
{
	return container_of(pd, struct softsrd_pd, ibv_pd);
}

static inline struct softsrd_mr *to_softsrd_mr(struct ibv_mr *mr)
{
	return container_of(mr, struct softsrd_mr, ibv_mr);
}

static inline struct softsrd_ah *to_softsrd_ah(struct ibv_ah *ah)
{
	return container_of(ah, struct softsrd_ah, ibv_ah);
}

static inline struct softsrd_cq *to_softsrd_cq_ex(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct softsrd_cq, ibv_cq);
}

static inline struct softsrd_cq *to_softsrd_cq(struct ibv_cq *cq)
{
	return to_softsrd_cq_ex((struct ibv_cq_ex *)cq);
}

static inline struct softsrd_qp *to_softsrd_qp(struct ibv_qp *qp)
{
	return container_of(qp, struct softsrd_qp, ibv_qp);
}

static inline struct softsrd_qp *to_softsrd_qp_ex(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct softsrd_qp, ibv_qpx);
}

/* ---- shared functions ------------------------------------------------- */

static inline uint32_t softsrd_mr_slot(uint32_t key)
{
	return (key * 2654435761u) >> (32 - __builtin_ctz(SOFTSRD_MR_CACHE));
}

/* Operations cut into 128-byte-aligned packets and checked at the target. */
static inline bool softsrd_op_is_rdma(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_RDMA_WRITE ||
	       op == IBV_WR_RDMA_WRITE_WITH_IMM;
}


/* device.c */
int softsrd_query_device_ex(struct ibv_context *context,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr);

/* mem.c */
struct softsrd_mr *softsrd_mr_find(struct softsrd_ctx *ctx, uint32_t key);
bool softsrd_sge_valid(struct softsrd_ctx *ctx, const struct ibv_sge *sge);
uint16_t softsrd_ahn_lookup(struct softsrd_ctx *ctx, const union ibv_gid *gid);
uint16_t softsrd_peer_slid(struct softsrd_ctx *ctx, struct softsrd_peer *peer);
void softsrd_gid_from_ip(union ibv_gid *gid, struct in_addr ip);
int softsrd_ip_from_gid(const union ibv_gid *gid, struct in_addr *ip);

/* cq.c */
struct softsrd_cqe *softsrd_cq_push(struct softsrd_cq *cq);

/* entry points of the control table (device.c builds it) */
int softsrd_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
struct ibv_cq_ex *softsrd_create_cq_ex(struct ibv_context *context,
				       struct ibv_cq_init_attr_ex *attr);
int softsrd_destroy_cq(struct ibv_cq *cq);
struct ibv_pd *softsrd_alloc_pd(struct ibv_context *context);
int softsrd_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *softsrd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      int access);
int softsrd_dereg_mr(struct ibv_mr *mr);
struct ibv_qp *softsrd_create_qp(struct ibv_context *ibvctx,
				 struct ibv_qp_init_attr_ex *attr_ex,
				 struct efadv_qp_init_attr *efa_attr,
				 uint32_t inlen);
struct ibv_qp_ex *softsrd_qp_to_qp_ex(struct ibv_qp *qp);
int softsrd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int softsrd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		     struct ibv_qp_init_attr *init);
int softsrd_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
				   uint32_t flags);
int softsrd_destroy_qp(struct ibv_qp *qp);
struct ibv_ah *softsrd_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int softsrd_efadv_query_ah(struct ibv_ah *ah, struct efadv_ah_attr *attr,
			   uint32_t inlen);
int softsrd_destroy_ah(struct ibv_ah *ah);

/* qp.c / post.c */
void softsrd_qp_ops_init(struct softsrd_qp *qp);
int softsrd_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int softsrd_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);

/* proto.c; progress and push_pending work at ctx->now (softsrd_app_enter
 * or the thread sets it) */
int softsrd_progress(struct softsrd_ctx *ctx);
int softsrd_progress_poll(struct softsrd_ctx *ctx, struct softsrd_cq *cq);
bool softsrd_busy(const struct softsrd_ctx *ctx);
void softsrd_proto_rx(struct softsrd_ctx *ctx,
		      const struct softsrd_wire_pkt *p,
		      const struct sockaddr_in *from);
void softsrd_qp_push_pending(struct softsrd_qp *qp);
void softsrd_swr_fail(struct softsrd_qp *qp, struct softsrd_swr *wr,
		      enum ibv_wc_status status);
void softsrd_swr_complete(struct softsrd_qp *qp, struct softsrd_swr *wr);
uint32_t softsrd_seg_size(const struct softsrd_ctx *ctx);
void softsrd_pkt_tx(struct softsrd_qp *qp, struct softsrd_pkt *pkt);
void softsrd_pkt_release(struct softsrd_qp *qp, struct softsrd_pkt *pkt);
void softsrd_qp_flush(struct softsrd_qp *qp, bool completions);
struct softsrd_peer *softsrd_peer_get(struct softsrd_qp *qp,
				      const struct sockaddr_in *sin,
				      uint32_t qpn);

/* rto.c: retransmission timeouts and liveness */
void softsrd_rto_ctx_init(struct softsrd_ctx *ctx);
void softsrd_rto_peer_init(struct softsrd_ctx *ctx, struct softsrd_peer *peer);
void softsrd_rto_sample(struct softsrd_ctx *ctx, struct softsrd_peer *peer,
			uint64_t rtt);
uint64_t softsrd_rto_wait(const struct softsrd_ctx *ctx,
			  const struct softsrd_peer *peer, uint32_t tries);
void softsrd_rto_round(struct softsrd_ctx *ctx, uint64_t now);
void softsrd_qp_timers(struct softsrd_qp *qp, uint64_t now, bool judge);

/* place.c: write received data so that what the device claims holds */
void softsrd_place(void *dst, const void *src, size_t len,
		   enum softsrd_order order);
int softsrd_scatter(struct softsrd_ctx *ctx, const struct ibv_sge *sge,
		    uint32_t num_sge, uint32_t off, const void *src,
		    uint32_t len, enum softsrd_order order);

/* crc.c */
void softsrd_crc_setup(void);
uint32_t softsrd_crc32c(uint32_t crc, const void *p, size_t len);
uint32_t softsrd_crc32c_iov(const struct iovec *iov, size_t n);

/* parse.c: what is checked of a datagram before anything is looked up,
 * and the sequence arithmetic of flows; no state */
int softsrd_wire_parse(const uint8_t *buf, size_t len, bool crc_required,
		       struct softsrd_wire_pkt *p);
bool softsrd_seq_window(uint64_t psn, uint64_t floor, uint64_t *rx_floor);
bool softsrd_seq_ack_run(uint64_t first, uint32_t cnt, uint64_t next_psn);

/* wire.c */
int softsrd_wire_open(struct softsrd_ctx *ctx);
void softsrd_wire_close(struct softsrd_ctx *ctx);
struct softsrd_txd *softsrd_wire_txd(struct softsrd_ctx *ctx);
void softsrd_wire_flush(struct softsrd_ctx *ctx);
int softsrd_wire_rx(struct softsrd_ctx *ctx);
void softsrd_wire_held_due(struct softsrd_ctx *ctx, uint64_t now);
bool softsrd_wire_chance(struct softsrd_ctx *ctx, uint32_t percent);

/* thread.c */
int softsrd_thread_start(struct softsrd_ctx *ctx);
void softsrd_thread_stop(struct softsrd_ctx *ctx);
void softsrd_thread_kick(struct softsrd_ctx *ctx);

/* Under ctx->lock: the application is here, and the time of its call is
 * the time of the work done in it (one clock read per call). A thread
 * left waiting in ppoll while the application was away is sent off the
 * socket (softsrd_thread_kick). Relaxed is enough: only a thread on the
 * same CPU can be kept from leaving by itself (starved by a spinning
 * application of its priority), and one CPU does not reorder; on another
 * CPU it leaves at the next datagram. */
static inline void softsrd_app_enter(struct softsrd_ctx *ctx)
{
	ctx->now = util_time_ns();
	atomic_store_explicit(&ctx->app_ns, ctx->now, memory_order_relaxed);
	if (WEFT_UNLIKELY(atomic_load_explicit(&ctx->thread_waits,
					       memory_order_relaxed)))
		softsrd_thread_kick(ctx);
}

#endif /* SOFTSRD_PRIV_H */
