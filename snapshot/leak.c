/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Leak classification with memcheck's rules (Valgrind 3.19,
   memcheck/mc_leakcheck.c: the rules learnt from reading it and checked
   against memcheck runs, no code taken), for a tracer that sees the target
   only through a memory reader.

   Why memcheck's rules, to the letter: users compare our verdicts with
   memcheck's, so every choice that changes a count follows it, including
   its oddities:
   - A word is a reference when it lies in [start, start+size) of a block,
     a zero-sized block covering [start, start+1) (else malloc(0) would
     always be "definitely lost"). A pointer one past the end is not a
     reference to that block (it may be the start of the next one).
   - From the roots (and registers), a start pointer makes a block
     reachable, an interior pointer only possibly reached, unless one of
     the heuristics recognises the interior pointer (then it counts as a
     start pointer). A block's contents are scanned with the strength of
     the block: whatever a possibly-reached block points to, even by its
     start, is at most possibly reached. A possible block later found by a
     definite start pointer is upgraded and scanned again, so the final
     kinds do not depend on the scanning order.
   - What stays unreached is split into cliques in address order: the
     first unreached block (lowest address) gathers every unreached block
     it reaches, by start or interior pointer alike, as indirectly lost;
     if it reaches an earlier clique leader, that clique is merged into
     the new one; blocks already gathered by an earlier leader are not
     looked at again. So in a cycle of unreached blocks the lowest address
     leads; an unreached block pointing at that leader takes the whole
     cycle into its own clique, whatever its address, but one pointing
     only at another member of the cycle stays a clique alone.
   - The heuristic a block was reached by is remembered even when the
     block ends up only possibly lost (its prior was possible): memcheck's
     summary then counts it under "of which reachable via heuristic" too.
     We keep that, so the totals match.
   - Default heuristics: all four (--leak-check-heuristics=all is 3.19's
     default). multipleinheritance needs to know what a vtable is (a
     readable file mapping pointing into executable ones): the caller
     says, through is_vtable; without it that heuristic never fires.

   Where we cannot follow memcheck: it scans only words its shadow memory
   calls addressable and defined, and roots are every client writable
   mapping except its own heap; we have no definedness bits, so every
   readable word of the given roots and blocks counts. Uninitialised
   garbage can thus keep a block alive where memcheck would call it lost
   (the conservative side). Which ranges are roots is the caller's call.

   Trade-offs: blocks are sorted once (a radix sort by address); memcheck looks every
   scanned word up by binary search over all blocks, which made the
   lookup most of the classification's time on a 65 MB perl heap (14
   dependent cache misses per word). Here a page directory narrows it
   first: the blocks are cut into regions of nearby pages, and each page
   of a region knows the first block that reaches into it, so a word is
   one region search among a handful, then a search among the few blocks
   of its page, in an array of start addresses alone. The mark stack is an explicit array
   with a pending flag (each block on it at most once, no recursion, so
   millions of chained blocks do not overflow the C stack). Memory is read
   in chunks of up to 64 KiB through the callback (one process_vm_readv
   each, for the tracer); a short read is resumed where it stopped, and a
   read that gets nothing skips to the next page, as memcheck skips
   unreadable pages. Blocks are read one by one, one call each:
   batching neighbouring small blocks is left for when it is measured. */
#include "leak.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/kvsort.h"
#include "common/xalloc.h"

#define WORD 8u
#define PAGE 4096u
#define CHUNK ((size_t)64 << 10)
#define NO_CLIQUE ((size_t)-1)

/* Per block, in address order. UNREACHED is memcheck's Unreached: the
   state of definitely lost blocks at the end. */
#define UNREACHED LEAK_DEFINITE

struct sblock {
	uint64_t lo, hi; /* [lo, hi): what references it (hi > lo) */
	uint64_t size;
	size_t idx; /* in the caller's array */
	uint64_t ind_bytes, ind_blocks;
	size_t parent; /* sorted index */
	unsigned char state, pending, heur;
};

/* Pages [first_page, first_page + npages) holding blocks [lo_idx,
   hi_idx) of the sorted array; first[k] is the first of them whose end
   lies past page k's start. */
struct region {
	uint64_t first_page, npages;
	size_t lo_idx, hi_idx;
	uint32_t *first;
};

/* A gap of more pages than this between blocks starts a new region. */
#define REGION_GAP_PAGES 256u

struct lc {
	const struct leak_input *in;
	struct sblock *b;
	uint64_t *los; /* b[i].lo, compact for the searches */
	struct region *regions;
	size_t nregions;
	size_t n;
	size_t *stack;
	size_t top; /* number of entries */
	unsigned char *buf;
	uint64_t scanned, unreadable;
	bool in_roots; /* scanning the roots (allocator_pointer applies) */
};

/* The block whose reference range holds P, or NO_CLIQUE. */
static size_t
find(const struct lc *lc, uint64_t p)
{
	uint64_t page = p / PAGE;
	size_t ra = 0, rb = lc->nregions;
	while (ra < rb) { /* the first region ending past PAGE */
		size_t m = ra + (rb - ra) / 2;
		const struct region *r = &lc->regions[m];
		if (r->first_page + r->npages <= page)
			ra = m + 1;
		else
			rb = m;
	}
	if (ra == lc->nregions || lc->regions[ra].first_page > page)
		return NO_CLIQUE;
	const struct region *r = &lc->regions[ra];
	uint64_t k = page - r->first_page;
	size_t lo = r->first[k];
	size_t hi = k + 1 < r->npages ? (size_t)r->first[k + 1] + 1 : r->hi_idx;
	if (hi > r->hi_idx)
		hi = r->hi_idx;
	while (lo < hi) { /* the first block with lo > p */
		size_t mid = lo + (hi - lo) / 2;
		if (lc->los[mid] <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NO_CLIQUE;
	const struct sblock *s = &lc->b[lo - 1];
	return p >= s->lo && p < s->hi ? lo - 1 : NO_CLIQUE;
}

/* The page directory of the sorted blocks (see the top). */
static void
regions_build(struct lc *lc)
{
	size_t cap = 0;
	for (size_t i = 0; i < lc->n;) {
		uint64_t first_page = lc->b[i].lo / PAGE;
		uint64_t end_page = (lc->b[i].hi - 1) / PAGE + 1;
		size_t j = i + 1;
		while (j < lc->n && lc->b[j].lo / PAGE <= end_page +
							 REGION_GAP_PAGES) {
			uint64_t e = (lc->b[j].hi - 1) / PAGE + 1;
			if (e > end_page)
				end_page = e;
			j++;
		}
		ht_xgrow((void **)&lc->regions, &cap, lc->nregions + 1,
			 sizeof(*lc->regions));
		struct region *r = &lc->regions[lc->nregions++];
		*r = (struct region){
			.first_page = first_page, .npages = end_page - first_page,
			.lo_idx = i, .hi_idx = j,
		};
		r->first = ht_xcalloc(r->npages, sizeof(*r->first));
		size_t b = i;
		for (uint64_t k = 0; k < r->npages; k++) {
			uint64_t start = (first_page + k) * PAGE;
			while (b + 1 < j && lc->b[b].hi <= start)
				b++;
			r->first[k] = (uint32_t)b;
		}
		i = j;
	}
}

static void
regions_free(struct lc *lc)
{
	for (size_t i = 0; i < lc->nregions; i++)
		free(lc->regions[i].first);
	free(lc->regions);
}

static void
push(struct lc *lc, size_t i)
{
	if (lc->b[i].pending)
		return;
	lc->b[i].pending = 1;
	lc->stack[lc->top++] = i;
}

static bool
read_word(const struct lc *lc, uint64_t addr, uint64_t *v)
{
	return lc->in->read(lc->in->ctx, addr, v, sizeof(*v)) ==
	       (ssize_t)sizeof(*v);
}

static bool
vtable_like(const struct lc *lc, uint64_t v)
{
	return v % WORD == 0 && v >= PAGE && lc->in->is_vtable(lc->in->ctx, v);
}

/* The heuristic that recognises P, an interior pointer into block S, in
   the set of the input (memcheck tries them in this order). */
static enum leak_heuristic
heuristic(const struct lc *lc, uint64_t p, const struct sblock *s)
{
	unsigned set = lc->in->heuristics;
	uint64_t w0, w1;

	if ((set & LEAK_HEUR_BIT(LEAK_HEUR_STDSTRING)) && p == s->lo + 3 * WORD &&
	    read_word(lc, s->lo + WORD, &w1) && 3 * WORD + w1 + 1 == s->size &&
	    read_word(lc, s->lo, &w0) && w0 <= w1)
		return LEAK_HEUR_STDSTRING; /* length, capacity, refcount, chars */
	if ((set & LEAK_HEUR_BIT(LEAK_HEUR_LENGTH64)) && p == s->lo + WORD &&
	    read_word(lc, s->lo, &w0) && w0 > 0 && s->size - WORD == w0)
		return LEAK_HEUR_LENGTH64; /* sqlite's size prefix */
	if ((set & LEAK_HEUR_BIT(LEAK_HEUR_NEWARRAY)) && p == s->lo + WORD &&
	    read_word(lc, s->lo, &w0) && w0 > 0 && (s->size - WORD) % w0 == 0)
		return LEAK_HEUR_NEWARRAY; /* new[] element count prefix */
	if ((set & LEAK_HEUR_BIT(LEAK_HEUR_MULTIPLEINHERITANCE)) &&
	    lc->in->is_vtable && p % WORD == 0 && read_word(lc, p, &w1) &&
	    w1 % WORD == 0 && w1 >= PAGE && read_word(lc, s->lo, &w0) &&
	    vtable_like(lc, w1) && vtable_like(lc, w0))
		return LEAK_HEUR_MULTIPLEINHERITANCE; /* secondary vptr */
	return LEAK_HEUR_NONE;
}

/* P, found in a root or in a block reached from the roots: upgrade what
   it points to (unreached -> possible/reachable, possible -> reachable);
   PRIOR_DEFINITE when what held P is a root or a reachable block. */
static void
reach(struct lc *lc, uint64_t p, bool prior_definite)
{
	size_t i = find(lc, p);
	if (i == NO_CLIQUE)
		return;
	struct sblock *s = &lc->b[i];
	if (s->state == LEAK_REACHABLE) {
		if (s->heur != LEAK_HEUR_NONE && p == s->lo)
			s->heur = LEAK_HEUR_NONE;
		return;
	}
	bool start = p == s->lo;
	if (!start && lc->in_roots && lc->in->allocator_pointer &&
	    lc->in->allocator_pointer(lc->in->ctx, p, s->lo, s->size))
		return;
	if (!start && lc->in->heuristics) {
		s->heur = (unsigned char)heuristic(lc, p, s);
		start = s->heur != LEAK_HEUR_NONE;
	}
	if (start && prior_definite) {
		s->state = LEAK_REACHABLE;
		push(lc, i);
	} else if (s->state == UNREACHED) {
		s->state = LEAK_POSSIBLE;
		push(lc, i);
	}
}

/* P, found in an unreached block CUR of the clique led by LEADER: an
   unreached block it points into (start or interior alike) joins the
   clique, with the clique it led if any. */
static void
gather(struct lc *lc, uint64_t p, size_t leader, size_t cur)
{
	size_t i = find(lc, p);
	if (i == NO_CLIQUE || i == leader)
		return;
	struct sblock *s = &lc->b[i];
	if (s->state != UNREACHED)
		return;
	push(lc, i);
	lc->b[leader].ind_bytes += s->size + s->ind_bytes;
	lc->b[leader].ind_blocks += 1 + s->ind_blocks;
	s->ind_bytes = s->ind_blocks = 0;
	s->state = LEAK_INDIRECT;
	s->parent = cur;
}

/* Every readable aligned word of [START, START+LEN) is a candidate
   pointer: for reach() when LEADER is NO_CLIQUE, else for gather(). */
static void
scan(struct lc *lc, uint64_t start, uint64_t len, bool prior_definite,
     size_t leader, size_t cur)
{
	uint64_t last = start + len < start ? UINT64_MAX : start + len;
	uint64_t p = (start + WORD - 1) & ~(uint64_t)(WORD - 1);
	uint64_t end = last & ~(uint64_t)(WORD - 1);
	if (p < start) /* rounding up wrapped */
		return;
	while (p < end) {
		size_t want = end - p < CHUNK ? (size_t)(end - p) : CHUNK;
		const unsigned char *data =
			lc->in->view ? lc->in->view(lc->in->ctx, p, want) : NULL;
		ssize_t got = (ssize_t)want;
		if (!data) {
			got = lc->in->read(lc->in->ctx, p, lc->buf, want);
			data = lc->buf;
		}
		size_t words = got > 0 ? (size_t)got / WORD : 0;
		for (size_t k = 0; k < words; k++) {
			uint64_t v;
			memcpy(&v, data + k * WORD, sizeof(v));
			if (leader == NO_CLIQUE)
				reach(lc, v, prior_definite);
			else
				gather(lc, v, leader, cur);
		}
		lc->scanned += words * WORD;
		p += words * WORD;
		if (words == 0) { /* unreadable at p: skip its page */
			uint64_t next = (p & ~(uint64_t)(PAGE - 1)) + PAGE;
			if (next < p || next > end)
				next = end;
			lc->unreadable += next - p;
			p = next;
		}
	}
}

static void
drain(struct lc *lc, size_t leader)
{
	while (lc->top > 0) {
		size_t i = lc->stack[--lc->top];
		struct sblock *s = &lc->b[i];
		s->pending = 0;
		scan(lc, s->lo, s->size, s->state != LEAK_POSSIBLE, leader,
		     leader == NO_CLIQUE ? NO_CLIQUE : i);
	}
}

void
leak_classify(const struct leak_input *in, struct leak_totals *totals)
{
	struct lc lc = {.in = in, .n = in->nblocks};
	if (totals)
		memset(totals, 0, sizeof(*totals));
	lc.b = ht_xcalloc(lc.n ? lc.n : 1, sizeof(*lc.b));
	lc.stack = ht_xcalloc(lc.n ? lc.n : 1, sizeof(*lc.stack));
	lc.buf = ht_xmalloc(CHUNK);
	struct ht_kv *order = ht_xcalloc(lc.n ? lc.n : 1, sizeof(*order));
	for (size_t i = 0; i < lc.n; i++)
		order[i] = (struct ht_kv){ .key = in->blocks[i].addr, .val = i };
	ht_kv_sort(order, lc.n);
	for (size_t i = 0; i < lc.n; i++) {
		const struct leak_block *blk = &in->blocks[order[i].val];
		struct sblock *s = &lc.b[i];
		s->lo = blk->addr;
		s->size = blk->size;
		s->hi = blk->addr + (blk->size ? blk->size : 1);
		if (s->hi < s->lo)
			s->hi = UINT64_MAX;
		s->idx = order[i].val;
		s->parent = NO_CLIQUE;
		s->state = UNREACHED;
	}
	free(order);
	lc.los = ht_xcalloc(lc.n ? lc.n : 1, sizeof(*lc.los));
	for (size_t i = 0; i < lc.n; i++)
		lc.los[i] = lc.b[i].lo;
	regions_build(&lc);

	/* The roots, then the registers, then all they lead to. */
	lc.in_roots = true;
	for (size_t r = 0; r < in->nroots; r++)
		scan(&lc, in->roots[r].start, in->roots[r].len, true, NO_CLIQUE,
		     NO_CLIQUE);
	for (size_t r = 0; r < in->nregs; r++)
		reach(&lc, in->regs[r], true);
	lc.in_roots = false;
	drain(&lc, NO_CLIQUE);

	/* The cliques of what is left, leaders in address order. */
	for (size_t i = 0; i < lc.n; i++) {
		if (lc.b[i].state != UNREACHED)
			continue;
		push(&lc, i);
		drain(&lc, i);
	}

	for (size_t i = 0; i < lc.n; i++) {
		const struct sblock *s = &lc.b[i];
		struct leak_block *blk = &in->blocks[s->idx];
		blk->kind = (enum leak_kind)s->state;
		blk->heuristic = (enum leak_heuristic)s->heur;
		blk->indirect_bytes = s->state == UNREACHED ? s->ind_bytes : 0;
		blk->indirect_blocks = s->state == UNREACHED ? s->ind_blocks : 0;
		blk->parent = s->parent == NO_CLIQUE ? LEAK_NO_BLOCK
						     : lc.b[s->parent].idx;
		if (!totals)
			continue;
		totals->bytes[s->state] += s->size;
		totals->blocks[s->state]++;
		if (s->heur != LEAK_HEUR_NONE) {
			totals->heur_bytes[s->heur] += s->size;
			totals->heur_blocks[s->heur]++;
		}
	}
	if (totals) {
		totals->scanned_bytes = lc.scanned;
		totals->unreadable_bytes = lc.unreadable;
	}
	regions_free(&lc);
	free(lc.los);
	free(lc.buf);
	free(lc.stack);
	free(lc.b);
}

const char *
leak_kind_name(enum leak_kind kind)
{
	switch (kind) {
	case LEAK_REACHABLE:
		return "still reachable";
	case LEAK_POSSIBLE:
		return "possibly lost";
	case LEAK_INDIRECT:
		return "indirectly lost";
	case LEAK_DEFINITE:
		return "definitely lost";
	default:
		return "?";
	}
}

const char *
leak_heuristic_name(enum leak_heuristic h)
{
	switch (h) {
	case LEAK_HEUR_NONE:
		return "none";
	case LEAK_HEUR_STDSTRING:
		return "stdstring";
	case LEAK_HEUR_LENGTH64:
		return "length64";
	case LEAK_HEUR_NEWARRAY:
		return "newarray";
	case LEAK_HEUR_MULTIPLEINHERITANCE:
		return "multipleinheritance";
	default:
		return "?";
	}
}
