#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The man pages agree with the settings tables. weft_info -e lists every
# setting with the help text its table generates, ending in
# "(default: D; RANGE)". Each one must have its own entry in its page
# (FI_SRD_SOFT_* in fi_softsrd(7), FI_SRD_* in fi_srd(7), FI_SHM_* in
# fi_shm(7), FI_TCP_* in fi_tcp(7),
# FI_COLL_* in fi_coll(7), core's in weft(7)):
#
#     **FI_SRD_CQ_BATCH**=1..256
#     :   ... Default: 32.
#
# whose text names the same default ("default D" or "default: D") and the
# same range (the table's words: "1..256", "at least 16", "a power of two in
# 2..4096", or for a choice every accepted value). And every setting a page
# has an entry for must exist. TAP, one test per setting.

: "${top_builddir:?top_builddir must be set}"
: "${top_srcdir:?top_srcdir must be set}"

weft_info="$top_builddir/core/weft_info"
man="$top_srcdir/man"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft_man.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS

if [ ! -x "$weft_info" ]; then
	echo "1..0 # SKIP weft_info was not built"
	exit 0
fi

# Every FI_* of the environment out, so only the tables' defaults show.
env -i PATH="$PATH" ASAN_OPTIONS="$ASAN_OPTIONS" \
	${LD_LIBRARY_PATH:+LD_LIBRARY_PATH="$LD_LIBRARY_PATH"} \
	"$weft_info" -e >"$tmp/env" 2>"$tmp/err"
status=$?

# "NAME<TAB>help" per setting.
awk '/^# FI_[A-Z0-9_]+: / { name = substr($2, 1, length($2) - 1); next }
     /^# / && name != "" { print name "\t" substr($0, 3); name = "" }' \
	"$tmp/env" >"$tmp/settings"

page_of() {
	case $1 in
	FI_SRD_SOFT_*) echo fi_softsrd.7.md ;;
	FI_SRD_*) echo fi_srd.7.md ;;
	FI_SHM_*) echo fi_shm.7.md ;;
	FI_TCP_*) echo fi_tcp.7.md ;;
	FI_COLL_*) echo fi_coll.7.md ;;
	*) echo weft.7.md ;;
	esac
}

# The entry of setting $1 in page $2's SETTINGS (or ENVIRONMENT) section,
# on one line, lower case, without markup: its term line (starting with
# **NAME** and naming no other setting) and the definition under it, up to
# the next paragraph or term.
entry_of() {
	awk -v want="**$1**" '
	/^# / { section = $0 ~ /^# (SETTINGS|ENVIRONMENT)$/ }
	!section { next }
	state == 0 {
		if (term && /^:/) { state = 1; text = prev " " $0; next }
		term = index($0, want) == 1 && gsub(/\*\*FI_/, "&") == 1
		prev = $0
		next
	}
	$0 == "" { blank = 1; next }
	blank && $0 !~ /^[ \t:]/ { exit }
	{ blank = 0; text = text " " $0 }
	END { print text }' "$man/$2" |
		tr -d '*`' | tr 'A-Z' 'a-z' | tr -s ' \t' '  '
}

# Regex-quote $1 for grep -E.
requote() {
	printf '%s\n' "$1" | sed 's/[][\.*^$/+?(){}|]/\\&/g'
}

# Names of the settings the pages have entries for: term lines (lines
# followed by a ":" definition line) of their SETTINGS or ENVIRONMENT
# section.
for page in weft.7.md fi_srd.7.md fi_softsrd.7.md fi_shm.7.md fi_tcp.7.md fi_coll.7.md; do
	awk '/^# / { section = $0 ~ /^# (SETTINGS|ENVIRONMENT)$/ }
	     section && term && /^:/ { print prev }
	     { term = /^\*\*FI_/; prev = $0 }' "$man/$page"
done | grep -o '\*\*FI_[A-Z0-9_]*\*\*' | tr -d '*' | sort -u >"$tmp/documented"

count=$(wc -l <"$tmp/settings")
echo "1..$((count + 2))"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }

if [ "$status" -eq 0 ] && [ "$count" -gt 0 ] &&
   ! grep -q 'settings table' "$tmp/err"; then
	ok "weft_info -e lists $count settings, every table consistent"
else
	not_ok "weft_info -e lists the settings (status $status)"
	sed 's/^/# /' "$tmp/err" | head -20
fi

cut -f1 "$tmp/settings" | sort -u >"$tmp/listed"
unknown=$(comm -23 "$tmp/documented" "$tmp/listed" | tr '\n' ' ')
if [ -z "$unknown" ]; then
	ok "every setting the man pages document exists"
else
	not_ok "the man pages document settings that do not exist: $unknown"
fi

tab=$(printf '\t')
while IFS="$tab" read -r name help; do
	page=$(page_of "$name")
	text=$(entry_of "$name" "$page")
	tail=$(printf '%s\n' "$help" |
	       sed -n 's/.*(\(default: [^()]*\))$/\1/p' | tr 'A-Z' 'a-z')
	def=$(printf '%s\n' "$tail" | sed 's/^default: //; s/; .*//')
	range=$(printf '%s\n' "$tail" | sed -n 's/^[^;]*; //p')
	why=
	if [ -z "$text" ]; then
		why="no entry of its own in $page"
	elif [ -z "$tail" ]; then
		why="help text without its default: $help"
	elif ! printf '%s\n' "$text" |
	     grep -Eq "default:? $(requote "$def")([^0-9a-z]|$)"; then
		why="$page does not say default $def"
	else
		case $range in
		"one of "*)
			for v in $(printf '%s\n' "${range#one of }" | tr -d ','); do
				printf '%s\n' "$text" |
				grep -Eq "(^|[^0-9a-z_])$(requote "$v")([^0-9a-z_]|$)" ||
				why="$page does not name the value $v"
			done ;;
		?*)
			printf '%s\n' "$text" | grep -Fq "$range" ||
				why="$page does not say $range" ;;
		esac
	fi
	if [ -z "$why" ]; then
		ok "$name: default $def${range:+, $range}, as in $page"
	else
		not_ok "$name: $why"
		[ -z "$text" ] || printf '# entry: %s\n' "$text"
	fi
done <"$tmp/settings"
