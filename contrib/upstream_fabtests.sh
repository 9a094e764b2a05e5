#!/bin/bash
# SPDX-License-Identifier: MIT
# upstream_fabtests.sh: libfabric's own fabtests (its release tarball, kept
# outside this repository as test data) as a conformance suite. Builds the
# suite once into a cache, runs its runfabtests.sh over weft's providers and,
# for comparison, over Debian's libfabric, and prints passed / failed /
# notrun / excluded per target and suite. See weft_fabtests(1).
#
# Nothing here knows a provider by name: a target is weft-NAME or
# debian-NAME for any NAME runfabtests.sh -p accepts. What a weft provider
# needs to run (settings, out-of-band address exchange) is in
# contrib/upstream_fabtests/NAME.conf, and what it is excused from in
# contrib/upstream_fabtests/exclude-NAME; both are optional.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
default_targets="weft-shm weft-srd debian-shm debian-tcp"
conf_dir=$top/contrib/upstream_fabtests

usage() {
	cat <<EOF
usage: upstream_fabtests.sh [options]
  -a TARBALL   fabtests release tarball (default: \$WEFT_UPSTREAM_FABTESTS, else
               ../shared/upstream/fabtests-1.17.0.tar.gz next to the repository)
  -c DIR       cache for the built suite (default: \$XDG_CACHE_HOME/weft/upstream-fabtests)
  -L DIR       weft's libfabric.so.1 (default: _install/lib/weft, else build/weft/.libs)
  -t SUITES    runfabtests suites, comma separated: quick (default), standard,
               unit, functional, short
  -p PROVS     weft's providers to run, comma separated (weft-PROV targets;
               any provider weft has, e.g. shm,srd,tcp)
  -d PROVS     Debian's libfabric providers to run (debian-PROV targets)
  -r TARGETS   comma separated weft-PROV / debian-PROV targets
               (-p, -d and -r add up; none given: ${default_targets// /, })
  -E VAR=VALUE a setting for the weft targets (repeatable), beside their
               contrib/upstream_fabtests/PROV.conf
  -b           weft targets exchange addresses out of band (runfabtests -b),
               as PROV.conf's "oob" line asks for one provider
  -e PATTERN   also exclude tests matching this regex (repeatable), e.g. '^fi_bw '
  -x FILE      also exclude the tests FILE lists (repeatable; exclude-shm's format)
  -T SEC       timeout of each test program (default 60)
  -o FILE      also write the table to FILE
  -k DIR       keep runfabtests' logs (one per target and suite) in DIR
  -n           no exclude files: hold weft to every test
  -v           print each run's full runfabtests log
  --tap        print TAP, one line per upstream test (for make check)
  --build-only build the suite into the cache and print its directory
Exit status: 0 all passed, 1 a test failed, 2 usage or build error,
77 skipped (no tarball; with --tap a "1..0 # SKIP" plan instead).
EOF
}

tarball=${WEFT_UPSTREAM_FABTESTS:-}
cache=
weftlib=
suites=quick
targets=
weft_env=()
weft_oob=0
extra_excl=()
extra_files=()
timeout_s=60
outfile=
keepdir=
use_excl=1
verbose=0
tap=0
build_only=0

while [ $# -gt 0 ]; do
	case "$1" in
	-a) tarball=$2; shift 2 ;;
	-c) cache=$2; shift 2 ;;
	-L) weftlib=$2; shift 2 ;;
	-t) suites=${2//,/ }; shift 2 ;;
	-r) targets+=" ${2//,/ }"; shift 2 ;;
	-p) for p in ${2//,/ }; do targets+=" weft-$p"; done; shift 2 ;;
	-d) for p in ${2//,/ }; do targets+=" debian-$p"; done; shift 2 ;;
	-E) weft_env+=("$2"); shift 2 ;;
	-b) weft_oob=1; shift ;;
	-e) extra_excl+=("$2"); shift 2 ;;
	-x) extra_files+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
	-T) timeout_s=$2; shift 2 ;;
	-o) outfile=$2; shift 2 ;;
	-k) keepdir=$2; shift 2 ;;
	-n) use_excl=0; shift ;;
	-v) verbose=1; shift ;;
	--tap) tap=1; shift ;;
	--build-only) build_only=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "upstream_fabtests: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
done

die() { echo "upstream_fabtests: $*" >&2; exit 2; }

[ -n "${targets// /}" ] || targets=$default_targets
# A provider name goes into file names and runfabtests' command line.
for t in $targets; do
	[[ $t =~ ^(weft|debian)-[A-Za-z0-9_\;+.-]+$ ]] ||
		die "target $t is not weft-PROV or debian-PROV"
done
for e in ${weft_env[@]+"${weft_env[@]}"}; do
	[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "-E $e is not VAR=VALUE"
done
for s in $suites; do
	case $s in quick|standard|unit|functional|short) ;; *) die "unknown suite $s" ;; esac
done

# The repository sits next to shared/ (CI clones it there). A git worktree
# elsewhere finds it next to its main checkout instead.
default_tarball() {
	local name=shared/upstream/fabtests-1.17.0.tar.gz common
	if [ -f "$top/../$name" ]; then
		echo "$top/../$name"
		return
	fi
	common=$(git -C "$top" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || common=
	if [ -n "$common" ] && [ -f "$common/../../$name" ]; then
		echo "$(cd "$common/../.." && pwd)/$name"
		return
	fi
	echo "$top/../$name"
}

[ -n "$tarball" ] || tarball=$(default_tarball)
if [ ! -f "$tarball" ]; then
	reason="upstream fabtests tarball not found at $tarball (set WEFT_UPSTREAM_FABTESTS or -a)"
	if [ "$tap" = 1 ]; then
		echo "1..0 # SKIP $reason"
		exit 0
	fi
	echo "upstream_fabtests: skipped: $reason" >&2
	exit 77
fi

# ---- build, once per tarball content ----

# Builds into $prefix unless a complete build is there; log in $build_log.
build_suite() {
	local src
	[ -f "$prefix/.built" ] && return 0
	mkdir -p "$cache"
	# Two make checks (plain and sanitizer builds) may start at once.
	exec 9>"$cache/.lock"
	flock 9
	if [ ! -f "$prefix/.built" ]; then
		rm -rf "$prefix" "$prefix.src"
		mkdir -p "$prefix.src"
		(
			tar -xzf "$tarball" -C "$prefix.src"
			src=$(find "$prefix.src" -maxdepth 4 -path '*/scripts/runfabtests.sh' | head -1)
			[ -n "$src" ] || { echo "no scripts/runfabtests.sh in $tarball"; exit 1; }
			cd "$(dirname "$src")/.."
			./autogen.sh
			./configure --with-libfabric=/usr --prefix="$prefix"
			nice -n 5 make -j2
			make install
		) >"$build_log" 2>&1 || { rm -rf "$prefix" "$prefix.src"; exec 9>&-; return 1; }
		rm -rf "$prefix.src"
		touch "$prefix/.built"
	fi
	exec 9>&-
}

[ -n "$cache" ] || cache=${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/weft/upstream-fabtests
prefix="$cache/$(sha256sum "$tarball" | cut -c1-16)"
build_log="$prefix.build.log"
if ! build_suite; then
	tail -n 30 "$build_log" >&2
	die "building the suite from $tarball failed (log: $build_log)"
fi
bindir="$prefix/bin"
[ -x "$bindir/runfabtests.sh" ] || die "no runfabtests.sh in $bindir"
if [ "$build_only" = 1 ]; then
	echo "$prefix"
	exit 0
fi

if [ -z "$weftlib" ]; then
	for d in "$top/_install/lib/weft" "$top/build/weft/.libs"; do
		[ -e "$d/libfabric.so.1" ] && { weftlib=$d; break; }
	done
fi
# The programs run in another directory: a relative path would name nothing
# there, and the loader would quietly take the system's libfabric instead.
[ -z "$weftlib" ] || [ ! -d "$weftlib" ] || weftlib=$(cd "$weftlib" && pwd)

# ---- targets ----

# Reads contrib/upstream_fabtests/PROV.conf into env_vars and oob: one
# directive a line, "env VAR=VALUE" (a setting the provider needs to run
# here) or "oob" (no host:port names its endpoints, so runfabtests.sh -b
# exchanges addresses over a socket).
read_conf() { # FILE
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
		if [[ $line =~ ^env[[:space:]]+([A-Za-z_][A-Za-z0-9_]*=.*)$ ]]; then
			env_vars+=("${BASH_REMATCH[1]}")
		elif [[ $line =~ ^oob[[:space:]]*$ ]]; then
			oob=1
		else
			die "$1: cannot read '$line'"
		fi
	done <"$1"
}

# Sets prov, oob, excl_file and env_vars (VAR=VALUE words) for one target.
target_setup() {
	prov=${1#*-} oob=0 excl_file='' env_vars=()
	case $1 in
	weft-*)
		if [ -z "$weftlib" ] || [ ! -e "$weftlib/libfabric.so.1" ]; then
			die "no weft libfabric.so.1 (build weft or pass -L)"
		fi
		env_vars=("LD_LIBRARY_PATH=$weftlib")
		# A run that quietly falls back to the system's library would
		# report libfabric's results as weft's.
		case $(LD_LIBRARY_PATH=$weftlib ldd "$bindir/fi_rdm") in
		*"$weftlib/libfabric.so.1 "*) ;;
		*) die "the programs do not load $weftlib/libfabric.so.1" ;;
		esac
		# Sanitizer builds: the upstream programs do not carry the
		# runtime that weft's instrumented library needs.
		if [ -n "${WEFT_TEST_PRELOAD:-}" ]; then
			env_vars+=("LD_PRELOAD=$WEFT_TEST_PRELOAD"
				   "ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}")
		fi
		[ ! -f "$conf_dir/$prov.conf" ] || read_conf "$conf_dir/$prov.conf"
		env_vars+=(${weft_env[@]+"${weft_env[@]}"})
		# A provider this weft does not have would only show notruns.
		if command -v fi_info >/dev/null &&
		   ! env ${env_vars[@]+"${env_vars[@]}"} fi_info -l 2>/dev/null |
			grep -qx "${prov%%;*}:"; then
			die "weft in $weftlib has no provider ${prov%%;*} (fi_info -l)"
		fi
		[ "$weft_oob" = 0 ] || oob=1
		[ ! -f "$conf_dir/exclude-$prov" ] || excl_file="$conf_dir/exclude-$prov"
		;;
	esac
}

# runfabtests.sh's cleanup kills every process on the host whose name starts
# with fi_ (other users' fi_pingpong included). This ps, first on its PATH,
# shows it only the processes of its own session. It drops LD_PRELOAD: in
# sanitizer runs the environment preloads libasan, under which procps' ps
# deadlocks at start.
make_ps_shim() { # DIR
	local real_ps
	real_ps=$(command -v ps) || die "ps not found"
	cat >"$1/ps" <<EOF
#!/bin/sh
sid=\$(env -u LD_PRELOAD $real_ps -o sid= -p \$\$ | tr -d ' ')
exec env -u LD_PRELOAD $real_ps -o comm,pid -s "\$sid"
EOF
	chmod +x "$1/ps"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/upstream_fabtests.XXXXXX")
# below the kernel's ephemeral range: another test's outgoing connection
# could hold a port inside it
eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
port=$((10000 + $$ % (eph - 10200)))
rft_pid=
# shellcheck disable=SC2317  # called by the EXIT trap
on_exit() {
	# Stop a run still going (interrupted): every process of its session.
	if [ -n "$rft_pid" ]; then
		ps -o pid= -s "$rft_pid" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap on_exit EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/shim"
make_ps_shim "$work/shim"

# One runfabtests.sh run; its -v log (YAML) goes to $3.
run_one() { # TARGET SUITE LOG
	local target=$1 suite=$2 log=$3 args=() e
	target_setup "$target"
	args=(-v -T "$timeout_s" -t "$suite" -p "$bindir")
	if [ "$oob" = 1 ]; then
		args+=(-b)
	else
		# Servers bind (and clients reach) a port of this run instead
		# of the default 9228, which concurrent runs on the host (and
		# tests naming a shm endpoint "9228") would share.
		args+=(-L "-B $port" -C "-P $port")
	fi
	if [ "$use_excl" = 1 ] && [ -n "$excl_file" ]; then
		args+=(-f "$excl_file")
	fi
	for e in ${extra_files[@]+"${extra_files[@]}"}; do
		[ -f "$e" ] || die "exclude file $e missing"
		args+=(-f "$e")
	done
	for e in ${extra_excl[@]+"${extra_excl[@]}"}; do args+=(-e "$e"); done
	mkdir -p "$work/$target.$suite"
	# -b exchanges addresses over fabtests' fixed TCP port: one such run
	# on the host at a time (the lock lives in the shared cache).
	[ "$oob" = 0 ] || exec 8>"$cache/.oob.lock"
	[ "$oob" = 0 ] || flock 8
	# runfabtests.sh writes its temporary files into its working directory
	# and passes -E settings to remote hosts only: the target's settings go
	# into its own environment. setsid: its session is what the ps shim
	# shows and what on_exit stops.
	(
		cd "$work/$target.$suite"
		unset FI_PROVIDER LD_LIBRARY_PATH LD_PRELOAD
		exec env PATH="$work/shim:$bindir:$PATH" ${env_vars[@]+"${env_vars[@]}"} \
			setsid "$bindir/runfabtests.sh" "${args[@]}" "$prov"
	) >"$log" 2>&1 </dev/null &
	rft_pid=$!
	# Its exit status counts failures, which the log lists anyway.
	wait "$rft_pid" || true
	rft_pid=
	[ "$oob" = 0 ] || exec 8>&-
}

# Results from a -v log: "RESULT<TAB>NAME" lines (NAME without -p "prov").
results() { # LOG
	awk '
	/^- name: / { sub(/^- name: +/, ""); sub(/ -p "[^"]*"$/, ""); name = $0 }
	/^  result: / { sub(/^  result: +/, ""); split($0, r, " "); print r[1] "\t" name }
	' "$1"
}

# Whether a pattern of FILE matches NAME.
excl_matches() { # FILE NAME
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
		[[ $2 =~ $line ]] && return 0
	done <"$1"
	return 1
}

# The comment block above the exclude pattern that matches NAME.
excl_reason() { # FILE NAME
	local file=$1 name=$2 line reason=
	[ -f "$file" ] || return 0
	while IFS= read -r line || [ -n "$line" ]; do
		if [[ $line =~ ^[[:space:]]*$ ]]; then
			reason=
		elif [[ $line =~ ^[[:space:]]*#[[:space:]]?(.*) ]]; then
			reason="${reason:+$reason }${BASH_REMATCH[1]}"
		elif [[ $name =~ $line ]]; then
			echo "$reason"
			return 0
		fi
	done <"$file"
}

# Why TARGET's test NAME was excluded: "-" when a -x file (the selection of
# this run) left it out, else the provider's exclude file's reason, else
# the -e patterns.
tap_excl_reason() { # TARGET NAME
	local r f
	for f in ${extra_files[@]+"${extra_files[@]}"}; do
		if excl_matches "$f" "$2"; then
			echo "-"
			return
		fi
	done
	target_setup "$1"
	if [ "$use_excl" = 1 ] && [ -n "$excl_file" ]; then
		r=$(excl_reason "$excl_file" "$2")
		[ -z "$r" ] || { echo "$r"; return; }
	fi
	echo "matched -e"
}

# The log of one failed test, indented (from the -v YAML).
fail_output() { # LOG NAME
	awk -v want="$2" '
	/^- name: / { n = $0; sub(/^- name: +/, "", n); sub(/ -p "[^"]*"$/, "", n); on = (n == want) ; next }
	on && /^  (server|client)_(cmd|stdout)/ { print; next }
	on && /^    / { print }
	' "$1" | tail -n 60
}

tap_n=0
tap_left_out=0
table=()
any_fail=0
for target in $targets; do
	for suite in $suites; do
		log="$work/$target.$suite.log"
		run_one "$target" "$suite" "$log"
		[ -z "$keepdir" ] || { mkdir -p "$keepdir"; cp "$log" "$keepdir/"; }
		[ "$verbose" = 0 ] || cat "$log"
		pass=0 fail=0 notrun=0 excl=0
		while IFS=$'\t' read -r res name; do
			case $res in
			Pass) pass=$((pass + 1)) ;;
			Notrun) notrun=$((notrun + 1)) ;;
			Excluded) excl=$((excl + 1)) ;;
			*) fail=$((fail + 1)) ;;
			esac
			[ "$tap" = 1 ] || continue
			if [ "$res" = Excluded ]; then
				r=$(tap_excl_reason "$target" "$name")
				# Left out by a -x file (a selection, such as
				# make check's for time): not a test of this run.
				if [ "$r" = "-" ]; then
					tap_left_out=$((tap_left_out + 1))
					continue
				fi
			fi
			tap_n=$((tap_n + 1))
			case $res in
			Pass) echo "ok $tap_n - $target: $name" ;;
			Notrun) echo "ok $tap_n - $target: $name # SKIP notrun: the provider answered -FI_ENODATA/-FI_ENOSYS (a capability it does not offer)" ;;
			Excluded) echo "ok $tap_n - $target: $name # SKIP excluded: $r" ;;
			*)
				echo "not ok $tap_n - $target: $name ($res)"
				fail_output "$log" "$name" | sed 's/^/# /' ;;
			esac
		done < <(results "$log")
		if [ $((pass + fail + notrun + excl)) -eq 0 ]; then
			# runfabtests.sh itself failed: no result at all
			fail=1
			if [ "$tap" = 1 ]; then
				tap_n=$((tap_n + 1))
				echo "not ok $tap_n - $target: $suite: runfabtests.sh reported nothing"
				sed 's/^/# /' "$log" | tail -n 20
			else
				tail -n 20 "$log" >&2
			fi
		fi
		[ "$fail" -eq 0 ] || any_fail=1
		table+=("$(printf '%-11s %-9s %6d %6d %6d %8d' "$target" "$suite" \
			"$pass" "$fail" "$notrun" "$excl")")
	done
done

print_table() {
	printf '%-11s %-9s %6s %6s %6s %8s\n' target suite passed failed notrun excluded
	printf '%s\n' "${table[@]}"
}
if [ "$tap" = 1 ]; then
	echo "1..$tap_n"
	print_table | sed 's/^/# /'
	[ "$tap_left_out" = 0 ] ||
		echo "# $tap_left_out tests left out by ${extra_files[*]}"
else
	echo "# upstream fabtests from $tarball, built in $prefix"
	[ -z "$weftlib" ] || echo "# weft: $weftlib"
	print_table
fi
[ -z "$outfile" ] || print_table >"$outfile"
exit "$any_fail"
