/* SPDX-License-Identifier: MIT */
/*
 * softsrd micro-benchmark (not a test): ping-pong latency of sends and
 * streaming bandwidth of RDMA writes and sends between two processes over
 * 127.0.0.1, both busy-polling, through the verbs objects only.
 *
 *   bench_softsrd [iterations [size]]  (taskset/pinning is up to the caller)
 *
 * With a size, only that test runs: the send ping-pong up to 8192 bytes,
 * streaming RDMA writes above (the form for callgrind and for scripts).
 */
#include "weft/compat.h"
#include "prov/srd/soft/softsrd.h"

#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const struct srd_verbs_ops *V = &softsrd_verbs_ops;

struct bnode {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf;
	uint32_t peer_qpn, peer_qkey;
};

struct binfo {
	union ibv_gid gid;
	uint32_t qpn, qkey, rkey;
	uint64_t addr;
};

#define BUF_LEN (64u << 20)
#define QKEY 0x5eed

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void bnode_open(struct bnode *n, struct binfo *me)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 8192 };
	struct ibv_qp_init_attr_ex qa = {
		.cap = { .max_send_wr = 1024, .max_recv_wr = 4096,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct efadv_qp_init_attr efa = { .driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qkey = QKEY };
	struct ibv_device **list;
	int num;

	setenv("FI_SRD_SOFT_ADDR", "127.0.0.1", 0);
	list = V->get_device_list(&num);
	if (!list || num < 1)
		die("get_device_list");
	n->ctx = V->open_device(list[0]);
	V->free_device_list(list);
	if (!n->ctx)
		die("open_device");
	n->pd = V->alloc_pd(n->ctx);
	n->cq = ibv_create_cq_ex(n->ctx, &ca);
	qa.pd = n->pd;
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(n->cq);
	n->qp = V->efadv_create_qp_ex(n->ctx, &qa, &efa, sizeof(efa));
	if (!n->pd || !n->cq || !n->qp)
		die("objects");
	n->qpx = V->qp_to_qp_ex(n->qp);
	V->modify_qp(n->qp, &attr, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY);
	attr.qp_state = IBV_QPS_RTR;
	V->modify_qp(n->qp, &attr, IBV_QP_STATE);
	attr.qp_state = IBV_QPS_RTS;
	attr.rnr_retry = 7;
	V->modify_qp(n->qp, &attr, IBV_QP_STATE | IBV_QP_RNR_RETRY);
	n->buf = aligned_alloc(4096, BUF_LEN);
	if (!n->buf)
		die("alloc");
	memset(n->buf, 1, BUF_LEN);
	n->mr = V->reg_mr(n->pd, n->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!n->mr)
		die("reg_mr");
	V->query_gid(n->ctx, 1, 0, &me->gid);
	me->qpn = n->qp->qp_num;
	me->qkey = QKEY;
	me->rkey = n->mr->rkey;
	me->addr = (uintptr_t)n->buf;
}

static void bnode_connect(struct bnode *n, const struct binfo *peer)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = peer->gid } };

	n->ah = V->create_ah(n->pd, &aa);
	if (!n->ah)
		die("create_ah");
	n->peer_qpn = peer->qpn;
	n->peer_qkey = peer->qkey;
}

static void post_recv(struct bnode *n, uint64_t id, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)n->buf + (id % 1024) * 65536,
			       .length = len, .lkey = n->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(n->qp, &wr, &bad))
		die("post_recv");
}

static int post(struct bnode *n, bool write, uint32_t len, uint64_t raddr,
		uint32_t rkey, bool signaled)
{
	ibv_wr_start(n->qpx);
	n->qpx->wr_id = 1;
	n->qpx->wr_flags = signaled ? IBV_SEND_SIGNALED : 0;
	if (write)
		ibv_wr_rdma_write(n->qpx, rkey, raddr);
	else
		ibv_wr_send(n->qpx);
	ibv_wr_set_ud_addr(n->qpx, n->ah, n->peer_qpn, n->peer_qkey);
	ibv_wr_set_sge(n->qpx, n->mr->lkey, (uintptr_t)n->buf, len);
	return ibv_wr_complete(n->qpx);
}

/* Completions until one of the wanted opcode shows; counts the rest. */
static void wait_for(struct bnode *n, enum ibv_wc_opcode op, int *sends)
{
	struct ibv_poll_cq_attr attr = { 0 };

	for (;;) {
		bool hit = false;

		if (ibv_start_poll(n->cq, &attr))
			continue;
		do {
			if (n->cq->status != IBV_WC_SUCCESS) {
				fprintf(stderr, "completion error %d\n", n->cq->status);
				exit(1);
			}
			if (ibv_wc_read_opcode(n->cq) == op)
				hit = true;
			else if (sends)
				(*sends)++;
		} while (!hit && !ibv_next_poll(n->cq));
		ibv_end_poll(n->cq);
		if (hit)
			return;
	}
}

static void pingpong(struct bnode *n, bool client, uint32_t len, int iters)
{
	double t0 = 0;

	for (int i = 0; i < iters + 100; i++) {
		if (i == 100)
			t0 = now_us();
		if (client) {
			while (post(n, false, len, 0, 0, false))
				;
			wait_for(n, IBV_WC_RECV, NULL);
		} else {
			wait_for(n, IBV_WC_RECV, NULL);
			while (post(n, false, len, 0, 0, false))
				;
		}
		post_recv(n, (uint64_t)i + 4096, 65536);
	}
	if (client)
		printf("%-10s %10u %12.2f\n", "send-lat", len,
		       (now_us() - t0) / iters / 2);
}

static void write_bw(struct bnode *n, const struct binfo *peer, uint32_t len,
		     int iters)
{
	int done = 0, posted = 0, window = 8;
	double t0 = now_us(), t;

	while (done < iters) {
		while (posted < iters && posted - done < window &&
		       !post(n, true, len, peer->addr, peer->rkey, true))
			posted++;
		wait_for(n, IBV_WC_RDMA_WRITE, NULL);
		done++;
	}
	t = now_us() - t0;
	printf("%-10s %10u %12.2f MB/s\n", "write-bw", len,
	       (double)len * iters / t);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 10000;
	uint32_t only = argc > 2 ? (uint32_t)atoi(argv[2]) : 0;

	if (only > BUF_LEN) {
		fprintf(stderr, "size at most %u\n", BUF_LEN);
		return 2;
	}
	static const uint32_t sizes[] = { 8, 64, 1024, 8192 };
	int p2c[2], c2p[2];
	struct binfo me, peer;
	struct bnode n;
	pid_t pid;
	char go;

	if (pipe(p2c) || pipe(c2p))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	/* each keeps only its own pipe ends, so a side that dies is an EOF */
	close(pid ? p2c[0] : p2c[1]);
	close(pid ? c2p[1] : c2p[0]);
	/* one process per vCPU, as fi_pingpong runs are pinned */
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(pid ? 0 : 1, &set);
		if (getenv("BENCH_PIN"))
			sched_setaffinity(0, sizeof(set), &set);
	}
	bnode_open(&n, &me);
	if (!pid) {
		if (write(c2p[1], &me, sizeof(me)) != sizeof(me) ||
		    read(p2c[0], &peer, sizeof(peer)) != sizeof(peer))
			die("pipe");
	} else {
		if (read(c2p[0], &peer, sizeof(peer)) != sizeof(peer) ||
		    write(p2c[1], &me, sizeof(me)) != sizeof(me))
			die("pipe");
	}
	bnode_connect(&n, &peer);
	for (int i = 0; i < 4096; i++)
		post_recv(&n, (uint64_t)i, 65536);
	if (write(pid ? p2c[1] : c2p[1], "r", 1) != 1 ||
	    read(pid ? c2p[0] : p2c[0], &go, 1) != 1)
		die("pipe");
	if (pid)
		printf("%-10s %10s %12s\n", "test", "bytes", "usec / MB/s");
	for (size_t i = 0; i < WEFT_ARRAY_SIZE(sizes) && !only; i++)
		pingpong(&n, pid != 0, sizes[i], iters);
	if (only && only <= 8192)
		pingpong(&n, pid != 0, only, iters);
	if (pid && only) {
		if (only > 8192)
			write_bw(&n, &peer, only, iters);
		if (write(p2c[1], "d", 1) != 1)
			die("pipe");
		waitpid(pid, NULL, 0);
	} else if (pid) {
		write_bw(&n, &peer, 65536, iters / 4);
		write_bw(&n, &peer, 1 << 20, iters / 40 + 10);
		if (write(p2c[1], "d", 1) != 1)
			die("pipe");
		waitpid(pid, NULL, 0);
	} else {
		/* the target keeps polling: it is "present", its own calls
		 * serve the writes */
		struct ibv_poll_cq_attr attr = { 0 };

		ssize_t r;

		fcntl(p2c[0], F_SETFL, O_NONBLOCK);
		/* until told, or until the parent is gone (EOF) */
		while ((r = read(p2c[0], &go, 1)) != 1 && r != 0) {
			if (!ibv_start_poll(n.cq, &attr))
				ibv_end_poll(n.cq);
		}
	}
	return 0;
}
