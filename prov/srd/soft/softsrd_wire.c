/* SPDX-License-Identifier: MIT */
/*
 * The wire: one UDP socket per device context. Outgoing datagrams are
 * staged (header + iovecs pointing at application memory, no copy) and sent
 * in batches: io_uring SENDMSG requests with one submit, or sendmmsg for
 * batches of one or two and where io_uring is refused. Incoming datagrams arrive in batches by recvmmsg.
 * Fault injection (loss, duplication, reordering, delay) sits here, on the
 * way out, so it hits data, acks and read responses alike.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Returns the receive buffer the kernel granted. */
static int softsrd_sock_bufs(int fd)
{
	int sz = 8 << 20, got = 0;
	socklen_t len = sizeof(got);

	/* FORCE works for root past rmem_max; the plain one caps silently */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len))
		got = 0;
	return got;
}

/* Big RDMA packets cut the per-packet cost (a 1 MiB transfer is 17
 * datagrams instead of 119) but only pay when a window of them fits the
 * peer's socket buffer; without root, rmem_max (~200 KiB) says it won't. */
static void softsrd_rdma_pkt_settle(struct softsrd_ctx *ctx, int rcvbuf)
{
	struct softsrd_config *cfg = &ctx->cfg;

	if (!cfg->rdma_pkt)
		cfg->rdma_pkt = rcvbuf >= SOFTSRD_BIG_PKT_RCVBUF ?
				SOFTSRD_MAX_RDMA_PKT : cfg->mtu;
	cfg->rdma_pkt &= ~127u;
}

static int softsrd_sock_open(struct softsrd_ctx *ctx)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = ctx->ip };
	socklen_t len = sizeof(sin);
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto err;
	softsrd_rdma_pkt_settle(ctx, softsrd_sock_bufs(fd));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len))
		goto err_fd;
	ctx->port = ntohs(sin.sin_port);
	ctx->wire.fd = fd;
	return 0;

err_fd:
	close(fd);
err:
	FI_WARN(softsrd_prov, FI_LOG_CORE, "UDP socket: %s\n", strerror(errno));
	return -1;
}

static int softsrd_uring_open(struct softsrd_ctx *ctx)
{
	struct softsrd_wire *w = &ctx->wire;
	int ret;

	if (ctx->cfg.io == SOFTSRD_IO_MMSG)
		return 0;
	ret = io_uring_queue_init(2 * SOFTSRD_TX_BATCH, &w->ring, 0);
	if (!ret) {
		w->uring = true;
		return 0;
	}
	if (ctx->cfg.io == SOFTSRD_IO_URING) {
		FI_WARN(softsrd_prov, FI_LOG_CORE,
			"FI_SRD_SOFT_IO=uring but io_uring refused: %s\n",
			strerror(-ret));
		return -1;
	}
	FI_INFO(softsrd_prov, FI_LOG_CORE, "io_uring refused (%s): using "
		"sendmmsg/recvmmsg\n", strerror(-ret));
	return 0;
}

/* Each staged datagram's msghdr is its tx_mmsg entry, so a batch goes to
 * sendmmsg as it stands; only msg_iovlen changes per datagram. */
static void softsrd_tx_msg_init(struct softsrd_wire *w)
{
	for (int i = 0; i < SOFTSRD_TX_BATCH; i++) {
		struct softsrd_txd *t = &w->tx[i];
		struct msghdr *m = &w->tx_mmsg[i].msg_hdr;

		memset(m, 0, sizeof(*m));
		m->msg_name = &t->sin;
		m->msg_namelen = sizeof(t->sin);
		m->msg_iov = t->iov;
		t->msg = m;
	}
}

int softsrd_wire_open(struct softsrd_ctx *ctx)
{
	struct softsrd_wire *w = &ctx->wire;

	w->seed = (unsigned int)util_time_ns();
	w->faults = ctx->cfg.loss || ctx->cfg.dup || ctx->cfg.reorder ||
		    ctx->cfg.delay_us || ctx->cfg.corrupt;
	/* any peer may send RDMA packets up to the largest datagram, whatever
	 * this device's own settings */
	w->rx_buf_size = sizeof(struct softsrd_hdr) + SOFTSRD_MAX_MTU +
			 SOFTSRD_CRC_LEN;
	w->rx_buf = malloc(w->rx_buf_size * SOFTSRD_RX_BATCH);
	if (!w->rx_buf)
		return -1;
	softsrd_tx_msg_init(w);
	for (int i = 0; i < SOFTSRD_RX_BATCH; i++) {
		w->rx_iov[i].iov_base = w->rx_buf + i * w->rx_buf_size;
		w->rx_iov[i].iov_len = w->rx_buf_size;
		w->rx_mmsg[i].msg_hdr.msg_iov = &w->rx_iov[i];
		w->rx_mmsg[i].msg_hdr.msg_iovlen = 1;
		w->rx_mmsg[i].msg_hdr.msg_name = &w->rx_sin[i];
		w->rx_mmsg[i].msg_hdr.msg_namelen = sizeof(w->rx_sin[i]);
	}
	if (softsrd_sock_open(ctx))
		goto err_buf;
	if (softsrd_uring_open(ctx))
		goto err_sock;
	return 0;

err_sock:
	close(w->fd);
err_buf:
	free(w->rx_buf);
	return -1;
}

void softsrd_wire_close(struct softsrd_ctx *ctx)
{
	struct softsrd_wire *w = &ctx->wire;
	struct softsrd_held *h;

	while ((h = w->held)) {
		w->held = h->next;
		free(h);
	}
	if (w->uring)
		io_uring_queue_exit(&w->ring);
	close(w->fd);
	free(w->rx_buf);
}

struct softsrd_txd *softsrd_wire_txd(struct softsrd_ctx *ctx)
{
	struct softsrd_wire *w = &ctx->wire;
	struct softsrd_txd *t;

	if (w->ntx == SOFTSRD_TX_BATCH)
		softsrd_wire_flush(ctx);
	t = &w->tx[w->ntx++];
	t->iov[0].iov_base = &t->hdr;
	t->iov[0].iov_len = sizeof(t->hdr);
	t->msg->msg_iovlen = 1;
	return t;
}

/* ---- fault injection: only on this path, so it may allocate ---------- */

static bool softsrd_chance(struct softsrd_wire *w, uint32_t percent)
{
	return percent && (uint32_t)(rand_r(&w->seed) % 100) < percent;
}

bool softsrd_wire_chance(struct softsrd_ctx *ctx, uint32_t percent)
{
	return softsrd_chance(&ctx->wire, percent);
}

static void softsrd_hold(struct softsrd_wire *w, const struct softsrd_txd *t,
			 uint64_t due, bool flip)
{
	struct softsrd_held *h, **pos;
	size_t len = 0;

	for (size_t i = 0; i < t->msg->msg_iovlen; i++)
		len += t->iov[i].iov_len;
	h = malloc(sizeof(*h) + len);
	if (!h)
		return;	/* a loss: reliability copes */
	h->due = due;
	h->sin = t->sin;
	h->len = len;
	len = 0;
	for (size_t i = 0; i < t->msg->msg_iovlen; i++) {
		memcpy(h->data + len, t->iov[i].iov_base, t->iov[i].iov_len);
		len += t->iov[i].iov_len;
	}
	if (flip && len) {
		size_t bit = (size_t)rand_r(&w->seed) % (len * 8);

		h->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	for (pos = &w->held; *pos && (*pos)->due <= due; pos = &(*pos)->next)
		;
	h->next = *pos;
	*pos = h;
}

void softsrd_wire_held_due(struct softsrd_ctx *ctx, uint64_t now)
{
	struct softsrd_wire *w = &ctx->wire;
	struct softsrd_held *h;

	while ((h = w->held) && h->due <= now) {
		w->held = h->next;
		(void)!sendto(w->fd, h->data, h->len, 0,
			      (struct sockaddr *)&h->sin, sizeof(h->sin));
		free(h);
	}
}

/* Returns true when the datagram should go out now. */
static bool softsrd_fault(struct softsrd_ctx *ctx, struct softsrd_txd *t,
			  uint64_t now)
{
	struct softsrd_wire *w = &ctx->wire;
	const struct softsrd_config *cfg = &ctx->cfg;
	uint64_t delay = (uint64_t)cfg->delay_us * 1000;

	if (softsrd_chance(w, cfg->loss))
		return false;
	if (softsrd_chance(w, cfg->corrupt)) {
		softsrd_hold(w, t, now + delay, true);
		return false;
	}
	if (softsrd_chance(w, cfg->dup))
		softsrd_hold(w, t, now + delay +
			     (uint64_t)(rand_r(&w->seed) % 100) * 1000, false);
	if (softsrd_chance(w, cfg->reorder)) {
		softsrd_hold(w, t, now + delay + 20000 +
			     (uint64_t)(rand_r(&w->seed) % 200) * 1000, false);
		return false;
	}
	if (delay) {
		softsrd_hold(w, t, now + delay, false);
		return false;
	}
	return true;
}

/* ---- batched send ------------------------------------------------------ */

#define SOFTSRD_URING_MIN_BATCH 3

static void softsrd_flush_uring(struct softsrd_wire *w, uint32_t n)
{
	struct io_uring_cqe *cqe;
	uint32_t done = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);

		io_uring_prep_sendmsg(sqe, w->fd, &w->tx_mmsg[i].msg_hdr, 0);
	}
	/* UDP on a non-blocking socket completes inline: waiting for all
	 * completions costs nothing more and frees the iovecs for reuse. */
	io_uring_submit_and_wait(&w->ring, n);
	while (done < n && !io_uring_peek_cqe(&w->ring, &cqe)) {
		io_uring_cqe_seen(&w->ring, cqe);
		done++;
	}
	while (done < n && !io_uring_wait_cqe(&w->ring, &cqe)) {
		io_uring_cqe_seen(&w->ring, cqe);
		done++;
	}
}

static void softsrd_flush_mmsg(struct softsrd_wire *w, uint32_t n)
{
	uint32_t off = 0;

	while (off < n) {
		int ret = sendmmsg(w->fd, &w->tx_mmsg[off], n - off, 0);

		if (ret <= 0) {
			if (ret < 0 && errno == EINTR)
				continue;
			off++;	/* drop it: a loss, retransmission copes */
			continue;
		}
		off += (uint32_t)ret;
	}
}

/* Fault injection decides per datagram; those that go now move down to
 * the front of tx_mmsg (their msghdrs still point at their own txd, so
 * every entry is set back afterwards). Returns how many go. */
static uint32_t softsrd_flush_faults(struct softsrd_ctx *ctx)
{
	struct softsrd_wire *w = &ctx->wire;
	uint64_t now = util_time_ns();
	uint32_t n = 0;

	for (uint32_t i = 0; i < w->ntx; i++) {
		if (!softsrd_fault(ctx, &w->tx[i], now))
			continue;
		if (n != i)
			w->tx_mmsg[n].msg_hdr = w->tx_mmsg[i].msg_hdr;
		n++;
	}
	return n;
}

/* Every staged datagram gets its CRC trailer, once its header is final. */
static void softsrd_flush_crc(struct softsrd_wire *w)
{
	for (uint32_t i = 0; i < w->ntx; i++) {
		struct softsrd_txd *t = &w->tx[i];
		size_t n = t->msg->msg_iovlen;

		t->hdr.flags |= SOFTSRD_FLAG_CRC;
		t->crc = htole32(softsrd_crc32c_iov(t->iov, n));
		t->iov[n].iov_base = &t->crc;
		t->iov[n].iov_len = sizeof(t->crc);
		t->msg->msg_iovlen = n + 1;
	}
}

void softsrd_wire_flush(struct softsrd_ctx *ctx)
{
	struct softsrd_wire *w = &ctx->wire;
	uint32_t n = w->ntx;

	if (ctx->cfg.crc)
		softsrd_flush_crc(w);

	if (WEFT_UNLIKELY(w->faults))
		n = softsrd_flush_faults(ctx);
	/* a lone datagram or two (a ping-pong's send, an ACK) go faster by
	 * sendmmsg: io_uring's request setup and completion cost more than
	 * they save there (measured 2-3 us per round trip on a 2-vCPU guest) */
	if (w->uring && n >= SOFTSRD_URING_MIN_BATCH)
		softsrd_flush_uring(w, n);
	else if (n)
		softsrd_flush_mmsg(w, n);
	if (WEFT_UNLIKELY(w->faults) && n != w->ntx)
		softsrd_tx_msg_init(w);
	w->ntx = 0;
}

/* ---- batched receive ---------------------------------------------------- */

int softsrd_wire_rx(struct softsrd_ctx *ctx)
{
	struct softsrd_wire *w = &ctx->wire;
	int total = 0;

	for (int round = 0; round < SOFTSRD_RX_ROUNDS; round++) {
		int n;

		/* the kernel rewrites msg_namelen only of the entries it
		 * fills: those are put back after use, not all before every
		 * (mostly empty) poll */
		n = recvmmsg(w->fd, w->rx_mmsg, SOFTSRD_RX_BATCH, MSG_DONTWAIT,
			     NULL);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			struct mmsghdr *m = &w->rx_mmsg[i];
			struct softsrd_wire_pkt p;
			bool bad = m->msg_hdr.msg_namelen != sizeof(w->rx_sin[i]);

			/* untrusted: truncated datagrams and odd senders stop
			 * here, the rest in softsrd_wire_parse */
			m->msg_hdr.msg_namelen = sizeof(w->rx_sin[i]);
			if (bad || (m->msg_hdr.msg_flags & MSG_TRUNC) ||
			    softsrd_wire_parse(w->rx_iov[i].iov_base,
					       m->msg_len, ctx->cfg.crc, &p))
				continue;
			softsrd_proto_rx(ctx, &p, &w->rx_sin[i]);
		}
		total += n;
		if (n < SOFTSRD_RX_BATCH)
			break;
	}
	return total;
}
