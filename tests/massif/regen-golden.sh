#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Rebuild the programs in progs/ and run each real-Massif case under
# Valgrind 3.19's Massif to regenerate golden/<case>.out; also refresh the
# case's "# golden:" recipe line and check that the event file's sym lines
# still match the freshly built binary (addresses and line numbers move when
# the compiler or a program changes; then the .events files need updating
# from callsites.sh). Cases marked "# golden: by hand" are left alone.
#
# usage: regen-golden.sh [CASE...]     (default: every cases/*.opts)
# Programs are built and run in $HEAPTRACE_GOLDEN_DIR
# (default /tmp/heaptrace-massif-golden): Massif prints object paths in some
# frames, so the directory is fixed to keep goldens reproducible.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
work=${HEAPTRACE_GOLDEN_DIR:-/tmp/heaptrace-massif-golden}
cflags="-g -O0 -fno-omit-frame-pointer"

ver=$(valgrind --version)
if [ "$ver" != valgrind-3.19.0 ]; then
	echo "regen-golden: need valgrind-3.19.0, found $ver" >&2
	exit 1
fi
mkdir -p "$work"

field() {
	sed -n "s/^$1[[:space:]]*//p" "$2" | head -n 1
}

# Build PROG once per run, from progs/PROG.c or progs/PROG.cpp.
build() {
	[ -e "$work/$1.built" ] && return 0
	if [ -r "$here/progs/$1.c" ]; then
		# A first line "/* cflags: ... */" adds flags (pages.c: static,
		# no libc).
		extra=$(sed -n '1s|^/\* cflags: \(.*\) \*/$|\1|p' \
			"$here/progs/$1.c")
		gcc $cflags $extra -o "$work/$1" "$here/progs/$1.c"
	else
		g++ $cflags -o "$work/$1" "$here/progs/$1.cpp"
	fi
	touch "$work/$1.built"
}

# Every sym line of EVENTS for an address inside the executable (below ld.so,
# which Valgrind maps at 0x4000000) must be what callsites.sh says now, and
# every stack must follow the program's calls (check-stacks.py).
check_events() {
	prog=$1
	events=$2
	"$here/check-stacks.py" "$events" "$work/$prog"
	"$here/callsites.sh" "$work/$prog" >"$work/$prog.sites"
	grep '^sym 0x' "$events" | while read -r kw pc rest; do
		[ $((pc)) -lt $((0x4000000)) ] || continue
		# "-": Valgrind found no symbol (pages.c), nothing to check.
		case $rest in -*) continue ;; esac
		if ! grep -qxF "$kw $pc $rest" "$work/$prog.sites"; then
			echo "regen-golden: $events: stale: $kw $pc $rest" >&2
			echo "  now: $(grep "^sym $pc " "$work/$prog.sites")" >&2
			exit 1
		fi
	done
}

rm -f "$work"/*.built
if [ $# -eq 0 ]; then
	set -- $(cd "$here/cases" && ls *.opts | sed 's/\.opts$//')
fi
for name in "$@"; do
	opts=$here/cases/$name.opts
	if ! grep -q '^# golden: real Massif' "$opts"; then
		echo "regen-golden: $name: by hand, skipped"
		continue
	fi
	prog=$(field prog "$opts")
	events=$(field events "$opts")
	options=$(field options "$opts")
	[ -n "$events" ] || events=$prog.events
	build "$prog"
	check_events "$prog" "$here/progs/$events"

	cmd="valgrind --tool=massif $options --massif-out-file=$name.out ./$prog"
	rm -f "$work/$name.out"
	(cd "$work" && eval "$cmd") >"$work/$name.log" 2>&1 || {
		echo "regen-golden: $name: valgrind failed, see $work/$name.log" >&2
		exit 1
	}
	cp "$work/$name.out" "$here/golden/$name.out"
	sed -i "s|^# golden: real Massif.*|# golden: real Massif 3.19, command: $cmd|" \
		"$opts"
	echo "regen-golden: $name"
done
