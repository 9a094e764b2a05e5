#!/bin/bash
# SPDX-License-Identifier: MIT
# oversub.sh [-b BUILDDIR] [-r REPS] [-p PROV] [-s SIZE] [-y "0 1000"]
# Ping-pong when the two processes share one CPU (both pinned to CPU 0, as
# when Open MPI runs more ranks than cores) and when each has its own
# (CPUs 0 and 1): Debian's fi_pingpong on weft with each FI_POLL_YIELD
# value of -y (0 = never yield, the behaviour before the setting), and on
# Debian's libfabric, alternating, median of REPS runs. usec/xfer as
# fi_pingpong prints it (half a round trip). srd runs on softsrd.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_BUILDDIR:-$top/build} reps=3 prov=shm size=64 yields="0 1000"
while getopts b:r:p:s:y: o; do
	case $o in
	b) build=$OPTARG ;; r) reps=$OPTARG ;; p) prov=$OPTARG ;;
	s) size=$OPTARG ;; y) yields=$OPTARG ;;
	*) sed -n 3,10p "$0"; exit 2 ;;
	esac
done
weftlib=$build/weft/.libs
[ -e "$weftlib/libfabric.so.1" ] || { echo "no $weftlib/libfabric.so.1: build weft first (-b)" >&2; exit 2; }
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (Debian: libfabric-bin)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((47000 + RANDOM % 2000))
lfprov=$prov
[ "$prov" = srd ] && lfprov="udp;ofi_rxd"

# one CPUS ITERS LIB YIELD: one ping-pong, prints usec/xfer
one() {
	local cpus=$1 it=$2 lib=$3 y=$4 p=$prov env spid
	read -r c0 c1 <<<"$cpus"
	env=(env -u LD_LIBRARY_PATH)
	if [ "$lib" = weft ]; then
		env=(env LD_LIBRARY_PATH="$weftlib" FI_POLL_YIELD="$y" FI_SRD_DEVICE=soft)
	else
		p=$lfprov
	fi
	port=$((port + 1))
	timeout 300 "${env[@]}" taskset -c "$c0" fi_pingpong -p "$p" -e rdm -S "$size" \
		-I "$it" -B "$port" >/dev/null 2>&1 &
	spid=$!
	sleep 0.3
	timeout 300 "${env[@]}" taskset -c "$c1" fi_pingpong -p "$p" -e rdm -S "$size" \
		-I "$it" -P "$port" 127.0.0.1 >"$tmp/cli" 2>&1 || true
	wait "$spid" || true
	awk '$1 ~ /^[0-9]+[kmgKMG]?$/ && NF >= 8 { v = $7 } END { print (v == "" ? "nan" : v) }' "$tmp/cli"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "nan") }'; }

echo "# $prov, $size B, usec/xfer, median of $reps; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s' "cpus"
for y in $yields; do printf '%16s' "weft y=$y"; done
printf '%16s\n' "libfabric"
for cpus in "0 0" "0 1"; do
	it=100000
	[ "$cpus" = "0 0" ] && it=2000
	declare -A res=()
	for r in $(seq "$reps"); do
		for y in $yields; do res[w$y]+="$(one "$cpus" "$it" weft "$y") "; done
		res[lf]+="$(one "$cpus" "$it" lf 0) "
	done
	[ "$cpus" = "0 0" ] && label="one CPU (0,0)" || label="own CPUs (0,1)"
	printf '%-22s' "$label"
	for y in $yields; do printf '%16s' "$(tr ' ' '\n' <<<"${res[w$y]}" | grep . | median)"; done
	printf '%16s\n' "$(tr ' ' '\n' <<<"${res[lf]}" | grep . | median)"
	unset res
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
