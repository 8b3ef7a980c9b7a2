/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace top`'s table: from a live profile's per-site statistics, one
   row per site name (output/site_name.h's rule) with its live bytes, its
   growth and its rates since the previous table. The figures only; the
   printing is top_print.c's. */
#ifndef HT_CLI_TOP_TABLE_H
#define HT_CLI_TOP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/symbolizer.h"
#include "output/output.h"
#include "output/sites_read.h"
#include "snapshot/snapshot.h"

/* One site name's figures. */
struct top_row {
	char *name;          /* "FUNCTION (file:line)" */
	uint64_t live;       /* bytes live now */
	int64_t growth;      /* live now minus live at the first table */
	double alloc_rate;   /* bytes allocated per second since the
				previous table */
	double call_rate;    /* allocating calls per second, likewise */
	uint64_t calls;      /* allocating calls since the start */
	uint64_t temporary;  /* of those, blocks freed by the next call */
	const struct sites_site *heaviest; /* of the sites named so, the one
					      with the most live bytes (then
					      allocated): its stack is the
					      row's; in the table's sites */
};

/* One table: the header's figures and the rows, most live bytes first. */
struct top_table {
	long pid;
	char *command;       /* the cmd: line's words; "?" unknown */
	uint64_t heap;       /* bytes live now */
	uint64_t peak;       /* the most live at once seen */
	double alloc_rate, call_rate; /* since the previous table */
	double elapsed;      /* seconds since the watch started */
	uint64_t sampling_interval; /* 0: exact */
	struct top_row *rows;
	size_t n_rows;
	struct sites_file sites; /* the statistics the rows were made from */
};

/* What a watch remembers from table to table, per site name. */
struct top_history;

/* A history for a watch started at START_NS (ht_monotonic_ns). */
struct top_history *top_history_new(uint64_t start_ns);
/* Free H. */
void top_history_free(struct top_history *h);

/* The table of process PID's engine ENG (frames by SYM, header HDR) at
   NOW_NS into *OUT, its rates from H's previous table, then H updated.
   Returns 0, or -errno when the statistics could not be gathered. */
int top_table_make(struct top_history *h, pid_t pid,
		   const struct snap_engine *eng,
		   const struct ht_symbolizer *sym,
		   const struct out_header *hdr, uint64_t now_ns,
		   struct top_table *out);
/* Growth counted from now on: from the live bytes of H's last table
   (names not in it: from 0). */
void top_history_reset_growth(struct top_history *h);
/* Free what T holds and zero it. */
void top_table_fini(struct top_table *t);

#endif
