#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: striped long messages (test_srd_stripe --faults: 64 MiB over
# two rails, order across rails, rail count mismatch) while softsrd drops,
# duplicates and reorders datagrams on every device, as TAP. SRD never
# loses or repeats what it delivers, so every byte must still check.
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
FI_SRD_SOFT_LOSS=2
FI_SRD_SOFT_DUP=2
FI_SRD_SOFT_REORDER=20
export FI_SRD_SOFT_LOSS FI_SRD_SOFT_DUP FI_SRD_SOFT_REORDER
bin="$top_builddir/prov/srd/test/test_srd_stripe"
what="striped transfers under loss 2%, dup 2%, reorder 20%"
echo "1..1"
if [ ! -x "$bin" ]; then
	echo "not ok 1 - test_srd_stripe was not built"
	exit 1
fi
# cmocka's own TAP would give a second plan: plain output, shown as
# comments.
if out=$(CMOCKA_MESSAGE_OUTPUT=STDOUT "$bin" --faults 2>&1); then
	echo "ok 1 - $what"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 1 - $what"
	exit 1
fi
