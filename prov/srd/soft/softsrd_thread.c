/* SPDX-License-Identifier: MIT */
/*
 * The device's own thread: it does only what must happen while the
 * application is away (answering peers' sends, serving RDMA reads and
 * writes, retransmitting). While the application keeps calling post/poll
 * it stays out of the way, because waking a thread on the other vCPU costs
 * more than a whole round trip here. After work it spins briefly before it
 * blocks in ppoll on the socket.
 *
 * It must not stay on the socket's wait queue once the application is back:
 * every datagram would then wake it, inside the sender's send call (on
 * loopback the sender's CPU delivers), measured ~0.9 us of a ~4 us send on
 * a 2-vCPU guest. A thread woken but starved (SCHED_FIFO, pinned with a
 * spinning application of the same priority) cannot leave ppoll by itself,
 * so the application's first call after an absence kicks it out
 * (softsrd_thread_kick) and yields the CPU to it once.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* The application counts as present this long after its last call. */
#define SOFTSRD_APP_GRACE_NS 1000000ull
#define SOFTSRD_SPIN_NS        50000ull
#define SOFTSRD_IDLE_NS     100000000ull

static void softsrd_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

static bool softsrd_app_present(struct softsrd_ctx *ctx, uint64_t now)
{
	return now - atomic_load(&ctx->app_ns) < SOFTSRD_APP_GRACE_NS;
}

static void softsrd_thread_wait(struct softsrd_ctx *ctx, uint64_t ns)
{
	struct pollfd pfd[2] = {
		{ .fd = ctx->wire.fd, .events = POLLIN },
		{ .fd = ctx->wake_fd, .events = POLLIN },
	};
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };
	uint64_t v;

	atomic_store(&ctx->thread_waits, true);
	/* the application may have come back since the thread looked */
	if (!softsrd_app_present(ctx, util_time_ns()))
		ppoll(pfd, 2, &ts, NULL);
	atomic_store(&ctx->thread_waits, false);
	if (pfd[1].revents & POLLIN)
		(void)!read(ctx->wake_fd, &v, sizeof(v));
}

/* The application is back (softsrd_app_enter): the thread leaves ppoll,
 * and the socket's wait queue, before the application's traffic starts. */
void softsrd_thread_kick(struct softsrd_ctx *ctx)
{
	uint64_t one = 1;

	if (!atomic_exchange(&ctx->thread_waits, false))
		return;
	(void)!write(ctx->wake_fd, &one, sizeof(one));
	sched_yield();
}

static void *softsrd_thread_main(void *arg)
{
	struct softsrd_ctx *ctx = arg;
	uint64_t spin_until = 0;

	while (!atomic_load(&ctx->stop)) {
		uint64_t now = util_time_ns();
		uint64_t app = atomic_load_explicit(&ctx->app_ns,
						    memory_order_relaxed);
		bool busy;
		int n;

		if (now - app < SOFTSRD_APP_GRACE_NS) {
			/* off the socket: the application receives */
			softsrd_sleep_ns(app + SOFTSRD_APP_GRACE_NS - now);
			continue;
		}
		pthread_mutex_lock(&ctx->lock);
		ctx->now = now;
		n = softsrd_progress(ctx);
		busy = softsrd_busy(ctx);
		pthread_mutex_unlock(&ctx->lock);
		if (n > 0) {
			spin_until = now + SOFTSRD_SPIN_NS;
			continue;
		}
		if (now < spin_until) {
			sched_yield();
			continue;
		}
		softsrd_thread_wait(ctx, busy ? ctx->timer_ns :
					       SOFTSRD_IDLE_NS);
	}
	return NULL;
}

int softsrd_thread_start(struct softsrd_ctx *ctx)
{
	int ret;

	ctx->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ctx->wake_fd < 0)
		return -1;
	atomic_store(&ctx->stop, false);
	atomic_store(&ctx->thread_waits, false);
	ret = pthread_create(&ctx->thread, NULL, softsrd_thread_main, ctx);
	if (ret) {
		FI_WARN(softsrd_prov, FI_LOG_CORE, "pthread_create: %s\n",
			strerror(ret));
		close(ctx->wake_fd);
		return -1;
	}
	return 0;
}

void softsrd_thread_stop(struct softsrd_ctx *ctx)
{
	uint64_t one = 1;

	atomic_store(&ctx->stop, true);
	(void)!write(ctx->wake_fd, &one, sizeof(one));
	pthread_join(ctx->thread, NULL);
	close(ctx->wake_fd);
}
