/* SPDX-License-Identifier: MIT */
/*
 * The fi_ops_collective entry points: argument checks, the choice of
 * algorithms by size and member count (settings FI_COLL_*, fi_coll(7)),
 * the phases of each operation, and fi_query_collective.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_atomic.h"
#include "util_coll_priv.h"
#include <string.h>

/* What a call asks for, checked. */
struct uc_call {
	struct util_ep *ep;
	struct util_coll_group *grp;
	enum fi_collective_op coll;
	const void *in;
	void *out;
	size_t count;			/* as the call's count */
	size_t esize;
	enum fi_datatype dt;
	enum fi_op op;
	uint32_t root;
	uint64_t flags;
	void *context;
};

/* ---- building operations ------------------------------------------------- */

static struct util_coll_phase *uc_phase_add(struct util_coll_op *op,
					    const struct uc_call *c,
					    uint8_t alg)
{
	struct util_coll_phase *ph = &op->ph[op->nph++];

	memset(ph, 0, sizeof(*ph));
	ph->alg = alg;
	ph->n = c->grp->n;
	ph->me = c->grp->rank;
	ph->root = c->root;
	ph->count = c->count;
	ph->esize = c->esize;
	ph->chunk = util_coll_params.chunk;
	ph->window = util_coll_params.window;
	ph->in = UC_BUF_IN;
	ph->out = UC_BUF_OUT;
	ph->acc = UC_BUF_OUT;
	return ph;
}

/* A phase that does nothing here (its index keeps the tags of the
 * following phases equal at every rank). */
static void uc_phase_skip(struct util_coll_op *op, const struct uc_call *c)
{
	struct util_coll_phase *ph = uc_phase_add(op, c, UC_ALG_LOCAL);

	ph->nact = 0;
}

static void uc_phase_copy(struct util_coll_op *op, const struct uc_call *c,
			  uint8_t dbuf, size_t doff, uint8_t sbuf,
			  size_t soff, size_t len)
{
	struct util_coll_phase *ph = uc_phase_add(op, c, UC_ALG_LOCAL);

	ph->pre = true;
	ph->nact = 1;
	ph->act.kind = UC_ACT_COPY;
	ph->act.dst = (struct util_coll_ref){ dbuf, doff, len };
	ph->act.a = (struct util_coll_ref){ sbuf, soff, len };
}

static bool uc_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
	const uint8_t *x = a, *y = b;

	return alen && blen && x < y + blen && y < x + alen;
}

static uint8_t uc_allreduce_alg(size_t bytes)
{
	switch (util_coll_params.allreduce_alg) {
	case UC_FORCE_RD:
		return UC_ALG_ALLREDUCE_RD;
	case UC_FORCE_RAB:
		return UC_ALG_ALLREDUCE_RAB;
	case UC_FORCE_RING:
		return UC_ALG_ALLREDUCE_RING;
	}
	if (bytes <= util_coll_params.rd_max)
		return UC_ALG_ALLREDUCE_RD;
	return bytes < util_coll_params.ring_min ? UC_ALG_ALLREDUCE_RAB :
						   UC_ALG_ALLREDUCE_RING;
}

static uint8_t uc_bcast_alg(const struct uc_call *c, size_t bytes)
{
	return bytes >= util_coll_params.bcast_scatter_min && c->grp->n > 2 ?
	       UC_ALG_BCAST_SCATTER_RING : UC_ALG_BCAST_BINOMIAL;
}

static bool uc_hier(const struct util_coll_group *grp)
{
	if (util_coll_params.hier == UC_HIER_OFF || grp->nhosts < 2)
		return false;
	/* auto: worth it when some host has several members */
	return util_coll_params.hier == UC_HIER_ON || grp->nhosts < grp->n;
}

/* Reduce within my host to its leader, allreduce among the leaders,
 * broadcast within the host (all in out). */
static void uc_build_hier(struct util_coll_op *op, const struct uc_call *c,
			  size_t bytes)
{
	struct util_coll_group *g = c->grp;
	struct util_coll_phase *ph;

	ph = uc_phase_add(op, c, UC_ALG_REDUCE_BINOMIAL);
	ph->n = g->nlocal;
	ph->me = g->local_me;
	ph->map = g->local;
	ph->root = 0;
	if (g->local_me == 0) {
		ph = uc_phase_add(op, c, uc_allreduce_alg(bytes));
		ph->n = g->nhosts;
		ph->me = g->host_me;
		ph->map = g->leaders;
		ph->in = UC_BUF_OUT;
	} else {
		uc_phase_skip(op, c);
	}
	ph = uc_phase_add(op, c, uc_bcast_alg(c, bytes));
	ph->n = g->nlocal;
	ph->me = g->local_me;
	ph->map = g->local;
	ph->root = 0;
	ph->count = c->count;
}

static void uc_build_allreduce(struct util_coll_op *op, const struct uc_call *c)
{
	size_t bytes = c->count * c->esize;
	struct util_coll_phase *ph;

	if (c->op == FI_ATOMIC_WRITE) {
		/* broadcast semantics: member 0's data everywhere */
		if (c->grp->rank == 0)
			uc_phase_copy(op, c, UC_BUF_OUT, 0, UC_BUF_IN, 0, bytes);
		ph = uc_phase_add(op, c, uc_bcast_alg(c, bytes));
		ph->root = 0;
		return;
	}
	if (uc_hier(c->grp)) {
		uc_build_hier(op, c, bytes);
		return;
	}
	uc_phase_add(op, c, uc_allreduce_alg(bytes));
}

static void uc_build_reduce(struct util_coll_op *op, const struct uc_call *c,
			    size_t *tmp_base)
{
	size_t bytes = c->count * c->esize;
	struct util_coll_phase *ph;

	if (c->op == FI_ATOMIC_WRITE) {
		ph = uc_phase_add(op, c, UC_ALG_SEND1);
		ph->src = 0;
		return;
	}
	ph = uc_phase_add(op, c, bytes >= util_coll_params.ring_min ?
				 UC_ALG_REDUCE_RING : UC_ALG_REDUCE_BINOMIAL);
	if (c->grp->rank != c->root) {
		/* partial sums of non-roots live in scratch */
		ph->acc = UC_BUF_TMP;
		ph->acc_off = 0;
		*tmp_base = bytes;
	}
}

/* An input the algorithm reads while it writes the result, overlapping
 * it: copied to scratch first. */
static void uc_input_to_tmp(struct util_coll_op *op, const struct uc_call *c,
			    size_t in_bytes, size_t *tmp_base)
{
	uc_phase_copy(op, c, UC_BUF_TMP, 0, UC_BUF_IN, 0, in_bytes);
	*tmp_base = in_bytes;
}

static int uc_build(struct util_coll_op *op, const struct uc_call *c)
{
	uint32_t n = c->grp->n;
	size_t b = c->count * c->esize, tmp_base = 0, tmp = 0;
	bool in_tmp = false;
	struct util_coll_phase *ph;
	uint32_t i;
	uint8_t tag;

	op->buf[UC_BUF_IN] = (void *)c->in;
	op->buf[UC_BUF_OUT] = c->out;
	switch (c->coll) {
	case FI_BARRIER:
		uc_phase_add(op, c, UC_ALG_BARRIER_DISS);
		break;
	case FI_BROADCAST:
		uc_phase_add(op, c, uc_bcast_alg(c, b));
		break;
	case FI_ALLREDUCE:
		uc_build_allreduce(op, c);
		break;
	case FI_REDUCE:
		uc_build_reduce(op, c, &tmp_base);
		break;
	case FI_ALLGATHER:
		uc_phase_add(op, c, b * n <= util_coll_params.allgather_ring_min ?
				 UC_ALG_ALLGATHER_BRUCK : UC_ALG_ALLGATHER_RING);
		break;
	case FI_REDUCE_SCATTER:
		if (c->op == FI_ATOMIC_WRITE) {
			ph = uc_phase_add(op, c, b <= util_coll_params.tree_max ?
					  UC_ALG_SCATTER_BINOMIAL :
					  UC_ALG_SCATTER_LINEAR);
			ph->root = 0;
			in_tmp = uc_overlap(c->in, b * n, c->out, b) &&
				 ph->alg == UC_ALG_SCATTER_LINEAR;
			break;
		}
		in_tmp = uc_overlap(c->in, b * n, c->out, b);
		uc_phase_add(op, c, UC_ALG_REDSCAT_PAIRWISE);
		break;
	case FI_ALLTOALL:
		in_tmp = uc_overlap(c->in, b * n, c->out, b * n);
		uc_phase_add(op, c, UC_ALG_ALLTOALL_PAIRWISE);
		break;
	case FI_SCATTER:
		ph = uc_phase_add(op, c, b <= util_coll_params.tree_max ?
				  UC_ALG_SCATTER_BINOMIAL :
				  UC_ALG_SCATTER_LINEAR);
		in_tmp = c->grp->rank == c->root &&
			 ph->alg == UC_ALG_SCATTER_LINEAR &&
			 uc_overlap(c->in, b * n, c->out, b);
		break;
	case FI_GATHER:
		uc_phase_add(op, c, b <= util_coll_params.tree_max ?
			     UC_ALG_GATHER_BINOMIAL : UC_ALG_GATHER_LINEAR);
		break;
	default:
		return -FI_EINVAL;
	}
	if (in_tmp) {
		/* the copy goes first; the algorithm reads it from tmp */
		struct util_coll_phase alg = op->ph[op->nph - 1];

		op->nph--;
		uc_input_to_tmp(op, c, b * n, &tmp_base);
		op->ph[op->nph] = alg;
		op->ph[op->nph].in = UC_BUF_TMP;
		op->nph++;
	}
	for (i = 0, tag = 0; i < op->nph; i++) {
		ph = &op->ph[i];
		ph->tag_phase = tag;
		if (!ph->pre)
			tag++;
		ph->tmp_off = tmp_base;
		if (util_coll_phase_setup(ph)) {
			FI_WARN(uc_prov(c->ep), FI_LOG_EP_DATA,
				"collective: %zu elements over %u members need "
				"too many rounds\n", c->count, n);
			return -FI_EINVAL;
		}
		if (ph->tmp_len > tmp)
			tmp = ph->tmp_len;
	}
	return uc_op_tmp(op, tmp_base + tmp);
}

/* ---- checks -------------------------------------------------------------- */

static bool uc_reduces(enum fi_collective_op coll)
{
	return coll == FI_ALLREDUCE || coll == FI_REDUCE ||
	       coll == FI_REDUCE_SCATTER;
}

static bool uc_rooted(enum fi_collective_op coll)
{
	return coll == FI_BROADCAST || coll == FI_REDUCE ||
	       coll == FI_SCATTER || coll == FI_GATHER;
}

static int uc_check_root(struct uc_call *c, fi_addr_t root_addr)
{
	for (uint32_t r = 0; r < c->grp->n; r++) {
		if (c->grp->members[r] == root_addr) {
			c->root = r;
			return 0;
		}
	}
	/* This endpoint's own address may be absent from its AV lookups
	 * of other members, but it is a member. */
	FI_WARN(uc_prov(c->ep), FI_LOG_EP_DATA,
		"collective: root fi_addr %llu is not a member of the group\n",
		(unsigned long long)root_addr);
	return -FI_EINVAL;
}

/* Bytes of the input and the result at this rank. */
static void uc_call_sizes(const struct uc_call *c, size_t *in, size_t *out)
{
	size_t b = c->count * c->esize, n = c->grp->n;
	bool root = c->grp->rank == c->root;

	*in = *out = 0;
	switch (c->coll) {
	case FI_BROADCAST:
		*out = b;
		break;
	case FI_ALLREDUCE:
		*in = *out = b;
		break;
	case FI_REDUCE:
		*in = b;
		*out = root ? b : 0;
		break;
	case FI_ALLGATHER:
		*in = b;
		*out = b * n;
		break;
	case FI_REDUCE_SCATTER:
		*in = (c->op != FI_ATOMIC_WRITE || c->grp->rank == 0) ? b * n : 0;
		*out = b;
		break;
	case FI_ALLTOALL:
		*in = *out = b * n;
		break;
	case FI_SCATTER:
		*in = root ? b * n : 0;
		*out = b;
		break;
	case FI_GATHER:
		*in = b;
		*out = root ? b * n : 0;
		break;
	default:
		break;
	}
}

static int uc_check_call(struct uc_call *c, fi_addr_t coll_addr,
			 fi_addr_t root_addr)
{
	size_t in, out;
	int ret;

	c->grp = uc_group_of(c->ep, coll_addr);
	if (!c->grp) {
		FI_WARN(uc_prov(c->ep), FI_LOG_EP_DATA,
			"collective: coll_addr 0x%llx is no group of this "
			"endpoint\n", (unsigned long long)coll_addr);
		return -FI_EINVAL;
	}
	if (c->grp->state == UC_GRP_JOINING)
		return -FI_EAGAIN;
	if (c->coll != FI_BARRIER) {
		c->esize = util_atomic_any_size(c->dt);
		if (!c->esize) {
			FI_WARN(uc_prov(c->ep), FI_LOG_EP_DATA,
				"collective: datatype %d is not supported\n",
				c->dt);
			return -FI_EINVAL;
		}
		size_t bytes;

		if (__builtin_mul_overflow(c->count, c->esize, &bytes) ||
		    __builtin_mul_overflow(bytes, (size_t)c->grp->n, &bytes)) {
			FI_WARN(uc_prov(c->ep), FI_LOG_EP_DATA,
				"collective: count %zu overflows\n", c->count);
			return -FI_EINVAL;
		}
	}
	if (uc_reduces(c->coll) && c->op != FI_ATOMIC_WRITE) {
		ret = util_atomic_reduce_valid(c->op, c->dt);
		if (ret) {
			char op[32], dt[48];

			FI_WARN(uc_prov(c->ep), FI_LOG_EP_DATA,
				"collective: no reduction %s of %s\n",
				fi_tostr_r(op, sizeof(op), &c->op,
					   FI_TYPE_ATOMIC_OP),
				fi_tostr_r(dt, sizeof(dt), &c->dt,
					   FI_TYPE_ATOMIC_TYPE));
			return ret == -FI_EINVAL ? -FI_EINVAL : -FI_EOPNOTSUPP;
		}
	}
	if (uc_rooted(c->coll)) {
		ret = uc_check_root(c, root_addr);
		if (ret)
			return ret;
	}
	uc_call_sizes(c, &in, &out);
	if ((in && !c->in) || (out && !c->out)) {
		FI_WARN(uc_prov(c->ep), FI_LOG_EP_DATA,
			"collective: NULL buffer for %zu bytes\n",
			!c->in ? in : out);
		return -FI_EINVAL;
	}
	return 0;
}

/* ---- posting ------------------------------------------------------------- */

static ssize_t uc_post(struct uc_call *c, fi_addr_t coll_addr,
		       fi_addr_t root_addr)
{
	struct util_ep *ep = c->ep;
	struct util_coll_op *op;
	ssize_t ret;

	util_lock_acquire(&ep->lock);
	ret = uc_check_call(c, coll_addr, root_addr);
	if (ret)
		goto unlock;
	op = uc_op_new(c->grp, false);
	if (!op) {
		ret = -FI_EAGAIN;
		goto unlock;
	}
	op->context = c->context;
	op->rop = c->op;
	op->dt = c->dt;
	op->want_comp = util_ep_tx_wants_comp(ep, c->flags | ep->tx_op_flags);
	if (c->grp->state == UC_GRP_FAILED) {
		/* the operation ends at once, with the group's error */
		op->failed = true;
		op->err = c->grp->err;
	} else {
		ret = uc_build(op, c);
		if (ret) {
			/* nothing was sent: no completion, and the next
			 * call takes this sequence number */
			op->silent = true;
			op->failed = true;
			op->err = (int)-ret;
			uc_op_advance(op);
			c->grp->next_seq--;
			goto unlock;
		}
	}
	uc_op_advance(op);
	uc_run_ready(ep->coll);
unlock:
	util_lock_release(&ep->lock);
	return ret;
}

static ssize_t uc_barrier2(struct fid_ep *ep, fi_addr_t coll_addr,
			   uint64_t flags, void *context)
{
	struct uc_call c = { .ep = to_util_ep(ep), .coll = FI_BARRIER,
			     .flags = flags, .context = context,
			     .dt = FI_VOID };

	return uc_post(&c, coll_addr, FI_ADDR_NOTAVAIL);
}

static ssize_t uc_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
			  void *context)
{
	return uc_barrier2(ep, coll_addr, 0, context);
}

static ssize_t uc_broadcast(struct fid_ep *ep, void *buf, size_t count,
			    void *desc, fi_addr_t coll_addr, fi_addr_t root,
			    enum fi_datatype dt, uint64_t flags, void *context)
{
	struct uc_call c = { .ep = to_util_ep(ep), .coll = FI_BROADCAST,
			     .out = buf, .count = count, .dt = dt,
			     .flags = flags, .context = context };

	(void)desc;
	return uc_post(&c, coll_addr, root);
}

static ssize_t uc_alltoall(struct fid_ep *ep, const void *buf, size_t count,
			   void *desc, void *result, void *result_desc,
			   fi_addr_t coll_addr, enum fi_datatype dt,
			   uint64_t flags, void *context)
{
	struct uc_call c = { .ep = to_util_ep(ep), .coll = FI_ALLTOALL,
			     .in = buf, .out = result, .count = count,
			     .dt = dt, .flags = flags, .context = context };

	(void)desc;
	(void)result_desc;
	return uc_post(&c, coll_addr, FI_ADDR_NOTAVAIL);
}

static ssize_t uc_allreduce(struct fid_ep *ep, const void *buf, size_t count,
			    void *desc, void *result, void *result_desc,
			    fi_addr_t coll_addr, enum fi_datatype dt,
			    enum fi_op op, uint64_t flags, void *context)
{
	struct uc_call c = { .ep = to_util_ep(ep), .coll = FI_ALLREDUCE,
			     .in = buf, .out = result, .count = count,
			     .dt = dt, .op = op, .flags = flags,
			     .context = context };

	(void)desc;
	(void)result_desc;
	return uc_post(&c, coll_addr, FI_ADDR_NOTAVAIL);
}

static ssize_t uc_allgather(struct fid_ep *ep, const void *buf, size_t count,
			    void *desc, void *result, void *result_desc,
			    fi_addr_t coll_addr, enum fi_datatype dt,
			    uint64_t flags, void *context)
{
	struct uc_call c = { .ep = to_util_ep(ep), .coll = FI_ALLGATHER,
			     .in = buf, .out = result, .count = count,
			     .dt = dt, .flags = flags, .context = context };

	(void)desc;
	(void)result_desc;
	return uc_post(&c, coll_addr, FI_ADDR_NOTAVAIL);
}

static ssize_t uc_reduce_scatter(struct fid_ep *ep, const void *buf,
				 size_t count, void *desc, void *result,
				 void *result_desc, fi_addr_t coll_addr,
				 enum fi_datatype dt, enum fi_op op,
				 uint64_t flags, void *context)
{
	struct uc_call c = { .ep = to_util_ep(ep), .coll = FI_REDUCE_SCATTER,
			     .in = buf, .out = result, .count = count,
			     .dt = dt, .op = op, .flags = flags,
			     .context = context };

	(void)desc;
	(void)result_desc;
	return uc_post(&c, coll_addr, FI_ADDR_NOTAVAIL);
}

static ssize_t uc_reduce(struct fid_ep *ep, const void *buf, size_t count,
			 void *desc, void *result, void *result_desc,
			 fi_addr_t coll_addr, fi_addr_t root,
			 enum fi_datatype dt, enum fi_op op, uint64_t flags,
			 void *context)
{
	struct uc_call c = { .ep = to_util_ep(ep), .coll = FI_REDUCE,
			     .in = buf, .out = result, .count = count,
			     .dt = dt, .op = op, .flags = flags,
			     .context = context };

	(void)desc;
	(void)result_desc;
	return uc_post(&c, coll_addr, root);
}

static ssize_t uc_scatter(struct fid_ep *ep, const void *buf, size_t count,
			  void *desc, void *result, void *result_desc,
			  fi_addr_t coll_addr, fi_addr_t root,
			  enum fi_datatype dt, uint64_t flags, void *context)
{
	struct uc_call c = { .ep = to_util_ep(ep), .coll = FI_SCATTER,
			     .in = buf, .out = result, .count = count,
			     .dt = dt, .flags = flags, .context = context };

	(void)desc;
	(void)result_desc;
	return uc_post(&c, coll_addr, root);
}

static ssize_t uc_gather(struct fid_ep *ep, const void *buf, size_t count,
			 void *desc, void *result, void *result_desc,
			 fi_addr_t coll_addr, fi_addr_t root,
			 enum fi_datatype dt, uint64_t flags, void *context)
{
	struct uc_call c = { .ep = to_util_ep(ep), .coll = FI_GATHER,
			     .in = buf, .out = result, .count = count,
			     .dt = dt, .flags = flags, .context = context };

	(void)desc;
	(void)result_desc;
	return uc_post(&c, coll_addr, root);
}

/* fi_collective msg form: one buffer each way. */
static ssize_t uc_msg(struct fid_ep *ep, const struct fi_msg_collective *msg,
		      struct fi_ioc *resultv, void **result_desc,
		      size_t result_count, uint64_t flags)
{
	struct uc_call c = { .ep = to_util_ep(ep), .flags = flags };

	(void)result_desc;
	if (!msg || msg->iov_count > 1 || result_count > 1 ||
	    (msg->iov_count && !msg->msg_iov) || (result_count && !resultv)) {
		FI_WARN(uc_prov(to_util_ep(ep)), FI_LOG_EP_DATA,
			"fi_collective msg: one buffer each way at most\n");
		return -FI_EINVAL;
	}
	c.coll = msg->coll;
	c.dt = msg->datatype;
	c.op = msg->op;
	c.context = msg->context;
	if (msg->iov_count) {
		c.in = msg->msg_iov[0].addr;
		c.count = msg->msg_iov[0].count;
	}
	c.out = result_count ? resultv[0].addr : NULL;
	if (c.coll == FI_BROADCAST)
		c.out = (void *)c.in;
	if (c.coll > FI_GATHER) {
		FI_WARN(uc_prov(to_util_ep(ep)), FI_LOG_EP_DATA,
			"fi_collective msg: unknown collective %d\n", c.coll);
		return -FI_EINVAL;
	}
	return uc_post(&c, msg->coll_addr, msg->root_addr);
}

const struct fi_ops_collective util_coll_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = uc_barrier,
	.broadcast = uc_broadcast,
	.alltoall = uc_alltoall,
	.allreduce = uc_allreduce,
	.allgather = uc_allgather,
	.reduce_scatter = uc_reduce_scatter,
	.reduce = uc_reduce,
	.scatter = uc_scatter,
	.gather = uc_gather,
	.msg = uc_msg,
	.barrier2 = uc_barrier2,
};

/* ---- fi_query_collective ------------------------------------------------- */

int util_coll_query(struct fid_domain *domain, enum fi_collective_op coll,
		    struct fi_collective_attr *attr, uint64_t flags)
{
	size_t size;

	(void)domain;
	if (!attr || attr->mode || (flags & ~(uint64_t)FI_SCATTER)) {
		FI_WARN(util_domain_prov(domain ? to_util_domain(domain) :
						     NULL), FI_LOG_DOMAIN,
			"fi_query_collective: NULL attr, mode or flags set\n");
		return -FI_EINVAL;
	}
	if (coll == FI_REDUCE && (flags & FI_SCATTER))
		coll = FI_REDUCE_SCATTER;
	if ((unsigned)coll > FI_GATHER)
		return -FI_EINVAL;
	attr->max_members = UC_MAX_MEMBERS;
	if (coll == FI_BARRIER) {
		attr->datatype_attr.size = 0;
		attr->datatype_attr.count = 0;
		return 0;
	}
	size = util_atomic_any_size(attr->datatype);
	if (!size)
		return -FI_EOPNOTSUPP;
	if (uc_reduces(coll) && attr->op != FI_ATOMIC_WRITE &&
	    util_atomic_reduce_valid(attr->op, attr->datatype))
		return -FI_EOPNOTSUPP;
	attr->datatype_attr.size = size;
	attr->datatype_attr.count = SIZE_MAX / size / UC_MAX_MEMBERS;
	return 0;
}
