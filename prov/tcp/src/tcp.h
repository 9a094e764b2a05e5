/* SPDX-License-Identifier: MIT */
/*
 * tcp provider internals shared by its files (never by other providers).
 *
 * One endpoint = listening sockets (one per interface it stripes over)
 * + the peers it talks to (struct tcp_peer, one per remote endpoint,
 * found by AV address on transmit and by connection on receive) + the
 * connections to them (struct tcp_conn: one primary per peer pair, and
 * stripes for large transfers) + an I/O engine (io_uring or epoll, one
 * const table of ops chosen at open, tcp_io.h).
 *
 * Sending: an operation becomes frames (struct tcp_tx) queued on a
 * connection and written with one sendmsg per batch of frames, straight
 * from the application's buffers. Operations that wait for an answer
 * (rendezvous, RMA, atomics, delivery-complete sends) hold a struct
 * tcp_op, found by the id its answer echoes.
 * Receiving: bytes land in the connection's buffer; each frame header is
 * checked, matched (util_srx) and its payload copied from the buffer or
 * read straight into the destination.
 */
#ifndef TCP_H
#define TCP_H

#include "weft/compat.h"

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <uthash.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/providers/fi_prov.h>

#include "weft/log.h"
#include "weft/util.h"
#include "weft/util_coll.h"
#include "tcp_proto.h"

#define TCP_PROV_NAME      "tcp"
#define TCP_PROV_VERSION   FI_VERSION(1, 0)
#define TCP_IOV_LIMIT      4
#define TCP_INJECT_MAX     256		/* inline bytes of a frame */
#define TCP_MAX_MSG_SIZE   ((uint64_t)1 << 40)
#define TCP_ATOMIC_MAX     128		/* operand bytes of one atomic */
#define TCP_TAG_FORMAT     0xAAAAAAAAAAAAAAAAULL
#define TCP_UNEXP_INLINE   256		/* unexpected payloads kept inline */
#define TCP_SCRATCH        (TCP_HELLO_MAX_LEN > 2 * TCP_ATOMIC_MAX ? \
			    TCP_HELLO_MAX_LEN : 2 * TCP_ATOMIC_MAX)
#define TCP_TX_IOV_MAX     64		/* iovecs of one sendmsg */
/* Queued bytes on a connection above which a deferred batch goes out
 * without waiting for the next progress call. */
#define TCP_DEFER_MAX      (64 * 1024)

_Static_assert(TCP_IOV_LIMIT <= UTIL_SRX_IOV_MAX, "a receive fits util_srx");
_Static_assert(sizeof(struct sockaddr_in6) <= FI_NAME_MAX,
	       "an endpoint name fits FI_NAME_MAX");
_Static_assert(TCP_HELLO_MAX_LEN <= TCP_INJECT_MAX,
	       "a handshake fits a frame's inline bytes");

/* Settings, read once at provider init (FI_TCP_*, tcp_param.c). */
struct tcp_env {
	const char *iface;		/* comma list, or NULL */
	size_t conn_timeout_ms;
	bool io_uring;			/* false: epoll */
	size_t conns_per_peer;
	size_t eager_size;
	size_t stripe_min;
	size_t rx_buf_size;
	size_t tx_size;
	size_t rx_size;
	size_t unexp_mem;
	size_t sock_buf;		/* SO_SNDBUF/SO_RCVBUF, 0: kernel's */
	size_t uring_entries;
	size_t poll_direct;		/* tcp_direct.c: most conns read directly */
};

extern struct tcp_env tcp_env;
extern struct fi_provider tcp_prov;

/* ---- addresses (tcp_addr.c) -------------------------------------------- */

union tcp_addr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/* Bytes of a's sockaddr (by family), 0 for other families. */
socklen_t tcp_addr_len(const union tcp_addr *a);
/* Zero everything but family, port, address (and scope for link-local
 * IPv6), so that equal endpoints give equal bytes (AV reverse lookup). */
void tcp_addr_normalize(union tcp_addr *a);
int tcp_addr_cmp(const union tcp_addr *a, const union tcp_addr *b);
uint16_t tcp_addr_port(const union tcp_addr *a);
void tcp_addr_set_port(union tcp_addr *a, uint16_t port);
/* "ip:port" / "[ip6]:port" into buf. */
const char *tcp_addr_str(const union tcp_addr *a, char *buf, size_t len);
void tcp_addr_to_wire(const union tcp_addr *a, struct tcp_wire_addr *w);
void tcp_addr_from_wire(const struct tcp_wire_addr *w, union tcp_addr *a);
/* FI_SOCKADDR_IN / _IN6 <-> AF_INET / AF_INET6 (0 if neither). */
int tcp_format_family(uint32_t addr_format);
uint32_t tcp_family_format(int family);

/* An interface address the provider may use. */
struct tcp_iface {
	char name[32];
	union tcp_addr addr;		/* port 0 */
	int prefix;			/* netmask bits */
};

/* Usable interfaces of family (AF_INET/AF_INET6/AF_UNSPEC), in order of
 * preference: FI_TCP_IFACE's order if set; else the interface of the
 * default route first, loopback last. Caller frees *out. */
int tcp_iface_list(int family, struct tcp_iface **out, size_t *n);
/* The interface address the kernel's routing picks toward dst (port 0). */
int tcp_iface_route_src(const union tcp_addr *dst, union tcp_addr *src);
/* The interface holding address a, or -FI_ENODATA. */
int tcp_iface_of_addr(const union tcp_addr *a, struct tcp_iface *out);
/* node/service -> address (numeric or by name). */
int tcp_addr_resolve(const char *node, const char *service, int family,
		     bool passive, union tcp_addr *out);

/* ---- objects ------------------------------------------------------------ */

struct tcp_domain {
	struct util_domain util;
	int family;			/* AF_INET or AF_INET6 */
	/* Local addresses endpoints listen on: [0] names the endpoint;
	 * the others are the further interfaces of FI_TCP_IFACE. */
	union tcp_addr src[TCP_STRIPE_MAX];
	size_t nsrc;
};

static inline struct tcp_domain *to_tcp_domain(struct util_domain *d)
{
	return container_of(d, struct tcp_domain, util);
}

/* Per AV slot: bumped at every insert so endpoints notice reuse. */
struct tcp_av_data {
	uint64_t gen;
};

struct tcp_ep;
struct tcp_peer;
struct tcp_op;

/* What a frame does once it is written whole. */
enum tcp_tx_kind {
	TCP_TX_CTRL,	/* nothing: handshake, CTS, ACK, responses */
	TCP_TX_SEND,	/* an eager send: its completion */
	TCP_TX_OP,	/* a frame of op: op->frames-- */
	TCP_TX_COLL,	/* the collective engine's MSG: util_coll_send_done
			 * (context NULL: copied into data[], nothing) */
};

/* One frame on a connection's queue. Payload from the application's
 * buffers (iov) or from data[] (inject, handshake, small responses). */
struct tcp_tx {
	struct tcp_tx *next;
	struct tcp_op *op;		/* TCP_TX_OP */
	void *context;			/* TCP_TX_SEND */
	uint64_t comp_flags;		/* TCP_TX_SEND */
	uint8_t kind;			/* enum tcp_tx_kind */
	uint8_t hdr_len;
	uint8_t iov_count;
	bool want_comp;			/* TCP_TX_SEND */
	bool inject;			/* an fi_inject* call: no entry even on error */
	bool ctrl;			/* from ctrl_pool (never refused) */
	uint64_t total;			/* header + payload bytes */
	uint64_t sent;
	uint8_t hdr[TCP_HDR_MAX];
	struct iovec iov[TCP_IOV_LIMIT];
	uint8_t data[TCP_INJECT_MAX];
};

/* Operations that wait for the target's answer. */
enum tcp_op_type {
	TCP_OPT_RNDV = 1,	/* RTS sent, waits for CTS, then DATA */
	TCP_OPT_SEND_ACK,	/* delivery-complete MSG, waits for ACK */
	TCP_OPT_WRITE,		/* waits for ACK */
	TCP_OPT_READ,		/* waits for READ_RESP */
	TCP_OPT_ATOMIC,		/* waits for ATOMIC_RESP */
};

struct tcp_op {
	struct tcp_op *prev, *next;	/* peer->ops */
	struct tcp_peer *peer;
	uint32_t idx;
	uint32_t gen;			/* odd while in use */
	uint8_t type;			/* enum tcp_op_type */
	uint8_t cntr;			/* enum util_cntr_slot */
	bool want_comp;
	bool inject;			/* an fi_inject* call: no entry even on error */
	bool answered;			/* CTS/ACK/response seen */
	uint32_t frames;		/* its frames not yet written */
	int err;			/* first error, positive FI_E* */
	void *context;
	uint64_t comp_flags;
	uint64_t len;			/* bytes of the op */
	size_t iov_count;		/* RNDV source, READ/ATOMIC results */
	struct iovec iov[TCP_IOV_LIMIT];
};

/* A rendezvous receive: where the DATA of one message lands. */
struct tcp_xfer {
	struct tcp_xfer *prev, *next;	/* peer->xfers */
	struct tcp_peer *peer;
	uint32_t idx;
	uint32_t gen;			/* odd while in use */
	uint64_t granted;		/* bytes asked for (<= dest.cap) */
	uint64_t received;
	struct util_srx_dest dest;
	struct util_srx_msg msg;
};

/* An unexpected message: MSG (its payload, kept whole) or RTS (nothing
 * but the offer). */
struct tcp_unexp {
	struct util_srx_unexp srx;
	struct tcp_peer *peer;
	uint8_t op;			/* TCP_OP_MSG / TCP_OP_RTS */
	uint16_t flags;			/* TCP_F_* */
	uint64_t id;			/* RTS / ACK_REQ: the sender's op id */
	uint64_t len;			/* payload bytes held */
	uint8_t *buf;			/* payload: data[], a pool buffer or
					 * malloc'ed (see buf_kind) */
	uint8_t buf_kind;		/* 0 inline, 1 pool, 2 heap */
	uint8_t data[TCP_UNEXP_INLINE];
};

/* Where a frame's payload goes: cap bytes into iov, the rest dropped. */
struct tcp_sink {
	struct iovec iov[TCP_IOV_LIMIT];
	size_t count;
	uint64_t cap;
	uint64_t done;			/* payload bytes consumed */
	void *arg;			/* the frame handler's */
	int status;			/* RMA/atomic target: 0 or FI_E* */
	struct util_srx_dest dest;	/* MSG into a receive */
};

enum tcp_conn_state {
	TCP_CONN_CONNECTING,	/* connect() in progress */
	TCP_CONN_HELLO_WAIT,	/* HELLO sent, waiting for HELLO_ACK */
	TCP_CONN_ACCEPTED,	/* accepted, waiting for HELLO */
	TCP_CONN_READY,
	TCP_CONN_CLOSED,	/* failed or dropped; freed once idle */
};

struct tcp_conn {
	struct tcp_conn *prev, *next;	/* ep->conns */
	struct tcp_conn *flush_next;	/* ep->flush */
	struct tcp_ep *ep;
	struct tcp_peer *peer;		/* NULL until its HELLO (acceptor) */
	int fd;
	uint8_t state;			/* enum tcp_conn_state */
	uint8_t role;			/* 0 primary, k stripe k */
	bool outgoing;
	bool rx_only;			/* the accepting end of a self conn */
	bool on_flush;
	bool rx_stalled;		/* a frame waits for memory */
	bool tx_blocked;		/* the socket refused more */
	bool rx_payload;		/* reading rh's payload */
	uint64_t deadline_ns;		/* handshake deadline */
	uint64_t rx_bytes, tx_bytes;	/* moved so far (tests, logs) */
	/* receive */
	uint8_t *rbuf;
	uint32_t rcap, rhead, rtail;
	struct tcp_hdr rh;		/* the frame being received */
	struct tcp_sink sink;
	/* transmit */
	struct tcp_tx *tx_head, *tx_tail;
	uint64_t tx_queued;		/* bytes queued, not written */
	/* I/O engine state: readiness (epoll), requests in flight and the
	 * iovecs they point at (io_uring). */
	uint8_t io_flags;
	uint8_t io_inflight;
	bool rx_exact;			/* tcp_rx_iov: the rest of a payload only */
	struct iovec rx_iov[TCP_IOV_LIMIT + 1];
	struct iovec tx_iov[TCP_TX_IOV_MAX];
	struct msghdr tx_msg, rx_msg;
	uint8_t scratch[TCP_SCRATCH];	/* handshake, atomic operands */
};

enum tcp_peer_state {
	TCP_PEER_IDLE,		/* no primary connection */
	TCP_PEER_CONNECTING,	/* ours in progress, or waiting for theirs */
	TCP_PEER_READY,
};

struct tcp_peer {
	UT_hash_handle hh;		/* ep->peers, key addr bytes */
	union tcp_addr addr;		/* its name */
	struct tcp_ep *ep;
	fi_addr_t fi_addr;		/* cached reverse lookup */
	uint64_t fi_addr_gen;		/* AV generation it was made for */
	uint8_t state;			/* enum tcp_peer_state */
	bool self;
	bool nonce_known;
	bool failed;			/* failed once: not alive for the
					 * collective engine, even if a later
					 * connection reaches it again */
	uint64_t nonce;			/* its incarnation */
	uint64_t eager_max;		/* min(ours, its) */
	uint64_t deadline_ns;		/* waiting for its connection */
	struct tcp_conn *conn;		/* primary: every frame but DATA */
	struct tcp_conn *stripe[TCP_STRIPE_MAX];	/* [0] = conn */
	uint32_t nstripe;		/* stripes asked for */
	uint16_t naddr;			/* its listener addresses */
	struct tcp_wire_addr raddr[TCP_STRIPE_MAX];
	struct tcp_tx *wait_head, *wait_tail;	/* frames before READY */
	struct tcp_op *ops;		/* waiting for its answers */
	struct tcp_xfer *xfers;		/* its rendezvous data to us */
	uint32_t pending;		/* queued frames, ops and xfers */
};

/* fi_addr -> peer cache of the transmit side. */
struct tcp_tx_map {
	uint64_t gen;			/* tcp_av_data.gen it was made for */
	struct tcp_peer *peer;
};

struct tcp_listener {
	_Alignas(8) int fd;
	bool accepting;			/* io_uring: an accept in flight */
	union tcp_addr addr;		/* with the port the kernel gave */
};

struct tcp_io_ops;

struct tcp_ep {
	struct util_ep util;
	struct util_srx srx;
	const struct tcp_io_ops *io;
	void *io_priv;
	int family;
	union tcp_addr name;		/* listeners[0].addr */
	struct tcp_listener listeners[TCP_STRIPE_MAX];
	size_t nlisteners;
	uint64_t nonce;
	struct tcp_limits lim;
	uint64_t eager_max;		/* what we send eagerly */
	uint64_t timeout_ns;		/* FI_TCP_CONN_TIMEOUT_MS */
	/* The settings an endpoint keeps from its open. */
	size_t conns_per_peer;
	size_t stripe_min;
	size_t unexp_mem;

	struct tcp_peer *peers;		/* hash by name */
	struct tcp_tx_map *tx_map;	/* indexed by fi_addr */
	size_t tx_map_len;
	struct tcp_conn *conns;		/* every connection */
	struct tcp_conn *flush;		/* deferred batches (flush_next) */
	bool hot;			/* wrote since the last progress */

	struct util_pool tx_pool;	/* frames of application ops */
	struct util_pool ctrl_pool;	/* frames the provider must send */
	struct tcp_op *ops;		/* tx_size of them, by idx */
	uint32_t *op_free;
	size_t op_free_top, op_count;
	struct tcp_xfer *xfers;		/* rx_size of them, by idx */
	uint32_t *xfer_free;
	size_t xfer_free_top, xfer_count;
	struct util_pool unexp_pool;	/* struct tcp_unexp */
	struct util_pool ubuf_pool;	/* eager_max payload buffers */
	size_t unexp_heap;		/* bytes of malloc'ed payloads */
	bool stalled;			/* some conn has rx_stalled */
	/* Unexpected messages may be queued from senders the AV did not
	 * know when they arrived (tcp_recv_resolve_src); unknown_gen is the
	 * AV generation they were last looked up at. */
	bool unexp_unknown;
	uint64_t unknown_gen;
	bool closed_pending;		/* some conn is CLOSED, not freed */

	uint64_t progress_calls;
	uint64_t bulk_until_ns;		/* tcp_direct.c: no direct polls */
	uint64_t next_check_ns;		/* timeouts, peers waiting */
	uint8_t *sink_buf;		/* dropped payload bytes land here */
	size_t sink_len;
};

/* Frames with more payload than this are bulk: for a while after one
 * went by, polls leave the sockets to the engine (tcp_direct.c). */
#define TCP_DIRECT_PAYLOAD_MAX (16 * 1024)
#define TCP_DIRECT_BULK_NS (5 * 1000 * 1000ull)

static inline void tcp_ep_saw_frame(struct tcp_ep *ep, uint64_t len)
{
	if (WEFT_UNLIKELY(len > TCP_DIRECT_PAYLOAD_MAX))
		ep->bulk_until_ns = util_time_coarse_ns() + TCP_DIRECT_BULK_NS;
}

static inline struct tcp_ep *to_tcp_ep(struct fid_ep *ep_fid)
{
	return container_of(ep_fid, struct tcp_ep, util.ep_fid);
}

static inline struct tcp_ep *to_tcp_ep_util(struct util_ep *util)
{
	return container_of(util, struct tcp_ep, util);
}

/* tcp_fabric.c, tcp_domain.c, tcp_ep.c, tcp_av.c */
int tcp_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
int tcp_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int tcp_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);
extern const struct util_av_prov tcp_av_prov_in;
extern const struct util_av_prov tcp_av_prov_in6;
/* The AV insert clock (tcp_av.c). */
uint64_t tcp_av_gen_now(void);

/* tcp_peer.c */
/* The peer of a destination fi_addr: cached, else from the AV (created
 * on first use). 0, or -FI_EINVAL for an address not in the AV. */
int tcp_peer_tx_checked(struct tcp_ep *ep, fi_addr_t fi_addr,
			struct tcp_peer **peer);
static inline int tcp_peer_tx(struct tcp_ep *ep, fi_addr_t fi_addr,
			      struct tcp_peer **peer)
{
	struct util_av_slot *slot;
	struct tcp_av_data *d;

	if (WEFT_LIKELY(fi_addr < ep->tx_map_len && ep->tx_map[fi_addr].peer)) {
		slot = util_av_slot(ep->util.av, fi_addr);
		d = slot ? (void *)(slot->bytes + ep->util.av->data_off) : NULL;
		if (WEFT_LIKELY(d && d->gen == ep->tx_map[fi_addr].gen)) {
			*peer = ep->tx_map[fi_addr].peer;
			return 0;
		}
	}
	return tcp_peer_tx_checked(ep, fi_addr, peer);
}
struct tcp_peer *tcp_peer_get(struct tcp_ep *ep, const union tcp_addr *addr);
/* The sender's fi_addr for completions (FI_ADDR_NOTAVAIL if none). */
fi_addr_t tcp_peer_fi_addr_checked(struct tcp_ep *ep, struct tcp_peer *peer);
static inline fi_addr_t tcp_peer_fi_addr(struct tcp_ep *ep,
					 struct tcp_peer *peer)
{
	struct util_av_slot *slot;
	struct tcp_av_data *d;

	if (WEFT_LIKELY(peer->fi_addr != FI_ADDR_NOTAVAIL)) {
		slot = util_av_slot(ep->util.av, peer->fi_addr);
		d = slot ? (void *)(slot->bytes + ep->util.av->data_off) : NULL;
		if (WEFT_LIKELY(d && d->gen == peer->fi_addr_gen))
			return peer->fi_addr;
	}
	return tcp_peer_fi_addr_checked(ep, peer);
}
/* Queue frame tx toward peer (primary connection, or its wait list until
 * the connection is ready; starts the connection). more: the caller has
 * more to send at once (FI_MORE), so the frame may wait for the batch. */
void tcp_peer_push(struct tcp_ep *ep, struct tcp_peer *peer,
		   struct tcp_tx *tx, bool more);
/* Everything pending on peer fails with err (positive FI_E*); its
 * connections close. */
void tcp_peer_fail(struct tcp_ep *ep, struct tcp_peer *peer, int err,
		   const char *why);
/* Its primary is ready: move the waiting frames onto it. */
void tcp_peer_ready(struct tcp_ep *ep, struct tcp_peer *peer);
/* Progress: peers whose connection wait passed its deadline. */
void tcp_peer_check_timeouts(struct tcp_ep *ep, uint64_t now);
void tcp_peer_free_all(struct tcp_ep *ep);

/* tcp_conn.c: connection state machine and handshake */
int tcp_conn_connect(struct tcp_ep *ep, struct tcp_peer *peer, uint8_t role);
/* The engine: a connect finished (err 0 or positive errno). */
void tcp_conn_connected(struct tcp_conn *c, int err);
/* The engine: a listener accepted fd. */
void tcp_conn_accepted(struct tcp_ep *ep, int fd);
/* Handshake frames (from tcp_rx.c, payload in c->scratch). */
void tcp_conn_on_hello(struct tcp_conn *c, const uint8_t *buf, size_t len);
void tcp_conn_on_hello_ack(struct tcp_conn *c, const uint8_t *buf,
			   size_t len);
void tcp_conn_on_reject(struct tcp_conn *c, const uint8_t *buf, size_t len);
/* Close c; its frames fail with err if err, else are dropped. */
void tcp_conn_close(struct tcp_conn *c, int err);
/* c failed (I/O error, EOF, bad frame): its peer fails (every
 * connection of it), or c alone closes if it has no peer yet. */
void tcp_conn_fail(struct tcp_conn *c, int err, const char *why);
void tcp_conn_check_timeouts(struct tcp_ep *ep, uint64_t now);
void tcp_conn_free_closed(struct tcp_ep *ep);
int tcp_listen(struct tcp_ep *ep, struct tcp_domain *domain,
	       const struct fi_info *info);
/* Best effort at close: write what is queued, without waiting. */
void tcp_conn_flush_all(struct tcp_ep *ep);
void tcp_conn_close_all(struct tcp_ep *ep);
/* After the engine closed: free every connection. */
void tcp_conn_free_all(struct tcp_ep *ep);

/* tcp_tx.c: frames */
int tcp_tx_init(struct tcp_ep *ep, size_t size);
void tcp_tx_fini(struct tcp_ep *ep);
static inline struct tcp_tx *tcp_tx_get(struct tcp_ep *ep)
{
	struct tcp_tx *tx = util_pool_get(&ep->tx_pool);

	if (tx) {
		tx->ctrl = false;
		tx->sent = 0;
		tx->next = NULL;
	}
	return tx;
}
/* A control frame (never refused; NULL only without memory). */
struct tcp_tx *tcp_tx_ctrl(struct tcp_ep *ep);
void tcp_tx_put(struct tcp_ep *ep, struct tcp_tx *tx);
/* Header h encoded into tx, payload iov (or none); total set. */
void tcp_tx_frame(struct tcp_tx *tx, struct tcp_hdr *h,
		  const struct iovec *iov, size_t count);
/* Queue tx on c; written now unless deferred (more, or ep->hot). */
void tcp_conn_push(struct tcp_conn *c, struct tcp_tx *tx, bool more);
/* The iovecs of c's queued bytes (at most max); returns the count. */
size_t tcp_tx_iov(struct tcp_conn *c, struct iovec *iov, size_t max,
		  uint64_t *bytes);
/* n bytes of c's queue were written: complete written frames. */
void tcp_tx_sent(struct tcp_conn *c, size_t n);
/* Write c's queue now (epoll: writev; io_uring: submit). */
void tcp_conn_kick(struct tcp_conn *c);
/* Progress: write deferred batches. */
void tcp_tx_flush(struct tcp_ep *ep);
/* c's queued frames fail (err) or are dropped (0). */
void tcp_tx_fail_queue(struct tcp_ep *ep, struct tcp_tx *head, int err);

/* tcp_op.c: operations waiting for answers, rendezvous receives */
int tcp_op_init(struct tcp_ep *ep, size_t nops, size_t nxfers);
void tcp_op_fini(struct tcp_ep *ep);
struct tcp_op *tcp_op_get(struct tcp_ep *ep, struct tcp_peer *peer,
			  uint8_t type);
static inline uint64_t tcp_op_id(const struct tcp_op *op)
{
	return ((uint64_t)op->gen << 32) | op->idx;
}
/* The live op of id owned by peer, or NULL (a bad answer). */
struct tcp_op *tcp_op_find(struct tcp_ep *ep, struct tcp_peer *peer,
			   uint64_t id);
/* Frees op without a completion (its post failed). */
void tcp_op_release(struct tcp_ep *ep, struct tcp_op *op);
/* Ends op: its completion (or error) and counter; frees it. */
void tcp_op_complete(struct tcp_ep *ep, struct tcp_op *op, int err);
/* An op frame was written: completes the op when nothing else waits. */
void tcp_op_frame_sent(struct tcp_ep *ep, struct tcp_op *op);
/* The target answered op (err 0 or positive FI_E*): completes it once
 * its frames are written. */
void tcp_op_answer(struct tcp_ep *ep, struct tcp_op *op, int err);
struct tcp_xfer *tcp_xfer_get(struct tcp_ep *ep, struct tcp_peer *peer);
static inline uint64_t tcp_xfer_id(const struct tcp_xfer *x)
{
	return ((uint64_t)x->gen << 32) | x->idx;
}
struct tcp_xfer *tcp_xfer_find(struct tcp_ep *ep, struct tcp_peer *peer,
			       uint64_t id);
void tcp_xfer_put(struct tcp_ep *ep, struct tcp_xfer *x);
/* Fail every op and xfer of peer. */
void tcp_op_fail_peer(struct tcp_ep *ep, struct tcp_peer *peer, int err);

/* tcp_rx.c: the receive state machine of a connection */
/* Where the next bytes of c go (at most TCP_IOV_LIMIT + 1 iovecs); sets
 * c->rx_exact when they are all payload bytes the peer is sending now:
 * always when the rest of a payload has at least exact_min bytes (no
 * read-ahead after it), else only when the iovecs cannot hold it all. */
size_t tcp_rx_iov(struct tcp_conn *c, struct iovec *iov, uint64_t exact_min);
/* n > 0 bytes landed where tcp_rx_iov said; 0: EOF; < 0: -errno. */
void tcp_rx_landed(struct tcp_conn *c, ssize_t n);
/* Whether c may take more bytes now (not stalled, not closed). */
static inline bool tcp_rx_open(const struct tcp_conn *c)
{
	return c->state != TCP_CONN_CLOSED && !c->rx_stalled;
}
/* Progress: frames that waited for memory. */
void tcp_rx_retry_stalled(struct tcp_ep *ep);
/* c closes: a payload half received ends (its receive fails with err;
 * nothing is reported when err is 0, at endpoint close). */
void tcp_rx_abort(struct tcp_conn *c, int err);
int tcp_rx_conn_init(struct tcp_conn *c);

/* tcp_recv.c: messages */
int tcp_recv_init(struct tcp_ep *ep);
void tcp_recv_fini(struct tcp_ep *ep);
/* A MSG header from c: sets c->sink (0), or -FI_EAGAIN (no memory: the
 * frame waits), or a negative error (the connection fails). */
int tcp_recv_msg_begin(struct tcp_conn *c);
void tcp_recv_msg_end(struct tcp_conn *c);
/* The connection closed in the middle of a MSG payload. */
void tcp_recv_msg_abort(struct tcp_conn *c, int err);
int tcp_recv_rts(struct tcp_conn *c);
void tcp_recv_resolve_src_slow(struct tcp_ep *ep);
/* The same with ep->lock held (the collective engine's receives). */
void tcp_recv_resolve_src_locked(struct tcp_ep *ep);

/* Before a receive is posted: unexpected messages whose sender the AV has
 * learned since they arrived get their source, so that a directed receive
 * takes the oldest message from its sender, not a later one. */
static inline void tcp_recv_resolve_src(struct tcp_ep *ep)
{
	if (WEFT_UNLIKELY(__atomic_load_n(&ep->unexp_unknown,
					  __ATOMIC_RELAXED)))
		tcp_recv_resolve_src_slow(ep);
}
int tcp_recv_data_begin(struct tcp_conn *c);
void tcp_recv_data_end(struct tcp_conn *c);
void tcp_recv_fail_xfer(struct tcp_ep *ep, struct tcp_xfer *x, int err);
ssize_t tcp_ep_cancel(fid_t fid, void *context);
extern const struct fi_ops_msg tcp_msg_ops;
extern const struct fi_ops_tagged tcp_tagged_ops;

/* tcp_send.c */
ssize_t tcp_send_post(struct tcp_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag,
		      uint64_t data, void *context, uint64_t flags);
ssize_t tcp_inject_post(struct tcp_ep *ep, const void *buf, size_t len,
			fi_addr_t dest, uint64_t tag, uint64_t data,
			uint64_t flags);
/* CTS: send the granted bytes of op as DATA frames (striped). */
int tcp_send_on_cts(struct tcp_conn *c);
int tcp_send_on_ack(struct tcp_conn *c);
/* A control frame with no payload toward peer (CTS, ACK, PONG). */
int tcp_send_ctrl(struct tcp_ep *ep, struct tcp_peer *peer,
		  struct tcp_hdr *h);

/* tcp_coll.c / tcp_send.c: the collective engine's transport. */
extern const struct util_coll_xport tcp_coll_xport;
ssize_t tcp_coll_send(struct tcp_ep *ep, const struct iovec *iov,
		      size_t count, fi_addr_t dest, uint64_t tag, void *ctx);
/* A send of the class ended: to the engine, unless the endpoint is
 * closing (the engine is gone, and so is ctx). */
static inline void tcp_coll_send_done(struct tcp_ep *ep, void *ctx, int err)
{
	if (ctx && ep->util.coll)
		util_coll_send_done(&ep->util, ctx, err);
}

/* tcp_rma.c / tcp_atomic.c */
extern const struct fi_ops_rma tcp_rma_ops;
extern const struct fi_ops_atomic tcp_atomic_ops;
int tcp_rma_write_begin(struct tcp_conn *c);
void tcp_rma_write_end(struct tcp_conn *c);
int tcp_rma_read_req(struct tcp_conn *c);
int tcp_rma_read_resp_begin(struct tcp_conn *c);
void tcp_rma_read_resp_end(struct tcp_conn *c);
int tcp_atomic_begin(struct tcp_conn *c);
void tcp_atomic_end(struct tcp_conn *c);
int tcp_atomic_resp_begin(struct tcp_conn *c);
void tcp_atomic_resp_end(struct tcp_conn *c);
/* Target side remote events of an RMA/atomic (counters, CQ data). */
void tcp_rma_target_events(struct tcp_ep *ep, struct tcp_peer *peer,
			   uint64_t cntr_flag, const struct tcp_hdr *h);

/* tcp_progress.c */
void tcp_ep_progress(struct util_ep *util);
void tcp_ep_progress_locked(struct tcp_ep *ep);

/* A status from the wire (0 or a positive FI_E*), made sane. */
static inline int tcp_wire_status(uint32_t status)
{
	return status < 512 ? (int)status : FI_EIO;
}

#endif /* TCP_H */
