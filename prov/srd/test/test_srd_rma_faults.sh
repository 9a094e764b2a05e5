#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: srd RMA and atomics (hardware and emulated paths) while
# softsrd drops, duplicates and reorders datagrams, as TAP: one line per
# program. SRD never loses or repeats what it delivers, so every check of
# test_srd_rma / test_srd_rma_atomic must still hold byte for byte.
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
FI_SRD_SOFT_LOSS=3
FI_SRD_SOFT_DUP=3
FI_SRD_SOFT_REORDER=30
export FI_SRD_SOFT_LOSS FI_SRD_SOFT_DUP FI_SRD_SOFT_REORDER
progs="test_srd_rma test_srd_rma_atomic"
echo "1..2"
n=0
fails=0
for p in $progs; do
	n=$((n + 1))
	bin="$top_builddir/prov/srd/test/$p"
	if [ ! -x "$bin" ]; then
		echo "not ok $n - $p was not built"
		fails=$((fails + 1))
		continue
	fi
	# cmocka's own TAP would give a second plan: plain output, shown as
	# comments.
	if out=$(CMOCKA_MESSAGE_OUTPUT=STDOUT "$bin" 2>&1); then
		echo "ok $n - $p under loss 3%, dup 3%, reorder 30%"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok $n - $p under loss 3%, dup 3%, reorder 30%"
		fails=$((fails + 1))
	fi
done
[ "$fails" -eq 0 ]
