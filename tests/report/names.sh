#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Site names on a program without debug info (issue 26): Debian's jq,
# whose code is in libjq with only its exported names. `report` (text and
# JSON) and `diff` name its top sites by jq's functions, never by
# "(below main)", an address or the C library; with --alloc-fn=jv_mem_alloc
# (jq's malloc wrapper) by the callers of that wrapper.
# Usage: names.sh CASE HEAPTRACE; exit 0 pass, 1 fail, 77 skip.
#   report  report's text and JSON of one jq run
#   alloc-fn  the same run with --alloc-fn=jv_mem_alloc
#   diff    diff's text and JSON of two runs, the second twice the work
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 2 ] || usage "names.sh CASE HEAPTRACE"
case_name=$1 ht=$(abspath "$2")
need jq
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
	return 0
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
*)
	echo "names.sh: unknown case $case_name" >&2
	exit 99
	;;
esac
pass_or_fail
