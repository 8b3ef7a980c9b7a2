/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program's own allocation wrappers (jq's jv_mem_alloc, sqlite's
   sqlite3Malloc, xmalloc, g_malloc), found in the stacks of one profile
   so that its sites are named by the wrappers' callers, the frames a
   person would look for (docs/views.md, "Site names"); and the naming of
   a profile's sites set up with them. */
#ifndef HT_OUTPUT_SITE_WRAPPERS_H
#define HT_OUTPUT_SITE_WRAPPERS_H

#include <stdbool.h>
#include <stddef.h>

#include "output/site_name.h"

/* The fewest distinct callers, and the least share of its stacks in which
   it calls the allocator itself, that make a function a wrapper. */
#define SITE_WRAPPER_MIN_CALLERS 3
#define SITE_WRAPPER_MIN_DIRECT_PERCENT 90

/* The wrappers of NM's sites, sorted by strcmp, into *OUT (malloc'd; the
   names are NM's file's): the named functions, main and start-up code
   aside, that call the allocator directly (the first named frame outside
   the allocator by NM, wrappers not counted; unnamed frames between are
   passed over) from at least SITE_WRAPPER_MIN_CALLERS distinct callers
   (each told by its first named frame), and do so in at least
   SITE_WRAPPER_MIN_DIRECT_PERCENT of the sites whose stacks hold them.
   Returns their number; *OUT is NULL for none. */
size_t site_wrappers_find(const struct site_naming *nm, const char ***out);

/* *NM for SF and DESC with the read-time --alloc-fn names ALLOC_FNS[0..N)
   (borrowed, as SF and DESC are), finding SF's wrappers when DETECT. */
void site_naming_init(struct site_naming *nm, const struct sites_file *sf,
		      const char *desc, char *const *alloc_fns, size_t n,
		      bool detect);

/* Add the wrappers of FROM to *NM's (diff names both profiles alike). */
void site_naming_add_wrappers(struct site_naming *nm,
			      const struct site_naming *from);

#endif
