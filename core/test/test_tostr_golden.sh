#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fi_tostr/fi_tostr_r/fi_strerror must print exactly what libfabric 1.17
# prints. test_tostr_dump is linked against the system libfabric; run it on
# Debian's library and on weft's libfabric.so.1 (LD_LIBRARY_PATH) and compare
# the output section by section: one TAP line per fi_type section.

: "${top_builddir:?top_builddir must be set}"

dump="$top_builddir/core/test/test_tostr_dump"
weftlibdir="$top_builddir/weft/.libs"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tostr_golden.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

[ -x "$dump" ] || skip_all "test_tostr_dump was not built"
[ -e "$weftlibdir/libfabric.so.1" ] || skip_all "weft's libfabric.so.1 was not built"

# Reference: Debian's libfabric, whatever the caller's environment says.
if ! env -u LD_LIBRARY_PATH -u LD_PRELOAD "$dump" >"$tmp/ref" 2>"$tmp/ref.err"; then
	skip_all "system libfabric cannot run the dump: $(head -n1 "$tmp/ref.err")"
fi

# Under test: weft. Sanitizer builds need their runtime preloaded, because
# the dump itself is not instrumented.
LD_LIBRARY_PATH="$weftlibdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
LD_PRELOAD="${WEFT_TEST_PRELOAD:-}" \
	"$dump" >"$tmp/weft" 2>"$tmp/weft.err"
weft_rc=$?

sections=$(sed -n 's/^=== //p' "$tmp/ref")
count=$(printf '%s\n' "$sections" | wc -l)
echo "1..$((count + 2))"

n=1
bound=$(LD_LIBRARY_PATH="$weftlibdir" LD_TRACE_LOADED_OBJECTS=1 "$dump" 2>/dev/null |
	sed -n 's/^[[:space:]]*libfabric\.so\.1 => \([^ ]*\).*/\1/p')
case "$bound" in
"$weftlibdir"/*) echo "ok $n - dump binds to weft's libfabric.so.1" ;;
*) echo "not ok $n - dump binds to weft's libfabric.so.1 (got '$bound')" ;;
esac

n=$((n + 1))
if [ "$weft_rc" -eq 0 ]; then
	echo "ok $n - dump runs on weft"
else
	echo "not ok $n - dump runs on weft (exit $weft_rc)"
	sed 's/^/# /' "$tmp/weft.err" | head -n 20
fi

section_of() {
	awk -v want="=== $1" '$0 == want { on = 1; next } /^=== / { on = 0 } on' "$2"
}

for s in $sections; do
	n=$((n + 1))
	section_of "$s" "$tmp/ref" >"$tmp/ref.$s"
	section_of "$s" "$tmp/weft" >"$tmp/weft.$s"
	if cmp -s "$tmp/ref.$s" "$tmp/weft.$s"; then
		echo "ok $n - $s matches libfabric 1.17"
	else
		echo "not ok $n - $s matches libfabric 1.17"
		diff -u "$tmp/ref.$s" "$tmp/weft.$s" | head -n 40 | sed 's/^/# /'
	fi
done
