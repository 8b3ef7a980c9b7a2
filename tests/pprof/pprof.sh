#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace report --format=pprof`: every file it writes is read by
# `go tool pprof`, whose figures must be heaptrace's own (the .sites
# file's, the Massif file's) to the byte.
# Usage: pprof.sh CASE HEAPTRACE SRCDIR PROG; exit 0 pass, 1 fail, 77 skip.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 4 ] || usage "pprof.sh CASE HEAPTRACE SRCDIR PROG"
case_name=$1 ht=$(abspath "$2") src=$(abspath "$3") prog=$(abspath "$4")
scratch
cd "$tmp" || exit 99

have go || skip "no go command (Debian's golang-go; dev.sh installs it)"
export GOCACHE=$tmp/gocache GOPATH=$tmp/gopath HOME=$tmp

# raw FILE: go tool pprof -raw's text of FILE into FILE.raw.
raw() {
	go tool pprof -raw "$1" >"$1.raw" 2>"$1.raw.err" ||
		fail "go tool pprof -raw $1: $(cat "$1.raw.err")"
}

# check FILE ARGS...: check_pprof.py's checks (TYPE=SUM, --function...)
# of FILE's -raw text.
check() {
	local f=$1
	shift
	raw "$f"
	python3 "$src/check_pprof.py" "$f.raw" "$@" || fail "$f: figures differ"
}

# top_total FILE TYPE BYTES: go tool pprof -top's total of TYPE is BYTES.
top_total() {
	go tool pprof -top -unit=B -sample_index="$2" "$1" >"$1.top" 2>&1 ||
		fail "go tool pprof -top $1: $(cat "$1.top")"
	grep -q "of $3B total" "$1.top" ||
		fail "$1: -top $2 total is not ${3}B: $(grep total "$1.top")"
}

# sites_sum FILE KEY: the sum of KEY= over FILE's site: lines.
sites_sum() {
	awk -v k="$2" '/^site: / { for (i = 3; i <= NF; i++)
		if (index($i, k "=") == 1) s += substr($i, length(k) + 2) }
		END { print s + 0 }' "$1"
}

# sites_checks SITES AT: check's arguments: the figures of SITES (a
# sampled one's block counts are estimates already, taken as they are).
sites_checks() {
	local inuse=peak blocks=peak_blocks
	[ "$2" = end ] && inuse=leaked blocks=leaked_blocks
	echo "alloc_objects=$(sites_sum "$1" calls)" \
		"alloc_space=$(sites_sum "$1" allocated)" \
		"inuse_space=$(sites_sum "$1" $inuse)" \
		"inuse_objects=$(sites_sum "$1" $blocks)"
}

build_id() { # ELF: its GNU build ID
	readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p'
}

# the heap of snapshot N of Massif file F
snapshot_heap() {
	awk -v n="$2" '/^snapshot=/ { s = substr($0, 10) }
		/^mem_heap_B=/ && s == n { print substr($0, 12) }' "$1"
}

case $case_name in
run)
	"$ht" run --massif-out-file=m -- "$prog" >out 2>err ||
		harness "heaptrace run: $(cat err)"
	expect_status 0 "$ht" report --format=pprof -o p.pb.gz m
	# heaptrace's figures: the .sites file's, and the program's own
	check p.pb.gz $(sites_checks m.sites peak) --types \
		alloc_objects,alloc_space,inuse_objects,inuse_space --period 1
	check p.pb.gz alloc_objects=11 alloc_space=72200 inuse_objects=9 \
		inuse_space=72000 --function make_block --function fill \
		--function main --build-id "$(build_id "$prog")"
	top_total p.pb.gz inuse_space 72000
	top_total p.pb.gz alloc_space 72200
	# the inlined function and its caller: one location, two lines
	grep -A1 ' make_block ' p.pb.gz.raw | grep -q '^ \{10,\}fill ' ||
		fail "make_block's location has no second line for fill: $(grep -A1 make_block p.pb.gz.raw)"
	# the peak figures are those of the Massif file's peak
	[ "$(sites_sum m.sites peak)" = 72000 ] || fail "sites peak"
	# an ELF symbol version (libc's __libc_start_main@@GLIBC_2.34) is
	# kept in the system name, "(name@@VERSION)", never in the name
	grep -q '@@' m.sites || harness "no versioned symbol in m.sites"
	grep -q '(__libc_start_main@@GLIBC_' p.pb.gz.raw ||
		fail "no versioned system name: $(grep libc_start p.pb.gz.raw)"
	awk '{ for (i = 2; i <= NF; i++)
		if ($i ~ /@/ && $i !~ /^s=[0-9]+\(/) bad = bad " " $i }
		END { if (bad) { print bad; exit 1 } }' p.pb.gz.raw >ver ||
		fail "a name with its symbol version:$(cat ver)"
	;;
at-end)
	"$ht" run --massif-out-file=m -- "$prog" >out 2>err ||
		harness "heaptrace run: $(cat err)"
	expect_status 0 "$ht" report --format=pprof --at=end -o e.pb.gz m
	check e.pb.gz $(sites_checks m.sites end)
	check e.pb.gz inuse_space=200 inuse_objects=2 alloc_space=72200 \
		--function leak_two
	# exact: no sampling comment, the command's
	grep -q "^Comment: sampled" e.pb.gz.raw && fail "exact profile says sampled"
	grep -q "^Comment: heaptrace profile of: $prog" e.pb.gz.raw ||
		fail "no command comment: $(grep Comment e.pb.gz.raw)"
	top_total e.pb.gz inuse_space 200
	;;
at-snapshot)
	"$ht" run --massif-out-file=m -- "$prog" >out 2>err ||
		harness "heaptrace run: $(cat err)"
	# every detailed snapshot: its tree's bytes, to the byte
	n=0
	for s in $(awk '/^snapshot=/ { s = substr($0, 10) }
			/^heap_tree=(detailed|peak)/ { print s }' m); do
		expect_status 0 "$ht" report --format=pprof --at="$s" \
			-o s$s.pb.gz m || continue
		check s$s.pb.gz inuse_space="$(snapshot_heap m "$s")" \
			alloc_space=72200
		n=$((n + 1))
	done
	[ $n -gt 0 ] || fail "no detailed snapshot in m"
	# an empty snapshot is refused, one line
	e=$(awk '/^snapshot=/ { s = substr($0, 10) }
		/^heap_tree=empty/ { print s; exit }' m)
	[ -n "$e" ] && one_error 2 "heaptrace: report: m: snapshot $e is not a detailed snapshot of the file" \
		"$ht" report --format=pprof --at="$e" -o x.pb.gz m
	one_error 2 "heaptrace: report: m: snapshot 9999 is not a detailed snapshot of the file" \
		"$ht" report --format=pprof --at=9999 -o x.pb.gz m
	;;
attach)
	start_target t out ready "$prog" wait
	"$ht" attach -v --massif-out-file=m "$target" 2>att.err 9>&- &
	h=$!
	for _ in $(seq 200); do
		grep -q "attached, " att.err && break
		kill -0 $h 2>/dev/null || break
		sleep 0.05
	done
	echo go >&9
	finish_target t
	wait $h || fail "heaptrace attach: $(tail -n 3 att.err)"
	expect_status 0 "$ht" report --format=pprof -o a.pb.gz m
	check a.pb.gz $(sites_checks m.sites peak) --function make_block \
		--build-id "$(build_id "$prog")"
	expect_status 0 "$ht" report --format=pprof --at=end -o ae.pb.gz m
	check ae.pb.gz $(sites_checks m.sites end) --function leak_two
	;;
massif-real)
	have valgrind || skip "no valgrind"
	valgrind --tool=massif --massif-out-file=v -- "$prog" >out 2>err ||
		harness "valgrind: $(tail -n 3 err)"
	expect_status 0 "$ht" report --format=pprof -o v.pb.gz v
	peak=$(awk '/^snapshot=/ { s = substr($0, 10) }
		/^mem_heap_B=/ { h[s] = substr($0, 12) }
		/^heap_tree=peak/ { print h[s] }' v)
	check v.pb.gz inuse_space="$peak" --types inuse_space --function fill
	# Massif's inlined chain (two tree lines of one address): one location
	grep -A1 ' make_block ' v.pb.gz.raw | grep -q '^ \{10,\}fill ' ||
		fail "make_block's location has no second line for fill: $(grep -A1 make_block v.pb.gz.raw)"
	top_total v.pb.gz inuse_space "$peak"
	one_error 2 "heaptrace: report: v: no .sites file beside it, so the heap at the end is not known (--at=peak or the number of a detailed snapshot)" \
		"$ht" report --format=pprof --at=end -o x.pb.gz v
	;;
sampled)
	# a sampled profile's .sites (made by hand): the period is the
	# interval, the figures the file's estimates as they are
	cp "$src/../report/data/a.massif" s.massif || exit 99
	sed 's/^time_unit: B$/time_unit: B\nsampling: interval=524288 seed=42/' \
		"$src/../report/data/a.massif.sites" >s.massif.sites || exit 99
	expect_status 0 "$ht" report --format=pprof -o s.pb.gz s.massif
	check s.pb.gz $(sites_checks s.massif.sites peak) --period 524288
	expect_status 0 "$ht" report s.massif
	grep -qxF "sampled every 512.0 KiB: figures are estimated (error about sqrt(interval/bytes) per site)" "$tmp/out" ||
		fail "report text: no sampling line: $(head -n 4 "$tmp/out")"
	expect_status 0 "$ht" report --format=json s.massif
	python3 -c 'import json,sys; s = json.load(open(sys.argv[1]))["profile"]["sampling"]; sys.exit(s != {"interval": 524288, "seed": 42, "estimated": True})' "$tmp/out" ||
		fail "report JSON: sampling: $(grep -o '"sampling[^}]*}' "$tmp/out")"
	expect_status 0 "$ht" report --format=html s.massif
	grep -q '"sampling":{"interval":524288' "$tmp/out" ||
		fail "report HTML: no sampling data"
	cp "$src/../report/data/a.massif" a.massif
	cp "$src/../report/data/a.massif.sites" a.massif.sites
	expect_status 0 "$ht" diff a.massif s.massif
	grep -qxF "b: sampled every 512.0 KiB: figures are estimated (error about sqrt(interval/bytes) per site)" "$tmp/out" ||
		fail "diff: no sampling line: $(head -n 4 "$tmp/out")"
	# an exact profile's report says nothing of sampling
	expect_status 0 "$ht" report a.massif
	grep -q "sampled" "$tmp/out" && fail "exact report says sampled"
	;;
sampled-run)
	# PROG is progs/sampled.c of tests/run: its 10 blocks of 1 MiB are
	# recorded at their size under any interval up to 1 MiB
	"$ht" run --sampling-interval=64K --sampling-seed=7 \
		--massif-out-file=m -- "$prog" one >out 2>err ||
		harness "heaptrace run: $(cat err)"
	grep -qx "sampling: interval=65536 seed=7" m.sites ||
		fail "no sampling: line in m.sites"
	expect_status 0 "$ht" report --format=pprof -o p.pb.gz m
	check p.pb.gz $(sites_checks m.sites peak) --period 65536 \
		--function take_big --build-id "$(build_id "$prog")"
	grep -qxF "Comment: sampled every 64.0 KiB: figures are estimated (error about sqrt(interval/bytes) per site)" p.pb.gz.raw ||
		fail "no comment saying the figures are estimated: $(grep Comment p.pb.gz.raw)"
	go tool pprof -top -unit=B -sample_index=inuse_space p.pb.gz \
		>top 2>&1 || fail "go tool pprof -top: $(cat top)"
	grep -Eq '^ +10485760B .* big$' top ||
		fail "big is not 10485760 B at the peak: $(grep -w big top)"
	# ... in 10 blocks, each of at least the interval counted as one
	go tool pprof -top -nodefraction=0 -sample_index=inuse_objects p.pb.gz >top 2>&1 ||
		fail "go tool pprof -top: $(cat top)"
	grep -Eq '^ +10 .* big$' top ||
		fail "big is not 10 blocks at the peak: $(grep -w big top)"
	# grow's 2,000 realloc chains end in blocks of 4,096 B, its calls
	# from 16 B up: its blocks are the estimated count, within 5 sd
	# (sqrt(2,000 x 65,536 / 4,096) = 179), not the live bytes at its
	# mean block size (about 4,800)
	awk '$NF == "grow" { g = $1 } END {
		exit !(g != "" && g >= 2000 - 5 * 179 && g <= 2000 + 5 * 179) }' top ||
		fail "grow is not 2,000 blocks within 5 sd at the peak: $(grep -w grow top)"
	expect_status 0 "$ht" report --format=pprof --at=end -o e.pb.gz m
	check e.pb.gz $(sites_checks m.sites end) --period 65536
	expect_status 0 "$ht" report m
	grep -qxF "sampled every 64.0 KiB: figures are estimated (error about sqrt(interval/bytes) per site)" "$tmp/out" ||
		fail "report text: no sampling line: $(head -n 4 "$tmp/out")"
	;;
errors)
	echo "not a profile" >junk
	one_error 2 "heaptrace: report: junk..." "$ht" report --format=pprof -o x.pb.gz junk
	cp "$src/../report/data/a.massif" a.massif
	one_error 2 "heaptrace: report: --format=pprof writes a binary file: give it with -o FILE" \
		"$ht" report --format=pprof a.massif
	one_error 2 "heaptrace: report: --at must be 'peak', 'end' or a snapshot number, not 'top'" \
		"$ht" report --format=pprof --at=top -o x.pb.gz a.massif
	one_error 2 "heaptrace: report: --at=end is for --format=pprof" \
		"$ht" report --at=end a.massif
	one_error 2 "heaptrace: report: cannot write /nonexistent/x.pb.gz: No such file or directory" \
		"$ht" report --format=pprof -o /nonexistent/x.pb.gz a.massif
	[ -e x.pb.gz ] && fail "a refused report wrote x.pb.gz"
	;;
*)
	usage "pprof.sh: unknown case $case_name"
	;;
esac
pass_or_fail
