/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Thinning the snapshot array when it fills up, exactly as Massif does.

   When the array holds --max-snapshots entries, half of them go, one at a
   time: each time the snapshot whose neighbours are closest together in
   time (its "span") is removed, so what survives is spread evenly over the
   run. The first and the last snapshot are never candidates, nor is the
   current peak. Removing one at a time changes its neighbours' spans, which
   is why the search is repeated: O(M^2) per cull, with M <= 1000, and culls
   become rarer as the minimum interval between snapshots grows. What is lost
   is detail of short spikes; the peak itself is kept.

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

/* Index of the live snapshot after I, or N. */
static size_t
next_live(const bool *dead, size_t n, size_t i)
{
	do
		i++;
	while (i < n && dead[i]);
	return i;
}

static void
remove_smallest_span(struct snap_snapshot *snaps, bool *dead, size_t n)
{
	uint64_t best_span = UINT64_MAX;
	size_t best = n;
	size_t prev = 0;
	size_t cur = next_live(dead, n, 0);
	while (cur < n) {
		size_t next = next_live(dead, n, cur);
		if (next >= n)
			break; /* CUR is the last live snapshot */
		uint64_t span = snaps[next].time - snaps[prev].time;
		if (span < best_span && snaps[cur].kind != SNAP_PEAK) {
			best_span = span;
			best = cur;
		}
		prev = cur;
		cur = next;
	}
	if (best < n) {
		snapshot_clear(&snaps[best]);
		dead[best] = true;
	}
}

uint64_t
snapshots_cull(struct snap_snapshot *snaps, size_t *n, unsigned max)
{
	size_t count = *n;
	bool dead[count];
	memset(dead, 0, sizeof(dead));
	for (unsigned k = 0; k < max / 2; k++)
		remove_smallest_span(snaps, dead, count);

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
