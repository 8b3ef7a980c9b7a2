#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Snapshots on demand (README.md, "Snapshots on demand"): progs/ondemand.c
# pauses with known blocks live; a snapshot is asked for with `heaptrace
# snapshot PID` and with SIGUSR1 sent to heaptrace. Each file must be a
# valid massif.out (ms_print reads it) whose last snapshot is detailed and
# holds exactly the live blocks, whose history is the final profile's so
# far, and the final profile must be byte for byte the one of a run
# without requests (--time-unit=B, and no address randomisation when
# setarch allows it). CASE: inline | ptrace | fork (ptrace) | errors.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: ondemand.sh HEAPTRACE ONDEMAND CASE
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 3 ] || usage "ondemand.sh HEAPTRACE ONDEMAND CASE"
ht=$(abspath "$1")
prog=$(abspath "$2")
case_name=$3
need ms_print python3 timeout
scratch

# Same addresses in every run, so that profiles compare byte for byte.
no_aslr

# start DIR BACKEND ARGS...: heaptrace runs the program in DIR, its stdin
# a fifo held open on fd 9; sets HT (heaptrace's pid) and READY (the pids
# that announced themselves).
start() {
	local dir=$1 backend=$2
	shift 2
	mkdir -p "$dir"
	mkfifo "$dir/in"
	# A relative --massif-out-file: the desc: lines of two runs match.
	(cd "$dir" && exec "${norandom[@]}" timeout -k 5 60 "$ht" run \
		--backend="$backend" --time-unit=B -- "$prog" "$@" \
		<in >stdout 2>stderr) &
	WAITED=$!
	pids+=("$WAITED")
	exec 9>"$dir/in"
}

# tracer_of PID: heaptrace's pid (timeout's child, not $!).
tracer_of() {
	awk '/^TracerPid:/ { print $2 }' "/proc/$1/status"
}

# wait_ready DIR N: until N processes said "ready".
wait_ready() {
	for _ in $(seq 200); do
		[ "$(grep -c ready "$1/stdout" 2>/dev/null)" -ge "$2" ] && break
		sleep 0.05
	done
	READY=$(awk '/ready/ { print $2 }' "$1/stdout")
	[ -n "$READY" ] || fail "the program did not start"
	HT=$(tracer_of "$(head -1 <<<"$READY")")
}

# finish: let the program go on and wait for heaptrace.
finish() {
	printf 'xx' >&9
	exec 9>&-
	wait "$WAITED" || fail "heaptrace exited with $?"
}

# last_snapshot FILE: the last snapshot record of FILE.
last_snapshot() {
	awk '/^snapshot=/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$1"
}

# check_file FILE HEAP TREE: FILE is a massif.out ms_print reads, its last
# snapshot is detailed with HEAP useful bytes and the tree lines TREE (one
# per line, frames without addresses: "3000 main (ondemand.c:53)").
check_file() {
	local f=$1 heap=$2 tree=$3
	[ -s "$f" ] || { fail "$f: not written"; return; }
	ms_print "$f" >/dev/null 2>"$tmp/ms_print.err" ||
		fail "$f: ms_print refuses it: $(head -1 "$tmp/ms_print.err")"
	local last
	last=$(last_snapshot "$f")
	grep -qx 'heap_tree=detailed' <<<"$last" ||
		fail "$f: the last snapshot is not detailed"
	grep -qx "mem_heap_B=$heap" <<<"$last" ||
		fail "$f: last snapshot: $(grep mem_heap_B <<<"$last"), expected $heap"
	local got
	got=$(sed -n 's/^ *n[0-9]*: \([0-9]*\) 0x[0-9A-F]*: /\1 /p' <<<"$last")
	[ "$got" = "$tree" ] ||
		fail "$f: last tree: got [$got], expected [$tree]"
}

# check_history SNAP FINAL: SNAP without its last snapshot is the
# beginning of FINAL (the session went on undisturbed), peaks aside.
check_history() {
	python3 - "$1" "$2" <<'PY' || fail "$1: its history is not the beginning of $2"
import sys
def records(path):
    # A peak then may be a former peak now, printed as detailed.
    text = open(path).read().replace("heap_tree=peak", "heap_tree=detailed")
    return text.split("#-----------\nsnapshot=")
snap, final = records(sys.argv[1]), records(sys.argv[2])
sys.exit(0 if len(snap) >= 2 and snap[:-1] == final[:len(snap) - 1] else 1)
PY
}

case_backend() {
	local backend=$1
	start "$tmp/asked" "$backend"
	wait_ready "$tmp/asked" 1
	local pid=$READY
	local by_cmd
	by_cmd=$("$ht" snapshot "$pid") || fail "heaptrace snapshot $pid: exit $?"
	[ "$by_cmd" = "$tmp/asked/massif.out.$pid.snapshot-1" ] ||
		fail "heaptrace snapshot printed '$by_cmd'"
	kill -USR1 "$HT"
	for _ in $(seq 100); do
		grep -q snapshot-2 "$tmp/asked/stderr" && break
		sleep 0.05
	done
	finish
	local f1=$tmp/asked/massif.out.$pid.snapshot-1
	local f2=$tmp/asked/massif.out.$pid.snapshot-2
	grep -qx "heaptrace: snapshot of process $pid written to $f1" \
		"$tmp/asked/stderr" || fail "no stderr line for $f1"
	grep -qx "heaptrace: snapshot of process $pid written to $f2" \
		"$tmp/asked/stderr" || fail "no stderr line for $f2"
	check_file "$f1" 4000 "4000 keep (ondemand.c:24)
3000 main (ondemand.c:53)
1000 main (ondemand.c:51)"
	check_file "$f2" 4000 "4000 keep (ondemand.c:24)
3000 main (ondemand.c:53)
1000 main (ondemand.c:51)"
	local final=$tmp/asked/massif.out.$pid
	check_history "$f1" "$final"
	check_history "$f2" "$final"
	[ -e "/tmp/heaptrace-snapshot.$HT.$pid" ] &&
		fail "the acknowledgement file was left behind"

	# The same run, nobody asking.
	start "$tmp/plain" "$backend"
	wait_ready "$tmp/plain" 1
	local pid2=$READY
	finish
	if [ ${#norandom[@]} -eq 0 ]; then
		sed -i 's/0x[0-9A-F]*:/0x:/' "$final" "$tmp/plain/massif.out.$pid2"
	fi
	cmp "$final" "$tmp/plain/massif.out.$pid2" ||
		fail "the final profile differs from a run without snapshots"
}

case_fork() {
	start "$tmp/fork" ptrace fork
	wait_ready "$tmp/fork" 2
	local parent child
	parent=$(sed -n 1p <<<"$READY")
	child=$(sed -n 2p <<<"$READY")
	[ -n "$child" ] || { fail "no child announced"; return; }
	# Asked about the child: both processes are written.
	local by_cmd
	by_cmd=$("$ht" snapshot "$child") || fail "heaptrace snapshot $child: exit $?"
	finish
	for p in $parent $child; do
		grep -q "snapshot of process $p written" "$tmp/fork/stderr" ||
			fail "process $p: no snapshot"
	done
	local cf=$tmp/fork/massif.out.$child.snapshot-1
	[ "$by_cmd" = "$cf" ] || fail "heaptrace snapshot printed '$by_cmd', not $cf"
	# parent, child in either order of announcement
	local pf=$tmp/fork/massif.out.$parent.snapshot-1
	local h1 h2
	h1=$(grep '^mem_heap_B=' "$pf" | tail -1)
	h2=$(grep '^mem_heap_B=' "$cf" | tail -1)
	case "$h1 $h2" in
	"mem_heap_B=4000 mem_heap_B=4700" | "mem_heap_B=4700 mem_heap_B=4000") ;;
	*) fail "fork: last snapshots hold $h1 and $h2, expected 4000 and 4700" ;;
	esac
	check_history "$cf" "$tmp/fork/massif.out.$child"
	check_history "$pf" "$tmp/fork/massif.out.$parent"
}

# expect_error WHAT STATUS PATTERN ARGS...: heaptrace snapshot ARGS exits
# with STATUS and one stderr line matching PATTERN.
expect_error() {
	local what=$1 status=$2 pattern=$3
	shift 3
	"$@" >"$tmp/err.out" 2>"$tmp/err.err"
	local rc=$?
	[ "$rc" = "$status" ] || fail "$what: exit $rc, expected $status"
	[ "$(wc -l <"$tmp/err.err")" = 1 ] && grep -q "$pattern" "$tmp/err.err" ||
		fail "$what: stderr [$(cat "$tmp/err.err")], expected /$pattern/"
	[ -s "$tmp/err.out" ] && fail "$what: printed on stdout"
}

case_errors() {
	expect_error "no pid" 2 "missing the PID" "$ht" snapshot
	expect_error "bad pid" 2 "positive decimal integer" "$ht" snapshot 12x
	expect_error "two pids" 2 "one PID only" "$ht" snapshot 1 2
	local gone
	sleep 0 & gone=$!
	wait "$gone"
	expect_error "no such pid" 2 "no process $gone" "$ht" snapshot "$gone"
	sleep 30 & local untraced=$!
	pids+=("$untraced")
	expect_error "not traced" 2 "process $untraced is not traced" \
		"$ht" snapshot "$untraced"
	# A child traced by python (PTRACE_TRACEME), not by heaptrace.
	python3 -c '
import ctypes, os, sys, time
pid = os.fork()
if pid == 0:
    ctypes.CDLL(None).ptrace(0, 0, None, None)
    time.sleep(30)
    os._exit(0)
print(pid, flush=True)
time.sleep(30)
' >"$tmp/py.out" &
	pids+=("$!")
	for _ in $(seq 100); do [ -s "$tmp/py.out" ] && break; sleep 0.05; done
	local traced
	traced=$(cat "$tmp/py.out")
	pids+=("$traced")
	expect_error "traced by another" 2 "traced by process [0-9]* (python3*), not by heaptrace" \
		"$ht" snapshot "$traced"

	# heaptrace's own pid, and another user's heaptrace.
	start "$tmp/err" inline
	wait_ready "$tmp/err" 1
	expect_error "heaptrace itself" 2 "is heaptrace itself" \
		"$ht" snapshot "$HT"
	if [ "$(id -u)" = 0 ] && have setpriv && nobody_copy "$ht"; then
		expect_error "another user's" 2 "permission denied" \
			"${as_nobody[@]}" "$copy" snapshot "$READY"
	else
		echo "note: permission case skipped (needs root, setpriv, and a directory nobody can reach)"
	fi
	finish
}

case $case_name in
inline | ptrace) case_backend "$case_name" ;;
fork) case_fork ;;
errors) case_errors ;;
*)
	echo "ondemand.sh: unknown case '$case_name'" >&2
	exit 99
	;;
esac
pass_or_fail "PASS: $case_name"
