#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The symbol cache (symbols/cache.c, --symbol-cache): what a run learns
# about code addresses is kept in $XDG_CACHE_HOME/heaptrace and read back
# by the next run, which must write the same profile without reading any
# debug information; a cache that does not fit the files any more, or is
# damaged, must cost a miss and nothing else.
#
# usage: symcache.sh HEAPTRACE PROG LIB CASE
#   PROG is progs/dlopen.c's program, LIB its library (dlalloc.c): the
#   library is dlclose'd before the profile is written, so its frames are
#   described when it goes (their lines are otherwise made only when a
#   profile prints them).
#   reuse    a second run: every address named and described from the
#            cache, no rule compiled, none asked for by the stubs (the
#            cached ones are published first), the same profile
#            (addresses aside)
#   off      --symbol-cache=no: no cache directory, the same profile
#   corrupt  each cache file damaged (a byte flipped, or cut short): the
#            same profile, and the files rewritten whole
#   stale    the program's file replaced by a copy (a new inode and
#            time): its addresses are looked up again, libc's still come
#            from the cache; one cache file per build-id is kept
# Exit 0 pass, 1 fail, 99 harness error.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 4 ] || usage "symcache.sh HEAPTRACE PROG LIB CASE"
ht=$(abspath "$1")
prog=$(abspath "$2")
lib=$(abspath "$3")
case_name=$4
need timeout sed cmp
scratch --keep
cp "$prog" "$tmp/prog"
prog=$tmp/prog

# run NAME [OPTION...]: heaptrace run OPTIONS on the program, cache in
# $tmp/cache; the profile without addresses in $tmp/NAME.tree, stderr in
# $tmp/NAME.err. Fails the case on a non-zero status.
run() {
	local name=$1
	shift
	XDG_CACHE_HOME=$tmp/cache timeout 60 "$ht" run -q --stats=yes \
		--time-unit=B --detailed-freq=1 --threshold=0 "$@" \
		--massif-out-file="$tmp/$name.out" -- "$prog" "$lib" \
		>/dev/null 2>"$tmp/$name.err"
	local st=$?
	[ $st -eq 0 ] || { fail "$name: status $st"; show "$tmp/$name.err"; }
	sed -e 's/0x[0-9A-F]*: //' -e '/^desc:/d' "$tmp/$name.out" \
		>"$tmp/$name.tree"
}

# stat_of NAME WHAT: a count from NAME's stats: named, named_cached,
# described, described_cached, compiled, rules_cached.
stat_of() {
	sed -n 's/.*symbols: \([0-9]*\) addresses named (\([0-9]*\) from the symbol cache), \([0-9]*\) described (\([0-9]*\) from.*/\1 \2 \3 \4/p;
		s/.* \([0-9]*\) rules compiled, \([0-9]*\) read from the symbol cache.*/R \1 \2/p' \
		"$tmp/$1.err" | awk -v what="$2" '
		$1 == "R" { c = $2; r = $3; next }
		{ n = $1; nc = $2; d = $3; dc = $4 }
		END {
			v["named"] = n; v["named_cached"] = nc
			v["described"] = d; v["described_cached"] = dc
			v["compiled"] = c; v["rules_cached"] = r
			print v[what] + 0
		}'
}

same_tree() {
	cmp -s "$tmp/$1.tree" "$tmp/$2.tree" ||
		{ fail "$2's profile is not $1's"; diff "$tmp/$1.tree" "$tmp/$2.tree" | head -20; }
}

cache_files() {
	find "$tmp/cache/heaptrace" -type f 2>/dev/null | sort
}

run first
named=$(stat_of first named)
[ "$named" -gt 0 ] || fail "first run: no address named"
[ "$(stat_of first named_cached)" -eq 0 ] || fail "first run: named from an empty cache"
grep -q 'dl_work (dlalloc.c:' "$tmp/first.out" ||
	fail "the dlclose'd library's frame is not described"
[ -n "$(cache_files)" ] || fail "no cache file written"

case $case_name in
reuse)
	run second
	same_tree first second
	[ "$(stat_of second named_cached)" -eq "$(stat_of second named)" ] ||
		fail "second run: $(stat_of second named_cached) of $(stat_of second named) named from the cache"
	[ "$(stat_of second described_cached)" -eq "$(stat_of second described)" ] ||
		fail "second run: $(stat_of second described_cached) of $(stat_of second described) described from the cache"
	[ "$(stat_of second compiled)" -eq 0 ] ||
		fail "second run compiled $(stat_of second compiled) rules"
	# The cached rules are published before the stubs ask.
	misses=$(sed -n 's/.* rules published (\([0-9]*\) misses.*/\1/p' "$tmp/second.err")
	[ "${misses:-x}" = 0 ] ||
		fail "second run: ${misses:-no} rule questions (0 expected: its rules were cached)"
	;;
off)
	rm -rf "$tmp/cache"
	run off --symbol-cache=no
	same_tree first off
	[ ! -e "$tmp/cache" ] || fail "--symbol-cache=no made $tmp/cache"
	;;
corrupt)
	n=0
	for f in $(cache_files); do
		size=$(stat -c %s "$f")
		if [ $((n % 2)) -eq 0 ]; then
			printf '\377' | dd of="$f" bs=1 seek=$((size / 2)) \
				conv=notrunc status=none
		else
			truncate -s $((size - 9)) "$f"
		fi
		n=$((n + 1))
	done
	run damaged
	same_tree first damaged
	[ "$(stat_of damaged named_cached)" -lt "$(stat_of damaged named)" ] ||
		fail "damaged files were used"
	run repaired
	same_tree first repaired
	[ "$(stat_of repaired named_cached)" -eq "$(stat_of repaired named)" ] ||
		fail "the damaged files were not rewritten"
	;;
stale)
	before=$(cache_files | wc -l)
	cp "$prog" "$prog.new" && mv "$prog.new" "$prog"
	run replaced
	same_tree first replaced
	cached=$(stat_of replaced named_cached)
	[ "$cached" -gt 0 ] && [ "$cached" -lt "$(stat_of replaced named)" ] ||
		fail "replaced program: $cached of $(stat_of replaced named) named from the cache (libc's only expected)"
	[ "$(cache_files | wc -l)" -eq "$before" ] ||
		fail "$before cache files before, $(cache_files | wc -l) after (one per build-id expected)"
	;;
*)
	echo "symcache.sh: unknown case $case_name" >&2
	exit 99
	;;
esac
[ "$fails" -eq 0 ] || show "$tmp/first.err"
pass_or_fail
