/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the snapshot engine on hand-made event sequences. Sizes are
   multiples of 16 and --heap-admin=0 with the estimate model, so extra bytes
   are 0 and every expected time and size below is worked out by hand from
   the rules in massif-semantics.md §4. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/synthframe.h"
#include "tests/check.h"
#include "tests/engine/fixture.h"

/* Stack: malloc, then the given frames (innermost first), then the start-up
   frame below main. */
static void
feed(struct fixture *fx, enum ht_event_kind kind, enum ht_alloc_fn fn,
     uint64_t addr, uint64_t old, uint64_t size, int nframes, ...)
{
	uint64_t pcs[16] = { PC_MALLOC };
	unsigned n = 1;
	va_list ap;
	va_start(ap, nframes);
	for (int i = 0; i < nframes; i++)
		pcs[n++] = va_arg(ap, uint64_t);
	va_end(ap);
	pcs[n++] = PC_LIBC_START;
	struct ht_event ev = {
		.kind = kind, .fn = fn, .addr = addr, .old_addr = old,
		.size = size, .pcs = pcs, .npcs = n,
	};
	snap_engine_feed(fx->eng, &ev);
}

/* One event from thread TID, made at SITE in main's caller chain. */
static void
feed_thread(struct fixture *fx, uint32_t tid, enum ht_event_kind kind,
	    uint64_t addr, uint64_t old, uint64_t size, uint64_t site)
{
	uint64_t pcs[] = { PC_MALLOC, site, PC_LIBC_START };
	struct ht_event ev = {
		.kind = kind, .addr = addr, .old_addr = old, .size = size,
		.tid = tid, .pcs = pcs, .npcs = 3,
		.fn = kind == HT_EV_ALLOC ? HT_FN_MALLOC
		      : kind == HT_EV_FREE ? HT_FN_FREE : HT_FN_REALLOC,
	};
	snap_engine_feed(fx->eng, &ev);
}

static uint64_t
do_malloc(struct fixture *fx, uint64_t size, uint64_t site)
{
	uint64_t a = fx->next_addr += 0x1000;
	feed(fx, HT_EV_ALLOC, HT_FN_MALLOC, a, 0, size, 1, site);
	return a;
}

static void
do_free(struct fixture *fx, uint64_t addr)
{
	feed(fx, HT_EV_FREE, HT_FN_FREE, addr, 0, 0, 1, (uint64_t)PC_MAIN_C);
}

/* Check the series of (time, heap) pairs and the kinds, given as a string
   of 'E' (empty), 'D' (detailed), 'P' (peak). */
static void
check_series(struct fixture *fx, const char *what, const char *kinds,
	     const uint64_t *times, const uint64_t *heaps)
{
	size_t n = snap_engine_count(fx->eng);
	CHECK(n == strlen(kinds), "%s: %zu snapshots, want %zu", what, n,
	      strlen(kinds));
	for (size_t i = 0; i < n && i < strlen(kinds); i++) {
		const struct snap_snapshot *s = snap_engine_snapshot(fx->eng, i);
		char k = s->kind == SNAP_PEAK ? 'P'
			 : s->kind == SNAP_DETAILED ? 'D' : 'E';
		CHECK(k == kinds[i], "%s: snapshot %zu kind %c, want %c", what,
		      i, k, kinds[i]);
		CHECK(s->time == times[i], "%s: snapshot %zu time %llu, want %llu",
		      what, i, (unsigned long long)s->time,
		      (unsigned long long)times[i]);
		if (heaps)
			CHECK(s->heap == heaps[i],
			      "%s: snapshot %zu heap %llu, want %llu", what, i,
			      (unsigned long long)s->heap,
			      (unsigned long long)heaps[i]);
	}
}

static void
test_no_free_no_peak(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	for (int i = 0; i < 5; i++)
		do_malloc(&fx, 16, PC_MAIN_A);
	uint64_t t[] = { 0, 16, 32, 48, 64, 80 };
	check_series(&fx, "no free", "EEEEEE", t, t);
	CHECK(snap_engine_peak_index(fx.eng) == -1, "a peak without frees");
	fixture_fini(&fx);
}

static void
test_detailed_freq(void)
{
	struct fixture fx;
	const char *opts[] = { "--detailed-freq=3", NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	for (int i = 0; i < 7; i++)
		do_malloc(&fx, 16, PC_MAIN_A);
	uint64_t t[] = { 0, 16, 32, 48, 64, 80, 96, 112 };
	check_series(&fx, "detailed-freq=3", "EEDEEDEE", t, t);
	fixture_fini(&fx);
}

static void
test_peak(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	uint64_t a = do_malloc(&fx, 32, PC_MAIN_A);
	uint64_t b = do_malloc(&fx, 64, PC_MAIN_B);
	do_free(&fx, a);            /* first free: peak at 96 */
	do_malloc(&fx, 16, PC_MAIN_C);
	do_free(&fx, b);            /* 80 does not beat 96 */
	uint64_t t[] = { 0, 32, 96, 96, 128, 144, 208 };
	uint64_t h[] = { 0, 32, 96, 96, 64, 80, 16 };
	check_series(&fx, "peak", "EEEPEEE", t, h);
	const struct snap_snapshot *p = snap_engine_snapshot(fx.eng, 3);
	/* root 96: main B 64, then main A 32 */
	CHECK(p->n_tree == 3, "peak tree has %zu nodes", p->n_tree);
	if (p->n_tree == 3) {
		CHECK(p->tree[0].n_children == 2 && p->tree[0].bytes == 96,
		      "root");
		CHECK(p->tree[1].pc == PC_MAIN_B && p->tree[1].bytes == 64,
		      "first child");
		CHECK(p->tree[2].pc == PC_MAIN_A && p->tree[2].bytes == 32,
		      "second child");
	}
	fixture_fini(&fx);
}

static void
test_peak_inaccuracy(void)
{
	struct fixture fx;
	const char *opts[] = { "--peak-inaccuracy=1000", NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	uint64_t a = do_malloc(&fx, 32, PC_MAIN_A);
	do_free(&fx, a);             /* peak at 32 */
	uint64_t b = do_malloc(&fx, 320, PC_MAIN_A);
	do_free(&fx, b);             /* 320 <= 32 + 320: no new peak */
	uint64_t t[] = { 0, 32, 32, 64, 384, 704 };
	check_series(&fx, "peak-inaccuracy=1000", "EEPEEE", t, NULL);
	fixture_fini(&fx);

	const char *zero[] = { "--peak-inaccuracy=0", NULL };
	fixture_init(&fx, zero, SNAP_EXTRA_ESTIMATE);
	a = do_malloc(&fx, 32, PC_MAIN_A);
	b = do_malloc(&fx, 32, PC_MAIN_A);
	do_free(&fx, a);             /* peak 64 at t=64 */
	a = do_malloc(&fx, 48, PC_MAIN_A);
	do_free(&fx, a);             /* 80 > 64: new peak, old one demoted */
	uint64_t t0[] = { 0, 32, 64, 64, 96, 144, 144, 192 };
	check_series(&fx, "peak-inaccuracy=0", "EEEDEEPE", t0, NULL);
	fixture_fini(&fx);
}

static void
test_culling(void)
{
	struct fixture fx;
	const char *opts[] = { "--max-snapshots=10", NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	/* Ten snapshots at 0..144 fill the array; removing the smallest spans
	   one at a time (earliest on ties) leaves 0, 32, 64, 96, 144 and a
	   minimum interval of 32, so of the next four allocations (160, 176,
	   192, 208) only 176 and 208 are taken. */
	for (int i = 0; i < 13; i++)
		do_malloc(&fx, 16, PC_MAIN_A);
	uint64_t t[] = { 0, 32, 64, 96, 144, 176, 208 };
	check_series(&fx, "culling", "EEEEDEE", t, t); /* 144 was the 10th taken */
	CHECK(snap_engine_stats(fx.eng).cullings == 1, "one cull");
	fixture_fini(&fx);
}

static void
test_filter(void)
{
	struct fixture fx;
	const char *opts[] = { "--alloc-fn=xmalloc", "--depth=2",
			       "--threshold=10", NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	/* xmalloc is stripped (leading alloc-fn); the depth cut keeps g, f. */
	uint64_t a = fx.next_addr += 0x1000;
	feed(&fx, HT_EV_ALLOC, HT_FN_MALLOC, a, 0, 800, 4,
	     (uint64_t)PC_XMALLOC, (uint64_t)PC_G, (uint64_t)PC_F,
	     (uint64_t)PC_MAIN_A);
	/* An alloc-fn below a non-alloc-fn frame stays. */
	uint64_t b = fx.next_addr += 0x1000;
	feed(&fx, HT_EV_ALLOC, HT_FN_MALLOC, b, 0, 64, 2, (uint64_t)PC_G,
	     (uint64_t)PC_XMALLOC);
	do_free(&fx, b);
	const struct snap_snapshot *p = snap_engine_snapshot(fx.eng, 3);
	CHECK(p && p->kind == SNAP_PEAK, "peak expected");
	if (p && p->kind == SNAP_PEAK) {
		/* root 864: g 864 { f 800, xmalloc 64 below 10% = 86 ->
		   aggregate 64 in 1 place } */
		CHECK(p->n_tree == 4, "tree has %zu nodes", p->n_tree);
		if (p->n_tree == 4) {
			CHECK(p->tree[1].pc == PC_G && p->tree[1].bytes == 864 &&
			      p->tree[1].n_children == 2, "g node");
			CHECK(p->tree[2].pc == PC_F && p->tree[2].n_children == 0,
			      "f node cut by depth");
			CHECK(p->tree[3].places == 1 && p->tree[3].bytes == 64,
			      "aggregate");
		}
	}
	fixture_fini(&fx);
}

static void
test_ignore_realloc(bool compat)
{
	struct fixture fx;
	const char *opts[] = { "--ignore-fn=ign",
			       compat ? "--massif-compat=yes" : "--massif-compat=no",
			       "--detailed-freq=1", NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	uint64_t a = fx.next_addr += 0x1000;
	feed(&fx, HT_EV_ALLOC, HT_FN_MALLOC, a, 0, 2000 - 2000 % 16, 1,
	     (uint64_t)PC_IGN);
	CHECK(snap_engine_count(fx.eng) == 1, "ignored alloc took a snapshot");
	uint64_t b = fx.next_addr += 0x1000;
	feed(&fx, HT_EV_REALLOC, HT_FN_REALLOC, b, a, 2496, 1,
	     (uint64_t)PC_MAIN_A);
	CHECK(snap_engine_count(fx.eng) == 1, "ignored realloc took a snapshot");
	do_malloc(&fx, 16, PC_MAIN_B);
	const struct snap_snapshot *s = snap_engine_snapshot(fx.eng, 1);
	/* Massif's quirk: the detailed heap includes the reallocated size. */
	uint64_t want = compat ? 16 + 2496 : 16;
	CHECK(s && s->heap == want, "compat=%d: detailed heap %llu, want %llu",
	      compat, s ? (unsigned long long)s->heap : 0ULL,
	      (unsigned long long)want);
	fixture_fini(&fx);
}

static void
test_realloc_edges(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	uint64_t a = fx.next_addr += 0x1000;
	/* realloc(NULL, 64) is a malloc */
	feed(&fx, HT_EV_REALLOC, HT_FN_REALLOC, a, 0, 64, 1, (uint64_t)PC_MAIN_A);
	/* grow in place to 128: +64 */
	feed(&fx, HT_EV_REALLOC, HT_FN_REALLOC, a, a, 128, 1, (uint64_t)PC_MAIN_A);
	/* realloc(p, 0) is a free: peak first */
	feed(&fx, HT_EV_REALLOC, HT_FN_REALLOC, 0, a, 0, 1, (uint64_t)PC_MAIN_A);
	/* free of an unknown block changes nothing */
	do_free(&fx, 0xdead0);
	uint64_t t[] = { 0, 64, 128, 128, 256 };
	uint64_t h[] = { 0, 64, 128, 128, 0 };
	check_series(&fx, "realloc edges", "EEEPE", t, h);
	CHECK(snap_engine_stats(fx.eng).unknown_frees == 1, "unknown free");
	fixture_fini(&fx);
}

static void
test_clone(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	uint64_t a = do_malloc(&fx, 32, PC_MAIN_A);
	struct snap_engine *child = snap_engine_clone(fx.eng);
	do_free(&fx, a);
	CHECK(snap_engine_count(child) == 2, "child has the parent's snapshots");
	struct snap_engine *parent = fx.eng;
	fx.eng = child;
	do_malloc(&fx, 16, PC_MAIN_B);
	do_free(&fx, a); /* the child's copy of the block */
	CHECK(snap_engine_count(child) == 5, "child count %zu",
	      snap_engine_count(child));
	CHECK(snap_engine_count(parent) == 4, "parent count %zu",
	      snap_engine_count(parent));
	snap_engine_free(parent);
	fixture_fini(&fx);
}


/* ---- REALLOC_BEGIN ---- */

enum { TID_A = 101, TID_B = 102, ADDR_P = 0x50000, ADDR_Q = 0x60000,
       ADDR_R = 0x70000 };

static const struct snap_snapshot *
last_snapshot(const struct fixture *fx)
{
	return snap_engine_snapshot(fx->eng, snap_engine_count(fx->eng) - 1);
}

/* The counters, tree and clock of the two engines' latest snapshots (all
   detailed) agree, and so do their block counts. */
static void
check_same_state(struct fixture *x, struct fixture *y, const char *what)
{
	const struct snap_snapshot *a = last_snapshot(x), *b = last_snapshot(y);
	CHECK(a->heap == b->heap && a->extra == b->extra && a->time == b->time,
	      "%s: heap %llu/%llu extra %llu/%llu time %llu/%llu", what,
	      (unsigned long long)a->heap, (unsigned long long)b->heap,
	      (unsigned long long)a->extra, (unsigned long long)b->extra,
	      (unsigned long long)a->time, (unsigned long long)b->time);
	CHECK(a->n_tree == b->n_tree, "%s: trees of %zu and %zu lines", what,
	      a->n_tree, b->n_tree);
	for (size_t i = 0; i < a->n_tree && i < b->n_tree; i++)
		CHECK(a->tree[i].pc == b->tree[i].pc &&
		      a->tree[i].bytes == b->tree[i].bytes &&
		      a->tree[i].n_children == b->tree[i].n_children,
		      "%s: tree line %zu differs", what, i);
	struct snap_stats s = snap_engine_stats(x->eng);
	struct snap_stats t = snap_engine_stats(y->eng);
	CHECK(s.live_blocks == t.live_blocks && s.reallocs == t.reallocs &&
	      s.frees == t.frees && s.unknown_frees == t.unknown_frees,
	      "%s: blocks %llu/%llu reallocs %llu/%llu frees %llu/%llu "
	      "unknown %llu/%llu", what,
	      (unsigned long long)s.live_blocks,
	      (unsigned long long)t.live_blocks,
	      (unsigned long long)s.reallocs, (unsigned long long)t.reallocs,
	      (unsigned long long)s.frees, (unsigned long long)t.frees,
	      (unsigned long long)s.unknown_frees,
	      (unsigned long long)t.unknown_frees);
}

/* A begins realloc(p); the allocator moves the block to q and B's malloc
   gets p before A's REALLOC is recorded. Massif, serializing threads, sees
   A's realloc and then B's malloc: both orders must end in the same tree,
   counters and blocks, here and after both blocks are freed. */
static void
test_begin_interleaved(enum snap_extra_kind kind, uint64_t new_size)
{
	const char *opts[] = { "--detailed-freq=1", "--threshold=0", NULL };
	struct fixture ring, serial;
	fixture_init(&ring, opts, kind);
	fixture_init(&serial, opts, kind);
	struct fixture *both[] = { &ring, &serial };
	for (int i = 0; i < 2; i++) {
		feed_thread(both[i], TID_A, HT_EV_ALLOC, ADDR_P, 0, 160,
			    PC_MAIN_A);
		feed_thread(both[i], TID_B, HT_EV_ALLOC, ADDR_R, 0, 48,
			    PC_MAIN_C);
	}

	feed_thread(&ring, TID_A, HT_EV_REALLOC_BEGIN, 0, ADDR_P, 0, PC_F);
	feed_thread(&ring, TID_B, HT_EV_ALLOC, ADDR_P, 0, 32, PC_MAIN_B);
	/* Between the two halves: B's block is at p, A's still counted. */
	CHECK(last_snapshot(&ring)->heap == 160 + 48 + 32,
	      "interleaved: heap %llu in between",
	      (unsigned long long)last_snapshot(&ring)->heap);
	feed_thread(&ring, TID_A, HT_EV_REALLOC, ADDR_Q, ADDR_P, new_size,
		    PC_F);

	feed_thread(&serial, TID_A, HT_EV_REALLOC, ADDR_Q, ADDR_P, new_size,
		    PC_F);
	feed_thread(&serial, TID_B, HT_EV_ALLOC, ADDR_P, 0, 32, PC_MAIN_B);

	check_same_state(&ring, &serial, "interleaved, after");
	CHECK(last_snapshot(&ring)->heap == new_size + 48 + 32,
	      "interleaved: heap %llu",
	      (unsigned long long)last_snapshot(&ring)->heap);
	for (int i = 0; i < 2; i++) {
		feed_thread(both[i], TID_B, HT_EV_FREE, ADDR_P, 0, 0,
			    PC_MAIN_C);
		feed_thread(both[i], TID_A, HT_EV_FREE, ADDR_Q, 0, 0,
			    PC_MAIN_C);
	}
	check_same_state(&ring, &serial, "interleaved, freed");
	CHECK(last_snapshot(&ring)->heap == 48, "interleaved: heap %llu left",
	      (unsigned long long)last_snapshot(&ring)->heap);
	CHECK(snap_engine_stats(ring.eng).unknown_frees == 0,
	      "interleaved: a free went unrecognised");
	fixture_fini(&ring);
	fixture_fini(&serial);
}

/* realloc(p, 0) frees p, which B's malloc may get before A's record: the
   free applies to the detached block, B's block stays. */
static void
test_begin_free(void)
{
	const char *opts[] = { "--detailed-freq=1", NULL };
	struct fixture fx;
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	feed_thread(&fx, TID_A, HT_EV_ALLOC, ADDR_P, 0, 160, PC_MAIN_A);
	feed_thread(&fx, TID_A, HT_EV_REALLOC_BEGIN, 0, ADDR_P, 0, PC_F);
	feed_thread(&fx, TID_B, HT_EV_ALLOC, ADDR_P, 0, 32, PC_MAIN_B);
	feed_thread(&fx, TID_A, HT_EV_REALLOC, 0, ADDR_P, 0, PC_F);
	struct snap_stats st = snap_engine_stats(fx.eng);
	CHECK(last_snapshot(&fx)->heap == 32 && st.live_blocks == 1 &&
	      st.frees == 1, "realloc(p, 0): heap %llu, %llu blocks",
	      (unsigned long long)last_snapshot(&fx)->heap,
	      (unsigned long long)st.live_blocks);
	feed_thread(&fx, TID_B, HT_EV_FREE, ADDR_P, 0, 0, PC_MAIN_C);
	CHECK(last_snapshot(&fx)->heap == 0 &&
	      snap_engine_stats(fx.eng).unknown_frees == 0,
	      "realloc(p, 0): B's block not freed");
	fixture_fini(&fx);
}

/* A failed realloc (ADDR 0, SIZE > 0) leaves the block as it was, and
   takes no snapshot. */
static void
test_begin_failed(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	feed_thread(&fx, TID_A, HT_EV_ALLOC, ADDR_P, 0, 160, PC_MAIN_A);
	size_t n = snap_engine_count(fx.eng);
	feed_thread(&fx, TID_A, HT_EV_REALLOC_BEGIN, 0, ADDR_P, 0, PC_F);
	feed_thread(&fx, TID_A, HT_EV_REALLOC, 0, ADDR_P, 1 << 20, PC_F);
	CHECK(snap_engine_count(fx.eng) == n, "failed realloc took a snapshot");
	CHECK(snap_engine_stats(fx.eng).reallocs == 0,
	      "failed realloc counted");
	/* The same without BEGIN, as the ptrace backend would send it. */
	feed_thread(&fx, TID_A, HT_EV_REALLOC, 0, ADDR_P, 1 << 20, PC_F);
	CHECK(snap_engine_count(fx.eng) == n, "failed realloc took a snapshot");
	feed_thread(&fx, TID_A, HT_EV_FREE, ADDR_P, 0, 0, PC_MAIN_C);
	uint64_t t[] = { 0, 160, 160, 320 };
	uint64_t h[] = { 0, 160, 160, 0 };
	check_series(&fx, "failed realloc", "EEPE", t, h);
	fixture_fini(&fx);
}

/* A thread that dies inside realloc: its block goes back to its address,
   or is freed when that address was handed out meanwhile. */
static void
test_begin_thread_exit(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	feed_thread(&fx, TID_A, HT_EV_ALLOC, ADDR_P, 0, 160, PC_MAIN_A);
	feed_thread(&fx, TID_A, HT_EV_REALLOC_BEGIN, 0, ADDR_P, 0, PC_F);
	feed_thread(&fx, TID_A, HT_EV_THREAD_EXIT, 0, 0, 0, 0);
	feed_thread(&fx, TID_B, HT_EV_FREE, ADDR_P, 0, 0, PC_MAIN_C);
	struct snap_stats st = snap_engine_stats(fx.eng);
	CHECK(st.unknown_frees == 0 && st.live_blocks == 0 &&
	      st.reallocs_abandoned == 1,
	      "thread exit: block not put back (%llu unknown, %llu live)",
	      (unsigned long long)st.unknown_frees,
	      (unsigned long long)st.live_blocks);

	feed_thread(&fx, TID_A, HT_EV_ALLOC, ADDR_P, 0, 160, PC_MAIN_A);
	feed_thread(&fx, TID_A, HT_EV_REALLOC_BEGIN, 0, ADDR_P, 0, PC_F);
	feed_thread(&fx, TID_B, HT_EV_ALLOC, ADDR_P, 0, 32, PC_MAIN_B);
	feed_thread(&fx, TID_A, HT_EV_THREAD_EXIT, 0, 0, 0, 0);
	st = snap_engine_stats(fx.eng);
	CHECK(last_snapshot(&fx)->heap == 32 && st.live_blocks == 1,
	      "thread exit after reuse: heap %llu, %llu blocks",
	      (unsigned long long)last_snapshot(&fx)->heap,
	      (unsigned long long)st.live_blocks);
	fixture_fini(&fx);
}

/* A thread's second BEGIN gives up its first realloc (block put back);
   that realloc's REALLOC, if it still comes, finds the block in the table
   like a REALLOC without BEGIN. Unknown blocks stay unknown, even when
   another thread gets their address meanwhile. */
static void
test_begin_nested_and_unknown(void)
{
	struct fixture fx;
	const char *opts[] = { "--massif-compat=no", NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	feed_thread(&fx, TID_A, HT_EV_ALLOC, ADDR_P, 0, 160, PC_MAIN_A);
	feed_thread(&fx, TID_A, HT_EV_ALLOC, ADDR_R, 0, 64, PC_MAIN_A);
	feed_thread(&fx, TID_A, HT_EV_REALLOC_BEGIN, 0, ADDR_P, 0, PC_F);
	feed_thread(&fx, TID_A, HT_EV_REALLOC_BEGIN, 0, ADDR_R, 0, PC_G);
	feed_thread(&fx, TID_A, HT_EV_REALLOC, ADDR_R + 16, ADDR_R, 80, PC_G);
	feed_thread(&fx, TID_A, HT_EV_REALLOC, ADDR_Q, ADDR_P, 320, PC_F);
	struct snap_stats st = snap_engine_stats(fx.eng);
	CHECK(last_snapshot(&fx)->heap == 400 && st.reallocs == 2 &&
	      st.reallocs_abandoned == 1 && st.live_blocks == 2,
	      "nested: heap %llu, %llu reallocs",
	      (unsigned long long)last_snapshot(&fx)->heap,
	      (unsigned long long)st.reallocs);

	/* realloc(NULL, n) sends no BEGIN; a stray one is ignored. */
	feed_thread(&fx, TID_B, HT_EV_REALLOC_BEGIN, 0, 0, 0, PC_F);
	feed_thread(&fx, TID_B, HT_EV_REALLOC, ADDR_P, 0, 16, PC_F);
	CHECK(last_snapshot(&fx)->heap == 416, "realloc(NULL, 16): heap %llu",
	      (unsigned long long)last_snapshot(&fx)->heap);

	/* A BEGIN of an address never seen: B's new block there is not the
	   one A reallocs; natively A's result is real, so it counts. */
	enum { ADDR_U = 0x90000, ADDR_V = 0xa0000 };
	feed_thread(&fx, TID_A, HT_EV_REALLOC_BEGIN, 0, ADDR_U, 0, PC_F);
	feed_thread(&fx, TID_B, HT_EV_ALLOC, ADDR_U, 0, 32, PC_MAIN_B);
	feed_thread(&fx, TID_A, HT_EV_REALLOC, ADDR_V, ADDR_U, 48, PC_F);
	st = snap_engine_stats(fx.eng);
	CHECK(last_snapshot(&fx)->heap == 416 + 32 + 48 &&
	      st.unknown_frees == 1 && st.live_blocks == 5,
	      "unknown: heap %llu, %llu blocks",
	      (unsigned long long)last_snapshot(&fx)->heap,
	      (unsigned long long)st.live_blocks);
	fixture_fini(&fx);
}

/* A fork while another thread is inside realloc: the child puts the block
   back, the parent completes the realloc. */
static void
test_begin_clone(void)
{
	struct fixture fx;
	fixture_init(&fx, NULL, SNAP_EXTRA_ESTIMATE);
	feed_thread(&fx, TID_A, HT_EV_ALLOC, ADDR_P, 0, 160, PC_MAIN_A);
	feed_thread(&fx, TID_A, HT_EV_REALLOC_BEGIN, 0, ADDR_P, 0, PC_F);
	struct snap_engine *child = snap_engine_clone(fx.eng);
	feed_thread(&fx, TID_A, HT_EV_REALLOC, ADDR_Q, ADDR_P, 320, PC_F);
	CHECK(last_snapshot(&fx)->heap == 320, "parent: heap %llu",
	      (unsigned long long)last_snapshot(&fx)->heap);
	struct snap_engine *parent = fx.eng;
	fx.eng = child;
	feed_thread(&fx, TID_B, HT_EV_FREE, ADDR_P, 0, 0, PC_MAIN_C);
	struct snap_stats st = snap_engine_stats(child);
	CHECK(last_snapshot(&fx)->heap == 0 && st.unknown_frees == 0,
	      "child: heap %llu, %llu unknown frees",
	      (unsigned long long)last_snapshot(&fx)->heap,
	      (unsigned long long)st.unknown_frees);
	snap_engine_free(parent);
	fixture_fini(&fx);
}

/* ---- --pages-as-heap and --stacks=yes ---- */

#define PG 4096ULL

/* A page-level call made from SITE in main (frame 0, the syscall
   wrapper's, is PC_F and stays in the path). */
static void
feed_page(struct fixture *fx, enum ht_event_kind kind, uint64_t addr,
	  uint64_t size, uint64_t old_addr, uint64_t old_size, uint64_t site)
{
	uint64_t pcs[] = { PC_F, site, PC_LIBC_START };
	struct ht_event ev = {
		.kind = kind, .addr = addr, .size = size,
		.old_addr = old_addr, .old_size = old_size,
		.tid = 1, .pcs = pcs, .npcs = 3,
	};
	snap_engine_feed(fx->eng, &ev);
}

static void
feed_stack(struct fixture *fx, uint32_t tid, enum ht_event_kind kind,
	   uint64_t size)
{
	struct ht_event ev = { .kind = kind, .tid = tid, .size = size };
	snap_engine_feed(fx->eng, &ev);
}

/* Without --massif-compat a page mapped again changes owner (the replaced
   page counts as freed and the new one as allocated) and an unmap is one
   deallocation: one peak check, one snapshot with all of it gone. */
static void
test_pages_exact(void)
{
	struct fixture fx;
	const char *opts[] = { "--pages-as-heap=yes", NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	feed_page(&fx, HT_EV_MMAP, 0x10000, 3 * PG, 0, 0, PC_MAIN_A);
	feed_page(&fx, HT_EV_MMAP, 0x12000, 2 * PG, 0, 0, PC_MAIN_B);
	feed_page(&fx, HT_EV_MUNMAP, 0x10000, 4 * PG, 0, 0, PC_MAIN_C);
	uint64_t t[] = { 0, 3 * PG, 6 * PG, 6 * PG, 10 * PG };
	uint64_t h[] = { 0, 3 * PG, 4 * PG, 4 * PG, 0 };
	check_series(&fx, "pages exact", "EEEPE", t, h);
	const struct snap_snapshot *peak = snap_engine_snapshot(fx.eng, 3);
	CHECK(peak->n_tree >= 2 && peak->tree[0].n_children == 1 &&
	      peak->tree[1].pc == PC_F,
	      "pages exact: frame 0 (the wrapper) must head the tree");
	fixture_fini(&fx);
}

/* Exact brk: the pages under the break, whatever its alignment. */
static void
test_brk_exact(void)
{
	struct fixture fx;
	const char *opts[] = { "--pages-as-heap=yes", NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	feed_page(&fx, HT_EV_BRK, 0x50064, 0, 0x50000, 0, PC_MAIN_A);
	feed_page(&fx, HT_EV_BRK, 0x513EC, 0, 0x50064, 0, PC_MAIN_A);
	feed_page(&fx, HT_EV_BRK, 0x513F0, 0, 0x513EC, 0, PC_MAIN_A);
	feed_page(&fx, HT_EV_BRK, 0x50032, 0, 0x513F0, 0, PC_MAIN_B);
	feed_page(&fx, HT_EV_MUNMAP, 0x51000, PG, 0, 0, PC_MAIN_C);
	uint64_t t[] = { 0, PG, 2 * PG, 2 * PG, 3 * PG };
	uint64_t h[] = { 0, PG, 2 * PG, 2 * PG, PG };
	check_series(&fx, "brk exact", "EEEPE", t, h);
	fixture_fini(&fx);
}

/* Bytes the tree of snapshot I holds at call site SITE (summed over its
   nodes); -1 when no node has that pc (no entry for it yet). */
static int64_t
site_bytes(struct fixture *fx, size_t i, uint64_t site)
{
	const struct snap_snapshot *s = snap_engine_snapshot(fx->eng, i);
	int64_t sum = -1;
	for (size_t k = 0; s && k < s->n_tree; k++)
		if (s->tree[k].pc == site && !s->tree[k].places)
			sum = (sum < 0 ? 0 : sum) + (int64_t)s->tree[k].bytes;
	return sum;
}

/* Moving mremaps (issue 13), the sequence of tests/massif/progs/
   pages_move.c: a = 3 pages, its last one split off (mprotect, no event)
   so that growing a's first 2 pages to 5 moves them to b; a free page
   `to` mapped and unmapped; b shrunk to 1 page and moved to `to`
   (MREMAP_FIXED); then `to` and a's last page unmapped.
   Massif (ms_copy_mem_remap, then the extension, then the old range
   unmapped again): the old pages go first, with a peak check before the
   first and a snapshot attempt after it, which shows one page gone (t 4,
   t 13 below); then as many pages recorded at the new place and the
   extension, owned by the mremap's stack, whose tree entry appears only
   then; B-time old + new pages. Real Massif's series for pages_move.c is
   this one shifted by its start-up pages (10 pages of time, 8 of heap):
   golden pages_move_df1.out, snapshots 10 to 22.
   Exact: the same peak check, B-time and owners, but one snapshot
   attempt after the whole move: no dip. */
static void
test_mremap_move(bool compat)
{
	enum { A = 0x10000, B = 0x20000, TO = 0x30000 };
	struct fixture fx;
	const char *opts[] = { "--pages-as-heap=yes", "--detailed-freq=1",
			       "--threshold=0",
			       compat ? "--massif-compat=yes" : NULL, NULL };
	const char *what = compat ? "mremap move compat" : "mremap move exact";
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	feed_page(&fx, HT_EV_MMAP, A, 3 * PG, 0, 0, PC_MAIN_A);
	feed_page(&fx, HT_EV_MREMAP, B, 5 * PG, A, 2 * PG, PC_MAIN_B);
	feed_page(&fx, HT_EV_MMAP, TO, PG, 0, 0, PC_MAIN_C);
	feed_page(&fx, HT_EV_MUNMAP, TO, PG, 0, 0, PC_MAIN_C);
	feed_page(&fx, HT_EV_MREMAP, TO, PG, B, 5 * PG, PC_G);
	feed_page(&fx, HT_EV_MUNMAP, TO, PG, 0, 0, PC_MAIN_C);
	feed_page(&fx, HT_EV_MUNMAP, A + 2 * PG, PG, 0, 0, PC_MAIN_C);
	if (compat) {
		uint64_t t[] = { 0, 3, 3, 4, 7, 10, 11, 11, 12, 13, 14, 19, 20 };
		uint64_t h[] = { 0, 3, 3, 2, 3, 6, 7, 7, 6, 5, 6, 1, 0 };
		for (size_t i = 0; i < 13; i++)
			t[i] *= PG, h[i] *= PG;
		check_series(&fx, what, "DDDDDDDPDDDDD", t, h);
		/* The dip: the first old page gone, the new ones not yet
		   recorded, and no entry for the mremap yet. */
		CHECK(site_bytes(&fx, 2, PC_MAIN_B) == -1 &&
		      site_bytes(&fx, 3, PC_MAIN_B) == -1 &&
		      site_bytes(&fx, 3, PC_MAIN_A) == (int64_t)(2 * PG),
		      "%s: snapshots 2-3: the mremap has no entry yet", what);
		CHECK(site_bytes(&fx, 4, PC_MAIN_B) == (int64_t)(2 * PG) &&
		      site_bytes(&fx, 5, PC_MAIN_B) == (int64_t)(5 * PG) &&
		      site_bytes(&fx, 5, PC_MAIN_A) == (int64_t)PG,
		      "%s: snapshot 5: the mremap owns the 5 pages", what);
		CHECK(site_bytes(&fx, 9, PC_G) == -1 &&
		      site_bytes(&fx, 10, PC_G) == (int64_t)PG &&
		      site_bytes(&fx, 10, PC_MAIN_B) == (int64_t)(4 * PG),
		      "%s: snapshots 9-10: the second move", what);
	} else {
		uint64_t t[] = { 0, 3, 3, 10, 11, 11, 12, 18, 19, 20 };
		uint64_t h[] = { 0, 3, 3, 6, 7, 7, 6, 2, 1, 0 };
		for (size_t i = 0; i < 10; i++)
			t[i] *= PG, h[i] *= PG;
		check_series(&fx, what, "DDDDDPDDDD", t, h);
		CHECK(site_bytes(&fx, 2, PC_MAIN_B) == -1 &&
		      site_bytes(&fx, 3, PC_MAIN_B) == (int64_t)(5 * PG) &&
		      site_bytes(&fx, 3, PC_MAIN_A) == (int64_t)PG,
		      "%s: snapshot 3: the mremap owns the 5 pages", what);
		CHECK(site_bytes(&fx, 6, PC_G) == -1 &&
		      site_bytes(&fx, 7, PC_G) == (int64_t)PG &&
		      site_bytes(&fx, 7, PC_MAIN_B) == 0,
		      "%s: snapshot 7: the second move", what);
	}
	fixture_fini(&fx);
}

/* Massif's double count: MAP_FIXED over a mapped page adds a second
   record; an unmap takes the newest off and snapshots after the first
   page only. */
static void
test_pages_double_count(void)
{
	struct fixture fx;
	const char *opts[] = { "--pages-as-heap=yes", "--massif-compat=yes",
			       NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	feed_page(&fx, HT_EV_MMAP, 0x10000, 2 * PG, 0, 0, PC_MAIN_A);
	feed_page(&fx, HT_EV_MMAP, 0x10000, PG, 0, 0, PC_MAIN_B);
	feed_page(&fx, HT_EV_MUNMAP, 0x10000, 2 * PG, 0, 0, PC_MAIN_C);
	feed_page(&fx, HT_EV_MUNMAP, 0x10000, PG, 0, 0, PC_MAIN_C);
	uint64_t t[] = { 0, 2 * PG, 3 * PG, 3 * PG, 4 * PG, 6 * PG };
	uint64_t h[] = { 0, 2 * PG, 3 * PG, 3 * PG, 2 * PG, 0 };
	check_series(&fx, "double count", "EEEPEE", t, h);
	fixture_fini(&fx);
}

/* Stack samples: growth and shrink by Massif's rules, per thread from its
   first sample, released at thread exit; --heap=no keeps the peak as a
   peak (culling spares it) without a tree. */
static void
test_stacks(bool heap)
{
	struct fixture fx;
	const char *opts[] = { "--stacks=yes", heap ? NULL : "--heap=no",
			       NULL };
	fixture_init(&fx, opts, SNAP_EXTRA_ESTIMATE);
	feed_stack(&fx, 1, HT_EV_STACK, 1000);
	feed_stack(&fx, 1, HT_EV_STACK, 1500);
	feed_stack(&fx, 2, HT_EV_STACK, 200);
	feed_stack(&fx, 2, HT_EV_STACK, 600);
	feed_stack(&fx, 1, HT_EV_STACK, 1200);
	feed_stack(&fx, 2, HT_EV_THREAD_EXIT, 0);
	uint64_t t[] = { 0, 500, 900, 900, 1200, 1600 };
	check_series(&fx, heap ? "stacks" : "stacks heap=no", "EEEPEE", t,
		     NULL);
	uint64_t st[] = { 0, 500, 900, 900, 600, 200 };
	for (size_t i = 0; i < 6 && i < snap_engine_count(fx.eng); i++) {
		const struct snap_snapshot *s = snap_engine_snapshot(fx.eng, i);
		CHECK(s->stacks == st[i] && s->heap == 0,
		      "stacks: snapshot %zu stacks %llu, want %llu", i,
		      (unsigned long long)s->stacks,
		      (unsigned long long)st[i]);
		if (i == 3)
			CHECK(heap == (s->tree != NULL),
			      "stacks: the peak's tree with --heap=%s",
			      heap ? "yes" : "no");
	}
	fixture_fini(&fx);
}

/* The first frame of snapshot IDX's tree under its root, 0 when none. */
static uint64_t
first_kept(struct fixture *fx, size_t idx)
{
	const struct snap_snapshot *s = snap_engine_snapshot(fx->eng, idx);
	return s && s->n_tree > 1 ? s->tree[1].pc : 0;
}

/* --alloc-fn and --ignore-fn name Python functions (synthetic frames):
   the interpreter's C frames between the allocator and a Python frame
   do not hide it. Stack: malloc, g and f (CPython's C code), then
   mod.wrapper called by mod.caller, then main. */
static void
test_python_filter(void)
{
	uint64_t wrapper = synth_frame_intern("mod.wrapper", "mod.py", 3);
	uint64_t caller = synth_frame_intern("mod.caller", "mod.py", 9);
	uint64_t quiet = synth_frame_intern("mod.quiet", "mod.py", 14);
	struct fixture fx;
	const char *strip[] = { "--alloc-fn=mod.wrapper", "--detailed-freq=1",
				NULL };
	fixture_init(&fx, strip, SNAP_EXTRA_ESTIMATE);
	feed(&fx, HT_EV_ALLOC, HT_FN_MALLOC, fx.next_addr += 0x1000, 0, 800,
	     5, (uint64_t)PC_G, (uint64_t)PC_F, wrapper, caller,
	     (uint64_t)PC_MAIN_A);
	CHECK(first_kept(&fx, 1) == caller,
	      "--alloc-fn=mod.wrapper: tree starts at %#llx, want mod.caller",
	      (unsigned long long)first_kept(&fx, 1));
	/* not an alloc-fn: the C frames and the Python frame stay */
	feed(&fx, HT_EV_ALLOC, HT_FN_MALLOC, fx.next_addr += 0x1000, 0, 800,
	     3, (uint64_t)PC_G, caller, (uint64_t)PC_MAIN_A);
	CHECK(first_kept(&fx, 2) == PC_G,
	      "mod.caller's allocation: tree starts at %#llx, want g",
	      (unsigned long long)first_kept(&fx, 2));
	fixture_fini(&fx);

	const char *ignore[] = { "--ignore-fn=mod.quiet", "--detailed-freq=1",
				 NULL };
	fixture_init(&fx, ignore, SNAP_EXTRA_ESTIMATE);
	feed(&fx, HT_EV_ALLOC, HT_FN_MALLOC, fx.next_addr += 0x1000, 0, 800,
	     4, (uint64_t)PC_G, (uint64_t)PC_F, quiet, (uint64_t)PC_MAIN_A);
	CHECK(snap_engine_count(fx.eng) == 1,
	      "--ignore-fn=mod.quiet: its allocation was counted");
	/* only the innermost Python frame makes an allocation direct */
	feed(&fx, HT_EV_ALLOC, HT_FN_MALLOC, fx.next_addr += 0x1000, 0, 800,
	     4, (uint64_t)PC_G, caller, quiet, (uint64_t)PC_MAIN_A);
	CHECK(snap_engine_count(fx.eng) == 2,
	      "--ignore-fn=mod.quiet: mod.caller's allocation was ignored");
	fixture_fini(&fx);
	synth_frame_reset();
}

int
main(void)
{
	test_no_free_no_peak();
	test_detailed_freq();
	test_peak();
	test_peak_inaccuracy();
	test_culling();
	test_filter();
	test_python_filter();
	test_ignore_realloc(true);
	test_ignore_realloc(false);
	test_realloc_edges();
	test_clone();
	test_begin_interleaved(SNAP_EXTRA_ESTIMATE, 320);
	test_begin_interleaved(SNAP_EXTRA_GLIBC, 320);
	test_begin_interleaved(SNAP_EXTRA_GLIBC, 80);
	test_begin_free();
	test_begin_failed();
	test_begin_thread_exit();
	test_begin_nested_and_unknown();
	test_begin_clone();
	test_pages_exact();
	test_brk_exact();
	test_mremap_move(false);
	test_mremap_move(true);
	test_pages_double_count();
	test_stacks(true);
	test_stacks(false);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("all engine checks passed\n");
	return 0;
}
