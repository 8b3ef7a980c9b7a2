/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The snapshot engine: Massif's accounting and snapshot rules applied to a
   stream of allocation events.

   Overview. Every event updates three counters: useful heap (bytes asked
   for), extra heap (what the allocator spends beyond that, from an extra
   model) and, with --time-unit=B, the clock. After each event the engine
   *attempts* a normal snapshot: it is taken only when the clock has passed
   the earliest time allowed for the next one, and every --detailed-freq'th
   snapshot taken carries a copy of the allocation tree. Just before each
   deallocation the engine checks for a peak: if the total about to drop is
   larger than the last peak by more than --peak-inaccuracy percent, a peak
   snapshot (always detailed) is taken at the pre-deallocation values. A
   program that never frees therefore has no peak, as under Massif.

   When the array of --max-snapshots fills, half is culled (cull.c) and the
   minimum interval between snapshots grows to the smallest gap left, so the
   snapshot rate decays as the run gets longer and memory stays bounded by
   the array, the live blocks and the tree, never by the number of events.

   Reallocs from the inline event path come in two halves (common/event.h):
   REALLOC_BEGIN takes the block out of the address table into a per-thread
   pending slot, since the allocator may hand its address to another thread
   before the realloc's own record arrives, and the REALLOC applies Massif's
   realloc rules to that detached block. The result is the one the same
   events give serialized in Massif's order (the realloc where it completed),
   except that snapshots taken in between still count the old block.

   The engine sits on top of snapshot/: it owns the tree, the sites, the
   block and page tables and the stacks, and feeds the page-level calls and
   stack samples to the rules of pages.c and stacks.c, which count and
   attempt snapshots through the hooks it hands them (snap_priv.h). */
#include "snap_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/kvsort.h"
#include "common/synthframe.h"
#include "common/xalloc.h"

#define MAX_REQUEST 0x7fffffffffffffffULL

/* A realloc between its REALLOC_BEGIN and its REALLOC: the block, taken
   out of the address table so that its address can be handed to another
   thread meanwhile. */
struct pending_realloc {
	uint32_t tid;
	uint64_t old_addr;
	struct block blk; /* blk.addr 0: there was no block at OLD_ADDR */
};

struct snap_engine {
	const struct ht_options *opt;
	const struct ht_symbolizer *sym;
	struct snap_extra *extra_model;
	struct stack_filter filter;
	struct xtree tree;
	struct site_table sites;
	uint32_t sites_max;           /* thinned past this many sites */
	size_t tree_max;              /* the tree thinned past this many
					 nodes, */
	size_t tree_thin_at;          /* next when it has this many */

	struct block_table blocks;
	struct page_table pages;      /* --pages-as-heap */
	struct stack_table threads;   /* --stacks=yes */
	struct pending_realloc *pending; /* at most one per thread */
	size_t n_pending, cap_pending;

	uint64_t heap, extra, stacks; /* live counters */
	double calls_est;             /* the event being fed is a sampled
					 block standing for this many calls
					 (weighed); 0: exact */
	uint64_t true_size;           /* and the bytes it asked for */
	uint64_t last_alloc;          /* the block of the last allocator call
					 when it allocated one, else 0 */
	uint64_t btime;               /* bytes allocated + freed */
	uint64_t clock;               /* external clock (ms, i) */
	bool started;
	bool time_in_bytes;           /* --time-unit=B */

	struct snap_snapshot *snaps;  /* opt->max_snapshots slots */
	size_t n_snaps;
	uint64_t min_interval, earliest_next;
	unsigned since_detailed;
	uint64_t peak_total;
	uint64_t peak_limit;          /* a total above this is a new peak */
	uint64_t changes;             /* counter or tree changes so far */
	uint64_t changes_taken;       /* CHANGES at the last snapshot */

	struct snap_stats stats;
};

struct snap_engine *
snap_engine_new(const struct ht_options *opt, const struct ht_symbolizer *sym,
		struct snap_extra *extra)
{
	struct snap_engine *eng = ht_xcalloc(1, sizeof(*eng));
	eng->opt = opt;
	eng->sym = sym;
	eng->extra_model = extra;
	eng->time_in_bytes = opt->time_unit == HT_TIME_B;
	stack_filter_init(&eng->filter, opt, sym);
	xtree_init(&eng->tree);
	site_table_init(&eng->sites);
	snap_engine_set_sites_max(eng, SITES_MAX_DEFAULT);
	snap_engine_set_tree_max(eng, XTREE_MAX_DEFAULT);
	block_table_init(&eng->blocks);
	page_table_init(&eng->pages);
	eng->snaps = ht_xcalloc(opt->max_snapshots, sizeof(*eng->snaps));
	if (opt->pages_as_heap) {
		/* Massif records the start-up mappings, with snapshots,
		   before its start-up snapshot (§4.5, §6). */
		eng->started = true;
		eng->earliest_next = 0;
	} else {
		/* Nothing is taken before snap_engine_start(). */
		eng->earliest_next = UINT64_MAX;
	}
	return eng;
}

void
snap_engine_free(struct snap_engine *eng)
{
	if (!eng)
		return;
	for (size_t i = 0; i < eng->n_snaps; i++)
		snapshot_clear(&eng->snaps[i]);
	free(eng->snaps);
	free(eng->pending);
	block_table_fini(&eng->blocks);
	page_table_fini(&eng->pages);
	free(eng->threads.v);
	xtree_fini(&eng->tree);
	site_table_fini(&eng->sites);
	stack_filter_fini(&eng->filter);
	snap_extra_free(eng->extra_model);
	free(eng);
}

static void abandon_all_reallocs(struct snap_engine *eng);

struct snap_engine *
snap_engine_clone(const struct snap_engine *src)
{
	struct snap_engine *eng = ht_xmalloc(sizeof(*eng));
	*eng = *src;
	eng->extra_model = snap_extra_clone(src->extra_model);
	stack_filter_copy(&eng->filter, &src->filter);
	xtree_copy(&eng->tree, &src->tree);
	site_table_copy(&eng->sites, &src->sites);
	block_table_copy(&eng->blocks, &src->blocks);
	page_table_copy(&eng->pages, &src->pages);
	stack_table_copy(&eng->threads, &src->threads);
	eng->pending = ht_xmemdup_array(src->pending, src->n_pending,
					src->n_pending, sizeof(*src->pending));
	eng->cap_pending = src->n_pending;
	eng->snaps = ht_xcalloc(src->opt->max_snapshots, sizeof(*eng->snaps));
	for (size_t i = 0; i < src->n_snaps; i++) {
		eng->snaps[i] = src->snaps[i];
		eng->snaps[i].tree = src->snaps[i].tree
			? ht_xmemdup_array(src->snaps[i].tree, src->snaps[i].n_tree,
				    src->snaps[i].n_tree,
				    sizeof(*src->snaps[i].tree))
			: NULL;
	}
	/* Only the forking thread lives on in the child, and it was not in
	   a realloc: the other threads' reallocs never complete there. */
	abandon_all_reallocs(eng);
	return eng;
}

void
snap_engine_set_symbolizer(struct snap_engine *eng,
			   const struct ht_symbolizer *sym)
{
	eng->sym = sym;
	eng->filter.sym = sym;
}

/* ---- Clock and snapshots ---- */

static uint64_t
now(const struct snap_engine *eng)
{
	return eng->time_in_bytes ? eng->btime : eng->clock;
}

/* Fill S with ENG's state as a snapshot of KIND at TIME, ENG untouched
   but for its tree's kept totals (snap_engine_peek shares it). Returns
   true when a tree was rendered. */
static bool
snapshot_fill(struct snap_engine *eng, struct snap_snapshot *s,
	      enum snap_kind kind, uint64_t time)
{
	s->kind = kind;
	s->time = time;
	s->heap = eng->heap;
	s->extra = eng->extra;
	s->stacks = eng->stacks;
	s->tree = NULL;
	s->n_tree = 0;
	if (kind != SNAP_EMPTY && eng->opt->heap) {
		s->heap = xtree_render(&eng->tree, eng->extra, eng->stacks,
				       eng->opt->threshold, &s->tree,
				       &s->n_tree);
		return true;
	}
	if (kind == SNAP_DETAILED) {
		/* --heap=no keeps no tree, not even for the peak. */
		s->kind = SNAP_EMPTY;
	}
	/* A --heap=no peak stays a peak without a tree (written as an empty
	   one): culling must spare it, as Massif's does. */
	return false;
}

static void
snapshot_take(struct snap_engine *eng, struct snap_snapshot *s,
	      enum snap_kind kind, uint64_t time)
{
	if (snapshot_fill(eng, s, kind, time))
		eng->stats.detailed_taken++;
	eng->stats.snapshots_taken++;
}

/* The total a peak must exceed once the peak is TOTAL. Massif converts
   peak * inaccuracy / 100 to an unsigned word, which for a negative
   inaccuracy wraps, so the sum is done modulo 2^64 as in Massif. Computed
   when the peak changes rather than at every deallocation. */
static uint64_t
peak_limit(const struct snap_engine *eng, uint64_t total)
{
	double allowance = (double)total * eng->opt->peak_inaccuracy / 100.0;
	uint64_t excess = (uint64_t)(int64_t)allowance;
	return total + excess;
}

static void
demote_old_peaks(struct snap_engine *eng)
{
	for (size_t i = 0; i < eng->n_snaps; i++)
		if (eng->snaps[i].kind == SNAP_PEAK)
			eng->snaps[i].kind = eng->snaps[i].tree ?
				SNAP_DETAILED : SNAP_EMPTY;
}

static void
snapshot_store(struct snap_engine *eng, uint64_t time)
{
	eng->n_snaps++;
	if (eng->n_snaps == eng->opt->max_snapshots) {
		eng->min_interval = snapshots_cull(eng->snaps, &eng->n_snaps,
						   eng->opt->max_snapshots);
		eng->stats.cullings++;
	}
	eng->earliest_next = time + eng->min_interval;
}

static void
take(struct snap_engine *eng, enum snap_kind kind, uint64_t t)
{
	snapshot_take(eng, &eng->snaps[eng->n_snaps], kind, t);
	eng->changes_taken = eng->changes;
	eng->since_detailed = kind == SNAP_EMPTY ? eng->since_detailed + 1 : 0;
	snapshot_store(eng, t);
}

/* The normal snapshot attempt after every counted event. Most are
   refused by the interval, so that test comes first and alone; before
   the start, EARLIEST_NEXT is the largest time, which refuses them all. */
static inline void
attempt_normal(struct snap_engine *eng)
{
	uint64_t t = now(eng);
	if (t < eng->earliest_next)
		return;
	bool detailed = eng->since_detailed == eng->opt->detailed_freq - 1;
	take(eng, detailed ? SNAP_DETAILED : SNAP_EMPTY, t);
}

/* The peak check just before a deallocation. */
static void
attempt_peak(struct snap_engine *eng)
{
	uint64_t total = eng->heap + eng->extra + eng->stacks;
	if (!eng->started || total <= eng->peak_limit)
		return;
	demote_old_peaks(eng);
	eng->peak_total = total;
	eng->peak_limit = peak_limit(eng, total);
	eng->stats.peaks_taken++;
	site_table_peak(&eng->sites);
	take(eng, SNAP_PEAK, now(eng));
}


void
snap_engine_start(struct snap_engine *eng, uint64_t time)
{
	eng->clock = time;
	if (!eng->started) {
		/* With --pages-as-heap snapshots have started already and
		   the interval culling set stands. */
		eng->started = true;
		eng->earliest_next = 0;
	}
	attempt_normal(eng);
}

/* ---- Accounting ---- */

static void
account(struct snap_engine *eng, int64_t d_heap, int64_t d_extra)
{
	eng->heap += (uint64_t)d_heap;
	eng->extra += (uint64_t)d_extra;
	eng->changes++;
	int64_t d = d_heap + d_extra;
	eng->btime += (uint64_t)(d < 0 ? -d : d);
}

static void
charge(struct snap_engine *eng, uint32_t leaf, int64_t bytes)
{
	xtree_charge(&eng->tree, leaf, bytes);
	eng->changes++;
}

/* ---- The page and stack rules' calls back (snap_priv.h) ---- */

static void
hook_attempt_normal(void *ctx)
{
	attempt_normal(ctx);
}

static void
hook_attempt_peak(void *ctx)
{
	attempt_peak(ctx);
}

static void
hook_account_heap(void *ctx, uint32_t leaf, int64_t d)
{
	account(ctx, d, 0);
	charge(ctx, leaf, d);
}

static void
hook_account_stacks(void *ctx, int64_t d)
{
	struct snap_engine *eng = ctx;

	eng->stacks += (uint64_t)d;
	eng->btime += (uint64_t)(d < 0 ? -d : d);
	eng->changes++;
}

static uint32_t
hook_page_leaf(void *ctx, const struct ht_event *ev)
{
	struct snap_engine *eng = ctx;

	return stack_filter_leaf_whole(&eng->filter, &eng->tree, ev->pcs,
				       ev->npcs);
}

/* ENG as pages.c and stacks.c see it. Made per call rather than kept, so
   that a clone's calls reach the clone. */
static struct engine_hooks
hooks_of(struct snap_engine *eng)
{
	return (struct engine_hooks){
		.ctx = eng,
		.attempt_normal = hook_attempt_normal,
		.attempt_peak = hook_attempt_peak,
		.account_heap = hook_account_heap,
		.account_stacks = hook_account_stacks,
		.page_leaf = hook_page_leaf,
	};
}

/* The alignment Massif's allocator would use for FN's request: the
   memalign family's is raised to 16 and rounded up to a power of two, the
   page for valloc; 0 for everything else, which tells the model to apply
   --alignment. An explicit 16 is not 0: Valgrind serves it by its plain
   path even when --alignment is larger. */
static uint64_t
normalised_alignment(const struct ht_event *ev)
{
	uint64_t a;
	switch (ev->fn) {
	case HT_FN_VALLOC:
	case HT_FN_PVALLOC:
		return 4096;
	case HT_FN_MEMALIGN:
	case HT_FN_POSIX_MEMALIGN:
	case HT_FN_ALIGNED_ALLOC:
	case HT_FN_NEW_ALIGNED:
	case HT_FN_NEW_ARRAY_ALIGNED:
		a = ev->align < 16 ? 16 : ev->align;
		if (a & (a - 1)) {
			uint64_t p = 16;
			while (p < a && p < (1ULL << 62))
				p <<= 1;
			a = p;
		}
		return a;
	default:
		return 0;
	}
}

/* Calls Massif 3.19 never records: it does not replace pvalloc (a
   program calling it under Massif is aborted). glibc's reallocarray, by
   contrast, reaches realloc through the PLT, so Massif sees a realloc. */
static bool
invisible_to_massif(const struct snap_engine *eng, enum ht_alloc_fn fn)
{
	return eng->opt->massif_compat && fn == HT_FN_PVALLOC;
}

/* ---- Blocks ---- */

/* A sampled block's cookie: the blocks it stands for (weight / size) and
   its estimated extra bytes, each a float in one half, so that its free
   takes away exactly what its allocation added without a field more in
   every block of an exact profile. A float's 24 bits (6e-8 relatively)
   are far below any sampling error. */
static uint64_t
sampled_cookie(float blocks, float extra)
{
	uint32_t hi, lo;
	memcpy(&hi, &blocks, sizeof(hi));
	memcpy(&lo, &extra, sizeof(lo));
	return (uint64_t)hi << 32 | lo;
}

static float
cookie_half(uint64_t cookie, unsigned shift)
{
	uint32_t bits = (uint32_t)(cookie >> shift);
	float f;
	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* The blocks a block whose cookie is COOKIE stands for: itself in exact
   mode. */
static double
cookie_blocks(const struct snap_engine *eng, uint64_t cookie)
{
	return eng->opt->sampling_interval ? cookie_half(cookie, 32) : 1;
}

/* B as its extra-bytes model described it. */
static struct snap_extra_block
block_extra(const struct snap_engine *eng, const struct block *b)
{
	/* A sampled block keeps its estimated extra bytes themselves. */
	if (eng->opt->sampling_interval)
		return (struct snap_extra_block){
			.extra = (uint64_t)cookie_half(b->cookie, 0),
			.cookie = b->cookie,
		};
	return (struct snap_extra_block){
		.extra = snap_extra_of(eng->extra_model, b->req, b->cookie),
		.cookie = b->cookie,
	};
}

/* Massif's deallocation of B, already out of the address table. */
static void
release(struct snap_engine *eng, const struct block *b)
{
	struct snap_extra_block x = block_extra(eng, b);
	if (!eng->opt->sampling_interval)
		snap_extra_release(eng->extra_model, &x);
	eng->stats.frees++;
	eng->stats.live_blocks--;
	/* the peak is taken with the block still live at its site */
	if (b->leaf)
		attempt_peak(eng);
	site_table_release(&eng->sites, b->site, b->req,
			   cookie_blocks(eng, b->cookie));
	if (!b->leaf)
		return;
	account(eng, -(int64_t)b->req, -(int64_t)x.extra);
	charge(eng, b->leaf, -(int64_t)b->req);
	attempt_normal(eng);
}

/* False when no block was at ADDR. */
static bool
do_free(struct snap_engine *eng, uint64_t addr)
{
	struct block b;
	if (!block_table_take(&eng->blocks, addr, &b)) {
		eng->stats.unknown_frees++;
		return false;
	}
	release(eng, &b);
	return true;
}

/* Put B at its address, which a block the source saw no free for may
   still hold: that one is gone for sure, so it is freed first. */
static void
place(struct snap_engine *eng, const struct block *b)
{
	if (block_table_find(&eng->blocks, b->addr))
		do_free(eng, b->addr);
	block_table_insert(&eng->blocks, b);
}

/* Put back a detached block whose realloc did not happen. If its address
   was handed out meanwhile, the allocator did release it (a free we did
   not see, or a realloc that moved it and never reported), so it goes as
   a deallocation and the newer block stays. */
static void
reattach(struct snap_engine *eng, const struct block *b)
{
	if (block_table_find(&eng->blocks, b->addr))
		release(eng, b);
	else
		block_table_insert(&eng->blocks, b);
}

/* The extra bytes of the block EV allocates, by the model. A sampled
   block (weighed) stands for WEIGHT / SIZE blocks like it: its extra
   bytes are those of one such block as many times over, kept with that
   number in its cookie (sampled_cookie), the model's state left alone
   (its only state, glibc's mmap threshold, moves at frees of blocks it
   cannot see). */
static int
extra_alloc(struct snap_engine *eng, const struct ht_event *ev,
	    struct snap_extra_block *x)
{
	if (!eng->opt->sampling_interval)
		return snap_extra_alloc(eng->extra_model, ev->size,
					normalised_alignment(ev), ev->usable,
					x);
	/* An event without a weight (none is sent when sampling) stands
	   for itself. */
	uint64_t size = eng->calls_est ? eng->true_size : ev->size;
	double times = eng->calls_est ? eng->calls_est : 1;
	struct snap_extra_block one;
	if (snap_extra_alloc(eng->extra_model, size, normalised_alignment(ev),
			     ev->usable, &one) < 0)
		return -1;
	uint64_t extra = snap_extra_of(eng->extra_model, size, one.cookie);
	float scaled = (float)llround((double)extra * times);
	x->extra = (uint64_t)scaled;
	x->cookie = sampled_cookie((float)times, scaled);
	return 0;
}

/* A block of CPython's arena allocator: the synthetic frame that says
   what it is. pymalloc's arenas are 256 KiB (3.8, 3.9) or 1 MiB; the
   same allocator serves the interpreter's frame stack in chunks of
   16 KiB or more (3.11's _PyObject_VirtualAlloc, for pystate.c). */
static uint64_t
arena_frame(uint64_t size)
{
	if (size == 256 << 10 || size == 1 << 20)
		return synth_frame_intern("pymalloc arena", "obmalloc.c", 0);
	return synth_frame_intern("CPython data stack", "pystate.c", 0);
}

/* The stack of a block of CPython's arena allocator as sites and the
   tree take it, or NULL when EV is no such block: frame 0, the arena
   function's (stripped, so nameless), and its internal caller
   (pymalloc's allocate_from_new_pool, nameless too) become one synthetic
   frame that says what the block is. The tree drops it as it drops
   malloc's, so an arena goes to the code that needed a new pool; a site
   (report, top) shows it as its allocation function. Such blocks are
   few: the copy's cost does not show. */
static uint64_t *
arena_stack(const struct ht_event *ev)
{
	unsigned skip = ht_alloc_fn_internal_callers(ev->fn);
	if (!skip || ev->npcs <= skip + 1)
		return NULL;
	unsigned n = ev->npcs - skip;
	uint64_t *pcs = ht_xmalloc(n * sizeof(*pcs));
	pcs[0] = arena_frame(ev->size);
	memcpy(pcs + 1, ev->pcs + 1 + skip, (n - 1) * sizeof(*pcs));
	return pcs;
}

static void
do_alloc(struct snap_engine *eng, const struct ht_event *ev)
{
	if (ev->size > MAX_REQUEST)
		return;
	if (block_table_find(&eng->blocks, ev->addr)) {
		/* The source missed a free; the old block is gone for sure.
		   Freed before the model allocates, which may reuse it. */
		do_free(eng, ev->addr);
	}
	struct block b = { .addr = ev->addr, .req = ev->size };
	struct snap_extra_block x;
	if (extra_alloc(eng, ev, &x) < 0)
		return;
	b.cookie = x.cookie;
	uint64_t *arena = arena_stack(ev);
	b.leaf = stack_filter_leaf(
		&eng->filter, &eng->tree, &eng->sites, arena ? arena : ev->pcs,
		arena ? ev->npcs - ht_alloc_fn_internal_callers(ev->fn)
		      : ev->npcs,
		&b.site);
	free(arena);
	/* Ignored (leaf 0): the block is remembered so that its free and
	   reallocs are recognised, but it counts nowhere. */
	block_table_insert(&eng->blocks, &b);
	site_table_alloc(&eng->sites, b.site, ev->size,
			 cookie_blocks(eng, b.cookie));
	/* A block recorded whole in a sampled profile (pymalloc's arenas)
	   is one call. */
	site_table_estimate(&eng->sites, b.site,
			    eng->calls_est || !eng->opt->sampling_interval
				    ? eng->calls_est
				    : 1);
	eng->stats.allocs++;
	eng->stats.live_blocks++;
	eng->stats.usage_allocs++;
	eng->stats.usage_bytes += ev->size;
	if (!b.leaf) {
		eng->stats.ignored++;
		return;
	}
	charge(eng, b.leaf, (int64_t)ev->size);
	account(eng, (int64_t)ev->size, (int64_t)x.extra);
	attempt_normal(eng);
}

/* ---- Realloc ---- */

/* A realloc involving --ignore-fn. Massif (checked against 3.19): when
   the block's allocation was ignored, or the realloc itself is made from an
   ignored function, no counter changes and no snapshot is attempted, and
   the block is ignored from then on; yet a realloc from a counted stack adds
   the new size to that stack's tree entry, never to be taken away, and a
   counted block that becomes ignored leaves its old size in its old entry
   and in the counters (semantics §5.4). With --massif-compat=no the tree
   and counters stay consistent instead: an ignored block stays out of
   both, and a counted block reallocated from an ignored function leaves
   them as if freed. LEAF is the realloc's own tree node (0: ignored);
   OLD_EXTRA the block's extra bytes before the call. */
static void
realloc_ignored(struct snap_engine *eng, struct block *b,
		const struct ht_event *ev, uint32_t leaf, uint64_t old_extra)
{
	bool was_counted = b->leaf != 0;
	if (eng->opt->massif_compat) {
		if (leaf && !was_counted)
			charge(eng, leaf, (int64_t)ev->size);
	} else if (was_counted) {
		charge(eng, b->leaf, -(int64_t)b->req);
		account(eng, -(int64_t)b->req, -(int64_t)old_extra);
		attempt_normal(eng);
	}
	b->leaf = 0;
	b->req = ev->size;
}

/* Massif's realloc rules (§2.4) applied to B, out of the address table,
   which ends up at the event's new address. */
static void
realloc_block(struct snap_engine *eng, struct block *b,
	      const struct ht_event *ev)
{
	eng->stats.reallocs++;
	struct snap_extra_block x = block_extra(eng, b);
	uint64_t old_req = b->req, old_extra = x.extra;
	if (b->leaf && ev->size < old_req)
		attempt_peak(eng);
	if ((eng->opt->sampling_interval ? extra_alloc(eng, ev, &x)
					 : snap_extra_realloc(eng->extra_model, &x,
							      old_req, ev->size,
							      ev->usable)) < 0) {
		reattach(eng, b);
		return;
	}
	/* An ignored block's realloc only needs its stack under Massif's
	   quirk; skipping it otherwise also keeps the tree free of nodes
	   Massif would not have. */
	uint32_t leaf = 0, site = 0;
	if (b->leaf || eng->opt->massif_compat)
		leaf = stack_filter_leaf(&eng->filter, &eng->tree, &eng->sites,
					 ev->pcs, ev->npcs, &site);
	else
		site = site_table_intern(&eng->sites, ev->pcs, ev->npcs);
	/* memcheck: the block now belongs to the realloc's stack. */
	site_table_release(&eng->sites, b->site, old_req,
			   cookie_blocks(eng, b->cookie));
	site_table_alloc(&eng->sites, site, ev->size,
			 cookie_blocks(eng, x.cookie));
	site_table_estimate(&eng->sites, site, eng->calls_est);
	b->site = site;
	eng->stats.usage_allocs++;
	eng->stats.usage_frees++;
	eng->stats.usage_bytes += ev->size;
	if (!b->leaf || !leaf) {
		realloc_ignored(eng, b, ev, leaf, old_extra);
	} else {
		charge(eng, b->leaf, -(int64_t)old_req);
		b->leaf = leaf;
		charge(eng, b->leaf, (int64_t)ev->size);
		b->req = ev->size;
		account(eng, (int64_t)ev->size - (int64_t)old_req,
			(int64_t)x.extra - (int64_t)old_extra);
	}
	b->cookie = x.cookie;
	b->addr = ev->addr;
	place(eng, b);
	if (b->leaf)
		attempt_normal(eng);
}

/* The pending realloc of TID, or NULL. Threads inside realloc at once are
   few, so a linear search beats any index. */
static struct pending_realloc *
pending_of(struct snap_engine *eng, uint32_t tid)
{
	for (size_t i = 0; i < eng->n_pending; i++)
		if (eng->pending[i].tid == tid)
			return &eng->pending[i];
	return NULL;
}

static void
pending_drop(struct snap_engine *eng, struct pending_realloc *p)
{
	*p = eng->pending[--eng->n_pending];
}

/* A realloc whose REALLOC will never come: its block goes back to its
   address, as if the call had failed. The realloc may in truth have moved
   the block; then the old address is reused later (and the block freed as
   by a missed free) or the block stays counted, like any block whose free
   was not seen. */
static void
abandon(struct snap_engine *eng, const struct pending_realloc *p)
{
	eng->stats.reallocs_abandoned++;
	if (p->blk.addr)
		reattach(eng, &p->blk);
}

static void
abandon_all_reallocs(struct snap_engine *eng)
{
	while (eng->n_pending) {
		struct pending_realloc p = eng->pending[--eng->n_pending];
		abandon(eng, &p);
	}
}

/* One realloc per thread is in flight: a thread's new BEGIN means its
   previous realloc will not complete (the thread died and its id was
   reused, or a signal handler reallocs inside realloc; the outer REALLOC
   then finds its block back in the table). */
static void
do_realloc_begin(struct snap_engine *eng, const struct ht_event *ev)
{
	if (!ev->old_addr)
		return; /* realloc(NULL, n) is a malloc; nothing to detach */
	struct pending_realloc *p = pending_of(eng, ev->tid);
	if (p) {
		struct pending_realloc old = *p;
		pending_drop(eng, p);
		abandon(eng, &old);
	}
	ht_xgrow((void **)&eng->pending, &eng->cap_pending,
		 eng->n_pending + 1, sizeof(*eng->pending));
	p = &eng->pending[eng->n_pending++];
	p->tid = ev->tid;
	p->old_addr = ev->old_addr;
	p->blk.addr = 0;
	block_table_take(&eng->blocks, ev->old_addr, &p->blk);
}

/* The block of the realloc EV completes: the one detached by its BEGIN,
   else (no BEGIN: the ptrace backend) the one at its old address. Taken
   out of the table; B->addr is 0 when there is none. */
static void
realloc_source(struct snap_engine *eng, const struct ht_event *ev,
	       struct block *b)
{
	b->addr = 0;
	if (eng->n_pending) {
		struct pending_realloc *p = pending_of(eng, ev->tid);
		if (p && p->old_addr == ev->old_addr) {
			*b = p->blk;
			pending_drop(eng, p);
			return;
		}
	}
	block_table_take(&eng->blocks, ev->old_addr, b);
}

static void
do_realloc(struct snap_engine *eng, const struct ht_event *ev)
{
	if (ev->old_addr == 0) {
		do_alloc(eng, ev);
		return;
	}
	struct block b;
	realloc_source(eng, ev, &b);
	if (!b.addr) {
		/* A block from before we were watching: under Massif the call
		   fails; natively the new block is real, so count it. */
		eng->stats.unknown_frees++;
		if (!eng->opt->massif_compat && ev->addr)
			do_alloc(eng, ev);
		return;
	}
	if (ev->addr == 0 && ev->size == 0) {
		eng->stats.usage_frees++;
		release(eng, &b); /* realloc(p, 0): a free */
	}
	else if (ev->addr == 0 || ev->size > MAX_REQUEST)
		reattach(eng, &b); /* failed: the block is unchanged */
	else
		realloc_block(eng, &b, ev);
}

/* ---- Page-level calls, stack samples, thread ends ---- */

static void
do_pages(struct snap_engine *eng, const struct ht_event *ev)
{
	const struct engine_hooks h = hooks_of(eng);

	pages_feed(&eng->pages, eng->opt->massif_compat, ev, &h);
}

static void
do_stack_sample(struct snap_engine *eng, const struct ht_event *ev)
{
	const struct engine_hooks h = hooks_of(eng);

	stacks_sample(&eng->threads, ev->tid, ev->size, eng->started, &h);
}

static void
do_thread_exit(struct snap_engine *eng, uint32_t tid)
{
	if (eng->opt->stacks) {
		const struct engine_hooks h = hooks_of(eng);

		stacks_thread_exit(&eng->threads, tid, &h);
	}
	struct pending_realloc *p = pending_of(eng, tid);
	if (!p)
		return;
	struct pending_realloc old = *p;
	pending_drop(eng, p);
	abandon(eng, &old);
}

/* Which events count in this session: allocator calls with --heap=yes
   (Massif replaces no allocator under --pages-as-heap, so they do not
   count then), page-level calls only with --pages-as-heap, stack samples
   only with --stacks=yes. Thread ends always (they settle reallocs and
   release stacks). */
static bool
event_counts(const struct snap_engine *eng, const struct ht_event *ev)
{
	switch (ev->kind) {
	case HT_EV_ALLOC:
	case HT_EV_FREE:
	case HT_EV_REALLOC_BEGIN:
	case HT_EV_REALLOC:
		return eng->opt->heap && !eng->opt->pages_as_heap &&
		       !invisible_to_massif(eng, ev->fn);
	case HT_EV_THREAD_EXIT:
		return true;
	case HT_EV_MMAP:
	case HT_EV_MUNMAP:
	case HT_EV_MREMAP:
	case HT_EV_BRK:
		return eng->opt->pages_as_heap;
	case HT_EV_STACK:
		return eng->opt->stacks;
	}
	return false;
}

/* heaptrack's temporary allocation: freed by the very next allocator call
   the process makes after its own. */
static void
note_temporary(struct snap_engine *eng, const struct ht_event *ev)
{
	if (ev->kind != HT_EV_ALLOC && ev->kind != HT_EV_FREE &&
	    ev->kind != HT_EV_REALLOC)
		return;
	if (ev->kind == HT_EV_FREE && ev->addr && ev->addr == eng->last_alloc) {
		const struct block *b = block_table_find(&eng->blocks, ev->addr);
		if (b)
			site_table_temporary(&eng->sites, b->site,
					     cookie_blocks(eng, b->cookie));
	}
	eng->last_alloc = ev->kind == HT_EV_FREE ? 0 : ev->addr;
}

/* Too many sites: the least significant go (sites.c, "Thinning"), and
   every site id held is renumbered: blocks', blocks in a realloc's, the
   memo's (forgotten). Between two events, where no id is in flight. */
static void
thin_sites(struct snap_engine *eng)
{
	uint32_t *remap = site_table_thin(&eng->sites, eng->sites_max / 2);
	if (!remap)
		return;
	block_table_remap_sites(&eng->blocks, remap);
	for (size_t i = 0; i < eng->n_pending; i++)
		if (eng->pending[i].blk.addr)
			eng->pending[i].blk.site = remap[eng->pending[i].blk.site];
	stack_filter_forget(&eng->filter);
	free(remap);
}

/* Too large a tree: its empty subtrees go (xtree.c, "Thinning"), and
   every leaf held is renumbered: blocks', blocks in a realloc's, the
   memo's (forgotten). Not with --pages-as-heap, whose page table holds
   leaves too. Between two events. */
static void
thin_tree(struct snap_engine *eng)
{
	if (eng->opt->pages_as_heap) {
		eng->tree_thin_at = SIZE_MAX;
		return;
	}
	bool *keep = ht_xcalloc(eng->tree.n_nodes, sizeof(*keep));
	block_table_mark_leaves(&eng->blocks, keep);
	for (size_t i = 0; i < eng->n_pending; i++)
		if (eng->pending[i].blk.addr)
			keep[eng->pending[i].blk.leaf] = true;
	uint32_t *remap = xtree_thin(&eng->tree, keep);
	free(keep);
	block_table_remap_leaves(&eng->blocks, remap);
	for (size_t i = 0; i < eng->n_pending; i++)
		if (eng->pending[i].blk.addr)
			eng->pending[i].blk.leaf = remap[eng->pending[i].blk.leaf];
	stack_filter_forget(&eng->filter);
	free(remap);
	/* what holds bytes stays: the next attempt once as many again are
	   new as half the maximum */
	eng->tree_thin_at = eng->tree.n_nodes + eng->tree_max / 2;
	if (eng->tree_thin_at < eng->tree_max)
		eng->tree_thin_at = eng->tree_max;
}

void
snap_engine_set_tree_max(struct snap_engine *eng, size_t max)
{
	eng->tree_max = max < 2 ? 2 : max;
	eng->tree_thin_at = eng->tree_max;
}

void
snap_engine_set_sites_max(struct snap_engine *eng, uint32_t max)
{
	eng->sites_max = max < 2 ? 2 : max;
	eng->sites.thin_at = eng->sites_max;
}

/* A sampled block (--sampling-interval) enters as the bytes it stands
   for, and the calls it stands for (WEIGHT / SIZE) are kept apart, so
   that every figure is the estimate; its extra bytes are scaled the same
   way (extra_alloc). */
static const struct ht_event *
weighed(struct snap_engine *eng, const struct ht_event *ev,
	struct ht_event *w)
{
	eng->calls_est = 0;
	if (!ev->weight || (ev->kind != HT_EV_ALLOC &&
			    ev->kind != HT_EV_REALLOC))
		return ev;
	*w = *ev;
	w->size = ev->weight;
	eng->true_size = ev->size;
	eng->calls_est = ev->size ? (double)ev->weight / (double)ev->size : 1;
	return w;
}

void
snap_engine_feed(struct snap_engine *eng, const struct ht_event *in)
{
	eng->stats.events++;
	struct ht_event w;
	const struct ht_event *ev = weighed(eng, in, &w);
	if (!event_counts(eng, ev))
		return;
	if (eng->sites.n_sites > eng->sites.thin_at)
		thin_sites(eng);
	if (eng->tree.n_nodes > eng->tree_thin_at)
		thin_tree(eng);
	if (ev->time > eng->clock)
		eng->clock = ev->time;
	note_temporary(eng, ev);
	switch (ev->kind) {
	case HT_EV_ALLOC:
		do_alloc(eng, ev);
		break;
	case HT_EV_FREE:
		if (do_free(eng, ev->addr))
			eng->stats.usage_frees++;
		break;
	case HT_EV_REALLOC_BEGIN:
		do_realloc_begin(eng, ev);
		break;
	case HT_EV_REALLOC:
		do_realloc(eng, ev);
		break;
	case HT_EV_THREAD_EXIT:
		do_thread_exit(eng, ev->tid);
		break;
	case HT_EV_MMAP:
	case HT_EV_MUNMAP:
	case HT_EV_MREMAP:
	case HT_EV_BRK:
		do_pages(eng, ev);
		break;
	case HT_EV_STACK:
		do_stack_sample(eng, ev);
		break;
	}
}

void
snap_engine_finish(struct snap_engine *eng, uint64_t time)
{
	/* Massif's snapshots are taken by its interval rule only, so the
	   calls made after the last one are in none: a program killed after
	   a burst of allocations would seem to have held less than it did. */
	if (!eng->started || eng->changes == eng->changes_taken)
		return;
	if (time > eng->clock)
		eng->clock = time;
	take(eng, SNAP_DETAILED, now(eng));
}

/* ---- Results ---- */

void
snap_engine_peek(const struct snap_engine *eng, uint64_t time,
		 struct snap_snapshot *out)
{
	uint64_t t = eng->clock > time ? eng->clock : time;
	/* Rendering updates the tree's kept totals, a cache: nothing the
	   engine reports changes, so ENG stays const to callers. */
	snapshot_fill((struct snap_engine *)eng, out, SNAP_DETAILED,
		      eng->time_in_bytes ? eng->btime : t);
}

void
snap_snapshot_fini(struct snap_snapshot *s)
{
	snapshot_clear(s);
}

size_t
snap_engine_count(const struct snap_engine *eng)
{
	return eng->n_snaps;
}

const struct snap_snapshot *
snap_engine_snapshot(const struct snap_engine *eng, size_t i)
{
	return i < eng->n_snaps ? &eng->snaps[i] : NULL;
}

long
snap_engine_peak_index(const struct snap_engine *eng)
{
	for (size_t i = 0; i < eng->n_snaps; i++)
		if (eng->snaps[i].kind == SNAP_PEAK)
			return (long)i;
	return -1;
}

struct snap_stats
snap_engine_stats(const struct snap_engine *eng)
{
	struct snap_stats s = eng->stats;
	s.tree_nodes = eng->tree.n_nodes;
	return s;
}

uint64_t
snap_engine_heap(const struct snap_engine *eng)
{
	return eng->heap;
}

/* ---- Live blocks (the leak check) ---- */

static void
live_push(const struct snap_engine *eng, struct snap_live_block *v,
	  struct ht_kv *order, size_t *n, const struct block *b)
{
	v[*n] = (struct snap_live_block){
		.addr = b->addr, .size = b->req, .site = b->site,
	};
	order[*n] = (struct ht_kv){
		.key = site_table_age(&eng->sites, b->site), .val = *n,
	};
	(*n)++;
}

size_t
snap_engine_live_blocks(const struct snap_engine *eng,
			struct snap_live_block **out)
{
	size_t cap = eng->blocks.count + eng->n_pending, n = 0;
	*out = NULL;
	if (!cap)
		return 0;
	struct snap_live_block *v = ht_xcalloc(cap, sizeof(*v));
	struct ht_kv *order = ht_xcalloc(cap, sizeof(*order));
	for (size_t i = 0; i <= eng->blocks.mask; i++)
		if (eng->blocks.slots[i].addr)
			live_push(eng, v, order, &n, &eng->blocks.slots[i]);
	for (size_t i = 0; i < eng->n_pending; i++)
		if (eng->pending[i].blk.addr)
			live_push(eng, v, order, &n, &eng->pending[i].blk);
	ht_kv_sort(order, n);
	struct snap_live_block *res = ht_xcalloc(n ? n : 1, sizeof(*res));
	for (size_t i = 0; i < n; i++)
		res[i] = v[order[i].val];
	free(order);
	free(v);
	*out = res;
	return n;
}

unsigned
snap_engine_site_frames(const struct snap_engine *eng, uint32_t site,
			uint64_t *out, unsigned max)
{
	return site_table_frames(&eng->sites, site, out, max);
}

/* A count of a site's figures: EXACT itself in an exact profile; in a
   sampled one EST, the count the sampled blocks stand for, rounded (the
   .sites file and its readers take whole numbers). */
static uint64_t
site_count(const struct snap_engine *eng, uint64_t exact, double est)
{
	if (!eng->opt->sampling_interval)
		return exact;
	return est > 0 ? (uint64_t)llround(est) : 0;
}

struct snap_site
snap_engine_sites_thinned(const struct snap_engine *eng, uint64_t *n_sites)
{
	const struct site_thinned *th = &eng->sites.thinned;
	*n_sites = th->sites;
	struct snap_site v = {
		.calls = eng->opt->sampling_interval
				 ? (uint64_t)llround(th->calls_est)
				 : th->calls,
		.allocated = th->allocated,
		.temporary = site_count(eng, th->temporary, th->temporary_est),
	};
	uint64_t blocks;
	double est;
	v.peak = site_table_thinned_peak(&eng->sites, &blocks, &est);
	v.peak_blocks = site_count(eng, blocks, est);
	return v;
}

size_t
snap_engine_sites(const struct snap_engine *eng, struct snap_site **out)
{
	const struct site_table *st = &eng->sites;
	struct snap_site *v = ht_xcalloc(st->n_sites + 1, sizeof(*v));
	size_t n = 0;
	for (uint32_t age = 1; age <= st->n_sites; age++) {
		const struct site_stats *s = &st->stats[age];
		if (!s->calls)
			continue;
		double peak_est;
		uint64_t peak_blocks = site_table_peak_blocks(st, s, &peak_est);
		v[n++] = (struct snap_site){
			.site = s->node,
			.calls = eng->opt->sampling_interval
					 ? (uint64_t)llround(s->calls_est)
					 : s->calls,
			.allocated = s->allocated,
			.peak = site_table_peak_bytes(st, s),
			.peak_blocks = site_count(eng, peak_blocks, peak_est),
			.leaked = s->live,
			.leaked_blocks = site_count(eng, s->live_blocks,
						    s->live_blocks_est),
			.temporary = site_count(eng, s->temporary,
						s->temporary_est),
		};
	}
	*out = v;
	return n;
}
