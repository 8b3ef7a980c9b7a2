/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reader of the per-site statistics file written beside each profile
   (docs/sites-format.md, versions 1 and 2), for `heaptrace report` and
   `heaptrace diff`. Unknown line types and keys are skipped, as the format
   asks; anything else that is not the format is an error naming the file
   and the line. */
#ifndef HT_OUTPUT_SITES_READ_H
#define HT_OUTPUT_SITES_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The version heaptrace writes; this reader also reads version 1 (frames
   written again for each site). */
#define SITES_VERSION 2

/* The leak kinds of a `leak_check:` line and of a site, in the file's
   order. */
enum sites_kind {
	SITES_DEFINITE,
	SITES_INDIRECT,
	SITES_POSSIBLE,
	SITES_REACHABLE,
	SITES_N_KINDS,
};

/* One `frame:` line. FILE is NULL (LINE 0) unless the place was
   "file:line"; OBJECT is NULL unless it was "(in /path/object)". The
   strings are the file's (struct sites_file's strings), shared by the
   sites whose stacks share the frame. */
struct sites_frame {
	uint64_t addr;
	const char *function; /* "???" when unknown */
	const char *file;
	unsigned long line;
	const char *object;
};

/* One `site:` line and its frames, innermost first. */
struct sites_site {
	uint64_t id;
	uint64_t calls, allocated, peak, leaked, leaked_blocks, temporary;
	bool has_peak_blocks; /* a peak_blocks= key (files since issue 25),
				 or version 2 (where 0 is left out) */
	uint64_t peak_blocks;
	bool has_kinds; /* KIND_BYTES were given (the run made a leak check) */
	uint64_t kind_bytes[SITES_N_KINDS];
	struct sites_frame *frames;
	size_t n_frames;
};

/* One `mapping:` line: an object of the process. */
struct sites_mapping {
	uint64_t start, end, offset;
	char *build_id; /* lowercase hex; NULL when absent */
	char *file;     /* NULL when absent */
};

/* The whole file. Lines absent from it leave their fields 0 and their
   has_ flag false. */
struct sites_file {
	unsigned version;
	bool has_pid;
	long pid;
	char *cmd;       /* NULL when absent */
	char *time_unit; /* NULL when absent */
	bool has_sampling; /* a sampling: line: every figure is an estimate */
	uint64_t sampling_interval, sampling_seed;
	bool has_peak;
	int64_t peak_snapshot; /* -1: the Massif file has no peak */
	uint64_t peak_time, peak_heap;
	bool has_totals;
	uint64_t total_sites, total_calls, total_allocated, total_temporary,
		total_leaked, total_leaked_blocks;
	bool has_leak_check;
	char *leak_mode; /* "summary", "full"; NULL without a leak check */
	uint64_t leak_bytes[SITES_N_KINDS], leak_blocks[SITES_N_KINDS];
	struct sites_site *sites;
	size_t n_sites;
	struct sites_mapping *mappings; /* by their start address */
	size_t n_mappings;
	char **strings; /* the frames' strings, freed by sites_free */
	size_t n_strings;
};

/* The name of PROFILE's statistics file: PROFILE with ".sites" appended
   (malloc'd). */
char *sites_path_of(const char *profile);

/* Read the statistics file PATH into *OUT. Returns 0; or -1 with *OUT
   empty and a one-line reason in ERR ("PATH:LINE: ..." for a malformed
   line), ERRNO_OUT (may be NULL) set to the errno of a file that could
   not be opened or read, 0 for a malformed one. */
int sites_read(const char *path, struct sites_file *out, int *errno_out,
	       char *err, size_t errlen);

/* Free what sites_read allocated in F and empty it. */
void sites_free(struct sites_file *f);

/* The mapping of F holding ADDR, or NULL. */
const struct sites_mapping *sites_mapping_of(const struct sites_file *f,
					     uint64_t addr);

/* Whether FN is an allocator's entry point (Massif's default --alloc-fn
   list and the like: malloc, operator new...): the frames a site's stack
   starts with, above the code that called them. */
bool sites_is_alloc_function(const char *fn);

/* How a profile was sampled: from SF's sampling: line (SF may be NULL),
   else from the Massif desc: line DESC's --sampling-interval= and
   --sampling-seed= (DESC may be NULL). False for an exact profile. */
struct sites_sampling {
	uint64_t interval; /* bytes */
	bool has_seed;
	uint64_t seed;
};
bool sites_sampling_of(const struct sites_file *sf, const char *desc,
		       struct sites_sampling *out);

/* The line that says so in reports: "sampled every 512.0 KiB: figures
   are estimated (error about sqrt(interval/bytes) per site)", into BUF. */
void sites_sampling_text(const struct sites_sampling *s, char *buf,
			 size_t len);

/* The kind's name as the file spells it ("definite", ...). */
const char *sites_kind_name(enum sites_kind k);

#endif
