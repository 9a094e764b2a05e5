/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of what shm reads from memory other processes write
 * (shm_cell.c, shm_layout.c, the transport's shm_cell_hdr_ok): a peer's
 * cell, a peer's region header, the region names peers leave in slots.
 * The first input byte picks which; test_shm_fuzz.sh builds and runs it.
 *
 *  - cell: a cell size and peer count, the tx length a CTS is checked
 *    against, then the cell (header and payload). Once the header passes
 *    the transport's check, the payload is handed to every descriptor
 *    parser in a buffer of exactly hdr.len bytes, so ASan reports any
 *    read past the length the cell declares. What a parser accepts must
 *    describe only bytes inside the payload, counts within the arrays
 *    they are copied into, lengths within the message limit and sums
 *    equal to the totals the handlers then move.
 *  - region header: a header snapshot and the size of the object it came
 *    from. An accepted header's sections lie in order inside the object,
 *    each as large as its sizes say: what shm_peer_bind maps from it.
 *  - name: slot contents as shm_region_slot_name copies them, and short
 *    names as an application chooses them: a valid name is our prefix and
 *    safe characters only, and every name shm_region_name_build makes is
 *    valid.
 *
 * LLVMFuzzerInitialize writes valid inputs of each kind as seeds
 * (WEFT_FUZZ_SEEDS): cells of every op, a default region's header with
 * this uid, a generated and a chosen name.
 */
#include "weft/compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm.h"
#include "weft/util_atomic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct fi_provider fuzz_prov = { .name = "shm" };
struct fi_provider *shm_xport_prov = &fuzz_prov;

#define FUZZ_ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)

enum { MODE_CELL, MODE_HDR, MODE_NAME, MODE_MAX };

static const uint32_t cell_sizes[] = { 128, 256, 1024, SHM_DEF_CELL_SIZE };
#define CELL_ARGS (1 + 8)	/* size/peers selector, CTS tx length */

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- cells -------------------------------------------------------------- */

static void check_rts(const uint8_t *payload, uint32_t len)
{
	struct shm_rts_local r;
	uint64_t sum = 0;

	if (shm_rts_parse(payload, len, &r))
		return;
	FUZZ_ASSERT(r.iov_cnt <= SHM_IOV_LIMIT);
	FUZZ_ASSERT(sizeof(struct shm_rts) +
		    r.iov_cnt * sizeof(struct shm_iov) <= len);
	for (uint32_t i = 0; i < r.iov_cnt; i++) {
		FUZZ_ASSERT(r.iov[i].iov_len <= SHM_MAX_MSG_SIZE);
		sum += r.iov[i].iov_len;
	}
	FUZZ_ASSERT(sum == r.total);
}

static void check_rma(const struct shm_cell_hdr *hdr, const uint8_t *payload)
{
	struct shm_rma_req req;
	uint64_t sum = 0;
	size_t head;

	if (shm_rma_parse(hdr, payload, &req))
		return;
	FUZZ_ASSERT(req.hdr.rma_cnt >= 1 && req.hdr.rma_cnt <= SHM_IOV_LIMIT);
	FUZZ_ASSERT(req.hdr.iov_cnt <= SHM_IOV_LIMIT);
	head = shm_rma_hdr_size(req.hdr.rma_cnt);
	FUZZ_ASSERT(head + req.hdr.iov_cnt * sizeof(struct shm_iov) <=
		    hdr->len);
	/* inline bytes: the rest of the cell's declared length */
	FUZZ_ASSERT(req.inline_data == payload + head);
	FUZZ_ASSERT(req.inline_data + req.inline_len == payload + hdr->len);
	for (uint32_t i = 0; i < req.hdr.iov_cnt; i++) {
		FUZZ_ASSERT(req.remote[i].iov_len <= SHM_MAX_MSG_SIZE);
		sum += req.remote[i].iov_len;
	}
	switch (hdr->proto) {
	case SHM_COPY_INLINE:
		break;
	case SHM_COPY_CMA:
		FUZZ_ASSERT(sum == req.hdr.total);
		break;
	case SHM_COPY_BOUNCE:
		FUZZ_ASSERT(!req.hdr.iov_cnt && req.hdr.total &&
			    req.hdr.total <= SHM_MAX_MSG_SIZE);
		FUZZ_ASSERT(hdr->op != SHM_OP_WRITE || req.hdr.xfer_id);
		break;
	default:
		__builtin_trap();
	}
}

static void check_amo(const struct shm_cell_hdr *hdr, const uint8_t *payload,
		      uint32_t reply_max)
{
	bool cmp = hdr->flags & SHM_F_COMPARE;
	struct shm_amo amo;
	size_t bytes, size;
	int ret = shm_amo_parse(hdr, payload, reply_max, &amo, &bytes);

	FUZZ_ASSERT(ret == 0 || ret == FI_EINVAL || ret == FI_EOPNOTSUPP);
	if (ret)
		return;
	size = util_atomic_datatype_size((enum fi_datatype)amo.datatype);
	FUZZ_ASSERT(size && amo.count && bytes == size * amo.count);
	FUZZ_ASSERT(!util_atomic_valid((enum fi_op)amo.op,
				       (enum fi_datatype)amo.datatype,
				       amo.count));
	/* shm_amo_apply reads operands, then compare values, from here */
	FUZZ_ASSERT(sizeof(amo) + bytes * (cmp ? 2 : 1) <= hdr->len);
	FUZZ_ASSERT(!(hdr->flags & SHM_F_FETCH) || bytes <= reply_max);
}

static void check_cts(const struct shm_cell_hdr *hdr, const uint8_t *payload,
		      uint64_t tx_len)
{
	struct iovec theirs[SHM_IOV_LIMIT];
	uint64_t off, len, sum = 0;
	int cnt = shm_cts_parse(tx_len, hdr, (const void *)payload, &off,
				&len, theirs);

	if (cnt < 0) {
		FUZZ_ASSERT(cnt == -FI_EINVAL);
		return;
	}
	FUZZ_ASSERT(cnt <= SHM_IOV_LIMIT);
	FUZZ_ASSERT(sizeof(struct shm_cts) + (size_t)cnt *
		    sizeof(struct shm_iov) <= hdr->len);
	/* the window the sender then pushes lies inside its message */
	FUZZ_ASSERT(off <= tx_len && len <= tx_len - off);
	for (int i = 0; i < cnt; i++) {
		FUZZ_ASSERT(theirs[i].iov_len <= SHM_MAX_MSG_SIZE);
		sum += theirs[i].iov_len;
	}
	FUZZ_ASSERT(sum == len);
}

static void fuzz_cell(const uint8_t *data, size_t size)
{
	uint8_t args[CELL_ARGS] = { 0 }, head[SHM_CELL_HDR_SIZE] = { 0 };
	struct shm_cell_hdr hdr;
	uint32_t cell_size, max_peers, reply_max;
	uint8_t *payload;
	size_t n;
	int st;

	n = size < CELL_ARGS ? size : CELL_ARGS;
	memcpy(args, data, n);
	data += n;
	size -= n;
	n = size < sizeof(head) ? size : sizeof(head);
	memcpy(head, data, n);
	data += n;
	size -= n;
	cell_size = cell_sizes[args[0] % WEFT_ARRAY_SIZE(cell_sizes)];
	max_peers = 1u + (args[0] >> 2) * 1000u;
	reply_max = shm_cell_payload_max(cell_size);
	/* a copy of the header, as shm_queue_poll takes it */
	memcpy(&hdr, head + offsetof(struct shm_cell, hdr), sizeof(hdr));
	if (!shm_cell_hdr_ok(&hdr, cell_size, max_peers))
		return;
	FUZZ_ASSERT(hdr.len <= cell_size - SHM_CELL_HDR_SIZE);
	FUZZ_ASSERT(hdr.src < max_peers);
	payload = malloc(hdr.len ? hdr.len : 1);
	if (!payload)
		return;
	memset(payload, 0, hdr.len);
	memcpy(payload, data, size < hdr.len ? size : hdr.len);
	st = shm_wire_status(hdr.proto);
	FUZZ_ASSERT(st >= 0 && st < FI_ERRNO_MAX);
	FUZZ_ASSERT(!st == !hdr.proto);
	/* every parser, whatever the op: none may trust it */
	check_rts(payload, hdr.len);
	check_rma(&hdr, payload);
	check_amo(&hdr, payload, reply_max);
	check_cts(&hdr, payload, le64(args + 1));
	free(payload);
}

/* ---- region headers -------------------------------------------------------- */

/* [off, off + len) inside [lo, hi), without wrapping */
static bool inside(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
	return off >= lo && off <= hi && len <= hi - off;
}

static void fuzz_hdr(const uint8_t *data, size_t size)
{
	struct shm_region_hdr h;
	uint64_t file_size = 0;
	size_t n = size < sizeof(h) ? size : sizeof(h);

	memset(&h, 0, sizeof(h));
	memcpy(&h, data, n);
	if (size > sizeof(h))
		memcpy(&file_size, data + sizeof(h),
		       size - sizeof(h) < 8 ? size - sizeof(h) : 8);
	if (shm_region_hdr_check(&h, (size_t)file_size))
		return;
	FUZZ_ASSERT(h.magic == SHM_REGION_MAGIC);
	FUZZ_ASSERT(h.version == SHM_REGION_VERSION);
	FUZZ_ASSERT(h.owner_uid == (uint32_t)getuid() && h.owner_pid > 0);
	FUZZ_ASSERT(h.region_size == file_size && file_size <= (4ull << 30));
	FUZZ_ASSERT(h.cell_size >= SHM_MIN_CELL_SIZE &&
		    h.cell_size <= SHM_MAX_CELL_SIZE && !(h.cell_size % 64));
	FUZZ_ASSERT(h.cell_count >= 2 &&
		    !(h.cell_count & (h.cell_count - 1)));
	FUZZ_ASSERT(h.max_peers >= 1 && h.max_peers <= SHM_MAX_PEERS);
	FUZZ_ASSERT(h.bounce_seg_count >= 1 &&
		    h.bounce_seg_count <= SHM_MAX_BOUNCE_SEGS);
	FUZZ_ASSERT(h.bounce_seg_size >= SHM_PAGE &&
		    !(h.bounce_seg_size % SHM_PAGE));
	/* header, slots, cells, segment headers, segment data: in order,
	 * apart, each inside the object */
	FUZZ_ASSERT(inside(h.slots_off, (uint64_t)h.max_peers *
			   sizeof(struct shm_slot), sizeof(h), h.cells_off));
	FUZZ_ASSERT(inside(h.cells_off, (uint64_t)h.cell_count * h.cell_size,
			   h.slots_off, h.segs_off));
	FUZZ_ASSERT(inside(h.segs_off, (uint64_t)h.bounce_seg_count *
			   sizeof(struct shm_bounce_seg), h.cells_off,
			   h.seg_data_off));
	FUZZ_ASSERT(inside(h.seg_data_off, (uint64_t)h.bounce_seg_count *
			   h.bounce_seg_size, h.segs_off, file_size));
	/* cells and slots where the producer's and consumer's atomics work */
	FUZZ_ASSERT(!(h.cells_off % SHM_CACHELINE) &&
		    !(h.slots_off % SHM_CACHELINE));
}

/* ---- names -------------------------------------------------------------- */

static void check_valid_name(const char *name)
{
	char prefix[32];
	size_t plen = (size_t)snprintf(prefix, sizeof(prefix),
				       SHM_NAME_PREFIX "%u-",
				       (unsigned)getuid());
	size_t len = strnlen(name, SHM_NAME_MAX);

	FUZZ_ASSERT(len < SHM_NAME_MAX && len > plen);
	FUZZ_ASSERT(!strncmp(name, prefix, plen));
	/* shm_open takes it as one name in /dev/shm, nothing more */
	FUZZ_ASSERT(!strchr(name + 1, '/'));
	for (size_t i = plen; i < len; i++)
		FUZZ_ASSERT(strchr("0123456789abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ._:-", name[i]));
}

static void fuzz_name(const uint8_t *data, size_t size)
{
	char slot[SHM_NAME_MAX] = { 0 }, built[SHM_NAME_MAX];
	char *chosen = malloc(size + 1);

	/* a slot's name as shm_region_slot_name copies it */
	memcpy(slot, data, size < sizeof(slot) ? size : sizeof(slot));
	slot[SHM_NAME_MAX - 1] = '\0';
	if (shm_region_name_valid(slot))
		check_valid_name(slot);
	if (!chosen)
		return;
	memcpy(chosen, data, size);
	chosen[size] = '\0';
	if (!shm_region_name_build(chosen, NULL, built)) {
		check_valid_name(built);
		FUZZ_ASSERT(shm_region_name_valid(built));
		FUZZ_ASSERT(strlen(chosen) <= SHM_SHORT_NAME_MAX);
		FUZZ_ASSERT(!strcmp(built + strlen(built) - strlen(chosen),
				    chosen));
	}
	free(chosen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	switch (data[0] % MODE_MAX) {
	case MODE_CELL:
		fuzz_cell(data + 1, size - 1);
		break;
	case MODE_HDR:
		fuzz_hdr(data + 1, size - 1);
		break;
	default:
		fuzz_name(data + 1, size - 1);
		break;
	}
	return 0;
}

/* ---- seeds ----------------------------------------------------------------- */

static const char *seed_dir;
static int seed_n;

static void seed_write(const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%02d", seed_dir, seed_n++);
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(buf, 1, len, f);
	fclose(f);
}

/* mode, selector (default cell size), tx length 1 MiB, cell, payload */
static void seed_cell(uint16_t op, uint16_t flags, uint32_t proto,
		      const void *payload, uint32_t len)
{
	uint8_t buf[1 + CELL_ARGS + SHM_DEF_CELL_SIZE] = { MODE_CELL, 7 };
	struct shm_cell_hdr hdr = {
		.op = op, .flags = (uint16_t)(flags | SHM_F_VER), .src = 3,
		.src_gen = 1, .len = len, .proto = proto, .tag = 0x77,
		.cookie = 0x100000002ull,
	};
	uint64_t tx_len = 1 << 20;

	memcpy(buf + 2, &tx_len, sizeof(tx_len));
	memcpy(buf + 1 + CELL_ARGS + offsetof(struct shm_cell, hdr), &hdr,
	       sizeof(hdr));
	memcpy(buf + 1 + CELL_ARGS + SHM_CELL_HDR_SIZE, payload, len);
	seed_write(buf, 1 + CELL_ARGS + SHM_CELL_HDR_SIZE + len);
}

static void seed_cells(void)
{
	uint8_t p[512] = { 0 };
	struct shm_rts *rts = (void *)p;
	struct shm_rma *rma = (void *)p;
	struct shm_amo *amo = (void *)p;
	struct shm_cts *cts = (void *)p;
	struct shm_iov *riov;

	seed_cell(SHM_OP_SEND, SHM_F_TAGGED, 0, "hello", 5);
	rts->total = 300000;
	rts->iov_cnt = 2;
	rts->iov[0] = (struct shm_iov){ 0x10000, 100000 };
	rts->iov[1] = (struct shm_iov){ 0x90000, 200000 };
	seed_cell(SHM_OP_RTS, 0, SHM_COPY_CMA, p,
		  sizeof(*rts) + 2 * sizeof(struct shm_iov));
	memset(p, 0, sizeof(p));
	rma->total = 64;
	rma->rma_cnt = 1;
	rma->rma[0] = (struct shm_rma_iov){ 0x4000, 64, 9 };
	seed_cell(SHM_OP_WRITE, 0, SHM_COPY_INLINE, p,
		  (uint32_t)shm_rma_hdr_size(1) + 64);
	seed_cell(SHM_OP_READ, 0, SHM_COPY_INLINE, p,
		  (uint32_t)shm_rma_hdr_size(1));
	rma->total = 8192;
	rma->rma[0].len = 8192;
	rma->iov_cnt = 2;
	riov = (void *)(p + shm_rma_hdr_size(1));
	riov[0] = (struct shm_iov){ 0x20000, 4096 };
	riov[1] = (struct shm_iov){ 0x30000, 4096 };
	seed_cell(SHM_OP_WRITE, 0, SHM_COPY_CMA, p,
		  (uint32_t)shm_rma_hdr_size(1) + 2 * sizeof(*riov));
	rma->iov_cnt = 0;
	rma->xfer_id = 5;
	seed_cell(SHM_OP_WRITE, 0, SHM_COPY_BOUNCE, p,
		  (uint32_t)shm_rma_hdr_size(1));
	memset(p, 0, sizeof(p));
	amo->addr = 0x4000;
	amo->key = 9;
	amo->count = 2;
	amo->datatype = FI_UINT64;
	amo->op = FI_CSWAP;
	seed_cell(SHM_OP_ATOMIC, SHM_F_FETCH | SHM_F_COMPARE, 0, p,
		  sizeof(*amo) + 2 * 2 * 8);
	amo->op = FI_SUM;
	seed_cell(SHM_OP_ATOMIC, 0, 0, p, sizeof(*amo) + 2 * 8);
	memset(p, 0, sizeof(p));
	cts->off = 65536;
	cts->len = 8192;
	cts->rx_id = 4;
	cts->iov_cnt = 1;
	cts->iov[0] = (struct shm_iov){ 0x50000, 8192 };
	seed_cell(SHM_OP_CTS, 0, 0, p, sizeof(*cts) + sizeof(struct shm_iov));
	seed_cell(SHM_OP_ACK, 0, FI_EACCES, "", 0);
	seed_cell(SHM_OP_PUSHED, 0, 0, "", 0);
}

/* A default region's header, as shm_region_create writes it. */
static void seed_hdr(void)
{
	uint8_t buf[1 + sizeof(struct shm_region_hdr) + 8] = { MODE_HDR };
	struct shm_region_attr a;
	struct shm_region_layout l;
	struct shm_region_hdr h;

	shm_region_attr_default(&a);
	if (!shm_region_layout(&a, &l))
		return;
	memset(&h, 0, sizeof(h));
	h.magic = SHM_REGION_MAGIC;
	h.version = SHM_REGION_VERSION;
	h.hdr_size = sizeof(h);
	h.region_size = l.size;
	h.owner_pid = 4242;
	h.owner_uid = (uint32_t)getuid();
	h.cell_size = a.cell_size;
	h.cell_count = a.cell_count;
	h.max_peers = a.max_peers;
	h.bounce_seg_size = a.bounce_seg_size;
	h.bounce_seg_count = a.bounce_seg_count;
	h.slots_off = l.slots_off;
	h.cells_off = l.cells_off;
	h.segs_off = l.segs_off;
	h.seg_data_off = l.seg_data_off;
	atomic_init(&h.ready, 1);
	memcpy(buf + 1, &h, sizeof(h));
	memcpy(buf + 1 + sizeof(h), &l.size, 8);
	seed_write(buf, sizeof(buf));
}

static void seed_names(void)
{
	char buf[1 + SHM_NAME_MAX] = { MODE_NAME };
	int n;

	n = snprintf(buf + 1, SHM_NAME_MAX, SHM_NAME_PREFIX
		     "%u-4242-0123456789abcdef01234567", (unsigned)getuid());
	seed_write(buf, 1 + (size_t)n);
	seed_write("\002rank-0.job:7", 13);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	seed_dir = getenv("WEFT_FUZZ_SEEDS");
	if (!seed_dir)
		return 0;
	seed_cells();
	seed_hdr();
	seed_names();
	return 0;
}
