#!/bin/bash
# SPDX-License-Identifier: MIT
# srd_cq_batch.sh [-b BUILDDIR] [-s SIZE] [-I ITERS] [-r REPS] [-R ROUNDS] [BATCH...]
# Small-message rate of the srd provider on softsrd for each FI_SRD_CQ_BATCH
# (default 1 2 4 8 16 32 64 128 256) in each poll mode, with weft's
# ft_bench_rate (two processes on cores 0 and 1). Prints one CSV row per
# (round, batch, mode): the median of REPS repetitions. Modes alternate
# within each batch size, so a ratio between them is taken under the same
# load; run it under `flock /tmp/weft-bench.lock` on a shared machine.
# WEFT_POLL_MODES: modes to run (default "completion data data128"):
#   completion  FI_SRD_POLL_MODE=completion
#   data        FI_SRD_POLL_MODE=data, rings with a sequence word per slot
#   data128     FI_SRD_POLL_MODE=data, rings with a flag per 128-byte line
# softsrd claims whole-message order (FI_SRD_SOFT_IN_ORDER=whole) for
# completion and data, 128-byte lines for data128: the device does the
# same work in every mode, only the provider's way of finding messages
# differs. The mode in effect is checked: a data row whose endpoint fell
# back to completions would be mislabelled, so FI_SRD_POLL_MODE=data logs
# its fallback as a warning, which fails the row.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_BUILDDIR:-$top/build} size=8 iters=1000 reps=3 rounds=1
while getopts b:s:I:r:R: o; do
	case $o in
	b) build=$OPTARG ;; s) size=$OPTARG ;; I) iters=$OPTARG ;;
	r) reps=$OPTARG ;; R) rounds=$OPTARG ;;
	*) sed -n 3,19p "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
batches=("$@")
[ ${#batches[@]} -gt 0 ] || batches=(1 2 4 8 16 32 64 128 256)
lib=$build/weft/.libs bench=$build/fabtests/ft_bench_rate
[ -x "$bench" ] || { echo "no $bench: build weft first" >&2; exit 2; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT

# mode -> "FI_SRD_POLL_MODE FI_SRD_SOFT_IN_ORDER"
mode_env() {
	case $1 in
	completion) echo "completion whole" ;;
	data) echo "data whole" ;;
	data128) echo "data 128" ;;
	*) echo "unknown poll mode $1" >&2; exit 2 ;;
	esac
}

run_one() {	# mode batch
	local pm order row med mm
	read -r pm order <<<"$(mode_env "$1")"
	row=$(FI_SRD_DEVICE=soft FI_SRD_POLL_MODE=$pm FI_SRD_SOFT_IN_ORDER=$order \
		FI_SRD_CQ_BATCH=$2 FI_LOG_LEVEL=warn LD_LIBRARY_PATH=$lib \
		"$bench" -p srd -M "$size" -m "$size" -I "$iters" -r "$reps" \
		-f csv -C 0,1 2>"$err" | tail -n 1) || { echo "failed,"; return; }
	if grep -q 'polling completions' "$err"; then
		echo "fell-back,"
		return
	fi
	IFS=, read -r _ _ _ _ med _ _ _ _ _ mm <<<"$row"
	echo "$med,$mm"
}

echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round,cq_batch,poll_mode,size,usec_per_msg,mmsgs"
for ((r = 1; r <= rounds; r++)); do
	for b in "${batches[@]}"; do
		for mode in ${WEFT_POLL_MODES:-completion data data128}; do
			echo "$r,$b,$mode,$size,$(run_one "$mode" "$b")"
		done
	done
done
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
