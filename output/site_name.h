/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one frame that names an allocation site wherever a site is shown
   in one line (report, diff, the HTML page's table): the first frame,
   from the allocation outward, that lies outside the allocator and the C
   library and has a name, as a person reading the program would look
   for it (docs/views.md, "Site names"). */
#ifndef HT_OUTPUT_SITE_NAME_H
#define HT_OUTPUT_SITE_NAME_H

#include <stdbool.h>
#include <stddef.h>

#include "output/sites_read.h"

/* How the sites of one profile are named: its .sites file, its desc:
   line, the --alloc-fn names given when reading it, and the allocation
   wrappers found in its stacks (site_wrappers_find). */
struct site_naming {
	const struct sites_file *sf;
	const char *desc;             /* the Massif desc: line; may be NULL */
	char *const *alloc_fns;       /* read-time --alloc-fn names, borrowed */
	size_t n_alloc_fns;
	const char **wrappers;        /* sorted by strcmp; names are sf's */
	size_t n_wrappers;
};

/* Free what site_naming_init (output/site_wrappers.h) allocated; *NM is
   left empty. */
void site_naming_free(struct site_naming *nm);

/* Whether FN is skipped as an allocator function by NM: an entry point
   (site_is_allocator_function, with NM's desc), a read-time --alloc-fn,
   or, when WITH_WRAPPERS, one of NM's wrappers. */
bool site_naming_is_alloc_fn(const struct site_naming *nm, const char *fn,
			     bool with_wrappers);

/* How many of site S's frames, innermost first, are the allocator's
   (allocator functions by NM, WITH_WRAPPERS or not, and frames in an
   allocator object): the index of the allocator's direct caller. */
size_t site_alloc_depth(const struct site_naming *nm,
			const struct sites_site *s, bool with_wrappers);

/* Whether FN names an allocator's entry point or shim (sites_is_alloc_
   function's, Rust's __rust_alloc, alloc::alloc::...) or one of the
   --alloc-fn=NAME words of the Massif desc: line DESC (may be NULL). */
bool site_is_allocator_function(const char *fn, const char *desc);

/* Whether OBJECT's file name is the C library's (libc, its dynamic
   loader, glibc's libpthread and libdl) or an allocator library's
   (jemalloc, tcmalloc, mimalloc, tbbmalloc). */
bool site_is_allocator_object(const char *object);

/* Whether a frame of function FN in OBJECT (may be NULL) is a language's
   standard library rather than the program: in libstdc++ or libc++, or
   a function of C++'s std:: or __gnu_cxx:: namespaces (a template
   instantiated in the program, as std::vector's growth is) or of Rust's
   alloc::, core:: or std:: crates. */
bool site_is_standard_library(const char *fn, const char *object);

/* The frame naming site S of NM's file (whose mappings tell each frame's
   object): the innermost Python frame (common/synthframe.h) that is no
   allocator function by NM; else the first frame, innermost first, that has a name and is
   neither an allocator function (site_naming_is_alloc_fn, wrappers
   included) nor in an allocator object nor the standard library's
   (site_is_standard_library); else the first such named one of the
   standard library; else the first named one that is not an allocator
   function among the allocator objects' frames the stack starts with (the C library's own allocation, as from fopen);
   else the first not in an allocator (an unnamed address of the
   program); else the first named one, else the first. "(below main)"
   counts as unnamed, and it and the frames outward of it or of main
   (start-up code) are taken by the last two passes only. NULL for a
   site without frames. */
const struct sites_frame *site_name_frame(const struct site_naming *nm,
					  const struct sites_site *s);

/* FR as one line, "FUNCTION (file:line)", "FUNCTION (in object)" or
   "FUNCTION" ("??? [0xADDR]" for an unknown one), malloc'd. */
char *site_frame_text(const struct sites_frame *fr);

#endif
