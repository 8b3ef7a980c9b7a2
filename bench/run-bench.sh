#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Wall time of native runs, heaptrace, Massif and heaptrack, measured side by
# side in one sitting, as medians of RUNS runs, printed as ratios to native.
# Usage: bench/run-bench.sh [BUILD_DIR] (default build); RUNS=3 by default.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${RUNS:-3}
HT="$BUILD/heaptrace"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

cc -O2 -o "$W/compute" bench/compute.c

# Seconds taken by the command, as a decimal.
timed() {
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1 </dev/null || true
	e=$(date +%s.%N)
	echo "$e - $s" | bc -l
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# median_time LABEL CMD...: run CMD RUNS times, print the median.
median_time() {
	for i in $(seq "$RUNS"); do timed "$@"; done | median
}

have() { command -v "$1" >/dev/null 2>&1; }

bench_one() {
	name=$1; shift
	native=$(median_time "$@")
	ht=$(median_time "$HT" run -q --time-unit=B --massif-out-file="$W/ht.out" -- "$@")
	"$HT" run --stats=yes -q --time-unit=B --massif-out-file="$W/ht.out" -- "$@" \
		>/dev/null 2>"$W/stats" </dev/null || true
	events=$(sed -n 's/.*stats: process [0-9]*: \([0-9]*\) events.*/\1/p' "$W/stats" | head -1)
	if have valgrind; then
		ms=$(median_time valgrind --tool=massif --time-unit=B --massif-out-file="$W/ms.out" "$@")
	else
		ms=
	fi
	if have heaptrack; then
		hk=$(median_time heaptrack -o "$W/hk" "$@")
	else
		hk=
	fi
	printf '%-22s native %7.3fs  heaptrace %6.2fx  massif %6s  heaptrack %6s  events %9s  heaptrace cost/event %s\n' \
		"$name" "$native" "$(echo "$ht / $native" | bc -l)" \
		"$( [ -n "$ms" ] && printf '%.2fx' "$(echo "$ms / $native" | bc -l)" || echo n/a)" \
		"$( [ -n "$hk" ] && printf '%.2fx' "$(echo "$hk / $native" | bc -l)" || echo n/a)" \
		"${events:-?}" \
		"$( [ -n "${events:-}" ] && [ "${events:-0}" -gt 0 ] && printf '%.1f us' "$(echo "($ht - $native) / $events * 1000000" | bc -l)" || echo n/a)"
}

echo "heaptrace bench: medians of $RUNS runs, wall time ratio to native ($(nproc) CPUs)"
bench_one "compute-bound" "$W/compute"
bench_one "perl 200k-key hash" perl -e 'my %h; $h{$_} = $_ for 1..200000;'
"$BUILD/bench/engine_bench" 2000000 | sed 's/^/engine alone: /'
