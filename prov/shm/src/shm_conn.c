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

#include "shm.h"

/* A peer that keeps its queue full is checked for liveness this often. */
#define SHM_FULL_CHECK_MASK 0xfffu

uint64_t shm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t shm_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

int shm_conn_open_peer(struct shm_ep *ep, struct shm_conn *conn)
{
	int ret;

	if (conn->peer)
		return 0;
	if (conn->dead)
		return -FI_EHOSTUNREACH;
	ret = shm_peer_open(ep->region, conn->name, &conn->peer);
	if (ret) {
		FI_WARN(&shm_prov, FI_LOG_EP_DATA, "cannot reach %s: %s\n",
			conn->name, fi_strerror(-ret));
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

static int shm_conn_tx_slow(struct shm_ep *ep, fi_addr_t fi_addr,
			    const void *addr, uint64_t gen,
			    struct shm_conn **conn)
{
	char name[SHM_NAME_MAX];
	struct shm_conn *c;
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
	if (!c)
		return -FI_ENOMEM;
	ret = shm_conn_open_peer(ep, c);
	if (ret)
		return ret;
	ep->tx_map[fi_addr].gen = gen;
	ep->tx_map[fi_addr].conn = c;
	*conn = c;
	return 0;
}

/* The peer behind fi_addr, its region mapped. */
int shm_conn_tx(struct shm_ep *ep, fi_addr_t fi_addr, struct shm_conn **conn)
{
	struct util_av *av = ep->util.av;
	struct util_av_slot *slot = util_av_slot(av, fi_addr);
	const struct shm_av_data *data;
	struct shm_conn *c;

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
	}
	return shm_conn_tx_slow(ep, fi_addr, slot->bytes, data->gen, conn);
}

struct shm_conn *shm_conn_by_src(struct shm_ep *ep,
				 const struct shm_cell_hdr *hdr)
{
	char name[SHM_NAME_MAX];
	struct shm_src_map *m;
	struct shm_conn *c;
	uint32_t gen;

	if (WEFT_UNLIKELY(hdr->src >= ep->src_map_len))
		return NULL;
	m = &ep->src_map[hdr->src];
	if (WEFT_LIKELY(m->conn && m->gen == hdr->src_gen))
		return m->conn;
	if (shm_region_slot_name(ep->region, hdr->src, name, &gen))
		return NULL;
	if ((uint16_t)gen != hdr->src_gen)
		return NULL;
	c = shm_conn_get(ep, name);
	if (!c)
		return NULL;
	m->conn = c;
	m->gen = hdr->src_gen;
	return c;
}

fi_addr_t shm_conn_fi_addr(struct shm_ep *ep, struct shm_conn *conn)
{
	char addr[SHM_ADDR_LEN] = { 0 };

	if (WEFT_LIKELY(conn->fi_addr != FI_ADDR_NOTAVAIL &&
			util_av_addr(ep->util.av, conn->fi_addr)))
		return conn->fi_addr;
	if (!ep->util.av || shm_addr_from_region(conn->name, addr, sizeof(addr)))
		return FI_ADDR_NOTAVAIL;
	conn->fi_addr = util_av_reverse_lookup(ep->util.av, addr);
	return conn->fi_addr;
}

static void shm_conn_mark_dead(struct shm_ep *ep, struct shm_conn *conn)
{
	FI_WARN(&shm_prov, FI_LOG_EP_DATA, "peer %s is gone\n", conn->name);
	conn->dead = true;
	shm_tx_fail_conn(ep, conn, FI_EHOSTUNREACH);
	shm_rx_fail_conn(ep, conn);
	shm_rma_bounce_fail_conn(ep, conn);
	shm_region_reap(ep->region);
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
	static __thread unsigned int refusals;

	if ((++refusals & SHM_FULL_CHECK_MASK) == 0 &&
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
	free(ep->tx_map);
	ep->tx_map = NULL;
	ep->tx_map_len = 0;
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
