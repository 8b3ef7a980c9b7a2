/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Micro-benchmark of the snapshot engine alone: a synthetic but realistic
   stream (a few hundred distinct stacks of depth 12-20, a working set of
   live blocks, malloc/free/realloc mixed) fed through each extra-bytes
   model. Prints events per second, the process's peak RSS, which must
   stay flat as the event count grows (memory bounded by live blocks), and
   a digest of every snapshot, which an optimisation must leave unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/options.h"
#include "snapshot/extra.h"
#include "snapshot/snapshot.h"
#include "symbols/table.h"

#define N_STACKS 512
#define MAX_DEPTH 24
#define WORKING_SET 20000

static uint64_t rng = 88172645463325252ULL;

static uint64_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct stack {
	uint64_t pcs[MAX_DEPTH];
	unsigned n;
};

static double
seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
make_stacks(struct stack *stacks, struct sym_table *t)
{
	const char *malloc_desc[] = { "malloc (vg_replace_malloc.c:381)" };
	sym_table_add(t, 0x1000, "malloc", malloc_desc, 1);
	for (int i = 0; i < N_STACKS; i++) {
		struct stack *s = &stacks[i];
		s->n = 12 + (unsigned)(next_rand() % 9);
		s->pcs[0] = 0x1000;
		for (unsigned d = 1; d < s->n; d++) {
			/* Shared outer frames, diverse inner ones: like a
			   real program's call tree. */
			uint64_t fan = d < 4 ? 2 : 8;
			s->pcs[d] = 0x400000 + d * 0x10000 + (next_rand() % fan) * 0x40;
			char name[32], desc[64];
			snprintf(name, sizeof(name), "fn_%u_%llu", d,
				 (unsigned long long)(s->pcs[d] & 0xffff));
			snprintf(desc, sizeof(desc), "%s (bench.c:%u)", name, d);
			const char *dd[] = { desc };
			sym_table_add(t, s->pcs[d], name, dd, 1);
		}
	}
}

/* FNV-1a over the words of every snapshot and its tree: equal digests mean
   equal massif.out files. */
static uint64_t
digest(const struct snap_engine *eng)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t n = snap_engine_count(eng);
	for (size_t i = 0; i < n; i++) {
		const struct snap_snapshot *s = snap_engine_snapshot(eng, i);
		uint64_t w[] = { s->kind, s->time, s->heap, s->extra, s->n_tree };
		for (size_t k = 0; k < 5; k++)
			h = (h ^ w[k]) * 0x100000001b3ULL;
		for (size_t j = 0; j < s->n_tree; j++) {
			const struct snap_node *t = &s->tree[j];
			uint64_t v[] = { t->pc, t->bytes, t->n_children,
					 t->places };
			for (size_t k = 0; k < 4; k++)
				h = (h ^ v[k]) * 0x100000001b3ULL;
		}
	}
	return h;
}

static void
run(const char *label, enum snap_extra_kind kind, uint64_t n_events,
    const struct stack *stacks, const struct ht_symbolizer *sym)
{
	struct ht_options opt;
	char err[256];
	ht_options_init(&opt);
	ht_options_apply(&opt, "--time-unit=B", err, sizeof(err));
	ht_options_finish(&opt, err, sizeof(err));
	struct snap_engine *eng = snap_engine_new(&opt, sym,
						  snap_extra_new(kind, &opt));
	snap_engine_start(eng, 0);
	uint64_t *live = calloc(WORKING_SET, sizeof(*live));
	uint64_t addr = 0x10000000;
	double t0 = seconds();
	for (uint64_t i = 0; i < n_events; i++) {
		uint64_t r = next_rand();
		size_t slot = (size_t)(r % WORKING_SET);
		const struct stack *s = &stacks[(r >> 20) % N_STACKS];
		struct ht_event ev = { .pcs = s->pcs, .npcs = s->n };
		uint64_t size = 16 + ((r >> 32) % 2000);
		if (live[slot] && (r >> 40) % 8 == 0) {
			ev.kind = HT_EV_REALLOC;
			ev.fn = HT_FN_REALLOC;
			ev.old_addr = live[slot];
			ev.addr = live[slot] = (addr += 4096);
			ev.size = size;
		} else if (live[slot]) {
			ev.kind = HT_EV_FREE;
			ev.fn = HT_FN_FREE;
			ev.addr = live[slot];
			live[slot] = 0;
		} else {
			ev.kind = HT_EV_ALLOC;
			ev.fn = HT_FN_MALLOC;
			ev.addr = live[slot] = (addr += 4096);
			ev.size = size;
		}
		snap_engine_feed(eng, &ev);
	}
	double dt = seconds() - t0;
	struct snap_stats st = snap_engine_stats(eng);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%-9s %10llu events %7.3f s  %6.2f M events/s  %5.0f ns/event  "
	       "snapshots %llu  tree nodes %llu  peak RSS %ld KiB  "
	       "digest %016llx\n",
	       label, (unsigned long long)n_events, dt, n_events / dt / 1e6,
	       dt / n_events * 1e9, (unsigned long long)st.snapshots_taken,
	       (unsigned long long)st.tree_nodes, ru.ru_maxrss,
	       (unsigned long long)digest(eng));
	free(live);
	snap_engine_free(eng);
	ht_options_fini(&opt);
}

/* engine_bench [EVENTS [MODEL]]: by default both models at EVENTS and the
   Valgrind model again at twice as many (the RSS check); with MODEL
   ("valgrind", "glibc", "estimate") that model alone, once, for profilers. */
int
main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
	const char *only = argc > 2 ? argv[2] : NULL;
	struct sym_table *t = sym_table_new();
	struct stack *stacks = calloc(N_STACKS, sizeof(*stacks));
	make_stacks(stacks, t);
	struct ht_symbolizer sym = sym_table_symbolizer(t);
	if (only) {
		enum snap_extra_kind k = strcmp(only, "glibc") == 0
			? SNAP_EXTRA_GLIBC
			: strcmp(only, "estimate") == 0 ? SNAP_EXTRA_ESTIMATE
							: SNAP_EXTRA_VALGRIND;
		run(only, k, n, stacks, &sym);
	} else {
		run("valgrind", SNAP_EXTRA_VALGRIND, n, stacks, &sym);
		run("glibc", SNAP_EXTRA_GLIBC, n, stacks, &sym);
		run("valgrind", SNAP_EXTRA_VALGRIND, n * 2, stacks, &sym);
	}
	free(stacks);
	sym_table_free(t);
	return 0;
}
