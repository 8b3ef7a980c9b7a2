/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allocation sites: each distinct raw stack an allocation came from, under
   an id that never changes for the engine's life. Massif's tree cannot
   serve here: it keeps only the filtered frames, cut at --depth, and its
   stack memo forgets stacks to stay bounded. The leak check's loss records
   (memcheck groups blocks by their whole allocation stack) and per-site
   statistics need the stack itself.

   The stacks are stored as a trie with the outermost frame at the top, so
   stacks that share their callers (every stack shares main's) share nodes,
   and walking up from a site's node gives its frames innermost first. A
   site is the node of its innermost frame; a stack can end at a node that
   is also inside a longer stack, which is why sites carry their own age. */
#include "snap_priv.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define INDEX_MIN_SLOTS 1024u

static size_t
slot_home(const struct site_table *st, uint32_t parent, uint64_t pc)
{
	uint64_t h = (pc ^ ((uint64_t)parent << 40 | parent)) *
		     0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 32) & st->index_mask;
}

void
site_table_init(struct site_table *st)
{
	memset(st, 0, sizeof(*st));
	st->cap = 64;
	st->nodes = ht_xcalloc(st->cap, sizeof(*st->nodes));
	st->n = 1; /* node 0: the root, no frame */
	st->index_mask = INDEX_MIN_SLOTS - 1;
	st->index = ht_xcalloc(INDEX_MIN_SLOTS, sizeof(*st->index));
}

void
site_table_fini(struct site_table *st)
{
	free(st->nodes);
	free(st->index);
	free(st->stats);
	memset(st, 0, sizeof(*st));
}

void
site_table_copy(struct site_table *dst, const struct site_table *src)
{
	*dst = *src;
	dst->nodes = ht_xmemdup_array(src->nodes, src->n, src->cap,
				      sizeof(*src->nodes));
	dst->index = ht_xmemdup_array(src->index, src->index_mask + 1,
				      src->index_mask + 1, sizeof(*src->index));
	dst->stats = src->stats
		? ht_xmemdup_array(src->stats, src->n_sites + 1, src->cap_stats,
				   sizeof(*src->stats))
		: NULL;
}

/* Doubles the index once it is half full. */
static void
index_grow(struct site_table *st)
{
	uint32_t *old = st->index;
	size_t n_old = st->index_mask + 1;
	st->index_mask = n_old * 2 - 1;
	st->index = ht_xcalloc(n_old * 2, sizeof(*st->index));
	for (size_t i = 0; i < n_old; i++) {
		if (!old[i])
			continue;
		const struct site_node *nd = &st->nodes[old[i]];
		size_t j = slot_home(st, nd->parent, nd->pc);
		while (st->index[j])
			j = (j + 1) & st->index_mask;
		st->index[j] = old[i];
	}
	free(old);
}

/* The child of PARENT for frame PC, created if absent. */
static uint32_t
child(struct site_table *st, uint32_t parent, uint64_t pc)
{
	size_t i = slot_home(st, parent, pc);
	for (;; i = (i + 1) & st->index_mask) {
		uint32_t id = st->index[i];
		if (!id)
			break;
		if (st->nodes[id].pc == pc && st->nodes[id].parent == parent)
			return id;
	}
	ht_xgrow((void **)&st->nodes, &st->cap, st->n + 1, sizeof(*st->nodes));
	uint32_t id = (uint32_t)st->n++;
	st->nodes[id] = (struct site_node){ .pc = pc, .parent = parent };
	st->index[i] = id;
	if ((st->n + 1) * 2 > st->index_mask + 1)
		index_grow(st);
	return id;
}

uint32_t
site_table_intern(struct site_table *st, const uint64_t *pcs, unsigned n)
{
	uint32_t node = 0;
	for (unsigned i = n; i-- > 0;)
		node = child(st, node, pcs[i]);
	if (node && !st->nodes[node].age) {
		st->nodes[node].age = ++st->n_sites;
		ht_xgrow((void **)&st->stats, &st->cap_stats, st->n_sites + 1,
			 sizeof(*st->stats));
		st->stats[st->n_sites] = (struct site_stats){
			.node = node, .peak_epoch = st->peak_epoch,
		};
	}
	return node;
}

unsigned
site_table_frames(const struct site_table *st, uint32_t site, uint64_t *out,
		  unsigned max)
{
	unsigned n = 0;
	for (uint32_t id = site; id && id < st->n && n < max;
	     id = st->nodes[id].parent)
		out[n++] = st->nodes[id].pc;
	return n;
}

uint32_t
site_table_age(const struct site_table *st, uint32_t site)
{
	return site && site < st->n ? st->nodes[site].age : 0;
}

/* ---- What happened at each site ----
   A site's bytes at the peak are kept without a pass over all sites at
   each peak: a site remembers its live bytes as of the last peak it saw
   the moment they first change after a newer one, so each event costs
   one comparison whatever the number of sites and peaks. */

static struct site_stats *
stats_of(struct site_table *st, uint32_t site)
{
	uint32_t age = site_table_age(st, site);
	return age ? &st->stats[age] : NULL;
}

/* LIVE changes by D bytes and DB blocks, standing for DEST blocks. */
static void
live_change(struct site_table *st, struct site_stats *s, int64_t d,
	    int64_t db, double dest)
{
	if (s->peak_epoch != st->peak_epoch) {
		s->peak_live = s->live;
		s->peak_live_blocks = s->live_blocks;
		s->peak_live_blocks_est = s->live_blocks_est;
		s->peak_epoch = st->peak_epoch;
	}
	s->live += (uint64_t)d;
	s->live_blocks += (uint64_t)db;
	/* with no block left the estimate is 0 exactly, whatever rounding
	   the sums of fractions left behind */
	s->live_blocks_est = s->live_blocks ? s->live_blocks_est + dest : 0;
}

void
site_table_alloc(struct site_table *st, uint32_t site, uint64_t bytes,
		 double blocks)
{
	struct site_stats *s = stats_of(st, site);
	if (!s)
		return;
	s->calls++;
	s->allocated += bytes;
	live_change(st, s, (int64_t)bytes, 1, blocks);
}

void
site_table_estimate(struct site_table *st, uint32_t site, double calls)
{
	struct site_stats *s = stats_of(st, site);
	if (s)
		s->calls_est += calls;
}

void
site_table_release(struct site_table *st, uint32_t site, uint64_t bytes,
		   double blocks)
{
	struct site_stats *s = stats_of(st, site);
	if (s)
		live_change(st, s, -(int64_t)bytes, -1, -blocks);
}

void
site_table_temporary(struct site_table *st, uint32_t site, double blocks)
{
	struct site_stats *s = stats_of(st, site);
	if (s) {
		s->temporary++;
		s->temporary_est += blocks;
	}
}

void
site_table_peak(struct site_table *st)
{
	st->peak_epoch++;
}

uint64_t
site_table_peak_bytes(const struct site_table *st, const struct site_stats *s)
{
	if (!st->peak_epoch)
		return s->live;
	return s->peak_epoch == st->peak_epoch ? s->peak_live : s->live;
}

/* ---- Thinning ----
   A long attach to a program whose stacks keep changing (an interpreter
   running ever new code, recursion of any depth) meets new sites for as
   long as it runs; each costs its stats and the frames no other site
   shares. Past a number of sites, the least significant are merged into
   one count, as Massif thins its snapshots: those with no live block
   (no block refers to them, and they hold nothing now) and the fewest
   bytes allocated. A stack seen again after its site was thinned starts
   a new site. */

struct thin_candidate {
	uint64_t allocated, calls;
	uint32_t age;
};

static int
candidate_cmp(const void *a, const void *b)
{
	const struct thin_candidate *x = a, *y = b;
	if (x->allocated != y->allocated)
		return x->allocated < y->allocated ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? -1 : 1;
	return x->age < y->age ? -1 : x->age > y->age;
}

/* Mark in GONE (by age) the least significant of ST's sites without a
   live block, at most DROP of them, and merge their figures into
   ST->thinned. Returns how many were marked. */
static size_t
thin_pick(struct site_table *st, size_t drop, bool *gone)
{
	struct thin_candidate *c = ht_xcalloc(st->n_sites + 1, sizeof(*c));
	size_t nc = 0;
	for (uint32_t age = 1; age <= st->n_sites; age++) {
		const struct site_stats *s = &st->stats[age];
		if (!s->live_blocks)
			c[nc++] = (struct thin_candidate){
				.allocated = s->allocated, .calls = s->calls,
				.age = age,
			};
	}
	if (drop > nc)
		drop = nc;
	qsort(c, nc, sizeof(*c), candidate_cmp);
	struct site_thinned *th = &st->thinned;
	if (th->peak_epoch != st->peak_epoch) {
		th->peak = th->peak_blocks = 0; /* a newer peak: they held
						   nothing then */
		th->peak_blocks_est = 0;
		th->peak_epoch = st->peak_epoch;
	}
	for (size_t i = 0; i < drop; i++) {
		const struct site_stats *s = &st->stats[c[i].age];
		gone[c[i].age] = true;
		th->sites++;
		th->calls += s->calls;
		th->calls_est += s->calls_est;
		th->allocated += s->allocated;
		th->temporary += s->temporary;
		th->temporary_est += s->temporary_est;
		th->peak += site_table_peak_bytes(st, s);
		double est;
		th->peak_blocks += site_table_peak_blocks(st, s, &est);
		th->peak_blocks_est += est;
	}
	free(c);
	return drop;
}

/* Rebuild ST's nodes keeping those on the path of a site not in GONE;
   the old-to-new id map. Stats are renumbered in first-seen order. */
static uint32_t *
thin_rebuild(struct site_table *st, const bool *gone)
{
	bool *keep = ht_xcalloc(st->n, sizeof(*keep));
	for (uint32_t age = 1; age <= st->n_sites; age++)
		if (!gone[age])
			for (uint32_t id = st->stats[age].node; id && !keep[id];
			     id = st->nodes[id].parent)
				keep[id] = true;
	uint32_t *remap = ht_xcalloc(st->n, sizeof(*remap));
	size_t m = 1;
	/* a parent's id is below its children's: one pass in id order */
	for (size_t id = 1; id < st->n; id++) {
		if (!keep[id])
			continue;
		struct site_node nd = st->nodes[id];
		nd.parent = remap[nd.parent];
		nd.age = 0;
		remap[id] = (uint32_t)m;
		st->nodes[m++] = nd;
	}
	free(keep);
	st->n = m;
	uint32_t k = 0;
	for (uint32_t age = 1; age <= st->n_sites; age++) {
		if (gone[age])
			continue;
		struct site_stats s = st->stats[age];
		s.node = remap[s.node];
		st->stats[++k] = s;
		st->nodes[s.node].age = k;
	}
	st->n_sites = k;
	size_t slots = INDEX_MIN_SLOTS;
	while ((st->n + 1) * 2 > slots)
		slots *= 2;
	free(st->index);
	st->index = ht_xcalloc(slots, sizeof(*st->index));
	st->index_mask = slots - 1;
	for (size_t id = 1; id < st->n; id++) {
		const struct site_node *nd = &st->nodes[id];
		size_t j = slot_home(st, nd->parent, nd->pc);
		while (st->index[j])
			j = (j + 1) & st->index_mask;
		st->index[j] = (uint32_t)id;
	}
	return remap;
}

uint32_t *
site_table_thin(struct site_table *st, uint32_t keep)
{
	size_t drop = st->n_sites > keep ? st->n_sites - keep : 0;
	bool *gone = ht_xcalloc(st->n_sites + 1, sizeof(*gone));
	uint32_t *remap = NULL;
	if (drop && thin_pick(st, drop, gone))
		remap = thin_rebuild(st, gone);
	free(gone);
	/* Sites with live blocks stay: when they are more than KEEP, the
	   next attempt waits until KEEP more are new. */
	st->thin_at = st->n_sites + keep;
	return remap;
}

uint64_t
site_table_thinned_peak(const struct site_table *st, uint64_t *blocks,
			double *est)
{
	bool now = st->thinned.peak_epoch == st->peak_epoch;
	*blocks = now ? st->thinned.peak_blocks : 0;
	*est = now ? st->thinned.peak_blocks_est : 0;
	return now ? st->thinned.peak : 0;
}

uint64_t
site_table_peak_blocks(const struct site_table *st, const struct site_stats *s,
		       double *est)
{
	bool at_peak = st->peak_epoch && s->peak_epoch == st->peak_epoch;
	*est = at_peak ? s->peak_live_blocks_est : s->live_blocks_est;
	return at_peak ? s->peak_live_blocks : s->live_blocks;
}
