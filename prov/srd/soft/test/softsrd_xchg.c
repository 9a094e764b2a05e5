/* SPDX-License-Identifier: MIT */
/*
 * softsrd_xchg: one side of a two-process softsrd exchange, for runs where
 * the two sides live in different network namespaces (test_softsrd_veth.sh).
 * The sides meet through files in a shared directory: each writes its
 * address (GID, QPN, QKEY, rkey, buffer) to <dir>/<role>.info and reads the
 * other's. Then:
 *   a -> b  <count> sends of sizes up to <size>, each checked by b and
 *           delivered exactly once;
 *   a -> b  one RDMA write with immediate of 1 MiB (b checks the data, the
 *           immediate, byte_len and that it used one receive);
 *   a <- b  one RDMA read of 1 MiB that b filled (a checks it).
 * It prints "devices <n> device <name> gid <ipv4>" first (the first device
 * is the one it uses), so the caller can check which address softsrd
 * picked, and exits 0 only when every check held.
 *
 *   softsrd_xchg <dir> a|b <count> <size>
 *   softsrd_xchg list       (the devices softsrd offers here, one a line)
 */
#include "weft/compat.h"
#include "prov/srd/soft/softsrd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct srd_verbs_ops *V = &softsrd_verbs_ops;

#define BIG (1u << 20)
#define QKEY 0x7e57
#define GUARD_S 15
#define IMM 0xc0ffee01u

struct xinfo {
	union ibv_gid gid;
	uint32_t qpn, rkey;
	uint64_t addr;
};

struct xnode {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf;		/* write area, read area (BIG each), slots */
	size_t len;
	struct xinfo me, peer;
	char role;
};

static time_t deadline;

static void fail(const char *what)
{
	fprintf(stderr, "softsrd_xchg: %s%s%s\n", what, errno ? ": " : "",
		errno ? strerror(errno) : "");
	exit(1);
}

static void guard(void)
{
	if (time(NULL) > deadline) {
		errno = 0;
		fail("timed out");
	}
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 7;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

static bool same(const uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 7;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		if (p[i] != (uint8_t)(x >> 16))
			return false;
	}
	return true;
}

static void xnode_device(struct xnode *n)
{
	struct ibv_device **list;
	char ip[INET_ADDRSTRLEN];
	int num = 0;

	list = V->get_device_list(&num);
	if (!list || num < 1)
		fail("no softsrd device");
	n->ctx = V->open_device(list[0]);
	if (!n->ctx)
		fail("open_device");
	if (V->query_gid(n->ctx, 1, 0, &n->me.gid))
		fail("query_gid");
	printf("devices %d device %s gid %s\n", num, V->get_device_name(list[0]),
	       inet_ntop(AF_INET, &n->me.gid.raw[12], ip, sizeof(ip)));
	fflush(stdout);
	V->free_device_list(list);
}

static void xnode_qp(struct xnode *n)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 4096,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_SRC_QP };
	struct ibv_qp_init_attr_ex qa = {
		.cap = { .max_send_wr = 256, .max_recv_wr = 2048,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
	};
	struct efadv_qp_init_attr efa = { .driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qkey = QKEY };

	n->pd = V->alloc_pd(n->ctx);
	n->cq = ibv_create_cq_ex(n->ctx, &ca);
	if (!n->pd || !n->cq)
		fail("pd/cq");
	qa.pd = n->pd;
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(n->cq);
	n->qp = V->efadv_create_qp_ex(n->ctx, &qa, &efa, sizeof(efa));
	if (!n->qp)
		fail("create_qp");
	n->qpx = V->qp_to_qp_ex(n->qp);
	attr.rnr_retry = 7;	/* sends wait for the receives b posts */
	if (V->modify_qp(n->qp, &attr, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY))
		fail("modify_qp INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (V->modify_qp(n->qp, &attr, IBV_QP_STATE))
		fail("modify_qp RTR");
	attr.qp_state = IBV_QPS_RTS;
	if (V->modify_qp(n->qp, &attr, IBV_QP_STATE | IBV_QP_RNR_RETRY))
		fail("modify_qp RTS");
}

static void xnode_mem(struct xnode *n, uint32_t count, uint32_t size)
{
	n->len = 2 * (size_t)BIG + (size_t)count * size;
	n->buf = aligned_alloc(4096, (n->len + 4095) & ~(size_t)4095);
	if (!n->buf)
		fail("alloc");
	memset(n->buf, 0, n->len);
	if (n->role == 'b')
		fill(n->buf + BIG, BIG, 0xb0b);	/* what a reads */
	n->mr = V->reg_mr(n->pd, n->buf, n->len, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!n->mr)
		fail("reg_mr");
	n->me.qpn = n->qp->qp_num;
	n->me.rkey = n->mr->rkey;
	n->me.addr = (uintptr_t)n->buf;
}

static void info_write(const char *dir, const char *name, const struct xinfo *x)
{
	char tmp[4096], path[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(tmp, "w");
	if (!f)
		fail(tmp);
	for (int i = 0; i < 16; i++)
		fprintf(f, "%02x", x->gid.raw[i]);
	fprintf(f, " %u %u %llu\n", x->qpn, x->rkey, (unsigned long long)x->addr);
	if (fclose(f) || rename(tmp, path))
		fail(path);
}

static void info_read(const char *dir, const char *name, struct xinfo *x)
{
	char path[4096], gid[33];
	unsigned long long addr;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (!(f = fopen(path, "r"))) {
		guard();
		usleep(1000);
	}
	if (fscanf(f, "%32s %u %u %llu", gid, &x->qpn, &x->rkey, &addr) != 4 ||
	    strlen(gid) != 32)
		fail("bad peer info");
	fclose(f);
	for (int i = 0; i < 16; i++)
		if (sscanf(gid + 2 * i, "%2hhx", &x->gid.raw[i]) != 1)
			fail("bad peer gid");
	x->addr = addr;
}

static void xnode_connect(struct xnode *n)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = n->peer.gid } };

	n->ah = V->create_ah(n->pd, &aa);
	if (!n->ah)
		fail("create_ah");
}

/* One completion, successful, with the wanted opcode. */
static void xpoll(struct xnode *n, enum ibv_wc_opcode op, uint64_t *wr_id,
		  uint32_t *byte_len, uint32_t *imm)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int ret;

	while ((ret = ibv_start_poll(n->cq, &attr)) == ENOENT)
		guard();
	if (ret)
		fail("start_poll");
	if (n->cq->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "softsrd_xchg %c: completion status %d vendor %u\n",
			n->role, n->cq->status, ibv_wc_read_vendor_err(n->cq));
		exit(1);
	}
	if (ibv_wc_read_opcode(n->cq) != op) {
		fprintf(stderr, "softsrd_xchg %c: opcode %d, wanted %d\n", n->role,
			ibv_wc_read_opcode(n->cq), op);
		exit(1);
	}
	*wr_id = n->cq->wr_id;
	*byte_len = ibv_wc_read_byte_len(n->cq);
	*imm = (ibv_wc_read_wc_flags(n->cq) & IBV_WC_WITH_IMM) ?
	       be32toh(ibv_wc_read_imm_data(n->cq)) : 0;
	ibv_end_poll(n->cq);
}

static void xpost(struct xnode *n, enum ibv_wr_opcode op, uint64_t wr_id,
		  uint8_t *addr, uint32_t len)
{
	ibv_wr_start(n->qpx);
	n->qpx->wr_id = wr_id;
	n->qpx->wr_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_SEND)
		ibv_wr_send(n->qpx);
	else if (op == IBV_WR_RDMA_READ)
		ibv_wr_rdma_read(n->qpx, n->peer.rkey, n->peer.addr + BIG);
	else
		ibv_wr_rdma_write_imm(n->qpx, n->peer.rkey, n->peer.addr,
				      htobe32(IMM));
	ibv_wr_set_ud_addr(n->qpx, n->ah, n->peer.qpn, QKEY);
	ibv_wr_set_sge(n->qpx, n->mr->lkey, (uintptr_t)addr, len);
	if (ibv_wr_complete(n->qpx))
		fail("wr_complete");
}

static uint32_t msg_len(uint32_t i, uint32_t size)
{
	return 1 + (i * 977u) % size;
}

static void role_a(struct xnode *n, uint32_t count, uint32_t size)
{
	uint8_t *slots = n->buf + 2 * BIG;
	uint32_t blen, imm;
	uint64_t id;

	for (uint32_t i = 0; i < count; i++) {
		uint8_t *p = slots + (size_t)i * size;

		fill(p, msg_len(i, size), i);
		xpost(n, IBV_WR_SEND, i, p, msg_len(i, size));
		xpoll(n, IBV_WC_SEND, &id, &blen, &imm);
	}
	fill(n->buf, BIG, 0xa0a);
	xpost(n, IBV_WR_RDMA_WRITE_WITH_IMM, 1, n->buf, BIG);
	xpoll(n, IBV_WC_RDMA_WRITE, &id, &blen, &imm);
	xpost(n, IBV_WR_RDMA_READ, 2, n->buf + BIG, BIG);
	xpoll(n, IBV_WC_RDMA_READ, &id, &blen, &imm);
	errno = 0;
	if (!same(n->buf + BIG, BIG, 0xb0b))
		fail("RDMA read data differs");
}

static void role_b(struct xnode *n, const char *dir, uint32_t count,
		   uint32_t size)
{
	uint8_t *slots = n->buf + 2 * BIG, *seen = calloc(count, 1);
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	uint32_t blen, imm;
	char path[4096];
	uint64_t id;

	if (!seen)
		fail("alloc");
	for (uint32_t i = 0; i <= count; i++) {
		sge = (struct ibv_sge){ .addr = (uintptr_t)slots + (size_t)i * size,
					.length = i < count ? size : 0,
					.lkey = n->mr->lkey };
		wr = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &sge, .num_sge = 1 };
		if (ibv_post_recv(n->qp, &wr, &bad))
			fail("post_recv");
	}
	errno = 0;
	for (uint32_t r = 0; r < count; r++) {
		uint32_t k;

		xpoll(n, IBV_WC_RECV, &id, &blen, &imm);
		/* a sends one at a time: message r lands in receive r */
		k = (uint32_t)id;
		if (k != r || blen != msg_len(k, size) || seen[k] ||
		    !same(slots + (size_t)k * size, blen, k))
			fail("send data, length or count differs");
		seen[k] = 1;
	}
	xpoll(n, IBV_WC_RECV_RDMA_WITH_IMM, &id, &blen, &imm);
	if (id != count || blen != BIG || imm != IMM || !same(n->buf, BIG, 0xa0a))
		fail("write with immediate differs");
	/* serve a's RDMA read: stay until a says it is done */
	snprintf(path, sizeof(path), "%s/a.done", dir);
	while (access(path, F_OK)) {
		guard();
		usleep(1000);
	}
	free(seen);
}

static void xnode_close(struct xnode *n)
{
	V->destroy_ah(n->ah);
	V->destroy_qp(n->qp);
	V->dereg_mr(n->mr);
	V->destroy_cq(ibv_cq_ex_to_cq(n->cq));
	V->dealloc_pd(n->pd);
	V->close_device(n->ctx);
	free(n->buf);
}

static int xlist(void)
{
	struct ibv_device **list;
	int num = 0;

	list = V->get_device_list(&num);
	if (!list)
		return 1;
	for (int i = 0; i < num; i++) {
		struct ibv_context *ctx = V->open_device(list[i]);
		char ip[INET_ADDRSTRLEN];
		union ibv_gid gid;

		if (!ctx || V->query_gid(ctx, 1, 0, &gid))
			return 1;
		printf("%s %s\n", V->get_device_name(list[i]),
		       inet_ntop(AF_INET, &gid.raw[12], ip, sizeof(ip)));
		V->close_device(ctx);
	}
	V->free_device_list(list);
	return 0;
}

int main(int argc, char **argv)
{
	struct xnode n = { 0 };
	uint32_t count, size;
	char path[4096];
	FILE *f;

	if (argc == 2 && !strcmp(argv[1], "list"))
		return xlist();
	if (argc != 5 || (argv[2][0] != 'a' && argv[2][0] != 'b') ||
	    (count = (uint32_t)atoi(argv[3])) < 1 || count > 1000 ||
	    (size = (uint32_t)atoi(argv[4])) < 1 || size > 8192) {
		fprintf(stderr, "usage: softsrd_xchg <dir> a|b <count 1..1000> "
			"<size 1..8192>\n");
		return 2;
	}
	deadline = time(NULL) + GUARD_S;
	n.role = argv[2][0];
	xnode_device(&n);
	xnode_qp(&n);
	xnode_mem(&n, count, size);
	info_write(argv[1], n.role == 'a' ? "a.info" : "b.info", &n.me);
	info_read(argv[1], n.role == 'a' ? "b.info" : "a.info", &n.peer);
	xnode_connect(&n);
	if (n.role == 'a') {
		role_a(&n, count, size);
		snprintf(path, sizeof(path), "%s/a.done", argv[1]);
		f = fopen(path, "w");
		if (!f || fclose(f))
			fail(path);
	} else {
		role_b(&n, argv[1], count, size);
	}
	printf("%c: %u sends, 1 write with immediate, 1 read: data ok\n",
	       n.role, count);
	xnode_close(&n);
	return 0;
}
