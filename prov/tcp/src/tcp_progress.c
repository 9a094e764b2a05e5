/* SPDX-License-Identifier: MIT */
/*
 * Manual progress of one endpoint, run from fi_cq_read / fi_cntr_read
 * through util's progress lists: write the batch of frames deferred
 * since the last call, let the engine move bytes (one system call or
 * none when nothing happened), retry frames that waited for memory, and
 * every few milliseconds look at deadlines (handshakes, peers waiting
 * for a connection) and free closed connections. No thread of its own:
 * dead peers are found by the kernel (keepalive, TCP_USER_TIMEOUT, EOF)
 * and by the deadlines checked here.
 */
#include "weft/compat.h"

#include "tcp.h"
#include "tcp_io.h"

/* Progress calls between two looks at the clock, and the time between
 * two looks at the deadlines. */
#define TCP_CLOCK_EVERY 32u
#define TCP_CHECK_NS (5 * 1000 * 1000ull)

static void tcp_ep_check(struct tcp_ep *ep)
{
	uint64_t now = util_time_coarse_ns();

	if (now < ep->next_check_ns)
		return;
	ep->next_check_ns = now + TCP_CHECK_NS;
	tcp_conn_check_timeouts(ep, now);
	tcp_peer_check_timeouts(ep, now);
}

void tcp_ep_progress_locked(struct tcp_ep *ep)
{
	if (ep->flush)
		tcp_tx_flush(ep);
	ep->hot = false;
	ep->io->poll(ep);
	if (WEFT_UNLIKELY(ep->stalled))
		tcp_rx_retry_stalled(ep);
	if (WEFT_UNLIKELY(!(++ep->progress_calls % TCP_CLOCK_EVERY)))
		tcp_ep_check(ep);
	if (WEFT_UNLIKELY(ep->closed_pending))
		tcp_conn_free_closed(ep);
	if (WEFT_UNLIKELY(util_coll_busy(&ep->util)))
		util_coll_progress(&ep->util);
}

void tcp_ep_progress(struct util_ep *util)
{
	struct tcp_ep *ep = to_tcp_ep_util(util);

	util_lock_acquire(&ep->util.lock);
	tcp_ep_progress_locked(ep);
	util_lock_release(&ep->util.lock);
}
