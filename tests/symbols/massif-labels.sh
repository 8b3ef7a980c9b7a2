#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# massif-labels.sh HEAPTRACE EXPECTED PROG...: profile PROG with
# `heaptrace run --massif-compat=yes --time-unit=B` and check that the
# labels of its allocation trees (each distinct one, its address cut off)
# are exactly those in EXPECTED, one a line, sorted: what real Massif
# (Valgrind 3.19) prints for the same program, worked out once.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99
[ $# -ge 3 ] || usage "massif-labels.sh HEAPTRACE EXPECTED PROG..."
ht=$1 expected=$2
shift 2
scratch
"$ht" run -q --massif-compat=yes --time-unit=B \
	--massif-out-file="$tmp/out" "$@" >/dev/null
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "heaptrace exited $rc"
	exit 1
fi
sed -n 's/^ *n[0-9]*: [0-9]* //p' "$tmp/out" |
	sed 's/^0x[0-9A-Fa-f]*: //' | LC_ALL=C sort -u >"$tmp/got"
LC_ALL=C sort -u "$expected" >"$tmp/want"
if ! cmp -s "$tmp/want" "$tmp/got"; then
	echo "labels differ from Massif's (- expected, + heaptrace):"
	diff -u "$tmp/want" "$tmp/got" | sed -n '3,$p'
	exit 1
fi
echo "$(wc -l <"$tmp/got") labels, as Massif prints them"
