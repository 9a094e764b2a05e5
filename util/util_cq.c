/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/core.h"
#include "weft/log.h"
#include "weft/util_cq.h"
#include "weft/util_domain.h"
#include "weft/util_mem.h"
#include "weft/util_noop.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

/* Error records: the fi_cq_err_entry plus a private copy of err_data. */
struct util_cq_err {
	struct util_cq_err *next;
	struct fi_cq_err_entry entry;
	uint8_t data[UTIL_CQ_ERR_DATA_MAX];
};

struct util_cq_ovf {
	struct util_cq_ovf *prev, *next;
	struct util_cq_entry entry;
};

#define UTIL_CQ_ERR_PREALLOC 16

/* ---- copy-out, one per format, chosen at open ---- */

static void util_cq_copy_context(void *dst, const struct util_cq_entry *src)
{
	struct fi_cq_entry *e = dst;

	e->op_context = src->op_context;
}

static void util_cq_copy_msg(void *dst, const struct util_cq_entry *src)
{
	struct fi_cq_msg_entry *e = dst;

	e->op_context = src->op_context;
	e->flags = src->flags;
	e->len = src->len;
}

static void util_cq_copy_data(void *dst, const struct util_cq_entry *src)
{
	struct fi_cq_data_entry *e = dst;

	e->op_context = src->op_context;
	e->flags = src->flags;
	e->len = src->len;
	e->buf = src->buf;
	e->data = src->data;
}

static void util_cq_copy_tagged(void *dst, const struct util_cq_entry *src)
{
	struct fi_cq_tagged_entry *e = dst;

	e->op_context = src->op_context;
	e->flags = src->flags;
	e->len = src->len;
	e->buf = src->buf;
	e->data = src->data;
	e->tag = src->tag;
}

static int util_cq_set_format(struct util_cq *cq, enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
		cq->format = FI_CQ_FORMAT_CONTEXT;
		cq->entry_size = sizeof(struct fi_cq_entry);
		cq->copy_out = util_cq_copy_context;
		return 0;
	case FI_CQ_FORMAT_MSG:
		cq->format = format;
		cq->entry_size = sizeof(struct fi_cq_msg_entry);
		cq->copy_out = util_cq_copy_msg;
		return 0;
	case FI_CQ_FORMAT_DATA:
		cq->format = format;
		cq->entry_size = sizeof(struct fi_cq_data_entry);
		cq->copy_out = util_cq_copy_data;
		return 0;
	case FI_CQ_FORMAT_TAGGED:
		cq->format = format;
		cq->entry_size = sizeof(struct fi_cq_tagged_entry);
		cq->copy_out = util_cq_copy_tagged;
		return 0;
	default:
		FI_WARN(util_domain_prov(cq->domain), FI_LOG_CQ,
			"cq: unknown format %d\n",
			format);
		return -FI_EINVAL;
	}
}

/* ---- writing ---- */

/*
 * A thread in fi_cq_read runs progress, which writes completions, which it
 * then reads back out of the ring: two copies, and the read takes the CQ
 * lock a second time. While a read progresses, completions this thread
 * writes into that CQ go straight to the caller's buffer instead, as long
 * as the ring is empty (so nothing written earlier is overtaken; once
 * anything is in the ring, writes go behind it). On the test VM: ~70
 * instructions less per completion that fi_cq_read finds, and a round trip
 * of fi_pingpong has one on its critical path.
 *
 * The registration lives in the CQ, not in thread-local storage: the
 * library is dlopen()ed (Open MPI, Python), where initial-exec TLS is
 * refused and general-dynamic TLS costs a call per access. The owner word
 * is the reader's thread id, so a write from another thread's progress
 * never lands in this caller's buffer: only the owner can find its own id
 * there (it stored it itself), and only it touches the other fields.
 */
static inline uintptr_t util_cq_self(void)
{
	/* The thread pointer (the TCB address, what pthread_self() returns
	 * on glibc) is one register read here; pthread_self() is a call into
	 * libc on each of the three uses per completion. */
#if defined(__x86_64__) || defined(__aarch64__)
	return (uintptr_t)__builtin_thread_pointer();
#else
	return (uintptr_t)pthread_self();
#endif
}

/* Register the reader's buffer; false if another reader holds the slot.
 * Under FI_THREAD_DOMAIN reads are serialised, so a plain store does. */
static bool util_cq_direct_claim(struct util_cq *cq, void *buf, size_t count,
				 fi_addr_t *src_addr)
{
	struct util_cq_direct *d = &cq->direct;
	uintptr_t none = 0;

	if (cq->shared) {
		if (!atomic_compare_exchange_strong_explicit(
			    &d->owner, &none, util_cq_self(),
			    memory_order_acquire, memory_order_relaxed))
			return false;
	} else {
		atomic_store_explicit(&d->owner, util_cq_self(),
				      memory_order_relaxed);
	}
	d->out = buf;
	d->src_addr = src_addr;
	d->left = count;
	d->n = 0;
	return true;
}

/* Unregister; returns how many completions went to the buffer. The
 * release pairs with the next claimer's acquiring compare-exchange, which
 * then rewrites the fields this owner used. */
static size_t util_cq_direct_release(struct util_cq *cq)
{
	size_t n = cq->direct.n;

	atomic_store_explicit(&cq->direct.owner, 0, memory_order_release);
	return n;
}

/* Called with the CQ lock held. */
static bool util_cq_write_direct(struct util_cq *cq,
				 const struct util_cq_entry *e)
{
	struct util_cq_direct *d = &cq->direct;

	if (atomic_load_explicit(&d->owner, memory_order_relaxed) !=
		    util_cq_self() ||
	    !d->left || cq->head != cq->tail || cq->ovf)
		return false;
	cq->copy_out(d->out, e);
	if (d->src_addr)
		d->src_addr[d->n] = e->src;
	d->out += cq->entry_size;
	d->n++;
	d->left--;
	return true;
}

/*
 * head and tail only change under the CQ lock, but an empty fi_cq_read
 * compares them without it (util_cq_readfrom). The stores are atomic so
 * that this read is well defined; relaxed, they are plain moves.
 */
static inline uint64_t util_cq_tail_bump(struct util_cq *cq)
{
	uint64_t t = cq->tail;

	__atomic_store_n(&cq->tail, t + 1, __ATOMIC_RELAXED);
	return t;
}

static inline void util_cq_head_bump(struct util_cq *cq)
{
	__atomic_store_n(&cq->head, cq->head + 1, __ATOMIC_RELAXED);
}

/* Ring slot or overflow node for the next entry; NULL on ENOMEM. Called
 * with the CQ lock held. */
static struct util_cq_entry *util_cq_slot(struct util_cq *cq)
{
	struct util_cq_ovf *node;

	if (WEFT_LIKELY(!cq->ovf && cq->tail - cq->head <= cq->mask))
		return &cq->ring[util_cq_tail_bump(cq) & cq->mask];
	node = cq->ovf_free;
	if (node)
		cq->ovf_free = node->next;
	else
		node = malloc(sizeof(*node));
	if (!node)
		return NULL;
	DL_APPEND(cq->ovf, node);
	cq->ovf_count++;
	return &node->entry;
}

int util_cq_write_src(struct util_cq *cq, void *context, uint64_t flags,
		      size_t len, void *buf, uint64_t data, uint64_t tag,
		      fi_addr_t src)
{
	const struct util_cq_entry ent = {
		.op_context = context, .flags = flags, .len = len, .buf = buf,
		.data = data, .tag = tag, .src = src, .err = NULL,
	};
	struct util_cq_entry *e;

	util_lock_acquire(&cq->lock);
	if (util_cq_write_direct(cq, &ent)) {
		util_lock_release(&cq->lock);
		return 0;
	}
	e = util_cq_slot(cq);
	if (WEFT_UNLIKELY(!e)) {
		util_lock_release(&cq->lock);
		return -FI_ENOMEM;
	}
	*e = ent;
	util_lock_release(&cq->lock);
	util_wait_signal_armed(&cq->wait);
	return 0;
}

int util_cq_write(struct util_cq *cq, void *context, uint64_t flags,
		  size_t len, void *buf, uint64_t data, uint64_t tag)
{
	return util_cq_write_src(cq, context, flags, len, buf, data, tag,
				 FI_ADDR_NOTAVAIL);
}

static struct util_cq_err *util_cq_err_get(struct util_cq *cq)
{
	struct util_cq_err *err = cq->err_free;

	if (err) {
		LL_DELETE(cq->err_free, err);
		return err;
	}
	return malloc(sizeof(*err));
}

static void util_cq_err_put(struct util_cq *cq, struct util_cq_err *err)
{
	LL_PREPEND(cq->err_free, err);
}

int util_cq_write_err(struct util_cq *cq, const struct fi_cq_err_entry *in,
		      fi_addr_t src)
{
	struct util_cq_entry *e;
	struct util_cq_err *err;
	size_t data_size;

	util_lock_acquire(&cq->lock);
	err = util_cq_err_get(cq);
	if (!err)
		goto nomem;
	e = util_cq_slot(cq);
	if (!e) {
		util_cq_err_put(cq, err);
		goto nomem;
	}
	err->entry = *in;
	data_size = in->err_data ? in->err_data_size : 0;
	if (data_size > UTIL_CQ_ERR_DATA_MAX)
		data_size = UTIL_CQ_ERR_DATA_MAX;
	if (data_size)
		memcpy(err->data, in->err_data, data_size);
	err->entry.err_data = data_size ? err->data : NULL;
	err->entry.err_data_size = data_size;
	memset(e, 0, sizeof(*e));
	e->op_context = in->op_context;
	e->src = src;
	e->err = err;
	util_lock_release(&cq->lock);
	util_wait_signal_armed(&cq->wait);
	return 0;
nomem:
	util_lock_release(&cq->lock);
	return -FI_ENOMEM;
}

/* ---- reading ---- */

/* Move overflow entries into the ring slots that reads freed. */
static void util_cq_refill(struct util_cq *cq)
{
	struct util_cq_ovf *node;

	while (cq->ovf && cq->tail - cq->head <= cq->mask) {
		node = cq->ovf;
		cq->ring[util_cq_tail_bump(cq) & cq->mask] = node->entry;
		DL_DELETE(cq->ovf, node);
		cq->ovf_count--;
		node->next = cq->ovf_free;
		cq->ovf_free = node;
	}
}

/* The previous error's err_data lived until this read. */
static void util_cq_drop_last_err(struct util_cq *cq)
{
	if (cq->err_last) {
		util_cq_err_put(cq, cq->err_last);
		cq->err_last = NULL;
	}
}

static ssize_t util_cq_read_locked(struct util_cq *cq, void *buf,
				   size_t count, fi_addr_t *src_addr)
{
	uint8_t *out = buf;
	size_t n = 0;
	struct util_cq_entry *e;

	util_cq_drop_last_err(cq);
	while (n < count && cq->head != cq->tail) {
		e = &cq->ring[cq->head & cq->mask];
		if (e->err)
			break;
		cq->copy_out(out, e);
		if (src_addr)
			src_addr[n] = e->src;
		out += cq->entry_size;
		util_cq_head_bump(cq);
		n++;
	}
	if (n) {
		util_cq_refill(cq);
		return (ssize_t)n;
	}
	return cq->head != cq->tail ? -FI_EAVAIL : -FI_EAGAIN;
}

/* Resets the idle count (util_idle.h) on the way out of a read that
 * found something. */
static inline ssize_t util_cq_found(struct util_cq *cq, ssize_t ret)
{
	util_idle_reset(&cq->idle);
	return ret;
}

static ssize_t util_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				fi_addr_t *src_addr)
{
	struct util_cq *cq = to_util_cq(cq_fid);
	bool direct;
	size_t n;
	ssize_t ret;

	if (WEFT_UNLIKELY(count && !buf))
		return -FI_EINVAL;
	direct = count && util_cq_direct_claim(cq, buf, count, src_addr);
	util_cq_progress(cq);
	if (direct) {
		n = util_cq_direct_release(cq);
		if (n)
			return util_cq_found(cq, (ssize_t)n);
	}
	/* Nothing queued: answer without the lock. The ring only grows
	 * under it, so a stale view only leaves an entry to the next read;
	 * a client waiting for a message spins here. (An error's err_data
	 * then lives until the next read that finds something.) */
	if (__atomic_load_n(&cq->head, __ATOMIC_RELAXED) ==
	    __atomic_load_n(&cq->tail, __ATOMIC_RELAXED)) {
		util_idle_tick(&cq->idle);
		return -FI_EAGAIN;
	}
	util_lock_acquire(&cq->lock);
	ret = util_cq_read_locked(cq, buf, count, src_addr);
	util_lock_release(&cq->lock);
	if (ret == -FI_EAGAIN) {
		util_idle_tick(&cq->idle);
		return ret;
	}
	return util_cq_found(cq, ret);
}

static ssize_t util_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return util_cq_readfrom(cq_fid, buf, count, NULL);
}

/* fi_cq(3): from API 1.5 a caller-provided err_data buffer (err_data_size
 * > 0) is filled; otherwise err_data points at our copy. */
static void util_cq_err_out(struct util_cq *cq, struct fi_cq_err_entry *dst,
			    const struct util_cq_err *err)
{
	void *user_data = dst->err_data;
	size_t user_size = dst->err_data_size;
	size_t n;

	*dst = err->entry;
	if (FI_VERSION_GE(cq->domain->api_version, FI_VERSION(1, 5)) &&
	    user_size && user_data) {
		n = err->entry.err_data_size < user_size ?
		    err->entry.err_data_size : user_size;
		if (n)
			memcpy(user_data, err->entry.err_data, n);
		dst->err_data = user_data;
		dst->err_data_size = n;
	}
}

static ssize_t util_cq_readerr(struct fid_cq *cq_fid,
			       struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct util_cq *cq = to_util_cq(cq_fid);
	struct util_cq_entry *e;
	ssize_t ret = -FI_EAGAIN;

	if (!buf) {
		FI_WARN(util_domain_prov(cq->domain), FI_LOG_CQ,
			"cq readerr: NULL buf\n");
		return -FI_EINVAL;
	}
	util_lock_acquire(&cq->lock);
	util_cq_drop_last_err(cq);
	if (cq->head != cq->tail) {
		e = &cq->ring[cq->head & cq->mask];
		if (e->err) {
			util_cq_err_out(cq, buf, e->err);
			cq->err_last = e->err;
			util_cq_head_bump(cq);
			util_cq_refill(cq);
			ret = 1;
		}
	}
	util_lock_release(&cq->lock);
	return ret;
}

struct util_cq_sread_arg {
	struct util_cq *cq;
	void *buf;
	size_t count;
	fi_addr_t *src_addr;
};

static ssize_t util_cq_sread_check(void *arg)
{
	struct util_cq_sread_arg *a = arg;

	return util_cq_readfrom(&a->cq->cq_fid, a->buf, a->count, a->src_addr);
}

static ssize_t util_cq_sreadfrom(struct fid_cq *cq_fid, void *buf,
				 size_t count, fi_addr_t *src_addr,
				 const void *cond, int timeout)
{
	struct util_cq *cq = to_util_cq(cq_fid);
	struct util_cq_sread_arg arg = {
		.cq = cq, .buf = buf, .count = count, .src_addr = src_addr,
	};
	ssize_t ret;

	ret = util_wait_until(&cq->wait, util_cq_sread_check, &arg, timeout,
			      cq->spin_ns);
	return ret == -FI_ETIMEDOUT ? -FI_EAGAIN : ret;
}

static ssize_t util_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			     const void *cond, int timeout)
{
	return util_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int util_cq_signal(struct fid_cq *cq_fid)
{
	util_wait_cancel(&to_util_cq(cq_fid)->wait);
	return 0;
}

static const char *util_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				    const void *err_data, char *buf,
				    size_t len)
{
	struct util_cq *cq = to_util_cq(cq_fid);
	const char *str;

	if (cq->domain->strerror)
		return cq->domain->strerror(prov_errno, err_data, buf, len);
	str = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);
	if (buf && len) {
		snprintf(buf, len, "%s", str);
		return buf;
	}
	return str;
}

size_t util_cq_count(struct util_cq *cq)
{
	size_t n;

	util_lock_acquire(&cq->lock);
	n = (size_t)(cq->tail - cq->head) + cq->ovf_count;
	util_lock_release(&cq->lock);
	return n;
}

static const struct fi_ops_cq util_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = util_cq_read,
	.readfrom = util_cq_readfrom,
	.readerr = util_cq_readerr,
	.sread = util_cq_sread,
	.sreadfrom = util_cq_sreadfrom,
	.signal = util_cq_signal,
	.strerror = util_cq_strerror,
};

/* ---- open / close ---- */

static void util_cq_free_lists(struct util_cq *cq)
{
	struct util_cq_ovf *node, *tmp;
	struct util_cq_err *err, *etmp;
	uint64_t i;

	DL_FOREACH_SAFE(cq->ovf, node, tmp) {
		DL_DELETE(cq->ovf, node);
		if (node->entry.err)
			free(node->entry.err);
		free(node);
	}
	while ((node = cq->ovf_free)) {
		cq->ovf_free = node->next;
		free(node);
	}
	for (i = cq->head; i != cq->tail; i++)
		free(cq->ring[i & cq->mask].err);
	util_cq_drop_last_err(cq);
	LL_FOREACH_SAFE(cq->err_free, err, etmp)
		free(err);
	cq->err_free = NULL;
}

static void util_cq_free(struct util_cq *cq)
{
	util_cq_free_lists(cq);
	util_progress_list_fini(&cq->progress);
	util_wait_fini(&cq->wait);
	util_lock_fini(&cq->lock);
	free(cq->ring);
	free(cq);
}

static int util_cq_close(struct fid *fid)
{
	struct util_cq *cq = container_of(fid, struct util_cq, cq_fid.fid);

	if (atomic_load(&cq->ref)) {
		FI_WARN(util_domain_prov(cq->domain), FI_LOG_CQ,
			"cq close: still bound to %d endpoint(s)\n",
			atomic_load(&cq->ref));
		return -FI_EBUSY;
	}
	if (atomic_load(&cq->poll_ref)) {
		FI_WARN(util_domain_prov(cq->domain), FI_LOG_CQ,
			"cq close: still in %d poll set(s)\n",
			atomic_load(&cq->poll_ref));
		return -FI_EBUSY;
	}
	util_domain_unref(cq->domain);
	util_cq_free(cq);
	return 0;
}

static int util_cq_control(struct fid *fid, int command, void *arg)
{
	struct util_cq *cq = container_of(fid, struct util_cq, cq_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		return util_wait_getwait(&cq->wait, arg);
	default:
		return -FI_ENOSYS;
	}
}

static const struct fi_ops util_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_cq_close,
	.bind = util_no_bind,
	.control = util_cq_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

static int util_cq_check_attr(const struct util_domain *domain,
			      const struct fi_cq_attr *attr)
{
	if (attr->size > UTIL_CQ_MAX_SIZE) {
		FI_WARN(util_domain_prov(domain), FI_LOG_CQ,
			"cq: size %zu above the maximum %u\n", attr->size,
			UTIL_CQ_MAX_SIZE);
		return -FI_EINVAL;
	}
	if (attr->wait_cond != FI_CQ_COND_NONE &&
	    attr->wait_cond != FI_CQ_COND_THRESHOLD) {
		FI_WARN(util_domain_prov(domain), FI_LOG_CQ,
			"cq: unknown wait condition %d\n", attr->wait_cond);
		return -FI_EINVAL;
	}
	if (attr->flags & FI_AFFINITY) {
		FI_WARN(util_domain_prov(domain), FI_LOG_CQ,
			"cq: FI_AFFINITY not supported\n");
		return -FI_ENOSYS;
	}
	return 0;
}

static size_t util_roundup_pow2(size_t n)
{
	size_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int util_cq_prealloc_errs(struct util_cq *cq)
{
	struct util_cq_err *err;
	int i;

	for (i = 0; i < UTIL_CQ_ERR_PREALLOC; i++) {
		err = malloc(sizeof(*err));
		if (!err)
			return -FI_ENOMEM;
		LL_PREPEND(cq->err_free, err);
	}
	return 0;
}

static int util_cq_init(struct util_cq *cq, struct util_domain *domain,
			const struct fi_cq_attr *attr, void *context)
{
	size_t size = attr->size ? attr->size : UTIL_CQ_DEFAULT_SIZE;
	int ret;

	cq->domain = domain;
	cq->spin_ns = domain->wait_spin_ns;
	atomic_init(&cq->ref, 0);
	atomic_init(&cq->poll_ref, 0);
	ret = util_cq_set_format(cq, attr->format);
	if (ret)
		return ret;
	size = util_roundup_pow2(size);
	cq->ring = calloc(size, sizeof(*cq->ring));
	if (!cq->ring)
		return -FI_ENOMEM;
	util_mem_prefault(cq->ring, size * sizeof(*cq->ring));
	cq->mask = size - 1;
	ret = util_lock_init(&cq->lock, domain->thread_safe);
	if (ret)
		goto free_ring;
	cq->shared = domain->thread_safe;
	util_idle_init(&cq->idle, weft_poll_yield);
	ret = util_wait_init(&cq->wait, domain->prov, attr->wait_obj);
	if (ret)
		goto fini_lock;
	cq->wait.slice_ms = domain->wait_slice_ms;
	ret = util_progress_list_init(&cq->progress, domain->thread_safe);
	if (ret)
		goto fini_wait;
	ret = util_cq_prealloc_errs(cq);
	if (ret)
		goto fini_progress;

	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = UTIL_OPS(&util_cq_fi_ops);
	cq->cq_fid.ops = UTIL_OPS(&util_cq_ops);
	return 0;

fini_progress:
	util_cq_free_lists(cq);
	util_progress_list_fini(&cq->progress);
fini_wait:
	util_wait_fini(&cq->wait);
fini_lock:
	util_lock_fini(&cq->lock);
free_ring:
	free(cq->ring);
	return ret;
}

int util_cq_open(struct fid_domain *domain_fid, struct fi_cq_attr *attr,
		 struct fid_cq **cq_fid, void *context)
{
	struct util_domain *domain;
	struct util_cq *cq;
	int ret;

	domain = domain_fid ? to_util_domain(domain_fid) : NULL;
	if (!domain || !attr || !cq_fid) {
		FI_WARN(util_domain_prov(domain), FI_LOG_CQ,
			"cq open: NULL domain, attr or cq\n");
		return -FI_EINVAL;
	}
	ret = util_cq_check_attr(domain, attr);
	if (ret)
		return ret;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	ret = util_cq_init(cq, domain, attr, context);
	if (ret) {
		free(cq);
		return ret;
	}
	util_domain_ref(domain);
	*cq_fid = &cq->cq_fid;
	return 0;
}

int util_cq_no_yield(struct fid_cq *cq_fid)
{
	if (!cq_fid || cq_fid->ops != UTIL_OPS(&util_cq_ops))
		return -FI_EINVAL;
	util_idle_init(&to_util_cq(cq_fid)->idle, 0);
	return 0;
}
