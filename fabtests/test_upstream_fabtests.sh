#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: libfabric's own fabtests (its v1.17.0 release, kept outside
# the repository as test data, see contrib/upstream_fabtests.sh) over
# weft's providers, from the build tree, as TAP: one line per upstream
# test. The quick suite less what contrib/upstream_fabtests/exclude-check
# leaves out for time. Skips (a "1..0 # SKIP" plan) only when the tarball
# is absent. UPSTREAM_FABTESTS_PROVIDERS picks weft's providers (comma
# separated, default shm,srd,tcp; srd runs on softsrd, as srd.conf there says);
# UPSTREAM_FABTESTS_ARGS adds options.
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck disable=SC2086
exec "$top_srcdir/contrib/upstream_fabtests.sh" --tap \
	-p "${UPSTREAM_FABTESTS_PROVIDERS:-shm,srd,tcp}" \
	-T 30 -L "$top_builddir/weft/.libs" \
	-x "$top_srcdir/contrib/upstream_fabtests/exclude-check" \
	${UPSTREAM_FABTESTS_ARGS:-}
