/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Strings in JSON, as report --format=json and the HTML page's data write
   them. */
#ifndef HT_OUTPUT_JSONSTR_H
#define HT_OUTPUT_JSONSTR_H

#include <stdbool.h>
#include <stdio.h>

/* S to OUT as a JSON string (NULL: null): quoted, '"' '\' and control characters
   escaped, bytes that are not UTF-8 as \u00XX; with SCRIPT_SAFE, "<", ">"
   and "&" as \u00XX too, so that it can sit inside a <script> element. */
void json_string_write(FILE *out, const char *s, bool script_safe);

#endif
