/* SPDX-License-Identifier: MIT */
/*
 * Poll sets: see weft/util_poll.h. fi_poll runs the members' progress
 * lists one after the other and looks at each: a CQ under its lock (ring
 * or overflow not empty, error entries included), a counter by its two
 * words against the baseline it keeps.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_cntr.h"
#include "weft/util_cq.h"
#include "weft/util_domain.h"
#include "weft/util_noop.h"
#include "weft/util_poll.h"
#include <stdlib.h>

static struct util_poll *to_util_poll(struct fid_poll *poll_fid)
{
	return container_of(poll_fid, struct util_poll, poll_fid);
}

/* The domain an event fid belongs to, or NULL if it is no CQ/counter. */
static struct util_domain *util_poll_member_domain(struct fid *fid)
{
	if (fid->fclass == FI_CLASS_CQ)
		return container_of(fid, struct util_cq, cq_fid.fid)->domain;
	if (fid->fclass == FI_CLASS_CNTR)
		return container_of(fid, struct util_cntr,
				    cntr_fid.fid)->domain;
	return NULL;
}

static atomic_int *util_poll_member_ref(struct fid *fid)
{
	if (fid->fclass == FI_CLASS_CQ)
		return &container_of(fid, struct util_cq, cq_fid.fid)->poll_ref;
	return &container_of(fid, struct util_cntr, cntr_fid.fid)->poll_ref;
}

static int util_poll_add(struct fid_poll *poll_fid, struct fid *event_fid,
			 uint64_t flags)
{
	struct util_poll *ps = to_util_poll(poll_fid);
	struct util_poll_member *m;
	int ret = 0;

	if (!event_fid || flags ||
	    util_poll_member_domain(event_fid) != ps->domain) {
		FI_WARN(util_domain_prov(ps->domain), FI_LOG_DOMAIN,
			"poll add: a CQ or counter of the poll set's domain, "
			"flags 0\n");
		return -FI_EINVAL;
	}
	util_lock_acquire(&ps->lock);
	for (m = ps->members; m; m = m->next)
		if (m->fid == event_fid)
			break;
	if (m) {
		FI_WARN(util_domain_prov(ps->domain), FI_LOG_DOMAIN,
			"poll add: already in the poll set\n");
		ret = -FI_EALREADY;
		goto unlock;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		ret = -FI_ENOMEM;
		goto unlock;
	}
	m->fid = event_fid;
	m->next = ps->members;
	ps->members = m;
	atomic_fetch_add(util_poll_member_ref(event_fid), 1);
unlock:
	util_lock_release(&ps->lock);
	return ret;
}

static int util_poll_del(struct fid_poll *poll_fid, struct fid *event_fid,
			 uint64_t flags)
{
	struct util_poll *ps = to_util_poll(poll_fid);
	struct util_poll_member **pm, *m;

	if (flags) {
		FI_WARN(util_domain_prov(ps->domain), FI_LOG_DOMAIN,
			"poll del: flags must be 0\n");
		return -FI_EINVAL;
	}
	util_lock_acquire(&ps->lock);
	for (pm = &ps->members; (m = *pm); pm = &m->next)
		if (m->fid == event_fid)
			break;
	if (m)
		*pm = m->next;
	util_lock_release(&ps->lock);
	if (!m) {
		FI_WARN(util_domain_prov(ps->domain), FI_LOG_DOMAIN,
			"poll del: not in the poll set\n");
		return -FI_EINVAL;
	}
	atomic_fetch_sub(util_poll_member_ref(event_fid), 1);
	free(m);
	return 0;
}

static bool util_poll_cq_ready(struct util_cq *cq)
{
	bool ready;

	util_progress_run(&cq->progress);
	util_lock_acquire(&cq->lock);
	ready = cq->head != cq->tail || cq->ovf;
	util_lock_release(&cq->lock);
	return ready;
}

/* Changed since the baseline: reported, and the baseline moves. */
static bool util_poll_cntr_ready(struct util_cntr *cntr)
{
	uint64_t value, err;

	util_progress_run(&cntr->progress);
	value = atomic_load(&cntr->value);
	err = atomic_load(&cntr->err);
	if (value == atomic_load(&cntr->poll_value) &&
	    err == atomic_load(&cntr->poll_err))
		return false;
	atomic_store(&cntr->poll_value, value);
	atomic_store(&cntr->poll_err, err);
	return true;
}

static int util_poll_poll(struct fid_poll *poll_fid, void **context,
			  int count)
{
	struct util_poll *ps = to_util_poll(poll_fid);
	struct util_poll_member *m;
	bool ready;
	int n = 0;

	if (count < 0 || (count && !context)) {
		FI_WARN(util_domain_prov(ps->domain), FI_LOG_DOMAIN,
			"poll: %d contexts at %p\n", count, (void *)context);
		return -FI_EINVAL;
	}
	util_lock_acquire(&ps->lock);
	for (m = ps->members; m && n < count; m = m->next) {
		ready = m->fid->fclass == FI_CLASS_CQ ?
			util_poll_cq_ready(container_of(m->fid, struct util_cq,
							cq_fid.fid)) :
			util_poll_cntr_ready(container_of(m->fid,
							  struct util_cntr,
							  cntr_fid.fid));
		if (ready)
			context[n++] = m->fid->context;
	}
	util_lock_release(&ps->lock);
	return n;
}

static const struct fi_ops_poll util_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = util_poll_poll,
	.poll_add = util_poll_add,
	.poll_del = util_poll_del,
};

static int util_poll_close(struct fid *fid)
{
	struct util_poll *ps = container_of(fid, struct util_poll,
					    poll_fid.fid);

	if (ps->members) {
		FI_WARN(util_domain_prov(ps->domain), FI_LOG_DOMAIN,
			"poll close: CQs or counters still in the set\n");
		return -FI_EBUSY;
	}
	util_domain_unref(ps->domain);
	util_lock_fini(&ps->lock);
	free(ps);
	return 0;
}

static const struct fi_ops util_poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_poll_close,
	.bind = util_no_bind,
	.control = util_no_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

int util_poll_open(struct fid_domain *domain_fid, struct fi_poll_attr *attr,
		   struct fid_poll **pollset)
{
	struct util_domain *domain;
	struct util_poll *ps;
	int ret;

	domain = domain_fid ? to_util_domain(domain_fid) : NULL;
	if (!domain || !pollset || (attr && attr->flags)) {
		FI_WARN(util_domain_prov(domain), FI_LOG_DOMAIN,
			"poll open: NULL domain or set, or attr flags set\n");
		return -FI_EINVAL;
	}
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	ret = util_lock_init(&ps->lock, domain->thread_safe);
	if (ret) {
		free(ps);
		return ret;
	}
	ps->domain = domain;
	ps->poll_fid.fid.fclass = FI_CLASS_POLL;
	ps->poll_fid.fid.context = NULL;
	ps->poll_fid.fid.ops = UTIL_OPS(&util_poll_fi_ops);
	ps->poll_fid.ops = UTIL_OPS(&util_poll_ops);
	util_domain_ref(domain);
	*pollset = &ps->poll_fid;
	return 0;
}
