/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of common/options.c: every default, every range boundary and
   one step past it, booleans, lists, desc: arguments, option combinations
   and the run/attach command line grammar. */
#include "common/options.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

static int failures;

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n",   \
				__FILE__, __LINE__, __func__, #cond);      \
			failures++;                                        \
		}                                                          \
	} while (0)

#define CHECK_STR(got, want)                                               \
	do {                                                               \
		const char *g_ = (got), *w_ = (want);                      \
		if (!g_ || strcmp(g_, w_)) {                               \
			fprintf(stderr, "%s:%d: %s: got '%s', want '%s'\n", \
				__FILE__, __LINE__, __func__,              \
				g_ ? g_ : "(null)", w_);                   \
			failures++;                                        \
		}                                                          \
	} while (0)

/* Apply ARG to a fresh options set; returns ht_options_apply's result and
   leaves the message in ERR. */
static int
apply1(struct ht_options *opt, const char *arg, char *err, size_t errlen)
{
	err[0] = '\0';
	return ht_options_apply(opt, arg, err, errlen);
}

static void
test_defaults(void)
{
	struct ht_options o;

	ht_options_init(&o);
	CHECK(o.heap);
	CHECK(o.heap_admin == 8);
	CHECK(!o.stacks);
	CHECK(!o.pages_as_heap);
	CHECK(o.depth == 30);
	CHECK(o.n_alloc_fns == 0);
	CHECK(o.n_ignore_fns == 0);
	CHECK(o.threshold == 1.0);
	CHECK(o.peak_inaccuracy == 1.0);
	CHECK(o.time_unit == HT_TIME_I);
	CHECK(o.detailed_freq == 10);
	CHECK(o.max_snapshots == 100);
	CHECK_STR(o.out_file, "massif.out.%p");
	CHECK(o.alignment == 16);
	CHECK(!o.show_below_main);
	CHECK(!o.trace_children);
	CHECK(!o.trace_children_given);
	CHECK(o.follow_exec == HT_FOLLOW_EXEC_AUTO);
	CHECK(!o.massif_compat);
	CHECK(!o.quiet);
	CHECK(!o.verbose);
	CHECK(o.n_desc_args == 0);
	ht_options_fini(&o);
}

/* An accepted value: returns 0 and lands in the field. */
#define ACCEPT_UINT(arg, field, want)                                      \
	do {                                                               \
		struct ht_options o_;                                      \
		char e_[256];                                              \
		ht_options_init(&o_);                                      \
		CHECK(apply1(&o_, arg, e_, sizeof(e_)) == 0);              \
		CHECK(o_.field == (want));                                 \
		ht_options_fini(&o_);                                      \
	} while (0)

/* A rejected argument: -HT_E_BADOPT, exactly the one-line MSG, and the
   options untouched (no desc: argument either). */
static void
reject(const char *arg, const char *msg)
{
	struct ht_options o, fresh;
	char err[256];

	ht_options_init(&o);
	ht_options_init(&fresh);
	int rc = apply1(&o, arg, err, sizeof(err));
	if (rc != -HT_E_BADOPT) {
		fprintf(stderr, "reject(%s): rc %d\n", arg, rc);
		failures++;
	}
	CHECK_STR(err, msg);
	CHECK(!strchr(err, '\n'));
	CHECK(o.n_desc_args == 0);
	CHECK(o.depth == fresh.depth && o.heap_admin == fresh.heap_admin &&
	      o.threshold == fresh.threshold && o.alignment == fresh.alignment &&
	      o.heap == fresh.heap && o.n_alloc_fns == fresh.n_alloc_fns &&
	      o.time_unit == fresh.time_unit &&
	      !strcmp(o.out_file, fresh.out_file));
	ht_options_fini(&o);
	ht_options_fini(&fresh);
}

static void
test_ranges(void)
{
	ACCEPT_UINT("--heap-admin=0", heap_admin, 0);
	ACCEPT_UINT("--heap-admin=1024", heap_admin, 1024);
	reject("--heap-admin=1025",
	       "--heap-admin: must be an integer from 0 to 1024, not '1025'");
	reject("--heap-admin=-1",
	       "--heap-admin: must be an integer from 0 to 1024, not '-1'");

	ACCEPT_UINT("--depth=1", depth, 1);
	ACCEPT_UINT("--depth=200", depth, 200);
	reject("--depth=0",
	       "--depth: must be an integer from 1 to 200, not '0'");
	reject("--depth=201",
	       "--depth: must be an integer from 1 to 200, not '201'");
	reject("--depth=500",
	       "--depth: must be an integer from 1 to 200, not '500'");

	ACCEPT_UINT("--detailed-freq=1", detailed_freq, 1);
	ACCEPT_UINT("--detailed-freq=1000000", detailed_freq, 1000000);
	reject("--detailed-freq=0", "--detailed-freq: must be an integer "
	       "from 1 to 1000000, not '0'");
	reject("--detailed-freq=1000001", "--detailed-freq: must be an "
	       "integer from 1 to 1000000, not '1000001'");

	ACCEPT_UINT("--max-snapshots=10", max_snapshots, 10);
	ACCEPT_UINT("--max-snapshots=1000", max_snapshots, 1000);
	reject("--max-snapshots=9", "--max-snapshots: must be an integer "
	       "from 10 to 1000, not '9'");
	reject("--max-snapshots=1001", "--max-snapshots: must be an integer "
	       "from 10 to 1000, not '1001'");

	ACCEPT_UINT("--alignment=16", alignment, 16);
	ACCEPT_UINT("--alignment=32", alignment, 32);
	ACCEPT_UINT("--alignment=4096", alignment, 4096);
	reject("--alignment=8", "--alignment: must be a power of two from "
	       "16 to 4096, not '8'");
	reject("--alignment=8192", "--alignment: must be a power of two "
	       "from 16 to 4096, not '8192'");
	reject("--alignment=24", "--alignment: must be a power of two from "
	       "16 to 4096, not '24'");

	ACCEPT_UINT("--threshold=0.0", threshold, 0.0);
	ACCEPT_UINT("--threshold=0", threshold, 0.0);
	ACCEPT_UINT("--threshold=100.0", threshold, 100.0);
	ACCEPT_UINT("--threshold=2.5", threshold, 2.5);
	reject("--threshold=-0.1", "--threshold: must be a number from 0.0 "
	       "to 100.0, not '-0.1'");
	reject("--threshold=100.1", "--threshold: must be a number from "
	       "0.0 to 100.0, not '100.1'");
	reject("--threshold=abc", "--threshold: must be a number from 0.0 "
	       "to 100.0, not 'abc'");

	ACCEPT_UINT("--peak-inaccuracy=0", peak_inaccuracy, 0.0);
	ACCEPT_UINT("--peak-inaccuracy=-5", peak_inaccuracy, -5.0);
	ACCEPT_UINT("--peak-inaccuracy=1e3", peak_inaccuracy, 1000.0);
	ACCEPT_UINT("--peak-inaccuracy=50.5", peak_inaccuracy, 50.5);
	reject("--peak-inaccuracy=x",
	       "--peak-inaccuracy: must be a number, not 'x'");
	reject("--peak-inaccuracy=inf",
	       "--peak-inaccuracy: must be a number, not 'inf'");
	reject("--peak-inaccuracy=nan",
	       "--peak-inaccuracy: must be a number, not 'nan'");
	reject("--peak-inaccuracy=0x10",
	       "--peak-inaccuracy: must be a number, not '0x10'");
	reject("--peak-inaccuracy=", "--peak-inaccuracy: must be a number, "
	       "not ''");
}

/* Integers are plain decimal digits, nothing else. */
static void
test_integer_syntax(void)
{
	static const char *const bad[] = {
		"", " 5", "5 ", "+5", "5x", "0x10", "1e1", "5.0",
		"99999999999999999999999999",
	};
	char arg[64], msg[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		snprintf(arg, sizeof(arg), "--depth=%s", bad[i]);
		snprintf(msg, sizeof(msg),
			 "--depth: must be an integer from 1 to 200, not '%s'",
			 bad[i]);
		reject(arg, msg);
	}
	ACCEPT_UINT("--depth=007", depth, 7);
}

#define ACCEPT_BOOL(name, field)                                           \
	do {                                                               \
		struct ht_options o_;                                      \
		char e_[256];                                              \
		ht_options_init(&o_);                                      \
		CHECK(apply1(&o_, "--" name "=yes", e_, sizeof(e_)) == 0); \
		CHECK(o_.field);                                           \
		CHECK(apply1(&o_, "--" name "=no", e_, sizeof(e_)) == 0);  \
		CHECK(!o_.field);                                          \
		reject("--" name "=Yes",                                   \
		       "--" name ": must be 'yes' or 'no', not 'Yes'");    \
		reject("--" name "=1",                                     \
		       "--" name ": must be 'yes' or 'no', not '1'");      \
		reject("--" name "=", "--" name ": must be 'yes' or "      \
		       "'no', not ''");                                    \
		ht_options_fini(&o_);                                      \
	} while (0)

static void
test_booleans(void)
{
	ACCEPT_BOOL("heap", heap);
	ACCEPT_BOOL("stacks", stacks);
	ACCEPT_BOOL("pages-as-heap", pages_as_heap);
	ACCEPT_BOOL("show-below-main", show_below_main);
	ACCEPT_BOOL("trace-children", trace_children);
	ACCEPT_BOOL("massif-compat", massif_compat);
	/* --follow-exec=auto asks whether --trace-children was typed */
	struct ht_options o;
	char e[256];
	ht_options_init(&o);
	CHECK(apply1(&o, "--trace-children=no", e, sizeof(e)) == 0);
	CHECK(o.trace_children_given && !o.trace_children);
	CHECK(apply1(&o, "--follow-exec=work", e, sizeof(e)) == 0);
	CHECK(o.follow_exec == HT_FOLLOW_EXEC_WORK);
	ht_options_fini(&o);
	reject("--heap", "--heap: needs a value, as in --heap=yes|no");
	reject("--depth", "--depth: needs a value, as in --depth=<1..200>");
}

static void
test_time_unit(void)
{
	ACCEPT_UINT("--time-unit=i", time_unit, HT_TIME_I);
	ACCEPT_UINT("--time-unit=ms", time_unit, HT_TIME_MS);
	ACCEPT_UINT("--time-unit=B", time_unit, HT_TIME_B);
	reject("--time-unit=b",
	       "--time-unit: must be 'i', 'ms' or 'B', not 'b'");
	reject("--time-unit=s",
	       "--time-unit: must be 'i', 'ms' or 'B', not 's'");
	reject("--time-unit=", "--time-unit: must be 'i', 'ms' or 'B', not ''");
	CHECK_STR(ht_time_unit_name(HT_TIME_I), "i");
	CHECK_STR(ht_time_unit_name(HT_TIME_MS), "ms");
	CHECK_STR(ht_time_unit_name(HT_TIME_B), "B");
}

static void
test_lists_and_strings(void)
{
	struct ht_options o;
	char err[256];

	ht_options_init(&o);
	CHECK(apply1(&o, "--alloc-fn=my_alloc", err, sizeof(err)) == 0);
	CHECK(apply1(&o, "--alloc-fn=operator new(unsigned long, "
		     "std::align_val_t)", err, sizeof(err)) == 0);
	CHECK(apply1(&o, "--ignore-fn=a", err, sizeof(err)) == 0);
	CHECK(apply1(&o, "--ignore-fn=b=c", err, sizeof(err)) == 0);
	CHECK(o.n_alloc_fns == 2);
	CHECK_STR(o.alloc_fns[0], "my_alloc");
	CHECK_STR(o.alloc_fns[1],
		  "operator new(unsigned long, std::align_val_t)");
	CHECK(o.n_ignore_fns == 2);
	CHECK_STR(o.ignore_fns[0], "a");
	CHECK_STR(o.ignore_fns[1], "b=c");
	CHECK(apply1(&o, "--massif-out-file=x.%p", err, sizeof(err)) == 0);
	CHECK(apply1(&o, "--massif-out-file=/tmp/y", err, sizeof(err)) == 0);
	CHECK_STR(o.out_file, "/tmp/y");
	ht_options_fini(&o);

	reject("--alloc-fn=", "--alloc-fn: must not be empty");
	reject("--ignore-fn=", "--ignore-fn: must not be empty");
	reject("--massif-out-file=", "--massif-out-file: must not be empty");
}

static void
test_flags_and_unknown(void)
{
	struct ht_options o;
	char err[256];

	ht_options_init(&o);
	CHECK(apply1(&o, "-q", err, sizeof(err)) == 0 && o.quiet);
	CHECK(apply1(&o, "-v", err, sizeof(err)) == 0 && o.verbose);
	ht_options_fini(&o);
	ht_options_init(&o);
	CHECK(apply1(&o, "--quiet", err, sizeof(err)) == 0 && o.quiet);
	CHECK(apply1(&o, "--verbose", err, sizeof(err)) == 0 && o.verbose);
	CHECK(o.n_desc_args == 0);
	ht_options_fini(&o);
	reject("--quiet=yes", "--quiet: takes no value");

	static const char *const unknown[] = {
		"--foo", "--foo=1", "--depthx=3", "--Depth=3", "-x", "-qv",
		"-q=1", "--", "-", "prog", "--massif-out", "-depth=3",
	};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(*unknown); i++) {
		ht_options_init(&o);
		if (apply1(&o, unknown[i], err, sizeof(err)) != 1) {
			fprintf(stderr, "'%s' not unknown\n", unknown[i]);
			failures++;
		}
		ht_options_fini(&o);
	}
}

/* Massif-level options are kept verbatim, in order; heaptrace's and the
   core's are not. */
static void
test_desc_args(void)
{
	static const char *const args[] = {
		"--depth=5", "-q", "--alignment=32", "--show-below-main=yes",
		"--threshold=2.50", "--massif-compat=yes",
		"--trace-children=yes", "--alloc-fn=foo", "--verbose",
		"--time-unit=B", "--heap=yes", "--heap-admin=0",
		"--stacks=no", "--pages-as-heap=no", "--ignore-fn=bar",
		"--peak-inaccuracy=2", "--detailed-freq=4",
		"--max-snapshots=50", "--massif-out-file=m.out",
	};
	static const char *const want[] = {
		"--depth=5", "--alignment=32", "--threshold=2.50",
		"--alloc-fn=foo", "--time-unit=B", "--heap=yes",
		"--heap-admin=0", "--stacks=no", "--pages-as-heap=no",
		"--ignore-fn=bar", "--peak-inaccuracy=2", "--detailed-freq=4",
		"--max-snapshots=50", "--massif-out-file=m.out",
	};
	struct ht_options o;
	char err[256];

	ht_options_init(&o);
	for (size_t i = 0; i < sizeof(args) / sizeof(*args); i++)
		CHECK(apply1(&o, args[i], err, sizeof(err)) == 0);
	CHECK(o.n_desc_args == sizeof(want) / sizeof(*want));
	for (size_t i = 0; i < o.n_desc_args && i < sizeof(want) /
							sizeof(*want); i++)
		CHECK_STR(o.desc_args[i], want[i]);
	CHECK(o.threshold == 2.5);
	CHECK_STR(o.out_file, "m.out");
	ht_options_fini(&o);
	CHECK(o.n_desc_args == 0 && !o.desc_args && !o.alloc_fns);
}

static void
test_finish(void)
{
	struct ht_options o;
	char err[256];

	ht_options_init(&o);
	CHECK(ht_options_finish(&o, err, sizeof(err)) == 0);
	CHECK(o.heap_admin == 8 && !o.pages_as_heap);
	ht_options_fini(&o);

	ht_options_init(&o);
	apply1(&o, "--pages-as-heap=yes", err, sizeof(err));
	apply1(&o, "--stacks=yes", err, sizeof(err));
	CHECK(ht_options_finish(&o, err, sizeof(err)) == -HT_E_BADOPT);
	CHECK_STR(err, "--pages-as-heap=yes cannot be used with --stacks=yes");
	ht_options_fini(&o);

	ht_options_init(&o);
	apply1(&o, "--pages-as-heap=yes", err, sizeof(err));
	apply1(&o, "--heap-admin=16", err, sizeof(err));
	CHECK(ht_options_finish(&o, err, sizeof(err)) == 0);
	CHECK(o.pages_as_heap && o.heap_admin == 0);
	ht_options_fini(&o);

	ht_options_init(&o);
	apply1(&o, "--pages-as-heap=yes", err, sizeof(err));
	apply1(&o, "--heap=no", err, sizeof(err));
	CHECK(ht_options_finish(&o, err, sizeof(err)) == 0);
	CHECK(!o.pages_as_heap && o.heap_admin == 8);
	ht_options_fini(&o);

	ht_options_init(&o);
	apply1(&o, "-q", err, sizeof(err));
	apply1(&o, "-v", err, sizeof(err));
	CHECK(ht_options_finish(&o, err, sizeof(err)) == -HT_E_BADOPT);
	CHECK_STR(err, "--quiet and --verbose cannot be used together");
	ht_options_fini(&o);
}

/* --ring-size under --sampling-interval: a megabyte unless given, the
   given size (even the exact default's) kept; exact mode's default. */
static void
test_sampled_ring_size(void)
{
	static const struct {
		const char *opts[2];
		unsigned ring_size;
	} cases[] = {
		{ { NULL, NULL }, 8388608 },
		{ { "--sampling-interval=512K", NULL }, 1048576 },
		{ { "--sampling-interval=0", NULL }, 8388608 },
		{ { "--sampling-interval=64K", "--ring-size=8388608" }, 8388608 },
		{ { "--ring-size=65536", "--sampling-interval=4K" }, 65536 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ht_options o;
		char err[256];
		ht_options_init(&o);
		for (size_t j = 0; j < 2 && cases[i].opts[j]; j++)
			apply1(&o, cases[i].opts[j], err, sizeof(err));
		CHECK(ht_options_finish(&o, err, sizeof(err)) == 0);
		CHECK(o.ring_size == cases[i].ring_size);
		ht_options_fini(&o);
	}
}

/* memcheck's leak options: defaults, kind sets, "yes" as full, and the
   combinations that have no heap blocks to check. */
static void
test_leak_options(void)
{
	const unsigned all = HT_LEAK_KIND_DEFINITE | HT_LEAK_KIND_INDIRECT |
			     HT_LEAK_KIND_POSSIBLE | HT_LEAK_KIND_REACHABLE;
	struct ht_options o;
	char err[256];

	ht_options_init(&o);
	CHECK(o.leak_check == HT_LEAK_CHECK_NO);
	CHECK(o.show_leak_kinds ==
	      (HT_LEAK_KIND_DEFINITE | HT_LEAK_KIND_POSSIBLE));
	CHECK(o.errors_for_leak_kinds == o.show_leak_kinds);
	CHECK(o.error_exitcode == 0 && o.num_callers == 12);
	CHECK(apply1(&o, "--show-leak-kinds=all", err, sizeof(err)) == 0);
	CHECK(o.show_leak_kinds == all);
	CHECK(apply1(&o, "--show-leak-kinds=none", err, sizeof(err)) == 0);
	CHECK(o.show_leak_kinds == 0);
	CHECK(apply1(&o, "--errors-for-leak-kinds=reachable,indirect", err,
		     sizeof(err)) == 0);
	CHECK(o.errors_for_leak_kinds ==
	      (HT_LEAK_KIND_REACHABLE | HT_LEAK_KIND_INDIRECT));
	CHECK(apply1(&o, "--show-leak-kinds=definite,", err, sizeof(err)) ==
	      -HT_E_BADOPT);
	CHECK(o.show_leak_kinds == 0);
	CHECK_STR(err, "--show-leak-kinds: must be 'all', 'none' or a "
		       "comma-separated list of definite, indirect, possible, "
		       "reachable, not 'definite,'");
	CHECK(apply1(&o, "--show-leak-kinds=all,definite", err, sizeof(err)) ==
	      -HT_E_BADOPT);
	CHECK(apply1(&o, "--show-leak-kinds=definitely", err, sizeof(err)) ==
	      -HT_E_BADOPT);
	CHECK(apply1(&o, "--show-leak-kinds=", err, sizeof(err)) ==
	      -HT_E_BADOPT);
	CHECK(apply1(&o, "--error-exitcode=256", err, sizeof(err)) ==
	      -HT_E_BADOPT);
	CHECK(apply1(&o, "--error-exitcode=42", err, sizeof(err)) == 0);
	CHECK(o.error_exitcode == 42);
	CHECK(apply1(&o, "--leak-check=Full", err, sizeof(err)) ==
	      -HT_E_BADOPT);
	CHECK(apply1(&o, "--leak-check=yes", err, sizeof(err)) == 0);
	CHECK(ht_options_finish(&o, err, sizeof(err)) == 0);
	CHECK(o.leak_check == HT_LEAK_CHECK_FULL);
	CHECK(o.n_desc_args == 0); /* not Massif's: not on the desc: line */
	ht_options_fini(&o);

	ht_options_init(&o);
	apply1(&o, "--leak-check=summary", err, sizeof(err));
	apply1(&o, "--pages-as-heap=yes", err, sizeof(err));
	CHECK(ht_options_finish(&o, err, sizeof(err)) == -HT_E_BADOPT);
	CHECK_STR(err, "--leak-check needs heap blocks: not with --heap=no "
		       "or --pages-as-heap=yes");
	ht_options_fini(&o);

	ht_options_init(&o);
	apply1(&o, "--leak-check=full", err, sizeof(err));
	apply1(&o, "--heap=no", err, sizeof(err));
	CHECK(ht_options_finish(&o, err, sizeof(err)) == -HT_E_BADOPT);
	ht_options_fini(&o);
}

/* Parse the words after "heaptrace" (NULL-terminated varargs). */
static int
parse(struct ht_cmdline *cl, char *err, size_t errlen, ...)
{
	static char *argv[32];
	va_list ap;
	int argc = 0;

	argv[argc++] = "heaptrace";
	va_start(ap, errlen);
	for (char *a; (a = va_arg(ap, char *)) && argc < 31;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	err[0] = '\0';
	return ht_cmdline_parse(cl, argc, argv, err, errlen);
}

static void
parse_fails(const char *msg, ...)
{
	static char *argv[32];
	struct ht_cmdline cl;
	char err[512];
	va_list ap;
	int argc = 0;

	argv[argc++] = "heaptrace";
	va_start(ap, msg);
	for (char *a; (a = va_arg(ap, char *)) && argc < 31;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	err[0] = '\0';
	CHECK(ht_cmdline_parse(&cl, argc, argv, err, sizeof(err)) ==
	      -HT_E_BADOPT);
	CHECK_STR(err, msg);
	ht_cmdline_fini(&cl);
}

static void
test_cmdline_run(void)
{
	struct ht_cmdline cl;
	char err[512];

	CHECK(parse(&cl, err, sizeof(err), "run", "--depth=5", "prog", "a",
		    "--depth=6", "--", NULL) == 0);
	CHECK(cl.command == HT_CMD_RUN);
	CHECK(cl.opt.depth == 5);
	CHECK(cl.prog_argc == 4);
	CHECK_STR(cl.prog_argv[0], "prog");
	CHECK_STR(cl.prog_argv[2], "--depth=6");
	CHECK_STR(cl.prog_argv[3], "--");
	CHECK(cl.prog_argv[4] == NULL);
	CHECK(cl.opt.n_desc_args == 1);
	CHECK_STR(cl.opt.desc_args[0], "--depth=5");
	ht_cmdline_fini(&cl);

	CHECK(parse(&cl, err, sizeof(err), "run", "-q", "--", "--weird", "-v",
		    NULL) == 0);
	CHECK(cl.command == HT_CMD_RUN && cl.opt.quiet && !cl.opt.verbose);
	CHECK(cl.prog_argc == 2);
	CHECK_STR(cl.prog_argv[0], "--weird");
	ht_cmdline_fini(&cl);

	CHECK(parse(&cl, err, sizeof(err), "run", "./t1", NULL) == 0);
	CHECK(cl.prog_argc == 1 && cl.opt.n_desc_args == 0);
	ht_cmdline_fini(&cl);

	/* Options are settled by ht_options_finish. */
	CHECK(parse(&cl, err, sizeof(err), "run", "--pages-as-heap=yes",
		    "x", NULL) == 0);
	CHECK(cl.opt.heap_admin == 0);
	ht_cmdline_fini(&cl);

	CHECK(parse(&cl, err, sizeof(err), "run", "--depth=5", "--help",
		    "prog", NULL) == 0);
	CHECK(cl.command == HT_CMD_HELP);
	ht_cmdline_fini(&cl);

	const char *missing = "run: missing the program to run "
			      "(heaptrace run [options] [--] PROG [ARGS...])";
	parse_fails(missing, "run", NULL);
	parse_fails(missing, "run", "--depth=5", NULL);
	parse_fails(missing, "run", "--", NULL);
	parse_fails("unknown option '--foo' (see heaptrace --help)", "run",
		    "--foo", "prog", NULL);
	parse_fails("unknown option '-x' (see heaptrace --help)", "run",
		    "-x", "prog", NULL);
	parse_fails("--depth: must be an integer from 1 to 200, not '500'",
		    "run", "--depth=500", "prog", NULL);
	parse_fails("--pages-as-heap=yes cannot be used with --stacks=yes",
		    "run", "--stacks=yes", "--pages-as-heap=yes", "x", NULL);
}

static void
test_cmdline_attach(void)
{
	struct ht_cmdline cl;
	char err[512];

	CHECK(parse(&cl, err, sizeof(err), "attach", "1234", NULL) == 0);
	CHECK(cl.command == HT_CMD_ATTACH && cl.pid == 1234);
	ht_cmdline_fini(&cl);

	CHECK(parse(&cl, err, sizeof(err), "attach", "--time-unit=ms", "--",
		    "2147483647", NULL) == 0);
	CHECK(cl.pid == 2147483647 && cl.opt.time_unit == HT_TIME_MS);
	CHECK(cl.opt.n_desc_args == 1);
	ht_cmdline_fini(&cl);

	parse_fails("attach: missing the PID to attach to "
		    "(heaptrace attach [options] PID)", "attach", NULL);
	parse_fails("attach: missing the PID to attach to "
		    "(heaptrace attach [options] PID)", "attach", "-q", NULL);
	static const char *const bad[] = {
		"0", "abc", "12x", "2147483648", "99999999999999999999", "+5",
		"",
	};
	char msg[128];
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		snprintf(msg, sizeof(msg), "attach: PID must be a positive "
			 "decimal integer, not '%s'", bad[i]);
		parse_fails(msg, "attach", bad[i], NULL);
	}
	parse_fails("attach: unexpected argument '5' after the PID",
		    "attach", "4", "5", NULL);
	parse_fails("unknown option '--bogus' (see heaptrace --help)",
		    "attach", "--bogus", "4", NULL);
}

static void
test_cmdline_other(void)
{
	struct ht_cmdline cl;
	char err[512];

	static const char *const helps[] = { "--help", "-h", "help" };
	for (size_t i = 0; i < 3; i++) {
		CHECK(parse(&cl, err, sizeof(err), helps[i], NULL) == 0);
		CHECK(cl.command == HT_CMD_HELP);
		ht_cmdline_fini(&cl);
	}
	CHECK(parse(&cl, err, sizeof(err), "--version", NULL) == 0);
	CHECK(cl.command == HT_CMD_VERSION);
	ht_cmdline_fini(&cl);

	parse_fails("missing command: run or attach (see heaptrace --help)",
		    NULL);
	parse_fails("unknown command 'profile' (see heaptrace --help)",
		    "profile", "x", NULL);
	parse_fails("unknown command 'Run' (see heaptrace --help)", "Run",
		    "x", NULL);
	parse_fails("options go after the command: heaptrace run|attach "
		    "[options] ... (see heaptrace --help)", "--depth=5", "run",
		    "x", NULL);
	parse_fails("--version: unexpected argument 'x'", "--version", "x",
		    NULL);
}

static void
test_usage(void)
{
	static const char *const want[] = {
		"--heap=yes|no", "--heap-admin=<0..1024>", "[8]",
		"--stacks=yes|no", "--pages-as-heap=yes|no",
		"--depth=<1..200>", "[30]", "--alloc-fn=<name>",
		"--ignore-fn=<name>", "--threshold=<0.0..100.0>", "[1.0]",
		"--peak-inaccuracy=<number>", "--time-unit=i|ms|B", "[i]",
		"--detailed-freq=<1..1000000>", "[10]",
		"--max-snapshots=<10..1000>", "[100]",
		"--massif-out-file=<file>", "[massif.out.%p]",
		"--alignment=<16..4096>", "[16]", "--show-below-main=yes|no",
		"--trace-children=yes|no", "--massif-compat=yes|no",
		"-q, --quiet", "-v, --verbose", "heaptrace run [options] [--]",
		"heaptrace attach [options] PID", "--version",
		"hardware", "%q{VAR}",
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ht_options_usage(f);
	fclose(f);
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		if (!strstr(text, want[i])) {
			fprintf(stderr, "usage lacks '%s'\n", want[i]);
			failures++;
		}
	}
	/* Readable on an 80-column terminal. */
	for (const char *l = text; *l;) {
		size_t n = strcspn(l, "\n");
		if (n > 80) {
			fprintf(stderr, "usage line too long: %.*s\n", (int)n,
				l);
			failures++;
		}
		l += n + (l[n] != '\0');
	}
	free(text);
}

int
main(void)
{
	test_defaults();
	test_ranges();
	test_integer_syntax();
	test_booleans();
	test_time_unit();
	test_lists_and_strings();
	test_flags_and_unknown();
	test_desc_args();
	test_finish();
	test_sampled_ring_size();
	test_leak_options();
	test_cmdline_run();
	test_cmdline_attach();
	test_cmdline_other();
	test_usage();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
