#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The inline stub's walk memo is exact (HEAPTRACE_WALK_MEMO, stats line
# "walk memo: W walks, H reused a suffix (F frames), M differed from the
# full walk"), end to end, on a program whose stacks change in every frame
# (progs/walkmix.c, progs/walkmix_cxx.cpp):
#  1. natively, twice: the same output both times, exit 0;
#  2. HEAPTRACE_WALK_MEMO=check, --stats=yes: the program's output and
#     status as natively; one stats line, M = 0 (every reused suffix was
#     what the full walk found), H >= --reused, F >= --frames and
#     F >= --ratio x H (the memo was used, on long suffixes: the bounds
#     come from the program's header);
#  3. profiles (--time-unit=B --threshold=0 --peak-inaccuracy=0
#     --detailed-freq=1 --depth=60, --serial-arg's run of the program,
#     without --ignore-fn's allocations): memo `no` twice, identical once
#     cmd:/desc: lines are dropped and code addresses masked (else the
#     harness is wrong: exit 99), then memo `yes` identical to them; the
#     program's output as natively; `no` reuses nothing (H = 0), `yes`
#     reuses at least --reused suffixes;
#  4. --backend=ptrace's run of the same: the same heap over time (time,
#     mem_heap_B, mem_heap_extra_B of every snapshot), and no allocation
#     of the `check` run (no --ignore-fn) ignored.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error. HT_KEEP=DIR keeps the
# runs' files in DIR.
#
# usage: walk_memo.sh [FLAGS] -- HEAPTRACE PROG
# FLAGS:
#   --reused N        H's lower bound under check and yes
#   --frames N        F's lower bound under check
#   --ratio R         F / H's lower bound under check (an integer)
#   --serial-arg WORD the program's argument for the profile runs (a run
#                     whose profile does not depend on the threads'
#                     interleaving)
#   --ignore-fn FN    left out of the compared profiles (a function whose
#                     stacks hold wherever a timer interrupted the program)
#   --skip REASON     skip the case
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

reused=1 frames=1 ratio=1 serial_arg= ignore_fn=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	case $1 in
	--reused) reused=$2; shift 2 ;;
	--frames) frames=$2; shift 2 ;;
	--ratio) ratio=$2; shift 2 ;;
	--serial-arg) serial_arg=$2; shift 2 ;;
	--ignore-fn) ignore_fn=$2; shift 2 ;;
	--skip) skip "$2" ;;
	*) usage "walk_memo.sh [FLAGS] -- HEAPTRACE PROG" ;;
	esac
done
[ $# -eq 3 ] || usage "walk_memo.sh [FLAGS] -- HEAPTRACE PROG"
ht=$(abspath "$2") prog=$(abspath "$3")
need_exec "$ht" "$prog"
need timeout
scratch --keep
serial=(${serial_arg:+"$serial_arg"})
profile_opts=(--time-unit=B --threshold=0 --peak-inaccuracy=0
	--detailed-freq=1 --depth=60 ${ignore_fn:+"--ignore-fn=$ignore_fn"})

# run NAME MEMO ARGS...: ARGS under timeout, HEAPTRACE_WALK_MEMO=MEMO
# (none: unset); stdout, stderr, status in $tmp/NAME.{out,err,status}.
run() {
	local name=$1 memo=$2 status=0
	shift 2
	if [ "$memo" = none ]; then
		timeout -k 5 100 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null ||
			status=$?
	else
		HEAPTRACE_WALK_MEMO=$memo timeout -k 5 100 "$@" \
			>"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null || status=$?
	fi
	echo "$status" >"$tmp/$name.status"
}

# same_run NAME REF: NAME's stdout and status are REF's.
same_run() {
	cmp -s "$tmp/$1.out" "$tmp/$2.out" ||
		fail "$1: the program's output differs from its native run's: $(diff "$tmp/$2.out" "$tmp/$1.out" | head -5)"
	[ "$(cat "$tmp/$1.status")" = "$(cat "$tmp/$2.status")" ] ||
		fail "$1: exit status $(cat "$tmp/$1.status"), natively $(cat "$tmp/$2.status"): $(tail -3 "$tmp/$1.err")"
}

# memo_stats NAME: "W H F M" from NAME's one walk-memo stats line; 1 when
# there is not exactly one.
memo_stats() {
	local lines
	lines=$(sed -n 's/^.*stats: process [0-9]*: walk memo: \([0-9]*\) walks, \([0-9]*\) reused a suffix (\([0-9]*\) frames), \([0-9]*\) differed from the full walk; [0-9]* frames in all$/\1 \2 \3 \4/p' \
		"$tmp/$1.err")
	[ -n "$lines" ] && [ "$(printf '%s\n' "$lines" | wc -l)" -eq 1 ] || return 1
	echo "$lines"
}

# profile_text FILE: FILE without its cmd: and desc: lines, code addresses
# masked (they move with address-space randomisation, the trees do not).
profile_text() {
	grep -v '^cmd: \|^desc: ' "$1" | sed 's/0x[0-9A-Fa-f]*/0x/g'
}

# 1. natively, twice
run native none "$prog"
run native2 none "$prog"
[ "$(cat "$tmp/native.status")" = 0 ] ||
	harness "natively the program exits $(cat "$tmp/native.status"): $(tail -3 "$tmp/native.err")"
cmp -s "$tmp/native.out" "$tmp/native2.out" ||
	harness "two native runs differ: $(diff "$tmp/native.out" "$tmp/native2.out" | head -5)"
if [ -n "$serial_arg" ]; then
	run native-serial none "$prog" "${serial[@]}"
	cmp -s "$tmp/native.out" "$tmp/native-serial.out" ||
		harness "the program's output differs with $serial_arg"
fi

# 2. every reused suffix checked against the full walk
run check check "$ht" run --stats=yes --time-unit=B --depth=60 \
	--massif-out-file="$tmp/check.massif" -- "$prog"
same_run check native
summary=
if ! st=$(memo_stats check); then
	fail "check: no walk memo stats line (or more than one) in heaptrace's stderr"
else
	read -r w h f m <<<"$st"
	summary="check: $w walks, $h reused a suffix ($f frames), $m differed"
	[ "$m" -eq 0 ] || fail "check: $m walks that reused a suffix differed from the full walk"
	[ "$h" -ge "$reused" ] || fail "check: $h walks reused a suffix, at least $reused expected"
	[ "$f" -ge "$frames" ] || fail "check: $f frames reused, at least $frames expected"
	[ "$f" -ge $((ratio * h)) ] ||
		fail "check: $f frames reused by $h walks, at least $ratio each expected"
	[ "$h" -le "$w" ] || fail "check: $h walks reused a suffix out of $w"
fi

# 3. the profile is the same with and without the memo
ref=native
[ -z "$serial_arg" ] || ref=native-serial
for r in no no2 yes; do
	run "$r" "${r%2}" "$ht" run --stats=yes "${profile_opts[@]}" \
		--massif-out-file="$tmp/$r.massif" -- "$prog" "${serial[@]}"
	same_run "$r" "$ref"
	[ -s "$tmp/$r.massif" ] || fail "$r: no profile"
	profile_text "$tmp/$r.massif" >"$tmp/$r.text"
done
cmp -s "$tmp/no.text" "$tmp/no2.text" ||
	harness "two runs with the memo off give different profiles (not deterministic): $(diff "$tmp/no.text" "$tmp/no2.text" | head -6)"
cmp -s "$tmp/no.text" "$tmp/yes.text" ||
	fail "the profile with the memo differs from the one without: $(diff "$tmp/no.text" "$tmp/yes.text" | head -6)"
if st=$(memo_stats no); then
	read -r w h f m <<<"$st"
	[ "$h" -eq 0 ] || fail "memo no: $h walks reused a suffix"
else
	fail "no: no walk memo stats line (or more than one) in heaptrace's stderr"
fi
if st=$(memo_stats yes); then
	read -r w h f m <<<"$st"
	[ "$h" -ge "$reused" ] || fail "memo yes: $h walks reused a suffix, at least $reused expected"
else
	fail "yes: no walk memo stats line (or more than one) in heaptrace's stderr"
fi

# 4. the heap over time is the ptrace backend's: an allocation the stub
# cannot walk (on a sigaltstack or a coroutine's stack) still counts
# (docs/inline-backend.md, "Copy")
run ptrace none "$ht" run --backend=ptrace "${profile_opts[@]}" \
	--massif-out-file="$tmp/ptrace.massif" -- "$prog" "${serial[@]}"
same_run ptrace "$ref"
heap_series() {
	grep -E '^(time|mem_heap_B|mem_heap_extra_B)=' "$1"
}
cmp -s <(heap_series "$tmp/yes.massif") <(heap_series "$tmp/ptrace.massif") ||
	fail "the inline backend's heap over time differs from --backend=ptrace's: $(diff <(heap_series "$tmp/ptrace.massif") <(heap_series "$tmp/yes.massif") | head -6)"
grep -q 'events ([^)]* 0 ignored' "$tmp/check.err" ||
	fail "check: allocations ignored: $(grep -o '[0-9]* ignored' "$tmp/check.err")"

if [ "$fails" -ne 0 ]; then
	for f in check.err yes.err; do
		echo "--- heaptrace's stderr ($f)"
		grep 'stats:\|heaptrace:' "$tmp/$f" | head -20
	done
fi
pass_or_fail "walk memo exact: $summary; profiles identical with and without it, heap as under ptrace"
