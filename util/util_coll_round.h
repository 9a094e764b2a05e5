/* SPDX-License-Identifier: MIT */
/*
 * Building the rounds of the collective algorithms (util_coll_priv.h has
 * the contract): references into the operation's buffers, blocks and
 * pieces of a vector, and the round generator of each algorithm, by
 * family (util_coll_alg_rd.c, _ring.c, _tree.c). Comm ranks here; vranks
 * (v) are ranks relative to a root.
 */
#ifndef UTIL_COLL_ROUND_H
#define UTIL_COLL_ROUND_H

#include "util_coll_priv.h"

static inline uint32_t uc_mod(int64_t a, uint32_t n)
{
	int64_t m = a % (int64_t)n;

	return (uint32_t)(m < 0 ? m + n : m);
}

static inline uint32_t uc_floor_log2(uint32_t x)
{
	return 31u - (uint32_t)__builtin_clz(x);
}

static inline uint32_t uc_ceil_log2(uint32_t x)
{
	return x <= 1 ? 0 : uc_floor_log2(x - 1) + 1;
}

static inline uint32_t uc_min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static inline struct util_coll_ref uc_ref(uint8_t buf, size_t off, size_t len)
{
	return (struct util_coll_ref){ .buf = buf, .off = off, .len = len };
}

static inline struct util_coll_ref
uc_in(const struct util_coll_phase *ph, size_t off, size_t len)
{
	return uc_ref(ph->in, ph->in_off + off, len);
}

static inline struct util_coll_ref uc_out(const struct util_coll_phase *ph,
					  size_t off, size_t len)
{
	return uc_ref(ph->out, ph->out_off + off, len);
}

static inline struct util_coll_ref uc_tmp(const struct util_coll_phase *ph,
					  size_t off, size_t len)
{
	return uc_ref(UC_BUF_TMP, ph->tmp_off + off, len);
}

static inline struct util_coll_ref uc_acc(const struct util_coll_phase *ph,
					  size_t off, size_t len)
{
	return uc_ref(ph->acc, ph->acc_off + off, len);
}

static inline void uc_xfer(struct util_coll_xfer *x, uint8_t *n, uint32_t peer,
			   struct util_coll_ref ref, bool zero_ok)
{
	if (!ref.len && !zero_ok)
		return;
	x[*n].peer = peer;
	x[*n].ref = ref;
	(*n)++;
}

static inline void uc_send(struct util_coll_round *r, uint32_t peer,
			   struct util_coll_ref ref)
{
	uc_xfer(r->send, &r->nsend, peer, ref, false);
}

static inline void uc_recv(struct util_coll_round *r, uint32_t peer,
			   struct util_coll_ref ref)
{
	uc_xfer(r->recv, &r->nrecv, peer, ref, false);
}

static inline void uc_act(struct util_coll_round *r, uint8_t kind,
			  struct util_coll_ref dst, struct util_coll_ref a,
			  struct util_coll_ref b)
{
	if (!dst.len)
		return;
	if (kind == UC_ACT_COPY && dst.buf == a.buf && dst.off == a.off)
		return;
	r->act[r->nact].kind = kind;
	r->act[r->nact].dst = dst;
	r->act[r->nact].a = a;
	r->act[r->nact].b = b;
	r->nact++;
}

static inline void uc_copy(struct util_coll_round *r, struct util_coll_ref dst,
			   struct util_coll_ref src)
{
	uc_act(r, UC_ACT_COPY, dst, src, uc_ref(UC_BUF_NONE, 0, 0));
}

/* Rounds before k - win + 1 (and before first) complete first. */
static inline uint32_t
uc_window_start(const struct util_coll_phase *ph, uint32_t k, uint32_t first)
{
	uint32_t s = k + 1 >= ph->win ? k + 1 - ph->win : 0;

	return s > first ? s : first;
}

/* Piece c (of ph->chunks) of block b when count elements are cut in n
 * blocks: byte offset and length. */
static inline struct util_coll_ref uc_piece(const struct util_coll_phase *ph,
					    uint32_t n, uint32_t b, uint32_t c,
					    size_t count)
{
	size_t boff = uc_part_off(count, n, b), bcnt = uc_part_cnt(count, n, b);
	size_t off = boff + uc_part_off(bcnt, ph->chunks, c);

	return uc_ref(UC_BUF_NONE, off * ph->esize,
		      uc_part_cnt(bcnt, ph->chunks, c) * ph->esize);
}

/* Blocks [lo, hi) of count elements cut in n: bytes. */
static inline struct util_coll_ref uc_blocks(const struct util_coll_phase *ph,
					     size_t count, uint32_t n,
					     uint32_t lo, uint32_t hi)
{
	size_t off = uc_part_off(count, n, lo);

	return uc_ref(UC_BUF_NONE, off * ph->esize,
		      (uc_part_off(count, n, hi) - off) * ph->esize);
}

static inline struct util_coll_ref
uc_at(struct util_coll_ref where, uint8_t buf, size_t base)
{
	where.buf = buf;
	where.off += base;
	return where;
}

static inline uint32_t uc_vrank(const struct util_coll_phase *ph)
{
	return uc_mod((int64_t)ph->me - ph->root, ph->n);
}

static inline uint32_t uc_rank_of(const struct util_coll_phase *ph, uint32_t v)
{
	return (v + ph->root) % ph->n;
}

/* ---- the generators ------------------------------------------------------ */

void uc_allreduce_rd(const struct util_coll_phase *ph, uint32_t k,
		     struct util_coll_round *r);
void uc_allreduce_rab(const struct util_coll_phase *ph, uint32_t k,
		      struct util_coll_round *r);
void uc_barrier(const struct util_coll_phase *ph, uint32_t k,
		struct util_coll_round *r);
void uc_allreduce_ring(const struct util_coll_phase *ph, uint32_t k,
		       struct util_coll_round *r);
void uc_bcast_scatter_ring(const struct util_coll_phase *ph, uint32_t k,
			   struct util_coll_round *r);
void uc_reduce_ring(const struct util_coll_phase *ph, uint32_t k,
		    struct util_coll_round *r);
void uc_allgather_bruck(const struct util_coll_phase *ph, uint32_t k,
			struct util_coll_round *r);
void uc_allgather_ring(const struct util_coll_phase *ph, uint32_t k,
		       struct util_coll_round *r);
void uc_redscat_pairwise(const struct util_coll_phase *ph, uint32_t k,
			 struct util_coll_round *r);
void uc_alltoall_pairwise(const struct util_coll_phase *ph, uint32_t k,
			  struct util_coll_round *r);
void uc_bcast_binomial(const struct util_coll_phase *ph, uint32_t k,
		       struct util_coll_round *r);
void uc_scatter_tree(const struct util_coll_phase *ph, uint32_t i,
		     struct util_coll_round *r, uint8_t buf, size_t off,
		     size_t count);
void uc_reduce_binomial(const struct util_coll_phase *ph, uint32_t k,
			struct util_coll_round *r);
void uc_scatter_binomial(const struct util_coll_phase *ph, uint32_t k,
			 struct util_coll_round *r);
void uc_scatter_linear(const struct util_coll_phase *ph, uint32_t k,
		       struct util_coll_round *r);
void uc_gather_binomial(const struct util_coll_phase *ph, uint32_t k,
			struct util_coll_round *r);
void uc_gather_linear(const struct util_coll_phase *ph, uint32_t k,
		      struct util_coll_round *r);
void uc_send1(const struct util_coll_phase *ph, struct util_coll_round *r);

#endif /* UTIL_COLL_ROUND_H */
