#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The leak check (issue 14) against real memcheck, one CASE per call, on
# the progs/leak_* programs. Each program runs under
#     valgrind --tool=memcheck --leak-check=full --show-leak-kinds=all
#              --run-libc-freeres=no --run-cxx-freeres=no
# and under
#     heaptrace run -q --leak-check=full --show-leak-kinds=all
# and then, for each process (one report per pid):
#  - the LEAK SUMMARY's four lines (definitely, indirectly, possibly lost,
#    still reachable: bytes and blocks), or "All heap blocks were freed --
#    no leaks are possible", must be the same (spaces squeezed);
#  - so must the loss records' headlines ("N bytes in M blocks are KIND in
#    loss record I of N") and the ERROR SUMMARY line;
#  - the report's ==PID== must be the traced process's pid (the one its
#    profile, m.%p, is named after);
#  - a definitely lost record must name the case's allocating function in
#    its frames (memcheck's must too);
#  - the exit status must be the same.
# memcheck's definitely lost line (and others the source fixes) must be
# the one the program's header works out, else the case is wrong (99).
#
# usage: leak.sh HEAPTRACE CASE PROG [PROG...]
# CASE and its programs:
#   list, interior, freed, cycle, thread, realloc, reachable, none,
#   oddsize, cxx PROG      progs/leak_CASE.c (.cpp)
#   fork PROG              leak_fork.c: two reports, matched by pid through
#                          the "child PID" / "parent PID" lines it prints
#   static STATIC DYNAMIC  heaptrace on the -static build of leak_list.c,
#                          memcheck (which sees nothing in a static
#                          executable) on the dynamic one
#   exitcode LIST NONE INTERIOR REACHABLE
#                          --error-exitcode=3 with --leak-check=full,
#                          summary and no, --errors-for-leak-kinds, exit
#                          statuses and abort: heaptrace's status must be
#                          memcheck's, which must be the one listed below,
#                          and its report memcheck's (no report at all
#                          with --leak-check=no, where memcheck still
#                          prints a HEAP SUMMARY)
# A PROG of "none" (not built: no C++ compiler, no static libc) skips.
# Exit 0 pass, 1 fail, 77 skip (no valgrind), 99 harness error.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

if [ $# -lt 3 ] && ! { [ $# -eq 2 ] && [ "$2" = real ]; }; then
	usage "leak.sh HEAPTRACE CASE PROG [PROG...] (real: no PROG)"
fi
ht=$(abspath "$1")
case_name=$2
shift 2
progs=()
for p in ${@+"$@"}; do
	if [ "$p" = none ]; then
		skip "a program of case $case_name could not be built"
	fi
	p=$(abspath "$p")
	need_exec "$p"
	progs+=("$p")
done
need_exec "$ht"
need valgrind timeout
scratch --keep

# The same run under both: memcheck ignores MALLOC_PERTURB_ (meson sets
# it at random), python's hashing is seeded at random.
unset MALLOC_PERTURB_
export PYTHONHASHSEED=0
# run_env: a command prefix for both tools' runs (compare_real's python)
run_env=()

vg_opts=(--tool=memcheck --show-leak-kinds=all --run-libc-freeres=no
	--run-cxx-freeres=no)
ht_opts=(-q --show-leak-kinds=all)

# run_vg NAME LEAK-OPTIONS... -- PROG ARGS...: memcheck in $tmp/NAME.vg/,
# its stdout and stderr in $tmp/NAME.vg.out and .err, its status in $st.
run_vg() {
	local name=$1 opts=()
	shift
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	mkdir -p "$tmp/$name.vg"
	# (the braces keep bash's "Aborted" line of the abort case quiet)
	{ (cd "$tmp/$name.vg" && exec timeout -k 5 120 \
		${run_env[@]+"${run_env[@]}"} valgrind "${vg_opts[@]}" \
		${opts[@]+"${opts[@]}"} "$@") </dev/null >"$tmp/$name.vg.out" \
		2>"$tmp/$name.vg.err"; } 2>/dev/null
	st=$?
}

# run_ht NAME LEAK-OPTIONS... -- PROG ARGS...: the same under heaptrace,
# its profiles $tmp/NAME.ht/m.PID.
run_ht() {
	local name=$1 opts=()
	shift
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	mkdir -p "$tmp/$name.ht"
	{ (cd "$tmp/$name.ht" && exec timeout -k 5 60 \
		${run_env[@]+"${run_env[@]}"} "$ht" run "${ht_opts[@]}" \
		${opts[@]+"${opts[@]}"} --massif-out-file="$tmp/$name.ht/m.%p" \
		-- "$@") </dev/null >"$tmp/$name.ht.out" 2>"$tmp/$name.ht.err"
	} 2>/dev/null
	st=$?
}

# report_pids FILE: the pids of FILE's reports, in the order they come.
report_pids() {
	sed -n 's/^==\([0-9][0-9]*\)== HEAP SUMMARY:.*/\1/p' "$1"
}

# part WHAT FILE PID: one part of PID's report, without the "==PID== "
# prefix, spaces squeezed. WHAT: summary (the four LEAK SUMMARY lines or
# the no-leaks sentence), records (the loss records' headlines), errors
# (the ERROR SUMMARY line).
part() {
	local re
	case $1 in
	summary) re='^ *(definitely lost|indirectly lost|possibly lost|still reachable): |^All heap blocks were freed' ;;
	records) re=' in loss record [0-9,]+ of [0-9,]+$' ;;
	errors) re='^ERROR SUMMARY: ' ;;
	esac
	sed -n "s/^==$3== //p" "$2" | grep -E "$re" | tr -s ' ' | sed 's/^ //'
}

# same_report WHAT VG-FILE VG-PID HT-FILE HT-PID: PID's report in both
# files: the summary, the loss records, the ERROR SUMMARY.
same_report() {
	local what=$1 vf=$2 vp=$3 hf=$4 hp=$5 p a b
	local -A said=([summary]='the LEAK SUMMARY differs'
		[records]='the loss records differ'
		[errors]='the ERROR SUMMARY differs')
	for p in summary records errors; do
		a=$(part $p "$vf" "$vp")
		b=$(part $p "$hf" "$hp")
		if [ "$a" != "$b" ]; then
			printf -- '--- memcheck (pid %s):\n%s\n--- heaptrace (pid %s):\n%s\n' \
				"$vp" "$a" "$hp" "$b"
			fail "$what: ${said[$p]}"
		fi
	done
	if [ -z "$(part summary "$vf" "$vp")" ] &&
	    ! grep -q "^==$vp== HEAP SUMMARY:" "$vf"; then
		harness "$what: memcheck printed no report for pid $vp"
	fi
}

# definite_names FILE PID FN: a definitely lost record of PID's report
# has FN in its frames ("FN (file:line)", or "FN() (...)" in C++).
definite_names() {
	awk -v pre="==$2== " -v fn=" $3 (" -v cxx=" $3(" '
		index($0, pre) != 1 { next }
		{ line = substr($0, length(pre) + 1) }
		line ~ /are definitely lost in loss record/ { in_rec = 1; next }
		line == "" { in_rec = 0; next }
		in_rec && (index(line, fn) || index(line, cxx)) { found = 1 }
		END { exit !found }' "$1"
}

# expect_vg NAME PID LINE...: memcheck's summary of PID must hold each
# LINE (as part prints it): what the program's source works out.
expect_vg() {
	local name=$1 pid=$2 sum line
	shift 2
	sum=$(part summary "$tmp/$name.vg.err" "$pid")
	for line in "$@"; do
		if ! grep -qxF -- "$line" <<<"$sum"; then
			show "$tmp/$name.vg.err"
			harness "memcheck's report of pid $pid has no '$line'"
		fi
	done
}

# profile_pids NAME: the pids of heaptrace's profiles, sorted.
profile_pids() {
	local f
	for f in "$tmp/$1.ht"/m.*; do
		case $f in *.sites) continue ;; esac # statistics, not profiles
		[ -e "$f" ] && echo "${f##*/m.}"
	done | sort -n
}

# compare_one NAME FN PROG-HT PROG-VG LINE...: one process, one report
# each; FN (or -) named by a definitely lost record; LINEs: memcheck's
# summary (expect_vg).
compare_one() {
	local name=$1 fn=$2 prog_ht=$3 prog_vg=$4 vst hst vp hp
	shift 4
	run_vg "$name" --leak-check=full -- "$prog_vg"
	vst=$st
	run_ht "$name" --leak-check=full -- "$prog_ht"
	hst=$st
	echo "status: memcheck $vst, heaptrace $hst"
	vp=$(report_pids "$tmp/$name.vg.err")
	hp=$(report_pids "$tmp/$name.ht.err")
	[ "$(wc -w <<<"$vp")" -eq 1 ] || {
		show "$tmp/$name.vg.err"
		harness "memcheck printed $(wc -w <<<"$vp") reports, want 1"
	}
	expect_vg "$name" "$vp" "$@"
	if [ "$fn" != - ] && ! definite_names "$tmp/$name.vg.err" "$vp" "$fn"; then
		show "$tmp/$name.vg.err"
		harness "memcheck's definitely lost records do not name $fn"
	fi
	[ "$hst" -eq "$vst" ] ||
		fail "heaptrace exited $hst, the program under memcheck $vst"
	if [ "$(wc -w <<<"$hp")" -ne 1 ]; then
		show "$tmp/$name.ht.err"
		fail "heaptrace printed $(wc -w <<<"$hp") reports, want 1"
		return
	fi
	[ "$hp" = "$(profile_pids "$name")" ] ||
		fail "the report's pid $hp is not the target's ($(profile_pids "$name" | tr '\n' ' '))"
	same_report "$name" "$tmp/$name.vg.err" "$vp" "$tmp/$name.ht.err" "$hp"
	if [ "$fn" != - ] && ! definite_names "$tmp/$name.ht.err" "$hp" "$fn"; then
		fail "no definitely lost record of heaptrace's names $fn"
	fi
}

# role_pid FILE ROLE: the pid the program printed as ROLE.
role_pid() {
	sed -n "s/^$2 \\([0-9][0-9]*\\)\$/\\1/p" "$1"
}

# compare_fork PROG: a report per process, matched by role.
compare_fork() {
	local prog=$1 vst hst role vp hp
	run_vg fork --leak-check=full -- "$prog"
	vst=$st
	run_ht fork --leak-check=full -- "$prog"
	hst=$st
	echo "status: memcheck $vst, heaptrace $hst"
	[ "$(report_pids "$tmp/fork.vg.err" | wc -l)" -eq 2 ] || {
		show "$tmp/fork.vg.err"
		harness "memcheck printed $(report_pids "$tmp/fork.vg.err" | wc -l) reports, want 2"
	}
	expect_vg fork "$(role_pid "$tmp/fork.vg.out" child)" \
		'definitely lost: 640 bytes in 3 blocks'
	expect_vg fork "$(role_pid "$tmp/fork.vg.out" parent)" \
		'definitely lost: 1,152 bytes in 2 blocks'
	[ "$hst" -eq "$vst" ] ||
		fail "heaptrace exited $hst, the program under memcheck $vst"
	[ "$(report_pids "$tmp/fork.ht.err" | wc -l)" -eq 2 ] ||
		fail "heaptrace printed $(report_pids "$tmp/fork.ht.err" | wc -l) reports, want 2"
	[ "$(report_pids "$tmp/fork.ht.err" | sort -n)" = "$(profile_pids fork)" ] ||
		fail "the reports' pids ($(report_pids "$tmp/fork.ht.err" | tr '\n' ' ')) are not the processes' ($(profile_pids fork | tr '\n' ' '))"
	for role in child parent; do
		vp=$(role_pid "$tmp/fork.vg.out" $role)
		hp=$(role_pid "$tmp/fork.ht.out" $role)
		if [ -z "$hp" ]; then
			show "$tmp/fork.ht.out"
			fail "the $role did not say its pid under heaptrace"
			continue
		fi
		if ! report_pids "$tmp/fork.ht.err" | grep -qx "$hp"; then
			fail "no report for the $role (pid $hp)"
			continue
		fi
		same_report "$role" "$tmp/fork.vg.err" "$vp" "$tmp/fork.ht.err" "$hp"
		definite_names "$tmp/fork.ht.err" "$hp" lose ||
			fail "no definitely lost record of the $role's names lose"
	done
}

# exit_case N WANT LEAK-OPTIONS... -- PROG ARGS...: with --error-exitcode=3,
# memcheck exits WANT (else the case is wrong), heaptrace as memcheck,
# and their reports agree (memcheck reports after a death by signal too).
exit_case() {
	local name=exit$1 want=$2 vst hst vp hp opts=()
	shift 2
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	run_vg "$name" --error-exitcode=3 ${opts[@]+"${opts[@]}"} -- "$@"
	vst=$st
	run_ht "$name" --error-exitcode=3 ${opts[@]+"${opts[@]}"} -- "$@"
	hst=$st
	echo "$name: ${opts[*]} ${*##*/}: memcheck $vst, heaptrace $hst"
	if [ "$vst" -ne "$want" ]; then
		show "$tmp/$name.vg.err"
		harness "$name: memcheck exited $vst, want $want"
	fi
	[ "$hst" -eq "$vst" ] ||
		fail "$name: ${opts[*]} ${*##*/}: heaptrace exited $hst, memcheck $vst"
	# memcheck's --leak-check=no still prints the HEAP SUMMARY and a
	# hint; heaptrace, whose default it is, prints no report. Neither
	# shows a loss record or a LEAK SUMMARY.
	if [ "${opts[0]}" = --leak-check=no ]; then
		if grep -qE 'LEAK SUMMARY:| in loss record ' "$tmp/$name.ht.err"; then
			show "$tmp/$name.ht.err"
			fail "$name: a leak report with --leak-check=no"
		fi
		return
	fi
	vp=$(report_pids "$tmp/$name.vg.err")
	hp=$(report_pids "$tmp/$name.ht.err")
	if [ "$(wc -w <<<"$hp")" -ne 1 ]; then
		show "$tmp/$name.ht.err"
		fail "$name: heaptrace printed $(wc -w <<<"$hp") reports, want 1"
		return
	fi
	local before=$fails
	same_report "$name" "$tmp/$name.vg.err" "$vp" "$tmp/$name.ht.err" "$hp"
	[ "$fails" -eq "$before" ] || show "$tmp/$name.ht.err"
}

# compare_real NAME PROG ARGS...: a program nobody wrote for this test:
# the LEAK SUMMARY figures of its one report are memcheck's.
compare_real() {
	local name=$1
	shift
	run_vg "$name" --leak-check=summary -- "$@"
	run_ht "$name" --leak-check=summary --python-alloc=no -- "$@"
	same_summary "$name"
}

# same_summary NAME: NAME's one report from each tool, equal LEAK SUMMARY.
same_summary() {
	local name=$1 vp hp a b
	vp=$(report_pids "$tmp/$name.vg.err")
	hp=$(report_pids "$tmp/$name.ht.err")
	if [ -z "$vp" ] || [ "$(wc -w <<<"$vp")" -ne 1 ]; then
		harness "$name: memcheck printed no single report"
	fi
	if [ -z "$hp" ] || [ "$(wc -w <<<"$hp")" -ne 1 ]; then
		fail "$name: heaptrace printed no single report"
		show "$tmp/$name.ht.err"
		return
	fi
	a=$(part summary "$tmp/$name.vg.err" "$vp")
	b=$(part summary "$tmp/$name.ht.err" "$hp")
	if [ "$a" != "$b" ]; then
		printf -- '--- memcheck:\n%s\n--- heaptrace:\n%s\n' "$a" "$b"
		fail "$name: the LEAK SUMMARY differs"
	fi
}

# compare_python: Debian's python3 in a clean environment, under both
# tools: python copies its environment into its heap, and Valgrind adds
# variables to it, so heaptrace's run gets the same ones, LD_PRELOAD's
# value as blanks of its length (nothing preloaded; ld.so skips blanks).
compare_python() {
	local base=(env -i PATH=/usr/bin:/bin PYTHONHASHSEED=0) line
	local vg_env=() ht_env=()
	while IFS= read -r line; do
		case $line in
		PATH=* | PYTHONHASHSEED=*) ;;
		PWD=*) vg_env+=("PWD=$tmp/python.vg")
			ht_env+=("PWD=$tmp/python.ht") ;;
		LD_PRELOAD=*) ht_env+=("LD_PRELOAD=$(printf '%*s' \
			$((${#line} - 11)) '')") ;;
		*=*) ht_env+=("$line") ;;
		esac
	done < <("${base[@]}" valgrind -q --tool=memcheck --leak-check=no \
		/usr/bin/env 2>/dev/null)
	local prog=(/usr/bin/python3 -c
		'import json; print(len(json.dumps([{"k": i} for i in range(2000)])))')
	run_env=("${base[@]}" ${vg_env[@]+"${vg_env[@]}"})
	run_vg python --leak-check=summary -- "${prog[@]}"
	run_env=("${base[@]}" ${ht_env[@]+"${ht_env[@]}"})
	run_ht python --leak-check=summary --python-alloc=no -- "${prog[@]}"
	run_env=()
	same_summary python
}

case $case_name in
real)
	# sort, sed and Debian's python3 (pymalloc arenas beside glibc's
	# mmapped chunks), given the same input; memcheck's figures come
	# from the run itself. (Not mawk: it keeps a dangling pointer in a
	# global that glibc's reuse of the address turns into a start
	# pointer, where memcheck's freed-block quarantine does not: see
	# docs/leak-check.md, "Where it differs from memcheck".)
	seq 3000 | awk '{ print ($1 * 7919) % 3001 }' >"$tmp/nums"
	compare_real sort sort -n "$tmp/nums"
	compare_real sed sed -e 's/1/one/g' -e '/7/d' "$tmp/nums"
	if [ -x /usr/bin/python3 ]; then
		# (a clean environment: which of ld.so's blocks a stale word
		# happens to point at depends on the environment's layout)
		compare_python
	fi ;;
list)
	compare_one list make_list "${progs[0]}" "${progs[0]}" \
		'definitely lost: 32 bytes in 1 blocks' \
		'indirectly lost: 288 bytes in 9 blocks' ;;
static)
	[ ${#progs[@]} -eq 2 ] || harness "static: want STATIC DYNAMIC"
	compare_one static make_list "${progs[0]}" "${progs[1]}" \
		'definitely lost: 32 bytes in 1 blocks' \
		'indirectly lost: 288 bytes in 9 blocks' ;;
interior)
	compare_one interior - "${progs[0]}" "${progs[0]}" \
		'definitely lost: 0 bytes in 0 blocks' \
		'possibly lost: 176 bytes in 2 blocks' ;;
freed)
	compare_one freed hide_in_freed "${progs[0]}" "${progs[0]}" \
		'definitely lost: 96 bytes in 1 blocks' ;;
cycle)
	compare_one cycle make_cycle "${progs[0]}" "${progs[0]}" \
		'definitely lost: 48 bytes in 1 blocks' \
		'indirectly lost: 144 bytes in 2 blocks' ;;
thread)
	compare_one thread leak_in_thread "${progs[0]}" "${progs[0]}" \
		'definitely lost: 96 bytes in 1 blocks' ;;
realloc)
	compare_one realloc grow_buffer "${progs[0]}" "${progs[0]}" \
		'definitely lost: 1,024 bytes in 1 blocks' ;;
reachable)
	compare_one reachable - "${progs[0]}" "${progs[0]}" \
		'definitely lost: 0 bytes in 0 blocks' \
		'still reachable: 576 bytes in 3 blocks' ;;
none)
	compare_one none - "${progs[0]}" "${progs[0]}" \
		'All heap blocks were freed -- no leaks are possible' ;;
oddsize)
	compare_one oddsize lose_last "${progs[0]}" "${progs[0]}" \
		'definitely lost: 64 bytes in 2 blocks' ;;
cxx)
	compare_one cxx make_owner "${progs[0]}" "${progs[0]}" \
		'definitely lost: 32 bytes in 2 blocks' \
		'indirectly lost: 360 bytes in 2 blocks' ;;
fork)
	compare_fork "${progs[0]}" ;;
exitcode)
	[ ${#progs[@]} -eq 4 ] ||
		harness "exitcode: want LIST NONE INTERIOR REACHABLE"
	list=${progs[0]} none=${progs[1]} interior=${progs[2]}
	reachable=${progs[3]}
	# memcheck's rule: with --leak-check=full, a leak of a kind in
	# --errors-for-leak-kinds (definite,possible) is an error, and a
	# program that exits (whatever its status) then exits 3; summary and
	# no count no errors; a death by signal stays one.
	exit_case 1 3 --leak-check=full -- "$list"
	exit_case 2 3 --leak-check=full -- "$list" 5
	exit_case 3 0 --leak-check=full -- "$none"
	exit_case 4 4 --leak-check=full -- "$none" 4
	exit_case 5 0 --leak-check=summary -- "$list"
	exit_case 6 5 --leak-check=summary -- "$list" 5
	exit_case 7 0 --leak-check=no -- "$list"
	exit_case 8 3 --leak-check=full -- "$interior"
	exit_case 9 0 --leak-check=full --errors-for-leak-kinds=definite -- \
		"$interior"
	exit_case 10 0 --leak-check=full -- "$reachable"
	exit_case 11 3 --leak-check=full --errors-for-leak-kinds=reachable -- \
		"$reachable"
	exit_case 12 3 --leak-check=full --errors-for-leak-kinds=indirect -- \
		"$list"
	exit_case 13 0 --leak-check=full --errors-for-leak-kinds=none -- "$list"
	exit_case 14 134 --leak-check=full -- "$list" abort ;;
*)
	harness "unknown case '$case_name'" ;;
esac

if [ "$fails" -ne 0 ]; then
	# (exitcode showed its failing runs' as it went)
	if [ "$case_name" != exitcode ]; then
		for f in "$tmp"/*.ht.err; do
			[ -s "$f" ] && show "$f"
		done
	fi
	echo "$fails failure(s)"
	exit 1
fi
pass_or_fail PASS
