#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace print` against ms_print 3.19: every output must be the same
# bytes as ms_print's for the same options.
#
# usage: print.sh HEAPTRACE CASE [PROGS...]
#   vendored    cases/*.out against their checked-in ms_print output
#               (cases/NAME.OPTSET.exp); runs without Valgrind
#   synthetic   files from gen_massif.py (huge and zero numbers, deep
#               trees, '#' and '%' in labels...) against ms_print
#   massif      profiles written by real Massif of PROGS, with many
#               Massif options, against ms_print
#   heaptrace   profiles written by `heaptrace run` of PROGS, likewise
#   errors      bad options, missing and malformed files: one line on
#               stderr, exit status 2, nothing on stdout
#   newline     an argument holding a line break: heaptrace writes it as
#               \n (massif.out and .sites), which ms_print and report read; Massif writes it raw, which
#               ms_print refuses and heaptrace print reads
#   garbled     truncated and garbled files never crash the reader:
#               exit 0 or 2 (run it under ASan to mean something)
# Exit 0 pass, 1 fail, 77 skip (ms_print or valgrind missing), 99 harness.
# Set HT_KEEP=DIR to keep the files in DIR.
set -u

. "$(dirname "$0")/../lib.sh" || exit 99

heaptrace=$(abspath "$1")
mode=$2
shift 2
progs=("$@")

# The option sets every file is printed with, by both.
optsets=(
	""
	"--threshold=0"
	"--threshold=0.5"
	"--threshold=1"
	"--threshold=10"
	"--threshold=50"
	"--threshold=100"
	"--threshold=2.5%"
	"--x=4 --y=4"
	"--x=10 --y=20"
	"--x=200 --y=50"
	"--x=72 --y=4 --threshold=0"
	"--y=1000 --x=1000 --threshold=100"
)
compared=0

# same FILE OPTS...: heaptrace print and ms_print give the same bytes.
same() {
	local file=$1
	shift
	ms_print "$@" "$file" >"$tmp/ms.txt" 2>"$tmp/ms.err"
	"$heaptrace" print "$@" "$file" >"$tmp/ht.txt" 2>"$tmp/ht.err"
	local rc=$?
	compared=$((compared + 1))
	if [ $rc -ne 0 ] || ! cmp -s "$tmp/ms.txt" "$tmp/ht.txt"; then
		fail "$(basename "$file") $*: differs from ms_print (exit $rc)"
		head -c 300 "$tmp/ht.err"
		diff "$tmp/ms.txt" "$tmp/ht.txt" | head -10 | cut -c1-160
	fi
}

# all_same FILE...: each file with every option set.
all_same() {
	local f o
	for f in "$@"; do
		for o in "${optsets[@]}"; do
			# shellcheck disable=SC2086 # the sets are words
			same "$f" $o
		done
	done
}

case_vendored() {
	local exp name set opts
	for exp in "$here"/cases/*.exp; do
		name=$(basename "$exp" .exp)   # FILE.SET
		set=${name##*.}
		opts=$(cat "$here/cases/optset.$set")
		# shellcheck disable=SC2086
		(cd "$here/cases" && "$heaptrace" print $opts "${name%.*}.out") \
			>"$tmp/ht.txt" 2>"$tmp/ht.err"
		compared=$((compared + 1))
		if ! cmp -s "$exp" "$tmp/ht.txt"; then
			fail "$name: differs from ms_print's output checked in"
			cat "$tmp/ht.err"
			diff "$exp" "$tmp/ht.txt" | head -10 | cut -c1-160
		fi
	done
}

case_synthetic() {
	need ms_print python3
	python3 "$here/gen_massif.py" "$tmp" 60 7 || exit 99
	all_same "$tmp"/gen*.out
}

# Massif's options for the profiles of each program.
profile_opts=(
	"--time-unit=B"
	"--time-unit=i"
	"--time-unit=ms --detailed-freq=1"
	"--time-unit=B --detailed-freq=1 --threshold=0 --depth=3"
	"--time-unit=i --max-snapshots=10 --detailed-freq=2"
	"--time-unit=B --threshold=50 --peak-inaccuracy=0"
	"--time-unit=B --pages-as-heap=yes"
	"--time-unit=B --stacks=yes --depth=2"
)

# profiles TOOL: every program with every option set, $tmp/p.N.out. A
# program Valgrind cannot read (clang's DWARF 5 for Valgrind 3.19) is
# left out; with none left the case is skipped.
profiles() {
	local tool=$1 p o n=0 made=0
	for p in "${progs[@]}"; do
		for o in "${profile_opts[@]}"; do
			n=$((n + 1))
			# --stacks=yes is Massif's alone
			[ "$tool" = heaptrace ] && [[ $o == *stacks* ]] && continue
			# shellcheck disable=SC2086
			if [ "$tool" = massif ]; then
				valgrind -q --tool=massif $o \
					--massif-out-file="$tmp/p.$n.out" "$p" \
					>/dev/null 2>"$tmp/run.err" </dev/null
			else
				"$heaptrace" run -q $o \
					--massif-out-file="$tmp/p.$n.out" "$p" \
					>/dev/null 2>"$tmp/run.err" </dev/null
			fi
			if [ -s "$tmp/p.$n.out" ]; then
				made=$((made + 1))
			elif [ "$tool" = massif ] &&
				grep -q 'debuginfo reader' "$tmp/run.err"; then
				echo "left out: Valgrind cannot read $p's debug info"
				rm -f "$tmp/p.$n.out"
				break
			else
				echo "no profile from $tool $o $p"
				cat "$tmp/run.err"
				exit 99
			fi
		done
	done
	if [ $made -eq 0 ]; then
		skip "no profile could be made"
	fi
}

case_massif() {
	need ms_print valgrind
	profiles massif
	all_same "$tmp"/p.*.out
}

case_heaptrace() {
	need ms_print
	profiles heaptrace
	all_same "$tmp"/p.*.out
}

# refused WHAT STATUS ARGS...: heaptrace print ARGS prints nothing on
# stdout, one "heaptrace: print: ..." line on stderr, exits STATUS.
refused() {
	local what=$1 want=$2
	shift 2
	compared=$((compared + 1))
	one_error "$want" "heaptrace: print: ..." "$heaptrace" print "$@" ||
		echo "(the case: $what)"
}

case_errors() {
	local good="$here/cases/example.out"
	refused "no file" 2
	refused "two files" 2 "$good" "$good"
	refused "missing file" 2 "$tmp/nonexistent"
	refused "a directory" 2 "$tmp"
	refused "--x=3" 2 --x=3 "$good"
	refused "--x=1001" 2 --x=1001 "$good"
	refused "--y=3" 2 --y=3 "$good"
	refused "--y=99999999999999999999" 2 --y=99999999999999999999 "$good"
	refused "--x=" 2 --x= "$good"
	refused "--x=1e2" 2 --x=1e2 "$good"
	refused "--threshold=101" 2 --threshold=101 "$good"
	refused "--threshold=-1" 2 --threshold=-1 "$good"
	refused "--threshold=abc" 2 --threshold=abc "$good"
	refused "--threshold=1.2.3" 2 --threshold=1.2.3 "$good"
	refused "unknown option" 2 --bogus "$good"
	refused "-" 2 - "$good"
	: >"$tmp/empty"
	refused "empty file" 2 "$tmp/empty"
	printf 'desc: x\ncmd: y\ntime_unit: B\n' >"$tmp/nosnap"
	refused "no snapshot" 2 "$tmp/nosnap"
	printf 'desc: x\ncmd: y\ntime_unit: q\n' >"$tmp/unit"
	refused "bad time unit" 2 "$tmp/unit"
	sed 's/^mem_heap_B=.*/mem_heap_B=5/' "$good" >"$tmp/over"
	refused "tree above the total" 2 "$tmp/over"
	sed 's/^time=.*/time=18446744073709551616/' "$good" >"$tmp/big"
	refused "number past 2^64" 2 "$tmp/big"
	sed 's/^heap_tree=peak/heap_tree=pique/' "$good" >"$tmp/kind"
	refused "bad heap_tree" 2 "$tmp/kind"
	# the line is named
	"$heaptrace" print "$tmp/kind" 2>&1 | grep -q "kind:[0-9]*: heap_tree=" ||
		fail "the reader's message names no line"
	"$heaptrace" print --help >"$tmp/out" 2>&1 &&
		grep -q '^usage: heaptrace print' "$tmp/out" ||
		fail "--help: $(cat "$tmp/out")"
	"$heaptrace" --help | grep -q '^  print ' ||
		fail "heaptrace --help lists no print command"
}

case_newline() {
	need ms_print
	(cd "$tmp" && "$heaptrace" run -q --massif-out-file=nl.out \
		/bin/echo "$(printf 'a\nb')" >/dev/null) ||
		fail "heaptrace run of echo: status $?"
	[ "$(sed -n 2p "$tmp/nl.out")" = 'cmd: /bin/echo a\nb' ] ||
		fail "the cmd: line: $(sed -n 2,3p "$tmp/nl.out")"
	all_same "$tmp/nl.out"
	[ "$(sed -n 3p "$tmp/nl.out.sites")" = 'cmd: /bin/echo a\nb' ] ||
		fail "the .sites cmd: line: $(sed -n 3,4p "$tmp/nl.out.sites")"
	"$heaptrace" report "$tmp/nl.out" >"$tmp/report" 2>&1 ||
		fail "report of the run: $(head -3 "$tmp/report")"
	# Massif's own file for that command (3.19 writes the break raw)
	cp "$here/cases/example.out" "$tmp/raw.out"
	(cd "$tmp" && ms_print raw.out) | sed '/^Command:/s/$/ a\
b/' >"$tmp/want.txt"
	printf 'cmd: ./ex a\nb\n' >"$tmp/cmd"
	sed -i -e '2r '"$tmp/cmd" -e '2d' "$tmp/raw.out"
	(cd "$tmp" && "$heaptrace" print raw.out) >"$tmp/raw.txt" \
		2>"$tmp/raw.err" ||
		fail "print of a raw line break in cmd: $(cat "$tmp/raw.err")"
	cmp -s "$tmp/want.txt" "$tmp/raw.txt" ||
		fail "raw line break: $(diff "$tmp/want.txt" "$tmp/raw.txt" | head -5)"
}

# Cut and garbled copies of the vendored files: each either is read or is
# refused with one line, never a crash.
case_garbled() {
	need python3
	python3 - "$tmp" "$here"/cases/*.out <<'EOF' || exit 99
import random, sys
out, files = sys.argv[1], sys.argv[2:]
r = random.Random(5)
n = 0
for path in files:
    data = open(path, "rb").read()
    for _ in range(40):
        d = bytearray(data)
        how = r.randrange(5)
        if how == 0:
            d = d[:r.randrange(len(d))]
        elif how == 1:
            for _ in range(r.randrange(1, 8)):
                d[r.randrange(len(d))] = r.choice(b"0123456789n: \n#=x\0-9")
        elif how == 2:
            i = r.randrange(len(d))
            d[i:i] = r.choice([b"n4294967295: 1 x\n", b"n1:", b"\n\n#\n",
                               b"99999999999999999999", b" n0: 0\n"])
        elif how == 3:
            lines = d.split(b"\n")
            del lines[r.randrange(len(lines))]
            d = bytearray(b"\n".join(lines))
        else:
            lines = d.split(b"\n")
            i, j = r.randrange(len(lines)), r.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            d = bytearray(b"\n".join(lines))
        open("%s/g%04d.out" % (out, n), "wb").write(d)
        n += 1
EOF
	local f rc
	for f in "$tmp"/g*.out; do
		"$heaptrace" print --threshold=0 "$f" >/dev/null 2>"$tmp/err"
		rc=$?
		compared=$((compared + 1))
		case $rc in
		0) ;;
		2) [ "$(wc -l <"$tmp/err")" -eq 1 ] ||
			fail "$f: refused with more than one line: $(cat "$tmp/err")" ;;
		*) fail "$f: exit status $rc: $(head -c 2000 "$tmp/err")" ;;
		esac
	done
}

scratch --keep
case $mode in
vendored | synthetic | massif | heaptrace | errors | newline | garbled)
	"case_$mode" ;;
*) echo "unknown case $mode"; exit 99 ;;
esac
echo "$compared checked, $fails failed"
[ $fails -eq 0 ]
