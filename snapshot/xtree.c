/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The allocation tree: a trie of filtered stacks whose nodes are never
   removed (Massif keeps zero-byte entries, and they count in aggregates),
   and its rendering into the printed form of a detailed snapshot.

   Each event charges only its leaf's SELF; totals are summed when a detailed
   snapshot is rendered. Detailed snapshots are rare next to events, so this
   keeps the per-event cost to the path look-up. */
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

/* ---- Rendering ---- */

struct render {
	const struct xtree *t;
	const int64_t *total;
	uint64_t limit; /* significance limit L */
	struct snap_node *out;
	size_t n_out, cap_out;
};

struct entry {
	uint64_t pc;
	uint64_t bytes;
	uint32_t id;      /* 0 for the aggregate */
	uint32_t places;
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
	int64_t v = r->total[id];
	return v > 0 ? (uint64_t)v : 0;
}

/* Group ID's children (each trie child is one group: one frame address at
   this level), merge the insignificant ones, sort, and emit them. */
static void
render_children(struct render *r, uint32_t id, size_t out_index)
{
	size_t n = 0;
	for (uint32_t c = r->t->nodes[id].first_child; c;
	     c = r->t->nodes[c].next_sibling)
		n++;
	if (!n)
		return;
	struct entry *e = ht_xcalloc(n + 1, sizeof(*e));
	size_t k = 0;
	struct entry agg = { 0 };
	for (uint32_t c = r->t->nodes[id].first_child; c;
	     c = r->t->nodes[c].next_sibling) {
		uint64_t bytes = node_total(r, c);
		if (bytes < r->limit) {
			agg.bytes += bytes;
			agg.places++;
		} else {
			e[k++] = (struct entry){
				.pc = r->t->nodes[c].pc, .bytes = bytes, .id = c,
			};
		}
	}
	if (agg.places)
		e[k++] = agg;
	qsort(e, k, sizeof(*e), entry_cmp);
	r->out[out_index].n_children = (uint32_t)k;
	for (size_t i = 0; i < k; i++) {
		size_t at = push_node(r, e[i].pc, e[i].bytes, e[i].places);
		if (!e[i].places)
			render_children(r, e[i].id, at);
	}
	free(e);
}

uint64_t
xtree_render(const struct xtree *t, uint64_t extra, uint64_t stacks,
	     double threshold, struct snap_node **out, size_t *n_out)
{
	int64_t *total = ht_xmalloc(t->n_nodes * sizeof(*total));
	for (size_t i = 0; i < t->n_nodes; i++)
		total[i] = t->nodes[i].self;
	for (size_t i = t->n_nodes; i-- > 1;)
		total[t->nodes[i].parent] += total[i];

	struct render r = { .t = t, .total = total };
	uint64_t heap = node_total(&r, 0);
	if (heap == 0 && threshold != 0)
		r.limit = 1;
	else
		r.limit = (uint64_t)floor((double)(heap + extra + stacks) *
					  threshold / 100.0);
	size_t root = push_node(&r, 0, heap, 0);
	render_children(&r, 0, root);
	free(total);
	*out = r.out;
	*n_out = r.n_out;
	return heap;
}
