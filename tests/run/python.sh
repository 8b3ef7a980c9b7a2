#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# CPython's allocator (docs/python.md): PyObject_* and PyMem_*
# are probed like malloc and its kin, so the objects pymalloc serves from
# its mmap'ed arenas are seen, each block once. One case per run:
#
#  list      progs/pylist.py (100,000 short strings, 5.6 MB of them in
#            pymalloc's blocks): the peak holds at least 4 MB, most of it
#            under one top-level entry, a frame of the str constructor (the
#            caller of PyObject_Malloc or PyObject_Realloc), and no free is
#            of an unknown block; the same with 10,000 strings (560,000 B)
#            under --backend=ptrace (a million calls would take it 100 s);
#            with --python-alloc=no the peak is under 4 MB, as malloc
#            alone sees it.
#  nodouble  progs/pybytes.py (4,000 x bytes(1000), each a
#            PyObject_Calloc(1, 1033), over 512 bytes, so calloc is called
#            inside it) under both backends: the peak's largest top-level
#            entry is 4,132,000 bytes (once, not twice), no top-level entry
#            is a frame inside the allocator (_PyMem_RawCalloc...: a calloc
#            counted again would be there), and no free is of an unknown
#            block (PyObject_Free calls free, which must not report it
#            again); with --python-alloc=no those 4,132,000 bytes are
#            there, under the allocator's own frames.
#  compat    progs/pylist.py under real Massif and under heaptrace
#            --massif-compat=yes: no Python probe, Massif's view (peak and
#            final totals within 2 %: Valgrind gives the program another
#            environment, LD_PRELOAD among it, which Python copies).
#  modes     --pages-as-heap=yes and --massif-compat=yes probe no Python
#            function (-v says which are probed), and default runs do.
#
# The Python used: $HT_PYTHON, python3, /usr/bin/python3, or a pyenv
# version's, the first whose PyObject_Malloc heaptrace probes (a build
# that inlines pymalloc into its callers, as Debian's python3.11 does, is
# not probed: its arenas are counted instead, python_arena.sh). compat
# takes any python3.
#
# usage: python.sh HEAPTRACE MASSIF-COMPARE CASE
# Exit 0 pass, 1 fail, 77 skip (no such python, no valgrind), 99 usage.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 3 ] || usage "python.sh HEAPTRACE MASSIF-COMPARE CASE"
heaptrace=$(abspath "$1") compare=$(abspath "$2") case=$3
progs="$here/progs"
need python3
scratch --keep

# The interpreters to try, each as itself (sys.executable: a pyenv shim is
# a shell script that execs the real one).
candidates() {
	local root=${PYENV_ROOT:-${HOME:-/root}/.pyenv} c
	for c in ${HT_PYTHON-} "$(command -v python3)" /usr/bin/python3 \
		"$root"/versions/*/bin/python3; do
		[ -x "$c" ] || continue
		"$c" -c 'import sys; print(sys.executable)' 2>/dev/null </dev/null
	done
}

# A python whose PyObject_Malloc heaptrace probes, into $py.
find_python() {
	local c
	py=
	while read -r c; do
		[ -x "$c" ] || continue
		if "$heaptrace" run -v --massif-out-file=/dev/null -- "$c" -c pass \
			</dev/null 2>&1 >/dev/null | grep -q ": PyObject_Malloc from "; then
			py=$c
			return 0
		fi
	done < <(candidates)
	skip "no python3 whose PyObject_Malloc heaptrace probes (tried: $(candidates | tr '\n' ' '))"
}

# top FILE: the peak snapshot's top-level entries, "BYTES FUNCTION" each,
# largest first; "no-peak" when there is no single peak.
top() {
	python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1], errors="replace").read()
peak = [s for s in text.split("snapshot=")[1:] if "heap_tree=peak" in s]
if len(peak) != 1:
    print("no-peak")
    sys.exit(0)
rows = []
for line in peak[0].splitlines():
    m = re.match(r" n\d+: (\d+) (?:0x[0-9A-Fa-f]+: (\S+)|in \d+ places)", line)
    if m:
        rows.append((int(m.group(1)), m.group(2) or "(below-threshold)"))
for b, f in sorted(rows, reverse=True):
    print(b, f)
EOF
}

# run NAME OPTIONS... -- ARGS...: heaptrace run --time-unit=B OPTIONS --
# $py -I ARGS (--peak-inaccuracy=0 only where a peak must be exact: on a
# heap that grows by a million blocks it makes each one a detailed peak
# snapshot, minutes of work), into
# $tmp/NAME.out (profile), .err (stderr, --stats=yes); a failure if it
# does not exit 0.
run() {
	local name=$1
	shift
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	PYTHONHASHSEED=0 "$heaptrace" run --stats=yes --time-unit=B \
		"${opts[@]}" --massif-out-file="$tmp/$name.out" -- "$py" -I "$@" \
		</dev/null >"$tmp/$name.stdout" 2>"$tmp/$name.err"
	local st=$?
	[ "$st" -eq 0 ] || { show "$tmp/$name.err"; fail "$name: heaptrace exited $st"; }
}

# no_unknown NAME: --stats=yes counted no free of an unknown block.
no_unknown() {
	grep -q " 0 of unknown blocks" "$tmp/$1.err" ||
		fail "$1: frees of unknown blocks (a block reported freed twice?): $(grep 'stats: process' "$tmp/$1.err")"
}

# Frames inside CPython's allocator: a malloc, calloc or realloc called
# there is part of a PyObject_* or PyMem_* call, never an entry of its own.
inner='^(_?PyMem_Raw(Malloc|Calloc|Realloc)|_PyObject_(Malloc|Calloc|Realloc)|PyObject_(Malloc|Calloc|Realloc)|_?PyMem_(Malloc|Calloc|Realloc)|pymalloc_.*)$'

case $case in
list)
	find_python
	echo "python: $py"
	for backend in inline ptrace; do
		n=100000 min=4000000
		[ "$backend" = ptrace ] && n=10000 min=560000
		run "list-$backend" --backend="$backend" -- "$progs/pylist.py" "$n"
		no_unknown "list-$backend"
		heap=$(peak_heap "$tmp/list-$backend.out")
		read -r bytes fn < <(top "$tmp/list-$backend.out")
		echo "$backend, $n strings: peak heap $heap B, largest entry $bytes B in $fn"
		[ "$heap" -ge "$min" ] || fail "$backend: peak heap $heap B < $min B"
		[ "${bytes:-0}" -ge "$min" ] ||
			fail "$backend: no top-level entry of $min B or more ($bytes $fn)"
		case $fn in
		*nicode* | resize_compact) ;;
		*) fail "$backend: the largest entry is $fn, not the str constructor's frame" ;;
		esac
		if [[ $fn =~ $inner ]]; then fail "$backend: $fn is inside the allocator"; fi
	done
	run list-off --python-alloc=no -- "$progs/pylist.py"
	heap=$(peak_heap "$tmp/list-off.out")
	echo "--python-alloc=no: peak heap $heap B"
	[ "$heap" -lt 4000000 ] || fail "--python-alloc=no: peak heap $heap B, not under 4 MB"
	;;
nodouble)
	find_python
	echo "python: $py"
	want=4132000
	for backend in inline ptrace; do
		run "bytes-$backend" --backend="$backend" --peak-inaccuracy=0 \
			-- "$progs/pybytes.py" 4000
		no_unknown "bytes-$backend"
		top "$tmp/bytes-$backend.out" >"$tmp/bytes-$backend.top"
		read -r bytes fn <"$tmp/bytes-$backend.top"
		echo "$backend: largest entry $bytes B in $fn"
		[ "${bytes:-0}" -eq "$want" ] ||
			fail "$backend: largest entry $bytes B ($fn), not $want B: bytes(1000) x 4000 counted once"
		while read -r b f; do
			if [[ $f =~ $inner ]]; then
				fail "$backend: $b B under $f, a frame inside the allocator: counted twice"
			fi
		done <"$tmp/bytes-$backend.top"
	done
	run bytes-off --python-alloc=no --peak-inaccuracy=0 -- \
		"$progs/pybytes.py" 4000
	top "$tmp/bytes-off.out" >"$tmp/bytes-off.top"
	read -r bytes fn <"$tmp/bytes-off.top"
	echo "--python-alloc=no: largest entry $bytes B in $fn"
	[ "${bytes:-0}" -ge "$want" ] && [ "$bytes" -lt $((want * 2)) ] ||
		fail "--python-alloc=no: largest entry $bytes B ($fn): the 1,033-byte blocks are malloc's there"
	;;
compat)
	need valgrind
	py=$(python3 -c 'import sys; print(sys.executable)')
	echo "python: $py"
	PYTHONHASHSEED=0 valgrind -q --tool=massif --time-unit=B \
		--peak-inaccuracy=0 \
		--massif-out-file="$tmp/massif.out" "$py" -I "$progs/pylist.py" \
		</dev/null >"$tmp/massif.stdout" 2>"$tmp/massif.err" ||
		{ show "$tmp/massif.err"; echo "Massif failed"; exit 99; }
	run compat --massif-compat=yes --peak-inaccuracy=0 -- "$progs/pylist.py"
	cmp -s "$tmp/massif.stdout" "$tmp/compat.stdout" ||
		fail "the program's output differs under Massif and heaptrace"
	res=$(python3 "$compare" --tolerance 2 "$tmp/massif.out" "$tmp/compat.out")
	echo "massif-compare --tolerance 2: $res"
	[ "${res##*$'\n'}" = SAME ] || fail "--massif-compat=yes differs from Massif: $res"
	;;
modes)
	find_python
	echo "python: $py"
	"$heaptrace" run -v --massif-out-file=/dev/null -- "$py" -c pass \
		</dev/null >/dev/null 2>"$tmp/default.err"
	grep -q ": PyObject_Malloc from " "$tmp/default.err" ||
		fail "default: PyObject_Malloc not probed"
	"$heaptrace" run -v --pages-as-heap=yes --massif-out-file=/dev/null -- \
		"$py" -c pass </dev/null >/dev/null 2>"$tmp/pages.err"
	if grep -q ": Py[A-Za-z_]* from " "$tmp/pages.err"; then
		fail "--pages-as-heap=yes probes Python: $(grep ': Py[A-Za-z_]* from ' "$tmp/pages.err")"
	fi
	"$heaptrace" run -v --massif-compat=yes --massif-out-file=/dev/null -- \
		"$py" -c pass </dev/null >/dev/null 2>"$tmp/compat.err"
	if grep -q ": Py[A-Za-z_]* from " "$tmp/compat.err"; then
		fail "--massif-compat=yes probes Python: $(grep ': Py[A-Za-z_]* from ' "$tmp/compat.err")"
	fi
	;;
*)
	echo "python.sh: unknown case $case" >&2
	exit 99
	;;
esac
pass_or_fail PASS
