#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Programs that sandbox themselves (tracer/target/inject.c, "The target's
# own seccomp filter"; tracer/inline/inline.c, the ring made in the
# target): the program's behaviour must be its native one, children and
# statuses included. SANDBOX is progs/sandbox.c, ATTACHEE progs/attachee.c.
# User 65534 (nobody) is reached with setpriv, running copies of the
# programs in the scratch directory (the build may be private); cases that
# need root, or setpriv, or a scratch directory nobody can reach, are
# skipped where those are missing.
# CASE is one of:
#  nobody-attach  ATTACHEE (four threads checking every byte of their
#            blocks) runs as nobody; root attaches three times: for 1 s
#            (the summary line says inline, no warning, and the profile
#            has blocks), then until heaptrace is SIGKILLed, then until
#            it gets SIGHUP (either way out for heaptrace), each 0.5 s
#            after the attach. The program runs on, and ends with status
#            0 and its native output.
#  nobody-drop  `heaptrace run` as root of SANDBOX dropping to nobody
#            before it forks two children (a daemon's master and
#            workers): native output and status, a profile per process,
#            each child's with the blocks it made after its fork.
#  run-FILTER  SANDBOX installs FILTER (errno-openat, kill-openat,
#            kill-memfd, two: progs/sandbox.c) and forks two children:
#            under `run` (default backend; as root, each child's profile
#            has its blocks), `run --backend=ptrace` and `run
#            --pages-as-heap=yes`, as root and as nobody, the output and
#            status are native (children alive, the filter's denials
#            as they were). As nobody, each child gets one warning that
#            it is let go untraced, under the default backend.
#  run-exec  SANDBOX installs the memfd filter (memfd_create kills) and
#            execs itself, whose new image forks the children: as root
#            the children are profiled; as nobody the new image is not
#            (one warning; the summary line says "no allocator probes");
#            the output and status are native.
#  contained heaptrace itself runs under a filter (SANDBOX --contain: a
#            container's), which its programs inherit: SANDBOX with no
#            filter of its own is profiled inline, children included, no
#            warning; SANDBOX errno-openat's children are let go with a
#            warning even as root (a filtered heaptrace may not lift a
#            filter); native output and statuses.
#  no-fallback  the inline path cannot be set up (a 1 GiB ring in a
#            process limited to 600 MB of address space, prlimit): no
#            fallback to ptrace breakpoints, which a dying heaptrace
#            would leave to kill the program: ATTACHEE attached is
#            refused in one line (exit 2) and ends as natively; under run,
#            one warning, "no allocator probes", native output.
#  attach-FILTER  the same filter, the program waiting on stdin: attached
#            by root, children profiled and output native; attached by
#            root that SIGKILLs itself at its 1st, 3rd, then 6th injected
#            system call (HEAPTRACE_TEST_DIE_IN_INJECT, while the filter
#            is lifted for it), native output (the filter holds again);
#            attached by nobody (the program as nobody too), a one-line
#            refusal, exit status 2, and native output.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

if [ $# -ne 4 ]; then
	usage "sandbox.sh HEAPTRACE SANDBOX ATTACHEE CASE"
fi
ht=$(abspath "$1") sandbox=$(abspath "$2") attachee=$(abspath "$3") case=$4
need_exec "$ht" "$sandbox" "$attachee"
need mkfifo setpriv
scratch
chmod 777 "$tmp"
launcher=() # run_case's command before SANDBOX

is_root() {
	[ "$(id -u)" = 0 ]
}

# As root, every case runs copies of the three programs that nobody can
# reach: the build may lie in a directory only its owner can enter.
if is_root; then
	for p in ht sandbox attachee; do
		nobody_copy "${!p}" && printf -v "$p" '%s' "$copy"
	done
fi

# nobody_can_run: nobody can run heaptrace and the programs here.
nobody_can_run() {
	is_root && "${as_nobody[@]}" test -x "$ht" -a -x "$sandbox" \
		-a -x "$attachee" -a -w "$tmp" 2>/dev/null
}

# native NAME ARGS...: SANDBOX ARGS run alone, "go" on its stdin: its
# stdout and status in $tmp/NAME.native.
native() {
	local name=$1
	shift
	echo go | "$@" >"$tmp/$name.native" 2>/dev/null
	echo "status $?" >>"$tmp/$name.native"
}

# same_as_native WHAT NAME FILE STATUS: FILE (stdout) and STATUS are those
# of $tmp/NAME.native.
same_as_native() {
	local what=$1 name=$2 got
	got=$(cat "$3"; echo "status $4")
	if [ "$got" != "$(cat "$tmp/$name.native")" ]; then
		fail "$what: output and status differ from the native run:"
		diff <(echo "$got") "$tmp/$name.native" | head -20
	fi
}

# max_heap FILE: the largest mem_heap_B of profile FILE.
max_heap() {
	awk -F= '/^mem_heap_B=/ { if ($2 > m) m = $2 } END { print m + 0 }' "$1"
}

# first_heap FILE: mem_heap_B of FILE's first snapshot.
first_heap() {
	awk -F= '/^mem_heap_B=/ { print $2; exit }' "$1"
}

# children_profiled WHAT PREFIX PARENT: profiles PREFIX.PID other than
# PARENT's: exactly two, each with at least 2000 bytes more at its peak
# than at the fork (the block each child keeps: 2000 and 3000 bytes).
children_profiled() {
	local what=$1 prefix=$2 parent=$3 f n=0 grew
	for f in "$prefix".*; do
		case $f in *.sites | "$prefix.$parent") continue ;; esac
		[ -f "$f" ] || continue
		n=$((n + 1))
		grew=$(($(max_heap "$f") - $(first_heap "$f")))
		[ "$grew" -ge 2000 ] ||
			fail "$what: child profile $f grew by $grew bytes after the fork, want >= 2000"
	done
	[ "$n" -eq 2 ] || fail "$what: $n child profiles, want 2 ($(ls "$tmp"))"
}

# run_case WHAT USER PREFIX NAME HT_OPTS... -- SANDBOX_ARGS...: `heaptrace
# run` (as root or nobody: USER) of SANDBOX, stdin "go"; its stdout must
# be the native one (NAME); heaptrace's stderr in $tmp/err, the program's
# pid in $parent (from its profile's name).
run_case() {
	local what=$1 user=$2 prefix=$3 name=$4 st
	shift 4
	take_opts "$@"
	shift "$taken"
	local who=()
	[ "$user" = nobody ] && who=("${as_nobody[@]}")
	[ "$what" != "${what#contained}" ] && who=("$sandbox" --contain)
	rm -f "$prefix".*
	echo go | "${who[@]}" "$ht" run "${opts[@]}" \
		--massif-out-file="$prefix.%p" ${launcher[@]+"${launcher[@]}"} "$sandbox" "$@" \
		>"$tmp/out" 2>"$tmp/err"
	st=$?
	same_as_native "$what" "$name" "$tmp/out" "$st"
	parent=$(grep -o " in $prefix\.[0-9]* (" "$tmp/err" | head -1)
	parent=${parent% (}
	parent=${parent##*.}
	[ -n "$parent" ] || fail "$what: no summary line: $(cat "$tmp/err")"
}

case_run() {
	local filter=$1 user what
	native "$filter" "$sandbox" "$filter" 2
	for user in root nobody; do
		if [ "$user" = nobody ] && ! nobody_can_run; then
			echo "(nobody cannot run the build here, or not root: cases as nobody not run)"
			continue
		fi
		if [ "$user" = root ] && ! is_root; then
			echo "(not root: cases as root not run)"
			continue
		fi
		what="run $filter as $user"
		run_case "$what" "$user" "$tmp/m" "$filter" -- "$filter" 2
		if [ "$user" = root ]; then
			children_profiled "$what" "$tmp/m" "$parent"
			grep -i warning "$tmp/err" &&
				fail "$what: a warning: $(cat "$tmp/err")"
		else
			[ "$(grep -c "let go untraced: it has a seccomp filter" "$tmp/err")" -eq 2 ] ||
				fail "$what: want one warning per child: $(cat "$tmp/err")"
		fi
		run_case "$what --backend=ptrace" "$user" "$tmp/p" "$filter" \
			--backend=ptrace -- "$filter" 2
		children_profiled "$what --backend=ptrace" "$tmp/p" "$parent"
		run_case "$what --pages-as-heap=yes" "$user" "$tmp/g" "$filter" \
			--pages-as-heap=yes -- "$filter" 2
	done
}

# attach_sandbox WHAT USER FILTER: SANDBOX FILTER 2 wait started as USER,
# attached by USER; $tmp/err is heaptrace's stderr, $hst its status.
attach_sandbox() {
	local what=$1 user=$2 filter=$3 who=() hpid
	[ "$user" = nobody ] && who=("${as_nobody[@]}")
	rm -f "$tmp"/a.* "$tmp"/s.*
	start_target s out ready "${who[@]}" "$sandbox" "$filter" 2 wait
	local v=()
	[ "$user" = root ] && v=(-v)
	"${who[@]}" "$ht" attach "${v[@]}" --massif-out-file="$tmp/a.%p" \
		"$target" >/dev/null 2>"$tmp/err" &
	hpid=$!
	pids+=("$hpid")
	if [ "$user" = root ]; then
		wait_for "$tmp/err" "attached, " ||
			fail "$what: not attached within 10 s: $(tail -n 3 "$tmp/err")"
	else
		wait "$hpid"
	fi
	echo go >&9
	finish_target s || return
	same_as_native "$what" "$filter" "$tmp/s.out" "$status"
	if ! wait_gone "$hpid" 30; then
		fail "$what: heaptrace still there 30 s after the program's end"
		kill -9 "$hpid"
	fi
	wait "$hpid"
	hst=$?
}

# attach_dying WHAT FILTER N: SANDBOX FILTER 2 wait attached by root,
# which SIGKILLs itself at its Nth injected system call; then the program
# goes on as natively.
attach_dying() {
	local what=$1 filter=$2 hst
	rm -f "$tmp"/s.*
	start_target s out ready "$sandbox" "$filter" 2 wait
	HEAPTRACE_TEST_DIE_IN_INJECT=$3 "$ht" attach \
		--massif-out-file="$tmp/d.%p" "$target" >/dev/null 2>"$tmp/err"
	hst=$?
	[ "$hst" = 137 ] || fail "$what: heaptrace exited $hst, not killed by itself"
	alive "$target" >/dev/null ||
		fail "$what: the program did not survive: $(cat "$tmp/err")"
	echo go >&9
	finish_target s || return
	same_as_native "$what" "$filter" "$tmp/s.out" "$status"
}

case_run_exec() {
	local user what
	native exec "$sandbox" memfd 2 exec
	for user in root nobody; do
		if [ "$user" = nobody ] && ! nobody_can_run; then
			echo "(nobody cannot run the build here, or not root: case as nobody not run)"
			continue
		fi
		if [ "$user" = root ] && ! is_root; then
			echo "(not root: case as root not run)"
			continue
		fi
		what="run, exec'd under the filter, as $user"
		# its children are forked behind an exec wrapper: profiled
		# only with these
		run_case "$what" "$user" "$tmp/x" exec --follow-exec=no \
			--trace-children=yes -- memfd 2 exec
		if [ "$user" = root ]; then
			children_profiled "$what" "$tmp/x" "$parent"
		else
			[ "$(grep -c "cannot plant probes: it has a seccomp filter" "$tmp/err")" -eq 1 ] &&
				grep -q "in $tmp/x\.$parent (no allocator probes)" "$tmp/err" ||
				fail "$what: want one warning, and the summary line to say so: $(cat "$tmp/err")"
		fi
	done
}

case_contained() {
	is_root || skip "needs root"
	local what
	native none "$sandbox" none 2
	what="contained heaptrace, no filter of the program's"
	run_case "$what" root "$tmp/c" none -- none 2
	children_profiled "$what" "$tmp/c" "$parent"
	grep -q "^heaptrace: warning" "$tmp/err" && fail "$what: a warning: $(cat "$tmp/err")"
	grep -q "in $tmp/c\.$parent (inline)" "$tmp/err" ||
		fail "$what: not inline: $(cat "$tmp/err")"
	native errno-openat "$sandbox" errno-openat 2
	what="contained heaptrace, errno-openat"
	run_case "$what" root "$tmp/d" errno-openat -- errno-openat 2
	[ "$(grep -c "let go untraced: it has a seccomp filter" "$tmp/err")" -eq 2 ] ||
		fail "$what: want one warning per child: $(cat "$tmp/err")"
}

case_no_fallback() {
	need prlimit
	local ring=--ring-size=1073741824
	start_target t out ready "$attachee" threads 0
	prlimit --pid "$target" --as=600000000 || harness "prlimit failed"
	one_error 2 "heaptrace: attach: cannot plant probes in process $target: Cannot allocate memory" \
		"$ht" attach "$ring" --duration=1 --massif-out-file="$tmp/a.%p" "$target"
	finish_target t 30 || pass_or_fail
	[ "$status" = 0 ] && [ "$(cat "$tmp/t.out")" = ready ] ||
		fail "attach refused: the program ended with $status, output $(cat "$tmp/t.out")"
	launcher=(prlimit --as=600000000)
	native none "${launcher[@]}" "$sandbox" none 2
	run_case "run" root "$tmp/r" none "$ring" -- none 2
	[ "$(grep -c "^heaptrace: warning" "$tmp/err")" = 1 ] &&
		grep -q "cannot plant probes: Cannot allocate memory" "$tmp/err" &&
		grep -q "(no allocator probes)" "$tmp/err" ||
		fail "run: want one warning and no probes: $(cat "$tmp/err")"
}

case_attach() {
	local filter=$1 what
	native "$filter" "$sandbox" "$filter" 2 wait
	if is_root; then
		what="attach $filter as root"
		attach_sandbox "$what" root "$filter"
		[ "$hst" = 0 ] || fail "$what: heaptrace exited $hst: $(cat "$tmp/err")"
		children_profiled "$what" "$tmp/a" "$target"
		local n
		for n in 1 3 6; do
			attach_dying "attach $filter, killed at injected call $n" "$filter" "$n"
		done
	fi
	local scope
	scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
	if ! nobody_can_run || [ "$scope" != 0 ]; then
		echo "(nobody cannot run the build or attach here: attach as nobody not run)"
		return
	fi
	what="attach $filter as nobody"
	attach_sandbox "$what" nobody "$filter"
	[ "$hst" = 2 ] || fail "$what: heaptrace exited $hst, want 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] &&
		grep -q "^heaptrace: attach: cannot plant probes in process $target: it has a seccomp filter of its own" "$tmp/err" ||
		fail "$what: want one line of refusal: $(cat "$tmp/err")"
}

case_nobody_drop() {
	is_root || skip "needs root (to drop to nobody)"
	nobody_can_run || skip "nobody cannot run the build here"
	native nobody "$sandbox" nobody 2
	run_case "run nobody" root "$tmp/m" nobody -- nobody 2
	children_profiled "run nobody" "$tmp/m" "$parent"
	grep -i warning "$tmp/err" && fail "run nobody: a warning: $(cat "$tmp/err")"
}

# attach_and_end HOW: root attaches to $target (ATTACHEE as nobody) and
# ends heaptrace by HOW: a signal 0.5 s after the attach, or "duration"
# (--duration=1, then a normal end, whose profile must have blocks). The
# program must still run.
attach_and_end() {
	local how=$1 hpid opts=(-v) err=$tmp/err.$1
	[ "$how" = duration ] && opts=(--duration=1)
	rm -f "$tmp"/a.*
	"$ht" attach "${opts[@]}" --massif-out-file="$tmp/a.%p" "$target" \
		>/dev/null 2>"$err" &
	hpid=$!
	pids+=("$hpid")
	if [ "$how" != duration ]; then
		wait_for "$err" "attached, " ||
			fail "$how: not attached within 10 s: $(tail -n 3 "$err")"
		sleep 0.5
		kill -"$how" "$hpid"
	fi
	wait "$hpid"
	local st=$?
	if [ "$how" = duration ]; then
		[ "$st" = 0 ] || fail "$how: heaptrace exited $st: $(cat "$err")"
		grep -q "(inline)" "$err" ||
			fail "$how: the summary line does not say inline: $(cat "$err")"
		grep -q "^heaptrace: warning" "$err" &&
			fail "$how: a warning: $(cat "$err")"
		[ "$(max_heap "$tmp/a.$target")" -gt 0 ] ||
			fail "$how: the profile has no blocks"
	fi
	sleep 0.3 # a program dying of a left int3 dies at its next call
	alive "$target" >/dev/null ||
		fail "$how: the program did not survive heaptrace's end: $(grep -v "^heaptrace: debug" "$err" | tail -n 3)"
}

case_nobody_attach() {
	is_root || skip "needs root"
	nobody_can_run || skip "nobody cannot run the build here"
	start_target t out ready "${as_nobody[@]}" "$attachee" threads 0
	local how
	for how in duration KILL HUP; do
		attach_and_end "$how"
		alive "$target" >/dev/null || break
	done
	finish_target t 30 || pass_or_fail
	[ "$status" = 0 ] ||
		fail "the program ended with status $status, native 0: $(tail -n 3 "$tmp/t.err")"
	[ "$(cat "$tmp/t.out")" = ready ] ||
		fail "the program's output: $(cat "$tmp/t.out"), native: ready"
}

case $case in
nobody-attach) case_nobody_attach ;;
nobody-drop) case_nobody_drop ;;
run-exec) case_run_exec ;;
contained) case_contained ;;
no-fallback) case_no_fallback ;;
run-*) case_run "${case#run-}" ;;
attach-*) case_attach "${case#attach-}" ;;
*) usage "sandbox.sh: unknown case $case" ;;
esac
pass_or_fail
