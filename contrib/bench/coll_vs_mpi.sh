#!/bin/bash
# SPDX-License-Identifier: MIT
# coll_vs_mpi.sh: weft's allreduce (ft_bench_coll) beside Open MPI's
# MPI_Allreduce over ob1 + vader (shared memory) on the same machine, for
# 2, 4 and 8 ranks, 8 B .. 16 MiB; also weft over srd on softsrd.
#   contrib/bench/coll_vs_mpi.sh [-B BUILDDIR] [-n "2 4 8"] [-m MAX] [-M MIN]
#       [-r REPS] [-R ROUNDS] [-p "shm srd"] [-o OUTDIR]
# Needs mpicc and mpirun (Debian: openmpi-bin libopenmpi-dev). Prints, per
# rank count and size, weft's and Open MPI's time per operation and bus
# bandwidth (algbw x 2(n-1)/n) and keeps the CSVs in OUTDIR. Each of
# ROUNDS rounds (default 1) runs every configuration once, alternating
# which of weft and Open MPI goes first; per size the fastest round's
# median is kept (on a shared machine the slower rounds measure the other
# users). Run it on an otherwise idle machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build="$top/build"
ranks="2 4 8"
max=16M
min=8
reps=5
rounds=1
provs="shm srd"
out=""
while getopts "B:n:m:M:r:R:p:o:" o; do
	case $o in
	B) build=$OPTARG ;;
	n) ranks=$OPTARG ;;
	m) max=$OPTARG ;;
	M) min=$OPTARG ;;
	r) reps=$OPTARG ;;
	R) rounds=$OPTARG ;;
	p) provs=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/coll_vs_mpi.XXXXXX")}
mkdir -p "$out"
bytes() { numfmt --from=iec "$1"; }
maxb=$(bytes "$max")
mpicc -O2 -o "$out/mpi_allreduce" "$top/contrib/bench/mpi_allreduce.c"
export LD_LIBRARY_PATH="$build/weft/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Both sides pin rank i to CPU i mod ncpu: unpinned, two ranks that land on
# one CPU while the other CPU is busy pay a context switch per message.
mpiargs=(--allow-run-as-root --map-by core:OVERSUBSCRIBE
	 --bind-to core:overload-allowed --mca pml ob1 --mca btl vader,self)
ncpu=$(nproc)
cpus() { # N: weft's -C list
	local i l=""
	for ((i = 0; i < $1; i++)); do l="$l${l:+,}$((i % ncpu))"; done
	echo "$l"
}
minb=$(bytes "$min")
run_ompi() { # N ROUND
	mpirun "${mpiargs[@]}" -np "$1" "$out/mpi_allreduce" "$minb" "$maxb" \
		"$reps" > "$out/ompi-$1.$2.csv"
}
run_weft() { # N ROUND
	for p in $provs; do
		env FI_SRD_DEVICE=soft "$build/fabtests/ft_bench_coll" -p "$p" \
			-n "$1" -C "$(cpus "$1")" -M "$min" -m "$max" -r "$reps" -f csv \
			> "$out/weft-$p-$1.$2.csv"
	done
}
for n in $ranks; do
	for r in $(seq 1 "$rounds"); do
		if [ $((r % 2)) -eq 1 ]; then
			run_ompi "$n" "$r"
			run_weft "$n" "$r"
		else
			run_weft "$n" "$r"
			run_ompi "$n" "$r"
		fi
	done
	# per size, the fastest round
	for f in ompi $(for p in $provs; do echo "weft-$p"; done); do
		cat "$out/$f-$n".*.csv | awk -F, '
		$4 ~ /^[0-9]+$/ { if (!($4 in best) || $6 + 0 < best[$4] + 0) { best[$4] = $6; line[$4] = $0 } }
		END { for (b in line) print line[b] }' | sort -t, -k4,4n > "$out/$f-$n.csv"
	done
done
# the floors' references: each provider's ping-pong latency at 8 B and
# streaming bandwidth at MAX, best of the rounds
for p in $provs; do
	for r in $(seq 1 "$rounds"); do
		env FI_SRD_DEVICE=soft "$build/fabtests/ft_bench_pingpong" -p "$p" \
			-C "$(cpus 2)" -M 8 -m 8 -r "$reps" -f csv | tail -n +2
		env FI_SRD_DEVICE=soft "$build/fabtests/ft_bench_bw" -p "$p" \
			-C "$(cpus 2)" -M "$max" -m "$max" -r "$reps" -f csv | tail -n +2
	done > "$out/p2p-$p.csv"
	awk -F, -v p="$p" '
	$1 == "pingpong" && (!lat || $5 + 0 < lat) { lat = $5 + 0 }
	$1 == "bw" && $10 + 0 > bw { bw = $10 + 0 }
	END { printf "# %s point to point: ping-pong %.3f usec at 8 B, bandwidth %.2f GB/s at MAX\n", p, lat, bw / 1000 }' \
		"$out/p2p-$p.csv"
done
for n in $ranks; do
	echo "# $n ranks: usec per allreduce (busbw GB/s)"
	hdr="bytes"
	for p in $provs; do hdr="$hdr weft-$p"; done
	echo "$hdr ompi-vader weft-shm/ompi"
	awk -F, -v provs="$provs" -v dir="$out" -v n="$n" '
	BEGIN {
		np = split(provs, P, " ")
		for (i = 1; i <= np; i++) {
			f = dir "/weft-" P[i] "-" n ".csv"
			while ((getline l < f) > 0) {
				split(l, c, ",")
				if (c[4] ~ /^[0-9]+$/) { u[P[i], c[4]] = c[6]; b[P[i], c[4]] = c[10] }
			}
		}
		f = dir "/ompi-" n ".csv"
		while ((getline l < f) > 0) {
			split(l, c, ",")
			if (c[4] ~ /^[0-9]+$/) { u["ompi", c[4]] = c[6]; b["ompi", c[4]] = c[10]; s[++ns] = c[4] }
		}
		for (k = 1; k <= ns; k++) {
			line = s[k]
			for (i = 1; i <= np; i++)
				line = line sprintf(" %.2f(%.2f)", u[P[i], s[k]], b[P[i], s[k]])
			line = line sprintf(" %.2f(%.2f)", u["ompi", s[k]], b["ompi", s[k]])
			if (u["ompi", s[k]] > 0 && u["shm", s[k]] > 0)
				line = line sprintf(" %.2fx", u["shm", s[k]] / u["ompi", s[k]])
			print line
		}
	}' /dev/null
done
echo "# raw CSVs in $out"
