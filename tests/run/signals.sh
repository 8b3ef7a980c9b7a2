#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Signals to heaptrace (docs/tracer.md, "Signals to heaptrace") and
# profiles that must lose nothing. heaptrace runs in a process group of
# its own (setsid), its SIGINT, SIGTERM and SIGHUP at their defaults (a
# background job's SIGINT is ignored otherwise), on progs/stopsig.c (1000
# bytes kept, then 500 more at each "alloc" on stdin; "bye" and status 7
# at end of file). CASE is one of:
#  run-TERM, run-HUP, run-INT   heaptrace run, the signal sent
#     to heaptrace alone (kill PID) and to its process group (as timeout
#     and a terminal do):
#     die     the program dies of it: heaptrace's status 128+N, the last
#             snapshot holds its 1500 bytes, the summary line says the
#             signal was forwarded when it was sent to heaptrace alone,
#             and not when the program had its own;
#     handle  the program catches it, exactly once ("caught SIG" once on
#             its stdout), and runs on traced (a block allocated then is
#             in the profile); a second signal to heaptrace detaches: the
#             program is no longer traced, the profile is written then
#             (1500 bytes), the program allocates again untraced and ends
#             with its exact output and status 7, heaptrace's too; the
#             summary line says so;
#     ignore  (alone only) the same, the signal ignored by the program.
#  run-timeout   `timeout 1 heaptrace run` on the program handling the
#     signal: timeout sends SIGTERM to heaptrace, then to its process
#     group, heaptrace included, which is one request, not two: the
#     program catches it (once or twice, as without heaptrace) and runs
#     on traced (a block allocated then is in the profile), ends with
#     "bye" and status 7, timeout's 124.
#  attach-TERM, attach-HUP, attach-INT   heaptrace attach -v to the program
#     (handling the signals): the signal to heaptrace detaches, exit 0,
#     the profile holds the 500 bytes allocated while attached; the
#     program never sees the signal, allocates again and ends as without
#     heaptrace.
#  kill-threads-B, kill-threads-ms   progs/killthreads.c, 1000 threads
#     each keeping 10 blocks: `heaptrace snapshot` once all are allocated,
#     then SIGTERM to the program: heaptrace's status 143, and the final
#     profile's last snapshot holds exactly the on-demand snapshot's heap
#     and extra bytes (--time-unit=B, ms).
#  kill-burst  progs/burst.c, 8 threads mallocing 1000-byte blocks
#     without end under a one-page ring (--ring-size=4096), killed by
#     SIGTERM while waiting for room or writing a record: the last
#     snapshot holds, in burst_alloc, at least the blocks the threads
#     counted (each recorded before its malloc returned) and at most one
#     more per thread: the drain goes past what dead threads never wrote.
#  devfull   run with --massif-out-file=/dev/full: exit status 125 (not
#     the program's 7), one line on stderr saying why.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: signals.sh HEAPTRACE STOPSIG MANYTHREADS CASE [BURST]
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 4 ] || [ $# -eq 5 ] ||
	usage "signals.sh HEAPTRACE STOPSIG MANYTHREADS CASE [BURST]"
ht=$(abspath "$1")
prog=$(abspath "$2")
many=$(abspath "$3")
case_name=$4
burst=$(abspath "${5:-$3}")
need_exec "$ht" "$prog" "$many" "$burst"
need setsid mkfifo od
env --default-signal=INT true 2>/dev/null ||
	skip "env has no --default-signal (coreutils before 8.31)"
scratch

# In a session of its own, so that a group signal reaches heaptrace and
# the program only; its stop signals at their defaults.
isolated=(env --default-signal=INT,TERM,HUP setsid)

# signo SIG: SIG's number.
signo() {
	kill -l "$1"
}

# tracer_of PID: the pid tracing PID, 0 for none.
tracer_of() {
	awk '/^TracerPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# stat_field PID N: field N of /proc/PID/stat (5: the process group).
stat_field() {
	local stat n=$2
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	# shellcheck disable=SC2086 # split into its fields
	set -- $stat
	shift $((n - 3))
	echo "$1"
}

# last_heap FILE: "HEAP EXTRA" of FILE's last snapshot.
last_heap() {
	awk -F= '/^mem_heap_B=/ { h = $2 } /^mem_heap_extra_B=/ { e = $2 }
		END { print h, e }' "$1"
}

# launch NAME MODE PREFIX...: PREFIX... heaptrace run on the program in
# MODE, in the background (stdin a FIFO on fd 9; files $tmp/NAME.*);
# sets $target and $tracer once the program said "ready".
launch() {
	local name=$1 mode=$2
	shift 2
	mkfifo "$tmp/$name.in" || exit 99
	(
		"$@" "$ht" run --time-unit=B \
			--massif-out-file="$tmp/$name.massif" -- "$prog" "$mode" \
			<"$tmp/$name.in" >"$tmp/$name.out" 2>"$tmp/$name.err"
		echo $? >"$tmp/$name.status"
	) &
	exec 9>"$tmp/$name.in"
	wait_for "$tmp/$name.out" '^ready' ||
		harness "$name: the program did not start: $(head -c 300 "$tmp/$name.err")"
	target=$(awk '/^ready/ { print $2 }' "$tmp/$name.out")
	tracer=$(tracer_of "$target")
	pids+=("$target" "$tracer")
}

# run_start NAME MODE: launch in a session of heaptrace's own; sets
# $group too, which heaptrace leads.
run_start() {
	launch "$1" "$2" "${isolated[@]}"
	[ -n "$tracer" ] && [ "$tracer" != 0 ] ||
		harness "$1: process $target is not traced"
	group=$(stat_field "$tracer" 5)
	[ "$group" = "$tracer" ] ||
		harness "$1: heaptrace ($tracer) does not lead its process group ($group)"
}

# allocate NAME N: "alloc" to the program, until its Nth "allocated".
allocate() {
	echo alloc >&9
	for _ in $(seq 100); do
		[ "$(grep -c '^allocated' "$tmp/$1.out")" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "$1: the program did not allocate ($(describe "$target"))"
	return 1
}

# finish NAME [open]: end of file to the program (with "open": only after
# the session ended); up to 10 s for the session to end; its status in
# $status.
finish() {
	[ "${2-}" = open ] || exec 9>&-
	status=
	for _ in $(seq 100); do
		[ -s "$tmp/$1.status" ] && break
		sleep 0.1
	done
	status=$(cat "$tmp/$1.status" 2>/dev/null)
	[ -n "$status" ] || fail "$1: heaptrace did not end ($(describe "$tracer"))"
	exec 9>&-
}

# expect_output NAME LINES...: the program's stdout is exactly LINES
# after "ready PID".
expect_output() {
	local name=$1
	shift
	{
		echo "ready $target"
		printf '%s\n' "$@"
	} >"$tmp/$name.want"
	cmp -s "$tmp/$name.want" "$tmp/$name.out" ||
		fail "$name: the program's output:
$(diff "$tmp/$name.want" "$tmp/$name.out")"
}

# expect_heap NAME BYTES: the profile's last snapshot holds BYTES.
expect_heap() {
	local heap
	heap=$(last_heap "$tmp/$1.massif")
	[ "${heap% *}" = "$2" ] ||
		fail "$1: the last snapshot holds '${heap% *}' bytes, want $2"
}

# summary_has NAME TEXT / summary_lacks NAME TEXT
summary_has() {
	grep -qF "$2" "$tmp/$1.err" ||
		fail "$1: the summary does not say '$2': $(cat "$tmp/$1.err")"
}
summary_lacks() {
	! grep -qF "$2" "$tmp/$1.err" ||
		fail "$1: the summary says '$2': $(cat "$tmp/$1.err")"
}

# send SIG WHO: SIG to heaptrace alone or to its process group.
send() {
	if [ "$2" = alone ]; then
		kill -s "$1" "$tracer"
	else
		kill -s "$1" -- "-$group"
	fi
}

# run_dies SIG WHO: the program dies of SIG, sent to WHO.
run_dies() {
	local sig=$1 who=$2 name="die-$2"
	run_start "$name" die
	allocate "$name" 1
	send "$sig" "$who"
	finish "$name" open
	[ "$status" = $((128 + $(signo "$sig"))) ] ||
		fail "$name: heaptrace exited '$status', want $((128 + $(signo "$sig")))"
	expect_output "$name" allocated
	expect_heap "$name" 1500
	if [ "$who" = alone ]; then
		summary_has "$name" "SIG$sig forwarded to process $target"
	else
		summary_lacks "$name" forwarded
	fi
}

# run_lives MODE SIG WHO: the program catches or ignores SIG, sent to
# WHO, and runs on traced; a second SIG to heaptrace detaches.
run_lives() {
	local mode=$1 sig=$2 who=$3 name="$1-$3" caught=()
	run_start "$name" "$mode"
	send "$sig" "$who"
	if [ "$mode" = handle ]; then
		caught=("caught SIG$sig")
		wait_for "$tmp/$name.out" "^caught" ||
			fail "$name: the program did not get SIG$sig"
	fi
	sleep 0.5 # a second copy would show by now
	[ "$(tracer_of "$target")" = "$tracer" ] ||
		fail "$name: no longer traced after the first SIG$sig"
	allocate "$name" 1
	kill -s "$sig" "$tracer"
	for _ in $(seq 100); do
		[ "$(tracer_of "$target")" = 0 ] && break
		sleep 0.1
	done
	[ "$(tracer_of "$target")" = 0 ] ||
		fail "$name: still traced after a second SIG$sig"
	wait_for "$tmp/$name.massif" '^snapshot=' ||
		fail "$name: no profile written at the detach"
	expect_heap "$name" 1500
	allocate "$name" 2
	finish "$name"
	[ "$status" = 7 ] || fail "$name: heaptrace exited '$status', want 7"
	expect_output "$name" "${caught[@]}" allocated allocated bye
	expect_heap "$name" 1500
	summary_has "$name" "detached from process $target at a second SIG$sig"
	[ "$who" = group ] && summary_lacks "$name" forwarded
}

# run_timeout: heaptrace run under timeout, the program handling SIGTERM.
run_timeout() {
	local name=timeout caught
	launch "$name" handle env --default-signal=INT,TERM,HUP timeout -s TERM 1
	wait_for "$tmp/$name.out" '^caught' ||
		fail "$name: the program did not get timeout's SIGTERM"
	sleep 0.5
	[ "$(tracer_of "$target")" = "$tracer" ] ||
		fail "$name: no longer traced after timeout's SIGTERM"
	allocate "$name" 1
	finish "$name"
	[ "$status" = 124 ] || fail "$name: timeout exited '$status', want 124"
	caught=$(grep -c '^caught SIGTERM$' "$tmp/$name.out")
	[ "$caught" -ge 1 ] && [ "$caught" -le 2 ] ||
		fail "$name: the program caught SIGTERM $caught times"
	[ "$(grep -v '^caught' "$tmp/$name.out" | tr '\n' ' ')" = "ready $target allocated bye " ] ||
		fail "$name: the program's output: $(cat "$tmp/$name.out")"
	expect_heap "$name" 1500
	summary_lacks "$name" detached
}

# attach_case SIG: heaptrace attach, detached by SIG.
attach_case() {
	local sig=$1 name=attachee
	start_target "$name" out '^ready' "$prog" handle
	"${isolated[@]}" "$ht" attach -v --time-unit=B \
		--massif-out-file="$tmp/attach.massif" "$target" \
		2>"$tmp/attach.err" &
	local session=$!
	pids+=("$session")
	wait_for "$tmp/attach.err" "attached, " ||
		harness "heaptrace did not attach: $(tail -n 3 "$tmp/attach.err")"
	allocate "$name" 1
	# setsid ran heaptrace in its own process: its pid is $session
	kill -s "$sig" "$session"
	wait "$session"
	local st=$?
	[ "$st" = 0 ] || fail "attach: heaptrace exited $st at SIG$sig, want 0"
	[ "$(tracer_of "$target")" = 0 ] ||
		fail "attach: process $target still traced after SIG$sig"
	[ -s "$tmp/attach.massif" ] || fail "attach: no profile written"
	local heap
	heap=$(last_heap "$tmp/attach.massif")
	[ "${heap% *}" = 500 ] ||
		fail "attach: the last snapshot holds '${heap% *}' bytes, want 500"
	allocate "$name" 2
	finish_target "$name"
	[ "$status" = 7 ] || fail "attach: the program exited '$status', want 7"
	expect_output "$name" allocated allocated bye
}

# kill_threads UNIT: 1000 threads killed by SIGTERM after a snapshot.
kill_threads() {
	local unit=$1
	mkfifo "$tmp/many.out" || exit 99
	(
		"$ht" run --time-unit="$unit" \
			--massif-out-file="$tmp/many.massif" -- "$many" 1000 10 \
			>"$tmp/many.out" 2>"$tmp/many.err" </dev/null
		echo $? >"$tmp/many.status"
	) &
	local line
	read -r -t 120 line <"$tmp/many.out" ||
		harness "the program did not start: $(head -c 300 "$tmp/many.err")"
	target=${line#ready }
	pids+=("$target")
	local snap
	snap=$("$ht" snapshot "$target") ||
		fail "heaptrace snapshot $target failed"
	kill -TERM "$target"
	for _ in $(seq 600); do
		[ -s "$tmp/many.status" ] && break
		sleep 0.1
	done
	status=$(cat "$tmp/many.status" 2>/dev/null)
	[ "$status" = 143 ] || fail "heaptrace exited '$status', want 143"
	[ -s "$snap" ] || { fail "no on-demand snapshot file '$snap'"; return; }
	local want got
	want=$(last_heap "$snap")
	got=$(last_heap "$tmp/many.massif")
	[ "${want% *}" -ge 10045000 ] ||
		fail "the on-demand snapshot holds ${want% *} bytes, fewer than the threads' 10,045,000"
	[ "$got" = "$want" ] ||
		fail "the final profile ends with '$got' (heap, extra), the on-demand snapshot taken after the last allocation with '$want'"
}

# last_in FILE FUNCTION: the bytes the last snapshot of FILE holds in
# FUNCTION (its tree's lines naming it, summed; 0 when it has no tree).
last_in() {
	awk -v fn="$2" '/^snapshot=/ { n = 0 }
		$0 ~ (" " fn " ") && /^ *n[0-9]+: / { n += $2 }
		END { print n + 0 }' "$1"
}

# kill_burst: threads killed in a burst of calls through a full ring.
kill_burst() {
	local threads=8
	mkfifo "$tmp/burst.out" || exit 99
	(
		"$ht" run --time-unit=B --ring-size=4096 \
			--massif-out-file="$tmp/burst.massif" -- "$burst" \
			"$threads" "$tmp/counts" \
			>"$tmp/burst.out" 2>"$tmp/burst.err" </dev/null
		echo $? >"$tmp/burst.status"
	) &
	local line
	read -r -t 60 line <"$tmp/burst.out" ||
		harness "the program did not start: $(head -c 300 "$tmp/burst.err")"
	target=${line#ready }
	pids+=("$target")
	sleep 0.5
	kill -TERM "$target"
	for _ in $(seq 300); do
		[ -s "$tmp/burst.status" ] && break
		sleep 0.1
	done
	status=$(cat "$tmp/burst.status" 2>/dev/null)
	[ "$status" = 143 ] || fail "heaptrace exited '$status', want 143"
	local counted held
	counted=$(od -An -v -t u8 "$tmp/counts" | awk '{ for (i = 1; i <= NF; i++) s += $i } END { print s + 0 }')
	held=$(last_in "$tmp/burst.massif" burst_alloc)
	[ "$counted" -gt 0 ] || harness "no block counted"
	[ "$held" -ge $((counted * 1000)) ] ||
		fail "the last snapshot holds $held bytes in burst_alloc, fewer than the $((counted * 1000)) of the $counted blocks counted"
	[ "$held" -le $(((counted + threads) * 1000)) ] ||
		fail "the last snapshot holds $held bytes in burst_alloc, more than the $counted blocks counted and one per thread"
}

case $case_name in
kill-burst)
	kill_burst
	;;
run-TERM | run-HUP | run-INT)
	sig=${case_name#run-}
	run_dies "$sig" alone
	run_dies "$sig" group
	run_lives handle "$sig" alone
	run_lives handle "$sig" group
	run_lives ignore "$sig" alone
	;;
run-timeout)
	need timeout
	run_timeout
	;;
attach-TERM | attach-HUP | attach-INT)
	attach_case "${case_name#attach-}"
	;;
kill-threads-B | kill-threads-ms)
	kill_threads "${case_name#kill-threads-}"
	;;
devfull)
	expect_status 125 "$ht" run -q --time-unit=B \
		--massif-out-file=/dev/full -- "$prog" die </dev/null
	want="heaptrace: cannot write /dev/full: No space left on device"
	[ "$(cat "$tmp/err")" = "$want" ] ||
		fail "stderr '$(cat "$tmp/err")', want the one line '$want'"
	[ "$(tail -n 1 "$tmp/out")" = bye ] ||
		fail "the program did not run to its end: $(cat "$tmp/out")"
	;;
*)
	usage "signals.sh HEAPTRACE STOPSIG MANYTHREADS CASE (unknown case $case_name)"
	;;
esac
pass_or_fail
