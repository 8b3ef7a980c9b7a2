#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The per-site statistics file (docs/sites-format.md) written beside the
# profile by `heaptrace run`, on progs/sites.c, whose figures follow from
# its source (see its header). Each site is found by its frame's function
# (k, g, f, h) and its whole `site:` line checked (as version 1 spells
# it: tests/lib.sh's sites_v1 puts each site's frames under it), and so
# are the header, the `peak:` line (the Massif file's peak snapshot:
# number, time, heap; the sites' peak bytes summing to its heap), the
# totals and every line's form (a frame's address in capital hex, name,
# TAB, place; numbered frames and stacks).
#
# usage: sites.sh HEAPTRACE PROG CASE
#   inline, ptrace  `run -q --time-unit=B --massif-out-file=$tmp/m.%p`
#                   under that backend: the figures; no leak_check line
#   devnull         `--massif-out-file=/dev/null`, and a FIFO: no .sites
#                   file, no warning, status 0
#   leak            --leak-check=summary and =full: the leak_check line
#                   and the sites' definite/indirect/possible/reachable
# Exit 0 pass, 1 fail, 99 harness error.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

ht_prog_case "sites.sh HEAPTRACE PROG CASE" "$@"
need timeout awk
scratch --keep

# run NAME OPTION...: heaptrace run OPTIONS PROG in $tmp/NAME; its
# status in $status, its stderr in $tmp/NAME.err; $profile and $sites
# the profile and its .sites file when the pattern is m.%p.
run() {
	local name=$1
	shift
	mkdir -p "$tmp/$name" || exit 99
	(cd "$tmp/$name" && timeout 60 "$ht" run "$@" "$prog" \
		>"$tmp/$name.out" 2>"$tmp/$name.err")
	status=$?
	profile=$(ls "$tmp/$name"/m.* 2>/dev/null | grep -v '\.sites$' | head -1)
	sites=$profile.sites
}

# site_line FILE FUNCTION: the `site:` line of each site of FILE with a
# frame of FUNCTION (the name field: between the address and the TAB).
site_line() {
	awk -v fn="$2" '
		/^site: / { cur = $0; next }
		/^frame: / {
			line = $0
			sub(/^frame: 0x[0-9A-F]+ /, "", line)
			split(line, a, "\t")
			if (a[1] == fn && cur != "") { print cur; cur = "" }
		}' "$1"
}

# check_site FILE FUNCTION WANT: FUNCTION's only site's line is WANT.
check_site() {
	local got
	got=$(site_line "$1" "$2")
	[ "$got" = "$3" ] || fail "site of $2: got '$got', want '$3'"
}

# check_figures FILE: everything progs/sites.c's header works out.
check_figures() {
	local f=$1 v1=$tmp/figures.v1 pid want
	pid=${profile##*/m.}
	[ "$(sed -n 1p "$f")" = "heaptrace-sites: 2" ] ||
		fail "first line: $(sed -n 1p "$f")"
	sites_v1 "$f" >"$v1" || exit 99
	[ "$(sed -n 2p "$f")" = "pid: $pid" ] || fail "pid line: $(sed -n 2p "$f")"
	[ "$(sed -n 3p "$f")" = "$(grep -m1 '^cmd: ' "$profile")" ] ||
		fail "cmd line: $(sed -n 3p "$f")"
	[ "$(sed -n 4p "$f")" = "time_unit: B" ] ||
		fail "time_unit line: $(sed -n 4p "$f")"

	# the Massif file's peak snapshot: its number, time and heap
	want=$(awk '
		/^snapshot=/ { n = substr($0, 10) }
		/^time=/ { t = substr($0, 6) }
		/^mem_heap_B=/ { h = substr($0, 12) }
		/^heap_tree=peak/ { print "peak: snapshot=" n " time=" t " heap=" h }
		' "$profile")
	[ -n "$want" ] || fail "no peak snapshot in $profile"
	[ "$(sed -n 5p "$f")" = "$want" ] ||
		fail "peak line: '$(sed -n 5p "$f")', want '$want'"
	case $want in
	*" heap=104396") ;;
	*) fail "the peak is not 104,396 B: $want" ;;
	esac
	[ "$(sed -n 6p "$f")" = "totals: sites=4 calls=162 allocated=105612 temporary=50 leaked=4396 leaked_blocks=4" ] ||
		fail "totals line: $(sed -n 6p "$f")"

	check_site "$v1" k "site: 1 calls=2 allocated=4112 peak=4096 peak_blocks=1 leaked=4096 leaked_blocks=1 temporary=0"
	check_site "$v1" g "site: 2 calls=10 allocated=1000 peak=300 peak_blocks=3 leaked=300 leaked_blocks=3 temporary=0"
	check_site "$v1" f "site: 3 calls=100 allocated=100000 peak=100000 peak_blocks=100 leaked=0 leaked_blocks=0 temporary=0"
	check_site "$v1" h "site: 4 calls=50 allocated=500 peak=0 peak_blocks=0 leaked=0 leaked_blocks=0 temporary=50"
	local sum
	sum=$(awk '/^site: / { for (i = 3; i <= NF; i++)
		if ($i ~ /^peak=/) s += substr($i, 6) } END { print s + 0 }' "$f")
	[ "$sum" = 104396 ] || fail "the sites' peak bytes sum to $sum"

	# every other line is a site, frame, stack or mapping line of the
	# documented form
	local bad
	bad=$(sed -n '7,$p' "$f" |
		grep -Ev '^site: [0-9]+ stack=[0-9]+ calls=[0-9]+ allocated=[0-9]+( [a-z_]+=[0-9]+)*$' |
		grep -Ev "$(printf '^frame: [0-9]+ 0x[0-9A-F]+ [^\t]+\t[^\t]*$')" |
		grep -Ev '^stack: [0-9]+ [0-9]+( [0-9]+)+$' |
		grep -Ev '^mapping: start=0x[0-9A-F]+ end=0x[0-9A-F]+ offset=0x[0-9A-F]+( build_id=[0-9a-f]+)? file=.+$')
	[ -z "$bad" ] || fail "malformed lines: $bad"
	# each frame written once: no address on two frame numbers
	local twice
	twice=$(awk '/^frame: / && !seen[$3 " " $2]++ { print $3 }' "$f" |
		sort | uniq -d)
	[ -z "$twice" ] || fail "addresses under two frame numbers: $twice"
	# the program's own mapping, with the build ID its ELF notes hold
	local prog_file id
	prog_file=$(sed -n 's/^cmd: \([^ ]*\).*/\1/p' "$f")
	id=$(readelf -n "$prog_file" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	if [ -n "$id" ]; then
		grep -q "^mapping: .* build_id=$id file=.*${prog_file##*/}\$" "$f" ||
			fail "no mapping of $prog_file with build ID $id"
	fi
	# f's own frame: its name, then file:line (clang's line tables
	# name the file as it was compiled: a directory may come first)
	grep -Eq "$(printf '^frame: [0-9]+ 0x[0-9A-F]+ f\t([^\t]*/)?sites\\.c:[0-9]+$')" "$f" ||
		fail "no frame 'f<TAB>sites.c:LINE'"
	# each site's frames reach main
	local n_main
	n_main=$(grep -c "$(printf '^frame: 0x[0-9A-F]* main\t')" "$v1")
	[ "$n_main" = 4 ] || fail "$n_main frames of main, want 4"
}

# only_files DIR NAME...: DIR holds exactly the files NAME...
only_files() {
	local dir=$1 got want
	shift
	got=$(ls -A "$dir" | sort | tr '\n' ' ')
	want=
	[ $# = 0 ] || want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "files in $dir: '$got', want '$want'"
}

case $case_name in
inline | ptrace)
	run fig -q "--backend=$case_name" --time-unit=B "--massif-out-file=m.%p"
	[ "$status" = 0 ] || fail "status $status"
	[ ! -s "$tmp/fig.err" ] || { fail "stderr not empty"; show "$tmp/fig.err"; }
	if [ -z "$profile" ] || [ ! -f "$sites" ]; then
		fail "no profile and .sites file"
		ls -la "$tmp/fig"
	else
		only_files "$tmp/fig" "${profile##*/}" "${sites##*/}"
		check_figures "$sites"
		! grep -Eq '^leak_check:| definite=' "$sites" ||
			fail "leak figures without a leak check"
		[ "$fails" = 0 ] || show "$sites"
	fi
	;;
devnull)
	had_devnull_sites=
	[ -e /dev/null.sites ] && had_devnull_sites=1
	# without -q: a warning would show
	run null --time-unit=B --massif-out-file=/dev/null
	[ "$status" = 0 ] || fail "/dev/null: status $status"
	if grep -Eq 'sites|cannot|warning' "$tmp/null.err"; then
		fail "/dev/null: a message"
		show "$tmp/null.err"
	fi
	only_files "$tmp/null"
	if [ -z "$had_devnull_sites" ] && [ -e /dev/null.sites ]; then
		fail "/dev/null.sites was written"
		rm -f /dev/null.sites
	fi
	# a FIFO read by cat: the profile goes through, no .sites beside it
	mkdir -p "$tmp/fifo" && mkfifo "$tmp/fifo/m" || exit 99
	timeout 60 cat "$tmp/fifo/m" >"$tmp/fifo.profile" &
	pids+=($!)
	run fifo2 --time-unit=B "--massif-out-file=$tmp/fifo/m"
	[ "$status" = 0 ] || fail "FIFO: status $status"
	wait "${pids[-1]}"
	if grep -Eq 'sites|cannot|warning' "$tmp/fifo2.err"; then
		fail "FIFO: a message"
		show "$tmp/fifo2.err"
	fi
	grep -q '^heap_tree=peak' "$tmp/fifo.profile" ||
		fail "FIFO: no profile came through"
	only_files "$tmp/fifo" m
	only_files "$tmp/fifo2"
	;;
leak)
	for mode in summary full; do
		run "leak-$mode" -q --time-unit=B "--leak-check=$mode" \
			"--massif-out-file=m.%p"
		[ "$status" = 0 ] || fail "$mode: status $status"
		if [ -z "$profile" ] || [ ! -f "$sites" ]; then
			fail "$mode: no .sites file"
			continue
		fi
		# the leak check's own summary says the same
		grep -q 'definitely lost: 100 bytes in 1 blocks' \
			"$tmp/leak-$mode.err" ||
			{ fail "$mode: the leak report differs"; show "$tmp/leak-$mode.err"; }
		[ "$(sed -n 7p "$sites")" = "leak_check: $mode definite=100/1 indirect=0/0 possible=0/0 reachable=4296/3" ] ||
			fail "$mode: leak_check line: $(sed -n 7p "$sites")"
		sites_v1 "$sites" >"$tmp/leak-$mode.v1" || exit 99
		sites=$tmp/leak-$mode.v1
		check_site "$sites" k "site: 1 calls=2 allocated=4112 peak=4096 peak_blocks=1 leaked=4096 leaked_blocks=1 temporary=0 definite=0 indirect=0 possible=0 reachable=4096"
		check_site "$sites" g "site: 2 calls=10 allocated=1000 peak=300 peak_blocks=3 leaked=300 leaked_blocks=3 temporary=0 definite=100 indirect=0 possible=0 reachable=200"
		# sites with nothing left carry no leak fields
		check_site "$sites" f "site: 3 calls=100 allocated=100000 peak=100000 peak_blocks=100 leaked=0 leaked_blocks=0 temporary=0"
		check_site "$sites" h "site: 4 calls=50 allocated=500 peak=0 peak_blocks=0 leaked=0 leaked_blocks=0 temporary=50"
		[ "$fails" = 0 ] || show "$sites"
	done
	;;
*)
	echo "sites.sh: unknown case $case_name" >&2
	exit 99
	;;
esac

[ "$fails" -eq 0 ] || echo "$fails failure(s)"
pass_or_fail PASS
