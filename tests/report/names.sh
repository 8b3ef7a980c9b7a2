#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Site names on a program without debug info (issue 26): Debian's jq,
# whose code is in libjq with only its exported names. `report` (text and
# JSON) and `diff` name its top sites by jq's functions, never by
# "(below main)", an address or the C library; with --alloc-fn=jv_mem_alloc
# (jq's malloc wrapper) by the callers of that wrapper; without it too, as
# jv_mem_alloc and the like are found in the profile's stacks. And PROG (progs/
# wrappers.c, no debug info): its sites are named by the callers of its
# xmalloc, found in the stacks, or given to report/diff at read time.
# Usage: names.sh CASE HEAPTRACE PROG; exit 0 pass, 1 fail, 77 skip.
#   report  report's text and JSON of one jq run
#   alloc-fn  the same run with --alloc-fn=jv_mem_alloc
#   diff    diff's text and JSON of two runs, the second twice the work
#   wrapper       report's text and JSON of PROG: its xmalloc found, the
#                 sites named by load, nodes, names; read_config kept
#   wrapper-read  --find-wrappers=no names xmalloc; --alloc-fn=xmalloc
#                 given to report then names the callers again
#   wrapper-diff  diff of PROG 10000 and PROG 20000: changes by callers
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 3 ] || usage "names.sh CASE HEAPTRACE PROG"
case_name=$1 ht=$(abspath "$2") prog=$(abspath "$3")
case $case_name in
wrapper*)
	# what the case is about: symbols, no debug info
	readelf -S "$prog" | grep -q '\.debug_info' &&
		{ echo "$prog has debug info"; exit 99; }
	nm "$prog" | grep -qw xmalloc || { echo "$prog: no xmalloc"; exit 99; } ;;
*) need jq ;;
esac
scratch
cd "$tmp" || exit 99

# profile NAME N [OPTION...]: NAME, the profile of jq building a list of N
# objects.
profile() {
	local name=$1 n=$2
	shift 2
	"$ht" run -q "$@" --massif-out-file="$name" -- jq -n \
		"[range($n)] | map({a:.}) | length" >"$name.stdout" 2>err ||
		fail "heaptrace run jq: $(cat err)"
	[ "$(cat "$name.stdout")" = "$n" ] || fail "jq printed $(cat "$name.stdout")"
	[ -f "$name.sites" ] || fail "no $name.sites"
}

# A jq function: a name, then the place of jq's code (libjq or jq, or a
# file:line where jq has debug info), not libc's.
JQ_NAME='^[A-Za-z_][A-Za-z0-9_]* \((in [^)]*/(libjq[^/)]*|jq)|[^)]*:[0-9]+)\)$'

# jq_named FILE WHAT: every line of FILE names a jq function.
jq_named() {
	[ -s "$1" ] || fail "$2: no site names"
	grep -vE "$JQ_NAME" "$1" >bad && fail "$2: not jq functions: $(head -3 bad)"
	grep -E 'below main|libc' "$1" >bad && fail "$2: $(head -3 bad)"
	# jq's wrappers are found in the stacks: their callers name the sites
	grep -E '^jv_mem_' "$1" >bad && fail "$2: a wrapper: $(head -3 bad)"
	return 0
}

# prog_profile NAME N: NAME, the profile of PROG N.
prog_profile() {
	"$ht" run -q --massif-out-file="$1" -- "$prog" "$2" >"$1.stdout" \
		2>err || fail "heaptrace run $prog: $(cat err)"
	grep -q "^$2 " "$1.stdout" || fail "$prog printed $(cat "$1.stdout")"
}

# peak_names FILE: the names of report text FILE's peak sites, one a line.
peak_names() {
	sed -n '/^PEAK MEMORY CONSUMERS/,/^MOST TEMPORARY/{/^[0-9].* from /s/.* from //p}' "$1"
}

# prog_named NAMES...: the lines "NAME (in PROG)".
prog_named() {
	local n
	for n in "$@"; do
		printf '%s (in %s)\n' "$n" "$prog"
	done
}

# top_json FILE: the names of report JSON FILE's 3 largest sites at peak.
top_json() {
	python3 - "$1" <<'PYEOF' || fail "report JSON"
import json, sys
sites = json.load(open(sys.argv[1]))["sites"]
sites.sort(key=lambda s: (-s["peak"], s["id"]))
for s in sites[:3]:
    print(s["name"])
PYEOF
}

case $case_name in
report)
	profile j 100000
	"$ht" report --top=3 j >out 2>err || fail "report: $(cat err)"
	sed -n '/^PEAK MEMORY CONSUMERS/,/^MOST TEMPORARY/{/^[0-9].* from /s/.* from //p}' \
		out >names
	[ "$(wc -l <names)" -eq 3 ] || fail "want 3 peak sites: $(cat out)"
	jq_named names "report's peak sites"
	"$ht" report --format=json j >json 2>err || fail "report JSON: $(cat err)"
	top_json json >jnames
	jq_named jnames "report JSON's peak sites"
	cmp -s names jnames || fail "text and JSON differ: $(cat names jnames)"
	;;
alloc-fn)
	profile j 100000 --alloc-fn=jv_mem_alloc
	"$ht" report --format=json j >json 2>err || fail "report JSON: $(cat err)"
	top_json json >jnames
	jq_named jnames "report JSON's peak sites"
	grep -n '^jv_mem_alloc ' jnames &&
		fail "jv_mem_alloc names a site though it is an --alloc-fn"
	# the 100,000 objects: one site holds 392 bytes each at the peak
	python3 - json <<'PYEOF' || fail "the objects' site"
import json, sys
sites = json.load(open(sys.argv[1]))["sites"]
top = max(sites, key=lambda s: s["peak"])
assert top["calls"] >= 100000, top
fns = [f["function"] for f in top["stack"]]
assert top["name"].split(" ")[0] in fns[fns.index("jv_mem_alloc") + 1:], (top["name"], fns)
PYEOF
	;;
diff)
	profile a 50000
	profile b 100000
	"$ht" diff a b >out 2>err
	[ $? -eq 1 ] || fail "diff: want exit 1 (changed): $(cat err)"
	grep -E '^\+[0-9]+ bytes at peak ' out | sed 's/.*) in //' >names
	jq_named names "diff's changes"
	"$ht" diff --format=json a b >json 2>err
	python3 - json <<'PYEOF' >jnames || fail "diff JSON"
import json, sys
for c in json.load(open(sys.argv[1]))["changes"]:
    print(c["site"])
PYEOF
	jq_named jnames "diff JSON's changes"
	cmp -s names jnames || fail "text and JSON differ: $(cat names jnames)"
	;;
wrapper)
	prog_profile p 20000
	"$ht" report --top=3 p >out 2>err || fail "report: $(cat err)"
	peak_names out >names
	prog_named load nodes names >want
	cmp -s names want || fail "peak sites: $(cat names)"
	grep -qx 'site names: the callers of the allocation wrappers xmalloc (found in the stacks; --find-wrappers=no names them)' out ||
		fail "report does not say xmalloc was passed over: $(head -5 out)"
	"$ht" report --format=json p >json 2>err || fail "report JSON: $(cat err)"
	top_json json >jnames
	cmp -s jnames want || fail "JSON's peak sites: $(cat jnames)"
	python3 - json "$prog" <<'PYEOF' || fail "report JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["wrappers"] == ["xmalloc"], d["wrappers"]
names = {s["name"].split(" ")[0] for s in d["sites"]}
# the direct caller of malloc from one place is the site itself
assert "read_config" in names and "scratch" in names, names
assert "xmalloc" not in names, names
for s in d["sites"]:
    fns = [f["function"] for f in s["stack"]]
    if "xmalloc" in fns:
        # the full stack is kept, the wrapper in it
        assert s["name"].split(" ")[0] == fns[fns.index("xmalloc") + 1], (s["name"], fns)
PYEOF
	;;
wrapper-read)
	prog_profile p 20000
	"$ht" report --top=3 --find-wrappers=no p >out 2>err ||
		fail "report --find-wrappers=no: $(cat err)"
	peak_names out >names
	prog_named xmalloc xmalloc xmalloc >want
	cmp -s names want || fail "--find-wrappers=no: $(cat names)"
	grep -q '^site names' out && fail "--find-wrappers=no still says: $(grep '^site names' out)"
	"$ht" report --top=3 --find-wrappers=no --alloc-fn=xmalloc p >out \
		2>err || fail "report --alloc-fn: $(cat err)"
	peak_names out >names
	prog_named load nodes names >want
	cmp -s names want || fail "--alloc-fn=xmalloc: $(cat names)"
	"$ht" report --format=json --find-wrappers=no --alloc-fn xmalloc p \
		>json 2>err || fail "report JSON --alloc-fn: $(cat err)"
	top_json json >jnames
	cmp -s jnames want || fail "JSON --alloc-fn xmalloc: $(cat jnames)"
	for bad in --find-wrappers=maybe --alloc-fn= --alloc-fn; do
		"$ht" report $bad p >/dev/null 2>err
		[ $? -eq 2 ] || fail "report $bad: want exit 2"
		[ -s err ] || fail "report $bad: no reason given"
	done
	;;
wrapper-diff)
	prog_profile a 10000
	prog_profile b 20000
	"$ht" diff a b >out 2>err
	[ $? -eq 1 ] || fail "diff: want exit 1 (changed): $(cat err)"
	grep -E '^\+[0-9]+ bytes at peak ' out | sed 's/.*) in //' >names
	prog_named load nodes names >want
	cmp -s names want || fail "diff's changes: $(cat names) ($(cat out))"
	"$ht" diff --find-wrappers=no a b >out 2>err
	grep -E '^\+[0-9]+ bytes at peak ' out | sed 's/.*) in //' | sort -u >names
	prog_named xmalloc >want
	cmp -s names want || fail "diff --find-wrappers=no: $(cat names)"
	;;
*)
	echo "names.sh: unknown case $case_name" >&2
	exit 99
	;;
esac
pass_or_fail
