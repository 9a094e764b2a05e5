/* SPDX-License-Identifier: MIT */
/*
 * Split copy of large CMA messages. One process_vm_readv stream is bounded
 * by what one core copies, and in a rendezvous the sender's core only
 * waits for the ACK. So once a large RTS is matched, the receiver sends a
 * CTS naming its buffer for the second part of the message and pulls the
 * first part itself, while the sender, on the CTS, pushes the second part
 * with process_vm_writev: both cores copy at once. The sender answers
 * PUSHED; the receiver completes and ACKs when both parts are in, so the
 * sender's buffer is released only after the receiver's reads are done.
 *
 * The two parts are not halves: the cores need not copy at the same
 * speed (one may share its physical core with other work; the sender
 * starts a CTS later), and the slower part sets the message's time. So
 * the sender's PUSHED says when its copy started and ended, and the
 * receiver sizes its next part from this peer so that both would have
 * ended together (shm_split_learn).
 *
 * Faults: a dead sender leaves the receive waiting for PUSHED; the pull
 * list's periodic liveness check fails it (shm_rx_progress). A dead
 * receiver is the sender's usual ACK deadline. Every CTS field is checked
 * against the sender's own operation before a byte is written.
 */
#include "weft/compat.h"

#include <utlist.h>

#include "shm.h"

/* Parts are split on page boundaries: both copies then run over whole
 * pages of the receive buffer. */
#define SHM_SPLIT_ALIGN 4096
/* Each side keeps at least this share: one odd sample (a preempted copy)
 * must not leave a part too small to be worth its syscall. */
#define SHM_SPLIT_MIN_SHARE (SHM_SPLIT_ONE / 8)
/* Samples further apart than this are not one copy's (the clock values
 * come from another process): ignored. */
#define SHM_SPLIT_SANE_NS 1000000000ull

/* Our part of a split of want bytes from conn: whole pages, and at least
 * a page left for each side (0: too small to split). */
static size_t shm_split_ours(const struct shm_conn *conn, size_t want)
{
	const size_t page_mask = ~(size_t)(SHM_SPLIT_ALIGN - 1);
	size_t part = (size_t)(((uint64_t)want * conn->split_share) /
			       SHM_SPLIT_ONE) & page_mask;

	if (want < 2 * SHM_SPLIT_ALIGN)
		return 0;
	if (part < SHM_SPLIT_ALIGN)
		part = SHM_SPLIT_ALIGN;
	if (part > want - SHM_SPLIT_ALIGN)
		part = (want - SHM_SPLIT_ALIGN) & page_mask;
	return part;
}

/* The CTS of p: the sender is to write bytes [split_mine, split_want) of
 * the message into our buffer. -FI_EAGAIN when its queue is full. */
int shm_split_send_cts(struct shm_pull *p)
{
	struct iovec theirs[SHM_IOV_LIMIT];
	struct shm_cell *cell;
	struct shm_cts *cts;
	size_t i, cnt;

	cell = shm_peer_reserve(p->conn->peer);
	if (!cell)
		return -FI_EAGAIN;
	cnt = util_iov_slice(p->dest.iov, p->dest.iov_count, p->split_mine,
			    p->split_want - p->split_mine, theirs);
	cts = (struct shm_cts *)cell->payload;
	cts->off = p->split_mine;
	cts->len = p->split_want - p->split_mine;
	cts->rx_id = p->split_id;
	cts->iov_cnt = (uint32_t)cnt;
	cts->pad = 0;
	for (i = 0; i < cnt; i++) {
		cts->iov[i].addr = (uintptr_t)theirs[i].iov_base;
		cts->iov[i].len = theirs[i].iov_len;
	}
	cell->hdr.op = SHM_OP_CTS;
	cell->hdr.flags = SHM_F_VER;
	cell->hdr.len = (uint32_t)(sizeof(*cts) + cnt * sizeof(struct shm_iov));
	cell->hdr.proto = 0;
	cell->hdr.tag = 0;
	cell->hdr.data = 0;
	cell->hdr.cookie = p->cookie;
	shm_peer_commit(p->conn->peer, cell);
	p->cts_pending = false;
	return 0;
}

/* Logged once per peer: what follows is slower, not wrong. */
static void shm_split_cma_lost(struct shm_conn *conn)
{
	if (!shm_peer_cma(conn->peer))
		return;
	WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA,
		"CMA read of %s refused after its probe allowed it: its large "
		"messages are now pushed by it\n", conn->name);
	shm_peer_cma_lost(conn->peer);
}

/* A split pull of want bytes of which we copy mine (not on ep->pulls). */
static struct shm_pull *shm_split_new(struct shm_ep *ep,
				      const struct util_srx_dest *dest,
				      const struct shm_msg_info *m,
				      size_t want, size_t mine)
{
	struct shm_pull *p = shm_pull_new(ep, dest, m);

	if (!p)
		return NULL;
	p->split = true;
	p->split_id = ++ep->split_seq;
	p->split_mine = mine;
	p->split_want = want;
	p->split_t0 = p->split_t1 = 0;
	return p;
}

int shm_split_start(struct shm_ep *ep, const struct util_srx_dest *dest,
		    const struct shm_msg_info *m, const struct shm_rts_local *r,
		    size_t want)
{
	struct iovec mine[SHM_IOV_LIMIT];
	size_t half = shm_split_ours(m->conn, want);
	struct shm_pull *p;
	size_t cnt;
	ssize_t n;

	if (!half || half >= want || m->conn->dead)
		return -FI_EAGAIN;
	p = shm_split_new(ep, dest, m, want, half);
	if (!p)
		return -FI_EAGAIN;
	if (shm_split_send_cts(p)) {
		util_pool_put(&ep->pull_pool, p);
		return -FI_EAGAIN;
	}
	DL_APPEND(ep->pulls, p);

	/* Our part, while the sender pushes its part. */
	cnt = util_iov_slice(p->dest.iov, p->dest.iov_count, 0, half, mine);
	p->split_t0 = util_time_ns();
	n = shm_cma_read(m->conn->peer->pid, mine, cnt, r->iov, r->iov_cnt);
	p->split_t1 = util_time_ns();
	p->split_err = shm_cma_status(n, half);
	if (WEFT_UNLIKELY(n == -FI_EPERM)) {
		/* The sender pushes our part too, after its own. */
		shm_split_cma_lost(m->conn);
		p->split_refused = true;
		p->split_err = 0;
	}
	return 0;
}

int shm_split_cma_refused(struct shm_ep *ep, const struct util_srx_dest *dest,
			  const struct shm_msg_info *m, size_t want)
{
	shm_split_cma_lost(m->conn);
	return shm_split_push_all(ep, dest, m, want);
}

/* Under one-way ptrace rules (Yama scope 1: a parent may read its child,
 * not the reverse) the sender chose CMA because it can reach us, while we
 * cannot read it: a split with no part of ours, so the sender writes the
 * whole message. A full queue toward it only delays the CTS (progress
 * retries it); the receive is already matched and cannot be undone. */
int shm_split_push_all(struct shm_ep *ep, const struct util_srx_dest *dest,
		       const struct shm_msg_info *m, size_t want)
{
	struct shm_pull *p = shm_split_new(ep, dest, m, want, 0);

	if (!p)
		return -FI_ENOMEM;
	p->cts_pending = true;
	(void)shm_split_send_cts(p);
	DL_APPEND(ep->pulls, p);
	return 0;
}

/* Our copy ran [t0, t1], the sender's [ts, te]. With c = ns per byte of
 * each side and lag = ts - t0 (the sender starts a CTS later), both parts
 * end together for x bytes of ours when
 *     x * c_ours = lag + (want - x) * c_theirs.
 * The next split from conn moves a quarter of the way there. */
static void shm_split_learn(struct shm_conn *conn, const struct shm_pull *p,
			    uint64_t ts, uint64_t te)
{
	uint64_t t0 = p->split_t0, t1 = p->split_t1;
	uint64_t mine = p->split_mine, rest = p->split_want - p->split_mine;
	double ours, theirs, lag, x;
	uint32_t share;

	if (p->split_err || !mine || !rest || t1 <= t0 || te <= ts ||
	    te - ts > SHM_SPLIT_SANE_NS || t1 - t0 > SHM_SPLIT_SANE_NS ||
	    ts + SHM_SPLIT_SANE_NS < t0 || ts > t0 + SHM_SPLIT_SANE_NS)
		return;
	ours = (double)(t1 - t0) / (double)mine;
	theirs = (double)(te - ts) / (double)rest;
	lag = ts > t0 ? (double)(ts - t0) : 0;
	x = (lag + (double)p->split_want * theirs) / (ours + theirs);
	x = x / (double)p->split_want * SHM_SPLIT_ONE;
	if (x < SHM_SPLIT_MIN_SHARE)
		x = SHM_SPLIT_MIN_SHARE;
	else if (x > SHM_SPLIT_ONE - SHM_SPLIT_MIN_SHARE)
		x = SHM_SPLIT_ONE - SHM_SPLIT_MIN_SHARE;
	share = (uint32_t)x;
	conn->split_share = (3 * conn->split_share + share) / 4;
}

void shm_split_handle_pushed(struct shm_ep *ep, struct shm_conn *conn,
			     const struct shm_cell_hdr *hdr)
{
	struct shm_pull *p;
	int err;

	DL_FOREACH(ep->pulls, p) {
		if (!p->split || p->split_id != hdr->cookie || p->conn != conn)
			continue;
		err = shm_wire_status(hdr->proto);
		if (WEFT_UNLIKELY(p->split_refused) && !err) {
			/* Its part is in; now it pushes ours, [0, mine). */
			p->split_refused = false;
			p->split_want = p->split_mine;
			p->split_mine = 0;
			p->cts_pending = true;
			(void)shm_split_send_cts(p);
			return;
		}
		if (!err)
			shm_split_learn(conn, p, hdr->tag, hdr->data);
		shm_pull_finish(ep, p, p->split_err ? p->split_err : err);
		return;
	}
	WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA,
		"PUSHED from %s for no transfer of ours (%llu)\n", conn->name,
		(unsigned long long)hdr->cookie);
}

void shm_split_handle_cts(struct shm_ep *ep, struct shm_conn *conn,
			  const struct shm_cell_hdr *hdr,
			  const uint8_t *payload)
{
	const struct shm_cts *cts = (const void *)payload;
	struct iovec theirs[SHM_IOV_LIMIT], mine[SHM_IOV_LIMIT];
	struct shm_tx_entry *tx;
	uint64_t rx_id, off, len, ts = 0, te = 0;
	int cnt, status = FI_EIO;
	size_t lcnt;
	ssize_t n;

	if (hdr->len < sizeof(*cts)) {
		WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA,
			"short CTS (%u bytes) from %s\n", hdr->len, conn->name);
		return;
	}
	rx_id = cts->rx_id;
	tx = shm_tx_find(ep, conn, hdr->cookie);
	/* No such send (or it was pushed enough): answer anyway, so the
	 * receiver fails its transfer instead of waiting for us. */
	if (!tx || !tx->split_ok || tx->pushes >= SHM_SPLIT_PUSHES ||
	    shm_conn_open_peer(ep, conn))
		goto reply;
	cnt = shm_cts_parse(tx->len, hdr, cts, &off, &len, theirs);
	if (cnt < 0) {
		WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA, "bad CTS from %s\n",
			conn->name);
		status = FI_EINVAL;
		goto reply;
	}
	lcnt = util_iov_slice(tx->iov, tx->iov_cnt, off, len, mine);
	ts = util_time_ns();
	n = len ? shm_cma_write(conn->peer->pid, mine, lcnt, theirs,
				(size_t)cnt) : 0;
	te = util_time_ns();
	status = shm_cma_status(n, len);
	tx->pushes++;
reply:
	/* When our copy ran: the receiver balances the next split on it. */
	shm_reply_send_data(ep, conn, SHM_OP_PUSHED, rx_id, status, ts, te);
}
