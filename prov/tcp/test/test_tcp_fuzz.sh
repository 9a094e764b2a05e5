#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: build the libFuzzer harness of the tcp wire parsers
# (fuzz_tcp_frame.c + tcp_frame.c) with clang, ASan and UBSan, and run it
# for TCP_FUZZ_SECONDS (default 20) from an empty corpus. A crash, a
# sanitizer report or a header that does not re-encode to its own bytes
# fails the test. Skipped (and says why) without a clang that has libFuzzer
# (core/test/fuzz_harness.sh).
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
. "$top_srcdir/core/test/fuzz_harness.sh"
s=$top_srcdir
fuzz_harness fuzz_tcp_frame "${TCP_FUZZ_SECONDS:-20}" \
	-I"$s/prov/tcp/src" "$s/prov/tcp/test/fuzz_tcp_frame.c" \
	"$s/prov/tcp/src/tcp_frame.c"
