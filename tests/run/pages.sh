#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --pages-as-heap=yes on progs/pages.c, whose own page calls are known:
#  - its output and exit status under heaptrace are the native ones;
#  - with --massif-compat=yes, each call site holds exactly Massif's
#    bytes (MAP_FIXED counted twice), and real Massif agrees, when
#    installed, with the same checks;
#  - without it, the exact accounting (MAP_FIXED replaces the pages).
# usage: pages.sh HEAPTRACE PROG
set -u
. "$(dirname "$0")/../lib.sh" || exit 99
[ $# -eq 2 ] || usage "pages.sh HEAPTRACE PROG"
heaptrace=$1 prog=$2
scratch
dir=$tmp
opts=(--pages-as-heap=yes --time-unit=B --detailed-freq=1 --threshold=0)

native_out=$("$prog" 2>&1); native_rc=$?
out=$("$heaptrace" run -q --massif-compat=yes "${opts[@]}" \
	--massif-out-file="$dir/compat" "$prog" 2>&1); rc=$?
if [ "$out" != "$native_out" ] || [ $rc -ne $native_rc ]; then
	fail "output or status differ: native '$native_out' ($native_rc)," \
	     "heaptrace '$out' ($rc)"
fi
common=(grow_brk=8192/12288 shrink_brk=0/0 map_eight=0/32768
	remap_grow=0/16384 remap_shrink=0/0 remap_move=24576/24576
	map_fixed=8192/8192 map_fail=0/0)
"$here/pages_check.py" "$dir/compat" "${common[@]}" map_ten=32768/40960 ||
	fail "--massif-compat=yes: the functions' bytes"
"$heaptrace" run -q "${opts[@]}" --massif-out-file="$dir/exact" "$prog" \
	>/dev/null 2>&1
"$here/pages_check.py" "$dir/exact" "${common[@]}" map_ten=24576/40960 ||
	fail "exact: the functions' bytes"
if have valgrind; then
	valgrind -q --tool=massif "${opts[@]}" --massif-out-file="$dir/massif" \
		"$prog" >/dev/null 2>&1
	"$here/pages_check.py" "$dir/massif" "${common[@]}" \
		map_ten=32768/40960 || harness "(real Massif)"
fi
pass_or_fail
