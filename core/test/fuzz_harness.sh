# SPDX-License-Identifier: MIT
# Sourced by the providers' test_*_fuzz.sh: build one libFuzzer harness
# from the parser's own source files (never the whole library) with clang,
# ASan and UBSan, and run it for a bounded time. A crash, a sanitizer
# report, a leak or a broken invariant (the harness traps) fails the test.
# Skipped, saying why, without a clang that has libFuzzer (contrib/setup.sh
# installs one).
#
#   fuzz_harness NAME SECONDS CLANG_ARGS... [-- SUPPORT_SOURCES...]
#
# CLANG_ARGS are the harness, the parser's sources and -I flags; include/
# and the build's config.h are added. SUPPORT_SOURCES are what the parser
# calls but is not under test (the atomic tables, the log stubs): built
# with the sanitizers but without coverage and optimisation, so libFuzzer
# does not steer by their branches and make check does not wait for
# clang to optimise them. The harness may write seed inputs into the corpus
# from LLVMFuzzerInitialize: it is told where by WEFT_FUZZ_SEEDS.
# FUZZ_KEEP_DIR (contrib/bench/fuzz_all.sh): keep the run's log and any
# failing input there.
# The caller sets top_srcdir and top_builddir (make check passes them).
CLANG=${CLANG:-clang}

fuzz_harness() {
	name=$1
	seconds=$2
	shift 2
	echo "1..2"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/${name}.XXXXXX") || exit 1
	trap 'rm -rf "$tmp"' EXIT
	printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ return (int)(d && n && 0); }\n' >"$tmp/probe.c"
	if ! command -v "$CLANG" >/dev/null 2>&1 ||
	   ! "$CLANG" -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1; then
		echo "ok 1 # SKIP $CLANG with libFuzzer is not installed (Debian: clang)"
		echo "ok 2 # SKIP nothing to run"
		exit 0
	fi
	# the arguments before "--" to the back, then build what follows it
	nmain=0
	for a in "$@"; do
		[ "$a" = "--" ] && break
		nmain=$((nmain + 1))
	done
	i=0
	while [ $i -lt $nmain ]; do
		a=$1
		shift
		set -- "$@" "$a"
		i=$((i + 1))
	done
	ok=1
	nsup=0
	if [ "${1-}" = "--" ]; then
		shift
		while [ $# -gt $nmain ]; do
			nsup=$((nsup + 1))
			"$CLANG" -g -O0 -fsanitize=address,undefined \
				-fno-sanitize-recover=undefined \
				-I"$top_srcdir/include" -I"$top_builddir" -c "$1" \
				-o "$tmp/support$nsup.o" >>"$tmp/cc.log" 2>&1 || ok=0
			shift
		done
	fi
	[ $nsup -gt 0 ] && set -- "$@" "$tmp"/support*.o
	if [ $ok = 1 ] && "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined \
		-I"$top_srcdir/include" -I"$top_builddir" \
		"$@" -o "$tmp/fuzz" >>"$tmp/cc.log" 2>&1; then
		echo "ok 1 - $name built with libFuzzer, ASan, UBSan"
	else
		echo "not ok 1 - $name does not build"
		sed 's/^/# /' "$tmp/cc.log"
		echo "not ok 2 - not run"
		exit 0
	fi
	if [ "$seconds" -le 0 ] 2>/dev/null; then
		echo "ok 2 # SKIP fuzzing time set to $seconds s"
		exit 0
	fi
	keep=${FUZZ_KEEP_DIR:-$tmp}
	mkdir -p "$tmp/corpus" "$keep"
	# a failing input lands in $keep as crash-*, leak-* or timeout-*
	if WEFT_FUZZ_SEEDS="$tmp/corpus" "$tmp/fuzz" \
		-max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$keep/" \
		"$tmp/corpus" >"$keep/run.log" 2>&1; then
		execs=$(grep -m1 'stat::number_of_executed_units' "$keep/run.log" |
			awk '{print $2}')
		cov=$(grep 'cov: ' "$keep/run.log" | tail -n 1 |
		      sed -n 's/.*cov: \([0-9]*\).*/\1/p')
		echo "ok 2 - ${seconds} s of fuzzing: ${execs} inputs, ${cov:-?} edges covered, no failure"
	else
		echo "not ok 2 - the fuzzer found a failing input"
		tail -n 60 "$keep/run.log" | sed 's/^/# /'
		for f in "$keep"/crash-* "$keep"/leak-* "$keep"/timeout-*; do
			[ -f "$f" ] || continue
			echo "# input $(basename "$f"):"
			od -A d -t x1 "$f" | head -n 40 | sed 's/^/#   /'
		done
	fi
	exit 0
}
