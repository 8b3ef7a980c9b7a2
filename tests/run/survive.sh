#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The program survives heaptrace: heaptrace SIGKILLed at any moment, under
# `run` or `attach`, must leave the program running on as if it had never
# been traced: the same stdout as natively, the same exit status, and no
# stall (it ends within 30 s of the kill). Only the inline backend is to
# give that (the ptrace backend's breakpoints need a tracer, by design):
# these cases run with the default backend. PROG is progs/storm.c (four
# threads, every byte of every block checked, exit 7) or progs/storm.pl
# under perl (hashes, exit 7): a fixed amount of work with a fixed result;
# for the attach cases (storm.c with "rounds") they repeat it in rounds
# until stdin reaches end of file, and do it once with stdin from
# /dev/null. The reference output and status are PROG's own, run
# natively with stdin from /dev/null.
#
# CASE is one of:
#  run           RUNS times (HT_SURVIVE_RUNS, default 10): `heaptrace run
#                -- PROG` (stdin /dev/null: a fixed amount of work) is
#                SIGKILLed after a random delay, every other time within
#                its first 50 ms (start-up, the exec, the patching), else
#                anywhere in the run (the delays spread over the time a
#                whole traced run takes, measured first). A program that
#                was started must then end with the native output and
#                status; one killed before its exec never starts (nothing
#                on stdout), and a run that ended before the kill must
#                have the native output and status too. At least one kill
#                must have hit the program while it ran.
#  run-startup   as run, RUNS times (default 150), every kill 2 to 20 ms
#                after the start (later after 20 kills in a row before the
#                exec): the exec and the patching, where a
#                death is rare (a trap flag left set by a single step
#                killed perl 2 times in 200 before it was removed).
#  attach        PROG runs natively; RUNS times (default 5) `heaptrace
#                attach` to it is SIGKILLed 0 to 1000 ms after it
#                started; after each kill PROG must still run (checked
#                200 ms later), and the next attach must work (heaptrace
#                may not exit by itself). Then PROG's stdin is closed: it
#                must end with the native output and status.
#  attach-early  the same, killed 0 to 20 ms after the start: while the
#                attach is being set up. RUNS default 10.
#  attach-inject PROG runs natively; RUNS times (default 12: more than a
#                program has executable file mappings) `heaptrace attach`
#                kills itself (HEAPTRACE_TEST_DIE_IN_INJECT=K, inject.c)
#                at the syscall-entry stop of its Kth injected call, K
#                going 1, 2, 3, 1...: the routine that puts the thread
#                back sits in a code mapping's zero padding until the
#                first scratch page is mapped, and each session killed
#                then leaves it there. Every attach must still find a
#                routine (never "a bare syscall instruction", whose kill
#                leaves the thread running the program's code with the
#                call's registers: perl crashed at the sixth), the program
#                must run on, and a last attach must work and detach
#                (--duration=1, a profile written). Then PROG's stdin is
#                closed: it must end with the native output and status.
#  detach-inject PROG runs natively; RUNS times (default 4) `heaptrace
#                attach --duration=1` kills itself
#                (HEAPTRACE_TEST_DIE_IN_INJECT=unmap) at the syscall-entry
#                stop of its detach's munmap of the scratch page that
#                holds the injection routine: the thread must not be left
#                to return into the page it unmaps. Each time heaptrace
#                must have died there (status 137) and the program must
#                run on; then a last attach must work and detach, and the
#                program end with the native output and status.
#  detach-full   not a kill: a detach with the ring full (issue 12). PROG
#                (several threads) runs natively; RUNS times (default 5)
#                `heaptrace attach -v --ring-size=4096` (a ring its
#                threads keep full: at the detach stubs wait for room for
#                records they reserved) detaches after 1 s (--duration,
#                and every other time SIGINT after 300 to 800 ms): it must
#                exit 0 having written a profile, with no committed record
#                left undrained ("left in the ring"), and PROG must still
#                run. At least one detach must have met a thread in the
#                middle of a record ("the stubs recorded for"). Then
#                PROG's stdin is closed: it must end with the native
#                output and status. REAPER is not used.
# A kill is done by progs/reaper.c, which also collects the exit status of
# a program that heaptrace's death left behind (see its header).
# Failures name the run, the delay, and the status: 133 is death by
# SIGTRAP (a heaptrace breakpoint hit with no tracer left), 137 by SIGKILL
# (heaptrace's PTRACE_O_EXITKILL takes its tracees with it).
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: survive.sh HEAPTRACE REAPER CASE PROG [ARGS...]
#        (PROG "none": skip, e.g. when perl is not installed)
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

if [ $# -lt 4 ]; then
	usage "survive.sh HEAPTRACE REAPER CASE PROG [ARGS...]"
fi
ht=$1 reaper=$2 case=$3 prog=$4
shift 4
args=("$@")
if [ "$prog" = none ]; then
	skip "the program is not available (perl not installed?)"
fi
need timeout mkfifo
case "$case" in
run) runs=${HT_SURVIVE_RUNS:-10} ;;
run-startup) runs=${HT_SURVIVE_RUNS:-150} ;;
attach) runs=${HT_SURVIVE_RUNS:-5} ;;
attach-early) runs=${HT_SURVIVE_RUNS:-10} ;;
attach-inject) runs=${HT_SURVIVE_RUNS:-12} ;;
detach-inject) runs=${HT_SURVIVE_RUNS:-4} ;;
detach-full) runs=${HT_SURVIVE_RUNS:-5} ;;
*) echo "survive.sh: unknown case $case" >&2; exit 99 ;;
esac
scratch

# what STATUS: a shell exit status in words.
what() {
	case $1 in
	133) echo "status 133: killed by SIGTRAP (it ran into a heaptrace breakpoint with no tracer left)" ;;
	137) echo "status 137: killed by SIGKILL (taken along by heaptrace's death: PTRACE_O_EXITKILL)" ;;
	129 | 1[3-5][0-9] | 16[0-4]) echo "status $1: killed by SIG$(kill -l $(($1 - 128)))" ;;
	*) echo "exit status $1" ;;
	esac
}

# The comm of a process running FILE (what the kernel keeps of its name).
comm_of() {
	basename "$1" | cut -c1-15
}
prog_comm=$(comm_of "$prog")

# The reference: PROG natively, one round (stdin from /dev/null).
timeout -k 5 120 "$prog" "${args[@]}" </dev/null >"$tmp/native.out" \
	2>"$tmp/native.err"
native=$?
if [ "$native" -ge 124 ] || [ ! -s "$tmp/native.out" ]; then
	echo "the program does not run natively: $(what "$native"), stderr: $(cat "$tmp/native.err")"
	exit 99
fi
echo "native: $(what "$native"), stdout: $(head -c 200 "$tmp/native.out")"

# check_output WHERE FILE: FILE must be the native stdout.
check_output() {
	cmp -s "$tmp/native.out" "$2" ||
		fail "$1: stdout '$(head -c 200 "$2")', native '$(cat "$tmp/native.out")'"
}

# report_lines REPORT KIND: the reaper's lines of KIND, without it.
report_lines() {
	sed -n "s/^$2 //p" "$1"
}

# stalls WHERE REPORT: a failure per process the reaper found stalled.
stalls() {
	local pid state threads wchan comm
	while read -r pid state threads wchan comm; do
		fail "$1: stall: process $pid ($comm) still there at the time limit (30 s after heaptrace's end, 60 s in all): state $state, threads $threads, in $wchan"
	done < <(report_lines "$2" stall)
}

# reaped WHAT DELAY REPORT RC ERR: the outcome of a reaper run with
# --kill-after DELAY, which exited RC (its stderr in ERR). Sets $where,
# "WHAT (heaptrace SIGKILLed after MS ms)". After a stall: a failure per
# stalled process, and 1 returned (the rest would only stall the same
# way, 30 s each). The reaper itself failing is a harness error (exit 99).
reaped() {
	local killed_at
	killed_at=$(report_lines "$3" killed | awk '{ print $1 }')
	where="$1 (heaptrace SIGKILLed after ${killed_at:-$2} ms)"
	if [ "$4" = 3 ]; then
		stalls "$where" "$3"
		return 1
	elif [ "$4" != 0 ]; then
		echo "reaper failed ($4): $(cat "$5")"
		exit 99
	fi
}

ht_opts=(-q --time-unit=B --massif-out-file=/dev/null)

case_run() {
	# The whole traced run first: its output and status must be the
	# native ones, and its length sets the range of the delays.
	"$reaper" --timeout 30 --limit 60 "$tmp/r0" -- "$ht" run \
		"${ht_opts[@]}" -- "$prog" "${args[@]}" </dev/null \
		>"$tmp/o0" 2>"$tmp/e0"
	if [ $? = 3 ]; then
		stalls "the run without a kill" "$tmp/r0"
		return
	fi
	local whole st
	read -r whole st < <(report_lines "$tmp/r0" exited)
	if [ -z "$whole" ] || [ "$st" != "$native" ]; then
		fail "the run without a kill: heaptrace $(what "${st:-?}"), $native expected: $(cat "$tmp/e0")"
		return
	fi
	check_output "the run without a kill" "$tmp/o0"
	echo "a whole traced run: $whole ms"
	[ "$whole" -ge 20 ] || whole=20

	local i delay where ran=0 before=0 finished=0 late=0 n_late=$((runs / 2))
	# run-startup's window: 2 to 20 ms, widened by 10 ms after every 20
	# kills in a row that all came before the exec (a sanitizer build
	# or a loaded machine starts later than that), at most to 300 ms.
	local startup_hi=20 startup_before=0
	for i in $(seq 1 "$runs"); do
		if [ "$case" = run-startup ]; then
			if [ "$startup_before" -ge 20 ] && [ "$startup_hi" -lt 300 ]; then
				startup_hi=$((startup_hi + 10))
				startup_before=0
			fi
			delay=$((2 + RANDOM % (startup_hi - 1)))
		elif [ $((i % 2)) = 1 ]; then
			delay=$((RANDOM % 51))
		else
			# the late ones spread over the whole run, one in
			# each of n_late equal parts
			local lo=$((whole * late / n_late))
			local hi=$((whole * (late + 1) / n_late))
			delay=$((lo + RANDOM % (hi - lo + 1)))
			late=$((late + 1))
		fi
		local rep="$tmp/r$i" out="$tmp/o$i"
		"$reaper" --kill-after "$delay" --timeout 30 --limit 60 \
			"$rep" -- "$ht" run "${ht_opts[@]}" -- "$prog" \
			"${args[@]}" </dev/null >"$out" 2>"$tmp/e$i"
		reaped "run $i" "$delay" "$rep" $? "$tmp/e$i" || break
		if [ -n "$(report_lines "$rep" exited)" ]; then
			# heaptrace was done before the kill
			finished=$((finished + 1))
			st=$(report_lines "$rep" exited | awk '{ print $2 }')
			[ "$st" = "$native" ] ||
				fail "$where: heaptrace ended by itself before the kill with $(what "$st"), $native expected"
			check_output "$where" "$out"
			continue
		fi
		# the program's process, if it was ever exec'd
		local progs
		progs=$(report_lines "$rep" proc | awk -v c="$prog_comm" \
			'{ pid = $1; st = $2; $1 = ""; $2 = ""; sub(/^ +/, "");
			   if ($0 == c) print pid, st }')
		if [ -z "$progs" ] && [ -s "$out" ]; then
			# it ran and ended as the kill came, before the
			# reaper looked for it by name: its output is all
			# there is to check
			finished=$((finished + 1))
			check_output "$where" "$out"
			continue
		fi
		if [ -z "$progs" ]; then
			before=$((before + 1))
			startup_before=$((startup_before + 1))
			echo "$where: before the program started"
			continue
		fi
		startup_before=0
		if [ "$(echo "$progs" | wc -l)" != 1 ]; then
			fail "$where: more than one process of the program: $progs"
			continue
		fi
		ran=$((ran + 1))
		st=${progs#* }
		if [ "$st" != "$native" ]; then
			fail "$where: the program ended with $(what "$st"); native: $(what "$native")"
			continue
		fi
		check_output "$where" "$out"
		echo "$where: the program went on and ended normally"
	done
	echo "$runs runs: $ran killed while the program ran, $before before it started, $finished done before the kill"
	[ $ran -ge 1 ] ||
		fail "no kill landed while the program ran: nothing was tested"
}

# still_running WHERE [WHY]: the program lives on, neither dead nor left
# stopped (a stopped one is continued, to see the rest); false otherwise.
still_running() {
	local state
	if ! state=$(alive "$target"); then
		fail "$1: the program did not survive it${2:+ $2}"
		return 1
	fi
	if [ "$state" = stopped ]; then
		fail "$1: the program was left stopped ($(describe "$target")); continued (SIGCONT) to see the rest"
		kill -CONT "$target"
		return 1
	fi
}

# ends_as_native: at end of input (fd 9 closed) the program finishes its
# round and ends with its native status and output (a stall: not within
# 30 s).
ends_as_native() {
	finish_target t 30 || return
	if [ "$status" != "$native" ]; then
		fail "the program ended with $(what "$status"); native: $(what "$native"); its stderr: $(tail -n 3 "$tmp/t.err")"
	else
		check_output "the program" "$tmp/t.out"
	fi
}

case_attach() {
	local max_delay=$1
	# attach only once it runs PROG (not the shell forked for it)
	start_target t err running "$prog" "${args[@]}"

	local i delay where traced=0 done_cycles=0
	for i in $(seq 1 "$runs"); do
		delay=$((RANDOM % (max_delay + 1)))
		local rep="$tmp/r$i"
		"$reaper" --kill-after "$delay" --timeout 30 --limit 60 \
			--tracee "$target" "$rep" -- "$ht" attach \
			"${ht_opts[@]}" "$target" >/dev/null 2>"$tmp/e$i"
		reaped "attach $i" "$delay" "$rep" $? "$tmp/e$i" || break
		if [ -n "$(report_lines "$rep" exited)" ]; then
			local st
			st=$(report_lines "$rep" exited | awk '{ print $2 }')
			fail "$where: heaptrace ended by itself before the kill, $(what "$st"): $(cat "$tmp/e$i")"
		fi
		local tracer
		tracer=$(report_lines "$rep" tracee | awk '{ print $2 }')
		[ "${tracer:-0}" != 0 ] && traced=$((traced + 1))
		done_cycles=$i
		# a program that dies (or stops) of the kill does so at its
		# next allocator call, within microseconds: 200 ms is plenty
		sleep 0.2
		still_running "$where" "(it was traced then: $([ "${tracer:-0}" != 0 ] && echo yes || echo no))" || break
	done
	echo "$done_cycles attaches killed, $traced of them with the program traced at the kill"

	ends_as_native
}

case_attach_inject() {
	start_target t err running "$prog" "${args[@]}"
	local i k where st
	for i in $(seq 1 "$runs"); do
		k=$((1 + (i - 1) % 3))
		where="attach $i (heaptrace killed at its injected call $k)"
		# (the braces keep the shell's "Killed" out of the log)
		{
			HEAPTRACE_TEST_DIE_IN_INJECT=$k timeout -k 5 60 "$ht" \
				attach -v --time-unit=B \
				--massif-out-file=/dev/null "$target" \
				>/dev/null 2>"$tmp/e$i"
			st=$?
		} 2>/dev/null
		[ "$st" = 137 ] ||
			fail "$where: heaptrace was not killed there: $(what "$st"): $(tail -n 3 "$tmp/e$i")"
		grep -q 'bare syscall' "$tmp/e$i" &&
			fail "$where: $(grep 'bare syscall' "$tmp/e$i")"
		sleep 0.2
		still_running "$where" || break
	done
	if still_running "after $runs killed attaches"; then
		where="the attach after $runs killed ones"
		timeout -k 5 60 "$ht" attach -v --time-unit=B \
			--massif-out-file="$tmp/last.ms" --duration=1 \
			"$target" 2>"$tmp/last.err"
		st=$?
		[ "$st" = 0 ] ||
			fail "$where: heaptrace $(what "$st"): $(tail -n 3 "$tmp/last.err")"
		grep -q 'bare syscall' "$tmp/last.err" &&
			fail "$where: $(grep 'bare syscall' "$tmp/last.err")"
		grep -q '^snapshot=' "$tmp/last.ms" 2>/dev/null ||
			fail "$where: no profile written"
		still_running "$where"
	fi
	ends_as_native
}

case_detach_inject() {
	start_target t err running "$prog" "${args[@]}"
	local i where st
	for i in $(seq 1 "$runs"); do
		where="detach $i (heaptrace killed in the munmap of the routine's page)"
		{
			HEAPTRACE_TEST_DIE_IN_INJECT=unmap timeout -k 5 60 "$ht" \
				attach -v --time-unit=B --duration=1 \
				--massif-out-file=/dev/null "$target" \
				>/dev/null 2>"$tmp/e$i"
			st=$?
		} 2>/dev/null
		[ "$st" = 137 ] ||
			fail "$where: heaptrace was not killed there: $(what "$st"): $(grep -v ': hit ' "$tmp/e$i" | tail -n 3)"
		sleep 0.2
		still_running "$where" || break
	done
	if still_running "after $runs killed detaches"; then
		where="the attach after $runs killed detaches"
		timeout -k 5 60 "$ht" attach --time-unit=B \
			--massif-out-file="$tmp/last.ms" --duration=1 \
			"$target" 2>"$tmp/last.err"
		st=$?
		[ "$st" = 0 ] ||
			fail "$where: heaptrace $(what "$st"): $(tail -n 3 "$tmp/last.err")"
		grep -q '^snapshot=' "$tmp/last.ms" 2>/dev/null ||
			fail "$where: no profile written"
		still_running "$where"
	fi
	ends_as_native
}

# detach_full_once WHERE OUT ERR I: attach I to $target, with a 4 KiB ring,
# detached by --duration (odd runs) or SIGINT; its profile in OUT, its
# stderr in ERR. Failures are WHERE's.
detach_full_once() {
	local where=$1 out=$2 err=$3 i=$4 st
	local opts=(-v --time-unit=B --ring-size=4096 --massif-out-file="$out")
	if [ $((i % 2)) = 1 ]; then
		timeout -k 5 60 "$ht" attach "${opts[@]}" --duration=1 \
			"$target" 2>"$err"
		st=$?
	else
		"$ht" attach "${opts[@]}" "$target" 2>"$err" &
		local h=$!
		wait_for "$err" "attached, " || fail "$where: heaptrace did not attach"
		sleep "0.$((3 + RANDOM % 6))"
		kill -INT "$h"
		wait "$h"
		st=$?
	fi
	[ "$st" = 0 ] ||
		fail "$where: heaptrace $(what "$st"): $(grep -v ': hit ' "$err" | tail -n 3)"
	grep -q '^snapshot=' "$out" 2>/dev/null ||
		fail "$where: no profile written"
	grep -q 'left in the ring' "$err" &&
		fail "$where: committed records lost: $(grep 'left in the ring' "$err")"
}

case_detach_full() {
	start_target t err running "$prog" "${args[@]}"
	local i in_flight=0
	for i in $(seq 1 "$runs"); do
		local where="detach $i"
		detach_full_once "$where" "$tmp/m$i" "$tmp/e$i" "$i"
		grep -q 'the stubs recorded for' "$tmp/e$i" &&
			in_flight=$((in_flight + 1))
		still_running "$where" || break
	done
	echo "$runs detaches, $in_flight of them with a thread in the middle of a record"
	[ $in_flight -ge 1 ] ||
		fail "no detach met a thread in the middle of a record: nothing was tested"
	ends_as_native
}

case "$case" in
run|run-startup) case_run ;;
attach) case_attach 1000 ;;
attach-early) case_attach 20 ;;
attach-inject) case_attach_inject ;;
detach-inject) case_detach_inject ;;
detach-full) case_detach_full ;;
esac
pass_or_fail "PASS: $case"
