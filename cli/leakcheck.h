/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The leak check of one process (--leak-check), put together from the
   layers below: the live blocks and their stacks from the snapshot
   engine, the roots and the memory of the stopped process from the
   tracer, memcheck's classification (snapshot/leak.h) and its report
   (output/leakreport.h), written to stderr. */
#ifndef HT_CLI_LEAKCHECK_H
#define HT_CLI_LEAKCHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/options.h"
#include "common/u64map.h"
#include "common/symbolizer.h"
#include "snapshot/leak.h"
#include "snapshot/snapshot.h"
#include "tracer/tracer.h"

/* What a leak check found: the LEAK SUMMARY's figures and the errors it
   counts (loss records of an --errors-for-leak-kinds kind, in full mode,
   as memcheck counts them). The place for the verdicts a profile keeps. */
struct leakcheck_result {
	bool done;
	struct leak_totals totals;
	uint64_t errors;
	/* Bytes of each kind per allocation site: row *u64map_get(&rows,
	   SITE) of BY_SITE, columns in enum leak_kind order. */
	struct u64map rows;
	uint64_t (*by_site)[LEAK_N_KINDS];
	size_t n_rows;
};

/* Frees what RES holds (after leakcheck_run; a zeroed RES is fine). */
void leakcheck_result_fini(struct leakcheck_result *res);

/* Checks process PID, stopped as VIEW describes, whose live blocks ENG
   holds and whose code SYM names, with OPT's leak options; GLIBC when its
   malloc is glibc's (whose own pointers into blocks are then told from
   the program's). Writes memcheck's report and ERROR SUMMARY to stderr
   and the figures into *RES. */
void leakcheck_run(const struct ht_options *opt, pid_t pid,
		   const struct snap_engine *eng,
		   const struct ht_symbolizer *sym, bool glibc,
		   const struct tracer_leak_view *view,
		   struct leakcheck_result *res);

#endif
