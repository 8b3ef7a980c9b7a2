#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Behaviour of `heaptrace run` as a command, one CASE per call: the target's
# output, input, arguments and exit status pass through unchanged, signal
# deaths give 128+N and still a profile, bad programs give one clear error
# line, -q and the summary line, profile names. Needs no Valgrind: the
# expectations are the program's own native behaviour and fixed numbers
# (progs/behave.c allocates a 1000-byte block first in every mode).
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: behaviour.sh HEAPTRACE BEHAVE MALLOCFAM CASE
set -u
. "$(dirname "$0")/lib.sh" || exit 99

if [ $# -ne 4 ]; then
	echo "usage: behaviour.sh HEAPTRACE BEHAVE MALLOCFAM CASE" >&2
	exit 99
fi
ht=$(abspath "$1")
behave=$(abspath "$2")
mallocfam=$(abspath "$3")
case_name=$4
here=$(cd "$(dirname "$0")" && pwd)
profile="$here/profile.py"

for f in "$ht" "$behave" "$mallocfam"; do
	if [ ! -x "$f" ]; then
		echo "behaviour.sh: $f: not an executable" >&2
		exit 99
	fi
done
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

case $case_name in
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
	# Executable, no '#!' line: execve fails with ENOEXEC.
	printf 'just some text\nnot a program\n' >"$tmp/text"
	chmod +x "$tmp/text"
	bad_program "text file without #!" "$tmp/text"
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
	# (peak or largest total, snapshots...), FILE the profile written,
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

if [ "$fails" -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "PASS"
exit 0
