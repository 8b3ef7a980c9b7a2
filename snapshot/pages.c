/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --pages-as-heap: the program's page-level calls (mmap, munmap, mremap,
   brk) turned into page records, each page a block of 4096 useful bytes
   (massif-semantics.md §6).

   With --massif-compat=yes the rules are Massif 3.19's to the letter,
   quirks included: a range is recorded page by page with a snapshot
   attempt after the last page only, and removed with a peak check and a
   snapshot attempt around its first page only; a page recorded twice (a
   MAP_FIXED over mapped pages, brk's pagedown(a) quirk) is counted twice.
   Without it the accounting is exact, and every deviation is marked
   "Exact:" below (an unmap is one deallocation, a moving mremap one
   change). Either way a range costs O(1) counter and tree updates
   plus the page table's run edits, never one step per page. The counters,
   tree and snapshots are the engine's, reached through its hooks. */
#include "snap_priv.h"

#define PAGE_SHIFT 12
#define PAGE_SIZE ((uint64_t)1 << PAGE_SHIFT)

/* Bytes rounded up to whole pages, as the kernel takes a length. */
static uint64_t
pages_in(uint64_t len)
{
	return (len + PAGE_SIZE - 1) >> PAGE_SHIFT;
}

static uint64_t
page_of(uint64_t a)
{
	return a >> PAGE_SHIFT;
}

/* One page-level call being applied: the page owners, the engine's hooks,
   and whether Massif's rules apply (--massif-compat). */
struct paging {
	struct page_table *pt;
	const struct engine_hooks *eng;
	bool compat;
};

/* page_table_fn: pages leaving the table take their bytes out of the
   counters and of their owner's tree entry (ignored owners count
   nowhere). CTX: the call's struct paging. */
static void
pages_gone(void *ctx, uint64_t first, uint64_t n, uint32_t leaf)
{
	struct paging *p = ctx;

	(void)first;
	if (leaf)
		engine_account_heap(p->eng, leaf, -(int64_t)(n * PAGE_SIZE));
}

/* Record N pages from FIRST for LEAF: Massif records every page (known or
   not) as a new block and attempts a snapshot after the last one, which
   for the counters is one step. An ignored stack records its pages (their
   removal must find them) without counting or snapshotting. */
static void
record_compat(struct paging *p, uint64_t first, uint64_t n,
	      uint32_t leaf)
{
	if (!n)
		return;
	page_table_push(p->pt, first, n, leaf);
	if (!leaf)
		return;
	engine_account_heap(p->eng, leaf, (int64_t)(n * PAGE_SIZE));
	engine_attempt_normal(p->eng);
}

/* Remove N pages from FIRST as Massif does: the first page with a peak
   check before it and a snapshot attempt after it, when it is recorded
   and counted; the others silently. Unknown pages are skipped. */
static void
remove_compat(struct paging *p, uint64_t first, uint64_t n)
{
	if (!n)
		return;
	uint32_t leaf = 0;
	bool counted = page_table_top(p->pt, first, &leaf) && leaf;
	if (counted)
		engine_attempt_peak(p->eng);
	page_table_pop(p->pt, first, 1, pages_gone, p);
	if (counted)
		engine_attempt_normal(p->eng);
	page_table_pop(p->pt, first + 1, n - 1, pages_gone, p);
}

/* Exact: a page mapped again changes owner instead of being counted
   twice (the kernel replaced it); the replaced pages count as freed and
   the new ones as allocated, in B-time too, and one snapshot attempt
   follows the whole call. */
static void
record_exact(struct paging *p, uint64_t first, uint64_t n,
	     uint32_t leaf)
{
	if (!n)
		return;
	uint64_t replaced = page_table_count_owned(p->pt, first, n);
	page_table_replace(p->pt, first, n, leaf, pages_gone, p);
	if (leaf)
		engine_account_heap(p->eng, leaf, (int64_t)(n * PAGE_SIZE));
	if (leaf || replaced)
		engine_attempt_normal(p->eng);
}

/* Exact: an unmap is one deallocation of all its counted pages: one peak
   check before, one snapshot attempt after, instead of Massif's snapshot
   after the first page that shows only 4096 bytes gone. */
static void
remove_exact(struct paging *p, uint64_t first, uint64_t n)
{
	if (!n)
		return;
	bool counted = page_table_count_owned(p->pt, first, n) != 0;
	if (counted)
		engine_attempt_peak(p->eng);
	page_table_pop(p->pt, first, n, pages_gone, p);
	if (counted)
		engine_attempt_normal(p->eng);
}

static void
record(struct paging *p, uint64_t first, uint64_t n, uint32_t leaf)
{
	if (p->compat)
		record_compat(p, first, n, leaf);
	else
		record_exact(p, first, n, leaf);
}

static void
unrecord(struct paging *p, uint64_t first, uint64_t n)
{
	if (p->compat)
		remove_compat(p, first, n);
	else
		remove_exact(p, first, n);
}

static uint32_t
leaf_of(struct paging *p, const struct ht_event *ev)
{
	return engine_page_leaf(p->eng, ev);
}

/* Exact: a moving mremap is one change, from the mapping at its old
   place to the mapping at its new one. As under Massif (below): a peak
   check first when counted pages leave (the move takes them away before
   it puts them back), every old page freed and every new page allocated
   in B-time (old + new pages, Massif's total), all the new pages owned by
   the mremap's stack. Unlike Massif, one snapshot attempt follows the
   whole call, so no snapshot shows the old pages gone and the new ones
   not there yet. The leaf is made after the peak check, so that the
   peak's tree has no entry for the mremap yet (Massif adds it when it
   records the new pages). */
static void
move_exact(struct paging *p, const struct ht_event *ev,
	   uint64_t from, uint64_t old_n, uint64_t to, uint64_t new_n)
{
	bool counted = old_n &&
		       page_table_count_owned(p->pt, from, old_n) != 0;
	if (counted)
		engine_attempt_peak(p->eng);
	if (old_n)
		page_table_pop(p->pt, from, old_n, pages_gone, p);
	uint32_t leaf = leaf_of(p, ev);
	bool replaced = new_n &&
			page_table_count_owned(p->pt, to, new_n) != 0;
	if (new_n) {
		page_table_replace(p->pt, to, new_n, leaf, pages_gone,
				   p);
		if (leaf)
			engine_account_heap(p->eng, leaf,
					     (int64_t)(new_n * PAGE_SIZE));
	}
	if (counted || replaced || (leaf && new_n))
		engine_attempt_normal(p->eng);
}

/* mremap (§6): shrinking removes the tail; growing in place records the
   extension; a move is Valgrind's copy (ms_copy_mem_remap: remove the
   old pages, the first with a peak check and a snapshot attempt after
   it, then record as many at the new place under the mremap's stack,
   with a snapshot attempt after the last), then the extension, then the
   removal of the old range again (a no-op unless the move also shrank;
   its first page is gone already, so no snapshot). The mremap's tree
   entry is made only when the new pages are recorded, after the
   snapshot between. Lengths are whole pages, as the kernel rounds them. */
static void
do_mremap(struct paging *p, const struct ht_event *ev)
{
	uint64_t from = page_of(ev->old_addr), to = page_of(ev->addr);
	uint64_t old_n = pages_in(ev->old_size), new_n = pages_in(ev->size);
	uint64_t common = old_n < new_n ? old_n : new_n;

	if (from == to) {
		if (new_n < old_n)
			unrecord(p, from + new_n, old_n - new_n);
		else if (new_n > old_n)
			record(p, from + old_n, new_n - old_n,
			       leaf_of(p, ev));
		return;
	}
	if (!p->compat) {
		move_exact(p, ev, from, old_n, to, new_n);
		return;
	}
	unrecord(p, from, common);
	uint32_t leaf = leaf_of(p, ev);
	record(p, to, common, leaf);
	if (new_n > old_n)
		record(p, to + old_n, new_n - old_n, leaf);
	unrecord(p, from, old_n);
}

/* brk moved from A to B. Massif (ms_new_mem_brk, ms_die_mem_brk) acts
   only when the page of the old last byte differs from the page of the
   new one, and then records or removes page(hi - 1) - page(lo - 1) bytes
   from pagedown(lo), lo and hi being the lower and higher break. For an
   unaligned lo that range starts at the page already counted, so growth
   re-records it (double counting) and the last new page is missed, and a
   shrink removes the still-used page and leaves the freed last one.
   Exact: the pages wholly or partly below the break are counted, so
   growth records [pageup(A), pageup(B)) and a shrink removes
   [pageup(B), pageup(A)). */
static void
do_brk(struct paging *p, const struct ht_event *ev)
{
	uint64_t a = ev->old_addr, b = ev->addr;
	uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
	uint64_t first, n;

	if (a == b)
		return;
	if (p->compat) {
		if (page_of(lo - 1) == page_of(hi - 1))
			return;
		first = page_of(lo);
		n = page_of(hi - 1) - page_of(lo - 1);
	} else {
		first = pages_in(lo);
		n = pages_in(hi) - first;
	}
	if (b > a)
		record(p, first, n, leaf_of(p, ev));
	else
		unrecord(p, first, n);
}

void
pages_feed(struct page_table *pt, bool compat, const struct ht_event *ev,
	   const struct engine_hooks *eng)
{
	struct paging call = { .pt = pt, .eng = eng, .compat = compat };
	struct paging *p = &call;

	switch (ev->kind) {
	case HT_EV_MMAP:
		record(p, page_of(ev->addr), pages_in(ev->size),
		       leaf_of(p, ev));
		break;
	case HT_EV_MUNMAP:
		unrecord(p, page_of(ev->addr), pages_in(ev->size));
		break;
	case HT_EV_MREMAP:
		do_mremap(p, ev);
		break;
	case HT_EV_BRK:
		do_brk(p, ev);
		break;
	default:
		break;
	}
}
