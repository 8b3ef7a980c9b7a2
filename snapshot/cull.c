/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Thinning the snapshot array when it fills up, exactly as Massif does.

   When the array holds --max-snapshots entries, half of them go, one at a
   time: each time the snapshot whose neighbours are closest together in
   time (its "span") is removed, so what survives is spread evenly over the
   run. The first and the last snapshot are never candidates, nor is the
   current peak. Removing one at a time changes its neighbours' spans, which
   is why the choice is made again at each removal (from a heap: a scan of
   the array each time made culling a tenth of the engine's time when
   --time-unit=ms took a snapshot at every event). What is lost is detail
   of short spikes; the peak itself is kept.

   The minimum interval Massif derives afterwards passes through a 32-bit
   unsigned integer, so it is the true minimum modulo 2^32; real Massif's
   series depend on that for long B-time runs, so we keep it. */
#include "snap_priv.h"

#include <stdlib.h>
#include <string.h>

void
snapshot_clear(struct snap_snapshot *s)
{
	free(s->tree);
	memset(s, 0, sizeof(*s));
}

static bool
is_uncullable(const struct snap_snapshot *snaps, size_t n, size_t i)
{
	return i == 0 || i == n - 1 || snaps[i].kind == SNAP_PEAK;
}

/* The live snapshots as a list (NONE ends it), and a heap of candidates
   keyed by span then index: each step takes the smallest span, the
   earliest on a tie, exactly as a scan for the first smallest span does,
   in O(log M) rather than a scan of M. A removal only widens its
   neighbours' spans; each gets a fresh entry then, and an entry whose
   span is not its snapshot's current one is stale and skipped. */
#define NONE UINT32_MAX

struct cull_entry {
	uint64_t span;
	uint32_t i;
};

struct cull {
	struct snap_snapshot *snaps;
	uint32_t *prev, *next;
	struct cull_entry *heap;
	size_t n_heap;
};

static bool
entry_before(const struct cull_entry *a, const struct cull_entry *b)
{
	return a->span != b->span ? a->span < b->span : a->i < b->i;
}

static void
heap_push(struct cull *c, struct cull_entry e)
{
	size_t k = c->n_heap++;
	while (k && entry_before(&e, &c->heap[(k - 1) / 2])) {
		c->heap[k] = c->heap[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	c->heap[k] = e;
}

static struct cull_entry
heap_pop(struct cull *c)
{
	struct cull_entry top = c->heap[0], last = c->heap[--c->n_heap];
	size_t k = 0;
	for (;;) {
		size_t child = 2 * k + 1;
		if (child >= c->n_heap)
			break;
		if (child + 1 < c->n_heap &&
		    entry_before(&c->heap[child + 1], &c->heap[child]))
			child++;
		if (!entry_before(&c->heap[child], &last))
			break;
		c->heap[k] = c->heap[child];
		k = child;
	}
	if (c->n_heap)
		c->heap[k] = last;
	return top;
}

/* Whether live snapshot I may go: it has live neighbours on both sides
   and is not the peak. */
static bool
candidate(const struct cull *c, uint32_t i)
{
	return c->prev[i] != NONE && c->next[i] != NONE &&
	       c->snaps[i].kind != SNAP_PEAK;
}

static uint64_t
span_of(const struct cull *c, uint32_t i)
{
	return c->snaps[c->next[i]].time - c->snaps[c->prev[i]].time;
}

static void
offer(struct cull *c, uint32_t i)
{
	if (i != NONE && candidate(c, i))
		heap_push(c, (struct cull_entry){ .span = span_of(c, i), .i = i });
}

/* Remove the live snapshot of smallest span; false when none may go. */
static bool
remove_smallest_span(struct cull *c, bool *dead)
{
	while (c->n_heap) {
		struct cull_entry e = heap_pop(c);
		if (dead[e.i] || span_of(c, e.i) != e.span)
			continue;
		uint32_t p = c->prev[e.i], q = c->next[e.i];
		snapshot_clear(&c->snaps[e.i]);
		dead[e.i] = true;
		c->next[p] = q;
		c->prev[q] = p;
		offer(c, p);
		offer(c, q);
		return true;
	}
	return false;
}

uint64_t
snapshots_cull(struct snap_snapshot *snaps, size_t *n, unsigned max)
{
	size_t count = *n;
	if (!count)
		return (uint32_t)0x7fffffffffffffffULL; /* as below, none kept */
	/* COUNT <= --max-snapshots <= 1000: a few dozen KiB of stack. Each
	   removal offers two entries, after one per snapshot at first. */
	bool dead[count];
	uint32_t prev[count], next[count];
	struct cull_entry heap[3 * count];
	struct cull c = { .snaps = snaps, .prev = prev, .next = next,
			  .heap = heap };
	memset(dead, 0, sizeof(dead));
	for (size_t i = 0; i < count; i++) {
		prev[i] = i ? (uint32_t)i - 1 : NONE;
		next[i] = i + 1 < count ? (uint32_t)i + 1 : NONE;
	}
	for (size_t i = 0; i < count; i++)
		offer(&c, (uint32_t)i);
	for (unsigned k = 0; k < max / 2; k++)
		if (!remove_smallest_span(&c, dead))
			break;

	size_t kept = 0;
	for (size_t i = 0; i < count; i++) {
		if (dead[i])
			continue;
		if (kept != i) {
			snaps[kept] = snaps[i];
			memset(&snaps[i], 0, sizeof(snaps[i]));
		}
		kept++;
	}
	*n = kept;

	uint64_t min_span = 0x7fffffffffffffffULL;
	for (size_t i = 1; i < kept; i++) {
		if (is_uncullable(snaps, kept, i) &&
		    is_uncullable(snaps, kept, i - 1))
			continue;
		uint64_t span = snaps[i].time - snaps[i - 1].time;
		if (span < min_span)
			min_span = span;
	}
	return (uint32_t)min_span;
}
