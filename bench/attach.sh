#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Work rate of a running allocation-heavy service: natively, while
# `heaptrace attach` profiles it, after heaptrace has detached, and while
# `heaptrack -p` is injected into it, measured side by side in one sitting,
# as medians of RUNS runs of per-run ratios to native.
# Two services: bench/service.pl (perl, hash work) and bench/service.c (two
# threads of malloc/free over a few MB of live blocks). Each reports its
# work count and its own monotonic clock in a small file every 50-100 ms,
# so the rate is read without touching the process being profiled.
# Usage: bench/attach.sh [BUILD_DIR] (default build); RUNS=3 by default,
# WINDOW=3 (seconds per measured window, a whole number), INSTALL=1 to
# apt-get install heaptrack (and gdb, which its -p needs) when missing.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${RUNS:-3}
WINDOW=${WINDOW:-3}
HT="$BUILD/heaptrace"
if [ ! -x "$HT" ]; then
	echo "bench/attach.sh: no $HT: build it first (ninja -C $BUILD)" >&2
	exit 1
fi
# Attach set-up (seizing threads, placing probes) is not the steady state
# being measured: every window starts this long after it.
SETTLE=0.5

have() { command -v "$1" >/dev/null 2>&1; }

if [ "${INSTALL:-0}" = 1 ] && ! { have heaptrack && have gdb; }; then
	{ apt-get update -qq && apt-get install -y -qq heaptrack gdb; } \
		>/dev/null 2>&1 || echo "bench/attach.sh: could not install heaptrack" >&2
fi
if have heaptrack && have gdb; then HK=yes; else HK=; fi

W=$(mktemp -d)
# What is running now, for the exit trap: the service, and the process
# group of the profiler's `timeout` wrapper (timeout puts itself and all
# it starts, heaptrack's gdb and interpreter included, in one group).
SVC=
PROF=
cleanup() {
	[ -z "$SVC" ] || kill -KILL "$SVC" 2>/dev/null || true
	if [ -n "$PROF" ]; then
		# heaptrace detaches at SIGINT; the service is gone anyway.
		kill -INT -- "-$PROF" 2>/dev/null || true
		sleep 1
		kill -KILL -- "-$PROF" 2>/dev/null || true
	fi
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

cc -std=c11 -O2 -g -pthread -Wall -Wextra -o "$W/service" bench/service.c

# Deterministic hashing: every perl run does the same work.
PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 export PERL_HASH_SEED PERL_PERTURB_KEYS

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

alive() { kill -0 "$SVC" 2>/dev/null && [ -z "$(zombie)" ]; }
# A service that died is a zombie until reaped, and kill -0 still
# succeeds on a zombie.
zombie() { awk '$1 == "State:" && $2 == "Z"' "/proc/$SVC/status" 2>/dev/null; }

# start_service CMD...: start it, wait (bounded) for its first report,
# then let it reach its steady state.
start_service() {
	rm -f "$W/count"
	"$@" "$W/count" >/dev/null 2>"$W/service.err" </dev/null &
	SVC=$!
	for _ in $(seq 100); do
		[ -s "$W/count" ] && break
		sleep 0.1
	done
	[ -s "$W/count" ] || { echo "service did not start: $(head -1 "$W/service.err")" >&2; return 1; }
	sleep 1
}

# A service that does not die of SIGTERM within 5 s (stopped under a
# debugger that hangs) gets SIGKILL, which nothing can hold up.
stop_service() {
	kill -TERM "$SVC" 2>/dev/null || true
	for _ in $(seq 50); do
		alive || break
		sleep 0.1
	done
	kill -KILL "$SVC" 2>/dev/null || true
	wait "$SVC" 2>/dev/null || true
	SVC=
}

# CPU time the service has used so far, in clock ticks (utime + stime;
# the fields are counted after the command name, which may hold spaces).
ticks() { sed 's/.*) //' "/proc/$SVC/stat" | awk '{ print $12 + $13 }'; }
HZ=$(getconf CLK_TCK)

# Units per second over the next WINDOW seconds, on the service's clock;
# "died" if the service did not live through the window. The CPUs the
# service used meanwhile go to $W/cpu: on these shared machines a native
# rate far off its usual is told apart from a slow profiler by it.
rate() {
	k0=$(ticks)
	read -r u0 t0 < "$W/count"
	sleep "$WINDOW"
	read -r u1 t1 < "$W/count"
	if ! alive; then echo died; echo - >> "$W/cpu"; return; fi
	k1=$(ticks)
	awk -v k="$((k1 - k0))" -v hz="$HZ" -v w="$WINDOW" \
		'BEGIN { printf "%.2f\n", k / hz / w }' >> "$W/cpu"
	# A service too slowed down to report within the window did no
	# measurable work in it.
	awk -v u0="$u0" -v t0="$t0" -v u1="$u1" -v t1="$t1" \
		'BEGIN { if (t1 > t0) printf "%.0f\n", (u1 - u0) / (t1 - t0); else print 0 }'
}

# ratio RATE NATIVE: RATE / NATIVE, or RATE itself when it is a word
# (died, fail, n/a).
ratio() {
	case $1 in
	*[!0-9.]*|'') echo "$1" ;;
	*) awk -v a="$1" -v n="$2" 'BEGIN { if (n + 0 > 0) printf "%.3f\n", a / n; else print "?" }' ;;
	esac
}

# peak_site MASSIF_FILE: "BYTES SITE", the largest total (useful + extra)
# of any snapshot, and the first child of the peak snapshot's tree.
peak_site() {
	awk '
	/^mem_heap_B=/ { h = substr($0, 12) + 0 }
	/^mem_heap_extra_B=/ { t = h + substr($0, 18); if (t > peak) peak = t }
	/^heap_tree=/ { inpeak = ($0 == "heap_tree=peak"); next }
	inpeak && site == "" && /^ n[0-9]+:/ {
		site = $0
		sub(/^ n[0-9]+: [0-9]+ /, "", site)
		sub(/^0x[0-9A-Fa-f]+: /, "", site)
	}
	END { printf "%d %s\n", peak, (site == "" ? "?" : site) }' "$1"
}

# Wait (bounded, SECS in tenths) until the service has a tracer, or not.
wait_tracer() {
	want=$1; n=$2
	while [ "$n" -gt 0 ]; do
		tp=$(awk '$1 == "TracerPid:" { print $2 }' "/proc/$SVC/status" 2>/dev/null || echo 0)
		if [ "$want" = yes ] && [ "${tp:-0}" != 0 ]; then return 0; fi
		if [ "$want" = no ] && [ "${tp:-0}" = 0 ]; then return 0; fi
		n=$((n - 1))
		sleep 0.1
	done
	return 1
}

# one_run NAME CMD...: one service lifetime; appends "native heaptrace
# after heaptrack peak" to $W/res.NAME, the rates as ratios to native.
one_run() {
	name=$1; shift
	: > "$W/cpu"
	start_service "$@"
	native=$(rate)

	# heaptrace: the attached window fits inside --duration with a second
	# to spare; the timeout only guards against a hang (SIGINT first: it
	# makes heaptrace detach and write its profile).
	dur=$((WINDOW + 2))
	out="$W/massif.$name"
	rm -f "$out"
	timeout -s INT -k 10 $((dur + 60)) "$HT" attach --time-unit=ms \
		--duration="$dur" --massif-out-file="$out" "$SVC" \
		>/dev/null 2>"$W/ht.err" </dev/null &
	PROF=$!
	if wait_tracer yes 50; then
		sleep "$SETTLE"
		ht=$(rate)
	else
		ht=fail
	fi
	st=0
	wait "$PROF" || st=$?
	PROF=
	# The summary line names the backend that did the work.
	sed -n 's/^heaptrace: .*(\([^)]*\))$/\1/p' "$W/ht.err" | tail -1 >> "$W/backend"
	if [ "$st" != 0 ]; then
		echo "$name: heaptrace attach exited $st: $(grep -v '^heaptrace: peak' "$W/ht.err" | head -1)" >&2
		[ "$ht" = died ] || ht=fail
	fi
	if [ -s "$out" ]; then peak=$(peak_site "$out"); else peak="0 ?"; fi

	if alive; then
		wait_tracer no 50 || true
		sleep "$SETTLE"
		after=$(rate)
	else
		after=died
	fi

	# heaptrack -p stays until the process exits: its window comes last,
	# then the service is stopped and heaptrack left to finish its file.
	hk=n/a
	if [ -n "$HK" ] && alive; then
		timeout -k 5 120 heaptrack -o "$W/hk.$name" -p "$SVC" \
			>"$W/hk.log" 2>&1 </dev/null &
		PROF=$!
		for _ in $(seq 600); do
			grep -q 'injection finished' "$W/hk.log" && break
			kill -0 "$PROF" 2>/dev/null || break
			sleep 0.1
		done
		if grep -q 'injection finished' "$W/hk.log"; then
			sleep "$SETTLE"
			hk=$(rate)
		else
			hk=fail
		fi
		stop_service
		wait "$PROF" || true
		PROF=
		if have heaptrack_print && [ -f "$W/hk.$name.zst" ]; then
			heaptrack_print -f "$W/hk.$name.zst" -a 0 -T 0 -p 0 -t 0 -n 0 -l 0 2>/dev/null |
				sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p; s/^peak heap memory consumption: //p' |
				tr '\n' ' ' > "$W/hk.summary"
		fi
		rm -f "$W"/hk."$name".*
	else
		stop_service
	fi

	printf '%s run %s: native %s units/s; heaptrace %s, after detach %s, heaptrack -p %s (ratios); heaptrace peak %s B at %s\n' \
		"$name" "$run" "$native" "$(ratio "$ht" "$native")" \
		"$(ratio "$after" "$native")" "$(ratio "$hk" "$native")" \
		"${peak%% *}" "${peak#* }"
	printf '%s run %s: CPUs used by the service in each window: %s\n' \
		"$name" "$run" "$(tr '\n' ' ' < "$W/cpu")"
	if [ -s "$W/hk.summary" ]; then
		read -r calls hpeak < "$W/hk.summary" || true
		printf '%s run %s: heaptrack saw %s allocations, peak %s\n' "$name" "$run" "${calls:-?}" "${hpeak:-?}"
		rm -f "$W/hk.summary"
	fi
	echo "$native $(ratio "$ht" "$native") $(ratio "$after" "$native") $(ratio "$hk" "$native") $peak" >> "$W/res.$name"
	echo "${peak#* }" > "$W/site.$name"
}

# Median of column N of FILE over the runs that produced a number; else
# what the first run said (n/a, died, fail).
col_median() {
	m=$(awk -v c="$1" '$c ~ /^[0-9.]+$/ { print $c }' "$2" | median)
	if [ -n "$m" ]; then echo "$m"; else awk -v c="$1" 'NR == 1 { print $c }' "$2"; fi
}

fmt_ratio() {
	case $1 in
	*[!0-9.]*|'') printf '%s' "$1" ;;
	*) printf '%.3fx' "$1" ;;
	esac
}

echo "heaptrace attach bench: medians of $RUNS runs, ${WINDOW}s windows, work rate as a ratio to native ($(nproc) CPUs)"
for run in $(seq "$RUNS"); do
	one_run perl perl bench/service.pl
	one_run c-2threads "$W/service"
done

printf '\n%-12s %16s %20s %14s %22s %12s  %s\n' service "native units/s" \
	"heaptrace attached" "after detach" "heaptrack -p attached" "peak (B)" "top site at peak"
status=0
for name in perl c-2threads; do
	f="$W/res.$name"
	peak=$(col_median 5 "$f")
	printf '%-12s %16s %20s %14s %22s %12s  %s\n' "$name" "$(col_median 1 "$f")" \
		"$(fmt_ratio "$(col_median 2 "$f")")" "$(fmt_ratio "$(col_median 3 "$f")")" \
		"$(fmt_ratio "$(col_median 4 "$f")")" "$peak" "$(cat "$W/site.$name")"
	if [ "$name" = c-2threads ] && ! [ "${peak:-0}" -ge 1048576 ] 2>/dev/null; then
		echo "bench/attach.sh: c-2threads: heaptrace's peak ${peak:-?} B is under 1 MiB: the attached profile missed allocations" >&2
		status=1
	fi
done
echo "heaptrace backend while attached: $(sort -u "$W/backend" | tr '\n' ' ')"
exit "$status"
