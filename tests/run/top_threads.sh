#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace top` keeping time on a process of 200 threads busy as a
# service's pool (progs/topthreads.c: bursts 5 ms apart, each replacing
# the 1000 bytes the thread holds from hold_block until told "settle",
# which the test says after the first table, then keeping it, and 16
# blocks from churn_block, each block's contents checked before it is
# freed).
# top --format=json --iterations=3 --interval=0.5 is attached while they
# run; CASE is one of:
#  exact    --sampling-interval=0: every call of 200 threads recorded,
#           the loop draining rings all the time; the tables must still
#           come every interval (served at every turn of the loop: served
#           only when it idles, a gap of 2.5 s).
#  sampled  top's default sampling (512K).
# In both: top exits 0 with exactly three lines on stdout, each a JSON
# object (python3's json) of the program's pid; each table's elapsed_s is
# later than the previous one's by less than 2 intervals (a request for a
# table served late, or only once the loop idles, makes a gap of several
# intervals or no table at all); churn_block's calls per second in the
# last table are above 0 (the threads were running while watched);
# exact: hold_block's row holds exactly 200 x 1000 bytes in the last table.
# After the detach the program runs on, checks every block, prints
# "done" and exits 0, its output exactly its own.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: top_threads.sh HEAPTRACE TOPTHREADS CASE
set -u
. "$(dirname "$0")/../lib.sh" || exit 99
ht_prog_case "top_threads.sh HEAPTRACE TOPTHREADS CASE" "$@"
need python3
scratch
threads=200
interval=0.5

case $case_name in
exact) opts=(--sampling-interval=0) ;;
sampled) opts=() ;;
*) usage "top_threads.sh HEAPTRACE TOPTHREADS exact|sampled" ;;
esac

# The threads run long enough for the attach, the three tables and the
# detach on a loaded machine, and end by themselves.
start_target prog out ready "$prog" "$threads" 15
status=0
"$ht" top --format=json --iterations=3 --interval="$interval" "${opts[@]}" \
	"$target" >"$tmp/top.out" 2>"$tmp/top.err" &
top=$!
pids+=("$top")
# the first table says the tracer is in: the threads' blocks are then
# made where it sees them
wait_for "$tmp/top.out" '"pid"' 30 || fail "no first table"
echo settle >&9
wait "$top" || status=$?
[ "$status" = 0 ] || fail "top exited $status: $(head -c 1000 "$tmp/top.err")"

python3 - "$tmp/top.out" "$target" "$interval" "$threads" "$case_name" \
	<<'PY' 2>"$tmp/check.err" || fail "$(tail -1 "$tmp/check.err"); tables: $(head -c 2000 "$tmp/top.out")"
import json, sys
path, pid, interval, threads, case = sys.argv[1:6]
pid, interval, threads = int(pid), float(interval), int(threads)
lines = open(path).read().splitlines()
if len(lines) != 3:
    sys.exit("%d lines, want 3" % len(lines))
tables = []
for n, line in enumerate(lines, 1):
    try:
        o = json.loads(line)
    except ValueError as e:
        sys.exit("line %d is not JSON: %s" % (n, e))
    if o["pid"] != pid:
        sys.exit("table %d is of pid %r, want %d" % (n, o["pid"], pid))
    tables.append(o)
elapsed = [o["elapsed_s"] for o in tables]
for a, b in zip(elapsed, elapsed[1:]):
    if not 0 < b - a < 2 * interval:
        sys.exit("elapsed_s %r: a gap of %.3f s, want under %.1f" %
                 (elapsed, b - a, 2 * interval))
rows = {}
for s in tables[-1]["sites"]:
    rows.setdefault(s["site"].split(" ")[0], s)
churn = rows.get("churn_block")
if not churn or churn["calls_per_s"] <= 0:
    sys.exit("churn_block's row %r: no calls while watched" % (churn,))
if case == "exact":
    hold = rows.get("hold_block")
    if not hold or hold["live_bytes"] != threads * 1000:
        sys.exit("hold_block's row %r, want %d live bytes" %
                 (hold, threads * 1000))
PY

alive "$target" >/dev/null || fail "the program is gone after the detach"
if finish_target prog 30; then
	[ "$status" = 0 ] || fail "the program exited $status: $(cat "$tmp/prog.out")"
	[ "$(cat "$tmp/prog.out")" = "$(printf 'ready %s\ndone' "$target")" ] ||
		fail "the program's output: $(cat "$tmp/prog.out")"
	[ -s "$tmp/prog.err" ] && fail "the program's stderr: $(cat "$tmp/prog.err")"
fi
pass_or_fail
