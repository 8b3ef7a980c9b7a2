/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Massif's stack filter: which frames of a captured stack become the
   allocation's path in the tree. Each code address is classified once
   (alloc-fn, ignore-fn, main, below main) and cached, so the per-event cost
   is a few map look-ups whatever the symbolizer costs. */
#include "snap_priv.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

enum {
	PC_KNOWN = 1,      /* classified */
	PC_NAMED = 2,      /* a symbol covers it */
	PC_ALLOC_FN = 4,   /* in the alloc-fn list */
	PC_IGNORE_FN = 8,  /* in the ignore-fn list */
	PC_MAIN = 16,      /* main */
	PC_BELOW_MAIN = 32 /* libc's start-up code that calls main */
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
}

void
stack_filter_fini(struct stack_filter *f)
{
	u64map_fini(&f->pc_class);
	free(f->scratch);
	memset(f, 0, sizeof(*f));
}

void
stack_filter_copy(struct stack_filter *dst, const struct stack_filter *src)
{
	*dst = *src;
	u64map_copy(&dst->pc_class, &src->pc_class);
	dst->scratch = NULL;
	dst->cap_scratch = 0;
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
	unsigned c = PC_KNOWN;
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

/* The ignore test looks at the first remaining frame that has a name. */
static bool
is_ignored(struct stack_filter *f, const uint64_t *pcs, unsigned n)
{
	if (!f->opt->n_ignore_fns)
		return false;
	for (unsigned i = 0; i < n; i++) {
		unsigned c = classify(f, pcs[i]);
		if (c & PC_NAMED)
			return (c & PC_IGNORE_FN) != 0;
	}
	return false;
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

	unsigned top = 0;
	while (top < npcs && (classify(f, pcs[top]) & PC_ALLOC_FN))
		top++;
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
