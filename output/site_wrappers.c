/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wrapper detection (output/site_wrappers.h). A wrapper is told by its
   place in the stacks, not its name: it is the allocator's direct caller
   in (almost) every stack it appears in, and many functions call it. A
   function that allocates for itself and does other work has stacks in
   which it is not directly above the allocator; one called from one or
   two places is the place itself. */
#include "output/site_wrappers.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "output/site_name.h"

/* One site whose allocator's direct named caller is FN, called from CALLER
   (NULL: the stack ends at FN). */
struct direct_call {
	const char *fn;
	const struct sites_frame *caller;
};

static bool
frame_named(const char *fn)
{
	return strcmp(fn, "???") != 0 && strncmp(fn, "(below main)", 12) != 0;
}

/* Callers are told apart by name, unnamed ones by address. */
static int
caller_cmp(const struct sites_frame *a, const struct sites_frame *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	int c = strcmp(a->function, b->function);
	if (c || frame_named(a->function))
		return c;
	return (a->addr > b->addr) - (a->addr < b->addr);
}

static int
direct_call_cmp(const void *pa, const void *pb)
{
	const struct direct_call *a = pa, *b = pb;
	int c = strcmp(a->fn, b->fn);
	return c ? c : caller_cmp(a->caller, b->caller);
}

/* Who calls frame D of S, as a person reads the stack: the first named
   frame outward of it, unnamed ones passed over (a static helper between
   is part of the wrapper); else the next frame; NULL at the stack's end. */
static const struct sites_frame *
caller_of(const struct sites_site *s, size_t d)
{
	for (size_t k = d + 1; k < s->n_frames; k++)
		if (strcmp(s->frames[k].function, "???") != 0)
			return &s->frames[k];
	return d + 1 < s->n_frames ? &s->frames[d + 1] : NULL;
}

/* The direct callers of the allocator, one per site that has a named
   one, sorted by function then caller; returns their number. */
static size_t
direct_calls(const struct site_naming *nm, struct direct_call **out)
{
	const struct sites_file *sf = nm->sf;
	struct direct_call *v = ht_xcalloc(sf->n_sites + 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < sf->n_sites; i++) {
		const struct sites_site *s = &sf->sites[i];
		size_t d = site_alloc_depth(nm, s, false);
		/* unnamed frames (static functions of a stripped object)
		   name no site: the named frame outward of them would */
		while (d < s->n_frames &&
		       strcmp(s->frames[d].function, "???") == 0)
			d++;
		if (d >= s->n_frames)
			continue;
		const char *fn = s->frames[d].function;
		if (!frame_named(fn) || strcmp(fn, "main") == 0)
			continue;
		v[n].fn = fn;
		v[n].caller = caller_of(s, d);
		n++;
	}
	qsort(v, n, sizeof(*v), direct_call_cmp);
	*out = v;
	return n;
}

/* A function called from enough distinct callers to be a wrapper, and
   how many sites hold it directly above the allocator and at all. */
struct candidate {
	const char *fn;
	size_t direct, appears;
	size_t last_site; /* +1; the site last counted in APPEARS */
};

static int
candidate_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct candidate *)elem)->fn);
}

/* The functions of CALLS[0..N) (sorted) with enough distinct callers,
   sorted by name, into *OUT; returns their number. */
static size_t
candidates_of(const struct direct_call *calls, size_t n,
	      struct candidate **out)
{
	struct candidate *c = ht_xcalloc(n + 1, sizeof(*c));
	size_t nc = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i, callers = 0;
		for (; j < n && strcmp(calls[j].fn, calls[i].fn) == 0; j++)
			if (calls[j].caller &&
			    (j == i || caller_cmp(calls[j].caller,
						  calls[j - 1].caller)))
				callers++;
		if (callers >= SITE_WRAPPER_MIN_CALLERS)
			c[nc++] = (struct candidate){ .fn = calls[i].fn,
						      .direct = j - i };
		i = j;
	}
	*out = c;
	return nc;
}

/* Count in each candidate the sites whose stacks hold it. */
static void
count_appearances(const struct sites_file *sf, struct candidate *c, size_t nc)
{
	for (size_t i = 0; i < sf->n_sites; i++) {
		const struct sites_site *s = &sf->sites[i];
		for (size_t k = 0; k < s->n_frames; k++) {
			struct candidate *hit = bsearch(s->frames[k].function,
							c, nc, sizeof(*c),
							candidate_key_cmp);
			if (hit && hit->last_site != i + 1) {
				hit->last_site = i + 1;
				hit->appears++;
			}
		}
	}
}

size_t
site_wrappers_find(const struct site_naming *nm, const char ***out)
{
	*out = NULL;
	struct direct_call *calls;
	size_t n = direct_calls(nm, &calls);
	struct candidate *c;
	size_t nc = candidates_of(calls, n, &c);
	free(calls);
	count_appearances(nm->sf, c, nc);
	size_t nw = 0;
	for (size_t i = 0; i < nc; i++) {
		if (c[i].direct * 100 <
		    c[i].appears * SITE_WRAPPER_MIN_DIRECT_PERCENT)
			continue;
		*out = ht_xreallocarray(*out, nw + 1, sizeof(**out));
		(*out)[nw++] = c[i].fn; /* in name order, as C is */
	}
	free(c);
	return nw;
}

static int
wrapper_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

void
site_naming_init(struct site_naming *nm, const struct sites_file *sf,
		 const char *desc, char *const *alloc_fns, size_t n,
		 bool detect)
{
	*nm = (struct site_naming){ .sf = sf, .desc = desc,
				    .alloc_fns = alloc_fns,
				    .n_alloc_fns = n };
	if (detect && sf)
		nm->n_wrappers = site_wrappers_find(nm, &nm->wrappers);
}

static int
name_sort_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void
site_naming_add_wrappers(struct site_naming *nm,
			 const struct site_naming *from)
{
	for (size_t i = 0; i < from->n_wrappers; i++) {
		const char *w = from->wrappers[i];
		if (nm->n_wrappers && bsearch(w, nm->wrappers, nm->n_wrappers,
					      sizeof(*nm->wrappers), wrapper_key_cmp))
			continue;
		nm->wrappers = ht_xreallocarray(nm->wrappers,
						nm->n_wrappers + 1,
						sizeof(*nm->wrappers));
		nm->wrappers[nm->n_wrappers++] = w;
		qsort(nm->wrappers, nm->n_wrappers, sizeof(*nm->wrappers),
		      name_sort_cmp);
	}
}
