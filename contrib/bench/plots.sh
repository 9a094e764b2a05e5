#!/bin/bash
# SPDX-License-Identifier: MIT
# plots.sh: regenerate the README's figures, one provider pairing after the
# other (never two benchmarks at once on a small machine), into
# contrib/bench/results/<pair>/: summary.txt, latency.png, bandwidth.png.
# Run from a weft build tree; extra options go to compare (e.g. -r 5).
set -u
here=$(cd "$(dirname "$0")" && pwd)
pairs="shm srd tcp"
case ${1-} in
-h) echo "usage: plots.sh [-p 'shm srd tcp'] [compare options]"; exit 0 ;;
-p) pairs=$2; shift 2 ;;
esac
rc=0
for p in $pairs; do
	# A pairing whose weft provider is absent from this build is reported,
	# not plotted with stale data.
	if ! FI_SRD_DEVICE=soft ./core/weft_info -l 2>/dev/null | grep -qx "$p:"; then
		echo "plots.sh: provider $p not in this build, skipped" >&2
		continue
	fi
	"$here/compare" -P "$p" -q -m 1M -r 3 -c 0,1 -o "$here/results/$p" "$@" || rc=1
done
exit $rc
