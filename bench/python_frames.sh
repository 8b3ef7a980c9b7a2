#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 28: what Python frames cost. Each case runs natively, under
# `heaptrace run -q --python-frames=no` and `--python-frames=yes` (the
# default backend: the inline stubs walk the Python frames at each
# allocation), the three interleaved so that a burst of load on a shared
# machine hits them alike, RUNS times; prints the medians in seconds and
# the ratio yes/no, the criterion (<= 1.10), of wall and of CPU seconds.
#
# Cases (names for ONLY=):
#   list311   pyenv 3.11's python3 (PyObject_Malloc probed: every object
#             an event) on the issue's command, 100k strings in a list
#   deep311   the same interpreter, 40 rounds of 5k strings made 60 calls
#             deep (every stack has more Python frames than PY_MAX_FRAMES)
#   list312   pyenv 3.12's python3 on the issue's command
#   debian    /usr/bin/python3 (pymalloc inlined: few events) on it
#   json      /usr/bin/python3 on bench/programs.sh's python case (JSON
#             dumps and loads of 100k records): the issue's criterion
# A case whose interpreter is missing prints n/a.
#
# Usage: bench/python_frames.sh [BUILD_DIR | HEAPTRACE] (default: build)
# Environment: RUNS=5; ONLY=list311,deep311.
set -eu
cd "$(dirname "$0")/.."
ARG=${1:-build}
if [ -f "$ARG" ]; then HT=$ARG; else HT="$ARG/heaptrace"; fi
RUNS=${RUNS:-5}
ONLY=${ONLY:-}
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions

if [ ! -x "$HT" ]; then
	echo "bench/python_frames.sh: no $HT: build it first" >&2
	exit 2
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

LIST='x=[str(i)*3 for i in range(100000)]'
DEEP='
def rec(n):
    if n == 0:
        return [str(i) * 3 for i in range(5000)]
    return rec(n - 1)
for _ in range(40):
    x = rec(60)
'
# bench/programs.sh's python program, the same one.
JSON=$(cat bench/json_records.py)

# secs CMD...: "WALL CPU" seconds of CMD (CPU: user + system of it and
# its children, from /usr/bin/time: on a machine shared with other work
# the wall time follows the CPU share a run got more than the tool), its
# output thrown away.
secs() {
	/usr/bin/time -f '%e %U %S' -o "$W/time" "$@" >/dev/null 2>&1 || true
	awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$W/time"
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# case_run NAME PYTHON CODE: the medians and the ratio, one line.
case_run() {
	name=$1 py=$2 code=$3
	if [ -n "$ONLY" ]; then
		case ",$ONLY," in *",$name,"*) ;; *) return 0 ;; esac
	fi
	if [ ! -x "$py" ]; then
		printf '%-8s n/a (no %s)\n' "$name" "$py"
		return 0
	fi
	: >"$W/native" ; : >"$W/no" ; : >"$W/yes"
	for _ in $(seq "$RUNS"); do
		secs "$py" -c "$code" >>"$W/native"
		secs "$HT" run -q --python-frames=no \
			--massif-out-file="$W/m.out" -- "$py" -c "$code" >>"$W/no"
		secs "$HT" run -q --python-frames=yes \
			--massif-out-file="$W/m.out" -- "$py" -c "$code" >>"$W/yes"
	done
	for k in native no yes; do
		cut -d' ' -f1 "$W/$k" | median >"$W/$k.wall"
		cut -d' ' -f2 "$W/$k" | median >"$W/$k.cpu"
	done
	echo "$name $(cat "$W/native.wall") $(cat "$W/no.wall") \
$(cat "$W/yes.wall") $(cat "$W/no.cpu") $(cat "$W/yes.cpu")" |
		awk '{ printf "%-8s wall: native %.3f  no %.3f  yes %.3f  yes/no %.3f   cpu: no %.3f  yes %.3f  yes/no %.3f\n", $1, $2, $3, $4, $4 / $3, $5, $6, $6 / $5 }'
}

echo "medians of $RUNS runs, heaptrace run -q (default backend)"
case_run list311 "$PYENV/3.11.7/bin/python3" "$LIST"
case_run deep311 "$PYENV/3.11.7/bin/python3" "$DEEP"
case_run list312 "$PYENV/3.12.1/bin/python3" "$LIST"
case_run debian /usr/bin/python3 "$LIST"
case_run json /usr/bin/python3 "$JSON"
