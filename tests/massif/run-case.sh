#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One golden case: replay the case's event file with its options, compare the
# massif.out written with the golden byte for byte (a unified diff on
# failure), then check that ms_print reads it. Exit 0 pass, 1 fail, 77 skip,
# 99 harness error. Case files are described in README.md.
#
# usage: run-case.sh REPLAY SRCDIR CASE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 4 ] || usage "run-case.sh REPLAY SRCDIR CASE OUTDIR"
replay=$1
src=$2
name=$3
outdir=$4

opts=$src/cases/$name.opts
golden=$src/golden/$name.out
out=$outdir/$name.out

# The value of the first "KEY ..." line of the .opts file (empty if none).
field() {
	sed -n "s/^$1[[:space:]]*//p" "$opts" | head -n 1
}

for f in "$opts" "$golden"; do
	if [ ! -r "$f" ]; then
		echo "run-case: $f: missing" >&2
		exit 99
	fi
done
prog=$(field prog)
events=$(field events)
options=$(field options)
heaptrace=$(field heaptrace)
[ -n "$events" ] || events=$prog.events
if [ -z "$prog" ] || [ ! -r "$src/progs/$events" ]; then
	echo "run-case: $opts: no 'prog' line or no progs/$events" >&2
	exit 99
fi

mkdir -p "$outdir" || exit 99
rm -f "$out"
# Options may carry shell quoting (--alloc-fn='operator new(unsigned long)');
# --massif-out-file comes last, as regen-golden.sh typed it for valgrind, so
# the desc: lines agree.
eval "set -- $heaptrace $options"
"$replay" "$@" "--massif-out-file=$name.out" "$src/progs/$events" "$out"
rc=$?
case $rc in
0) ;;
2)
	echo "run-case: replay rejected the case (status 2)" >&2
	exit 99 ;;
*)
	echo "run-case: replay failed (status $rc)" >&2
	exit 1 ;;
esac

if ! cmp -s "$golden" "$out"; then
	echo "run-case: $name: output differs from golden/$name.out" >&2
	diff -u "$golden" "$out"
	exit 1
fi

have ms_print ||
	skip "output matches golden/$name.out, but ms_print is not installed"
if ! ms_print "$out" >"$out.ms_print" 2>&1; then
	echo "run-case: ms_print failed on $out:" >&2
	cat "$out.ms_print" >&2
	exit 1
fi
exit 0
