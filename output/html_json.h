/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The data of the HTML report: a profile as the JSON object its script
   reads, bounded in size (the largest sites only, trees cut at a node
   budget) and safe to embed in a <script> element (no "<" in it). */
#ifndef HT_OUTPUT_HTML_JSON_H
#define HT_OUTPUT_HTML_JSON_H

#include <stdio.h>

#include "output/html.h"

/* Sites kept for the tables: the largest this many by each column. */
#define HTML_SITES_PER_COLUMN 1000
/* Nodes kept of one snapshot's tree (the rest are summed in one entry),
   and of all trees together but the peak's, shared among them. */
#define HTML_TREE_NODES 4000
#define HTML_ALL_TREE_NODES 100000
/* Frames kept of one site's stack (they stop at main anyway). */
#define HTML_STACK_FRAMES 32

/* Write P's data to OUT as one JSON object. */
void html_json_write(FILE *out, const struct html_profile *p);

/* S as a JSON string (NULL: null) that can sit inside a <script>
   element: quoted, escaped, "<", ">" and "&" as \u00XX, bytes that are
   not UTF-8 as \u00XX. */
void html_json_string(FILE *out, const char *s);

#endif
