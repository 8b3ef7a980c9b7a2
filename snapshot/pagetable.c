/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The page table of --pages-as-heap: which pages are recorded, and for
   each the tree node charged with it. Pages are kept as runs (a range of
   consecutive pages with one owner) in sorted arrays, so mapping or
   unmapping a range of any size costs a binary search and a few run
   edits, never one step per page.

   Massif keeps pages in a hash table of blocks that allows one address
   several times (a MAP_FIXED over recorded pages adds a second block, and
   removal takes the newest), so a page may carry a stack of owners. Owner
   k of every page lives in layer k; a page in layer k is always in layers
   0..k-1 too, so the top of a page's stack is its highest layer, and a
   removal walks the layers from the top down. Without double counting
   (--massif-compat=no) only layer 0 is ever used. */
#include "snap_priv.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

/* A list of page intervals still to be handled by a layer walk. */
struct spans {
	struct page_run *v;
	size_t n, cap;
};

static void
spans_add(struct spans *s, uint64_t first, uint64_t end)
{
	if (first >= end)
		return;
	ht_xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v));
	s->v[s->n++] = (struct page_run){ .first = first, .end = end };
}

void
page_table_init(struct page_table *pt)
{
	memset(pt, 0, sizeof(*pt));
}

void
page_table_fini(struct page_table *pt)
{
	for (size_t i = 0; i < pt->n_layers; i++)
		free(pt->layers[i].runs);
	free(pt->layers);
	memset(pt, 0, sizeof(*pt));
}

void
page_table_copy(struct page_table *dst, const struct page_table *src)
{
	*dst = *src;
	dst->layers = ht_xcalloc(src->n_layers ? src->n_layers : 1,
				 sizeof(*dst->layers));
	dst->cap_layers = src->n_layers;
	for (size_t i = 0; i < src->n_layers; i++) {
		const struct page_layer *l = &src->layers[i];
		dst->layers[i].runs = ht_xmemdup_array(l->runs, l->n, l->n,
						       sizeof(*l->runs));
		dst->layers[i].n = dst->layers[i].cap = l->n;
	}
}

/* Index of the first run of L that ends after PAGE (L->n if none). */
static size_t
layer_lower_bound(const struct page_layer *l, uint64_t page)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->runs[mid].end <= page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
layer_insert_at(struct page_layer *l, size_t i, struct page_run r)
{
	ht_xgrow((void **)&l->runs, &l->cap, l->n + 1, sizeof(*l->runs));
	memmove(&l->runs[i + 1], &l->runs[i], (l->n - i) * sizeof(*l->runs));
	l->runs[i] = r;
	l->n++;
}

static void
layer_erase(struct page_layer *l, size_t i, size_t count)
{
	memmove(&l->runs[i], &l->runs[i + count],
		(l->n - i - count) * sizeof(*l->runs));
	l->n -= count;
}

/* Add [FIRST, END) owned by LEAF to L, where none of it is yet. Joins
   equal-owner neighbours, so a break grown page by page stays one run. */
static void
layer_add(struct page_layer *l, uint64_t first, uint64_t end, uint32_t leaf)
{
	size_t i = layer_lower_bound(l, first);
	bool join_prev = i > 0 && l->runs[i - 1].end == first &&
			 l->runs[i - 1].leaf == leaf;
	bool join_next = i < l->n && l->runs[i].first == end &&
			 l->runs[i].leaf == leaf;
	if (join_prev && join_next) {
		l->runs[i - 1].end = l->runs[i].end;
		layer_erase(l, i, 1);
	} else if (join_prev) {
		l->runs[i - 1].end = end;
	} else if (join_next) {
		l->runs[i].first = first;
	} else {
		layer_insert_at(l, i, (struct page_run){ first, end, leaf });
	}
}

/* Take [FIRST, END) out of L: every piece that was in L is reported to
   GONE (when not NULL) with its owner; the parts that were not in L are
   added to MISSED (when not NULL). */
static void
layer_take(struct page_layer *l, uint64_t first, uint64_t end,
	   page_table_fn gone, void *ctx, struct spans *missed)
{
	size_t i = layer_lower_bound(l, first);
	uint64_t at = first;
	while (at < end && i < l->n && l->runs[i].first < end) {
		struct page_run r = l->runs[i];
		if (missed)
			spans_add(missed, at, r.first > at ? r.first : at);
		uint64_t lo = r.first > first ? r.first : first;
		uint64_t hi = r.end < end ? r.end : end;
		if (gone)
			gone(ctx, lo, hi - lo, r.leaf);
		at = hi;
		if (r.first < lo && r.end > hi) {
			/* The hole splits the run in two. */
			l->runs[i].end = lo;
			layer_insert_at(l, i + 1,
					(struct page_run){ hi, r.end, r.leaf });
			break;
		} else if (r.first < lo) {
			l->runs[i++].end = lo;
		} else if (r.end > hi) {
			l->runs[i].first = hi;
		} else {
			layer_erase(l, i, 1);
		}
	}
	if (missed)
		spans_add(missed, at, end);
}

/* Split [FIRST, END) into the parts in L (to IN) and the rest (to OUT). */
static void
layer_split(const struct page_layer *l, uint64_t first, uint64_t end,
	    struct spans *in, struct spans *out)
{
	uint64_t at = first;
	for (size_t i = layer_lower_bound(l, first);
	     i < l->n && l->runs[i].first < end; i++) {
		uint64_t lo = l->runs[i].first > at ? l->runs[i].first : at;
		uint64_t hi = l->runs[i].end < end ? l->runs[i].end : end;
		spans_add(out, at, lo);
		spans_add(in, lo, hi);
		at = hi;
	}
	spans_add(out, at, end);
}

static struct page_layer *
layer_at(struct page_table *pt, size_t k)
{
	if (k == pt->n_layers) {
		ht_xgrow((void **)&pt->layers, &pt->cap_layers, k + 1,
			 sizeof(*pt->layers));
		memset(&pt->layers[k], 0, sizeof(pt->layers[k]));
		pt->n_layers++;
	}
	return &pt->layers[k];
}

void
page_table_push(struct page_table *pt, uint64_t first, uint64_t n,
		uint32_t leaf)
{
	struct spans todo = { 0 }, next = { 0 };
	spans_add(&todo, first, first + n);
	for (size_t k = 0; todo.n; k++) {
		struct page_layer *l = layer_at(pt, k);
		struct spans fresh = { 0 };
		next.n = 0;
		for (size_t i = 0; i < todo.n; i++)
			layer_split(l, todo.v[i].first, todo.v[i].end, &next,
				    &fresh);
		for (size_t i = 0; i < fresh.n; i++)
			layer_add(l, fresh.v[i].first, fresh.v[i].end, leaf);
		free(fresh.v);
		struct spans t = todo;
		todo = next;
		next = t;
	}
	free(todo.v);
	free(next.v);
}

void
page_table_pop(struct page_table *pt, uint64_t first, uint64_t n,
	       page_table_fn gone, void *ctx)
{
	struct spans todo = { 0 }, next = { 0 };
	spans_add(&todo, first, first + n);
	for (size_t k = pt->n_layers; k-- > 0 && todo.n;) {
		next.n = 0;
		for (size_t i = 0; i < todo.n; i++)
			layer_take(&pt->layers[k], todo.v[i].first,
				   todo.v[i].end, gone, ctx, &next);
		struct spans t = todo;
		todo = next;
		next = t;
	}
	free(todo.v);
	free(next.v);
	while (pt->n_layers && !pt->layers[pt->n_layers - 1].n)
		free(pt->layers[--pt->n_layers].runs);
}

void
page_table_replace(struct page_table *pt, uint64_t first, uint64_t n,
		   uint32_t leaf, page_table_fn gone, void *ctx)
{
	struct page_layer *l = layer_at(pt, 0);
	layer_take(l, first, first + n, gone, ctx, NULL);
	layer_add(l, first, first + n, leaf);
}

bool
page_table_top(const struct page_table *pt, uint64_t page, uint32_t *leaf)
{
	for (size_t k = pt->n_layers; k-- > 0;) {
		const struct page_layer *l = &pt->layers[k];
		size_t i = layer_lower_bound(l, page);
		if (i < l->n && l->runs[i].first <= page) {
			*leaf = l->runs[i].leaf;
			return true;
		}
	}
	return false;
}

uint64_t
page_table_count_owned(const struct page_table *pt, uint64_t first,
		       uint64_t n)
{
	if (!pt->n_layers)
		return 0;
	const struct page_layer *l = &pt->layers[0];
	uint64_t end = first + n, count = 0;
	for (size_t i = layer_lower_bound(l, first);
	     i < l->n && l->runs[i].first < end; i++) {
		if (!l->runs[i].leaf)
			continue;
		uint64_t lo = l->runs[i].first > first ? l->runs[i].first : first;
		uint64_t hi = l->runs[i].end < end ? l->runs[i].end : end;
		count += hi - lo;
	}
	return count;
}
