/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-allocation-site statistics of the snapshot engine
   (snap_engine_sites, docs/sites-format.md) on hand-made event sequences,
   every figure worked out by hand: calls and bytes allocated per site, a
   realloc a call of its own stack that takes the block along, leaked
   bytes and blocks (live at the end), each site's live bytes at the last
   peak snapshot Massif's rules take (their sum that snapshot's heap),
   heaptrack's temporaries, fork clones, blocks --ignore-fn hides, and a
   sampled profile's block counts (each block as the weight / size blocks
   it stands for). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/engine/fixture.h"

static const struct stack S4 = { 4, { PC_MALLOC, PC_H, PC_MAIN_D,
				      PC_LIBC_START } };
/* S1's malloc reached through another caller: a site of its own */
static const struct stack S1_OTHER = { 4, { PC_MALLOC, PC_F, PC_MAIN_B,
					    PC_LIBC_START } };

/* What one site's figures must be. */
struct want_site {
	const struct stack *st;
	uint64_t calls, allocated, peak, leaked, leaked_blocks, temporary;
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool
site_is(const struct snap_engine *eng, uint32_t site, const struct stack *st)
{
	uint64_t f[16];
	unsigned n = snap_engine_site_frames(eng, site, f, 16);
	if (n != st->n)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (f[i] != st->pcs[i])
			return false;
	return true;
}

/* ENG's sites are exactly W[0..N), in that order (first seen first),
   each with W's figures. */
static void
check_sites(const struct snap_engine *eng, const char *what,
	    const struct want_site *w, size_t n)
{
	struct snap_site *v = NULL;
	size_t got = snap_engine_sites(eng, &v);
	CHECK(got == n, "%s: %zu sites, want %zu", what, got, n);
	for (size_t i = 0; i < got && i < n; i++) {
		const struct snap_site *s = &v[i];
		CHECK(site_is(eng, s->site, w[i].st),
		      "%s: site %zu (id %u) has not the stack wanted", what, i,
		      s->site);
		CHECK(s->calls == w[i].calls && s->allocated == w[i].allocated &&
			      s->peak == w[i].peak && s->leaked == w[i].leaked &&
			      s->leaked_blocks == w[i].leaked_blocks &&
			      s->temporary == w[i].temporary,
		      "%s: site %zu: calls=%llu allocated=%llu peak=%llu "
		      "leaked=%llu leaked_blocks=%llu temporary=%llu; want "
		      "%llu %llu %llu %llu %llu %llu",
		      what, i, (unsigned long long)s->calls,
		      (unsigned long long)s->allocated,
		      (unsigned long long)s->peak,
		      (unsigned long long)s->leaked,
		      (unsigned long long)s->leaked_blocks,
		      (unsigned long long)s->temporary,
		      (unsigned long long)w[i].calls,
		      (unsigned long long)w[i].allocated,
		      (unsigned long long)w[i].peak,
		      (unsigned long long)w[i].leaked,
		      (unsigned long long)w[i].leaked_blocks,
		      (unsigned long long)w[i].temporary);
	}
	if (got != n)
		for (size_t i = 0; i < got; i++)
			fprintf(stderr, "  site %zu: id %u calls %llu\n", i,
				v[i].site, (unsigned long long)v[i].calls);
	free(v);
}

/* The engine's peak snapshot is the PEAKS_TAKEN'th peak taken, its heap
   HEAP, and the sites' peak figures sum to it. PEAKS_TAKEN 0: none. */
static void
check_peak(const struct snap_engine *eng, const char *what,
	   uint64_t peaks_taken, uint64_t heap)
{
	struct snap_stats st = snap_engine_stats(eng);
	CHECK(st.peaks_taken == peaks_taken, "%s: %llu peaks taken, want %llu",
	      what, (unsigned long long)st.peaks_taken,
	      (unsigned long long)peaks_taken);
	long pi = snap_engine_peak_index(eng);
	if (!peaks_taken) {
		CHECK(pi == -1, "%s: a peak snapshot (%ld)", what, pi);
		return;
	}
	CHECK(pi >= 0, "%s: no peak snapshot", what);
	if (pi < 0)
		return;
	const struct snap_snapshot *s = snap_engine_snapshot(eng, (size_t)pi);
	CHECK(s->kind == SNAP_PEAK && s->heap == heap && s->extra == 0,
	      "%s: peak snapshot heap %llu extra %llu, want %llu and 0", what,
	      (unsigned long long)s->heap, (unsigned long long)s->extra,
	      (unsigned long long)heap);
	struct snap_site *v = NULL;
	size_t n = snap_engine_sites(eng, &v);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i].peak;
	free(v);
	CHECK(sum == s->heap, "%s: sites' peak bytes sum to %llu, the peak "
	      "snapshot's heap is %llu", what, (unsigned long long)sum,
	      (unsigned long long)s->heap);
}

/* Calls and bytes per site; a realloc is a call of its own stack with
   its new size, in place or moved, and takes the block (its live bytes)
   to that site; realloc(NULL, n) a call of its stack; a failed realloc
   and realloc(p, 0) no call; leaked = live at the end. Two peaks here:
   the free of B (240 B: S1 32, S2 48, R1 160) and realloc(p, 0) (512 B:
   R1 192, R2 320), the last one's figures stand. */
static void
test_calls_and_realloc(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x100000, 16, &S1);	 /* A */
	fixture_alloc(&fx, 0x200000, 32, &S1);	 /* B */
	fixture_alloc(&fx, 0x300000, 48, &S2);	 /* C */
	fixture_resize(&fx, 0x100000, 0x400000, 160, &R1); /* A moved to R1: 240 B */
	static const struct want_site w0[] = {
		{ &S1, 2, 48, 32, 32, 1, 0 },
		{ &S2, 1, 48, 48, 48, 1, 0 },
		{ &R1, 1, 160, 160, 160, 1, 0 },
	};
	check_sites(fx.eng, "before any peak", w0, N(w0));
	check_peak(fx.eng, "before any peak", 0, 0);
	fixture_release(&fx, 0x200000);		 /* B: peak 1 at 240 B */
	check_peak(fx.eng, "first peak", 1, 240);
	fixture_resize(&fx, 0x300000, 0x300000, 320, &R2); /* C in place to R2: 480 */
	fixture_resize(&fx, 0, 0x500000, 32, &R1);	   /* realloc(NULL): 512 */
	fixture_resize(&fx, 0x400000, 0, 1000, &R2);	   /* failed */
	fixture_resize(&fx, 0x500000, 0, 0, &R2);	   /* realloc(p, 0): peak 2 */
	static const struct want_site w[] = {
		{ &S1, 2, 48, 0, 0, 0, 0 },
		{ &S2, 1, 48, 0, 0, 0, 0 },
		{ &R1, 2, 192, 192, 160, 1, 0 },
		{ &R2, 1, 320, 320, 320, 1, 0 },
	};
	check_sites(fx.eng, "calls and reallocs", w, N(w));
	check_peak(fx.eng, "calls and reallocs", 2, 512);
	/* the same stack reached from another caller is another site */
	fixture_alloc(&fx, 0x600000, 64, &S1_OTHER);
	fixture_alloc(&fx, 0x700000, 16, &S1);
	static const struct want_site w2[] = {
		{ &S1, 3, 64, 0, 16, 1, 0 },
		{ &S2, 1, 48, 0, 0, 0, 0 },
		{ &R1, 2, 192, 192, 160, 1, 0 },
		{ &R2, 1, 320, 320, 320, 1, 0 },
		{ &S1_OTHER, 1, 64, 0, 64, 1, 0 },
	};
	check_sites(fx.eng, "another caller", w2, N(w2));
	check_peak(fx.eng, "another caller", 2, 512);
	fixture_fini(&fx);
}

/* Several peaks with --peak-inaccuracy=0: each free above the last peak
   takes one; the figures are those of the last, whatever changed after
   it (a site freed and allocated again, a site born after it: 0). */
static void
test_successive_peaks(void)
{
	const char *opts[] = { "--peak-inaccuracy=0", NULL };
	struct fixture fx;
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x1000, 160, &S1);
	fixture_alloc(&fx, 0x2000, 320, &S2);
	fixture_release(&fx, 0x1000); /* peak 1: 480 (S1 160, S2 320) */
	static const struct want_site w1[] = {
		{ &S1, 1, 160, 160, 0, 0, 0 },
		{ &S2, 1, 320, 320, 320, 1, 0 },
	};
	check_sites(fx.eng, "peak 1", w1, N(w1));
	check_peak(fx.eng, "peak 1", 1, 480);

	fixture_alloc(&fx, 0x3000, 480, &S3); /* 800 */
	fixture_alloc(&fx, 0x4000, 32, &S1);  /* 832 */
	fixture_release(&fx, 0x3000); /* peak 2: 832 (S1 32, S2 320, S3 480) */
	fixture_alloc(&fx, 0x5000, 64, &S2);  /* 416 */
	fixture_release(&fx, 0x2000);	      /* 96: below the peak, no new one */
	fixture_alloc(&fx, 0x6000, 96, &S4);  /* born after the peak */
	fixture_alloc(&fx, 0x7000, 16, &S3);  /* S3 changed again after it */
	static const struct want_site w2[] = {
		{ &S1, 2, 192, 32, 32, 1, 0 },
		{ &S2, 2, 384, 320, 64, 1, 0 },
		{ &S3, 2, 496, 480, 16, 1, 0 },
		{ &S4, 1, 96, 0, 96, 1, 0 },
	};
	check_sites(fx.eng, "peak 2", w2, N(w2));
	check_peak(fx.eng, "peak 2", 2, 832);

	/* a third peak: above 832 again, S4 and S3 now in it */
	fixture_alloc(&fx, 0x8000, 800, &S4); /* 208 + 800 = 1008 */
	fixture_release(&fx, 0x4000);	      /* peak 3 at 1008 */
	fixture_release(&fx, 0x8000);
	fixture_release(&fx, 0x6000);
	static const struct want_site w3[] = {
		{ &S1, 2, 192, 32, 0, 0, 0 },
		{ &S2, 2, 384, 64, 64, 1, 0 },
		{ &S3, 2, 496, 16, 16, 1, 0 },
		{ &S4, 2, 896, 896, 0, 0, 0 },
	};
	check_sites(fx.eng, "peak 3", w3, N(w3));
	check_peak(fx.eng, "peak 3", 3, 1008);
	fixture_fini(&fx);
}

/* With the default --peak-inaccuracy=1 a free within 1 % above the last
   peak takes none: the figures stay the earlier peak's. */
static void
test_peak_inaccuracy(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x2000, 160, &S2);
	fixture_alloc(&fx, 0x1000, 1600, &S1);
	fixture_release(&fx, 0x2000); /* peak 1 at 1760; next one above 1777 */
	fixture_alloc(&fx, 0x3000, 160, &S2);
	fixture_alloc(&fx, 0x4000, 16, &S3); /* 1776 */
	fixture_release(&fx, 0x4000);	     /* no peak */
	static const struct want_site w1[] = {
		{ &S2, 2, 320, 160, 160, 1, 0 },
		{ &S1, 1, 1600, 1600, 1600, 1, 0 },
		{ &S3, 1, 16, 0, 0, 0, 1 },
	};
	check_sites(fx.eng, "within 1 %", w1, N(w1));
	check_peak(fx.eng, "within 1 %", 1, 1760);
	fixture_alloc(&fx, 0x5000, 32, &S3); /* 1792 */
	fixture_release(&fx, 0x3000);	     /* peak 2 at 1792 */
	static const struct want_site w2[] = {
		{ &S2, 2, 320, 160, 0, 0, 0 },
		{ &S1, 1, 1600, 1600, 1600, 1, 0 },
		{ &S3, 2, 48, 32, 32, 1, 1 },
	};
	check_sites(fx.eng, "beyond 1 %", w2, N(w2));
	check_peak(fx.eng, "beyond 1 %", 2, 1792);
	fixture_fini(&fx);
}

/* A shrinking realloc checks for a peak before the block shrinks: the
   block is still at its old site with its old size in that peak, and
   the realloc's stack, first seen after it, has nothing there. */
static void
test_peak_at_shrink(void)
{
	const char *opts[] = { "--peak-inaccuracy=0", NULL };
	struct fixture fx;
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x1000, 320, &S1);
	fixture_alloc(&fx, 0x2000, 160, &S2);
	fixture_resize(&fx, 0x1000, 0x1000, 32, &R1); /* peak at 480 */
	static const struct want_site w[] = {
		{ &S1, 1, 320, 320, 0, 0, 0 },
		{ &S2, 1, 160, 160, 160, 1, 0 },
		{ &R1, 1, 32, 0, 32, 1, 0 },
	};
	check_sites(fx.eng, "shrink", w, N(w));
	check_peak(fx.eng, "shrink", 1, 480);
	/* a free of the block the realloc moved */
	fixture_alloc(&fx, 0x3000, 800, &S3); /* 992 */
	fixture_resize(&fx, 0x1000, 0x4000, 16, &R2); /* shrink, moved: peak at 992 */
	static const struct want_site w2[] = {
		{ &S1, 1, 320, 0, 0, 0, 0 },
		{ &S2, 1, 160, 160, 160, 1, 0 },
		{ &R1, 1, 32, 32, 0, 0, 0 },
		{ &S3, 1, 800, 800, 800, 1, 0 },
		{ &R2, 1, 16, 0, 16, 1, 0 },
	};
	check_sites(fx.eng, "shrink 2", w2, N(w2));
	check_peak(fx.eng, "shrink 2", 2, 992);
	fixture_fini(&fx);
}

/* No deallocation, no peak: each site's peak is its live bytes at the
   end (growing reallocs take no peak). */
static void
test_no_peak(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x1000, 16, &S1);
	fixture_alloc(&fx, 0x2000, 32, &S2);
	fixture_alloc(&fx, 0x3000, 48, &S1);
	fixture_resize(&fx, 0x2000, 0x4000, 64, &R1);
	fixture_resize(&fx, 0x4000, 0x4000, 128, &R1);
	static const struct want_site w[] = {
		{ &S1, 2, 64, 64, 64, 2, 0 },
		{ &S2, 1, 32, 0, 0, 0, 0 },
		{ &R1, 2, 192, 128, 128, 1, 0 },
	};
	check_sites(fx.eng, "no peak", w, N(w));
	check_peak(fx.eng, "no peak", 0, 0);
	fixture_fini(&fx);
}

/* heaptrack's temporaries: a block freed by the very next allocator event
   (ALLOC, FREE, REALLOC; a REALLOC_BEGIN and a THREAD_EXIT in between
   do not count), counted at its site; a realloc's result freed next
   counts at the realloc's site (moved, in place, or realloc(NULL, n)). */
static void
test_temporary(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x1000, 16, &S1);
	fixture_release(&fx, 0x1000);		/* S1: 1 */
	fixture_alloc(&fx, 0x2000, 16, &S1);
	fixture_alloc(&fx, 0x3000, 16, &S2);
	fixture_release(&fx, 0x2000);		/* another alloc between: no */
	fixture_release(&fx, 0x3000);		/* a free between: no */
	fixture_alloc(&fx, 0x9000, 32, &S3);	/* X, kept for a realloc */
	fixture_alloc(&fx, 0x4000, 16, &S2);
	fixture_event(&fx, HT_EV_THREAD_EXIT, 5, 0, 0, 0, NULL);
	fixture_release(&fx, 0x4000);		/* S2: 1 */
	fixture_alloc(&fx, 0x5000, 16, &S2);
	fixture_event(&fx, HT_EV_REALLOC_BEGIN, 2, 0, 0x9000, 0, &R1);
	fixture_release(&fx, 0x5000);		/* S2: 2 */
	fixture_event(&fx, HT_EV_REALLOC, 2, 0xa000, 0x9000, 64, &R1);
	fixture_release(&fx, 0xa000);		/* R1: 1 (moved) */
	fixture_alloc(&fx, 0xb000, 16, &S1);
	fixture_resize(&fx, 0xb000, 0xb000, 48, &R2);
	fixture_release(&fx, 0xb000);		/* R2: 1 (in place); S1 none */
	fixture_resize(&fx, 0, 0xc000, 16, &R2);
	fixture_release(&fx, 0xc000);		/* R2: 2 (realloc(NULL, n)) */
	fixture_alloc(&fx, 0xd000, 16, &S3);
	fixture_release(&fx, 0xdead000);	/* a free of nothing between */
	fixture_release(&fx, 0xd000);		/* no */
	fixture_alloc(&fx, 0xe000, 16, &S3);
	fixture_resize(&fx, 0xe000, 0xf000, 32, &R1); /* S3's block: not freed */
	fixture_release(&fx, 0xf000);		/* R1: 2 */
	fixture_alloc(&fx, 0x10000, 16, &S4);
	fixture_alloc(&fx, 0x11000, 16, &S4);
	fixture_release(&fx, 0x11000);		/* S4: 1 */
	fixture_release(&fx, 0x10000);		/* no */
	static const struct want_site w[] = {
		{ &S1, 3, 48, 0, 0, 0, 1 },
		{ &S2, 3, 48, 0, 0, 0, 2 },
		{ &S3, 3, 64, 0, 0, 0, 0 },
		{ &R1, 2, 96, 64, 0, 0, 2 },
		{ &R2, 2, 64, 0, 0, 0, 2 },
		{ &S4, 2, 32, 0, 0, 0, 1 },
	};
	check_sites(fx.eng, "temporary", w, N(w));
	/* peaks at the frees of 0x1000 (16 B), 0x2000 (32), 0x4000 (48)
	   and 0xa000 (64: R1's block alone) */
	check_peak(fx.eng, "temporary", 4, 64);
	fixture_fini(&fx);
}

/* A fork's clone starts with the parent's figures (peak included) and
   each goes on alone; a realloc another thread had begun is put back in
   the clone, its block still at its site. */
static void
test_clone(void)
{
	const char *opts[] = { "--peak-inaccuracy=0", NULL };
	struct fixture fx;
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x1000, 160, &S1);
	fixture_alloc(&fx, 0x2000, 320, &S2);
	fixture_release(&fx, 0x1000); /* peak at 480 */
	fixture_alloc(&fx, 0x3000, 16, &S1);
	fixture_release(&fx, 0x3000); /* temporary */
	fixture_alloc(&fx, 0x4000, 64, &S3);
	fixture_event(&fx, HT_EV_REALLOC_BEGIN, 7, 0, 0x4000, 0, &R1);
	static const struct want_site w[] = {
		{ &S1, 2, 176, 160, 0, 0, 1 },
		{ &S2, 1, 320, 320, 320, 1, 0 },
		{ &S3, 1, 64, 0, 64, 1, 0 },
	};
	check_sites(fx.eng, "parent", w, N(w));

	struct snap_engine *child = snap_engine_clone(fx.eng);
	struct snap_engine *parent = fx.eng;
	check_sites(child, "child", w, N(w));
	check_peak(child, "child", 1, 480);

	/* the child: a new peak of its own, new sites, temporaries */
	fx.eng = child;
	fixture_alloc(&fx, 0x5000, 800, &S4); /* 1184 */
	fixture_alloc(&fx, 0x6000, 16, &S1);
	fixture_release(&fx, 0x6000);	      /* peak at 1200; S1 temporary */
	fixture_release(&fx, 0x2000);
	static const struct want_site wc[] = {
		{ &S1, 3, 192, 16, 0, 0, 2 },
		{ &S2, 1, 320, 320, 0, 0, 0 },
		{ &S3, 1, 64, 64, 64, 1, 0 },
		{ &S4, 1, 800, 800, 800, 1, 0 },
	};
	check_sites(child, "child later", wc, N(wc));
	check_peak(child, "child later", 2, 1200);

	/* the parent: its realloc completes, no new peak */
	fx.eng = parent;
	check_sites(parent, "parent after the child", w, N(w));
	fixture_event(&fx, HT_EV_REALLOC, 7, 0x7000, 0x4000, 96, &R1);
	fixture_alloc(&fx, 0x8000, 32, &S2);
	static const struct want_site wp[] = {
		{ &S1, 2, 176, 160, 0, 0, 1 },
		{ &S2, 2, 352, 320, 352, 2, 0 },
		{ &S3, 1, 64, 0, 0, 0, 0 },
		{ &R1, 1, 96, 0, 96, 1, 0 },
	};
	check_sites(parent, "parent later", wp, N(wp));
	check_peak(parent, "parent later", 1, 480);
	check_sites(child, "child after the parent's", wc, N(wc));
	snap_engine_free(child);
	fixture_fini(&fx);
}

/* Blocks the tree ignores (--ignore-fn, a stack of the allocation
   function alone) still count at their sites: calls, bytes, leaked,
   temporaries, and their reallocs (from a counted stack or not) are
   calls of the realloc's stack; with and without --massif-compat. */
static void
test_ignored(void)
{
	for (int compat = 0; compat < 2; compat++) {
		const char *opts[] = { "--ignore-fn=ign",
				       compat ? "--massif-compat=yes"
					      : "--massif-compat=no",
				       "--peak-inaccuracy=0", NULL };
		const char *what = compat ? "ignored, compat" : "ignored";
		struct fixture fx;
		fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
		fixture_alloc(&fx, 0x1000, 16, &SIGN);
		fixture_alloc(&fx, 0x2000, 32, &S1);
		fixture_alloc(&fx, 0x3000, 48, &SONLY);
		fixture_alloc(&fx, 0x4000, 64, &SIGN);
		fixture_release(&fx, 0x4000);	/* SIGN temporary; no peak */
		fixture_alloc(&fx, 0x5000, 80, &SIGN);
		fixture_resize(&fx, 0x5000, 0x6000, 96, &R2);
		fixture_resize(&fx, 0x1000, 0x1000, 112, &SIGN);
		static const struct want_site w[] = {
			{ &SIGN, 4, 272, 112, 112, 1, 1 },
			{ &S1, 1, 32, 32, 32, 1, 0 },
			{ &SONLY, 1, 48, 48, 48, 1, 0 },
			{ &R2, 1, 96, 96, 96, 1, 0 },
		};
		check_sites(fx.eng, what, w, N(w));
		struct snap_stats st = snap_engine_stats(fx.eng);
		CHECK(st.peaks_taken == 0, "%s: %llu peaks", what,
		      (unsigned long long)st.peaks_taken);
		fixture_fini(&fx);
	}
}

/* Thinning (sites.c): with at most 8 sites, 20 stacks through distinct
   callers (site I allocates (I + 1) x 16 bytes once and frees it), two
   of them with their blocks kept live (sites 0 and 1, the smallest): the
   sites seen stay at most 8 plus the ones just made, the live ones are
   kept whatever their size, the dropped ones are the smallest, every
   call and byte is still counted (kept + thinned), and the live blocks'
   frees after the renumbering reach their own sites. */
static void
test_thinning(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	snap_engine_set_sites_max(fx.eng, 8);
	struct stack st[20];
	uint64_t all_calls = 0, all_bytes = 0;
	for (unsigned i = 0; i < 20; i++) {
		st[i] = (struct stack){ 4, { PC_MALLOC, 0x8000 + 16 * i,
					     PC_MAIN_A, PC_LIBC_START } };
		uint64_t addr = 0x100000 * (i + 1), size = 16 * (i + 1);
		fixture_alloc(&fx, addr, size, &st[i]);
		if (i > 1)
			fixture_release(&fx, addr);
		all_calls++;
		all_bytes += size;
	}
	struct snap_site *v = NULL;
	size_t n = snap_engine_sites(fx.eng, &v);
	uint64_t n_thinned;
	struct snap_site th = snap_engine_sites_thinned(fx.eng, &n_thinned);
	CHECK(n <= 9 && n >= 4, "thinning: %zu sites kept, want 4 to 9", n);
	CHECK(n + n_thinned == 20, "thinning: %zu kept + %llu thinned, "
	      "want 20", n, (unsigned long long)n_thinned);
	uint64_t calls = th.calls, bytes = th.allocated;
	bool live0 = false, live1 = false;
	uint64_t smallest_kept = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		calls += v[i].calls;
		bytes += v[i].allocated;
		live0 = live0 || site_is(fx.eng, v[i].site, &st[0]);
		live1 = live1 || site_is(fx.eng, v[i].site, &st[1]);
		if (v[i].leaked_blocks == 0 && v[i].allocated < smallest_kept)
			smallest_kept = v[i].allocated;
	}
	free(v);
	CHECK(calls == all_calls && bytes == all_bytes,
	      "thinning: %llu calls and %llu bytes counted, want %llu and "
	      "%llu", (unsigned long long)calls, (unsigned long long)bytes,
	      (unsigned long long)all_calls, (unsigned long long)all_bytes);
	CHECK(live0 && live1, "thinning: a site with a live block was "
	      "thinned out");
	/* the thinned ones are sites 2.. in order: all below the kept */
	CHECK(th.allocated < n_thinned * smallest_kept,
	      "thinning: thinned %llu bytes over %llu sites, the smallest "
	      "kept free site %llu", (unsigned long long)th.allocated,
	      (unsigned long long)n_thinned,
	      (unsigned long long)smallest_kept);
	/* the kept live blocks still belong to their sites */
	fixture_release(&fx, 0x100000);
	fixture_release(&fx, 0x200000);
	fixture_alloc(&fx, 0x300000, 32, &st[1]);
	n = snap_engine_sites(fx.eng, &v);
	for (size_t i = 0; i < n; i++) {
		if (site_is(fx.eng, v[i].site, &st[0]))
			CHECK(v[i].calls == 1 && v[i].leaked == 0 &&
				      v[i].leaked_blocks == 0,
			      "thinning: site 0 after its free: calls %llu "
			      "leaked %llu", (unsigned long long)v[i].calls,
			      (unsigned long long)v[i].leaked);
		if (site_is(fx.eng, v[i].site, &st[1]))
			CHECK(v[i].calls == 2 && v[i].leaked == 32 &&
				      v[i].leaked_blocks == 1,
			      "thinning: site 1 after a free and a call: "
			      "calls %llu leaked %llu",
			      (unsigned long long)v[i].calls,
			      (unsigned long long)v[i].leaked);
	}
	free(v);
	fixture_fini(&fx);
}

/* An event of a sampled profile: a block of SIZE bytes that stands for
   WEIGHT bytes (ht_event.weight), thread 1. */
static void
weighed_event(struct fixture *fx, enum ht_event_kind kind, uint64_t addr,
	      uint64_t old, uint64_t size, uint64_t weight,
	      const struct stack *st)
{
	struct ht_event e = {
		.kind = kind,
		.fn = kind == HT_EV_ALLOC ? HT_FN_MALLOC : HT_FN_REALLOC,
		.addr = addr, .old_addr = old, .size = size, .weight = weight,
		.tid = 1, .pcs = st->pcs, .npcs = st->n,
	};
	snap_engine_feed(fx->eng, &e);
}

/* What a sampled site's block counts must be, with its calls. */
struct want_blocks {
	const struct stack *st;
	uint64_t calls, peak_blocks, leaked_blocks, temporary;
};

static void
check_blocks(const struct snap_engine *eng, const char *what,
	     const struct want_blocks *w, size_t n)
{
	struct snap_site *v = NULL;
	size_t got = snap_engine_sites(eng, &v);
	CHECK(got == n, "%s: %zu sites, want %zu", what, got, n);
	for (size_t i = 0; i < got && i < n; i++) {
		const struct snap_site *s = &v[i];
		CHECK(site_is(eng, s->site, w[i].st) &&
			      s->calls == w[i].calls &&
			      s->peak_blocks == w[i].peak_blocks &&
			      s->leaked_blocks == w[i].leaked_blocks &&
			      s->temporary == w[i].temporary,
		      "%s: site %zu: calls=%llu peak_blocks=%llu "
		      "leaked_blocks=%llu temporary=%llu; want %llu %llu "
		      "%llu %llu", what, i, (unsigned long long)s->calls,
		      (unsigned long long)s->peak_blocks,
		      (unsigned long long)s->leaked_blocks,
		      (unsigned long long)s->temporary,
		      (unsigned long long)w[i].calls,
		      (unsigned long long)w[i].peak_blocks,
		      (unsigned long long)w[i].leaked_blocks,
		      (unsigned long long)w[i].temporary);
	}
	free(v);
}

/* The heap and extra bytes of ENG now. */
static void
heap_now(const struct snap_engine *eng, uint64_t *heap, uint64_t *extra)
{
	struct snap_snapshot now;
	snap_engine_peek(eng, 0, &now);
	*heap = now.heap;
	*extra = now.extra;
	snap_snapshot_fini(&now);
}

/* A sampled profile (--sampling-interval=1024): a block of SIZE bytes
   and weight W counts as W / SIZE blocks in every block figure, as in
   calls, rounded at the end: S1 holds A (64 B at 2048: 32 blocks) and B
   (100 B at 1024: 10.24), 42.24 at the peak, B's free; S2 a block of at
   least the interval (one); S3 a temporary block (32 B at 1024: 32);
   A moved by a realloc to R1 (128 B at 1024: 8) takes its 32 away from
   S1 and R1 counts 8. The extra bytes (B's 12 x 10.24 = 123) leave with
   their block. Then 1,000 blocks of 100 B at 1024 (10,240) and their
   frees, the first a peak: not a block left at the end (10.24 x 1,000
   summed up and down again). */
static void
test_sampled_blocks(void)
{
	const char *opts[] = { "--sampling-interval=1024",
			       "--peak-inaccuracy=0", NULL };
	struct fixture fx;
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	weighed_event(&fx, HT_EV_ALLOC, 0x1000, 0, 64, 2048, &S1);  /* A */
	weighed_event(&fx, HT_EV_ALLOC, 0x2000, 0, 100, 1024, &S1); /* B */
	weighed_event(&fx, HT_EV_ALLOC, 0x3000, 0, 4096, 4096, &S2);
	uint64_t heap, extra;
	heap_now(fx.eng, &heap, &extra);
	CHECK(heap == 7168 && extra == 123, "sampled: heap %llu extra %llu, "
	      "want 7168 and 123", (unsigned long long)heap,
	      (unsigned long long)extra);
	fixture_release(&fx, 0x2000); /* peak at 7168 */
	weighed_event(&fx, HT_EV_ALLOC, 0x4000, 0, 32, 1024, &S3);
	fixture_release(&fx, 0x4000); /* temporary */
	weighed_event(&fx, HT_EV_REALLOC, 0x5000, 0x1000, 128, 1024, &R1);
	static const struct want_blocks w[] = {
		{ &S1, 42, 42, 0, 0 },
		{ &S2, 1, 1, 1, 0 },
		{ &S3, 32, 0, 0, 32 },
		{ &R1, 8, 0, 8, 0 },
	};
	check_blocks(fx.eng, "sampled", w, N(w));
	heap_now(fx.eng, &heap, &extra);
	CHECK(heap == 5120 && extra == 0, "sampled: heap %llu extra %llu "
	      "after B's free, want 5120 and 0", (unsigned long long)heap,
	      (unsigned long long)extra);
	for (uint64_t i = 0; i < 1000; i++)
		weighed_event(&fx, HT_EV_ALLOC, 0x100000 + 0x1000 * i, 0, 100,
			      1024, &S4);
	static const struct want_blocks w2[] = {
		{ &S1, 42, 42, 0, 0 },
		{ &S2, 1, 1, 1, 0 },
		{ &S3, 32, 0, 0, 32 },
		{ &R1, 8, 0, 8, 0 },
		{ &S4, 10240, 0, 10240, 0 },
	};
	check_blocks(fx.eng, "sampled, 1,000 blocks", w2, N(w2));
	for (uint64_t i = 0; i < 1000; i++) /* the first free: a peak */
		fixture_release(&fx, 0x100000 + 0x1000 * i);
	fixture_release(&fx, 0x3000);
	fixture_release(&fx, 0x5000);
	static const struct want_blocks w3[] = {
		{ &S1, 42, 0, 0, 0 },
		{ &S2, 1, 1, 0, 0 },
		{ &S3, 32, 0, 0, 32 },
		{ &R1, 8, 8, 0, 0 },
		{ &S4, 10240, 10240, 0, 0 },
	};
	check_blocks(fx.eng, "sampled, all freed", w3, N(w3));
	heap_now(fx.eng, &heap, &extra);
	CHECK(heap == 0 && extra == 0, "sampled: heap %llu extra %llu at the "
	      "end, want 0 and 0", (unsigned long long)heap,
	      (unsigned long long)extra);
	fixture_fini(&fx);
}

/* Thinning a sampled profile: 20 stacks each allocate one block of 64 B
   at 1024 (16 blocks) and free it at once (temporary), the sites kept
   at most 8: the thinned line's estimates and the kept sites' sum to
   20 x 16 calls and temporary blocks. */
static void
test_sampled_thinning(void)
{
	const char *opts[] = { "--sampling-interval=1024", NULL };
	struct fixture fx;
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	snap_engine_set_sites_max(fx.eng, 8);
	struct stack st[20];
	for (unsigned i = 0; i < 20; i++) {
		st[i] = (struct stack){ 4, { PC_MALLOC, 0x8000 + 16 * i,
					     PC_MAIN_A, PC_LIBC_START } };
		weighed_event(&fx, HT_EV_ALLOC, 0x100000, 0, 64, 1024, &st[i]);
		fixture_release(&fx, 0x100000);
	}
	struct snap_site *v = NULL;
	size_t n = snap_engine_sites(fx.eng, &v);
	uint64_t n_thinned;
	struct snap_site th = snap_engine_sites_thinned(fx.eng, &n_thinned);
	uint64_t calls = th.calls, temporary = th.temporary;
	for (size_t i = 0; i < n; i++) {
		calls += v[i].calls;
		temporary += v[i].temporary;
	}
	free(v);
	CHECK(n_thinned > 0 && th.temporary == 16 * n_thinned &&
		      calls == 320 && temporary == 320,
	      "sampled thinning: %llu sites thinned, their temporary %llu; "
	      "in all calls %llu temporary %llu; want 16 each and 320, 320",
	      (unsigned long long)n_thinned,
	      (unsigned long long)th.temporary, (unsigned long long)calls,
	      (unsigned long long)temporary);
	fixture_fini(&fx);
}

/* BYTES held under frame PC among the first-level entries of a detailed
   snapshot of ENG now (the root's children). */
static uint64_t
tree_bytes_at(const struct snap_engine *eng, uint64_t pc, uint64_t *heap)
{
	struct snap_snapshot now;
	snap_engine_peek(eng, 0, &now);
	uint64_t bytes = 0;
	*heap = now.heap;
	/* preorder: the root, then its children each followed by its own */
	for (size_t i = 1; i < now.n_tree; i++)
		if (now.tree[i].pc == pc)
			bytes += now.tree[i].bytes;
	snap_snapshot_fini(&now);
	return bytes;
}

/* Thinning the tree: at most 40 nodes, 30 stacks through distinct
   callers of one function (each a chain of 3 new nodes), each malloc'd and
   freed but two kept live (96 and 48 bytes); the tree stays under 40 +
   the nodes of one thinning's worth, a rendering still gives exactly the
   live bytes under their frames, and their frees after the renumbering
   leave the heap at 0. */
static void
test_tree_thinning(void)
{
	struct fixture fx;
	fixture_init(&fx, (const char *[]){ "--threshold=0", NULL },
		     SNAP_EXTRA_ESTIMATE);
	snap_engine_set_tree_max(fx.eng, 40);
	struct stack st[30];
	for (unsigned i = 0; i < 30; i++) {
		st[i] = (struct stack){ 5, { PC_MALLOC, 0x8000 + 16 * i,
					     0x9000 + 16 * i, PC_MAIN_A,
					     PC_LIBC_START } };
		uint64_t addr = 0x100000 * (i + 1);
		fixture_alloc(&fx, addr, i == 3 ? 96 : i == 20 ? 48 : 32,
			      &st[i]);
		if (i != 3 && i != 20)
			fixture_release(&fx, addr);
	}
	struct snap_stats ss = snap_engine_stats(fx.eng);
	CHECK(ss.tree_nodes <= 40 + 3, "tree thinning: %llu nodes, want at "
	      "most 43", (unsigned long long)ss.tree_nodes);
	uint64_t heap;
	uint64_t b3 = tree_bytes_at(fx.eng, 0x8000 + 16 * 3, &heap);
	uint64_t b20 = tree_bytes_at(fx.eng, 0x8000 + 16 * 20, &heap);
	CHECK(heap == 144 && b3 == 96 && b20 == 48,
	      "tree thinning: heap %llu, stack 3 %llu, stack 20 %llu; want "
	      "144, 96, 48", (unsigned long long)heap,
	      (unsigned long long)b3, (unsigned long long)b20);
	fixture_release(&fx, 0x100000 * 4);
	fixture_release(&fx, 0x100000 * 21);
	tree_bytes_at(fx.eng, 0x8000, &heap);
	CHECK(heap == 0, "tree thinning: heap %llu after every free",
	      (unsigned long long)heap);
	/* a stack seen before its subtree was dropped comes back */
	fixture_alloc(&fx, 0x900000, 64, &st[0]);
	b3 = tree_bytes_at(fx.eng, 0x8000, &heap);
	CHECK(heap == 64 && b3 == 64, "tree thinning: stack 0 again: heap "
	      "%llu, under its frame %llu; want 64, 64",
	      (unsigned long long)heap, (unsigned long long)b3);
	fixture_fini(&fx);
}

int
main(void)
{
	test_calls_and_realloc();
	test_successive_peaks();
	test_peak_inaccuracy();
	test_peak_at_shrink();
	test_no_peak();
	test_temporary();
	test_clone();
	test_ignored();
	test_thinning();
	test_tree_thinning();
	test_sampled_blocks();
	test_sampled_thinning();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("all site statistics checks passed\n");
	return 0;
}
