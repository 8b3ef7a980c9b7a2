/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heaptrace's options and command line. One table below declares every
   option with its default, range and help; parsing, range checks, defaults
   and --help are all driven by it, so they cannot drift apart (Massif keeps
   its clo_* settings the same way). */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "xalloc.h"

enum opt_kind {
	OPT_BOOL,   /* yes|no */
	OPT_UINT,   /* decimal integer in [LO, HI] */
	OPT_POW2,   /* OPT_UINT that must also be a power of two */
	OPT_REAL,   /* decimal number, in [LO, HI] unless LO > HI */
	OPT_CHOICE, /* one of CHOICES, stored as its index into the
		       option's enum (ours are all int-sized) */
	OPT_STRING, /* non-empty text */
	OPT_LIST,   /* non-empty text, each occurrence appended */
	OPT_FLAG,   /* no value: sets a bool */
	OPT_KINDS,  /* a set of leak kinds, memcheck's syntax (unsigned) */
	OPT_BYTES,  /* decimal uint64_t in [LO, HI] with an optional suffix
		       K, M or G (1024, 1024^2, 1024^3) */
	OPT_U64,    /* decimal uint64_t, any; its SET_OFF bool says given */
};

enum opt_group {
	GROUP_MASSIF, /* Massif's own and replacement-malloc options */
	GROUP_CORE,   /* Valgrind core options */
	GROUP_LEAK,   /* memcheck's leak check options */
	GROUP_OWN,    /* heaptrace's */
};

struct opt_spec {
	const char *name;  /* "--depth" */
	const char *alias; /* "-q", or NULL */
	enum opt_kind kind;
	size_t off;        /* the field in struct ht_options */
	size_t count_off;  /* OPT_LIST: its size_t count; OPT_U64, and
			      OPT_BOOL, OPT_UINT or OPT_POW2 when not 0: its
			      bool "given" */
	const char *def;   /* the default as it would be typed; NULL: none */
	double lo, hi;
	const char *const *choices; /* OPT_CHOICE: NULL-terminated */
	const char *metavar;        /* OPT_STRING, OPT_LIST: "<file>" */
	enum opt_group group;       /* GROUP_MASSIF ones go on the desc: line */
	const char *help;           /* filled to the terminal by --help */
};

#define FIELD(f) offsetof(struct ht_options, f)

static const char *const backend_names[] = {
	[HT_BACKEND_AUTO] = "auto",
	[HT_BACKEND_INLINE] = "inline",
	[HT_BACKEND_PTRACE] = "ptrace",
	NULL,
};

static const char *const follow_exec_names[] = {
	[HT_FOLLOW_EXEC_AUTO] = "auto",
	[HT_FOLLOW_EXEC_WORK] = "work",
	[HT_FOLLOW_EXEC_WRAPPERS] = "wrappers",
	[HT_FOLLOW_EXEC_NO] = "no",
	NULL,
};

/* "yes" last: memcheck's old spelling of full, folded into it by
   ht_options_finish. */
#define LEAK_CHECK_YES 3
static const char *const leak_check_names[] = {
	[HT_LEAK_CHECK_NO] = "no",
	[HT_LEAK_CHECK_SUMMARY] = "summary",
	[HT_LEAK_CHECK_FULL] = "full",
	[LEAK_CHECK_YES] = "yes",
	NULL,
};

static const char *const time_unit_names[] = {
	[HT_TIME_I] = "i",
	[HT_TIME_MS] = "ms",
	[HT_TIME_B] = "B",
	NULL,
};

/* OPT_STRING values point into the desc_args copy of their argument, so
   every OPT_STRING option must be in GROUP_MASSIF. */
static const struct opt_spec specs[] = {
	{ .name = "--heap", .kind = OPT_BOOL, .off = FIELD(heap),
	  .def = "yes", .group = GROUP_MASSIF,
	  .help = "profile the heap" },
	{ .name = "--heap-admin", .kind = OPT_UINT, .off = FIELD(heap_admin),
	  .def = "8", .lo = 0, .hi = 1024, .group = GROUP_MASSIF,
	  .help = "allocator overhead per block, in bytes" },
	{ .name = "--stacks", .kind = OPT_BOOL, .off = FIELD(stacks),
	  .def = "no", .group = GROUP_MASSIF,
	  .help = "profile the stacks" },
	{ .name = "--pages-as-heap", .kind = OPT_BOOL,
	  .off = FIELD(pages_as_heap), .def = "no", .group = GROUP_MASSIF,
	  .help = "profile memory at the page level (mmap, mremap, brk) "
		  "instead of heap blocks" },
	{ .name = "--depth", .kind = OPT_UINT, .off = FIELD(depth),
	  .def = "30", .lo = 1, .hi = 200, .group = GROUP_MASSIF,
	  .help = "depth of the allocation trees, in frames" },
	{ .name = "--alloc-fn", .kind = OPT_LIST, .off = FIELD(alloc_fns),
	  .count_off = FIELD(n_alloc_fns), .metavar = "<name>",
	  .group = GROUP_MASSIF,
	  .help = "treat function <name> like malloc (added to malloc, "
		  "calloc, realloc, operator new...); repeatable" },
	{ .name = "--ignore-fn", .kind = OPT_LIST, .off = FIELD(ignore_fns),
	  .count_off = FIELD(n_ignore_fns), .metavar = "<name>",
	  .group = GROUP_MASSIF,
	  .help = "ignore blocks allocated directly in function <name>; "
		  "repeatable" },
	{ .name = "--threshold", .kind = OPT_REAL, .off = FIELD(threshold),
	  .def = "1.0", .lo = 0, .hi = 100, .group = GROUP_MASSIF,
	  .help = "significance threshold of tree nodes (%)" },
	{ .name = "--peak-inaccuracy", .kind = OPT_REAL,
	  .off = FIELD(peak_inaccuracy), .def = "1.0", .lo = 1, .hi = 0,
	  .group = GROUP_MASSIF,
	  .help = "how much, in percent, a peak must exceed the last one "
		  "to be taken" },
	{ .name = "--time-unit", .kind = OPT_CHOICE, .off = FIELD(time_unit),
	  .def = "i", .choices = time_unit_names, .group = GROUP_MASSIF,
	  .help = "time axis: instructions executed, milliseconds, or "
		  "bytes allocated plus freed" },
	{ .name = "--detailed-freq", .kind = OPT_UINT,
	  .off = FIELD(detailed_freq), .def = "10", .lo = 1, .hi = 1000000,
	  .group = GROUP_MASSIF,
	  .help = "every Nth snapshot is detailed" },
	{ .name = "--max-snapshots", .kind = OPT_UINT,
	  .off = FIELD(max_snapshots), .def = "100", .lo = 10, .hi = 1000,
	  .group = GROUP_MASSIF,
	  .help = "snapshots kept; more are thinned out" },
	{ .name = "--massif-out-file", .kind = OPT_STRING,
	  .off = FIELD(out_file), .def = "massif.out.%p", .metavar = "<file>",
	  .group = GROUP_MASSIF,
	  .help = "profile's file name, see Notes" },
	{ .name = "--alignment", .kind = OPT_POW2, .off = FIELD(alignment),
	  .def = "16", .lo = 16, .hi = 4096, .group = GROUP_MASSIF,
	  .help = "minimum block alignment, a power of two" },
	{ .name = "--show-below-main", .kind = OPT_BOOL,
	  .off = FIELD(show_below_main), .def = "no", .group = GROUP_CORE,
	  .help = "keep the frames below main() in the trees" },
	{ .name = "--trace-children", .kind = OPT_BOOL,
	  .off = FIELD(trace_children), .def = "no", .group = GROUP_CORE,
	  .count_off = FIELD(trace_children_given),
	  .help = "keep profiling a process after it execs a new program" },
	{ .name = "--stats", .kind = OPT_BOOL,
	  .off = FIELD(stats), .def = "no", .group = GROUP_CORE,
	  .help = "print counts of events, snapshots and cullings at the end" },
	{ .name = "--massif-compat", .kind = OPT_BOOL,
	  .off = FIELD(massif_compat), .def = "no", .group = GROUP_OWN,
	  .help = "report exactly Massif's numbers: model Valgrind's "
		  "allocator for extra bytes and B time, run the exit-time "
		  "frees Valgrind runs; no: the real allocator's overhead" },
	{ .name = "--python-alloc", .kind = OPT_BOOL,
	  .off = FIELD(python_alloc), .def = "yes", .group = GROUP_OWN,
	  .help = "count CPython's PyObject_Malloc and PyMem_Malloc "
		  "families as allocators (pymalloc serves small objects "
		  "from mmap'ed arenas malloc never sees); not with "
		  "--massif-compat=yes or --pages-as-heap=yes" },
	{ .name = "--python-frames", .kind = OPT_BOOL,
	  .off = FIELD(python_frames), .def = "yes", .group = GROUP_OWN,
	  .count_off = FIELD(python_frames_given),
	  .help = "in a CPython process, show the Python functions that "
		  "were running (module.function (file.py:line)) in place "
		  "of the interpreter's evaluation frames; off with "
		  "--massif-compat=yes unless given" },
	{ .name = "--follow-exec", .kind = OPT_CHOICE,
	  .off = FIELD(follow_exec), .def = "auto",
	  .choices = follow_exec_names, .group = GROUP_OWN,
	  .help = "wrappers: a process whose heap stayed below 1 MiB (and "
		  "no snapshot taken) is a wrapper when it execs (a shell "
		  "script, a pyenv shim): the exec is followed, its profile "
		  "dropped; what a program behind a wrapper forks while "
		  "below 1 MiB is not profiled; work: wrappers, and other "
		  "execs followed too, a program only it reaches that stayed "
		  "below 1 MiB not written; no: --trace-children alone "
		  "decides, as in Massif; auto: work (wrappers given "
		  "--trace-children or --leak-check, no with "
		  "--massif-compat=yes)" },
	{ .name = "--backend", .kind = OPT_CHOICE, .off = FIELD(backend),
	  .def = "auto", .choices = backend_names, .group = GROUP_OWN,
	  .help = "how allocator calls are caught: inline records them in "
		  "the target without stopping it, ptrace stops it at each "
		  "call; auto: inline, with a ptrace stop only at a function "
		  "it cannot patch" },
	{ .name = "--ring-size", .kind = OPT_POW2, .off = FIELD(ring_size),
	  .count_off = FIELD(ring_size_set), .def = "8388608", .lo = 4096,
	  .hi = 1073741824, .group = GROUP_OWN,
	  .help = "bytes of the inline backend's event ring, a power of two "
		  "(with --sampling-interval, 1048576 unless given: its "
		  "records are rare)" },
	{ .name = "--duration", .kind = OPT_UINT, .off = FIELD(duration),
	  .lo = 1, .hi = 31536000, .group = GROUP_OWN,
	  .help = "attach: detach after this many seconds (default: at "
		  "SIGINT, SIGTERM, SIGHUP or the target's exit)" },
	{ .name = "--leak-check", .kind = OPT_CHOICE, .off = FIELD(leak_check),
	  .def = "no", .choices = leak_check_names, .group = GROUP_LEAK,
	  .help = "at the target's exit, scan its memory for blocks no "
		  "pointer leads to, and report them as memcheck does: "
		  "summary: the totals, full: each loss record with its "
		  "allocation stack. attach: the scan is made when the "
		  "target exits, or when heaptrace detaches (blocks "
		  "allocated before the attach are not known, and their "
		  "memory is searched for pointers like any other)" },
	{ .name = "--show-leak-kinds", .kind = OPT_KINDS,
	  .off = FIELD(show_leak_kinds), .def = "definite,possible",
	  .group = GROUP_LEAK,
	  .help = "the kinds of loss records --leak-check=full shows: "
		  "definite, indirect, possible, reachable, all, none" },
	{ .name = "--errors-for-leak-kinds", .kind = OPT_KINDS,
	  .off = FIELD(errors_for_leak_kinds), .def = "definite,possible",
	  .group = GROUP_LEAK,
	  .help = "the kinds of loss records --leak-check=full counts as "
		  "errors" },
	{ .name = "--error-exitcode", .kind = OPT_UINT,
	  .off = FIELD(error_exitcode), .def = "0", .lo = 0, .hi = 255,
	  .group = GROUP_LEAK,
	  .help = "exit with this code when the leak check found errors "
		  "(and the target exited normally); 0: the target's own "
		  "status" },
	{ .name = "--num-callers", .kind = OPT_UINT, .off = FIELD(num_callers),
	  .def = "12", .lo = 1, .hi = 500, .group = GROUP_LEAK,
	  .help = "frames of a loss record's allocation stack" },
	{ .name = "--html", .kind = OPT_BOOL, .off = FIELD(html),
	  .def = "no", .group = GROUP_OWN,
	  .help = "also write each profile's HTML page beside it, "
		  "PROFILE.html (as heaptrace report --format=html)" },
	{ .name = "--snapshot-every", .kind = OPT_UINT,
	  .off = FIELD(snapshot_every), .lo = 1, .hi = 31536000,
	  .group = GROUP_OWN,
	  .help = "every this many seconds, write the profile so far of "
		  "each profiled process as a snapshot on demand does "
		  "(PROFILE.snapshot-N, with its .sites), for continuous "
		  "profiling (default: never)" },
	{ .name = "--pprof", .kind = OPT_BOOL, .off = FIELD(pprof),
	  .def = "no", .group = GROUP_OWN,
	  .help = "also write each profile and snapshot as a gzip'd pprof "
		  "profile beside it, FILE.pb.gz (inuse figures at its "
		  "end), for go tool pprof, Pyroscope or Parca" },
	{ .name = "--symbol-cache", .kind = OPT_BOOL,
	  .off = FIELD(symbol_cache), .def = "yes", .group = GROUP_OWN,
	  .help = "keep what the program's code addresses resolve to, and "
		  "its unwinding rules, between runs, keyed by each "
		  "library's build-id and files, in $XDG_CACHE_HOME/heaptrace "
		  "(else ~/.cache/heaptrace): a program run again starts "
		  "without reading debug information" },
	{ .name = "--sampling-interval", .kind = OPT_BYTES,
	  .off = FIELD(sampling_interval), .def = "0", .lo = 0,
	  .hi = 1099511627776.0, .group = GROUP_OWN,
	  .help = "record allocations sampled by bytes, one sample every "
		  "this many bytes on average per thread (suffix K, M or "
		  "G: 1024, 1024^2, 1024^3), each standing for the bytes "
		  "around it, so that every figure is an estimate (error "
		  "about sqrt(interval/bytes) of a site's bytes); blocks of "
		  "at least the interval are always recorded at their size. "
		  "For production: 512K costs a service little. 0: record "
		  "every call. Not with --leak-check, --massif-compat=yes or "
		  "--pages-as-heap=yes" },
	{ .name = "--sampling-seed", .kind = OPT_U64,
	  .off = FIELD(sampling_seed), .count_off = FIELD(sampling_seed_set),
	  .group = GROUP_OWN,
	  .help = "seed of the sampler's random numbers, for runs that "
		  "sample the same calls again (default: a random seed, "
		  "shown by -v and written in the profile)" },
	{ .name = "--quiet", .alias = "-q", .kind = OPT_FLAG,
	  .off = FIELD(quiet), .group = GROUP_OWN,
	  .help = "print nothing but errors (see Notes)" },
	{ .name = "--verbose", .alias = "-v", .kind = OPT_FLAG,
	  .off = FIELD(verbose), .group = GROUP_OWN,
	  .help = "say what heaptrace is doing" },
};

#define N_SPECS (sizeof(specs) / sizeof(*specs))

static int
fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -HT_E_BADOPT;
}

/* What --help shows after '=': "yes|no", "<1..200>", "i|ms|B"... */
static void
metavar_format(const struct opt_spec *o, char *buf, size_t len)
{
	size_t n = 0;

	switch (o->kind) {
	case OPT_BOOL:
		snprintf(buf, len, "yes|no");
		break;
	case OPT_UINT:
	case OPT_POW2:
		snprintf(buf, len, "<%.0f..%.0f>", o->lo, o->hi);
		break;
	case OPT_REAL:
		if (o->lo <= o->hi)
			snprintf(buf, len, "<%.1f..%.1f>", o->lo, o->hi);
		else
			snprintf(buf, len, "<number>");
		break;
	case OPT_CHOICE:
		buf[0] = '\0';
		for (const char *const *c = o->choices; *c && n < len; c++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      c == o->choices ? "" : "|", *c);
		break;
	case OPT_STRING:
	case OPT_LIST:
		snprintf(buf, len, "%s", o->metavar);
		break;
	case OPT_FLAG:
		buf[0] = '\0';
		break;
	case OPT_KINDS:
		snprintf(buf, len, "<set>");
		break;
	case OPT_BYTES:
		snprintf(buf, len, "<bytes>");
		break;
	case OPT_U64:
		snprintf(buf, len, "<n>");
		break;
	}
}

/* The one-line complaint about VAL: what O accepts. */
static int
reject(const struct opt_spec *o, const char *val, char *err, size_t errlen)
{
	char what[128];
	size_t n = 0;

	switch (o->kind) {
	case OPT_BOOL:
		snprintf(what, sizeof(what), "'yes' or 'no'");
		break;
	case OPT_UINT:
		snprintf(what, sizeof(what), "an integer from %.0f to %.0f",
			 o->lo, o->hi);
		break;
	case OPT_POW2:
		snprintf(what, sizeof(what),
			 "a power of two from %.0f to %.0f", o->lo, o->hi);
		break;
	case OPT_REAL:
		if (o->lo <= o->hi)
			snprintf(what, sizeof(what),
				 "a number from %.1f to %.1f", o->lo, o->hi);
		else
			snprintf(what, sizeof(what), "a number");
		break;
	case OPT_CHOICE:
		for (const char *const *c = o->choices; *c; c++) {
			const char *sep = c == o->choices ? "" :
					  c[1] ? ", " : " or ";
			n += (size_t)snprintf(what + n, sizeof(what) - n,
					      "%s'%s'", sep, *c);
			if (n >= sizeof(what))
				break;
		}
		break;
	case OPT_STRING:
	case OPT_LIST:
		return fail(err, errlen, "%s: must not be empty", o->name);
	case OPT_FLAG:
		return fail(err, errlen, "%s: takes no value", o->name);
	case OPT_KINDS:
		snprintf(what, sizeof(what),
			 "'all', 'none' or a comma-separated list of "
			 "definite, indirect, possible, reachable");
		break;
	case OPT_BYTES:
		snprintf(what, sizeof(what),
			 "a number of bytes from %.0f to %.0f, with an "
			 "optional suffix K, M or G", o->lo, o->hi);
		break;
	case OPT_U64:
		snprintf(what, sizeof(what),
			 "a decimal integer from 0 to 18446744073709551615");
		break;
	}
	return fail(err, errlen, "%s: must be %s, not '%s'", o->name, what,
		    val);
}

/* Digits only: no sign, no blanks, no base prefix. Saturates on overflow,
   which every range then rejects. */
static bool
parse_digits(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		v = v > (ULLONG_MAX - d) / 10 ? ULLONG_MAX : v * 10 + d;
	}
	*out = v;
	return true;
}

/* Digits with an optional suffix K, M or G (powers of 1024). Saturates
   on overflow, which every range then rejects. */
static bool
parse_bytes(const char *s, unsigned long long *out)
{
	static const char suffixes[] = "KMG";
	size_t len = strlen(s);
	unsigned shift = 0;
	const char *at = len ? strchr(suffixes, s[len - 1]) : NULL;
	if (at && *at) {
		shift = 10 * (unsigned)(at - suffixes + 1);
		len--;
	}
	char digits[32];
	if (!len || len >= sizeof(digits))
		return false;
	memcpy(digits, s, len);
	digits[len] = '\0';
	unsigned long long v;
	if (!parse_digits(digits, &v))
		return false;
	*out = v > (ULLONG_MAX >> shift) ? ULLONG_MAX : v << shift;
	return true;
}

/* A plain decimal number ("2.5", "-1", "1e2"): strtod alone would also take
   blanks, hex, "inf" and "nan". */
static bool
parse_real(const char *s, double *out)
{
	char *end;

	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s))
		return false;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return false;
	*out = v;
	return true;
}

/* memcheck's set of leak kinds: "all", "none", or a comma-separated list
   of definite, indirect, possible, reachable. */
static bool
parse_kinds(const char *s, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned bit;
	} kinds[] = {
		{ "definite", HT_LEAK_KIND_DEFINITE },
		{ "indirect", HT_LEAK_KIND_INDIRECT },
		{ "possible", HT_LEAK_KIND_POSSIBLE },
		{ "reachable", HT_LEAK_KIND_REACHABLE },
	};
	unsigned set = 0;

	if (!strcmp(s, "all") || !strcmp(s, "none")) {
		*out = s[0] == 'a' ? HT_LEAK_KIND_DEFINITE |
				     HT_LEAK_KIND_INDIRECT |
				     HT_LEAK_KIND_POSSIBLE |
				     HT_LEAK_KIND_REACHABLE : 0;
		return true;
	}
	for (;;) {
		size_t len = strcspn(s, ","), i;
		for (i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
			if (strlen(kinds[i].name) == len &&
			    !strncmp(s, kinds[i].name, len))
				break;
		if (i == sizeof(kinds) / sizeof(*kinds))
			return false;
		set |= kinds[i].bit;
		if (!s[len])
			break;
		s += len + 1;
	}
	*out = set;
	return true;
}

static void
list_append(char ***list, size_t *n, const char *s)
{
	*list = ht_xreallocarray(*list, *n + 1, sizeof(**list));
	(*list)[(*n)++] = ht_xstrdup(s);
}

/* Store VAL into O's field. STRING_HOME is where an OPT_STRING value lives
   for as long as OPT does. */
static int
value_set(struct ht_options *opt, const struct opt_spec *o, const char *val,
	  const char *string_home, char *err, size_t errlen)
{
	void *field = (char *)opt + o->off;
	unsigned long long u;
	double d;

	switch (o->kind) {
	case OPT_BOOL:
		if (strcmp(val, "yes") && strcmp(val, "no"))
			return reject(o, val, err, errlen);
		*(bool *)field = !strcmp(val, "yes");
		if (o->count_off)
			*(bool *)((char *)opt + o->count_off) = true;
		return 0;
	case OPT_UINT:
	case OPT_POW2:
		if (!parse_digits(val, &u) || u < o->lo || u > o->hi ||
		    (o->kind == OPT_POW2 && (u & (u - 1))))
			return reject(o, val, err, errlen);
		*(unsigned *)field = (unsigned)u;
		if (o->count_off)
			*(bool *)((char *)opt + o->count_off) = true;
		return 0;
	case OPT_REAL:
		if (!parse_real(val, &d) ||
		    (o->lo <= o->hi && (d < o->lo || d > o->hi)))
			return reject(o, val, err, errlen);
		*(double *)field = d;
		return 0;
	case OPT_CHOICE:
		for (size_t i = 0; o->choices[i]; i++) {
			if (!strcmp(val, o->choices[i])) {
				*(int *)field = (int)i;
				return 0;
			}
		}
		return reject(o, val, err, errlen);
	case OPT_STRING:
		if (!*val)
			return reject(o, val, err, errlen);
		*(const char **)field = string_home;
		return 0;
	case OPT_LIST:
		if (!*val)
			return reject(o, val, err, errlen);
		list_append(field, (size_t *)((char *)opt + o->count_off),
			    val);
		return 0;
	case OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case OPT_KINDS:
		if (!parse_kinds(val, field))
			return reject(o, val, err, errlen);
		return 0;
	case OPT_BYTES:
		if (!parse_bytes(val, &u) || u < o->lo || u > o->hi)
			return reject(o, val, err, errlen);
		*(uint64_t *)field = u;
		return 0;
	case OPT_U64:
		/* parse_digits saturates at ULLONG_MAX: only the largest
		   seed itself may read as it. */
		if (!parse_digits(val, &u) ||
		    (u == ULLONG_MAX &&
		     strcmp(val + strspn(val, "0"), "18446744073709551615")))
			return reject(o, val, err, errlen);
		*(uint64_t *)field = u;
		*(bool *)((char *)opt + o->count_off) = true;
		return 0;
	}
	return reject(o, val, err, errlen);
}

void
ht_options_init(struct ht_options *opt)
{
	char err[256];

	memset(opt, 0, sizeof(*opt));
	for (size_t i = 0; i < N_SPECS; i++) {
		const struct opt_spec *o = &specs[i];

		/* Default strings are static, so they can be their own home. */
		if (o->def && value_set(opt, o, o->def, o->def, err,
					sizeof(err)))
			ht_die(1, "bug: default of %s: %s", o->name, err);
		/* A default is not an option given. */
		if (o->def && o->count_off && o->kind != OPT_LIST)
			*(bool *)((char *)opt + o->count_off) = false;
	}
}

static void
list_free(char ***list, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		free((*list)[i]);
	free(*list);
	*list = NULL;
	*n = 0;
}

void
ht_options_fini(struct ht_options *opt)
{
	list_free(&opt->alloc_fns, &opt->n_alloc_fns);
	list_free(&opt->ignore_fns, &opt->n_ignore_fns);
	list_free(&opt->desc_args, &opt->n_desc_args);
	opt->out_file = NULL;
}

/* The spec ARG names, and in *VAL what follows its '=' (NULL if none). */
static const struct opt_spec *
spec_find(const char *arg, const char **val)
{
	size_t len = strcspn(arg, "=");

	*val = arg[len] == '=' ? arg + len + 1 : NULL;
	for (size_t i = 0; i < N_SPECS; i++) {
		const struct opt_spec *o = &specs[i];

		if (o->alias && !strcmp(arg, o->alias))
			return o;
		if (strlen(o->name) == len && !strncmp(arg, o->name, len))
			return o;
	}
	return NULL;
}

int
ht_options_apply(struct ht_options *opt, const char *arg, char *err,
		 size_t errlen)
{
	const char *val;
	const struct opt_spec *o = spec_find(arg, &val);
	char meta[64];

	if (!o)
		return 1;
	if (o->kind == OPT_FLAG)
		return val ? reject(o, val, err, errlen) :
			     value_set(opt, o, "", NULL, err, errlen);
	if (!val) {
		metavar_format(o, meta, sizeof(meta));
		return fail(err, errlen, "%s: needs a value, as in %s=%s",
			    o->name, o->name, meta);
	}

	/* The copy kept for the desc: line is also where an OPT_STRING value
	   lives; value_set changes nothing when it rejects VAL. */
	char *copy = ht_xstrdup(arg);
	const char *home = copy + (val - arg);
	int rc = value_set(opt, o, val, home, err, errlen);
	if (rc || o->group != GROUP_MASSIF) {
		free(copy);
		return rc;
	}
	opt->desc_args = ht_xreallocarray(opt->desc_args,
					  opt->n_desc_args + 1,
					  sizeof(*opt->desc_args));
	opt->desc_args[opt->n_desc_args++] = copy;
	return 0;
}

/* Append ARG to the desc: line's arguments. */
static void
desc_append(struct ht_options *opt, char *arg)
{
	opt->desc_args = ht_xreallocarray(opt->desc_args,
					  opt->n_desc_args + 1,
					  sizeof(*opt->desc_args));
	opt->desc_args[opt->n_desc_args++] = arg;
}

/* The inline ring's size under --sampling-interval, unless given. */
#define SAMPLED_RING_SIZE (1u << 20)

/* --sampling-interval: refused where its estimates cannot be honest (a
   leak check names every leaked block, Massif's figures are exact, pages
   are not sampled); a seed drawn when none was given; both on the desc:
   line, the interval in bytes, so that the profile says it is sampled. */
static int
sampling_finish(struct ht_options *opt, char *err, size_t errlen)
{
	if (!opt->sampling_interval)
		return 0;
	const char *with = opt->leak_check != HT_LEAK_CHECK_NO
				   ? "--leak-check"
			   : opt->massif_compat ? "--massif-compat=yes"
			   : opt->pages_as_heap ? "--pages-as-heap=yes"
						: NULL;
	if (with)
		return fail(err, errlen,
			    "--sampling-interval cannot be used with %s: its "
			    "figures would be estimates where exact ones are "
			    "asked for", with);
	/* A sampled ring fills slowly (perl at 512K: half a MiB of records a
	   minute); a small one keeps the pages it touches in the target and
	   in heaptrace few, and wraps within minutes, so that heaptrace's
	   RSS over a long attach is flat from the start (README, "Periodic
	   profiles"). A stub that finds it full rings the doorbell. */
	if (!opt->ring_size_set)
		opt->ring_size = SAMPLED_RING_SIZE;
	if (!opt->sampling_seed_set) {
		uint64_t seed = 0;
		if (getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
			seed = (uint64_t)time(NULL) ^
			       ((uint64_t)getpid() << 32);
		opt->sampling_seed = seed;
		opt->sampling_seed_set = true;
	}
	desc_append(opt, ht_xasprintf("--sampling-interval=%llu",
				      (unsigned long long)opt->sampling_interval));
	desc_append(opt, ht_xasprintf("--sampling-seed=%llu",
				      (unsigned long long)opt->sampling_seed));
	return 0;
}

int
ht_options_finish(struct ht_options *opt, char *err, size_t errlen)
{
	if (opt->pages_as_heap && opt->stacks)
		return fail(err, errlen,
			    "--pages-as-heap=yes cannot be used with "
			    "--stacks=yes");
	if (opt->quiet && opt->verbose)
		return fail(err, errlen,
			    "--quiet and --verbose cannot be used together");
	/* Massif's order: --heap=no wins over --pages-as-heap, and pages have
	   no allocator overhead. */
	if (!opt->heap)
		opt->pages_as_heap = false;
	if (opt->pages_as_heap)
		opt->heap_admin = 0;
	if ((int)opt->leak_check == LEAK_CHECK_YES)
		opt->leak_check = HT_LEAK_CHECK_FULL;
	if (opt->leak_check != HT_LEAK_CHECK_NO &&
	    (!opt->heap || opt->pages_as_heap))
		return fail(err, errlen,
			    "--leak-check needs heap blocks: not with "
			    "--heap=no or --pages-as-heap=yes");
	return sampling_finish(opt, err, errlen);
}

static bool
is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

/* Apply one option ARG (or take --help: CL->command says so). */
static int
option_take(struct ht_cmdline *cl, const char *arg, char *err,
	    size_t errlen)
{
	if (is_help(arg)) {
		cl->command = HT_CMD_HELP;
		return 0;
	}
	int rc = ht_options_apply(&cl->opt, arg, err, errlen);
	if (rc == 1)
		return fail(err, errlen,
			    "unknown option '%s' (see heaptrace --help)", arg);
	return rc;
}

/* Apply the options in ARGV from *I on; stop after "--" or before the
   first word that is not an option, leaving *I there. */
static int
options_parse(struct ht_cmdline *cl, int argc, char **argv, int *i,
	      char *err, size_t errlen)
{
	for (; *i < argc; (*i)++) {
		const char *arg = argv[*i];

		if (!strcmp(arg, "--")) {
			(*i)++;
			break;
		}
		if (arg[0] != '-' || !arg[1])
			break;
		int rc = option_take(cl, arg, err, errlen);
		if (rc || cl->command == HT_CMD_HELP)
			return rc;
	}
	return ht_options_finish(&cl->opt, err, errlen);
}

static int
run_parse(struct ht_cmdline *cl, int argc, char **argv, char *err,
	  size_t errlen)
{
	int i = 2;
	int rc = options_parse(cl, argc, argv, &i, err, errlen);

	if (rc || cl->command == HT_CMD_HELP)
		return rc;
	if (i >= argc)
		return fail(err, errlen,
			    "run: missing the program to run "
			    "(heaptrace run [options] [--] PROG [ARGS...])");
	if (cl->opt.duration)
		return fail(err, errlen,
			    "--duration applies to attach only (a run ends "
			    "with its program)");
	cl->prog_argv = argv + i;
	cl->prog_argc = argc - i;
	return 0;
}

/* attach takes its options before the PID, after it, or both
   ("attach PID --duration=1"); "--" ends them, and the PID may follow. */
static int
attach_parse(struct ht_cmdline *cl, int argc, char **argv, char *err,
	     size_t errlen)
{
	unsigned long long pid = 0;
	bool have_pid = false, options_done = false;

	for (int i = 2; i < argc; i++) {
		const char *arg = argv[i];

		if (!options_done && !strcmp(arg, "--")) {
			options_done = true;
			continue;
		}
		if (!options_done && arg[0] == '-' && arg[1]) {
			int rc = option_take(cl, arg, err, errlen);
			if (rc || cl->command == HT_CMD_HELP)
				return rc;
			continue;
		}
		if (have_pid)
			return fail(err, errlen,
				    "attach: unexpected argument '%s' after the "
				    "PID", arg);
		if (!parse_digits(arg, &pid) || pid == 0 || pid > INT_MAX)
			return fail(err, errlen,
				    "attach: PID must be a positive decimal "
				    "integer, not '%s'", arg);
		have_pid = true;
	}
	int rc = ht_options_finish(&cl->opt, err, errlen);
	if (rc)
		return rc;
	if (!have_pid)
		return fail(err, errlen,
			    "attach: missing the PID to attach to "
			    "(heaptrace attach [options] PID)");
	cl->pid = (long)pid;
	return 0;
}

int
ht_cmdline_parse(struct ht_cmdline *cl, int argc, char **argv, char *err,
		 size_t errlen)
{
	memset(cl, 0, sizeof(*cl));
	ht_options_init(&cl->opt);
	if (argc < 2)
		return fail(err, errlen,
			    "missing command: run or attach "
			    "(see heaptrace --help)");

	const char *cmd = argv[1];
	if (is_help(cmd) || !strcmp(cmd, "help"))
		cl->command = HT_CMD_HELP;
	else if (!strcmp(cmd, "--version"))
		cl->command = HT_CMD_VERSION;
	if (cl->command != HT_CMD_NONE) {
		if (argc > 2)
			return fail(err, errlen,
				    "%s: unexpected argument '%s'", cmd,
				    argv[2]);
		return 0;
	}

	if (!strcmp(cmd, "run")) {
		cl->command = HT_CMD_RUN;
		return run_parse(cl, argc, argv, err, errlen);
	}
	if (!strcmp(cmd, "attach")) {
		cl->command = HT_CMD_ATTACH;
		return attach_parse(cl, argc, argv, err, errlen);
	}
	if (cmd[0] == '-')
		return fail(err, errlen,
			    "options go after the command: heaptrace "
			    "run|attach [options] ... (see heaptrace --help)");
	return fail(err, errlen, "unknown command '%s' (see heaptrace --help)",
		    cmd);
}

void
ht_cmdline_fini(struct ht_cmdline *cl)
{
	ht_options_fini(&cl->opt);
	cl->prog_argv = NULL;
	cl->prog_argc = 0;
}

#define USAGE_LEFT 32  /* width of the "  --name=<value>" column */
#define USAGE_WIDTH 79

/* "  --depth=<1..200>              help text [30]", the help and default
   filled into the right column. */
static void
option_usage(FILE *out, const struct opt_spec *o)
{
	char meta[64], left[96], text[512];
	int col;

	metavar_format(o, meta, sizeof(meta));
	if (o->alias)
		snprintf(left, sizeof(left), "  %s, %s", o->alias, o->name);
	else
		snprintf(left, sizeof(left), "  %s%s%s", o->name,
			 o->kind == OPT_FLAG ? "" : "=", meta);
	snprintf(text, sizeof(text), "%s%s%s%s", o->help, o->def ? " [" : "",
		 o->def ? o->def : "", o->def ? "]" : "");

	col = fprintf(out, "%s", left);
	if (col >= USAGE_LEFT)
		col = USAGE_WIDTH;  /* too wide: the text starts below */
	for (const char *w = text; *w;) {
		size_t len = strcspn(w, " ");

		if (col + 1 + (int)len > USAGE_WIDTH) {
			fprintf(out, "\n%*s", USAGE_LEFT, "");
			col = USAGE_LEFT;
		} else if (col >= USAGE_LEFT) {
			fputc(' ', out);
			col++;
		}
		if (col < USAGE_LEFT)
			col += fprintf(out, "%*s", USAGE_LEFT - col, "");
		col += fprintf(out, "%.*s", (int)len, w);
		w += len + (w[len] == ' ');
	}
	fputc('\n', out);
}

static void
group_usage(FILE *out, enum opt_group g, const char *title)
{
	fprintf(out, "\n%s\n", title);
	for (size_t i = 0; i < N_SPECS; i++)
		if (specs[i].group == g)
			option_usage(out, &specs[i]);
}

void
ht_options_usage(FILE *out)
{
	fputs("usage: heaptrace run [options] [--] PROG [ARGS...]\n"
	      "       heaptrace attach [options] PID [options]\n"
	      "       heaptrace snapshot PID\n"
	      "       heaptrace print [--threshold=X] [--x=N] [--y=N] FILE\n"
	      "       heaptrace report [--format=text|json|html] [--top=N] "
	      "[-o FILE] PROFILE\n"
	      "       heaptrace report --format=pprof [--at=peak|end|N] -o FILE "
	      "PROFILE\n"
	      "       heaptrace diff [--format=text|json] [--threshold=PERCENT]\n"
	      "                      [--min-bytes=N] A B\n"
	      "       heaptrace top [options] PID\n"
	      "       heaptrace top [options] -- PROG [ARGS...]\n"
	      "       heaptrace --help | -h | --version\n"
	      "\n"
	      "Profile the heap of a program as Valgrind's Massif does, "
	      "without running it\n"
	      "on a CPU emulator, and write a massif.out file for ms_print "
	      "or\n"
	      "massif-visualizer.\n"
	      "\n"
	      "Commands:\n"
	      "  run       start PROG with ARGS and profile it until it exits\n"
	      "  attach    profile the running process PID from now until it "
	      "exits,\n"
	      "            heaptrace gets SIGINT, SIGTERM or SIGHUP, or "
	      "--duration ends;\n"
	      "            then detach\n"
	      "  snapshot  write the profile so far of the program PID that "
	      "heaptrace\n"
	      "            profiles (as SIGUSR1 to heaptrace does) and print "
	      "the file's name\n"
	      "  print     print a profile as ms_print does, byte for byte "
	      "(print --help)\n"
	      "  report    print a profile's allocation sites and totals "
	      "(report --help)\n"
	      "  diff      sites that grew or shrank from A to B, exit 1 if any "
	      "(diff --help)\n"
	      "  top       watch PID's (or PROG's) heap live: its sites every "
	      "second, most\n"
	      "            live bytes first (top --help)\n"
	      "\n"
	      "Options come after the command and end at '--' or at the "
	      "first word that is\n"
	      "not an option; the rest is the program and its arguments, "
	      "passed on untouched.\n"
	      "attach takes its options before or after the PID.\n"
	      "Values are written --name=value; defaults are in brackets.\n",
	      out);
	group_usage(out, GROUP_MASSIF,
		    "Massif options (listed on the desc: line of the profile):");
	group_usage(out, GROUP_CORE, "Valgrind core options:");
	group_usage(out, GROUP_LEAK, "Leak check options (memcheck's):");
	group_usage(out, GROUP_OWN, "heaptrace options:");
	fputs("\n"
	      "Notes:\n"
	      "  --time-unit=i counts the target's user-space instructions with "
	      "a hardware\n"
	      "  counter (perf_event); where the machine has none, heaptrace "
	      "says so and\n"
	      "  records milliseconds (time_unit: ms). The count is not "
	      "Valgrind's.\n"
	      "  --massif-out-file expands %p to the process id, %n to a "
	      "sequence number\n"
	      "  (always 1: each process writes one profile), %q{VAR} to "
	      "the environment\n"
	      "  variable VAR, %% to '%'; a relative name is taken from the "
	      "directory\n"
	      "  heaptrace started in. A name starting with '~' is refused, "
	      "as Massif does.\n"
	      "  The file's directory must be writable (or the file "
	      "itself, when it exists):\n"
	      "  heaptrace checks it, for every process it may profile, "
	      "before it starts\n"
	      "  or attaches to the program.\n"
	      "  -q leaves on stderr only errors: those that end heaptrace "
	      "with a non-zero\n"
	      "  status before the program runs (a wrong option, an "
	      "unwritable\n"
	      "  --massif-out-file, a program that cannot be started, an "
	      "attach refused),\n"
	      "  a profile that cannot be written (attach then exits 1), "
	      "and events lost;\n"
	      "  --stats=yes still prints the counts it is asked for.\n"
	      "  --pages-as-heap=yes cannot be combined with --stacks=yes; "
	      "--heap=no turns\n"
	      "  it off. It stops the program at mmap, munmap, mremap, brk, "
	      "shmat and shmdt\n"
	      "  through a seccomp filter installed before exec (no other "
	      "system call is\n"
	      "  slowed down) and probes no allocator. Without CAP_SYS_ADMIN "
	      "(not root) the\n"
	      "  filter needs no_new_privs, which heaptrace then sets: a "
	      "setuid program gains\n"
	      "  no privileges (it would not under ptrace anyway).\n"
	      "  --stacks=yes samples each thread's stack size at its "
	      "allocator calls\n"
	      "  (either backend), where Massif measures it at every move of "
	      "the stack\n"
	      "  pointer: peaks between two calls are not seen.\n",
	      out);
}

const char *
ht_time_unit_name(enum ht_time_unit u)
{
	if ((unsigned)u < sizeof(time_unit_names) / sizeof(*time_unit_names) - 1)
		return time_unit_names[u];
	return "?";
}

bool
ht_options_python_frames(const struct ht_options *opt)
{
	return opt->python_frames &&
	       (!opt->massif_compat || opt->python_frames_given);
}
