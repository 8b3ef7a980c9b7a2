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

# peak_field FILE FIELD: FIELD (number, heap, extra, stacks) of the peak
# snapshot (heap_tree=peak) of the Massif file FILE.
peak_field() {
	awk -v f="$2" -F= '/^snapshot=/ { v["number"] = $2 }
		/^mem_heap_B=/ { v["heap"] = $2 }
		/^mem_heap_extra_B=/ { v["extra"] = $2 }
		/^mem_stacks_B=/ { v["stacks"] = $2 }
		/^heap_tree=peak/ { print v[f]; exit }' "$1"
}

# map_line: the line of map_pages's mmap call in progs/pages.c.
map_line() {
	grep -n 'char \*p = mmap(' "$src/progs/pages.c" | cut -d: -f1
}

# run_pages FILE N: heaptrace run --pages-as-heap=yes of the program
# mapping N pages, into FILE.
run_pages() {
	"$ht" run -q --pages-as-heap=yes --massif-out-file="$1" "$tiny" "$2" \
		>/dev/null 2>err || fail "heaptrace run --pages-as-heap: $(cat err)"
}

# pages_report FILE N: report's text and JSON of the pages-as-heap
# profile FILE of the program mapping N pages.
pages_report() {
	local peak n
	peak=$(peak_field "$1" heap) n=$(peak_field "$1" number)
	[ "${peak:-0}" -ge $(($2 * 4096 + 200000)) ] ||
		fail "$1: peak $peak below the pages mapped"
	run 0 report "$1"
	expect_in out "figures: pages mapped (--pages-as-heap): the bytes of the pages the program mapped (mmap, mremap, brk), not heap blocks"
	expect_in out "peak pages mapped (--pages-as-heap): $peak bytes (snapshot $n)"
	expect_in out "$(($2 * 4096)) bytes ($(awk -v a=$(($2 * 4096)) \
		-v b="$peak" 'BEGIN { printf "%.2f", 100 * a / b }')%) from map_pages (pages.c:$(map_line))"
	# the block of its own mapping: under malloc, not a page-call wrapper
	grep -qE '^2[0-9]{5} bytes .* from (sysmalloc|_int_malloc|malloc)' out ||
		fail "$1: no entry for the malloc'd block: $(sed -n '/^PEAK PAGES/,/^$/p' out)"
	grep -qE 'from (__)?(mmap|mmap64|brk) ' out &&
		fail "$1: a page-call wrapper is named"
	grep -q '^PEAK PAGES MAPPED (--pages-as-heap) ' out ||
		fail "$1: tree heading"
	run 0 report --format=json "$1"
	json_valid out
	python3 - out "$peak" "$n" "$2" <<'EOF' || fail "$1: report JSON of pages"
import json, sys
r = json.load(open(sys.argv[1]))
peak, n, pages = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
p = r["profile"]
assert p["measure"] == "pages", p
assert p["peak"]["heap"] == peak and p["peak"]["snapshot"] == n, p["peak"]
assert r["totals"]["peak_heap"] == peak, r["totals"]
assert r["sites"] is None, r["sites"]
assert "--pages-as-heap" in r["missing"] or \
    "not written by heaptrace" in r["missing"], r["missing"]
m = [e for e in r["peak_tree"] if e["label"].startswith("map_pages ")]
assert len(m) == 1 and m[0]["bytes"] == pages * 4096, r["peak_tree"]
b = [e["bytes"] for e in r["peak_tree"]]
assert b == sorted(b, reverse=True), b
EOF
}

# stacks_report FILE: report's figures of the --stacks=yes profile FILE.
stacks_report() {
	local h e s n
	h=$(peak_field "$1" heap) e=$(peak_field "$1" extra)
	s=$(peak_field "$1" stacks) n=$(peak_field "$1" number)
	[ "${s:-0}" -gt 0 ] || fail "$1: no stack bytes at the peak"
	[ "${h:-0}" -ge 200000 ] || fail "$1: peak heap $h"
	run 0 report "$1"
	expect_in out "peak memory with stacks (--stacks=yes): heap $h + extra $e + stacks $s = $((h + e + s)) bytes (snapshot $n)"
	grep -q '^figures: heap and stacks (--stacks=yes)' out ||
		fail "$1: no figures line"
	run 0 report --format=json "$1"
	json_valid out
	python3 - out "$h" "$e" "$s" <<'EOF' || fail "$1: report JSON of stacks"
import json, sys
r = json.load(open(sys.argv[1]))
h, e, s = (int(x) for x in sys.argv[2:5])
p = r["profile"]
assert p["stacks"] is True and p["measure"] == "heap", p
assert (p["peak"]["heap"], p["peak"]["stacks"], p["peak"]["total"]) == \
    (h, s, h + e + s), p["peak"]
EOF
	have go || return 0
	run 0 report --format=pprof -o s.pb.gz "$1"
	go tool pprof -top -unit=B -nodefraction=0 -sample_index=inuse_space \
		s.pb.gz >top 2>&1 || fail "go tool pprof: $(cat top)"
	grep -q "of $((h + s))B total" top ||
		fail "$1: pprof total, want heap + stacks $((h + s)): $(grep total top)"
	grep -qE "^ +${s}B .*\(stacks\)$" top ||
		fail "$1: no (stacks) of $s bytes: $(grep stacks top)"
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
pages-run)
	# 300 pages by one mmap in map_pages, a 200000-byte block of its own
	# mapping: at the peak both, and the program's start-up mappings
	run_pages p.out 300
	pages_report p.out 300
	;;
pages-attach)
	# attached to a program that releases nothing: no peak snapshot, its
	# .sites says "snapshot=-1 heap=0", once read as a peak of 0 bytes;
	# the peak is the largest snapshot, detailed or not
	start_target t out ready "$tiny" 300 wait keep
	"$ht" attach -q --pages-as-heap=yes --massif-out-file=p.out \
		"$target" 2>att.err 9>&- &
	h=$!
	sleep 1
	echo go >&9
	finish_target t
	wait $h || fail "heaptrace attach: $(tail -n 3 att.err)"
	grep -q '^peak: snapshot=-1 ' p.out.sites ||
		fail "attach wrote a peak snapshot: the case tests nothing: $(head -5 p.out.sites)"
	run 0 report p.out
	largest=$(awk -F= '/^snapshot=/ { n = $2 }
		/^mem_heap_B=/ { if ($2 + 0 > m + 0) { m = $2; at = n } }
		END { print m + 0, at }' p.out)
	[ "${largest% *}" -ge $((300 * 4096 + 200000)) ] ||
		fail "attach: largest snapshot ${largest% *} bytes"
	expect_in out "peak pages mapped (--pages-as-heap): ${largest% *} bytes (snapshot ${largest#* })"
	run 0 report --format=json p.out
	python3 - out "${largest% *}" <<'EOF' || fail "attach: JSON peak"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["totals"]["peak_heap"] == int(sys.argv[2]), r["totals"]
assert r["profile"]["peak"]["heap"] == int(sys.argv[2]), r["profile"]
EOF
	;;
pages-keep)
	# a program that ends at its largest: Massif's peak snapshot is
	# before it, and report says so
	"$ht" run -q --pages-as-heap=yes --massif-out-file=k.out "$tiny" 300 \
		keep >/dev/null 2>err || fail "heaptrace run: $(cat err)"
	largest=$(awk -F= '/^snapshot=/ { n = $2 }
		/^mem_heap_B=/ { if ($2 + 0 > m + 0) { m = $2; at = n } }
		END { print m + 0, at }' k.out)
	[ "${largest% *}" -gt "$(peak_field k.out heap)" ] ||
		fail "the largest snapshot is the peak: the case tests nothing"
	run 0 report k.out
	expect_in out "peak pages mapped (--pages-as-heap): $(peak_field k.out heap) bytes (snapshot $(peak_field k.out number))"
	expect_in out "largest snapshot: ${largest% *} bytes of pages (snapshot ${largest#* }), more than at the peak snapshot: Massif takes its peak only when memory is released"
	;;
pages-diff)
	run_pages a.out 300
	run_pages b.out 500
	run 1 diff a.out b.out
	expect_in out "+$((200 * 4096)) bytes at peak ($((300 * 4096)) -> $((500 * 4096))) in map_pages (pages.c:$(map_line))"
	expect_in out "a: figures are pages mapped (--pages-as-heap)"
	grep -q "; peak pages mapped $(peak_field a.out heap) -> $(peak_field b.out heap)$" out ||
		fail "diff summary: $(tail -1 out)"
	grep -q 'has none): a.out is a --pages-as-heap profile' out ||
		fail "diff header: $(head -2 out)"
	run 1 diff --format=json a.out b.out
	json_valid out
	python3 - out <<'EOF' || fail "diff JSON of pages"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["a"]["measure"] == r["b"]["measure"] == "pages", r["a"]
assert r["matched_by"] == "peak_tree_label", r["matched_by"]
c = [x for x in r["changes"] if x["label"].startswith("map_pages ")]
assert len(c) == 1 and c[0]["delta"]["peak"] == 200 * 4096, r["changes"]
EOF
	# a heap profile against a pages one: said not to compare
	"$ht" run -q --massif-out-file=h.out "$tiny" 300 >/dev/null 2>err ||
		fail "heaptrace run: $(cat err)"
	run 1 diff a.out h.out
	expect_in out "one profile counts pages mapped, the other heap blocks: their figures do not compare"
	grep -q '^b: figures' out && fail "b said to be pages: $(head -4 out)"
	;;
pages-pprof)
	need go
	run_pages p.out 300
	run 0 report --format=pprof -o p.pb.gz p.out
	go tool pprof -top -unit=B -nodefraction=0 p.pb.gz >top 2>&1 ||
		fail "go tool pprof: $(cat top)"
	grep -q '^Type: mapped_space$' top || fail "type: $(head -5 top)"
	peak=$(peak_field p.out heap)
	grep -q "accounting for ${peak}B, 100% of ${peak}B total" top ||
		fail "pprof total, want $peak: $(grep total top)"
	grep -qE "^ +0 +0% +[0-9.]+% +$((300 * 4096))B +[0-9.]+% +map_pages$" top ||
		fail "map_pages not $((300 * 4096)) bytes: $(grep map_pages top)"
	go tool pprof -raw p.pb.gz 2>/dev/null | grep -q 'not heap blocks' ||
		fail "no comment saying the figures are pages"
	;;
massif-pages)
	need valgrind
	valgrind --tool=massif --pages-as-heap=yes --massif-out-file=v.out \
		"$tiny" 300 >/dev/null 2>&1 || skip "valgrind --tool=massif failed"
	pages_report v.out 300
	run 0 report v.out
	grep -q '^per-site statistics missing: no v.out.sites' out ||
		fail "missing line: $(grep missing out)"
	;;
massif-stacks)
	need valgrind
	valgrind --tool=massif --stacks=yes --massif-out-file=v.out \
		"$tiny" 300 >/dev/null 2>&1 || skip "valgrind --tool=massif failed"
	stacks_report v.out
	;;
stacks-run)
	"$ht" run -q --stacks=yes --massif-out-file=s.out "$tiny" 300 \
		>/dev/null 2>err || fail "heaptrace run --stacks=yes: $(cat err)"
	stacks_report s.out
	;;
*)
	echo "unknown case $case_name" >&2
	exit 99
	;;
esac
pass_or_fail
