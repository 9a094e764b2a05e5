#!/bin/sh
# SPDX-License-Identifier: MIT
#
# weft_info against Debian's fi_info: both run on weft's libfabric.so.1, so
# they see the same providers and settings and must print the same text
# (fi_info -e prints a stray NUL byte where a value is unquoted; weft_info
# does not, so NULs are dropped before comparing). Plus the command line's
# own contract: --version, -h, and exit 1 with usage on bad input.

: "${top_builddir:?top_builddir must be set}"

weft_info="$top_builddir/core/weft_info"
weftlibdir="$top_builddir/weft/.libs"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft_info.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Leak reports of a sanitizer build would change exit codes and stderr of
# both programs alike; this test compares output, not leaks.
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS

if [ ! -x "$weft_info" ]; then
	echo "1..0 # SKIP weft_info was not built"
	exit 0
fi

fi_info_bin=$(command -v fi_info)

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
check() { # check NAME COMMAND...: ok when COMMAND succeeds
	name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

echo "1..14"

# ---- the command line's own contract ---------------------------------------
"$weft_info" --version >"$tmp/version" 2>&1
check "--version exits 0" test $? -eq 0
check "--version names the libfabric release" \
	grep -qx 'libfabric: 1\.17\.0' "$tmp/version"

"$weft_info" -h >"$tmp/help" 2>&1
rc=$?
check "-h prints usage and exits 0" \
	sh -c "[ $rc -eq 0 ] && grep -q '^Usage: weft_info' '$tmp/help'"

"$weft_info" --no-such-option >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
check "unknown option: usage on stderr, exit 1" \
	sh -c "[ $rc -eq 1 ] && grep -q '^Usage: weft_info' '$tmp/bad.err' && ! [ -s '$tmp/bad.out' ]"

"$weft_info" -c 'FI_MSG|FI_NO_SUCH_CAP' >/dev/null 2>"$tmp/cap.err"
rc=$?
check "unknown capability: exit 1 naming it" \
	sh -c "[ $rc -eq 1 ] && grep -q 'Unrecognized capability: FI_NO_SUCH_CAP' '$tmp/cap.err'"

"$weft_info" -t FI_EP_NOPE >/dev/null 2>"$tmp/ep.err"
rc=$?
check "unknown endpoint type: exit 1 naming it" \
	sh -c "[ $rc -eq 1 ] && grep -q 'Unrecognized endpoint type: FI_EP_NOPE' '$tmp/ep.err'"

"$weft_info" extra-arg >/dev/null 2>&1
check "stray argument: exit 1" test $? -eq 1

# -e shows current values, quoting values that hold a space
FI_LOG_LEVEL=warn FI_LOG_PROV="no such prov" "$weft_info" -e >"$tmp/env" 2>/dev/null
check "-e prints set values, quoted when they hold a space" \
	sh -c "grep -qx 'FI_LOG_LEVEL=warn' '$tmp/env' && grep -qx 'FI_LOG_PROV=\"no such prov\"' '$tmp/env' && grep -qx '# FI_LOG_LEVEL: String' '$tmp/env'"

# ---- same text as Debian's fi_info on the same library ---------------------
# run_to FILE CMD...: stdout of CMD into FILE, without NUL bytes and with
# the process id (which shm addresses embed) replaced by <PID>; returns
# CMD's exit status
run_to() {
	file=$1
	shift
	sh -c 'echo $$ >"$0.pid"; exec "$@"' "$file" "$@" >"$file.raw" 2>/dev/null
	rc=$?
	tr -d '\000' <"$file.raw" | sed "s/\b$(cat "$file.pid")\b/<PID>/g" >"$file"
	return $rc
}

# compare NAME ARGS...: run both with ARGS; equal exit status (0 or not) and
# equal stdout
compare() {
	name=$1
	shift
	if [ -z "$fi_info_bin" ]; then
		skip "$name (fi_info from libfabric-bin is not installed)"
		return
	fi
	run_to "$tmp/ref" env LD_LIBRARY_PATH="$weftlibdir" \
		LD_PRELOAD="${WEFT_TEST_PRELOAD:-}" "$fi_info_bin" "$@"
	ref_rc=$?
	run_to "$tmp/out" "$weft_info" "$@"
	out_rc=$?
	if [ "$((ref_rc != 0))" -eq "$((out_rc != 0))" ] &&
	   cmp -s "$tmp/ref" "$tmp/out"; then
		ok "$name"
	else
		not_ok "$name (fi_info exit $ref_rc, weft_info exit $out_rc)"
		diff -u "$tmp/ref" "$tmp/out" | head -n 30 | sed 's/^/# /'
	fi
}

compare "default output matches fi_info"
compare "-v matches fi_info -v" -v
compare "-l matches fi_info -l" -l
compare "-e matches fi_info -e" -e
compare "-p shm -t FI_EP_RDM -c FI_MSG|FI_TAGGED matches fi_info" \
	-p shm -t FI_EP_RDM -c 'FI_MSG|FI_TAGGED'
compare "-t FI_EP_DGRAM -a FI_SOCKADDR_IN matches fi_info" \
	-t FI_EP_DGRAM -a FI_SOCKADDR_IN
