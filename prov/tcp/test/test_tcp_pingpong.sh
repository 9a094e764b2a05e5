#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make check: Debian's fi_pingpong binary (libfabric-bin), unchanged, on
# weft's libfabric.so.1 from the build tree, as a user runs it:
# FI_PROVIDER=tcp fi_pingpong -e rdm, server and client on loopback. Every
# size fi_pingpong knows (64 B .. 1 MiB, eager and rendezvous), with its
# data check (-c), in msg and tagged mode, with each I/O engine, and over
# IPv6 where ::1 is up. Passes when both sides exit 0 and the client's
# table has every size with every transfer acknowledged. test_tcp_netns.sh
# runs it across two network namespaces.
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
libdir=$top_builddir/weft/.libs
NTESTS=5

echo "1..$NTESTS"
n=0
skip_rest() {
	while [ "$n" -lt "$NTESTS" ]; do n=$((n + 1)); echo "ok $n # SKIP $1"; done
	exit 0
}
command -v fi_pingpong >/dev/null 2>&1 ||
	skip_rest "fi_pingpong not installed (Debian: libfabric-bin)"
if [ ! -e "$libdir/libfabric.so.1" ]; then
	while [ "$n" -lt "$NTESTS" ]; do
		n=$((n + 1)); echo "not ok $n - $libdir/libfabric.so.1 was not built"
	done
	exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/tcp_pingpong.XXXXXX") || exit 1
srv=
trap '[ -n "$srv" ] && kill -9 "$srv" 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM HUP

# Sanitizer builds: fi_pingpong does not carry the ASan runtime that an
# instrumented libfabric.so.1 needs.
preload=$(printf '%s' "${WEFT_TEST_PRELOAD:-}" | tr ' ' ':')
ITERS=20
SIZES="64 256 1k 4k 64k 1m"

# The control port: one per run of this script, so that parallel runs (and
# the other test scripts) do not meet, and below the kernel's ephemeral
# range, where another test's outgoing connection could already hold it.
eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
port=$(( 10000 + $$ % (eph - 10200) ))

pp() { # ENGINE ARGS...: fi_pingpong on weft's tcp over loopback
	engine=$1
	shift
	env LD_LIBRARY_PATH="$libdir" LD_PRELOAD="$preload" \
		ASAN_OPTIONS=detect_leaks=0 FI_PROVIDER=tcp FI_TCP_IFACE=lo \
		FI_TCP_IO_URING="$engine" timeout 60 fi_pingpong -p tcp -e rdm \
		-c -I "$ITERS" "$@"
}

run() { # NAME ENGINE SERVER-ADDR CLIENT-ARGS...
	name=$1 engine=$2 addr=$3
	shift 3
	port=$((port + 1))
	pp "$engine" -B "$port" "$@" >"$TMP/srv" 2>&1 &
	srv=$!
	# The server listens once its getinfo is done: retry while refused.
	tries=0
	while :; do
		sleep 0.2
		pp "$engine" -P "$port" "$@" "$addr" >"$TMP/cli" 2>&1
		rc=$?
		tries=$((tries + 1))
		[ $rc -ne 0 ] && [ $tries -lt 25 ] &&
			grep -qi "refused" "$TMP/cli" && continue
		break
	done
	wait "$srv"
	rc_s=$?
	srv=
	why=
	for s in $SIZES; do
		awk -v s="$s" -v it="$ITERS" \
			'$1 == s && $2 == it && $3 == "=" it { f = 1 } END { exit !f }' \
			"$TMP/cli" || why="${why:+$why, }no $s row with $ITERS of $ITERS acked"
	done
	[ $rc -ne 0 ] && why="client exit $rc${why:+, $why}"
	[ $rc_s -ne 0 ] && why="server exit $rc_s${why:+, $why}"
	n=$((n + 1))
	if [ -z "$why" ]; then
		echo "ok $n - $name: $(awk '$1 == "64" { print "64 B " $7 " us/xfer" }
			$1 == "1m" { print ", 1 MiB " $6 " MB/s" }' "$TMP/cli" | tr -d '\n')"
	else
		echo "not ok $n - $name: $why"
		sed 's/^/# client: /' "$TMP/cli"
		sed 's/^/# server: /' "$TMP/srv"
	fi
}

run "fi_pingpong -e rdm, io_uring" 1 127.0.0.1
run "fi_pingpong -e rdm -m tagged, io_uring" 1 127.0.0.1 -m tagged
run "fi_pingpong -e rdm, epoll" 0 127.0.0.1
run "fi_pingpong -e rdm -m tagged, epoll" 0 127.0.0.1 -m tagged
if ip -6 addr show dev lo 2>/dev/null | grep -q 'inet6 ::1/'; then
	run "fi_pingpong -e rdm -6 over ::1" 1 ::1 -6
else
	n=$((n + 1)); echo "ok $n # SKIP no ::1 on lo (IPv6 disabled)"
fi
exit 0
