/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace report --format=html`: a profile as one self-contained HTML
   page (chart of the heap over time, snapshot trees, flame graph, per-site
   tables) that opens offline in any browser: the data is embedded as JSON,
   the script and style are inlined, nothing is fetched. */
#ifndef HT_OUTPUT_HTML_H
#define HT_OUTPUT_HTML_H

#include <stdio.h>

#include "output/massif_read.h"
#include "output/site_name.h"
#include "output/sites_read.h"

/* What the page shows: a Massif file, and its .sites file when there is
   one. */
struct html_profile {
	const char *path;                /* the profile's name, as given */
	const struct mf_file *massif;
	const struct sites_file *sites;  /* NULL: none beside the profile */
	long peak;                       /* index in massif->snaps, -1 none;
					    not always a detailed one */
	const struct site_naming *naming; /* how sites are named; NULL: the
					     default (wrappers found) */
};

/* Write P to OUT as one HTML page. Returns 0, or -1 when OUT reported a
   write error. */
int html_write(FILE *out, const struct html_profile *p);

#endif
