/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qsort has no context argument: the column goes through a static, which
   is fine in heaptrace's single thread. */
#include "top_sort.h"

#include <stdlib.h>
#include <string.h>

static enum top_col sort_col;

double
top_row_temporary_share(const struct top_row *r)
{
	return r->calls ? 100.0 * (double)r->temporary / (double)r->calls
			: 0.0;
}

/* -1 when A comes first (the larger), 1 when B does, 0 when equal. */
static int
larger_first(double a, double b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int
by_col(const struct top_row *x, const struct top_row *y)
{
	switch (sort_col) {
	case TOP_COL_LIVE:
	case TOP_COL_HEAP:
		return larger_first((double)x->live, (double)y->live);
	case TOP_COL_GROWTH:
		return larger_first((double)x->growth, (double)y->growth);
	case TOP_COL_ALLOC:
		return larger_first(x->alloc_rate, y->alloc_rate);
	case TOP_COL_CALLS:
		return larger_first(x->call_rate, y->call_rate);
	case TOP_COL_TEMP:
		return larger_first(top_row_temporary_share(x),
				    top_row_temporary_share(y));
	case TOP_COL_SITE:
	case TOP_N_COLS:
		break;
	}
	return strcmp(x->name, y->name);
}

static int
row_cmp(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	int c = by_col(x, y);
	if (!c)
		c = larger_first((double)x->live, (double)y->live);
	return c ? c : strcmp(x->name, y->name);
}

void
top_sort_rows(struct top_table *t, enum top_col col)
{
	sort_col = col;
	qsort(t->rows, t->n_rows, sizeof(*t->rows), row_cmp);
}
