/* SPDX-License-Identifier: MIT */
/*
 * Replies (ACK, PUSHED), and those that wait because the initiator's
 * queue is full.
 *
 * A target never keeps a request waiting for a reply cell: it runs the
 * operation when the request comes, and when no cell is free in the
 * initiator's queue the reply (with its data: inline read bytes, the old
 * values of a fetching atomic) waits here and goes out from progress, in
 * order. Two endpoints whose queues are full of each other's requests
 * (both writing to each other) would otherwise each hold the other's
 * request while waiting for a cell the other's requests occupy, and
 * neither would move again. The requests consumed this way make room in
 * our own queue, which is what lets the other side's replies to us out.
 * What waits is bounded by the peers' outstanding operations (their
 * tx_size), whose requests are what the replies answer.
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <string.h>

#include "shm.h"

/* Bounded retries of a reply queued behind a full initiator queue. */
#define SHM_ACK_RETRY_CHECK 0xfffu

int shm_reply_init(struct shm_ep *ep)
{
	int ret;

	ret = util_pool_init(&ep->ack_pool, sizeof(struct shm_ack_pending), 0,
			     16, 64, 0, NULL, NULL);
	if (ret)
		return ret;
	/* Reply data up to our own cell payload, what peers configured as
	 * we are send at most; more (a peer with larger cells) is
	 * allocated for the reply. */
	ret = util_pool_init(&ep->ack_data_pool, ep->payload_max, 0, 0, 16, 0,
			     NULL, NULL);
	if (ret)
		util_pool_fini(&ep->ack_pool);
	ep->acks = NULL;
	ep->acks_tail = &ep->acks;
	return ret;
}

static void shm_reply_put(struct shm_ep *ep, struct shm_ack_pending *p)
{
	if (p->heap)
		free(p->payload);
	else if (p->payload)
		util_pool_put(&ep->ack_data_pool, p->payload);
	p->conn->acks_pending--;
	util_pool_put(&ep->ack_pool, p);
}

void shm_reply_fini(struct shm_ep *ep)
{
	struct shm_ack_pending *p;

	/* The conns are gone by now: only the payloads to free. */
	while ((p = ep->acks)) {
		ep->acks = p->next;
		if (p->heap)
			free(p->payload);
	}
	ep->acks_tail = &ep->acks;
	util_pool_fini(&ep->ack_data_pool);
	util_pool_fini(&ep->ack_pool);
}

static void shm_reply_fill(struct shm_cell *cell, uint16_t op,
			   uint64_t cookie, int status, uint64_t tag,
			   uint64_t data, uint32_t len)
{
	cell->hdr.op = op;
	cell->hdr.flags = SHM_F_VER;
	cell->hdr.len = len;
	cell->hdr.proto = (uint32_t)status;
	cell->hdr.tag = tag;
	cell->hdr.data = data;
	cell->hdr.cookie = cookie;
}

/* A waiting reply toward conn with room for len bytes, or NULL. */
static struct shm_ack_pending *shm_reply_pending(struct shm_ep *ep,
						 struct shm_conn *conn,
						 uint32_t len)
{
	struct shm_ack_pending *p = util_pool_get(&ep->ack_pool);

	if (!p)
		return NULL;
	p->conn = conn;
	p->len = 0;
	p->payload = NULL;
	p->heap = len > ep->payload_max;
	p->next = NULL;
	if (len) {
		p->payload = p->heap ? malloc(len) :
				       util_pool_get(&ep->ack_data_pool);
		if (!p->payload) {
			util_pool_put(&ep->ack_pool, p);
			return NULL;
		}
	}
	conn->acks_pending++;
	return p;
}

int shm_reply_open(struct shm_ep *ep, struct shm_conn *conn, uint32_t len,
		   struct shm_reply *r)
{
	r->conn = conn;
	r->pending = NULL;
	r->cell = NULL;
	/* Behind replies waiting for conn's queue, a new one waits too:
	 * replies to one peer leave in the order they were made. */
	if (WEFT_LIKELY(!conn->acks_pending))
		r->cell = shm_peer_reserve(conn->peer);
	if (WEFT_LIKELY(r->cell)) {
		r->payload = r->cell->payload;
		return 0;
	}
	r->pending = shm_reply_pending(ep, conn, len);
	if (!r->pending)
		return -FI_ENOMEM;
	r->payload = r->pending->payload;
	return 0;
}

void shm_reply_close(struct shm_ep *ep, struct shm_reply *r, uint16_t op,
		     uint64_t cookie, int status, uint64_t tag, uint64_t data,
		     uint32_t len)
{
	struct shm_ack_pending *p = r->pending;

	if (WEFT_LIKELY(r->cell)) {
		shm_reply_fill(r->cell, op, cookie, status, tag, data, len);
		shm_peer_commit(r->conn->peer, r->cell);
		return;
	}
	p->op = op;
	p->cookie = cookie;
	p->status = (uint32_t)status;
	p->tag = tag;
	p->data = data;
	p->len = len;
	*ep->acks_tail = p;
	ep->acks_tail = &p->next;
}

void shm_reply_send_data(struct shm_ep *ep, struct shm_conn *conn,
			 uint16_t op, uint64_t cookie, int status,
			 uint64_t tag, uint64_t data)
{
	struct shm_reply r;

	if (shm_conn_open_peer(ep, conn))
		return;
	if (shm_reply_open(ep, conn, 0, &r)) {
		WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA,
			"reply to %s lost: no memory\n",
			conn->name);
		return;
	}
	shm_reply_close(ep, &r, op, cookie, status, tag, data, 0);
}

void shm_ack_send(struct shm_ep *ep, struct shm_conn *conn, uint64_t cookie,
		  int status)
{
	shm_reply_send_data(ep, conn, SHM_OP_ACK, cookie, status, 0, 0);
}

void shm_reply_send(struct shm_ep *ep, struct shm_conn *conn, uint16_t op,
		    uint64_t cookie, int status)
{
	shm_reply_send_data(ep, conn, op, cookie, status, 0, 0);
}

/* One waiting reply out: 1 sent (or dropped, its peer dead), 0 its
 * peer's queue is still full. */
static int shm_ack_flush_one(struct shm_ep *ep, struct shm_ack_pending *p)
{
	struct shm_cell *cell;

	if (p->conn->dead)
		return 1;
	cell = shm_peer_reserve(p->conn->peer);
	if (!cell)
		return (ep->progress_calls & SHM_ACK_RETRY_CHECK) ||
		       shm_conn_check(ep, p->conn) ? 0 : 1;
	if (p->len)
		memcpy(cell->payload, p->payload, p->len);
	shm_reply_fill(cell, p->op, p->cookie, (int)p->status, p->tag,
		       p->data, p->len);
	shm_peer_commit(p->conn->peer, cell);
	return 1;
}

/* Replies out in order per peer; a peer whose queue is full does not
 * hold up the others (it is marked for this pass by ack_flush_seq). */
void shm_ack_flush(struct shm_ep *ep)
{
	struct shm_ack_pending **pp = &ep->acks, *p;
	uint64_t seq = ++ep->ack_flush_seq;

	while ((p = *pp)) {
		if (p->conn->ack_flush_seq == seq ||
		    !shm_ack_flush_one(ep, p)) {
			p->conn->ack_flush_seq = seq;
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		if (ep->acks_tail == &p->next)
			ep->acks_tail = pp;
		shm_reply_put(ep, p);
	}
}
