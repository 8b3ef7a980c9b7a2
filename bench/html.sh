#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# How long the HTML page of a large profile takes (issue 16's targets, once
# a timed test): tests/html/gen_large.py's profile (500 snapshots, 3000
# sites), `heaptrace report --format=html` on it, then headless Chromium
# RUNS times: the page's own drawing time (navigation to drawn, which the
# page records as data-render-ms) and Chromium's whole run, as medians.
# Targets: page <= 4,000,000 bytes, drawn <= 3000 ms, Chromium <= 15 s.
# Usage: bench/html.sh [BUILD_DIR | HEAPTRACE]; RUNS=5.
set -eu
cd "$(dirname "$0")/.."
ARG=${1:-build}
if [ -f "$ARG" ]; then HT=$ARG; else HT="$ARG/heaptrace"; fi
RUNS=${RUNS:-5}
browser=
for b in chromium chromium-browser google-chrome google-chrome-stable; do
	command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
[ -n "$browser" ] || { echo "bench/html.sh: no Chromium found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 tests/html/gen_large.py "$tmp/big.massif" 500 3000
"$HT" report --format=html -o "$tmp/big.html" "$tmp/big.massif"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

i=0
while [ "$i" -lt "$RUNS" ]; do
	start=$(date +%s.%N)
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$tmp/chromium" \
		--dump-dom "$tmp/big.html" >"$tmp/dom" 2>/dev/null
	end=$(date +%s.%N)
	awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f\n", e - s }' \
		>>"$tmp/seconds"
	grep -o 'data-render-ms="[0-9]*"' "$tmp/dom" | tr -dc '0-9' >>"$tmp/ms"
	echo >>"$tmp/ms"
	i=$((i + 1))
done
printf 'page %s bytes (target <= 4000000)\n' "$(wc -c <"$tmp/big.html")"
printf 'drawn in %s ms, median of %s (target <= 3000)\n' \
	"$(median <"$tmp/ms")" "$RUNS"
printf 'Chromium ran %s s, median of %s (target <= 15)\n' \
	"$(median <"$tmp/seconds")" "$RUNS"
