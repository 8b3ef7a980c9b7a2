#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Continuous profiling of a live service: `heaptrace attach` to
# bench/service.pl (or bench/service.c) for DURATION seconds, writing the
# profile so far every INTERVAL seconds (--snapshot-every), while
# heaptrace's own resident memory is read every STEP seconds. Prints its
# RSS at 2 minutes and at the end and their ratio, then checks every
# periodic profile and the final one with `heaptrace print` (and `heaptrace
# report` on their .sites), and each .pb.gz with `go tool pprof -top` when
# go is installed. Exits 1 when the memory MEASURE names at the end exceeds
# LIMIT times itself at 2 minutes, or any file cannot be read.
# The RSS is shown whole and in its parts (/proc/PID/status): RssAnon,
# heaptrace's own memory (its tables, the profile); RssFile, the program
# and the libraries and debug files it reads (clean pages); RssShmem, the
# pages of the inline rings it shares with the target (at most
# --ring-size each, 8 MiB by default, and the sampled-address set), which
# count in heaptrace's RSS the first time it reads each, so that a ring
# written slowly (a sampled profile) adds to the RSS until it has wrapped
# once.
# Usage: bench/continuous.sh [BUILD_DIR] (default build). Environment:
#   DURATION=1200  seconds attached (at least 150: 2 minutes are the base)
#   INTERVAL=60    --snapshot-every (0: no periodic profiles)
#   SAMPLING=512K  --sampling-interval (0 or empty: exact, every call)
#   SERVICE=pl     pl: bench/service.pl; c: bench/service.c
#   PPROF=yes      --pprof=yes (a .pb.gz beside each profile)
#   RING=          --ring-size (bytes; empty: the default, 8 MiB)
#   STEP=30        seconds between two readings of heaptrace's RSS
#   LIMIT=1.10     the largest end / 2-minute ratio that passes
#   MEASURE=rss    what LIMIT applies to: rss (VmRSS, all of it) or anon
#                  (RssAnon: heaptrace's own memory, without the rings)
#   KEEP=DIR       keep the profiles and the RSS log in DIR
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
HT="$BUILD/heaptrace"
DURATION=${DURATION:-1200}
INTERVAL=${INTERVAL:-60}
SAMPLING=${SAMPLING-512K}
SERVICE=${SERVICE:-pl}
PPROF=${PPROF:-yes}
STEP=${STEP:-30}
LIMIT=${LIMIT:-1.10}
MEASURE=${MEASURE:-rss}
BASE=120
if [ ! -x "$HT" ]; then
	echo "bench/continuous.sh: no $HT: build it first (ninja -C $BUILD)" >&2
	exit 2
fi
if [ "$DURATION" -lt $((BASE + STEP)) ]; then
	echo "bench/continuous.sh: DURATION must be at least $((BASE + STEP)) s" >&2
	exit 2
fi

W=${KEEP:-$(mktemp -d)}
mkdir -p "$W"
SVC=
HTPID=
cleanup() {
	[ -z "$HTPID" ] || kill -INT "$HTPID" 2>/dev/null || true
	[ -z "$HTPID" ] || wait "$HTPID" 2>/dev/null || true
	[ -z "$SVC" ] || kill -KILL "$SVC" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

case $SERVICE in
pl)
	PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 export PERL_HASH_SEED PERL_PERTURB_KEYS
	perl bench/service.pl "$W/count" >/dev/null 2>&1 </dev/null &
	;;
c)
	cc -std=c11 -O2 -g -pthread -o "$W/service" bench/service.c
	"$W/service" "$W/count" >/dev/null 2>&1 </dev/null &
	;;
*)
	echo "bench/continuous.sh: SERVICE is pl or c, not $SERVICE" >&2
	exit 2
	;;
esac
SVC=$!
for _ in $(seq 100); do
	[ -s "$W/count" ] && break
	sleep 0.1
done
sleep 1

set -- --time-unit=ms --duration="$DURATION" --massif-out-file="$W/massif.out"
[ "$INTERVAL" = 0 ] || set -- "$@" --snapshot-every="$INTERVAL"
case $SAMPLING in
''|0) ;;
*) set -- "$@" --sampling-interval="$SAMPLING" ;;
esac
[ "$PPROF" != yes ] || set -- "$@" --pprof=yes
[ -z "${RING:-}" ] || set -- "$@" --ring-size="$RING"
echo "heaptrace attach $* $SVC (service.$SERVICE)"
"$HT" attach "$@" "$SVC" >/dev/null 2>"$W/heaptrace.err" </dev/null &
HTPID=$!

# "VmRSS RssAnon RssFile RssShmem" of process $1, in kB ("-" once it is
# gone).
rss() {
	awk '$1 == "VmRSS:" { r = $2 } $1 == "RssAnon:" { a = $2 }
	     $1 == "RssFile:" { f = $2 } $1 == "RssShmem:" { s = $2 }
	     END { if (r == "") print "-"; else print r, a, f, s }' \
		"/proc/$1/status" 2>/dev/null || echo -
}

echo "# seconds VmRSS RssAnon RssFile RssShmem (kB)" > "$W/rss.log"
t=0
rss_base=
rss_end=
while [ "$t" -lt "$DURATION" ] && kill -0 "$HTPID" 2>/dev/null; do
	sleep "$STEP"
	t=$((t + STEP))
	r=$(rss "$HTPID")
	[ "$r" = - ] && break
	echo "$t $r" >> "$W/rss.log"
	set -- $r
	echo "t=${t}s heaptrace RSS $1 kB (anon $2, file $3, rings $4)"
	[ "$t" -ne "$BASE" ] || rss_base=$r
	rss_end=$r
done
st=0
wait "$HTPID" || st=$?
HTPID=
kill -KILL "$SVC" 2>/dev/null || true
wait "$SVC" 2>/dev/null || true
SVC=
if [ "$st" != 0 ]; then
	echo "heaptrace attach exited $st: $(head -3 "$W/heaptrace.err")" >&2
	exit 1
fi

fail=0
if [ -z "$rss_base" ] || [ -z "$rss_end" ]; then
	echo "no RSS reading at ${BASE} s and at the end" >&2
	fail=1
else
	# part K (1 VmRSS, 2 RssAnon, 3 RssFile, 4 RssShmem) of a reading
	part() { echo "$2" | cut -d' ' -f"$1"; }
	ratio() { awk -v a="$(part "$1" "$rss_end")" -v b="$(part "$1" "$rss_base")" 'BEGIN { printf "%.3f", a / b }'; }
	echo "heaptrace RSS: $(part 1 "$rss_base") kB at ${BASE} s, $(part 1 "$rss_end") kB at the end (${t} s): ratio $(ratio 1)"
	echo "  its own (RssAnon): $(part 2 "$rss_base") -> $(part 2 "$rss_end") kB, ratio $(ratio 2); files $(part 3 "$rss_base") -> $(part 3 "$rss_end"), ratio $(ratio 3); rings $(part 4 "$rss_base") -> $(part 4 "$rss_end"), ratio $(ratio 4)"
	case $MEASURE in
	anon) k=2 ;;
	*) k=1 ;;
	esac
	r=$(ratio $k)
	echo "$MEASURE ratio $r, limit $LIMIT"
	awk -v r="$r" -v l="$LIMIT" 'BEGIN { exit !(r <= l) }' || fail=1
fi

# Every profile written: readable by heaptrace print and report, and its
# .pb.gz by go tool pprof.
n=0
for f in "$W"/massif.out "$W"/massif.out.snapshot-*; do
	case $f in *.sites|*.pb.gz|*'*'*) continue ;; esac
	[ -e "$f" ] || continue
	n=$((n + 1))
	if ! "$HT" print "$f" >/dev/null 2>"$W/check.err"; then
		echo "$f: heaptrace print: $(head -1 "$W/check.err")" >&2
		fail=1
	fi
	if ! "$HT" report "$f" >/dev/null 2>"$W/check.err"; then
		echo "$f: heaptrace report: $(head -1 "$W/check.err")" >&2
		fail=1
	fi
	[ "$PPROF" = yes ] || continue
	if [ ! -s "$f.pb.gz" ]; then
		echo "$f.pb.gz: missing" >&2
		fail=1
	elif command -v go >/dev/null 2>&1 &&
		! go tool pprof -top "$f.pb.gz" >/dev/null 2>"$W/check.err"; then
		echo "$f.pb.gz: go tool pprof: $(head -1 "$W/check.err")" >&2
		fail=1
	fi
done
echo "$n profiles checked (heaptrace print, report$( [ "$PPROF" = yes ] && command -v go >/dev/null 2>&1 && echo ', go tool pprof'))"
if [ "$INTERVAL" != 0 ]; then
	want=$((DURATION / INTERVAL))
	got=$((n - 1))
	# the last period may end with the attach itself
	if [ "$got" -lt $((want - 1)) ]; then
		echo "periodic profiles: $got, expected about $want" >&2
		fail=1
	fi
fi
exit "$fail"
