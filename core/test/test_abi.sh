#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI of libfabric.so.1 / libweft.so.1: exactly libfabric's 16 core
# symbols with their version nodes, nothing else exported, the right
# SONAME, no weak reference to weft's own code, and Debian's fi_info
# (libfabric-bin) running on weft. TAP.

: "${top_builddir:?top_builddir must be set}"
OBJDUMP=${OBJDUMP:-objdump}
NM=${NM:-nm}

required='fi_getinfo FABRIC_1.3
fi_freeinfo FABRIC_1.3
fi_dupinfo FABRIC_1.3
fi_fabric FABRIC_1.1
fi_version FABRIC_1.0
fi_strerror FABRIC_1.0
fi_tostr FABRIC_1.0
fi_param_define FABRIC_1.0
fi_param_get FABRIC_1.0
fi_getparams FABRIC_1.0
fi_freeparams FABRIC_1.0
fi_log FABRIC_1.0
fi_log_enabled FABRIC_1.0
fi_tostr_r FABRIC_1.4
fi_open FABRIC_1.5
fi_log_ready FABRIC_1.6'

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
check() { name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "$required" | sort > "$tmp/required"

# "name version" for every defined dynamic symbol except version nodes.
exported() {
	"$OBJDUMP" -T "$1" | awk '$0 ~ /^[0-9a-f]+ / && $0 !~ /\*UND\*/ && $0 !~ /\*ABS\*/ {
		print $NF, $(NF-1) }' | sort
}

soname() {
	"$OBJDUMP" -p "$1" | awk '$1 == "SONAME" { print $2 }'
}

echo "1..10"

for lib in weft/.libs/libfabric.so.1:libfabric.so.1 .libs/libweft.so.1:libweft.so.1; do
	path=$top_builddir/${lib%%:*}
	want_soname=${lib##*:}
	if [ ! -f "$path" ]; then
		not_ok "$want_soname exists ($path)"
		not_ok "$want_soname exports exactly the libfabric ABI"
		not_ok "$want_soname SONAME"
		not_ok "$want_soname has no weak reference to weft's own code"
		continue
	fi
	ok "$want_soname exists"
	exported "$path" > "$tmp/got"
	if cmp -s "$tmp/required" "$tmp/got"; then
		ok "$want_soname exports exactly the libfabric ABI"
	else
		not_ok "$want_soname exports exactly the libfabric ABI"
		diff "$tmp/required" "$tmp/got" | sed 's/^/# /'
	fi
	check "$want_soname SONAME is $want_soname" test "$(soname "$path")" = "$want_soname"
	# Every part of weft is referenced strongly: a part left out of the link
	# must fail the build, not leave a NULL that silently drops a feature.
	weak=$("$NM" "$path" | awk '$(NF-1) ~ /^[wWvV]$/ &&
		$NF ~ /^(weft|util|srd|softsrd|shm|tcp)_/ { print $NF }')
	check "$want_soname has no weak reference to weft's own code" test -z "$weak"
	[ -z "$weak" ] || printf '# weak: %s\n' $weak
done

# Debian's fi_info, built against libfabric, running on weft.
fi_info=/usr/bin/fi_info
libdir=$top_builddir/weft/.libs
if [ ! -x "$fi_info" ]; then
	skip "fi_info loads weft: $fi_info missing (install libfabric-bin)"
	skip "fi_info -l exits 0: $fi_info missing (install libfabric-bin)"
	exit 0
fi
# A sanitizer build needs its runtime loaded first into an uninstrumented
# program; fi_info's own leaks are not ours to report.
preload=$(ldd "$libdir/libfabric.so.1" 2>/dev/null |
	awk '/libasan|libubsan/ { printf "%s%s", sep, $3; sep = ":" }')
env -u FI_PROVIDER FI_LOG_LEVEL=info FI_LOG_PROV=core LD_LIBRARY_PATH="$libdir" \
	${preload:+LD_PRELOAD="$preload"} ASAN_OPTIONS=detect_leaks=0 \
	"$fi_info" -l > "$tmp/out" 2> "$tmp/err"
status=$?
banner=$(grep -o 'weft [^ ]* (libfabric API 1\.17): [0-9]* built-in provider' "$tmp/err" | head -1)
if [ -n "$banner" ]; then
	ok "fi_info loads weft ($banner)"
else
	not_ok "fi_info loads weft"
	sed 's/^/# /' "$tmp/err" | head -20
fi
nprov=$(printf '%s\n' "$banner" | sed -n 's/.*: \([0-9]*\) built-in provider/\1/p')
if [ "${nprov:-0}" -eq 0 ]; then
	skip "fi_info -l exits 0: this build has no built-in provider yet"
elif [ "$status" -eq 0 ] && [ -s "$tmp/out" ]; then
	ok "fi_info -l exits 0 and lists $nprov provider(s)"
	sed 's/^/# /' "$tmp/out" | head -10
else
	not_ok "fi_info -l exits 0 (status $status)"
	sed 's/^/# /' "$tmp/err" | head -20
fi
