#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The size of the .sites file beside a profile, against its Massif file,
# and what writing it costs: `heaptrace run -q` of COMMAND N times, each
# heaptrace binary given in turn (so that a build from before a change and
# one after it share the machine's load), printing per binary the medians
# of the whole run's wall time and CPU time (user + system, heaptrace and
# the program: the program's share is the same for each binary, and CPU
# time is less at the mercy of a loaded machine), the sizes of massif.out
# and .sites, their ratio, and the .sites file's bytes by line type.
# Usage: bench/sites_size.sh HEAPTRACE... -- COMMAND [ARGS...]; N=5.
# Example (docs/sites-format.md, "Size"):
#   bench/sites_size.sh /tmp/old/heaptrace build/heaptrace -- \
#       python3 -c 'import json; json.dumps([{"a": i} for i in range(200000)])'
set -eu
N=${N:-5}
hts=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	case $1 in /*) h=$1 ;; *) h=$(pwd)/$1 ;; esac
	[ -x "$h" ] || { echo "bench/sites_size.sh: $1: not an executable" >&2; exit 2; }
	hts="$hts $h"
	shift
done
[ $# -gt 1 ] && [ -n "$hts" ] ||
	{ echo "usage: bench/sites_size.sh HEAPTRACE... -- COMMAND [ARGS...]" >&2; exit 2; }
shift
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
i=0
while [ "$i" -lt "$N" ]; do
	k=0
	for h in $hts; do
		k=$((k + 1))
		mkdir -p "$W/$k"
		/usr/bin/time -f "%e %U %S" -o "$W/$k/time" \
			"$h" run -q --massif-out-file="$W/$k/m" "$@" >/dev/null 2>"$W/$k/err" ||
			{ echo "bench/sites_size.sh: $h failed:" >&2; cat "$W/$k/err" >&2; exit 1; }
		awk '{ print $1 > "'"$W/$k/wall"'"; printf "%.2f\n", $2 + $3 }' \
			"$W/$k/time" >>"$W/$k/cpu"
		cat "$W/$k/wall" >>"$W/$k/times"
	done
	i=$((i + 1))
done
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

k=0
for h in $hts; do
	k=$((k + 1))
	m=$(stat -c %s "$W/$k/m")
	s=$(stat -c %s "$W/$k/m.sites")
	t=$(median <"$W/$k/times")
	c=$(median <"$W/$k/cpu")
	echo "$h: medians of $N runs: ${t} s, CPU ${c} s; massif.out $m B, .sites $s B ($(head -1 "$W/$k/m.sites")), ratio $(echo "$s $m" | awk '{ printf "%.2f", $1 / $2 }')"
	awk '{ b[$1] += length($0) + 1 } END { for (t in b) printf "  %-18s %10d B\n", t, b[t] }' \
		"$W/$k/m.sites" | sort -k2 -n -r
done
