/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace report`: heaptrack_print's main sections (most calls, peak
   consumers, most temporary, most leaked, then the totals) over the sites
   of a profile's .sites file, or the same figures as one JSON object. A
   real Massif file has no .sites: then the report is what Massif wrote
   (the snapshot series, the peak tree's top entries) and says what is
   missing, rather than failing, so that one command reads both. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "output/html.h"
#include "output/jsonstr.h"
#include "output/pprof.h"
#include "output/site_name.h"

/* heaptrack_print's --peak-limit default: entries per section. */
#define DEFAULT_TOP 10

enum report_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_HTML, FORMAT_PPROF };

struct report_args {
	enum report_format format;
	long at;          /* PPROF_AT_PEAK, PPROF_AT_END or a snapshot */
	const char *at_text; /* NULL: no --at */
	unsigned long top; /* 0: all */
	const char *out_path;
	const char *profile;
	struct report_naming_args naming;
};

/* ---- the profile, shared with diff ---- */

int
report_profile_load(const char *path, struct report_profile *p, char *err,
		    size_t errlen)
{
	char why[512];
	memset(p, 0, sizeof(*p));
	p->path = path;
	if (mf_read(path, &p->massif, why, sizeof(why))) {
		/* the reason may or may not name the file: name it once */
		if (strstr(why, path))
			snprintf(err, errlen, "%s", why);
		else
			snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	p->pages = mf_pages_as_heap(&p->massif);
	p->stacks = mf_has_stacks(&p->massif);
	p->sites_path = sites_path_of(path);
	int e;
	if (sites_read(p->sites_path, &p->sites, &e, err, errlen) == 0)
		p->has_sites = true;
	else if (e != ENOENT) {
		report_profile_free(p);
		return -1;
	}
	/* heaptrace counts no allocator calls under --pages-as-heap: its
	   empty .sites would give empty sections where the Massif file's
	   trees say where the pages went */
	if (p->has_sites && p->pages && p->sites.n_sites == 0) {
		sites_free(&p->sites);
		p->has_sites = false;
		p->sites_empty = true;
	}
	return 0;
}

void
report_profile_naming(struct report_profile *p,
		      const struct report_naming_args *a)
{
	site_naming_free(&p->naming);
	site_naming_init(&p->naming, p->has_sites ? &p->sites : NULL,
			 p->massif.desc, a ? a->alloc_fns : NULL,
			 a ? a->n_alloc_fns : 0, !a || !a->no_wrappers);
}

int
report_naming_option(const char *cmd, int argc, char **argv, int *i,
		     struct report_naming_args *a)
{
	const char *v;
	int rc;
	if ((rc = report_option_value(cmd, argc, argv, i, "--alloc-fn",
				      &v)) != 0) {
		if (rc < 0)
			return -1;
		if (!*v) {
			ht_error("%s: --alloc-fn needs a function name", cmd);
			return -1;
		}
		ht_xgrow((void **)&a->alloc_fns, &a->cap_alloc_fns,
			 a->n_alloc_fns + 1, sizeof(*a->alloc_fns));
		a->alloc_fns[a->n_alloc_fns++] = (char *)v;
		return 1;
	}
	if ((rc = report_option_value(cmd, argc, argv, i, "--find-wrappers",
				      &v)) != 0) {
		if (rc < 0)
			return -1;
		if (strcmp(v, "yes") && strcmp(v, "no")) {
			ht_error("%s: --find-wrappers must be 'yes' or 'no', "
				 "not '%s'", cmd, v);
			return -1;
		}
		a->no_wrappers = strcmp(v, "no") == 0;
		return 1;
	}
	return 0;
}

void
report_naming_args_free(struct report_naming_args *a)
{
	free(a->alloc_fns);
	*a = (struct report_naming_args){ 0 };
}

void
report_profile_free(struct report_profile *p)
{
	site_naming_free(&p->naming);
	mf_free(&p->massif);
	if (p->has_sites)
		sites_free(&p->sites);
	free(p->sites_path);
	memset(p, 0, sizeof(*p));
}

/* The .sites file's peak: line names a snapshot; attach writes
   "snapshot=-1 heap=0" when it took no peak snapshot. */
static bool
sites_peak_known(const struct report_profile *p)
{
	return p->has_sites && p->sites.has_peak &&
	       p->sites.peak_snapshot >= 0;
}

long
report_peak_index(const struct report_profile *p)
{
	const struct mf_file *m = &p->massif;
	for (size_t i = 0; i < m->n_snaps; i++)
		if (m->snaps[i].kind == MF_PEAK)
			return (long)i;
	for (size_t i = 0; sites_peak_known(p) && i < m->n_snaps; i++)
		if ((int64_t)m->snaps[i].number == p->sites.peak_snapshot)
			return (long)i;
	return mf_largest_index(m);
}

uint64_t
report_peak_heap(const struct report_profile *p)
{
	if (sites_peak_known(p))
		return p->sites.peak_heap;
	long i = report_peak_index(p);
	return i < 0 ? 0 : p->massif.snaps[i].heap;
}

const char *
report_measure(const struct report_profile *p)
{
	return p->pages ? "pages mapped (--pages-as-heap)" : "heap";
}

const char *
report_missing_reason(const struct report_profile *p)
{
	return p->sites_empty ?
	       "a --pages-as-heap profile: heaptrace counts no allocator "
	       "calls then, only pages mapped" :
	       "the profile was not written by heaptrace";
}

bool
report_sampling(const struct report_profile *p, struct sites_sampling *out)
{
	return sites_sampling_of(p->has_sites ? &p->sites : NULL,
				 p->massif.desc, out);
}

void
report_sampling_text(FILE *out, const struct report_profile *p,
		     const char *prefix)
{
	struct sites_sampling s;
	char line[256];
	if (!report_sampling(p, &s))
		return;
	sites_sampling_text(&s, line, sizeof(line));
	fprintf(out, "%s%s\n", prefix, line);
}

void
report_sampling_json(FILE *out, const struct report_profile *p)
{
	struct sites_sampling s;
	if (!report_sampling(p, &s))
		return;
	fprintf(out, ", \"sampling\": {\"interval\": %" PRIu64 ", \"seed\": ",
		s.interval);
	if (s.has_seed)
		fprintf(out, "%" PRIu64, s.seed);
	else
		fputs("null", out);
	fputs(", \"estimated\": true}", out);
}

const char *
report_label_text(const char *label)
{
	if (strncmp(label, "0x", 2) != 0)
		return label;
	size_t hex = strspn(label + 2, "0123456789abcdefABCDEF");
	if (hex && strncmp(label + 2 + hex, ": ", 2) == 0)
		return label + 2 + hex + 2;
	return label;
}

const struct sites_frame *
report_site_frame(const struct report_profile *p, const struct sites_site *s)
{
	return site_name_frame(&p->naming, s);
}

void
report_frame_text(FILE *out, const struct sites_frame *fr)
{
	if (strcmp(fr->function, "???") == 0)
		fprintf(out, "??? [0x%" PRIX64 "]", fr->addr);
	else
		fputs(fr->function, out);
	if (fr->file)
		fprintf(out, " (%s:%lu)", fr->file, fr->line);
	else if (fr->object)
		fprintf(out, " (in %s)", fr->object);
}

void
report_stack_text(FILE *out, const struct sites_site *s, const char *indent)
{
	for (size_t i = 0; i < s->n_frames; i++) {
		fputs(indent, out);
		report_frame_text(out, &s->frames[i]);
		fputc('\n', out);
		/* what lies below main is the C library's start-up: as
		   Massif and heaptrack_print, the text stops at main (the
		   JSON keeps every frame) */
		if (strcmp(s->frames[i].function, "main") == 0)
			break;
	}
}


void
report_json_string(FILE *out, const char *s)
{
	json_string_write(out, s, false);
}

void
report_json_stack(FILE *out, const struct sites_site *s)
{
	fputc('[', out);
	for (size_t i = 0; i < s->n_frames; i++) {
		const struct sites_frame *fr = &s->frames[i];
		fputs(i ? ", {\"function\": " : "{\"function\": ", out);
		report_json_string(out, fr->function);
		fputs(", \"file\": ", out);
		report_json_string(out, fr->file);
		if (fr->file)
			fprintf(out, ", \"line\": %lu", fr->line);
		else
			fputs(", \"line\": null", out);
		fputs(", \"object\": ", out);
		report_json_string(out, fr->object);
		fprintf(out, ", \"address\": \"0x%" PRIX64 "\"}", fr->addr);
	}
	fputc(']', out);
}

int
report_output_close(FILE *out, const char *name)
{
	bool failed = fflush(out) != 0 || ferror(out);
	int e = errno;
	if (out != stdout && fclose(out) != 0 && !failed) {
		failed = true;
		e = errno;
	}
	if (failed)
		ht_error("cannot write %s: %s", name, strerror(e ? e : EIO));
	return failed ? -1 : 0;
}

/* ---- the command line ---- */

int
report_option_value(const char *cmd, int argc, char **argv, int *i,
		    const char *name, const char **value)
{
	size_t len = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, len) != 0)
		return 0;
	if (a[len] == '=') {
		*value = a + len + 1;
		return 1;
	}
	if (a[len] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		ht_error("%s: %s needs a value", cmd, name);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}

static int
top_parse(const char *v, unsigned long *top)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-') {
		ht_error("report: --top must be a number of entries (0: all), "
			 "not '%s'", v);
		return -1;
	}
	*top = n;
	return 0;
}

static int
format_parse(const char *v, enum report_format *format)
{
	if (strcmp(v, "text") == 0)
		*format = FORMAT_TEXT;
	else if (strcmp(v, "json") == 0)
		*format = FORMAT_JSON;
	else if (strcmp(v, "html") == 0)
		*format = FORMAT_HTML;
	else if (strcmp(v, "pprof") == 0)
		*format = FORMAT_PPROF;
	else {
		ht_error("report: --format must be 'text', 'json', 'html' or "
			 "'pprof', not '%s'", v);
		return -1;
	}
	return 0;
}

/* --at=peak|end|N into *AT. */
static int
at_parse(const char *v, long *at)
{
	char *end;
	if (strcmp(v, "peak") == 0) {
		*at = PPROF_AT_PEAK;
		return 0;
	}
	if (strcmp(v, "end") == 0) {
		*at = PPROF_AT_END;
		return 0;
	}
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 0 || v[0] == '-' ||
	    v[0] == '+') {
		ht_error("report: --at must be 'peak', 'end' or a snapshot "
			 "number, not '%s'", v);
		return -1;
	}
	*at = n;
	return 0;
}

static void
report_usage(FILE *out)
{
	fputs("usage: heaptrace report [--format=text|json|html] [--top=N] "
	      "[-o FILE]\n"
	      "                        [--alloc-fn=NAME] "
	      "[--find-wrappers=yes|no] PROFILE\n"
	      "       heaptrace report --format=pprof [--at=peak|end|N] -o FILE "
	      "PROFILE\n"
	      "\n"
	      "Print the allocation sites of PROFILE (a massif.out file "
	      "heaptrace wrote, read\n"
	      "with the PROFILE.sites file beside it) as heaptrack_print "
	      "does: most calls,\n"
	      "peak memory consumers, most temporary allocations, most memory "
	      "leaked, each\n"
	      "with its name and stack (innermost frame first), then the "
	      "totals. On a\n"
	      "Massif file without .sites (real Massif's), the snapshot series "
	      "and the peak\n"
	      "tree's top entries. A --pages-as-heap profile is read as pages "
	      "mapped (the\n"
	      "callers of the page calls as the peak tree's entries); a "
	      "--stacks=yes\n"
	      "profile's peak counts stacks, as Massif's. Exit status: 0, or 2 "
	      "on an error.\n"
	      "  --format=text|json|html|pprof\n"
	      "                           text: the sections above; json: one "
	      "object\n"
	      "                           (profile, totals, every site, the "
	      "snapshot\n"
	      "                           series); html: one self-contained "
	      "page (chart,\n"
	      "                           trees, flame graph, tables); pprof: "
	      "a gzip'd\n"
	      "                           profile.proto for go tool pprof, "
	      "Pyroscope,\n"
	      "                           Parca (alloc_objects, alloc_space, "
	      "inuse_objects,\n"
	      "                           inuse_space; needs -o) [text]\n"
	      "  --at=peak|end|N          pprof: the inuse figures at the peak, "
	      "at the end\n"
	      "                           (live when the profile was written) "
	      "or from\n"
	      "                           detailed snapshot N's tree [peak]\n"
	      "  --top=<N>                text: entries per section, 0 for all "
	      "[10]\n"
	      REPORT_NAMING_USAGE
	      "  -o, --output=<file>      write to <file> instead of standard "
	      "output\n", out);
}

/* One word of the command line into ARGS: 0, 1 for --help, -1 (said). */
static int
arg_parse(int argc, char **argv, int *i, struct report_args *args)
{
	const char *v;
	int rc;
	if (strcmp(argv[*i], "--help") == 0 || strcmp(argv[*i], "-h") == 0)
		return 1;
	if ((rc = report_option_value("report", argc, argv, i,
					"--format", &v)) != 0)
		return rc < 0 ? -1 : format_parse(v, &args->format);
	if ((rc = report_naming_option("report", argc, argv, i,
				       &args->naming)) != 0)
		return rc < 0 ? -1 : 0;
	if ((rc = report_option_value("report", argc, argv, i,
					"--top", &v)) != 0)
		return rc < 0 ? -1 : top_parse(v, &args->top);
	if ((rc = report_option_value("report", argc, argv, i,
					"--at", &v)) != 0) {
		args->at_text = v;
		return rc < 0 ? -1 : at_parse(v, &args->at);
	}
	if ((rc = report_option_value("report", argc, argv, i,
					"--output", &v)) != 0 ||
	    (rc = report_option_value("report", argc, argv, i,
					"-o", &v)) != 0) {
		args->out_path = v;
		return rc < 0 ? -1 : 0;
	}
	if (argv[*i][0] == '-' && argv[*i][1] != '\0') {
		ht_error("report: unknown option '%s' (see heaptrace report "
			 "--help)", argv[*i]);
		return -1;
	}
	if (args->profile) {
		ht_error("report: one PROFILE only (heaptrace report [options] "
			 "PROFILE)");
		return -1;
	}
	args->profile = argv[*i];
	return 0;
}

static int
args_parse(int argc, char **argv, struct report_args *args)
{
	*args = (struct report_args){ .format = FORMAT_TEXT,
				      .top = DEFAULT_TOP,
				      .at = PPROF_AT_PEAK };
	for (int i = 1; i < argc; i++) {
		int rc = arg_parse(argc, argv, &i, args);
		if (rc)
			return rc;
	}
	if (!args->profile) {
		ht_error("report: missing the PROFILE to read (heaptrace report "
			 "[options] PROFILE)");
		return -1;
	}
	if (args->at_text && args->format != FORMAT_PPROF) {
		ht_error("report: --at=%s is for --format=pprof", args->at_text);
		return -1;
	}
	if (args->format == FORMAT_PPROF && !args->out_path) {
		ht_error("report: --format=pprof writes a binary file: give it "
			 "with -o FILE");
		return -1;
	}
	return 0;
}

/* ---- what both formats print ---- */

/* The figures of the totals, from the .sites file's totals: line, or
   summed over its sites. */
struct totals {
	uint64_t runtime; /* the time of the last snapshot */
	uint64_t calls, allocated, temporary, leaked, leaked_blocks;
	uint64_t peak_heap;
	long peak_index; /* in massif.snaps, -1 */
};

static void
totals_get(const struct report_profile *p, struct totals *t)
{
	const struct mf_file *m = &p->massif;
	const struct sites_file *sf = &p->sites;
	memset(t, 0, sizeof(*t));
	t->runtime = m->n_snaps ? m->snaps[m->n_snaps - 1].time : 0;
	t->peak_heap = report_peak_heap(p);
	t->peak_index = report_peak_index(p);
	if (!p->has_sites)
		return;
	if (sf->has_totals) {
		t->calls = sf->total_calls;
		t->allocated = sf->total_allocated;
		t->temporary = sf->total_temporary;
		t->leaked = sf->total_leaked;
		t->leaked_blocks = sf->total_leaked_blocks;
		return;
	}
	for (size_t i = 0; i < sf->n_sites; i++) {
		t->calls += sf->sites[i].calls;
		t->allocated += sf->sites[i].allocated;
		t->temporary += sf->sites[i].temporary;
		t->leaked += sf->sites[i].leaked;
		t->leaked_blocks += sf->sites[i].leaked_blocks;
	}
}

static double
percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *
time_unit(const struct report_profile *p)
{
	if (p->massif.time_unit)
		return p->massif.time_unit;
	return p->has_sites && p->sites.time_unit ? p->sites.time_unit : "i";
}

static const char *
profile_cmd(const struct report_profile *p)
{
	if (p->massif.cmd)
		return p->massif.cmd;
	return p->has_sites && p->sites.cmd ? p->sites.cmd : "";
}

/* The C library's wrappers of the page-level calls: under
   --pages-as-heap every top entry of a tree is one of them. */
static bool
is_page_call(const char *label)
{
	static const char *const names[] = {
		"mmap", "mmap64", "__mmap", "__mmap64", "mremap", "__mremap",
		"brk", "__brk", "__brk_call", "sbrk", "__sbrk", "shmat",
	};
	const char *text = report_label_text(label);
	size_t len = strcspn(text, " ");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !strncmp(text, names[i], len))
			return true;
	return false;
}

/* The index after the subtree at I: NEED counts the nodes still to
   pass. */
static size_t
subtree_end(const struct mf_snapshot *s, size_t i)
{
	for (uint64_t need = 1; need && i < s->n_tree; i++)
		need += (uint64_t)s->tree[i].n_children - 1;
	return i;
}

/* The children of node AT into *IDX (at *N, room *CAP); with PAGES, a
   page-call wrapper with callers gives its callers instead. */
static void
tree_entries_below(const struct mf_snapshot *s, size_t at, bool pages,
		   size_t **idx, size_t *n, size_t *cap)
{
	size_t i = at + 1;
	for (uint32_t c = 0; c < s->tree[at].n_children && i < s->n_tree;
	     c++) {
		const struct mf_node *nd = &s->tree[i];
		if (pages && !nd->aggregate && nd->n_children &&
		    is_page_call(nd->label)) {
			tree_entries_below(s, i, pages, idx, n, cap);
		} else {
			ht_xgrow((void **)idx, cap, *n + 1, sizeof(**idx));
			(*idx)[(*n)++] = i;
		}
		i = subtree_end(s, i);
	}
}

/* An entry or a site and its figure, to sort by. */
struct ranked {
	uint64_t key;
	size_t index;
};

/* Largest figure first; equal ones in the tree's or file's order. */
static int
ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* IDX[0..N) ordered by their nodes' bytes, largest first. */
static void
entries_sort(const struct mf_snapshot *s, size_t *idx, size_t n)
{
	struct ranked *e = ht_xcalloc(n ? n : 1, sizeof(*e));
	for (size_t i = 0; i < n; i++)
		e[i] = (struct ranked){ s->tree[idx[i]].bytes, idx[i] };
	qsort(e, n, sizeof(*e), ranked_cmp);
	for (size_t i = 0; i < n; i++)
		idx[i] = e[i].index;
	free(e);
}

size_t
report_tree_entries(const struct report_profile *p,
		    const struct mf_snapshot *s, size_t **idx)
{
	size_t n = 0, cap = 0;
	*idx = NULL;
	if (!s->n_tree)
		return 0;
	tree_entries_below(s, 0, p->pages, idx, &n, &cap);
	/* callers brought up from several wrappers: their order */
	if (p->pages)
		entries_sort(s, *idx, n);
	return n;
}

static const char *
kind_name(enum mf_kind k)
{
	return k == MF_PEAK ? "peak" : k == MF_DETAILED ? "detailed" : "empty";
}


/* ---- text ---- */

/* A section: its title, the figure its sites are ranked by, and the
   line heading each entry. */
struct section {
	const char *title;
	uint64_t (*key)(const struct sites_site *s);
	void (*headline)(FILE *out, const struct sites_site *s);
};

static uint64_t
key_calls(const struct sites_site *s)
{
	return s->calls;
}

static uint64_t
key_peak(const struct sites_site *s)
{
	return s->peak;
}

static uint64_t
key_temporary(const struct sites_site *s)
{
	return s->temporary;
}

static uint64_t
key_leaked(const struct sites_site *s)
{
	return s->leaked;
}

static void
headline_calls(FILE *out, const struct sites_site *s)
{
	fprintf(out, "%" PRIu64 " calls to allocation functions with %" PRIu64
		" bytes peak consumption from", s->calls, s->peak);
}

static void
headline_peak(FILE *out, const struct sites_site *s)
{
	fprintf(out, "%" PRIu64 " bytes peak memory consumed over %" PRIu64
		" calls from", s->peak, s->calls);
}

static void
headline_temporary(FILE *out, const struct sites_site *s)
{
	fprintf(out, "%" PRIu64 " temporary allocations of %" PRIu64
		" allocations in total (%.2f%%) from", s->temporary,
		s->calls, percent(s->temporary, s->calls));
}

static void
headline_leaked(FILE *out, const struct sites_site *s)
{
	fprintf(out, "%" PRIu64 " bytes leaked in %" PRIu64 " blocks over %"
		PRIu64 " calls", s->leaked, s->leaked_blocks, s->calls);
	for (int k = 0; s->has_kinds && k < SITES_N_KINDS; k++)
		fprintf(out, "%s%s %" PRIu64, k ? ", " : " (", sites_kind_name(k),
			s->kind_bytes[k]);
	fputs(s->has_kinds ? ") from" : " from", out);
}

static const struct section sections[] = {
	{ "MOST CALLS TO ALLOCATION FUNCTIONS", key_calls, headline_calls },
	{ "PEAK MEMORY CONSUMERS", key_peak, headline_peak },
	{ "MOST TEMPORARY ALLOCATIONS", key_temporary, headline_temporary },
	{ "MOST MEMORY LEAKED", key_leaked, headline_leaked },
};

/* " NAME\n" after a headline: the frame naming S, its stack below. */
static void
site_name_text(FILE *out, const struct report_profile *p,
	       const struct sites_site *s)
{
	const struct sites_frame *fr = report_site_frame(p, s);
	fputc(' ', out);
	if (fr)
		report_frame_text(out, fr);
	else
		fputs("(a site without frames)", out);
	fputc('\n', out);
}

static void
section_text(FILE *out, const struct report_profile *p,
	     const struct section *sec, unsigned long top)
{
	const struct sites_file *sf = &p->sites;
	struct ranked *r = ht_xcalloc(sf->n_sites ? sf->n_sites : 1,
				      sizeof(*r));
	size_t n = 0;
	for (size_t i = 0; i < sf->n_sites; i++)
		if (sec->key(&sf->sites[i]))
			r[n++] = (struct ranked){ sec->key(&sf->sites[i]), i };
	qsort(r, n, sizeof(*r), ranked_cmp);
	fprintf(out, "%s\n", sec->title);
	for (size_t i = 0; i < n && (!top || i < top); i++) {
		const struct sites_site *s = &sf->sites[r[i].index];
		sec->headline(out, s);
		site_name_text(out, p, s);
		report_stack_text(out, s, "  ");
		fputc('\n', out);
	}
	fputc('\n', out);
	free(r);
}

static void
leak_check_text(FILE *out, const struct sites_file *sf)
{
	static const char *const words[SITES_N_KINDS] = {
		"definitely lost", "indirectly lost", "possibly lost",
		"still reachable",
	};
	fprintf(out, "leak check (%s):", sf->leak_mode);
	for (int k = 0; k < SITES_N_KINDS; k++)
		fprintf(out, "%s %s %" PRIu64 " bytes in %" PRIu64 " blocks",
			k ? "," : "", words[k], sf->leak_bytes[k],
			sf->leak_blocks[k]);
	fputc('\n', out);
}

static void
runtime_text(FILE *out, const struct report_profile *p,
	     const struct totals *t)
{
	fprintf(out, "total runtime: %" PRIu64 " %s (the time of the last "
		"snapshot)\n", t->runtime, time_unit(p));
}

/* Massif's peak with --stacks=yes: heap, extra and stacks together. */
static void
peak_stacks_text(FILE *out, const struct report_profile *p,
		 const struct totals *t)
{
	if (!p->stacks || t->peak_index < 0)
		return;
	const struct mf_snapshot *s = &p->massif.snaps[t->peak_index];
	fprintf(out, "peak memory with stacks (--stacks=yes): heap %" PRIu64
		" + extra %" PRIu64 " + stacks %" PRIu64 " = %" PRIu64
		" bytes (snapshot %u)\n", s->heap, s->extra, s->stacks,
		s->heap + s->extra + s->stacks, s->number);
}

/* A program that ends at its largest (no release after it) has its
   largest snapshot after Massif's peak snapshot: say so. */
static void
largest_text(FILE *out, const struct report_profile *p,
	     const struct totals *t)
{
	const struct mf_file *m = &p->massif;
	long li = mf_largest_index(m);
	if (li < 0 || t->peak_index < 0 || li == t->peak_index)
		return;
	const struct mf_snapshot *l = &m->snaps[li];
	const struct mf_snapshot *k = &m->snaps[t->peak_index];
	if (l->heap + l->stacks <= k->heap + k->stacks)
		return;
	fprintf(out, "largest snapshot: %" PRIu64 " bytes %s (snapshot %u), "
		"more than at the peak snapshot: Massif takes its peak only "
		"when memory is released\n", l->heap, p->pages ? "of pages" :
		"of heap", l->number);
}

static void
peak_heap_text(FILE *out, const struct report_profile *p,
	       const struct totals *t)
{
	fprintf(out, "%s: %" PRIu64 " bytes", p->pages ?
		"peak pages mapped (--pages-as-heap)" :
		"peak heap memory consumption", t->peak_heap);
	if (t->peak_index >= 0)
		fprintf(out, " (snapshot %u)",
			p->massif.snaps[t->peak_index].number);
	fputc('\n', out);
	peak_stacks_text(out, p, t);
	largest_text(out, p, t);
}

static void
totals_text(FILE *out, const struct report_profile *p)
{
	struct totals t;
	totals_get(p, &t);
	runtime_text(out, p, &t);
	fprintf(out, "calls to allocation functions: %" PRIu64 "\n", t.calls);
	fprintf(out, "temporary memory allocations: %" PRIu64 " (%.2f%% of "
		"the calls)\n", t.temporary, percent(t.temporary, t.calls));
	peak_heap_text(out, p, &t);
	fprintf(out, "total memory leaked: %" PRIu64 " bytes in %" PRIu64
		" blocks\n", t.leaked, t.leaked_blocks);
	if (p->sites.has_leak_check)
		leak_check_text(out, &p->sites);
}

/* The wrappers found in P's stacks, whose callers name its sites; the
   first few by name (a C++ program's names run long), all in JSON. */
static void
wrappers_text(FILE *out, const struct report_profile *p)
{
	enum { SHOWN = 5 };
	const struct site_naming *nm = &p->naming;
	if (!nm->n_wrappers)
		return;
	fputs("site names: the callers of the allocation wrappers", out);
	for (size_t i = 0; i < nm->n_wrappers && i < SHOWN; i++)
		fprintf(out, "%s%s", i ? ", " : " ", nm->wrappers[i]);
	if (nm->n_wrappers > SHOWN)
		fprintf(out, " and %zu more (--format=json lists them)",
			nm->n_wrappers - SHOWN);
	fputs(" (found in the stacks; --find-wrappers=no names them)\n",
	      out);
}

static void
header_text(FILE *out, const struct report_profile *p)
{
	fprintf(out, "heaptrace report of %s\ncmd: %s\n", p->path,
		profile_cmd(p));
	if (p->pages)
		fputs("figures: pages mapped (--pages-as-heap): the bytes of "
		      "the pages the program mapped (mmap, mremap, brk), not "
		      "heap blocks\n", out);
	if (p->stacks)
		fputs("figures: heap and stacks (--stacks=yes): the peak is "
		      "the snapshot of the most heap + extra + stacks, as "
		      "Massif's\n", out);
	report_sampling_text(out, p, "");
	wrappers_text(out, p);
}

static void
snapshots_text(FILE *out, const struct report_profile *p)
{
	const struct mf_file *m = &p->massif;
	fprintf(out, "SNAPSHOTS\n%8s %16s %16s %12s %12s  %s\n", "snapshot",
		"time", p->pages ? "pages" : "heap", "extra", "stacks", "tree");
	for (size_t i = 0; i < m->n_snaps; i++) {
		const struct mf_snapshot *s = &m->snaps[i];
		fprintf(out, "%8u %16" PRIu64 " %16" PRIu64 " %12" PRIu64
			" %12" PRIu64 "  %s\n", s->number, s->time, s->heap,
			s->extra, s->stacks, kind_name(s->kind));
	}
	fputc('\n', out);
}

static void
peak_tree_text(FILE *out, const struct report_profile *p,
	       unsigned long top)
{
	long pi = mf_peak_index(&p->massif);
	if (pi < 0) {
		fputs("PEAK MEMORY CONSUMERS\nno detailed snapshot: the peak "
		      "tree is not known\n\n", out);
		return;
	}
	const struct mf_snapshot *s = &p->massif.snaps[pi];
	size_t *idx;
	size_t n = report_tree_entries(p, s, &idx);
	fprintf(out, "%s (top entries of snapshot %u's tree)\n", p->pages ?
		"PEAK PAGES MAPPED (--pages-as-heap)" : "PEAK MEMORY CONSUMERS",
		s->number);
	long peak = report_peak_index(p);
	if (peak >= 0 && peak != pi)
		fprintf(out, "(the peak, snapshot %u, has no tree: this is the "
			"largest detailed snapshot's)\n",
			p->massif.snaps[peak].number);
	for (size_t i = 0; i < n && (!top || i < top); i++) {
		const struct mf_node *nd = &s->tree[idx[i]];
		fprintf(out, "%" PRIu64 " bytes (%.2f%%) %s%s\n", nd->bytes,
			percent(nd->bytes, s->heap), nd->aggregate ? "" : "from ",
			report_label_text(nd->label));
	}
	fputc('\n', out);
	free(idx);
}

/* A Massif file without .sites: its series and peak tree. */
static void
massif_only_text(FILE *out, const struct report_profile *p,
		 unsigned long top)
{
	struct totals t;
	totals_get(p, &t);
	if (p->sites_empty)
		fprintf(out, "per-site statistics missing: %s beside the "
			"profile has none: %s, so calls, temporary allocations "
			"and leaks are not known. What the Massif file "
			"holds:\n\n", p->sites_path, report_missing_reason(p));
	else
		fprintf(out, "per-site statistics missing: no %s beside the "
			"profile; %s (real Massif's?), so calls, temporary "
			"allocations and leaks are not known. What the Massif "
			"file holds:\n\n", p->sites_path,
			report_missing_reason(p));
	snapshots_text(out, p);
	peak_tree_text(out, p, top);
	runtime_text(out, p, &t);
	peak_heap_text(out, p, &t);
}

static void
report_text(FILE *out, const struct report_profile *p,
	    const struct report_args *args)
{
	header_text(out, p);
	fputc('\n', out);
	if (!p->has_sites) {
		massif_only_text(out, p, args->top);
		return;
	}
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		section_text(out, p, &sections[i], args->top);
	totals_text(out, p);
}

/* ---- JSON ---- */

static void
peak_json(FILE *out, const struct report_profile *p)
{
	const struct sites_file *sf = &p->sites;
	long pi = report_peak_index(p);
	if (sites_peak_known(p))
		fprintf(out, "{\"snapshot\": %" PRId64 ", \"time\": %" PRIu64
			", \"heap\": %" PRIu64, sf->peak_snapshot,
			sf->peak_time, sf->peak_heap);
	else if (pi >= 0)
		fprintf(out, "{\"snapshot\": %u, \"time\": %" PRIu64
			", \"heap\": %" PRIu64, p->massif.snaps[pi].number,
			p->massif.snaps[pi].time, p->massif.snaps[pi].heap);
	else {
		fputs("null", out);
		return;
	}
	if (p->stacks && pi >= 0) {
		const struct mf_snapshot *s = &p->massif.snaps[pi];
		fprintf(out, ", \"extra\": %" PRIu64 ", \"stacks\": %" PRIu64
			", \"total\": %" PRIu64, s->extra, s->stacks,
			s->heap + s->extra + s->stacks);
	}
	fputc('}', out);
}

static void
profile_json(FILE *out, const struct report_profile *p)
{
	fputs("  \"profile\": {\"path\": ", out);
	report_json_string(out, p->path);
	fputs(", \"sites_file\": ", out);
	report_json_string(out, p->has_sites ? p->sites_path : NULL);
	fputs(", \"cmd\": ", out);
	report_json_string(out, profile_cmd(p));
	fputs(", \"time_unit\": ", out);
	report_json_string(out, time_unit(p));
	fprintf(out, ", \"measure\": \"%s\", \"stacks\": %s",
		p->pages ? "pages" : "heap", p->stacks ? "true" : "false");
	fputs(", \"peak\": ", out);
	peak_json(out, p);
	report_sampling_json(out, p);
	fputs("},\n", out);
}

static void
leak_check_json(FILE *out, const struct sites_file *sf)
{
	fputs(", \"leak_check\": {\"mode\": ", out);
	report_json_string(out, sf->leak_mode);
	for (int k = 0; k < SITES_N_KINDS; k++)
		fprintf(out, ", \"%s\": {\"bytes\": %" PRIu64 ", \"blocks\": %"
			PRIu64 "}", sites_kind_name(k), sf->leak_bytes[k],
			sf->leak_blocks[k]);
	fputc('}', out);
}

static void
totals_json(FILE *out, const struct report_profile *p)
{
	struct totals t;
	totals_get(p, &t);
	fprintf(out, "  \"totals\": {\"runtime\": %" PRIu64
		", \"peak_heap\": %" PRIu64, t.runtime, t.peak_heap);
	if (p->has_sites) {
		fprintf(out, ", \"sites\": %zu, \"calls\": %" PRIu64
			", \"allocated\": %" PRIu64 ", \"temporary\": %" PRIu64
			", \"temporary_percent\": %.2f, \"leaked\": %" PRIu64
			", \"leaked_blocks\": %" PRIu64, p->sites.n_sites,
			t.calls, t.allocated, t.temporary,
			percent(t.temporary, t.calls), t.leaked,
			t.leaked_blocks);
		if (p->sites.has_leak_check)
			leak_check_json(out, &p->sites);
	}
	fputs("},\n", out);
}

static void
site_json(FILE *out, const struct report_profile *p, const struct sites_site *s)
{
	fprintf(out, "{\"id\": %" PRIu64 ", \"name\": ", s->id);
	const struct sites_frame *fr = report_site_frame(p, s);
	char *name = fr ? site_frame_text(fr) : NULL;
	report_json_string(out, name);
	free(name);
	fputs(", \"stack\": ", out);
	report_json_stack(out, s);
	fprintf(out, ", \"calls\": %" PRIu64 ", \"allocated\": %" PRIu64
		", \"peak\": %" PRIu64 ", \"leaked\": %" PRIu64
		", \"leaked_blocks\": %" PRIu64 ", \"temporary\": %" PRIu64,
		s->calls, s->allocated, s->peak, s->leaked, s->leaked_blocks,
		s->temporary);
	for (int k = 0; s->has_kinds && k < SITES_N_KINDS; k++)
		fprintf(out, ", \"%s\": %" PRIu64, sites_kind_name(k),
			s->kind_bytes[k]);
	fputc('}', out);
}

static void
sites_json(FILE *out, const struct report_profile *p)
{
	if (!p->has_sites) {
		fputs("  \"sites\": null,\n  \"missing\": ", out);
		char *why = ht_xasprintf("per-site statistics: %s %s %s; %s",
					 p->sites_empty ? "the" : "no",
					 p->sites_path, p->sites_empty ?
					 "beside the profile has none" :
					 "beside the profile",
					 report_missing_reason(p));
		report_json_string(out, why);
		free(why);
		fputs(",\n", out);
		return;
	}
	fputs("  \"wrappers\": [", out);
	for (size_t i = 0; i < p->naming.n_wrappers; i++) {
		if (i)
			fputs(", ", out);
		report_json_string(out, p->naming.wrappers[i]);
	}
	fputs("],\n  \"sites\": [", out);
	for (size_t i = 0; i < p->sites.n_sites; i++) {
		fputs(i ? ",\n    " : "\n    ", out);
		site_json(out, p, &p->sites.sites[i]);
	}
	fputs(p->sites.n_sites ? "\n  ],\n" : "],\n", out);
}

/* The peak tree's top entries, for a file without .sites. */
static void
peak_tree_json(FILE *out, const struct report_profile *p)
{
	long pi = mf_peak_index(&p->massif);
	fputs("  \"peak_tree\": ", out);
	if (pi < 0) {
		fputs("null,\n", out);
		return;
	}
	const struct mf_snapshot *s = &p->massif.snaps[pi];
	size_t *idx;
	size_t n = report_tree_entries(p, s, &idx);
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		const struct mf_node *nd = &s->tree[idx[i]];
		fputs(i ? ",\n    {\"label\": " : "\n    {\"label\": ", out);
		report_json_string(out, report_label_text(nd->label));
		fprintf(out, ", \"bytes\": %" PRIu64 ", \"address\": ",
			nd->bytes);
		if (nd->aggregate)
			fputs("null", out);
		else
			fprintf(out, "\"0x%" PRIX64 "\"", nd->addr);
		fprintf(out, ", \"aggregate\": %s}",
			nd->aggregate ? "true" : "false");
	}
	fputs(n ? "\n  ],\n" : "],\n", out);
	free(idx);
}

static void
snapshots_json(FILE *out, const struct mf_file *m)
{
	fputs("  \"snapshots\": [", out);
	for (size_t i = 0; i < m->n_snaps; i++) {
		const struct mf_snapshot *s = &m->snaps[i];
		fprintf(out, "%s{\"number\": %u, \"time\": %" PRIu64
			", \"heap\": %" PRIu64 ", \"extra\": %" PRIu64
			", \"stacks\": %" PRIu64 ", \"kind\": \"%s\"}",
			i ? ",\n    " : "\n    ", s->number, s->time, s->heap,
			s->extra, s->stacks, kind_name(s->kind));
	}
	fputs(m->n_snaps ? "\n  ]\n" : "]\n", out);
}

static void
report_json(FILE *out, const struct report_profile *p)
{
	fputs("{\n", out);
	profile_json(out, p);
	totals_json(out, p);
	sites_json(out, p);
	if (!p->has_sites)
		peak_tree_json(out, p);
	snapshots_json(out, &p->massif);
	fputs("}\n", out);
}

/* The page of output/html.c; its write errors are found on closing. */
static void
report_html(FILE *out, const struct report_profile *p)
{
	struct html_profile h = {
		.path = p->path,
		.massif = &p->massif,
		.sites = p->has_sites ? &p->sites : NULL,
		.peak = report_peak_index(p),
		.naming = &p->naming,
	};
	html_write(out, &h);
}

int
report_html_beside(const char *profile, char *err, size_t errlen)
{
	struct report_profile p;
	if (report_profile_load(profile, &p, err, errlen))
		return -1;
	report_profile_naming(&p, NULL);
	char *page = ht_xasprintf("%s.html", profile);
	FILE *out = fopen(page, "w");
	int rc = 0;
	if (!out) {
		snprintf(err, errlen, "cannot write %s: %s", page,
			 strerror(errno));
		rc = -1;
	} else {
		report_html(out, &p);
		if (fclose(out)) {
			snprintf(err, errlen, "cannot write %s: %s", page,
				 strerror(errno));
			rc = -1;
		}
	}
	free(page);
	report_profile_free(&p);
	return rc;
}

/* ---- the command ---- */

static FILE *
output_open(const char *path)
{
	if (!path)
		return stdout;
	FILE *f = fopen(path, "we");
	if (!f)
		ht_error("report: cannot write %s: %s", path, strerror(errno));
	return f;
}

/* The command for ARGS, parsed: its exit status. */
static int
report_run(const struct report_args *args)
{
	char err[1024];
	int rc = 0;
	if (args->format == FORMAT_PPROF) {
		if (pprof_write_file(args->profile, args->out_path, args->at,
				     err, sizeof(err)) == 0)
			return 0;
		ht_error("report: %s", err);
		return REPORT_EXIT_ERROR;
	}
	struct report_profile p;
	if (report_profile_load(args->profile, &p, err, sizeof(err))) {
		ht_error("report: %s", err);
		return REPORT_EXIT_ERROR;
	}
	report_profile_naming(&p, &args->naming);
	FILE *out = output_open(args->out_path);
	if (out) {
		if (args->format == FORMAT_JSON)
			report_json(out, &p);
		else if (args->format == FORMAT_HTML)
			report_html(out, &p);
		else
			report_text(out, &p, args);
		rc = report_output_close(out, args->out_path ? args->out_path :
					 "standard output");
		if (rc && args->out_path)
			unlink(args->out_path);
	}
	report_profile_free(&p);
	return out && rc == 0 ? 0 : REPORT_EXIT_ERROR;
}

int
report_cmd(int argc, char **argv)
{
	struct report_args args;
	int rc = args_parse(argc, argv, &args);
	if (rc > 0) {
		report_usage(stdout);
		rc = fflush(stdout) ? REPORT_EXIT_ERROR : 0;
	} else if (rc < 0)
		rc = REPORT_EXIT_ERROR;
	else
		rc = report_run(&args);
	report_naming_args_free(&args.naming);
	return rc;
}
