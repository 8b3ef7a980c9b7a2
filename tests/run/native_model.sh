#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The extra-bytes model of a native profile (no --massif-compat) follows the
# allocator the program really uses: glibc's chunk sizes when its malloc is
# glibc's, Massif's estimate (--heap-admin plus rounding to --alignment)
# for another allocator, whose blocks have no glibc chunk header. Runs PROG
# under heaptrace with SONAME preloaded ("none": nothing preloaded), under
# both backends, and requires the largest useful heap and the largest extra
# heap to be HEAP and EXTRA (worked out from PROG's source).
#
# usage: native_model.sh HEAPTRACE PROG SONAME HEAP EXTRA
# PROG "none": skip (it could not be built); SONAME "sanitized": skip
# (heaptrace has a sanitizer's runtime, which refuses a preloaded malloc).
# Exit 0 pass, 1 fail, 77 skip (SONAME not installed), 99 usage.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 5 ] || usage "native_model.sh HEAPTRACE PROG SONAME HEAP EXTRA"
heaptrace=$1 prog=$2 soname=$3 heap=$4 extra=$5
profile="$here/profile.py"
if [ "$prog" = none ]; then
	skip "no C++ compiler"
fi
if [ "$soname" = sanitized ]; then
	skip "heaptrace is built with a sanitizer, which cannot run with another allocator preloaded"
fi

run_env=()
if [ "$soname" != none ]; then
	lib=$(find_lib "$soname") || skip "$soname is not installed"
	run_env=("LD_PRELOAD=$lib")
fi

scratch
for backend in inline ptrace; do
	out="$tmp/massif.$backend"
	env ${run_env[@]+"${run_env[@]}"} "$heaptrace" run -q --time-unit=B \
		--backend="$backend" --massif-out-file="$out" -- "$prog" \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	st=$?
	echo "$backend: status $st"
	if [ "$st" -ne 0 ] || [ -s "$tmp/err" ]; then
		head -n 20 "$tmp/err"
		fail "$backend: heaptrace exited $st"
		continue
	fi
	python3 "$profile" check "$out" "max-heap=$heap" "max-extra=$extra" ||
		fail "$backend: max-heap or max-extra"
done
pass_or_fail PASS
