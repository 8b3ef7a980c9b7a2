#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A PNG of a command's terminal, as tmux shows it: the command runs in a
# detached tmux session of a given size (a server of its own, no status
# line, TERM=tmux-256color), the pane is captured with its colours
# (capture-pane -e -N), drawn as HTML by pane2html.py and photographed by
# headless Chromium; the session is killed at the end, however it ends.
#
# usage: capture.sh [options] -o OUT.png -- COMMAND [ARGS...]
#   -o FILE         the PNG to write
#   -s COLSxROWS    the terminal's size (100x30)
#   -w TEXT         wait until TEXT is on the screen (fail after -t)
#   -t SECONDS      the deadline for -w (15)
#   -d SECONDS      then wait this long (0; 2 when there is no -w)
#   -k KEYS         then send KEYS (tmux send-keys' names, space-separated:
#                   "o Down Enter") and wait -d again
#   --theme NAME    pane2html.py's palette: dark (default) or light
#   --scale N       device pixels per CSS pixel (1; 2 for a sharper image)
#   --quit KEYS     after the capture, send KEYS ("q", "C-c") and wait up
#                   to 5 s for COMMAND to end, before the session is killed
#                   (which hangs it up)
#   --html FILE     also keep the HTML page
#   --text FILE     also keep the raw capture (with its escapes)
# COMMAND runs as given (no shell; use sh -c '...' for a pipeline); if it
# ends, its last screen stays. Exit 0 when the PNG is written, 1 when TEXT
# never came or a step failed, 2 on a usage error.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 2

usage() {
	echo "usage: capture.sh [-s COLSxROWS] [-w TEXT] [-t SECONDS] [-d SECONDS]" \
		"[-k KEYS] [--theme dark|light] [--scale N] [--quit KEYS] [--html FILE]" \
		"[--text FILE] -o OUT.png -- COMMAND [ARGS...]" >&2
	exit 2
}
die() {
	echo "capture.sh: $*" >&2
	exit 1
}

size=100x30 wait_text='' deadline=15 delay='' keys='' theme=dark scale=1
out='' keep_html='' keep_text='' quit_keys=''
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=${2-} ;;
	-s) size=${2-} ;;
	-w) wait_text=${2-} ;;
	-t) deadline=${2-} ;;
	-d) delay=${2-} ;;
	-k) keys=${2-} ;;
	--theme) theme=${2-} ;;
	--scale) scale=${2-} ;;
	--quit) quit_keys=${2-} ;;
	--html) keep_html=${2-} ;;
	--text) keep_text=${2-} ;;
	--) shift; break ;;
	*) usage ;;
	esac
	[ $# -ge 2 ] || usage
	shift 2
done
{ [ -n "$out" ] && [ $# -gt 0 ]; } || usage
[[ $size =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] || usage
cols=${BASH_REMATCH[1]} rows=${BASH_REMATCH[2]}
[[ $deadline =~ ^[0-9]+$ ]] || usage
[ -n "$delay" ] || { [ -n "$wait_text" ] && delay=0 || delay=2; }
[[ $delay =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage
[[ $scale =~ ^[1-9]$ ]] || usage

browser=
for b in chromium chromium-browser google-chrome google-chrome-stable; do
	command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
[ -n "$browser" ] || die "no Chromium (apt-get install chromium)"
command -v tmux >/dev/null 2>&1 || die "no tmux (apt-get install tmux)"

work=$(mktemp -d) || exit 1
socket=$work/tmux.socket
cleanup() {
	tmux -S "$socket" kill-server 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# A server of its own, read from this file only: the user's ~/.tmux.conf
# must not change what the picture shows.
cat >"$work/tmux.conf" <<'EOF'
set -g status off
set -g default-terminal tmux-256color
set -g remain-on-exit on
set -g remain-on-exit-format ""
set -g history-limit 0
EOF
unset TMUX   # run from inside tmux too
# The pane speaks UTF-8 whatever the caller's locale, as terminals do.
utf8=()
[ "$(locale charmap 2>/dev/null)" = UTF-8 ] || utf8=(-e LC_ALL=C.UTF-8)
tmux -u -S "$socket" -f "$work/tmux.conf" new-session -d -s shot \
	-x "$cols" -y "$rows" "${utf8[@]}" -- "$@" ||
	die "tmux could not start $1"

screen_text() {
	tmux -S "$socket" capture-pane -p -t shot 2>/dev/null
}

# await TEXT: poll the screen until TEXT is on it, up to $deadline s.
await() {
	local end=$((SECONDS + deadline))
	until screen_text | grep -qF -- "$1"; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "capture.sh: \"$1\" not on the screen after ${deadline}s;" \
				"the screen:" >&2
			screen_text >&2
			exit 1
		fi
		sleep 0.2
	done
}

# quit KEYS: send KEYS, then up to 5 s for the command to end.
quit() {
	local dead
	# shellcheck disable=SC2086  # KEYS is a list of key names
	tmux -S "$socket" send-keys -t shot $1 || die "send-keys $1"
	for _ in $(seq 50); do
		dead=$(tmux -S "$socket" display-message -p -t shot '#{pane_dead}')
		[ "$dead" = 1 ] && return 0
		sleep 0.1
	done
	echo "capture.sh: $* did not end the command; hanging it up" >&2
}

[ -z "$wait_text" ] || await "$wait_text"
sleep "$delay"
if [ -n "$keys" ]; then
	# shellcheck disable=SC2086  # KEYS is a list of key names
	tmux -S "$socket" send-keys -t shot $keys || die "send-keys $keys"
	sleep "$delay"
fi

tmux -S "$socket" capture-pane -p -e -N -t shot >"$work/pane.txt" ||
	die "capture-pane failed"
[ -z "$quit_keys" ] || quit "$quit_keys"
python3 "$here/pane2html.py" --cols "$cols" --rows "$rows" --theme "$theme" \
	--title "$*" -o "$work/pane.html" "$work/pane.txt" || die "pane2html.py failed"
window=$(python3 "$here/pane2html.py" --size --cols "$cols" --rows "$rows" \
	"$work/pane.txt" 2>/dev/null) || die "pane2html.py --size failed"

# As root Chromium needs --no-sandbox; a profile of its own in $work
# leaves the user's alone; sRGB, so that the pixels are the page's
# colours. OUT is replaced only by a complete picture.
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
	--hide-scrollbars --force-color-profile=srgb \
	--user-data-dir="$work/chromium" \
	--force-device-scale-factor="$scale" --window-size="$window" \
	--screenshot="$work/pane.png" "file://$work/pane.html" \
	>"$work/chromium.log" 2>&1
[ -s "$work/pane.png" ] ||
	die "$browser wrote no picture: $(tail -3 "$work/chromium.log")"
cp "$work/pane.png" "$out" || die "cannot write $out"
[ -z "$keep_html" ] || cp "$work/pane.html" "$keep_html" || exit 1
[ -z "$keep_text" ] || cp "$work/pane.txt" "$keep_text" || exit 1
echo "capture.sh: $out ($window px x$scale, ${cols}x$rows cells)"
