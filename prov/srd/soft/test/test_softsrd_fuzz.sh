#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: libFuzzer on softsrd's wire parser (fuzz_softsrd_wire.c with
# softsrd_parse.c and the CRC32C of softsrd_crc.c) for SOFTSRD_FUZZ_SECONDS
# (default 15): no crash, no sanitizer report, and what passes keeps the
# invariants the protocol code relies on.
: "${top_builddir:=$(cd "$(dirname "$0")/../../../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../../../.." && pwd)}"
. "$top_srcdir/core/test/fuzz_harness.sh"
s=$top_srcdir/prov/srd/soft
fuzz_harness fuzz_softsrd_wire "${SOFTSRD_FUZZ_SECONDS:-15}" \
	"$s/test/fuzz_softsrd_wire.c" "$s/softsrd_parse.c" \
	"$s/softsrd_crc.c" -- "$top_srcdir/core/test/fuzz_log.c"
