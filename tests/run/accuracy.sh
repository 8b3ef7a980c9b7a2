#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Accuracy of sampled profiling (`--sampling-interval`) on
# progs/accuracy.c, whose sites hold 128, 64 and 32 MiB in 1 MiB blocks and
# 16 MiB in 256 B blocks at the peak, after 1 GiB of short-lived churn
# (see its header). One exact run (no sampling), whose figures must be the
# program's to the byte, then `--sampling-interval=64K` with a fixed
# seed, whose figures are compared with the exact run's, site by site
# (found by function in the .sites file and in the peak snapshot's tree):
#   - the three 1 MiB-block sites, larger blocks than the interval,
#     recorded at their true size: calls, allocated, peak, peak blocks
#     and tree entry exact to the byte and block;
#   - hold_16 (peak, peak blocks, allocated, tree entry) and churn_block
#     (allocated) within 25 % of the exact figure; churn_block holds
#     nothing at the peak, in both (the frees of its sampled blocks all
#     recorded); its temporary blocks, 0 in the exact run (each block is
#     freed 32 calls after it was made), are printed: the sampled count
#     is biased upward (README, "Sampled profiling");
#   - the .sites `sampling:` line and the Massif `desc:` line name the
#     interval and the seed;
#   - a second run with the same seed: the same figures.
#
# Why 25 % is safe for any seed (the seed is fixed, so the test is
# deterministic; the bound must still hold for whatever seed a change of
# the sampler's draws amounts to): sample points fall on the bytes
# allocated as a Poisson process of rate 1/B (B the interval), and a site
# of T bytes in blocks much smaller than B is estimated as B times the
# points that fell in it: mean T, standard error sqrt(T*B), relatively
# sqrt(B/T). hold_16: sqrt(64 KiB / 16 MiB) = 1/16 = 6.25 %, so 25 % is
# 4 standard errors (a count of mean 256, about 6e-5 two-sided); its
# blocks, all of 256 B, are that count times B / 256, the same error;
# churn_block: sqrt(64 KiB / 1 GiB) = 0.8 %, 25 % is 32 of them.
#
# usage: accuracy.sh HEAPTRACE PROG
# Exit 0 pass, 1 fail, 99 harness error.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 2 ] || usage "accuracy.sh HEAPTRACE PROG"
ht=$(abspath "$1")
prog=$(abspath "$2")
need_exec "$ht" "$prog"
need timeout awk python3
scratch --keep

SEED=2025
INTERVAL=65536
FUNCS="hold_128 hold_64 hold_32 hold_16 churn_block"

# run NAME OPTION...: heaptrace run -q OPTIONS PROG in $tmp/NAME, the
# figures of FUNCS in $tmp/NAME.fig; $profile the Massif file. A failed
# run or a missing profile is a failure, and no figures.
run() {
	local name=$1 status
	shift
	mkdir -p "$tmp/$name" || exit 99
	(cd "$tmp/$name" && timeout 120 "$ht" run -q --time-unit=B \
		"--massif-out-file=m.%p" "$@" "$prog" \
		>"$tmp/$name.out" 2>"$tmp/$name.err")
	status=$?
	if [ "$status" != 0 ]; then
		fail "$name: status $status: $(head -3 "$tmp/$name.err")"
		return 1
	fi
	profile=$(ls "$tmp/$name"/m.* 2>/dev/null | grep -v '\.sites$' | head -1)
	if [ -z "$profile" ] || [ ! -f "$profile.sites" ]; then
		fail "$name: no profile with its .sites file"
		: >"$tmp/$name.fig"
		return 1
	fi
	"$here/site_figures.py" "$profile" $FUNCS >"$tmp/$name.fig" ||
		fail "$name: site_figures.py failed"
}

# fig NAME FUNCTION KEY: the figure KEY of FUNCTION in run NAME.
fig() {
	awk -v fn="$2" -v key="$3" '$1 == fn {
		for (i = 2; i <= NF; i++)
			if (index($i, key "=") == 1) print substr($i, length(key) + 2)
	}' "$tmp/$1.fig"
}

# exact NAME FUNCTION KEY WANT: that figure is WANT.
exact() {
	local got
	got=$(fig "$1" "$2" "$3")
	[ "$got" = "$4" ] || fail "$1: $2 $3=$got, want $4"
}

# within NAME FUNCTION KEY WANT PCT: that figure is within PCT % of WANT.
within() {
	local got
	got=$(fig "$1" "$2" "$3")
	awk -v g="${got:-x}" -v w="$4" -v p="$5" 'BEGIN {
		if (g !~ /^[0-9]+$/) exit 1
		d = g - w; if (d < 0) d = -d
		exit !(d <= w * p / 100)
	}' || fail "$1: $2 $3=$got, not within $5 % of $4"
	echo "$1: $2 $3=$got, exact $4 ($(awk -v g="${got:-0}" -v w="$4" \
		'BEGIN { printf "%+.2f %%", (g - w) * 100 / w }'))"
}

# --- exact: the program's own figures, to the byte
run exact || pass_or_fail
MIB=1048576
exact exact hold_128 peak $((128 * MIB))
exact exact hold_64 peak $((64 * MIB))
exact exact hold_32 peak $((32 * MIB))
exact exact hold_16 peak $((16 * MIB))
exact exact churn_block peak 0
exact exact churn_block allocated 1073741824
exact exact churn_block calls 1124091
exact exact churn_block temporary 0
exact exact hold_16 calls 65536
exact exact hold_16 peak_blocks 65536
exact exact hold_128 peak_blocks 128
for f in hold_128 hold_64 hold_32 hold_16; do
	exact exact "$f" sites 1
	exact exact "$f" tree "$(fig exact "$f" peak)"
	exact exact "$f" allocated "$(fig exact "$f" peak)"
done
grep -qx 'heap=251658240' "$tmp/exact.fig" || fail "exact: peak line: $(grep heap= "$tmp/exact.fig")"
grep -qx 'sampling: none' "$tmp/exact.fig" || fail "exact: a sampling line in the .sites file"
if [ "$fails" != 0 ]; then
	show "$tmp/exact.fig"
	pass_or_fail
fi

# --- sampled at 64 KiB with a fixed seed
run sampled "--sampling-interval=64K" "--sampling-seed=$SEED" || pass_or_fail
grep -qx "sampling: interval=$INTERVAL seed=$SEED" "$tmp/sampled.fig" ||
	fail "sampled: .sites sampling line: $(grep '^sampling' "$tmp/sampled.fig")"
if [ -n "$profile" ]; then
	desc=$(grep -m1 '^desc:' "$profile")
	case " $desc " in
	*" --sampling-interval=$INTERVAL "*) ;;
	*) fail "sampled: the desc: line names no --sampling-interval=$INTERVAL: $desc" ;;
	esac
	case " $desc " in
	*" --sampling-seed=$SEED "*) ;;
	*) fail "sampled: the desc: line names no --sampling-seed=$SEED: $desc" ;;
	esac
fi
for f in hold_128 hold_64 hold_32; do
	for k in calls allocated peak peak_blocks tree sites; do
		exact sampled "$f" "$k" "$(fig exact "$f" "$k")"
	done
done
for k in peak peak_blocks allocated tree; do
	within sampled hold_16 "$k" "$(fig exact hold_16 "$k")" 25
done
echo "sampled: churn_block temporary=$(fig sampled churn_block temporary) of calls=$(fig sampled churn_block calls), exact 0 (biased: unsampled calls unseen)"
within sampled churn_block allocated "$(fig exact churn_block allocated)" 25
exact sampled churn_block peak 0
exact sampled churn_block tree 0
# The peak heap: the three exact sites plus hold_16's estimate, nothing
# of churn_block's left.
heap=$(sed -n 's/^heap=//p' "$tmp/sampled.fig")
[ "$heap" = $((224 * MIB + $(fig sampled hold_16 peak) + 0)) ] ||
	fail "sampled: peak heap $heap is not 224 MiB + hold_16's $(fig sampled hold_16 peak)"

# --- the same seed again: the same estimates
run again "--sampling-interval=64K" "--sampling-seed=$SEED"
cmp -s "$tmp/sampled.fig" "$tmp/again.fig" ||
	fail "the same seed gave other figures: $(diff "$tmp/sampled.fig" "$tmp/again.fig" | tr '\n' ' ')"

if [ "$fails" != 0 ]; then
	show "$tmp/exact.fig"
	show "$tmp/sampled.fig"
fi
pass_or_fail "exact to the byte where it must be, estimates within 25 %"
