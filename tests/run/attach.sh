#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace attach` (tracer/attach.c, tracer/detach.c) on progs/attachee.c.
# CASE is one of:
#  cycles    attach and detach 5 times (1 s each) to four threads filling
#            and checking blocks: after each detach /proc/PID/maps and every
#            executable mapping's bytes are as before the attach; the
#            program's own checks pass and it exits 0; each profile exists.
#  cycles-100  ATTACHEE built with ATTACHEE_OWN_MALLOC (scratch pages
#            near the executable and near libc): 100 attaches, each ended
#            by SIGINT once attached: every one succeeds (exit 0) with no
#            warning; after the last, the executable mappings and their
#            bytes are as before the first, no mapping of heaptrace's is
#            left (anonymous executable, its ring), and the program's
#            output is exactly "ready", nothing on stderr, exit 0.
#  crowded   the attachee's "crowded" mode (every address heaptrace tries
#            first for its scratch pages is taken): 2 attaches of 1 s
#            succeed with a profile and no warning, each leaving the
#            executable mappings and their bytes as they were; exit 0.
#  read      the target is blocked in read() on a pipe: after the detach it
#            reads the data written then ("hello"), with no EINTR.
#  sleep     the target is in a 3 s nanosleep: it sleeps the full time.
#  pages     --pages-as-heap=yes: the profile starts with the current
#            mappings; after the detach page calls still work (no ENOSYS).
#  numbers   attached, then the program mallocs 3 x 1000 bytes and frees
#            one: the peak holds exactly 3000 useful bytes, the end 2000.
#  unknown   the same, then it frees a block made before the attach and
#            reallocs another (700 to 1500 bytes): the free counts nothing,
#            the realloc's new block counts (peak and end 3500); with
#            --massif-compat=yes the realloc is ignored (3000, 2000).
#  signals   the attachee's "signals" mode (two threads allocate in a loop,
#            each interrupted about every 50 us by a SIGUSR1 whose handler
#            allocates 300 blocks): 50 attaches with --sampling-interval=
#            512K, each ended by SIGINT 0.1 s after it is attached, so that
#            detaches find a thread in its handler with the context it
#            interrupted (on its stack) inside the inline stub's frame-less
#            code (stub_fast, stub_lean, a trampoline): at least one does
#            (heaptrace -v says so), every one exits 0 with no warning,
#            and the program runs on (its handlers return into no
#            unmapped page): its output is exactly "ready", nothing on
#            stderr, exit 0.
#  errors    one line and exit status 2 for: no such process, heaptrace
#            itself, a zombie, a stopped process, a kernel thread (when one is visible), a
#            process already traced, permission denied (as root: tried as
#            user 65534), bad --duration, --duration
#            with run.
# The cases below take progs/attach_cmds.c as ATTACHEE (a process steered
# by commands on stdin, each answered once done), and give heaptrace
# --backend=BACKEND unless BACKEND is "default" (then no --backend):
#  in-malloc  ATTACHEE built with HT_INTERPOSE (its own malloc, which
#            heaptrace must bind): a thread is blocked inside malloc(777)
#            when heaptrace attaches; let go after the attach, that call
#            must not be counted (it was not seen entering), while 3 x
#            1000 bytes malloc'd then, one freed, are exactly: peak 3000,
#            end 2000.
#  in-lean   ATTACHEE built with HT_INTERPOSE, attached with
#            --sampling-interval=512K: a thread blocks inside malloc(777)
#            called through the stub's lean path (an allocation not
#            sampled), and heaptrace detaches while it is there; let go
#            after the detach, that malloc returns through the stub, which
#            must still be mapped: the target goes on (3 x 1000 bytes,
#            one freed) and exits 0 with the expected answers.
#  late-threads-dlopen  after the attach, 4 new threads malloc 1500 bytes
#            each and wait, and LIB (progs/latelib.c) is dlopen'ed and
#            its latelib_keep() keeps 5000 bytes; then 100 bytes are
#            malloc'd and freed, which makes the peak: it must hold
#            exactly 6000 bytes in late_thread, 5000 in latelib_keep, 100
#            in cmd_malloc, and the end 100 bytes less. The threads are
#            still there at the detach, and end after it.
#  reattach  attach, 3 x 1000 bytes, one freed, detach (peak 3000, end
#            2000); 4000 bytes while detached; attach again, free a block
#            of each earlier period (unknown to this session: nothing
#            counted), 2 x 2500, one freed, detach (peak 5000, end 2500).
# In these the program's checks of its blocks pass after the
# detach, its answers (stdout) are exactly those expected, and it exits 0.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: attach.sh HEAPTRACE ATTACHEE CASE [BACKEND [LIB]]
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

if [ $# -lt 3 ] || [ $# -gt 5 ]; then
	usage "attach.sh HEAPTRACE ATTACHEE CASE [BACKEND [LIB]]"
fi
ht=$1 prog=$2 case=$3 lib=${5:-}
backend_opts=()
if [ -n "${4:-}" ] && [ "$4" != default ]; then
	backend_opts=(--backend="$4")
fi
need python3 timeout mkfifo
scratch

# start_attachee NAME ARGS...: the attachee started with ARGS
# (start_target: stdin on fd 9, files $tmp/NAME.*, pid in $target), once
# it said "ready".
start_attachee() {
	local name=$1
	shift
	start_target "$name" out ready "$prog" "$@"
}

# A digest of PID's executable mappings (where, what) and their bytes:
# the rest of the maps changes as the program runs. A scratch page left
# behind is an executable anonymous mapping.
image_digest() {
	python3 - "$1" <<'EOF'
import hashlib, sys
pid = sys.argv[1]
h = hashlib.sha256()
maps = open(f"/proc/{pid}/maps").read()
with open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps.splitlines():
        f = line.split()
        if "x" not in f[1] or (len(f) > 5 and f[5] in ("[vsyscall]", "[vdso]")):
            continue
        h.update(line.encode())
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        mem.seek(lo)
        try:
            h.update(mem.read(hi - lo))
        except OSError:
            pass
print(h.hexdigest())
EOF
}

# peak_and_last FILE: "PEAK LAST" useful heap bytes of the profile.
peak_and_last() {
	python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
snaps = text.split("snapshot=")[1:]
heap = [int(re.search(r"mem_heap_B=(\d+)", s).group(1)) for s in snaps]
print(max(heap) if heap else -1, heap[-1] if heap else -1)
EOF
}

# attach_for SECONDS OUT [OPTIONS...]: attach to $target for SECONDS.
attach_for() {
	local secs=$1 out=$2
	shift 2
	timeout -k 5 60 "$ht" attach --duration="$secs" \
		--massif-out-file="$out" "$@" "$target" 2>>"$tmp/ht.err"
}

# attach_then_interrupt SECONDS ARGS...: `heaptrace attach -v ARGS` to
# $target, stderr in $tmp/c.err; once it says it attached (or is gone: a
# failed attach), SECONDS later, SIGINT, as Ctrl-C would. Returns its
# exit status.
attach_then_interrupt() {
	local settle=$1 h
	shift
	: >"$tmp/c.err"
	"$ht" attach -v "$@" "$target" 2>"$tmp/c.err" &
	h=$!
	for _ in $(seq 200); do
		grep -q "attached, " "$tmp/c.err" && break
		kill -0 $h 2>/dev/null || break
		sleep 0.05
	done
	sleep "$settle"
	kill -INT $h 2>/dev/null
	wait $h
}

case_cycles() {
	start_attachee cycles threads 0
	for i in 1 2 3 4 5; do
		local before after
		before=$(image_digest "$target")
		attach_for 1 "$tmp/m.$i" || fail "cycle $i: heaptrace exit $?"
		after=$(image_digest "$target")
		[ "$before" = "$after" ] ||
			fail "cycle $i: maps or code differ after the detach"
		grep -q "^snapshot=" "$tmp/m.$i" 2>/dev/null ||
			fail "cycle $i: no profile"
		grep -q "left mapped" "$tmp/ht.err" &&
			fail "cycle $i: scratch pages left mapped"
	done
	finish_target cycles
	[ "$status" = 0 ] || fail "the target exited with $status: $(cat "$tmp/cycles.err")"
}

# exec_anon PID: PID's anonymous executable mappings (and heaptrace's
# ring), one a line.
exec_anon() {
	awk '$2 ~ /x/ && NF == 5 || /heaptrace/' "/proc/$1/maps"
}

case_cycles_100() {
	start_attachee many threads 0
	local before anon i h st
	before=$(image_digest "$target")
	anon=$(exec_anon "$target")
	for i in $(seq 100); do
		attach_then_interrupt 0 --massif-out-file="$tmp/m"
		st=$?
		if [ $st != 0 ] || grep -q "warning" "$tmp/c.err"; then
			fail "attach $i: heaptrace exit $st: $(grep -v ': hit ' "$tmp/c.err" | grep -v 'patched inline' | tail -n 5)"
			break
		fi
	done
	[ "$before" = "$(image_digest "$target")" ] ||
		fail "after $i attaches: executable mappings or code differ"
	[ "$anon" = "$(exec_anon "$target")" ] ||
		fail "after $i attaches: mappings left: $(exec_anon "$target")"
	finish_target many
	[ "$status" = 0 ] || fail "the target exited with $status: $(cat "$tmp/many.err")"
	[ "$(cat "$tmp/many.out")" = ready ] && [ ! -s "$tmp/many.err" ] ||
		fail "the target's output differs: $(cat "$tmp/many.out" "$tmp/many.err")"
}

case_signals() {
	start_attachee sig signals
	local i st left=0 over=0
	for i in $(seq 50); do
		attach_then_interrupt 0.1 --sampling-interval=512K \
			--sampling-seed=1 --massif-out-file="$tmp/m"
		st=$?
		if [ $st != 0 ] || grep -q "warning" "$tmp/c.err"; then
			fail "attach $i: heaptrace exit $st: $(grep -v ': hit ' "$tmp/c.err" | grep -v 'patched inline' | tail -n 5)"
			break
		fi
		grep -q "left mapped" "$tmp/c.err" && left=$((left + 1))
		over=$((over + $(grep -c "handler on its stack returns into" "$tmp/c.err")))
		if ! kill -0 "$target" 2>/dev/null; then
			fail "after attach $i the target is gone: $(cat "$tmp/sig.err")"
			break
		fi
	done
	echo "signals: $i attaches, $over threads in a handler over the stub, $left left the stub mapped"
	# 6 to 19 of them in 50 attaches here: none means the test no
	# longer makes the case it is for
	[ $over -gt 0 ] ||
		fail "no detach found a handler interrupting the stub"
	finish_target sig
	[ "$status" = 0 ] || fail "the target exited with $status: $(cat "$tmp/sig.err")"
	[ "$(cat "$tmp/sig.out")" = ready ] && [ ! -s "$tmp/sig.err" ] ||
		fail "the target's output differs: $(cat "$tmp/sig.out" "$tmp/sig.err")"
}

case_crowded() {
	start_attachee crowded crowded
	for i in 1 2; do
		local before
		before=$(image_digest "$target")
		attach_for 1 "$tmp/m.$i" || fail "attach $i: heaptrace exit $?: $(tail -n 3 "$tmp/ht.err")"
		[ "$before" = "$(image_digest "$target")" ] ||
			fail "attach $i: maps or code differ after the detach"
		grep -q "^snapshot=" "$tmp/m.$i" 2>/dev/null ||
			fail "attach $i: no profile"
	done
	grep -q "warning" "$tmp/ht.err" && fail "warnings: $(cat "$tmp/ht.err")"
	finish_target crowded
	[ "$status" = 0 ] || fail "the target exited with $status: $(cat "$tmp/crowded.err")"
}

case_read() {
	start_attachee read read
	local before
	before=$(image_digest "$target")
	attach_for 1 "$tmp/m" || fail "heaptrace exit $?"
	[ "$before" = "$(image_digest "$target")" ] || fail "maps or code differ"
	printf hello >&9
	finish_target read
	[ "$status" = 0 ] || fail "the reader exited with $status: $(cat "$tmp/read.err")"
}

case_sleep() {
	local t0=$SECONDS
	start_attachee sleep sleep 3000
	attach_for 1 "$tmp/m" || fail "heaptrace exit $?"
	finish_target sleep
	[ "$status" = 0 ] || fail "the sleeper exited with $status: $(cat "$tmp/sleep.err")"
	[ $((SECONDS - t0)) -ge 3 ] || fail "slept less than 3 s"
}

case_pages() {
	start_attachee pages threads 4
	# Through the stubs (libc's page-call wrappers patched), then through
	# PTRACE_SYSCALL stops: the same start-up mappings either way.
	attach_for 1 "$tmp/m" --pages-as-heap=yes || fail "heaptrace exit $?"
	grep -q "(inline)" "$tmp/ht.err" || fail "no summary line (inline)"
	: >"$tmp/ht.err"
	attach_for 1 "$tmp/m2" --pages-as-heap=yes --backend=ptrace ||
		fail "heaptrace --backend=ptrace exit $?"
	grep -q "(ptrace syscall stops)" "$tmp/ht.err" ||
		fail "no summary line (ptrace syscall stops)"
	local peak peak2
	read -r peak _ < <(peak_and_last "$tmp/m")
	read -r peak2 _ < <(peak_and_last "$tmp/m2")
	# the executable, libc, ld.so, four thread stacks at least, and none
	# of heaptrace's own pages (ring, scratch) among them
	[ "$peak" -gt 4000000 ] 2>/dev/null || fail "pages peak $peak: the current mappings are missing"
	[ "$peak" -lt $((peak2 + 1000000)) ] 2>/dev/null ||
		fail "pages peak $peak through the stubs, $peak2 through stops: heaptrace's own mappings counted?"
	finish_target pages
	[ "$status" = 0 ] || fail "the target exited with $status after the detach: $(cat "$tmp/pages.err")"
}

# attach_and_allocate NAME MODE OUT [OPTIONS...]: start the attachee in
# MODE, attach, let it allocate, detach with SIGINT, let it exit.
attach_and_allocate() {
	local name=$1 mode=$2 out=$3
	shift 3
	start_attachee "$name" "$mode"
	# Emptied here, not by the background job's redirection, which may
	# come after wait_for has read an earlier call's "attached, " (the
	# program then allocated before the attach: a profile of nothing).
	: >"$tmp/ht.err"
	"$ht" attach -v --time-unit=B --massif-out-file="$out" "$@" \
		"$target" 2>>"$tmp/ht.err" &
	local h=$!
	wait_for "$tmp/ht.err" "attached, " || fail "heaptrace did not attach"
	printf x >&9
	wait_for "$tmp/$name.out" done || fail "the target did not allocate"
	kill -INT $h
	wait $h || fail "heaptrace exit $?"
	printf y >&9
	finish_target "$name"
	[ "$status" = 0 ] || fail "the target exited with $status"
}

# expect_numbers FILE PEAK LAST
expect_numbers() {
	local peak last
	read -r peak last < <(peak_and_last "$1")
	[ "$peak" = "$2" ] && [ "$last" = "$3" ] ||
		fail "$1: peak $peak B and last $last B, $2 and $3 expected"
}

case_numbers() {
	attach_and_allocate numbers alloc "$tmp/m"
	expect_numbers "$tmp/m" 3000 2000
	grep -q "alloc_three" "$tmp/m" || fail "alloc_three is not in the tree"
}

case_unknown() {
	attach_and_allocate unknown unknown "$tmp/m"
	expect_numbers "$tmp/m" 3500 3500
	attach_and_allocate compat unknown "$tmp/mc" --massif-compat=yes
	expect_numbers "$tmp/mc" 3000 2000
}

# expect_error WHAT PATTERN ARGS...: heaptrace ARGS exits 2 with one line
# on stderr matching PATTERN.
expect_error() {
	local what=$1 pattern=$2
	shift 2
	"$@" >"$tmp/e.out" 2>"$tmp/e.err"
	local st=$?
	local lines
	lines=$(wc -l <"$tmp/e.err")
	if [ $st -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -e "$pattern" "$tmp/e.err"; then
		fail "$what: exit $st, stderr: $(cat "$tmp/e.err")"
	fi
}

case_errors() {
	# a pid that no longer exists
	sleep 0 & local gone=$!
	wait $gone
	expect_error "no such process" "no process $gone" "$ht" attach "$gone"
	expect_error "itself" "heaptrace itself" sh -c 'exec "$0" attach $$' "$ht"
	# a zombie: a child its parent does not reap
	python3 -c 'import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(0)
print(pid, flush=True)
time.sleep(30)' >"$tmp/zombie" &
	pids+=($!)
	disown
	wait_for "$tmp/zombie" . || exit 99
	sleep 0.2
	expect_error "zombie" "is a zombie" "$ht" attach "$(cat "$tmp/zombie")"
	# a stopped process (SIGSTOP)
	sleep 30 &
	local stopped=$!
	pids+=("$stopped")
	disown
	kill -STOP "$stopped"
	sleep 0.1
	expect_error "stopped" "is stopped" "$ht" attach "$stopped"
	grep -q "^State:[[:space:]]*T" "/proc/$stopped/status" ||
		fail "the stopped process was not left stopped"
	local kthread
	kthread=$(python3 -c 'import os
for p in sorted(int(d) for d in os.listdir("/proc") if d.isdigit()):
    try:
        s = open(f"/proc/{p}/stat").read()
    except OSError:
        continue
    if int(s[s.rindex(")") + 2:].split()[6]) & 0x200000:
        print(p)
        break')
	if [ -n "$kthread" ]; then
		expect_error "kernel thread" "kernel thread" "$ht" attach "$kthread"
	else
		echo "no kernel thread visible here: that error is not checked"
	fi
	start_attachee errors read
	"$ht" attach -q --massif-out-file=/dev/null "$target" 2>/dev/null &
	local first=$!
	wait_for "/proc/$target/status" "TracerPid:[[:space:]]*[1-9]"
	expect_error "already traced" "already traced by process" "$ht" attach "$target"
	kill -INT $first
	wait $first
	if [ "$(id -u)" = 0 ] && have setpriv && nobody_copy "$ht"; then
		expect_error "permission" "permission denied" \
			"${as_nobody[@]}" "$copy" attach "$target"
	elif [ "$(id -u)" != 0 ]; then
		expect_error "permission" "permission denied" "$ht" attach 1
	fi
	expect_error "--duration=0" "--duration" "$ht" attach --duration=0 "$target"
	expect_error "--duration=x" "--duration" "$ht" attach --duration=x "$target"
	expect_error "--duration with run" "attach only" "$ht" run \
		--duration=1 -- "$prog" sleep 1
	printf hello >&9
	finish_target errors
	[ "$status" = 0 ] || fail "the target exited with $status after the error cases"
}

# --- the cases on progs/attach_cmds.c

# How many lines the target has answered so far, and its whole expected
# output.
answers=0
expected=

# start_cmds NAME: start the attach_cmds target (start_attachee); its first
# line is "ready".
start_cmds() {
	start_attachee "$1" cmds
	answers=1
	expected="ready"$'\n'
}

# send NAME COMMAND: COMMAND to the target; its answer, the next line of
# $tmp/NAME.out, must be "ok COMMAND" within 10 s.
send() {
	local name=$1 cmd=$2 got=
	answers=$((answers + 1))
	expected+="ok $cmd"$'\n'
	printf '%s\n' "$cmd" >&9
	for _ in $(seq 500); do
		if [ "$(wc -l <"$tmp/$name.out")" -ge "$answers" ]; then
			got=$(sed -n "${answers}p" "$tmp/$name.out")
			break
		fi
		sleep 0.02
	done
	[ "$got" = "ok $cmd" ] ||
		fail "$name: '$cmd' answered '${got:-nothing within 10 s}'"
}

# finish_cmds NAME: end of file to the target: it must exit 0 having
# answered exactly what was expected, then "bye".
finish_cmds() {
	finish_target "$1"
	[ "$status" = 0 ] ||
		fail "$1: the target exited with $status (0 expected): $(cat "$tmp/$1.err")"
	printf '%sbye\n' "$expected" >"$tmp/$1.expected"
	cmp -s "$tmp/$1.expected" "$tmp/$1.out" ||
		fail "$1: the target's output is not the expected one:
$(diff "$tmp/$1.expected" "$tmp/$1.out")"
}

# session_start OUT [OPTIONS...]: heaptrace attach -v to $target in the
# background ($session), with the case's backend, its stderr in OUT.err;
# returns once heaptrace says it attached (10 s at most).
session_start() {
	local out=$1
	shift
	"$ht" attach -v --time-unit=B --massif-out-file="$out" \
		"${backend_opts[@]}" "$@" "$target" 2>"$out.err" &
	session=$!
	wait_for "$out.err" "attached, " ||
		fail "heaptrace did not attach within 10 s: $(grep -v ': hit ' "$out.err" | tail -n 5)"
}

# session_end OUT: SIGINT to heaptrace, which must detach and exit 0
# within 30 s (else it is SIGKILLed).
session_end() {
	kill -INT "$session" 2>/dev/null
	if ! wait_gone "$session" 30; then
		kill -9 "$session"
		fail "heaptrace did not detach within 30 s of SIGINT"
	fi
	wait "$session"
	local st=$?
	[ $st = 0 ] || fail "heaptrace exit $st after SIGINT (0 expected)"
	grep -v ": hit " "$1.err" >>"$tmp/ht.err"
}

case_in_malloc() {
	start_cmds inmalloc
	# a thread blocked in the program's own malloc, before it allocates
	send inmalloc "block 777"
	session_start "$tmp/m"
	send inmalloc release
	send inmalloc "malloc a 1000"
	send inmalloc "malloc b 1000"
	send inmalloc "malloc c 1000"
	send inmalloc "free b"
	session_end "$tmp/m"
	# 3777 and 2777 would be a call counted that was not seen entering
	expect_numbers "$tmp/m" 3000 2000
	send inmalloc "free a"
	send inmalloc "free c"
	send inmalloc "free z"
	finish_cmds inmalloc
}

case_in_lean() {
	start_cmds inlean
	session_start "$tmp/m" --sampling-interval=512K --sampling-seed=1
	# blocked inside the original, with the lean path's frame below it
	send inlean "block 777"
	session_end "$tmp/m"
	send inlean release
	send inlean "malloc a 1000"
	send inlean "malloc b 1000"
	send inlean "free b"
	send inlean "free a"
	send inlean "free z"
	finish_cmds inlean
}

case_late_threads_dlopen() {
	if [ ! -f "$lib" ]; then
		echo "attach.sh: late-threads-dlopen: no library LIB '$lib'" >&2
		exit 99
	fi
	start_cmds late
	session_start "$tmp/m" --threshold=0 --peak-inaccuracy=0
	send late "spawn 4 1500"
	send late "dlopen $lib"
	send late "malloc t 100"
	send late "free t"
	session_end "$tmp/m"
	local f fn want got
	for f in late_thread:6000 latelib_keep:5000 cmd_malloc:100; do
		fn=${f%:*} want=${f#*:}
		got=$(peak_bytes "$tmp/m" "$fn")
		[ "$got" = "$want" ] ||
			fail "the peak holds $got B in $fn, $want B expected"
	done
	local peak last
	read -r peak last < <(peak_and_last "$tmp/m")
	# the rest of the peak is ld.so's (dlopen) and the new threads'
	# (their TLS): counted, but not known to the byte here
	[ "$peak" -ge 11100 ] 2>/dev/null ||
		fail "peak $peak B, at least 11100 B expected"
	[ "$last" = $((peak - 100)) ] ||
		fail "last snapshot $last B, $((peak - 100)) B expected (the peak less the 100 B freed)"
	send late join
	finish_cmds late
}

case_reattach() {
	start_cmds reattach
	session_start "$tmp/m1"
	send reattach "malloc a 1000"
	send reattach "malloc b 1000"
	send reattach "malloc c 1000"
	send reattach "free b"
	session_end "$tmp/m1"
	send reattach "malloc d 4000"
	session_start "$tmp/m2"
	send reattach "free a"
	send reattach "free d"
	send reattach "malloc e 2500"
	send reattach "malloc f 2500"
	send reattach "free e"
	session_end "$tmp/m2"
	expect_numbers "$tmp/m1" 3000 2000
	expect_numbers "$tmp/m2" 5000 2500
	send reattach "free c"
	send reattach "free f"
	finish_cmds reattach
}

case "$case" in
cycles | crowded | read | sleep | pages | numbers | unknown | errors | signals)
	"case_$case" ;;
cycles-100 | in-malloc | in-lean | late-threads-dlopen | reattach) "case_${case//-/_}" ;;
*) echo "attach.sh: unknown case $case" >&2; exit 99 ;;
esac
if [ $fails -ne 0 ]; then
	echo "--- heaptrace's stderr"
	tail -n 20 "$tmp/ht.err" 2>/dev/null
	exit 1
fi
pass_or_fail "PASS: $case"
