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
   the array, the live blocks and the tree, never by the number of events. */
#include "snap_priv.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define MAX_REQUEST 0x7fffffffffffffffULL

enum attempt { ATTEMPT_NORMAL, ATTEMPT_PEAK };

struct snap_engine *
snap_engine_new(const struct ht_options *opt, const struct ht_symbolizer *sym,
		struct snap_extra *extra)
{
	struct snap_engine *eng = ht_xcalloc(1, sizeof(*eng));
	eng->opt = opt;
	eng->sym = sym;
	eng->extra_model = extra;
	stack_filter_init(&eng->filter, opt, sym);
	xtree_init(&eng->tree);
	u64map_init(&eng->block_index);
	eng->snaps = ht_xcalloc(opt->max_snapshots, sizeof(*eng->snaps));
	eng->path = ht_xcalloc(opt->depth, sizeof(*eng->path));
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
	free(eng->path);
	free(eng->blocks);
	free(eng->free_slots);
	u64map_fini(&eng->block_index);
	xtree_fini(&eng->tree);
	stack_filter_fini(&eng->filter);
	snap_extra_free(eng->extra_model);
	free(eng);
}

struct snap_engine *
snap_engine_clone(const struct snap_engine *src)
{
	struct snap_engine *eng = ht_xmalloc(sizeof(*eng));
	*eng = *src;
	eng->extra_model = snap_extra_clone(src->extra_model);
	stack_filter_copy(&eng->filter, &src->filter);
	xtree_copy(&eng->tree, &src->tree);
	u64map_copy(&eng->block_index, &src->block_index);
	eng->blocks = ht_xmemdup_array(src->blocks, src->n_blocks, src->cap_blocks,
				sizeof(*src->blocks));
	eng->free_slots = ht_xmemdup_array(src->free_slots, src->n_free_slots,
				    src->cap_free_slots,
				    sizeof(*src->free_slots));
	eng->snaps = ht_xcalloc(src->opt->max_snapshots, sizeof(*eng->snaps));
	for (size_t i = 0; i < src->n_snaps; i++) {
		eng->snaps[i] = src->snaps[i];
		eng->snaps[i].tree = src->snaps[i].tree
			? ht_xmemdup_array(src->snaps[i].tree, src->snaps[i].n_tree,
				    src->snaps[i].n_tree,
				    sizeof(*src->snaps[i].tree))
			: NULL;
	}
	eng->path = ht_xcalloc(src->opt->depth, sizeof(*eng->path));
	return eng;
}

void
snap_engine_set_symbolizer(struct snap_engine *eng,
			   const struct ht_symbolizer *sym)
{
	eng->sym = sym;
	eng->filter.sym = sym;
}

/* ---- Block table ---- */

static struct block *
block_find(struct snap_engine *eng, uint64_t addr, uint32_t *slot)
{
	uint64_t *v = u64map_get(&eng->block_index, addr);
	if (!v)
		return NULL;
	*slot = (uint32_t)*v;
	return &eng->blocks[*slot];
}

static struct block *
block_add(struct snap_engine *eng, uint64_t addr)
{
	uint32_t slot;
	if (eng->n_free_slots) {
		slot = eng->free_slots[--eng->n_free_slots];
	} else {
		ht_xgrow((void **)&eng->blocks, &eng->cap_blocks,
			 eng->n_blocks + 1, sizeof(*eng->blocks));
		slot = (uint32_t)eng->n_blocks++;
	}
	u64map_put(&eng->block_index, addr, slot);
	eng->stats.live_blocks++;
	struct block *b = &eng->blocks[slot];
	memset(b, 0, sizeof(*b));
	return b;
}

static void
block_remove(struct snap_engine *eng, uint64_t addr, uint32_t slot)
{
	u64map_remove(&eng->block_index, addr, NULL);
	ht_xgrow((void **)&eng->free_slots, &eng->cap_free_slots,
		 eng->n_free_slots + 1, sizeof(*eng->free_slots));
	eng->free_slots[eng->n_free_slots++] = slot;
	eng->stats.live_blocks--;
}

/* ---- Clock and snapshots ---- */

static uint64_t
now(const struct snap_engine *eng)
{
	return eng->opt->time_unit == HT_TIME_B ? eng->btime : eng->clock;
}

static void
snapshot_take(struct snap_engine *eng, struct snap_snapshot *s,
	      enum snap_kind kind, uint64_t time)
{
	s->kind = kind;
	s->time = time;
	s->heap = eng->heap;
	s->extra = eng->extra;
	s->stacks = eng->stacks;
	if (kind != SNAP_EMPTY && eng->opt->heap) {
		s->heap = xtree_render(&eng->tree, eng->extra, eng->stacks,
				       eng->opt->threshold, &s->tree,
				       &s->n_tree);
		eng->stats.detailed_taken++;
	} else if (kind != SNAP_EMPTY) {
		/* --heap=no keeps no tree, not even for the peak. */
		s->kind = SNAP_EMPTY;
	}
	eng->stats.snapshots_taken++;
}

/* The peak allowance: Massif converts peak * inaccuracy / 100 to an
   unsigned word, which for a negative inaccuracy wraps, so the sum below is
   done modulo 2^64 as in Massif. */
static bool
beats_peak(const struct snap_engine *eng, uint64_t total)
{
	double allowance = (double)eng->peak_total *
			   eng->opt->peak_inaccuracy / 100.0;
	uint64_t excess = (uint64_t)(int64_t)allowance;
	return total > eng->peak_total + excess;
}

static void
demote_old_peaks(struct snap_engine *eng)
{
	for (size_t i = 0; i < eng->n_snaps; i++)
		if (eng->snaps[i].kind == SNAP_PEAK)
			eng->snaps[i].kind = SNAP_DETAILED;
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
attempt(struct snap_engine *eng, enum attempt kind)
{
	if (!eng->started)
		return;
	uint64_t t = now(eng);
	enum snap_kind taken;
	if (kind == ATTEMPT_NORMAL) {
		if (t < eng->earliest_next)
			return;
		bool detailed = eng->since_detailed ==
				eng->opt->detailed_freq - 1;
		taken = detailed ? SNAP_DETAILED : SNAP_EMPTY;
	} else {
		uint64_t total = eng->heap + eng->extra + eng->stacks;
		if (!beats_peak(eng, total))
			return;
		demote_old_peaks(eng);
		eng->peak_total = total;
		eng->stats.peaks_taken++;
		taken = SNAP_PEAK;
	}
	struct snap_snapshot *s = &eng->snaps[eng->n_snaps];
	snapshot_take(eng, s, taken, t);
	eng->since_detailed = taken == SNAP_EMPTY ? eng->since_detailed + 1 : 0;
	snapshot_store(eng, t);
}

void
snap_engine_start(struct snap_engine *eng, uint64_t time)
{
	eng->clock = time;
	eng->started = true;
	attempt(eng, ATTEMPT_NORMAL);
}

/* ---- Accounting ---- */

static void
account(struct snap_engine *eng, int64_t d_heap, int64_t d_extra)
{
	eng->heap += (uint64_t)d_heap;
	eng->extra += (uint64_t)d_extra;
	int64_t d = d_heap + d_extra;
	eng->btime += (uint64_t)(d < 0 ? -d : d);
}

static void
charge(struct snap_engine *eng, uint32_t leaf, int64_t bytes)
{
	eng->tree.nodes[leaf].self += bytes;
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

static void do_free(struct snap_engine *eng, uint64_t addr);

static void
do_alloc(struct snap_engine *eng, const struct ht_event *ev)
{
	if (ev->size > MAX_REQUEST)
		return;
	uint32_t slot;
	if (block_find(eng, ev->addr, &slot)) {
		/* The source missed a free; the old block is gone for sure. */
		do_free(eng, ev->addr);
	}
	struct snap_extra_block x;
	if (snap_extra_alloc(eng->extra_model, ev->size,
			     normalised_alignment(ev), ev->usable, &x) < 0)
		return;
	unsigned n = stack_filter_apply(&eng->filter, ev->pcs, ev->npcs, true,
					eng->path);
	struct block *b = block_add(eng, ev->addr);
	b->req = ev->size;
	b->x = x;
	eng->stats.allocs++;
	if (!n) {
		/* Ignored: the block is remembered so that its free and
		   reallocs are recognised, but it counts nowhere. */
		b->ignored = true;
		eng->stats.ignored++;
		return;
	}
	b->leaf = xtree_insert(&eng->tree, eng->path, n);
	charge(eng, b->leaf, (int64_t)ev->size);
	account(eng, (int64_t)ev->size, (int64_t)x.extra);
	attempt(eng, ATTEMPT_NORMAL);
}

static void
do_free(struct snap_engine *eng, uint64_t addr)
{
	uint32_t slot;
	struct block *b = block_find(eng, addr, &slot);
	if (!b) {
		eng->stats.unknown_frees++;
		return;
	}
	struct block blk = *b;
	block_remove(eng, addr, slot);
	snap_extra_release(eng->extra_model, &blk.x);
	eng->stats.frees++;
	if (blk.ignored)
		return;
	attempt(eng, ATTEMPT_PEAK);
	account(eng, -(int64_t)blk.req, -(int64_t)blk.x.extra);
	charge(eng, blk.leaf, -(int64_t)blk.req);
	attempt(eng, ATTEMPT_NORMAL);
}

/* A realloc involving --ignore-fn. Massif (checked against 3.19): when
   the block's allocation was ignored, or the realloc itself is made from an
   ignored function, no counter changes and no snapshot is attempted, and
   the block is ignored from then on; yet a realloc from a counted stack adds
   the new size to that stack's tree entry, never to be taken away, and a
   counted block that becomes ignored leaves its old size in its old entry
   and in the counters (semantics §5.4). With --massif-compat=no the tree
   and counters stay consistent instead: an ignored block stays out of
   both, and a counted block reallocated from an ignored function leaves
   them as if freed. N frames of the realloc's own path are in eng->path. */
static void
realloc_ignored(struct snap_engine *eng, struct block *b,
		const struct ht_event *ev, unsigned n)
{
	bool was_counted = !b->ignored;
	b->ignored = true;
	if (eng->opt->massif_compat) {
		if (n && !was_counted)
			charge(eng, xtree_insert(&eng->tree, eng->path, n),
			       (int64_t)ev->size);
	} else if (was_counted) {
		charge(eng, b->leaf, -(int64_t)b->req);
		account(eng, -(int64_t)b->req, -(int64_t)b->x.extra);
		attempt(eng, ATTEMPT_NORMAL);
	}
	b->leaf = 0;
	b->req = ev->size;
}

static void
rekey_block(struct snap_engine *eng, uint64_t old_addr, uint64_t new_addr,
	    uint32_t slot)
{
	if (old_addr == new_addr)
		return;
	u64map_remove(&eng->block_index, old_addr, NULL);
	uint32_t other;
	if (block_find(eng, new_addr, &other))
		do_free(eng, new_addr); /* a missed free, as in do_alloc */
	u64map_put(&eng->block_index, new_addr, slot);
}

static void
do_realloc(struct snap_engine *eng, const struct ht_event *ev)
{
	if (ev->old_addr == 0) {
		do_alloc(eng, ev);
		return;
	}
	if (ev->size == 0 && ev->addr == 0) {
		do_free(eng, ev->old_addr);
		return;
	}
	uint32_t slot;
	struct block *b = block_find(eng, ev->old_addr, &slot);
	if (!b) {
		/* A block from before we were watching: under Massif the call
		   fails; natively the new block is real, so count it. */
		eng->stats.unknown_frees++;
		if (!eng->opt->massif_compat && ev->addr)
			do_alloc(eng, ev);
		return;
	}
	if (ev->size > MAX_REQUEST)
		return;
	eng->stats.reallocs++;
	uint64_t old_req = b->req, old_extra = b->x.extra;
	if (!b->ignored && ev->size < old_req)
		attempt(eng, ATTEMPT_PEAK);
	/* attempt() never touches the block table, so B is still valid. */
	struct snap_extra_block x = b->x;
	if (snap_extra_realloc(eng->extra_model, &x, old_req, ev->size,
			       ev->usable) < 0)
		return;
	unsigned n = stack_filter_apply(&eng->filter, ev->pcs, ev->npcs, true,
					eng->path);
	if (b->ignored || !n) {
		realloc_ignored(eng, b, ev, n);
		b->x = x;
	} else {
		b->x = x;
		charge(eng, b->leaf, -(int64_t)old_req);
		b->leaf = xtree_insert(&eng->tree, eng->path, n);
		charge(eng, b->leaf, (int64_t)ev->size);
		b->req = ev->size;
		account(eng, (int64_t)ev->size - (int64_t)old_req,
			(int64_t)x.extra - (int64_t)old_extra);
	}
	rekey_block(eng, ev->old_addr, ev->addr, slot);
	if (!b->ignored)
		attempt(eng, ATTEMPT_NORMAL);
}

void
snap_engine_feed(struct snap_engine *eng, const struct ht_event *ev)
{
	eng->stats.events++;
	if (!eng->opt->heap || eng->opt->pages_as_heap)
		return;
	if (ev->time > eng->clock)
		eng->clock = ev->time;
	if (invisible_to_massif(eng, ev->fn))
		return;
	switch (ev->kind) {
	case HT_EV_ALLOC:
		do_alloc(eng, ev);
		break;
	case HT_EV_FREE:
		do_free(eng, ev->addr);
		break;
	case HT_EV_REALLOC:
		do_realloc(eng, ev);
		break;
	}
}

/* ---- Results ---- */

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
