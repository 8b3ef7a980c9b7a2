#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# More threads than the inline path's thread table once held (1024), on
# progs/manythreads.c (N threads, each mallocing SIZE bytes in
# thread_alloc on command). CASE is one of:
#  run     `heaptrace run` on 1500 threads that allocate then free: the
#          peak holds exactly 1500 x 1000 bytes in thread_alloc.
#  attach  `heaptrace attach` to 1100 waiting threads, which allocate
#          then free once it has attached; detached with SIGINT: the
#          peak holds exactly 1100 x 1000 bytes in thread_alloc, and the
#          program runs on after the detach and exits 0.
# In both, --stats=yes counts no call unrecorded for want of a thread's
# entry (a thread that had none asked heaptrace at every call, and its
# calls went unrecorded), and the program's answers are those expected.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: manythreads.sh HEAPTRACE MANYTHREADS CASE
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 3 ] || usage "manythreads.sh HEAPTRACE MANYTHREADS CASE"
ht=$1 prog=$2 case=$3
need python3 timeout mkfifo
scratch
size=1000
opts=(--time-unit=B --threshold=0 --peak-inaccuracy=0 --stats=yes)

# check_profile OUT THREADS: the peak holds THREADS x $size bytes in
# thread_alloc; no call went unrecorded.
check_profile() {
	local got want=$(($2 * size))
	got=$(peak_bytes "$1" thread_alloc)
	[ "$got" = "$want" ] ||
		fail "the peak holds $got B in thread_alloc, $want B expected"
	grep -q "stats: process .* 0 calls unrecorded (thread unknown)" \
		"$tmp/ht.err" ||
		fail "calls went unrecorded: $(grep -o '[0-9]* calls unrecorded[^,]*' "$tmp/ht.err")"
}

case_run() {
	local n=1500 status=0
	printf af | timeout -k 5 150 "$ht" run "${opts[@]}" \
		--massif-out-file="$tmp/m" -- "$prog" $n $size \
		>"$tmp/out" 2>"$tmp/ht.err" || status=$?
	[ "$status" = 0 ] || fail "exit status $status: $(tail -3 "$tmp/ht.err")"
	[ "$(cat "$tmp/out")" = "$(printf 'ready\nallocated\nfreed\nbye')" ] ||
		fail "the program said: $(head -c 200 "$tmp/out")"
	check_profile "$tmp/m" $n
}

case_attach() {
	local n=1100
	start_target many out ready "$prog" $n $size
	: >"$tmp/ht.err"
	# SIGINT arms timeout's -k: the detach and the profile may take a
	# while on a loaded machine
	timeout -k 100 150 "$ht" attach -v "${opts[@]}" \
		--massif-out-file="$tmp/m" "$target" 2>>"$tmp/ht.err" &
	local h=$!
	wait_for "$tmp/ht.err" "attached, " 60 || fail "heaptrace did not attach"
	printf a >&9
	wait_for "$tmp/many.out" allocated 60 || fail "the threads did not allocate"
	printf f >&9
	wait_for "$tmp/many.out" freed 60 || fail "the threads did not free"
	kill -INT $h
	wait $h || fail "heaptrace exit $?"
	printf af >&9 # once more, detached
	finish_target many 30
	[ "$status" = 0 ] || fail "the target exited with $status: $(head -c 300 "$tmp/many.err")"
	[ "$(cat "$tmp/many.out")" = "$(printf 'ready\nallocated\nfreed\nallocated\nfreed\nbye')" ] ||
		fail "the program said: $(head -c 200 "$tmp/many.out")"
	check_profile "$tmp/m" $n
}

case $case in
run | attach) "case_$case" ;;
*) echo "manythreads.sh: unknown case $case" >&2; exit 99 ;;
esac
if [ $fails -ne 0 ]; then
	echo "--- heaptrace's stderr"
	grep -v "patched inline" "$tmp/ht.err" | tail -n 20
	exit 1
fi
pass_or_fail "PASS: $case"
