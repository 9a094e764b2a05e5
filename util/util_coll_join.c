/* SPDX-License-Identifier: MIT */
/*
 * Collective groups: fi_join_collective (an allreduce of the members'
 * free-gid masks, util_coll.c says why), the hosts of the members, the
 * group's fid_mc, and fi_close of it.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_av.h"
#include "weft/util_av_set.h"
#include "weft/util_eq.h"
#include "util_coll_priv.h"
#include <stdlib.h>
#include <string.h>

static void uc_join_start(struct util_coll_ep *cep);

static struct util_coll_ep *uc_cep_get(struct util_ep *ep)
{
	struct util_coll_ep *cep = ep->coll;

	if (cep)
		return cep;
	cep = calloc(1, sizeof(*cep));
	if (!cep)
		return NULL;
	if (util_pool_init(&cep->op_pool, sizeof(struct util_coll_op), 64, 2,
			   4, 0, uc_op_init_obj, NULL)) {
		free(cep);
		return NULL;
	}
	cep->ep = ep;
	cep->xp = ep->coll_xport;
	cep->gid_used[0] = 1;		/* gid 0 is the join's */
	ep->coll = cep;
	return cep;
}

void uc_group_free(struct util_coll_group *grp)
{
	free(grp->members);
	free(grp->local);
	free(grp->leaders);
	free(grp);
}

/* Ranks of my host and the leader (lowest rank) of each host, by the
 * provider's host keys (or FI_COLL_HOST_RANKS consecutive ranks). */
static int uc_group_hosts(struct util_coll_group *grp)
{
	struct util_coll_ep *cep = grp->cep;
	uint64_t *key = calloc(grp->n, sizeof(*key));
	uint32_t r, q;

	grp->local = calloc(grp->n, sizeof(*grp->local));
	grp->leaders = calloc(grp->n, sizeof(*grp->leaders));
	if (!key || !grp->local || !grp->leaders) {
		free(key);
		return -FI_ENOMEM;
	}
	for (r = 0; r < grp->n; r++) {
		if (util_coll_params.host_ranks)
			key[r] = r / util_coll_params.host_ranks;
		else if (cep->xp->host_key)
			key[r] = cep->xp->host_key(cep->ep, r == grp->rank ?
						   FI_ADDR_NOTAVAIL :
						   grp->members[r]);
	}
	for (r = 0; r < grp->n; r++) {
		for (q = 0; q < r && key[q] != key[r]; q++)
			;
		if (q == r) {
			if (key[r] == key[grp->rank])
				grp->host_me = grp->nhosts;
			grp->leaders[grp->nhosts++] = r;
		}
		if (key[r] == key[grp->rank]) {
			if (r == grp->rank)
				grp->local_me = grp->nlocal;
			grp->local[grp->nlocal++] = r;
		}
	}
	free(key);
	return 0;
}

/* FNV-1a over the members' addresses: the same at every member. */
static uint64_t uc_members_hash(struct util_av *av, const fi_addr_t *m,
				uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t r = 0; r < n; r++) {
		const uint8_t *a = util_av_addr(av, m[r]);

		for (size_t i = 0; a && i < av->prov->addrlen; i++) {
			h ^= a[i];
			h *= 0x100000001b3ull;
		}
	}
	return h;
}

static long uc_find_self(struct util_ep *ep, const struct util_av_set *set)
{
	uint8_t name[FI_NAME_MAX];
	size_t len = sizeof(name), i;
	struct util_av *av = set->av;

	if (fi_getname(&ep->ep_fid.fid, name, &len) ||
	    len != av->prov->addrlen)
		return -1;
	for (i = 0; i < set->count; i++) {
		const void *a = util_av_addr(av, set->addrs[i]);

		if (a && !memcmp(a, name, len))
			return (long)i;
	}
	return -1;
}

static int uc_slot_take(struct util_coll_ep *cep, struct util_coll_group *grp)
{
	struct util_coll_group **g;
	uint32_t i, n;

	for (i = 0; i < cep->ngroups; i++)
		if (!cep->groups[i])
			break;
	if (i == cep->ngroups) {
		n = cep->ngroups ? cep->ngroups * 2 : 8;
		g = realloc(cep->groups, n * sizeof(*g));
		if (!g)
			return -FI_ENOMEM;
		memset(g + cep->ngroups, 0, (n - cep->ngroups) * sizeof(*g));
		cep->groups = g;
		cep->ngroups = n;
	}
	grp->slot = i;
	cep->groups[i] = grp;
	return 0;
}

static int uc_group_close(struct fid *fid);

static const struct fi_ops uc_group_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = uc_group_close,
	.bind = util_no_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static int uc_group_new(struct util_coll_ep *cep,
			const struct util_av_set *set, uint32_t rank,
			void *context, struct util_coll_group **out)
{
	struct util_coll_group *grp = calloc(1, sizeof(*grp));
	int ret;

	if (!grp)
		return -FI_ENOMEM;
	grp->cep = cep;
	grp->n = (uint32_t)set->count;
	grp->rank = rank;
	grp->context = context;
	grp->state = UC_GRP_JOINING;
	grp->abort_next = grp->n;
	grp->members = malloc(set->count * sizeof(*grp->members));
	ret = grp->members ? 0 : -FI_ENOMEM;
	if (!ret) {
		memcpy(grp->members, set->addrs,
		       set->count * sizeof(*grp->members));
		grp->hash = uc_members_hash(set->av, grp->members, grp->n);
		ret = uc_group_hosts(grp);
	}
	if (!ret)
		ret = uc_slot_take(cep, grp);
	if (ret) {
		uc_group_free(grp);
		return ret;
	}
	grp->ctrl_ctx = (struct util_coll_ctx){ .kind = UC_CTX_CTRL,
						.owner = grp };
	grp->sink_ctx = (struct util_coll_ctx){ .kind = UC_CTX_SINK,
						.owner = grp };
	grp->abort_ctx = (struct util_coll_ctx){ .kind = UC_CTX_ABORT,
						 .owner = grp };
	grp->mc.fid.fclass = FI_CLASS_MC;
	grp->mc.fid.context = context;
	grp->mc.fid.ops = UTIL_OPS(&uc_group_fi_ops);
	grp->mc.fi_addr = UTIL_COLL_ADDR_GROUP | grp->slot;
	*out = grp;
	return 0;
}

static void uc_join_event(struct util_coll_group *grp, int err)
{
	struct util_eq *eq = grp->cep->ep->eq;
	struct fi_eq_err_entry e = {
		.fid = &grp->mc.fid, .context = grp->context, .err = err,
	};
	struct fi_eq_entry ok = { .fid = &grp->mc.fid,
				  .context = grp->context };

	if (err)
		util_eq_write_err(eq, &e);
	else
		util_eq_write(eq, FI_JOIN_COMPLETE, &ok, sizeof(ok));
}

/* The join's allreduce is over: take the lowest common free id. */
void uc_join_done(struct util_coll_op *op)
{
	struct util_coll_group *grp = op->grp;
	struct util_coll_ep *cep = grp->cep;
	int err = op->failed ? op->err : FI_ENOSPC;
	uint32_t w, gid = 0;

	cep->joining = NULL;
	for (w = 0; !op->failed && w < UTIL_COLL_GID_MAX / 64; w++) {
		if (grp->join_out[w]) {
			gid = w * 64 + (uint32_t)__builtin_ctzll(grp->join_out[w]);
			break;
		}
	}
	if (gid) {
		grp->gid = (uint16_t)gid;
		cep->gid_used[gid / 64] |= 1ull << (gid % 64);
		grp->state = UC_GRP_READY;
		err = uc_group_post_ctrl(grp);
		if (err == -FI_EAGAIN) {
			grp->ctrl_repost = true;
			uc_group_mark(grp);
			err = 0;
		}
		err = -err;
	} else if (!op->failed) {
		FI_WARN(uc_prov(cep->ep), FI_LOG_EP_CTRL,
			"fi_join_collective: no group id free at every "
			"member\n");
	}
	if (err && grp->state != UC_GRP_FAILED) {
		grp->state = UC_GRP_FAILED;
		grp->err = err;
	}
	uc_join_event(grp, err);
	uc_join_start(cep);
}

/* Start the next waiting join, if none is running. */
static void uc_join_start(struct util_coll_ep *cep)
{
	struct util_coll_group *grp;
	struct util_coll_op *op;
	struct util_coll_phase *ph;
	uint32_t w;

	while (!cep->joining && (grp = cep->join_head)) {
		cep->join_head = grp->join_next;
		if (!cep->join_head)
			cep->join_tail = NULL;
		op = uc_op_new(grp, true);
		if (!op) {
			grp->state = UC_GRP_FAILED;
			grp->err = FI_ENOMEM;
			uc_join_event(grp, FI_ENOMEM);
			continue;
		}
		for (w = 0; w < UTIL_COLL_GID_MAX / 64; w++)
			grp->join_in[w] = ~cep->gid_used[w];
		op->rop = FI_BAND;
		op->dt = FI_UINT64;
		op->buf[UC_BUF_IN] = grp->join_in;
		op->buf[UC_BUF_OUT] = grp->join_out;
		ph = &op->ph[0];
		*ph = (struct util_coll_phase){
			.alg = UC_ALG_ALLREDUCE_RD, .n = grp->n,
			.me = grp->rank, .count = UTIL_COLL_GID_MAX / 64,
			.esize = sizeof(uint64_t), .window = 1,
			.in = UC_BUF_IN, .out = UC_BUF_OUT,
		};
		op->nph = 1;
		if (util_coll_phase_setup(ph) || uc_op_tmp(op, ph->tmp_len)) {
			op->failed = true;
			op->err = FI_ENOMEM;
		}
		cep->joining = grp;
		uc_op_advance(op);
	}
}

static int uc_join_check(struct util_ep *ep,
			 const struct fi_collective_addr *ca,
			 uint64_t flags)
{
	const struct util_av_set *set;

	if (!ep->coll_xport || !(ep->caps & FI_COLLECTIVE)) {
		FI_WARN(uc_prov(ep), FI_LOG_EP_CTRL,
			"fi_join: the endpoint was opened without "
			"FI_COLLECTIVE\n");
		return -FI_ENOSYS;
	}
	if (!(flags & FI_COLLECTIVE)) {
		FI_WARN(uc_prov(ep), FI_LOG_EP_CTRL,
			"fi_join: multicast groups are not supported, only "
			"fi_join_collective\n");
		return -FI_ENOSYS;
	}
	if (!ca || !ca->set) {
		FI_WARN(uc_prov(ep), FI_LOG_EP_CTRL,
			"fi_join_collective: no AV set\n");
		return -FI_EINVAL;
	}
	set = to_util_av_set(ca->set);
	if (!ep->enabled || !ep->eq || !ep->tx_cq) {
		FI_WARN(uc_prov(ep), FI_LOG_EP_CTRL,
			"fi_join_collective: the endpoint needs to be enabled "
			"with an EQ (join events) and a transmit CQ\n");
		return !ep->eq ? -FI_ENOEQ : !ep->tx_cq ? -FI_ENOCQ :
							   -FI_EOPBADSTATE;
	}
	if (set->av != ep->av || !set->count || set->count > UC_MAX_MEMBERS) {
		FI_WARN(uc_prov(ep), FI_LOG_EP_CTRL,
			"fi_join_collective: the set is of another AV, empty, "
			"or has more than %u members\n", UC_MAX_MEMBERS);
		return -FI_EINVAL;
	}
	if (ca->coll_addr != FI_ADDR_NOTAVAIL &&
	    ca->coll_addr != UTIL_COLL_SET_ADDR(set->id) &&
	    (ca->coll_addr & UTIL_COLL_ADDR_KIND_MASK) != UTIL_COLL_ADDR_GROUP) {
		FI_WARN(uc_prov(ep), FI_LOG_EP_CTRL,
			"fi_join_collective: coll_addr 0x%llx names neither "
			"the set nor a group\n",
			(unsigned long long)ca->coll_addr);
		return -FI_EINVAL;
	}
	return 0;
}

int util_coll_join(struct fid_ep *ep_fid, const void *addr, uint64_t flags,
		   struct fid_mc **mc, void *context)
{
	struct util_ep *ep = to_util_ep(ep_fid);
	const struct fi_collective_addr *ca = addr;
	struct util_coll_group *grp;
	struct util_coll_ep *cep;
	long rank;
	int ret = uc_join_check(ep, ca, flags);

	if (ret)
		return ret;
	if (!mc)
		return -FI_EINVAL;
	rank = uc_find_self(ep, to_util_av_set(ca->set));
	if (rank < 0) {
		FI_WARN(uc_prov(ep), FI_LOG_EP_CTRL,
			"fi_join_collective: this endpoint's address is not a "
			"member of the set\n");
		return -FI_EINVAL;
	}
	util_lock_acquire(&ep->lock);
	cep = uc_cep_get(ep);
	ret = cep ? uc_group_new(cep, to_util_av_set(ca->set), (uint32_t)rank,
				 context, &grp) : -FI_ENOMEM;
	if (!ret) {
		*mc = &grp->mc;
		if (cep->join_tail)
			cep->join_tail->join_next = grp;
		else
			cep->join_head = grp;
		cep->join_tail = grp;
		uc_join_start(cep);
		uc_run_ready(cep);
	}
	util_lock_release(&ep->lock);
	return ret;
}

static int uc_group_close(struct fid *fid)
{
	struct util_coll_group *grp = container_of(fid, struct util_coll_group,
						   mc.fid);
	struct util_coll_ep *cep = grp->cep;
	struct util_ep *ep = cep->ep;

	util_lock_acquire(&ep->lock);
	if (grp->inflight || grp->state == UC_GRP_JOINING) {
		util_lock_release(&ep->lock);
		FI_WARN(uc_prov(ep), FI_LOG_EP_CTRL,
			"collective group close: %u operation(s) in flight\n",
			grp->inflight);
		return -FI_EBUSY;
	}
	/* A failed group keeps draining what its peers still send (and
	 * its gid stays taken) until the endpoint closes. */
	if (grp->state == UC_GRP_FAILED && grp->gid) {
		grp->closed = true;
		grp->mc.fi_addr = FI_ADDR_NOTAVAIL;
		util_lock_release(&ep->lock);
		return 0;
	}
	if (grp->ctrl_posted)
		cep->xp->cancel(ep, &grp->ctrl_ctx);
	if (grp->work) {
		cep->group_work--;
		ep->coll_busy--;
	}
	if (grp->gid)
		cep->gid_used[grp->gid / 64] &= ~(1ull << (grp->gid % 64));
	cep->groups[grp->slot] = NULL;
	uc_group_free(grp);
	util_lock_release(&ep->lock);
	return 0;
}

/* The group of a collective address on this endpoint, or NULL. */
struct util_coll_group *uc_group_of(struct util_ep *ep, fi_addr_t coll_addr)
{
	struct util_coll_ep *cep = ep->coll;
	uint64_t slot = coll_addr & ~UTIL_COLL_ADDR_KIND_MASK;
	struct util_coll_group *grp;

	if (!cep || (coll_addr & UTIL_COLL_ADDR_KIND_MASK) !=
		    UTIL_COLL_ADDR_GROUP || slot >= cep->ngroups)
		return NULL;
	grp = cep->groups[slot];
	return grp && !grp->closed ? grp : NULL;
}
