#!/bin/bash
# SPDX-License-Identifier: MIT
# fuzz_all.sh: every libFuzzer harness of weft's parsers of untrusted
# input, one after the other, for much longer than make check gives them:
#   tcp      prov/tcp/test/test_tcp_fuzz.sh        frames and handshakes
#   srd      prov/srd/test/test_srd_fuzz.sh        packet validation
#   softsrd  prov/srd/soft/test/test_softsrd_fuzz.sh  UDP datagrams, PSNs
#   shm      prov/shm/test/test_shm_fuzz.sh        cells, region headers
#
#   contrib/bench/fuzz_all.sh [-B BUILDDIR] [-m MINUTES] [-o OUTDIR] [-h "srd shm"]
#
# MINUTES per harness (default 10). Prints per harness the executions,
# the seconds it ran and the failing inputs found (crashes, leaks and
# timeouts: 0 expected); exits 1 if any. OUTDIR keeps each harness's
# libFuzzer log and any failing input (reproduce one by building the
# harness as its test script does and running it on the file). Needs
# clang with libFuzzer (contrib/setup.sh installs it). Prefix with
# nice -n 5 on a shared machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build="$top/build"
minutes=10
out=""
harnesses="tcp srd softsrd shm"
while getopts "B:m:o:h:" o; do
	case $o in
	B) build=$OPTARG ;;
	m) minutes=$OPTARG ;;
	o) out=$OPTARG ;;
	h) harnesses=$OPTARG ;;
	*) exit 2 ;;
	esac
done
build=$(cd "$build" && pwd)
[ -f "$build/config.h" ] || { echo "no weft build in $build (-B)" >&2; exit 2; }
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/fuzz_all.XXXXXX")}
mkdir -p "$out"
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')

script_of() {
	case $1 in
	tcp) echo prov/tcp/test/test_tcp_fuzz.sh ;;
	srd) echo prov/srd/test/test_srd_fuzz.sh ;;
	softsrd) echo prov/srd/soft/test/test_softsrd_fuzz.sh ;;
	shm) echo prov/shm/test/test_shm_fuzz.sh ;;
	*) echo "unknown harness $1 (tcp srd softsrd shm)" >&2; exit 2 ;;
	esac
}

failed=0
printf '%-8s %14s %8s %8s  %s\n' harness executions seconds crashes result
for h in $harnesses; do
	script=$(script_of "$h")
	keep="$out/$h"
	rm -rf "$keep"
	mkdir -p "$keep"
	var=$(echo "$h" | tr '[:lower:]' '[:upper:]')_FUZZ_SECONDS
	start=$(date +%s)
	env "$var=$seconds" FUZZ_KEEP_DIR="$keep" top_srcdir="$top" \
		top_builddir="$build" sh "$top/$script" >"$keep/tap.txt" 2>&1 || true
	end=$(date +%s)
	execs=$(awk '/stat::number_of_executed_units/ { print $2; exit }' \
		"$keep/run.log" 2>/dev/null || true)
	ran=$(awk '/Done [0-9]+ runs in/ { print $(NF-1); exit }' \
		"$keep/run.log" 2>/dev/null || true)
	crashes=$(find "$keep" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
	if grep -q '^not ok' "$keep/tap.txt"; then
		result="FAILED (see $keep)"
		failed=1
	elif grep -q '# SKIP' "$keep/tap.txt"; then
		result="skipped: $(sed -n 's/.*# SKIP //p' "$keep/tap.txt" | head -n 1)"
	else
		result=ok
	fi
	printf '%-8s %14s %8s %8s  %s\n' "$h" "${execs:--}" \
		"${ran:-$((end - start))}" "$crashes" "$result"
done
echo "logs and failing inputs: $out"
exit $failed
