#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Work done in children (issue 26, point 7; tracer/loop.c "Exec
# wrappers"): `heaptrace run -- make check` on the bundled project
# tests/run/makeproj (cc compiles two files through cc1 and as, links
# through collect2 and ld, then make runs the program, whose peak heap is
# exactly 4,000,000 B, and echo).
#
# usage: children.sh HEAPTRACE CASE
# CASE:
#   default   the default (--follow-exec=auto, which is work): what the
#             rule before wrote (make's profile, the three cc drivers',
#             echo's, the program's, its peak exact) and cc1's two and
#             ld's; none for as and collect2 (below 1 MiB of heap, reached
#             only by work's rule), which the hint names in at most 70
#             characters with --trace-children=yes; make's output and
#             exit status as without heaptrace (a failing make too)
#   options   --trace-children=yes: every program's profile (as and cc
#             too), no hint; --trace-children=no given: the rule before
#             (wrappers only): the program's profile, none for cc1 or ld,
#             cc1 named in the hint
#   compat    --massif-compat=yes: Massif's rule, no exec followed: no
#             profile of cc, cc1 or the program; the hint names cc and the
#             program; with --trace-children=yes, cc1's and the program's
set -u
. "$(dirname "$0")/../lib.sh" || exit 99
profile_py="$here/profile.py"
proj="$here/makeproj"

[ $# -eq 2 ] || usage "children.sh HEAPTRACE CASE"
heaptrace=$(abspath "$1")
case_=$2
need make cc python3
need_exec "$heaptrace"
scratch --keep
# make cannot name a file whose path holds a blank: a copy in $tmp
cp -r "$proj" "$tmp/makeproj" || exit 99
proj=$tmp/makeproj

# build NAME [HEAPTRACE OPTIONS...] -- [MAKE ARGS...]: make check (or
# MAKE ARGS) in $tmp/NAME/out, under heaptrace unless NAME is native*,
# profiles in $tmp/NAME/prof; stdout, stderr, status in $tmp/NAME.{out,
# err,st}.
build() {
	local name=$1
	shift
	take_opts "$@"
	shift "$taken"
	local args=("$@")
	[ ${#args[@]} -gt 0 ] || args=(check)
	rm -rf "${tmp:?}/$name"
	mkdir -p "$tmp/$name/out" "$tmp/$name/prof"
	local run=()
	case $name in
	native*) ;;
	*) run=("$heaptrace" run --time-unit=B
		--massif-out-file="$tmp/$name/prof/massif.out.%p"
		${opts[@]+"${opts[@]}"} --) ;;
	esac
	# the same directory for every run, so that make says the same
	rm -rf "$tmp/b"
	mkdir "$tmp/b"
	(cd "$tmp/b" && timeout -k 5 120 ${run[@]+"${run[@]}"} make \
		-f "$proj/Makefile" SRC="$proj" "${args[@]}" \
		>"$tmp/$name.out" 2>"$tmp/$name.err")
	echo $? >"$tmp/$name.st"
}

# programs NAME: the profiles NAME wrote, as their programs' file names
# (cmd: line's first word), sorted, one a line.
programs() {
	local f
	for f in "$tmp/$1/prof"/massif.out.*; do
		case $f in *.sites | *'*') continue ;; esac
		python3 "$profile_py" field "$f" cmd | awk '{ print $1 }' |
			xargs -r basename
	done | sort
}

# has NAME PROGRAM [COUNT]: NAME wrote COUNT (default: some) profiles of
# PROGRAM; COUNT 0: none.
has() {
	local got
	got=$(programs "$1" | grep -cx -- "$2")
	if [ $# -eq 3 ]; then
		[ "$got" -eq "$3" ] || fail "$1: $got profiles of $2, not $3 ($(programs "$1" | tr '\n' ' '))"
	else
		[ "$got" -gt 0 ] || fail "$1: no profile of $2 ($(programs "$1" | tr '\n' ' '))"
	fi
}

# exact NAME: NAME's profile of the program make built has its peak,
# 4,000,000 B.
exact() {
	local f
	f=$(grep -lx 'cmd: ./grow' "$tmp/$1/prof"/massif.out.*[0-9] | head -n 1)
	[ -n "$f" ] || { fail "$1: no profile of ./grow"; return; }
	python3 "$profile_py" check "$f" max-heap=4000000 || fail "$1: $f: peak"
}

# same_as_native NAME NATIVE: make's stdout and exit status under
# heaptrace are those of NATIVE, its run without.
same_as_native() {
	cmp -s "$tmp/$1.out" "$tmp/$2.out" ||
		fail "$1: make's output differs: $(diff "$tmp/$2.out" "$tmp/$1.out" | head -n 5)"
	[ "$(cat "$tmp/$1.st")" = "$(cat "$tmp/$2.st")" ] ||
		fail "$1: exit status $(cat "$tmp/$1.st"), not $(cat "$tmp/$2.st") as without heaptrace"
}

# hint NAME [PROGRAM...]: NAME's stderr has the hint, at most 70
# characters, naming each PROGRAM; no PROGRAM: no hint at all.
hint() {
	local name=$1 h p
	shift
	h=$(grep -o '[^;]*not profiled: --trace-children=yes' "$tmp/$name.err" |
		sed 's/^ *//; s/^heaptrace: //')
	if [ $# -eq 0 ]; then
		[ -z "$h" ] || fail "$name: a hint: $h"
		return
	fi
	[ -n "$h" ] || { fail "$name: no hint"; show "$tmp/$name.err"; return; }
	[ "$(printf %s "$h" | wc -l)" -eq 0 ] || fail "$name: more than one hint: $h"
	[ ${#h} -le 70 ] || fail "$name: the hint is ${#h} characters: $h"
	for p in "$@"; do
		printf %s "$h" | grep -Eq "(^|, )$p(,| not)" ||
			fail "$name: the hint does not name $p: $h"
	done
}

case $case_ in
default)
	build native
	build dflt
	same_as_native dflt native
	has dflt make 1
	has dflt cc 3
	has dflt echo 1
	has dflt cc1 2
	has dflt ld 1
	has dflt grow 1
	exact dflt
	for p in as collect2; do has dflt "$p" 0; done
	hint dflt as collect2
	# a failing build fails the same way
	build native-fail -- nosuchtarget
	build dflt-fail -- nosuchtarget
	same_as_native dflt-fail native-fail
	[ "$(cat "$tmp/native-fail.st")" = 2 ] || harness "make nosuchtarget: $(cat "$tmp/native-fail.st")"
	cmp -s <(grep -v '^heaptrace' "$tmp/dflt-fail.err") "$tmp/native-fail.err" ||
		fail "make nosuchtarget: stderr differs: $(cat "$tmp/dflt-fail.err")"
	;;
options)
	build native
	build yes --trace-children=yes
	same_as_native yes native
	for p in make cc1 ld grow cc as echo; do has yes "$p"; done
	exact yes
	hint yes
	build no --trace-children=no
	same_as_native no native
	has no grow 1
	exact no
	for p in cc1 ld; do has no "$p" 0; done
	hint no cc1
	;;
compat)
	build native
	build compat --massif-compat=yes
	same_as_native compat native
	for p in cc cc1 grow; do has compat "$p" 0; done
	hint compat cc grow
	build compat-yes --massif-compat=yes --trace-children=yes
	same_as_native compat-yes native
	for p in cc1 grow; do has compat-yes "$p"; done
	exact compat-yes
	hint compat-yes
	;;
*) usage "children.sh HEAPTRACE CASE" ;;
esac
pass_or_fail
