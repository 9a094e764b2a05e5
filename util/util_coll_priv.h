/* SPDX-License-Identifier: MIT */
/*
 * The collective engine's insides, shared by its files and its unit tests.
 *
 * An operation is a list of phases (at most UC_PHASE_MAX); a phase runs one
 * algorithm over a communicator (the group, or a subset of it, such as the
 * ranks of one host). An algorithm is a generator: round k of the phase,
 * for this rank, is a pure function of the phase's parameters
 * (util_coll_phase_round), so schedules can be checked without a network
 * (util/test/test_coll_sched.c) and nothing is allocated per round.
 *
 * A round is at most UC_XFER_MAX sends and receives, then at most
 * UC_ACT_MAX local actions (copies, reductions) once its receives have
 * landed. Rounds complete in order; round k may start (post its
 * receives and sends) once the rounds before round.start_after are
 * complete, and at most phase.window rounds are in flight. Generators
 * guarantee: a message sent in round k of a phase by rank a to rank b is
 * the one b receives in its round k from a (same length), which is what
 * the tag says on the wire (phase << 24 | k); a send reads only data that
 * rounds before start_after produced; and a round with fence set runs
 * its actions only when every send posted so far completed (its actions
 * overwrite what a send may still be reading).
 */
#ifndef UTIL_COLL_PRIV_H
#define UTIL_COLL_PRIV_H

#include "weft/compat.h"
#include "weft/util_coll.h"
#include "weft/util_domain.h"
#include "weft/util_pool.h"
#include <rdma/fi_cm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UC_XFER_MAX	2
#define UC_ACT_MAX	3
#define UC_WIN_MAX	16		/* rounds in flight, per operation */
#define UC_PHASE_MAX	4
#define UC_ROUND_BITS	24		/* rounds per phase < 1 << this */
#define UC_MAX_MEMBERS	65536

enum util_coll_buf {
	UC_BUF_NONE = 0,
	UC_BUF_IN,			/* the application's input */
	UC_BUF_OUT,			/* the application's result */
	UC_BUF_TMP,			/* the operation's scratch */
};

/* bytes [off, off + len) of a buffer */
struct util_coll_ref {
	uint8_t buf;
	size_t off;
	size_t len;
};

struct util_coll_xfer {
	uint32_t peer;			/* rank in the phase's communicator */
	struct util_coll_ref ref;
};

enum util_coll_act_kind {
	UC_ACT_COPY = 1,		/* dst = a */
	UC_ACT_REDUCE,			/* dst = a (op) b */
};

/* For a reduction, a holds the contributions that come first in the
 * documented order (fi_coll(7)), b the later ones. */
struct util_coll_act {
	uint8_t kind;
	struct util_coll_ref dst, a, b;
};

struct util_coll_round {
	uint32_t start_after;
	bool fence;
	uint8_t nsend, nrecv, nact;
	struct util_coll_xfer send[UC_XFER_MAX];
	struct util_coll_xfer recv[UC_XFER_MAX];
	struct util_coll_act act[UC_ACT_MAX];
};

enum util_coll_alg {
	UC_ALG_LOCAL = 1,		/* one round of local copies (acts) */
	UC_ALG_BARRIER_DISS,		/* dissemination */
	UC_ALG_ALLREDUCE_RD,		/* recursive doubling */
	UC_ALG_ALLREDUCE_RAB,		/* recursive halving + doubling */
	UC_ALG_ALLREDUCE_RING,		/* ring reduce-scatter + allgather */
	UC_ALG_BCAST_BINOMIAL,
	UC_ALG_BCAST_SCATTER_RING,	/* binomial scatter + ring allgather */
	UC_ALG_REDUCE_BINOMIAL,
	UC_ALG_REDUCE_RING,		/* ring reduce-scatter + gather */
	UC_ALG_ALLGATHER_BRUCK,
	UC_ALG_ALLGATHER_RING,
	UC_ALG_REDSCAT_PAIRWISE,
	UC_ALG_ALLTOALL_PAIRWISE,
	UC_ALG_SCATTER_BINOMIAL,
	UC_ALG_SCATTER_LINEAR,
	UC_ALG_GATHER_BINOMIAL,
	UC_ALG_GATHER_LINEAR,
	UC_ALG_SEND1,			/* rank src's input to rank root */
	UC_ALG_MAX,
};

/*
 * count, by algorithm (elements of esize bytes):
 *   ALLREDUCE_*, BCAST_*, REDUCE_*: the vector (in, out: count each);
 *   ALLGATHER_*, GATHER_*: per rank (in: count, out: n * count);
 *   SCATTER_*: per rank (in: n * count, out: count);
 *   REDSCAT: per rank (in: n * count, out: count);
 *   ALLTOALL: per peer (in, out: n * count);
 *   SEND1: count (in at rank src, out at rank root).
 * BCAST_* work in out only (the root's data is in its out). REDUCE_* keep
 * their partial sums in acc (the root's out, or tmp at acc_off).
 */
struct util_coll_phase {
	uint8_t alg;
	uint32_t n, me, root, src;
	const uint32_t *map;		/* comm rank -> group rank; NULL: same */
	size_t count;
	size_t esize;
	size_t chunk;			/* bytes per pipelined piece (0: none) */
	uint32_t window;		/* wanted rounds in flight (>= 1) */
	uint8_t in, out;		/* buffer ids */
	size_t in_off, out_off;
	uint8_t acc;			/* REDUCE_*: buffer of the partials */
	size_t acc_off;
	size_t tmp_off;			/* the phase's scratch in tmp */
	/* The phase number in tags: local copies that only some ranks make
	 * share the number of the phase after them, so that every rank's
	 * communicating phases carry the same numbers. */
	uint8_t tag_phase;
	bool pre;			/* such a local copy */
	/* UC_ALG_LOCAL: its action (nact 0 or 1) */
	uint8_t nact;
	struct util_coll_act act;
	/* filled by util_coll_phase_setup */
	uint32_t nrounds;
	size_t tmp_len;			/* scratch bytes past tmp_off */
	uint32_t chunks;		/* pieces per block */
	uint32_t win;			/* rounds in flight, <= UC_WIN_MAX */
	uint32_t p, rem, lg;		/* pow2 <= n, n - p, log2; ceil log2 */
};

/* ---- the engine's state -------------------------------------------------- */

struct util_coll_op;
struct util_coll_group;

/* Settings (FI_COLL_*, fi_coll(7)), read once. */
enum util_coll_forced {
	UC_AUTO = 0,
	UC_FORCE_RD,
	UC_FORCE_RAB,
	UC_FORCE_RING,
};

enum util_coll_hier { UC_HIER_AUTO = 0, UC_HIER_ON, UC_HIER_OFF };

struct util_coll_params {
	size_t rd_max;			/* allreduce: recursive doubling */
	size_t ring_min;		/* allreduce, reduce: rings */
	size_t bcast_scatter_min;
	size_t allgather_ring_min;
	size_t tree_max;		/* scatter, gather: binomial trees */
	size_t chunk;
	uint32_t window;
	uint32_t allreduce_alg;		/* enum util_coll_forced */
	uint32_t hier;			/* enum util_coll_hier */
	uint32_t host_ranks;		/* 0: the provider's host keys */
	uint64_t liveness_ms;
	uint64_t liveness_ns;		/* the same, for the clock */
};

extern struct util_coll_params util_coll_params;

/* What a completion of the class is for: the first member of every
 * context the engine gives the provider. */
enum util_coll_ctx_kind {
	UC_CTX_RECV = 1,
	UC_CTX_SEND,
	UC_CTX_CTRL,			/* a group's abort receive */
	UC_CTX_SINK,			/* a failed group's drain */
	UC_CTX_ABORT,			/* abort notices sent */
};

struct util_coll_ctx {
	uint8_t kind;
	uint8_t slot;
	uint8_t idx;
	void *owner;			/* op (RECV, SEND) or group */
};

/* A round in flight. */
struct util_coll_slot {
	struct util_coll_round r;
	uint8_t rposted, sposted;	/* posted so far */
	uint8_t rdone;			/* bit per completed receive */
	struct util_coll_ctx rctx[UC_XFER_MAX];
	struct util_coll_ctx sctx[UC_XFER_MAX];
};

#define UC_INLINE_TMP 256

struct util_coll_op {
	struct util_coll_op *prev, *next;	/* cep->ops */
	struct util_coll_op *rprev, *rnext;	/* cep->ready */
	bool on_ready;
	bool join;
	bool failed;
	bool want_comp;
	bool silent;			/* refused at the call: no completion */
	int err;
	int pending_err;		/* a callback's, failed in advance */
	struct util_coll_group *grp;
	uint32_t seq;
	void *context;
	enum fi_op rop;
	enum fi_datatype dt;
	void *buf[4];			/* by enum util_coll_buf */
	void *tmp_heap;			/* buf[UC_BUF_TMP] when malloc'ed */
	size_t tmp_size;
	uint32_t nph, cur;
	uint32_t next_start, next_done;	/* rounds of phase cur */
	uint32_t gen_k;			/* round generated in its slot, not
					 * started yet (UINT32_MAX: none) */
	uint32_t post_k;		/* rounds below are fully posted */
	uint32_t sends_out, recvs_out;
	/* Up to here cleared for each operation; the phases are filled as
	 * they are added, the slots as rounds start. */
	struct util_coll_phase ph[UC_PHASE_MAX];
	struct util_coll_slot slots[UC_WIN_MAX];
	_Alignas(16) uint8_t inline_tmp[UC_INLINE_TMP];
};

enum util_coll_grp_state {
	UC_GRP_JOINING = 1,
	UC_GRP_READY,
	UC_GRP_FAILED,
};

struct util_coll_group {
	struct fid_mc mc;
	struct util_coll_ep *cep;
	struct util_coll_group *join_next;	/* cep's queue of joins */
	uint32_t slot;			/* in cep->groups (the mc address) */
	uint16_t gid;
	enum util_coll_grp_state state;
	bool closed;
	int err;
	uint32_t n, rank;
	fi_addr_t *members;
	uint64_t hash;			/* of the members' addresses, in order */
	uint32_t next_seq;
	uint32_t inflight;		/* operations not completed */
	void *context;			/* the join's */
	/* hierarchy: ranks of my host, the hosts' leaders */
	uint32_t *local, nlocal, local_me;
	uint32_t *leaders, nhosts, host_me;
	/* failure handling */
	bool work;			/* something below to do in progress */
	int pending_fail;		/* an abort arrived: fail with it */
	bool ctrl_posted, ctrl_repost, sink_posted, sink_repost;
	uint32_t abort_next;		/* next member to tell, n: all told */
	uint32_t abort_msg[2];
	uint32_t ctrl_buf[2];
	struct util_coll_ctx ctrl_ctx, sink_ctx, abort_ctx;
	uint64_t join_in[UTIL_COLL_GID_MAX / 64];
	uint64_t join_out[UTIL_COLL_GID_MAX / 64];
};

struct util_coll_ep {
	struct util_ep *ep;
	const struct util_coll_xport *xp;
	struct util_coll_group **groups;	/* by slot */
	uint32_t ngroups;
	uint64_t gid_used[UTIL_COLL_GID_MAX / 64];
	struct util_coll_group *join_head, *join_tail;	/* joins waiting */
	struct util_coll_group *joining;	/* the join in flight */
	struct util_coll_op *ops;	/* operations in flight */
	struct util_coll_op *ready;	/* ... with something to do */
	uint32_t group_work;		/* groups with work set */
	struct util_pool op_pool;
	void *scratch;			/* one spare scratch buffer */
	size_t scratch_size;
	uint32_t calls;
	uint64_t next_check_ns;
};

/* Log lines name the endpoint's provider. */
static inline const struct fi_provider *uc_prov(const struct util_ep *ep)
{
	return util_domain_prov(ep->domain);
}

/* util_coll_exec.c: running operations (ep->lock held). */
void uc_op_advance(struct util_coll_op *op);
void uc_op_fail(struct util_coll_op *op, int err);
void uc_mark_ready(struct util_coll_op *op);
void uc_run_ready(struct util_coll_ep *cep);
void uc_check_liveness(struct util_coll_ep *cep);
/* util_pool's init_obj of operations. */
void uc_op_init_obj(void *obj, void *arg);

/* util_coll.c */
struct util_coll_op *uc_op_new(struct util_coll_group *grp, bool join);
void uc_op_finish(struct util_coll_op *op);
void uc_group_fail(struct util_coll_group *grp, int err);
void uc_group_mark(struct util_coll_group *grp);
int uc_group_post_ctrl(struct util_coll_group *grp);
void uc_group_free(struct util_coll_group *grp);
void uc_join_done(struct util_coll_op *op);
/* Scratch of at least size bytes for op (inline, cached, or heap). */
int uc_op_tmp(struct util_coll_op *op, size_t size);

struct util_coll_group *uc_group_of(struct util_ep *ep, fi_addr_t coll_addr);

/* util_coll_api.c */
extern const struct fi_ops_collective util_coll_ops;

/* Fill the computed fields; 0 or -FI_EINVAL (too many rounds). */
int util_coll_phase_setup(struct util_coll_phase *ph);
/* Round k (< nrounds) of the phase for ph->me. */
void util_coll_phase_round(const struct util_coll_phase *ph, uint32_t k,
			   struct util_coll_round *r);

/* Elements [off, off + cnt) of part i when count elements are cut in n
 * parts (the first count % n parts one larger). */
static inline size_t uc_part_off(size_t count, uint32_t n, uint32_t i)
{
	size_t q = count / n, r = count % n;

	return (size_t)i * q + (i < r ? i : r);
}

static inline size_t uc_part_cnt(size_t count, uint32_t n, uint32_t i)
{
	return count / n + (i < count % n ? 1 : 0);
}

#endif /* UTIL_COLL_PRIV_H */
