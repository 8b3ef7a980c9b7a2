/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the keys of `heaptrace top`'s view do to what it shows, and what
   they ask of the watch (a new table, a profile written, the end). The
   list is top_keys_help's, shown by `?`, and the man page's. */
#ifndef HT_CLI_TOP_KEYS_H
#define HT_CLI_TOP_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "top_sort.h"

/* How the view shows the table. */
struct top_ui {
	enum top_col sort;
	bool exact;     /* bytes in full rather than in KiB, MiB... */
	bool frozen;    /* no new tables */
	bool expanded;  /* the selected row's stack in place of the rows */
	bool help;      /* the keys in place of the rows */
	size_t selected; /* the selected row, in the rows' order */
	bool chosen;    /* selected by the user, who then keeps it across
			   tables and sorts; else the first row is */
	size_t first;   /* the first row on the screen */
	char message[256]; /* for the status line; "" none */
};

/* What the watch is to do after a key. */
enum top_action {
	TOP_ACT_NONE,   /* not a key of the view */
	TOP_ACT_DRAW,   /* draw again from the same table */
	TOP_ACT_SORT,   /* sort the rows again, then draw */
	TOP_ACT_TABLE,  /* make a new table now, then draw */
	TOP_ACT_RESET,  /* growth counted from now, then a new table */
	TOP_ACT_WRITE,  /* write a profile now */
	TOP_ACT_QUIT,   /* detach and end */
};

/* UI with its defaults: sorted by live bytes, human units. */
void top_ui_init(struct top_ui *ui);
/* KEY (a wgetch code) applied to UI, for N_ROWS rows of which PAGE fit
   on the screen; what is left for the watch to do. */
enum top_action top_keys_apply(struct top_ui *ui, int key, size_t n_rows,
			       size_t page);
/* Keep UI's selection within N_ROWS rows and on a screen of PAGE rows. */
void top_ui_clamp(struct top_ui *ui, size_t n_rows, size_t page);
/* The help screen's lines, NULL-terminated. */
extern const char *const top_keys_help[];

#endif
