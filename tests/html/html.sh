#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace report --format=html` (issue 16): the page is written, holds
# no network reference, and renders in headless Chromium without a script
# error, with its chart (one mark per snapshot), the peak's tree and
# flame graph, and the site tables (check_dom.py checks the dumped DOM).
# Usage: html.sh CASE HEAPTRACE SRCDIR PROG; exit 0 pass, 1 fail, 77 skip.
#   heaptrace  a profile `heaptrace run --leak-check=full` writes of PROG
#   massif     one real Massif writes of PROG (skip without valgrind)
#   pages      heaptrace's, --pages-as-heap=yes
#   jq         Debian's jq (no debug info): the table's top site names
#              are jq's functions, report's, past its wrappers
#              (jv_mem_alloc), which the page names above the table
#   large      gen_large.py's: 500 snapshots, 3000 sites; its size, drawn
#              and clicked through (its times: bench/html.sh, not here)
#   stress     tests/print/gen_massif.py's odd files (zero heaps, times
#              going back, '%' and '#' in labels, no peak): no error
#   offline    no URL nor external resource in the page; a label holding
#              "</script>" and bytes that are not UTF-8 (no browser needed)
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 4 ] || usage "html.sh CASE HEAPTRACE SRCDIR PROG"
case_name=$1 ht=$(abspath "$2") src=$(abspath "$3") prog=$(abspath "$4")
scratch
cd "$tmp" || exit 99

# The largest page the large case may give. How long it takes to draw is
# a speed figure, measured by bench/html.sh: a time limit here failed
# under ASan on a loaded machine, a test that measured the machine.
LARGE_MAX_BYTES=4000000

browser=
for b in chromium chromium-browser google-chrome google-chrome-stable; do
	if have "$b"; then
		browser=$b
		break
	fi
done
need_browser() {
	[ -n "$browser" ] || skip "no Chromium found (apt-get install" \
		"chromium) to render the HTML report"
}

# report PROFILE: PROFILE.html, or fail.
report() {
	"$ht" report --format=html -o "$1.html" "$1" 2>err ||
		fail "heaptrace report --format=html $1: $(cat err)"
	[ -s err ] && fail "report said: $(cat err)"
	offline "$1.html"
}

# offline PAGE: nothing in PAGE that a browser would fetch.
offline() {
	grep -n -i -o -E '.{0,60}(https?:|src=|href=|url\(|@import).{0,60}' \
		"$1" >refs
	[ -s refs ] &&
		fail "$1 refers to the network or another file: $(head -5 refs)"
	return 0
}

# render PAGE PROFILE CHECK_FLAGS...: Chromium's DOM of PAGE, checked;
# Chromium's console must hold no error.
render() {
	page=$1 profile=$2
	shift 2
	start=$(date +%s.%N)
	timeout 60 "$browser" --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$tmp/chromium" \
		--enable-logging=stderr --v=0 --dump-dom "$page" \
		>"$page.dom" 2>"$page.log" ||
		fail "$browser on $page: exit $? ($(tail -3 "$page.log"))"
	end=$(date +%s.%N)
	seconds=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
	echo "$page: $(wc -c <"$page") bytes, Chromium ran ${seconds}s"
	if grep -E 'CONSOLE.*(Uncaught|Error|error)' "$page.log" >console; then
		fail "console errors on $page: $(head -5 console)"
	fi
	python3 "$src/check_dom.py" "$page.dom" "$profile" "$@" ||
		fail "$page: the drawn page"
}

# interact PAGE: PAGE with interact.html's clicks run after drawing it.
interact() {
	python3 - "$1" "$src/interact.html" <<'PYEOF' || exit 99
import sys
page = open(sys.argv[1], encoding="utf-8").read()
at = page.rindex("</body>")
open(sys.argv[1] + ".i.html", "w", encoding="utf-8").write(
    page[:at] + open(sys.argv[2]).read() + page[at:])
PYEOF
	timeout 60 "$browser" --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$tmp/chromium" \
		--dump-dom "$1.i.html" >"$1.i.dom" 2>/dev/null
	grep -q 'data-interact="ok"' "$1.i.dom" ||
		fail "clicking on $1: $(grep -o 'data-interact="[^"]*"' "$1.i.dom")"
}

case $case_name in
run)
	# --html=yes: the page beside the profile is report's, byte for byte
	"$ht" run -q --html=yes --time-unit=B --massif-out-file=m.%p \
		"$prog" >/dev/null 2>err || fail "heaptrace run --html=yes: $(cat err)"
	profile=$(ls m.* | grep -v '\.sites$\|\.html$' | head -1)
	[ -f "$profile.html" ] || fail "no $profile.html beside $profile"
	"$ht" report --format=html -o again.html "$PWD/$profile" 2>err ||
		fail "heaptrace report --format=html: $(cat err)"
	cmp -s "$profile.html" again.html ||
		fail "--html=yes's page is not report --format=html's"
	offline "$profile.html"
	"$ht" run -q --html=yes --massif-out-file=/dev/null "$prog" \
		>/dev/null 2>err || fail "--html=yes to /dev/null: $(cat err)"
	[ -s err ] && fail "--html=yes to /dev/null said: $(cat err)"
	[ -e /dev/null.html ] && fail "/dev/null.html written"
	;;
heaptrace)
	need_browser
	"$ht" run -q --time-unit=B --leak-check=full --massif-out-file=m.%p \
		"$prog" >/dev/null 2>err || fail "heaptrace run: $(cat err)"
	profile=$(ls m.* | grep -v '\.sites$' | head -1)
	[ -f "$profile.sites" ] || fail "no .sites beside $profile"
	report "$profile"
	render "$profile.html" "$profile" --sites --leak
	interact "$profile.html"
	;;
jq)
	# a program without debug info: the table names its top sites by
	# jq's functions (libjq's exported names), as report does
	need_browser
	need jq
	"$ht" run -q --massif-out-file=j -- jq -n \
		'[range(100000)] | map({a:.}) | length' >/dev/null 2>err ||
		fail "heaptrace run jq: $(cat err)"
	report j
	render j.html j --sites
	interact j.html
	"$ht" report --format=json j >j.json 2>err || fail "report: $(cat err)"
	python3 - j.html.dom j.json <<'PYEOF' || fail "the site table's names"
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
shown = [html.unescape(m) for m in re.findall(
    r'<tr class="row" data-n="\d+"><td class="site">([^<]*)</td>', dom)][:3]
sites = json.load(open(sys.argv[2]))["sites"]
sites.sort(key=lambda s: (-s["peak"], s["id"]))
want = [s["name"] for s in sites[:3]]
assert shown == want, (shown, want)
jq_fn = re.compile(r'^[A-Za-z_][A-Za-z0-9_]* \(in [^)]*/(libjq[^/)]*|jq)\)$')
for name in shown:
    assert jq_fn.match(name) and "below main" not in name, name
    assert not name.startswith("jv_mem_"), name
note = re.search(r'<p class="note" id="wrappers">([^<]*)</p>', dom)
assert note and "jv_mem_alloc" in note.group(1), "no note of the wrappers"
print("top sites in the table:", shown)
PYEOF
	;;
massif)
	need_browser
	need valgrind
	valgrind -q --tool=massif --massif-out-file=vg.out "$prog" \
		>/dev/null 2>err || fail "valgrind: $(cat err)"
	report vg.out
	render vg.out.html vg.out --no-sites
	;;
pages)
	need_browser
	"$ht" run -q --pages-as-heap=yes --time-unit=B \
		--massif-out-file=m.%p "$prog" >/dev/null 2>err ||
		fail "heaptrace run: $(cat err)"
	profile=$(ls m.* | grep -v '\.sites$' | head -1)
	report "$profile"
	render "$profile.html" "$profile" --pages
	;;
nopeak)
	# a profile without a peak snapshot, as attach writes one: the peak
	# shown is the largest snapshot, the tree the largest detailed one's
	need_browser
	"$ht" run -q --pages-as-heap=yes --time-unit=B --massif-out-file=m \
		"$prog" >/dev/null 2>err || fail "heaptrace run: $(cat err)"
	sed 's/^heap_tree=peak$/heap_tree=detailed/' m >n
	sed 's/^peak: .*/peak: snapshot=-1 time=0 heap=0/' m.sites >n.sites
	grep -q heap_tree=peak n && fail "sed changed nothing"
	awk -F= '/^mem_heap_B=/ { h = $2 } /^heap_tree=/ {
		if (h + 0 > m + 0) { m = h; k = $2 } } END { print k }' n |
		grep -qx empty ||
		fail "the largest snapshot has a tree: the case tests nothing"
	report n
	render n.html n --pages --largest
	;;
stacks)
	need_browser
	"$ht" run -q --stacks=yes --time-unit=B --massif-out-file=m.%p \
		"$prog" >/dev/null 2>err || fail "heaptrace run: $(cat err)"
	profile=$(ls m.* | grep -v '\.sites$' | head -1)
	report "$profile"
	render "$profile.html" "$profile" --sites --stacks
	;;
large)
	need_browser
	python3 "$src/gen_large.py" big.massif 500 3000 || exit 99
	report big.massif
	size=$(wc -c <big.massif.html)
	[ "$size" -le "$LARGE_MAX_BYTES" ] ||
		fail "the page is $size bytes, more than $LARGE_MAX_BYTES"
	render big.massif.html big.massif --sites --leak
	interact big.massif.html
	grep -q 'data-render-ms="[0-9][0-9]*"' big.massif.html.dom ||
		fail "the page did not say how long it took to draw"
	grep -q 'Showing [0-9,]* of 3,000 sites' big.massif.html.dom ||
		fail "the page does not say the table is cut"
	;;
stress)
	need_browser
	mkdir gen && python3 "$src/../print/gen_massif.py" gen 8 7 >/dev/null ||
		exit 99
	for f in gen/*.out; do
		report "$f"
		render "$f.html" "$f" --no-sites
	done
	;;
offline)
	# a Massif file whose labels would break out of the data block
	printf '%s\n' 'desc: (none)' 'cmd: ./x </script><b>' 'time_unit: i' \
		'#-----------' 'snapshot=0' '#-----------' 'time=0' \
		'mem_heap_B=100' 'mem_heap_extra_B=0' 'mem_stacks_B=0' \
		'heap_tree=peak' \
		'n2: 100 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.' \
		' n0: 60 0x4005F4: evil</script><script>window.x=1</script> (t.c:6)' \
		>x.massif
	# (a byte that is not UTF-8, below the top entries check_dom.py reads)
	printf ' n1: 40 0x4005F8: good (t.c:7)\n  n0: 40 0x4005FC: bad\377name (t.c:8)\n' >>x.massif
	report x.massif
	n=$(grep -c '</script>' x.massif.html)
	[ "$n" -eq 2 ] || fail "$n </script> in the page, want 2 (data, code)"
	grep -q '<script>window.x' x.massif.html && fail "label not escaped"
	python3 - x.massif.html <<'PYEOF' || fail "the data block is not JSON"
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
data = re.search(r'id="heaptrace-data">(.*?)</script>', page, re.S).group(1)
d = json.loads(data)
assert d["trees"][0][2][0][1].startswith("evil</script>"), d["trees"][0]
assert d["sites"] is None
PYEOF
	if [ -n "$browser" ]; then
		render x.massif.html x.massif --no-sites
		grep -q 'evil&lt;/script&gt;&lt;script&gt;' x.massif.html.dom ||
			fail "the label is not shown as text"
	fi
	;;
*)
	echo "html.sh: unknown case $case_name" >&2
	exit 99
	;;
esac
pass_or_fail
