/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The allocation tree: a trie of filtered stacks whose nodes are never
   removed (Massif keeps zero-byte entries, and they count in aggregates),
   and its rendering into the printed form of a detailed snapshot.

   Each event charges only its leaf's SELF (and lists the leaf as dirty);
   subtree totals are brought up to date when a detailed snapshot is
   rendered. Summing the whole tree each time made a rendering cost the
   whole tree, and with --time-unit=ms Massif's rules can take a snapshot
   at every event for a while (node: 23 000 detailed snapshots of a 85 000
   node tree in one run, 1.6 s of the engine's 1.7): when few nodes were
   charged since the last rendering, only their paths to the root are
   updated. When many were, one pass over the whole tree is cheaper. */
#include "snap_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

static size_t
index_hash(uint32_t parent, uint64_t pc)
{
	uint64_t k = pc * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)parent << 1);
	k ^= k >> 29;
	k *= 0xbf58476d1ce4e5b9ULL;
	k ^= k >> 32;
	return (size_t)k;
}

void
xtree_init(struct xtree *t)
{
	memset(t, 0, sizeof(*t));
	ht_xgrow((void **)&t->nodes, &t->cap_nodes, 1, sizeof(*t->nodes));
	t->nodes[0] = (struct xtree_node){ 0 };
	t->n_nodes = 1;
}

void
xtree_fini(struct xtree *t)
{
	free(t->nodes);
	free(t->index);
	free(t->dirty);
	memset(t, 0, sizeof(*t));
}

void
xtree_copy(struct xtree *dst, const struct xtree *src)
{
	*dst = *src;
	dst->nodes = ht_xcalloc(src->cap_nodes, sizeof(*src->nodes));
	memcpy(dst->nodes, src->nodes, src->n_nodes * sizeof(*src->nodes));
	if (src->cap_index) {
		dst->index = ht_xcalloc(src->cap_index, sizeof(*src->index));
		memcpy(dst->index, src->index,
		       src->cap_index * sizeof(*src->index));
	}
	dst->dirty = ht_xmemdup_array(src->dirty, src->n_dirty, src->n_dirty,
				      sizeof(*src->dirty));
	dst->cap_dirty = src->n_dirty;
}

static size_t
index_slot(const struct xtree *t, uint32_t parent, uint64_t pc)
{
	size_t mask = t->cap_index - 1;
	size_t i = index_hash(parent, pc) & mask;
	for (;;) {
		uint32_t id = t->index[i];
		if (!id || (t->nodes[id].parent == parent && t->nodes[id].pc == pc))
			return i;
		i = (i + 1) & mask;
	}
}

static void
index_grow(struct xtree *t)
{
	free(t->index);
	t->cap_index = t->cap_index ? t->cap_index * 2 : 256;
	t->index = ht_xcalloc(t->cap_index, sizeof(*t->index));
	for (uint32_t id = 1; id < t->n_nodes; id++)
		t->index[index_slot(t, t->nodes[id].parent, t->nodes[id].pc)] = id;
}

static uint32_t
child_get(struct xtree *t, uint32_t parent, uint64_t pc)
{
	if ((t->n_nodes + 1) * 10 > t->cap_index * 7)
		index_grow(t);
	size_t slot = index_slot(t, parent, pc);
	if (t->index[slot])
		return t->index[slot];
	if (t->n_nodes >= UINT32_MAX)
		abort();
	ht_xgrow((void **)&t->nodes, &t->cap_nodes, t->n_nodes + 1,
		 sizeof(*t->nodes));
	uint32_t id = (uint32_t)t->n_nodes++;
	t->nodes[id] = (struct xtree_node){
		.pc = pc,
		.parent = parent,
		.next_sibling = t->nodes[parent].first_child,
	};
	t->nodes[parent].first_child = id;
	t->index[slot] = id;
	return id;
}

uint32_t
xtree_insert(struct xtree *t, const uint64_t *path, unsigned n)
{
	uint32_t id = 0;
	for (unsigned i = 0; i < n; i++)
		id = child_get(t, id, path[i]);
	return id;
}

void
xtree_charge(struct xtree *t, uint32_t id, int64_t bytes)
{
	struct xtree_node *node = &t->nodes[id];
	node->self += bytes;
	if (node->dirty)
		return;
	node->dirty = true;
	ht_xgrow((void **)&t->dirty, &t->cap_dirty, t->n_dirty + 1,
		 sizeof(*t->dirty));
	t->dirty[t->n_dirty++] = id;
}

/* Dirty nodes per tree node past which one pass over the whole tree beats
   walking each dirty node's path to the root (a few dozen scattered
   reads against a sequential one per node; measured on cc1's and node's
   event streams). */
#define SYNC_PATHS_MAX_SHARE 64

/* Every total as the sum of its subtree's entries now. Integer sums, in
   whatever order: the same totals either way. */
static void
xtree_sync(struct xtree *t)
{
	struct xtree_node *nodes = t->nodes;
	if (t->n_dirty * SYNC_PATHS_MAX_SHARE < t->n_nodes) {
		for (size_t i = 0; i < t->n_dirty; i++) {
			struct xtree_node *node = &nodes[t->dirty[i]];
			int64_t d = node->self - node->synced;
			node->synced = node->self;
			node->dirty = false;
			for (uint32_t id = t->dirty[i];; id = nodes[id].parent) {
				nodes[id].total += d;
				if (!id)
					break;
			}
		}
	} else {
		for (size_t i = 0; i < t->n_nodes; i++)
			nodes[i].total = nodes[i].synced = nodes[i].self;
		for (size_t i = t->n_nodes; i-- > 1;)
			nodes[nodes[i].parent].total += nodes[i].total;
		for (size_t i = 0; i < t->n_dirty; i++)
			nodes[t->dirty[i]].dirty = false;
	}
	t->n_dirty = 0;
}

/* ---- Rendering ---- */

struct entry {
	uint64_t pc;
	uint64_t bytes;
	uint32_t id;      /* 0 for the aggregate */
	uint32_t places;
};

struct render {
	const struct xtree *t;
	uint64_t limit; /* significance limit L */
	struct snap_node *out;
	size_t n_out, cap_out;
	/* The groups of every level being emitted, innermost level last:
	   one array for the whole rendering, where an allocation per node
	   emitted cost as much as the rest of it. */
	struct entry *groups;
	size_t n_groups, cap_groups;
};

static int
entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	/* An aggregate and a frame at address 0 (pages-as-heap start-up) tie;
	   put the aggregate first, like any address-0 line. */
	return (x->places == 0) - (y->places == 0);
}

static size_t
push_node(struct render *r, uint64_t pc, uint64_t bytes, uint32_t places)
{
	ht_xgrow((void **)&r->out, &r->cap_out, r->n_out + 1, sizeof(*r->out));
	r->out[r->n_out] = (struct snap_node){
		.pc = pc, .bytes = bytes, .places = places,
	};
	return r->n_out++;
}

static uint64_t
node_total(const struct render *r, uint32_t id)
{
	int64_t v = r->t->nodes[id].total;
	return v > 0 ? (uint64_t)v : 0;
}

static void
push_group(struct render *r, struct entry e)
{
	ht_xgrow((void **)&r->groups, &r->cap_groups, r->n_groups + 1,
		 sizeof(*r->groups));
	r->groups[r->n_groups++] = e;
}

/* entry_cmp is a total order (siblings have distinct addresses), so any
   sort gives the one result; most levels have a handful of groups, which
   insertion sorts faster than qsort. */
static void
sort_groups(struct entry *e, size_t n)
{
	if (n > 16) {
		qsort(e, n, sizeof(*e), entry_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct entry x = e[i];
		size_t j = i;
		for (; j > 0 && entry_cmp(&e[j - 1], &x) > 0; j--)
			e[j] = e[j - 1];
		e[j] = x;
	}
}

/* Group ID's children (each trie child is one group: one frame address at
   this level), merge the insignificant ones, sort, and emit them. */
static void
render_children(struct render *r, uint32_t id, size_t out_index)
{
	size_t base = r->n_groups;
	struct entry agg = { 0 };
	for (uint32_t c = r->t->nodes[id].first_child; c;
	     c = r->t->nodes[c].next_sibling) {
		uint64_t bytes = node_total(r, c);
		if (bytes < r->limit) {
			agg.bytes += bytes;
			agg.places++;
		} else {
			push_group(r, (struct entry){
				.pc = r->t->nodes[c].pc, .bytes = bytes, .id = c,
			});
		}
	}
	if (agg.places)
		push_group(r, agg);
	size_t k = r->n_groups - base;
	if (!k)
		return;
	sort_groups(r->groups + base, k);
	r->out[out_index].n_children = (uint32_t)k;
	for (size_t i = 0; i < k; i++) {
		/* A copy: the levels below may move the array. */
		struct entry e = r->groups[base + i];
		size_t at = push_node(r, e.pc, e.bytes, e.places);
		if (!e.places)
			render_children(r, e.id, at);
	}
	r->n_groups = base;
}

uint64_t
xtree_render(struct xtree *t, uint64_t extra, uint64_t stacks,
	     double threshold, struct snap_node **out, size_t *n_out)
{
	xtree_sync(t);
	struct render r = { .t = t };
	uint64_t heap = node_total(&r, 0);
	if (heap == 0 && threshold != 0)
		r.limit = 1;
	else
		r.limit = (uint64_t)floor((double)(heap + extra + stacks) *
					  threshold / 100.0);
	size_t root = push_node(&r, 0, heap, 0);
	render_children(&r, 0, root);
	free(r.groups);
	*out = r.out;
	*n_out = r.n_out;
	return heap;
}

/* ---- Thinning ----
   Massif never removes a tree entry, so a program whose stacks keep
   changing grows the tree for as long as it runs (a million distinct
   stacks: 2.8 million nodes). Past a number of nodes, the subtrees that
   hold nothing (every entry in them at zero bytes, no block charged to
   them: KEEP says which leaves blocks hold) are dropped. What a
   rendering shows then differs from Massif in one way: an aggregate
   "in N places" no longer counts the zero-byte entries dropped. */

uint32_t *
xtree_thin(struct xtree *t, const bool *keep)
{
	xtree_sync(t);
	size_t n = t->n_nodes;
	/* a child's id is above its parent's: one backward pass */
	bool *used = ht_xcalloc(n, sizeof(*used));
	used[0] = true;
	for (size_t id = n; id-- > 1;) {
		if (t->nodes[id].self || t->nodes[id].total || keep[id])
			used[id] = true;
		if (used[id])
			used[t->nodes[id].parent] = true;
	}
	uint32_t *remap = ht_xcalloc(n, sizeof(*remap));
	size_t m = 1;
	t->nodes[0].first_child = 0;
	for (size_t id = 1; id < n; id++) {
		if (!used[id])
			continue;
		struct xtree_node nd = t->nodes[id];
		nd.parent = remap[nd.parent];
		nd.first_child = 0;
		nd.next_sibling = t->nodes[nd.parent].first_child;
		remap[id] = (uint32_t)m;
		t->nodes[m] = nd;
		t->nodes[nd.parent].first_child = (uint32_t)m;
		m++;
	}
	free(used);
	t->n_nodes = m;
	free(t->index);
	t->index = NULL;
	t->cap_index = 0;
	while ((t->n_nodes + 1) * 10 > t->cap_index * 7)
		t->cap_index = t->cap_index ? t->cap_index * 2 : 256;
	t->index = ht_xcalloc(t->cap_index, sizeof(*t->index));
	for (uint32_t id = 1; id < t->n_nodes; id++)
		t->index[index_slot(t, t->nodes[id].parent, t->nodes[id].pc)] = id;
	return remap;
}
