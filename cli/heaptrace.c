/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The heaptrace program: reads the command line and hands each command to
   its function. Exit status: 0 success, 1 heaptrace could not write its
   output, 2 the command line was wrong or the command is not available;
   `run` passes the program's on, but for EXIT_PROFILE_LOST. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/options.h"
#include "common/said.h"
#include "diff.h"
#include "print.h"
#include "profile.h"
#include "report.h"
#include "snapshot_cmd.h"
#include "top.h"
#include "tracer/tracer.h"

#define EXIT_USAGE 2
/* `run` could not write a profile: the status `env`, `nice` and `timeout`
   give their own failures, beside 126 and 127 for a program that could
   not be run, so that a script can tell it from most programs' own. */
#define EXIT_PROFILE_LOST 125

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
   one the profile says ms instead of pretending, and the summary line
   says why, once per machine (the machine does not change its mind). */
static void
choose_time_unit(struct ht_options *opt)
{
	if (opt->time_unit == HT_TIME_I && !tracer_instructions_available()) {
		ht_note_once("time unit ms, not i: no hardware instruction "
			     "counter here");
		opt->time_unit = HT_TIME_MS;
	}
}

/* --pages-as-heap=yes watches page calls through seccomp stops and
   probes no allocator, as Massif intercepts no malloc then: a --backend
   asked for there cannot apply, which the summary line says. */
static void
explain_backend(const struct ht_options *opt)
{
	if (opt->backend == HT_BACKEND_AUTO)
		return;
	if (opt->pages_as_heap)
		ht_note("--backend=%s does not apply to --pages-as-heap=yes",
			opt->backend == HT_BACKEND_INLINE ? "inline" : "ptrace");
}

/* A sampled profile's figures are estimates: the summary line says so,
   and -v gives the seed that samples the same calls again. */
static void
explain_sampling(const struct ht_options *opt)
{
	if (!opt->sampling_interval)
		return;
	ht_debug("sampling every %llu bytes, seed %llu (--sampling-seed)",
		 (unsigned long long)opt->sampling_interval,
		 (unsigned long long)opt->sampling_seed);
	ht_note("sampled every %llu bytes: figures are estimates",
		(unsigned long long)opt->sampling_interval);
}

/* An unwritable --massif-out-file is found before the program runs. */
static int
check_out_file(const struct ht_options *opt)
{
	char err[PATH_MAX + 256];
	if (profiler_check_out_file(opt, err, sizeof(err)) == 0)
		return 0;
	ht_error("%s", err);
	return -1;
}

/* `heaptrace top`: WATCH sees each snapshot request in place of the
   on-demand files (NULL: run and attach as they are). */
static void
set_view(struct profiler *prof, struct top_watch *watch)
{
	if (!watch)
		return;
	top_watch_connect(watch, prof);
}

static int
cmd_run(struct ht_cmdline *cl, struct top_watch *watch)
{
	char err[512];
	if (check_out_file(&cl->opt))
		return EXIT_USAGE;
	choose_time_unit(&cl->opt);
	explain_backend(&cl->opt);
	explain_sampling(&cl->opt);
	struct profiler *prof = profiler_new(&cl->opt, cl->prog_argv);
	set_view(prof, watch);
	struct tracer_sink sink = profiler_sink(prof);
	struct tracer_result res = { 0 };
	int rc = tracer_run(&cl->opt, cl->prog_argv, &sink, &res, err,
			    sizeof(err));
	uint64_t leak_errors = profiler_leak_errors(prof);
	int failures = profiler_write_failures(prof);
	profiler_free(prof);
	/* notes no summary line took: a line of their own, unless an error
	   is what there is to say */
	if (rc)
		ht_notes_discard();
	else
		ht_notes_flush();
	if (cl->opt.stats) {
		struct rusage ru;
		/* asked for: printed even with -q, as the others */
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			ht_error("stats: heaptrace's own peak RSS %ld KiB",
				 ru.ru_maxrss);
	}
	if (rc) {
		ht_error("%s", err);
		return rc == -ENOENT ? 127 : 126;
	}
	if (failures)
		return EXIT_PROFILE_LOST;
	/* memcheck's rule: a leak error changes the status of a program that
	   exited, not of one a signal killed. */
	if (cl->opt.error_exitcode && leak_errors && !res.signaled)
		return (int)cl->opt.error_exitcode;
	return res.exit_status;
}

/* Whether the kernel lets heaptrace trace PID, as far as it can be known
   without tracing it: /proc/PID/mem opens under the very check
   PTRACE_ATTACH makes (ptrace_may_access, Yama included). */
static bool
may_trace(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return errno != EACCES && errno != EPERM;
}

static int
cmd_attach(struct ht_cmdline *cl, struct top_watch *watch)
{
	char err[512];
	if (tracer_attach_check((pid_t)cl->pid, err, sizeof(err))) {
		if (watch)
			top_reword_error(err);
		ht_error("%s", err);
		return EXIT_USAGE;
	}
	/* A process the kernel will not let heaptrace trace (another user's,
	   Yama) is refused by tracer_attach with its reason, before anything
	   is traced; only then does the profile's name matter. */
	if (may_trace((pid_t)cl->pid) && check_out_file(&cl->opt))
		return EXIT_USAGE;
	/* the profile's cmd: line comes from /proc/PID/cmdline */
	static char *const no_argv[] = { NULL };
	/* said on the summary line, so that a refused attach is one line */
	choose_time_unit(&cl->opt);
	explain_sampling(&cl->opt);
	struct profiler *prof = profiler_new(&cl->opt, no_argv);
	set_view(prof, watch);
	struct tracer_sink sink = profiler_sink(prof);
	struct tracer_result res = { 0 };
	int rc = tracer_attach(&cl->opt, (pid_t)cl->pid, &sink, &res, err,
			       sizeof(err));
	int failures = profiler_write_failures(prof);
	uint64_t leak_errors = profiler_leak_errors(prof);
	profiler_free(prof);
	if (rc)
		ht_notes_discard();
	else
		ht_notes_flush();
	if (rc) {
		if (watch)
			top_reword_error(err);
		ht_error("%s", err);
		return EXIT_USAGE;
	}
	if (cl->opt.error_exitcode && leak_errors)
		return (int)cl->opt.error_exitcode;
	if (watch && !top_watch_output_ok(watch))
		return EXIT_FAILURE;
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int
cmd_dispatch(struct ht_cmdline *cl, struct top_watch *watch)
{
	switch (cl->command) {
	case HT_CMD_HELP:
		return cmd_help();
	case HT_CMD_VERSION:
		return cmd_version();
	case HT_CMD_RUN:
		return cmd_run(cl, watch);
	case HT_CMD_ATTACH:
		return cmd_attach(cl, watch);
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
	/* `print` reads a file and takes ms_print's options, not these. */
	if (argc >= 2 && strcmp(argv[1], "print") == 0)
		return print_cmd(argc - 1, argv + 1);
	/* `report` and `diff` read profiles: no profiling options either */
	if (argc >= 2 && strcmp(argv[1], "report") == 0)
		return report_cmd(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "diff") == 0)
		return diff_cmd(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "top") == 0 &&
	    top_help_asked(argc - 1, argv + 1)) {
		top_usage(stdout);
		return stdout_finish();
	}
	/* `top` is attach or run with a view: its own options out first */
	struct top_watch *watch = NULL;
	bool top = argc >= 2 && strcmp(argv[1], "top") == 0;
	int rc = top ? top_parse(argc - 1, argv + 1, &cl, &watch, err,
				 sizeof(err))
		     : ht_cmdline_parse(&cl, argc, argv, err, sizeof(err));
	if (rc) {
		ht_error("%s", err);
		status = EXIT_USAGE;
	} else {
		ht_set_verbose(cl.opt.verbose);
		ht_set_quiet(cl.opt.quiet);
		ht_set_note_first_time(ht_said_first_time);
		/* a closed pipe is a write error to end the watch on, not
		   a death that would leave the process traced */
		if (top)
			signal(SIGPIPE, SIG_IGN);
		status = cmd_dispatch(&cl, watch);
	}
	ht_cmdline_fini(&cl);
	top_watch_free(watch);
	return status;
}
