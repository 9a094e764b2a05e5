#!/bin/bash
# SPDX-License-Identifier: MIT
# soak_srd_loss.sh [-b BUILDDIR] [-L LIBDIR] [-d SECONDS] [-l LOSS]
#                  [-k BUSY_PER_CORE] [-n NICE] [-q]
# srd on softsrd under loss and oversubscription, for false deaths: a live
# peer declared unresponsive. Until SECONDS (default 600) have passed it
# runs weft's data-checking fabtests (ft_msg, ft_msg -T, ft_rma, ft_atomic;
# -q: their quick sizes) over srd with FI_SRD_SOFT_LOSS=LOSS percent
# (default 30) of datagrams dropped by every process, while busy loops
# fill the machine so that each core has BUSY_PER_CORE (default 4) busy
# processes, the two ranks included. -L runs the programs of BUILDDIR on
# the libfabric.so.1 in LIBDIR (another weft build, to compare).
# Everything runs at nice NICE (default 10), so other work on the machine
# goes first.
# Prints one line per program run and a summary: runs, failures, and the
# false deaths, counted from the logs ("unresponsive", ETIMEDOUT, "timed out", "Timer
# expired", EACCES, "Permission denied"). Exit 0 only with no failure and
# no false death.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_BUILDDIR:-$top/build} secs=600 loss=30 per_core=4 nic=10 quick=
weftlib=
while getopts b:L:d:l:k:n:q o; do
	case $o in
	b) build=$OPTARG ;; L) weftlib=$OPTARG ;; d) secs=$OPTARG ;;
	l) loss=$OPTARG ;;
	k) per_core=$OPTARG ;; n) nic=$OPTARG ;; q) quick=-q ;;
	*) sed -n 3,18p "$0"; exit 2 ;;
	esac
done
weftlib=${weftlib:-$build/weft/.libs}
ft=$build/fabtests
[ -e "$weftlib/libfabric.so.1" ] || { echo "no $weftlib/libfabric.so.1: build weft first (-b)" >&2; exit 2; }
for p in ft_msg ft_rma ft_atomic; do
	[ -x "$ft/$p" ] || { echo "no $ft/$p: build weft first (-b)" >&2; exit 2; }
done
tmp=$(mktemp -d)
spinners=()
cleanup() {
	for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cores=$(nproc)
nspin=$((cores * per_core - 2))
[ "$nspin" -lt 0 ] && nspin=0
for _ in $(seq 1 "$nspin"); do
	nice -n "$nic" bash -c 'while :; do :; done' &
	spinners+=($!)
done
echo "# $cores cores, $nspin busy loops + 2 ranks, loss $loss%, nice $nic, ${secs}s"

progs=("ft_msg" "ft_msg -T" "ft_rma" "ft_atomic")
runs=0 fails=0 deaths=0 i=0
start=$(date +%s)
while [ $(($(date +%s) - start)) -lt "$secs" ]; do
	cmd=${progs[$((i % ${#progs[@]}))]}
	i=$((i + 1))
	log=$tmp/run.log
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	env LD_LIBRARY_PATH="$weftlib" FI_PROVIDER=srd FI_SRD_DEVICE=soft \
		FI_SRD_SOFT_LOSS="$loss" nice -n "$nic" \
		"$ft"/$cmd -p srd $quick -t 600 >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	runs=$((runs + 1))
	d=$(grep -Eci 'unresponsive|ETIMEDOUT|timed out|timer expired|EACCES|permission denied' "$log")
	deaths=$((deaths + d))
	if [ "$rc" -ne 0 ] || [ "$d" -ne 0 ]; then
		fails=$((fails + 1))
		echo "FAIL $cmd rc=$rc false-death lines=$d"
		sed 's/^/#   /' "$log" | tail -20
	else
		printf 'ok   %-10s %ss\n' "$cmd" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
	fi
done
elapsed=$(($(date +%s) - start))
echo "# ${elapsed}s: $runs runs, $fails failed, $deaths false-death lines (loss $loss%, $((nspin + 2)) busy processes on $cores cores)"
[ "$fails" -eq 0 ] && [ "$deaths" -eq 0 ]
