#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Wall time of native runs, heaptrace, Massif and heaptrack, measured side by
# side in one sitting, as medians of RUNS runs, printed as ratios to native.
# Usage: bench/run-bench.sh [BUILD_DIR] (default build); RUNS=3 by default,
# PTRACE_RUNS=1 (the ptrace backend takes minutes on the cc1 case).
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${RUNS:-3}
PTRACE_RUNS=${PTRACE_RUNS:-1}
HT="$BUILD/heaptrace"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

cc -O2 -o "$W/compute" bench/compute.c

# Seconds taken by the command, as a decimal.
timed() {
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1 </dev/null || true
	e=$(date +%s.%N)
	echo "$e - $s" | bc -l
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# median_time CMD...: run CMD RUNS times, print the median.
median_time() {
	median_of "$RUNS" "$@"
}

# median_of N CMD...: run CMD N times, print the median.
median_of() {
	n=$1; shift
	for i in $(seq "$n"); do timed "$@"; done | median
}

have() { command -v "$1" >/dev/null 2>&1; }

# Peak resident memory, in KiB, of the command (and what it waits for).
peak_kib() {
	/usr/bin/time -f '%M' -o "$W/rss" "$@" >/dev/null 2>&1 </dev/null || true
	tail -1 "$W/rss"
}

bench_one() {
	name=$1; shift
	native=$(median_time "$@")
	ht=$(median_time "$HT" run -q --backend=inline --time-unit=B --massif-out-file="$W/ht.out" -- "$@")
	htp=$(median_of "$PTRACE_RUNS" "$HT" run -q --backend=ptrace --time-unit=B --massif-out-file="$W/ht.out" -- "$@")
	"$HT" run --stats=yes -q --time-unit=B --massif-out-file="$W/ht.out" -- "$@" \
		>/dev/null 2>"$W/stats" </dev/null || true
	events=$(sed -n 's/.*stats: process [0-9]*: \([0-9]*\) events.*/\1/p' "$W/stats" | head -1)
	if have valgrind; then
		ms=$(median_time valgrind --tool=massif --time-unit=B --massif-out-file="$W/ms.out" "$@")
	else
		ms=
	fi
	if have heaptrack; then
		hk=$(median_time heaptrack -o "$W/hk" "$@")
	else
		hk=
	fi
	printf '%-22s native %7.3fs  heaptrace inline %6.2fx  ptrace %7.2fx  massif %6s  heaptrack %6s  events %9s  ptrace cost/event %s\n' \
		"$name" "$native" "$(echo "$ht / $native" | bc -l)" \
		"$(echo "$htp / $native" | bc -l)" \
		"$( [ -n "$ms" ] && printf '%.2fx' "$(echo "$ms / $native" | bc -l)" || echo n/a)" \
		"$( [ -n "$hk" ] && printf '%.2fx' "$(echo "$hk / $native" | bc -l)" || echo n/a)" \
		"${events:-?}" \
		"$( [ -n "${events:-}" ] && [ "${events:-0}" -ge 1000 ] && printf '%.1f us' "$(echo "($htp - $native) / $events * 1000000" | bc -l)" || echo n/a)"
	if have valgrind; then
		own=$(sed -n "s/.*heaptrace's own peak RSS \([0-9]*\) KiB.*/\1/p" "$W/stats")
		printf '%-22s peak RSS: heaptrace (tracer alone) %s KiB, Massif (valgrind and target: one process) %s KiB\n' \
			"" "${own:-?}" \
			"$(peak_kib valgrind --tool=massif --time-unit=B --massif-out-file="$W/ms.out" "$@")"
	fi
}

echo "heaptrace bench: medians of $RUNS runs, wall time ratio to native ($(nproc) CPUs)"
bench_one "compute-bound" "$W/compute"
PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 export PERL_HASH_SEED PERL_PERTURB_KEYS
bench_one "perl 200k-key hash" perl -e 'my %h; $h{$_} = $_ for 1..200000;'
# --pages-as-heap=yes (two ptrace stops per mmap/munmap/mremap/brk, every
# other syscall free) on the perl case, against Massif's pages-as-heap.
perl_pages() {
	local native ht ms
	native=$(median_time perl -e 'my %h; $h{$_} = $_ for 1..200000;')
	ht=$(median_time "$HT" run -q --pages-as-heap=yes --time-unit=B \
		--massif-out-file="$W/hp.out" -- perl -e 'my %h; $h{$_} = $_ for 1..200000;')
	ms=
	if have valgrind; then
		ms=$(median_time valgrind --tool=massif --pages-as-heap=yes \
			--time-unit=B --massif-out-file="$W/mp.out" \
			perl -e 'my %h; $h{$_} = $_ for 1..200000;')
	fi
	printf '%-22s native %7.3fs  heaptrace --pages-as-heap %6.2fx  massif --pages-as-heap %6s\n' \
		"perl, pages-as-heap" "$native" "$(echo "$ht / $native" | bc -l)" \
		"$( [ -n "$ms" ] && printf '%.2fx' "$(echo "$ms / $native" | bc -l)" || echo n/a)"
}
perl_pages
# gcc's cc1 at -O2 on a few thousand lines of C, generated (deterministic).
cc1=$(cc -print-prog-name=cc1)
if [ -x "$cc1" ]; then
	awk -v N=150 -f bench/gen-c.awk > "$W/big.c"
	bench_one "cc1 -O2 ($(wc -l < "$W/big.c") lines)" "$cc1" -quiet -O2 "$W/big.c" -o /dev/null
fi
# What one event costs on each side: the stub in the target, the unwind
# in the tracer (for stacks the stub could not walk, and the ptrace path).
meson test -C "$BUILD" --no-rebuild --verbose inline-bench bench 2>&1 |
	grep -E '^(ns per call|direct|stub,|unwind per event|cached lookup)' |
	sed 's/^/per event: /'
"$BUILD/bench/engine_bench" 2000000 | sed 's/^/engine alone: /'
