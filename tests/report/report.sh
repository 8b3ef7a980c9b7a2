#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace report` and `heaptrace diff` on the hand-written profiles of
# data/ (their figures are worked out in data/README.md), and on a file
# real Massif writes at test time.
# Usage: report.sh CASE HEAPTRACE SRCDIR TINY_PROG; exit 0 pass, 1 fail,
# 77 skip.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 4 ] || usage "report.sh CASE HEAPTRACE SRCDIR TINY_PROG"
# absolute: the cases run in a directory of their own
case_name=$1 ht=$(abspath "$2") src=$(abspath "$3") tiny=$(abspath "$4")
data=$src/data
scratch

# The profiles are read from copies, by relative names, so that the
# output does not depend on where the source tree is.
cp "$data"/a.massif "$data"/a.massif.sites "$data"/b.massif \
	"$data"/b.massif.sites "$tmp"/ || exit 99
cd "$tmp" || exit 99

# run STATUS ARGS...: heaptrace ARGS exits STATUS; out and err (in $tmp,
# the current directory) keep its standard output and error.
run() {
	expect_status "$1" "$ht" "${@:2}"
}

# expect_error ARGS...: exit 2, nothing on stdout, one "heaptrace: " line
# on stderr.
expect_error() {
	one_error 2 "heaptrace: ..." "$ht" "$@"
}

expect_in() { # FILE TEXT: TEXT is a line of FILE (fixed string)
	grep -qxF -- "$2" "$1" || fail "no line '$2' in $1: $(cat "$1")"
}

json_valid() { # FILE
	python3 -m json.tool "$1" >/dev/null || fail "$1: not valid JSON"
}

case $case_name in
report-text)
	run 0 report a.massif
	diff -u "$data"/a.report.exp out || fail "report text differs"
	[ -s err ] && fail "stderr: $(cat err)"
	;;
report-json)
	run 0 report --format=json a.massif
	json_valid out
	python3 - out <<'EOF' || fail "report JSON figures"
import json, sys
r = json.load(open(sys.argv[1]))
def eq(got, want, what):
    if got != want:
        sys.exit("%s: %r, want %r" % (what, got, want))
p = r["profile"]
eq(p["cmd"], "./prog", "cmd")
eq(p["time_unit"], "B", "time_unit")
eq(p["peak"], {"snapshot": 1, "time": 4000, "heap": 3000}, "peak")
t = r["totals"]
eq(t, {"runtime": 9000, "peak_heap": 3000, "sites": 4, "calls": 123,
       "allocated": 9448, "temporary": 101, "temporary_percent": 82.11,
       "leaked": 1016, "leaked_blocks": 2}, "totals")
s = r["sites"]
eq(len(s), 4, "sites")
for k in ("calls", "allocated", "temporary", "leaked", "leaked_blocks"):
    eq(sum(x[k] for x in s), t[k], "sum of " + k)
eq(sum(x["peak"] for x in s), t["peak_heap"], "sum of peak")
by = {x["stack"][1]["function"]: x for x in s}
ml = by["make_list"]
eq([ml[k] for k in ("id", "calls", "allocated", "peak", "leaked",
                    "temporary")], [2, 20, 2000, 2000, 0, 0], "make_list")
eq(ml["stack"][1], {"function": "make_list", "file": "prog.c", "line": 8,
                    "object": None, "address": "0x109176"}, "frame")
eq(ml["stack"][0]["object"], "/usr/lib/x86_64-linux-gnu/libc.so.6", "obj")
eq(ml["stack"][0]["file"], None, "no file")
eq([by["scratch"][k] for k in ("calls", "temporary")], [100, 100],
   "scratch")
eq(sorted(x["name"] for x in s), ["keep (prog.c:21)", "make_list (prog.c:8)",
   'odd (we"ird\\dir/x.c:3)', "scratch (prog.c:4)"], "site names")
eq([by["keep"][k] for k in ("peak", "leaked", "leaked_blocks")],
   [1000, 1000, 1], "keep")
odd = by["???"]
eq(odd["stack"][0]["function"], "operator new(unsigned long)", "c++ name")
eq(odd["stack"][1]["line"], None, "no line")
eq(odd["stack"][2]["file"], 'we"ird\\dir/x.c', "escaped file")
eq([odd[k] for k in ("calls", "allocated", "leaked", "temporary")],
   [2, 48, 16, 1], "odd")
eq([(x["number"], x["time"], x["heap"], x["extra"], x["kind"])
    for x in r["snapshots"]],
   [(0, 0, 0, 0, "empty"), (1, 4000, 3000, 168, "peak"),
    (2, 9000, 1016, 16, "empty")], "snapshots")
EOF
	;;
report-leakcheck)
	# the same run with a leak check: its summary and each site's kinds
	sed -e '/^totals:/a leak_check: full definite=1000/1 indirect=0/0 possible=16/1 reachable=0/0' \
		-e 's/^site: 3 .*/& definite=1000 indirect=0 possible=0 reachable=0/' \
		-e 's/^site: 4 .*/& definite=0 indirect=0 possible=16 reachable=0/' \
		a.massif.sites >l.massif.sites
	cp a.massif l.massif
	run 0 report l.massif
	expect_in out "leak check (full): definitely lost 1000 bytes in 1 blocks, indirectly lost 0 bytes in 0 blocks, possibly lost 16 bytes in 1 blocks, still reachable 0 bytes in 0 blocks"
	expect_in out "1000 bytes leaked in 1 blocks over 1 calls (definite 1000, indirect 0, possible 0, reachable 0) from keep (prog.c:21)"
	run 0 report --format=json l.massif
	json_valid out
	python3 - out <<'EOF' || fail "report JSON of a leak check"
import json, sys
r = json.load(open(sys.argv[1]))
lc = r["totals"]["leak_check"]
assert lc["mode"] == "full", lc
assert lc["definite"] == {"bytes": 1000, "blocks": 1}, lc
assert lc["possible"] == {"bytes": 16, "blocks": 1}, lc
s = {x["id"]: x for x in r["sites"]}
assert (s[3]["definite"], s[4]["possible"]) == (1000, 16), s
assert "definite" not in s[1], s[1]
EOF
	;;
report-top)
	run 0 report --top=1 a.massif
	n=$(grep -c '^[0-9].* from ' out)
	[ "$n" -eq 4 ] || fail "--top=1: $n entries, want 4 (one a section)"
	run 0 report --top 0 a.massif
	n=$(grep -c '^[0-9].* from ' out)
	[ "$n" -eq 10 ] || fail "--top 0: $n entries, want 10"
	expect_error report --top=x a.massif
	;;
report-output)
	run 0 report a.massif
	mv out stdout.txt
	run 0 report -o o.txt a.massif
	[ -s out ] && fail "-o: wrote to stdout"
	cmp -s o.txt stdout.txt || fail "-o FILE differs from stdout"
	run 0 report --format=json --output=o.json a.massif
	json_valid o.json
	expect_error report -o "$tmp"/no/such/dir/x a.massif
	;;
report-errors)
	expect_error report missing.massif
	grep -q 'missing.massif' err || fail "missing: $(cat err)"
	expect_error report
	expect_error report --bogus a.massif
	expect_error report --format=xml a.massif
	expect_error report a.massif b.massif
	cp a.massif c.massif
	printf 'heaptrace-sites: 1\npeak: snapshot=1 time=x heap=3\n' \
		>c.massif.sites
	expect_error report c.massif
	grep -qF 'c.massif.sites:2: ' err || fail "malformed: $(cat err)"
	printf 'desc: (none)\ncmd: x\ntime_unit: B\nsnapshot=oops\n' >d.massif
	expect_error report d.massif
	grep -qF 'd.massif' err || fail "bad massif: $(cat err)"
	cp a.massif.sites e.massif.sites
	mkdir e.massif
	expect_error report e.massif
	;;
diff-grew)
	run 1 diff a.massif b.massif
	expect_in out "+4000 bytes at peak (2000 -> 6000) in make_list (prog.c:8)"
	expect_in out "1 site changed beyond the threshold (1 grew, 0 shrank); peak heap 3000 -> 7050, allocated 9448 -> 13498"
	grep -q keep out && fail "keep (+50 bytes) is below the threshold"
	run 1 diff b.massif a.massif
	expect_in out "-4000 bytes at peak (6000 -> 2000) in make_list (prog.c:8)"
	;;
diff-same)
	run 0 diff a.massif a.massif
	expect_in out "no site changed beyond the threshold; peak heap 3000 -> 3000, allocated 9448 -> 9448"
	# another run of the same program: other addresses, other IDs
	cp a.massif a2.massif
	sed -e 's/0x1091/0x55555555D1/' -e 's/^site: \([0-9]\)/site: 1\1/' \
		a.massif.sites >a2.massif.sites
	cmp -s a.massif.sites a2.massif.sites && fail "sed changed nothing"
	run 0 diff a.massif a2.massif
	run 0 diff --format=json a.massif a2.massif
	json_valid out
	;;
diff-threshold)
	run 1 diff --threshold=0 --min-bytes=0 a.massif b.massif
	expect_in out "+50 bytes at peak (1000 -> 1050) in keep (prog.c:21)"
	grep -q '^2 sites changed' out || fail "want 2 sites: $(cat out)"
	run 0 diff --threshold=100 a.massif b.massif
	run 0 diff --min-bytes=4000 a.massif b.massif
	run 1 diff --min-bytes=3999 a.massif b.massif
	expect_error diff --threshold=abc a.massif b.massif
	expect_error diff --threshold=101 a.massif b.massif
	;;
diff-json)
	run 1 diff --format=json a.massif b.massif
	json_valid out
	python3 - out <<'EOF' || fail "diff JSON"
import json, sys
r = json.load(open(sys.argv[1]))
def eq(got, want, what):
    if got != want:
        sys.exit("%s: %r, want %r" % (what, got, want))
eq(r["matched_by"], "stack", "matched_by")
eq(r["threshold"], {"percent": 1.0, "min_bytes": 64, "peak": 71,
                    "allocated": 135}, "threshold")
eq(r["changed"], 1, "changed")
c = r["changes"][0]
eq(c["site"], "make_list (prog.c:8)", "site")
eq([f["function"] for f in c["stack"]], ["malloc", "make_list", "main"],
   "stack")
eq(c["a"], {"calls": 20, "allocated": 2000, "peak": 2000, "leaked": 0,
            "temporary": 0}, "a")
eq(c["b"]["peak"], 6000, "b")
eq(c["delta"], {"calls": 40, "allocated": 4000, "peak": 4000, "leaked": 0,
                "temporary": 0}, "delta")
eq((r["a"]["peak_heap"], r["b"]["peak_heap"]), (3000, 7050), "peak heaps")
EOF
	;;
diff-errors)
	expect_error diff a.massif missing.massif
	expect_error diff a.massif
	expect_error diff
	expect_error diff a.massif b.massif a.massif
	expect_error diff --format=xml a.massif b.massif
	printf 'heaptrace-sites: 1\nframe: 0x1 f\tf.c:1\n' >b.massif.sites
	expect_error diff a.massif b.massif
	grep -qF 'b.massif.sites:2: frame: line before any site' err ||
		fail "malformed: $(cat err)"
	;;
massif-real)
	need valgrind
	valgrind --tool=massif --massif-out-file=vg.out "$tiny" \
		>/dev/null 2>&1 || skip "valgrind --tool=massif failed"
	run 0 report vg.out
	grep -q '^per-site statistics missing: no vg.out.sites' out ||
		fail "no missing line: $(cat out)"
	grep -q '^72000 bytes (100.00%) from grow ([^)]*tiny.c:[0-9]*)$' out ||
		fail "peak tree: $(cat out)"
	expect_in out "peak heap memory consumption: 72000 bytes (snapshot $(
		sed -n '/^snapshot=/{s/snapshot=//;h};/heap_tree=peak/{g;p}' \
		vg.out))"
	run 0 report --format=json vg.out
	json_valid out
	python3 - out vg.out <<'EOF' || fail "report JSON of a Massif file"
import json, sys
r = json.load(open(sys.argv[1]))
def eq(got, want, what):
    if got != want:
        sys.exit("%s: %r, want %r" % (what, got, want))
eq(r["sites"], None, "sites")
if "not written by heaptrace" not in r["missing"]:
    sys.exit("missing: %r" % r["missing"])
eq(r["profile"]["peak"]["heap"], 72000, "peak")
eq(r["totals"]["peak_heap"], 72000, "peak_heap")
top = r["peak_tree"][0]
eq((top["label"].split(" (")[0], top["bytes"]), ("grow", 72000), "top")
n = sum(1 for l in open(sys.argv[2]) if l.startswith("snapshot="))
eq(len(r["snapshots"]), n, "snapshots")
eq(sum(1 for s in r["snapshots"] if s["kind"] == "peak"), 1, "one peak")
EOF
	run 0 diff vg.out vg.out
	grep -q 'comparing the top entries of the peak snapshots' out ||
		fail "diff says nothing of labels: $(cat out)"
	run 0 diff --format=json vg.out vg.out
	json_valid out
	;;
*)
	echo "unknown case $case_name" >&2
	exit 99
	;;
esac
pass_or_fail
