/* SPDX-License-Identifier: MIT */
/*
 * Recursive doubling (allreduce of small vectors), recursive halving and
 * doubling (Rabenseifner, medium vectors), their fold for member counts
 * that are not powers of two, and the dissemination barrier. Zero-length
 * transfers are left out (both ends compute the same lengths), except
 * the barrier's, which are the barrier.
 */
#include "weft/compat.h"
#include "util_coll_round.h"

/* The first 2 * rem ranks fold in pairs: the odd one goes on as rank
 * me / 2 among the p, the even one sits out (-1). */
static int64_t uc_rd_newrank(const struct util_coll_phase *ph)
{
	if (ph->me < 2 * ph->rem)
		return (ph->me & 1) ? (int64_t)(ph->me / 2) : -1;
	return ph->me - ph->rem;
}

static uint32_t uc_rd_rank(const struct util_coll_phase *ph, uint32_t nr)
{
	return nr < ph->rem ? nr * 2 + 1 : nr + ph->rem;
}

/* The even one sends its partial (in buf at off), the odd one reduces it
 * with its own into out. */
static void uc_fold_in_from(const struct util_coll_phase *ph,
			    struct util_coll_round *r, size_t bytes,
			    uint8_t buf, size_t off)
{
	if (ph->me >= 2 * ph->rem)
		return;
	if (!(ph->me & 1)) {
		uc_send(r, ph->me + 1, uc_ref(buf, off, bytes));
		return;
	}
	uc_recv(r, ph->me - 1, uc_tmp(ph, 0, bytes));
	uc_act(r, UC_ACT_REDUCE, uc_out(ph, 0, bytes), uc_tmp(ph, 0, bytes),
	       uc_ref(buf, off, bytes));
}

static void uc_fold_out(const struct util_coll_phase *ph,
			struct util_coll_round *r, size_t bytes)
{
	if (ph->me >= 2 * ph->rem)
		return;
	if (ph->me & 1)
		uc_send(r, ph->me - 1, uc_out(ph, 0, bytes));
	else
		uc_recv(r, ph->me + 1, uc_out(ph, 0, bytes));
}

/* Recursive doubling. Rounds: the fold (only when n is not a power of
 * two), lg steps, the unfold (likewise); n = 1 copies. No copy of the
 * input otherwise: a member's first reduction reads its input and writes
 * the result, and it sends its input until then. Small vectors are all
 * this algorithm sees, and a round less is latency. */
void uc_allreduce_rd(const struct util_coll_phase *ph, uint32_t k,
		     struct util_coll_round *r)
{
	size_t bytes = ph->count * ph->esize;
	int64_t nr = uc_rd_newrank(ph);
	uint32_t fold = ph->rem ? 1 : 0, mask, pnr;
	struct util_coll_ref mine;

	if (ph->n == 1) {
		uc_copy(r, uc_out(ph, 0, bytes), uc_in(ph, 0, bytes));
		return;
	}
	if (fold && k == 0) {
		uc_fold_in_from(ph, r, bytes, ph->in, ph->in_off);
		return;
	}
	if (fold && k == ph->lg + 1) {
		uc_fold_out(ph, r, bytes);
		return;
	}
	if (nr < 0)
		return;
	/* my partial: the input until a reduction made one in out (the
	 * fold did, for the odd members below 2 * rem) */
	mine = (k == fold && ph->me >= 2 * ph->rem) ? uc_in(ph, 0, bytes) :
						       uc_out(ph, 0, bytes);
	mask = 1u << (k - fold);
	pnr = (uint32_t)nr ^ mask;
	uc_send(r, uc_rd_rank(ph, pnr), mine);
	uc_recv(r, uc_rd_rank(ph, pnr), uc_tmp(ph, 0, bytes));
	/* The reduction overwrites what the send may still be reading. */
	r->fence = true;
	if (pnr < (uint32_t)nr)
		uc_act(r, UC_ACT_REDUCE, uc_out(ph, 0, bytes),
		       uc_tmp(ph, 0, bytes), mine);
	else
		uc_act(r, UC_ACT_REDUCE, uc_out(ph, 0, bytes), mine,
		       uc_tmp(ph, 0, bytes));
}

/* Rabenseifner: the p ranks halve the vector (p blocks) down to one block
 * each, reducing as they go, then double it back. */
void uc_allreduce_rab(const struct util_coll_phase *ph, uint32_t k,
		      struct util_coll_round *r)
{
	size_t bytes = ph->count * ph->esize;
	int64_t nr = uc_rd_newrank(ph);
	uint32_t mask, lo, peer, mine_lo, give_lo;
	struct util_coll_ref keep, give;
	uint8_t src;
	size_t src_off;
	bool lower;

	if (k == 0) {
		/* Only n = 1 copies: otherwise the first reduction of each
		 * half reads the input and writes the result. */
		if (ph->n == 1)
			uc_copy(r, uc_out(ph, 0, bytes), uc_in(ph, 0, bytes));
		return;
	}
	if (k == 1) {
		uc_fold_in_from(ph, r, bytes, ph->in, ph->in_off);
		return;
	}
	if (k == 2 * ph->lg + 2) {
		uc_fold_out(ph, r, bytes);
		return;
	}
	if (nr < 0)
		return;
	if (k < ph->lg + 2) {			/* halving */
		mask = ph->p >> (k - 1);
		lo = (uint32_t)nr & ~(2 * mask - 1);
		lower = !((uint32_t)nr & mask);
		mine_lo = lower ? lo : lo + mask;
		give_lo = lower ? lo + mask : lo;
		peer = uc_rd_rank(ph, (uint32_t)nr ^ mask);
		keep = uc_blocks(ph, ph->count, ph->p, mine_lo, mine_lo + mask);
		give = uc_blocks(ph, ph->count, ph->p, give_lo, give_lo + mask);
		/* My partial is still my input until I reduced once: the
		 * first halving, unless the fold gave me one already. */
		src = ph->out;
		src_off = ph->out_off;
		if (k == 2 && !(ph->me < 2 * ph->rem)) {
			src = ph->in;
			src_off = ph->in_off;
		}
		uc_send(r, peer, uc_at(give, src, src_off));
		uc_recv(r, peer, uc_at(keep, UC_BUF_TMP, ph->tmp_off));
		if (lower)
			uc_act(r, UC_ACT_REDUCE, uc_at(keep, ph->out, ph->out_off),
			       uc_at(keep, src, src_off),
			       uc_at(keep, UC_BUF_TMP, ph->tmp_off));
		else
			uc_act(r, UC_ACT_REDUCE, uc_at(keep, ph->out, ph->out_off),
			       uc_at(keep, UC_BUF_TMP, ph->tmp_off),
			       uc_at(keep, src, src_off));
		return;
	}
	mask = 1u << (k - ph->lg - 2);		/* doubling */
	lo = (uint32_t)nr & ~(mask - 1);
	give_lo = ((uint32_t)nr ^ mask) & ~(mask - 1);
	peer = uc_rd_rank(ph, (uint32_t)nr ^ mask);
	uc_send(r, peer, uc_at(uc_blocks(ph, ph->count, ph->p, lo, lo + mask),
			       ph->out, ph->out_off));
	uc_recv(r, peer, uc_at(uc_blocks(ph, ph->count, ph->p, give_lo,
					 give_lo + mask), ph->out, ph->out_off));
}

void uc_barrier(const struct util_coll_phase *ph, uint32_t k,
		struct util_coll_round *r)
{
	uint32_t d = 1u << k, n = ph->n;

	uc_xfer(r->send, &r->nsend, (ph->me + d) % n, uc_ref(UC_BUF_NONE, 0, 0),
		true);
	uc_xfer(r->recv, &r->nrecv, uc_mod((int64_t)ph->me - d, n),
		uc_ref(UC_BUF_NONE, 0, 0), true);
}
