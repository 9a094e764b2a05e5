/* SPDX-License-Identifier: MIT */
/*
 * tcp endpoint: util's endpoint base, listening sockets created at open
 * (so that fi_getname works before fi_enable), and the I/O engine chosen
 * at open: io_uring unless FI_TCP_IO_URING=0 or the kernel refuses it
 * (seccomp, io_uring_disabled), epoll otherwise. The choice is logged.
 */
#include "weft/compat.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tcp.h"
#include "tcp_io.h"

static int tcp_ep_close(struct fid *fid)
{
	struct tcp_ep *ep = container_of(fid, struct tcp_ep, util.ep_fid.fid);

	if (ep->io) {
		/* What the application posted last (a final inject) gets
		 * one try while the CQs are still bound. */
		util_lock_acquire(&ep->util.lock);
		tcp_conn_flush_all(ep);
		util_lock_release(&ep->util.lock);
	}
	/* From here on frames of the collective class are dropped unseen
	 * (tcp_coll_send_done): their contexts go with the engine. */
	util_coll_ep_fini(&ep->util);
	util_ep_fini(&ep->util);
	if (ep->io) {
		tcp_conn_close_all(ep);
		ep->io->close(ep);
	}
	tcp_conn_free_all(ep);
	tcp_peer_free_all(ep);
	tcp_recv_fini(ep);
	tcp_op_fini(ep);
	tcp_tx_fini(ep);
	free(ep->tx_map);
	free(ep->sink_buf);
	free(ep);
	return 0;
}

static int tcp_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct tcp_ep *ep = container_of(fid, struct tcp_ep, util.ep_fid.fid);
	size_t len = *addrlen, need = tcp_addr_len(&ep->name);

	*addrlen = need;
	if (!addr || len < need)
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->name, need);
	return 0;
}

static const struct fi_ops tcp_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = tcp_ep_close,
	.bind = util_ep_bind,
	.control = util_ep_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static ssize_t tcp_ep_tx_size_left(struct fid_ep *ep_fid)
{
	struct tcp_ep *ep = to_tcp_ep(ep_fid);
	ssize_t n;

	util_lock_acquire(&ep->util.lock);
	n = (ssize_t)(ep->tx_pool.max_objs - ep->tx_pool.in_use);
	util_lock_release(&ep->util.lock);
	return n;
}

static ssize_t tcp_ep_rx_size_left(struct fid_ep *ep_fid)
{
	struct tcp_ep *ep = to_tcp_ep(ep_fid);
	ssize_t n;

	util_lock_acquire(&ep->util.lock);
	n = (ssize_t)(ep->srx.rx_pool.max_objs - ep->srx.rx_pool.in_use);
	util_lock_release(&ep->util.lock);
	return n;
}

static const struct fi_ops_ep tcp_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = tcp_ep_cancel,
	.getopt = util_ep_getopt,
	.setopt = util_ep_setopt,
	.tx_ctx = util_no_tx_ctx,
	.rx_ctx = util_no_rx_ctx,
	.rx_size_left = tcp_ep_rx_size_left,
	.tx_size_left = tcp_ep_tx_size_left,
};

static const struct fi_ops_cm tcp_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = util_no_setname,
	.getname = tcp_ep_getname,
	.getpeer = util_no_getpeer,
	.connect = util_no_connect,
	.listen = util_no_listen,
	.accept = util_no_accept,
	.reject = util_no_reject,
	.shutdown = util_no_shutdown,
	.join = util_coll_join,
};

static void tcp_ep_set_ops(struct tcp_ep *ep)
{
	ep->util.ep_fid.fid.ops = UTIL_OPS(&tcp_ep_fi_ops);
	ep->util.ep_fid.ops = UTIL_OPS(&tcp_ep_ops);
	ep->util.ep_fid.cm = UTIL_OPS(&tcp_ep_cm_ops);
	ep->util.ep_fid.msg = UTIL_OPS(&tcp_msg_ops);
	ep->util.ep_fid.tagged = UTIL_OPS(&tcp_tagged_ops);
	ep->util.ep_fid.rma = UTIL_OPS(&tcp_rma_ops);
	ep->util.ep_fid.atomic = UTIL_OPS(&tcp_atomic_ops);
}

/* A fresh incarnation number: a peer that restarts on the same address
 * is told apart from its predecessor by it. */
static uint64_t tcp_ep_nonce(void)
{
	uint64_t n = 0;
	struct timespec ts;

	if (getrandom(&n, sizeof(n), GRND_NONBLOCK) == sizeof(n) && n)
		return n;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^
	       ((uint64_t)getpid() << 40) ^ 1;
}

/* io_uring where asked and available, epoll otherwise. */
static int tcp_ep_io_open(struct tcp_ep *ep)
{
	int ret;

	if (tcp_env.io_uring) {
		ep->io = &tcp_io_uring;
		ret = ep->io->open(ep);
		if (!ret)
			goto done;
		FI_INFO(&tcp_prov, FI_LOG_EP_CTRL,
			"io_uring refused (%s): using epoll\n",
			fi_strerror(-ret));
	}
	ep->io = &tcp_io_epoll;
	ret = ep->io->open(ep);
	if (ret)
		return ret;
done:
	FI_INFO(&tcp_prov, FI_LOG_EP_CTRL, "endpoint I/O engine: %s\n",
		ep->io->name);
	return 0;
}

static void tcp_ep_limits(struct tcp_ep *ep)
{
	ep->eager_max = tcp_env.eager_size;
	/* A peer's setting may be larger than ours: whatever it sends
	 * eagerly (up to the highest setting) is accepted. */
	ep->lim.eager_max = 1 << 20;
	ep->lim.max_msg = TCP_MAX_MSG_SIZE;
	ep->lim.atomic_max = TCP_ATOMIC_MAX;
	ep->lim.data_max = TCP_MAX_MSG_SIZE;
	ep->timeout_ns = (uint64_t)tcp_env.conn_timeout_ms * 1000000ull;
	ep->conns_per_peer = tcp_env.conns_per_peer;
	ep->stripe_min = tcp_env.stripe_min;
	ep->unexp_mem = tcp_env.unexp_mem;
	ep->nonce = tcp_ep_nonce();
}

static int tcp_ep_setup(struct tcp_ep *ep, struct tcp_domain *domain,
			const struct fi_info *info)
{
	int ret;

	ep->family = domain->family;
	tcp_ep_limits(ep);
	ep->sink_len = 64 * 1024;
	ep->sink_buf = malloc(ep->sink_len);
	if (!ep->sink_buf)
		return -FI_ENOMEM;
	ret = tcp_tx_init(ep, info->tx_attr->size ? info->tx_attr->size :
						     tcp_env.tx_size);
	if (ret)
		return ret;
	ret = tcp_op_init(ep, ep->tx_pool.max_objs,
			  info->rx_attr->size ? info->rx_attr->size :
						tcp_env.rx_size);
	if (ret)
		return ret;
	ret = tcp_recv_init(ep);
	if (ret)
		return ret;
	ret = tcp_ep_io_open(ep);
	if (ret)
		return ret;
	return tcp_listen(ep, domain, info);
}

int tcp_ep_open(struct fid_domain *domain_fid, struct fi_info *info,
		struct fid_ep **ep_fid, void *context)
{
	struct tcp_domain *domain = to_tcp_domain(to_util_domain(domain_fid));
	struct tcp_ep *ep;
	int ret;

	if (!info || !info->ep_attr || !info->tx_attr || !info->rx_attr) {
		FI_WARN(&tcp_prov, FI_LOG_EP_CTRL, "fi_endpoint without info\n");
		return -FI_EINVAL;
	}
	if (info->ep_attr->type != FI_EP_RDM &&
	    info->ep_attr->type != FI_EP_UNSPEC) {
		FI_WARN(&tcp_prov, FI_LOG_EP_CTRL,
			"tcp endpoints are FI_EP_RDM only\n");
		return -FI_EINVAL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ret = util_ep_init(&ep->util, &domain->util, info, tcp_ep_progress,
			   context);
	if (ret) {
		free(ep);
		return ret;
	}
	tcp_ep_set_ops(ep);
	ret = tcp_ep_setup(ep, domain, info);
	if (ret) {
		tcp_ep_close(&ep->util.ep_fid.fid);
		return ret;
	}
	if (info->caps & FI_COLLECTIVE)
		util_coll_ep_init(&ep->util, &tcp_coll_xport);
	*ep_fid = &ep->util.ep_fid;
	return 0;
}
