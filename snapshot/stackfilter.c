/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Massif's stack filter: which frames of a captured stack become the
   allocation's path in the tree. Each code address is classified once
   (alloc-fn, ignore-fn, main, below main) and cached, and each distinct
   raw stack is filtered and looked up in the tree once and remembered with
   its leaf, so an event from a stack seen before costs one hash of its
   frames and one comparison, whatever its depth and the symbolizer's
   cost. */
#include "snap_priv.h"

#include <stdlib.h>
#include <string.h>

#include "common/synthframe.h"
#include "common/xalloc.h"

enum {
	PC_KNOWN = 1,      /* classified */
	PC_NAMED = 2,      /* a symbol covers it */
	PC_ALLOC_FN = 4,   /* in the alloc-fn list */
	PC_IGNORE_FN = 8,  /* in the ignore-fn list */
	PC_MAIN = 16,      /* main */
	PC_BELOW_MAIN = 32, /* libc's start-up code that calls main */
	PC_PYTHON = 64      /* a Python frame (common/synthframe.h) */
};

/* Massif 3.19's built-in alloc-fns on Linux; --alloc-fn adds to them. */
static const char *const default_alloc_fns[] = {
	"malloc",
	"__builtin_new",
	"operator new(unsigned)",
	"operator new(unsigned long)",
	"__builtin_vec_new",
	"operator new[](unsigned)",
	"operator new[](unsigned long)",
	"calloc",
	"realloc",
	"memalign",
	"posix_memalign",
	"valloc",
	"operator new(unsigned, std::nothrow_t const&)",
	"operator new[](unsigned, std::nothrow_t const&)",
	"operator new(unsigned long, std::nothrow_t const&)",
	"operator new[](unsigned long, std::nothrow_t const&)",
	/* Not in Massif 3.19's list, yet never in its trees either: under
	   Valgrind the aligned operators are replaced and so are frame 0.
	   Traced natively they are callers of aligned_alloc, so stripping
	   them keeps our trees equal to Massif's. */
	"operator new(unsigned long, std::align_val_t)",
	"operator new[](unsigned long, std::align_val_t)",
	"operator new(unsigned long, std::align_val_t, std::nothrow_t const&)",
	"operator new[](unsigned long, std::align_val_t, std::nothrow_t const&)",
};

void
stack_filter_init(struct stack_filter *f, const struct ht_options *opt,
		  const struct ht_symbolizer *sym)
{
	memset(f, 0, sizeof(*f));
	f->opt = opt;
	f->sym = sym;
	u64map_init(&f->pc_class);
	f->path = ht_xcalloc(opt->depth, sizeof(*f->path));
}

void
stack_filter_fini(struct stack_filter *f)
{
	u64map_fini(&f->pc_class);
	free(f->path);
	free(f->memo);
	free(f->pool);
	memset(f, 0, sizeof(*f));
}

void
stack_filter_copy(struct stack_filter *dst, const struct stack_filter *src)
{
	*dst = *src;
	u64map_copy(&dst->pc_class, &src->pc_class);
	dst->path = ht_xcalloc(src->opt->depth, sizeof(*dst->path));
	if (src->memo)
		dst->memo = ht_xmemdup_array(src->memo, src->memo_mask + 1,
					     src->memo_mask + 1,
					     sizeof(*src->memo));
	dst->pool = ht_xmemdup_array(src->pool, src->n_pool, src->n_pool,
				     sizeof(*src->pool));
	dst->cap_pool = src->n_pool;
}

static bool
in_list(const char *name, char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return true;
	return false;
}

static bool
is_alloc_fn(const struct ht_options *opt, const char *name)
{
	size_t n = sizeof(default_alloc_fns) / sizeof(*default_alloc_fns);
	return in_list(name, (char *const *)default_alloc_fns, n) ||
	       in_list(name, opt->alloc_fns, opt->n_alloc_fns);
}

static unsigned
classify(struct stack_filter *f, uint64_t pc)
{
	bool fresh;
	uint64_t *slot = u64map_slot(&f->pc_class, pc, &fresh);
	if (!fresh)
		return (unsigned)*slot;
	unsigned c = synth_frame_is(pc) ? PC_KNOWN | PC_PYTHON : PC_KNOWN;
	const char *name = f->sym->function_name(f->sym->ctx, pc);
	if (name) {
		c |= PC_NAMED;
		if (is_alloc_fn(f->opt, name))
			c |= PC_ALLOC_FN;
		if (in_list(name, f->opt->ignore_fns, f->opt->n_ignore_fns))
			c |= PC_IGNORE_FN;
		if (strcmp(name, "main") == 0)
			c |= PC_MAIN;
		else if (ht_is_below_main(name))
			c |= PC_BELOW_MAIN;
	}
	*slot = c;
	return c;
}

/* Position of the frame the below-main cut keeps last: the outermost main,
   or failing that the innermost below-main frame, or the last frame. */
static unsigned
main_or_below_main(struct stack_filter *f, const uint64_t *pcs, unsigned n)
{
	unsigned mbm = n - 1;
	unsigned i = n;
	while (i-- > 0) {
		unsigned c = classify(f, pcs[i]);
		if (c & PC_MAIN)
			return i;
		if (c & PC_BELOW_MAIN)
			mbm = i;
	}
	return mbm;
}

/* The ignore test looks at the first remaining frame that has a name,
   and at the innermost Python frame: the interpreter's C functions stand
   between a Python function and the allocations its lines make, so
   those are the Python function's direct allocations. */
static bool
is_ignored(struct stack_filter *f, const uint64_t *pcs, unsigned n)
{
	bool named_seen = false;

	if (!f->opt->n_ignore_fns)
		return false;
	for (unsigned i = 0; i < n; i++) {
		unsigned c = classify(f, pcs[i]);
		if (!named_seen && (c & PC_NAMED)) {
			if (c & PC_IGNORE_FN)
				return true;
			named_seen = true;
		}
		if (c & PC_PYTHON)
			return (c & PC_IGNORE_FN) != 0;
	}
	return false;
}

/* How many frames from the top the alloc-fn strip removes: the run of
   alloc-fn frames, as Massif's; and a Python frame that is an alloc-fn
   takes along the native frames above it (the interpreter running its
   lines, down to the C allocator), since those never are alloc-fns
   themselves and would otherwise hide it from the strip. */
static unsigned
alloc_fn_top(struct stack_filter *f, const uint64_t *pcs, unsigned npcs)
{
	unsigned top = 0;

	for (;;) {
		while (top < npcs && (classify(f, pcs[top]) & PC_ALLOC_FN))
			top++;
		unsigned py = top;
		while (py < npcs && !(classify(f, pcs[py]) & PC_PYTHON))
			py++;
		if (py == npcs || !(classify(f, pcs[py]) & PC_ALLOC_FN))
			return top;
		top = py + 1;
	}
}

unsigned
stack_filter_apply(struct stack_filter *f, const uint64_t *pcs, unsigned npcs,
		   bool drop_first, uint64_t *out)
{
	if (drop_first) {
		/* Frame 0 is inside the allocation function itself. */
		if (npcs <= 1)
			return 0;
		pcs++;
		npcs--;
	}
	if (!npcs)
		return 0;

	unsigned top = alloc_fn_top(f, pcs, npcs);
	unsigned n_sel = npcs - top;
	if (n_sel && is_ignored(f, pcs + top, n_sel))
		return 0;
	if (n_sel && !f->opt->show_below_main) {
		unsigned mbm = main_or_below_main(f, pcs, npcs);
		if (mbm < top)
			n_sel = 1; /* main itself was stripped as an alloc-fn */
		else
			n_sel -= npcs - mbm - 1;
	}
	if (n_sel > f->opt->depth)
		n_sel = f->opt->depth;
	if (top + n_sel > npcs)
		n_sel = npcs - top;
	memcpy(out, pcs + top, n_sel * sizeof(*out));
	return n_sel;
}

/* ---- The memo: raw stack -> leaf ----
   Keyed by every frame the filter may keep (all but frame 0 for an
   allocator call, all of them for a page-level call): the filter's
   answer depends on all the others (the below-main cut looks at the
   outermost). Entries are never removed one by one (tree nodes are never
   removed, so a leaf stays right); past MEMO_MAX_PCS remembered frames the
   memo starts over, which bounds it by a constant however many distinct
   stacks a program has, at the price of filtering them again. */

#define MEMO_MAX_PCS ((size_t)1 << 21) /* 16 MiB of frames */
#define MEMO_MIN_SLOTS 1024

/* Four independent multiply chains, so that a deep stack costs about a
   quarter of the multiplier latency per frame; then an avalanche. */
static uint64_t
stack_hash(const uint64_t *pcs, unsigned n)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t a = n, b = 0x243f6a8885a308d3ULL, c = 0x13198a2e03707344ULL,
		 d = 0xa4093822299f31d0ULL;
	unsigned i = 0;
	for (; i + 4 <= n; i += 4) {
		a = (a ^ pcs[i]) * k;
		b = (b ^ pcs[i + 1]) * k;
		c = (c ^ pcs[i + 2]) * k;
		d = (d ^ pcs[i + 3]) * k;
	}
	for (; i < n; i++)
		a = (a ^ pcs[i]) * k;
	uint64_t h = a ^ (b << 16 | b >> 48) ^ (c << 32 | c >> 32) ^
		     (d << 48 | d >> 16);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return h;
}

static struct stack_memo_slot *
memo_slot(const struct stack_filter *f, uint64_t h, const uint64_t *pcs,
	  unsigned n)
{
	for (size_t i = (size_t)h & f->memo_mask;; i = (i + 1) & f->memo_mask) {
		struct stack_memo_slot *s = &f->memo[i];
		if (!s->n || (s->hash == h && s->n == n &&
			      memcmp(f->pool + s->off, pcs,
				     n * sizeof(*pcs)) == 0))
			return s;
	}
}

static void
memo_reset(struct stack_filter *f, size_t slots)
{
	free(f->memo);
	f->memo = ht_xcalloc(slots, sizeof(*f->memo));
	f->memo_mask = slots - 1;
	f->memo_count = 0;
}

void
stack_filter_forget(struct stack_filter *f)
{
	if (!f->memo)
		return;
	memo_reset(f, MEMO_MIN_SLOTS);
	f->n_pool = 0;
}

/* Room for one more stack of N frames, at most half the slots used. */
static void
memo_make_room(struct stack_filter *f, unsigned n)
{
	if (f->n_pool && f->n_pool + n > MEMO_MAX_PCS) {
		memo_reset(f, f->memo_mask + 1);
		f->n_pool = 0;
	}
	if (!f->memo) {
		memo_reset(f, MEMO_MIN_SLOTS);
	} else if ((f->memo_count + 1) * 2 > f->memo_mask + 1) {
		struct stack_memo_slot *old = f->memo;
		size_t n_old = f->memo_mask + 1;
		f->memo = NULL;
		memo_reset(f, n_old * 2);
		for (size_t i = 0; i < n_old; i++) {
			if (!old[i].n)
				continue;
			size_t j = (size_t)old[i].hash & f->memo_mask;
			while (f->memo[j].n)
				j = (j + 1) & f->memo_mask;
			f->memo[j] = old[i];
			f->memo_count++;
		}
		free(old);
	}
	ht_xgrow((void **)&f->pool, &f->cap_pool, f->n_pool + n,
		 sizeof(*f->pool));
}

/* The memoised filter: KEY is the part of the raw stack the answer
   depends on (every frame the filter may keep). The site, when SITES is
   not NULL, is the whole stack's: the key leaves frame 0 out, and one
   call can reach several allocation functions (a wrapper tail-calling
   malloc or realloc), so a remembered site with another frame 0 is not
   this stack's. */
static uint32_t
memo_leaf(struct stack_filter *f, struct xtree *t, struct site_table *sites,
	  const uint64_t *pcs, unsigned npcs, bool drop_first, uint32_t *site)
{
	const uint64_t *key = drop_first ? pcs + 1 : pcs;
	unsigned n = drop_first ? npcs - 1 : npcs;
	uint64_t h = stack_hash(key, n);
	if (f->memo) {
		struct stack_memo_slot *s = memo_slot(f, h, key, n);
		if (s->n) {
			*site = s->site;
			/* a site is the node of its innermost frame */
			if (sites && drop_first &&
			    (!s->site || sites->nodes[s->site].pc != pcs[0]))
				*site = site_table_intern(sites, pcs, npcs);
			return s->leaf;
		}
	}
	unsigned k = stack_filter_apply(f, pcs, npcs, drop_first, f->path);
	uint32_t leaf = k ? xtree_insert(t, f->path, k) : 0;
	*site = sites ? site_table_intern(sites, pcs, npcs) : 0;
	memo_make_room(f, n);
	struct stack_memo_slot *s = memo_slot(f, h, key, n);
	*s = (struct stack_memo_slot){
		.hash = h, .off = (uint32_t)f->n_pool, .n = n, .leaf = leaf,
		.site = *site,
	};
	memcpy(f->pool + f->n_pool, key, n * sizeof(*key));
	f->n_pool += n;
	f->memo_count++;
	return leaf;
}

uint32_t
stack_filter_leaf(struct stack_filter *f, struct xtree *t,
		  struct site_table *sites, const uint64_t *pcs, unsigned npcs,
		  uint32_t *site)
{
	if (npcs <= 1) {
		/* only the allocation function: ignored */
		*site = site_table_intern(sites, pcs, npcs);
		return 0;
	}
	return memo_leaf(f, t, sites, pcs, npcs, true, site);
}

uint32_t
stack_filter_leaf_whole(struct stack_filter *f, struct xtree *t,
			const uint64_t *pcs, unsigned npcs)
{
	uint32_t site;
	if (!npcs)
		return 0;
	return memo_leaf(f, t, NULL, pcs, npcs, false, &site);
}
