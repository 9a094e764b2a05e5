#!/bin/sh
# SPDX-License-Identifier: MIT
#
# srd's peers of one host through shm (test_srd_shm.c, data checked):
# two and four ranks on this host through shm, also ranks of two jobs
# (FI_SHM_JOB; srd's shm names have no job namespace); a peer killed with SIGKILL
# (error completion in bounded time); the device path with
# FI_SRD_USE_SHM=0 and with FI_OPT_SHARED_MEMORY_PERMITTED false (shm
# carries nothing); then two network namespaces, standing in for two
# hosts, joined by a veth pair, with two ranks in each: the peers in the
# same namespace through shm, the others through softsrd on the veth,
# all pairs checked in one run. Namespaces need root and iproute2; without
# them those cases are skipped with the reason.

: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
PROG=$top_builddir/prov/srd/test/test_srd_shm
NTESTS=8

echo "1..$NTESTS"
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
skip_rest() {
	while [ "$n" -lt "$NTESTS" ]; do n=$((n + 1)); echo "ok $n # SKIP $1"; done
	exit $fail
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/srd_shm.XXXXXX") || exit 1
tag=$$
NS_A=weft-srdshm-a-$tag
NS_B=weft-srdshm-b-$tag
cleanup() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

FI_SRD_DEVICE=soft
export FI_SRD_DEVICE

run() { # NAME ENV... -- ARGS...
	name=$1
	shift
	if env "$@" >"$TMP/out" 2>&1; then
		ok "$name"
	else
		notok "$name"
		sed 's/^/#   /' "$TMP/out" | tail -20
	fi
}

run "2 ranks on one host through shm" FI_SRD_SOFT_ADDR=127.0.0.1 \
	FI_SRD_USE_SHM=1 "$PROG" -p srd -n 2 -x shm
run "4 ranks on one host through shm" FI_SRD_SOFT_ADDR=127.0.0.1 \
	FI_SRD_USE_SHM=1 "$PROG" -p srd -n 4 -x shm
run "ranks of different jobs (FI_SHM_JOB) through shm" \
	FI_SRD_SOFT_ADDR=127.0.0.1 FI_SRD_USE_SHM=1 "$PROG" -p srd -n 2 -x jobs
run "FI_SRD_USE_SHM=0: the device carries everything" \
	FI_SRD_SOFT_ADDR=127.0.0.1 FI_SRD_USE_SHM=0 "$PROG" -p srd -n 2 \
	-x device
run "FI_OPT_SHARED_MEMORY_PERMITTED false: the device carries everything" \
	FI_SRD_SOFT_ADDR=127.0.0.1 FI_SRD_USE_SHM=auto "$PROG" -p srd -n 2 \
	-x off
run "a peer of the host killed: the send to it fails in bounded time" \
	FI_SRD_SOFT_ADDR=127.0.0.1 FI_SRD_USE_SHM=1 "$PROG" -p srd -n 2 \
	-x kill

[ "$(id -u)" = 0 ] || skip_rest "needs root to create network namespaces"
command -v ip >/dev/null 2>&1 || skip_rest "no ip command (iproute2)"
if ! ip netns add "$NS_A" 2>"$TMP/err"; then
	skip_rest "ip netns unavailable: $(head -1 "$TMP/err")"
fi
if ip netns add "$NS_B" &&
   ip link add wsrdshm netns "$NS_A" type veth peer name wsrdshm \
	netns "$NS_B" &&
   ip -n "$NS_A" addr add 10.213.90.1/24 dev wsrdshm &&
   ip -n "$NS_B" addr add 10.213.90.2/24 dev wsrdshm &&
   ip -n "$NS_A" link set wsrdshm up && ip -n "$NS_B" link set wsrdshm up &&
   ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up; then
	ok "two namespaces joined by a veth pair"
else
	notok "two namespaces joined by a veth pair"
	skip_rest "no namespaces to run in"
fi
# Ranks 0 and 2 in A, 1 and 3 in B (rank i joins the (i mod 2)-th).
run "2+2 ranks over two namespaces: shm within, softsrd across" \
	FI_SRD_SOFT_IFACE=wsrdshm FI_SRD_USE_SHM=1 \
	"$PROG" -p srd -n 4 -x shm -N "$NS_A,$NS_B"
exit $fail
