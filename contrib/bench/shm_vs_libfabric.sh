#!/bin/bash
# SPDX-License-Identifier: MIT
# shm_vs_libfabric.sh [-b BUILDDIR] [-L WEFT_LIBDIR] [-B BASE_LIBDIR] [-r REPS]
#                     [-m "msg tagged"] [-s "8 64 1024"] [-I ITERS] [-i BW_ITERS]
#                     [-c "0 1"] [-R RTPRIO] [-A BEFORE_LIBDIR] [-M "8"]
# weft's shm provider against Debian's libfabric 1.17 shm, with the same
# binary (Debian's fi_pingpong -p shm -e rdm), server pinned to the first
# core and client to the second. Runs alternate (weft, libfabric, weft, ...)
# so that load drifts hit both; each figure is the median of REPS runs.
# Latency rows: usec/xfer as fi_pingpong prints it (ratio = weft/libfabric,
# lower is better); the 1 MiB row: MB/s (ratio = weft/libfabric, higher is
# better). -B compares against another library directory instead of the
# system libfabric (e.g. an older weft build). Prints the load average
# before and after: timings taken on a busy machine are not worth much.
# (timeout runs outside the real-time class, so it can still stop a hung
# pair.) -R runs both sides under SCHED_FIFO at that priority (needs root or
# CAP_SYS_NICE), which shields them from compiler jobs on a shared machine;
# the kernel's RT throttling keeps the rest of the system alive.
# -A adds a third library to every round (e.g. the weft build before a
# change): runs go weft, before, libfabric, ...; two more columns give its
# figure and its ratio to libfabric.
# -M adds message-rate rows at those sizes (default 8; "" for none): weft's
# own fabtests/ft_bench_rate from the build (a window of 256 sends, fi_inject
# when it fits, median of 5 inside each run), in million messages per
# second (ratio = weft/libfabric, higher is better).
# Defaults: 100k latency iterations, 4000 at 1 MiB. fi_pingpong's figure
# carries a ~4 ms cost per run with either library (a fit of total time
# over 10k-160k iterations), which at 20k iterations adds 0.1 us to a
# 0.4 us figure: short runs understate the faster library.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_BUILDDIR:-$top/build}
weftlib= baselib= reps=3 modes="msg tagged" sizes="8 64 1024" iters=100000
bw_iters=4000 cores="0 1" rt=() beforelib= rate_sizes=8
while getopts b:L:B:r:m:s:I:i:c:R:A:M: o; do
	case $o in
	b) build=$OPTARG ;; L) weftlib=$OPTARG ;; B) baselib=$OPTARG ;;
	r) reps=$OPTARG ;; m) modes=$OPTARG ;; s) sizes=$OPTARG ;;
	I) iters=$OPTARG ;; i) bw_iters=$OPTARG ;; c) cores=$OPTARG ;;
	R) rt=(chrt -f "$OPTARG") ;;
	A) beforelib=$OPTARG ;;
	M) rate_sizes=$OPTARG ;;
	*) sed -n 3,29p "$0"; exit 2 ;;
	esac
done
: "${weftlib:=$build/weft/.libs}"
[ -e "$weftlib/libfabric.so.1" ] || { echo "no $weftlib/libfabric.so.1: build weft first (-b/-L)" >&2; exit 2; }
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (Debian: libfabric-bin)" >&2; exit 2; }
read -r c0 c1 <<<"$cores"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((47000 + RANDOM % 2000))

# run LIBDIR MODE SIZE ITERS COLUMN: one pingpong, prints the column
# (7 = usec/xfer, 6 = MB/sec) of fi_pingpong's result line.
run() {
	local lib=$1 mode=$2 size=$3 it=$4 col=$5 env=(env -u LD_LIBRARY_PATH) spid i
	[ -n "$lib" ] && env=(env LD_LIBRARY_PATH="$lib")
	port=$((port + 1))
	timeout 120 "${env[@]}" "${rt[@]}" taskset -c "$c0" fi_pingpong -p shm -e rdm -m "$mode" \
		-S "$size" -I "$it" -B "$port" >"$tmp/srv" 2>&1 &
	spid=$!
	for i in $(seq 50); do
		ss -ltn 2>/dev/null | grep -q ":$port " && break
		sleep 0.05
	done
	timeout 120 "${env[@]}" "${rt[@]}" taskset -c "$c1" fi_pingpong -p shm -e rdm -m "$mode" \
		-S "$size" -I "$it" -P "$port" 127.0.0.1 >"$tmp/cli" 2>&1 || true
	wait "$spid" || true
	awk -v c="$col" '$1 ~ /^[0-9]+[kmgKMG]?$/ && NF >= 8 { v = $c } END { print (v == "" ? "nan" : v) }' "$tmp/cli"
}

# run_rate LIBDIR MODE SIZE: one ft_bench_rate pair, prints its Mmsg/s.
run_rate() {
	local lib=$1 mode=$2 size=$3 env=(env -u LD_LIBRARY_PATH) tag=()
	[ -n "$lib" ] && env=(env LD_LIBRARY_PATH="$lib")
	[ "$mode" = tagged ] && tag=(-T)
	timeout 120 "${env[@]}" "${rt[@]}" "$build/fabtests/ft_bench_rate" -p shm -x rate \
		-M "$size" -m "$size" -r 5 -C "$c0,$c1" "${tag[@]}" 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ && NF >= 6 { v = $6 } END { print (v == "" ? "nan" : v) }'
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "nan") }'; }

echo "# weft: $weftlib   base: ${baselib:-system libfabric}   median of $reps, alternating${rt:+, ${rt[*]}}"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$beforelib" ]; then
	echo "# before: $beforelib"
	printf "%-7s %-9s %10s %10s %7s %10s %7s\n" mode size weft base ratio before b_ratio
else
	printf "%-7s %-9s %10s %10s %7s\n" mode size weft base ratio
fi
for mode in $modes; do
	rates=
	[ -x "$build/fabtests/ft_bench_rate" ] && for size in $rate_sizes; do rates="$rates rate$size"; done
	for size in $sizes 1048576 $rates; do
		runner=run
		if [ "$size" = 1048576 ]; then col=6 it=$bw_iters label="1MiB-MB/s"
		elif [ "${size#rate}" != "$size" ]; then
			runner=run_rate size=${size#rate} label="${size}B-Mmsg/s"
		else col=7 it=$iters label=$size; fi
		w= b= a=
		for r in $(seq "$reps"); do
			if [ $runner = run_rate ]; then
				w="$w $(run_rate "$weftlib" "$mode" "$size")"
				[ -n "$beforelib" ] && a="$a $(run_rate "$beforelib" "$mode" "$size")"
				b="$b $(run_rate "$baselib" "$mode" "$size")"
				continue
			fi
			w="$w $(run "$weftlib" "$mode" "$size" "$it" "$col")"
			[ -n "$beforelib" ] && a="$a $(run "$beforelib" "$mode" "$size" "$it" "$col")"
			b="$b $(run "$baselib" "$mode" "$size" "$it" "$col")"
		done
		wm=$(echo "$w" | median) bm=$(echo "$b" | median)
		ratio=$(awk -v w="$wm" -v b="$bm" 'BEGIN { if (b + 0 > 0) printf "%.2f", w / b; else print "nan" }')
		if [ -n "$beforelib" ]; then
			am=$(echo "$a" | median)
			aratio=$(awk -v w="$am" -v b="$bm" 'BEGIN { if (b + 0 > 0) printf "%.2f", w / b; else print "nan" }')
			printf "%-7s %-9s %10s %10s %7s %10s %7s   # weft:%s base:%s before:%s\n" "$mode" "$label" "$wm" "$bm" "$ratio" "$am" "$aratio" "$w" "$b" "$a"
		else
			printf "%-7s %-9s %10s %10s %7s   # weft:%s base:%s\n" "$mode" "$label" "$wm" "$bm" "$ratio" "$w" "$b"
		fi
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
