#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 17: what heaptrace costs on the kinds of program people profile,
# in one command. Nine program types (below), each run natively, under
# `heaptrace run -q` (default backend) and under heaptrack, side by side
# in one sitting (the runs of one type interleaved, so a burst of load on
# this shared VM hits every tool alike), as medians of RUNS runs, printed
# as native seconds and ratios to native; beside them heaptrace's event
# count and its own peak RSS, from one more run with --stats=yes. Then
# start-up: `ls /` and `true`, heaptrace's added wall time (with its symbol
# cache filled by an earlier run, and a first run with none) against
# heaptrack's and Massif's. Last, the types where heaptrace is not faster
# than heaptrack.
#
# Types (names for ONLY=): compute (C, 2 allocations), perl (200k-key
# hash, ~800k allocator calls), cc1 (-O2 on a generated file), python
# (/usr/bin/python3, JSON), sqlite (200k rows inserted), node (1M small
# objects), rust (BTreeMap, compiled with rustc -O here), threads (C, 2
# threads x 1.5M allocations), git (`git log -p` of this repository's
# first GIT_COMMITS commits), and startup (the start-up section).
# A type whose program (or compiler) is missing prints n/a.
#
# Usage: bench/programs.sh [BUILD_DIR | HEAPTRACE] (default build: BUILD_DIR/heaptrace)
# Environment: RUNS=3; ONLY=node,perl runs only those types; MASSIF=1 adds
# a Massif column to the table (MASSIF_RUNS=1 run a type: Massif takes
# minutes on some); STARTUP_RUNS=11; HEAPTRACK=no leaves heaptrack out;
# GIT_COMMITS=80; SAMPLING=512K adds a column of `heaptrace run -q
# --sampling-interval=512K` (any heaptrace size; 0 or unset: none), run
# interleaved with the others, and a line naming the types above 1.05x
# native under it. CPU=1 adds a table of CPU seconds (user + system, of
# the program and heaptrace together, from /usr/bin/time) as ratios to
# native: on a machine loaded by other work, wall times follow the share
# of the CPUs each run got more than the tool. NOMEMO=1 adds a column of
# heaptrace with its stub's walk memo off (HEAPTRACE_WALK_MEMO=no,
# docs/inline-backend.md), interleaved too. The start-up section compares Massif whenever valgrind
# is installed (about half a second a run).
# Exit status 1 when a heaptrace run exited otherwise than the native run
# or printed other output; 2 for a bad argument.
# shellcheck disable=SC2317 # the case_ functions are called as "case_$t"
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ARG=${1:-build}
if [ -f "$ARG" ]; then HT=$ARG; else HT="$ARG/heaptrace"; fi
RUNS=${RUNS:-3}
ONLY=${ONLY:-}
MASSIF=${MASSIF:-0}
MASSIF_RUNS=${MASSIF_RUNS:-1}
STARTUP_RUNS=${STARTUP_RUNS:-11}
GIT_COMMITS=${GIT_COMMITS:-80}
SAMPLING=${SAMPLING:-0}
CPU=${CPU:-0}
TYPES="compute perl cc1 python sqlite node rust threads git"

if [ ! -x "$HT" ]; then
	echo "bench/programs.sh: no $HT: build it first (ninja -C $ARG)" >&2
	exit 2
fi
case "$HT" in /*) ;; *) HT="$ROOT/$HT" ;; esac
for t in $(echo "$ONLY" | tr ',' ' '); do
	case " $TYPES startup " in
	*" $t "*) ;;
	*) echo "bench/programs.sh: ONLY: no type \"$t\" (types: $TYPES startup)" >&2; exit 2 ;;
	esac
done

have() { command -v "$1" >/dev/null 2>&1; }

# selected TYPE: is TYPE to run (no ONLY, or named in it)?
selected() {
	[ -z "$ONLY" ] && return 0
	case ",$ONLY," in *",$1,"*) return 0 ;; esac
	return 1
}

W=$(mktemp -d)
# heaptrace's symbol cache (--symbol-cache) private to this bench: its
# first run of a program fills it, the median shows the runs after.
# Every tool and the native runs see the same environment.
XDG_CACHE_HOME=$W/cache
export XDG_CACHE_HOME
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM HUP

if [ "${HEAPTRACK:-yes}" != no ] && have heaptrack; then HK=yes; else HK=; fi
if have valgrind; then VG=yes; else VG=; fi
if [ "$MASSIF" = 1 ] && [ -n "$VG" ]; then MS=yes; else MS=; fi
if [ "$SAMPLING" != 0 ]; then HS=yes; else HS=; fi
if [ "${NOMEMO:-0}" = 1 ]; then HM=yes; else HM=; fi

# Deterministic hashing: every perl run does the same work.
PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 export PERL_HASH_SEED PERL_PERTURB_KEYS

# The clock: bash's EPOCHREALTIME costs no process (a date is one fork and
# exec, a millisecond or more on a loaded VM, on both sides of every run);
# its decimal separator follows the locale, hence the rebuild. Sets T.
if [ -n "${BASH_VERSION:-}" ] && [ -n "${EPOCHREALTIME:-}" ]; then
	stamp() { T=$EPOCHREALTIME; T="${T%%[!0-9]*}.${T##*[!0-9]}"; }
else
	stamp() { T=$(date +%s.%N); }
fi

# timed TAG CMD...: run CMD once, its stdout to $W/TAG.out and stderr to
# $W/TAG.err (the last run's are kept), its exit status appended to
# $W/TAG.st and its wall time in seconds to $W/TAG.t.
timed() {
	tag=$1; shift
	st=0
	stamp; s=$T
	if [ "$CPU" = 1 ]; then
		/usr/bin/time -o "$W/cpu.one" -f '%U %S' "$@" >"$W/$tag.out" 2>"$W/$tag.err" </dev/null || st=$?
		awk 'END { printf "%.3f\n", $1 + $2 }' "$W/cpu.one" >>"$W/$tag.c"
	else
		"$@" >"$W/$tag.out" 2>"$W/$tag.err" </dev/null || st=$?
	fi
	stamp; e=$T
	echo "$st" >>"$W/$tag.st"
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.6f\n", e - s }' >>"$W/$tag.t"
}

# med_cpu TAG: the median of TAG's CPU seconds (CPU=1), or nothing.
med_cpu() {
	[ -s "$W/$1.c" ] || return 0
	sort -g "$W/$1.c" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# med TAG: the median of TAG's times, or nothing when it never ran.
med() {
	[ -s "$W/$1.t" ] || return 0
	sort -g "$W/$1.t" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# ratio A B: A / B with two decimals and an x, or n/a.
ratio() {
	if [ -n "$1" ] && [ -n "$2" ]; then
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'
	else
		echo n/a
	fi
}

STATUS=0
: >"$W/table"
: >"$W/notes"
: >"$W/cmp"
: >"$W/sampled"
: >"$W/cputable"

# row NAME NATIVE HT HM HS HK MS EVENTS RSS LABEL: one line of the table
# (HM only with NOMEMO=1, HS only with SAMPLING, MS only with MASSIF=1).
row() {
	r_name=$1 r_native=$2 r_ht=$3 r_hm=$4 r_hs=$5
	shift 5
	{
		printf '%-8s %9s %10s' "$r_name" "$r_native" "$r_ht"
		[ -z "$HM" ] || printf ' %10s' "$r_hm"
		[ -z "$HS" ] || printf ' %10s' "$r_hs"
		printf ' %10s' "$1"
		[ -z "$MS" ] || printf ' %10s' "$2"
		printf ' %10s %11s  %s\n' "$3" "$4" "$5"
	} >>"$W/table"
}

# skip NAME LABEL WHY: a type that cannot run here.
skip() {
	row "$1" n/a n/a n/a n/a n/a n/a n/a n/a "$2"
	echo "$1: n/a: $3" >>"$W/notes"
}

# bench_case NAME LABEL CMD...: everything for one type.
bench_case() {
	name=$1; label=$2; shift 2
	echo "running $name: $label" >&2
	for r in $(seq "$RUNS"); do
		timed "$name.native" "$@"
		timed "$name.ht" "$HT" run -q --massif-out-file="$W/ht.out" -- "$@"
		if [ -n "$HM" ]; then
			timed "$name.hm" env HEAPTRACE_WALK_MEMO=no "$HT" run -q \
				--massif-out-file="$W/ht.out" -- "$@"
		fi
		if [ -n "$HS" ]; then
			timed "$name.hs" "$HT" run -q --sampling-interval="$SAMPLING" \
				--massif-out-file="$W/ht.out" -- "$@"
		fi
		if [ -n "$HK" ]; then
			timed "$name.hk" heaptrack -o "$W/hk" "$@"
			rm -f "$W"/hk.*
		fi
		if [ -n "$MS" ] && [ "$r" -le "$MASSIF_RUNS" ]; then
			timed "$name.ms" valgrind --tool=massif --massif-out-file="$W/ms.out" "$@"
		fi
	done
	# Counted in a run of its own: --stats=yes adds its bookkeeping to
	# the time, and the timed runs are what a user runs.
	"$HT" run -q --stats=yes --massif-out-file="$W/ht.out" -- "$@" \
		>/dev/null 2>"$W/$name.stats" </dev/null || true
	events=$(sed -n 's/^heaptrace: stats: process [0-9]*: \([0-9]*\) events.*/\1/p' \
		"$W/$name.stats" | awk '{ s += $1 } END { if (NR > 1) printf "%d (%d pr.)", s, NR; else if (NR) print s }')
	rss=$(sed -n "s/^heaptrace: stats: heaptrace's own peak RSS \([0-9]*\) KiB.*/\1/p" \
		"$W/$name.stats" | awk 'NR == 1 { printf "%.1f MiB", $1 / 1024 }')

	# A profiler must not change what the program does: heaptrace's runs
	# exit as the native ones and print the same (with -q, heaptrace
	# itself prints nothing but errors, so its stderr is compared too).
	if [ "$(sort -u "$W/$name.ht.st")" != "$(sort -u "$W/$name.native.st")" ]; then
		echo "$name: heaptrace runs exited $(sort -u "$W/$name.ht.st" | tr '\n' ' ')where native runs exited $(sort -u "$W/$name.native.st" | tr '\n' ' ')" >>"$W/notes"
		STATUS=1
	fi
	if ! cmp -s "$W/$name.ht.out" "$W/$name.native.out"; then
		echo "$name: heaptrace's run printed other output than the native one" >>"$W/notes"
		STATUS=1
	fi
	if ! cmp -s "$W/$name.ht.err" "$W/$name.native.err"; then
		echo "$name: heaptrace's run's stderr: $(diff "$W/$name.native.err" "$W/$name.ht.err" | sed -n 's/^> //p' | head -1)" >>"$W/notes"
		STATUS=1
	fi
	if [ -n "$HS" ] && { [ "$(sort -u "$W/$name.hs.st")" != "$(sort -u "$W/$name.native.st")" ] ||
		! cmp -s "$W/$name.hs.out" "$W/$name.native.out" ||
		! cmp -s "$W/$name.hs.err" "$W/$name.native.err"; }; then
		echo "$name: heaptrace --sampling-interval=$SAMPLING runs exited $(sort -u "$W/$name.hs.st" | tr '\n' ' ')or printed other output than the native ones: $(head -1 "$W/$name.hs.err")" >>"$W/notes"
		STATUS=1
	fi
	if [ -n "$HK" ] && [ "$(sort -u "$W/$name.hk.st")" != "$(sort -u "$W/$name.native.st")" ]; then
		echo "$name: heaptrack runs exited $(sort -u "$W/$name.hk.st" | tr '\n' ' ')(its ratio is suspect): $(tail -1 "$W/$name.hk.err")" >>"$W/notes"
	fi
	[ -n "$events" ] || echo "$name: --stats=yes printed no event count: $(head -1 "$W/$name.stats")" >>"$W/notes"

	n=$(med "$name.native"); h=$(med "$name.ht"); k=$(med "$name.hk"); m=$(med "$name.ms")
	s=$(med "$name.hs"); hm=$(med "$name.hm")
	row "$name" "$(printf '%.3f s' "$n")" "$(ratio "$h" "$n")" "$(ratio "$hm" "$n")" "$(ratio "$s" "$n")" \
		"$(ratio "$k" "$n")" "$(ratio "$m" "$n")" "${events:-?}" "${rss:-?}" "$label"
	[ -z "$s" ] || echo "$name $(ratio "$s" "$n") $s $n" >>"$W/sampled"
	if [ "$CPU" = 1 ]; then
		cn=$(med_cpu "$name.native")
		printf '%-8s %9s %10s %10s %10s %10s\n' "$name" "$(printf '%.2f s' "$cn")" \
			"$(ratio "$(med_cpu "$name.ht")" "$cn")" "$(ratio "$(med_cpu "$name.hm")" "$cn")" \
			"$(ratio "$(med_cpu "$name.hs")" "$cn")" \
			"$(ratio "$(med_cpu "$name.hk")" "$cn")" >>"$W/cputable"
	fi
	[ -z "$k" ] || echo "$name $(ratio "$h" "$n") $(ratio "$k" "$n") $h $k" >>"$W/cmp"
}

# The types, in the table's order. Each finds its program, prepares its
# input, and calls bench_case or skip.

case_compute() {
	label="compute-bound C, 2 allocations"
	if ! cc -O2 -o "$W/compute" bench/compute.c 2>"$W/cc.err"; then
		skip compute "$label" "cc failed: $(head -1 "$W/cc.err")"; return
	fi
	bench_case compute "$label" "$W/compute"
}

case_perl() {
	label="perl, 200k-key hash"
	if ! have perl; then skip perl "$label" "no perl"; return; fi
	# shellcheck disable=SC2016 # perl's $, not the shell's
	bench_case perl "$label" perl -e 'my %h; $h{$_} = $_ for 1..200000;'
}

case_cc1() {
	cc1=$(cc -print-prog-name=cc1 2>/dev/null || true)
	if [ ! -x "$cc1" ]; then skip cc1 "cc1 -O2" "no cc1 (cc -print-prog-name=cc1: $cc1)"; return; fi
	awk -v N=150 -f bench/gen-c.awk >"$W/big.c"
	bench_case cc1 "cc1 -O2, generated $(wc -l <"$W/big.c")-line C file" \
		"$cc1" -quiet -O2 "$W/big.c" -o /dev/null
}

# Debian's own interpreter, not a pyenv shim (a shim is bash scripts
# before the interpreter: their start-up, not python's work).
case_python() {
	label="python3, JSON dumps+loads of 100k records"
	if [ ! -x /usr/bin/python3 ]; then skip python "$label" "no /usr/bin/python3"; return; fi
	bench_case python "$label" /usr/bin/python3 -c "$(cat bench/json_records.py)"
}

# One transaction (200k autocommits would time the page cache, not the
# allocator), in memory for the same reason; the index adds sorting.
case_sqlite() {
	label="sqlite3, 200k rows inserted and indexed"
	if ! have sqlite3; then skip sqlite "$label" "no sqlite3"; return; fi
	awk -v N=200000 'BEGIN {
		q = sprintf("%c", 39)
		print "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);"
		print "BEGIN;"
		for (i = 0; i < N; i++)
			printf "INSERT INTO t(name, v) VALUES (%sname-%d%s, %d.5);\n", q, (i * 7919) % 1000003, q, i
		print "COMMIT;"
		print "CREATE INDEX t_name ON t(name);"
		print "SELECT count(*), sum(v) FROM t;"
	}' >"$W/rows.sql"
	bench_case sqlite "$label" sqlite3 :memory: ".read $W/rows.sql"
}

case_node() {
	label="node, 1M small objects"
	if [ ! -x /usr/bin/node ]; then skip node "$label" "no /usr/bin/node"; return; fi
	bench_case node "$label" /usr/bin/node -e '
const a = [];
for (let i = 0; i < 1e6; i++) a.push({ i: i, s: "k" + i });
let t = 0;
for (const o of a) t += o.s.length;
console.log(a.length, t);
'
}

case_rust() {
	label="Rust, BTreeMap of 600k keys"
	rustc=${RUSTC:-}
	if [ -z "$rustc" ]; then
		for c in "$(command -v rustc || true)" /root/.cargo/bin/rustc /usr/bin/rustc; do
			if [ -n "$c" ] && [ -x "$c" ]; then rustc=$c; break; fi
		done
	fi
	if [ -z "$rustc" ]; then skip rust "$label" "no rustc"; return; fi
	if ! "$rustc" -O -o "$W/btree" bench/btree.rs 2>"$W/rustc.err"; then
		skip rust "$label" "$rustc failed: $(head -1 "$W/rustc.err")"; return
	fi
	bench_case rust "$label" "$W/btree"
}

case_threads() {
	label="C, 2 threads x 1.5M allocations"
	if ! cc -O2 -pthread -o "$W/threads" bench/threads.c 2>"$W/cc.err"; then
		skip threads "$label" "cc failed: $(head -1 "$W/cc.err")"; return
	fi
	bench_case threads "$label" "$W/threads" 1500000
}

# A fixed commit counted from the root, so that commits made after it
# (this repository grows while people work) change nothing; fewer commits
# than GIT_COMMITS: HEAD, the whole history.
case_git() {
	label="git log -p, first $GIT_COMMITS commits of this repository"
	if ! have git || ! git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
		skip git "git log -p" "no git, or $ROOT is no git repository"; return
	fi
	commit=$(git -C "$ROOT" rev-list --reverse --first-parent HEAD | sed -n "${GIT_COMMITS}p")
	if [ -z "$commit" ]; then
		commit=$(git -C "$ROOT" rev-parse HEAD)
		label="git log -p, all $(git -C "$ROOT" rev-list --count HEAD) commits of this repository"
	fi
	bench_case git "$label" git -C "$ROOT" log -p "$commit"
}

# startup_one LABEL CMD...: the added start-up of each tool on CMD, a
# program that does next to nothing: median tool run minus median native
# run (the fork, exec and clock reads cancel out).
startup_one() {
	label=$1; shift
	rm -f "$W"/su.*
	for _ in $(seq "$STARTUP_RUNS"); do
		timed su.native "$@"
		timed su.ht "$HT" run -q --massif-out-file="$W/ht.out" -- "$@"
		# A first run: nothing in the symbol cache.
		rm -rf "$W/cold"
		timed su.htcold env XDG_CACHE_HOME="$W/cold" "$HT" run -q \
			--massif-out-file="$W/ht.out" -- "$@"
		if [ -n "$HK" ]; then
			timed su.hk heaptrack -o "$W/hk" "$@"
			rm -f "$W"/hk.*
		fi
		[ -z "$VG" ] || timed su.ms valgrind --tool=massif --massif-out-file="$W/ms.out" "$@"
	done
	if [ "$(sort -u "$W/su.ht.st")" != 0 ] || ! cmp -s "$W/su.ht.out" "$W/su.native.out"; then
		echo "startup: heaptrace run of $label exited $(sort -u "$W/su.ht.st" | tr '\n' ' ')or printed other output than the native one: $(head -1 "$W/su.ht.err")" >>"$W/notes"
		STATUS=1
	fi
	n=$(med su.native)
	awk -v label="$label" -v n="$n" -v h="$(med su.ht)" -v c="$(med su.htcold)" -v k="$(med su.hk)" -v m="$(med su.ms)" '
	function added(t) { return t == "" ? "n/a" : sprintf("%+.1f ms", (t - n) * 1000) }
	BEGIN {
		printf "  %-9s native %6.1f ms   heaptrace %10s (first run %s)   heaptrack %10s   massif %10s\n",
			label, n * 1000, added(h), added(c), added(k), added(m)
	}'
}

echo "heaptrace programs bench: $HT; medians of $RUNS interleaved runs, wall time ratio to native ($(nproc) CPUs)"
[ -n "$HK" ] || echo "(heaptrack: not installed or HEAPTRACK=no: its column is n/a)"
[ "$MASSIF" != 1 ] || [ -n "$MS" ] || echo "(MASSIF=1 but no valgrind: its column is n/a)"
echo "load at start: $(uptime | sed 's/.*load average/load average/')"

row type native heaptrace "no memo" "$SAMPLING" heaptrack "massif($MASSIF_RUNS)" events "tracer RSS" program
ran=
for t in $TYPES; do
	selected "$t" || continue
	"case_$t"
	ran="$ran $t"
done
if [ -n "$ran" ]; then
	echo
	cat "$W/table"
	echo "(events: allocator calls heaptrace recorded, summed over processes; tracer RSS: heaptrace's own peak, the target's not included; both from one more run with --stats=yes)"
	[ -z "$HS" ] || echo "(column $SAMPLING: heaptrace run -q --sampling-interval=$SAMPLING)"
	[ -z "$HM" ] || echo "(column no memo: HEAPTRACE_WALK_MEMO=no heaptrace run -q: the stub walks every frame)"
	if [ -s "$W/cputable" ]; then
		echo
		echo "CPU seconds, user + system, of the program and heaptrace together (medians; ratios to native):"
		printf '%-8s %9s %10s %10s %10s %10s\n' type native heaptrace "no memo" "$SAMPLING" heaptrack
		cat "$W/cputable"
	fi
fi

if selected startup; then
	echo
	echo "start-up added to a trivial program (median of $STARTUP_RUNS runs minus native's median):"
	startup_one "ls /" ls /
	# The binary: a shell's builtin true would start nothing.
	tru=/bin/true; [ -x "$tru" ] || tru=/usr/bin/true
	startup_one "true" "$tru"
fi
echo "load at end:   $(uptime | sed 's/.*load average/load average/')"
# Every tool here needs CPU beside the program's (heaptrace's tracer drains
# its ring on a CPU of its own, heaptrack_interpret runs beside the
# program): with other work running, the ratios say more about the load.
awk -v cpus="$(nproc)" '{ if ($1 >= cpus) printf "(the 1-minute load, %s, is at or above the %d CPUs: other work was running, and the ratios are noisy)\n", $1, cpus }' /proc/loadavg

if [ -s "$W/notes" ]; then
	echo
	echo "notes:"
	sed 's/^/  /' "$W/notes"
fi

if [ -n "$ran" ] && [ -n "$HS" ]; then
	echo
	awk -v iv="$SAMPLING" '$3 > 1.05 * $4 { s = s sprintf("%s%s %s", s == "" ? "" : ", ", $1, $2) }
	END {
		if (NR == 0) print "sampled: no type ran"
		else if (s == "") printf "sampled at %s: every type run within 1.05x native\n", iv
		else printf "sampled at %s: above 1.05x native: %s\n", iv, s
	}' "$W/sampled"
fi

if [ -n "$ran" ]; then
	echo
	if [ -z "$HK" ]; then
		echo "summary: no heaptrack, nothing to compare with"
	elif [ ! -s "$W/cmp" ]; then
		echo "summary: no type ran under both tools"
	else
		awk '$4 >= $5 { s = s sprintf("%s%s (%s vs %s)", s == "" ? "" : ", ", $1, $2, $3) }
		END {
			if (s == "")
				print "summary: heaptrace below heaptrack on every type run"
			else
				print "summary: heaptrace not below heaptrack on: " s
		}' "$W/cmp"
	fi
fi
exit "$STATUS"
