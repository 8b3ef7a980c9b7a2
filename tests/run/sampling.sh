#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --sampling-interval (README, "Sampled profiling") on progs/sampled.c,
# whose totals follow from its source (see its header). Sampled figures
# are estimates: with a fixed seed each is checked against the truth
# within 5 standard deviations of the estimate, sqrt(interval x bytes)
# (the sample points are a Poisson process of rate 1/interval over the
# bytes; blocks of at least the interval are exact). Interval 8K here.
#
# usage: sampling.sh HEAPTRACE PROG CASE
#   inline, ptrace  `run --sampling-interval=8K --sampling-seed=1
#                   --time-unit=B --stats=yes PROG one` under that
#                   backend (ptrace: `one 10`, a tenth of the small
#                   calls): each site's peak bytes (small 20,000,000,
#                   grow 8,192,000 within 5 sd; big 10,485,760 exact;
#                   churn 0), churn's allocated bytes and small's calls
#                   within 5 sd; the block counts, estimates too: blocks
#                   at the peak (small 200,000, grow 2,000 within 5 sd of
#                   a count of their bytes at their one size; big 10
#                   exact), churn's 1,000,000 temporary blocks within 5 sd
#                   and small's 0, no block left at the end; records (inline: the ring's; ptrace:
#                   the engine's events) under 2% of the calls; the
#                   desc: line, the .sites sampling: line, the summary
#                   line
#   seed            the same seed twice: the same .sites file but for its
#                   pid line (and addresses, were ASLR on); another seed:
#                   another file
#   threads         PROG threads: small 80,000,000 and grow 32,768,000
#                   within 5 sd, their blocks at the peak (800,000 and
#                   8,000) too, big exact
#   fork, ptrace-fork
#                   PROG fork (ptrace: fork 10, a tenth of the small
#                   calls), under inline and ptrace (whose sampled-address
#                   set is the tracer's own, copied at the fork): the
#                   parent's sites as in `inline`, nothing left at its
#                   end, the child's small sites 40,000,000 at its peak (its
#                   parent's blocks and its own) within 5 sd, and every
#                   inherited block's free found (nothing left at the
#                   child's end)
#   refused         sampling with --leak-check, --massif-compat=yes,
#                   --pages-as-heap=yes, malformed intervals and seeds,
#                   under run and attach: one line, exit 2
#   exact           no sampling: no sampling: line, no sampling option
#                   on the desc: line, every figure exact (the block
#                   counts too)
# Exit 0 pass, 1 fail, 99 harness error.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

ht_prog_case "sampling.sh HEAPTRACE PROG CASE" "$@"
need timeout awk
scratch --keep

T=8192

# run NAME OPTION... -- ARGS...: heaptrace run OPTIONS PROG ARGS in
# $tmp/NAME (profiles m.%p); its status in $status, its stderr in
# $tmp/NAME.err.
run() {
	local name=$1 opts=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	mkdir -p "$tmp/$name" || exit 99
	(cd "$tmp/$name" && timeout 300 ${norandom[@]+"${norandom[@]}"} \
		"$ht" run --time-unit=B --massif-out-file=m.%p "${opts[@]}" \
		"$prog" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err")
	status=$?
	[ "$status" -eq 0 ] || { fail "$name: exit $status"; show "$tmp/$name.err"; }
}

# profiles NAME: the profiles of run NAME, in pid order.
profiles() {
	ls "$tmp/$1"/m.* 2>/dev/null | grep -v '\.sites$' | sort -t. -k2 -n
}

# field FILE FUNCTION KEY: KEY's value on the site: line of the site of
# FILE with a frame of FUNCTION (sites.sh's site_line; the frames under
# their site as version 1 has them: tests/lib.sh's sites_v1).
field() {
	sites_v1 "$1" | awk -v fn="$2" -v key="$3" '
		/^site: / { cur = $0; next }
		/^frame: / {
			line = $0
			sub(/^frame: 0x[0-9A-F]+ /, "", line)
			split(line, a, "\t")
			if (a[1] == fn && cur != "") {
				n = split(cur, f, " ")
				for (i = 1; i <= n; i++)
					if (index(f[i], key "=") == 1)
						print substr(f[i], length(key) + 2)
				cur = ""
			}
		}'
}

# near WHAT GOT TRUTH BYTES: GOT is within 5 sd of TRUTH, the sd of an
# estimate of BYTES bytes being sqrt(T x BYTES), in units of TRUTH / BYTES
# (calls: BYTES / size).
near() {
	awk -v got="$2" -v truth="$3" -v bytes="$4" -v t="$T" 'BEGIN {
		sd = sqrt(t * bytes) * truth / bytes
		d = got - truth; if (d < 0) d = -d
		exit !(got != "" && d <= 5 * sd)
	}' || fail "$1: $2, want $3 within 5 sd ($(awk -v b="$4" -v t="$T" -v tr="$3" 'BEGIN { printf "%.0f", 5 * sqrt(t * b) * tr / b }'))"
}

# exact WHAT GOT WANT
exact() {
	[ "$2" = "$3" ] || fail "$1: $2, want $3"
}

# check_one SITES [N]: the figures of PROG one N (small, grow and churn
# divided by N, 1 by default).
check_one() {
	local s=$1 n=${2:-1}
	near "small peak" "$(field "$s" small peak)" $((20000000 / n)) $((20000000 / n))
	near "small calls" "$(field "$s" small calls)" $((200000 / n)) $((20000000 / n))
	near "grow peak" "$(field "$s" grow peak)" $((8192000 / n)) $((8192000 / n))
	exact "big peak" "$(field "$s" big peak)" 10485760
	exact "big calls" "$(field "$s" big calls)" 10
	near "churn allocated" "$(field "$s" churn allocated)" $((64000000 / n)) $((64000000 / n))
	exact "churn peak" "$(field "$s" churn peak)" 0
	# a block of S bytes and weight W counts as W / S blocks: within the
	# sd of the bytes, in blocks of the site's one size
	near "small peak_blocks" "$(field "$s" small peak_blocks)" $((200000 / n)) $((20000000 / n))
	near "grow peak_blocks" "$(field "$s" grow peak_blocks)" $((2000 / n)) $((8192000 / n))
	exact "big peak_blocks" "$(field "$s" big peak_blocks)" 10
	near "churn temporary" "$(field "$s" churn temporary)" $((1000000 / n)) $((64000000 / n))
	exact "small temporary" "$(field "$s" small temporary)" 0
	grep -q '^totals: .* leaked=0 leaked_blocks=0$' "$s" ||
		fail "blocks left at the end: $(grep '^totals:' "$s")"
}

# check_marks NAME SITES PROFILE: what says the profile is sampled.
check_marks() {
	grep -q "^desc: .*--sampling-interval=$T --sampling-seed=1\$" "$3" ||
		fail "$1: desc line: $(grep '^desc:' "$3")"
	[ "$(sed -n 5p "$2")" = "sampling: interval=$T seed=1" ] ||
		fail "$1: .sites line 5: $(sed -n 5p "$2")"
	grep -q "; sampled every $T bytes: figures are estimates" \
		"$tmp/$1.err" || fail "$1: no estimate on the summary line"
}

# Calls PROG one N makes: churn 2,000,000, small 200,000, big 10, grow
# 2,000 x 9 (malloc and realloc), and their frees.
calls() {
	echo $(((2000000 + 200000 * 2 + 2000 * 10) / $1 + 10 * 2))
}

norandom=()
case $case_name in
inline | ptrace)
	# a stop per call: a tenth of the calls
	n=1
	[ "$case_name" = ptrace ] && n=10
	run "$case_name" --backend="$case_name" --sampling-interval=8K \
		--sampling-seed=1 --stats=yes -- one $n
	p=$(profiles "$case_name" | head -1)
	check_one "$p.sites" $n
	check_marks "$case_name" "$p.sites" "$p"
	if [ "$case_name" = inline ]; then
		recs=$(sed -n 's/.*sampling: \([0-9]*\) allocations passed over in the target, \([0-9]*\) records.*/\2/p' "$tmp/$case_name.err")
	else
		recs=$(sed -n 's/.*stats: process [0-9]*: \([0-9]*\) events.*/\1/p' "$tmp/$case_name.err" | head -1)
	fi
	[ -n "$recs" ] && [ "$recs" -lt $(($(calls $n) / 50)) ] ||
		fail "$case_name: ${recs:-no} records for $(calls $n) calls"
	[ "$fails" = 0 ] || show "$p.sites"
	;;
seed)
	no_aslr
	for n in a b; do
		run "$n" --sampling-interval=8K --sampling-seed=5 -- one
	done
	run c --sampling-interval=8K --sampling-seed=6 -- one
	# addresses masked too, where ASLR cannot be turned off
	for n in a b c; do
		grep -v '^pid: ' "$(profiles $n | head -1).sites" |
			sed 's/^frame: \([0-9]*\) 0x[0-9A-F]* /frame: \1 0x? /' >"$tmp/$n.sites"
	done
	cmp -s "$tmp/a.sites" "$tmp/b.sites" ||
		{ fail "seed 5 twice: the .sites files differ"; diff "$tmp/a.sites" "$tmp/b.sites" | head -20; }
	cmp -s "$tmp/a.sites" "$tmp/c.sites" &&
		fail "seeds 5 and 6: the same .sites file"
	;;
threads)
	run threads --sampling-interval=8K --sampling-seed=1 -- threads
	s=$(profiles threads | head -1).sites
	near "small peak" "$(field "$s" small peak)" 80000000 80000000
	near "grow peak" "$(field "$s" grow peak)" 32768000 32768000
	near "small peak_blocks" "$(field "$s" small peak_blocks)" 800000 80000000
	near "grow peak_blocks" "$(field "$s" grow peak_blocks)" 8000 32768000
	exact "big peak" "$(field "$s" big peak)" 10485760
	exact "big peak_blocks" "$(field "$s" big peak_blocks)" 10
	[ "$fails" = 0 ] || show "$s"
	;;
fork | ptrace-fork)
	n=1
	backend=inline
	[ "$case_name" = ptrace-fork ] && n=10 && backend=ptrace
	run fork --backend=$backend --sampling-interval=8K --sampling-seed=1 \
		-- fork $n
	mapfile -t ps < <(profiles fork)
	[ "${#ps[@]}" -eq 2 ] || fail "fork: ${#ps[@]} profiles, want 2"
	check_one "${ps[0]}.sites" $n
	grep -q '^totals: .* leaked=0 leaked_blocks=0$' "${ps[0]}.sites" ||
		fail "parent: blocks left: $(grep '^totals:' "${ps[0]}.sites")"
	s=${ps[1]}.sites
	# two sites: the inherited blocks' (the parent's stack) and its own
	near "child's small peak" "$(field "$s" small peak | awk '{ t += $1 } END { print t }')" $((40000000 / n)) $((40000000 / n))
	# every inherited block freed in the child: nothing left
	grep -q '^totals: .* leaked=0 leaked_blocks=0$' "$s" ||
		fail "child: blocks left: $(grep '^totals:' "$s")"
	[ "$fails" = 0 ] || { show "${ps[0]}.sites"; show "$s"; }
	;;
refused)
	one_error 2 "heaptrace: --sampling-interval cannot be used with --leak-check: its figures would be estimates where exact ones are asked for" \
		"$ht" run --sampling-interval=512K --leak-check=summary "$prog" one
	one_error 2 "heaptrace: --sampling-interval cannot be used with --massif-compat=yes: its figures would be estimates where exact ones are asked for" \
		"$ht" run --sampling-interval=512K --massif-compat=yes "$prog" one
	one_error 2 "heaptrace: --sampling-interval cannot be used with --pages-as-heap=yes: its figures would be estimates where exact ones are asked for" \
		"$ht" run --pages-as-heap=yes --sampling-interval=1 "$prog" one
	one_error 2 "heaptrace: --sampling-interval cannot be used with --leak-check: its figures would be estimates where exact ones are asked for" \
		"$ht" attach --sampling-interval=4K --leak-check=full 1
	for bad in 12X -1 2T K 1.5K 2097152G ""; do
		one_error 2 "heaptrace: --sampling-interval: must be a number of bytes from 0 to 1099511627776, with an optional suffix K, M or G, not '$bad'" \
			"$ht" run --sampling-interval="$bad" "$prog" one
	done
	for bad in x -3 18446744073709551616 1e3 ""; do
		one_error 2 "heaptrace: --sampling-seed: must be a decimal integer from 0 to 18446744073709551615, not '$bad'" \
			"$ht" run --sampling-seed="$bad" "$prog" one
	done
	;;
exact)
	run exact -- one
	p=$(profiles exact | head -1)
	grep -q '^sampling:' "$p.sites" && fail "exact: a sampling: line"
	grep -q '^desc: .*sampling' "$p" && fail "exact: sampling on the desc: line"
	grep -q 'estimates' "$tmp/exact.err" && fail "exact: estimates on the summary line"
	exact "small peak" "$(field "$p.sites" small peak)" 20000000
	exact "small calls" "$(field "$p.sites" small calls)" 200000
	exact "grow peak" "$(field "$p.sites" grow peak)" 8192000
	exact "grow calls" "$(field "$p.sites" grow calls)" 18000
	exact "churn allocated" "$(field "$p.sites" churn allocated)" 64000000
	exact "small peak_blocks" "$(field "$p.sites" small peak_blocks)" 200000
	exact "grow peak_blocks" "$(field "$p.sites" grow peak_blocks)" 2000
	exact "big peak_blocks" "$(field "$p.sites" big peak_blocks)" 10
	exact "churn temporary" "$(field "$p.sites" churn temporary)" 1000000
	exact "small temporary" "$(field "$p.sites" small temporary)" 0
	[ "$fails" = 0 ] || show "$p.sites"
	;;
*)
	echo "sampling.sh: unknown case $case_name" >&2
	exit 99
	;;
esac

[ "$fails" -eq 0 ] || echo "$fails failure(s)"
pass_or_fail PASS
