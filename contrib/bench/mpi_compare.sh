#!/bin/bash
# SPDX-License-Identifier: MIT
# mpi_compare.sh [-b BUILDDIR] [-r ROUNDS] [-o OUTDIR] [-p shm,net,srd]
# Open MPI 4.1 (Debian) on weft against Open MPI on its own transports,
# with tests/mpi/mpi_bench (osu-style) from a weft build tree:
#   shm pair: weft shm (pml cm + mtl ofi)   vs  Open MPI's ob1 + btl vader
#   net pair: weft srd on softsrd (mtl ofi) vs  Debian's libfabric
#             tcp;ofi_rxm (mtl ofi, the system libfabric.so.1)
#   srd pair: weft srd on softsrd (its peers on this host through shm)
#             vs Open MPI's ob1 + btl vader (-p srd; not run by default)
# Figures: ping-pong latency at 8 B (usec, half a round trip), streaming
# bandwidth at 1 MiB (MB/s, windows of 64), MPI_Allreduce of 16 MiB of
# floats with 2 and 4 ranks and of 64 KiB with 4 (usec per call), and an
# mpi4py training step with 2 and 4 ranks (contrib/bench/mpi4py_step.py: ms
# per step of a 16 MiB float32 model whose gradients are averaged with
# MPI_Allreduce). Each round runs the two sides of a pair back to back,
# alternating which goes first, so load drifts hit both; each figure is
# the median over ROUNDS (default 5). Normal scheduling: no pinning or
# priority beyond Open MPI's defaults.
# OUTDIR (default ./mpi-bench) gets raw.csv (every run) and summary.txt.
# Prints the load average before and after: figures taken on a busy
# machine are not worth much.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEFT_BUILDDIR:-$top/build}
rounds=5 out=mpi-bench pairs=shm,net
while getopts b:r:o:p: o; do
	case $o in
	b) build=$OPTARG ;; r) rounds=$OPTARG ;; o) out=$OPTARG ;; p) pairs=$OPTARG ;;
	*) sed -n 3,23p "$0"; exit 2 ;;
	esac
done
weftlib=$build/weft/.libs
bench=$build/tests/mpi/mpi_bench
[ -e "$weftlib/libfabric.so.1" ] || { echo "no $weftlib/libfabric.so.1: build weft first (-b)" >&2; exit 2; }
[ -x "$bench" ] || { echo "no $bench: Open MPI (mpicc) was not found when weft was configured" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpirun not found (Debian: openmpi-bin)" >&2; exit 2; }
mkdir -p "$out"
raw=$out/raw.csv
echo "round,bench,config,value,unit" >"$raw"
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)

# The Open MPI options of each configuration; the ranks' environment holds
# only what -x passes.
config_opts() {
	case $1 in
	weft_shm) echo "-x LD_LIBRARY_PATH=$weftlib -x FI_SHM_REMOTE_COMM=1" \
		"--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include shm" ;;
	ompi_vader) echo "--mca pml ob1 --mca btl self,vader" ;;
	weft_srd) echo "-x LD_LIBRARY_PATH=$weftlib -x FI_SRD_DEVICE=soft" \
		"--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include srd" ;;
	rxm_tcp) echo "--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp;ofi_rxm" ;;
	esac
}

# Benchmarks: name, ranks, mpi_bench arguments (kind, size, iterations),
# or "py" and mpi4py_step.py's (parameters, steps).
benches=(
	"lat8 2 latency 8 20000"
	"bw1M 2 bw 1048576 20"
	"ar16M_np2 2 allreduce 16777216 10"
	"ar16M_np4 4 allreduce 16777216 10"
	"ar64K_np4 4 allreduce 65536 200"
	"step16M_np2 2 py 4194304 20"
	"step16M_np4 4 py 4194304 20"
)
python3 -c 'import mpi4py, numpy' 2>/dev/null ||
	{ echo "# mpi4py or numpy missing (python3-mpi4py): no step figures" >&2; benches=("${benches[@]:0:5}"); }

# run CONFIG NP ARGS...: one mpi_bench (or mpi4py_step.py) run, prints
# "VALUE UNIT" or "nan -".
run() {
	local cfg=$1 np=$2 line prog=("$bench")
	shift 2
	if [ "$1" = py ]; then
		prog=(python3 "$top/contrib/bench/mpi4py_step.py")
		shift
	fi
	# shellcheck disable=SC2046
	line=$(env -i PATH="$PATH" HOME="${HOME:-/tmp}" TMPDIR="${TMPDIR:-/tmp}" \
		timeout -k 5 120 mpirun "${root[@]}" --oversubscribe -np "$np" \
		$(config_opts "$cfg") "${prog[@]}" "$@" 2>"$out/err-$cfg.log" </dev/null | tail -n 1) || true
	# shellcheck disable=SC2086 # split "KIND SIZE VALUE UNIT"
	set -- $line
	if [ $# -eq 4 ]; then echo "$3 $4"; else echo "nan -"; fi
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "nan") }'; }

echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
IFS=, read -r -a pair_list <<<"$pairs"
for r in $(seq "$rounds"); do
	for p in "${pair_list[@]}"; do
		case $p in
		shm) cfgs=(weft_shm ompi_vader) ;;
		net) cfgs=(weft_srd rxm_tcp) ;;
		srd) cfgs=(weft_srd ompi_vader) ;;
		*) echo "unknown pair $p (shm, net, srd)" >&2; exit 2 ;;
		esac
		# odd rounds weft first, even rounds the other first
		[ $((r % 2)) -eq 0 ] && cfgs=("${cfgs[1]}" "${cfgs[0]}")
		for b in "${benches[@]}"; do
			read -r name np args <<<"$b"
			for c in "${cfgs[@]}"; do
				# shellcheck disable=SC2086
				read -r v u <<<"$(run "$c" "$np" $args)"
				echo "$r,$name,$c,$v,$u" >>"$raw"
			done
		done
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

{
	printf '%-10s %-11s %12s %-11s %12s %7s\n' bench weft value other value ratio
	for p in "${pair_list[@]}"; do
		case $p in
		shm) w=weft_shm o=ompi_vader ;;
		net) w=weft_srd o=rxm_tcp ;;
		srd) w=weft_srd o=ompi_vader ;;
		esac
		for b in "${benches[@]}"; do
			read -r name _ <<<"$b"
			wv=$(awk -F, -v b="$name" -v c="$w" '$2 == b && $3 == c && $4 != "nan" { print $4 }' "$raw" | median)
			ov=$(awk -F, -v b="$name" -v c="$o" '$2 == b && $3 == c && $4 != "nan" { print $4 }' "$raw" | median)
			unit=$(awk -F, -v b="$name" '$2 == b && $5 != "-" { u = $5 } END { print u }' "$raw")
			printf '%-10s %-11s %12s %-11s %12s %7s %s\n' "$name" "$w" "$wv" "$o" "$ov" \
				"$(awk -v a="$wv" -v b="$ov" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "nan" }')" "$unit"
		done
	done
	echo "(medians of $rounds rounds; ratio = weft / other: lower is better for usec, higher for MB/s)"
} | tee "$out/summary.txt"
