/* SPDX-License-Identifier: MIT */
/*
 * shm addresses in util's AV: fixed SHM_ADDR_LEN bytes, "fi_shm://<name>"
 * then NUL padding. The padding must be zero so that the same endpoint
 * always hashes to the same slot (FI_SOURCE reverse lookup).
 */
#include "weft/compat.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <utlist.h>

#include "shm.h"

static int shm_av_validate(struct util_av *av, const void *addr)
{
	const char *s = addr;
	int n = shm_addr_name_len(addr, SHM_ADDR_LEN);
	size_t i;

	(void)av;
	if (n < 0) {
		FI_WARN(&shm_prov, FI_LOG_AV, "not an fi_shm:// address\n");
		return -FI_EINVAL;
	}
	for (i = SHM_ADDR_PREFIX_LEN + (size_t)n; i < SHM_ADDR_LEN; i++) {
		if (s[i]) {
			FI_WARN(&shm_prov, FI_LOG_AV,
				"shm address not NUL padded to %d bytes\n",
				SHM_ADDR_LEN);
			return -FI_EINVAL;
		}
	}
	return 0;
}

static _Atomic uint64_t shm_av_gen;

static int shm_av_insert(struct util_av *av, fi_addr_t fi_addr,
			 const void *addr, void *data)
{
	struct shm_av_data *d = data;

	(void)av; (void)fi_addr; (void)addr;
	d->gen = atomic_fetch_add(&shm_av_gen, 1) + 1;
	return 0;
}

/* Every shm endpoint of the process, for shm_av_remove. The lock is a
 * leaf: taken under the AV lock, never while taking another. */
static pthread_mutex_t shm_av_eps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shm_ep *shm_av_eps;

void shm_av_ep_add(struct shm_ep *ep)
{
	pthread_mutex_lock(&shm_av_eps_lock);
	DL_APPEND2(shm_av_eps, ep, av_prev, av_next);
	pthread_mutex_unlock(&shm_av_eps_lock);
}

void shm_av_ep_del(struct shm_ep *ep)
{
	pthread_mutex_lock(&shm_av_eps_lock);
	DL_DELETE2(shm_av_eps, ep, av_prev, av_next);
	pthread_mutex_unlock(&shm_av_eps_lock);
}

/*
 * The AV runs under its own lock, which progress takes after the
 * endpoint's, so it does not touch the endpoints' peers itself: it marks
 * the slot stale and flags every endpoint (whichever AV it is bound to:
 * removals are rare, a sweep is cheap). Each endpoint, at its next
 * progress, drops the conn of that address from its fi_addr cache and
 * unmaps the peer once nothing in flight uses the mapping
 * (shm_conn_sweep). gen 0 is never handed out, so the sweep sees the slot
 * stale even before util frees it.
 */
static void shm_av_changed(void)
{
	struct shm_ep *ep;

	pthread_mutex_lock(&shm_av_eps_lock);
	DL_FOREACH2(shm_av_eps, ep, av_next)
		atomic_fetch_or_explicit(&ep->av_dirty, SHM_AV_CHANGED,
					 memory_order_release);
	pthread_mutex_unlock(&shm_av_eps_lock);
}

static void shm_av_remove(struct util_av *av, fi_addr_t fi_addr,
			  const void *addr, void *data)
{
	struct shm_av_data *d = data;

	(void)av; (void)fi_addr; (void)addr;
	d->gen = 0;
	shm_av_changed();
}

/* Inserted again: a new generation, as for a new insert, so that every
 * endpoint looks at the address again before its next send to it
 * (shm_conn_tx_slow), which is where an endpoint that replaced the one
 * we knew under that name is found (shm_conn_renew). */
static void shm_av_insert_again(struct util_av *av, fi_addr_t fi_addr,
				const void *addr, void *data)
{
	struct shm_av_data *d = data;

	(void)av; (void)fi_addr; (void)addr;
	d->gen = atomic_fetch_add(&shm_av_gen, 1) + 1;
	shm_av_changed();
}

static const char *shm_av_straddr(const void *addr, char *buf, size_t *len)
{
	size_t n = strnlen(addr, SHM_ADDR_LEN);

	if (*len)
		snprintf(buf, *len, "%.*s", (int)n, (const char *)addr);
	*len = n + 1;
	return buf;
}

const struct util_av_prov shm_av_prov = {
	.addrlen = SHM_ADDR_LEN,
	.data_size = sizeof(struct shm_av_data),
	.validate = shm_av_validate,
	.insert = shm_av_insert,
	.insert_again = shm_av_insert_again,
	.remove = shm_av_remove,
	.straddr = shm_av_straddr,
};
