#!/bin/sh
# SPDX-License-Identifier: MIT
#
# softsrd between two "hosts": two network namespaces joined by a veth pair.
# Checks that softsrd offers the namespace's veth address (and honours
# FI_SRD_SOFT_IFACE / FI_SRD_SOFT_ADDR there), runs a two-process exchange
# (sends, RDMA write with immediate, RDMA read, data checked) across the pair
# with loss, duplication and reordering on, in both I/O modes, and, once
# weft's srd provider is offered on softsrd, Debian's fi_pingpong over it.
# The namespaces are removed on every exit path.
#
# Needs root and iproute2 (`ip netns`); CI runs it as root.

: "${top_builddir:=$(cd "$(dirname "$0")/../../../.." && pwd)}"
XCHG=$top_builddir/prov/srd/soft/test/softsrd_xchg
NTESTS=6
FAULTS="FI_SRD_SOFT_LOSS=10 FI_SRD_SOFT_DUP=10 FI_SRD_SOFT_REORDER=20 \
FI_SRD_SOFT_RTO_US=500"

echo "1..$NTESTS"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
skip_rest() {
	while [ "$n" -lt "$NTESTS" ]; do skip "$1"; done
	exit 0
}
check() { if eval "$2"; then ok "$1"; else notok "$1"; fi; }

[ "$(id -u)" = 0 ] || skip_rest "needs root to create network namespaces"
command -v ip >/dev/null 2>&1 || skip_rest "no ip command (iproute2)"
[ -x "$XCHG" ] || skip_rest "$XCHG not built"

tag=$$
NS_A=weft-srd-a-$tag
NS_B=weft-srd-b-$tag
IF_A=wsrda$tag
IF_B=wsrdb$tag
IP_A=10.213.77.1
IP_B=10.213.77.2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/softsrd_veth.XXXXXX") || exit 1

pid_b=
cleanup() {
	[ -n "$pid_b" ] && kill "$pid_b" 2>/dev/null
	# deleting a namespace deletes its end of the veth, and so the pair
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if ! ip netns add "$NS_A" 2>"$TMP/err"; then
	skip_rest "ip netns unavailable: $(head -1 "$TMP/err")"
fi
ip netns add "$NS_B" &&
ip link add "$IF_A" netns "$NS_A" type veth peer name "$IF_B" netns "$NS_B" &&
ip -n "$NS_A" addr add "$IP_A/24" dev "$IF_A" &&
ip -n "$NS_B" addr add "$IP_B/24" dev "$IF_B" &&
ip -n "$NS_A" link set "$IF_A" up && ip -n "$NS_B" link set "$IF_B" up &&
ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up
if [ $? -ne 0 ]; then
	notok "two namespaces joined by veth ($IP_A, $IP_B)"
	skip_rest "no namespaces to run in"
fi
ok "two namespaces joined by veth ($IP_A, $IP_B)"

in_a() { ip netns exec "$NS_A" env "$@"; }
in_b() { ip netns exec "$NS_B" env "$@"; }

# Device choice inside a namespace: the veth address first, loopback last.
in_a "$XCHG" list >"$TMP/list" 2>&1
check "namespace A offers softsrd_$IF_A ($IP_A) first, then softsrd_lo" \
	'[ "$(cat "$TMP/list")" = "softsrd_$IF_A $IP_A
softsrd_lo 127.0.0.1" ]'
in_b FI_SRD_SOFT_IFACE="$IF_B" "$XCHG" list >"$TMP/iface" 2>&1
in_b FI_SRD_SOFT_ADDR="$IP_B" "$XCHG" list >"$TMP/addr" 2>&1
check "FI_SRD_SOFT_IFACE / FI_SRD_SOFT_ADDR select the veth device in B" \
	'[ "$(cat "$TMP/iface")" = "softsrd_$IF_B $IP_B" ] &&
	 [ "$(cat "$TMP/addr")" = "softsrd_$IF_B $IP_B" ]'

# One exchange across the pair: $1 = name, rest = extra settings (both sides)
xchg() {
	name=$1
	shift
	dir=$TMP/$name
	mkdir -p "$dir"
	in_b "$@" timeout 20 "$XCHG" "$dir" b 300 4000 >"$dir/b.out" 2>&1 &
	pid_b=$!
	in_a "$@" timeout 20 "$XCHG" "$dir" a 300 4000 >"$dir/a.out" 2>&1
	rc_a=$?
	wait $pid_b
	rc_b=$?
	if [ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] &&
	   grep -q "gid $IP_A\$" "$dir/a.out" && grep -q "gid $IP_B\$" "$dir/b.out" &&
	   grep -q "data ok" "$dir/a.out" && grep -q "data ok" "$dir/b.out"; then
		ok "exchange A <-> B, $name: 300 sends, write with imm, read, data ok"
	else
		notok "exchange A <-> B, $name (a: $rc_a, b: $rc_b)"
		sed 's/^/# a: /' "$dir/a.out"
		sed 's/^/# b: /' "$dir/b.out"
	fi
}

# shellcheck disable=SC2086
xchg "io_uring+loss+dup+reorder" $FAULTS FI_SRD_SOFT_IO=auto
# shellcheck disable=SC2086
xchg "mmsg+loss+dup+reorder" $FAULTS FI_SRD_SOFT_IO=mmsg

# Debian's fi_pingpong over weft's srd provider on softsrd, once offered.
PINGPONG=$(command -v fi_pingpong)
FI_INFO=$(command -v fi_info)
# WEFT_TEST_PRELOAD lists its libraries with spaces; weft_env is split on
# spaces below, so hand them to the loader with its other separator, ':'.
preload=$(printf '%s' "${WEFT_TEST_PRELOAD:-}" | tr ' ' ':')
weft_env="LD_LIBRARY_PATH=$top_builddir/weft/.libs LD_PRELOAD=$preload \
ASAN_OPTIONS=detect_leaks=0 FI_SRD_DEVICE=soft"
if [ -z "$PINGPONG" ] || [ -z "$FI_INFO" ]; then
	skip "fi_pingpong/fi_info not installed (Debian package libfabric-bin)"
else
	# shellcheck disable=SC2086
	in_a $weft_env "$FI_INFO" -p srd -t FI_EP_RDM >"$TMP/fi_info" 2>&1
	if ! grep -q "provider: srd" "$TMP/fi_info"; then
		sed 's/^/# fi_info: /' "$TMP/fi_info"
		skip "srd provider not offered yet"
	else
		# shellcheck disable=SC2086
		in_b $weft_env $FAULTS timeout 20 "$PINGPONG" -p srd -e rdm \
			-S 64 -I 200 -c >"$TMP/pp_b" 2>&1 &
		pid_b=$!
		tries=0
		rc_a=1
		while [ $tries -lt 20 ] && [ $rc_a -ne 0 ]; do
			sleep 0.2
			# shellcheck disable=SC2086
			in_a $weft_env $FAULTS timeout 20 "$PINGPONG" -p srd -e rdm \
				-S 64 -I 200 -c "$IP_B" >"$TMP/pp_a" 2>&1
			rc_a=$?
			# a refused control connection: the server is not up yet
			grep -qi "refused" "$TMP/pp_a" || break
			tries=$((tries + 1))
		done
		wait $pid_b
		rc_b=$?
		if [ $rc_a -eq 0 ] && [ $rc_b -eq 0 ]; then
			ok "fi_pingpong -p srd -e rdm A <-> B with loss/dup/reorder"
			grep -E "^ *[0-9]" "$TMP/pp_a" | sed 's/^/# /'
		else
			notok "fi_pingpong -p srd -e rdm A <-> B (client $rc_a, server $rc_b)"
			sed 's/^/# client: /' "$TMP/pp_a"
			sed 's/^/# server: /' "$TMP/pp_b"
		fi
	fi
fi
exit 0
