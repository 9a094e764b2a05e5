/* SPDX-License-Identifier: MIT */
/*
 * Frames on a connection's transmit queue. A frame is its encoded header
 * and its payload's iovecs (the application's buffers, or the frame's own
 * bytes for injects and control frames); the engine writes many queued
 * frames with one sendmsg.
 *
 * Batching: the first frame posted after a progress call goes out at
 * once (a ping-pong's reply never waits); frames posted after it, before
 * the next progress call, or with FI_MORE, wait on the endpoint's flush
 * list and go out together at the next progress call, or as soon as
 * TCP_DEFER_MAX bytes are queued on the connection. So a window of
 * injects costs a few system calls, not one each.
 */
#include "weft/compat.h"

#include <string.h>
#include <utlist.h>

#include "tcp.h"
#include "tcp_io.h"

int tcp_tx_init(struct tcp_ep *ep, size_t size)
{
	size_t chunk = size < 64 ? size : 64;
	int ret;

	ret = util_pool_init(&ep->tx_pool, sizeof(struct tcp_tx), 64, chunk,
			     chunk, size, NULL, NULL);
	if (ret)
		return ret;
	/* Answers the provider owes peers (CTS, ACK, responses) are never
	 * refused: their number is bounded by the peers' own tx_size. */
	ret = util_pool_init(&ep->ctrl_pool, sizeof(struct tcp_tx), 64, 16,
			     64, 0, NULL, NULL);
	if (ret)
		util_pool_fini(&ep->tx_pool);
	return ret;
}

void tcp_tx_fini(struct tcp_ep *ep)
{
	util_pool_fini(&ep->ctrl_pool);
	util_pool_fini(&ep->tx_pool);
}

struct tcp_tx *tcp_tx_ctrl(struct tcp_ep *ep)
{
	struct tcp_tx *tx = util_pool_get(&ep->ctrl_pool);

	if (!tx) {
		WEFT_WARN_SPARSE(&tcp_prov, FI_LOG_EP_DATA,
			"no memory for a control frame\n");
		return NULL;
	}
	tx->ctrl = true;
	tx->kind = TCP_TX_CTRL;
	tx->op = NULL;
	tx->sent = 0;
	tx->next = NULL;
	return tx;
}

void tcp_tx_put(struct tcp_ep *ep, struct tcp_tx *tx)
{
	util_pool_put(tx->ctrl ? &ep->ctrl_pool : &ep->tx_pool, tx);
}

void tcp_tx_frame(struct tcp_tx *tx, struct tcp_hdr *h,
		  const struct iovec *iov, size_t count)
{
	size_t i;

	tx->hdr_len = (uint8_t)tcp_frame_encode(h, tx->hdr);
	for (i = 0; i < count; i++)
		tx->iov[i] = iov[i];
	tx->iov_count = (uint8_t)count;
	tx->total = tx->hdr_len + h->len;
	tx->sent = 0;
}

void tcp_conn_kick(struct tcp_conn *c)
{
	c->ep->hot = true;
	c->ep->io->tx_kick(c->ep, c);
}

void tcp_conn_push(struct tcp_conn *c, struct tcp_tx *tx, bool more)
{
	struct tcp_ep *ep = c->ep;

	tx->next = NULL;
	if (c->tx_tail)
		c->tx_tail->next = tx;
	else
		c->tx_head = tx;
	c->tx_tail = tx;
	c->tx_queued += tx->total;
	tcp_ep_saw_frame(ep, tx->total);
	if ((!more && !ep->hot) || c->tx_queued >= TCP_DEFER_MAX) {
		tcp_conn_kick(c);
	} else if (!c->on_flush) {
		c->on_flush = true;
		LL_PREPEND2(ep->flush, c, flush_next);
	}
}

void tcp_tx_flush(struct tcp_ep *ep)
{
	struct tcp_conn *c;

	while ((c = ep->flush)) {
		LL_DELETE2(ep->flush, c, flush_next);
		c->on_flush = false;
		if (c->state == TCP_CONN_CLOSED || !c->tx_head)
			continue;
		ep->io->tx_kick(ep, c);
	}
}

/* Append the iovecs of the unsent part of tx; returns the new count. */
static size_t tcp_tx_frame_iov(const struct tcp_tx *tx, struct iovec *iov,
			       size_t n, size_t max, uint64_t *bytes)
{
	uint64_t skip = tx->sent;
	size_t i;

	if (skip < tx->hdr_len) {
		iov[n].iov_base = (uint8_t *)tx->hdr + skip;
		iov[n].iov_len = tx->hdr_len - skip;
		*bytes += iov[n].iov_len;
		n++;
		skip = 0;
	} else {
		skip -= tx->hdr_len;
	}
	for (i = 0; i < tx->iov_count && n < max; i++) {
		if (skip >= tx->iov[i].iov_len) {
			skip -= tx->iov[i].iov_len;
			continue;
		}
		if (tx->iov[i].iov_len - skip == 0)
			continue;
		iov[n].iov_base = (uint8_t *)tx->iov[i].iov_base + skip;
		iov[n].iov_len = tx->iov[i].iov_len - skip;
		*bytes += iov[n].iov_len;
		n++;
		skip = 0;
	}
	return n;
}

size_t tcp_tx_iov(struct tcp_conn *c, struct iovec *iov, size_t max,
		  uint64_t *bytes)
{
	struct tcp_tx *tx;
	size_t n = 0;

	*bytes = 0;
	for (tx = c->tx_head; tx && n + 1 + TCP_IOV_LIMIT <= max; tx = tx->next)
		n = tcp_tx_frame_iov(tx, iov, n, max, bytes);
	return n;
}

/* tx was written whole. */
static void tcp_tx_done(struct tcp_ep *ep, struct tcp_tx *tx)
{
	switch (tx->kind) {
	case TCP_TX_SEND:
		if (tx->want_comp)
			util_ep_tx_comp(&ep->util, tx->context, tx->comp_flags,
					0, NULL, 0, 0);
		util_ep_cntr_inc(&ep->util, UTIL_CNTR_SEND);
		break;
	case TCP_TX_OP:
		tcp_op_frame_sent(ep, tx->op);
		break;
	case TCP_TX_COLL:
		tcp_coll_send_done(ep, tx->context, 0);
		break;
	default:
		break;
	}
	tcp_tx_put(ep, tx);
}

void tcp_tx_sent(struct tcp_conn *c, size_t n)
{
	struct tcp_ep *ep = c->ep;
	struct tcp_tx *tx;
	uint64_t left;

	c->tx_queued -= n;
	c->tx_bytes += n;
	while (n && (tx = c->tx_head)) {
		left = tx->total - tx->sent;
		if (n < left) {
			tx->sent += n;
			return;
		}
		n -= left;
		c->tx_head = tx->next;
		if (!c->tx_head)
			c->tx_tail = NULL;
		tcp_tx_done(ep, tx);
	}
	/* A frame of no bytes cannot exist (every header has some), so
	 * nothing is left to finish here. */
}

void tcp_tx_fail_queue(struct tcp_ep *ep, struct tcp_tx *head, int err)
{
	struct tcp_tx *tx;

	while ((tx = head)) {
		head = tx->next;
		if (tx->kind == TCP_TX_SEND && err) {
			if (!tx->inject)
				util_ep_tx_err(&ep->util, tx->context,
					       tx->comp_flags, err, 0, 0, 0);
			util_ep_cntr_inc_err(&ep->util, UTIL_CNTR_SEND);
		} else if (tx->kind == TCP_TX_OP) {
			/* The op itself fails with its peer
			 * (tcp_op_fail_peer), after all its frames are
			 * gone. */
			tx->op->frames--;
		} else if (tx->kind == TCP_TX_COLL && err) {
			tcp_coll_send_done(ep, tx->context, err);
		}
		tcp_tx_put(ep, tx);
	}
}
