/* SPDX-License-Identifier: MIT */
/*
 * The protocols of the RDM layer as a table (rdm/proto/, one file each).
 *
 * A protocol is a const struct srd_proto of hooks (a message protocol
 * needs fits, tx_start, msg_type, rx_check and rx_start, and the step
 * hook of each pump it puts work on; the others are optional): what it
 * does at endpoint open and close, how it sends a message (fits,
 * tx_start, tx_step), how it receives one (rx_check, rx_start, rx_more,
 * rx_unexp, rx_deliver, rx_step), which packet types and work-request
 * kinds it owns, what it does at each progress batch end, which peers it
 * waits on (the liveness watch), and how it ends its work with a peer
 * that failed (peer_failed, the contract of weft/util_peer.h).
 *
 * srd_protos[] (srd_proto.c) lists them in priority order. At endpoint
 * open srd_proto_ep_init runs their ep_init and keeps those that serve
 * there in ep->protos; choosing a protocol for a send, failing a peer,
 * the batch-end hooks and the watch are loops over that list. Received
 * packets go by type through ep->pkt_route, filled from every protocol's
 * packet list; send completions by work-request kind through
 * ep->wr_proto. The loops stay off the message path: a send of at most
 * ep->tx_fast_max bytes uses ep->tx_fast, chosen once at open.
 *
 * Adding a protocol: a new file in rdm/proto/ defining its struct
 * srd_proto, an entry in srd_protos[], its packet types in srd_pkt.h
 * (and their validation in srd_pkt.c), and its peer_failed hook.
 */
#ifndef SRD_PROTO_H
#define SRD_PROTO_H

#include "srd_rdm.h"

/* ep_init's answer when the protocol does not serve on this endpoint. */
#define SRD_PROTO_OFF 1

/* What an rx_step did with a transfer on the receive pump. */
enum srd_rx_step {
	SRD_RX_STEP_WAIT,	/* still waiting for something: next one */
	SRD_RX_STEP_DONE,	/* finished (off the pump, maybe freed) */
	SRD_RX_STEP_STOP,	/* out of packet buffers: stop the pump */
};

struct srd_proto_pkt {
	uint8_t type;		/* enum srd_pkt_type; 0 ends a list */
	srd_pkt_fn handle;
};

struct srd_proto {
	const char *name;

	/* ---- endpoint ---- */
	/* At open: 0 (serves here), SRD_PROTO_OFF, or -FI_E*. */
	int (*ep_init)(struct srd_ep *ep);
	/* At close, after the QP, the peers and their transfers are gone. */
	void (*ep_fini)(struct srd_ep *ep);
	/* End of each progress batch: retry what waited for resources. */
	void (*progress)(struct srd_ep *ep);
	/* After each CQ poll: work found outside the CQ (memory rings). */
	void (*poll)(struct srd_ep *ep);
	/* Liveness: mark in probe (bit per peer id) the peers this
	 * protocol's own objects wait on; true when any does. Messages'
	 * transfers are watched by the RDM layer (srd_watch.c). */
	bool (*watch)(struct srd_ep *ep, uint64_t *probe);

	/* ---- peers ---- */
	/* The peer failed (srd_peer_fail, already reset to NEW): end with
	 * an error everything of this protocol queued toward it, waiting
	 * for an answer from it or partly received from it. Sends nothing
	 * to it. */
	void (*peer_failed)(struct srd_ep *ep, struct srd_peer *peer, int err,
			    int prov_errno);
	/* Handshake: our HELLO / HELLO_ACK to peer, the peer's to us. */
	void (*hello_fill)(struct srd_ep *ep, struct srd_peer *peer,
			   struct srd_pkt_hello *h);
	void (*hello_recv)(struct srd_ep *ep, struct srd_peer *peer,
			   const struct srd_pkt_hello *h);
	void (*peer_free)(struct srd_ep *ep, struct srd_peer *peer);

	/* ---- sending a message ---- */
	/* Whether it takes a message of len bytes to peer. */
	bool (*fits)(const struct srd_ep *ep, const struct srd_peer *peer,
		     uint64_t len);
	/* Every message up to this many bytes fits, whatever the peer: the
	 * first protocol of the list with it is the endpoint's fast path. */
	size_t (*fast_max)(const struct srd_ep *ep);
	/* Start tx (filled, msg_id set). 0, or -FI_EAGAIN with nothing sent
	 * (the caller frees tx and the msg_id is not used). */
	int (*tx_start)(struct srd_ep *ep, struct srd_tx_entry *tx,
			void **desc);
	/* tx is on the send pump: send what it may. false: out of packet
	 * buffers (the pump stops); true: it leaves the pump. */
	bool (*tx_step)(struct srd_ep *ep, struct srd_tx_entry *tx);
	/* READ_DONE for tx: the receiver has what it wanted. */
	void (*tx_done)(struct srd_ep *ep, struct srd_tx_entry *tx);
	/* tx completes (or the endpoint closes): release what it holds. */
	void (*tx_release)(struct srd_ep *ep, struct srd_tx_entry *tx);

	/* ---- receiving a message ---- */
	uint8_t msg_type;	/* the packet that starts its messages */
	/* Lengths of a message's first packet (generic checks passed);
	 * -FI_EINVAL drops it with a warning. */
	int (*rx_check)(const struct srd_ep *ep, const struct srd_msg_info *m);
	/* A receive (dest) matched message m, in msg_id order. */
	void (*rx_start)(struct srd_ep *ep, const struct util_srx_dest *dest,
			 const struct srd_msg_info *m);
	/* A later packet of a message already matched (msg_id behind the
	 * reorder window). */
	void (*rx_more)(struct srd_ep *ep, const struct srd_msg_info *m);
	/* No receive yet: keep what the message needs in ux (NULL: copy the
	 * packet's payload into ux->data). */
	int (*rx_unexp)(struct srd_ep *ep, struct srd_unexp *ux);
	/* A receive takes unexpected ux (NULL: rx_start, then free ux). */
	void (*rx_deliver)(struct srd_ep *ep, const struct util_srx_dest *dest,
			   struct srd_unexp *ux);
	/* x is on the receive pump: continue it. */
	enum srd_rx_step (*rx_step)(struct srd_ep *ep, struct srd_rx_xfer *x);

	/* ---- packets and work requests it owns ---- */
	const struct srd_proto_pkt *pkts;
	uint8_t wr_kind;		/* enum srd_wr_kind, 0: none */
	void (*wr_done)(struct srd_ep *ep, struct srd_wr_hdr *hdr,
			const struct srd_dev_wc *wc);
};

/* In priority order (srd_proto.c). */
extern const struct srd_proto srd_proto_ring;
extern const struct srd_proto srd_proto_eager;
extern const struct srd_proto srd_proto_medium;
extern const struct srd_proto srd_proto_long_read;
extern const struct srd_proto srd_proto_cts;
extern const struct srd_proto srd_proto_rma;
/* Not in srd_protos[]: marks sends that shm carries (srd_shm.c). */
extern const struct srd_proto srd_proto_shm;
extern const struct srd_proto srd_proto_stripe;

/* srd_proto.c: the table and its loops. */
int srd_proto_ep_init(struct srd_ep *ep);
void srd_proto_ep_fini(struct srd_ep *ep);
const struct srd_proto *srd_proto_choose_slow(const struct srd_ep *ep,
					      const struct srd_peer *peer,
					      uint64_t len);
void srd_proto_peer_failed(struct srd_ep *ep, struct srd_peer *peer, int err,
			   int prov_errno);
void srd_proto_progress(struct srd_ep *ep);
bool srd_proto_watch(struct srd_ep *ep, uint64_t *probe);
void srd_proto_hello_fill(struct srd_ep *ep, struct srd_peer *peer,
			  struct srd_pkt_hello *h);
void srd_proto_hello_recv(struct srd_ep *ep, struct srd_peer *peer,
			  const struct srd_pkt_hello *h);
void srd_proto_peer_free(struct srd_ep *ep, struct srd_peer *peer);

static inline const struct srd_proto *
srd_proto_choose(const struct srd_ep *ep, const struct srd_peer *peer,
		 uint64_t len)
{
	if (WEFT_LIKELY(len <= ep->tx_fast_max))
		return ep->tx_fast;
	return srd_proto_choose_slow(ep, peer, len);
}

/* ---- what the protocols share (srd_tx.c, srd_recv.c, srd_watch.c) ---- */

/* RDMA read needs both ends: we read from a sender that announced it may
 * be read from. Before the handshake the peer's features are unknown, so
 * a first long message to a peer goes by credits, which always work. */
static inline bool srd_proto_read_ok(const struct srd_ep *ep,
				     const struct srd_peer *peer)
{
	return ep->long_read && peer->state == SRD_PEER_READY &&
	       (peer->features & SRD_FEAT_RDMA_READ);
}

/* The message header every first packet and segment of tx carries. */
static inline void srd_msg_hdr_fill(struct srd_tx_entry *tx,
				    struct srd_pkt_msg *h, uint8_t type,
				    uint64_t off, uint32_t seg)
{
	srd_pkt_base_init(&h->base, type, tx->pkt_flags, SRD_PEER_ID_NONE);
	h->msg_id = tx->msg_id;
	h->tx_id = tx->id;
	h->tag = tx->tag;
	h->total_len = tx->total_len;
	h->offset = off;
	h->cq_data = tx->cq_data;
	h->seg_len = seg;
}

/* One packet of tx's bytes from tx->sent into tb: type's header, then up
 * to max payload bytes; off it goes. Inline: the eager send is this. */
static inline void srd_tx_segment(struct srd_ep *ep, struct srd_tx_entry *tx,
				  struct srd_txbuf *tb, uint8_t type,
				  uint64_t max)
{
	struct srd_pkt_msg *h = (struct srd_pkt_msg *)tb->data;
	uint64_t left = tx->total_len - tx->sent;
	uint32_t seg = left < max ? (uint32_t)left : (uint32_t)max;

	srd_msg_hdr_fill(tx, h, type, tx->sent, seg);
	util_iov_copy_from(tx->iov, tx->iov_count, tx->sent, h + 1, seg);
	tx->sent += seg;
	tx->inflight++;
	tb->tx = tx;
	srd_pkt_send(ep, tx->peer, tb, sizeof(*h) + seg);
}
void srd_tx_pump_add(struct srd_ep *ep, struct srd_tx_entry *tx);
void srd_tx_pump_del(struct srd_ep *ep, struct srd_tx_entry *tx);
/* Fail proto's messages to peer that still have bytes to hand out or
 * wait for the receiver (those whose packets the device holds complete
 * through it). */
void srd_tx_fail_peer(struct srd_ep *ep, struct srd_peer *peer,
		      const struct srd_proto *proto, int err, int prov_errno);

/* A transfer for matched message m into dest, on peer->rx_xfers; NULL:
 * pool empty. */
struct srd_rx_xfer *srd_xfer_get(struct srd_ep *ep,
				 const struct util_srx_dest *dest,
				 const struct srd_msg_info *m);
void srd_xfer_free(struct srd_ep *ep, struct srd_rx_xfer *x);
void srd_rx_pump_add(struct srd_ep *ep, struct srd_rx_xfer *x);
void srd_rx_pump_del(struct srd_ep *ep, struct srd_rx_xfer *x);
/* Record the first error of x. */
static inline void srd_xfer_fail(struct srd_rx_xfer *x, int err,
				 int prov_errno)
{
	if (!x->err) {
		x->err = err;
		x->prov_errno = prov_errno;
	}
}

/* A control packet about receive x to its sender (CTS, READ_DONE).
 * -FI_EAGAIN: no packet buffer. */
int srd_rx_ctrl_send(struct srd_ep *ep, struct srd_rx_xfer *x, uint8_t type,
		     uint64_t off, uint64_t len, int status);

/* Something now waits on a peer: have the watch look (srd_watch.c). */
void srd_watch_arm(struct srd_ep *ep);

#endif /* SRD_PROTO_H */
