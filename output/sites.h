/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The per-site statistics file written beside each profile
   (docs/sites-format.md): what happened at every allocation stack over the
   run, for `heaptrace report` and `heaptrace diff`. */
#ifndef HT_OUTPUT_SITES_H
#define HT_OUTPUT_SITES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/symbolizer.h"
#include "output/output.h"
#include "snapshot/snapshot.h"

/* The kinds of the leak check, in the file's order (snapshot/leak.h's
   enum leak_kind order reversed: definite, indirect, possible,
   reachable). */
#define OUT_SITES_KINDS 4

/* A leak check's verdicts, when the run made one. */
struct out_sites_leak {
	const char *mode;                  /* "summary" or "full" */
	uint64_t bytes[OUT_SITES_KINDS];   /* definite, indirect, possible,
					      reachable */
	uint64_t blocks[OUT_SITES_KINDS];
	/* SITE's bytes of each kind into BYTES; false when it had none. */
	bool (*site_bytes)(void *ctx, uint32_t site,
			   uint64_t bytes[OUT_SITES_KINDS]);
	void *ctx;
};

/* The name of PATH's statistics file: PATH with ".sites" appended
   (malloc'd). */
char *out_sites_path(const char *path);

/* Write the statistics of ENG (process PID, its header H) to F, frames
   described by SYM; LEAK may be NULL. Returns 0 or -errno. */
int out_sites_fprint(FILE *f, long pid, const struct out_header *h,
		     const struct snap_engine *eng,
		     const struct ht_symbolizer *sym,
		     const struct out_sites_leak *leak);

/* out_sites_fprint into the file PATH, written as out_file_write does.
   Returns 0 or -errno. */
int out_sites_write(const char *path, long pid, const struct out_header *h,
		    const struct snap_engine *eng,
		    const struct ht_symbolizer *sym,
		    const struct out_sites_leak *leak);

#endif
