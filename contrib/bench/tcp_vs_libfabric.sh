#!/bin/bash
# SPDX-License-Identifier: MIT
# tcp_vs_libfabric.sh [-b BUILDDIR] [-r ROUNDS] [-s "8 64"] [-I ITERS]
#                     [-w BW_ITERS] [-n] [-c "0 1"] [-E "io_uring epoll"]
# weft's tcp provider against Debian's libfabric 1.17 'tcp;ofi_rxm' and
# against raw TCP sockets (contrib/bench/tcp_raw), the same binaries
# alternating within each round, medians over ROUNDS:
#   latency   Debian's fi_pingpong -e rdm -S SIZE (usec/xfer, half a round
#             trip), weft with each engine of -E, rxm; tcp_raw pingpong;
#   bw        1 MiB streaming bandwidth (MB/s): weft's ft_bench_bw (a window
#             of 64 sends) on weft and on Debian's libfabric; tcp_raw bw;
#   rate      message rate (Mmsg/s) of a window of 256 fi_injects, 8 and
#             64 B: ft_bench_rate on weft and on Debian's libfabric;
#   cpu/GB    CPU seconds (user + system, both processes) per GB moved by
#             ft_bench_bw at 64 KiB, 256 KiB and 1 MiB, per weft engine.
# -n runs every pair across two network namespaces joined by veth (made
# and removed here; needs root) instead of over loopback. Processes are
# pinned to the cores of -c. Prints the load average before and after:
# figures taken on a busy machine are not worth much.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_BUILDDIR:-$top/build}
rounds=5 sizes="8 64" iters=20000 bw_iters=10 netns=0 cores="0 1"
engines="io_uring epoll"
while getopts b:r:s:I:w:nc:E: o; do
	case $o in
	b) build=$OPTARG ;; r) rounds=$OPTARG ;; s) sizes=$OPTARG ;;
	I) iters=$OPTARG ;; w) bw_iters=$OPTARG ;; n) netns=1 ;;
	c) cores=$OPTARG ;; E) engines=$OPTARG ;;
	*) sed -n 3,19p "$0"; exit 2 ;;
	esac
done
weftlib=$build/weft/.libs
raw=$build/contrib/bench/tcp_raw
for f in "$weftlib/libfabric.so.1" "$raw" "$build/fabtests/ft_bench_bw"; do
	[ -e "$f" ] || { echo "missing $f: build weft first (-b)" >&2; exit 2; }
done
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (libfabric-bin)" >&2; exit 2; }
read -r c0 c1 <<<"$cores"
tmp=$(mktemp -d)
port=$((48000 + RANDOM % 2000))
srv_addr=127.0.0.1 iface=lo
ns_a= ns_b= nsopt=()
cleanup() {
	[ -n "$ns_a" ] && ip netns del "$ns_a" 2>/dev/null
	[ -n "$ns_b" ] && ip netns del "$ns_b" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ "$netns" = 1 ]; then
	ns_a=weft-bench-a-$$ ns_b=weft-bench-b-$$
	ip netns add "$ns_a" && ip netns add "$ns_b" &&
	ip link add wbench netns "$ns_a" type veth peer name wbench netns "$ns_b" &&
	ip -n "$ns_a" addr add 10.214.1.1/24 dev wbench &&
	ip -n "$ns_b" addr add 10.214.1.2/24 dev wbench &&
	ip -n "$ns_a" link set wbench up && ip -n "$ns_b" link set wbench up &&
	ip -n "$ns_a" link set lo up && ip -n "$ns_b" link set lo up
	srv_addr=10.214.1.1 iface=wbench nsopt=(-N "$ns_a,$ns_b")
fi
in_srv() { if [ -n "$ns_a" ]; then ip netns exec "$ns_a" "$@"; else "$@"; fi; }
in_cli() { if [ -n "$ns_b" ]; then ip netns exec "$ns_b" "$@"; else "$@"; fi; }
wait_port() { # PORT
	for _ in $(seq 100); do
		in_srv ss -ltn 2>/dev/null | grep -q ":$1 " && return 0
		sleep 0.02
	done
}
# pair LIB PROV ENGINE SIZE ITERS COLUMN: one fi_pingpong pair (7 usec/xfer).
pair() {
	local lib=$1 prov=$2 eng=$3 size=$4 it=$5 col=$6 spid
	local env=(env LD_LIBRARY_PATH="$lib" FI_TCP_IFACE="$iface" FI_TCP_IO_URING="$eng")
	[ -z "$lib" ] && env=(env -u LD_LIBRARY_PATH)
	port=$((port + 1))
	in_srv timeout 120 "${env[@]}" taskset -c "$c0" fi_pingpong -p "$prov" -e rdm \
		-S "$size" -I "$it" -B "$port" >"$tmp/srv" 2>&1 &
	spid=$!
	wait_port "$port"
	in_cli timeout 120 "${env[@]}" taskset -c "$c1" fi_pingpong -p "$prov" -e rdm \
		-S "$size" -I "$it" -P "$port" "$srv_addr" >"$tmp/cli" 2>&1 || true
	wait "$spid" || true
	awk -v c="$col" '$1 ~ /^[0-9]+[kmgKMG]?$/ && NF >= 8 { v = $c } END { print (v == "" ? "nan" : v) }' "$tmp/cli"
}
# rawpair MODE SIZE ITERS COLUMN: tcp_raw (same table as fi_pingpong).
rawpair() {
	local mode=$1 size=$2 it=$3 col=$4 spid
	port=$((port + 1))
	in_srv timeout 120 taskset -c "$c0" "$raw" -x "$mode" -S "$size" -I "$it" \
		-P "$port" -b "$srv_addr" >"$tmp/srv" 2>&1 &
	spid=$!
	wait_port "$port"
	in_cli timeout 120 taskset -c "$c1" "$raw" -x "$mode" -S "$size" -I "$it" \
		-P "$port" "$srv_addr" >"$tmp/cli" 2>&1 || true
	wait "$spid" || true
	awk -v c="$col" '$1 ~ /^[0-9]+$/ && NF >= 8 { v = $c } END { print (v == "" ? "nan" : v) }' "$tmp/cli"
}
# bench LIB PROV ENGINE KIND SIZE ITERS COLUMN: ft_bench_KIND (5 MB/s, 6 Mmsg/s).
bench() {
	local lib=$1 prov=$2 eng=$3 kind=$4 size=$5 it=$6 col=$7
	local env=(env LD_LIBRARY_PATH="$lib" FI_TCP_IFACE="$iface" FI_TCP_IO_URING="$eng")
	[ -z "$lib" ] && env=(env -u LD_LIBRARY_PATH)
	timeout 120 "${env[@]}" "$build/fabtests/ft_bench_$kind" -p "$prov" -M "$size" \
		-m "$size" -r 3 -I "$it" -C "$c0,$c1" "${nsopt[@]}" 2>/dev/null |
		awk -v c="$col" '$1 ~ /^[0-9]+$/ && NF >= 6 { v = $c } END { print (v == "" ? "nan" : v) }'
}
# cpu_gb ENGINE SIZE: CPU seconds per GB of one ft_bench_bw run.
cpu_gb() {
	local eng=$1 size=$2 it
	it=$(( (1 << 30) / (size * 64) + 1 ))
	/usr/bin/env time -f "%U %S" -o "$tmp/time" env LD_LIBRARY_PATH="$weftlib" \
		FI_TCP_IFACE="$iface" FI_TCP_IO_URING="$eng" timeout 120 \
		"$build/fabtests/ft_bench_bw" -p tcp -M "$size" -m "$size" -r 1 -W 1 \
		-I "$it" -C "$c0,$c1" "${nsopt[@]}" >/dev/null 2>&1 || true
	awk -v b=$(( size * 64 * (it + 1) )) '{ printf "%.2f", ($1 + $2) / (b / 1e9) }' "$tmp/time"
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "nan") }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "nan" }'; }
eng_val() { [ "$1" = epoll ] && echo 0 || echo 1; }

echo "# weft: $weftlib; $([ "$netns" = 1 ] && echo "across two namespaces (veth)" || echo "loopback"); cores $c0,$c1; median of $rounds, alternating"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for size in $sizes; do
	declare -A v=()
	for r in $(seq "$rounds"); do
		for e in $engines; do
			v[$e]="${v[$e]:-} $(pair "$weftlib" tcp "$(eng_val "$e")" "$size" "$iters" 7)"
		done
		v[rxm]="${v[rxm]:-} $(pair "" "tcp;ofi_rxm" 1 "$size" "$iters" 7)"
		v[raw]="${v[raw]:-} $(rawpair pingpong "$size" "$iters" 7)"
	done
	rxm=$(echo "${v[rxm]}" | median) rawm=$(echo "${v[raw]}" | median)
	printf "lat %-5s rxm %7s us  raw %7s us\n" "${size}B" "$rxm" "$rawm"
	for e in $engines; do
		w=$(echo "${v[$e]}" | median)
		printf "lat %-5s weft-%-8s %7s us  /rxm %5s  /raw %5s   # %s\n" "${size}B" "$e" "$w" \
			"$(ratio "$w" "$rxm")" "$(ratio "$w" "$rawm")" "${v[$e]}"
	done
	unset v
done
declare -A v=()
for r in $(seq "$rounds"); do
	for e in $engines; do
		v[$e]="${v[$e]:-} $(bench "$weftlib" tcp "$(eng_val "$e")" bw 1048576 "$bw_iters" 5)"
	done
	v[rxm]="${v[rxm]:-} $(bench "" "tcp;ofi_rxm" 1 bw 1048576 "$bw_iters" 5)"
	v[raw]="${v[raw]:-} $(rawpair bw 1048576 2000 6)"
done
rxm=$(echo "${v[rxm]}" | median) rawm=$(echo "${v[raw]}" | median)
printf "bw  1MiB  rxm %8s MB/s  raw %8s MB/s\n" "$rxm" "$rawm"
for e in $engines; do
	w=$(echo "${v[$e]}" | median)
	printf "bw  1MiB  weft-%-8s %8s MB/s  /rxm %5s  /raw %5s   # %s\n" "$e" "$w" \
		"$(ratio "$w" "$rxm")" "$(ratio "$w" "$rawm")" "${v[$e]}"
done
unset v
for size in 8 64; do
	declare -A v=()
	for r in $(seq "$rounds"); do
		for e in $engines; do
			v[$e]="${v[$e]:-} $(bench "$weftlib" tcp "$(eng_val "$e")" rate "$size" 0 6)"
		done
		v[rxm]="${v[rxm]:-} $(bench "" "tcp;ofi_rxm" 1 rate "$size" 0 6)"
	done
	rxm=$(echo "${v[rxm]}" | median)
	printf "rate %-4s rxm %7s Mmsg/s\n" "${size}B" "$rxm"
	for e in $engines; do
		w=$(echo "${v[$e]}" | median)
		printf "rate %-4s weft-%-8s %7s Mmsg/s  /rxm %5s   # %s\n" "${size}B" "$e" "$w" \
			"$(ratio "$w" "$rxm")" "${v[$e]}"
	done
	unset v
done
for size in 65536 262144 1048576; do
	for e in $engines; do
		c=
		for r in $(seq "$rounds"); do c="$c $(cpu_gb "$(eng_val "$e")" "$size")"; done
		printf "cpu %-8s weft-%-8s %6s CPU s/GB   # %s\n" "$size" "$e" "$(echo "$c" | median)" "$c"
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
