#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: libfabric's own fabtests (its v1.17.0 release, kept outside
# the repository as test data, see contrib/upstream_fabtests.sh) over weft's
# shm and srd (on softsrd), from the build tree, as TAP: one line per
# upstream test. The quick suite less what contrib/upstream_fabtests/
# exclude-check leaves out for time. Skips (a "1..0 # SKIP" plan) only when
# the tarball is absent. UPSTREAM_FABTESTS_ARGS adds options.
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck disable=SC2086
exec "$top_srcdir/contrib/upstream_fabtests.sh" --tap -r weft-shm,weft-srd \
	-T 30 -L "$top_builddir/weft/.libs" \
	-x "$top_srcdir/contrib/upstream_fabtests/exclude-check" \
	${UPSTREAM_FABTESTS_ARGS:-}
