#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The summary line, the one line a run prints of its own (cli/profile.c
# print_summary; issue 26, point 5), one CASE per call:
#  one       one process: "peak useful heap SIZE at snapshot N in FILE
#            (inline)", nothing more, under 100 characters besides FILE
#  figure    its figure and snapshot are those `heaptrace report` prints
#            first, with its name: useful heap (not heap plus extra), pages
#            mapped with --pages-as-heap=yes, and with --stacks=yes
#  children  every process counted, and the one of the largest peak named
#            with its figure and file (progs/fork.c: a child's; a shell's
#            children under --trace-children=yes)
#  once      a note the same on every run (no hardware instruction
#            counter: progs/nocounter.c preloaded) is said by the first run
#            only, remembered under $XDG_CACHE_HOME/heaptrace, and with -v
#            always; run-dependent notes (sampled) every time; an unusable
#            or missing cache directory: said every time, nothing broken;
#            -q remembers nothing
#  python    Debian's python3 (pymalloc inlined) running itself twice under
#            --trace-children=yes: its arenas counted, said once in a short
#            note on the one summary line (where they cannot be found: one
#            line of warning, short; skip where /usr/bin/python3 is
#            probed, or absent)
#
# usage: summary.sh HEAPTRACE BEHAVE FORK NOCOUNTER CASE
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 5 ] || usage "summary.sh HEAPTRACE BEHAVE FORK NOCOUNTER CASE"
ht=$(abspath "$1")
behave=$(abspath "$2")
forker=$(abspath "$3")
nocounter=$(abspath "$4")
case_name=$5
need_exec "$ht" "$behave" "$forker"
need python3 timeout
scratch
profile="$here/profile.py"

# summary NAME ARGS...: heaptrace ARGS (in $tmp, a time limit), which must
# exit 0; stderr in $tmp/NAME.err, its heaptrace lines in $tmp/NAME.ht,
# the summary line (the last of them) in $line.
summary() {
	local name=$1 st
	shift
	(cd "$tmp" && exec timeout -k 5 60 "$ht" "$@") </dev/null \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	st=$?
	grep '^heaptrace: ' "$tmp/$name.err" >"$tmp/$name.ht"
	line=$(tail -n 1 "$tmp/$name.ht")
	echo "$name: status $st: $line"
	[ "$st" -eq 0 ] || fail "$name: heaptrace exited $st: $(head -c 600 "$tmp/$name.err")"
}

# human BYTES: BYTES as the summary line writes a size.
human() {
	awk -v b="$1" 'BEGIN {
		split("B KiB MiB GiB TiB", unit, " ")
		v = b; u = 1
		while (v >= 1024 && u < 5) { v /= 1024; u++ }
		if (u == 1) printf "%d B\n", b; else printf "%.1f %s\n", v, unit[u]
	}'
}

# report_first FILE: "SIZE at snapshot N" from the first figure of
# `heaptrace report FILE`: its peak line (heap, or pages mapped).
report_first() {
	local peak bytes snap
	peak=$("$ht" report "$1" | grep -m1 -E '^peak (heap memory consumption|pages mapped \(--pages-as-heap\)): ')
	bytes=$(sed -n 's/^[^:]*: \([0-9]*\) bytes.*/\1/p' <<<"$peak")
	snap=$(sed -n 's/.*(snapshot \([0-9]*\))$/\1/p' <<<"$peak")
	[ -n "$bytes" ] || { fail "report $1: no peak line"; return 1; }
	echo "$(human "$bytes") at snapshot $snap"
}

# cmd_name FILE: the file name of the program of a profile's cmd: line.
cmd_name() {
	local cmd p
	cmd=$(python3 "$profile" field "$1" cmd)
	# the test's programs first: their path may hold a space
	for p in "$forker" "$behave"; do
		if [[ $cmd == "$p" || $cmd == "$p "* ]]; then
			echo "${p##*/}"
			return
		fi
	done
	cmd=${cmd%% *}
	echo "${cmd##*/}"
}

# counted NAME: $line (the summary of NAME's run, in $tmp) counts its
# profiles, the first the lead, and names the program, peak and file of
# the largest by report's figure, or says the lead is the largest.
counted() {
	local files f b best best_bytes=-1 want
	mapfile -t files < <(python3 "$profile" list "$tmp")
	[ "${#files[@]}" -ge 2 ] || { fail "$1: ${#files[@]} profile(s)"; return; }
	for f in "${files[@]}"; do
		b=$("$ht" report "$f" | sed -n 's/^peak heap memory consumption: \([0-9]*\) bytes.*/\1/p')
		if [ "${b:-0}" -gt "$best_bytes" ]; then
			best=$f best_bytes=$b
		fi
	done
	if [ "$best" = "${files[0]}" ]; then
		want="; ${#files[@]} processes, this one the largest"
	else
		want="; ${#files[@]} processes: largest $(cmd_name "$best") $(human "$best_bytes") in ${best##*/}"
	fi
	case $line in
	"heaptrace: peak useful heap "*" in ${files[0]} ("*")$want"*) ;;
	*) fail "$1: the line does not say '$want' after the lead's file" ;;
	esac
}

case $case_name in
one)
	summary one run --time-unit=B -- "$behave" pid
	pid=$(cat "$tmp/one.out")
	file=$tmp/massif.out.$pid
	[ "$(wc -l <"$tmp/one.err")" -eq 1 ] ||
		fail "one: not one line on stderr: $(cat "$tmp/one.err")"
	[[ $line =~ ^heaptrace:\ peak\ useful\ heap\ [0-9.]+\ (B|KiB|MiB)\ at\ snapshot\ [0-9]+\ in\ (.*)\ \(inline\)$ ]] ||
		fail "one: not 'heaptrace: peak useful heap SIZE at snapshot N in FILE (inline)'"
	[ "${BASH_REMATCH[2]-}" = "$file" ] ||
		fail "one: the file named is '${BASH_REMATCH[2]-}', not $file"
	rest=$((${#line} - ${#file}))
	[ "$rest" -le 100 ] || fail "one: $rest characters besides the file name"
	;;
figure)
	for opts in "" "--stacks=yes" "--pages-as-heap=yes" "--sampling-interval=512"; do
		rm -f "$tmp"/massif.out.*
		# shellcheck disable=SC2086 # $opts: words
		summary figure run --time-unit=B $opts -- "$behave" pid
		file=$tmp/massif.out.$(cat "$tmp/figure.out")
		want=$(report_first "$file") || continue
		case $opts in
		--pages-as-heap=yes) what="peak pages mapped" ;;
		*) what="peak useful heap" ;;
		esac
		case $line in
		"heaptrace: $what $want in $file ("*) ;;
		*) fail "${opts:-default}: the line does not begin '$what $want in $file', report's first figure" ;;
		esac
	done
	;;
children)
	# progs/fork.c: the parent and two children, each profiled; a child
	# holds the most.
	summary fork run --time-unit=B -- "$forker"
	[ "$(python3 "$profile" list "$tmp" | wc -l)" -eq 3 ] ||
		fail "fork: not 3 profiles"
	counted fork
	[[ $line == *"; 3 processes: largest run_fork "* ]] ||
		fail "fork: the line does not say '3 processes: largest run_fork'"
	# A shell running programs: the largest of those profiled is named
	# by its own program's name.
	rm -f "$tmp"/massif.out.*
	summary shell run --time-unit=B --trace-children=yes -- /bin/sh -c \
		"'$forker' >/dev/null; '$behave' pid >/dev/null"
	counted shell
	;;
once)
	[ -f "$nocounter" ] || harness "$nocounter: no such library"
	# LD_PRELOAD splits at blanks: a checkout's path may hold one
	cp "$nocounter" "$tmp/nocounter.so" || exit 99
	note="time unit ms, not i: no hardware instruction counter here"
	# nocounter NAME ARGS...: summary NAME under progs/nocounter.c (a
	# sanitized heaptrace lets its runtime come after it).
	nocounter() {
		local name=$1
		shift
		LD_PRELOAD=$tmp/nocounter.so ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
			summary "$name" "$@"
	}
	says() { grep -qF "; $2" "$tmp/$1.ht"; }
	export XDG_CACHE_HOME=$tmp/cache
	nocounter first run -- "$behave" pid
	says first "$note" || fail "the first run does not say '$note'"
	[ "$(wc -l <"$tmp/first.err")" -eq 1 ] ||
		fail "the first run: not one line: $(cat "$tmp/first.err")"
	grep -qxF "$note" "$tmp/cache/heaptrace/notes-said" ||
		fail "the note is not remembered in $tmp/cache/heaptrace/notes-said"
	nocounter second run --sampling-interval=4096 -- "$behave" pid
	says second "$note" && fail "the second run says '$note' again"
	says second "sampled every 4096 bytes: figures are estimates" ||
		fail "the second run does not say it was sampled"
	nocounter verbose run -v -- "$behave" pid
	says verbose "$note" || fail "-v does not say '$note'"
	# -q: nothing said, nothing remembered
	export XDG_CACHE_HOME=$tmp/cache-q
	nocounter quiet run -q -- "$behave" pid
	[ -s "$tmp/quiet.err" ] && fail "-q: $(cat "$tmp/quiet.err")"
	nocounter afterq run -- "$behave" pid
	says afterq "$note" || fail "after a -q run, the note is not said"
	# A cache directory that cannot be made (its parent a file), and none
	# at all (no XDG_CACHE_HOME nor HOME): said each time, one line.
	: >"$tmp/file"
	export XDG_CACHE_HOME=$tmp/file
	for n in 1 2; do
		nocounter unusable$n run -- "$behave" pid
		says unusable$n "$note" || fail "unusable cache, run $n: the note is not said"
		[ "$(wc -l <"$tmp/unusable$n.err")" -eq 1 ] ||
			fail "unusable cache, run $n: not one line: $(cat "$tmp/unusable$n.err")"
	done
	unset XDG_CACHE_HOME
	before=$fails
	(unset HOME; nocounter nohome run -- "$behave" pid; [ "$fails" -eq "$before" ]) ||
		fail "no HOME: the run failed"
	grep -qF "; $note" "$tmp/nohome.ht" || fail "no HOME: the note is not said"
	;;
python)
	py=/usr/bin/python3
	[ -x "$py" ] || skip "no $py"
	summary py run --trace-children=yes -- "$py" -c \
		"import subprocess, sys; subprocess.run([sys.executable, '-c', 'x = [{}] * 10'])"
	exe=$(readlink -f "$py")
	# its arenas counted: a note at the end of the one summary line
	noted=$(grep -o "; [^;]*inlines pymalloc: its arenas are counted[^;]*" \
		"$tmp/py.err")
	if [ -n "$noted" ]; then
		[ "$(printf '%s\n' "$noted" | wc -l)" -eq 1 ] ||
			fail "the note about pymalloc said more than once: $noted"
		[ "$(wc -l <"$tmp/py.ht")" -eq 1 ] ||
			fail "not one line of heaptrace's (the summary with the note): $(cat "$tmp/py.ht")"
		len=${#noted}
		[ $((len - ${#exe})) -le 100 ] ||
			fail "the note is $len characters long, $((len - ${#exe})) besides $exe"
		pass_or_fail
	fi
	warned=$(grep -c '^heaptrace: warning: .*pymalloc' "$tmp/py.err")
	[ "$warned" -gt 0 ] || skip "$py does not inline pymalloc: probed, no note"
	[ "$warned" -eq 1 ] || fail "$warned lines of warning about pymalloc, want 1"
	[ "$(wc -l <"$tmp/py.ht")" -eq 2 ] ||
		fail "not two lines of heaptrace's (the note and the summary): $(cat "$tmp/py.ht")"
	len=$(grep '^heaptrace: warning: .*pymalloc' "$tmp/py.err" | wc -L)
	[ $((len - ${#exe})) -le 100 ] ||
		fail "the warning is $len characters long, $((len - ${#exe})) besides $exe"
	;;
*)
	usage "summary.sh: no case '$case_name'"
	;;
esac
pass_or_fail
