/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A site's name fitted into a column of `heaptrace top`: shortened in the
   middle, never cut at the end, so that the function's own name and its
   file:line stay readable however long its namespaces, template
   arguments and parameters are. */
#ifndef HT_CLI_TOP_NAME_H
#define HT_CLI_TOP_NAME_H

#include <stddef.h>

/* NAME's width in terminal columns (a UTF-8 character counts one). */
size_t top_name_width(const char *name);

/* NAME ("FUNCTION (file:line)", "FUNCTION (in object)" or "FUNCTION")
   fitted into WIDTH columns, malloc'd: NAME itself when it fits; else a
   Rust hash is dropped, the innermost template argument and parameter
   lists are elided to "<...>" and "(...)" (Python's "<module>",
   "<lambda>" are names, not lists), then the middle of the
   function's name (its last component kept) and, if it is wider than
   half the column, of the location (its end kept) is replaced by "...".
   WIDTH below 5 gives NAME's first WIDTH columns. */
char *top_name_fit(const char *name, size_t width);

#endif
