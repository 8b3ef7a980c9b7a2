/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The wiring of a profiling session: the tracer's events go through the
   symbols of their process into that process's snapshot engine, and each
   finished process's profile is written. One profile per process. */
#ifndef HT_CLI_PROFILE_H
#define HT_CLI_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/options.h"
#include "common/symbolizer.h"
#include "output/output.h"
#include "snapshot/snapshot.h"
#include "tracer/tracer.h"

struct profiler;

/* A profiler for a run of ARGV with OPT (both borrowed for its life). */
struct profiler *profiler_new(const struct ht_options *opt, char *const argv[]);
/* Free PROF; profiles of processes still open are written first. */
void profiler_free(struct profiler *prof);
/* The sink to give the tracer. */
struct tracer_sink profiler_sink(struct profiler *prof);
/* The leak errors (--leak-check=full) found in the first process
   profiled, the program itself; 0 before its check. */
uint64_t profiler_leak_errors(const struct profiler *prof);
/* A live view of a profile (`heaptrace top`): given process PID's
   engine, its symbolizer and its profile's header, all borrowed for the
   call, at each snapshot request in place of the on-demand files. */
typedef void profiler_view_fn(void *ctx, pid_t pid,
			      const struct snap_engine *eng,
			      const struct ht_symbolizer *sym,
			      const struct out_header *h);
/* Have snapshot requests call FN with CTX instead of writing files. */
void profiler_set_view(struct profiler *prof, profiler_view_fn *fn,
		       void *ctx);
/* The first process profiled (the program, or the process attached
   to); 0 before it. */
pid_t profiler_first_pid(const struct profiler *prof);
/* Have process PID's next snapshot request write its on-demand files, as
   `heaptrace snapshot` would, before the view is called. */
void profiler_view_write_next(struct profiler *prof, pid_t pid);
/* What the last such write came to ("written to PATH", or why not),
   malloc'd and taken; NULL when there was none since the last call. */
char *profiler_view_said(struct profiler *prof);
/* On-demand files are named after PATTERN (a --massif-out-file, borrowed)
   when the profile goes to no regular file (top's /dev/null). */
void profiler_set_snapshot_name(struct profiler *prof, const char *pattern);
/* Without SUMMARY, profiler_free prints no summary line (a profile
   nobody asked for: `heaptrace top`'s); the notes go on their own. */
void profiler_set_summary(struct profiler *prof, bool summary);
/* Number of profiles that could not be written. */
int profiler_write_failures(const struct profiler *prof);
/* profiler_free prints the session's summary line (unless -q): its
   profile, the others written beside it, and ht_note's remarks. */

/* Whether OPT's --massif-out-file can be written, for every process the
   session may profile, as far as it can be known before any pid is:
   %q{VAR} expands, the directory exists and heaptrace can create a file in
   it (a probe file, made and removed), or the named file exists and is
   writable; a directory's name with %p in it is checked up to there.
   Returns 0, or -HT_E_BADOPT with a one-line reason in ERR. */
int profiler_check_out_file(const struct ht_options *opt, char *err,
			    size_t errlen);

#endif
