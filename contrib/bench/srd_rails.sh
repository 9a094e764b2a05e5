#!/bin/bash
# SPDX-License-Identifier: MIT
# srd striping over softsrd devices: weft's ft_bench_bw over srd with
# FI_SRD_RAILS=1 and FI_SRD_RAILS=2, alternating within each round, on the
# same two devices (rails 1 uses the first only).
#
#   loopback (default)  FI_SRD_SOFT_DEVICES=2 on 127.0.0.1: two devices on
#                       one address, both through the kernel's loopback
#   -n (root)           two network namespaces joined by two veth pairs,
#                       one softsrd device per pair
#
# Options: -b BUILDDIR (default build), -r ROUNDS (3), -M/-m smallest and
# largest size (1M, 16M), -w WINDOW (64), -c "CPU0 CPU1" (0 1). Prints
# ft_bench_bw's table per run and, per size, the median MB/s of each rail
# count over the rounds and their ratio.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_BUILDDIR:-$top/build}
rounds=3 minsz=1M maxsz=16M window=64 netns=0 cores="0 1"
while getopts b:r:M:m:w:nc: o; do
	case $o in
	b) build=$OPTARG ;; r) rounds=$OPTARG ;; M) minsz=$OPTARG ;;
	m) maxsz=$OPTARG ;; w) window=$OPTARG ;; n) netns=1 ;;
	c) cores=$OPTARG ;;
	*) sed -n 3,15p "$0"; exit 2 ;;
	esac
done
weftlib=$build/weft/.libs
bench=$build/fabtests/ft_bench_bw
for f in "$weftlib/libfabric.so.1" "$bench"; do
	[ -e "$f" ] || { echo "missing $f: build weft first (-b)" >&2; exit 2; }
done
read -r c0 c1 <<<"$cores"
tmp=$(mktemp -d)
ns_a= ns_b= nsopt=() env_dev=(FI_SRD_SOFT_ADDR=127.0.0.1 FI_SRD_SOFT_DEVICES=2)
cleanup() {
	[ -n "$ns_a" ] && ip netns del "$ns_a" 2>/dev/null
	[ -n "$ns_b" ] && ip netns del "$ns_b" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ "$netns" = 1 ]; then
	ns_a=weft-rails-a-$$ ns_b=weft-rails-b-$$
	ip netns add "$ns_a" && ip netns add "$ns_b"
	# loopback stays down: each namespace offers exactly its two veth
	# ends, in this order, so rail k of one side reaches rail k of the
	# other
	for k in 1 2; do
		ip link add "wrail$k" netns "$ns_a" type veth peer \
			name "wrail$k" netns "$ns_b"
		ip -n "$ns_a" addr add "10.215.$k.1/24" dev "wrail$k"
		ip -n "$ns_b" addr add "10.215.$k.2/24" dev "wrail$k"
		# softsrd's RDMA packets are 64 KiB datagrams: at veth's
		# default 1500 every one is ~45 IP fragments, and losing one
		# loses the packet
		ip -n "$ns_a" link set "wrail$k" mtu 65535 up
		ip -n "$ns_b" link set "wrail$k" mtu 65535 up
	done
	nsopt=(-N "$ns_a,$ns_b") env_dev=()
fi

run() { # RAILS ROUND
	env LD_LIBRARY_PATH="$weftlib" FI_SRD_DEVICE=soft FI_SRD_USE_SHM=0 \
		"${env_dev[@]}" \
		FI_SRD_RAILS="$1" nice -n 5 "$bench" -p srd -M "$minsz" \
		-m "$maxsz" -w "$window" -r 5 -C "$c0,$c1" "${nsopt[@]}" \
		-f csv >"$tmp/r$1.$2" 2>"$tmp/e$1.$2" ||
		{ echo "rails $1 round $2 failed:"; cat "$tmp/e$1.$2"; }
	echo "--- rails $1, round $2"
	cat "$tmp/r$1.$2"
}
for ((i = 1; i <= rounds; i++)); do
	run 1 "$i"
	run 2 "$i"
done

# csv: bench,provider,size,iters,usec_median,...,mbps,mmsgs; median over
# rounds per size and rail count
summary() { # RAILS
	cat "$tmp"/r"$1".* 2>/dev/null | awk -F, '$3 ~ /^[0-9]+$/ { print $3, $10 }' |
		sort -k1,1n -k2,2n | awk '
		{ v[$1] = v[$1] " " $2; n[$1]++ }
		END { for (s in v) { split(substr(v[s], 2), a, " ");
			print s, a[int((n[s] + 1) / 2)] } }' | sort -n
}
summary 1 >"$tmp/s1"
summary 2 >"$tmp/s2"
echo "=== median MB/s over $rounds rounds ($([ "$netns" = 1 ] &&
	echo "two veth pairs" || echo "loopback, 2 devices on 127.0.0.1"))"
printf "%10s %12s %12s %7s\n" bytes rails=1 rails=2 ratio
join "$tmp/s1" "$tmp/s2" | awk '{ r = $2 > 0 ? $3 / $2 : 0
	printf "%10d %12.1f %12.1f %7.2f\n", $1, $2, $3, r }'
