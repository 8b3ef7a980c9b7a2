#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `meson install` into a scratch DESTDIR puts the program in BINDIR and
# the man page in MANDIR/man1, and the installed program runs.
# Usage: install.sh MESON BUILDDIR PREFIX BINDIR MANDIR MANPAGE VERSION;
# exit 0 pass, 1 fail, 77 skip (no meson), 99 harness error.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 7 ] ||
	usage "install.sh MESON BUILDDIR PREFIX BINDIR MANDIR MANPAGE VERSION"
meson=$1 build=$(abspath "$2") prefix=$3 bindir=$4 mandir=$5
page=$(abspath "$6") version=$7
[ "$meson" != none ] || skip "meson is not installed"
scratch

# BINDIR and MANDIR are relative to PREFIX unless configured absolute.
under_prefix() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s\n' "$prefix/$1" ;;
	esac
}

# --no-rebuild: meson test has built everything, and a ninja run from a
# test would race the one that started it.
"$meson" install -C "$build" --no-rebuild --destdir "$tmp/root" \
	>"$tmp/log" 2>&1 || { show "$tmp/log"; fail "meson install failed"; }
bin=$tmp/root$(under_prefix "$bindir")/heaptrace
man=$tmp/root$(under_prefix "$mandir")/man1/heaptrace.1
if [ ! -x "$bin" ]; then
	fail "no executable $bin"
else
	got=$("$bin" --version 2>&1)
	[ "$got" = "heaptrace $version" ] ||
		fail "installed heaptrace --version: '$got'"
fi
if [ ! -f "$man" ]; then
	fail "no man page $man"
elif ! cmp -s "$page" "$man"; then
	fail "$man is not $page"
fi
echo "installed: $(find "$tmp/root" -type f | sed "s|^$tmp/root||" | tr '\n' ' ')"
pass_or_fail
