/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/core.h"
#include "weft/log.h"
#include "weft/util_cntr.h"
#include "weft/util_domain.h"
#include "weft/util_noop.h"
#include <stdlib.h>

/* A counter bound to a memory region counts RMA through any endpoint of
 * the domain (fi_mr_bind), so it progresses them all. */
static void util_cntr_progress(struct util_cntr *cntr)
{
	util_progress_run(&cntr->progress);
	if (atomic_load_explicit(&cntr->mr_ref, memory_order_relaxed))
		util_progress_run(&cntr->domain->eps);
}

/* An application polling a counter for completions spins here like in
 * fi_cq_read: an unchanged value counts as an empty read (util_idle.h). */
static uint64_t util_cntr_read(struct fid_cntr *cntr_fid)
{
	struct util_cntr *cntr = to_util_cntr(cntr_fid);
	uint64_t v;

	util_cntr_progress(cntr);
	v = atomic_load_explicit(&cntr->value, memory_order_acquire);
	if (v == __atomic_load_n(&cntr->last_read, __ATOMIC_RELAXED)) {
		util_idle_tick(&cntr->idle);
	} else {
		__atomic_store_n(&cntr->last_read, v, __ATOMIC_RELAXED);
		util_idle_reset(&cntr->idle);
	}
	return v;
}

static uint64_t util_cntr_readerr(struct fid_cntr *cntr_fid)
{
	struct util_cntr *cntr = to_util_cntr(cntr_fid);

	util_cntr_progress(cntr);
	return atomic_load_explicit(&cntr->err, memory_order_acquire);
}

/* fi_poll(3): a counter is an event when it changed since the last
 * fi_poll, fi_cntr_set or fi_cntr_add; these two move the baseline. */
static void util_cntr_poll_rebase(struct util_cntr *cntr)
{
	atomic_store(&cntr->poll_value, atomic_load(&cntr->value));
	atomic_store(&cntr->poll_err, atomic_load(&cntr->err));
}

static int util_cntr_add_op(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct util_cntr *cntr = to_util_cntr(cntr_fid);

	util_cntr_add(cntr, value);
	util_cntr_poll_rebase(cntr);
	return 0;
}

static int util_cntr_set(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct util_cntr *cntr = to_util_cntr(cntr_fid);

	atomic_store(&cntr->value, value);
	util_cntr_poll_rebase(cntr);
	util_wait_signal_armed(&cntr->wait);
	return 0;
}

static int util_cntr_adderr(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct util_cntr *cntr = to_util_cntr(cntr_fid);

	atomic_fetch_add(&cntr->err, value);
	util_wait_signal_armed(&cntr->wait);
	return 0;
}

static int util_cntr_seterr(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct util_cntr *cntr = to_util_cntr(cntr_fid);

	atomic_store(&cntr->err, value);
	util_wait_signal_armed(&cntr->wait);
	return 0;
}

struct util_cntr_wait_arg {
	struct util_cntr *cntr;
	uint64_t threshold;
	uint64_t err_start;
};

static ssize_t util_cntr_wait_check(void *arg)
{
	struct util_cntr_wait_arg *a = arg;
	struct util_cntr *cntr = a->cntr;

	util_cntr_progress(cntr);
	/* seq_cst loads pair with the writers' (util_wait.h) */
	if (atomic_load(&cntr->value) >= a->threshold)
		return 0;
	/* fi_cntr(3): an error completion ends the wait with -FI_EAVAIL. */
	if (atomic_load(&cntr->err) != a->err_start)
		return -FI_EAVAIL;
	return -FI_EAGAIN;
}

static int util_cntr_wait(struct fid_cntr *cntr_fid, uint64_t threshold,
			  int timeout)
{
	struct util_cntr *cntr = to_util_cntr(cntr_fid);
	struct util_cntr_wait_arg arg = {
		.cntr = cntr,
		.threshold = threshold,
		.err_start = atomic_load(&cntr->err),
	};

	return (int)util_wait_until(&cntr->wait, util_cntr_wait_check, &arg,
				    timeout, cntr->spin_ns);
}

static const struct fi_ops_cntr util_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = util_cntr_read,
	.readerr = util_cntr_readerr,
	.add = util_cntr_add_op,
	.set = util_cntr_set,
	.wait = util_cntr_wait,
	.adderr = util_cntr_adderr,
	.seterr = util_cntr_seterr,
};

static int util_cntr_close(struct fid *fid)
{
	struct util_cntr *cntr =
		container_of(fid, struct util_cntr, cntr_fid.fid);

	if (atomic_load(&cntr->ref)) {
		FI_WARN(util_domain_prov(cntr->domain), FI_LOG_CNTR,
			"cntr close: still bound to %d endpoint(s)\n",
			atomic_load(&cntr->ref));
		return -FI_EBUSY;
	}
	if (atomic_load(&cntr->mr_ref)) {
		FI_WARN(util_domain_prov(cntr->domain), FI_LOG_CNTR,
			"cntr close: still bound to %d memory region(s)\n",
			atomic_load(&cntr->mr_ref));
		return -FI_EBUSY;
	}
	if (atomic_load(&cntr->poll_ref)) {
		FI_WARN(util_domain_prov(cntr->domain), FI_LOG_CNTR,
			"cntr close: still in %d poll set(s)\n",
			atomic_load(&cntr->poll_ref));
		return -FI_EBUSY;
	}
	util_domain_unref(cntr->domain);
	util_progress_list_fini(&cntr->progress);
	util_wait_fini(&cntr->wait);
	free(cntr);
	return 0;
}

static int util_cntr_control(struct fid *fid, int command, void *arg)
{
	struct util_cntr *cntr =
		container_of(fid, struct util_cntr, cntr_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		return util_wait_getwait(&cntr->wait, arg);
	default:
		return -FI_ENOSYS;
	}
}

static const struct fi_ops util_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_cntr_close,
	.bind = util_no_bind,
	.control = util_cntr_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

int util_cntr_open(struct fid_domain *domain_fid, struct fi_cntr_attr *attr,
		   struct fid_cntr **cntr_fid, void *context)
{
	struct fi_cntr_attr def = { .events = FI_CNTR_EVENTS_COMP,
				    .wait_obj = FI_WAIT_UNSPEC };
	struct util_domain *domain;
	struct util_cntr *cntr;
	int ret;

	domain = domain_fid ? to_util_domain(domain_fid) : NULL;
	if (!domain || !cntr_fid) {
		FI_WARN(util_domain_prov(domain), FI_LOG_CNTR,
			"cntr open: NULL domain or cntr\n");
		return -FI_EINVAL;
	}
	if (!attr)
		attr = &def;
	if (attr->events != FI_CNTR_EVENTS_COMP) {
		FI_WARN(util_domain_prov(domain), FI_LOG_CNTR,
			"cntr open: events %d (only FI_CNTR_EVENTS_COMP)\n",
			attr->events);
		return -FI_ENOSYS;
	}
	cntr = calloc(1, sizeof(*cntr));
	if (!cntr)
		return -FI_ENOMEM;
	ret = util_wait_init(&cntr->wait, domain->prov, attr->wait_obj);
	if (ret)
		goto free_cntr;
	cntr->wait.slice_ms = domain->wait_slice_ms;
	ret = util_progress_list_init(&cntr->progress, domain->thread_safe);
	if (ret)
		goto fini_wait;
	util_idle_init(&cntr->idle, weft_poll_yield);
	cntr->domain = domain;
	cntr->spin_ns = domain->wait_spin_ns;
	atomic_init(&cntr->value, 0);
	atomic_init(&cntr->err, 0);
	atomic_init(&cntr->ref, 0);
	atomic_init(&cntr->poll_ref, 0);
	atomic_init(&cntr->mr_ref, 0);
	atomic_init(&cntr->poll_value, 0);
	atomic_init(&cntr->poll_err, 0);
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = UTIL_OPS(&util_cntr_fi_ops);
	cntr->cntr_fid.ops = UTIL_OPS(&util_cntr_ops);
	util_domain_ref(domain);
	*cntr_fid = &cntr->cntr_fid;
	return 0;

fini_wait:
	util_wait_fini(&cntr->wait);
free_cntr:
	free(cntr);
	return ret;
}
