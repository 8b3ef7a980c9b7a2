#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# How long a working thread stands still while `heaptrace attach` attaches
# to its process and detaches from it, beside N idle threads
# (bench/pause.c): for N = 10, 100, 1000, the longest gap between two of
# the working thread's iterations during the attach (from heaptrace's
# start until the thread sees malloc patched, plus 20 ms) and during the
# detach (from the SIGINT until the thread sees its TracerPid 0, plus
# 5 ms; until heaptrace exits when it never does), the attach's wall
# time (heaptrace's start to malloc patched), and the longest gap in the
# half second before the attach (the machine's own noise); medians of
# RUNS runs.
# Usage: bench/attach-pause.sh [BUILD_DIR] (default build); RUNS=3,
# THREADS="10 100 1000", HOLD=0.5 (seconds attached), EXTRA="options for
# heaptrace".
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${RUNS:-3}
THREADS=${THREADS:-10 100 1000}
HOLD=${HOLD:-0.5}
EXTRA=${EXTRA:-}
HT="$BUILD/heaptrace"
if [ ! -x "$HT" ]; then
	echo "bench/attach-pause.sh: no $HT: build it first (ninja -C $BUILD)" >&2
	exit 1
fi

W=$(mktemp -d)
SVC=
HTPID=
cleanup() {
	[ -z "$HTPID" ] || kill -KILL "$HTPID" 2>/dev/null || true
	[ -z "$SVC" ] || kill -KILL "$SVC" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

cc -std=c11 -O2 -g -pthread -Wall -Wextra -o "$W/pause" bench/pause.c -ldl
now() { "$W/pause" now; }

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# wait_for WORD FILE: until FILE holds a line WORD... (at most 60 s).
wait_for() {
	for _ in $(seq 1200); do
		grep -q "^$1" "$2" 2>/dev/null && return 0
		kill -0 "$SVC" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# one_run N: prints "ATTACH_MS DETACH_MS ATTACH_WALL_MS NOISE_MS".
one_run() {
	"$W/pause" "$1" >"$W/out" 2>"$W/err" </dev/null &
	SVC=$!
	wait_for ready "$W/err" || { echo "pause did not start: $(cat "$W/err")" >&2; return 1; }
	t_ready=$(now)
	sleep 0.5
	t_start=$(now)
	# shellcheck disable=SC2086 # EXTRA is a list of options
	"$HT" attach -q $EXTRA --massif-out-file="$W/massif.out" "$SVC" \
		2>"$W/ht.err" &
	HTPID=$!
	wait_for attached "$W/err" || { echo "never attached: $(cat "$W/ht.err")" >&2; return 1; }
	sleep "$HOLD"
	t_int=$(now)
	kill -INT "$HTPID"
	wait "$HTPID" || { echo "heaptrace failed: $(cat "$W/ht.err")" >&2; return 1; }
	HTPID=
	t_end=$(now)
	sleep 0.1
	kill -TERM "$SVC"
	wait "$SVC" || true
	SVC=
	awk -v ready="$t_ready" -v start="$t_start" -v tint="$t_int" \
	    -v end="$t_end" '
		$1 == "patched" { patched = $2 }
		$1 == "released" { released = $2 }
		$1 == "gap" { g[++n] = $2; l[n] = $3 }
		function worst(lo, hi,   i, m) {
			m = 0
			for (i = 1; i <= n; i++)
				if (g[i] > lo && g[i] - l[i] < hi && l[i] > m)
					m = l[i]
			return m / 1e6
		}
		END {
			if (!patched) { print "not patched" > "/dev/stderr"; exit 1 }
			printf "%.1f %.1f %.0f %.1f\n", worst(start, patched + 2e7),
			       worst(tint, released ? released + 5e6 : end), (patched - start) / 1e6,
			       worst(ready, start)
		}' "$W/out"
}

printf "%-8s %14s %14s %14s %12s\n" threads "attach pause" "detach pause" \
	"attach time" "noise"
for n in $THREADS; do
	: >"$W/runs"
	for _ in $(seq "$RUNS"); do
		one_run "$n" >>"$W/runs"
	done
	a=$(cut -d' ' -f1 "$W/runs" | median)
	d=$(cut -d' ' -f2 "$W/runs" | median)
	w=$(cut -d' ' -f3 "$W/runs" | median)
	z=$(cut -d' ' -f4 "$W/runs" | median)
	printf "%-8s %11s ms %11s ms %11s ms %9s ms\n" "$n" "$a" "$d" "$w" "$z"
	[ "${VERBOSE:-0}" = 0 ] || sed 's/^/  run: /' "$W/runs"
done
echo "(medians of $RUNS runs; pauses are the working thread's longest gap" \
	"between iterations; noise: its longest gap before the attach)"
