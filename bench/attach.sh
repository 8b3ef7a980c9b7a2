#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Work rate of a running allocation-heavy service: natively, while
# `heaptrace attach` profiles it (exactly, then sampled at
# --sampling-interval=$SAMPLING), after each detach, and while
# `heaptrack -p` is injected into it, measured side by side in one
# sitting, as medians of RUNS runs of per-run ratios.
# Three services: bench/service.pl (perl, hash work), bench/service.c (two
# threads of malloc/free over a few MB of live blocks), and Debian's
# redis-server (jemalloc) under redis-benchmark (SET, GET, LPUSH, LPOP, 20
# clients, pipeline 8, REDIS_N requests each, on 127.0.0.1 on a free port,
# no persistence). The first two report their work count and their own
# monotonic clock in a small file every 50-100 ms, so the rate is read
# without touching the process being profiled; redis's rate is the
# benchmark's requests per second (all four tests' requests over their
# summed times).
# One run is one lifetime of the service, its windows in this order:
# native, heaptrace attached (exact), after its detach, heaptrace attached
# at SAMPLING, after that detach, heaptrack -p attached. Each attached
# window is a ratio to the unprofiled window just before it (native and
# attached windows interleave: two unprofiled sittings of one service
# differ by up to 10 % on these shared machines); each after-detach window
# is a ratio to the first native one.
# Usage: bench/attach.sh [BUILD_DIR] (default build); RUNS=3 by default,
# WINDOW=3 (seconds per measured window, a whole number), SAMPLING=512K
# (0 leaves the sampled windows out), SERVICES="perl c-2threads redis",
# REDIS_N=100000. INSTALL=1 to apt-get install heaptrack (and gdb, which
# its -p needs) when missing; redis-server and redis-tools are installed
# when missing unless INSTALL=0 (as root; else redis is n/a).
set -eu
cd "$(dirname "$0")/.."
. bench/service_lib.sh
BUILD=${1:-build}
RUNS=${RUNS:-3}
WINDOW=${WINDOW:-3}
SAMPLING=${SAMPLING:-512K}
SERVICES=${SERVICES:-perl c-2threads redis}
REDIS_N=${REDIS_N:-100000}
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
case " $SERVICES " in
*" redis "*)
	if [ "${INSTALL:-}" != 0 ] && ! { have redis-server && have redis-benchmark && have redis-cli; }; then
		echo "bench/attach.sh: installing redis-server and redis-tools" >&2
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq redis-server redis-tools; } \
			>/dev/null 2>&1 || echo "bench/attach.sh: could not install redis-server and redis-tools" >&2
	fi
	;;
esac
if have redis-server && have redis-benchmark && have redis-cli; then REDIS=yes; else REDIS=; fi

W=$(mktemp -d)
# What is running now, for the exit trap: the service, and the process
# group of the profiler's `timeout` wrapper (timeout puts itself and all
# it starts, heaptrack's gdb and interpreter included, in one group).
SVC=
PROF=
HTPID=
cleanup() {
	# heaptrace attached to redis is run without timeout: SIGINT detaches.
	if [ -n "$HTPID" ]; then
		kill -INT "$HTPID" 2>/dev/null || true
		sleep 1
		kill -KILL "$HTPID" 2>/dev/null || true
	fi
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

# The clock for redis's windows, in seconds (hundredths).
uptime_s() { awk '{ print $1 }' /proc/uptime; }

# redis_bench N: one redis-benchmark of N requests a test against $PORT,
# its CSV in $W/rb.csv; fails when the benchmark fails or hangs.
redis_bench() {
	timeout -k 5 300 redis-benchmark -h 127.0.0.1 -p "$PORT" -c 20 -P 8 \
		-n "$1" -t set,get,lpush,lpop --csv >"$W/rb.csv" 2>"$W/rb.err" </dev/null
}

# Requests per second of redis under one redis-benchmark: the four tests'
# requests over their summed times; "died" if redis did not live through
# it, "fail" if the benchmark failed. The CPUs redis used go to $W/cpu.
redis_rate() {
	k0=$(ticks); s0=$(uptime_s)
	if ! redis_bench "$REDIS_N"; then
		echo - >> "$W/cpu"
		if alive; then echo fail; else echo died; fi
		return
	fi
	if ! alive; then echo - >> "$W/cpu"; echo died; return; fi
	k1=$(ticks); s1=$(uptime_s)
	awk -v k="$((k1 - k0))" -v hz="$HZ" -v s0="$s0" -v s1="$s1" \
		'BEGIN { printf "%.2f\n", (s1 > s0) ? k / hz / (s1 - s0) : 0 }' >> "$W/cpu"
	awk -F'"' -v n="$REDIS_N" '
	NR > 1 && $4 + 0 > 0 { t += n / $4; c++ }
	END { if (c == 4) printf "%.0f\n", c * n / t; else print "fail" }' "$W/rb.csv"
}

# measure: the service's rate over one window (rate or redis_rate).
measure() {
	if [ "$KIND" = redis ]; then redis_rate; else rate; fi
}

# heaptrace_window NAME TAG OPTION...: the service's rate while `heaptrace
# attach OPTIONS` is attached, in $got ("fail" when the attach did not
# happen or heaptrace failed); its profile in $W/massif.NAME.TAG. heaptrace
# runs until SIGINT, which makes it detach and write its profile; one
# that has not exited 30 s later is killed (a hang).
heaptrace_window() {
	name=$1; tag=$2; shift 2
	out="$W/massif.$name.$tag"
	rm -f "$out"
	"$HT" attach --time-unit=ms "$@" --massif-out-file="$out" "$SVC" \
		>/dev/null 2>"$W/ht.err" </dev/null &
	HTPID=$!
	if wait_tracer yes 50; then
		sleep "$SETTLE"
		got=$(measure)
	else
		got=fail
	fi
	kill -INT "$HTPID" 2>/dev/null || true
	for _ in $(seq 300); do
		kill -0 "$HTPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$HTPID" 2>/dev/null || true
	st=0
	wait "$HTPID" || st=$?
	HTPID=
	# The summary line names the backend that did the work.
	sed -n 's/^heaptrace: .*(\([^)]*\))$/\1/p' "$W/ht.err" | tail -1 >> "$W/backend"
	if [ "$st" != 0 ]; then
		echo "$name: heaptrace attach $* exited $st: $(grep -v '^heaptrace: peak' "$W/ht.err" | head -1)" >&2
		[ "$got" = died ] || got=fail
	fi
}

# after_window: the rate once heaptrace has let go, in $got.
after_window() {
	if alive; then
		wait_tracer no 50 || true
		sleep "$SETTLE"
		got=$(measure)
	else
		got=died
	fi
}

# heaptrack_window NAME: the rate under heaptrack -p, in $got, then the
# service stopped (heaptrack -p stays until the process exits) and
# heaptrack left to finish its file; n/a without heaptrack.
heaptrack_window() {
	name=$1
	got=n/a
	if [ -z "$HK" ] || ! alive; then stop_service; return; fi
	timeout -k 5 120 heaptrack -o "$W/hk.$name" -p "$SVC" \
		>"$W/hk.log" 2>&1 </dev/null &
	PROF=$!
	for _ in $(seq 600); do
		grep -q 'injection finished' "$W/hk.log" 2>/dev/null && break
		kill -0 "$PROF" 2>/dev/null || break
		sleep 0.1
	done
	if grep -q 'injection finished' "$W/hk.log"; then
		sleep "$SETTLE"
		got=$(measure)
	else
		got=fail
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
}

# per_cpu RATE N BEFORE M: RATE per CPU of the Nth window over BEFORE per
# CPU of the Mth (the lines of $W/cpu), or n/a.
per_cpu() {
	c1=$(sed -n "${2}p" "$W/cpu"); c0=$(sed -n "${4}p" "$W/cpu")
	case "$1 $3 $c1 $c0" in
	*[!0-9.\ ]*) echo n/a ;;
	*) awk -v a="$1" -v c1="$c1" -v b="$3" -v c0="$c0" \
		'BEGIN { if (c1 > 0 && b > 0 && c0 > 0) printf "%.3f\n", (a / c1) / (b / c0); else print "n/a" }' ;;
	esac
}

# one_run NAME CMD...: one service lifetime (CMD COUNTER_FILE, or the
# word redis); appends "native heaptrace after sampled after-sampled
# heaptrack peak site" to $W/res.NAME, the rates as ratios (see the
# header).
one_run() {
	name=$1; shift
	: > "$W/cpu"
	if [ "$1" = redis ]; then
		KIND=redis
		start_redis
		redis_bench 20000 || true # a warm-up
	else
		KIND=count
		start_service "$@"
	fi
	native=$(measure)

	heaptrace_window "$name" exact
	ht=$got
	if [ -s "$out" ]; then peak=$(peak_site "$out"); else peak="0 ?"; fi
	after_window
	after=$got

	hs=n/a; after_s=n/a; speak=
	if [ "$SAMPLING" != 0 ] && alive; then
		heaptrace_window "$name" sampled "--sampling-interval=$SAMPLING"
		hs=$got
		[ ! -s "$out" ] || speak=$(peak_site "$out")
		after_window
		after_s=$got
		last=$after_s
	else
		last=$after
	fi

	heaptrack_window "$name"
	hk=$got

	printf '%s run %s: native %s units/s; heaptrace %s, after detach %s; sampled at %s %s, after detach %s; heaptrack -p %s (ratios); heaptrace peak %s B at %s%s\n' \
		"$name" "$run" "$native" "$(ratio "$ht" "$native")" \
		"$(ratio "$after" "$native")" "$SAMPLING" "$(ratio "$hs" "$after")" \
		"$(ratio "$after_s" "$native")" "$(ratio "$hk" "$last")" \
		"${peak%% *}" "${peak#* }" "${speak:+; sampled peak ${speak%% *} B at ${speak#* }}"
	printf '%s run %s: CPUs used by the service in each window: %s\n' \
		"$name" "$run" "$(tr '\n' ' ' < "$W/cpu")"
	if [ -s "$W/hk.summary" ]; then
		read -r calls hpeak < "$W/hk.summary" || true
		printf '%s run %s: heaptrack saw %s allocations, peak %s\n' "$name" "$run" "${calls:-?}" "${hpeak:-?}"
		rm -f "$W/hk.summary"
	fi
	echo "$native $(ratio "$ht" "$native") $(ratio "$after" "$native") $(ratio "$hs" "$after") $(ratio "$after_s" "$native") $(ratio "$hk" "$last") $peak" >> "$W/res.$name"
	# Work per CPU second of the service, each attached window against
	# the window before it: the cost paid inside the service, which the
	# share of the CPUs a loaded machine leaves it does not blur (waits
	# for room in the ring cost no CPU: not in it).
	i_hs=4; i_hk=6
	if [ "$hs" = n/a ]; then i_hk=4; fi
	echo "$(per_cpu "$ht" 2 "$native" 1) $(per_cpu "$hs" "$i_hs" "$after" 3) $(per_cpu "$hk" "$i_hk" "$last" $((i_hk - 1)))" >> "$W/eff.$name"
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

# The services to run, by name, with their commands.
names=
for s in $SERVICES; do
	case $s in
	perl|c-2threads) names="$names $s" ;;
	redis)
		if [ -n "$REDIS" ]; then names="$names $s"
		else echo "bench/attach.sh: redis: no redis-server, redis-benchmark or redis-cli: left out" >&2; fi ;;
	*) echo "bench/attach.sh: SERVICES: no service \"$s\" (perl, c-2threads, redis)" >&2; exit 2 ;;
	esac
done
[ -n "$names" ] || { echo "bench/attach.sh: no service to run" >&2; exit 2; }

echo "heaptrace attach bench: medians of $RUNS runs, ${WINDOW}s windows (redis: $REDIS_N requests a test), work rate as a ratio ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
for run in $(seq "$RUNS"); do
	for name in $names; do
		case $name in
		perl) one_run perl perl bench/service.pl ;;
		c-2threads) one_run c-2threads "$W/service" ;;
		redis) one_run redis redis ;;
		esac
	done
done

printf '\n%-12s %16s %10s %8s %12s %8s %12s %12s  %s\n' service "native units/s" \
	"heaptrace" "after" "sampled $SAMPLING" "after" "heaptrack -p" "peak (B)" "top site at peak"
status=0
for name in $names; do
	f="$W/res.$name"
	peak=$(col_median 7 "$f")
	printf '%-12s %16s %10s %8s %12s %8s %12s %12s  %s\n' "$name" "$(col_median 1 "$f")" \
		"$(fmt_ratio "$(col_median 2 "$f")")" "$(fmt_ratio "$(col_median 3 "$f")")" \
		"$(fmt_ratio "$(col_median 4 "$f")")" "$(fmt_ratio "$(col_median 5 "$f")")" \
		"$(fmt_ratio "$(col_median 6 "$f")")" "$peak" "$(cat "$W/site.$name")"
	if [ "$name" = c-2threads ] && ! [ "${peak:-0}" -ge 1048576 ] 2>/dev/null; then
		echo "bench/attach.sh: c-2threads: heaptrace's peak ${peak:-?} B is under 1 MiB: the attached profile missed allocations" >&2
		status=1
	fi
done
echo "(redis's units: requests per second; attached windows are ratios to the unprofiled window just before them, after-detach windows to the first native one)"
printf '\nwork per CPU second of the service while attached, ratio to the window before (medians):\n'
printf '%-12s %10s %12s %12s\n' service heaptrace "sampled $SAMPLING" "heaptrack -p"
for name in $names; do
	f="$W/eff.$name"
	printf '%-12s %10s %12s %12s\n' "$name" "$(fmt_ratio "$(col_median 1 "$f")")" \
		"$(fmt_ratio "$(col_median 2 "$f")")" "$(fmt_ratio "$(col_median 3 "$f")")"
done
echo "heaptrace backend while attached: $(sort -u "$W/backend" | tr '\n' ' ')"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
