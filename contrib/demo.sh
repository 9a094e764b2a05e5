#!/bin/bash
# SPDX-License-Identifier: MIT
# demo.sh: set up weft (contrib/setup.sh), then run its main job: two
# processes exchanging messages over the first provider fi_getinfo offers,
# printing latency, bandwidth and message rate per size; then Debian's own fi_pingpong binary,
# unchanged, running on weft through weft_run, over shm and over srd on
# softsrd (weft's userspace SRD device).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh" >/dev/null
prefix=$top/_install
ft=$prefix/libexec/weft/fabtests
run=$prefix/bin/weft_run
cpus=0,1
[ "$(nproc)" -ge 2 ] || cpus=0

# The first provider fi_getinfo really offers for a tagged RDM endpoint
# (srd is listed only where a device exists; shm everywhere).
prov=$("$run" "$prefix/bin/weft_info" -t FI_EP_RDM -c 'FI_MSG|FI_TAGGED' 2>/dev/null |
	awk '$1 == "provider:" { print $2; exit }')
if [ -z "$prov" ]; then
	echo "demo: fi_getinfo offers no RDM provider on this machine" >&2
	exit 1
fi
domain=$("$run" "$prefix/bin/weft_info" -p "$prov" -t FI_EP_RDM 2>/dev/null |
	awk '$1 == "domain:" { print $2; exit }')
echo "== weft $("$prefix/bin/weft_info" --version 2>/dev/null | head -n 1 | awk "{print \$NF}"): provider '$prov', domain (device) '$domain'"
echo
echo "== ping-pong latency, two processes (half round trip, median of 5)"
"$run" "$ft/ft_bench_pingpong" -p "$prov" -C "$cpus" -M 8 -m 1M -I 2000 -r 5
echo
echo "== streaming bandwidth, window of 64 (median of 5)"
"$run" "$ft/ft_bench_bw" -p "$prov" -C "$cpus" -M 4K -m 4M -I 50 -r 5
echo
echo "== message rate, window of 256 fi_inject (median of 5)"
"$run" "$ft/ft_bench_rate" -p "$prov" -C "$cpus" -M 8 -m 1K -I 2000 -r 5
echo
echo "== Debian's fi_pingpong (package libfabric-bin) running unchanged on weft"
port=$((40000 + RANDOM % 20000))
"$run" fi_pingpong -p "$prov" -e rdm -I 10000 -B "$port" >/dev/null 2>&1 &
srv=$!
sleep 0.5
"$run" fi_pingpong -p "$prov" -e rdm -I 10000 -P "$port" 127.0.0.1
wait "$srv"
echo
echo "== the srd provider on softsrd, weft's userspace SRD device (FI_SRD_DEVICE=soft):"
echo "   reliable datagrams over UDP on 127.0.0.1, the way srd runs on EFA; both"
echo "   processes are on this host, so FI_SRD_USE_SHM=0 keeps them off srd's shm path"
port=$((40000 + RANDOM % 20000))
FI_SRD_USE_SHM=0 FI_SRD_DEVICE=soft "$run" fi_pingpong -p srd -e rdm -I 2000 -B "$port" >/dev/null 2>&1 &
srv=$!
sleep 0.5
FI_SRD_USE_SHM=0 FI_SRD_DEVICE=soft "$run" fi_pingpong -p srd -e rdm -I 2000 -P "$port" 127.0.0.1
wait "$srv"
