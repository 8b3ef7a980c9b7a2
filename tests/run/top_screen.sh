#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace top`'s full-screen view (cli/top_live.c), driven in a tmux
# pane of 80x30 (tmux send-keys, capture-pane) on progs/topsites.c in
# its "busy" mode: hold_big holds 3,000,000 bytes (one block) and
# hold_small 1,000,000 from the moment a tracer is seen; churn makes
# 4096-byte temporaries (the most bytes/s), tiny 16-byte ones (the most
# calls/s), grow keeps 256 bytes every 20 ms; it prints "rate N", its
# rounds a second. CASE is one of:
#  exact    --sampling-interval=0: within 3 s of the start, hold_big on
#           the first row; with `b` (bytes in full) its LIVE is 3000000
#           and hold_small's 1000000; the header says "exact".
#  sampled  top's default sampling: the header says "sampled every
#           512.0KiB: figures are estimates"; hold_big first with
#           3000000 (a block of at least the interval is counted at its
#           size: no error).
#  sort     each of l % g a c t n sorts by its column (marked with '*'
#           in the titles): the column's values never increase down the
#           rows (names never decrease); c puts tiny first, a churn; `>`
#           and `<` move the sort to the next and previous column.
#  stack    Enter on hold_big's row shows its stack: the frames hold_big,
#           busy, main in that order, its exact live bytes; Esc: the rows
#           again.
#  scroll   an 80x9 pane (3 rows shown of 7), sorted by name (n): End
#           shows the last row by name (tiny) and not hold_big; PgUp, then Home,
#           bring the first (churn) back.
#  freeze   f: the header says FROZEN and its elapsed time stays for 2 s;
#           f again: it moves on.
#  reset    r, once grow has grown by 25600 B (2 s): right after, its
#           growth is under 12800 B (a second's), hold_big's 0; then,
#           sorted by g, grow comes first with a growth above 0.
#  write    w: the status line names massif.out.PID.snapshot-1, written
#           in top's directory, which `heaptrace print` reads (exit 0,
#           hold_big in it).
#  quit     q: heaptrace exits 0, the terminal as it was (stty -g, the
#           alternate screen left), the program untraced (TracerPid 0)
#           and running on at full speed (its rate after the detach at
#           least a third of its rate before the attach) with its own
#           output only ("ready", "rate" lines).
#  ctrl-c   the same with Ctrl-C in the view (a key: the screen is raw).
#  sigint, sigterm  that signal sent to heaptrace (kill) while the view
#           is up: the same.
#           (In these three, the view must be up first: its header's
#           "? keys, q quit".)
#  iterations  --iterations=3 --interval=0.5: the view up, then exit 0
#           by itself after 1.5 s (at most 6 s), the terminal restored, the
#           program untraced.
#  narrow   an 80x24 pane on progs/toplong.cpp, whose site has a C++
#           name of some 300 columns: its row holds the name shortened
#           in the middle ("..."), its start, the end of its member
#           function's name, "(...)" and "(toplong.cpp:LINE)", within 80
#           columns; the pane resized to 150 columns, the view is drawn
#           again to the new width: the whole member function's name
#           shows, and the HEAP% column left out at 80.
#  run      top -- PROG under tmux: the program's exit (status 3) ends
#           top with that status, the terminal restored.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: top_screen.sh HEAPTRACE TOPSITES CASE [TOPLONG]
set -u
. "$(dirname "$0")/../lib.sh" || exit 99
[ $# -ge 3 ] || usage "top_screen.sh HEAPTRACE TOPSITES CASE [TOPLONG]"
toplong=${4:+$(abspath "$4")}
ht_prog_case "top_screen.sh HEAPTRACE TOPSITES CASE [TOPLONG]" "$1" "$2" "$3"
need tmux python3
fails=0
scratch

sock=ht-top-$$
tmx() {
	tmux -L "$sock" -f /dev/null "$@"
}
trap 'tmx kill-server 2>/dev/null; _scratch_cleanup' EXIT

# screen: the pane's text now.
screen() {
	tmx capture-pane -p -t top 2>/dev/null
}

# wait_screen PATTERN [SECONDS]: up to SECONDS (5) for a line of the pane
# to match PATTERN (grep -E); returns 1 if none did. The pane then in
# $tmp/screen.
wait_screen() {
	local i
	for i in $(seq $((${2:-5} * 20))); do
		screen >"$tmp/screen"
		grep -Eq -- "$1" "$tmp/screen" && return 0
		sleep 0.05
	done
	return 1
}

# keys KEY...: KEYS sent to the pane, then a moment for the view (its
# tick is 100 ms).
keys() {
	tmx send-keys -t top "$@"
	sleep 0.4
}

# start_top [-x COLS -y LINES] ARGS...: heaptrace top ARGS in a detached
# pane (80x30), in $tmp, the terminal's settings saved before and after
# (stty.before, stty.after), its exit status in $tmp/top.status.
start_top() {
	local x=80 y=30
	[ "$1" = -x ] && { x=$2; y=$4; shift 4; }
	# each word quoted for the pane's shell: a checkout's path may hold
	# blanks
	local cmd
	cmd="cd $(printf '%q' "$tmp") && stty -g >stty.before &&"
	cmd+=" $(printf '%q ' "$ht" top "$@") 2>top.err;"
	cmd+=" echo \$? >top.status.new; mv top.status.new top.status;"
	cmd+=" stty -g >stty.after; sleep 600"
	tmx new-session -d -x "$x" -y "$y" -s top "$cmd" || harness "tmux"
	pids+=("$(tmx display -p -t top '#{pid}')")
}

# watch_prog [ARGS...]: topsites busy for 40 s, then top ARGS on it.
watch_prog() {
	start_target prog out 'rate ' "$prog" 40 busy
	wait_for "$tmp/prog.out" 'rate .*' 5
	wait_for_rates 2
	start_top "$@" "$target"
}

# wait_for_rates N: until the program printed N "rate" lines.
wait_for_rates() {
	for _ in $(seq 100); do
		[ "$(grep -c '^rate ' "$tmp/prog.out")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# rows_check PY: PY (python, given `rows` from the pane, each a dict of
# the columns, in order, and `sorted_col`, the title marked '*') returns
# None when good, else what is wrong. Polled up to 5 s (a table may be
# drawn while the pane is read); fails with the reason and the pane.
rows_check() {
	local why
	for _ in $(seq 25); do
		screen >"$tmp/screen"
		why=$(python3 - "$tmp/screen" "$1" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
title = next((i for i, l in enumerate(lines) if re.search(r"\bSITE\*?\s*$", l)), None)
if title is None:
    print("no column titles"); sys.exit()
# a narrow screen leaves columns out: those shown, from the titles
names = [n.rstrip("*") for n in lines[title].split()]
marked = [n for n in names if n + "*" in lines[title].split()]
sorted_col = marked[0] if len(marked) == 1 else None
units = {"": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30,
         "TiB": 2**40, "%": 1, "M": 1e6, "G": 1e9}
def num(s):
    m = re.fullmatch(r"([+-]?[0-9.]+)(B|KiB|MiB|GiB|TiB|%|M|G)?", s)
    if not m:
        raise ValueError(s)
    return float(m.group(1)) * units[m.group(2) or ""]
rows = []
for l in lines[title + 1:]:
    n = len(names) - 1
    f = l.split(None, n)
    if len(f) < n + 1:
        break
    try:
        rows.append(dict(zip(names[:n], map(num, f[:n])), SITE=f[n],
                         name=f[n].split(" ")[0]))
    except ValueError:
        break
def check():
    exec(compile(sys.argv[2], "check", "exec"), globals())
    return globals()["result"]()
r = check()
if r:
    print(r)
PY
)
		[ -z "$why" ] && return 0
		sleep 0.2
	done
	fail "$why"
	show "$tmp/screen"
	return 1
}

# detached_ok: top exited 0 (within 10 s), the terminal as before, the
# program untraced and at full speed, its output its own.
detached_ok() {
	wait_for "$tmp/top.status" . 10 || { fail "top did not end"; show "$tmp/top.err"; return; }
	[ "$(cat "$tmp/top.status")" = 0 ] ||
		fail "top exited $(cat "$tmp/top.status"): $(cat "$tmp/top.err")"
	wait_for "$tmp/stty.after" . 5
	cmp -s "$tmp/stty.before" "$tmp/stty.after" ||
		fail "the terminal's settings changed: $(cat "$tmp/stty.before") -> $(cat "$tmp/stty.after")"
	[ "$(tmx display -p -t top '#{alternate_on}')" = 0 ] ||
		fail "the pane is still on the alternate screen"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$target/status" ||
		fail "the program is still traced: $(grep TracerPid "/proc/$target/status")"
	local attach=$lines_attach before=$lines_before
	wait_for_rates $((before + 3)) || fail "the program prints no rate after the detach"
	python3 - "$tmp/prog.out" "$attach" "$before" <<'PY' || fail "rates: $(cat "$tmp/prog.out")"
import sys
lines = open(sys.argv[1]).read().splitlines()
attach, before = int(sys.argv[2]), int(sys.argv[3])
assert lines[0].startswith("ready "), lines[0]
rates = [int(l.split()[1]) for l in lines[1:]]
assert all(l.startswith("rate ") for l in lines[1:]), lines
# the seconds before the attach; after the detach, but the one it falls in
pre, post = sorted(rates[:attach]), rates[before + 1:]
assert pre and post, (pre, post)
median = pre[len(pre) // 2]
assert min(post) * 3 >= median, "rate %r after the detach, %d before" % (post, median)
PY
	[ -s "$tmp/prog.err" ] && fail "the program's stderr: $(cat "$tmp/prog.err")"
}

case $case_name in
exact)
	start_target prog out 'rate ' "$prog" 40 busy
	start_top --sampling-interval=0 "$target"
	wait_screen '^ +2\.9MiB .*hold_big \(topsites\.c:' 3 ||
		{ fail "hold_big is not on the first row within 3 s"; show "$tmp/screen"; }
	rows_check '
def result():
    if not rows or rows[0]["name"] != "hold_big":
        return "the first row is not hold_big"' 
	grep -q "exact: every call counted" "$tmp/screen" || fail "the header does not say exact"
	keys b
	rows_check '
def result():
    by = {r["name"]: r for r in rows}
    if rows[0]["name"] != "hold_big" or rows[0]["LIVE"] != 3000000:
        return "first row %r, want hold_big 3000000" % rows[:1]
    if by.get("hold_small", {}).get("LIVE") != 1000000:
        return "hold_small %r, want 1000000" % by.get("hold_small")'
	;;
sampled)
	start_target prog out 'rate ' "$prog" 40 busy
	start_top "$target"
	wait_screen 'hold_big' 3 || fail "no hold_big within 3 s"
	grep -q "sampled every 512.0KiB: figures are estimates" "$tmp/screen" ||
		{ fail "the header does not say sampled"; show "$tmp/screen"; }
	keys b
	rows_check '
def result():
    if not rows or rows[0]["name"] != "hold_big" or rows[0]["LIVE"] != 3000000:
        return "first row %r, want hold_big 3000000" % rows[:1]'
	;;
sort)
	start_target prog out 'rate ' "$prog" 40 busy
	start_top --sampling-interval=0 --interval=0.5 "$target"
	wait_screen 'hold_small' 5 || fail "no hold_small"
	keys b
	for k in l % g a c t n; do
		col=$(case $k in l) echo LIVE ;; %) echo HEAP% ;; g) echo GROWTH ;;
			a) echo ALLOC/S ;; c) echo CALLS/S ;; t) echo TEMP% ;;
			n) echo SITE ;; esac)
		keys "$k"
		first=$(case $k in a) echo churn ;; c) echo tiny ;; l | %) echo hold_big ;; esac)
		rows_check "
def result():
    col, first = '$col', '$first'
    if sorted_col != col:
        return 'key $k: the titles mark %r, want %r' % (sorted_col, col)
    if len(rows) < 5:
        return 'key $k: %d rows' % len(rows)
    v = [r['name' if col == 'SITE' else col] for r in rows]
    if col == 'SITE':
        if v != sorted(v):
            return 'key $k: names not in order: %r' % v
    elif any(a < b for a, b in zip(v, v[1:])):
        return 'key $k: %s not in decreasing order: %r' % (col, v)
    if first and rows[0]['name'] != first:
        return 'key $k: first row %s, want %s' % (rows[0]['name'], first)"
	done
	keys '<'
	rows_check "
def result():
    if sorted_col != 'TEMP%': return '< after n: %r' % sorted_col"
	keys '>' '>'
	rows_check "
def result():
    if sorted_col != 'LIVE': return '> > after <: %r' % sorted_col"
	;;
stack)
	start_target prog out 'rate ' "$prog" 40 busy
	start_top --sampling-interval=0 "$target"
	wait_screen '^ +2\.9MiB .*hold_big' 5 || fail "no hold_big"
	keys Home Enter
	wait_screen '^STACK' 2 || fail "Enter shows no stack"
	python3 - "$tmp/screen" <<'PY' || { fail "the stack"; show "$tmp/screen"; }
import re, sys
lines = open(sys.argv[1]).read().splitlines()
frames = [re.match(r"\s*#\d+\s+(\S+)", l) for l in lines]
frames = [m.group(1) for m in frames if m]
want = ["hold_big", "busy", "main"]
at = [frames.index(w) for w in want]
assert at == sorted(at), frames
assert any(l.startswith("hold_big (topsites.c:") for l in lines), lines
assert any("live 3000000 B" in l for l in lines), lines
PY
	keys Escape
	wait_screen 'SITE\*?\s*$' 2 || fail "Esc does not bring the rows back"
	;;
scroll)
	start_target prog out 'rate ' "$prog" 40 busy
	start_top -x 80 -y 9 --sampling-interval=0 "$target"
	wait_screen 'hold_big' 5 || fail "no hold_big"
	sleep 1 # every site seen: 7 rows
	keys n End
	wait_screen '^ .* tiny ' 2 && ! grep -q hold_big "$tmp/screen" ||
		{ fail "End: the last row by name (tiny) is not shown alone"; show "$tmp/screen"; }
	keys PageUp Home
	wait_screen '^ .* churn ' 2 && ! grep -q ' tiny ' "$tmp/screen" ||
		{ fail "Home: the first rows are not back"; show "$tmp/screen"; }
	;;
freeze)
	start_target prog out 'rate ' "$prog" 40 busy
	start_top --sampling-interval=0 --interval=0.5 "$target"
	wait_screen 'hold_big' 5 || fail "no hold_big"
	keys f
	wait_screen '^FROZEN' 2 || fail "f: the header does not say FROZEN"
	e1=$(grep -o 'elapsed [0-9.]* s' "$tmp/screen")
	sleep 2
	e2=$(screen | grep -o 'elapsed [0-9.]* s')
	[ -n "$e1" ] && [ "$e1" = "$e2" ] || fail "frozen, elapsed went from '$e1' to '$e2'"
	keys f
	sleep 1
	e3=$(screen | grep -o 'elapsed [0-9.]* s')
	[ "$e3" != "$e2" ] || fail "unfrozen, elapsed stays at '$e3'"
	screen | grep -q '^FROZEN' && fail "unfrozen, the header still says FROZEN"
	;;
reset)
	start_target prog out 'rate ' "$prog" 40 busy
	start_top --sampling-interval=0 --interval=0.5 "$target"
	wait_screen 'hold_big' 5 || fail "no hold_big"
	keys b
	rows_check '
def result():
    by = {r["name"]: r for r in rows}
    if by.get("grow", {}).get("GROWTH", 0) < 25600:
        return "grow has not grown by 25600 B (2 s) since the attach: %r" % by.get("grow")'
	keys r
	grep -q 'growth counted from now' "$tmp/screen" ||
		wait_screen 'growth counted from now' 2 || fail "r: no word on the status line"
	# a table at once: grow's growth since then, within a second
	rows_check '
def result():
    by = {r["name"]: r for r in rows}
    if not 0 <= by.get("grow", {}).get("GROWTH", -1) < 12800:
        return "after r, grow %r, want a growth under 12800 B" % by.get("grow")
    if by["hold_big"]["GROWTH"] != 0:
        return "after r, hold_big %r" % by["hold_big"]'
	keys g
	sleep 1.5
	rows_check '
def result():
    if rows[0]["name"] != "grow" or rows[0]["GROWTH"] <= 0:
        return "sorted by growth after r: first %r, want grow" % rows[:1]'
	;;
write)
	start_target prog out 'rate ' "$prog" 40 busy
	start_top --sampling-interval=0 "$target"
	wait_screen 'hold_big' 5 || fail "no hold_big"
	keys w
	file=massif.out.$target.snapshot-1
	wait_screen "profile written to $file" 3 ||
		{ fail "w: the status line does not name $file"; show "$tmp/screen"; }
	[ -f "$tmp/$file" ] || fail "w: no $file"
	"$ht" print "$tmp/$file" >"$tmp/print.out" 2>"$tmp/print.err" ||
		fail "heaptrace print $file: exit $?: $(cat "$tmp/print.err")"
	grep -q hold_big "$tmp/print.out" || fail "the profile has no hold_big"
	;;
quit | ctrl-c | sigint | sigterm)
	start_target prog out 'rate ' "$prog" 40 busy
	wait_for_rates 3 || harness "the program prints no rate"
	lines_attach=$(grep -c '^rate ' "$tmp/prog.out")
	start_top --sampling-interval=0 "$target"
	wait_screen 'hold_big' 5 || fail "no hold_big"
	grep -q '? keys, q quit' "$tmp/screen" || fail "the view is not up"
	lines_before=$(grep -c '^rate ' "$tmp/prog.out")
	case $case_name in
	quit) keys q ;;
	ctrl-c) keys C-c ;;
	sigint | sigterm)
		kill -"${case_name#sig}" "$(pgrep -P "$(tmx display -p -t top '#{pane_pid}')" -x heaptrace)" ;;
	esac
	detached_ok
	;;
iterations)
	start_target prog out 'rate ' "$prog" 40 busy
	start_top --iterations=3 --interval=0.5 "$target"
	wait_screen '? keys, q quit' 3 || fail "the view is not up"
	t0=$(date +%s%N)
	wait_for "$tmp/top.status" . 6 || fail "top did not end after 3 tables"
	t1=$(date +%s%N)
	[ "$(cat "$tmp/top.status" 2>/dev/null)" = 0 ] || fail "top exited $(cat "$tmp/top.status" 2>/dev/null)"
	[ $(((t1 - t0) / 1000000)) -ge 800 ] || fail "top ended $(((t1 - t0) / 1000000)) ms after its view came up"
	wait_for "$tmp/stty.after" . 5
	cmp -s "$tmp/stty.before" "$tmp/stty.after" || fail "the terminal's settings changed"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$target/status" || fail "the program is still traced"
	;;
narrow)
	[ -n "$toplong" ] || skip "no C++ compiler: no toplong"
	start_target prog out 'ready ' "$toplong" 30
	start_top -x 80 -y 24 --sampling-interval=0 "$target"
	# at 80 columns the function's 31-character name cannot all show
	long='^ +1\.9MiB .* heap.*\.\.\..*_name\(\.\.\.\) \(toplong\.cpp:[0-9]+\)$'
	wait_screen 'toplong\.cpp' 5 && wait_screen "$long" 2 ||
		{ fail "no row of the long name shortened in the middle"; show "$tmp/screen"; }
	row=$(grep -E "$long" "$tmp/screen" | head -1)
	[ "${#row}" -le 80 ] || fail "the row is ${#row} columns wide"
	grep -q 'heaptrace_tests::a_rather_long_namespace_name' "$tmp/screen" &&
		fail "the name is not shortened at 80 columns"
	tmx resize-window -t top -x 150 -y 24
	wide='1\.9MiB .* heap.*make_the_table_with_a_long_name\(.*\) \(toplong\.cpp:[0-9]+\)$'
	wait_screen "$wide" 3 ||
		{ fail "resized to 150 columns, the row does not show more of the name"; show "$tmp/screen"; }
	grep -Eq '^.{81,}' "$tmp/screen" || fail "no line is wider than 80 after the resize"
	grep -q 'HEAP%' "$tmp/screen" || fail "150 columns: no HEAP% column"
	keys q
	wait_for "$tmp/top.status" . 10 && [ "$(cat "$tmp/top.status")" = 0 ] ||
		fail "top did not exit 0"
	;;
run)
	start_top --sampling-interval=0 -- "$prog" 3 now 3
	wait_screen 'hold_big' 3 && grep -q '? keys, q quit' "$tmp/screen" ||
		{ fail "no hold_big in the view"; show "$tmp/screen"; }
	wait_for "$tmp/top.status" . 15 || fail "top did not end with its program"
	[ "$(cat "$tmp/top.status")" = 3 ] ||
		fail "top exited $(cat "$tmp/top.status"), want the program's 3: $(cat "$tmp/top.err")"
	wait_for "$tmp/stty.after" . 5
	cmp -s "$tmp/stty.before" "$tmp/stty.after" || fail "the terminal's settings changed"
	[ "$(tmx display -p -t top '#{alternate_on}')" = 0 ] ||
		fail "the pane is still on the alternate screen"
	;;
*)
	usage "top_screen.sh HEAPTRACE TOPSITES exact|sampled|sort|stack|scroll|freeze|reset|write|quit|ctrl-c|sigint|sigterm|iterations|narrow|run [TOPLONG]"
	;;
esac
pass_or_fail
