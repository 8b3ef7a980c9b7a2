#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Periodic profiles (README.md, "Periodic profiles"): --snapshot-every on
# progs/grower.c, whose grow() site holds 10,000 bytes per call, one call
# every tenth of a second, beside 4,000 bytes from steady() (its header).
#
# usage: periodic.sh HEAPTRACE GROWER CASE
#   run     `run --snapshot-every=1` on 3.5 s of growth: the files
#           .snapshot-1..3 (a 4th only when the whole run took 4 s), each
#           with its .sites, read by `heaptrace print` and `heaptrace
#           report` (which names grow); in each, grow's site has N calls,
#           N x 10,000 bytes and N blocks live, N at most ten per second
#           elapsed and ten more from one file to the next, the sites'
#           live bytes summing to the file's last mem_heap_B; one stderr
#           line per file; the final profile and its .sites as without
#           the option
#   mixed   the same with `heaptrace snapshot PID` once .snapshot-1 is
#           there: it prints .snapshot-2, periodic ones go on from 3, every
#           file with its .sites, their grow figures growing in order
#   attach  `attach --snapshot-every=1 --duration=3` to a running grower:
#           .snapshot-1 and -2 at least, with .sites, grow's calls growing
#           by about ten a second from one to the next
#   diff    `heaptrace diff` of .snapshot-1 and .snapshot-3 of a run:
#           exit 1, grow named as grown by exactly 10,000 bytes per call
#           made between them
#   pprof   --pprof=yes: a .pb.gz beside every snapshot and the final
#           profile, which `go tool pprof -top` reads, grow's in-use bytes
#           in each exactly the .sites' live bytes (skip without go)
#   badopt  --snapshot-every=0, =x, =-1, =1.5, = and --pprof=maybe: exit
#           2, one line each, nothing run
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

ht_prog_case "periodic.sh HEAPTRACE GROWER CASE" "$@"
need timeout awk
scratch --keep

# run_grower DIR TENTHS OPTION...: heaptrace run OPTIONS grower TENTHS in
# DIR, profiles m.%p; its status in $status, its pid (the profile's) in
# $gpid.
run_grower() {
	local dir=$1 tenths=$2
	shift 2
	mkdir -p "$dir" || exit 99
	(cd "$dir" && timeout 60 "$ht" run --time-unit=ms \
		--massif-out-file="$dir/m.%p" "$@" -- "$prog" "$tenths" \
		>"$dir/out" 2>"$dir/err")
	status=$?
	gpid=$(awk '/^ready/ { print $2 }' "$dir/out")
	[ "$status" = 0 ] || fail "heaptrace run $*: exit $status: $(head -3 "$dir/err")"
	[ -n "$gpid" ] || harness "the program did not say ready"
}

# grow_site SITES: "CALLS LEAKED LEAKED_BLOCKS" of grow()'s site (its
# frames under it as version 1 has them: tests/lib.sh's sites_v1).
grow_site() {
	sites_v1 "$1" | awk '
		/^site: / { cur = $0; next }
		/^frame: / && cur != "" {
			line = $0
			sub(/^frame: 0x[0-9A-F]+ /, "", line)
			split(line, a, "\t")
			if (a[1] == "grow") {
				n = split(cur, f, " ")
				for (i = 3; i <= n; i++) {
					split(f[i], kv, "=")
					v[kv[1]] = kv[2]
				}
				print v["calls"], v["leaked"], v["leaked_blocks"]
				cur = ""
			}
		}'
}

# live_sum SITES: the sites' live bytes (leaked=) summed.
live_sum() {
	awk '/^site: / { for (i = 3; i <= NF; i++) if ($i ~ /^leaked=/) s += substr($i, 8) }
	     END { print s + 0 }' "$1"
}

# last_heap FILE: mem_heap_B of FILE's last snapshot.
last_heap() {
	awk -F= '/^mem_heap_B=/ { h = $2 } END { print h }' "$1"
}

# check_snapshot FILE: FILE and FILE.sites are there and read by print
# and report; grow's site consistent; grow's call count in $snap_calls
# (empty, and status 1, when there is none).
check_snapshot() {
	local f=$1 calls leaked blocks
	snap_calls=
	[ -s "$f" ] || { fail "$f: not written"; return 1; }
	[ -s "$f.sites" ] || { fail "$f.sites: not written"; return 1; }
	"$ht" print "$f" >"$tmp/print.out" 2>"$tmp/print.err" ||
		fail "$f: heaptrace print: $(head -1 "$tmp/print.err")"
	"$ht" report "$f" >"$tmp/report.out" 2>"$tmp/report.err" ||
		fail "$f: heaptrace report: $(head -1 "$tmp/report.err")"
	grep -q "grow (grower.c:" "$tmp/report.out" ||
		fail "$f: heaptrace report does not name grow"
	read -r calls leaked blocks < <(grow_site "$f.sites")
	[ -n "${calls-}" ] || { fail "$f.sites: no site of grow"; return 1; }
	[ "$leaked" = $((calls * 10000)) ] && [ "$blocks" = "$calls" ] ||
		fail "$f.sites: grow: $calls calls, $leaked bytes in $blocks blocks live, expected $((calls * 10000)) in $calls"
	local heap sum
	heap=$(last_heap "$f")
	sum=$(live_sum "$f.sites")
	[ "$heap" = "$sum" ] ||
		fail "$f: last mem_heap_B=$heap, the .sites' live bytes sum to $sum"
	snap_calls=$calls
}

# snapshot_files DIR PID: the numbers of DIR's m.PID.snapshot-N, sorted.
snapshot_files() {
	ls "$1" | sed -n "s/^m\.$2\.snapshot-\([0-9]*\)\$/\1/p" | sort -n | tr '\n' ' '
}

case_run() {
	local d=$tmp/run t0 t1
	t0=$(date +%s%N)
	run_grower "$d" 35 --snapshot-every=1
	t1=$(date +%s%N)
	local got
	got=$(snapshot_files "$d" "$gpid")
	# The timer starts before the program (3.5 s) does: 3 files, or 4
	# when heaptrace took more than half a second to start it (a first
	# run reading debug information on a loaded machine).
	case $got in
	"1 2 3 ") ;;
	"1 2 3 4 ")
		[ $(((t1 - t0) / 1000000)) -ge 4000 ] ||
			fail "files .snapshot-[$got] in $(((t1 - t0) / 1000000)) ms"
		;;
	*) fail "files .snapshot-[$got], expected 1 2 3" ;;
	esac
	local k prev=0 c
	for k in 1 2 3; do
		local f=$d/m.$gpid.snapshot-$k
		check_snapshot "$f" || continue
		c=$snap_calls
		# k seconds after the timer started: at most 10 k calls (a few
		# fewer for the start-up), and ten more than a second before.
		[ "$c" -le $((k * 10 + 1)) ] ||
			fail "$f: grow made $c calls, expected at most $((k * 10))"
		[ "$k" = 1 ] || { [ $((c - prev)) -ge 8 ] && [ $((c - prev)) -le 12 ]; } ||
			fail "$f: grow's calls went from $prev to $c in a second, expected about ten more"
		[ "$c" -gt "$prev" ] || fail "$f: grow's calls did not grow ($prev -> $c)"
		prev=$c
		grep -qx "heaptrace: snapshot of process $gpid written to $f" "$d/err" ||
			fail "no stderr line for $f"
	done
	# The final profile: the whole run, 35 calls, everything freed.
	local final=$d/m.$gpid
	[ -s "$final" ] && [ -s "$final.sites" ] || fail "no final profile"
	local calls leaked blocks
	read -r calls leaked blocks < <(grow_site "$final.sites")
	[ "$calls $leaked $blocks" = "35 0 0" ] ||
		fail "$final.sites: grow: $calls $leaked $blocks, expected 35 0 0"
	[ "$(last_heap "$final")" = 0 ] || fail "$final: heap not 0 at the end"
}

case_mixed() {
	local d=$tmp/mixed
	mkdir -p "$d"
	(cd "$d" && timeout 60 "$ht" run --time-unit=ms \
		--massif-out-file="$d/m.%p" --snapshot-every=1 -- "$prog" 35 \
		>"$d/out" 2>"$d/err") &
	local waited=$!
	pids+=("$waited")
	wait_for "$d/out" ready || harness "the program did not say ready"
	gpid=$(awk '/^ready/ { print $2 }' "$d/out")
	wait_for "$d/err" "snapshot-1\$" || fail "no periodic snapshot within 10 s"
	local by_cmd
	by_cmd=$("$ht" snapshot "$gpid") || fail "heaptrace snapshot $gpid: exit $?"
	[ "$by_cmd" = "$d/m.$gpid.snapshot-2" ] ||
		fail "heaptrace snapshot printed '$by_cmd', expected $d/m.$gpid.snapshot-2"
	wait "$waited" || fail "heaptrace run exited $?"
	local got
	got=$(snapshot_files "$d" "$gpid")
	case $got in
	"1 2 3 4 " | "1 2 3 4 5 ") ;; # 5: a slow start, as in case_run
	*) fail "files .snapshot-[$got], expected 1 2 3 4" ;;
	esac
	local k prev=0 c
	for k in 1 2 3 4; do
		check_snapshot "$d/m.$gpid.snapshot-$k" || continue
		c=$snap_calls
		[ "$c" -ge "$prev" ] || fail "snapshot-$k: grow's calls went down ($prev -> $c)"
		prev=$c
	done
}

case_attach() {
	start_target grower out ready "$prog" 80 "$tmp/count"
	local d=$tmp/attach
	mkdir -p "$d"
	timeout 60 "$ht" attach --time-unit=ms --snapshot-every=1 --duration=3 \
		--massif-out-file="$d/m.%p" "$target" >"$d/out" 2>"$d/err"
	local st=$?
	[ "$st" = 0 ] || fail "heaptrace attach: exit $st: $(head -3 "$d/err")"
	local got
	got=$(snapshot_files "$d" "$target")
	case $got in
	"1 2 " | "1 2 3 ") ;;
	*) fail "files .snapshot-[$got], expected 1 2 (3)" ;;
	esac
	local c1 c2
	check_snapshot "$d/m.$target.snapshot-1"
	c1=$snap_calls
	check_snapshot "$d/m.$target.snapshot-2"
	c2=$snap_calls
	if [ -n "$c1" ] && [ -n "$c2" ]; then
		[ $((c2 - c1)) -ge 7 ] && [ $((c2 - c1)) -le 13 ] ||
			fail "grow's calls from snapshot-1 to -2: $c1 -> $c2, expected about ten more"
		# only calls made since the attach
		[ "$c1" -le 11 ] || fail "snapshot-1: $c1 calls of grow within a second of the attach"
	fi
	[ -s "$d/m.$target" ] && [ -s "$d/m.$target.sites" ] ||
		fail "no final profile"
	finish_target grower 15
	[ "$status" = 0 ] || fail "the program exited $status after the detach"
}

case_diff() {
	local d=$tmp/diff
	run_grower "$d" 35 --snapshot-every=1 -q
	[ -s "$d/err" ] && fail "-q: stderr not empty: $(head -2 "$d/err")"
	local a=$d/m.$gpid.snapshot-1 b=$d/m.$gpid.snapshot-3 ca cb
	check_snapshot "$a" || return
	ca=$snap_calls
	check_snapshot "$b" || return
	cb=$snap_calls
	"$ht" diff "$a" "$b" >"$tmp/diff.out" 2>"$tmp/diff.err"
	local st=$?
	[ "$st" = 1 ] || fail "heaptrace diff: exit $st, expected 1 (a site grew): $(head -2 "$tmp/diff.err")"
	local want="+$(((cb - ca) * 10000)) bytes at peak ($((ca * 10000)) -> $((cb * 10000))) in grow (grower.c:"
	grep -qF -- "$want" "$tmp/diff.out" ||
		fail "heaptrace diff does not say [$want...]: $(head -8 "$tmp/diff.out")"
	# steady() did not change: not listed
	grep -q "in steady" "$tmp/diff.out" && fail "heaptrace diff lists steady, which did not change"
	return 0
}

# pprof_bytes FILE FUNCTION: FUNCTION's flat in-use bytes per go tool
# pprof -top.
pprof_bytes() {
	go tool pprof -top -sample_index=inuse_space -unit=B "$1" 2>"$tmp/pprof.err" |
		awk -v fn="$2" '$NF == fn { v = $1; sub(/B$/, "", v); print v; f = 1 }
			END { if (!f) print "none" }'
}

case_pprof() {
	have go || skip "go is not installed (Debian's golang-go)"
	local d=$tmp/pprof
	run_grower "$d" 35 --snapshot-every=1 --pprof=yes
	local f n=0
	for f in "$d/m.$gpid.snapshot-1" "$d/m.$gpid.snapshot-2" \
		 "$d/m.$gpid.snapshot-3" "$d/m.$gpid"; do
		[ -s "$f.pb.gz" ] || { fail "$f.pb.gz: not written"; continue; }
		local calls leaked blocks got
		read -r calls leaked blocks < <(grow_site "$f.sites")
		got=$(pprof_bytes "$f.pb.gz" grow)
		[ "$leaked" = 0 ] && [ "$got" = none ] && { n=$((n + 1)); continue; }
		[ "$got" = "$leaked" ] ||
			fail "$f.pb.gz: go tool pprof -top: grow $got B in use, the .sites $leaked ($(head -1 "$tmp/pprof.err"))"
		n=$((n + 1))
	done
	[ "$n" = 4 ] || fail "$n of 4 pprof files read"
	return 0
}

case_badopt() {
	local v
	for v in 0 x -1 1.5 ''; do
		one_error 2 "heaptrace: --snapshot-every: must be an integer from 1 to 31536000, not '$v'" \
			"$ht" run --snapshot-every="$v" -- "$prog" 1
		one_error 2 "heaptrace: --snapshot-every: must be an integer from 1 to 31536000, not '$v'" \
			"$ht" attach --snapshot-every="$v" 1
	done
	one_error 2 "heaptrace: --pprof: must be 'yes' or 'no', not 'maybe'" \
		"$ht" run --pprof=maybe -- "$prog" 1
	ls massif.out.* >/dev/null 2>&1 && fail "a profile was written"
	return 0
}

cd "$tmp" || exit 99
case $case_name in
run) case_run ;;
mixed) case_mixed ;;
attach) case_attach ;;
diff) case_diff ;;
pprof) case_pprof ;;
badopt) case_badopt ;;
*)
	echo "periodic.sh: unknown case '$case_name'" >&2
	exit 99
	;;
esac
pass_or_fail "PASS: $case_name"
