/* SPDX-License-Identifier: MIT */
/*
 * Peers of an endpoint. Transmit finds a peer by fi_addr through a small
 * array cache validated against the AV slot's generation; receive finds the
 * sender by the transport's slot index through another array cache
 * validated by the slot generation the transport stamps on each cell. Both
 * fall back (control path) to a hash of peers by region name, so a peer that
 * is both a target and a source is one struct shm_conn.
 */
#include "weft/compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <utlist.h>

#include "shm.h"

/* A peer that keeps its queue full is checked for liveness this often. */
#define SHM_FULL_CHECK_MASK 0xfffu

static struct shm_conn *shm_conn_get(struct shm_ep *ep, const char *name)
{
	struct shm_conn *conn;

	HASH_FIND_STR(ep->conns, name, conn);
	if (conn)
		return conn;
	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return NULL;
	snprintf(conn->name, sizeof(conn->name), "%s", name);
	conn->fi_addr = FI_ADDR_NOTAVAIL;
	conn->split_share = SHM_SPLIT_ONE / 2;
	HASH_ADD_STR(ep->conns, name, conn);
	return conn;
}

/* A chosen name of our job's namespace that nobody holds: the peer may
 * be of another job, or started by hand (FI_SHM_JOB, fi_shm(7)). */
static bool shm_conn_ns_hint(const struct shm_conn *conn, int ret)
{
	const char *ns = shm_region_namespace();
	char pfx[SHM_NAME_MAX];

	if (ret != -FI_ENOENT || ns[0] == 'n')
		return false;
	snprintf(pfx, sizeof(pfx), SHM_NAME_PREFIX "%u-%s-",
		 (unsigned)getuid(), ns);
	return !strncmp(conn->name, pfx, strlen(pfx));
}

int shm_conn_open_peer(struct shm_ep *ep, struct shm_conn *conn)
{
	int ret;

	if (conn->peer)
		return 0;
	if (conn->dead)
		return -FI_EHOSTUNREACH;
	ret = shm_peer_open(ep->region, conn->name, &conn->peer);
	if (ret) {
		WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA,
			"cannot reach %s: %s%s%s\n",
			conn->name, fi_strerror(-ret),
			shm_conn_ns_hint(conn, ret) ? "; names chosen through "
			"node/service are in job namespace " : "",
			shm_conn_ns_hint(conn, ret) ? shm_job_described() : "");
		conn->peer = NULL;
		if (ret == -FI_ECONNREFUSED)
			conn->dead = true;
		return ret == -FI_ENOENT || ret == -FI_ECONNREFUSED ?
			-FI_EHOSTUNREACH : ret;
	}
	return 0;
}

static int shm_tx_map_grow(struct shm_ep *ep, fi_addr_t fi_addr)
{
	size_t len = ep->tx_map_len ? ep->tx_map_len : 64;
	struct shm_tx_map *map;

	while (len <= fi_addr)
		len *= 2;
	map = realloc(ep->tx_map, len * sizeof(*map));
	if (!map)
		return -FI_ENOMEM;
	memset(map + ep->tx_map_len, 0,
	       (len - ep->tx_map_len) * sizeof(*map));
	ep->tx_map = map;
	ep->tx_map_len = len;
	return 0;
}

static bool shm_conn_busy(struct shm_ep *ep, struct shm_conn *c);
static void shm_conn_fail(struct shm_ep *ep, struct shm_conn *conn);

/* c no longer names the endpoint under its name: its operations fail
 * (the endpoint they went to is gone), and it leaves the name to a new
 * conn. It is kept (dead) because cells of the old endpoint still in our
 * queue, unexpected messages and caches point at it; its mapping goes
 * once nothing uses it (shm_conn_sweep). */
static void shm_conn_retire(struct shm_ep *ep, struct shm_conn *c)
{
	size_t i;

	FI_INFO(&shm_prov, FI_LOG_AV, "%s was replaced by a new endpoint\n",
		c->name);
	HASH_DEL(ep->conns, c);
	/* Its addresses find the new endpoint (before shm_conn_fail, which
	 * would mark them dead); those of a peer already found dead stay
	 * dead until inserted again. */
	for (i = 0; i < ep->tx_map_len; i++)
		if (ep->tx_map[i].conn == c)
			ep->tx_map[i].conn = NULL;
	if (!c->dead)
		shm_conn_fail(ep, c);
	if (c->av_removed) {
		c->av_removed = false;
		ep->conns_removed--;
	}
	c->fi_addr = FI_ADDR_NOTAVAIL;
	c->retired_next = ep->retired;
	ep->retired = c;
	if (c->peer) {
		ep->retired_mapped++;
		atomic_fetch_or_explicit(&ep->av_dirty, SHM_AV_PENDING,
					 memory_order_relaxed);
	}
}

/* The conn for c's name as it is now: c, or a new one when the endpoint
 * c knew is dead or its region is no longer the one under the name (it
 * closed and a new endpoint took the name: fabtests' multi-client runs
 * its clients one after the other under one address). Called when an
 * address is inserted (again) and when a new sender slot appears, not
 * per message. */
static struct shm_conn *shm_conn_renew(struct shm_ep *ep, struct shm_conn *c)
{
	char name[SHM_NAME_MAX];

	if (!c->dead && (!c->peer || shm_peer_current(c->peer)))
		return c;
	memcpy(name, c->name, sizeof(name));
	shm_conn_retire(ep, c);
	return shm_conn_get(ep, name);
}

/* The address at generation gen names a dead peer: its cache entry
 * sends every later operation to the checked path, which refuses it. */
static void shm_tx_map_dead(struct shm_ep *ep, fi_addr_t fi_addr,
			    uint64_t gen)
{
	ep->tx_map[fi_addr].conn = NULL;
	ep->tx_map[fi_addr].gen = gen | SHM_TX_MAP_DEAD;
}

static int shm_conn_tx_slow(struct shm_ep *ep, fi_addr_t fi_addr,
			    const void *addr, uint64_t gen,
			    struct shm_conn **conn)
{
	char name[SHM_NAME_MAX];
	struct shm_conn *c, *old;
	int ret;

	ret = shm_addr_to_region(addr, SHM_ADDR_LEN, name, sizeof(name));
	if (ret)
		return ret;
	if (fi_addr >= ep->tx_map_len) {
		ret = shm_tx_map_grow(ep, fi_addr);
		if (ret)
			return ret;
	}
	c = shm_conn_get(ep, name);
	/* A peer found dead stays dead for the fi_addrs that named it; an
	 * address inserted (again) since is the application's word that
	 * something may live under that name now. */
	if (c && (ep->tx_map[fi_addr].conn != c ||
		  ep->tx_map[fi_addr].gen != gen))
		c = shm_conn_renew(ep, c);
	if (!c)
		return -FI_ENOMEM;
	ret = shm_conn_open_peer(ep, c);
	if (ret) {
		/* Not renewed (and reallocated) at every later call. */
		if (c->dead)
			shm_tx_map_dead(ep, fi_addr, gen);
		return ret;
	}
	if (c->av_removed) {		/* inserted again before it went */
		c->av_removed = false;
		ep->conns_removed--;
	}
	/* The slot went to another address before a sweep saw it free: the
	 * old one was removed (the sweep unmarks it if it is still mapped
	 * under another fi_addr). */
	old = ep->tx_map[fi_addr].conn;
	if (old && old != c && !old->av_removed) {
		old->av_removed = true;
		ep->conns_removed++;
		atomic_fetch_or_explicit(&ep->av_dirty, SHM_AV_CHANGED,
					 memory_order_relaxed);
	}
	ep->tx_map[fi_addr].gen = gen;
	ep->tx_map[fi_addr].conn = c;
	*conn = c;
	return 0;
}

static int __attribute__((cold)) shm_conn_tx_dead(struct shm_ep *ep,
						   fi_addr_t fi_addr)
{
	(void)ep;
	/* Sparse: an application may retry in a loop. */
	WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA,
		"fi_addr %llu: its peer is gone (insert the address again to reach a new endpoint under its name)\n",
		(unsigned long long)fi_addr);
	return -FI_EHOSTUNREACH;
}

/* The peer behind fi_addr, its region mapped. A dead peer's entries are
 * cleared by shm_conn_fail, so the inline fast path (shm_conn_tx) never
 * returns one and needs no test of its own. */
int shm_conn_tx_checked(struct shm_ep *ep, fi_addr_t fi_addr,
			struct shm_conn **conn)
{
	struct util_av *av = ep->util.av;
	struct util_av_slot *slot;
	const struct shm_av_data *data;
	struct shm_conn *c;

	slot = util_av_slot(av, fi_addr);
	if (WEFT_UNLIKELY(!slot))
		return -FI_EINVAL;
	data = (const void *)(slot->bytes + av->data_off);
	if (WEFT_LIKELY(fi_addr < ep->tx_map_len)) {
		c = ep->tx_map[fi_addr].conn;
		if (WEFT_LIKELY(c && ep->tx_map[fi_addr].gen == data->gen &&
				c->peer)) {
			*conn = c;
			return 0;
		}
		if (ep->tx_map[fi_addr].gen == (data->gen | SHM_TX_MAP_DEAD))
			return shm_conn_tx_dead(ep, fi_addr);
	}
	return shm_conn_tx_slow(ep, fi_addr, slot->bytes, data->gen, conn);
}

/* First cell from a slot (or from a new occupant of it): find its conn
 * by the name the slot holds. Out of line: the name buffer would cost
 * every call of the fast path below its setup. */
static struct shm_conn * __attribute__((noinline))
shm_conn_by_src_slow(struct shm_ep *ep, const struct shm_cell_hdr *hdr,
		     struct shm_src_map *m)
{
	char name[SHM_NAME_MAX];
	struct shm_conn *c;
	uint32_t gen;

	if (shm_region_slot_name(ep->region, hdr->src, name, &gen))
		return NULL;
	if ((uint16_t)gen != hdr->src_gen)
		return NULL;
	c = shm_conn_get(ep, name);
	if (c)
		c = shm_conn_renew(ep, c);
	if (!c)
		return NULL;
	c->credit = &ep->region->slots[hdr->src].consumed;
	m->conn = c;
	m->gen = hdr->src_gen;
	return c;
}

struct shm_conn *shm_conn_by_src_checked(struct shm_ep *ep,
					 const struct shm_cell_hdr *hdr)
{
	struct shm_src_map *m;

	if (WEFT_UNLIKELY(hdr->src >= ep->src_map_len))
		return NULL;
	m = &ep->src_map[hdr->src];
	if (WEFT_LIKELY(m->conn && m->gen == hdr->src_gen))
		return m->conn;
	return shm_conn_by_src_slow(ep, hdr, m);
}

/* conn's fi_addr not known (or no longer valid): look its address up. */
static fi_addr_t __attribute__((noinline))
shm_conn_fi_addr_slow(struct shm_ep *ep, struct shm_conn *conn)
{
	char addr[SHM_ADDR_LEN] = { 0 };

	if (!ep->util.av || shm_addr_from_region(conn->name, addr, sizeof(addr)))
		return FI_ADDR_NOTAVAIL;
	conn->fi_addr = util_av_reverse_lookup(ep->util.av, addr);
	/* A chosen name of our namespace has a second spelling, its full
	 * name (srd's peering inserts that one). */
	if (conn->fi_addr == FI_ADDR_NOTAVAIL && addr[SHM_ADDR_PREFIX_LEN] &&
	    strncmp(addr + SHM_ADDR_PREFIX_LEN, "weftshm-", 8)) {
		memset(addr, 0, sizeof(addr));
		if (!shm_addr_from_region_full(conn->name, addr, sizeof(addr)))
			conn->fi_addr = util_av_reverse_lookup(ep->util.av,
							       addr);
	}
	return conn->fi_addr;
}

fi_addr_t shm_conn_fi_addr_checked(struct shm_ep *ep, struct shm_conn *conn)
{
	if (WEFT_LIKELY(conn->fi_addr != FI_ADDR_NOTAVAIL &&
			util_av_addr(ep->util.av, conn->fi_addr)))
		return conn->fi_addr;
	return shm_conn_fi_addr_slow(ep, conn);
}

/* Its operations fail; nothing is sent to it any more. */
static void shm_conn_fail(struct shm_ep *ep, struct shm_conn *conn)
{
	size_t i;

	conn->dead = true;
	/* The cached fast path checks only that a conn is mapped, which a
	 * dead one still is (queued cells and caches point at it). */
	for (i = 0; i < ep->tx_map_len; i++)
		if (ep->tx_map[i].conn == conn)
			shm_tx_map_dead(ep, i, ep->tx_map[i].gen);
	shm_tx_fail_conn(ep, conn, FI_EHOSTUNREACH);
	shm_rx_fail_conn(ep, conn);
	shm_rma_bounce_fail_conn(ep, conn);
	shm_region_reap(ep->region);
}

static void shm_conn_mark_dead(struct shm_ep *ep, struct shm_conn *conn)
{
	WEFT_WARN_SPARSE(&shm_prov, FI_LOG_EP_DATA,
		"peer %s is gone\n", conn->name);
	shm_conn_fail(ep, conn);
}

bool shm_conn_check(struct shm_ep *ep, struct shm_conn *conn)
{
	if (conn->dead)
		return false;
	if (!conn->peer || shm_peer_alive(conn->peer))
		return true;
	shm_conn_mark_dead(ep, conn);
	return false;
}

ssize_t shm_conn_full(struct shm_ep *ep, struct shm_conn *conn)
{
	if ((++conn->refusals & SHM_FULL_CHECK_MASK) == 0 &&
	    !shm_conn_check(ep, conn))
		return -FI_EHOSTUNREACH;
	return -FI_EAGAIN;
}

void shm_conn_close_all(struct shm_ep *ep)
{
	struct shm_conn *conn, *tmp;

	HASH_ITER(hh, ep->conns, conn, tmp) {
		HASH_DEL(ep->conns, conn);
		shm_peer_close(conn->peer);
		free(conn);
	}
	while ((conn = ep->retired)) {
		ep->retired = conn->retired_next;
		shm_peer_close(conn->peer);
		free(conn);
	}
	ep->retired_mapped = 0;
	free(ep->tx_map);
	ep->tx_map = NULL;
	ep->tx_map_len = 0;
}

/* Mark the conns whose AV address is gone (slot freed, or reused with
 * another generation) and drop them from the fi_addr cache. A conn that
 * another, live fi_addr maps to (removed and inserted again before this
 * sweep) stays. */
static void shm_conn_mark_removed(struct shm_ep *ep)
{
	struct util_av *av = ep->util.av;
	struct shm_conn *c, *tmp;
	size_t i;

	/* FI_SOURCE's cached fi_addr may now name another address. */
	HASH_ITER(hh, ep->conns, c, tmp)
		c->fi_addr = FI_ADDR_NOTAVAIL;
	for (i = 0; i < ep->tx_map_len; i++) {
		struct util_av_slot *slot;
		const struct shm_av_data *d;

		c = ep->tx_map[i].conn;
		if (!c)
			continue;
		slot = av ? util_av_slot(av, i) : NULL;
		d = slot ? (const void *)(slot->bytes + av->data_off) : NULL;
		if (d && d->gen == ep->tx_map[i].gen)
			continue;
		ep->tx_map[i].conn = NULL;
		if (!c->av_removed) {
			c->av_removed = true;
			ep->conns_removed++;
		}
	}
	for (i = 0; i < ep->tx_map_len; i++) {
		c = ep->tx_map[i].conn;
		if (c && c->av_removed) {
			c->av_removed = false;
			ep->conns_removed--;
		}
	}
}

/* A large message from c waits unexpected: matching it pulls from c. */
static bool shm_conn_unexp_rts(struct util_match_queue *q,
			       struct shm_conn *c)
{
	struct util_unexp_entry *u;

	DL_FOREACH(q->unexp, u) {
		struct util_srx_unexp *su = container_of(u,
							 struct util_srx_unexp,
							 match);
		struct shm_unexp *ux = container_of(su, struct shm_unexp, srx);

		/* A peer owner's queue holds its own entries too. */
		if (su->ops != &shm_srx_ops)
			continue;
		if (ux->conn == c && ux->op == SHM_OP_RTS)
			return true;
	}
	return false;
}

/* Does anything still need c's mapping (or our slot in its region)? Then
 * releasing now is unsafe and waits: our operations toward it (a bounce
 * read drains its segments through the mapping: unmapped, that faults;
 * others wait for liveness checks that use it), its transfers we pull or
 * serve or that wait unexpected (a region reopened by name could belong
 * to a later owner by then), its pending replies, our segments it holds,
 * and our cells in its queue: the peer finds their sender by our slot there, and a freed slot
 * makes it drop them (a read request lost that way never completes), so
 * the slot is kept until it consumed them (or died). fi_av(3) leaves
 * operations on removed addresses undefined; these simply complete. */
static bool shm_conn_busy(struct shm_ep *ep, struct shm_conn *c)
{
	struct shm_pull *p;

	if (c->inflight || c->rma_busy || c->bounce_segs)
		return true;
	DL_FOREACH(ep->pulls, p)
		if (p->conn == c)
			return true;
	if (c->acks_pending)
		return true;
	if (shm_conn_unexp_rts(&ep->rx->msg_q, c) ||
	    shm_conn_unexp_rts(&ep->rx->tag_q, c) ||
	    shm_conn_unexp_rts(&ep->rx->coll_q, c))
		return true;
	if (!c->peer || c->dead || shm_peer_drained(c->peer))
		return false;
	/* A peer that stopped consuming: its liveness, now and then. */
	return (ep->progress_calls & 0x3ffu) || shm_conn_check(ep, c);
}

/* Unmap an idle removed peer and give its slot back. The conn itself
 * stays (receive caches and queued messages point at it) and maps the
 * peer again if it is inserted again or sends to us. */
static void shm_conn_release(struct shm_ep *ep, struct shm_conn *c)
{
	FI_INFO(&shm_prov, FI_LOG_AV, "%s left the AV: unmapped\n", c->name);
	shm_peer_close(c->peer);
	c->peer = NULL;
	c->av_removed = false;
	ep->conns_removed--;
}

/* Retired conns keep their mapping while something still uses it. */
static void shm_conn_unmap_retired(struct shm_ep *ep)
{
	struct shm_conn *c;

	for (c = ep->retired; c; c = c->retired_next) {
		if (!c->peer || shm_conn_busy(ep, c))
			continue;
		shm_peer_close(c->peer);
		c->peer = NULL;
		ep->retired_mapped--;
	}
}

void shm_conn_sweep(struct shm_ep *ep)
{
	uint32_t what = atomic_exchange_explicit(&ep->av_dirty, 0,
						 memory_order_acquire);
	struct shm_conn *c, *tmp;

	if (what & SHM_AV_CHANGED)
		shm_conn_mark_removed(ep);
	if (ep->retired_mapped)
		shm_conn_unmap_retired(ep);
	if (!ep->conns_removed && !ep->retired_mapped)
		return;
	HASH_ITER(hh, ep->conns, c, tmp)
		if (c->av_removed && !shm_conn_busy(ep, c))
			shm_conn_release(ep, c);
	/* Deferred releases keep progress coming back here. */
	if (ep->conns_removed || ep->retired_mapped)
		atomic_fetch_or_explicit(&ep->av_dirty, SHM_AV_PENDING,
					 memory_order_relaxed);
}

/* Transfers toward one peer hold at most this many of our segments, so a
 * peer that stops draining (a receiver that does not progress) leaves the
 * rest of the pool to the others. */
static uint32_t shm_conn_bounce_cap(const struct shm_ep *ep)
{
	uint32_t n = ep->region->attr.bounce_seg_count;
	uint32_t cap = shm_env.bounce_peer_segs ? shm_env.bounce_peer_segs :
						  n / 2;

	return cap < 1 ? 1 : cap > n ? n : cap;
}

int shm_conn_bounce_push(struct shm_ep *ep, struct shm_conn *conn,
			 struct shm_bounce_tx *b)
{
	uint32_t held = shm_bounce_held(b), cap = shm_conn_bounce_cap(ep);
	uint32_t room = cap > conn->bounce_segs ? cap - conn->bounce_segs : 0;
	int ret;

	/* window 0 would mean the whole pool. */
	if (!held && !room && b->pushed < b->total)
		return 0;
	b->window = held + room;
	ret = shm_bounce_push(ep->region, b);
	conn->bounce_segs = conn->bounce_segs - held + shm_bounce_held(b);
	return ret;
}

void shm_conn_bounce_abort(struct shm_ep *ep, struct shm_conn *conn,
			   struct shm_bounce_tx *b)
{
	conn->bounce_segs -= shm_bounce_held(b);
	shm_bounce_tx_abort(ep->region, b);
}
