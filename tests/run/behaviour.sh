#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Behaviour of `heaptrace run` as a command, one CASE per call: the target's
# output, input, arguments and exit status pass through unchanged, signal
# deaths give 128+N and still a profile, bad programs give one clear error
# line, -q and the summary line, profile names, an unwritable
# --massif-out-file found before the program starts, attach's options
# after the PID. Needs no Valgrind: the expectations are the program's own
# native behaviour and fixed numbers (progs/behave.c allocates a 1000-byte
# block first in every mode).
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: behaviour.sh HEAPTRACE BEHAVE MALLOCFAM CASE [THREADS FORK EXEC]
# (THREADS, FORK, EXEC: progs/threads.c, fork.c and exec.c, for the cases
# that count heaptrace's lines over every kind of program)
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

if [ $# -ne 4 ] && [ $# -ne 7 ]; then
	usage "behaviour.sh HEAPTRACE BEHAVE MALLOCFAM CASE [THREADS FORK EXEC]"
fi
ht=$(abspath "$1")
behave=$(abspath "$2")
mallocfam=$(abspath "$3")
case_name=$4
threads=$(abspath "${5:-none}")
forker=$(abspath "${6:-none}")
execer=$(abspath "${7:-none}")
profile="$here/profile.py"

need_exec "$ht" "$behave" "$mallocfam"
need python3 timeout
scratch

# ht_run run ARGS...: heaptrace run --time-unit=B ARGS with a time limit,
# so that a hang fails the case instead of stalling the suite. B time
# keeps the runs away from the instruction counter (time unit i), which
# not every machine has.
ht_run() {
	shift
	timeout -k 5 30 "$ht" run --time-unit=B "$@"
}

# same_file WHAT A B: A and B must be identical.
same_file() {
	if ! cmp -s "$2" "$3"; then
		diff -u "$2" "$3" | head -n 30
		fail "$1 differs"
	fi
}

# profiles DIR: the massif files of DIR, in pid order.
profiles() {
	python3 "$profile" list "$1"
}

# check_profile FILE CHECK...: profile.py checks, plus ms_print.
check_profile() {
	local f=$1
	shift
	if [ ! -f "$f" ]; then
		fail "no profile $f"
		return
	fi
	python3 "$profile" check "$f" "$@" || fail "profile $f: wrong contents"
	if command -v ms_print >/dev/null 2>&1; then
		ms_print "$f" >"$tmp/ms_print.out" 2>&1 ||
			fail "ms_print cannot read $f: $(head -n 3 "$tmp/ms_print.out")"
	fi
}

# one_profile DIR CHECK...: DIR holds exactly one profile, which passes the
# checks.
one_profile() {
	local dir=$1 files
	shift
	mapfile -t files < <(profiles "$dir")
	if [ "${#files[@]}" -ne 1 ]; then
		fail "${#files[@]} profiles in $dir, want 1: ${files[*]-}"
		return
	fi
	check_profile "${files[0]}" "$@"
}

# compare_native NAME STDIN ARGS...: run ARGS natively and under heaptrace
# (-q, profile in $tmp/NAME/) with stdin from STDIN, stdout and stderr to
# files; output and status must be the same.
compare_native() {
	local name=$1 in=$2 nst gst
	shift 2
	mkdir -p "$tmp/$name"
	timeout -k 5 30 "$@" <"$in" >"$tmp/$name.n.out" 2>"$tmp/$name.n.err"
	nst=$?
	ht_run run -q --massif-out-file="$tmp/$name/massif.out.%p" -- "$@" \
		<"$in" >"$tmp/$name.g.out" 2>"$tmp/$name.g.err"
	gst=$?
	[ "$nst" -eq "$gst" ] ||
		fail "$name: heaptrace exited $gst, the program exits $nst"
	same_file "$name: stdout" "$tmp/$name.n.out" "$tmp/$name.g.out"
	same_file "$name: stderr" "$tmp/$name.n.err" "$tmp/$name.g.err"
}

# bad_program WHAT PROG: heaptrace run PROG must fail at once with one
# "heaptrace: " line on stderr naming PROG and nothing on stdout.
bad_program() {
	local what=$1 prog=$2 st lines
	mkdir -p "$tmp/bad"
	(cd "$tmp/bad" && exec timeout -k 5 20 "$ht" run --time-unit=B -- "$prog" arg) \
		</dev/null >"$tmp/bad.out" 2>"$tmp/bad.err"
	st=$?
	echo "$what: status $st, stderr: $(head -c 300 "$tmp/bad.err")"
	[ "$st" -eq 124 ] || [ "$st" -eq 137 ] &&
		fail "$what: heaptrace did not finish within 20 s"
	[ "$st" -ne 0 ] || fail "$what: heaptrace exited 0"
	[ -s "$tmp/bad.out" ] && fail "$what: heaptrace wrote to stdout"
	lines=$(wc -l <"$tmp/bad.err")
	[ "$lines" -eq 1 ] || fail "$what: $lines lines on stderr, want 1"
	grep -q '^heaptrace: ' "$tmp/bad.err" ||
		fail "$what: the error does not start with 'heaptrace: '"
	grep -qF -- "$prog" "$tmp/bad.err" ||
		fail "$what: the error does not name $prog"
}

# need_progs: the case needs THREADS, FORK and EXEC.
need_progs() {
	local f
	for f in "$threads" "$forker" "$execer"; do
		if [ ! -x "$f" ]; then
			echo "behaviour.sh: case $case_name needs THREADS FORK EXEC" >&2
			exit 99
		fi
	done
}

# refused WHAT STATUS PATTERN ARGS...: heaptrace ARGS exits STATUS at once
# with one line on stderr matching PATTERN (grep -E), nothing on stdout,
# and the program not started: the programs these cases give create
# $tmp/marker.
refused() {
	local what=$1 want=$2 pattern=$3 st lines
	shift 3
	rm -f "$tmp/marker"
	timeout -k 5 20 "$@" </dev/null >"$tmp/r.out" 2>"$tmp/r.err"
	st=$?
	echo "$what: status $st, stderr: $(head -c 300 "$tmp/r.err")"
	[ "$st" -eq "$want" ] || fail "$what: heaptrace exited $st, want $want"
	[ -s "$tmp/r.out" ] && fail "$what: heaptrace wrote to stdout"
	lines=$(wc -l <"$tmp/r.err")
	[ "$lines" -eq 1 ] || fail "$what: $lines lines on stderr, want 1"
	grep -Eq -- "$pattern" "$tmp/r.err" ||
		fail "$what: the error does not match /$pattern/"
	[ -e "$tmp/marker" ] && fail "$what: the program was started"
}

# one_line WHAT PATTERN ARGS...: heaptrace ARGS (a normal run) succeeds
# and prints exactly one line of its own on stderr, matching PATTERN
# (grep -E); the program's stdout and stderr go to files of their own.
one_line() {
	local what=$1 pattern=$2 st lines
	shift 2
	timeout -k 5 60 "$@" </dev/null >"$tmp/l.out" 2>"$tmp/l.err"
	st=$?
	echo "$what: status $st, stderr: $(head -c 600 "$tmp/l.err")"
	[ "$st" -eq 0 ] || fail "$what: heaptrace exited $st"
	lines=$(grep -c '^heaptrace: ' "$tmp/l.err")
	[ "$lines" -eq 1 ] || fail "$what: $lines lines of heaptrace's, want 1"
	lines=$(wc -l <"$tmp/l.err")
	[ "$lines" -eq 1 ] || fail "$what: $lines lines on stderr, want 1"
	grep -Eq -- "$pattern" "$tmp/l.err" ||
		fail "$what: the line does not match /$pattern/"
}

# silent WHAT ARGS...: heaptrace ARGS succeeds and prints nothing.
silent() {
	local what=$1 st
	shift
	timeout -k 5 60 "$@" </dev/null >"$tmp/s.out" 2>"$tmp/s.err"
	st=$?
	[ "$st" -eq 0 ] || fail "$what: heaptrace exited $st"
	[ -s "$tmp/s.err" ] && fail "$what: stderr with -q: $(head -n 3 "$tmp/s.err")"
}

# sleeper: a process to attach to in $target (SIGKILLed at exit).
sleeper() {
	sleep 120 &
	target=$!
	pids+=("$target")
	for _ in $(seq 100); do
		case $(readlink "/proc/$target/exe" 2>/dev/null) in
		*/sleep) return ;;
		esac
		sleep 0.1
	done
	echo "sleep 120 did not start within 10 s"
	exit 99
}

# untraced WHAT: $target still runs and nothing traces it.
untraced() {
	alive "$target" >/dev/null || fail "$1: the process is gone"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$target/status" ||
		fail "$1: the process is still traced: $(grep TracerPid "/proc/$target/status")"
}

# attach_skip_unless_allowed: SKIP when this user may not attach to
# $target (kernel.yama.ptrace_scope, no CAP_SYS_PTRACE).
attach_skip_unless_allowed() {
	timeout -k 5 20 "$ht" attach --duration=1 --time-unit=B \
		--massif-out-file=/dev/null "$target" >/dev/null 2>"$tmp/a.err"
	if grep -Eq 'ptrace_scope|ermission' "$tmp/a.err"; then
		skip "cannot attach here: $(cat "$tmp/a.err")"
	fi
}

case $case_name in
out-file-checked)
	# An unwritable --massif-out-file is refused before the program runs:
	# one line, status 2, the program (which would create $tmp/marker) not
	# started; for `run` with and without --trace-children, whatever the
	# %p and %q{VAR} in the name.
	mkdir "$tmp/adir" "$tmp/ok"
	: >"$tmp/afile"
	prog=(/bin/sh -c ": >'$tmp/marker'")
	bad=(
		"/nonexistent/dir/x|/nonexistent/dir/x: No such file or directory"
		"/nonexistent/dir/massif.out.%p|/nonexistent/dir/massif\.out\.%p: No such file or directory"
		"$tmp/adir|$tmp/adir: Is a directory"
		"$tmp/adir/|Is a directory"
		"$tmp/afile/x.%p|$tmp/afile/x\.%p: Not a directory"
		"$tmp/nodir/%p/x|$tmp/nodir/%p/x: No such file or directory"
		"$tmp/ok/x.%q{HT_TEST_SURELY_UNSET}|environment variable HT_TEST_SURELY_UNSET .*is not set"
		"$tmp/ok/x.%z|unknown %z"
	)
	# a directory no file can be created in, even by root
	if [ -d /sys/kernel ] && ! : 2>/dev/null >/sys/kernel/heaptrace-probe; then
		bad+=("/sys/kernel/massif.out.%p|/sys/kernel/massif\.out\.%p: Permission denied")
	fi
	for b in "${bad[@]}"; do
		name=${b%%|*}
		why=${b#*|}
		for tc in no yes; do
			refused "$name (--trace-children=$tc)" 2 \
				"^heaptrace: --massif-out-file: .*$why" \
				"$ht" run --trace-children=$tc --massif-out-file="$name" \
				-- "${prog[@]}"
		done
	done
	# A read-only directory, %p or not: as another user when root (root
	# writes anywhere).
	mkdir -m 755 "$tmp/ro"
	: >"$tmp/ro/mine"
	chmod 666 "$tmp/ro/mine"
	chmod 555 "$tmp/ro"
	chmod 755 "$tmp"
	chmod 777 "$tmp/ok"
	as=() ro_ht=$ht
	if [ "$(id -u)" -eq 0 ]; then
		if have setpriv && nobody_copy "$ht"; then
			as=("${as_nobody[@]}") ro_ht=$copy
		else
			echo "(root, and no setpriv or no directory nobody can reach: read-only directory not checked)"
		fi
	fi
	if [ "$(id -u)" -ne 0 ] || [ ${#as[@]} -gt 0 ]; then
		prog=(/bin/sh -c ": >'$tmp/ok/marker'")
		for name in "$tmp/ro/x" "$tmp/ro/massif.out.%p"; do
			rm -f "$tmp/ok/marker"
			refused "read-only directory: $name" 2 \
				"^heaptrace: --massif-out-file: cannot write $tmp/ro/.*: Permission denied" \
				${as[@]+"${as[@]}"} "$ro_ht" run --massif-out-file="$name" -- "${prog[@]}"
			[ -e "$tmp/ok/marker" ] && fail "read-only directory: the program was started"
		done
		# A writable file in it is rewritten in place: accepted.
		${as[@]+"${as[@]}"} timeout -k 5 30 "$ro_ht" run -q --time-unit=B \
			--massif-out-file="$tmp/ro/mine" -- "${prog[@]}" </dev/null ||
			fail "writable file in a read-only directory: status $?"
		[ -e "$tmp/ok/marker" ] ||
			fail "writable file in a read-only directory: the program did not run"
		grep -q '^snapshot=' "$tmp/ro/mine" ||
			fail "writable file in a read-only directory: no profile in it"
	fi
	chmod 755 "$tmp/ro"
	# What can be written is: %p and %q{VAR} in the name, no probe file
	# left behind, and the profile there.
	HT_TEST_NAME=xyz ht_run run -q --massif-out-file="$tmp/ok/p.%q{HT_TEST_NAME}.%p" \
		-- "$behave" pid >"$tmp/ok.out" 2>"$tmp/ok.err" || fail "writable: status $?"
	[ -s "$tmp/ok.err" ] && fail "writable: stderr: $(head -n 3 "$tmp/ok.err")"
	pid=$(cat "$tmp/ok.out")
	[ -f "$tmp/ok/p.xyz.$pid" ] || fail "writable: no p.xyz.$pid: $(ls -A "$tmp/ok")"
	left=$(ls -A "$tmp/ok" | grep -v "^p\.xyz\.$pid\(\.sites\)\?\$\|^marker\$")
	[ -z "$left" ] && [ -z "$(ls -A "$tmp/adir")" ] ||
		fail "files left behind: $left $(ls -A "$tmp/adir")"
	;;
out-file-attach)
	# The same check before attaching: status 2, one line, the process
	# never traced.
	sleeper
	for name in /nonexistent/dir/x "$tmp" "$tmp/nodir/%p/x" "$tmp/x.%q{HT_TEST_SURELY_UNSET}"; do
		for order in before after; do
			if [ $order = before ]; then
				args=(attach --duration=1 --massif-out-file="$name" "$target")
			else
				args=(attach "$target" --duration=1 --massif-out-file="$name")
			fi
			refused "attach, $name, options $order the PID" 2 \
				"^heaptrace: --massif-out-file: " "$ht" "${args[@]}"
			untraced "attach, $name"
		done
	done
	# A process heaptrace may not trace: that is the error said (the
	# tracer's reason), not the file.
	if [ "$(id -u)" -eq 0 ] && have setpriv && nobody_copy "$ht"; then
		refused "attach as another user, unwritable file" 2 \
			"^heaptrace: attach: permission denied" \
			"${as_nobody[@]}" "$copy" attach "$target" --massif-out-file=/nonexistent/x
		untraced "attach as another user"
	else
		echo "(not root, or no setpriv, or no directory nobody can reach: attach as another user not checked)"
	fi
	;;
quiet-all)
	# -q: nothing at all of heaptrace's on stderr, whatever the program
	# (threads, forks, execs), the time unit (i: no counter on many
	# machines), a --backend that does not apply, and for attach.
	need_progs
	cd "$tmp" || exit 99
	silent "-q, time unit i" "$ht" run -q -- "$behave" pid
	silent "-q, threads" "$ht" run -q -- "$threads"
	silent "-q, forks" "$ht" run -q -- "$forker"
	silent "-q, forks and execs" "$ht" run -q -- /bin/sh -c "'$behave' pid; '$behave' pid | cat"
	silent "-q, exec, --trace-children=yes" "$ht" run -q --trace-children=yes -- \
		"$execer" "$behave" pid
	silent "-q, exec, --trace-children=no" "$ht" run --quiet -- "$execer" "$behave" pid
	silent "-q, --backend=inline --pages-as-heap=yes" \
		"$ht" run -q --backend=inline --pages-as-heap=yes -- "$behave" pid
	silent "-q, --backend=ptrace" "$ht" run -q --backend=ptrace -- "$threads"
	sleeper
	attach_skip_unless_allowed
	silent "attach -q" "$ht" attach -q --duration=1 "$target"
	silent "attach PID -q" "$ht" attach "$target" --duration=1 -q
	untraced "attach -q"
	;;
one-line)
	# A normal run says one line of its own: where the profile went (and
	# how many processes were profiled, the largest named); nothing else,
	# whatever the program, the time unit or the machine.
	need_progs
	cd "$tmp" || exit 99
	one_line "one process, time unit i" \
		"^heaptrace: peak useful heap [0-9.]+ (B|KiB) at snapshot [0-9]+ in $tmp/massif\.out\.[0-9]+ \(inline\)" \
		"$ht" run -- "$behave" pid
	one_line "threads" "^heaptrace: peak useful heap .* in $tmp/massif\.out\.[0-9]+ \(inline\)" \
		"$ht" run -- "$threads"
	one_line "threads, --backend=ptrace" "\(ptrace breakpoints\)" \
		"$ht" run --backend=ptrace -- "$threads"
	rm -f "$tmp"/massif.out.*
	one_line "fork" "in $tmp/massif\.out\.[0-9]+ \(inline\); 3 processes: largest run_fork [0-9.]+ KiB in massif\.out\.[0-9]+$" \
		"$ht" run --time-unit=B -- "$forker"
	[ "$(profiles "$tmp" | wc -l)" -eq 3 ] || fail "fork: $(profiles "$tmp" | wc -l) profiles, want 3"
	rm -f "$tmp"/massif.out.*
	one_line "exec, --trace-children=no" "in $tmp/massif\.out\.[0-9]+ \(inline\)" \
		"$ht" run --time-unit=B -- "$execer" "$behave" pid
	one_line "exec, --trace-children=yes" "in $tmp/massif\.out\.[0-9]+ \(inline\)" \
		"$ht" run --time-unit=B --trace-children=yes -- "$execer" "$behave" pid
	one_line "a shell forking and exec'ing" "; [0-9]+ processes(:|,) " \
		"$ht" run -- /bin/sh -c "'$behave' pid; '$behave' pid | cat"
	one_line "--backend=inline --pages-as-heap=yes" \
		"\(seccomp syscall stops\).*--backend=inline does not apply" \
		"$ht" run --backend=inline --pages-as-heap=yes -- "$behave" pid
	sleeper
	attach_skip_unless_allowed
	one_line "attach" "^heaptrace: .* in $tmp/massif\.out\.$target \(inline\)" \
		"$ht" attach --duration=1 "$target"
	untraced "attach"
	;;
attach-options)
	# attach takes its options before the PID, after it, or both; '--'
	# ends them. Bad ones: one line, status 2, the process untouched.
	sleeper
	attach_skip_unless_allowed
	# attach_ok N LINES ARGS...: heaptrace attach ARGS (a --duration=1 in
	# them) writes $tmp/aN.PID in B, prints LINES lines and exits 0.
	attach_ok() {
		local n=$1 lines=$2 t0=$SECONDS st
		shift 2
		timeout -k 5 30 "$ht" attach --massif-out-file="$tmp/a$n.%p" "$@" \
			>"$tmp/a.out" 2>"$tmp/a.err"
		st=$?
		echo "attach $*: status $st, stderr: $(cat "$tmp/a.err")"
		[ "$st" -eq 0 ] || fail "attach $*: status $st"
		[ $((SECONDS - t0)) -le 20 ] ||
			fail "attach $*: --duration=1 took $((SECONDS - t0)) s"
		[ "$(wc -l <"$tmp/a.err")" -eq "$lines" ] ||
			fail "attach $*: not $lines line(s) on stderr"
		grep -q "^time_unit: B$" "$tmp/a$n.$target" 2>/dev/null ||
			fail "attach $*: no profile in B ($tmp/a$n.$target)"
		untraced "attach $*"
	}
	attach_ok 1 1 "$target" --duration=1 --time-unit=B
	attach_ok 2 1 --duration=1 "$target" --time-unit=B
	attach_ok 3 1 --duration=1 --time-unit=B -- "$target"
	attach_ok 4 0 --time-unit=B "$target" --duration=1 -q
	# '--' ends the options: what follows the PID is refused
	refused "attach -- PID --duration=1" 2 \
		"^heaptrace: attach: unexpected argument '--duration=1' after the PID" \
		"$ht" attach --massif-out-file="$tmp/a5.%p" -- "$target" --duration=1
	refused "attach PID --bogus" 2 "^heaptrace: unknown option '--bogus'" \
		"$ht" attach "$target" --duration=1 --bogus
	refused "attach PID PID" 2 "^heaptrace: attach: unexpected argument '$target' after the PID" \
		"$ht" attach "$target" --duration=1 "$target"
	refused "attach PID --duration=0" 2 "^heaptrace: --duration: must be an integer from 1" \
		"$ht" attach "$target" --duration=0
	refused "attach PID -q -v" 2 "^heaptrace: --quiet and --verbose cannot be used together" \
		"$ht" attach "$target" -q -v
	refused "attach --duration=1" 2 "^heaptrace: attach: missing the PID" \
		"$ht" attach --duration=1
	untraced "attach, refused"
	# run: what follows the program is the program's, '--' or not.
	"$behave" args --duration=1 -q >"$tmp/n.out" 2>&1
	ht_run run -q --massif-out-file=/dev/null "$behave" args --duration=1 -q \
		>"$tmp/g.out" 2>&1 || fail "run PROG --duration=1 -q: status $?"
	same_file "run PROG --duration=1 -q" "$tmp/n.out" "$tmp/g.out"
	refused "run --duration=1 PROG" 2 "^heaptrace: --duration applies to attach only" \
		"$ht" run --duration=1 -- /bin/sh -c ": >'$tmp/marker'"
	;;
output-files)
	# stdout and stderr are files; text, binary bytes, no final newline.
	compare_native out /dev/null "$behave" out
	one_profile "$tmp/out" max-heap=5096
	;;
output-pipes)
	# stdout and stderr are pipes (to cat).
	run_piped() {
		( "$@" 2>&1 >&3 3>&- | cat >"$tmp/$1.err"
		  exit "${PIPESTATUS[0]}" ) 3>&1 | cat >"$tmp/$1.out"
		return "${PIPESTATUS[0]}"
	}
	native() { timeout -k 5 30 "$behave" out; }
	traced() {
		ht_run run -q --massif-out-file="$tmp/massif.out.%p" -- "$behave" out
	}
	run_piped native </dev/null
	nst=$?
	run_piped traced </dev/null
	gst=$?
	[ "$nst" -eq "$gst" ] || fail "heaptrace exited $gst, the program exits $nst"
	same_file "stdout (a pipe)" "$tmp/native.out" "$tmp/traced.out"
	same_file "stderr (a pipe)" "$tmp/native.err" "$tmp/traced.err"
	one_profile "$tmp" max-heap=5096
	;;
stdin)
	# stdin from a pipe, from a file, empty, and 200 KB through a pipe.
	printf 'alpha\nbeta\n\ngamma without a newline' >"$tmp/in.txt"
	: >"$tmp/empty.txt"
	seq 1 30000 | sed 's/$/ some padding text/' >"$tmp/big.txt"
	compare_native file "$tmp/in.txt" "$behave" stdin
	compare_native empty "$tmp/empty.txt" "$behave" stdin
	# echo data | heaptrace run -- prog
	printf 'alpha\nbeta\n' | "$behave" stdin >"$tmp/pipe.n.out" 2>&1
	nst=$?
	printf 'alpha\nbeta\n' | ht_run run -q \
		--massif-out-file="$tmp/pipe.%p" -- "$behave" stdin \
		>"$tmp/pipe.g.out" 2>&1
	gst=$?
	[ "$nst" -eq "$gst" ] || fail "pipe: heaptrace exited $gst, the program $nst"
	same_file "stdin from a pipe: output" "$tmp/pipe.n.out" "$tmp/pipe.g.out"
	grep -q '^read 2 lines, 11 bytes$' "$tmp/pipe.g.out" ||
		fail "the program did not read 'alpha\\nbeta\\n' from the pipe"
	cat "$tmp/big.txt" | "$behave" stdin >"$tmp/big.n.out" 2>&1
	nst=$?
	cat "$tmp/big.txt" | ht_run run -q \
		--massif-out-file="$tmp/big.%p" -- "$behave" stdin \
		>"$tmp/big.g.out" 2>&1
	gst=$?
	[ "$nst" -eq "$gst" ] || fail "big: heaptrace exited $gst, the program $nst"
	same_file "200 KB through a pipe: output" "$tmp/big.n.out" "$tmp/big.g.out"
	;;
args)
	# Arguments reach the program untouched, including ones that look
	# like heaptrace options, with or without '--'.
	compare_native dashdash /dev/null "$behave" args "a b" "" '*' '$HOME' \
		-q --depth=3 -- --massif-out-file=x "tab	tab" 'é'
	mkdir -p "$tmp/nodash"
	"$behave" args -q --quiet --heap=no >"$tmp/nodash.n.out" 2>&1
	ht_run run -q --massif-out-file="$tmp/nodash/massif.out.%p" \
		"$behave" args -q --quiet --heap=no >"$tmp/nodash.g.out" 2>&1 ||
		fail "heaptrace run PROG -q ...: status $?"
	same_file "options after PROG (no '--')" "$tmp/nodash.n.out" "$tmp/nodash.g.out"
	one_profile "$tmp/nodash" max-heap=5096
	;;
exit-status)
	for n in 0 1 3 42 255; do
		mkdir -p "$tmp/e$n"
		ht_run run -q --massif-out-file="$tmp/e$n/massif.out.%p" -- \
			"$behave" exit "$n" >"$tmp/e$n.out" 2>"$tmp/e$n.err"
		st=$?
		[ "$st" -eq "$n" ] || fail "exit($n): heaptrace exited $st"
		[ "$(cat "$tmp/e$n.out")" = "exiting with $n" ] ||
			fail "exit($n): stdout '$(cat "$tmp/e$n.out")'"
		[ -s "$tmp/e$n.err" ] && fail "exit($n): stderr: $(head -n 3 "$tmp/e$n.err")"
		# The 1000-byte block, then printf's 4096-byte buffer.
		one_profile "$tmp/e$n" max-heap=5096 has-heap=1000
	done
	;;
signals)
	for s in segv:11 abort:6 kill:9; do
		mode=${s%:*}
		sig=${s#*:}
		mkdir -p "$tmp/$mode"
		ht_run run -q --massif-out-file="$tmp/$mode/massif.out.%p" -- \
			"$behave" "$mode" >"$tmp/$mode.out" 2>"$tmp/$mode.err"
		st=$?
		[ "$st" -eq $((128 + sig)) ] ||
			fail "$mode: heaptrace exited $st, want $((128 + sig))"
		[ -s "$tmp/$mode.err" ] &&
			fail "$mode: stderr with -q: $(head -n 3 "$tmp/$mode.err")"
		# The 1000-byte block is still live: no exit-time frees after
		# a fatal signal.
		one_profile "$tmp/$mode" max-heap=1000 no-peak
	done
	;;
script)
	printf '#!/bin/sh\necho "script ran with $1"\necho "on stderr" >&2\nexit 5\n' \
		>"$tmp/script.sh"
	chmod +x "$tmp/script.sh"
	compare_native script /dev/null "$tmp/script.sh" word
	[ "$(cat "$tmp/script.g.out")" = "script ran with word" ] ||
		fail "script: stdout '$(cat "$tmp/script.g.out")'"
	mapfile -t files < <(profiles "$tmp/script")
	[ "${#files[@]}" -ge 1 ] || fail "script: no profile written"
	;;
no-such-program)
	bad_program "missing file" "$tmp/does-not-exist"
	bad_program "not on PATH" "heaptrace-test-no-such-command"
	;;
not-elf)
	# Executable, not ELF, a NUL byte in its first line: binary, which
	# no shell runs (bash, dash: status 126); refused before it starts.
	printf 'MZ\220\000\003\000binary\n' >"$tmp/binary"
	chmod +x "$tmp/binary"
	bad_program "binary non-ELF file" "$tmp/binary"
	one_error 126 "heaptrace: cannot run '$tmp/binary': not an ELF executable, and binary (not a shell script)" \
		"$ht" run -- "$tmp/binary" arg
	;;
no-shebang)
	# Executable text without a '#!' line: execve fails with ENOEXEC,
	# and execvp, sh and env run it with /bin/sh; so does heaptrace.
	# Output and status those of `sh FILE ARGS` and of exec'ing it.
	printf 'echo "$0 ran with $1"\necho "on stderr" >&2\nexit 5\n' >"$tmp/text-noshebang"
	chmod +x "$tmp/text-noshebang"
	compare_native noshebang /dev/null "$tmp/text-noshebang" word
	compare_native noshebang-sh /dev/null sh "$tmp/text-noshebang" word
	same_file "no #!: heaptrace's stdout and sh's" \
		"$tmp/noshebang.g.out" "$tmp/noshebang-sh.n.out"
	[ "$(cat "$tmp/noshebang.g.out")" = "$tmp/text-noshebang ran with word" ] ||
		fail "no #!: stdout '$(cat "$tmp/noshebang.g.out")'"
	one_profile "$tmp/noshebang"
	# The profile is /bin/sh's: its frames are in the shell's object
	# (Debian's dash has no symbols; with them, frames have names).
	sh_real=$(readlink -f /bin/sh)
	if ! nm "$sh_real" >/dev/null 2>&1; then
		grep -qF "(in $sh_real)" "$(profiles "$tmp/noshebang")" ||
			fail "no #!: the profile has no frame in $sh_real"
	fi
	# Text first, a NUL after the first line: still a script (bash's
	# rule looks at the first line only).
	printf 'echo text first\nexit 4\n\000\001junk\n' >"$tmp/text-latenul"
	chmod +x "$tmp/text-latenul"
	compare_native latenul /dev/null "$tmp/text-latenul"
	compare_native latenul-sh /dev/null sh "$tmp/text-latenul"
	same_file "NUL after line 1: heaptrace's stdout and sh's" \
		"$tmp/latenul.g.out" "$tmp/latenul-sh.n.out"
	[ "$(cat "$tmp/latenul.g.out")" = "text first" ] ||
		fail "NUL after line 1: stdout '$(cat "$tmp/latenul.g.out")'"
	# A script that execs a program: the shell is a wrapper (exec
	# wrappers rule): the profile is the program's, its 1000-byte block
	# and printf's buffer, in the shell's pid's file.
	printf 'exec "$@"\n' >"$tmp/text-execs"
	chmod +x "$tmp/text-execs"
	mkdir "$tmp/ex"
	ht_run run -q --massif-out-file="$tmp/ex/massif.out.%p" -- \
		"$tmp/text-execs" "$behave" pid </dev/null >"$tmp/ex.out" 2>"$tmp/ex.err" ||
		fail "no #!, exec: status $?"
	[ -s "$tmp/ex.err" ] && fail "no #!, exec: stderr: $(head -n 3 "$tmp/ex.err")"
	pid=$(cat "$tmp/ex.out")
	[ -f "$tmp/ex/massif.out.$pid" ] ||
		fail "no #!, exec: no massif.out.$pid: $(ls "$tmp/ex")"
	one_profile "$tmp/ex" max-heap=5096 has-heap=1000
	;;
not-executable)
	cp "$behave" "$tmp/noexec"
	chmod -x "$tmp/noexec"
	bad_program "file without execute permission" "$tmp/noexec"
	;;
directory)
	mkdir "$tmp/adir"
	bad_program "directory" "$tmp/adir"
	;;
quiet)
	for q in -q --quiet; do
		mkdir -p "$tmp/q$q"
		ht_run run "$q" --massif-out-file="$tmp/q$q/massif.out.%p" -- \
			"$behave" pid >"$tmp/q.out" 2>"$tmp/q.err" ||
			fail "$q: status $?"
		[ -s "$tmp/q.err" ] && fail "$q: stderr not empty: $(head -n 3 "$tmp/q.err")"
		one_profile "$tmp/q$q" max-heap=5096
	done
	;;
summary)
	# Without -q: one summary line "heaptrace: ... in FILE ..." on stderr
	# (the peak and its snapshot), FILE the profile written,
	# default name massif.out.PID in the current directory, PID the
	# target's.
	mkdir "$tmp/cwd"
	(cd "$tmp/cwd" && exec timeout -k 5 30 "$ht" run --time-unit=B -- "$behave" pid) \
		</dev/null >"$tmp/s.out" 2>"$tmp/s.err" || fail "status $?"
	pid=$(cat "$tmp/s.out")
	echo "target pid: $pid; stderr: $(cat "$tmp/s.err")"
	case $pid in
	'' | *[!0-9]*) fail "the program printed '$pid', not its pid" ;;
	esac
	[ -f "$tmp/cwd/massif.out.$pid" ] ||
		fail "no massif.out.$pid in the current directory: $(ls "$tmp/cwd")"
	lines=$(wc -l <"$tmp/s.err")
	[ "$lines" -eq 1 ] || fail "$lines lines on stderr, want 1"
	grep -Eq "^heaptrace: .* in (.*/)?massif\.out\.$pid( .*)?\$" "$tmp/s.err" ||
		fail "summary line is not 'heaptrace: ... in massif.out.$pid ...'"
	one_profile "$tmp/cwd" max-heap=5096
	;;
out-file-pattern)
	# %p is the target's pid, %q{VAR} a variable, %% a '%'.
	mkdir "$tmp/pat"
	HT_TEST_NAME=xyz ht_run run -q \
		--massif-out-file="$tmp/pat/prof.%p.%q{HT_TEST_NAME}.%%" -- \
		"$behave" pid >"$tmp/p.out" 2>"$tmp/p.err" || fail "status $?"
	pid=$(cat "$tmp/p.out")
	[ -f "$tmp/pat/prof.$pid.xyz.%" ] ||
		fail "no prof.$pid.xyz.% (the program's pid is $pid): $(ls "$tmp/pat")"
	check_profile "$tmp/pat/prof.$pid.xyz.%" max-heap=5096
	python3 "$profile" field "$tmp/pat/prof.$pid.xyz.%" cmd >"$tmp/cmd"
	[ "$(cat "$tmp/cmd")" = "$behave pid" ] ||
		fail "cmd: line '$(cat "$tmp/cmd")', want '$behave pid'"
	;;
pvalloc)
	# Real Massif stops a program that calls pvalloc, so there is nothing
	# to compare with; heaptrace must let it run and write a profile.
	compare_native pv /dev/null "$mallocfam" pvalloc
	mkdir -p "$tmp/pvc"
	ht_run run -q --massif-compat=yes --massif-out-file="$tmp/pvc/massif.out.%p" \
		-- "$mallocfam" pvalloc >/dev/null 2>&1 || fail "--massif-compat=yes: status $?"
	one_profile "$tmp/pv" snapshots\>=2
	one_profile "$tmp/pvc" snapshots\>=2
	;;
*)
	echo "behaviour.sh: unknown case '$case_name'" >&2
	exit 99
	;;
esac

[ "$fails" -eq 0 ] || echo "$fails failure(s)"
pass_or_fail PASS
