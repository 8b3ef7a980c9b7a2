/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace top`'s batch output: a table as plain text (like `top -b`)
   or as one JSON object on one line (docs/views.md, "heaptrace top"). */
#ifndef HT_CLI_TOP_PRINT_H
#define HT_CLI_TOP_PRINT_H

#include <stdio.h>

#include "top_table.h"

/* At most this many rows are printed, the most live bytes first; the
   others are counted. */
#define TOP_PRINT_ROWS 25

/* T as text to OUT, ending with a blank line. */
void top_print_text(FILE *out, const struct top_table *t);
/* T as one JSON object and a line break to OUT. */
void top_print_json(FILE *out, const struct top_table *t);

#endif
