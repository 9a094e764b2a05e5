/* SPDX-License-Identifier: MIT */
/*
 * Binomial trees (broadcast, reduce, scatter, gather), the direct
 * (linear) scatter and gather of large blocks, and a single transfer.
 */
#include "weft/compat.h"
#include "util_coll_round.h"

void uc_bcast_binomial(const struct util_coll_phase *ph, uint32_t k,
		       struct util_coll_round *r)
{
	uint32_t v = uc_vrank(ph), mask = 1u << k;
	size_t bytes = ph->count * ph->esize;

	if (v < mask && v + mask < ph->n)
		uc_send(r, uc_rank_of(ph, v + mask), uc_out(ph, 0, bytes));
	else if (v >= mask && v < 2 * mask)
		uc_recv(r, uc_rank_of(ph, v - mask), uc_out(ph, 0, bytes));
}

/* Top-down binomial scatter of the blocks [v, v + subtree) in vrank
 * order, round i of lg rounds; blocks of count (cut in n). */
void uc_scatter_tree(const struct util_coll_phase *ph, uint32_t i,
		     struct util_coll_round *r, uint8_t buf, size_t off,
		     size_t count)
{
	uint32_t v = uc_vrank(ph), n = ph->n;
	uint32_t mask = 1u << (ph->lg - 1 - i), sub = v & (2 * mask - 1);

	if (sub == 0 && v + mask < n)
		uc_send(r, uc_rank_of(ph, v + mask),
			uc_at(uc_blocks(ph, count, n, v + mask,
					uc_min32(v + 2 * mask, n)), buf, off));
	else if (sub == mask)
		uc_recv(r, uc_rank_of(ph, v - mask),
			uc_at(uc_blocks(ph, count, n, v,
					uc_min32(v + mask, n)), buf, off));
}

void uc_reduce_binomial(const struct util_coll_phase *ph, uint32_t k,
			struct util_coll_round *r)
{
	uint32_t v = uc_vrank(ph), mask;
	size_t bytes = ph->count * ph->esize;

	if (k == 0) {
		uc_copy(r, uc_acc(ph, 0, bytes), uc_in(ph, 0, bytes));
		return;
	}
	mask = 1u << (k - 1);
	if ((v & mask) && !(v & (mask - 1))) {
		uc_send(r, uc_rank_of(ph, v - mask), uc_acc(ph, 0, bytes));
	} else if (!(v & (2 * mask - 1)) && v + mask < ph->n) {
		uc_recv(r, uc_rank_of(ph, v + mask), uc_tmp(ph, 0, bytes));
		uc_act(r, UC_ACT_REDUCE, uc_acc(ph, 0, bytes),
		       uc_acc(ph, 0, bytes), uc_tmp(ph, 0, bytes));
	}
}

/* Blocks rotated between rank order (user buffers) and vrank order (tmp):
 * vrank v is rank v + root. */
static void uc_rotate_to_vrank(const struct util_coll_phase *ph,
			       struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;
	uint32_t n = ph->n, root = ph->root;

	uc_copy(r, uc_tmp(ph, 0, (n - root) * b), uc_in(ph, root * b,
							(n - root) * b));
	uc_copy(r, uc_tmp(ph, (n - root) * b, root * b), uc_in(ph, 0, root * b));
}

static void uc_rotate_to_rank(const struct util_coll_phase *ph,
			      struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;
	uint32_t n = ph->n, root = ph->root;

	uc_copy(r, uc_out(ph, root * b, (n - root) * b),
		uc_tmp(ph, 0, (n - root) * b));
	uc_copy(r, uc_out(ph, 0, root * b), uc_tmp(ph, (n - root) * b,
						   root * b));
}

void uc_scatter_binomial(const struct util_coll_phase *ph, uint32_t k,
			 struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;
	uint32_t v = uc_vrank(ph);

	if (k == 0) {
		if (v == 0)
			uc_rotate_to_vrank(ph, r);
		return;
	}
	if (k == ph->lg + 1) {
		uc_copy(r, uc_out(ph, 0, b), uc_tmp(ph, v * b, b));
		return;
	}
	uc_scatter_tree(ph, k - 1, r, UC_BUF_TMP, ph->tmp_off,
			ph->count * ph->n);
}

void uc_scatter_linear(const struct util_coll_phase *ph, uint32_t k,
		       struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;
	uint32_t v = uc_vrank(ph), to;

	if (v == 0) {
		if (k == 0) {
			uc_copy(r, uc_out(ph, 0, b), uc_in(ph, ph->root * b, b));
			return;
		}
		to = uc_rank_of(ph, k);
		r->start_after = uc_window_start(ph, k, 1);
		uc_send(r, to, uc_in(ph, to * b, b));
	} else if (k == v) {
		uc_recv(r, ph->root, uc_out(ph, 0, b));
	}
}

void uc_gather_binomial(const struct util_coll_phase *ph, uint32_t k,
			struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;
	uint32_t v = uc_vrank(ph), n = ph->n, mask;

	if (k == 0) {
		uc_copy(r, uc_tmp(ph, v * b, b), uc_in(ph, 0, b));
		return;
	}
	if (k == ph->lg + 1) {
		if (v == 0)
			uc_rotate_to_rank(ph, r);
		return;
	}
	mask = 1u << (k - 1);
	if ((v & mask) && !(v & (mask - 1)))
		uc_send(r, uc_rank_of(ph, v - mask),
			uc_tmp(ph, v * b, (uc_min32(v + mask, n) - v) * b));
	else if (!(v & (2 * mask - 1)) && v + mask < n)
		uc_recv(r, uc_rank_of(ph, v + mask),
			uc_tmp(ph, (v + mask) * b,
			       (uc_min32(v + 2 * mask, n) - v - mask) * b));
}

void uc_gather_linear(const struct util_coll_phase *ph, uint32_t k,
		      struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;
	uint32_t v = uc_vrank(ph), from;

	if (v == 0) {
		if (k == 0) {
			uc_copy(r, uc_out(ph, ph->root * b, b), uc_in(ph, 0, b));
			return;
		}
		from = uc_rank_of(ph, k);
		r->start_after = uc_window_start(ph, k, 1);
		uc_recv(r, from, uc_out(ph, from * b, b));
	} else if (k == v) {
		uc_send(r, ph->root, uc_in(ph, 0, b));
	}
}

void uc_send1(const struct util_coll_phase *ph, struct util_coll_round *r)
{
	size_t b = ph->count * ph->esize;

	if (ph->me == ph->src && ph->me == ph->root)
		uc_copy(r, uc_out(ph, 0, b), uc_in(ph, 0, b));
	else if (ph->me == ph->src)
		uc_send(r, ph->root, uc_in(ph, 0, b));
	else if (ph->me == ph->root)
		uc_recv(r, ph->src, uc_out(ph, 0, b));
}
