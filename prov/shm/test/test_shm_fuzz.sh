#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: libFuzzer on what shm reads from other processes' memory
# (fuzz_shm_cell.c with shm_cell.c, shm_layout.c and the atomic tables):
# cells, region headers, slot names, for SHM_FUZZ_SECONDS (default 15).
# No crash, no sanitizer report, no read past a cell's declared length,
# and what passes keeps the invariants the handlers rely on.
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
. "$top_srcdir/core/test/fuzz_harness.sh"
s=$top_srcdir
fuzz_harness fuzz_shm_cell "${SHM_FUZZ_SECONDS:-15}" \
	-I"$s/prov/shm/src" "$s/prov/shm/test/fuzz_shm_cell.c" \
	"$s/prov/shm/src/shm_cell.c" "$s/prov/shm/src/shm_layout.c" \
	-- "$s/util/util_atomic.c" "$s/core/test/fuzz_log.c"
