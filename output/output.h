/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writers of a finished profile: the massif.out text format that ms_print
   and massif-visualizer read, and the expansion of --massif-out-file. */
#ifndef HT_OUTPUT_OUTPUT_H
#define HT_OUTPUT_OUTPUT_H

#include <stdio.h>

#include "common/options.h"
#include "common/symbolizer.h"
#include "snapshot/snapshot.h"

/* What the three header lines say. */
struct out_header {
	char *const *desc_args; /* Massif-level arguments as typed; none: "(none)" */
	size_t n_desc_args;
	char *const *cmd_argv;  /* the program as given, then its arguments */
	size_t cmd_argc;
	enum ht_time_unit time_unit;
	bool pages_as_heap;     /* root line text */
	double threshold;       /* for the aggregate lines' "(1.00%)" */
	uint64_t sampling_interval; /* sampled every this many bytes (the
				       .sites file's sampling: line); 0:
				       exact */
	uint64_t sampling_seed;
};

/* Write " ARG" to F, a line break in ARG as \n (\r as \r), for header
   lines (cmd:, desc:) that must stay one line. Returns 0 or -errno. */
int out_header_arg(FILE *f, const char *arg);

/* Write ENG's snapshots in massif.out format to F, frames described by SYM.
   Returns 0 or -errno. */
int out_massif_fprint(FILE *f, const struct out_header *h,
		      const struct snap_engine *eng,
		      const struct ht_symbolizer *sym);

/* Write the header and the N snapshots SNAPS (in file order, numbered from
   0) in massif.out format to F, frames described by SYM; out_massif_fprint
   without an engine. Flushes F. Returns 0, -errno when writing fails, or
   -HT_E_FORMAT when a tree is not a well-formed preorder array. */
int out_massif_fprint_snapshots(FILE *f, const struct out_header *h,
				const struct snap_snapshot *snaps, size_t n,
				const struct ht_symbolizer *sym);

/* Write the profile to PATH: a regular file (or a new one) is written to a
   temporary file beside it and renamed over it, so a crash never leaves half
   a profile; anything else (/dev/null, a pipe, a terminal) is written
   directly. Returns 0 or -errno. */
int out_massif_write(const char *path, const struct out_header *h,
		     const struct snap_engine *eng,
		     const struct ht_symbolizer *sym);

/* out_massif_write for a profile taken on demand while the process runs:
   ENG's snapshots so far, then NOW (from snap_engine_peek) as the last
   one. Neither is changed. Returns 0 or -errno. */
int out_massif_write_now(const char *path, const struct out_header *h,
			 const struct snap_engine *eng,
			 const struct snap_snapshot *now,
			 const struct ht_symbolizer *sym);

/* Fills F with a file's contents for out_file_write; returns 0 or a
   negative error code, which out_file_write passes on. */
typedef int (*out_fill_fn)(FILE *f, void *arg);

/* Write what FILL(F, ARG) produces to PATH as out_massif_write describes:
   through a temporary file beside PATH and rename(2) when PATH is a regular
   file or does not exist (a symlink to a regular file replaces its target;
   when the directory is not writable but the file is, the file is rewritten
   in place), directly otherwise. A new file gets mode 0644 less the umask,
   a replaced one keeps its permission bits. Returns 0 or -errno (or FILL's
   error); on failure no temporary file is left behind. */
int out_file_write(const char *path, out_fill_fn fill, void *arg);

/* Expand PATTERN as Massif expands --massif-out-file for process PID:
   %p the pid, %n the file's sequence number in its process (always 1: a
   process writes one profile), %q{VAR} heaptrace's environment variable VAR
   (unset is an error), %% a percent sign; any other %, and a leading '~',
   are errors. A relative result is made absolute against CWD (left
   relative when CWD is NULL). Returns 0 and a malloc'd path in *OUT, or
   -HT_E_BADOPT with a one-line reason in ERR (ERRLEN bytes). */
int out_filename_expand(const char *pattern, long pid, const char *cwd,
			char **out, char *err, size_t errlen);

#endif
