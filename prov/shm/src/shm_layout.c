/* SPDX-License-Identifier: MIT */
/*
 * shm transport: what a region's header and names must be, as functions
 * of their arguments: the settings' ranges, the layout they give, the
 * checks of a peer's header (shm_peer.c maps the region and hands a
 * private snapshot here) and of region names, which peers write into
 * their slots. No mapping, no file: test/fuzz_shm_cell.c fuzzes these
 * alone, and the transport calls exactly them.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "shm_transport.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Largest region we agree to map, ours or a peer's. */
#define SHM_MAX_REGION_SIZE	(4ull << 30)

static uint64_t shm_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

void shm_region_attr_default(struct shm_region_attr *attr)
{
	*attr = (struct shm_region_attr){
		.cell_size = SHM_DEF_CELL_SIZE,
		.cell_count = SHM_DEF_CELL_COUNT,
		.max_peers = SHM_DEF_MAX_PEERS,
		.bounce_seg_size = SHM_DEF_BOUNCE_SEG_SIZE,
		.bounce_seg_count = SHM_DEF_BOUNCE_SEGS,
		.cma_mode = SHM_CMA_AUTO,
	};
}

static bool shm_attr_in_range(const struct shm_region_attr *a)
{
	return a->cell_size >= SHM_MIN_CELL_SIZE &&
	       a->cell_size <= SHM_MAX_CELL_SIZE &&
	       !(a->cell_size % SHM_CACHELINE) &&
	       a->cell_count >= 2 && a->cell_count <= SHM_MAX_CELL_COUNT &&
	       !(a->cell_count & (a->cell_count - 1)) &&
	       a->max_peers >= 1 && a->max_peers <= SHM_MAX_PEERS &&
	       a->bounce_seg_size >= SHM_PAGE &&
	       a->bounce_seg_size <= SHM_MAX_BOUNCE_SEG_SIZE &&
	       !(a->bounce_seg_size % SHM_PAGE) &&
	       a->bounce_seg_count >= 1 &&
	       a->bounce_seg_count <= SHM_MAX_BOUNCE_SEGS &&
	       (a->cma_mode == SHM_CMA_AUTO || a->cma_mode == SHM_CMA_OFF);
}

int shm_region_attr_check(const struct shm_region_attr *attr)
{
	if (shm_attr_in_range(attr) && shm_region_size(attr))
		return 0;
	FI_WARN(shm_xport_prov, FI_LOG_EP_CTRL,
		"bad shm region settings: cell_size %u (64..%u, multiple of 64), "
		"cell_count %u (power of two), max_peers %u (1..%u), "
		"bounce_seg_size %u (4 KiB multiple), bounce_seg_count %u (1..%u)\n",
		attr->cell_size, SHM_MAX_CELL_SIZE, attr->cell_count,
		attr->max_peers, SHM_MAX_PEERS, attr->bounce_seg_size,
		attr->bounce_seg_count, SHM_MAX_BOUNCE_SEGS);
	return -FI_EINVAL;
}

bool shm_region_layout(const struct shm_region_attr *a,
		       struct shm_region_layout *l)
{
	if (!shm_attr_in_range(a))
		return false;
	l->slots_off = shm_align(sizeof(struct shm_region_hdr), SHM_CACHELINE);
	l->cells_off = shm_align(l->slots_off + (uint64_t)a->max_peers *
				 sizeof(struct shm_slot), SHM_PAGE);
	l->segs_off = shm_align(l->cells_off + (uint64_t)a->cell_count *
				a->cell_size, SHM_CACHELINE);
	l->seg_data_off = shm_align(l->segs_off + (uint64_t)a->bounce_seg_count *
				    sizeof(struct shm_bounce_seg), SHM_PAGE);
	l->size = shm_align(l->seg_data_off + (uint64_t)a->bounce_seg_count *
			    a->bounce_seg_size, SHM_PAGE);
	return l->size <= SHM_MAX_REGION_SIZE;
}

size_t shm_region_size(const struct shm_region_attr *attr)
{
	struct shm_region_layout l;

	return shm_region_layout(attr, &l) ? l.size : 0;
}

static bool shm_name_char_ok(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == ':' ||
	       c == '-';
}

bool shm_region_name_valid(const char *name)
{
	char prefix[32];
	size_t plen, len, i;

	if (!name)
		return false;
	len = strnlen(name, SHM_NAME_MAX);
	if (len == SHM_NAME_MAX)
		return false;
	plen = (size_t)snprintf(prefix, sizeof(prefix), SHM_NAME_PREFIX "%u-",
				(unsigned)getuid());
	if (len <= plen || strncmp(name, prefix, plen))
		return false;
	for (i = plen; i < len; i++)
		if (!shm_name_char_ok(name[i]))
			return false;
	return true;
}

int shm_region_hdr_check(const struct shm_region_hdr *hdr, size_t file_size)
{
	struct shm_region_attr a = { 0 };
	struct shm_region_layout l;
	const char *why = NULL;

	if (file_size < sizeof(*hdr))
		why = "object smaller than a header";
	else if (hdr->magic != SHM_REGION_MAGIC)
		why = "bad magic";
	else if (hdr->version != SHM_REGION_VERSION)
		why = "unsupported version";
	else if (hdr->hdr_size != sizeof(*hdr))
		why = "header size mismatch";
	else if (!atomic_load_explicit(&hdr->ready, memory_order_acquire))
		why = "not initialised";
	else if (hdr->owner_uid != (uint32_t)getuid())
		why = "owned by another user";
	else if (hdr->owner_pid <= 0)
		why = "bad owner pid";
	if (!why) {
		a.cell_size = hdr->cell_size;
		a.cell_count = hdr->cell_count;
		a.max_peers = hdr->max_peers;
		a.bounce_seg_size = hdr->bounce_seg_size;
		a.bounce_seg_count = hdr->bounce_seg_count;
		if (!shm_region_layout(&a, &l))
			why = "sizes out of range";
		else if (l.size != hdr->region_size || l.size != file_size)
			why = "size does not match the object";
		else if (l.slots_off != hdr->slots_off ||
			 l.cells_off != hdr->cells_off ||
			 l.segs_off != hdr->segs_off ||
			 l.seg_data_off != hdr->seg_data_off)
			why = "offsets do not match the sizes";
	}
	if (!why)
		return 0;
	WEFT_WARN_SPARSE(shm_xport_prov, FI_LOG_EP_CTRL,
		"rejecting shm region header: %s\n", why);
	return -FI_EINVAL;
}

/* Written once by the provider's init, before any region exists. */
static char shm_ns[SHM_NS_MAX + 1] = "n";

size_t shm_region_ns_len(const char *s)
{
	size_t i;

	if (s[0] == 'n' && s[1] == '-')
		return 1;
	if (s[0] != 'j')
		return 0;
	for (i = 1; i <= 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[17] == '-' ? 17 : 0;
}

int shm_region_set_namespace(const char *ns)
{
	char probe[SHM_NS_MAX + 2];
	size_t len = strnlen(ns, SHM_NS_MAX + 1);

	if (!len || len > SHM_NS_MAX)
		return -FI_EINVAL;
	snprintf(probe, sizeof(probe), "%s-", ns);
	if (shm_region_ns_len(probe) != len)
		return -FI_EINVAL;
	memcpy(shm_ns, ns, len + 1);
	return 0;
}

const char *shm_region_namespace(void)
{
	return shm_ns;
}

int shm_region_name_build(const char *short_name, const char *ns, char *buf)
{
	size_t i, len = short_name ? strnlen(short_name, SHM_SHORT_NAME_MAX + 1)
				   : 0;
	char probe[SHM_NS_MAX + 2];

	for (i = 0; i < len; i++)
		if (!shm_name_char_ok(short_name[i]))
			break;
	if (!len || len > SHM_SHORT_NAME_MAX || i < len) {
		FI_WARN(shm_xport_prov, FI_LOG_EP_CTRL,
			"bad shm endpoint name (want [A-Za-z0-9._:-]{1,%d})\n",
			SHM_SHORT_NAME_MAX);
		return -FI_EINVAL;
	}
	if (!ns)
		ns = shm_ns;
	snprintf(probe, sizeof(probe), "%.*s-", SHM_NS_MAX, ns);
	if (!ns[0] || shm_region_ns_len(probe) != strlen(ns)) {
		FI_WARN(shm_xport_prov, FI_LOG_EP_CTRL,
			"bad shm name namespace '%.20s'\n", ns);
		return -FI_EINVAL;
	}
	snprintf(buf, SHM_NAME_MAX, SHM_NAME_PREFIX "%u-%s-%s",
		 (unsigned)getuid(), ns, short_name);
	return 0;
}
