#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/top.png: `heaptrace top PID` watching a small service, photographed
# by capture.sh. Builds nothing: the build directory must hold heaptrace
# and the demo, tests/docs/top_demo (docs/screenshot/top_demo.cpp: a
# cache growing, a parser churning temporaries, C++ containers with long
# templated names; tests/run/run_topsites when there is no C++ compiler).
# The demo waits for the tracer, so the view sees all its blocks; it is
# stopped at the end.
#
# usage: top.sh [options] BUILD_DIR [TOP_OPTIONS...]
#   -o FILE         the PNG (docs/top.png)
#   -s COLSxROWS    the terminal (100x30)
#   -d SECONDS      how long the view runs before the picture (4), after
#                   the first site is on the screen
#   -k KEYS         keys to press then (capture.sh -k: "Down Enter")
#   --batch         `heaptrace top --batch` (its plain text tables)
#   --theme NAME    dark (default) or light
#   --scale N       device pixels per CSS pixel (2: sharp on dense screens)
#   --text FILE     also keep the pane's capture (with its escapes)
# TOP_OPTIONS go to `heaptrace top` (--sampling-interval=0, --interval=500).
# Exit 0 when the PNG is written, 1 if not, 2 on a usage error.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 2
usage() {
	echo "usage: top.sh [-o FILE] [-s COLSxROWS] [-d SECONDS] [-k KEYS]" \
		"[--batch] [--theme NAME] [--scale N] [--text FILE]" \
		"BUILD_DIR [TOP_OPTIONS...]" >&2
	exit 2
}
die() {
	echo "top.sh: $*" >&2
	exit 1
}

out=$here/../top.png size=100x30 delay=4 keys='' batch='' theme=dark scale=2
text=
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=${2-} ;;
	-s) size=${2-} ;;
	-d) delay=${2-} ;;
	-k) keys=${2-} ;;
	--theme) theme=${2-} ;;
	--scale) scale=${2-} ;;
	--text) text=${2-} ;;
	--batch) batch=--batch; shift; continue ;;
	-*) usage ;;
	*) break ;;
	esac
	[ $# -ge 2 ] || usage
	shift 2
done
[ $# -ge 1 ] || usage
build=$(cd "$1" && pwd) || die "no build directory $1"
shift
heaptrace=$build/heaptrace
[ -x "$heaptrace" ] || die "no $heaptrace (ninja -C $1 first)"
if [ -x "$build/tests/docs/top_demo" ]; then
	demo=$build/tests/docs/top_demo sites=top_demo.cpp
elif [ -x "$build/tests/run/run_topsites" ]; then
	demo=$build/tests/run/run_topsites sites=topsites.c
else
	die "no demo program in $build (ninja -C $build first)"
fi

work=$(mktemp -d) || exit 1
demo_pid=
cleanup() {
	[ -z "$demo_pid" ] || stop_demo
	rm -rf "$work"
}
# stop_demo: SIGTERM, and SIGKILL if it is still there 5 s later.
stop_demo() {
	kill "$demo_pid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$demo_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$demo_pid" 2>/dev/null
	wait "$demo_pid" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Long enough for any capture; stopped as soon as the picture is taken.
"$demo" 300 >"$work/demo.out" 2>&1 </dev/null &
demo_pid=$!
for _ in $(seq 100); do
	grep -q ready "$work/demo.out" && break
	sleep 0.1
done
grep -q "ready $demo_pid" "$work/demo.out" ||
	die "$demo did not start: $(cat "$work/demo.out")"

# The picture is taken DELAY seconds after the first site's row is
# shown: growth and rates have had time to show.
# Ctrl-C then detaches heaptrace (the view's q would too; batch mode
# reads no key), leaving the demo as it was, before it is stopped.
capture=("$here/capture.sh" -s "$size" -w "$sites" -t 20 -d "$delay" --quit C-c
	--theme "$theme" --scale "$scale" -o "$out")
[ -z "$keys" ] || capture+=(-k "$keys")
[ -z "$text" ] || capture+=(--text "$text")
"${capture[@]}" -- "$heaptrace" top $batch "$@" "$demo_pid" ||
	die "capture.sh failed"
