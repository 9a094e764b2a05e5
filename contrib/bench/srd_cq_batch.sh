#!/bin/bash
# SPDX-License-Identifier: MIT
# srd_cq_batch.sh [-b BUILDDIR] [-s SIZE] [-I ITERS] [-r REPS] [BATCH...]
# Small-message rate of the srd provider on softsrd for each FI_SRD_CQ_BATCH
# (default 1 2 4 8 16 32 64 128 256), in both poll modes the device allows,
# with weft's ft_bench_rate (two processes on cores 0 and 1). Prints one CSV
# row per (mode, batch): the median of REPS repetitions.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_BUILDDIR:-$top/build} size=8 iters=1000 reps=3
while getopts b:s:I:r: o; do
	case $o in
	b) build=$OPTARG ;; s) size=$OPTARG ;; I) iters=$OPTARG ;; r) reps=$OPTARG ;;
	*) sed -n 3,7p "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
batches=("$@")
[ ${#batches[@]} -gt 0 ] || batches=(1 2 4 8 16 32 64 128 256)
lib=$build/weft/.libs bench=$build/fabtests/ft_bench_rate
[ -x "$bench" ] || { echo "no $bench: build weft first" >&2; exit 2; }

echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "poll_mode,cq_batch,size,usec_per_msg,mmsgs"
for mode in ${WEFT_POLL_MODES:-completion data}; do
	for b in "${batches[@]}"; do
		row=$(FI_SRD_DEVICE=soft FI_SRD_POLL_MODE=$mode FI_SRD_CQ_BATCH=$b \
			LD_LIBRARY_PATH=$lib "$bench" -p srd -M "$size" -m "$size" \
			-I "$iters" -r "$reps" -f csv -C 0,1 2>/dev/null | tail -n 1) || {
			echo "$mode,$b,$size,failed,"; continue; }
		IFS=, read -r _ _ _ _ med _ _ _ _ _ mm <<<"$row"
		echo "$mode,$b,$size,$med,$mm"
	done
done
