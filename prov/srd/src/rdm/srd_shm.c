/* SPDX-License-Identifier: MIT */
/*
 * Peers of this host through shm. An endpoint whose name offers it
 * (SRD_EP_NAME_F_SHM, FI_SRD_USE_SHM, FI_OPT_SHARED_MEMORY_PERMITTED)
 * opens, at fi_enable, an shm endpoint of its own through the public API,
 * at an shm address derived from its srd name, so that a peer computes it
 * without asking. The shm endpoint matches arriving messages in this
 * endpoint's util_srx (fi_srx_context with FI_PEER): one receive side for
 * both paths, so matching order, peek/claim, multi-recv and cancel do not
 * depend on the path, and FI_SOURCE reports srd's fi_addr (FI_AV_USER_ID
 * in shm's AV). Sends toward a peer whose name has our host key and the
 * flag go to shm (srd_shm_addr, one branch per send) with the transfer
 * entry as context; our progress reads shm's CQ, which also runs shm's
 * progress, and completes the entries as the device path does, so CQs and
 * counters see one endpoint. The collective class stays on the device.
 */
#include "weft/compat.h"
#include "srd_proto.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_tagged.h>

#define SRD_SHM_ADDR_LEN 64		/* shm's fixed address length */
#define SRD_SHM_CQ_BATCH 16

static void srd_shm_tx_release(struct srd_ep *ep, struct srd_tx_entry *tx)
{
	if (tx->shm_bounce) {
		util_pool_put(&ep->shm->bounce_pool, tx->shm_bounce);
		tx->shm_bounce = NULL;
	}
}

const struct srd_proto srd_proto_shm = {
	.name = "shm",
	.tx_release = srd_shm_tx_release,
};

/* Bounce buffers: made up front, at most a few hundred in all. */
#define SRD_SHM_BOUNCE_INIT 16
#define SRD_SHM_BOUNCE_MAX 256

/* ---- the host key ------------------------------------------------------- */

static uint64_t srd_fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t srd_host_key_value;
static pthread_once_t srd_host_key_once = PTHREAD_ONCE_INIT;

/* One boot (boot_id), one network namespace (tests stand separate hosts
 * in for namespaces) and one user (regions are mode 0600): two endpoints
 * with the same key can reach each other's shm regions. 0: unknown, no
 * shm peering. */
static void srd_host_key_compute(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char boot[64] = "";
	struct stat st;
	uid_t uid = getuid();
	FILE *f;

	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (!f || !fgets(boot, sizeof(boot), f)) {
		FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
			"no boot id: no shm peering\n");
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	if (stat("/proc/self/ns/net", &st)) {
		FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
			"no network namespace id: no shm peering\n");
		return;
	}
	h = srd_fnv(h, boot, strlen(boot));
	h = srd_fnv(h, &st.st_dev, sizeof(st.st_dev));
	h = srd_fnv(h, &st.st_ino, sizeof(st.st_ino));
	h = srd_fnv(h, &uid, sizeof(uid));
	srd_host_key_value = h ? h : 1;
}

uint64_t srd_host_key(void)
{
	pthread_once(&srd_host_key_once, srd_host_key_compute);
	return srd_host_key_value;
}

/* "fi_shm://weftshm-<uid>-n-wsrd-<qpn>-<hash of gid, qkey, host>", NUL
 * padded: unique on the host as the srd name is, so it needs no job
 * namespace, and it must have none: peers of two jobs (MPI_Comm_spawn,
 * a client and a server started apart) derive each other's address from
 * the srd name alone. That is shm's full spelling of the chosen name
 * "wsrd-..." in namespace "n" (fi_shm(7), ADDRESSING), which names the
 * same region whatever FI_SHM_JOB or the launcher says. */
static void srd_shm_addr_of(const struct srd_ep_name *n,
			    char addr[SRD_SHM_ADDR_LEN])
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = srd_fnv(h, n->gid, sizeof(n->gid));
	h = srd_fnv(h, &n->qkey, sizeof(n->qkey));
	h = srd_fnv(h, &n->host_key, sizeof(n->host_key));
	memset(addr, 0, SRD_SHM_ADDR_LEN);
	snprintf(addr, SRD_SHM_ADDR_LEN,
		 "fi_shm://weftshm-%u-n-wsrd-%08x-%016llx", (unsigned)getuid(),
		 n->qpn, (unsigned long long)h);
}

/* ---- endpoint ----------------------------------------------------------- */

static void srd_shm_name_flag(struct srd_ep *ep)
{
	if (ep->shm_permitted)
		ep->name.flags |= SRD_EP_NAME_F_SHM;
	else
		ep->name.flags &= (uint8_t)~SRD_EP_NAME_F_SHM;
}

void srd_shm_ep_init(struct srd_ep *ep)
{
	struct srd_settings s = srd_settings;

	/* Read at each open, as the protocols' settings are. */
	srd_settings_read_one("use_shm", &s);
	ep->shm_mode = s.use_shm;
	ep->shm_permitted = s.use_shm != SRD_USE_SHM_OFF &&
			    ep->name.host_key != 0;
	srd_shm_name_flag(ep);
}

int srd_shm_set_permitted(struct srd_ep *ep, bool permitted)
{
	if (ep->util.enabled) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"FI_OPT_SHARED_MEMORY_PERMITTED after fi_enable\n");
		return -FI_EOPBADSTATE;
	}
	ep->shm_permitted = permitted && ep->shm_mode != SRD_USE_SHM_OFF &&
			    ep->name.host_key != 0;
	srd_shm_name_flag(ep);
	return 0;
}

static int srd_shm_getinfo(const char *addr, struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->fabric_attr->prov_name = strdup("shm");
	hints->src_addr = malloc(SRD_SHM_ADDR_LEN);
	if (!hints->fabric_attr->prov_name || !hints->src_addr) {
		fi_freeinfo(hints);
		return -FI_ENOMEM;
	}
	memcpy(hints->src_addr, addr, SRD_SHM_ADDR_LEN);
	hints->src_addrlen = SRD_SHM_ADDR_LEN;
	hints->addr_format = FI_ADDR_STR;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE;
	/* Every call into it is under our endpoint's lock. */
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, info);
	fi_freeinfo(hints);
	return ret;
}

static int srd_shm_bind_all(struct srd_ep *ep, struct srd_shm *shm)
{
	struct fi_peer_srx_context pc = {
		.size = sizeof(pc), .srx = &shm->peer_srx.peer_srx,
	};
	struct fi_rx_attr rxa = { .op_flags = FI_PEER };
	int ret;

	util_srx_peer_init(&shm->peer_srx, &ep->srx);
	ret = fi_srx_context(shm->domain, &rxa, &shm->srx_ep, &pc);
	if (!ret)
		ret = fi_ep_bind(shm->ep, &shm->srx_ep->fid, 0);
	if (!ret)
		ret = fi_ep_bind(shm->ep, &shm->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(shm->ep, &shm->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(shm->ep);
	return ret;
}

static int srd_shm_open_objs(struct srd_ep *ep, struct srd_shm *shm,
			     const char *addr)
{
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_MSG };
	char got[SRD_SHM_ADDR_LEN];
	size_t len = sizeof(got);
	struct fi_info *info;
	int ret;

	ret = srd_shm_getinfo(addr, &info);
	if (ret)
		return ret;
	shm->inject_size = info->tx_attr->inject_size;
	ca.size = info->tx_attr->size;
	if (ep->pc.inject_size > shm->inject_size) {
		ret = util_pool_init(&shm->bounce_pool, ep->pc.inject_size, 64,
				     SRD_SHM_BOUNCE_INIT, SRD_SHM_BOUNCE_INIT,
				     SRD_SHM_BOUNCE_MAX, NULL, NULL);
		if (ret) {
			fi_freeinfo(info);
			return ret;
		}
		shm->bounce_ready = true;
	}
	ret = fi_fabric(info->fabric_attr, &shm->fabric, NULL);
	if (!ret)
		ret = fi_domain(shm->fabric, info, &shm->domain, NULL);
	if (!ret)
		ret = fi_av_open(shm->domain, &aa, &shm->av, NULL);
	if (!ret)
		ret = fi_cq_open(shm->domain, &ca, &shm->cq, NULL);
	/* We read it on every progress call, the application our CQ. */
	if (!ret)
		ret = util_cq_no_yield(shm->cq);
	if (!ret)
		ret = fi_endpoint(shm->domain, info, &shm->ep, NULL);
	fi_freeinfo(info);
	if (!ret)
		ret = srd_shm_bind_all(ep, shm);
	if (!ret)
		ret = fi_getname(&shm->ep->fid, got, &len);
	if (!ret && (len != SRD_SHM_ADDR_LEN ||
		     memcmp(got, addr, SRD_SHM_ADDR_LEN))) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"shm endpoint named %.64s, not %s\n", got, addr);
		ret = -FI_EADDRNOTAVAIL;
	}
	return ret;
}

static void srd_shm_free(struct srd_shm *shm)
{
	/* The endpoint first: it leaves our receive side and stops
	 * completing into its CQ. */
	if (shm->ep)
		fi_close(&shm->ep->fid);
	if (shm->srx_ep)
		fi_close(&shm->srx_ep->fid);
	if (shm->cq)
		fi_close(&shm->cq->fid);
	if (shm->av)
		fi_close(&shm->av->fid);
	if (shm->domain)
		fi_close(&shm->domain->fid);
	if (shm->fabric)
		fi_close(&shm->fabric->fid);
	if (shm->bounce_ready)
		util_pool_fini(&shm->bounce_pool);
	free(shm->map);
	free(shm);
}

int srd_shm_open(struct srd_ep *ep)
{
	char addr[SRD_SHM_ADDR_LEN];
	struct srd_shm *shm;
	int ret;

	if (!ep->shm_permitted)
		return 0;
	srd_shm_addr_of(&ep->name, addr);
	shm = calloc(1, sizeof(*shm));
	if (!shm)
		return -FI_ENOMEM;
	ret = srd_shm_open_objs(ep, shm, addr);
	if (ret) {
		srd_shm_free(shm);
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"shm endpoint %s: %s%s\n", addr, fi_strerror(-ret),
			ep->shm_mode == SRD_USE_SHM_ON ? "" :
			"; peers of this host go through the device");
		if (ep->shm_mode == SRD_USE_SHM_ON)
			return ret;
		ep->shm_permitted = false;
		srd_shm_name_flag(ep);
		return 0;
	}
	FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
		"peers of this host through shm endpoint %s\n", addr);
	ep->shm = shm;
	/* What the AV holds already (inserted before fi_enable). */
	shm->av_gen = ~atomic_load(&ep->util.av->gen);
	srd_shm_av_sync(ep);
	return 0;
}

void srd_shm_close(struct srd_ep *ep)
{
	if (!ep->shm)
		return;
	srd_shm_free(ep->shm);
	ep->shm = NULL;
}

/* ---- the AV mirror ------------------------------------------------------ */

static bool srd_shm_peer_ok(const struct srd_ep *ep,
			    const struct srd_ep_name *n)
{
	/* Ourselves: the device loops back without a second region. */
	return (n->flags & SRD_EP_NAME_F_SHM) &&
	       n->host_key == ep->name.host_key &&
	       (n->qpn != ep->name.qpn || n->qkey != ep->name.qkey ||
		memcmp(n->gid, ep->name.gid, sizeof(n->gid)));
}

static void srd_shm_sync_one(struct srd_ep *ep, struct srd_shm *shm,
			     fi_addr_t i)
{
	const struct srd_ep_name *n = util_av_addr(ep->util.av, i);
	char addr[SRD_SHM_ADDR_LEN], cur[SRD_SHM_ADDR_LEN];
	bool want = n && srd_shm_peer_ok(ep, n);
	fi_addr_t a = shm->map[i];
	size_t len = sizeof(cur);

	if (want)
		srd_shm_addr_of(n, addr);
	if (a != FI_ADDR_NOTAVAIL) {
		/* The slot may have been removed and reused since. */
		if (want && !fi_av_lookup(shm->av, a, cur, &len) &&
		    len == SRD_SHM_ADDR_LEN && !memcmp(cur, addr, len))
			return;
		(void)fi_av_remove(shm->av, &a, 1, 0);
		shm->map[i] = FI_ADDR_NOTAVAIL;
	}
	if (!want)
		return;
	a = i;	/* in: the id shm reports as the source; out: shm's */
	if (fi_av_insert(shm->av, addr, 1, &a, FI_AV_USER_ID, NULL) == 1)
		shm->map[i] = a;
	else
		FI_WARN(&srd_prov, FI_LOG_AV,
			"fi_addr %llu: shm address %s refused; it goes "
			"through the device\n", (unsigned long long)i, addr);
}

/* Slow path (the AV changed), under the endpoint's lock. */
void srd_shm_av_sync(struct srd_ep *ep)
{
	struct srd_shm *shm = ep->shm;
	struct util_av *av = ep->util.av;
	uint64_t gen = atomic_load_explicit(&av->gen, memory_order_acquire);
	fi_addr_t *map;
	size_t n, i;

	util_lock_acquire(&av->lock);
	n = av->next_index;
	util_lock_release(&av->lock);
	if (n > shm->map_len) {
		map = realloc(shm->map, n * sizeof(*map));
		if (!map) {
			FI_WARN(&srd_prov, FI_LOG_AV,
				"no memory to mirror %zu addresses into shm's "
				"AV; they go through the device\n", n);
			return;
		}
		for (i = shm->map_len; i < n; i++)
			map[i] = FI_ADDR_NOTAVAIL;
		shm->map = map;
		shm->map_len = n;
	}
	for (i = 0; i < shm->map_len; i++)
		srd_shm_sync_one(ep, shm, i);
	shm->av_gen = gen;
}

/* ---- data --------------------------------------------------------------- */

/* An inject shm cannot copy inline: our copy, which shm then sends like
 * any buffer, released when the entry completes. */
static int srd_shm_bounce(struct srd_shm *shm, struct srd_tx_entry *tx)
{
	uint8_t *b = util_pool_get(&shm->bounce_pool);

	if (!b)
		return -FI_EAGAIN;
	util_iov_copy_from(tx->iov, tx->iov_count, 0, b, tx->total_len);
	tx->shm_bounce = b;
	tx->iov[0].iov_base = b;
	tx->iov[0].iov_len = tx->total_len;
	tx->iov_count = 1;
	return 0;
}

ssize_t srd_shm_post(struct srd_ep *ep, struct srd_tx_entry *tx,
		     fi_addr_t addr, uint64_t flags)
{
	struct srd_shm *shm = ep->shm;
	struct fi_msg_tagged m = {
		.msg_iov = tx->iov, .desc = NULL, .iov_count = tx->iov_count,
		.addr = addr, .tag = tx->tag, .ignore = 0, .context = tx,
		.data = tx->cq_data,
	};
	/* Always a completion: it is what ends the entry. The entry holds
	 * the iovs, so FI_INJECT needs nothing more of shm than a copy. */
	uint64_t f = FI_COMPLETION |
		     (flags & (FI_REMOTE_CQ_DATA | FI_INJECT |
			       FI_DELIVERY_COMPLETE | FI_TRANSMIT_COMPLETE |
			       FI_INJECT_COMPLETE));
	ssize_t ret;

	if (WEFT_UNLIKELY((f & FI_INJECT) && tx->total_len > shm->inject_size)) {
		ret = srd_shm_bounce(shm, tx);
		if (ret)
			return ret;
		f &= ~(uint64_t)FI_INJECT;
		m.msg_iov = tx->iov;
		m.iov_count = 1;
	}
	if (flags & FI_TAGGED) {
		ret = fi_tsendmsg(shm->ep, &m, f);
	} else {
		struct fi_msg um = {
			.msg_iov = tx->iov, .desc = NULL,
			.iov_count = tx->iov_count, .addr = addr,
			.context = tx, .data = tx->cq_data,
		};

		ret = fi_sendmsg(shm->ep, &um, f);
	}
	if (WEFT_LIKELY(!ret)) {
		tx->inflight = 1;
		shm->sends++;
	}
	return ret;
}

static void srd_shm_tx_done(struct srd_ep *ep, void *ctx, int err,
			    int prov_errno)
{
	struct srd_tx_entry *tx = ctx;

	/* Only our sends complete here (receives go to the owner). */
	if (WEFT_UNLIKELY(tx < ep->tx_entries ||
			  tx >= ep->tx_entries + ep->tx_entry_count ||
			  !tx->in_use || !tx->inflight)) {
		FI_WARN(&srd_prov, FI_LOG_EP_DATA,
			"shm completion %p is none of our sends\n", ctx);
		return;
	}
	tx->inflight = 0;
	if (err && !tx->err) {
		tx->err = err;
		tx->prov_errno = prov_errno;
	}
	srd_tx_try_complete(ep, tx);
}

void srd_shm_progress(struct srd_ep *ep)
{
	struct srd_shm *shm = ep->shm;
	struct fi_cq_msg_entry ce[SRD_SHM_CQ_BATCH];
	struct fi_cq_err_entry e;
	ssize_t n, i;

	/* Receives report srd fi_addrs: the mirror first. */
	if (WEFT_UNLIKELY(shm->av_gen !=
			  atomic_load_explicit(&ep->util.av->gen,
					       memory_order_acquire)))
		srd_shm_av_sync(ep);
	n = fi_cq_read(shm->cq, ce, SRD_SHM_CQ_BATCH);
	for (i = 0; i < n; i++)
		srd_shm_tx_done(ep, ce[i].op_context, 0, 0);
	if (WEFT_LIKELY(n != -FI_EAVAIL))
		return;
	for (;;) {
		memset(&e, 0, sizeof(e));
		if (fi_cq_readerr(shm->cq, &e, 0) != 1)
			break;
		srd_shm_tx_done(ep, e.op_context, e.err ? e.err : FI_EIO,
				e.prov_errno);
	}
}
