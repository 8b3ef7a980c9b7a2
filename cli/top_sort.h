/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The columns of `heaptrace top`'s view, and its rows sorted by any of
   them. */
#ifndef HT_CLI_TOP_SORT_H
#define HT_CLI_TOP_SORT_H

#include <stddef.h>

#include "top_table.h"

/* The view's columns, left to right. */
enum top_col {
	TOP_COL_LIVE,
	TOP_COL_HEAP,   /* % of the heap: the order of LIVE */
	TOP_COL_GROWTH,
	TOP_COL_ALLOC,  /* bytes allocated per second */
	TOP_COL_CALLS,  /* calls per second */
	TOP_COL_TEMP,   /* temporary share */
	TOP_COL_SITE,
	TOP_N_COLS,
};

/* The row's temporary share, in percent (0 without calls). */
double top_row_temporary_share(const struct top_row *r);
/* Sort T's rows by COL: the largest first, the site's name A to Z; ties
   by live bytes, then by name, so that the order holds from table to
   table. */
void top_sort_rows(struct top_table *t, enum top_col col);

#endif
