/* SPDX-License-Identifier: MIT */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_wait.h"
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

int util_wait_init(struct util_wait *wait, const struct fi_provider *prov,
		   enum fi_wait_obj type)
{
	wait->prov = prov;
	wait->efd = -1;
	wait->slice_ms = 1;
	atomic_init(&wait->armed, 0);
	atomic_init(&wait->signaled, 0);

	switch (type) {
	case FI_WAIT_NONE:
	case FI_WAIT_YIELD:
		wait->type = type;
		return 0;
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		wait->type = FI_WAIT_FD;
		wait->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (wait->efd < 0) {
			int err = errno;

			FI_WARN(wait->prov, FI_LOG_CORE,
				"eventfd: %s\n", strerror(err));
			return -err;
		}
		return 0;
	case FI_WAIT_SET:
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_POLLFD:
		FI_WARN(wait->prov, FI_LOG_CORE,
			"wait object %d not supported (NONE, UNSPEC, FD, YIELD are)\n",
			type);
		return -FI_ENOSYS;
	default:
		FI_WARN(wait->prov, FI_LOG_CORE,
			"unknown wait object %d\n", type);
		return -FI_EINVAL;
	}
}

void util_wait_fini(struct util_wait *wait)
{
	if (wait->efd >= 0)
		close(wait->efd);
	wait->efd = -1;
}

void util_wait_signal(struct util_wait *wait)
{
	uint64_t one = 1;

	/* EAGAIN means the counter is already non-zero: the sleeper will
	 * wake anyway, so the result does not matter. */
	if (wait->efd >= 0 && write(wait->efd, &one, sizeof(one)) < 0)
		return;
}

void util_wait_arm(struct util_wait *wait)
{
	uint64_t val;

	if (wait->efd >= 0 && read(wait->efd, &val, sizeof(val)) < 0) {
		/* EAGAIN: nothing to drain */
	}
	atomic_store(&wait->armed, 1);
}

int util_wait_getwait(struct util_wait *wait, void *arg)
{
	if (wait->type != FI_WAIT_FD || !arg)
		return -FI_ENODATA;
	*(int *)arg = wait->efd;
	return 0;
}

void util_wait_cancel(struct util_wait *wait)
{
	atomic_store(&wait->signaled, 1);
	util_wait_signal(wait);
}

static int util_wait_remaining_ms(uint64_t deadline)
{
	uint64_t now = util_time_ns();

	if (now >= deadline)
		return 0;
	return (int)((deadline - now + 999999) / 1000000);
}

/* Sleep on the eventfd for at most ms (bounded by the slice). */
static void util_wait_sleep(struct util_wait *wait, int ms)
{
	struct pollfd pfd = { .fd = wait->efd, .events = POLLIN };

	if (wait->slice_ms >= 0 && (ms < 0 || ms > wait->slice_ms))
		ms = wait->slice_ms;
	if (poll(&pfd, 1, ms) < 0 && errno != EINTR)
		FI_WARN(wait->prov, FI_LOG_CORE, "poll: %s\n",
			strerror(errno));
}

ssize_t util_wait_until(struct util_wait *wait, util_wait_check_fn check,
			void *arg, int timeout_ms, uint64_t spin_ns)
{
	uint64_t start = util_time_ns();
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX :
			    start + (uint64_t)timeout_ms * 1000000ull;
	uint64_t spin_end = start + spin_ns;
	ssize_t ret;

	for (;;) {
		if (atomic_exchange(&wait->signaled, 0))
			return -FI_EAGAIN;
		ret = check(arg);
		if (ret != -FI_EAGAIN)
			return ret;
		uint64_t now = util_time_ns();
		if (now >= deadline)
			return -FI_ETIMEDOUT;
		if (now < spin_end)
			continue;
		if (wait->type != FI_WAIT_FD) {
			sched_yield();
			continue;
		}
		/* Arm, then look once more: a writer that missed the armed
		 * flag wrote its entry before our final check saw it. */
		util_wait_arm(wait);
		ret = check(arg);
		if (ret != -FI_EAGAIN) {
			atomic_store(&wait->armed, 0);
			return ret;
		}
		util_wait_sleep(wait, timeout_ms < 0 ? -1 :
				util_wait_remaining_ms(deadline));
		atomic_store(&wait->armed, 0);
	}
}
