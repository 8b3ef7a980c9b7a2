#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Moving mremaps under --pages-as-heap=yes (issue 13), on
# progs/pages_move.c, against real Massif. Start-up differs
# (docs/massif-differences.md, "--pages-as-heap=yes"), so the profiles are compared from the program's first
# page call on (pages_trim.py: times and heaps shifted to start at 0,
# trees reduced to the program's functions):
#  - the program's output and exit status are the same natively, under
#    Massif and under heaptrace;
#  - Massif's series is the one worked out by hand from Massif's rules
#    (else the case is wrong: status 99); with --massif-compat=yes
#    heaptrace's is the same for massif-compare (SAME), trees included:
#    each move shows one page gone before the new pages come;
#  - without it, each move is one step (no snapshot between the old pages
#    going and the new ones coming), with Massif's B-time and owners;
#  - each function holds the bytes pages_check.py is told, in all three.
# usage: pages_move.sh HEAPTRACE MASSIF-COMPARE PROG
set -u
. "$(dirname "$0")/../lib.sh" || exit 99
[ $# -eq 3 ] || usage "pages_move.sh HEAPTRACE MASSIF-COMPARE PROG"
heaptrace=$(abspath "$1") compare=$(abspath "$2") prog=$(abspath "$3")
need valgrind python3
scratch --keep
opts=(--pages-as-heap=yes --time-unit=B --detailed-freq=1 --threshold=0
	--peak-inaccuracy=0 --max-snapshots=1000)
trim="$here/pages_trim.py"
src=pages_move.c first=map_big

(cd "$tmp" && exec "$prog") >"$tmp/native.out" 2>&1
native=$?
(cd "$tmp" && exec valgrind -q --tool=massif "${opts[@]}" \
	--massif-out-file="$tmp/massif" "$prog") >"$tmp/massif.log" 2>&1
massif=$?
(cd "$tmp" && exec "$heaptrace" run -q --massif-compat=yes "${opts[@]}" \
	--massif-out-file="$tmp/compat" "$prog") >"$tmp/compat.log" 2>&1
compat=$?
(cd "$tmp" && exec "$heaptrace" run -q "${opts[@]}" \
	--massif-out-file="$tmp/exact" "$prog") >"$tmp/exact.log" 2>&1
exact=$?
echo "status: native $native, massif $massif, compat $compat, exact $exact"

if [ $massif -ne $native ] || ! cmp -s "$tmp/native.out" "$tmp/massif.log"; then
	show "$tmp/native.out"
	show "$tmp/massif.log"
	echo "HARNESS ERROR: the program behaves otherwise under Massif"
	exit 99
fi
for run in compat exact; do
	st=$compat
	[ $run = exact ] && st=$exact
	if [ $st -ne $native ] || ! cmp -s "$tmp/native.out" "$tmp/$run.log"; then
		show "$tmp/$run.log"
		fail "heaptrace ($run) exits $st or prints otherwise"
	fi
done

# series FILE: "time heap kind" of the program's part, P = 4096 B units.
series() {
	python3 "$trim" --series "$1" "$src" "$first" |
		awk '{ printf "%d %d %s\n", $1 / 4096, $2 / 4096, $3 }'
}
# After map_big (0 0): map_three; the grow-move's peak check (a
# deallocation: the old pages go first); Massif: the first old page gone
# (the dip), the 2 pages recorded at the new place, the 3 of the
# extension; map_one; the peak before its unmap; the unmap; the
# shrink-move: its first old page gone, its page at the new place (the
# other 4 old pages go silently); the guard page unmapped.
want_massif='0 0 detailed
3 3 detailed
3 3 detailed
4 2 detailed
7 3 detailed
10 6 detailed
11 7 detailed
11 7 peak
12 6 detailed
13 5 detailed
14 6 detailed
19 1 detailed'
# Exact: the same B-time (old + new pages per move) and peak checks, one
# snapshot per move.
want_exact='0 0 detailed
3 3 detailed
3 3 detailed
10 6 detailed
11 7 detailed
11 7 peak
12 6 detailed
18 2 detailed
19 1 detailed'
got=$(series "$tmp/massif")
if [ "$got" != "$want_massif" ]; then
	echo "Massif's series (pages):"
	echo "$got"
	echo "HARNESS ERROR: Massif's series is not the one worked out by hand"
	exit 99
fi
python3 "$trim" "$tmp/massif" "$tmp/massif.trim" "$src" "$first" || exit 99
if python3 "$trim" "$tmp/compat" "$tmp/compat.trim" "$src" "$first"; then
	verdict=$(python3 "$compare" "$tmp/massif.trim" "$tmp/compat.trim")
	echo "massif-compare massif compat: $verdict"
	[ "$(echo "$verdict" | tail -n 1)" = SAME ] ||
		fail "--massif-compat=yes: not Massif's profile"
else
	fail "--massif-compat=yes: the program's calls are missing"
fi
got=$(series "$tmp/exact")
if [ "$got" != "$want_exact" ]; then
	echo "exact series (pages), got:"
	echo "$got"
	echo "want:"
	echo "$want_exact"
	fail "exact: the moves are not one step each"
fi

fns=(map_big=2097152/2097152 map_three=0/12288 grow_move=0/20480
	map_one=0/4096 shrink_move=4096/4096)
python3 "$here/pages_check.py" "$tmp/massif" "${fns[@]}" ||
	{ echo "HARNESS ERROR: (real Massif)"; exit 99; }
for run in compat exact; do
	python3 "$here/pages_check.py" "$tmp/$run" "${fns[@]}" ||
		fail "$run: the functions' bytes"
done
pass_or_fail PASS
