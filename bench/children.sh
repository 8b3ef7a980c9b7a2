#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What following children costs (README "Programs that exec"): wall and
# CPU time (user + system, heaptrace's and the target's) of `make check`
# on tests/run/makeproj (cc1 twice, as, collect2, ld, the test), of a
# local `git clone` of this checkout (hard links: git-upload-pack only)
# and of `git clone --no-local` (pack-objects, index-pack), each N times,
# natively and under
# `heaptrace run` with --follow-exec=wrappers (the default before
# issue 26), the default (work) and --trace-children=yes; the median of
# each, its ratio to native, and the profiles written.
# Usage: bench/children.sh [BUILD_DIR] (default build); N=5.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${N:-5}
HT="$BUILD/heaptrace"
if [ ! -x "$HT" ]; then
	echo "bench/children.sh: no $HT: build it first (ninja -C $BUILD)" >&2
	exit 2
fi
case "$HT" in /*) ;; *) HT="$(pwd)/$HT" ;; esac
SRC=$(pwd)
PROJ=$SRC/tests/run/makeproj
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# one WORKLOAD MODE: one run; appends "wall cpu files" to $W/WORKLOAD.MODE
one() {
	rm -rf "$W/out" "$W/prof" "$W/clone"
	mkdir -p "$W/out" "$W/prof"
	case $2 in
	native) set -- "$1" ;;
	wrappers) set -- "$1" "$HT" run -q --follow-exec=wrappers ;;
	default) set -- "$1" "$HT" run -q ;;
	children) set -- "$1" "$HT" run -q --trace-children=yes ;;
	esac
	w=$1
	shift
	[ $# -gt 0 ] && set -- "$@" --massif-out-file="$W/prof/massif.out.%p" --
	case $w in
	make) set -- "$@" make -s -f "$PROJ/Makefile" SRC="$PROJ" OUT="$W/out" check ;;
	clone) set -- "$@" git clone -q "$SRC" "$W/clone" ;;
	pack) set -- "$@" git clone -q --no-local "$SRC" "$W/clone" ;;
	esac
	/usr/bin/time -f '%e %U %S' -o "$W/time" "$@" >/dev/null 2>"$W/err" || {
		echo "bench/children.sh: $w: failed:" >&2; cat "$W/err" >&2; exit 1; }
	files=$(find "$W/prof" -name 'massif.out.*' ! -name '*.sites' | wc -l)
	awk -v f="$files" '{ printf "%.3f %.3f %d\n", $1, $2 + $3, f }' \
		"$W/time" >>"$W/$w.$mode"
}

median() { # FILE COLUMN
	cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 }
		END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

printf '%-6s %-9s %8s %8s %8s %8s %6s\n' workload mode wall_s ratio cpu_s ratio files
for w in make clone pack; do
	for i in $(seq "$N"); do
		for mode in native wrappers default children; do
			one "$w" "$mode"
		done
	done
	nw=$(median "$W/$w.native" 1)
	nc=$(median "$W/$w.native" 2)
	for mode in native wrappers default children; do
		mw=$(median "$W/$w.$mode" 1)
		mc=$(median "$W/$w.$mode" 2)
		printf '%-6s %-9s %8.3f %8.2f %8.3f %8.2f %6d\n' "$w" "$mode" \
			"$mw" "$(echo "$mw $nw" | awk '{ print $1 / $2 }')" \
			"$mc" "$(echo "$mc $nc" | awk '{ print $1 / $2 }')" \
			"$(median "$W/$w.$mode" 3)"
	done
done
