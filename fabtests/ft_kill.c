/* SPDX-License-Identifier: MIT */
/*
 * A peer killed mid-transfer, seen from the survivor: one case of the kill
 * matrix (fabtests/test_kill_matrix.sh runs them all).
 *
 * Rank 0 is the initiator (sender, RMA or atomic initiator), rank 1 the
 * target (receiver, RMA or atomic target); -x OP,SIDE names the operation
 * (tagged, write, read, atomic) and the side that dies (initiator or
 * target); -m the message size. Both ranks stream operations with data
 * checks (every received message, every read, every fetched atomic result,
 * every region a write with remote CQ data announces). Once traffic flows,
 * the survivor SIGKILLs the victim and asserts:
 *
 *  (a) every operation outstanding at the kill ends within KILL_BOUND_MS of
 *      it: with an error, or with a success whose data is checked (it may
 *      have been delivered before the death); a receive not matched to
 *      anything the victim sent may stay posted, and is then cancelled (a
 *      receive that cannot be cancelled was matched: it hangs). Then an
 *      operation of the same kind posted toward the dead peer fails at
 *      once or ends with an error within KILL_BOUND_MS; a success is a
 *      failure (nothing can be delivered to a dead process);
 *  (b) closing the endpoint, its memory registrations, AV, CQ, domain and
 *      fabric takes at most KILL_CLOSE_MS;
 *  (c) nothing hangs: the launcher's -t and a watchdog around the close.
 *
 * The survivor prints "kill: first F ms, last L ms, probe P ms, close C ms,
 * ...": its first and last error after the kill (the probe's included),
 * the probe's error after its post. A page mapped before the launcher
 * forks the ranks carries the victim's pid and its operation counts.
 */
#define _GNU_SOURCE
#include "common/ft.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define KILL_BOUND_MS 2000	/* error completions after the kill */
#define KILL_CLOSE_MS 1000	/* closing everything */
#define KILL_HARD_MS 6000	/* how long to look before giving up */
#define KILL_STREAM_S 10	/* the survivor's traffic before the kill */
#define KILL_VICTIM_S 30	/* a victim nobody killed gives up */
#define KILL_WINDOW_MAX 16
#define KILL_ATOMIC_COUNT 8	/* uint64 elements: 64 bytes */
#define KILL_READ_SEED 0x10000u
#define KILL_ERRS_MAX 3		/* distinct errors reported */
#define KILL_POLL_US 1000	/* the survivor's polls after the kill */

enum kill_op { KILL_TAGGED, KILL_WRITE, KILL_READ, KILL_ATOMIC };

static const char *const kill_op_names[] = { "tagged", "write", "read", "atomic" };

/* shared by both ranks through a mapping inherited across the fork */
struct kill_shared {
	pid_t pid[2];
	uint64_t posted[2];	/* operations each rank posted */
	uint64_t completed[2];	/* and saw complete */
};

static struct kill_shared *kill_sh;

struct kill_slot {
	struct fi_context2 fctx;
	uint64_t seq;
	uint64_t nops;		/* atomics: operations done on this slot */
	bool busy;
};

struct kill_state {
	struct ft_ctx *ctx;
	enum kill_op op;
	int victim;
	bool survivor;
	bool initiator;		/* rank 0 */
	size_t size;
	int window;
	uint64_t nslot;		/* regions of the target's buffer */
	uint64_t kill_after;	/* completions on either side before the kill */
	uint64_t limit;		/* operations to post (writes never reuse a region) */
	struct ft_buf local;	/* window * size (atomics: results) */
	struct ft_buf operand;	/* atomics */
	struct ft_buf region;	/* nslot * size, remote access */
	struct ft_rma_key keys[2];
	struct kill_slot slot[KILL_WINDOW_MAX];
	uint64_t next_seq, done, posted;
	uint8_t *seen;		/* write target: regions announced */
	/* after the kill */
	uint64_t t_kill, t_first, t_last;
	int errors, late_ok, cancelled;
	struct fi_context2 probe_fctx;
	int errs[KILL_ERRS_MAX], nerrs;
	bool cancelling;	/* FI_ECANCELED is ours */
	bool probe_done;
	bool probe_at_post;	/* the post itself failed */
	uint64_t max_gap_ns;	/* longest time between two polls: starved? */
};

static uint32_t kill_seed(uint64_t seq)
{
	return (uint32_t)seq * 7u + 1u;
}

static uint64_t kill_ms(uint64_t ns)
{
	return ns / 1000000u;
}

static uint64_t kill_shared_get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static char *kill_slot_buf(struct kill_state *st, int j)
{
	return st->local.p + (size_t)j * st->size;
}

static fi_addr_t kill_peer(struct kill_state *st)
{
	return st->ctx->peers[1 - st->ctx->rank];
}

/* ---- posting ------------------------------------------------------------- */

static ssize_t kill_post_initiator(struct kill_state *st, void *buf, uint64_t seq,
				   int j, void *fctx)
{
	struct ft_ctx *ctx = st->ctx;
	struct ft_rma_key *k = &st->keys[1 - ctx->rank];
	uint64_t addr = k->addr + (seq % st->nslot) * st->size;

	switch (st->op) {
	case KILL_TAGGED:
		ft_fill(buf, st->size, kill_seed(seq));
		return fi_tsend(ctx->ep, buf, st->size, st->local.desc, kill_peer(st),
				seq, fctx);
	case KILL_WRITE:
		ft_fill(buf, st->size, kill_seed(seq));
		return fi_writedata(ctx->ep, buf, st->size, st->local.desc, seq,
				    kill_peer(st), addr, k->key, fctx);
	case KILL_READ:
		memset(buf, 0xee, st->size);
		return fi_read(ctx->ep, buf, st->size, st->local.desc, kill_peer(st),
			       addr, k->key, fctx);
	case KILL_ATOMIC:
		return fi_fetch_atomic(ctx->ep, st->operand.p, KILL_ATOMIC_COUNT,
				       st->operand.desc, buf, st->local.desc,
				       kill_peer(st), k->addr + (uint64_t)j * st->size,
				       k->key, FI_UINT64, FI_SUM, fctx);
	}
	return -FI_EINVAL;
}

/* The probe: a send or write asks for FI_DELIVERY_COMPLETE, the level at
 * which a success claims the data reached the peer (with the default, a
 * send may complete once it sits in the peer's queue: fi_shm(7)); a read
 * or a fetching atomic completes with the peer's data anyway. */
static ssize_t kill_post_probe(struct kill_state *st, void *buf, uint64_t seq)
{
	struct ft_ctx *ctx = st->ctx;
	struct ft_rma_key *k = &st->keys[1 - ctx->rank];
	struct iovec iov = { .iov_base = buf, .iov_len = st->size };
	void *desc = st->local.desc;
	struct fi_rma_iov riov = {
		.addr = k->addr + (seq % st->nslot) * st->size,
		.len = st->size,
		.key = k->key,
	};
	struct fi_msg_tagged tmsg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.addr = kill_peer(st), .tag = seq, .context = &st->probe_fctx,
	};
	struct fi_msg_rma rmsg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.addr = kill_peer(st), .rma_iov = &riov, .rma_iov_count = 1,
		.context = &st->probe_fctx, .data = seq,
	};

	switch (st->op) {
	case KILL_TAGGED:
		ft_fill(buf, st->size, kill_seed(seq));
		return fi_tsendmsg(ctx->ep, &tmsg, FI_DELIVERY_COMPLETE | FI_COMPLETION);
	case KILL_WRITE:
		ft_fill(buf, st->size, kill_seed(seq));
		return fi_writemsg(ctx->ep, &rmsg, FI_DELIVERY_COMPLETE | FI_COMPLETION |
				   FI_REMOTE_CQ_DATA);
	default:
		return kill_post_initiator(st, buf, seq, 0, &st->probe_fctx);
	}
}

static ssize_t kill_post(struct kill_state *st, int j)
{
	struct kill_slot *s = &st->slot[j];
	ssize_t rc;

	s->seq = st->next_seq;
	if (st->initiator)
		rc = kill_post_initiator(st, kill_slot_buf(st, j), s->seq, j, &s->fctx);
	else
		rc = fi_trecv(st->ctx->ep, kill_slot_buf(st, j), st->size, st->local.desc,
			      kill_peer(st), s->seq, 0, &s->fctx);
	if (rc)
		return rc;
	s->busy = true;
	st->next_seq++;
	st->posted++;
	__atomic_store_n(&kill_sh->posted[st->ctx->rank], st->posted, __ATOMIC_RELEASE);
	return 0;
}

/* Keep the window full. Only initiators and receivers post. */
static int kill_refill(struct kill_state *st)
{
	if (!st->initiator && st->op != KILL_TAGGED)
		return 0;
	for (int j = 0; j < st->window; j++) {
		ssize_t rc;

		if (st->slot[j].busy || st->next_seq >= st->limit)
			continue;
		rc = kill_post(st, j);
		if (rc == -FI_EAGAIN)
			return 0;
		if (rc) {
			FT_ERR(st->ctx, "posting %s %llu: %s", kill_op_names[st->op],
			       (unsigned long long)st->next_seq, fi_strerror((int)-rc));
			return -1;
		}
	}
	return 0;
}

/* ---- completions ----------------------------------------------------------- */

/* The data of a successful operation on slot j. */
static int kill_check(struct kill_state *st, int j, const struct ft_comp *c)
{
	struct ft_ctx *ctx = st->ctx;
	struct kill_slot *s = &st->slot[j];
	char *buf = kill_slot_buf(st, j);
	uint64_t *res = (uint64_t *)(void *)buf;

	switch (st->op) {
	case KILL_TAGGED:
		if (st->initiator)
			return 0;
		if (c->e.len != st->size || c->e.tag != s->seq) {
			FT_ERR(ctx, "receive %llu: len %zu tag %llu",
			       (unsigned long long)s->seq, c->e.len,
			       (unsigned long long)c->e.tag);
			return -1;
		}
		return ft_verify(ctx, buf, st->size, kill_seed(s->seq), "received message");
	case KILL_READ:
		return ft_verify(ctx, buf, st->size,
				 KILL_READ_SEED + (uint32_t)(s->seq % st->nslot), "fi_read");
	case KILL_ATOMIC:
		/* one operation at a time per slot: the old values are exact */
		for (int e = 0; e < KILL_ATOMIC_COUNT; e++) {
			if (res[e] != s->nops * (uint64_t)(e + 1)) {
				FT_ERR(ctx, "fetch-add %llu on slot %d: element %d was "
				       "%llu, want %llu", (unsigned long long)s->seq, j, e,
				       (unsigned long long)res[e],
				       (unsigned long long)(s->nops * (uint64_t)(e + 1)));
				return -1;
			}
		}
		s->nops++;
		return 0;
	case KILL_WRITE:
		return 0;
	}
	return -1;
}

/* A write with remote CQ data landed in our region: the whole of it. */
static int kill_remote_write(struct kill_state *st, const struct ft_comp *c)
{
	uint64_t seq = c->e.data;

	if (!(c->e.flags & FI_REMOTE_WRITE) || seq >= st->nslot || st->seen[seq]) {
		FT_ERR(st->ctx, "remote completion flags 0x%llx data %llu",
		       (unsigned long long)c->e.flags, (unsigned long long)seq);
		return -1;
	}
	st->seen[seq] = 1;
	st->done++;
	return ft_verify(st->ctx, st->region.p + seq * st->size, st->size, kill_seed(seq),
			 "region a write announced");
}

static int kill_slot_of(struct kill_state *st, void *op_context)
{
	for (int j = 0; j < st->window; j++)
		if (op_context == &st->slot[j].fctx)
			return j;
	return -1;
}

/* An error after the kill: when, and which (distinct ones kept for the
 * report). It must name a cause (weft/util_peer.h's contract), not be an
 * unspecified one. */
static int kill_note_error(struct kill_state *st, int err)
{
	uint64_t now = ft_now_ns();
	int i;

	if (err <= 0 || err == FI_EOTHER) {
		FT_ERR(st->ctx, "an error completion without a cause: %d (%s)", err,
		       fi_strerror(err));
		return -1;
	}
	if (!st->errors++)
		st->t_first = now;
	st->t_last = now;
	for (i = 0; i < st->nerrs && st->errs[i] != err; i++)
		;
	if (i == st->nerrs && i < KILL_ERRS_MAX)
		st->errs[st->nerrs++] = err;
	return 0;
}

/* The probe's completion: it must not be a success. */
static int kill_handle_probe(struct kill_state *st, const struct ft_comp *c)
{
	st->probe_done = true;
	if (!c->is_err) {
		FT_ERR(st->ctx, "%s toward the dead peer succeeded",
		       kill_op_names[st->op]);
		return -1;
	}
	return kill_note_error(st, c->err.err);
}

/* One completion. Before the kill every one must succeed. */
static int kill_handle(struct kill_state *st, const struct ft_comp *c)
{
	struct ft_ctx *ctx = st->ctx;
	int j;

	if ((c->e.flags & FI_REMOTE_CQ_DATA) && !c->is_err)
		return kill_remote_write(st, c);
	if (c->e.op_context == &st->probe_fctx)
		return kill_handle_probe(st, c);
	j = kill_slot_of(st, c->e.op_context);
	if (j < 0 || !st->slot[j].busy) {
		FT_ERR(ctx, "completion of unknown context %p (flags 0x%llx, err %d)",
		       c->e.op_context, (unsigned long long)c->e.flags,
		       c->is_err ? c->err.err : 0);
		return -1;
	}
	st->slot[j].busy = false;
	if (c->is_err) {
		if (!st->t_kill) {
			FT_ERR(ctx, "%s %llu failed before any death: %s",
			       kill_op_names[st->op], (unsigned long long)st->slot[j].seq,
			       fi_strerror(c->err.err));
			return -1;
		}
		ft_dbg(ctx, "%s %llu: %s (prov_errno %d)", kill_op_names[st->op],
		       (unsigned long long)st->slot[j].seq, fi_strerror(c->err.err),
		       c->err.prov_errno);
		if (st->cancelling && c->err.err == FI_ECANCELED) {
			st->cancelled++;
			return 0;
		}
		return kill_note_error(st, c->err.err);
	}
	if (kill_check(st, j, c))
		return -1;
	if (st->t_kill)
		st->late_ok++;
	st->done++;
	__atomic_store_n(&kill_sh->completed[ctx->rank], st->done, __ATOMIC_RELEASE);
	return 0;
}

static int kill_drain(struct kill_state *st)
{
	struct ft_ctx *ctx = st->ctx;
	struct ft_comp c;
	int n;

	/* everything the CQ holds: ft_progress reads one error at a time */
	do {
		n = ctx->stash_n;
		ft_progress(ctx);
	} while (ctx->stash_n > n);
	while (ctx->stash_n) {
		c = ctx->stash[0];
		memmove(&ctx->stash[0], &ctx->stash[1],
			(size_t)--ctx->stash_n * sizeof(ctx->stash[0]));
		if (kill_handle(st, &c))
			return -1;
	}
	return 0;
}

static int kill_busy(struct kill_state *st, uint64_t below_seq)
{
	int n = 0;

	for (int j = 0; j < st->window; j++)
		n += st->slot[j].busy && st->slot[j].seq < below_seq;
	return n;
}

/* ---- the stream before the kill ------------------------------------------- */

/* Kill once traffic flowed and something is under way: the survivor's
 * own operations, or the victim's (which the survivor, a receiver or an
 * RMA target, learns from the shared page): not completed there, or not
 * arrived here (a send that completes at once, a write's announcement). */
static bool kill_now(struct kill_state *st)
{
	uint64_t posted, completed;

	if (st->initiator)
		return st->done >= st->kill_after && kill_busy(st, UINT64_MAX);
	posted = kill_shared_get(&kill_sh->posted[st->victim]);
	completed = kill_shared_get(&kill_sh->completed[st->victim]);
	return completed >= st->kill_after &&
	       (posted > completed ||
		((st->op == KILL_TAGGED || st->op == KILL_WRITE) && posted > st->done));
}

/* Both ranks: traffic until the survivor decides to kill (it returns) or
 * the victim is killed (it never returns). */
static int kill_stream(struct kill_state *st)
{
	uint64_t t0 = ft_now_ns(), limit_ns;
	unsigned spins = 0;

	limit_ns = (uint64_t)(st->survivor ? KILL_STREAM_S : KILL_VICTIM_S) * 1000000000ull;
	for (;;) {
		if (kill_drain(st) || kill_refill(st))
			return -1;
		if (st->survivor && kill_now(st))
			return 0;
		if (ft_now_ns() - t0 > limit_ns) {
			FT_ERR(st->ctx, "%s within %llu s (%llu operations)",
			       st->survivor ? "no kill: traffic too slow" : "never killed",
			       (unsigned long long)(limit_ns / 1000000000ull),
			       (unsigned long long)st->done);
			return -1;
		}
		ft_relax(&spins);
	}
}

/* ---- after the kill -------------------------------------------------------- */

/* SIGKILL the victim and wait until the kernel has torn it down (a zombie
 * or reaped: its memory and sockets are gone). */
static int kill_victim(struct kill_state *st)
{
	pid_t pid = kill_sh->pid[st->victim];
	char path[64], stat[256];
	uint64_t t0;

	if (pid <= 0 || kill(pid, SIGKILL)) {
		FT_ERR(st->ctx, "kill(%d): %s", (int)pid, strerror(errno));
		return -1;
	}
	st->t_kill = t0 = ft_now_ns();
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (;;) {
		FILE *f = fopen(path, "r");
		char *p = NULL;

		if (f) {
			p = fgets(stat, sizeof(stat), f);
			fclose(f);
			p = p ? strrchr(stat, ')') : NULL;
		}
		if (!p || (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')))
			return 0;
		if (ft_now_ns() - t0 > 2000000000ull) {
			FT_ERR(st->ctx, "the victim %d did not die within 2 s", (int)pid);
			return -1;
		}
		usleep(200);
	}
}

/* Progress until the operations of seq below `below` (or, with probe,
 * the probe) ended: 0, or 1 at the deadline, or -1 on a failed check.
 * Once a millisecond, as an application that computes between polls: a
 * provider must not count progress calls to find a dead peer. */
static int kill_until(struct kill_state *st, uint64_t below, bool probe,
		      uint64_t deadline_ns)
{
	uint64_t last = ft_now_ns(), now;

	while (probe ? !st->probe_done : kill_busy(st, below) > 0) {
		if (kill_drain(st))
			return -1;
		now = ft_now_ns();
		if (now - last > st->max_gap_ns)
			st->max_gap_ns = now - last;
		last = now;
		if (now > deadline_ns)
			return 1;
		usleep(KILL_POLL_US);
	}
	return 0;
}

/* Outstanding operations end: all of an initiator's; those of a receiver
 * the victim posted a message for (the others may match nothing ever).
 * Then the receives still posted must cancel: one that cannot was matched
 * to a message of the dead sender and hangs. */
static int kill_settle(struct kill_state *st)
{
	struct ft_ctx *ctx = st->ctx;
	uint64_t hard = st->t_kill + (uint64_t)KILL_HARD_MS * 1000000ull;
	int rc;

	if (!st->initiator && st->op != KILL_TAGGED)
		return 0;	/* an RMA target waits for nothing */
	rc = kill_until(st, st->initiator ? UINT64_MAX :
			kill_shared_get(&kill_sh->posted[st->victim]), false, hard);
	if (rc < 0 || (rc && st->initiator)) {
		if (rc > 0)
			FT_ERR(ctx, "%d operations outstanding at the kill never ended "
			       "(%d s)", kill_busy(st, UINT64_MAX), KILL_HARD_MS / 1000);
		return -1;
	}
	st->cancelling = true;
	for (int j = 0; j < st->window; j++) {
		ssize_t ret;

		if (!st->slot[j].busy)
			continue;
		ret = fi_cancel(&ctx->ep->fid, &st->slot[j].fctx);
		if (ret) {
			FT_ERR(ctx, "receive %llu neither ended nor cancels (%s): matched "
			       "to a message of the dead sender, it hangs",
			       (unsigned long long)st->slot[j].seq, fi_strerror((int)-ret));
			return -1;
		}
	}
	rc = kill_until(st, UINT64_MAX, false, ft_now_ns() + 1000000000ull);
	if (rc > 0)
		FT_ERR(ctx, "cancelled receives did not complete within 1 s");
	st->cancelling = false;
	return rc ? -1 : 0;
}

/* An operation posted toward the dead peer fails or errors. Returns the
 * ms from its post to its error, or -1. */
static int64_t kill_probe(struct kill_state *st)
{
	struct ft_ctx *ctx = st->ctx;
	uint64_t t0 = ft_now_ns(), hard = t0 + (uint64_t)KILL_HARD_MS * 1000000ull;
	ssize_t rc;
	int wait;

	/* every slot is free now: the probe borrows slot 0's buffer */
	while ((rc = kill_post_probe(st, kill_slot_buf(st, 0), st->nslot - 1)) ==
	       -FI_EAGAIN) {
		if (kill_drain(st))
			return -1;
		if (ft_now_ns() > hard) {
			FT_ERR(ctx, "%s toward the dead peer refused with -FI_EAGAIN "
			       "for %d s", kill_op_names[st->op], KILL_HARD_MS / 1000);
			return -1;
		}
	}
	if (rc) {
		st->probe_at_post = true;
		if (kill_note_error(st, (int)-rc))
			return -1;
		return (int64_t)kill_ms(ft_now_ns() - t0);
	}
	wait = kill_until(st, 0, true, hard);
	if (wait > 0)
		FT_ERR(ctx, "%s toward the dead peer did not end within %d s",
		       kill_op_names[st->op], KILL_HARD_MS / 1000);
	return wait ? -1 : (int64_t)kill_ms(st->t_last - t0);
}

/* A target of atomics: no operation half applied (every element of a slot
 * moved together). */
static int kill_check_atomic_region(struct kill_state *st)
{
	if (st->op != KILL_ATOMIC || st->initiator)
		return 0;
	for (int j = 0; j < st->window; j++) {
		const uint64_t *v = (const void *)(st->region.p + (size_t)j * st->size);

		for (int e = 1; e < KILL_ATOMIC_COUNT; e++)
			if (v[e] != v[0] * (uint64_t)(e + 1)) {
				FT_ERR(st->ctx, "slot %d: element %d is %llu, element 0 "
				       "%llu: an atomic was half applied", j, e,
				       (unsigned long long)v[e], (unsigned long long)v[0]);
				return -1;
			}
	}
	return 0;
}

/* ---- the case --------------------------------------------------------------- */

static int kill_setup(struct kill_state *st)
{
	struct ft_ctx *ctx = st->ctx;
	size_t region;

	if (st->op == KILL_ATOMIC) {
		st->size = KILL_ATOMIC_COUNT * sizeof(uint64_t);
		st->window = KILL_WINDOW_MAX;
		st->nslot = (uint64_t)st->window;
		st->kill_after = 256;
	} else if (st->size <= 4096) {
		st->window = KILL_WINDOW_MAX;
		st->nslot = 1024;
		st->kill_after = 256;
	} else if (st->size <= 256 * 1024) {
		st->window = 8;
		st->nslot = 64;
		st->kill_after = 16;
	} else {
		st->window = 2;
		st->nslot = 8;
		st->kill_after = 2;
	}
	/* a write's region is never written twice, so that its target can
	 * check it whenever the announcement comes */
	st->limit = st->op == KILL_WRITE ? st->nslot : UINT64_MAX;
	region = (size_t)st->nslot * st->size;
	st->seen = calloc(st->nslot, 1);
	if (!st->seen ||
	    ft_buf_alloc(ctx, &st->local, (size_t)st->window * st->size,
			 FI_SEND | FI_RECV | FI_READ | FI_WRITE) ||
	    (st->op == KILL_ATOMIC &&
	     ft_buf_alloc(ctx, &st->operand, st->size, FI_SEND | FI_WRITE)) ||
	    ft_buf_alloc(ctx, &st->region, region,
			 FI_REMOTE_READ | FI_REMOTE_WRITE) ||
	    ft_rma_key_exchange(ctx, st->region.p, region, st->region.mr, st->keys))
		return -1;
	for (int e = 0; e < KILL_ATOMIC_COUNT && st->op == KILL_ATOMIC; e++)
		((uint64_t *)(void *)st->operand.p)[e] = (uint64_t)(e + 1);
	if (st->op == KILL_READ)
		for (uint64_t s = 0; s < st->nslot; s++)
			ft_fill(st->region.p + s * st->size, st->size,
				KILL_READ_SEED + (uint32_t)s);
	kill_sh->pid[ctx->rank] = getpid();
	return ft_barrier_progress(ctx);
}

static int kill_close(struct kill_state *st, uint64_t *close_ms)
{
	struct ft_ctx *ctx = st->ctx;
	uint64_t t0;

	ft_watchdog(ctx, 10, "closing after the peer's death");
	t0 = ft_now_ns();
	if (FT_CHECK(ctx, fi_close(&ctx->ep->fid)))
		return -1;
	ctx->ep = NULL;
	ft_buf_free(&st->local);
	ft_buf_free(&st->operand);
	ft_buf_free(&st->region);
	ft_close(ctx);
	*close_ms = kill_ms(ft_now_ns() - t0);
	ft_watchdog_off();
	return 0;
}

static int kill_parse(struct kill_state *st)
{
	const char *x = st->ctx->opts->xopt ? st->ctx->opts->xopt : "tagged,target";
	char op[16] = "", side[16] = "";
	int i = 0;

	if (sscanf(x, "%15[a-z],%15s", op, side) == 2)
		while (i < 4 && strcmp(op, kill_op_names[i]))
			i++;
	if (i == 4 || (strcmp(side, "initiator") && strcmp(side, "target"))) {
		FT_ERR(st->ctx, "-x wants OP,SIDE: OP tagged, write, read or atomic; "
		       "SIDE initiator or target (the one that dies), not '%s'", x);
		return -1;
	}
	st->op = (enum kill_op)i;
	st->victim = strcmp(side, "initiator") ? 1 : 0;
	st->survivor = st->ctx->rank != st->victim;
	st->initiator = st->ctx->rank == 0;
	st->size = st->ctx->opts->max_size ? st->ctx->opts->max_size : 64;
	return 0;
}

/* The survivor's part once the stream ran: kill, watch, close, report. */
static int kill_survive(struct kill_state *st)
{
	struct ft_ctx *ctx = st->ctx;
	int outstanding = kill_busy(st, UINT64_MAX), op_errors;
	uint64_t close_ms = 0, first, last, op_last, before;
	char errs[KILL_ERRS_MAX * 48] = "";
	int64_t probe_ms;

	/* the traffic before the kill, as the side that saw it counted it */
	before = st->done > kill_sh->completed[st->victim] ? st->done :
		 kill_sh->completed[st->victim];
	if (kill_victim(st) || kill_settle(st))
		return FT_FAIL;
	op_errors = st->errors;
	op_last = op_errors ? kill_ms(st->t_last - st->t_kill) : 0;
	probe_ms = kill_probe(st);
	if (probe_ms < 0 || kill_check_atomic_region(st))
		return FT_FAIL;
	first = kill_ms(st->t_first - st->t_kill);
	last = kill_ms(st->t_last - st->t_kill);
	if (kill_close(st, &close_ms))
		return FT_FAIL;
	for (int i = 0; i < st->nerrs; i++)
		snprintf(errs + strlen(errs), sizeof(errs) - strlen(errs), "%s%s",
			 i ? ", " : "", fi_strerror(st->errs[i]));
	printf("kill: first %llu ms, last %llu ms, probe %lld ms, close %llu ms "
	       "(%llu done before; %d outstanding: %d errors, %d ok, %d cancelled; "
	       "probe %s; %s)\n", (unsigned long long)first,
	       (unsigned long long)last, (long long)probe_ms,
	       (unsigned long long)close_ms, (unsigned long long)before, outstanding,
	       op_errors, st->late_ok, st->cancelled,
	       st->probe_at_post ? "refused at post" : "error completion", errs);
	/* the probe's error counts from its post, the others' from the kill */
	if (op_last > KILL_BOUND_MS || probe_ms > KILL_BOUND_MS) {
		FT_ERR(ctx, "%s failed %llu ms after %s (bound %d ms; this process's "
		       "polls were up to %llu ms apart)", op_last > KILL_BOUND_MS ?
		       "an outstanding operation" : "the operation posted after the death",
		       (unsigned long long)(op_last > KILL_BOUND_MS ? op_last :
					    (uint64_t)probe_ms),
		       op_last > KILL_BOUND_MS ? "the kill" : "its post", KILL_BOUND_MS,
		       (unsigned long long)kill_ms(st->max_gap_ns));
		return FT_FAIL;
	}
	if (close_ms > KILL_CLOSE_MS) {
		FT_ERR(ctx, "closing took %llu ms (bound %d ms)",
		       (unsigned long long)close_ms, KILL_CLOSE_MS);
		return FT_FAIL;
	}
	return FT_PASS;
}

static int kill_run(struct ft_ctx *ctx)
{
	struct kill_state st = { .ctx = ctx };
	int rc;

	if (kill_parse(&st))
		return FT_FAIL;
	rc = ft_open(ctx);
	if (rc)
		goto close;
	rc = FT_FAIL;
	if (kill_setup(&st) || kill_stream(&st))
		goto close;
	/* only the survivor gets here */
	rc = kill_survive(&st);
close:
	ft_buf_free(&st.local);
	ft_buf_free(&st.operand);
	ft_buf_free(&st.region);
	free(st.seen);
	ft_close(ctx);
	return rc;
}

static void kill_hints(struct ft_ctx *ctx, struct fi_info *h)
{
	const char *x = ctx->opts->xopt ? ctx->opts->xopt : "";

	if (!strncmp(x, "tagged", 6))
		h->caps = FI_TAGGED;
	else if (!strncmp(x, "atomic", 6))
		h->caps = FI_ATOMIC;
	else
		h->caps = FI_RMA;
	/* both ranks can be either end of the probe */
	if (!(h->caps & FI_TAGGED))
		h->caps |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
}

static const struct ft_test test = {
	.name = "ft_kill",
	.desc = "a peer SIGKILLed mid-transfer: error completions in bounded time, "
		"a prompt close (-x OP,SIDE: tagged|write|read|atomic, "
		"initiator|target dies; -m SIZE)",
	.nranks = 2,
	.min_ranks = 2,
	.hints = kill_hints,
	.run = kill_run,
	.rank_may_die = true,
};

int main(int argc, char **argv)
{
	kill_sh = mmap(NULL, sizeof(*kill_sh), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (kill_sh == MAP_FAILED) {
		perror("ft_kill: mmap");
		return FT_FAIL;
	}
	return ft_main(argc, argv, &test);
}
