/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top's options are taken out of its command line, and what is left is
   parsed as `attach` or `run` would parse it: the same options, the same
   checks and the same session, with top's defaults put first so that the
   user's own come after them. */
#include "top.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/monotonic.h"
#include "common/xalloc.h"
#include "top_live.h"
#include "top_print.h"
#include "top_table.h"
#include "tracer/tracer.h"

#define TOP_DEFAULT_SAMPLING "--sampling-interval=524288"
/* No profile unless asked for: the watch is what top is for. */
#define TOP_DEFAULT_OUT "--massif-out-file=/dev/null"
#define TOP_INTERVAL_MIN 0.01
#define TOP_INTERVAL_MAX 86400.0
/* The screen's keys are read at each tick of the tracer: this often
   answers a key at once and costs little (a table is made only once an
   interval). */
#define TOP_LIVE_TICK_MS 100
/* Where `w` writes when no --massif-out-file was given: beside the
   profile attach would have written. */
#define TOP_SNAPSHOT_NAME "massif.out.%p"

enum top_format { TOP_FORMAT_TEXT, TOP_FORMAT_JSON };

struct top_watch {
	char **argv;            /* the attach or run command line made */
	unsigned interval_ms;
	unsigned long iterations; /* 0: until interrupted */
	enum top_format format;
	unsigned long shown;
	pid_t pid;              /* the process watched: the first seen */
	struct top_history *history;
	bool write_failed;
	bool writes_profile;    /* --massif-out-file given */
	bool batch;             /* --batch given */
	bool screen;            /* the full-screen view is wanted */
	unsigned tick_ms;       /* how often top_view is called */
	uint64_t printed_ns;    /* when a table was last printed */
	struct top_live *live;  /* the view up, or NULL */
	bool live_failed;       /* the terminal could not show it */
	struct profiler *prof;
};

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -HT_E_BADOPT;
}

static bool
has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int
take_interval(struct top_watch *w, const char *v, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double s = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(s) || s < TOP_INTERVAL_MIN ||
	    s > TOP_INTERVAL_MAX)
		return fail(err, errlen, "top: --interval takes seconds from "
			    "%g to %g (fractions allowed), not '%s'",
			    TOP_INTERVAL_MIN, TOP_INTERVAL_MAX, v);
	w->interval_ms = (unsigned)lround(s * 1000.0);
	return 0;
}

static int
take_iterations(struct top_watch *w, const char *v, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (!*v || *end || errno || v[0] == '-' || n > 1000000000UL)
		return fail(err, errlen, "top: --iterations takes a number of "
			    "tables (0: no end), not '%s'", v);
	w->iterations = n;
	return 0;
}

/* ARG as one of top's own options into W: 1 when it is not one. */
static int
take_option(struct top_watch *w, const char *arg, char *err, size_t errlen)
{
	if (has_prefix(arg, "--interval="))
		return take_interval(w, arg + strlen("--interval="), err,
				     errlen);
	if (has_prefix(arg, "--iterations="))
		return take_iterations(w, arg + strlen("--iterations="), err,
				       errlen);
	if (!strcmp(arg, "--batch")) {
		w->batch = true;
		return 0;
	}
	if (!strcmp(arg, "--format=text")) {
		w->format = TOP_FORMAT_TEXT;
		return 0;
	}
	if (!strcmp(arg, "--format=json")) {
		w->format = TOP_FORMAT_JSON;
		return 0;
	}
	if (has_prefix(arg, "--format="))
		return fail(err, errlen, "top: --format takes text or json, "
			    "not '%s'", arg + strlen("--format="));
	if (!strcmp(arg, "--interval") || !strcmp(arg, "--iterations") ||
	    !strcmp(arg, "--format"))
		return fail(err, errlen, "top: %s needs a value (%s=...)",
			    arg, arg);
	return 1;
}

void
top_reword_error(char *err)
{
	static const char *const prefixes[] = { "attach: ", "run: " };
	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(prefixes[i]);
		if (!strncmp(err, prefixes[i], n)) {
			memmove(err + 5, err + n, strlen(err + n) + 1);
			memcpy(err, "top: ", 5);
			return;
		}
	}
}

/* W's attach or run command line from top's ARGV, without top's own
   options. */
static int
build_argv(struct top_watch *w, int argc, char **argv, char *err,
	   size_t errlen)
{
	bool run = false, sampling = false, out = false;
	for (int i = 1; i < argc && !run; i++) {
		run = !strcmp(argv[i], "--");
		sampling = sampling || has_prefix(argv[i],
						  "--sampling-interval=");
		out = out || has_prefix(argv[i], "--massif-out-file=");
	}
	w->argv = ht_xcalloc((size_t)argc + 4, sizeof(*w->argv));
	int n = 0;
	w->argv[n++] = ht_xstrdup("heaptrace");
	w->argv[n++] = ht_xstrdup(run ? "run" : "attach");
	if (!sampling)
		w->argv[n++] = ht_xstrdup(TOP_DEFAULT_SAMPLING);
	if (!out)
		w->argv[n++] = ht_xstrdup(TOP_DEFAULT_OUT);
	w->writes_profile = out;
	bool options_done = false;
	for (int i = 1; i < argc; i++) {
		if (!options_done && !strcmp(argv[i], "--"))
			options_done = true;
		if (!options_done) {
			int rc = take_option(w, argv[i], err, errlen);
			if (rc <= 0) {
				if (rc)
					return rc;
				continue;
			}
		}
		w->argv[n++] = ht_xstrdup(argv[i]);
	}
	return n;
}

int
top_parse(int argc, char **argv, struct ht_cmdline *cl,
	  struct top_watch **out, char *err, size_t errlen)
{
	struct top_watch *w = ht_xcalloc(1, sizeof(*w));
	w->interval_ms = 1000;
	*out = NULL;
	memset(cl, 0, sizeof(*cl));
	int n = build_argv(w, argc, argv, err, errlen);
	if (n < 0) {
		/* CL must still be releasable */
		ht_options_init(&cl->opt);
		top_watch_free(w);
		return n;
	}
	int rc = ht_cmdline_parse(cl, n, w->argv, err, errlen);
	if (rc) {
		top_reword_error(err);
		top_watch_free(w);
		return rc;
	}
	w->screen = !w->batch && w->format == TOP_FORMAT_TEXT &&
		    isatty(STDOUT_FILENO);
	w->tick_ms = w->screen && w->interval_ms > TOP_LIVE_TICK_MS
		     ? TOP_LIVE_TICK_MS : w->interval_ms;
	cl->opt.tick_ms = w->tick_ms;
	w->history = top_history_new(ht_monotonic_ns());
	*out = w;
	return 0;
}

void
top_watch_free(struct top_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; w->argv && w->argv[i]; i++)
		free(w->argv[i]);
	free(w->argv);
	top_history_free(w->history);
	top_live_close(w->live);
	free(w);
}

bool
top_watch_output_ok(const struct top_watch *w)
{
	return !w->write_failed;
}

void
top_watch_connect(struct top_watch *w, struct profiler *prof)
{
	w->prof = prof;
	profiler_set_view(prof, top_view, w);
	profiler_set_summary(prof, w->writes_profile);
	if (!w->writes_profile)
		profiler_set_snapshot_name(prof, TOP_SNAPSHOT_NAME);
}

/* The screen's tick: false once the watch is over. */
static bool
screen_tick(struct top_watch *w, pid_t pid, const struct snap_engine *eng,
	    const struct ht_symbolizer *sym, const struct out_header *h)
{
	if (!w->live && !w->live_failed) {
		w->live = top_live_open(w->interval_ms, w->iterations,
					w->prof);
		w->live_failed = !w->live;
		if (w->live_failed)
			ht_warn("top: the terminal (TERM=%s) cannot show the "
				"full-screen view: tables are printed instead",
				getenv("TERM") ? getenv("TERM") : "");
	}
	if (!w->live)
		return true;
	if (top_live_tick(w->live, w->history, pid, eng, sym, h,
			  ht_monotonic_ns()))
		return true;
	/* the terminal back before the process goes on alone */
	top_live_close(w->live);
	w->live = NULL;
	tracer_request_detach();
	return false;
}

/* Whether a printed table is due, when the screen was wanted and could
   not be had: the ticks are then shorter than the interval. (In batch
   mode they are the interval, and a request of `heaptrace snapshot` is
   one table more.) */
static bool
print_due(struct top_watch *w, uint64_t now_ns)
{
	uint64_t interval = (uint64_t)w->interval_ms * 1000000ULL;
	if (w->printed_ns && now_ns - w->printed_ns + interval / 20 < interval)
		return false;
	w->printed_ns = now_ns;
	return true;
}

void
top_view(void *ctx, pid_t pid, const struct snap_engine *eng,
	 const struct ht_symbolizer *sym, const struct out_header *h)
{
	struct top_watch *w = ctx;
	/* the program or the process attached to (the first profiled), not
	   whichever process the tracer happens to ask about first */
	if (!w->pid)
		w->pid = w->prof && profiler_first_pid(w->prof)
			 ? profiler_first_pid(w->prof) : pid;
	/* the program's children, --trace-children=yes, are not shown yet */
	if (pid != w->pid || w->write_failed)
		return;
	if (w->screen && (!screen_tick(w, pid, eng, sym, h) || w->live))
		return;
	if (w->screen && !print_due(w, ht_monotonic_ns()))
		return;
	struct top_table t;
	int rc = top_table_make(w->history, pid, eng, sym, h,
				ht_monotonic_ns(), &t);
	if (rc) {
		ht_error("top: cannot gather the statistics of process %d: %s",
			 (int)pid, ht_strerror(rc));
		return;
	}
	if (w->format == TOP_FORMAT_JSON)
		top_print_json(stdout, &t);
	else
		top_print_text(stdout, &t);
	top_table_fini(&t);
	/* a reader that went away ends the watch, not the process */
	if (fflush(stdout) || ferror(stdout)) {
		ht_perror("top: error writing to standard output");
		w->write_failed = true;
		tracer_request_detach();
		return;
	}
	if (w->iterations && ++w->shown >= w->iterations)
		tracer_request_detach();
}

void
top_usage(FILE *out)
{
	fputs("usage: heaptrace top [options] PID\n"
	      "       heaptrace top [options] -- PROG [ARGS...]\n"
	      "\n"
	      "Watch a process's heap live: on a terminal, a full-screen view "
	      "of its sites\n"
	      "refreshed every --interval (keys: ? for their list; q or "
	      "Ctrl-C detaches);\n"
	      "else, or with --batch or --format=json, a table printed every "
	      "--interval.\n"
	      "Takes attach's and run's options too, with "
	      "--sampling-interval=524288\n"
	      "unless given (0: every call counted), and writes no profile "
	      "unless\n"
	      "--massif-out-file is given.\n"
	      "  --interval=<0.01..86400>  seconds between tables, "
	      "fractions allowed [1]\n"
	      "  --iterations=<0..1000000000>  detach and exit after this "
	      "many tables;\n"
	      "                    0: at SIGINT or SIGTERM [0]\n"
	      "  --batch           tables printed as plain text, even on a "
	      "terminal\n"
	      "  --format=<text|json>  printed tables as text, or one JSON "
	      "object a line\n"
	      "                    (json: printed even on a terminal) "
	      "[text]\n", out);
}

/* `heaptrace top --help` and `-h`, wherever among its arguments. */
bool
top_help_asked(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}
