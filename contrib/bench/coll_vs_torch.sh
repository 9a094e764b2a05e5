#!/bin/bash
# SPDX-License-Identifier: MIT
# coll_vs_torch.sh: the same torch.distributed.all_reduce (float32 SUM on
# CPU tensors) over Gloo and over weft (the weft.c10d backend), 2 and 4
# ranks, 8 B .. 16 MiB (x8 a step).
#   contrib/bench/coll_vs_torch.sh [-B BUILDDIR] [-n "2 4"] [-m MAX] [-M MIN]
#       [-r REPS] [-R ROUNDS] [-p PROVIDER] [-o OUTDIR]
# Needs Debian's python3-torch (contrib/setup.sh installs it). Each of
# ROUNDS rounds (default 2) runs both backends once per rank count,
# alternating which goes first; per size the fastest round is kept (on a
# shared machine the slower rounds measure the other users). Ranks are not
# pinned: Gloo runs its own threads. Prints a table and keeps the CSVs in
# OUTDIR. Run it on an otherwise idle machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build="$top/build"
ranks="2 4"
max=16M
min=8
reps=5
rounds=2
prov=shm
out=""
while getopts "B:n:m:M:r:R:p:o:" o; do
	case $o in
	B) build=$OPTARG ;;
	n) ranks=$OPTARG ;;
	m) max=$OPTARG ;;
	M) min=$OPTARG ;;
	r) reps=$OPTARG ;;
	R) rounds=$OPTARG ;;
	p) prov=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
python=${PYTHON:-/usr/bin/python3}
"$python" -c 'import torch.distributed' 2>/dev/null ||
	{ echo "coll_vs_torch: torch does not import in $python (Debian: python3-torch)" >&2; exit 1; }
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/coll_vs_torch.XXXXXX")}
mkdir -p "$out"
minb=$(numfmt --from=iec "$min")
maxb=$(numfmt --from=iec "$max")
export LD_LIBRARY_PATH="$build/weft/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}"
export WEFT_PROVIDER=$prov FI_TCP_IFACE=${FI_TCP_IFACE:-lo}

free_port() {
	"$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run() { # BACKEND N ROUND: rank 0's CSV into OUTDIR
	local backend=$1 n=$2 round=$3 port r pids=()
	port=$(free_port)
	for ((r = 0; r < n; r++)); do
		RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
			"$python" "$top/contrib/bench/torch_allreduce.py" "$backend" \
			"$minb" "$maxb" "$reps" >"$out/$backend-$n.$round.r$r" 2>"$out/$backend-$n.$round.err$r" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || { echo "coll_vs_torch: $backend with $n ranks failed:" >&2
			cat "$out/$backend-$n.$round".err* >&2; exit 1; }
	done
	mv "$out/$backend-$n.$round.r0" "$out/$backend-$n.$round.csv"
}

for n in $ranks; do
	for r in $(seq 1 "$rounds"); do
		if [ $((r % 2)) -eq 1 ]; then
			run gloo "$n" "$r"; run weft "$n" "$r"
		else
			run weft "$n" "$r"; run gloo "$n" "$r"
		fi
	done
	for b in gloo weft; do   # per size, the fastest round
		cat "$out/$b-$n".*.csv | awk -F, '
		{ if (!($3 in best) || $4 + 0 < best[$3] + 0) { best[$3] = $4; line[$3] = $0 } }
		END { for (s in line) print line[s] }' | sort -t, -k3,3n >"$out/$b-$n.csv"
	done
done

echo "torch.distributed.all_reduce, float32 SUM, CPU tensors; weft over $prov;"
echo "time per op (fastest of $rounds rounds' medians of $reps batches), us"
printf '| ranks | bytes | gloo us | weft us | weft/gloo time | weft busbw GB/s |\n'
printf '|---|---|---|---|---|---|\n'
for n in $ranks; do
	awk -F, -v n="$n" 'NR == FNR { gloo[$3] = $4; next }
		$3 in gloo { printf "| %d | %d | %.1f | %.1f | %.2f | %.3f |\n", n, $3, gloo[$3], $4, $4 / gloo[$3], $5 }' \
		"$out/gloo-$n.csv" "$out/weft-$n.csv"
done
echo "CSVs in $out"
