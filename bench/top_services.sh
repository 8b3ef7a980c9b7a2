#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `heaptrace top` watching real services under load for a minute: does the
# view keep up, does heaptrace's memory stay bounded, what does the watch
# cost the service, and is the service well after the detach.
# Cases (CASES, all by default):
#  threads      bench/service_threads.c: 1000 threads (THREADS) in accept()
#               on one socket, HTTP with keep-alive; ab -k -c 1000 (CONC)
#               keeps every thread busy at once.
#  perl         bench/service_http.pl: one perl process serving HTTP, hash
#               work per request; ab -c 4.
#  redis        Debian's redis-server (jemalloc), no persistence, under
#               redis-benchmark (SET, GET, LPUSH, LPOP, 20 clients,
#               pipeline 8, REDIS_N requests a test, run again and again).
#  perl-exact, redis-exact  the same watched with --sampling-interval=0.
# Every service listens on 127.0.0.1 on a port nothing else uses (the
# kernel's choice, or for redis a random port checked free). One run of a
# case is one lifetime of its service: a short warm-up load, NATIVE
# seconds of load unwatched, then `heaptrace top --format=json
# --interval=INTERVAL --iterations=N` attached (512K sampling, top's
# default, unless the case says exact) with WATCH seconds of load started
# at its first table and N tables enough to outlast the load, then AFTER
# seconds of load after the detach.
# Reported per run and as medians of RUNS runs:
#  - tables: how many arrived, and that each is a JSON object of the
#    service's pid whose sampling interval is the one asked for;
#  - gaps between successive tables, from their "elapsed_s" and from the
#    monotonic time each line reached this script (max and median), and
#    lateness: how far table k came after table 1 + (k-1) intervals (max).
#    The view lags when a gap exceeds 2 intervals or a table is more than
#    1 interval late (LAG);
#  - heaptrace's VmRSS, sampled every 5 s from the first table: first, max,
#    last, and its growth over the first and the second half of the
#    watch; it grows (GROWS) when the second half added more than 1 MiB
#    and more than half of what the first half added (the first half
#    includes the symbols' loading at the first table that names a
#    site: 20-28 MiB, once);
#  - heaptrace's CPU share over the same samples, and the number of sites
#    in the last table;
#  - the service's throughput during the watch and after the detach as
#    ratios to the unwatched one (requests/s from the load generator),
#    and the watched one per CPU second the service used (what other
#    processes on a shared machine take from it does not blur that);
#  - that the service is alive after the detach and answers (one more
#    request, or for redis a key written before the watch read back).
# Exit status 1 when a case failed (the service died or stopped
# answering, the load generator saw errors, heaptrace exited non-zero,
# a table was missing or malformed), lagged or grew.
# Usage: bench/top_services.sh [BUILD_DIR] (default build); RUNS=1,
# WATCH=60, NATIVE=15, AFTER=10, INTERVAL=1, THREADS=1000, CONC=1000,
# REDIS_N=100000, CASES="threads perl perl-exact redis redis-exact";
# KEEP=DIR keeps each run's tables (each line prefixed with its arrival
# time) and RSS samples there as CASE.RUN.tables and CASE.RUN.rss.
# Needs ab (apache2-utils), redis-server and redis-tools, perl, python3.
set -eu
cd "$(dirname "$0")/.."
. bench/service_lib.sh
BUILD=${1:-build}
RUNS=${RUNS:-1}
WATCH=${WATCH:-60}
NATIVE=${NATIVE:-15}
AFTER=${AFTER:-10}
INTERVAL=${INTERVAL:-1}
THREADS=${THREADS:-1000}
CONC=${CONC:-1000}
REDIS_N=${REDIS_N:-100000}
CASES=${CASES:-threads perl perl-exact redis redis-exact}
HT="$BUILD/heaptrace"
ME=bench/top_services.sh

die() { echo "$ME: $*" >&2; exit 2; }
have() { command -v "$1" >/dev/null 2>&1; }

[ -x "$HT" ] || die "no $HT: build it first (ninja -C $BUILD)"
for tool in ab perl python3 cc; do
	have "$tool" || die "$tool is not installed (dev.sh installs what is needed)"
done
case " $CASES " in
*" redis"*)
	for tool in redis-server redis-benchmark redis-cli; do
		have "$tool" || die "$tool is not installed (dev.sh installs redis-server and redis-tools)"
	done ;;
esac
# ab -c 1000 holds 1000 sockets, and the service as many.
ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true

W=$(mktemp -d)
SVC= HTPID= TSPID= RSSPID= LOADPID=
stop_pid() {
	[ -n "$1" ] || return 0
	kill "-$2" "$1" 2>/dev/null || true
}
cleanup() {
	# SIGINT makes heaptrace detach, leaving the service as it was.
	if [ -n "$HTPID" ] && kill -0 "$HTPID" 2>/dev/null; then
		kill -INT "$HTPID" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$HTPID" 2>/dev/null || break
			sleep 0.1
		done
		stop_pid "$HTPID" KILL
	fi
	stop_pid "$LOADPID" KILL
	stop_pid "$RSSPID" KILL
	stop_pid "$TSPID" KILL
	stop_pid "$SVC" KILL
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

cc -std=c11 -O2 -g -pthread -Wall -Wextra -o "$W/service_threads" bench/service_threads.c

PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 export PERL_HASH_SEED PERL_PERTURB_KEYS
HZ=$(getconf CLK_TCK)

# A case's failure: said at once, counted for the exit status.
status=0
case_fail() {
	echo "$ME: $name run $run: FAIL: $*" >&2
	status=1
}

now() { perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e 'printf "%.6f\n", clock_gettime(CLOCK_MONOTONIC)'; }

# start_http CMD...: CMD PORT_FILE started, $PORT what it wrote there
# (bounded wait: a thousand threads take a moment to start).
start_http() {
	rm -f "$W/port"
	"$@" "$W/port" >"$W/service.out" 2>"$W/service.err" </dev/null &
	SVC=$!
	for _ in $(seq 300); do
		[ -s "$W/port" ] && break
		alive || break
		sleep 0.1
	done
	[ -s "$W/port" ] || { echo "service did not start: $(head -3 "$W/service.err")" >&2; return 1; }
	PORT=$(cat "$W/port")
}

# ab_load SECS CONC [AB_OPTION...]: requests per second of ab against
# $PORT for SECS seconds, or "fail" (ab failed, or a request failed).
ab_load() {
	secs=$1 conc=$2
	shift 2
	if ! timeout -k 5 $((secs + 60)) ab -q -t "$secs" -n 20000000 -c "$conc" "$@" \
		"http://127.0.0.1:$PORT/" >"$W/ab.out" 2>"$W/ab.err" </dev/null; then
		echo "ab: $(tail -2 "$W/ab.err" | tr '\n' ' ')" >&2
		echo fail
		return
	fi
	if ! grep -q '^Failed requests: *0$' "$W/ab.out" || grep -q '^Non-2xx' "$W/ab.out"; then
		echo "ab: $(grep -E '^(Failed|Non-2xx)' "$W/ab.out" | tr '\n' ' ')" >&2
		echo fail
		return
	fi
	awk '/^Requests per second:/ { printf "%.0f\n", $4 }' "$W/ab.out"
}

# redis_load SECS: requests per second of redis under redis-benchmark runs
# of REDIS_N requests a test, one after another until SECS have passed
# (the four tests' requests over their summed times), or "fail".
redis_load() {
	end=$(awk -v t="$(now)" -v s="$1" 'BEGIN { printf "%.3f", t + s }')
	: >"$W/rb.all"
	while awk -v t="$(now)" -v e="$end" 'BEGIN { exit !(t < e) }'; do
		if ! timeout -k 5 300 redis-benchmark -h 127.0.0.1 -p "$PORT" -c 20 -P 8 \
			-n "$REDIS_N" -t set,get,lpush,lpop --csv >"$W/rb.csv" 2>"$W/rb.err" </dev/null; then
			echo "redis-benchmark: $(tail -1 "$W/rb.err")" >&2
			echo fail
			return
		fi
		tail -n +2 "$W/rb.csv" >>"$W/rb.all"
	done
	awk -F'"' -v n="$REDIS_N" '$4 + 0 > 0 { t += n / $4; c++ }
	END { if (c) printf "%.0f\n", c * n / t; else print "fail" }' "$W/rb.all"
}

# load SECS: the case's load for SECS seconds, its requests per second.
load() {
	case $name in
	threads) ab_load "$1" "$CONC" -k ;;
	perl*) ab_load "$1" 4 ;;
	redis*) redis_load "$1" ;;
	esac
}

# answers: the service answers one more request as it should.
answers() {
	case $name in
	redis*) [ "$(redis-cli -p "$PORT" get ht-top-bench 2>/dev/null)" = "kept $run" ] ;;
	*) timeout 30 ab -q -n 10 -c 1 "http://127.0.0.1:$PORT/" >"$W/ab1.out" 2>&1 &&
		grep -q '^Complete requests: *10$' "$W/ab1.out" &&
		grep -q '^Failed requests: *0$' "$W/ab1.out" ;;
	esac
}

# rss_sampler PID: "SECONDS KB TICKS" every 5 s while PID lives: its
# VmRSS and the CPU time it has used (clock ticks).
rss_sampler() {
	t0=$(now)
	while kill -0 "$1" 2>/dev/null; do
		kb=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null) || break
		k=$(ticks "$1")
		[ -n "$kb" ] && [ -n "$k" ] || break
		echo "$(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }') $kb $k"
		sleep 5
	done
}

# measure SECS: the case's load for SECS seconds, its requests per
# second; the service's CPUs used meanwhile appended to $W/cpu ("-" when
# it died).
measure() {
	m0=$(ticks "$SVC") u0=$(now)
	rate=$(load "$1")
	m1=$(ticks "$SVC") u1=$(now)
	if [ -n "$m0" ] && [ -n "$m1" ]; then
		awk -v k="$((m1 - m0))" -v hz="$HZ" -v a="$u0" -v b="$u1" \
			'BEGIN { printf "%.3f\n", k / hz / (b - a) }' >>"$W/cpu"
	else
		echo - >>"$W/cpu"
	fi
	echo "$rate"
}

# watch_window OPTION...: the service's rate under `heaptrace top` with
# OPTIONS in $watched; the tables, with their arrival times, in
# $W/tables, heaptrace's RSS and CPU samples in $W/rss.
watch_window() {
	iterations=$(awk -v w="$WATCH" -v i="$INTERVAL" 'BEGIN { printf "%d", w / i + 3 }')
	rm -f "$W/fifo" "$W/tables" "$W/rss"
	mkfifo "$W/fifo"
	# Each line stamped with the monotonic time it arrived at.
	perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -ne \
		'BEGIN { $| = 1 } printf "%.6f %s", clock_gettime(CLOCK_MONOTONIC), $_' \
		<"$W/fifo" >"$W/tables" &
	TSPID=$!
	"$HT" top --format=json --interval="$INTERVAL" --iterations="$iterations" \
		"$@" "$SVC" >"$W/fifo" 2>"$W/ht.err" </dev/null &
	HTPID=$!
	watched=fail
	for _ in $(seq 600); do
		[ -s "$W/tables" ] && break
		kill -0 "$HTPID" 2>/dev/null || break
		sleep 0.1
	done
	if [ -s "$W/tables" ]; then
		rss_sampler "$HTPID" >"$W/rss" &
		RSSPID=$!
		watched=$(measure "$WATCH")
	else
		case_fail "no table within 60 s: $(head -3 "$W/ht.err")"
	fi
	# The remaining tables, then the detach; a hang is killed.
	bound=$(awk -v n="$iterations" -v i="$INTERVAL" 'BEGIN { printf "%d", (n * i + 120) * 10 }')
	for _ in $(seq "$bound"); do
		kill -0 "$HTPID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$HTPID" 2>/dev/null; then
		case_fail "heaptrace top did not end after its $iterations tables"
		kill -INT "$HTPID" 2>/dev/null || true
		sleep 10
		kill -KILL "$HTPID" 2>/dev/null || true
	fi
	st=0
	wait "$HTPID" || st=$?
	HTPID=
	[ "$st" = 0 ] || case_fail "heaptrace top exited $st: $(grep -v '^heaptrace: sampled' "$W/ht.err" | head -3)"
	wait "$TSPID" || true
	TSPID=
	if [ -n "$RSSPID" ]; then
		wait "$RSSPID" || true
		RSSPID=
	fi
}

# analyse EXPECTED_TABLES SAMPLING: one line of figures from $W/tables
# and $W/rss (see the header), or a failure said on stderr.
analyse() {
	python3 - "$W/tables" "$W/rss" "$INTERVAL" "$1" "$2" "$svc_pid" "$HZ" <<'PY'
import json, statistics, sys
tables_path, rss_path, interval, want, sampling, pid, hz = sys.argv[1:8]
interval, want, sampling, pid, hz = float(interval), int(want), int(sampling), int(pid), int(hz)
arrived, elapsed, sites = [], [], 0
for n, line in enumerate(open(tables_path), 1):
    stamp, _, text = line.partition(" ")
    try:
        o = json.loads(text)
    except ValueError as e:
        sys.exit("table %d is not JSON (%s): %.200s" % (n, e, text))
    if o.get("pid") != pid:
        sys.exit("table %d is of pid %r, not %d" % (n, o.get("pid"), pid))
    if o.get("sampling_interval") != sampling:
        sys.exit("table %d: sampling interval %r, not %d" % (n, o.get("sampling_interval"), sampling))
    arrived.append(float(stamp))
    elapsed.append(float(o["elapsed_s"]))
    sites = len(o["sites"]) + o["more_sites"]
if len(arrived) != want:
    sys.exit("%d tables, %d expected" % (len(arrived), want))
def gaps(v):
    return [b - a for a, b in zip(v, v[1:])]
def late(v):
    return max(t - (v[0] + k * interval) for k, t in enumerate(v))
gj, gw = gaps(elapsed), gaps(arrived)
rss = [tuple(map(float, l.split())) for l in open(rss_path) if l.strip()]
if len(rss) < 2:
    sys.exit("%d RSS samples" % len(rss))
half = rss[-1][0] / 2
mid = min(rss, key=lambda s: abs(s[0] - half))[1]
first, last = rss[0][1], rss[-1][1]
grow1, grow2 = mid - first, last - mid
lag = max(gj + gw) > 2 * interval or max(late(elapsed), late(arrived)) > interval
grows = grow2 > 1024 and grow2 > grow1 / 2
cpu = 100 * (rss[-1][2] - rss[0][2]) / hz / (rss[-1][0] - rss[0][0])
print(len(arrived), "%.3f %.3f %.3f %.3f %.3f %.3f" % (
    max(gj), statistics.median(gj), max(gw), statistics.median(gw),
    late(elapsed), late(arrived)),
    "%.1f %.1f %.1f %.2f %.2f" % (first / 1024, max(s[1] for s in rss) / 1024,
                                  last / 1024, grow1 / 1024, grow2 / 1024),
    sites, "LAG" if lag else "ok", "GROWS" if grows else "ok", "%.1f" % cpu)
PY
}

# per_cpu RATE N BASE M: RATE per CPU second of the service in window N
# (the lines of $W/cpu) over BASE per CPU second in window M, or n/a.
per_cpu() {
	c1=$(sed -n "${2}p" "$W/cpu") c0=$(sed -n "${4}p" "$W/cpu")
	case "$1 $3 $c1 $c0" in
	*[!0-9.\ ]*) echo n/a ;;
	*) awk -v a="$1" -v c1="$c1" -v b="$3" -v c0="$c0" \
		'BEGIN { if (c1 > 0 && b > 0 && c0 > 0) printf "%.3f\n", (a / c1) / (b / c0); else print "n/a" }' ;;
	esac
}

ratio() {
	case "$1 $2" in
	*[!0-9.\ ]*|' '*|*' ') echo "$1" ;;
	*) awk -v a="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.3f\n", a / n; else print "?" }' ;;
	esac
}

# one_run: one lifetime of case $name's service; a line of figures
# appended to $W/res.$name.
one_run() {
	case $name in
	threads) start_http "$W/service_threads" "$THREADS" ;;
	perl*) start_http perl bench/service_http.pl ;;
	redis*) start_redis && redis-cli -p "$PORT" set ht-top-bench "kept $run" >/dev/null ;;
	esac || { case_fail "the service did not start"; stop_service; return; }
	svc_pid=$SVC
	case $name in
	*-exact) sampling=0 opts=(--sampling-interval=0) ;;
	*) sampling=524288 opts=() ;;
	esac
	load 3 >/dev/null
	: >"$W/cpu"
	native=$(measure "$NATIVE")
	[ "$native" != fail ] || case_fail "the load failed unwatched"
	watch_window "${opts[@]}"
	[ "$watched" != fail ] || case_fail "the load failed while watched"
	after=fail
	if ! alive; then
		case_fail "the service died: $(tail -2 "$W/service.err" 2>/dev/null)"
	elif ! answers; then
		case_fail "the service does not answer after the detach"
	else
		after=$(measure "$AFTER")
		[ "$after" != fail ] || case_fail "the load failed after the detach"
		alive || case_fail "the service died after the detach"
	fi
	stop_service
	if [ -n "${KEEP:-}" ]; then
		cp "$W/tables" "$KEEP/$name.$run.tables" || true
		cp "$W/rss" "$KEEP/$name.$run.rss" || true
	fi
	if figures=$(analyse "$iterations" "$sampling" 2>"$W/analyse.err"); then
		:
	else
		case_fail "tables: $(cat "$W/analyse.err")"
		return
	fi
	set -- $figures
	# tables gapj_max gapj_med gapw_max gapw_med latej latew rss_first
	# rss_max rss_last grow1 grow2 sites lag grows cpu
	wcpu=$(per_cpu "$watched" 2 "$native" 1) acpu=$(per_cpu "$after" 3 "$native" 1)
	printf '%s run %s: %s tables, gaps max/median %s/%s s (elapsed) %s/%s s (arrival), late at most %s/%s s; heaptrace RSS %s/%s/%s MiB (first/max/last), growth %s then %s MiB, CPU %s %%; %s sites; %s req/s unwatched, watched %sx (%sx per CPU s), after %sx (%sx); service CPUs %s; %s, %s\n' \
		"$name" "$run" "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}" "${11}" \
		"${12}" "${16}" "${13}" "$native" "$(ratio "$watched" "$native")" "$wcpu" \
		"$(ratio "$after" "$native")" "$acpu" "$(tr '\n' ' ' <"$W/cpu")" "${14}" "${15}"
	[ "${14}" = ok ] || case_fail "the view lagged"
	[ "${15}" = ok ] || case_fail "heaptrace's memory grew through the watch"
	echo "$figures $native $(ratio "$watched" "$native") $(ratio "$after" "$native") $wcpu $acpu" >>"$W/res.$name"
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}
col() { awk -v c="$1" '{ print $c }' "$2" | median; }

echo "heaptrace top on services: ${WATCH}s watches at --interval=$INTERVAL, $RUNS run(s) a case ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
for run in $(seq "$RUNS"); do
	for name in $CASES; do
		case $name in
		threads|perl|perl-exact|redis|redis-exact) one_run ;;
		*) die "CASES: no case \"$name\" (threads perl perl-exact redis redis-exact)" ;;
		esac
	done
done

printf '\nmedians of %s run(s):\n' "$RUNS"
printf '%-12s %6s %13s %13s %11s %16s %15s %6s %5s %10s %8s %6s %8s\n' case tables \
	"gap elapsed" "gap arrival" "late e/a" "RSS MiB f/m/l" "growth 1st/2nd" \
	"CPU%" sites "req/s" watched after "per CPU"
for name in $CASES; do
	f="$W/res.$name"
	[ -s "$f" ] || { printf '%-12s failed\n' "$name"; continue; }
	printf '%-12s %6s %13s %13s %11s %16s %15s %6s %5s %10s %8s %6s %8s\n' "$name" \
		"$(col 1 "$f")" "$(col 2 "$f")/$(col 3 "$f")" "$(col 4 "$f")/$(col 5 "$f")" \
		"$(col 6 "$f")/$(col 7 "$f")" "$(col 8 "$f")/$(col 9 "$f")/$(col 10 "$f")" \
		"$(col 11 "$f")/$(col 12 "$f")" "$(col 16 "$f")" "$(col 13 "$f")" \
		"$(col 17 "$f")" "$(col 18 "$f")x" "$(col 19 "$f")x" "$(col 20 "$f")x"
done
echo "(gaps: max/median seconds between tables; late: most seconds a table came after table 1 + (k-1) intervals, by elapsed_s / by arrival; CPU%: heaptrace's; watched and after: the service's requests/s as a ratio to unwatched; per CPU: watched, per CPU second of the service)"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
