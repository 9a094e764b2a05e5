/* SPDX-License-Identifier: MIT */
/*
 * shm transport: opening a peer's region, attaching to it, liveness.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "shm_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int shm_peer_map(struct shm_peer *peer)
{
	struct stat st;
	void *base;

	if (fstat(peer->fd, &st))
		return -errno;
	if (st.st_uid != getuid() || (st.st_mode & 077)) {
		WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_CTRL,
			"shm region %s: wrong owner or mode %o\n", peer->name,
			(unsigned)(st.st_mode & 0777));
		return -FI_EINVAL;
	}
	if ((size_t)st.st_size < sizeof(struct shm_region_hdr) ||
	    (uint64_t)st.st_size > (4ull << 30)) {
		WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_CTRL,
			"shm region %s: bad size %lld\n", peer->name,
			(long long)st.st_size);
		return -FI_EINVAL;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, peer->fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	peer->hdr = base;
	peer->size = (size_t)st.st_size;
	return 0;
}

/* Validate a private snapshot of the header and take the layout from it,
 * so a peer rewriting its header meanwhile cannot move our view. */
static int shm_peer_bind(struct shm_peer *peer)
{
	struct shm_region_hdr snap, *h = &snap;
	uint8_t *base = (uint8_t *)peer->hdr;
	int ret;

	/* "ready" first (acquire), so the copy sees what the creator wrote. */
	if (!atomic_load_explicit(&peer->hdr->ready, memory_order_acquire))
		FI_INFO(shm_xport_prov, FI_LOG_EP_CTRL,
			"shm region %s is not initialised yet\n", peer->name);
	memcpy(&snap, peer->hdr, sizeof(snap));
	ret = shm_region_hdr_check(&snap, peer->size);
	if (ret)
		return ret;
	peer->pid = h->owner_pid;
	peer->max_peers = h->max_peers;
	peer->q.cells = base + h->cells_off;
	peer->q.tail = &peer->hdr->tail;
	peer->q.released = &peer->hdr->released;
	peer->q.free_end = 0;
	peer->q.mask = (uint64_t)h->cell_count - 1;
	peer->q.cell_size = h->cell_size;
	peer->segs = (struct shm_bounce_seg *)(base + h->segs_off);
	peer->seg_data = base + h->seg_data_off;
	peer->bounce_seg_size = h->bounce_seg_size;
	peer->bounce_seg_count = h->bounce_seg_count;
	peer->slots = (struct shm_slot *)(base + h->slots_off);
	peer->q.credits = h->peer_credits;
	peer->q.faulted = 0;
	peer->q.fault_shift = 0;
	while ((h->cell_count >> peer->q.fault_shift) > SHM_QUEUE_FAULT_CHUNKS)
		peer->q.fault_shift++;
	return 0;
}

static int shm_peer_attach(struct shm_peer *peer, struct shm_region *self)
{
	uint32_t i;

	for (i = 0; i < peer->max_peers; i++) {
		struct shm_slot *slot = &peer->slots[i];
		uint32_t expect = SHM_SLOT_FREE;

		if (!atomic_compare_exchange_strong(&slot->state, &expect,
						    SHM_SLOT_BUSY))
			continue;
		atomic_store(&slot->pid, (int32_t)getpid());
		atomic_store(&slot->claim_pos, UINT64_MAX);
		memcpy(slot->name, self->name, SHM_NAME_MAX);
		peer->q.src_gen = (uint16_t)(atomic_fetch_add(&slot->gen, 1) + 1);
		peer->q.src = (uint16_t)i;
		peer->q.claim_pos = &slot->claim_pos;
		shm_queue_credit_init(&peer->q, &slot->consumed,
				      peer->q.credits);
		peer->slot = slot;
		atomic_store_explicit(&slot->state, SHM_SLOT_READY,
				      memory_order_release);
		return 0;
	}
	WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_CTRL,
		"shm region %s: all %u peer slots taken\n", peer->name,
		peer->max_peers);
	return -FI_EBUSY;
}

/* Read the peer's header at the address it mapped it and compare with our
 * mapping: proves CMA is allowed AND that pid is really that owner (not a
 * reused pid, not another pid namespace). */
static bool shm_peer_probe_cma(struct shm_peer *peer)
{
	uint8_t seen[offsetof(struct shm_region_hdr, owner_uid)];
	struct iovec local = { seen, sizeof(seen) };
	struct iovec remote = {
		(void *)(uintptr_t)peer->hdr->owner_addr, sizeof(seen)
	};
	ssize_t ret;

	ret = shm_cma_read(peer->pid, &local, 1, &remote, 1);
	if (ret == (ssize_t)sizeof(seen) && !memcmp(seen, peer->hdr, sizeof(seen)))
		return true;
	FI_INFO(shm_xport_prov, FI_LOG_EP_CTRL,
		"shm peer %s: cross-memory attach unavailable (%zd), "
		"using bounce segments\n", peer->name, ret);
	return false;
}

void shm_peer_probe(struct shm_peer *peer)
{
	peer->cma_unprobed = false;
	peer->cma = shm_peer_probe_cma(peer);
}

int shm_peer_open(struct shm_region *self, const char *name,
		  struct shm_peer **out)
{
	struct shm_peer *peer;
	int ret;

	if (!shm_region_name_valid(name)) {
		WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_CTRL,
			"not a weft shm region name of this user: %.80s\n",
			name ? name : "(null)");
		return -FI_EINVAL;
	}
	peer = calloc(1, sizeof(*peer));
	if (!peer)
		return -FI_ENOMEM;
	strcpy(peer->name, name);
	peer->fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (peer->fd < 0) {
		ret = errno == ENOENT ? -FI_ENOENT : -errno;
		goto free_peer;
	}
	if (!shm_region_fd_alive(peer->fd)) {
		ret = -FI_ECONNREFUSED;
		goto close_fd;
	}
	ret = shm_peer_map(peer);
	if (!ret)
		ret = shm_peer_bind(peer);
	if (ret)
		goto unmap;
	ret = shm_peer_attach(peer, self);
	if (ret)
		goto unmap;
	peer->cma_unprobed = self->attr.cma_mode == SHM_CMA_AUTO;
	*out = peer;
	return 0;

unmap:
	if (peer->hdr)
		munmap(peer->hdr, peer->size);
close_fd:
	close(peer->fd);
free_peer:
	free(peer);
	return ret;
}

void shm_peer_close(struct shm_peer *peer)
{
	if (!peer)
		return;
	/* Cells of ours it has not consumed name us by the slot: it stays
	 * taken (closed) until the owner has polled them. */
	if (shm_peer_alive(peer))
		atomic_store_explicit(&peer->slot->state,
				      shm_peer_drained(peer) ? SHM_SLOT_FREE :
							       SHM_SLOT_CLOSED,
				      memory_order_release);
	munmap(peer->hdr, peer->size);
	close(peer->fd);
	free(peer);
}

bool shm_peer_alive(struct shm_peer *peer)
{
	if (!peer->dead && !shm_region_fd_alive(peer->fd))
		peer->dead = true;
	return !peer->dead;
}

bool shm_peer_current(const struct shm_peer *peer)
{
	struct stat mine, named;
	bool same;
	int fd;

	if (peer->dead)
		return false;
	fd = shm_open(peer->name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)	/* unlinked: closed, nothing replaced it yet */
		return errno != ENOENT;
	same = !fstat(fd, &named) && !fstat(peer->fd, &mine) &&
	       named.st_dev == mine.st_dev && named.st_ino == mine.st_ino;
	close(fd);
	return same;
}

bool shm_peer_drained(const struct shm_peer *peer)
{
	/* The last position we claimed, or lost the claim of to another
	 * producer (then it is later than every cell of ours). */
	uint64_t pos = atomic_load_explicit(peer->q.claim_pos,
					    memory_order_relaxed);
	uint64_t released;

	if (pos == UINT64_MAX)
		return true;	/* never sent anything */
	released = atomic_load_explicit(peer->q.released, memory_order_acquire);
	/* The consumer has handed position pos back (released counts the
	 * positions below it). */
	return (int64_t)(released - pos) > 0;
}
