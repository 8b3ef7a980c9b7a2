/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace top [options] PID` and `heaptrace top [options] -- PROG
   [ARGS]`: a profile watched live, one table every --interval seconds
   (docs/views.md, "heaptrace top"). The session itself is attach's or
   run's; this is the command line and the view given to the profiler. */
#ifndef HT_CLI_TOP_H
#define HT_CLI_TOP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/options.h"
#include "profile.h"

struct top_watch;

/* Parse `top ARGS` (ARGV[0] is "top") into *CL, as `attach` when no "--"
   is given, else as `run`, with top's defaults (--sampling-interval=512K,
   no profile written unless --massif-out-file is given), and the watch's
   own options into a new *OUT. Returns 0, or -HT_E_BADOPT with a one-line
   reason in ERR; either way CL is released with ht_cmdline_fini and *OUT
   (NULL on error) with top_watch_free. */
int top_parse(int argc, char **argv, struct ht_cmdline *cl,
	      struct top_watch **out, char *err, size_t errlen);
/* Free W (NULL: nothing). */
void top_watch_free(struct top_watch *w);
/* The view to give profiler_set_view with a watch as its context. */
profiler_view_fn top_view;
/* W made PROF's view (top_view), PROF (borrowed) told what top wants:
   a summary line only when a profile is written, on-demand files (the
   `w` key) named massif.out.PID.snapshot-N when no profile is. */
void top_watch_connect(struct top_watch *w, struct profiler *prof);
/* Whether W's output could all be written (checked at the end). */
bool top_watch_output_ok(const struct top_watch *w);
/* ERR's "attach: " or "run: " as "top: " (the user typed top), in
   place. */
void top_reword_error(char *err);
/* `heaptrace top --help` to OUT. */
void top_usage(FILE *out);
/* Whether top's ARGV (ARGV[0] "top") asks for its --help or -h before
   any "--". */
bool top_help_asked(int argc, char **argv);

#endif
