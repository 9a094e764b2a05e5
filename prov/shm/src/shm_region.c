/* SPDX-License-Identifier: MIT */
/*
 * shm transport: creating, validating, reclaiming regions.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/util_mem.h"
#include "shm_transport.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Stand-in until the provider points shm_xport_prov at its own struct. */
static struct fi_provider shm_xport_default_prov = {
	.name = "shm",
};
struct fi_provider *shm_xport_prov = &shm_xport_default_prov;

/* A leftover younger than this that is not "ready" may be a region being
 * created right now: reclaim leaves it alone. */
#define SHM_RECLAIM_GRACE_S	10

static pthread_mutex_t shm_region_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shm_region *shm_region_list;
static pthread_once_t shm_region_once = PTHREAD_ONCE_INIT;

static int shm_reclaim_name(const char *name);

bool shm_region_fd_alive(int fd)
{
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return false;
	}
	/* EWOULDBLOCK: the owner's exclusive lock; anything else (ENOLCK,
	 * EINTR) proves nothing, so keep treating the owner as alive. */
	return true;
}

static void shm_region_atexit(void)
{
	struct shm_region *r;
	pid_t self = getpid();

	pthread_mutex_lock(&shm_region_list_lock);
	for (r = shm_region_list; r; r = r->next)
		if (r->pid == self)
			shm_unlink(r->name);
	pthread_mutex_unlock(&shm_region_list_lock);
}

static void shm_region_once_init(void)
{
	atexit(shm_region_atexit);
	shm_region_reclaim();
}

static void shm_region_list_add(struct shm_region *r)
{
	pthread_mutex_lock(&shm_region_list_lock);
	r->prev = NULL;
	r->next = shm_region_list;
	if (shm_region_list)
		shm_region_list->prev = r;
	shm_region_list = r;
	pthread_mutex_unlock(&shm_region_list_lock);
}

static void shm_region_list_del(struct shm_region *r)
{
	pthread_mutex_lock(&shm_region_list_lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		shm_region_list = r->next;
	if (r->next)
		r->next->prev = r->prev;
	pthread_mutex_unlock(&shm_region_list_lock);
}

/* 12 of the nonce's 16 bytes go into the name, so that the endpoint's
 * address fits FI_NAME_MAX; 96 random bits are still unguessable. */
#define SHM_NAME_NONCE_BYTES 12

static void shm_name_generate(struct shm_region *r, const uint8_t nonce[16])
{
	char hex[2 * SHM_NAME_NONCE_BYTES + 1];
	int i;

	for (i = 0; i < SHM_NAME_NONCE_BYTES; i++)
		snprintf(hex + 2 * i, 3, "%02x", nonce[i]);
	snprintf(r->name, sizeof(r->name), SHM_NAME_PREFIX "%u-%d-%s",
		 (unsigned)getuid(), (int)getpid(), hex);
}

/* Why a chosen name could not be taken, for the log: another user's
 * file under our uid's prefix (anyone may create files in /dev/shm), a
 * live endpoint of ours (another job of ours with the same service), or
 * a file that is not a live region (in creation, or not weft's). */
static void shm_name_explain(const char *name)
{
	struct shm_region_hdr h;
	char path[SHM_NAME_MAX + 16];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	if (stat(path, &st))
		return;
	if (st.st_uid != getuid()) {
		FI_WARN(shm_xport_prov, FI_LOG_EP_CTRL,
			"%s belongs to uid %u, not to this user (uid %u): another user created it, so the name is blocked; remove the file or choose another name\n",
			path, (unsigned)st.st_uid, (unsigned)getuid());
		return;
	}
	fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK &&
	    pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    h.magic == SHM_REGION_MAGIC)
		FI_WARN(shm_xport_prov, FI_LOG_EP_CTRL,
			"%s is held by a live endpoint of this user (pid %d): another process or job uses the same name\n",
			path, (int)h.owner_pid);
	else
		FI_WARN(shm_xport_prov, FI_LOG_EP_CTRL,
			"%s exists but is no live endpoint (being created, or not a weft region): remove it if it stays\n",
			path);
	close(fd);
}

/* O_EXCL create; a chosen name held by a dead owner is taken over. The
 * lock is taken before the object can be useful to anyone, and reclaim
 * spares young unready objects, so nobody removes it in between. */
static int shm_region_open_new(struct shm_region *r, const char *short_name,
			       const char *ns, uint8_t nonce[16])
{
	int tries, ret;

	if (short_name) {
		ret = shm_region_name_build(short_name, ns, r->name);
		if (ret)
			return ret;
	}
	for (tries = 0; tries < 8; tries++) {
		if (getrandom(nonce, 16, 0) != 16)
			return -FI_EIO;
		if (!short_name)
			shm_name_generate(r, nonce);
		r->fd = shm_open(r->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
				 0600);
		if (r->fd >= 0)
			break;
		if (errno != EEXIST)
			return -errno;
		/* Not reclaimed: a live owner holds the name, or another
		 * process's reclaim scan holds its lock for a moment. Only
		 * the first lasts, so look again shortly before giving up. */
		if (short_name && !shm_reclaim_name(r->name))
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 },
				  NULL);
	}
	if (r->fd < 0 && short_name)
		shm_name_explain(r->name);
	if (r->fd < 0)
		return short_name ? -FI_EADDRINUSE : -FI_EBUSY;
	if (flock(r->fd, LOCK_EX) || fchmod(r->fd, 0600)) {
		ret = -errno;
		shm_unlink(r->name);
		close(r->fd);
		return ret;
	}
	return 0;
}

static void shm_region_init_shared(struct shm_region *r,
				   const struct shm_region_layout *l,
				   const uint8_t nonce[16])
{
	struct shm_region_hdr *h = r->hdr;
	uint32_t i;

	h->magic = SHM_REGION_MAGIC;
	h->version = SHM_REGION_VERSION;
	h->hdr_size = sizeof(*h);
	h->region_size = l->size;
	h->owner_addr = (uint64_t)(uintptr_t)h;
	memcpy(h->nonce, nonce, sizeof(h->nonce));
	h->owner_pid = (int32_t)getpid();
	h->owner_uid = (uint32_t)getuid();
	h->cell_size = r->attr.cell_size;
	h->cell_count = r->attr.cell_count;
	h->max_peers = r->attr.max_peers;
	h->bounce_seg_size = r->attr.bounce_seg_size;
	h->bounce_seg_count = r->attr.bounce_seg_count;
	h->slots_off = l->slots_off;
	h->cells_off = l->cells_off;
	h->segs_off = l->segs_off;
	h->seg_data_off = l->seg_data_off;
	h->peer_credits = r->attr.peer_credits;
	atomic_init(&h->tail, 0);
	atomic_init(&h->released, 0);
	for (i = 0; i < r->attr.cell_count; i++)
		atomic_init(&shm_cell_at(r->cells, r->cell_size, i)->seq, i);
	/* ftruncate zeroed the slots and segments: FREE, gen 0. */
	atomic_store_explicit(&h->ready, 1, memory_order_release);
}

int shm_region_create(const struct shm_region_attr *attr,
		      struct shm_region **region)
{
	struct shm_region_attr def;
	struct shm_region_layout l;
	struct shm_region *r;
	uint8_t nonce[16];
	void *base;
	int ret;

	pthread_once(&shm_region_once, shm_region_once_init);
	if (!attr) {
		shm_region_attr_default(&def);
		attr = &def;
	}
	ret = shm_region_attr_check(attr);
	if (ret)
		return ret;
	shm_region_layout(attr, &l);

	r = calloc(1, sizeof(*r));
	if (!r)
		return -FI_ENOMEM;
	r->attr = *attr;
	r->attr.name = NULL;
	r->attr.ns = NULL;
	r->pid = getpid();
	ret = shm_region_open_new(r, attr->name, attr->ns, nonce);
	if (ret)
		goto free_region;
	/* Allocate the pages now: tmpfs running out later would be a
	 * SIGBUS on first touch instead of an error here. */
	ret = ftruncate(r->fd, (off_t)l.size) ? errno :
	      posix_fallocate(r->fd, 0, (off_t)l.size);
	if (ret) {
		ret = ret == ENOSPC ? -FI_ENOMEM : -ret;
		goto unlink_object;
	}
	base = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (base == MAP_FAILED) {
		ret = -errno;
		goto unlink_object;
	}
	r->hdr = base;
	r->size = l.size;
	r->slots = (struct shm_slot *)((uint8_t *)base + l.slots_off);
	r->cells = (uint8_t *)base + l.cells_off;
	util_mem_prefault(r->cells,
			    (size_t)r->attr.cell_count * r->attr.cell_size);
	r->segs = (struct shm_bounce_seg *)((uint8_t *)base + l.segs_off);
	r->seg_data = (uint8_t *)base + l.seg_data_off;
	r->cell_size = attr->cell_size;
	r->max_peers = attr->max_peers;
	r->mask = attr->cell_count - 1;
	shm_region_init_shared(r, &l, nonce);
	shm_region_list_add(r);
	*region = r;
	return 0;

unlink_object:
	FI_WARN(shm_xport_prov, FI_LOG_EP_CTRL,
		"cannot size/map shm region %s (%zu bytes): %s\n", r->name,
		(size_t)l.size, strerror(-ret));
	shm_unlink(r->name);
	close(r->fd);
free_region:
	free(r);
	return ret;
}

void shm_region_close(struct shm_region *region)
{
	if (!region)
		return;
	shm_region_list_del(region);
	if (region->pid == getpid())
		shm_unlink(region->name);
	munmap(region->hdr, region->size);
	close(region->fd);
	free(region);
}

/* Is the object behind fd stale? Caller holds its lock, so the owner is
 * gone; but an object that is young and not "ready" may be in creation
 * (between O_EXCL and flock), so it is spared. */
static bool shm_reclaim_stale(int fd, const struct stat *st)
{
	struct shm_region_hdr *h;
	bool ready;

	if (time(NULL) - st->st_ctime >= SHM_RECLAIM_GRACE_S)
		return true;
	if ((size_t)st->st_size < sizeof(*h))
		return false;
	h = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return false;
	ready = atomic_load(&h->ready) == 1;
	munmap(h, sizeof(*h));
	return ready;
}

/* Remove region "name" if its owner is dead. 1 removed, 0 not (alive,
 * young, absent, not ours). The unlink goes by name, so check the name
 * still leads to the object we locked (someone may have replaced it). */
static int shm_reclaim_name(const char *name)
{
	struct stat st, now;
	char path[SHM_NAME_MAX + 16];
	int removed = 0;
	int fd;

	fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	if (fstat(fd, &st) || st.st_uid != getuid() ||
	    flock(fd, LOCK_EX | LOCK_NB))
		goto close_fd;
	if (shm_reclaim_stale(fd, &st) && !stat(path, &now) &&
	    now.st_ino == st.st_ino && now.st_dev == st.st_dev) {
		FI_INFO(shm_xport_prov, FI_LOG_CORE,
			"removing shm region %s left by a dead process\n", name);
		removed = !shm_unlink(name);
	}
close_fd:
	close(fd);
	return removed;
}

int shm_region_reclaim(void)
{
	char prefix[32];
	struct dirent *de;
	size_t plen;
	DIR *dir;
	int n = 0;

	/* Entries under /dev/shm lack the leading '/' of the shm name. */
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s%u-",
				SHM_NAME_PREFIX + 1, (unsigned)getuid());
	dir = opendir("/dev/shm");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char name[SHM_NAME_MAX];

		if (strncmp(de->d_name, prefix, plen) ||
		    snprintf(name, sizeof(name), "/%s", de->d_name) >=
			    (int)sizeof(name))
			continue;
		n += shm_reclaim_name(name);
	}
	closedir(dir);
	return n;
}

void shm_region_credit_gen(struct shm_region *region, uint16_t src,
			   uint16_t gen)
{
	if (src < region->max_peers &&
	    (uint16_t)atomic_load_explicit(&region->slots[src].gen,
					   memory_order_relaxed) == gen)
		shm_region_credit(region, src);
}

int shm_region_slot_name(struct shm_region *region, uint16_t src, char *buf,
			 uint32_t *gen)
{
	struct shm_slot *slot;

	if (src >= region->max_peers)
		return -FI_EINVAL;
	slot = &region->slots[src];
	switch (atomic_load_explicit(&slot->state, memory_order_acquire)) {
	case SHM_SLOT_READY:
	case SHM_SLOT_CLOSED:	/* for the cells it left queued */
		break;
	default:
		return -FI_ENOENT;
	}
	memcpy(buf, slot->name, SHM_NAME_MAX);
	buf[SHM_NAME_MAX - 1] = '\0';
	if (gen)
		*gen = atomic_load_explicit(&slot->gen, memory_order_relaxed);
	if (!shm_region_name_valid(buf)) {
		WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_DATA,
			"shm slot %u holds an invalid region name\n", src);
		return -FI_EINVAL;
	}
	return 0;
}

/* Liveness of the producer attached at a slot, through its own region. */
bool shm_region_slot_alive(struct shm_region *region, uint16_t src)
{
	struct shm_slot *slot = &region->slots[src];
	char name[SHM_NAME_MAX];
	bool alive;
	int fd;

	switch (atomic_load_explicit(&slot->state, memory_order_acquire)) {
	case SHM_SLOT_READY:
		break;
	case SHM_SLOT_BUSY: {
		pid_t pid = atomic_load(&slot->pid);

		/* Only a pid here: a reused pid merely delays the reap. */
		return pid > 0 && !(kill(pid, 0) && errno == ESRCH);
	}
	default:
		return false;
	}
	if (shm_region_slot_name(region, src, name, NULL))
		return false;
	fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return errno != ENOENT;
	alive = shm_region_fd_alive(fd);
	close(fd);
	return alive;
}

/* Cells of the slot's producer not yet polled: its last claim is at or
 * past head. Freed before they are, the slot would make them unreadable
 * (their sender is found by it). */
static bool shm_region_slot_unread(const struct shm_region *region,
				   struct shm_slot *slot)
{
	uint64_t pos = atomic_load_explicit(&slot->claim_pos,
					    memory_order_acquire);

	return pos != UINT64_MAX && (int64_t)(pos - region->head) >= 0;
}

int shm_region_reap_closed(struct shm_region *region)
{
	uint32_t i, state;
	int n = 0;

	for (i = 0; i < region->max_peers; i++) {
		struct shm_slot *slot = &region->slots[i];

		state = atomic_load_explicit(&slot->state,
					     memory_order_acquire);
		if (state != SHM_SLOT_CLOSED ||
		    shm_region_slot_unread(region, slot))
			continue;
		if (atomic_compare_exchange_strong(&slot->state, &state,
						   SHM_SLOT_FREE))
			n++;
	}
	return n;
}

int shm_region_reap(struct shm_region *region)
{
	uint32_t i, state;
	int n = 0;

	for (i = 0; i < region->max_peers; i++) {
		struct shm_slot *slot = &region->slots[i];

		state = atomic_load_explicit(&slot->state,
					     memory_order_acquire);
		if (state == SHM_SLOT_FREE ||
		    shm_region_slot_unread(region, slot) ||
		    shm_region_slot_alive(region, (uint16_t)i))
			continue;
		if (atomic_compare_exchange_strong(&slot->state, &state,
						   SHM_SLOT_FREE))
			n++;
	}
	return n;
}
