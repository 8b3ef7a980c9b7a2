/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every option heaptrace takes, declared once with its default, range and
   help (options.c), parsed the way Massif parses them, and carried through
   the program as const struct ht_options *. */
#ifndef HT_COMMON_OPTIONS_H
#define HT_COMMON_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ht_time_unit {
	HT_TIME_I,  /* instructions executed by the target */
	HT_TIME_MS, /* wall-clock milliseconds since the start */
	HT_TIME_B,  /* bytes allocated plus bytes freed */
};

/* --follow-exec: what an exec in a process that did little before it
   means (tracer/loop.c, "Exec wrappers"). */
enum ht_follow_exec {
	HT_FOLLOW_EXEC_AUTO,     /* work; wrappers when --trace-children or
				    --leak-check is given; no with
				    --massif-compat=yes */
	HT_FOLLOW_EXEC_WORK,     /* wrappers, and every other exec followed;
				    a program only this reaches that stayed
				    below 1 MiB of heap is not written */
	HT_FOLLOW_EXEC_WRAPPERS, /* a wrapper's exec is followed, its profile
				    dropped: the program it becomes is
				    profiled in its place */
	HT_FOLLOW_EXEC_NO,       /* --trace-children alone decides */
};

/* --leak-check (memcheck's names; "yes" is taken as full, as memcheck
   does, and stored as full). */
enum ht_leak_check {
	HT_LEAK_CHECK_NO,
	HT_LEAK_CHECK_SUMMARY,
	HT_LEAK_CHECK_FULL,
};

/* A set of leak kinds (--show-leak-kinds, --errors-for-leak-kinds): bit
   K is snapshot/leak.h's enum leak_kind K. */
#define HT_LEAK_KIND_REACHABLE 1u
#define HT_LEAK_KIND_POSSIBLE 2u
#define HT_LEAK_KIND_INDIRECT 4u
#define HT_LEAK_KIND_DEFINITE 8u

enum ht_backend {
	HT_BACKEND_AUTO,   /* inline, an int3 where a function cannot be
			      patched (never a whole process's fallback) */
	HT_BACKEND_INLINE, /* recording stub in the target, no stop per call */
	HT_BACKEND_PTRACE, /* a ptrace stop at every call */
};

struct ht_options {
	/* Massif's own options, Massif's defaults. */
	bool heap;               /* --heap=yes */
	unsigned heap_admin;     /* --heap-admin=8, 0..1024 */
	bool stacks;             /* --stacks=no */
	bool pages_as_heap;      /* --pages-as-heap=no */
	unsigned depth;          /* --depth=30, 1..200 */
	char **alloc_fns;        /* each --alloc-fn=NAME; Massif's defaults are
				    the stack filter's, not listed here */
	size_t n_alloc_fns;
	char **ignore_fns;       /* --ignore-fn=NAME, repeatable */
	size_t n_ignore_fns;
	double threshold;        /* --threshold=1.0, 0..100 */
	double peak_inaccuracy;  /* --peak-inaccuracy=1.0 */
	enum ht_time_unit time_unit; /* --time-unit=i */
	unsigned detailed_freq;  /* --detailed-freq=10, 1..1000000 */
	unsigned max_snapshots;  /* --max-snapshots=100, 10..1000 */
	const char *out_file;    /* --massif-out-file=massif.out.%p, unexpanded;
				    lives as long as OPT */
	unsigned alignment;      /* --alignment=16, 16..4096, power of two */

	/* Valgrind core options that change what Massif writes. */
	bool show_below_main;    /* --show-below-main=no */
	bool stats;              /* --stats=no */
	bool trace_children;     /* --trace-children=no: follow exec'd children */
	bool trace_children_given; /* ... typed on the command line */
	enum ht_follow_exec follow_exec; /* --follow-exec=auto (heaptrace's) */

	/* heaptrace's own. */
	bool massif_compat;      /* --massif-compat=no */
	bool python_alloc;       /* --python-alloc=yes: CPython's PyObject_*
				    and PyMem_* are allocators too (not
				    with --massif-compat or --pages-as-heap) */
	bool python_frames;      /* --python-frames=yes: Python functions in
				    place of CPython's evaluation frames
				    (ht_options_python_frames) */
	bool python_frames_given; /* ... typed on the command line */
	enum ht_backend backend; /* --backend=auto */
	unsigned ring_size;      /* --ring-size=8388608; 1048576 with
				    --sampling-interval when not given */
	bool ring_size_set;      /* --ring-size given on the command line */
	bool quiet;              /* -q, --quiet */
	bool verbose;            /* -v, --verbose */
	unsigned duration;       /* --duration=SECONDS (attach only); 0:
				    until interrupted or the target exits */

	/* memcheck's leak check, done from outside at the target's exit. */
	enum ht_leak_check leak_check; /* --leak-check=no */
	unsigned show_leak_kinds;      /* --show-leak-kinds=definite,possible */
	unsigned errors_for_leak_kinds; /* --errors-for-leak-kinds=definite,
					   possible */
	unsigned error_exitcode;       /* --error-exitcode=0 (0: the target's) */
	unsigned num_callers;          /* --num-callers=12: frames shown per
					  loss record */

	bool html;                     /* --html=no: PROFILE.html beside each
					  profile (heaptrace report's page) */
	bool symbol_cache;             /* --symbol-cache=yes: symbols/cache.c */
	unsigned snapshot_every;       /* --snapshot-every=SECONDS: the
					  profile so far every SECONDS, as
					  on demand; 0: never */
	bool pprof;                    /* --pprof=no: PROFILE.pb.gz beside
					  each profile and snapshot */
	unsigned tick_ms;              /* not an option: `heaptrace top`'s
					  --interval, a snapshot callback
					  this often in place of
					  --snapshot-every's; 0: none */

	/* Byte sampling (README, "Sampled profiling"). */
	uint64_t sampling_interval;    /* --sampling-interval=0: bytes between
					  samples on average; 0: every call */
	uint64_t sampling_seed;        /* --sampling-seed=N, else drawn at
					  random by ht_options_finish */
	bool sampling_seed_set;        /* given on the command line */

	/* The Massif-level arguments exactly as typed, in order: the desc: line. */
	char **desc_args;
	size_t n_desc_args;
};

enum ht_command {
	HT_CMD_NONE,
	HT_CMD_RUN,
	HT_CMD_ATTACH,
	HT_CMD_HELP,
	HT_CMD_VERSION,
};

struct ht_cmdline {
	enum ht_command command;
	struct ht_options opt;
	char **prog_argv;  /* run: the program and its arguments, borrowed from
			      argv and NULL-terminated like it */
	int prog_argc;
	long pid;          /* attach: the process */
};

/* Set OPT to Massif's defaults. */
void ht_options_init(struct ht_options *opt);
/* Free what OPT owns (lists, desc arguments). */
void ht_options_fini(struct ht_options *opt);

/* Apply one "--name=value" (or "-q"/"-v") argument ARG to OPT, copying what
   it keeps; a Massif-level ARG is also appended to desc_args. Returns 0,
   1 when ARG is not an option heaptrace knows, or -HT_E_BADOPT with a
   one-line reason in ERR (ERRLEN bytes) naming the option and what it
   accepts. */
int ht_options_apply(struct ht_options *opt, const char *arg, char *err,
		     size_t errlen);
/* Check combinations once all arguments are in and settle what one option
   implies for another as Massif does (--heap=no turns --pages-as-heap off,
   --pages-as-heap makes --heap-admin 0). Returns 0 or -HT_E_BADOPT with ERR
   filled (--stacks with --pages-as-heap, -q with -v). */
int ht_options_finish(struct ht_options *opt, char *err, size_t errlen);

/* Parse heaptrace's whole command line into CL: "run [options] [--] PROG
   [ARGS...]", "attach [options] PID [options]", "--help"/"-h"/"help",
   "--version". run's options end at "--" or at the first word not
   starting with '-'; attach's may also follow the PID ("--" ends them). Runs
   ht_options_finish. Returns 0, or -HT_E_BADOPT with a one-line message in
   ERR; either way CL is then released with ht_cmdline_fini. */
int ht_cmdline_parse(struct ht_cmdline *cl, int argc, char **argv, char *err,
		     size_t errlen);
/* Free what CL owns. */
void ht_cmdline_fini(struct ht_cmdline *cl);

/* Write the --help text to OUT. */
void ht_options_usage(FILE *out);
/* Whether Python frames are wanted: --python-frames=yes, which
   --massif-compat=yes turns off unless it was given. */
bool ht_options_python_frames(const struct ht_options *opt);

/* "i", "ms" or "B". */
const char *ht_time_unit_name(enum ht_time_unit u);

#endif
