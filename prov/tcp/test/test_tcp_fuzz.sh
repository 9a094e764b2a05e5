#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: build the libFuzzer harness of the tcp wire parsers
# (fuzz_tcp_frame.c + tcp_frame.c) with clang, ASan and UBSan, and run it
# for TCP_FUZZ_SECONDS (default 20) from an empty corpus. A crash, a
# sanitizer report or a header that does not re-encode to its own bytes
# fails the test. Skipped (and says why) without a clang that has libFuzzer.
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
CLANG=${CLANG:-clang}
seconds=${TCP_FUZZ_SECONDS:-20}
echo "1..2"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tcp_fuzz.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ return (int)(d && n && 0); }\n' >"$tmp/probe.c"
if ! command -v "$CLANG" >/dev/null 2>&1 ||
   ! "$CLANG" -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1; then
	echo "ok 1 # SKIP $CLANG with libFuzzer is not installed (Debian: clang)"
	echo "ok 2 # SKIP nothing to run"
	exit 0
fi
if "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined \
	-I"$top_srcdir/include" -I"$top_builddir" -I"$top_srcdir/prov/tcp/src" \
	"$top_srcdir/prov/tcp/test/fuzz_tcp_frame.c" \
	"$top_srcdir/prov/tcp/src/tcp_frame.c" -o "$tmp/fuzz" >"$tmp/cc.log" 2>&1; then
	echo "ok 1 - harness built with libFuzzer, ASan, UBSan"
else
	echo "not ok 1 - harness does not build"
	sed 's/^/# /' "$tmp/cc.log"
	echo "not ok 2 - not run"
	exit 0
fi
mkdir "$tmp/corpus"
if "$tmp/fuzz" -max_total_time="$seconds" -rss_limit_mb=1024 \
	-print_final_stats=1 "$tmp/corpus" >"$tmp/run.log" 2>&1; then
	echo "ok 2 - ${seconds} s of fuzzing: $(grep -m1 'stat::number_of_executed_units' "$tmp/run.log" | awk '{print $2}') inputs, no crash"
else
	echo "not ok 2 - the fuzzer found a failing input"
	tail -n 40 "$tmp/run.log" | sed 's/^/# /'
fi
exit 0
