#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the quick fabtests suite on weft's tcp provider over loopback
# (every endpoint on 127.0.0.1), from the build tree, as TAP. The I/O
# engine is the default (io_uring); test_quick_tcp_epoll.sh runs the same
# suite with FI_TCP_IO_URING=0.
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
runner="$top_builddir/fabtests/weft_fabtests"
if [ ! -x "$runner" ]; then
	echo "1..1"
	echo "not ok 1 - $runner was not built"
	exit 1
fi
FI_TCP_IFACE="${FI_TCP_IFACE:-lo}"
export FI_TCP_IFACE
# Sanitizer builds: the test programs may not carry the ASan runtime that
# weft's instrumented libfabric.so.1 needs.
if [ -n "${WEFT_TEST_PRELOAD:-}" ]; then
	LD_PRELOAD="$WEFT_TEST_PRELOAD${LD_PRELOAD:+ $LD_PRELOAD}"
	ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
	export LD_PRELOAD ASAN_OPTIONS
fi
exec "$runner" --tap -t quick -p tcp -L "$top_builddir/weft/.libs"
