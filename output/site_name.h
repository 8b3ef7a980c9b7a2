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

/* Whether FN names an allocator's entry point or shim (sites_is_alloc_
   function's, Rust's __rust_alloc, alloc::alloc::...) or one of the
   --alloc-fn=NAME words of the Massif desc: line DESC (may be NULL). */
bool site_is_allocator_function(const char *fn, const char *desc);

/* Whether OBJECT's file name is the C library's (libc, its dynamic
   loader, glibc's libpthread and libdl) or an allocator library's
   (jemalloc, tcmalloc, mimalloc, tbbmalloc). */
bool site_is_allocator_object(const char *object);

/* The frame naming site S of SF (whose mappings tell each frame's object)
   in a profile whose desc: line is DESC (may be NULL): the first frame,
   innermost first, that has a name and is neither an allocator function
   nor in an allocator object; else the first named one that is not an
   allocator function among the allocator objects' frames the stack
   starts with (the C library's own allocation, as from fopen); else the
   first not in an allocator (an unnamed address of the program); else
   the first named one, else the first. "(below main)" counts as unnamed,
   and it and the frames outward of it or of main (start-up code) are
   taken by the last two passes only. NULL for a site without frames. */
const struct sites_frame *site_name_frame(const struct sites_file *sf,
					  const char *desc,
					  const struct sites_site *s);

/* FR as one line, "FUNCTION (file:line)", "FUNCTION (in object)" or
   "FUNCTION" ("??? [0xADDR]" for an unknown one), malloc'd. */
char *site_frame_text(const struct sites_frame *fr);

#endif
