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
#  attach        PROG runs natively; RUNS times (default 5) `heaptrace
#                attach` to it is SIGKILLed 0 to 1000 ms after it
#                started; after each kill PROG must still run (checked
#                200 ms later), and the next attach must work (heaptrace
#                may not exit by itself). Then PROG's stdin is closed: it
#                must end with the native output and status.
#  attach-early  the same, killed 0 to 20 ms after the start: while the
#                attach is being set up. RUNS default 10.
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

if [ $# -lt 4 ]; then
	echo "usage: survive.sh HEAPTRACE REAPER CASE PROG [ARGS...]" >&2
	exit 99
fi
ht=$1 reaper=$2 case=$3 prog=$4
shift 4
args=("$@")
if [ "$prog" = none ]; then
	echo "SKIP: the program is not available (perl not installed?)"
	exit 77
fi
for tool in timeout mkfifo; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed"
		exit 77
	fi
done
case "$case" in
run) runs=${HT_SURVIVE_RUNS:-10} ;;
attach) runs=${HT_SURVIVE_RUNS:-5} ;;
attach-early) runs=${HT_SURVIVE_RUNS:-10} ;;
*) echo "survive.sh: unknown case $case" >&2; exit 99 ;;
esac
tmp=$(mktemp -d) || exit 99
target=
cleanup() {
	[ -n "$target" ] && kill -9 "$target" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ulimit -c 0
fails=0

bad() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

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
		bad "$1: stdout '$(head -c 200 "$2")', native '$(cat "$tmp/native.out")'"
}

# report_lines REPORT KIND: the reaper's lines of KIND, without it.
report_lines() {
	sed -n "s/^$2 //p" "$1"
}

# stalls WHERE REPORT: a failure per process the reaper found stalled.
stalls() {
	local pid state threads wchan comm
	while read -r pid state threads wchan comm; do
		bad "$1: stall: process $pid ($comm) still there at the time limit (30 s after heaptrace's end, 60 s in all): state $state, threads $threads, in $wchan"
	done < <(report_lines "$2" stall)
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
		bad "the run without a kill: heaptrace $(what "${st:-?}"), $native expected: $(cat "$tmp/e0")"
		return
	fi
	check_output "the run without a kill" "$tmp/o0"
	echo "a whole traced run: $whole ms"
	[ "$whole" -ge 20 ] || whole=20

	local i delay ran=0 before=0 finished=0 late=0 n_late=$((runs / 2))
	for i in $(seq 1 "$runs"); do
		if [ $((i % 2)) = 1 ]; then
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
		local rc=$?
		local killed_at
		killed_at=$(report_lines "$rep" killed | awk '{ print $1 }')
		local where="run $i (heaptrace SIGKILLed after ${killed_at:-$delay} ms)"
		if [ $rc = 3 ]; then
			# the rest would only stall the same way, 30 s each
			stalls "$where" "$rep"
			break
		elif [ $rc != 0 ]; then
			echo "reaper failed ($rc): $(cat "$tmp/e$i")"
			exit 99
		fi
		if [ -n "$(report_lines "$rep" exited)" ]; then
			# heaptrace was done before the kill
			finished=$((finished + 1))
			st=$(report_lines "$rep" exited | awk '{ print $2 }')
			[ "$st" = "$native" ] ||
				bad "$where: heaptrace ended by itself before the kill with $(what "$st"), $native expected"
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
			echo "$where: before the program started"
			continue
		fi
		if [ "$(echo "$progs" | wc -l)" != 1 ]; then
			bad "$where: more than one process of the program: $progs"
			continue
		fi
		ran=$((ran + 1))
		st=${progs#* }
		if [ "$st" != "$native" ]; then
			bad "$where: the program ended with $(what "$st"); native: $(what "$native")"
			continue
		fi
		check_output "$where" "$out"
		echo "$where: the program went on and ended normally"
	done
	echo "$runs runs: $ran killed while the program ran, $before before it started, $finished done before the kill"
	[ $ran -ge 1 ] ||
		bad "no kill landed while the program ran: nothing was tested"
}

# alive PID: whether PID (a child of ours) still runs; "stopped" when it
# is stopped.
alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	case ${stat%% *} in
	Z | X) return 1 ;;
	T) echo stopped ;;
	esac
	return 0
}

# describe PID: its state, its threads' states, where it sleeps.
describe() {
	local stat t threads=''
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo "gone"; return; }
	stat=${stat##*) }
	for t in /proc/"$1"/task/*/stat; do
		t=$(cat "$t" 2>/dev/null) || continue
		t=${t##*) }
		threads+=${t%% *}
	done
	echo "state ${stat%% *}, threads $threads, in $(cat "/proc/$1/wchan" 2>/dev/null)"
}

# wait_for FILE TEXT: up to 10 s for TEXT to appear in FILE.
wait_for() {
	for _ in $(seq 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

case_attach() {
	local max_delay=$1
	mkfifo "$tmp/in"
	"$prog" "${args[@]}" <"$tmp/in" >"$tmp/t.out" 2>"$tmp/t.err" &
	target=$!
	exec 9>"$tmp/in"
	# attach only once it runs PROG (not the shell forked for it)
	wait_for "$tmp/t.err" running || { echo "the program did not start"; exit 99; }

	local i delay traced=0 done_cycles=0
	for i in $(seq 1 "$runs"); do
		delay=$((RANDOM % (max_delay + 1)))
		local rep="$tmp/r$i"
		"$reaper" --kill-after "$delay" --timeout 30 --limit 60 \
			--tracee "$target" "$rep" -- "$ht" attach \
			"${ht_opts[@]}" "$target" >/dev/null 2>"$tmp/e$i"
		local rc=$?
		local killed_at
		killed_at=$(report_lines "$rep" killed | awk '{ print $1 }')
		local where="attach $i (heaptrace SIGKILLed after ${killed_at:-$delay} ms)"
		if [ $rc = 3 ]; then
			stalls "$where" "$rep"
			break
		elif [ $rc != 0 ]; then
			echo "reaper failed ($rc): $(cat "$tmp/e$i")"
			exit 99
		fi
		if [ -n "$(report_lines "$rep" exited)" ]; then
			local st
			st=$(report_lines "$rep" exited | awk '{ print $2 }')
			bad "$where: heaptrace ended by itself before the kill, $(what "$st"): $(cat "$tmp/e$i")"
		fi
		local tracer
		tracer=$(report_lines "$rep" tracee | awk '{ print $2 }')
		[ "${tracer:-0}" != 0 ] && traced=$((traced + 1))
		done_cycles=$i
		# a program that dies (or stops) of the kill does so at its
		# next allocator call, within microseconds: 200 ms is plenty
		sleep 0.2
		local state
		if ! state=$(alive "$target"); then
			bad "$where: the program did not survive it (it was traced then: $([ "${tracer:-0}" != 0 ] && echo yes || echo no))"
			break
		fi
		if [ "$state" = stopped ]; then
			bad "$where: the program was left stopped ($(describe "$target")); continued (SIGCONT) to see the rest"
			kill -CONT "$target"
			break
		fi
	done
	echo "$done_cycles attaches killed, $traced of them with the program traced at the kill"

	# end of file: the program finishes its round and exits
	exec 9>&-
	local gone=
	for _ in $(seq 300); do
		if ! alive "$target" >/dev/null; then
			gone=1
			break
		fi
		sleep 0.1
	done
	if [ -z "$gone" ]; then
		bad "stall: the program did not end within 30 s of its end of file ($(describe "$target")); SIGKILLed"
		kill -9 "$target"
	fi
	wait "$target"
	local st=$?
	target=
	if [ -z "$gone" ]; then
		:
	elif [ "$st" != "$native" ]; then
		bad "the program ended with $(what "$st"); native: $(what "$native"); its stderr: $(tail -n 3 "$tmp/t.err")"
	else
		check_output "the program" "$tmp/t.out"
	fi
}

case "$case" in
run) case_run ;;
attach) case_attach 1000 ;;
attach-early) case_attach 20 ;;
esac
if [ $fails -ne 0 ]; then
	exit 1
fi
echo "PASS: $case"
