#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Accuracy of sampled profiling without a fixed seed: tests/run/progs/
# accuracy.c (sites of 128, 64 and 32 MiB in 1 MiB blocks and 16 MiB in
# 256 B blocks at the peak, after 1 GiB of short-lived churn) once exactly
# and N times under `heaptrace run --sampling-interval=INTERVAL` with a
# random seed each time. Per estimated figure: each run's error against the
# exact run, the largest, and the error of the mean of the N estimates,
# beside the expected error of one run, sqrt(INTERVAL / bytes) (sample
# points fall on the bytes as a Poisson process of rate 1/INTERVAL; a site
# of T bytes in blocks much smaller than the interval is estimated as
# INTERVAL times the points in it: standard error sqrt(T * INTERVAL)).
# Checks: every run within +-25 % (4 standard errors for 16 MiB at 64 KiB),
# the mean within +-6 % (3 standard errors of a mean of 10 at 6.25 %),
# and the 1 MiB-block sites, larger blocks than the interval, exact to
# the byte in every run.
# Usage: bench/accuracy.sh [BUILD_DIR] (default build); N=10,
# INTERVAL=64K (a heaptrace size: bytes, or K, M, G). Exit 1 when a check
# fails. About 1 s a run on an idle 2-vCPU VM.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${N:-10}
INTERVAL=${INTERVAL:-64K}
HT="$BUILD/heaptrace"
FIG=tests/run/site_figures.py
if [ ! -x "$HT" ]; then
	echo "bench/accuracy.sh: no $HT: build it first (ninja -C $BUILD)" >&2
	exit 2
fi
case "$HT" in /*) ;; *) HT="$(pwd)/$HT" ;; esac
case $INTERVAL in
*[!0-9KMG]* | '' | [KMG]*) echo "bench/accuracy.sh: INTERVAL: a size (bytes, or with K, M, G), not '$INTERVAL'" >&2; exit 2 ;;
esac
bytes=$(echo "$INTERVAL" | awk '{ n = $0 + 0; u = substr($0, length($0))
	if (u == "K") n *= 1024; else if (u == "M") n *= 1048576; else if (u == "G") n *= 1073741824
	printf "%d\n", n }')

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM HUP

# The test's build flags: every site its own function, frames kept.
cc -std=c11 -O0 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls \
	-o "$W/accuracy" tests/run/progs/accuracy.c

FUNCS="hold_128 hold_64 hold_32 hold_16 churn_block"

# profile NAME OPTION...: heaptrace run of the program, its figures in
# $W/NAME.fig.
profile() {
	name=$1; shift
	mkdir "$W/$name"
	if ! (cd "$W/$name" && "$HT" run -q --time-unit=B \
		--massif-out-file=m.out "$@" "$W/accuracy" >/dev/null 2>"$W/$name.err"); then
		echo "bench/accuracy.sh: $name: heaptrace failed: $(head -1 "$W/$name.err")" >&2
		exit 1
	fi
	python3 "$FIG" "$W/$name/m.out" $FUNCS >"$W/$name.fig"
	rm -rf "${W:?}/$name"
}

# fig NAME FUNCTION KEY: one figure of one run.
fig() {
	awk -v fn="$2" -v key="$3" '$1 == fn {
		for (i = 2; i <= NF; i++)
			if (index($i, key "=") == 1) print substr($i, length(key) + 2)
	}' "$W/$1.fig"
}

echo "sampled profiling accuracy: tests/run/progs/accuracy.c, $N runs at --sampling-interval=$INTERVAL ($bytes B), each with a random seed, against one exact run ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
profile exact
for i in $(seq "$N"); do
	profile "s$i" "--sampling-interval=$INTERVAL"
	sed -n 's/^sampling: //p' "$W/s$i.fig" >>"$W/seeds"
done
echo "the runs' seeds: $(sed 's/.*seed=//' "$W/seeds" | tr '\n' ' ')"
if [ "$(sort -u "$W/seeds" | wc -l)" != "$N" ]; then
	echo "bench/accuracy.sh: the $N runs did not each draw a seed of their own" >&2
fi

# One row per figure: FUNCTION KEY, then the exact value and the N
# estimates.
for spec in hold_16:peak hold_16:tree hold_16:allocated churn_block:allocated \
	hold_128:peak hold_64:peak hold_32:peak hold_128:allocated hold_64:allocated hold_32:allocated; do
	f=${spec%%:*}; k=${spec#*:}
	printf '%s %s %s' "$f" "$k" "$(fig exact "$f" "$k")"
	for i in $(seq "$N"); do printf ' %s' "$(fig "s$i" "$f" "$k")"; done
	echo
done >"$W/rows"

awk -v n="$N" -v b="$bytes" '
function abs(x) { return x < 0 ? -x : x }
BEGIN {
	printf "\n%-22s %12s %9s %9s %9s %9s  %s\n", "site figure", "exact (B)", "expected", "max |err|", "mean err", "verdict", "each run'"'"'s error (%)"
}
{
	exact = $3; sum = 0; worst = 0; errs = ""; bad = 0
	# Blocks of 1 MiB, at least as large as the interval: recorded at
	# their true size.
	exact_site = ($1 ~ /^hold_(128|64|32)$/ && b <= 1048576)
	for (i = 4; i <= NF; i++) {
		if ($i !~ /^[0-9]+$/) { bad = 1; errs = errs " ?"; continue }
		sum += $i
		e = exact ? ($i - exact) * 100 / exact : 0
		if (abs(e) > worst) worst = abs(e)
		errs = errs sprintf(" %+.1f", e)
		if (exact_site ? $i != exact : abs(e) > 25) bad = 1
	}
	mean = sum / n
	me = exact ? (mean - exact) * 100 / exact : 0
	if (!exact_site && abs(me) > 6) bad = 1
	expected = exact_site ? "exact" : sprintf("%.2f %%", sqrt(b / exact) * 100)
	printf "%-22s %12d %9s %8.2f%% %+8.2f%% %9s %s\n", $1 " " $2, exact, expected, worst, me, bad ? "FAIL" : "ok", errs
	if (bad) status = 1
}
END {
	print "\nchecks: each run within +-25 %, the mean of the runs within +-6 %; sites of blocks at least as large as the interval exact to the byte"
	exit status
}' "$W/rows"
