#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace top` in batch mode (cli/top.c) on progs/topsites.c, whose
# sites are known: hold_big holds 3,000,000 bytes (one block), hold_small
# 1,000,000 (10,000 blocks of 100), churn makes 4096-byte temporaries.
# CASE is one of:
#  exact    top --batch --iterations=3 --sampling-interval=0 PID: exit
#           0, exactly three tables; in each, the first row is hold_big
#           with 3000000 live bytes, the header says "exact"; in the last,
#           hold_small's row holds 1000000 and churn's row 0 live bytes
#           with a temporary share of 100%; the program runs on after the
#           detach, prints "done" and exits 0 (its output exactly its
#           own).
#  json     the same with --format=json: three lines, each a JSON object
#           (python3's json) with the same figures, "estimates" false;
#           in the last, hold_big allocates 0 B/s in 0 calls/s, and churn
#           20 to 600 calls/s (it sleeps 2 ms between calls), 4096 B each.
#  sampled  --sampling-interval=16384 --sampling-seed=7 --format=json:
#           "estimates" true, hold_big first, and hold_small's live bytes
#           within 4 standard errors of 1,000,000 (the error of a site's
#           bytes is about sqrt(interval/bytes): 12.8 %, so 490,000 to
#           1,510,000); the text form says the figures are estimates.
#  signal-INT, signal-TERM  top without --iterations, ended by that
#           signal after its second table: exit 0, the program runs on and
#           exits 0.
#  run      top --iterations=2 -- PROG "now": two tables with hold_big
#           first at 3000000 (every call counted from the start), the
#           program's own output intact, top's exit status the
#           program's (0).
#  profile  --massif-out-file=FILE: after --iterations=2, FILE and its
#           .sites written, read by `heaptrace print`, hold_big's
#           3,000,000 B in its tree; without the option, no file written
#           in the current directory.
#  errors   one line on stderr, nothing on stdout, exit 2: no such pid,
#           a malformed --interval (abc, 0, -1), a bad --format, a bad
#           --iterations, no PID at all.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: top.sh HEAPTRACE TOPSITES CASE
set -u
. "$(dirname "$0")/../lib.sh" || exit 99
ht_prog_case "top.sh HEAPTRACE TOPSITES CASE" "$@"
need python3
fails=0
scratch

# check_tables FILE FORMAT N LIVE_SMALL_RULE: FILE's N tables checked by
# python (FORMAT text or json); SMALL is "exact" or "bound".
check_tables() {
	python3 - "$1" "$2" "$3" "$4" <<'PY' || fail "tables: $(head -c 3000 "$1")"
import json, re, sys
path, fmt, n, small_rule = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
text = open(path).read()
tables = []
if fmt == "json":
    for line in text.splitlines():
        o = json.loads(line)
        rows = [(s["site"], s["live_bytes"], s["temporary_percent"],
                 s["alloc_bytes_per_s"], s["calls_per_s"])
                for s in o["sites"]]
        tables.append((o["estimates"], o["sampling_interval"], rows))
else:
    for block in text.strip("\n").split("\n\n"):
        lines = block.splitlines()
        assert lines[0].startswith("heaptrace top - pid "), lines[0]
        est = "estimate" in lines[2]
        assert est or lines[2].startswith("exact"), lines[2]
        rows = []
        for l in lines[4:]:
            m = re.match(r"\s*(\d+)\s+\S+%\s+\S+\s+\S+\s+\S+\s+(\d+)%\s+(.*)$", l)
            if m:
                rows.append((m.group(3), int(m.group(1)), float(m.group(2))))
        tables.append((est, None, rows))
def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
if len(tables) != n:
    fail("%d tables, want %d" % (len(tables), n))
for i, (est, interval, rows) in enumerate(tables):
    if est != (small_rule == "bound"):
        fail("table %d: estimates %s" % (i, est))
    if not rows or not rows[0][0].startswith("hold_big ") or rows[0][1] != 3000000:
        fail("table %d: first row %r, want hold_big 3000000" % (i, rows[:1]))
last = {r[0].split(" ")[0]: r for r in tables[-1][2]}
small = last.get("hold_small")
if not small:
    fail("no hold_small row")
if small_rule == "exact":
    if small[1] != 1000000:
        fail("hold_small %d live bytes, want 1000000" % small[1])
    churn = last.get("churn")
    if not churn or churn[1] != 0 or churn[2] != 100:
        fail("churn row %r, want 0 live, 100%% temporary" % (churn,))
    if fmt == "json":
        # rates since the previous table: hold_big allocated once, before
        # the first; churn at most every 2 ms (rates printed to 0.1)
        if last["hold_big"][3] != 0 or last["hold_big"][4] != 0:
            fail("hold_big's rates %r, want 0" % (last["hold_big"],))
        if not 20 <= churn[4] <= 600 or abs(churn[3] - 4096 * churn[4]) > 300:
            fail("churn's rates %r, want 20..600 calls/s of 4096 B" % (churn,))
elif not 490000 <= small[1] <= 1510000:
    fail("hold_small estimated at %d, outside 490000..1510000" % small[1])
PY
}

# top_pid ARGS...: the target "prog" started (runs 10 s), then top
# with ARGS on it; its output in $tmp/top.out, .err, status $top_status.
top_pid() {
	start_target prog out ready "$prog" 10
	"$ht" top "$@" "$target" >"$tmp/top.out" 2>"$tmp/top.err"
	top_status=$?
}

# program_runs_on: after the detach the program is there, ends by itself
# with status 0, and its output is exactly its own.
program_runs_on() {
	alive "$target" >/dev/null || fail "the program is gone after the detach"
	finish_target prog 20 || return
	[ "$status" = 0 ] || fail "the program exited $status"
	[ "$(cat "$tmp/prog.out")" = "$(printf 'ready %s\ndone' "$target")" ] ||
		fail "the program's output: $(cat "$tmp/prog.out")"
	[ -s "$tmp/prog.err" ] && fail "the program's stderr: $(cat "$tmp/prog.err")"
}

case $case_name in
exact)
	top_pid --batch --iterations=3 --interval=0.7 --sampling-interval=0
	[ "$top_status" = 0 ] || fail "top exited $top_status: $(cat "$tmp/top.err")"
	check_tables "$tmp/top.out" text 3 exact
	program_runs_on
	;;
json)
	top_pid --format=json --iterations=3 --interval=0.7 --sampling-interval=0
	[ "$top_status" = 0 ] || fail "top exited $top_status: $(cat "$tmp/top.err")"
	check_tables "$tmp/top.out" json 3 exact
	program_runs_on
	;;
sampled)
	top_pid --format=json --iterations=2 --interval=0.7 \
		--sampling-interval=16384 --sampling-seed=7
	[ "$top_status" = 0 ] || fail "top exited $top_status: $(cat "$tmp/top.err")"
	check_tables "$tmp/top.out" json 2 bound
	program_runs_on
	start_target prog2 out ready "$prog" 3
	"$ht" top --iterations=1 --interval=0.5 --sampling-interval=16384 \
		"$target" >"$tmp/top2.out" 2>"$tmp/top2.err" ||
		fail "sampled text: exit $?"
	grep -q "every figure is an estimate" "$tmp/top2.out" ||
		fail "the text table does not say its figures are estimates: $(cat "$tmp/top2.out")"
	finish_target prog2 20
	;;
signal-INT | signal-TERM)
	start_target prog out ready "$prog" 10
	"$ht" top --interval=0.5 --sampling-interval=0 "$target" \
		>"$tmp/top.out" 2>"$tmp/top.err" &
	top=$!
	pids+=("$top")
	for _ in $(seq 100); do
		[ "$(grep -c '^heaptrace top' "$tmp/top.out")" -ge 2 ] && break
		sleep 0.1
	done
	kill -"${case_name#signal-}" "$top"
	wait "$top"
	top_status=$?
	[ "$top_status" = 0 ] || fail "top exited $top_status at SIG${case_name#signal-}: $(cat "$tmp/top.err")"
	[ "$(grep -c '^heaptrace top' "$tmp/top.out")" -ge 2 ] ||
		fail "fewer than 2 tables: $(cat "$tmp/top.out")"
	program_runs_on
	;;
run)
	"$ht" top --iterations=2 --interval=0.7 --sampling-interval=0 \
		-- "$prog" 2 now >"$tmp/top.out" 2>"$tmp/top.err"
	top_status=$?
	[ "$top_status" = 0 ] || fail "top exited $top_status: $(cat "$tmp/top.err")"
	grep -v '^ready \|^done$' "$tmp/top.out" >"$tmp/tables"
	python3 - "$tmp/tables" <<'PY' || fail "tables: $(head -c 3000 "$tmp/top.out")"
import re, sys
blocks = open(sys.argv[1]).read().strip("\n").split("\n\n")
assert len(blocks) == 2, len(blocks)
for b in blocks:
    rows = [l for l in b.splitlines()[4:]]
    m = re.match(r"\s*(\d+)\s.*\s(hold_big) ", rows[0])
    assert m and m.group(1) == "3000000", rows[0]
PY
	grep -q '^ready ' "$tmp/top.out" && grep -qx done "$tmp/top.out" ||
		fail "the program's own output is not there: $(cat "$tmp/top.out")"
	;;
profile)
	# --massif-out-file: the whole watch's profile left at the end, as
	# attach leaves it (hold_big's block in its peak tree, its .sites)
	top_pid --batch --iterations=2 --interval=0.5 --sampling-interval=0 \
		--massif-out-file="$tmp/watch.out"
	[ "$top_status" = 0 ] || fail "top exited $top_status: $(cat "$tmp/top.err")"
	[ -s "$tmp/watch.out.sites" ] || fail "no watch.out.sites"
	"$ht" print "$tmp/watch.out" >"$tmp/print.out" 2>&1 ||
		fail "print refused the watch's profile: $(head -5 "$tmp/print.out")"
	grep -Eq '\(3,000,000B\) .*hold_big' "$tmp/print.out" ||
		fail "hold_big's 3,000,000 B not in the profile's tree"
	program_runs_on
	# without it, nothing is written
	mkdir "$tmp/cwd"
	start_target prog2 out ready "$prog" 3
	(cd "$tmp/cwd" && "$ht" top --batch --iterations=1 --interval=0.3 \
		"$target" >/dev/null 2>&1) || fail "top without a profile: exit $?"
	[ -z "$(ls -A "$tmp/cwd")" ] || fail "files written: $(ls -A "$tmp/cwd")"
	finish_target prog2 20
	;;
errors)
	one_error 2 "heaptrace: top: no process 999999999..." "$ht" top --batch 999999999
	one_error 2 "heaptrace: top: --interval takes seconds..." "$ht" top --interval=abc 1
	one_error 2 "heaptrace: top: --interval takes seconds..." "$ht" top --interval=0 1
	one_error 2 "heaptrace: top: --interval takes seconds..." "$ht" top --interval=-1 1
	one_error 2 "heaptrace: top: --format takes text or json..." "$ht" top --format=xml 1
	one_error 2 "heaptrace: top: --iterations takes..." "$ht" top --iterations=x 1
	one_error 2 "heaptrace: top: missing the PID..." "$ht" top --batch
	;;
*)
	usage "top.sh HEAPTRACE TOPSITES exact|json|sampled|signal-INT|signal-TERM|run|profile|errors"
	;;
esac
pass_or_fail
