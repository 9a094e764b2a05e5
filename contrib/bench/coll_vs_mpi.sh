#!/bin/bash
# SPDX-License-Identifier: MIT
# coll_vs_mpi.sh: weft's allreduce (ft_bench_coll) beside Open MPI's
# MPI_Allreduce over ob1 + vader (shared memory) on the same machine, for
# 2, 4 and 8 ranks, 8 B .. 16 MiB; also weft over srd on softsrd.
#   contrib/bench/coll_vs_mpi.sh [-B BUILDDIR] [-n "2 4 8"] [-m MAX] [-r REPS] [-p "shm srd"] [-o OUTDIR]
# Needs mpicc and mpirun (Debian: openmpi-bin libopenmpi-dev). Prints, per
# rank count and size, weft's and Open MPI's time per operation and bus
# bandwidth (algbw x 2(n-1)/n) and keeps the CSVs in OUTDIR. Run it on an
# otherwise idle machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build="$top/build"
ranks="2 4 8"
max=16M
reps=5
provs="shm srd"
out=""
while getopts "B:n:m:r:p:o:" o; do
	case $o in
	B) build=$OPTARG ;;
	n) ranks=$OPTARG ;;
	m) max=$OPTARG ;;
	r) reps=$OPTARG ;;
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
mpiargs=(--allow-run-as-root --oversubscribe --bind-to none
	 --mca pml ob1 --mca btl vader,self)
for n in $ranks; do
	mpirun "${mpiargs[@]}" -np "$n" "$out/mpi_allreduce" 8 "$maxb" "$reps" \
		> "$out/ompi-$n.csv"
	for p in $provs; do
		env FI_SRD_DEVICE=soft "$build/fabtests/ft_bench_coll" -p "$p" -n "$n" \
			-M 8 -m "$max" -r "$reps" -f csv > "$out/weft-$p-$n.csv"
	done
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
