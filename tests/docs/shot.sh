#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/screenshot/capture.sh and top.sh end to end: tmux, pane2html.py
# and headless Chromium make a PNG whose pixels are the pane's.
# Usage: shot.sh CASE SCREENSHOT_DIR BUILD_DIR; exit 0 pass, 1 fail,
# 77 skip (no tmux or Chromium), 99 harness error.
#   png       a command that writes a reversed word, a red background and
#             READY after a second, then exits: capture.sh -w READY waits
#             for it (the capture holds READY, the screen stays after the
#             command's exit), the PNG is the page's size times --scale,
#             and the pixels in the middle of a reversed blank cell, a
#             red one (256-colour 196), a plain one and the margin have
#             the palette's colours, for the dark and the light palette
#   deadline  -w for a text that never comes: exit 1 within the deadline
#             and a few seconds, no PNG, the screen shown on stderr, the
#             command (and its tmux server) gone
#   top       top.sh on BUILD_DIR's heaptrace and demo: the PNG written,
#             the capture holds the demo's site file (top_demo.cpp or
#             topsites.c), and the demo is gone afterwards
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 3 ] || usage "shot.sh CASE SCREENSHOT_DIR BUILD_DIR"
case_name=$1 shots=$(abspath "$2") build=$(abspath "$3")
need tmux python3
browser=
for b in chromium chromium-browser google-chrome google-chrome-stable; do
	have "$b" && { browser=$b; break; }
done
[ -n "$browser" ] || skip "no Chromium (apt-get install chromium)"
scratch
cd "$tmp" || exit 99

# theme_colour THEME KEY [INDEX]: pane2html.py's colour of THEME.
theme_colour() {
	python3 - "$shots" "$@" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import pane2html
theme = pane2html.THEMES[sys.argv[2]]
print(theme[sys.argv[3]][int(sys.argv[4])] if len(sys.argv) > 4
      else theme[sys.argv[3]])
EOF
}

# cell_centre COL ROW SCALE: the device pixel in the middle of a cell.
cell_centre() {
	python3 - "$shots" "$@" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import pane2html as p
col, row, scale = (int(v) for v in sys.argv[2:5])
print("%d,%d" % ((p.PADDING + col * p.CELL_WIDTH + p.CELL_WIDTH // 2) * scale,
                 (p.PADDING + row * p.CELL_HEIGHT + p.CELL_HEIGHT // 2) * scale))
EOF
}

case $case_name in
png)
	# row 0: "ab" then 4 reversed blanks at columns 3-6; row 1: 3 blanks
	# on 256-colour red at columns 0-2; row 2: READY, after a second
	cmd='printf "ab \033[7m    \033[0m\n\033[48;5;196m   \033[0m\n"; sleep 1; echo READY'
	for theme in dark light; do
		scale=2
		[ "$theme" = light ] && scale=1
		"$shots/capture.sh" -s 40x6 -w READY -t 15 --theme "$theme" \
			--scale "$scale" --text "$theme.txt" --html "$theme.html" \
			-o "$theme.png" -- sh -c "$cmd" >out 2>err ||
			fail "capture.sh ($theme): exit $? ($(cat err))"
		[ -s "$theme.png" ] || { fail "no $theme.png"; continue; }
		grep -q READY "$theme.txt" ||
			fail "the capture lacks READY: -w did not wait ($(cat "$theme.txt"))"
		points="$(cell_centre 4 0 $scale) $(cell_centre 1 1 $scale)"
		points="$points $(cell_centre 10 0 $scale) 2,2"
		# shellcheck disable=SC2086
		python3 "$here/png_pixels.py" "$theme.png" $points >pixels ||
			{ fail "$theme.png unreadable"; continue; }
		fg=$(theme_colour "$theme" fg) bg=$(theme_colour "$theme" bg)
		want="$(( (40 * 9 + 20) * scale )) $(( (6 * 18 + 20) * scale ))
$fg
#ff0000
$bg
$bg"
		[ "$(cat pixels)" = "$want" ] ||
			fail "$theme.png: size and pixels (reversed, red, plain," \
				"margin): $(tr '\n' ' ' <pixels), expected" \
				"$(echo "$want" | tr '\n' ' ')"
	done
	;;
deadline)
	start=$SECONDS
	"$shots/capture.sh" -s 40x6 -w NEVER -t 2 -o never.png \
		-- sh -c 'echo "pid $$ waiting"; exec sleep 60' >out 2>err &
	capture=$!
	wait_for err "not on the screen" 15 ||
		fail "no \"not on the screen\" within 15 s: $(cat err)"
	wait "$capture"
	status=$?
	[ "$status" -eq 1 ] || fail "capture.sh exited $status, not 1"
	[ $((SECONDS - start)) -le 10 ] ||
		fail "capture.sh took $((SECONDS - start)) s for a 2 s deadline"
	[ -e never.png ] && fail "never.png written"
	grep -q "waiting" err || fail "the screen is not on stderr: $(cat err)"
	sleeper=$(sed -n 's/^pid \([0-9]*\) waiting$/\1/p' err | head -1)
	[ -n "$sleeper" ] || fail "no pid on the screen shown: $(cat err)"
	[ -n "$sleeper" ] && ! wait_gone "$sleeper" 5 &&
		fail "the command ($sleeper) still runs after capture.sh"
	;;
top)
	[ -x "$build/heaptrace" ] || harness "no $build/heaptrace"
	"$shots/top.sh" -o top.png -d 2 --scale 1 --text top.txt "$build" >out 2>err ||
		fail "top.sh: exit $? ($(cat err))"
	[ -s top.png ] || fail "no top.png"
	grep -q -E 'top_demo\.cpp|topsites\.c' top.txt ||
		fail "no site of the demo on the screen: $(cat top.txt)"
	python3 "$here/png_pixels.py" top.png >size || fail "top.png unreadable"
	[ "$(cat size)" = "920 560" ] || fail "top.png is $(cat size), not 920 560"
	pgrep -f "$build/tests/(docs/top_demo|run/run_topsites) 300" >left &&
		fail "the demo still runs: $(cat left)"
	;;
*)
	usage "shot.sh png|deadline|top SCREENSHOT_DIR BUILD_DIR"
	;;
esac
pass_or_fail "shot-$case_name"
