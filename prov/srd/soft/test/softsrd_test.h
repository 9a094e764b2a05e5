/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the softsrd tests: two-sided setups built only with the
 * control table and rdma-core's header inlines (no libibverbs).
 */
#ifndef SOFTSRD_TEST_H
#define SOFTSRD_TEST_H

#include "weft/compat.h"
#include "prov/srd/soft/softsrd.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

extern const struct srd_verbs_ops *V;

struct tnode {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	union ibv_gid gid;
	uint32_t qpn;
	uint32_t qkey;
	uint8_t *buf;
	size_t len;
	struct ibv_mr *mr;
	struct ibv_ah *ah;	/* to the peer given to tnode_connect */
	uint32_t peer_qpn;
	uint32_t peer_qkey;
};

struct tcomp {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t imm;
	uint32_t src_qp;
	uint32_t qp_num;
	unsigned int wc_flags;
	uint32_t vendor_err;
	uint32_t slid;
};

/* Settings for the next tnode_open (FI_SRD_SOFT_<name>); NULL unsets. */
void tset(const char *name, const char *value);
void treset(void);

void tnode_open(struct tnode *n, size_t buf_len, int access, int cqe,
		uint8_t rnr_retry);
void tnode_close(struct tnode *n);
void tnode_connect(struct tnode *a, const union ibv_gid *gid, uint32_t qpn,
		   uint32_t qkey);
int tpost_send(struct tnode *a, uint64_t wr_id, void *addr, uint32_t len,
	       uint32_t lkey, bool imm, uint32_t imm_data);
int tpost_rdma(struct tnode *a, bool write, uint64_t wr_id, void *addr,
	       uint32_t len, uint32_t lkey, uint32_t rkey, uint64_t raddr);
int tpost_write_imm(struct tnode *a, uint64_t wr_id, void *addr, uint32_t len,
		    uint32_t lkey, uint32_t rkey, uint64_t raddr, uint32_t imm);
int tpost_recv(struct tnode *n, uint64_t wr_id, void *addr, uint32_t len,
	       uint32_t lkey);
/* One completion within the hang guard (cmocka failure otherwise). */
void tpoll(struct tnode *n, struct tcomp *c);
/* A completion if one is there within spin_ms; false otherwise. */
bool tpoll_for(struct tnode *n, struct tcomp *c, unsigned int spin_ms);
void tfill(uint8_t *p, size_t len, uint32_t seed);
bool tcheck(const uint8_t *p, size_t len, uint32_t seed);

#define T_ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		      IBV_ACCESS_REMOTE_READ)

/* The wire header, written out again from softsrd_priv.h's, so tests that
 * forge packets also catch an unintended change of the wire format. */
struct fhdr {
	uint8_t version, type, flags, status;
	uint32_t src_qpn, dst_qpn, qkey, incarnation, seg_len;
	uint64_t psn, floor, raddr;
	uint32_t rkey, msg_len, seg_off, imm;
	uint64_t ack_psn;
	uint32_t ack_cnt, ack_incarnation;
} __attribute__((packed));

#endif /* SOFTSRD_TEST_H */
