#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Cost of the leak check (issue 14): wall time of programs that allocate a
# lot and end with a large live heap (the exit-time scan has real work),
# natively, under `heaptrace run -q` without and with --leak-check=full,
# under memcheck --leak-check=full and under heaptrack, measured side by
# side in one sitting (the runs of one case interleaved), as medians of
# RUNS runs, printed in seconds and as ratios to native; then heaptrace's
# HEAP SUMMARY and LEAK SUMMARY next to memcheck's (they should be equal).
# Two cases: perl building a hash of PERL_KEYS string entries and an array
# of 2-element arrays, kept until exit, with hashes of temporaries built
# and dropped in between; C building a chained hash table of C_ENTRIES
# nodes with key strings (two blocks each) kept until exit, four
# short-lived blocks per entry, and known leaks (1,000 lists of 10 blocks
# whose heads are dropped, 250 blocks pointed to only from inside).
# Usage: bench/leak.sh [BUILD_DIR | HEAPTRACE] (default build: BUILD_DIR/heaptrace);
# RUNS=3, MEMCHECK_RUNS=1 (memcheck takes 15 s or more a run here),
# PERL_KEYS=400000, C_ENTRIES=1000000, HEAPTRACK=no leaves heaptrack out,
# HT_OPTS adds options to both heaptrace runs (e.g. --time-unit=B),
# MATCH_ENV=no leaves the environment of the runs other than memcheck's
# alone (see below).
# A heaptrace without --leak-check yet prints n/a in its column.
# Exit status 1 when a heaptrace leak report has neither a LEAK SUMMARY nor
# an "All heap blocks were freed" line, or a traced run printed other
# output than the native one.
set -eu
cd "$(dirname "$0")/.."
ARG=${1:-build}
if [ -f "$ARG" ]; then HT=$ARG; else HT="$ARG/heaptrace"; fi
RUNS=${RUNS:-3}
MEMCHECK_RUNS=${MEMCHECK_RUNS:-1}
PERL_KEYS=${PERL_KEYS:-400000}
C_ENTRIES=${C_ENTRIES:-1000000}
if [ ! -x "$HT" ]; then
	echo "bench/leak.sh: no $HT: build it first (ninja -C $ARG)" >&2
	exit 1
fi

have() { command -v "$1" >/dev/null 2>&1; }

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM HUP

# Deterministic hashing: every perl run does the same work.
PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 export PERL_HASH_SEED PERL_PERTURB_KEYS

cat > "$W/keep.pl" <<'EOF'
use strict;
use warnings;
my $n = shift // 400000;
our %keep;
our @list;
for my $i (1 .. $n) {
	my $k = "key-" . ($i * 7919 % 1000003);
	$keep{$k} = "value " . ($i * 7) . " of $i";
	push @list, [$i, $k] if $i % 4 == 0;
}
# Temporaries, built and dropped: freed strings, rehashing.
my $sum = 0;
for my $r (1 .. 3) {
	my %tmp;
	$tmp{"t$r-$_"} = "x" x (1 + $_ % 61) for 1 .. $n / 2;
	$sum += length($_) for values %tmp;
}
print "keep.pl: ", scalar(keys %keep), " keys, ", scalar(@list), " pairs, $sum\n";
EOF

cat > "$W/keep.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *next; char *key; uint64_t value; };
struct list { struct list *next; char pad[40]; };

static struct node **table;
static char **interior;

/* LEN blocks in a list whose head is dropped: 1 definitely lost, the
   others indirectly. */
static __attribute__((noinline)) void lose_list(unsigned len)
{
	struct list *head = NULL;
	for (unsigned i = 0; i < len; i++) {
		struct list *l = malloc(sizeof *l);
		l->next = head;
		memset(l->pad, i, sizeof l->pad);
		head = l;
	}
	__asm__ volatile("" : : "r"(head) : "memory");
}

static __attribute__((noinline)) void churn(unsigned i)
{
	void *tmp[4];
	for (unsigned j = 0; j < 4; j++)
		tmp[j] = malloc(16 + (i * 37 + j * 101) % 700);
	for (unsigned j = 0; j < 4; j++)
		free(tmp[3 - j]);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	size_t nbuckets = n / 2 + 1, ninterior = 0;
	uint64_t sum = 0;

	table = calloc(nbuckets, sizeof *table);
	interior = calloc(n / 4000 + 1, sizeof *interior);
	for (size_t i = 0; i < n; i++) {
		char buf[48];
		int len = snprintf(buf, sizeof buf, "key-%zu-%zu", i * 7919 % 1000003, i);
		struct node *e = malloc(sizeof *e);
		e->key = malloc(len + 1);
		memcpy(e->key, buf, len + 1);
		e->value = i * 2654435761u;
		size_t b = (i * 40503) % nbuckets;
		e->next = table[b];
		table[b] = e;
		churn(i);
		if (i % 1000 == 999)
			lose_list(10);
		if (i % 4000 == 3999) {
			/* Only a pointer into its middle is kept: possibly lost. */
			char *p = malloc(256);
			memset(p, 1, 256);
			interior[ninterior++] = p + 64;
		}
	}
	for (size_t b = 0; b < nbuckets; b++)
		for (struct node *e = table[b]; e; e = e->next)
			sum += e->value ^ (unsigned char)e->key[4];
	printf("keep.c: %zu entries, checksum %llu\n", n, (unsigned long long)sum);
	return 0;
}
EOF
cc -std=c11 -O2 -g -Wall -Wextra -o "$W/keep" "$W/keep.c"

# Does this heaptrace have the leak check? (A heaptrace without the
# option refuses it with a usage message; one with the option but not the
# scan prints no report.)
if "$HT" run -q --leak-check=full --massif-out-file="$W/probe.out" -- true \
	>/dev/null 2>"$W/probe.err" </dev/null &&
	grep -q '^==[0-9]*== HEAP SUMMARY:' "$W/probe.err"; then
	LEAK=yes
else
	LEAK=
	echo "bench/leak.sh: $HT has no leak check yet (\`run --leak-check=full -- true\` printed no HEAP SUMMARY: $(head -1 "$W/probe.err")): its column is n/a" >&2
fi
if have valgrind; then MC=yes; else MC=; fi
if [ "${HEAPTRACK:-yes}" != no ] && have heaptrack; then HK=yes; else HK=; fi

# Memcheck's target runs with four more variables in its environment
# (LD_PRELOAD, LD_LIBRARY_PATH, GLIBCXX_FORCE_NEW, GLIBCPP_FORCE_NEW),
# which perl copies into %ENV: a few more blocks, and reports that differ
# for that alone. The other runs get the same variables through
# $W/withenv (LD_PRELOAD as blanks of the same length, which preload
# nothing), unless MATCH_ENV=no.
printf '#!/bin/sh\n. "%s/envadd"\nexec "$@"\n' "$W" > "$W/withenv"
chmod +x "$W/withenv"
: > "$W/envadd"
if [ -n "$MC" ] && [ "${MATCH_ENV:-yes}" != no ]; then
	env | sort > "$W/env.own"
	valgrind -q --tool=memcheck env 2>/dev/null </dev/null | sort > "$W/env.vg" || true
	comm -13 "$W/env.own" "$W/env.vg" | grep -v '^_=' | awk '
	{
		i = index($0, "="); k = substr($0, 1, i - 1); v = substr($0, i + 1)
		if (k == "LD_PRELOAD") gsub(/./, " ", v)
		if (index(v, "\047")) next
		printf "export %s=\047%s\047\n", k, v
	}' > "$W/envadd"
fi

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# timed TAG CMD...: run CMD once, its stdout to $W/TAG.out and stderr to
# $W/TAG.err (the last run's are kept), its exit status appended to
# $W/TAG.st, and its wall time in seconds appended to $W/TAG.t.
timed() {
	tag=$1; shift
	s=$(date +%s.%N)
	st=0
	"$@" >"$W/$tag.out" 2>"$W/$tag.err" </dev/null || st=$?
	e=$(date +%s.%N)
	echo "$st" >> "$W/$tag.st"
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f\n", e - s }' >> "$W/$tag.t"
}

secs() { if [ -s "$W/$1.t" ]; then median < "$W/$1.t"; fi; }

# ratio A B: A / B with two decimals and an x, or n/a.
ratio() {
	if [ -n "$1" ] && [ -n "$2" ]; then
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'
	else
		echo n/a
	fi
}

fsecs() { if [ -n "$1" ]; then printf '%.3f s' "$1"; else echo n/a; fi; }

# summary FILE: the HEAP SUMMARY and LEAK SUMMARY lines of a memcheck-style
# report, without the ==PID== prefixes and the loss records.
summary() {
	sed 's/^==[0-9]*== \{0,1\}//' "$1" | awk '
	/in use at exit:|total heap usage:|All heap blocks were freed/ { print; next }
	/^LEAK SUMMARY:/ { inleak = 1 }
	inleak { print }
	inleak && /suppressed:/ { inleak = 0 }'
}

# records FILE: how many loss records the report lists.
records() {
	sed -n 's/.* in loss record [0-9,]* of \([0-9,]*\)$/\1/p' "$1" | tail -1
}

STATUS=0

# bench_case NAME LABEL CMD...: everything for one program; NAME names
# its files, LABEL its lines.
bench_case() {
	name=$1; label=$2; shift 2
	for _ in $(seq "$RUNS"); do
		timed "$name.native" "$W/withenv" "$@"
		# shellcheck disable=SC2086 # HT_OPTS: words
		timed "$name.plain" "$W/withenv" "$HT" run -q ${HT_OPTS:-} \
			--massif-out-file="$W/$name.plain.massif" -- "$@"
		if [ -n "$LEAK" ]; then
			# shellcheck disable=SC2086
			timed "$name.leak" "$W/withenv" "$HT" run -q ${HT_OPTS:-} --leak-check=full \
				--massif-out-file="$W/$name.leak.massif" -- "$@"
		fi
		if [ -n "$HK" ]; then
			timed "$name.heaptrack" heaptrack -o "$W/$name.hk" "$@"
			rm -f "$W/$name".hk.*
		fi
	done
	# Where the leak check's time goes, from one more run (not timed):
	# --stats=yes prints the time to gather the blocks' contents and the
	# roots, to classify, and to write the report.
	if [ -n "$LEAK" ]; then
		# shellcheck disable=SC2086
		"$W/withenv" "$HT" run -q ${HT_OPTS:-} --leak-check=full --stats=yes \
			--massif-out-file="$W/$name.leak.massif" -- "$@" \
			>/dev/null 2>"$W/$name.stats" </dev/null || true
		sed -n 's/^heaptrace: stats: process [0-9]*: leak check of /leak check of /p' \
			"$W/$name.stats" | head -1 | sed "s/^/$label: /" >> "$W/scan"
	fi
	if [ -n "$MC" ]; then
		for _ in $(seq "$MEMCHECK_RUNS"); do
			timed "$name.memcheck" valgrind --tool=memcheck --leak-check=full \
				--run-libc-freeres=no "$@"
		done
	fi

	# Every run printed what the native one printed (heaptrack adds
	# lines of its own to stdout).
	for tag in plain leak memcheck heaptrack; do
		[ -f "$W/$name.$tag.out" ] || continue
		if ! grep -qxF -f "$W/$name.native.out" "$W/$name.$tag.out"; then
			echo "bench/leak.sh: $label under $tag printed $(head -1 "$W/$name.$tag.out") instead of $(head -1 "$W/$name.native.out")" >&2
			STATUS=1
		fi
		bad=$(grep -cv '^0$' "$W/$name.$tag.st" || true)
		[ "$bad" = 0 ] || echo "bench/leak.sh: $label under $tag: $bad runs exited non-zero ($(sort -u "$W/$name.$tag.st" | tr '\n' ' '))" >&2
	done
	if [ -n "$LEAK" ] && ! grep -qE '^==[0-9]+== (LEAK SUMMARY:|All heap blocks were freed)' "$W/$name.leak.err"; then
		echo "bench/leak.sh: $label: heaptrace --leak-check=full printed no LEAK SUMMARY (nor \"All heap blocks were freed\"): $(head -1 "$W/$name.leak.err")" >&2
		STATUS=1
	fi

	n=$(secs "$name.native"); p=$(secs "$name.plain"); l=$(secs "$name.leak")
	m=$(secs "$name.memcheck"); h=$(secs "$name.heaptrack")
	printf '%-26s %9s %9s %8s %9s %8s %9s %8s %9s %8s\n' "$label" "$(fsecs "$n")" \
		"$(fsecs "$p")" "$(ratio "$p" "$n")" "$(fsecs "$l")" "$(ratio "$l" "$n")" \
		"$(fsecs "$m")" "$(ratio "$m" "$n")" "$(fsecs "$h")" "$(ratio "$h" "$n")" >> "$W/table"
	if [ -n "$l" ]; then
		awk -v name="$label" -v n="$n" -v p="$p" -v l="$l" 'BEGIN {
			printf "%-26s leak check alone (leak-check run - plain run): %+.3f s = %+.2fx native; leak-check run / plain run %.2fx\n",
				name, l - p, (l - p) / n, l / p }' >> "$W/extra"
	fi
	if [ "$name" = perl ] && [ -n "$l" ]; then
		awk -v l="$l" -v n="$n" -v p="$p" 'BEGIN {
			r = l / n
			printf "issue 14 acceptance (--leak-check=full <= 1.6x native on the perl run): %.2fx: %s (heaptrace without the leak check: %.2fx)\n",
				r, r <= 1.6 ? "met" : "NOT met", p / n }' >> "$W/extra"
	fi
}

echo "heaptrace leak-check bench: $HT; medians of $RUNS interleaved runs (memcheck: $MEMCHECK_RUNS run(s)), wall time and ratio to native ($(nproc) CPUs)"
[ ! -s "$W/envadd" ] || echo "environment of the native and heaptrace runs as memcheck's target has it: $(sed 's/^export \([^=]*\)=.*/\1/' "$W/envadd" | tr '\n' ' ')"
echo "load at start: $(uptime | sed 's/.*load average/load average/')"
printf '%-26s %9s %9s %8s %9s %8s %9s %8s %9s %8s\n' case native "heaptrace" "" \
	"--leak-check=full" "" memcheck "" heaptrack "" > "$W/table"
: > "$W/extra"
: > "$W/scan"
PERL_LABEL="perl $PERL_KEYS-key hash"
C_LABEL="C $C_ENTRIES-entry table"
bench_case perl "$PERL_LABEL" perl "$W/keep.pl" "$PERL_KEYS"
bench_case c "$C_LABEL" "$W/keep" "$C_ENTRIES"
echo "load at end:   $(uptime | sed 's/.*load average/load average/')"
echo
cat "$W/table"
[ -n "$MC" ] || echo "(memcheck: valgrind not installed)"
[ -n "$HK" ] || echo "(heaptrack: not installed or HEAPTRACK=no)"
[ -n "$LEAK" ] || echo "(--leak-check=full: this heaptrace has no leak check yet)"
echo
cat "$W/extra"
if [ -s "$W/scan" ]; then
	echo "the leak check's own time (--stats=yes, one more run):"
	sed 's/^/  /' "$W/scan"
fi

# The reports side by side.
for name in perl c; do
	[ -n "$LEAK" ] || [ -n "$MC" ] || break
	if [ "$name" = perl ]; then label=$PERL_LABEL; else label=$C_LABEL; fi
	echo
	echo "$label: HEAP and LEAK SUMMARY (left heaptrace --leak-check=full, right memcheck)"
	if [ -n "$LEAK" ]; then summary "$W/$name.leak.err" > "$W/sum.ht"; else echo n/a > "$W/sum.ht"; fi
	if [ -n "$MC" ]; then summary "$W/$name.memcheck.err" > "$W/sum.mc"; else echo n/a > "$W/sum.mc"; fi
	[ -s "$W/sum.ht" ] || echo "(no summary)" > "$W/sum.ht"
	[ -s "$W/sum.mc" ] || echo "(no summary)" > "$W/sum.mc"
	awk 'NR == FNR { l[FNR] = $0; nl = FNR; if (length($0) > w) w = length($0); next }
	{ r[FNR] = $0; nr = FNR }
	END {
		n = nl > nr ? nl : nr
		for (i = 1; i <= n; i++)
			printf "  %-*s %s %s\n", w, l[i], (l[i] == r[i] ? "|" : "*"), r[i]
	}' "$W/sum.ht" "$W/sum.mc"
	if [ -n "$LEAK" ] && [ -n "$MC" ]; then
		echo "  loss records listed: heaptrace $(records "$W/$name.leak.err"), memcheck $(records "$W/$name.memcheck.err")"
		if cmp -s "$W/sum.ht" "$W/sum.mc"; then
			echo "  summaries equal"
		else
			echo "  summaries differ on the lines marked *"
		fi
	fi
done
exit "$STATUS"
