/* SPDX-License-Identifier: MIT */
/*
 * Rings (large vectors, pipelined in pieces): reduce-scatter + allgather
 * allreduce, reduce, broadcast after a scatter, allgather; and the
 * pairwise exchanges (reduce-scatter, alltoall), Bruck's allgather.
 */
#include "weft/compat.h"
#include "util_coll_round.h"

/* Ring reduce-scatter into acc (count elements in n blocks, ph->chunks
 * pieces each), rounds first .. first + (n-1)C - 1: block b ends reduced
 * at rank b, in the order b+1, b+2, ..., b (fi_coll(7)). Each partial
 * that arrives is reduced with this rank's own input straight into acc,
 * and the first step forwards input: no copy of the input is made. */
static void uc_ring_rs(const struct util_coll_phase *ph, uint32_t k,
		       uint32_t first, struct util_coll_round *r,
		       uint8_t acc, size_t acc_off)
{
	uint32_t n = ph->n, j = k - first, s = j / ph->chunks;
	uint32_t c = j % ph->chunks, me = ph->me;
	struct util_coll_ref sp = uc_piece(ph, n, uc_mod((int64_t)me - s - 1, n),
					   c, ph->count);
	struct util_coll_ref rp = uc_piece(ph, n, uc_mod((int64_t)me - s - 2, n),
					   c, ph->count);
	size_t slot = (j % ph->win) * (ph->tmp_len / ph->win);

	r->start_after = uc_window_start(ph, k, first);
	uc_send(r, (me + 1) % n, s ? uc_at(sp, acc, acc_off) :
				     uc_at(sp, ph->in, ph->in_off));
	uc_recv(r, uc_mod((int64_t)me - 1, n),
		uc_tmp(ph, slot, rp.len));
	uc_act(r, UC_ACT_REDUCE, uc_at(rp, acc, acc_off),
	       uc_tmp(ph, slot, rp.len), uc_at(rp, ph->in, ph->in_off));
}

/* Ring allgather of blocks within buf: at step t rank me forwards block
 * me - t and receives block me - t - 1 (count elements cut in n). With
 * vranks, me and the neighbours are vranks (mapped to comm ranks). */
static void uc_ring_ag(const struct util_coll_phase *ph, uint32_t k,
		       uint32_t first, struct util_coll_round *r, uint8_t buf,
		       size_t buf_off, uint32_t me, bool vranks, size_t count)
{
	uint32_t n = ph->n, j = k - first, t = j / ph->chunks;
	uint32_t c = j % ph->chunks;
	struct util_coll_ref sp = uc_piece(ph, n, uc_mod((int64_t)me - t, n), c,
					   count);
	struct util_coll_ref rp = uc_piece(ph, n, uc_mod((int64_t)me - t - 1, n),
					   c, count);
	uint32_t next = (me + 1) % n, prev = uc_mod((int64_t)me - 1, n);

	if (vranks) {
		next = (next + ph->root) % n;
		prev = (prev + ph->root) % n;
	}
	r->start_after = uc_window_start(ph, k, first);
	uc_send(r, next, uc_at(sp, buf, buf_off));
	uc_recv(r, prev, uc_at(rp, buf, buf_off));
}

void uc_allreduce_ring(const struct util_coll_phase *ph, uint32_t k,
		       struct util_coll_round *r)
{
	uint32_t rs_end = 1 + (ph->n - 1) * ph->chunks;

	if (k == 0) {
		/* n = 1: the result is the input */
		if (ph->n == 1)
			uc_copy(r, uc_out(ph, 0, ph->count * ph->esize),
				uc_in(ph, 0, ph->count * ph->esize));
		return;
	}
	if (k < rs_end) {
		uc_ring_rs(ph, k, 1, r, ph->out, ph->out_off);
		return;
	}
	/* The window (<= chunks) keeps each piece's forwarding after the
	 * round that produced it. */
	uc_ring_ag(ph, k, rs_end, r, ph->out, ph->out_off, ph->me, false,
		   ph->count);
}

void uc_bcast_scatter_ring(const struct util_coll_phase *ph, uint32_t k,
			   struct util_coll_round *r)
{
	uint32_t ag_first = ph->lg;

	if (k < ag_first) {
		uc_scatter_tree(ph, k, r, ph->out, ph->out_off, ph->count);
		return;
	}
	/* Every rank has its block (vrank order) once the scatter is over. */
	uc_ring_ag(ph, k, ag_first, r, ph->out, ph->out_off, uc_vrank(ph), true,
		   ph->count);
}

void uc_reduce_ring(const struct util_coll_phase *ph, uint32_t k,
		    struct util_coll_round *r)
{
	uint32_t gather = 1 + (ph->n - 1) * ph->chunks, b;
	size_t bytes = ph->count * ph->esize;
	struct util_coll_ref blk;

	if (k == 0) {
		if (ph->n == 1)
			uc_copy(r, uc_acc(ph, 0, bytes), uc_in(ph, 0, bytes));
		return;
	}
	if (k < gather) {
		uc_ring_rs(ph, k, 1, r, ph->acc, ph->acc_off);
		return;
	}
	/* Gather round g: the rank of vrank g + 1 sends its block. */
	r->start_after = gather;
	b = uc_rank_of(ph, k - gather + 1);
	blk = uc_blocks(ph, ph->count, ph->n, b, b + 1);
	if (ph->me == b)
		uc_send(r, ph->root, uc_at(blk, ph->acc, ph->acc_off));
	else if (ph->me == ph->root)
		uc_recv(r, b, uc_at(blk, ph->out, ph->out_off));
}

void uc_allgather_bruck(const struct util_coll_phase *ph, uint32_t k,
			struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;
	uint32_t n = ph->n, me = ph->me, dist, nb;

	if (k == 0) {
		uc_copy(r, uc_tmp(ph, 0, b), uc_in(ph, 0, b));
		return;
	}
	if (k == ph->lg + 1) {
		/* tmp block i holds rank me + i's */
		uc_copy(r, uc_out(ph, me * b, (n - me) * b),
			uc_tmp(ph, 0, (n - me) * b));
		uc_copy(r, uc_out(ph, 0, me * b), uc_tmp(ph, (n - me) * b,
							 me * b));
		return;
	}
	dist = 1u << (k - 1);
	nb = uc_min32(dist, n - dist);
	uc_send(r, uc_mod((int64_t)me - dist, n), uc_tmp(ph, 0, nb * b));
	uc_recv(r, (me + dist) % n, uc_tmp(ph, dist * b, nb * b));
}

void uc_allgather_ring(const struct util_coll_phase *ph, uint32_t k,
		       struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;

	if (k == 0) {
		uc_copy(r, uc_out(ph, ph->me * b, b), uc_in(ph, 0, b));
		return;
	}
	/* Blocks of count elements each: the ring over n * count elements
	 * cut in n. */
	uc_ring_ag(ph, k, 1, r, ph->out, ph->out_off, ph->me, false,
		   ph->count * ph->n);
}

void uc_redscat_pairwise(const struct util_coll_phase *ph, uint32_t k,
			 struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize, off, len;
	uint32_t n = ph->n, me = ph->me, j, s, c, to;
	size_t slot;

	if (k == 0) {
		uc_copy(r, uc_out(ph, 0, b), uc_in(ph, me * b, b));
		return;
	}
	j = k - 1;
	s = j / ph->chunks + 1;
	c = j % ph->chunks;
	off = uc_part_off(ph->count, ph->chunks, c) * ph->esize;
	len = uc_part_cnt(ph->count, ph->chunks, c) * ph->esize;
	slot = (j % ph->win) * (ph->tmp_len / ph->win);
	to = (me + s) % n;
	r->start_after = uc_window_start(ph, k, 1);
	uc_send(r, to, uc_in(ph, to * b + off, len));
	uc_recv(r, uc_mod((int64_t)me - s, n), uc_tmp(ph, slot, len));
	uc_act(r, UC_ACT_REDUCE, uc_out(ph, off, len), uc_out(ph, off, len),
	       uc_tmp(ph, slot, len));
}

void uc_alltoall_pairwise(const struct util_coll_phase *ph, uint32_t k,
			  struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;
	uint32_t n = ph->n, me = ph->me, to, from;

	if (k == 0) {
		uc_copy(r, uc_out(ph, me * b, b), uc_in(ph, me * b, b));
		return;
	}
	to = (me + k) % n;
	from = uc_mod((int64_t)me - k, n);
	r->start_after = uc_window_start(ph, k, 1);
	uc_send(r, to, uc_in(ph, to * b, b));
	uc_recv(r, from, uc_out(ph, from * b, b));
}
