#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Checks the harness with real Massif standing in for heaptrace
# (vg-heaptrace.sh): compare.sh must say PASS for Massif against itself on
# the stack and fork programs, and FAIL when the stand-in is made to differ
# (--heap-admin=16). Also records what the static case relies on: Massif
# sees nothing in a statically linked program (one empty snapshot).
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: selfcheck.sh COMPARE_SH MASSIF_COMPARE STACK FORK STACK_STATIC|none
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 5 ] || usage "selfcheck.sh COMPARE_SH MASSIF_COMPARE STACK FORK STACK_STATIC|none"
compare_sh=$(abspath "$1")
massif_compare=$(abspath "$2")
stack=$(abspath "$3")
fork=$(abspath "$4")
stack_static=$5
[ "$stack_static" = none ] || stack_static=$(abspath "$stack_static")
shim="$here/vg-heaptrace.sh"

need valgrind
need_file "$massif_compare" massif-compare

# expect STATUS WHAT COMMAND...: COMMAND must exit STATUS.
expect() {
	local want=$1 what=$2 st
	shift 2
	"$@" >"$tmp/log" 2>&1
	st=$?
	if [ "$st" -ne "$want" ]; then
		cat "$tmp/log"
		fail "$what: compare.sh exited $st, want $want"
	else
		echo "ok: $what (status $st)"
	fi
}
scratch

base=("$compare_sh" --heaptrace "$shim" --compare "$massif_compare")
expect 0 "Massif against itself: stack" \
	"${base[@]}" --files 1 --expect 1:max-heap=5310 -- --detailed-freq=2 -- "$stack"
expect 0 "Massif against itself: fork, three profiles" \
	"${base[@]}" --files 3 --expect 1:max-heap=4500 -- -- "$fork"
expect 1 "a stand-in that differs (--heap-admin=16) is caught" \
	env HT_SHIM_EXTRA=--heap-admin=16 "${base[@]}" -- -- "$stack"
expect 1 "a stand-in that ignores some blocks (--ignore-fn=f0) is caught" \
	env HT_SHIM_EXTRA=--ignore-fn=f0 "${base[@]}" -- -- "$stack"

if [ "$stack_static" != none ]; then
	valgrind -q --tool=massif --log-file=/dev/null --time-unit=B \
		--massif-out-file="$tmp/static.out" "$stack_static"
	if python3 "$here/profile.py" check "$tmp/static.out" max-heap=0 &&
		[ "$(grep -c '^snapshot=' "$tmp/static.out")" -eq 1 ]; then
		echo "ok: Massif on the static build: one empty snapshot"
	else
		fail "Massif on the static build is not a single empty snapshot:"
		head -n 20 "$tmp/static.out"
	fi
	expect 1 "Massif on the static build differs from Massif on the dynamic one" \
		"${base[@]}" --ref "$stack" -- -- "$stack_static"
fi

[ "$fails" -eq 0 ] || echo "$fails failure(s)"
pass_or_fail PASS
