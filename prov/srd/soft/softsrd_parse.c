/* SPDX-License-Identifier: MIT */
/*
 * What softsrd takes from a received datagram before it looks anything
 * up: its length, the CRC trailer, the header's version and the form of
 * its QP numbers, decoded into host order; and the sequence arithmetic
 * the flows apply to PSNs that come from the wire (a flow's receive
 * window, a run of acknowledged PSNs). Functions of their arguments
 * only, no device state: softsrd_wire_rx and softsrd_proto_rx call them,
 * and test/fuzz_softsrd_wire.c fuzzes them alone.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <endian.h>
#include <string.h>

/* The datagram's length without its CRC trailer, or -1 when it must be
 * dropped: its CRC does not match (corrupted on the way: the sender
 * resends it), or it has none where this device requires one. */
static ssize_t softsrd_parse_crc(const uint8_t *buf, size_t len,
				 bool crc_required)
{
	const struct softsrd_hdr *h = (const struct softsrd_hdr *)buf;
	uint32_t want;

	if (!(h->flags & SOFTSRD_FLAG_CRC))
		return crc_required ? -1 : (ssize_t)len;
	if (len < sizeof(*h) + SOFTSRD_CRC_LEN)
		return -1;
	len -= SOFTSRD_CRC_LEN;
	memcpy(&want, buf + len, sizeof(want));
	if (softsrd_crc32c(0, buf, len) != le32toh(want)) {
		WEFT_WARN_SPARSE(softsrd_prov, FI_LOG_EP_DATA,
			       "datagram with a wrong CRC32C: dropped\n");
		return -1;
	}
	return (ssize_t)len;
}

static void softsrd_parse_fields(const struct softsrd_hdr *h,
				 struct softsrd_wire_pkt *p)
{
	p->type = h->type;
	p->flags = h->flags;
	p->status = h->status;
	p->src_qpn = le32toh(h->src_qpn);
	p->dst_qpn = le32toh(h->dst_qpn);
	p->qkey = le32toh(h->qkey);
	p->incarnation = le32toh(h->incarnation);
	p->seg_len = le32toh(h->seg_len);
	p->rkey = le32toh(h->rkey);
	p->msg_len = le32toh(h->msg_len);
	p->seg_off = le32toh(h->seg_off);
	p->imm = h->imm;
	p->ack_cnt = le32toh(h->ack_cnt);
	p->ack_incarnation = le32toh(h->ack_incarnation);
	p->psn = le64toh(h->psn);
	p->floor = le64toh(h->floor);
	p->raddr = le64toh(h->raddr);
	p->ack_psn = le64toh(h->ack_psn);
}

/* Untrusted: short, corrupted, foreign or odd-sized datagrams stop here.
 * A QP number is the device's UDP port << 8 | its index (1..255); the
 * port and the index are checked against the device by the caller. */
int softsrd_wire_parse(const uint8_t *buf, size_t len, bool crc_required,
		       struct softsrd_wire_pkt *p)
{
	const struct softsrd_hdr *h = (const struct softsrd_hdr *)buf;
	ssize_t n;

	if (len < sizeof(*h))
		return -FI_EINVAL;
	n = softsrd_parse_crc(buf, len, crc_required);
	if (n < 0)
		return -FI_EINVAL;
	softsrd_parse_fields(h, p);
	if (h->version != SOFTSRD_WIRE_VERSION || !(p->dst_qpn & 0xff) ||
	    p->src_qpn >> 24) {
		WEFT_WARN_SPARSE(softsrd_prov, FI_LOG_EP_DATA,
			       "datagram of version %u from qpn 0x%x to 0x%x: "
			       "dropped\n", h->version, p->src_qpn,
			       p->dst_qpn);
		return -FI_EINVAL;
	}
	p->payload = buf + sizeof(*h);
	p->len = (size_t)n - sizeof(*h);
	return 0;
}

/* A packet of a flow whose sender declares floor (it resends nothing
 * below): stale below the receiver's floor, which floor raises, and
 * beyond the 2 * SOFTSRD_WIN PSNs whose verdicts the receiver keeps.
 * Both come from the wire: the window's end is not computed (a floor
 * near 2^64 wrapped it, and the flow took nothing more). */
bool softsrd_seq_window(uint64_t psn, uint64_t floor, uint64_t *rx_floor)
{
	if (floor > psn)
		return false;
	if (floor > *rx_floor)
		*rx_floor = floor;
	return psn >= *rx_floor && psn - *rx_floor < 2 * SOFTSRD_WIN;
}

/* A run of OK verdicts [first, first + cnt) for a flow that has sent
 * PSNs below next_psn: no longer than a window, and only PSNs sent. */
bool softsrd_seq_ack_run(uint64_t first, uint32_t cnt, uint64_t next_psn)
{
	return cnt <= SOFTSRD_WIN && first <= next_psn &&
	       cnt <= next_psn - first;
}
