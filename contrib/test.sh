#!/bin/bash
# SPDX-License-Identifier: MIT
# test.sh [CONFIGURE ARGS...]: set up (contrib/setup.sh), then run the whole
# test suite (make check): unit tests of core, util and every provider, and
# the fabtests quick suite over every provider. Ends with one line
# "N passed, N failed, N skipped" counting every test case it ran.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh" "$@" || exit 1
cd "${WEFT_BUILDDIR:-$top/build}"

make -j"$(nproc)" check >check.out 2>&1
rc=$?
grep -E '^(PASS|FAIL|ERROR|XPASS|SKIP)' check.out | grep -v '^PASS' || true
count() { awk -v k="# $1:" '$1" "$2 == k { s += $3 } END { print s + 0 }' check.out; }
pass=$(( $(count PASS) + $(count XFAIL) ))
fail=$(( $(count FAIL) + $(count ERROR) + $(count XPASS) ))
skip=$(count SKIP)
if [ $rc -ne 0 ] && [ "$fail" -eq 0 ]; then
	tail -40 check.out
	fail=1
fi
[ "$fail" -eq 0 ] || find . -name 'test-suite.log' -newer configure.out -exec cat {} + | tail -200
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
