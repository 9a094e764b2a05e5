#!/bin/sh
# SPDX-License-Identifier: MIT
#
# weft's tcp provider between two "hosts": two network namespaces joined by
# two veth pairs (each end named wtcp1/wtcp2 in its namespace, so that one
# FI_TCP_IFACE fits both sides). Checks: interface choice in a namespace;
# the fabtests quick suite with its ranks split over the two namespaces,
# with io_uring and with epoll; Debian's fi_pingpong over weft across them;
# striping over both veth pairs (both carry the data, data checked); a peer
# killed with SIGKILL mid-transfer, as receiver and as sender (error
# completions in bounded time); a firewalled peer (netem loss 100%): the
# connect ends in FI_ETIMEDOUT within FI_TCP_CONN_TIMEOUT_MS, the waiting
# process blocked rather than spinning (iptables DROP in the peer's
# namespace, or netem loss where the kernel has it); Open MPI's ofi MTL
# with its ranks split over the namespaces, 2 and 4 ranks. Namespaces are
# removed on every exit path. Needs root and iproute2; CI runs it as root.

: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
XCHG=$top_builddir/prov/tcp/test/tcp_xchg
RUNNER=$top_builddir/fabtests/weft_fabtests
NTESTS=14

echo "1..$NTESTS"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip_rest() {
	while [ "$n" -lt "$NTESTS" ]; do n=$((n + 1)); echo "ok $n # SKIP $1"; done
	exit 0
}

[ "$(id -u)" = 0 ] || skip_rest "needs root to create network namespaces"
command -v ip >/dev/null 2>&1 || skip_rest "no ip command (iproute2)"
[ -x "$XCHG" ] || skip_rest "$XCHG not built"

tag=$$
NS_A=weft-tcp-a-$tag
NS_B=weft-tcp-b-$tag
IP_A1=10.213.80.1 IP_B1=10.213.80.2 IP_A2=10.213.81.1 IP_B2=10.213.81.2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tcp_netns.XXXXXX") || exit 1
pids=

cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if ! ip netns add "$NS_A" 2>"$TMP/err"; then
	skip_rest "ip netns unavailable: $(head -1 "$TMP/err")"
fi
pair() { # NAME IP_A IP_B
	ip link add "$1" netns "$NS_A" type veth peer name "$1" netns "$NS_B" &&
	ip -n "$NS_A" addr add "$2/24" dev "$1" &&
	ip -n "$NS_B" addr add "$3/24" dev "$1" &&
	ip -n "$NS_A" link set "$1" up && ip -n "$NS_B" link set "$1" up
}
if ip netns add "$NS_B" && pair wtcp1 "$IP_A1" "$IP_B1" &&
   pair wtcp2 "$IP_A2" "$IP_B2" &&
   ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up; then
	ok "two namespaces joined by two veth pairs"
else
	notok "two namespaces joined by two veth pairs"
	skip_rest "no namespaces to run in"
fi

in_a() { ip netns exec "$NS_A" env "$@"; }
in_b() { ip netns exec "$NS_B" env "$@"; }
# Programs not built with ASan need its runtime to load an instrumented
# libfabric.so.1 (sanitizer builds).
preload=$(printf '%s' "${WEFT_TEST_PRELOAD:-}" | tr ' ' ':')
weft_env="LD_LIBRARY_PATH=$top_builddir/weft/.libs LD_PRELOAD=$preload \
ASAN_OPTIONS=detect_leaks=0"

# 2. Interface choice: the veth pairs first, loopback last.
# shellcheck disable=SC2086
in_a $weft_env FI_PROVIDER=tcp fi_info -p tcp -t FI_EP_RDM >"$TMP/info" 2>&1
doms=$(awk '/domain:/ { print $2 }' "$TMP/info" | tr '\n' ' ')
case "$doms" in
"wtcp1 wtcp2 "*"lo "*) ok "fi_getinfo in a namespace: wtcp1, wtcp2, then lo ($doms)" ;;
*) notok "fi_getinfo in a namespace offers: $doms"; sed 's/^/# /' "$TMP/info" ;;
esac

# 3-4. The quick suite, rank 0 in A, rank 1 in B (alltoall: 4 ranks).
suite() { # NAME ENV...
	name=$1
	shift
	if [ ! -x "$RUNNER" ]; then
		notok "quick suite ($name): $RUNNER not built"
		return
	fi
	# shellcheck disable=SC2086
	env "$@" LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 \
		"$RUNNER" -t quick -p tcp -L "$top_builddir/weft/.libs" \
		-N "$NS_A,$NS_B" -a "$IP_A1" -T 60 >"$TMP/suite" 2>&1
	last=$(tail -n 1 "$TMP/suite")
	case "$last" in
	*" 0 failed"*) ok "fabtests quick suite across the namespaces, $name: $last" ;;
	*) notok "fabtests quick suite across the namespaces, $name: $last"
	   grep -v '^PASS' "$TMP/suite" | sed 's/^/# /' | tail -n 40 ;;
	esac
}
suite io_uring FI_TCP_IO_URING=1
suite epoll FI_TCP_IO_URING=0

# 5. Debian's fi_pingpong over weft's tcp, server in B, client in A.
if ! command -v fi_pingpong >/dev/null 2>&1; then
	n=$((n + 1)); echo "ok $n # SKIP fi_pingpong not installed (libfabric-bin)"
else
	# shellcheck disable=SC2086
	in_b $weft_env FI_PROVIDER=tcp timeout 30 fi_pingpong -e rdm \
		-c -I 50 >"$TMP/pp_b" 2>&1 &
	pid_b=$!
	pids="$pids $pid_b"
	tries=0 rc_a=1
	while [ $tries -lt 25 ] && [ $rc_a -ne 0 ]; do
		sleep 0.2
		# shellcheck disable=SC2086
		in_a $weft_env FI_PROVIDER=tcp timeout 30 fi_pingpong -e rdm \
			-c -I 50 "$IP_B1" >"$TMP/pp_a" 2>&1
		rc_a=$?
		grep -qi "refused" "$TMP/pp_a" || break
		tries=$((tries + 1))
	done
	wait $pid_b
	rc_b=$?
	# Every size, 64 B to 1 MiB, each transfer acknowledged and its
	# data checked (-c).
	rows=$(awk '$2 == 50 && $3 == "=50" { n++ } END { print n + 0 }' "$TMP/pp_a")
	if [ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] && [ "$rows" -eq 6 ] &&
	   grep -q "^1m " "$TMP/pp_a"; then
		ok "FI_PROVIDER=tcp fi_pingpong -e rdm -c across the namespaces, 64 B..1 MiB: $(awk '$1 == "64" { print $7 " us/xfer at 64 B" }' "$TMP/pp_a")"
	else
		notok "fi_pingpong across the namespaces (client $rc_a, server $rc_b)"
		sed 's/^/# client: /' "$TMP/pp_a"
		sed 's/^/# server: /' "$TMP/pp_b"
	fi
fi

# 6. Striping over both pairs: both interfaces carry the rendezvous data.
txb() { ip netns exec "$NS_A" cat "/sys/class/net/$1/statistics/tx_bytes"; }
a1=$(txb wtcp1) a2=$(txb wtcp2)
mkdir -p "$TMP/stripe"
in_b FI_TCP_IFACE=wtcp1,wtcp2 timeout 60 "$XCHG" xchg "$TMP/stripe" b 16777216 8 \
	>"$TMP/st_b" 2>&1 &
pid_b=$!
pids="$pids $pid_b"
in_a FI_TCP_IFACE=wtcp1,wtcp2 timeout 60 "$XCHG" xchg "$TMP/stripe" a 16777216 8 \
	>"$TMP/st_a" 2>&1
rc_a=$?
wait $pid_b
rc_b=$?
d1=$(( $(txb wtcp1) - a1 )) d2=$(( $(txb wtcp2) - a2 ))
if [ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] && grep -q "data ok" "$TMP/st_a" &&
   grep -q "data ok" "$TMP/st_b" && [ "$d1" -gt 40000000 ] && [ "$d2" -gt 40000000 ]; then
	ok "striping over wtcp1,wtcp2: data ok, A sent $d1 + $d2 bytes"
else
	notok "striping over wtcp1,wtcp2 (a: $rc_a, b: $rc_b, bytes $d1 + $d2)"
	sed 's/^/# a: /' "$TMP/st_a"
	sed 's/^/# b: /' "$TMP/st_b"
fi

# 7. The receiver is killed mid-stream: the sender's error comes at once.
mkdir -p "$TMP/kill1"
ip netns exec "$NS_B" env FI_TCP_IFACE=wtcp1 "$XCHG" sink "$TMP/kill1" \
	>"$TMP/k1_b" 2>&1 &
pid_b=$!
pids="$pids $pid_b"
in_a FI_TCP_IFACE=wtcp1 FI_TCP_CONN_TIMEOUT_MS=3000 timeout 60 "$XCHG" source \
	"$TMP/kill1" >"$TMP/k1_a" 2>&1 &
pid_a=$!
pids="$pids $pid_a"
for i in $(seq 100); do grep -q streaming "$TMP/k1_a" && break; sleep 0.1; done
kill -9 $pid_b 2>/dev/null
wait $pid_a
rc_a=$?
ms=$(sed -n 's/^error completion .* \([0-9]*\) ms after.*/\1/p' "$TMP/k1_a")
if [ $rc_a -eq 0 ] && [ -n "$ms" ] && [ "$ms" -lt 5000 ]; then
	ok "receiver killed mid-stream: $(grep '^error' "$TMP/k1_a")"
else
	notok "receiver killed mid-stream (source exit $rc_a)"
	sed 's/^/# source: /' "$TMP/k1_a"
fi

# 8. The sender is killed mid-transfer (the link slowed to 200 Mbit/s so
# that 256 MiB take seconds): the receive that took its message fails.
mkdir -p "$TMP/kill2"
tc -n "$NS_A" qdisc add dev wtcp1 root tbf rate 200mbit burst 64kb latency 50ms \
	2>"$TMP/tc_err"
in_b FI_TCP_IFACE=wtcp1 FI_TCP_CONN_TIMEOUT_MS=3000 timeout 60 "$XCHG" recvkill \
	"$TMP/kill2" >"$TMP/k2_b" 2>&1 &
pid_b=$!
pids="$pids $pid_b"
ip netns exec "$NS_A" env FI_TCP_IFACE=wtcp1 "$XCHG" sendslow "$TMP/kill2" \
	>"$TMP/k2_a" 2>&1 &
pid_a=$!
pids="$pids $pid_a"
for i in $(seq 100); do grep -q sending "$TMP/k2_a" && break; sleep 0.1; done
sleep 1
t0=$(date +%s%N)
kill -9 $pid_a 2>/dev/null
wait $pid_b
rc_b=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
tc -n "$NS_A" qdisc del dev wtcp1 root 2>/dev/null
if [ $rc_b -eq 0 ] && grep -q "receive ended: " "$TMP/k2_b" &&
   ! grep -q "receive ended: success" "$TMP/k2_b" && [ "$ms" -lt 5000 ]; then
	ok "sender killed mid-transfer: $(grep '^receive' "$TMP/k2_b"), $ms ms later"
else
	notok "sender killed mid-transfer (receiver exit $rc_b, $ms ms)"
	sed 's/^/# receiver: /' "$TMP/k2_b"
	sed 's/^/# sender: /' "$TMP/k2_a"
	sed 's/^/# tc: /' "$TMP/tc_err"
fi

# 9-10. A firewall in B drops everything from A: connects never complete.
# The error comes within FI_TCP_CONN_TIMEOUT_MS (1500 ms; the kernel gives
# up on the SYNs at TCP_USER_TIMEOUT, three quarters of it), with the
# process asleep in fi_cq_sread meanwhile: CPU time under half the wait.
firewalled() { # ENGINE
	in_a FI_TCP_IFACE=wtcp1 FI_TCP_CONN_TIMEOUT_MS=1500 FI_TCP_IO_URING="$1" \
		timeout 60 "$XCHG" connect "$IP_B1" 4791 >"$TMP/fw" 2>&1
	rc=$?
	wall=$(awk '/^error/ { print $(NF - 2) }' "$TMP/fw")
	cpu=$(awk '/^error/ { print $NF }' "$TMP/fw")
	if [ $rc -eq 0 ] && grep -q "^error Connection timed out" "$TMP/fw" &&
	   [ "${wall:-0}" -ge 500 ] && [ "${wall:-99999}" -lt 2500 ] &&
	   [ "${cpu:-99999}" -lt $((wall / 2)) ]; then
		ok "firewalled peer ($drop), $2: $(cat "$TMP/fw")"
	else
		notok "firewalled peer ($drop), $2 (exit $rc)"
		sed 's/^/# /' "$TMP/fw"
	fi
}
drop=
if command -v iptables >/dev/null 2>&1 &&
   ip netns exec "$NS_B" iptables -A INPUT -i wtcp1 -j DROP 2>"$TMP/fw_err"; then
	drop="iptables DROP"
elif tc -n "$NS_B" qdisc add dev wtcp1 root netem loss 100% 2>>"$TMP/fw_err"; then
	drop="netem loss 100%"
fi
if [ -n "$drop" ]; then
	firewalled 1 io_uring
	firewalled 0 epoll
	ip netns exec "$NS_B" iptables -F INPUT 2>/dev/null
	tc -n "$NS_B" qdisc del dev wtcp1 root 2>/dev/null
else
	n=$((n + 2))
	echo "ok $((n - 1)) # SKIP neither iptables nor netem: $(tail -1 "$TMP/fw_err")"
	echo "ok $n # SKIP neither iptables nor netem"
fi

# 11-12. After the faults, plain exchanges across the pair still work.
for side in 1 2; do
	mkdir -p "$TMP/after$side"
	in_b FI_TCP_IFACE=wtcp$side timeout 30 "$XCHG" xchg "$TMP/after$side" b 70000 20 \
		>"$TMP/af_b" 2>&1 &
	pid_b=$!
	pids="$pids $pid_b"
	in_a FI_TCP_IFACE=wtcp$side timeout 30 "$XCHG" xchg "$TMP/after$side" a 70000 20 \
		>"$TMP/af_a" 2>&1
	rc_a=$?
	wait $pid_b
	rc_b=$?
	if [ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] && grep -q "data ok" "$TMP/af_a"; then
		ok "exchange over wtcp$side: $(grep 'data ok' "$TMP/af_a")"
	else
		notok "exchange over wtcp$side (a: $rc_a, b: $rc_b)"
		sed 's/^/# a: /' "$TMP/af_a"
		sed 's/^/# b: /' "$TMP/af_b"
	fi
done
# 13-14. Open MPI (pml cm + mtl ofi) with the ranks split over the two
# namespaces as two hosts: mpirun in A under the host name weft-a, its
# daemon started in B as weft-b by an rsh agent that enters B's namespace.
mpi_ranks() { # NP
	np=$1
	for prog in mpi_p2p mpi_coll; do
		case $prog in mpi_p2p) want=4 ;; *) want=3 ;; esac
		# shellcheck disable=SC2086
		ip netns exec "$NS_A" unshare --uts sh -c "hostname weft-a &&
		    exec timeout -k 10 120 mpirun --allow-run-as-root \
		    --oversubscribe -np $np --hostfile $TMP/hosts --map-by node \
		    --mca plm_rsh_agent $TMP/agent --mca oob_tcp_if_include wtcp1 \
		    -x LD_LIBRARY_PATH=$top_builddir/weft/.libs -x FI_TCP_IFACE=wtcp1 \
		    $mpi_san --mca pml cm --mca mtl ofi \
		    --mca mtl_ofi_provider_include tcp \
		    $top_builddir/tests/mpi/$prog" </dev/null >"$TMP/mpi" 2>&1
		rc=$?
		oks=$(grep -c '^ok - ' "$TMP/mpi")
		if [ $rc -ne 0 ] || [ "$oks" -ne $want ] ||
		   grep -q '^not ok' "$TMP/mpi"; then
			notok "Open MPI across the namespaces, $prog np=$np: exit $rc, $oks of $want checks"
			head -n 60 "$TMP/mpi" | sed 's/^/# /'
			return
		fi
	done
	ok "Open MPI (mtl ofi) across the namespaces, np=$np: mpi_p2p and mpi_coll, every check passed"
}
if ! command -v mpirun >/dev/null 2>&1 ||
   [ ! -x "$top_builddir/tests/mpi/mpi_coll" ]; then
	n=$((n + 2))
	echo "ok $((n - 1)) # SKIP Open MPI not installed or tests/mpi not built"
	echo "ok $n # SKIP Open MPI not installed or tests/mpi not built"
elif ! command -v unshare >/dev/null 2>&1; then
	n=$((n + 2))
	echo "ok $((n - 1)) # SKIP no unshare (util-linux) to name the hosts"
	echo "ok $n # SKIP no unshare (util-linux) to name the hosts"
else
	cat >"$TMP/agent" <<EOF
#!/bin/sh
# rsh agent: HOST COMMAND... runs COMMAND in HOST's namespace, named HOST
host=\$1
shift
case \$host in
weft-a) ns=$NS_A ;;
weft-b) ns=$NS_B ;;
*) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$host && \$*"
EOF
	chmod +x "$TMP/agent"
	printf 'weft-a slots=2\nweft-b slots=2\n' >"$TMP/hosts"
	mpi_san=
	[ -n "$preload" ] &&
		mpi_san="-x LD_PRELOAD=$preload -x ASAN_OPTIONS=detect_leaks=0"
	mpi_ranks 2
	mpi_ranks 4
fi
exit 0
