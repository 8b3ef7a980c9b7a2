#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One comparison case: run PROG natively, under real Massif and under
# heaptrace (--massif-compat=yes) with the same Massif options, then require
#  - the program's stdout, stderr and exit status to be the same in all three
#    runs (byte for byte; a signal death is status 128+N);
#  - as many profiles from heaptrace as from Massif (one per process, %p),
#    paired in the order of the pids that name them;
#  - each pair to have the same desc: and cmd: lines and to be the same for
#    massif-compare (series, peak, detailed/peak pattern, trees; or totals
#    within --tolerance);
#  - the expectations given with --expect to hold for every profile of both
#    runs (numbers worked out from the program's source);
#  - ms_print to read every heaptrace profile.
# Exit 0 pass, 1 fail (heaptrace's side), 77 skip (a tool is missing),
# 99 harness error (Massif's side does not behave as the case says).
#
# usage: compare.sh [FLAGS] -- [MASSIF-OPTIONS...] -- PROG [ARGS...]
# FLAGS:
#   --heaptrace PATH    the heaptrace binary (required)
#   --backend B         heaptrace's --backend (auto, inline, ptrace) [auto]
#   --heaptrace-option O  one more option for heaptrace only (repeatable)
#   --compare PATH      massif-compare (required; skip if it does not exist)
#   --tolerance PCT     compare totals within PCT percent (threaded programs)
#   --series-only       compare series and peak, not the trees
#   --ref PROG          Massif runs PROG instead (same arguments): the
#                       static case compares heaptrace on the static build
#                       with Massif on the dynamic one
#   --ref-env VAR=VAL   set VAR for the Massif run only
#   --preload SONAME    LD_PRELOAD the library SONAME (found by ldconfig;
#                       skip if it is not installed) in all three runs
#   --massif-option O   one more option for Massif only (repeatable)
#   --stdin FILE        stdin of every run [/dev/null]
#   --files N           each run must write N profiles
#   --expect I:CHECK    profile I (1-based, in pid order; * for all) must
#                       pass profile.py check CHECK (e.g. 1:max-heap=5310)
#   --skip REASON       skip the case (a program could not be built)
# Without a --time-unit option, --time-unit=B is added (time i cannot be
# matched). Set HT_KEEP=DIR to keep the runs' files in DIR.
set -u

. "$(dirname "$0")/../lib.sh" || exit 99
profile="$here/profile.py"

heaptrace= compare= tolerance= series_only= ref= ref_env= stdin=/dev/null
preload=
ht_opts=() vg_opts=()
nfiles= expects=()
while [ $# -gt 0 ]; do
	case $1 in
	--heaptrace) heaptrace=$2; shift 2 ;;
	--backend) backend=$2; shift 2 ;;
	--heaptrace-option) ht_opts+=("$2"); shift 2 ;;
	--compare) compare=$2; shift 2 ;;
	--tolerance) tolerance=$2; shift 2 ;;
	--series-only) series_only=1; shift ;;
	--ref) ref=$2; shift 2 ;;
	--ref-env) ref_env=$2; shift 2 ;;
	--preload) preload=$2; shift 2 ;;
	--massif-option) vg_opts+=("$2"); shift 2 ;;
	--stdin) stdin=$2; shift 2 ;;
	--files) nfiles=$2; shift 2 ;;
	--expect) expects+=("$2"); shift 2 ;;
	--skip) skip "$2" ;;
	--) shift; break ;;
	*) echo "compare.sh: unknown flag '$1'" >&2; exit 99 ;;
	esac
done
take_opts "$@"
shift "$taken"
if [ $# -lt 1 ] || [ -z "$heaptrace" ] || [ -z "$compare" ]; then
	usage "compare.sh --heaptrace PATH --compare PATH [FLAGS] -- [OPTS...] -- PROG [ARGS...]"
fi
prog=$1
shift
args=("$@")
[ -n "$ref" ] || ref=$prog

# Meson passes paths relative to the build directory; the runs happen in
# other directories (abspath).
heaptrace=$(abspath "$heaptrace")
prog=$(abspath "$prog")
ref=$(abspath "$ref")
compare=$(abspath "$compare")
stdin=$(abspath "$stdin")

need valgrind ms_print python3 timeout
need_file "$compare" massif-compare
need_exec "$heaptrace" "$prog" "$ref"

# The three runs get the library through the environment, as a user would
# give it (heaptrace and Valgrind's launcher get it too, harmlessly).
run_env=()
if [ -n "$preload" ]; then
	lib=$(find_lib "$preload") || skip "$preload is not installed"
	run_env=("LD_PRELOAD=$lib")
fi

case " ${opts[*]-} " in
*" --time-unit="*) ;;
*) opts=(--time-unit=B ${opts[@]+"${opts[@]}"}) ;;
esac

# $tmp (or HT_KEEP), and no core files from the signal cases
scratch --keep
mkdir "$tmp/native" "$tmp/ref" "$tmp/got" || exit 99

# Each run happens in its own directory, so that the relative profile name
# massif.%p gives the same desc: line to Massif and heaptrace.
(cd "$tmp/native" &&
	exec env ${run_env[@]+"${run_env[@]}"} timeout -k 5 60 "$prog" \
		${args[@]+"${args[@]}"}) \
	<"$stdin" >"$tmp/native.out" 2>"$tmp/native.err"
native_st=$?
(cd "$tmp/ref" &&
	exec env ${run_env[@]+"${run_env[@]}"} ${ref_env:+"$ref_env"} \
		timeout -k 5 100 valgrind -q --tool=massif \
		--log-file="$tmp/valgrind.%p.log" "${opts[@]}" \
		${vg_opts[@]+"${vg_opts[@]}"} \
		--massif-out-file=massif.%p "$ref" ${args[@]+"${args[@]}"}) \
	<"$stdin" >"$tmp/ref.out" 2>"$tmp/ref.err"
ref_st=$?
(cd "$tmp/got" &&
	exec env ${run_env[@]+"${run_env[@]}"} timeout -k 5 60 \
		"$heaptrace" run -q --massif-compat=yes \
		--backend="${backend:-auto}" ${ht_opts[@]+"${ht_opts[@]}"} \
		"${opts[@]}" --massif-out-file=massif.%p -- \
		"$prog" ${args[@]+"${args[@]}"}) \
	<"$stdin" >"$tmp/got.out" 2>"$tmp/got.err"
got_st=$?

echo "command: $prog ${args[*]-}"
echo "options: ${opts[*]}"
echo "status: native $native_st, massif $ref_st, heaptrace $got_st"

# Massif's side first: if it does not behave as the case says, the case is
# wrong, not heaptrace.
if [ "$ref_st" -ne "$native_st" ]; then
	cat "$tmp"/valgrind.*.log 2>/dev/null
	harness "under Massif the program exits $ref_st, natively $native_st"
fi
for s in out err; do
	if ! cmp -s "$tmp/native.$s" "$tmp/ref.$s"; then
		show "$tmp/native.$s"
		show "$tmp/ref.$s"
		harness "the program's std$s differs under Massif"
	fi
done
mapfile -t reffiles < <(python3 "$profile" list "$tmp/ref")
if [ -n "$nfiles" ] && [ "${#reffiles[@]}" -ne "$nfiles" ]; then
	harness "Massif wrote ${#reffiles[@]} profiles, the case expects $nfiles"
fi

# expect_ok FILES...: run the --expect checks; print what fails.
expect_ok() {
	local files=("$@") ok=0 e idx check i
	for e in ${expects[@]+"${expects[@]}"}; do
		idx=${e%%:*}
		check=${e#*:}
		for i in "${!files[@]}"; do
			if [ "$idx" = "*" ] || [ "$idx" -eq $((i + 1)) ]; then
				python3 "$profile" check "${files[$i]}" "$check" || ok=1
			fi
		done
	done
	return $ok
}
expect_ok "${reffiles[@]}" || harness "Massif's profiles do not pass the case's --expect checks"

if [ "$got_st" -ne "$native_st" ]; then
	fail "heaptrace exited $got_st, the program exits $native_st"
fi
for s in out err; do
	if ! cmp -s "$tmp/native.$s" "$tmp/got.$s"; then
		show "$tmp/native.$s"
		show "$tmp/got.$s"
		fail "the program's std$s differs under heaptrace"
	fi
done

mapfile -t gotfiles < <(python3 "$profile" list "$tmp/got")
if [ "${#gotfiles[@]}" -ne "${#reffiles[@]}" ]; then
	fail "heaptrace wrote ${#gotfiles[@]} profiles, Massif ${#reffiles[@]}"
fi
cmpflags=()
[ -n "$tolerance" ] && cmpflags+=(--tolerance "$tolerance")
[ -n "$series_only" ] && cmpflags+=(--series-only)
for i in "${!reffiles[@]}"; do
	r=${reffiles[$i]}
	g=${gotfiles[$i]-}
	[ -n "$g" ] || break
	echo "pair $((i + 1)): $r $g"
	for key in desc cmd time_unit; do
		# The static case runs a different program under Massif.
		[ "$key" = cmd ] && [ "$ref" != "$prog" ] && continue
		rv=$(python3 "$profile" field "$r" "$key")
		gv=$(python3 "$profile" field "$g" "$key")
		[ "$rv" = "$gv" ] ||
			fail "$key: line differs: Massif '$rv', heaptrace '$gv'"
	done
	if ! python3 "$compare" "$r" "$g" ${cmpflags[@]+"${cmpflags[@]}"}; then
		fail "massif-compare: profile $((i + 1)) differs"
	fi
	if ! ms_print "$g" >"$g.ms_print" 2>&1; then
		head -n 20 "$g.ms_print"
		fail "ms_print cannot read $g"
	fi
done
if [ "${#gotfiles[@]}" -gt 0 ]; then
	expect_ok "${gotfiles[@]}" || fail "heaptrace's profiles do not pass the --expect checks"
fi

if [ "$fails" -ne 0 ]; then
	if [ -s "$tmp/got.err" ]; then
		echo "--- heaptrace's stderr:"
		head -n 20 "$tmp/got.err"
	fi
	echo "$fails failure(s)"
	exit 1
fi
pass_or_fail PASS
