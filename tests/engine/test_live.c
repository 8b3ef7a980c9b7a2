/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the snapshot engine keeps for the exit-time leak check: the live
   blocks (snap_engine_live_blocks), their allocation sites with every
   frame of the stack (snap_engine_site_frames), and memcheck's "total
   heap usage" counters (snap_stats usage_*), on hand-made event
   sequences. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/engine/fixture.h"

/* S1's callers, reaching calloc (a wrapper tail-calling malloc or calloc
   from one call site) */
static const struct stack S1_CALLOC = { 4, { PC_CALLOC, PC_F, PC_MAIN_A,
					     PC_LIBC_START } };


struct want_block {
	uint64_t addr, size;
	const struct stack *st;
};

/* The frames of SITE are exactly ST's. */
static void
check_frames(const struct snap_engine *eng, const char *what, uint32_t site,
	     const struct stack *st)
{
	uint64_t f[16];
	unsigned n = snap_engine_site_frames(eng, site, f, 16);
	bool same = n == st->n;
	for (unsigned i = 0; same && i < n; i++)
		same = f[i] == st->pcs[i];
	CHECK(same, "%s: site %u has %u frames, want %u", what, site, n,
	      st->n);
	if (!same)
		for (unsigned i = 0; i < n; i++)
			fprintf(stderr, "  frame %u: %#llx\n", i,
				(unsigned long long)f[i]);
}

/* ENG's live blocks are exactly W[0..N): the blocks of one stack
   (consecutive in W) together, in any order among themselves, the
   stacks in W's order, each block at a site with its stack's frames;
   the site ids, in the order listed, into SITES when not NULL. */
static void
check_live(const struct snap_engine *eng, const char *what,
	   const struct want_block *w, size_t n, uint32_t *sites)
{
	struct snap_live_block *b = (struct snap_live_block *)1;
	size_t got = snap_engine_live_blocks(eng, &b);
	CHECK(got == n, "%s: %zu live blocks, want %zu", what, got, n);
	if (!got)
		CHECK(b == NULL, "%s: no blocks, yet a list", what);
	for (size_t i = 0; i < got && i < n;) {
		size_t j = i; /* W[i..j): one stack's blocks */
		while (j < n && w[j].st == w[i].st)
			j++;
		bool used[16] = { false };
		for (size_t k = i; k < j && k < got; k++) {
			size_t m = i;
			while (m < j && (used[m - i] || w[m].addr != b[k].addr ||
					 w[m].size != b[k].size))
				m++;
			CHECK(m < j,
			      "%s: block %zu is %#llx (%llu bytes), not one of "
			      "the %zu of stack %zu", what, k,
			      (unsigned long long)b[k].addr,
			      (unsigned long long)b[k].size, j - i, i);
			if (m < j && m - i < 16)
				used[m - i] = true;
			char name[96];
			snprintf(name, sizeof(name), "%s: block %zu", what, k);
			check_frames(eng, name, b[k].site, w[i].st);
			if (sites)
				sites[k] = b[k].site;
		}
		i = j;
	}
	if (got != n)
		for (size_t i = 0; i < got; i++)
			fprintf(stderr, "  got %#llx (%llu bytes)\n",
				(unsigned long long)b[i].addr,
				(unsigned long long)b[i].size);
	free(b);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Blocks listed by the age of their stacks (first seen first), whatever
   the order of the addresses and of the allocations (the order among the
   blocks of one stack is left open); a freed block is gone; blocks of one
   stack share their site, each site's frames are its stack's, frame 0
   included. */
static void
test_order_and_sites(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	check_live(fx.eng, "empty", NULL, 0, NULL);
	fixture_alloc(&fx, 0x900000, 16, &S1); /* S1 first seen */
	fixture_alloc(&fx, 0x100000, 32, &S2); /* S2, at a lower address */
	fixture_alloc(&fx, 0x500000, 48, &S1);
	fixture_alloc(&fx, 0x300000, 64, &S3);
	fixture_alloc(&fx, 0x200000, 80, &S1); /* S1 again, lowest of its blocks */
	fixture_alloc(&fx, 0x400000, 96, &S2);
	fixture_alloc(&fx, 0x600000, 112, &S3);
	fixture_release(&fx, 0x500000);
	fixture_release(&fx, 0x600000);
	static const struct want_block w[] = {
		{ 0x200000, 80, &S1 }, { 0x900000, 16, &S1 },
		{ 0x100000, 32, &S2 }, { 0x400000, 96, &S2 },
		{ 0x300000, 64, &S3 },
	};
	uint32_t s[N(w)];
	check_live(fx.eng, "order", w, N(w), s);
	CHECK(s[0] == s[1] && s[2] == s[3], "one stack, one site: %u %u %u %u",
	      s[0], s[1], s[2], s[3]);
	CHECK(s[0] != s[2] && s[0] != s[4] && s[2] != s[4] && s[0] && s[2] &&
		      s[4],
	      "sites %u %u %u", s[0], s[2], s[4]);

	/* fewer frames than the stack has: the innermost ones */
	uint64_t f[3] = { 0, 0, 0 };
	unsigned n = snap_engine_site_frames(fx.eng, s[4], f, 2);
	CHECK(n == 2 && f[0] == PC_MALLOC && f[1] == PC_G && f[2] == 0,
	      "2 frames of S3: %u, %#llx %#llx", n, (unsigned long long)f[0],
	      (unsigned long long)f[1]);
	CHECK(snap_engine_site_frames(fx.eng, 0, f, 3) == 0, "site 0");

	/* all freed: nothing */
	fixture_release(&fx, 0x100000);
	fixture_release(&fx, 0x200000);
	fixture_release(&fx, 0x300000);
	fixture_release(&fx, 0x400000);
	fixture_release(&fx, 0x900000);
	check_live(fx.eng, "all freed", NULL, 0, NULL);
	fixture_fini(&fx);
}

/* A stack that is the outer part of one seen before (its innermost frame
   a node inside the older stack's path) is a site of its own, aged when
   first seen as a stack; and stacks that differ in frame 0 only (one call
   site reaching malloc or calloc) are two sites, each with its own
   frame 0. */
static void
test_site_identity(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	static const struct stack outer = { 3, { PC_F, PC_MAIN_A,
						 PC_LIBC_START } };
	fixture_alloc(&fx, 0x100000, 16, &S2);
	fixture_alloc(&fx, 0x200000, 16, &S1);
	fixture_alloc(&fx, 0x300000, 16, &S1_CALLOC);
	fixture_alloc(&fx, 0x050000, 16, &outer);
	fixture_alloc(&fx, 0x400000, 16, &S2);
	fixture_alloc(&fx, 0x060000, 16, &S1_CALLOC);
	static const struct want_block w[] = {
		{ 0x100000, 16, &S2 },	      { 0x400000, 16, &S2 },
		{ 0x200000, 16, &S1 },	      { 0x060000, 16, &S1_CALLOC },
		{ 0x300000, 16, &S1_CALLOC }, { 0x050000, 16, &outer },
	};
	uint32_t s[N(w)];
	check_live(fx.eng, "identity", w, N(w), s);
	CHECK(s[2] != s[3] && s[3] == s[4] && s[5] != s[2],
	      "sites %u %u %u %u", s[2], s[3], s[4], s[5]);
	fixture_fini(&fx);
}

/* A realloc moves the block and gives it the realloc's stack (memcheck
   reports a realloc'ed block where it was last reallocated), in place or
   not; its position follows its new stack's age; realloc(NULL, n) is a
   new block, realloc(p, 0) frees it, a failed realloc leaves it. */
static void
test_realloc(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x100000, 16, &S1);
	fixture_alloc(&fx, 0x200000, 32, &S2);
	fixture_alloc(&fx, 0x300000, 48, &S3);
	fixture_resize(&fx, 0x100000, 0x700000, 160, &R1); /* moved */
	fixture_resize(&fx, 0x200000, 0x200000, 320, &R2); /* in place */
	fixture_resize(&fx, 0, 0x800000, 24, &R1);	   /* realloc(NULL, 24) */
	fixture_resize(&fx, 0x300000, 0, 1000, &R2);	   /* failed */
	static const struct want_block w[] = {
		{ 0x300000, 48, &S3 },
		{ 0x700000, 160, &R1 }, { 0x800000, 24, &R1 },
		{ 0x200000, 320, &R2 },
	};
	check_live(fx.eng, "reallocs", w, N(w), NULL);
	fixture_resize(&fx, 0x700000, 0, 0, &R2); /* realloc(p, 0) */
	static const struct want_block w2[] = {
		{ 0x300000, 48, &S3 }, { 0x800000, 24, &R1 },
		{ 0x200000, 320, &R2 },
	};
	check_live(fx.eng, "realloc(p, 0)", w2, N(w2), NULL);
	fixture_fini(&fx);
}

/* A realloc between its REALLOC_BEGIN and its REALLOC is its old block
   (address, size, stack), even when another thread got its address
   meanwhile; once complete, the new block with the realloc's stack; a
   thread that ends inside its realloc leaves the old block. */
static void
test_realloc_in_flight(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x100000, 48, &S1);
	fixture_alloc(&fx, 0x200000, 16, &S2);
	fixture_event(&fx, HT_EV_REALLOC_BEGIN, 7, 0, 0x100000, 0, &R1);
	static const struct want_block w[] = {
		{ 0x100000, 48, &S1 }, { 0x200000, 16, &S2 },
	};
	check_live(fx.eng, "in flight", w, N(w), NULL);
	/* thread 8 gets the old address before thread 7's REALLOC */
	fixture_event(&fx, HT_EV_ALLOC, 8, 0x100000, 0, 64, &S3);
	static const struct want_block w1[] = {
		{ 0x100000, 48, &S1 }, { 0x200000, 16, &S2 },
		{ 0x100000, 64, &S3 },
	};
	check_live(fx.eng, "in flight, address reused", w1, N(w1), NULL);
	fixture_event(&fx, HT_EV_REALLOC, 7, 0x500000, 0x100000, 96, &R1);
	static const struct want_block w2[] = {
		{ 0x200000, 16, &S2 }, { 0x100000, 64, &S3 },
		{ 0x500000, 96, &R1 },
	};
	check_live(fx.eng, "completed", w2, N(w2), NULL);

	fixture_event(&fx, HT_EV_REALLOC_BEGIN, 9, 0, 0x200000, 0, &R2);
	fixture_event(&fx, HT_EV_THREAD_EXIT, 9, 0, 0, 0, NULL);
	check_live(fx.eng, "abandoned", w2, N(w2), NULL);
	fixture_fini(&fx);
}

/* Blocks the tree ignores (--ignore-fn, a stack of the allocation
   function alone) are still live blocks, with their whole stacks, and
   so is such a block reallocated; a freed ignored block is gone. */
static void
test_ignored(void)
{
	for (int compat = 0; compat < 2; compat++) {
		const char *opts[] = { "--ignore-fn=ign",
				       compat ? "--massif-compat=yes"
					      : "--massif-compat=no",
				       NULL };
		struct fixture fx;
		fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
		fixture_alloc(&fx, 0x100000, 16, &SIGN);
		fixture_alloc(&fx, 0x200000, 32, &S1);
		fixture_alloc(&fx, 0x300000, 48, &SONLY);
		fixture_alloc(&fx, 0x400000, 64, &SIGN);
		fixture_alloc(&fx, 0x500000, 80, &SIGN);
		fixture_release(&fx, 0x400000);
		fixture_resize(&fx, 0x500000, 0x600000, 88, &R2);
		static const struct want_block w[] = {
			{ 0x100000, 16, &SIGN }, { 0x200000, 32, &S1 },
			{ 0x300000, 48, &SONLY }, { 0x600000, 88, &R2 },
		};
		check_live(fx.eng, compat ? "ignored, compat" : "ignored", w,
			   N(w), NULL);
		struct snap_stats st = snap_engine_stats(fx.eng);
		CHECK(st.ignored == 4, "%llu ignored",
		      (unsigned long long)st.ignored);
		fixture_fini(&fx);
	}
}

/* A fork's clone has the parent's live blocks and sites: same blocks,
   same site ids and frames, a known stack keeps its site in either, and
   what either does later is its own. A realloc another thread had begun
   is its old block in the clone. */
static void
test_clone(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	fixture_alloc(&fx, 0x100000, 16, &S1);
	fixture_alloc(&fx, 0x200000, 32, &S2);
	fixture_alloc(&fx, 0x300000, 48, &S1);
	fixture_event(&fx, HT_EV_REALLOC_BEGIN, 7, 0, 0x300000, 0, &R1);
	static const struct want_block w[] = {
		{ 0x100000, 16, &S1 }, { 0x300000, 48, &S1 },
		{ 0x200000, 32, &S2 },
	};
	uint32_t ps[N(w)], cs[N(w)];
	check_live(fx.eng, "parent", w, N(w), ps);

	struct snap_engine *child = snap_engine_clone(fx.eng);
	struct snap_engine *parent = fx.eng;
	fx.eng = child;
	check_live(child, "child", w, N(w), cs);
	CHECK(memcmp(ps, cs, sizeof(ps)) == 0, "sites differ in the clone");
	fixture_alloc(&fx, 0x400000, 64, &S2); /* a known stack */
	fixture_alloc(&fx, 0x500000, 80, &S3); /* a new one */
	fixture_release(&fx, 0x100000);
	static const struct want_block wc[] = {
		{ 0x300000, 48, &S1 }, { 0x200000, 32, &S2 },
		{ 0x400000, 64, &S2 }, { 0x500000, 80, &S3 },
	};
	uint32_t c2[N(wc)];
	check_live(child, "child later", wc, N(wc), c2);
	CHECK(c2[2] == ps[2], "S2's site in the clone %u, parent's %u", c2[2],
	      ps[2]);
	/* the parent is untouched, its realloc still in flight */
	fx.eng = parent;
	check_live(parent, "parent after", w, N(w), NULL);
	fixture_event(&fx, HT_EV_REALLOC, 7, 0x700000, 0x300000, 96, &R1);
	static const struct want_block wp[] = {
		{ 0x100000, 16, &S1 }, { 0x200000, 32, &S2 },
		{ 0x700000, 96, &R1 },
	};
	check_live(parent, "parent's realloc", wp, N(wp), NULL);
	check_live(child, "child after the parent's", wc, N(wc), NULL);
	snap_engine_free(child);
	fixture_fini(&fx);
}

#define USAGE(fx, a, f, b)                                                  \
	do {                                                                \
		struct snap_stats st_ = snap_engine_stats((fx)->eng);       \
		CHECK(st_.usage_allocs == (a) && st_.usage_frees == (f) &&  \
			      st_.usage_bytes == (b),                       \
		      "usage: %llu allocs, %llu frees, %llu bytes; want "   \
		      "%llu, %llu, %llu",                                   \
		      (unsigned long long)st_.usage_allocs,                 \
		      (unsigned long long)st_.usage_frees,                  \
		      (unsigned long long)st_.usage_bytes,                  \
		      (unsigned long long)(a), (unsigned long long)(f),     \
		      (unsigned long long)(b));                             \
	} while (0)

/* memcheck's "total heap usage: A allocs, F frees, B bytes allocated":
   a malloc is an alloc of its size, a free of a block a free; a realloc
   of a block one alloc of its new size and one free, in place or moved,
   with or without REALLOC_BEGIN; realloc(NULL, n) an alloc alone,
   realloc(p, 0) a free alone; a failed realloc nothing, a free of a
   block never seen nothing; blocks --ignore-fn hides count all the same
   (memcheck has no such option). */
static void
test_usage(void)
{
	const char *opts[] = { "--ignore-fn=ign", NULL };
	struct fixture fx;
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	USAGE(&fx, 0, 0, 0);
	fixture_alloc(&fx, 0x100000, 100, &S1);
	fixture_alloc(&fx, 0x200000, 200, &S2);
	USAGE(&fx, 2, 0, 300);
	fixture_release(&fx, 0x100000);
	USAGE(&fx, 2, 1, 300);
	fixture_resize(&fx, 0x200000, 0x300000, 300, &R1); /* moved */
	USAGE(&fx, 3, 2, 600);
	fixture_resize(&fx, 0x300000, 0x300000, 20, &R1); /* in place, smaller */
	USAGE(&fx, 4, 3, 620);
	fixture_resize(&fx, 0, 0x400000, 50, &R2); /* realloc(NULL, 50) */
	USAGE(&fx, 5, 3, 670);
	fixture_resize(&fx, 0x400000, 0, 0, &R2); /* realloc(p, 0) */
	USAGE(&fx, 5, 4, 670);
	fixture_release(&fx, 0xdead000); /* never seen */
	USAGE(&fx, 5, 4, 670);
	fixture_resize(&fx, 0x300000, 0, 4000, &R2); /* failed */
	USAGE(&fx, 5, 4, 670);
	fixture_event(&fx, HT_EV_REALLOC_BEGIN, 7, 0, 0x300000, 0, &R1);
	USAGE(&fx, 5, 4, 670);
	fixture_event(&fx, HT_EV_REALLOC, 7, 0x500000, 0x300000, 70, &R1);
	USAGE(&fx, 6, 5, 740);
	fixture_event(&fx, HT_EV_REALLOC_BEGIN, 7, 0, 0x500000, 0, &R1);
	fixture_event(&fx, HT_EV_REALLOC, 7, 0, 0x500000, 0, &R1); /* realloc(p, 0) */
	USAGE(&fx, 6, 6, 740);
	fixture_alloc(&fx, 0x600000, 8, &SIGN); /* ignored by the tree */
	USAGE(&fx, 7, 6, 748);
	fixture_resize(&fx, 0x600000, 0x700000, 16, &R1);
	USAGE(&fx, 8, 7, 764);
	fixture_release(&fx, 0x700000);
	USAGE(&fx, 8, 8, 764);
	check_live(fx.eng, "usage: all freed", NULL, 0, NULL);
	struct snap_stats st = snap_engine_stats(fx.eng);
	CHECK(st.unknown_frees == 1, "unknown frees %llu",
	      (unsigned long long)st.unknown_frees);
	fixture_fini(&fx);
}

int
main(void)
{
	test_order_and_sites();
	test_site_identity();
	test_realloc();
	test_realloc_in_flight();
	test_ignored();
	test_clone();
	test_usage();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("all live-block checks passed\n");
	return 0;
}
