#!/bin/bash
# SPDX-License-Identifier: MIT
# instr_per_msg.sh [-b BUILDDIR] [-p PROV] [-s SIZE] [-I ITERS] [-F REGEX]
# Instructions per message on a provider's send and receive paths, counted by
# callgrind (stable on a noisy machine, unlike timings). Runs weft's
# ft_bench_pingpong under valgrind; each rank sends ITERS and receives ITERS
# messages. For each rank it prints the inclusive instruction count per
# message of the provider functions whose name matches REGEX (default: the
# post calls and the handler of one arrival), so idle polling, which depends
# on timing, is left out. Extra environment (e.g. FI_SRD_DEVICE=soft) passes
# through to the benchmark.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_BUILDDIR:-$top/build} prov=shm size=64 iters=5000 regex=
while getopts b:p:s:I:F: o; do
	case $o in
	b) build=$OPTARG ;; p) prov=$OPTARG ;; s) size=$OPTARG ;;
	I) iters=$OPTARG ;; F) regex=$OPTARG ;;
	*) sed -n 3,11p "$0"; exit 2 ;;
	esac
done
case "$prov" in
shm) : "${regex:=^shm_(msg_inject|msg_send|msg_recv|cell_handle)$}" ;;
srd*) : "${regex:=^(srd_(msg_inject|msg_send|msg_recv|ep_on_recv|ep_on_send|ep_on_batch_end|ring_consume)|softsrd_[a-z_]*poll[a-z_]*)$}" ;;
*) [ -n "$regex" ] || { echo "give -F REGEX for $prov" >&2; exit 2; } ;;
esac
bench=$build/fabtests/ft_bench_pingpong
[ -x "$bench" ] || { echo "no $bench: build weft first" >&2; exit 2; }
command -v callgrind_annotate >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

LD_LIBRARY_PATH=$build/weft/.libs valgrind -q --tool=callgrind --trace-children=yes \
	--callgrind-out-file="$tmp/cg.%p" "$bench" -p "$prov" -M "$size" -m "$size" \
	-I "$iters" -W 0 -r 1 >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
echo "# $prov, $size B, $iters messages each way: inclusive instructions per message"
rank=0
for f in $(ls -tr "$tmp"/cg.*); do
	out=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null |
		awk -v re="$regex" -v n="$iters" '
		/\[.*libfabric\.so/ {
			ir = $1; gsub(",", "", ir); fn = $0
			sub(/ \[.*$/, "", fn); sub(/^.*:/, "", fn)
			if (fn ~ re && !(fn in seen)) { seen[fn] = 1
				printf "  %-28s %8.0f\n", fn, ir / n; tot += ir / n }
		}
		END { if (tot) printf "  %-28s %8.0f\n", "total", tot }')
	[ -n "$out" ] || continue	# the launcher process
	echo "rank $rank:"; echo "$out"; rank=$((rank + 1))
done
