#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the MPI programs of tests/mpi run by Debian's Open MPI (4.1)
# on weft's libfabric.so.1 from the build tree, over shm, over srd on
# softsrd and over tcp on loopback, with 2, 4 and 8 ranks: one TAP line
# per program, provider and rank count, the program's own check lines as
# diagnostics.
#
# Open MPI runs the way a user would run it: mpirun with MCA options and
# nothing in the ranks' environment but what -x passes (LD_LIBRARY_PATH to
# weft, and the provider's own setting), so a run here is a command line a
# user can copy. Two-sided and collective traffic goes through pml cm + mtl
# ofi; one-sided through pml ob1 + btl ofi (in its two-sided mode too, since
# ob1 needs a btl that reaches every peer) + osc rdma.
#
# MPI_RANKS, MPI_PROVS, MPI_PROGS: subsets to run (default: all).
# MPI_TIMEOUT: seconds one run may take (default 120).
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
libdir="$top_builddir/weft/.libs"
progdir="$top_builddir/tests/mpi"
ranks="${MPI_RANKS:-2 4 8}"
provs="${MPI_PROVS:-shm srd tcp}"
progs="${MPI_PROGS:-mpi_p2p mpi_coll mpi_threads mpi_rma mpi_grad}"
limit="${MPI_TIMEOUT:-120}"

# shellcheck disable=SC2086 # splitting is the point
count_words() { set -- $1; echo $#; }
plan=$(( $(count_words "$ranks") * $(count_words "$provs") * $(count_words "$progs") ))

mpirun=$(command -v mpirun || true)
if [ -z "$mpirun" ] || [ ! -x "$progdir/mpi_p2p" ]; then
	echo "1..0 # SKIP Open MPI is not installed (mpirun or mpicc not found when configured; Debian: openmpi-bin libopenmpi-dev)"
	exit 0
fi
echo "1..$plan"
if [ ! -e "$libdir/libfabric.so.1" ]; then
	i=0
	while [ $i -lt "$plan" ]; do
		i=$((i + 1))
		echo "not ok $i - $libdir/libfabric.so.1 was not built"
	done
	exit 1
fi

# Debian's python3 carries python3-mpi4py and python3-numpy; a python3
# earlier on PATH (pyenv, venv) may lack them.
python=
for p in ${PYTHON:-} /usr/bin/python3 python3; do
	if "$p" -c 'import mpi4py, numpy' 2>/dev/null; then
		python=$p
		break
	fi
done

root_opt=
[ "$(id -u)" -eq 0 ] && root_opt=--allow-run-as-root

# Sanitizer builds: Open MPI and python are not instrumented, so the ASan
# runtime that weft's libfabric.so.1 needs is preloaded into the ranks (and
# Open MPI's own leaks at exit are not weft's to report).
san_opts=
if [ -n "${WEFT_TEST_PRELOAD:-}" ]; then
	san_opts="-x LD_PRELOAD=$(printf '%s' "$WEFT_TEST_PRELOAD" | tr ' ' ':') -x ASAN_OPTIONS=detect_leaks=0"
fi

prov_opts() { # PROV: the provider's setting, passed to the ranks
	case $1 in
	srd) echo "-x FI_SRD_DEVICE=soft" ;;
	shm) echo "-x FI_SHM_REMOTE_COMM=1" ;;
	tcp) echo "-x FI_TCP_IFACE=lo" ;;
	esac
}

transport_opts() { # PROG PROV
	case $1 in
	mpi_rma) echo "--mca pml ob1 --mca btl self,ofi --mca btl_ofi_mode 2" \
		"--mca btl_ofi_provider_include $2 --mca osc rdma" ;;
	*) echo "--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include $2" ;;
	esac
}

checks_of() { # PROG: number of "ok" lines a passing run prints
	case $1 in
	mpi_p2p) echo 4 ;;
	mpi_coll) echo 3 ;;
	mpi_threads) echo 2 ;;
	mpi_rma) echo 5 ;;
	mpi_grad) echo 3 ;;
	esac
}

out=$(mktemp -d "${TMPDIR:-/tmp}/weft-mpi.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT

n=0
for prog in $progs; do
	for prov in $provs; do
		for np in $ranks; do
			n=$((n + 1))
			name="$prog $prov np=$np"
			if [ "$prog" = mpi_grad ]; then
				if [ -z "$python" ]; then
					echo "not ok $n - $name: no python3 with mpi4py and numpy (Debian: python3-mpi4py python3-numpy)"
					continue
				fi
				cmd="$python $top_srcdir/tests/mpi/mpi_grad.py"
			else
				cmd="$progdir/$prog"
			fi
			start=$(date +%s)
			# shellcheck disable=SC2046,SC2086
			env -i PATH="$PATH" HOME="${HOME:-/tmp}" TMPDIR="${TMPDIR:-/tmp}" \
				timeout -k 10 "$limit" "$mpirun" $root_opt --oversubscribe -np "$np" \
				-x LD_LIBRARY_PATH="$libdir" $(prov_opts "$prov") $san_opts \
				$(transport_opts "$prog" "$prov") $cmd \
				>"$out/stdout" 2>"$out/stderr" </dev/null
			rc=$?
			secs=$(( $(date +%s) - start ))
			oks=$(grep -c '^ok - ' "$out/stdout")
			want=$(checks_of "$prog")
			if [ $rc -eq 0 ] && [ "$oks" -eq "$want" ] && ! grep -q '^not ok' "$out/stdout"; then
				echo "ok $n - $name (${secs} s)"
				sed 's/^/# /' "$out/stdout"
			else
				why="exit status $rc"
				[ $rc -eq 124 ] && why="timed out after $limit s"
				echo "not ok $n - $name: $why, $oks of $want checks passed"
				sed 's/^/# /' "$out/stdout"
				grep -v '^[[:space:]]*$' "$out/stderr" | head -n 200 | sed 's/^/#   /'
			fi
		done
	done
done
# The TAP lines carry the results; a non-zero status would count twice.
exit 0
