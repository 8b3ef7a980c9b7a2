#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Python frames (issue 28) in every view of a profile, without a tracer:
# replay writes the Massif file and the .sites file of python.events (a
# CPython run as heaptrace records it, Python functions as synthetic
# frames among the interpreter's C frames), and each reader is checked.
# Usage: python.sh CASE REPLAY HEAPTRACE SRCDIR; exit 0 pass, 1 fail,
# 77 skip.
#   massif   the tree's lines "0xFFF5...: fn (file.py:line)", which
#            ms_print prints as they are, and heaptrace print as ms_print
#   report   the sites named by their Python function (text, JSON, HTML),
#            and by its caller with --alloc-fn=app.make_row at read time
#   diff     sites of two runs matched and named by Python function
#   pprof    go tool pprof shows every Python function by its name, file
#            and line ("<module>" included)
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 4 ] || usage "python.sh CASE REPLAY HEAPTRACE SRCDIR"
case_name=$1 replay=$(abspath "$2") ht=$(abspath "$3") src=$(abspath "$4")
fails=0
scratch --keep
cd "$tmp" || exit 99

# record EVENTS OUT [ROWS]: the profile of EVENTS, make_row called ROWS
# times (100 as written).
record() {
	# an include is copied beside the copy (the replay's include takes
	# one word: a path with a blank would not do)
	sed -n 's|^include \(\.\./.*\)|\1|p' "$1" | while read -r inc; do
		cp "$src/$inc" . || harness "include $inc"
	done
	sed "s/^repeat 100 i/repeat ${3:-100} i/;
	     s|^include \.\./.*/|include |" "$1" >"$2.events" ||
		harness "sed $1"
	REPLAY_SITES=1 "$replay" --time-unit=B --detailed-freq=1 "$2.events" "$2" ||
		harness "replay $1"
}

# has FILE TEXT: FILE holds the line TEXT (fixed string).
has() {
	grep -qxF -- "$2" "$1" || fail "$1: no line '$2'"
}

record "$src/python.events" m
case $case_name in
massif)
	grep -q '^ *n[0-9]*: [0-9]* 0xFFF5000000000000: app.make_row (app.py:12)$' m ||
		fail "massif: no tree line for app.make_row"
	grep -q '^ *n[0-9]*: [0-9]* 0xFFF5000000000002: <module> (app.py:20)$' m ||
		fail "massif: no tree line for <module>"
	need ms_print
	ms_print m >ms 2>&1 || fail "ms_print: $(head -5 ms)"
	grep -q -- '->.* 0xFFF5000000000000: app.make_row (app.py:12)$' ms ||
		fail "ms_print shows no app.make_row"
	grep -q -- '->.* 0xFFF5000000000003: <module> (app.py:21)$' ms ||
		fail "ms_print shows no <module> at line 21"
	"$ht" print m >hp 2>&1 || fail "heaptrace print: $(head -5 hp)"
	cmp -s hp ms || fail "heaptrace print differs from ms_print" ;;
report)
	expect_status 0 "$ht" report m && cp "$tmp/out" r
	has r "100 calls to allocation functions with 100800 bytes peak consumption from app.make_row (app.py:12)"
	has r "1 calls to allocation functions with 40000 bytes peak consumption from <module> (app.py:21)"
	expect_status 0 "$ht" report --alloc-fn=app.make_row m && cp "$tmp/out" ra
	has ra "100 calls to allocation functions with 100800 bytes peak consumption from <listcomp> (app.py:20)"
	expect_status 0 "$ht" report --format=json m && cp "$tmp/out" j
	grep -qF '"name": "app.make_row (app.py:12)"' j ||
		fail "JSON: no site named app.make_row"
	grep -qF '{"function": "<module>", "file": "app.py", "line": 20' j ||
		fail "JSON: no <module> frame with its file and line"
	expect_status 0 "$ht" report --format=html -o h.html m
	grep -qF 'app.make_row (app.py:12)' h.html ||
		fail "HTML: no app.make_row (app.py:12)" ;;
diff)
	record "$src/python.events" b 150
	expect_status 1 "$ht" diff m b && cp "$tmp/out" d
	has d "+50400 bytes at peak (100800 -> 151200) in app.make_row (app.py:12)" ;;
pprof)
	need go
	expect_status 0 "$ht" report --format=pprof -o p.pb.gz m
	go tool pprof -traces p.pb.gz >t 2>&1 || fail "go tool pprof: $(head -3 t)"
	for fn in app.make_row '<listcomp>' '<module>'; do
		grep -qE "^ +$fn\$" t || fail "pprof -traces: no $fn"
	done
	go tool pprof -raw p.pb.gz >raw 2>&1 || fail "go tool pprof -raw"
	for l in 'app.make_row app.py:12' '<listcomp> app.py:20' \
		 '<module> app.py:20' '<module> app.py:21'; do
		grep -qF " $l " raw || fail "pprof -raw: no location '$l'"
	done ;;
*) usage "python.sh CASE REPLAY HEAPTRACE SRCDIR" ;;
esac
for f in r t ms; do [ "$fails" -eq 0 ] || [ ! -f "$f" ] || show "$f"; done
pass_or_fail
