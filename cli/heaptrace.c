/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The heaptrace program: reads the command line and hands each command to
   its function. Exit status: 0 success, 1 heaptrace could not write its
   output, 2 the command line was wrong or the command is not available. */
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/options.h"
#include "profile.h"
#include "snapshot_cmd.h"
#include "tracer/tracer.h"

#define EXIT_USAGE 2

/* stdout is checked at the end because a full disk or a closed pipe only
   shows when the buffer is flushed. */
static int
stdout_finish(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		ht_perror("error writing to standard output");
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

static int
cmd_help(void)
{
	ht_options_usage(stdout);
	snapshot_cmd_usage(stdout);
	return stdout_finish();
}

static int
cmd_version(void)
{
	printf("heaptrace %s\n", HT_VERSION);
	return stdout_finish();
}

/* Counting the target's instructions needs a hardware counter; without
   one the profile says ms instead of pretending. */
static void
choose_time_unit(struct ht_options *opt)
{
	if (opt->time_unit == HT_TIME_I && !tracer_instructions_available()) {
		ht_warn("no hardware instruction counter on this machine; "
			"recording --time-unit=i as ms");
		opt->time_unit = HT_TIME_MS;
	}
}

/* --pages-as-heap=yes watches page calls through seccomp stops and
   probes no allocator, as Massif intercepts no malloc then: a --backend
   asked for there cannot apply, and gets one line. */
static void
explain_backend(const struct ht_options *opt)
{
	if (opt->backend == HT_BACKEND_AUTO)
		return;
	if (opt->pages_as_heap)
		ht_warn("--backend=%s has no effect with --pages-as-heap=yes "
			"(page calls are caught by seccomp stops)",
			opt->backend == HT_BACKEND_INLINE ? "inline" : "ptrace");
}

static int
cmd_run(struct ht_cmdline *cl)
{
	char err[512];
	choose_time_unit(&cl->opt);
	explain_backend(&cl->opt);
	struct profiler *prof = profiler_new(&cl->opt, cl->prog_argv);
	struct tracer_sink sink = profiler_sink(prof);
	struct tracer_result res = { 0 };
	int rc = tracer_run(&cl->opt, cl->prog_argv, &sink, &res, err,
			    sizeof(err));
	profiler_free(prof);
	if (cl->opt.stats) {
		struct rusage ru;
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			ht_error("stats: heaptrace's own peak RSS %ld KiB",
				 ru.ru_maxrss);
	}
	if (rc) {
		ht_error("%s", err);
		return rc == -ENOENT ? 127 : 126;
	}
	return res.exit_status;
}

static int
cmd_attach(struct ht_cmdline *cl)
{
	char err[512];
	if (tracer_attach_check((pid_t)cl->pid, err, sizeof(err))) {
		ht_error("%s", err);
		return EXIT_USAGE;
	}
	/* Said after the session, so that a refused attach is one line. */
	bool no_counter = cl->opt.time_unit == HT_TIME_I &&
			  !tracer_instructions_available();
	if (no_counter)
		cl->opt.time_unit = HT_TIME_MS;
	/* the profile's cmd: line comes from /proc/PID/cmdline */
	static char *const no_argv[] = { NULL };
	struct profiler *prof = profiler_new(&cl->opt, no_argv);
	struct tracer_sink sink = profiler_sink(prof);
	struct tracer_result res = { 0 };
	int rc = tracer_attach(&cl->opt, (pid_t)cl->pid, &sink, &res, err,
			       sizeof(err));
	int failures = profiler_write_failures(prof);
	profiler_free(prof);
	if (rc) {
		ht_error("%s", err);
		return EXIT_USAGE;
	}
	if (no_counter)
		ht_warn("no hardware instruction counter on this machine; "
			"--time-unit=i was recorded as ms");
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int
cmd_dispatch(struct ht_cmdline *cl)
{
	switch (cl->command) {
	case HT_CMD_HELP:
		return cmd_help();
	case HT_CMD_VERSION:
		return cmd_version();
	case HT_CMD_RUN:
		return cmd_run(cl);
	case HT_CMD_ATTACH:
		return cmd_attach(cl);
	case HT_CMD_NONE:
		break;
	}
	ht_error("bug: no command after parsing");
	return EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	struct ht_cmdline cl;
	char err[512];
	int status;

	/* `snapshot` takes no profiling options: it only signals the
	   heaptrace already profiling PID. */
	if (argc >= 2 && strcmp(argv[1], "snapshot") == 0)
		return snapshot_cmd(argc - 1, argv + 1);
	if (ht_cmdline_parse(&cl, argc, argv, err, sizeof(err))) {
		ht_error("%s", err);
		status = EXIT_USAGE;
	} else {
		ht_set_verbose(cl.opt.verbose);
		status = cmd_dispatch(&cl);
	}
	ht_cmdline_fini(&cl);
	return status;
}
