/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace top`'s full-screen view drawn with ncurses from a table:
   the header, the rows (or the selected row's stack, or the keys), the
   status line (docs/views.md, "heaptrace top"). */
#ifndef HT_CLI_TOP_DRAW_H
#define HT_CLI_TOP_DRAW_H

#include <stdbool.h>

#include "top_keys.h"
#include "top_table.h"

/* What the header says beside the table's figures. */
struct top_draw_info {
	unsigned interval_ms;
	const char *status; /* the status line: a message or heaptrace's
			       latest warning; "" none */
};

/* The rows that fit on the screen under the header, at least 1. */
size_t top_draw_page(void);
/* T (NULL: none yet) as UI says, on the whole current screen. */
void top_draw(const struct top_table *t, const struct top_ui *ui,
	      const struct top_draw_info *info);

#endif
