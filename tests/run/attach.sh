#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace attach` (tracer/attach.c, tracer/detach.c) on progs/attachee.c.
# CASE is one of:
#  cycles    attach and detach 5 times (1 s each) to four threads filling
#            and checking blocks: after each detach /proc/PID/maps and every
#            executable mapping's bytes are as before the attach; the
#            program's own checks pass and it exits 0; each profile exists.
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
#  errors    one line and exit status 2 for: no such process, heaptrace
#            itself, a zombie, a stopped process, a kernel thread (when one is visible), a
#            process already traced, permission denied (as root: tried as
#            user 65534), --backend=inline, bad --duration, --duration
#            with run.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: attach.sh HEAPTRACE ATTACHEE CASE
set -u

if [ $# -ne 3 ]; then
	echo "usage: attach.sh HEAPTRACE ATTACHEE CASE" >&2
	exit 99
fi
ht=$1 prog=$2 case=$3
for tool in python3 timeout mkfifo; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed"
		exit 77
	fi
done
tmp=$(mktemp -d) || exit 99
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
ulimit -c 0
fails=0

bad() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# wait_for FILE TEXT: up to 10 s for TEXT to appear in FILE.
wait_for() {
	for _ in $(seq 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# start_target NAME ARGS...: run the attachee with stdin from the FIFO
# $tmp/NAME.in (kept open for writing on fd 9), its stdout and stderr in
# $tmp/NAME.out/.err and its exit status in $tmp/NAME.status; sets
# $target. Returns once it said "ready".
start_target() {
	local name=$1
	shift
	mkfifo "$tmp/$name.in"
	( "$prog" "$@" <"$tmp/$name.in" >"$tmp/$name.out" 2>"$tmp/$name.err"
	  echo $? >"$tmp/$name.status" ) &
	exec 9>"$tmp/$name.in"
	wait_for "$tmp/$name.out" ready || { echo "target did not start"; exit 99; }
	target=$(pgrep -n -f "^$prog $1")
	[ -n "$target" ] || { echo "target not found"; exit 99; }
	pids+=("$target")
}

# finish_target NAME: close its stdin and wait for its exit status.
finish_target() {
	exec 9>&-
	wait_for "$tmp/$1.status" . || bad "$1: the target did not exit"
	status=$(cat "$tmp/$1.status" 2>/dev/null)
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

case_cycles() {
	start_target cycles threads 15
	for i in 1 2 3 4 5; do
		local before after
		before=$(image_digest "$target")
		attach_for 1 "$tmp/m.$i" || bad "cycle $i: heaptrace exit $?"
		after=$(image_digest "$target")
		[ "$before" = "$after" ] ||
			bad "cycle $i: maps or code differ after the detach"
		grep -q "^snapshot=" "$tmp/m.$i" 2>/dev/null ||
			bad "cycle $i: no profile"
		grep -q "left mapped" "$tmp/ht.err" &&
			bad "cycle $i: scratch pages left mapped"
	done
	finish_target cycles
	[ "$status" = 0 ] || bad "the target exited with $status: $(cat "$tmp/cycles.err")"
}

case_read() {
	start_target read read
	local before
	before=$(image_digest "$target")
	attach_for 1 "$tmp/m" || bad "heaptrace exit $?"
	[ "$before" = "$(image_digest "$target")" ] || bad "maps or code differ"
	printf hello >&9
	finish_target read
	[ "$status" = 0 ] || bad "the reader exited with $status: $(cat "$tmp/read.err")"
}

case_sleep() {
	local t0=$SECONDS
	start_target sleep sleep 3000
	attach_for 1 "$tmp/m" || bad "heaptrace exit $?"
	finish_target sleep
	[ "$status" = 0 ] || bad "the sleeper exited with $status: $(cat "$tmp/sleep.err")"
	[ $((SECONDS - t0)) -ge 3 ] || bad "slept less than 3 s"
}

case_pages() {
	start_target pages threads 4
	attach_for 1 "$tmp/m" --pages-as-heap=yes || bad "heaptrace exit $?"
	grep -q "(ptrace syscall stops)" "$tmp/ht.err" || bad "no summary line"
	read -r peak _ < <(peak_and_last "$tmp/m")
	# the executable, libc, ld.so, four thread stacks at least
	[ "$peak" -gt 4000000 ] 2>/dev/null || bad "pages peak $peak: the current mappings are missing"
	finish_target pages
	[ "$status" = 0 ] || bad "the target exited with $status after the detach: $(cat "$tmp/pages.err")"
}

# attach_and_allocate NAME MODE OUT [OPTIONS...]: start the attachee in
# MODE, attach, let it allocate, detach with SIGINT, let it exit.
attach_and_allocate() {
	local name=$1 mode=$2 out=$3
	shift 3
	start_target "$name" "$mode"
	"$ht" attach -v --time-unit=B --massif-out-file="$out" "$@" \
		"$target" 2>"$tmp/ht.err" &
	local h=$!
	wait_for "$tmp/ht.err" "attached, " || bad "heaptrace did not attach"
	printf x >&9
	wait_for "$tmp/$name.out" done || bad "the target did not allocate"
	kill -INT $h
	wait $h || bad "heaptrace exit $?"
	printf y >&9
	finish_target "$name"
	[ "$status" = 0 ] || bad "the target exited with $status"
}

# expect_numbers FILE PEAK LAST
expect_numbers() {
	local peak last
	read -r peak last < <(peak_and_last "$1")
	[ "$peak" = "$2" ] && [ "$last" = "$3" ] ||
		bad "$1: peak $peak B and last $last B, $2 and $3 expected"
}

case_numbers() {
	attach_and_allocate numbers alloc "$tmp/m"
	expect_numbers "$tmp/m" 3000 2000
	grep -q "alloc_three" "$tmp/m" || bad "alloc_three is not in the tree"
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
		bad "$what: exit $st, stderr: $(cat "$tmp/e.err")"
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
		bad "the stopped process was not left stopped"
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
	start_target errors read
	"$ht" attach -q --massif-out-file=/dev/null "$target" 2>/dev/null &
	local first=$!
	for _ in $(seq 100); do
		grep -q "TracerPid:[[:space:]]*[1-9]" "/proc/$target/status" && break
		sleep 0.1
	done
	expect_error "already traced" "already traced by process" "$ht" attach "$target"
	kill -INT $first
	wait $first
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		expect_error "permission" "permission denied" setpriv \
			--reuid=65534 --regid=65534 --clear-groups "$ht" attach "$target"
	elif [ "$(id -u)" != 0 ]; then
		expect_error "permission" "permission denied" "$ht" attach 1
	fi
	expect_error "--backend=inline" "backend=inline" "$ht" attach \
		--backend=inline "$target"
	expect_error "--duration=0" "--duration" "$ht" attach --duration=0 "$target"
	expect_error "--duration=x" "--duration" "$ht" attach --duration=x "$target"
	expect_error "--duration with run" "attach only" "$ht" run \
		--duration=1 -- "$prog" sleep 1
	printf hello >&9
	finish_target errors
	[ "$status" = 0 ] || bad "the target exited with $status after the error cases"
}

case "$case" in
cycles | read | sleep | pages | numbers | unknown | errors) "case_$case" ;;
*) echo "attach.sh: unknown case $case" >&2; exit 99 ;;
esac
if [ $fails -ne 0 ]; then
	echo "--- heaptrace's stderr"
	tail -n 20 "$tmp/ht.err" 2>/dev/null
	exit 1
fi
echo "PASS: $case"
