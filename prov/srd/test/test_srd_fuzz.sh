#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: libFuzzer on srd's packet validation (fuzz_srd_pkt.c with
# srd_pkt.c and the atomic tables it checks against) for SRD_FUZZ_SECONDS
# (default 15): no crash, no sanitizer report, and every packet that
# passes keeps the invariants the handlers rely on.
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
. "$top_srcdir/core/test/fuzz_harness.sh"
s=$top_srcdir
fuzz_harness fuzz_srd_pkt "${SRD_FUZZ_SECONDS:-15}" \
	-I"$s/prov/srd/src/rdm" "$s/prov/srd/test/fuzz_srd_pkt.c" \
	"$s/prov/srd/src/rdm/srd_pkt.c" \
	-- "$s/util/util_atomic.c" "$s/core/test/fuzz_log.c"
