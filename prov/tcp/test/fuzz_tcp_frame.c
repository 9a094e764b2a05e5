/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the tcp provider's parsers (tcp_frame.c): the
 * input is a byte stream as a connection's buffer would hold it. Frames
 * are taken one after the other like the receive side does: base header,
 * whole header, then the handshake payloads through their own decoders.
 * Besides not crashing (ASan/UBSan watch), a decoded header must encode
 * back to the very bytes it came from: one encoding per header, nothing
 * hidden in bytes the decoder skips. test_tcp_fuzz.sh builds and runs it
 * for a bounded time.
 */
#include "weft/compat.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tcp_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct tcp_limits fuzz_lim = {
	.eager_max = 1 << 20, .max_msg = (uint64_t)1 << 40,
	.atomic_max = 128, .data_max = (uint64_t)1 << 40,
};

static void fuzz_payload(const struct tcp_hdr *h, const uint8_t *p,
			 size_t len)
{
	struct tcp_hello hello;
	const char *why;
	uint32_t reason;

	if (h->op == TCP_OP_HELLO || h->op == TCP_OP_HELLO_ACK) {
		if (!tcp_hello_decode(p, len, &hello, &why) &&
		    (hello.naddr < 1 || hello.naddr > TCP_STRIPE_MAX ||
		     hello.role >= TCP_STRIPE_MAX))
			__builtin_trap();
		(void)tcp_hello_version(&hello);
	} else if (h->op == TCP_OP_REJECT) {
		if (!tcp_reject_decode(p, len, &reason, &why) &&
		    (reason == 0 || reason >= TCP_REJECT_MAX))
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t again[TCP_HDR_MAX];
	struct tcp_hdr h;
	const char *why;
	size_t off = 0, payload;
	uint32_t hlen;

	while (size - off >= TCP_BASE_LEN) {
		if (tcp_frame_peek(data + off, size - off, &hlen, &why))
			break;
		if (hlen < TCP_BASE_LEN || hlen > TCP_HDR_MAX)
			__builtin_trap();
		if (size - off < hlen)
			break;
		if (tcp_frame_decode(data + off, size - off, &fuzz_lim, &h,
				     &why))
			break;
		if (tcp_frame_encode(&h, again) != hlen ||
		    memcmp(again, data + off, hlen))
			__builtin_trap();
		off += hlen;
		payload = h.len < size - off ? (size_t)h.len : size - off;
		fuzz_payload(&h, data + off, payload);
		off += payload;
	}
	return 0;
}
