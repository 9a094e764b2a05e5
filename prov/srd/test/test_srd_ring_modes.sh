#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the srd RDM tests and the quick fabtests suite again, in
# poll-on-data mode (FI_SRD_POLL_MODE=data on softsrd claiming whole-message
# and 128-byte in-order RDMA writes), so that every message path that runs
# in completion mode also runs with the rings. TAP.
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
t="$top_builddir/prov/srd/test"
n=0
fail=0
echo "1..5"
run() {
	name=$1
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1) && ! echo "$out" | grep -q '^not ok'; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		echo "$out" | grep -E 'FAILED|ERROR|LINE|not ok' | sed 's/^/# /'
		fail=1
	fi
}
export FI_SRD_POLL_MODE=data
for order in whole 128; do
	for p in test_srd_rdm test_srd_rdm_cts; do
		if [ -x "$t/$p" ]; then
			run "$p, in-order $order" \
				env FI_SRD_SOFT_IN_ORDER=$order "$t/$p"
		else
			n=$((n + 1))
			echo "ok $n # SKIP $p, in-order $order: not built"
		fi
	done
done
run "quick fabtests over srd, in-order whole" \
	env FI_SRD_SOFT_IN_ORDER=whole top_builddir="$top_builddir" \
	sh "$top_srcdir/prov/srd/test/test_quick_srd.sh"
exit $fail
