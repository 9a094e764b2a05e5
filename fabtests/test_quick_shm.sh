#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the quick fabtests suite on weft's shm provider, from the build
# tree (weft's libfabric.so.1 in $top_builddir/weft/.libs), as TAP.
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
runner="$top_builddir/fabtests/weft_fabtests"
if [ ! -x "$runner" ]; then
	echo "1..1"
	echo "not ok 1 - $runner was not built"
	exit 1
fi
exec "$runner" --tap -t quick -p shm -L "$top_builddir/weft/.libs"
