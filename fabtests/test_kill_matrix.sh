#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the kill matrix, as TAP. For each provider, message size
# class, operation and side, ft_kill starts two processes, lets traffic
# flow with data checks, SIGKILLs one of them mid-transfer and checks the
# survivor: every outstanding operation ends (an error, or a success with
# its data checked) within 2 s of the kill, an operation posted toward the
# dead peer fails or errors within 2 s and never succeeds, closing
# everything takes at most 1 s, nothing hangs (-t and timeout per case).
# One line per case with the survivor's first and last error after the
# kill, the post-death operation's error time and the close time.
#
# Providers: shm; srd over softsrd with FI_SRD_USE_SHM=0 (every byte
# through the device) and with shm peering forced on (FI_SRD_USE_SHM=1:
# fi_enable fails rather than falling back to the device); tcp.
# Sizes: 64 B (eager), 64 KiB (medium), 4 MiB (rendezvous); operations:
# tagged send/recv, fi_write (with remote CQ data), fi_read, and a
# fetching atomic (64 B only). Side: the one that dies.
#
# Liveness settings: shm and tcp run with their defaults (shm checks a
# peer's pid after FI_SHM_PEER_TIMEOUT_MS = 1000 ms of waiting; tcp sees
# the kernel's reset or end of stream at once). softsrd declares a peer
# dead after FI_SRD_SOFT_DEAD_MS of silence while a packet waits for it,
# default 5000 ms: set to 500 ms here, still well above what a live peer
# goes quiet for (its device thread answers while the application
# computes); srd probes a peer that a transfer waits on every
# FI_SRD_LONG_PROBE_MS, default 1000 ms: set to 250 ms, so that a transfer
# that only waits (an atomic's answer) is caught within 250 + 500 ms.
#
# KILL_PROVIDERS (default "shm srd srd_shm tcp") picks providers.
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
prog="$top_builddir/fabtests/ft_kill"
libdir="$top_builddir/weft/.libs"
providers="${KILL_PROVIDERS:-shm srd srd_shm tcp}"
if [ ! -x "$prog" ] || [ ! -e "$libdir/libfabric.so.1" ]; then
	echo "1..1"
	echo "not ok 1 - $prog or $libdir/libfabric.so.1 was not built"
	exit 1
fi
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
# Sanitizer builds: the test program may not carry the ASan runtime that
# weft's instrumented libfabric.so.1 needs.
if [ -n "${WEFT_TEST_PRELOAD:-}" ]; then
	LD_PRELOAD="$WEFT_TEST_PRELOAD${LD_PRELOAD:+ $LD_PRELOAD}"
	ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
	export LD_PRELOAD ASAN_OPTIONS
fi
srd_env="FI_SRD_DEVICE=soft FI_SRD_SOFT_ADDR=127.0.0.1 FI_SRD_SOFT_DEAD_MS=500 FI_SRD_LONG_PROBE_MS=250"

# SIZE:OP:SIDE, the side being the one that dies
cases=
for size in 64 64K 4M; do
	for op in tagged write read; do
		cases="$cases $size:$op:initiator $size:$op:target"
	done
done
cases="$cases 64:atomic:initiator 64:atomic:target"

echo "1..$(( $(echo $cases | wc -w) * $(echo $providers | wc -w) ))"
n=0
fails=0
for p in $providers; do
	case $p in
	shm) prov=shm; penv= ;;
	srd) prov=srd; penv="$srd_env FI_SRD_USE_SHM=0" ;;
	srd_shm) prov=srd; penv="$srd_env FI_SRD_USE_SHM=1" ;;
	tcp) prov=tcp; penv= ;;
	*) echo "Bail out! unknown provider $p in KILL_PROVIDERS"; exit 1 ;;
	esac
	for c in $cases; do
		size=${c%%:*}
		side=${c##*:}
		op=${c#*:}
		op=${op%:*}
		n=$((n + 1))
		name="$p $size $op, $side dies"
		# shellcheck disable=SC2086
		out=$(env $penv timeout 30 "$prog" -p "$prov" -m "$size" \
			-x "$op,$side" -t 20 2>&1)
		rc=$?
		line=$(printf '%s\n' "$out" | sed -n 's/^kill: //p')
		if [ $rc -eq 0 ] && [ -n "$line" ]; then
			echo "ok $n - $name: $line"
		else
			echo "not ok $n - $name (exit $rc)"
			printf '%s\n' "$out" | sed 's/^/# /'
			fails=$((fails + 1))
		fi
	done
done
[ $fails -eq 0 ]
