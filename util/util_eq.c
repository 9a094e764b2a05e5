/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_eq.h"
#include "weft/util_fabric.h"
#include "weft/util_noop.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

struct util_eq_event {
	struct util_eq_event *prev, *next;
	uint32_t event;
	bool is_err;
	struct fi_eq_err_entry err;	/* is_err */
	size_t len;			/* bytes in data */
	_Alignas(16) uint8_t data[];	/* event payload or err_data */
};

static struct util_eq_event *util_eq_event_alloc(size_t len)
{
	return calloc(1, sizeof(struct util_eq_event) + len);
}

static void util_eq_push(struct util_eq *eq, struct util_eq_event *ev)
{
	util_lock_acquire(&eq->lock);
	DL_APPEND(eq->events, ev);
	util_lock_release(&eq->lock);
	util_wait_signal_armed(&eq->wait);
}

int util_eq_write(struct util_eq *eq, uint32_t event, const void *buf,
		  size_t len)
{
	struct util_eq_event *ev;

	if (len > UTIL_EQ_MAX_EVENT || (len && !buf)) {
		FI_WARN(util_fabric_prov(eq->fabric), FI_LOG_EQ,
			"eq write: bad event length %zu\n", len);
		return -FI_EINVAL;
	}
	ev = util_eq_event_alloc(len);
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->len = len;
	if (len)
		memcpy(ev->data, buf, len);
	util_eq_push(eq, ev);
	return 0;
}

int util_eq_write_err(struct util_eq *eq, const struct fi_eq_err_entry *err)
{
	struct util_eq_event *ev;
	size_t len = err->err_data ? err->err_data_size : 0;

	if (len > UTIL_EQ_ERR_DATA_MAX)
		len = UTIL_EQ_ERR_DATA_MAX;
	ev = util_eq_event_alloc(len);
	if (!ev)
		return -FI_ENOMEM;
	ev->is_err = true;
	ev->err = *err;
	ev->len = len;
	if (len)
		memcpy(ev->data, err->err_data, len);
	ev->err.err_data = len ? ev->data : NULL;
	ev->err.err_data_size = len;
	util_eq_push(eq, ev);
	return 0;
}

static ssize_t util_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, uint64_t flags)
{
	struct util_eq *eq = to_util_eq(eq_fid);
	struct util_eq_event *ev;
	ssize_t ret;

	if (flags & ~(uint64_t)FI_PEEK) {
		FI_WARN(util_fabric_prov(eq->fabric), FI_LOG_EQ,
			"eq read: bad flags\n");
		return -FI_EINVAL;
	}
	util_lock_acquire(&eq->lock);
	ev = eq->events;
	if (!ev) {
		ret = -FI_EAGAIN;
		goto unlock;
	}
	if (ev->is_err) {
		ret = -FI_EAVAIL;
		goto unlock;
	}
	if (len < ev->len || (ev->len && !buf)) {
		FI_WARN(util_fabric_prov(eq->fabric), FI_LOG_EQ,
			"eq read: buffer of %zu bytes, event needs %zu\n",
			len, ev->len);
		ret = -FI_ETOOSMALL;
		goto unlock;
	}
	if (event)
		*event = ev->event;
	if (ev->len)
		memcpy(buf, ev->data, ev->len);
	ret = (ssize_t)ev->len;
	if (!(flags & FI_PEEK)) {
		DL_DELETE(eq->events, ev);
		free(ev);
	}
unlock:
	util_lock_release(&eq->lock);
	return ret;
}

static ssize_t util_eq_readerr(struct fid_eq *eq_fid,
			       struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct util_eq *eq = to_util_eq(eq_fid);
	struct util_eq_event *ev;
	void *user_data;
	size_t user_size, n;
	ssize_t ret = -FI_EAGAIN;

	if (!buf) {
		FI_WARN(util_fabric_prov(eq->fabric), FI_LOG_EQ,
			"eq readerr: NULL buf\n");
		return -FI_EINVAL;
	}
	util_lock_acquire(&eq->lock);
	ev = eq->events;
	if (!ev || !ev->is_err)
		goto unlock;
	user_data = buf->err_data;
	user_size = buf->err_data_size;
	*buf = ev->err;
	if (FI_VERSION_GE(eq->fabric->api_version, FI_VERSION(1, 5)) &&
	    user_data && user_size) {
		n = ev->len < user_size ? ev->len : user_size;
		if (n)
			memcpy(user_data, ev->data, n);
		buf->err_data = user_data;
		buf->err_data_size = n;
	}
	ret = sizeof(*buf);
	if (!(flags & FI_PEEK)) {
		DL_DELETE(eq->events, ev);
		free(eq->err_last);	/* its err_data lived until now */
		eq->err_last = ev;
	}
unlock:
	util_lock_release(&eq->lock);
	return ret;
}

static ssize_t util_eq_user_write(struct fid_eq *eq_fid, uint32_t event,
				  const void *buf, size_t len, uint64_t flags)
{
	int ret = util_eq_write(to_util_eq(eq_fid), event, buf, len);

	return ret ? ret : (ssize_t)len;
}

struct util_eq_sread_arg {
	struct util_eq *eq;
	uint32_t *event;
	void *buf;
	size_t len;
	uint64_t flags;
};

static ssize_t util_eq_sread_check(void *arg)
{
	struct util_eq_sread_arg *a = arg;

	return util_eq_read(&a->eq->eq_fid, a->event, a->buf, a->len,
			    a->flags);
}

static ssize_t util_eq_sread(struct fid_eq *eq_fid, uint32_t *event,
			     void *buf, size_t len, int timeout,
			     uint64_t flags)
{
	struct util_eq *eq = to_util_eq(eq_fid);
	struct util_eq_sread_arg arg = {
		.eq = eq, .event = event, .buf = buf, .len = len,
		.flags = flags,
	};
	ssize_t ret;

	ret = util_wait_until(&eq->wait, util_eq_sread_check, &arg, timeout,
			      eq->spin_ns);
	return ret == -FI_ETIMEDOUT ? -FI_EAGAIN : ret;
}

static const char *util_eq_strerror(struct fid_eq *eq_fid, int prov_errno,
				    const void *err_data, char *buf,
				    size_t len)
{
	struct util_eq *eq = to_util_eq(eq_fid);
	const char *str;

	/* The hook gets a NULL buf too (fabtests pass one): it returns its
	 * own storage then, as util_cq_strerror's domain hook does. */
	if (eq->strerror)
		return eq->strerror(prov_errno, err_data, buf, len);
	str = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);
	if (buf && len) {
		snprintf(buf, len, "%s", str);
		return buf;
	}
	return str;
}

static const struct fi_ops_eq util_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = util_eq_read,
	.readerr = util_eq_readerr,
	.write = util_eq_user_write,
	.sread = util_eq_sread,
	.strerror = util_eq_strerror,
};

static int util_eq_close(struct fid *fid)
{
	struct util_eq *eq = container_of(fid, struct util_eq, eq_fid.fid);
	struct util_eq_event *ev, *tmp;

	if (atomic_load(&eq->ref)) {
		FI_WARN(util_fabric_prov(eq->fabric), FI_LOG_EQ,
			"eq close: %d objects still bound\n",
			atomic_load(&eq->ref));
		return -FI_EBUSY;
	}
	DL_FOREACH_SAFE(eq->events, ev, tmp) {
		DL_DELETE(eq->events, ev);
		free(ev);
	}
	free(eq->err_last);
	atomic_fetch_sub(&eq->fabric->ref, 1);
	util_wait_fini(&eq->wait);
	util_lock_fini(&eq->lock);
	free(eq);
	return 0;
}

static int util_eq_control(struct fid *fid, int command, void *arg)
{
	struct util_eq *eq = container_of(fid, struct util_eq, eq_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		return util_wait_getwait(&eq->wait, arg);
	default:
		return -FI_ENOSYS;
	}
}

static const struct fi_ops util_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = util_eq_close,
	.bind = util_no_bind,
	.control = util_eq_control,
	.ops_open = util_no_ops_open,
	.tostr = util_no_tostr,
	.ops_set = util_no_ops_set,
};

int util_eq_open(struct fid_fabric *fabric_fid, struct fi_eq_attr *attr,
		 struct fid_eq **eq_fid, void *context)
{
	struct util_fabric *fabric;
	struct util_eq *eq;
	int ret;

	fabric = fabric_fid ? to_util_fabric(fabric_fid) : NULL;
	if (!fabric || !attr || !eq_fid) {
		FI_WARN(util_fabric_prov(fabric), FI_LOG_EQ,
			"eq open: NULL fabric, attr or eq\n");
		return -FI_EINVAL;
	}
	if (attr->flags & ~(uint64_t)FI_WRITE) {
		FI_WARN(util_fabric_prov(fabric), FI_LOG_EQ,
			"eq open: unsupported flags 0x%llx\n",
			(unsigned long long)attr->flags);
		return -FI_EINVAL;
	}
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	ret = util_wait_init(&eq->wait, fabric->prov, attr->wait_obj);
	if (ret)
		goto free_eq;
	ret = util_lock_init(&eq->lock, true);
	if (ret)
		goto fini_wait;
	eq->fabric = fabric;
	eq->spin_ns = UTIL_WAIT_SPIN_NS_DEFAULT;
	/* Nobody else writes our eventfd for control events, but writes
	 * always signal, so the whole timeout can be slept. */
	eq->wait.slice_ms = -1;
	atomic_init(&eq->ref, 0);
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = UTIL_OPS(&util_eq_fi_ops);
	eq->eq_fid.ops = UTIL_OPS(&util_eq_ops);
	atomic_fetch_add(&fabric->ref, 1);
	*eq_fid = &eq->eq_fid;
	return 0;

fini_wait:
	util_wait_fini(&eq->wait);
free_eq:
	free(eq);
	return ret;
}
