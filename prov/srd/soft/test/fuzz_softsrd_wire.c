/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of softsrd's wire parser (softsrd_parse.c): what a
 * received UDP datagram goes through before the device looks anything
 * up (length, CRC32C trailer, version, QP number form, decoding), and the
 * sequence arithmetic applied to PSNs from the wire (a flow's receive
 * window, a run of acknowledged PSNs).
 *
 * Input: one mode byte, then either a datagram (mode bit 1 clear; bit 0:
 * the device requires CRCs) or the arguments of the sequence functions
 * (bit 1 set). Besides not crashing (ASan/UBSan watch), a datagram that
 * passes has its payload inside the datagram and before the trailer, a
 * CRC that a bitwise reference CRC32C agrees with, and fields that are
 * the little-endian bytes at their offsets; one that is well formed is
 * not refused. The window never lowers its floor, accepts only PSNs in
 * [floor, floor + 2 * SOFTSRD_WIN) and accepts all of them; an
 * acknowledged run never reaches a PSN not sent. LLVMFuzzerInitialize
 * writes valid datagrams of every type and ordinary sequence arguments
 * as seeds. test_softsrd_fuzz.sh builds and runs it.
 */
#include "weft/compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../softsrd_priv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct fi_provider fuzz_prov = { .name = "srd" };
struct fi_provider *softsrd_prov = &fuzz_prov;

#define FUZZ_ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)

#define MODE_CRC 1
#define MODE_SEQ 2
#define HDR sizeof(struct softsrd_hdr)

/* CRC32C one bit at a time: nothing shared with softsrd_crc.c. */
static uint32_t ref_crc32c(const uint8_t *p, size_t len)
{
	uint32_t c = ~0u;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

static uint64_t le_at(const uint8_t *buf, size_t off, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)buf[off + i] << (8 * i);
	return v;
}

#define FIELD_IS(buf, p, f) \
	FUZZ_ASSERT((p)->f == le_at(buf, offsetof(struct softsrd_hdr, f), \
				    sizeof(((struct softsrd_hdr *)0)->f)))

static void check_fields(const uint8_t *buf, const struct softsrd_wire_pkt *p)
{
	uint32_t imm;

	FIELD_IS(buf, p, type);
	FIELD_IS(buf, p, flags);
	FIELD_IS(buf, p, status);
	FIELD_IS(buf, p, src_qpn);
	FIELD_IS(buf, p, dst_qpn);
	FIELD_IS(buf, p, qkey);
	FIELD_IS(buf, p, incarnation);
	FIELD_IS(buf, p, seg_len);
	FIELD_IS(buf, p, rkey);
	FIELD_IS(buf, p, msg_len);
	FIELD_IS(buf, p, seg_off);
	FIELD_IS(buf, p, ack_cnt);
	FIELD_IS(buf, p, ack_incarnation);
	FIELD_IS(buf, p, psn);
	FIELD_IS(buf, p, floor);
	FIELD_IS(buf, p, raddr);
	FIELD_IS(buf, p, ack_psn);
	/* the immediate is the application's bytes, never swapped */
	memcpy(&imm, buf + offsetof(struct softsrd_hdr, imm), sizeof(imm));
	FUZZ_ASSERT(p->imm == imm);
}

static void fuzz_datagram(const uint8_t *buf, size_t len, bool crc_required)
{
	struct softsrd_wire_pkt p;
	bool has_crc = len >= HDR && (buf[2] & SOFTSRD_FLAG_CRC);
	bool crc_good = has_crc && len >= HDR + SOFTSRD_CRC_LEN &&
			ref_crc32c(buf, len - SOFTSRD_CRC_LEN) ==
			(uint32_t)le_at(buf, len - SOFTSRD_CRC_LEN,
					SOFTSRD_CRC_LEN);
	bool well_formed = len >= HDR && buf[0] == SOFTSRD_WIRE_VERSION &&
			   (has_crc ? crc_good : !crc_required) &&
			   (le_at(buf, offsetof(struct softsrd_hdr, dst_qpn),
				  4) & 0xff) &&
			   !(le_at(buf, offsetof(struct softsrd_hdr, src_qpn),
				   4) >> 24);
	int ret = softsrd_wire_parse(buf, len, crc_required, &p);

	FUZZ_ASSERT(ret == 0 || ret == -FI_EINVAL);
	FUZZ_ASSERT(!ret == well_formed);
	if (ret)
		return;
	FUZZ_ASSERT(p.payload == buf + HDR);
	FUZZ_ASSERT(p.len == len - HDR - (has_crc ? SOFTSRD_CRC_LEN : 0));
	FUZZ_ASSERT((p.dst_qpn & 0xff) && !(p.src_qpn >> 24));
	check_fields(buf, &p);
}

static void fuzz_window(uint64_t psn, uint64_t floor, uint64_t rx_floor)
{
	uint64_t f = rx_floor, want = floor > rx_floor ? floor : rx_floor;
	bool in = softsrd_seq_window(psn, floor, &f);

	if (floor > psn) {
		/* a sender that claims to resend nothing below its own PSN
		 * changes nothing */
		FUZZ_ASSERT(!in && f == rx_floor);
		return;
	}
	FUZZ_ASSERT(f == want);
	FUZZ_ASSERT(in == (psn >= want && psn - want < 2 * SOFTSRD_WIN));
}

static void fuzz_ack_run(uint64_t first, uint32_t cnt, uint64_t next_psn)
{
	bool ok = softsrd_seq_ack_run(first, cnt, next_psn);
	unsigned __int128 end = (unsigned __int128)first + cnt;

	FUZZ_ASSERT(ok == (cnt <= SOFTSRD_WIN && end <= next_psn));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mode, *buf;

	if (!size)
		return 0;
	mode = data[0];
	data++;
	size--;
	if (mode & MODE_SEQ) {
		uint8_t a[44] = { 0 };

		memcpy(a, data, size < sizeof(a) ? size : sizeof(a));
		fuzz_window(le_at(a, 0, 8), le_at(a, 8, 8), le_at(a, 16, 8));
		fuzz_ack_run(le_at(a, 24, 8), (uint32_t)le_at(a, 32, 4),
			     le_at(a, 36, 8));
		return 0;
	}
	/* the datagram's exact bytes, so ASan sees any read past them */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	fuzz_datagram(buf, size, mode & MODE_CRC);
	free(buf);
	return 0;
}

/* ---- seeds ------------------------------------------------------------ */

static void seed_write(const char *dir, int n, const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%02d", dir, n);
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(buf, 1, len, f);
	fclose(f);
}

/* mode byte, header, payload of len bytes, CRC trailer if crc */
static size_t seed_datagram(uint8_t *out, uint8_t type, uint32_t len,
			    bool crc)
{
	struct softsrd_hdr h;
	uint32_t c;

	memset(&h, 0, sizeof(h));
	h.version = SOFTSRD_WIRE_VERSION;
	h.type = type;
	h.flags = crc ? SOFTSRD_FLAG_CRC : 0;
	h.src_qpn = htole32(40000u << 8 | 1);
	h.dst_qpn = htole32(40001u << 8 | 2);
	h.qkey = htole32(0x1234);
	h.incarnation = htole32(77);
	h.seg_len = htole32(len);
	h.psn = htole64(12);
	h.floor = htole64(4);
	if (type == SOFTSRD_PKT_WRITE || type == SOFTSRD_PKT_READ_REQ) {
		h.raddr = htole64(0x7f0000001000);
		h.rkey = htole32(5);
		h.msg_len = htole32(3 * len + 64);
		h.seg_off = htole32(len);
	}
	if (type == SOFTSRD_PKT_ACK) {
		h.ack_psn = htole64(3);
		h.ack_cnt = htole32(9);
		h.ack_incarnation = htole32(78);
	}
	out[0] = crc ? MODE_CRC : 0;
	memcpy(out + 1, &h, sizeof(h));
	for (uint32_t i = 0; i < len; i++)
		out[1 + sizeof(h) + i] = (uint8_t)(i * 7);
	if (!crc)
		return 1 + sizeof(h) + len;
	c = htole32(softsrd_crc32c(0, out + 1, sizeof(h) + len));
	memcpy(out + 1 + sizeof(h) + len, &c, sizeof(c));
	return 1 + sizeof(h) + len + sizeof(c);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("WEFT_FUZZ_SEEDS");
	uint8_t buf[1 + sizeof(struct softsrd_hdr) + 256 + SOFTSRD_CRC_LEN];
	uint8_t seq[1 + 44] = { MODE_SEQ };
	const uint64_t seq_args[] = { 300, 260, 100, 3 };
	int n = 0;

	(void)argc;
	(void)argv;
	softsrd_crc_setup();
	if (!dir)
		return 0;
	for (uint8_t t = SOFTSRD_PKT_SEND; t <= SOFTSRD_PKT_READ_RESP; t++) {
		uint32_t len = t == SOFTSRD_PKT_READ_REQ ||
			       t == SOFTSRD_PKT_ACK ? 0 : 256;

		for (int crc = 0; crc < 2; crc++)
			seed_write(dir, n++, buf,
				   seed_datagram(buf, t, len, crc));
	}
	/* psn 300, floor 260, receiver's floor 100; run [3, 3 + 4) of 10 */
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 8; k++)
			seq[1 + 8 * i + k] = (uint8_t)(seq_args[i] >> (8 * k));
	seq[1 + 32] = 4;
	seq[1 + 36] = 10;
	seed_write(dir, n, seq, sizeof(seq));
	return 0;
}
