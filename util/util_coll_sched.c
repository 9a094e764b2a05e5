/* SPDX-License-Identifier: MIT */
/*
 * The algorithms of the collective engine as round generators: each
 * phase's sizes (pieces, window, scratch, rounds), and round k of it by
 * algorithm (the generators are in util_coll_alg_*.c, fi_coll(7) gives
 * each one's reduction order).
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "util_coll_round.h"
#include <string.h>

/* Pieces per block: blocks of max_bytes in pieces of at most ph->chunk,
 * so that rounds (rounds_per_piece per piece, plus extra) stay below
 * 1 << UC_ROUND_BITS. */
static uint32_t uc_chunks(const struct util_coll_phase *ph, size_t max_elems,
			  uint32_t rounds_per_piece)
{
	size_t bytes = max_elems * ph->esize, c = 1;
	size_t cap = ((1u << UC_ROUND_BITS) - 2 * ph->n - 4) /
		     (rounds_per_piece ? rounds_per_piece : 1);

	if (ph->chunk && bytes > ph->chunk)
		c = (bytes + ph->chunk - 1) / ph->chunk;
	if (c > max_elems)
		c = max_elems ? max_elems : 1;
	if (c > cap)
		c = cap;
	return (uint32_t)c;
}

static void uc_setup_pieces(struct util_coll_phase *ph, size_t max_elems,
			    uint32_t rounds_per_piece, bool tmp_slots)
{
	size_t slot;

	ph->chunks = uc_chunks(ph, max_elems, rounds_per_piece);
	ph->win = uc_min32(uc_min32(ph->window ? ph->window : 1,
				    ph->chunks), UC_WIN_MAX);
	slot = ((max_elems + ph->chunks - 1) / ph->chunks) * ph->esize;
	ph->tmp_len = tmp_slots ? ph->win * slot : 0;
}

int util_coll_phase_setup(struct util_coll_phase *ph)
{
	uint32_t n = ph->n, lg = uc_ceil_log2(n);
	size_t bytes = ph->count * ph->esize;
	uint64_t rounds;

	if (!n || ph->me >= n || ph->root >= n || ph->src >= n)
		return -FI_EINVAL;
	ph->p = 1u << uc_floor_log2(n);
	ph->rem = n - ph->p;
	ph->lg = lg;
	ph->chunks = 1;
	ph->win = 1;
	ph->tmp_len = 0;
	switch (ph->alg) {
	case UC_ALG_LOCAL:
	case UC_ALG_SEND1:
		rounds = 1;
		break;
	case UC_ALG_BARRIER_DISS:
	case UC_ALG_BCAST_BINOMIAL:
		rounds = lg;
		break;
	case UC_ALG_ALLREDUCE_RD:
		ph->lg = uc_floor_log2(n);
		rounds = n == 1 ? 1 : ph->lg + (ph->rem ? 2 : 0);
		ph->tmp_len = bytes;
		break;
	case UC_ALG_ALLREDUCE_RAB:
		ph->lg = uc_floor_log2(n);
		rounds = 2 * ph->lg + 3;
		ph->tmp_len = bytes;
		break;
	case UC_ALG_ALLREDUCE_RING:
		uc_setup_pieces(ph, uc_part_cnt(ph->count, n, 0), 2 * n, true);
		rounds = 1 + 2 * (uint64_t)(n - 1) * ph->chunks;
		break;
	case UC_ALG_BCAST_SCATTER_RING:
		uc_setup_pieces(ph, uc_part_cnt(ph->count, n, 0), n, false);
		rounds = lg + (uint64_t)(n - 1) * ph->chunks;
		break;
	case UC_ALG_REDUCE_BINOMIAL:
		rounds = lg + 1;
		ph->tmp_len = bytes;
		break;
	case UC_ALG_REDUCE_RING:
		uc_setup_pieces(ph, uc_part_cnt(ph->count, n, 0), n, true);
		rounds = 1 + (uint64_t)(n - 1) * ph->chunks + (n - 1);
		break;
	case UC_ALG_ALLGATHER_BRUCK:
		rounds = lg + 2;
		ph->tmp_len = bytes * n;
		break;
	case UC_ALG_ALLGATHER_RING:
		uc_setup_pieces(ph, ph->count, n, false);
		rounds = 1 + (uint64_t)(n - 1) * ph->chunks;
		break;
	case UC_ALG_REDSCAT_PAIRWISE:
		uc_setup_pieces(ph, ph->count, n, true);
		rounds = 1 + (uint64_t)(n - 1) * ph->chunks;
		break;
	case UC_ALG_ALLTOALL_PAIRWISE:
	case UC_ALG_SCATTER_LINEAR:
	case UC_ALG_GATHER_LINEAR:
		ph->win = uc_min32(uc_min32(ph->window ? ph->window : 1,
					    n > 1 ? n - 1 : 1), UC_WIN_MAX);
		rounds = n;
		break;
	case UC_ALG_SCATTER_BINOMIAL:
	case UC_ALG_GATHER_BINOMIAL:
		rounds = lg + 2;
		ph->tmp_len = bytes * n;
		break;
	default:
		return -FI_EINVAL;
	}
	if (rounds >= (1u << UC_ROUND_BITS))
		return -FI_EINVAL;
	ph->nrounds = (uint32_t)rounds;
	return 0;
}

void util_coll_phase_round(const struct util_coll_phase *ph, uint32_t k,
			   struct util_coll_round *r)
{
	/* The arrays are read only up to their counts. */
	r->nsend = r->nrecv = r->nact = 0;
	r->fence = false;
	r->start_after = k;
	switch (ph->alg) {
	case UC_ALG_LOCAL:
		if (ph->nact)
			uc_act(r, ph->act.kind, ph->act.dst, ph->act.a,
			       ph->act.b);
		break;
	case UC_ALG_BARRIER_DISS:
		uc_barrier(ph, k, r);
		break;
	case UC_ALG_ALLREDUCE_RD:
		uc_allreduce_rd(ph, k, r);
		break;
	case UC_ALG_ALLREDUCE_RAB:
		uc_allreduce_rab(ph, k, r);
		break;
	case UC_ALG_ALLREDUCE_RING:
		uc_allreduce_ring(ph, k, r);
		break;
	case UC_ALG_BCAST_BINOMIAL:
		uc_bcast_binomial(ph, k, r);
		break;
	case UC_ALG_BCAST_SCATTER_RING:
		uc_bcast_scatter_ring(ph, k, r);
		break;
	case UC_ALG_REDUCE_BINOMIAL:
		uc_reduce_binomial(ph, k, r);
		break;
	case UC_ALG_REDUCE_RING:
		uc_reduce_ring(ph, k, r);
		break;
	case UC_ALG_ALLGATHER_BRUCK:
		uc_allgather_bruck(ph, k, r);
		break;
	case UC_ALG_ALLGATHER_RING:
		uc_allgather_ring(ph, k, r);
		break;
	case UC_ALG_REDSCAT_PAIRWISE:
		uc_redscat_pairwise(ph, k, r);
		break;
	case UC_ALG_ALLTOALL_PAIRWISE:
		uc_alltoall_pairwise(ph, k, r);
		break;
	case UC_ALG_SCATTER_BINOMIAL:
		uc_scatter_binomial(ph, k, r);
		break;
	case UC_ALG_SCATTER_LINEAR:
		uc_scatter_linear(ph, k, r);
		break;
	case UC_ALG_GATHER_BINOMIAL:
		uc_gather_binomial(ph, k, r);
		break;
	case UC_ALG_GATHER_LINEAR:
		uc_gather_linear(ph, k, r);
		break;
	case UC_ALG_SEND1:
		uc_send1(ph, r);
		break;
	}
}

