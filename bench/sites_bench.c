/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The snapshot engine's memory on a program whose stacks never repeat
   (an interpreter running ever new code, recursion through two functions
   whatever the path): each of N allocations, malloc(64) then free, comes
   from a stack never seen before (20 levels through one of two functions
   each, 2^20 paths, then main). Prints, every tenth of the way, the sites
   kept and thinned out, Massif's tree nodes and the process's RSS: with
   thinning (the default: 100,000 sites, 1,000,000 tree nodes) and
   without ("off").
   usage: sites_bench [N [off]] (N: 1000000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "snapshot/extra.h"
#include "snapshot/snapshot.h"
#include "symbols/table.h"

#define LEVELS 20
#define PC_MALLOC 0x1000
#define PC_MAIN 0x9000
#define PC_START 0xa000

/* The process's resident memory now, in KiB (/proc/self/status). */
static long
rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static void
names(struct sym_table *t)
{
	const char *m[] = { "malloc (malloc.c:1)" }, *mn[] = { "main (b.c:1)" };
	sym_table_add(t, PC_MALLOC, "malloc", m, 1);
	sym_table_add(t, PC_MAIN, "main", mn, 1);
	for (unsigned d = 0; d < LEVELS; d++)
		for (unsigned b = 0; b < 2; b++) {
			char name[16], desc[32];
			snprintf(name, sizeof(name), "%c", b ? 'a' : 'b');
			snprintf(desc, sizeof(desc), "%s (b.c:%u)", name, d + 2);
			const char *dd[] = { desc };
			sym_table_add(t, 0x5000 + d * 0x40 + b * 0x10, name, dd, 1);
		}
}

int
main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	bool thin = !(argc > 2 && strcmp(argv[2], "off") == 0);
	struct sym_table *t = sym_table_new();
	names(t);
	struct ht_symbolizer sym = sym_table_symbolizer(t);
	struct ht_options opt;
	char err[256];
	ht_options_init(&opt);
	ht_options_apply(&opt, "--time-unit=B", err, sizeof(err));
	ht_options_finish(&opt, err, sizeof(err));
	struct snap_engine *eng = snap_engine_new(
		&opt, &sym, snap_extra_new(SNAP_EXTRA_ESTIMATE, &opt));
	snap_engine_start(eng, 0);
	if (!thin) {
		snap_engine_set_sites_max(eng, UINT32_MAX);
		snap_engine_set_tree_max(eng, SIZE_MAX);
	}
	printf("thinning %s; %llu allocations, each from a new stack\n",
	       thin ? "on" : "off", (unsigned long long)n);
	uint64_t pcs[LEVELS + 3];
	for (uint64_t i = 0; i < n; i++) {
		/* path I's bits, reversed so that neighbours differ outermost
		   (the worst case: few shared frames) */
		uint64_t path = i * 0x9e3779b97f4a7c15ULL >> 44;
		pcs[0] = PC_MALLOC;
		for (unsigned d = 0; d < LEVELS; d++)
			pcs[1 + d] = 0x5000 + d * 0x40 + ((path >> d) & 1) * 0x10;
		pcs[LEVELS + 1] = PC_MAIN;
		pcs[LEVELS + 2] = PC_START;
		struct ht_event ev = { .kind = HT_EV_ALLOC, .fn = HT_FN_MALLOC,
				       .addr = 0x100000, .size = 64,
				       .pcs = pcs, .npcs = LEVELS + 3 };
		snap_engine_feed(eng, &ev);
		ev = (struct ht_event){ .kind = HT_EV_FREE, .fn = HT_FN_FREE,
					.addr = 0x100000 };
		snap_engine_feed(eng, &ev);
		if ((i + 1) % (n / 10 ? n / 10 : 1) == 0) {
			struct snap_site *v;
			size_t kept = snap_engine_sites(eng, &v);
			free(v);
			uint64_t thinned;
			snap_engine_sites_thinned(eng, &thinned);
			printf("%8llu stacks: %7zu sites kept, %7llu thinned, "
			       "%8llu tree nodes, RSS %6ld KiB\n",
			       (unsigned long long)(i + 1), kept,
			       (unsigned long long)thinned,
			       (unsigned long long)snap_engine_stats(eng)
				       .tree_nodes,
			       rss_kib());
		}
	}
	snap_engine_free(eng);
	ht_options_fini(&opt);
	sym_table_free(t);
	return 0;
}
