#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Inline patching in a multithreaded process (tracer/proc/stopall.c): RUNS runs
# of progs/latebind.c, whose allocator heaptrace binds only when it dlopens
# LIB (HEAPTRACE_TEST_BIND_WITH, tracer/probes/loader.c), while four threads call
# every malloc-family function in a loop. Each run must
#  - exit 0 (the program checks every block it fills) within the time limit;
#  - patch every entry in one go, with the four threads stopped ("patching
#    N functions, K other threads stopped", K >= 4), none left to an int3
#    (summary "(inline)", no "keeps its int3", no "cannot stop");
#  - give a profile whose peak holds exactly phase2_alloc's 115,000 bytes
#    and nothing of hammer_round's (every one of its blocks was freed: a
#    lost or misordered free would leave bytes there).
# MODE "leader-exits": the main thread has exited (a zombie) meanwhile; the
# patching must neither wait for it nor time out. The profile is not
# checked then: with the leader gone, /proc/PID/maps is empty, so stacks
# cannot be symbolised (a limit of heaptrace outside the patching).
# Prints how often a thread was found inside a patched entry and moved to
# the relocated copy; --moves requires that to have happened at least once
# (PROG built with HT_OWN_FREE, whose free makes it near certain).
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: stopall.sh [--moves] HEAPTRACE PROG LIB RUNS [MODE]
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

want_moves=
if [ "${1:-}" = --moves ]; then
	want_moves=1
	shift
fi
if [ $# -lt 4 ] || [ $# -gt 5 ]; then
	usage "stopall.sh [--moves] HEAPTRACE PROG LIB RUNS [MODE]"
fi
ht=$1 prog=$2 lib=$3 runs=$4 mode=${5:-}
need_exec "$ht" "$prog"
if [ ! -f "$lib" ]; then
	echo "stopall.sh: $lib: no such library" >&2
	exit 99
fi
need python3 timeout
scratch

moved=0
args=("$lib")
[ -n "$mode" ] && args+=("$mode")
for i in $(seq 1 "$runs"); do
	dir="$tmp/$i"
	mkdir "$dir"
	HEAPTRACE_TEST_BIND_WITH=$(basename "$lib") timeout -k 5 60 \
		"$ht" run -v --time-unit=B --threshold=0 --peak-inaccuracy=0 \
		--massif-out-file="$dir/massif.out" -- "$prog" "${args[@]}" \
		>"$dir/out" 2>"$dir/err"
	status=$?
	why=
	if [ "$status" -ne 0 ]; then
		why="exit status $status"
	elif ! grep -q "patching [0-9]* functions, \([4-9]\|[1-9][0-9]\+\) other threads stopped" "$dir/err"; then
		why="no patching with the threads stopped"
	elif grep -q "keeps its int3\|cannot stop every thread" "$dir/err"; then
		why="an entry kept its int3"
	elif ! tail -n 1 "$dir/err" | grep -q "(inline)$"; then
		why="not every entry inline: $(tail -n 1 "$dir/err")"
	elif [ -z "$mode" ]; then
		p2=$(peak_bytes "$dir/massif.out" phase2_alloc)
		p1=$(peak_bytes "$dir/massif.out" hammer_round)
		if [ "$p2" != 115000 ] || [ "$p1" != 0 ]; then
			why="peak holds $p2 B of phase2_alloc (115000 expected), $p1 B of hammer_round (0 expected)"
		fi
	fi
	moved=$((moved + $(grep -c "inside the patch of" "$dir/err")))
	if [ -n "$why" ]; then
		fail "run $i: $why"
		grep -v ": hit \|signal .* passed on" "$dir/err" | tail -n 15
	fi
done
echo "$runs runs, $fails failed; threads moved out of a patch: $moved"
if [ -n "$want_moves" ] && [ "$moved" -eq 0 ]; then
	fail "no thread was ever found inside a patched entry"
fi
pass_or_fail
