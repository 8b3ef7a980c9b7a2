#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --time-unit=ms times are the calls' times, not when heaptrace learnt of
# them. SLEEPY (progs/sleepy.c) makes two calls 300 ms apart; under the
# inline backend it stops heaptrace from 30 ms before the first call to
# 200 ms after it, with 20000 more calls in a deep ring behind the first
# (its time stamp must come from the target, not from the drain, then
# 200 ms late); under the ptrace backend it runs as it is (every call
# stops, its time is read at the stop). Both profiles must have the two
# blocks' first snapshots 300 ms apart (+TOLERANCE, -SLACK), and agree
# with each other within TOLERANCE.
# Exit 0 pass, 1 fail, 77 skip (python3, or a TSC that cannot time calls:
# the inline backend then times records when drained), 99 harness error.
#
# usage: timing.sh HEAPTRACE SLEEPY
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

heaptrace=$1
sleepy=$2
expect_ms=300
tolerance_ms=50
slack_ms=10
pairs=20000
ring=$((64 << 20)) # about 500 bytes a pair of calls: 10 MB

need python3
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
for f in constant_tsc nonstop_tsc; do
	case " $flags " in
	*" $f "*) ;;
	*) skip "no $f in /proc/cpuinfo: inline records are timed when drained" ;;
	esac
done

scratch

# "FIRST SECOND": the times of the first snapshots holding the first block
# (100000 bytes or more) and both blocks (300000 or more).
block_times() {
	python3 - "$1" <<'EOF'
import re, sys
snaps = []
for line in open(sys.argv[1]):
    m = re.match(r"(time|mem_heap_B)=(\d+)$", line.strip())
    if m and m.group(1) == "time":
        snaps.append({"time": int(m.group(2))})
    elif m:
        snaps[-1]["heap"] = int(m.group(2))
first = [s["time"] for s in snaps if s.get("heap", 0) >= 100000]
both = [s["time"] for s in snaps if s.get("heap", 0) >= 300000]
if not first or not both:
    sys.exit("no snapshot with the blocks")
print(first[0], both[0])
EOF
}

declare -A gap
for b in inline ptrace; do
	args=()
	[ "$b" = inline ] && args=("$pairs" stop)
	timeout -k 5 60 "$heaptrace" run -q --backend="$b" --time-unit=ms \
		--ring-size="$ring" --massif-out-file="$tmp/$b.out" -- \
		"$sleepy" ${args[@]+"${args[@]}"} >"$tmp/$b.log" 2>&1
	st=$?
	if [ "$st" -ne 0 ]; then
		cat "$tmp/$b.log"
		fail "$b: heaptrace exited with $st"
		continue
	fi
	if ! times=$(block_times "$tmp/$b.out"); then
		grep -E '^(time|mem_heap_B)=' "$tmp/$b.out" | paste - - | head -n 40
		fail "$b: no snapshots of the blocks"
		continue
	fi
	read -r t1 t2 <<<"$times"
	gap[$b]=$((t2 - t1))
	echo "$b: first block at $t1 ms, both at $t2 ms: ${gap[$b]} ms apart"
	if [ "${gap[$b]}" -lt $((expect_ms - slack_ms)) ] ||
		[ "${gap[$b]}" -gt $((expect_ms + tolerance_ms)) ]; then
		fail "$b: the calls were $expect_ms ms apart"
	fi
done
if [ -n "${gap[inline]-}" ] && [ -n "${gap[ptrace]-}" ]; then
	d=$((gap[inline] - gap[ptrace]))
	if [ "${d#-}" -gt "$tolerance_ms" ]; then
		fail "the backends disagree by ${d#-} ms"
	fi
fi
pass_or_fail PASS
