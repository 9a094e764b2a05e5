#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the examples, as TAP. The training loop over shm (4 ranks,
# an even count) and over srd on softsrd (3 ranks, an odd one).
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
prog="$top_builddir/examples/train_allreduce"
echo "1..2"
n=0
run() { # name, env..., args
	name="$1"
	shift
	n=$((n + 1))
	if out=$(env "$@" 2>&1); then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		echo "$out" | sed 's/^/#   /' | tail -n 20
	fi
}
run "train_allreduce shm 4 ranks" "$prog" -p shm -n 4 -s 40
run "train_allreduce srd 3 ranks" FI_SRD_DEVICE=soft \
	FI_SRD_SOFT_ADDR="${FI_SRD_SOFT_ADDR:-127.0.0.1}" "$prog" -p srd -n 3 -s 20
