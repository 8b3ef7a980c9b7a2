/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace diff`: the sites of two profiles matched by their stacks,
   as functions and places (file:line, or the object), never by address
   nor ID: a PIE loads at another address each run and IDs number one
   run's sites. Sites with equal stacks in one profile (frames whose
   address alone differed) are summed first. Without .sites files (real
   Massif's), the top entries of the peak trees are matched by label
   instead, which is all such files allow. */
#include "diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "output/site_name.h"
#include "report.h"

#define EXIT_SAME 0
#define EXIT_CHANGED 1
/* A change counts when beyond this share of the larger total... */
#define DEFAULT_PERCENT 1.0
/* ...and beyond this many bytes, so that tiny programs do not fail a CI
   job over a few bytes. */
#define DEFAULT_MIN_BYTES 64

enum diff_format { FORMAT_TEXT, FORMAT_JSON };

struct diff_args {
	enum diff_format format;
	double percent;
	uint64_t min_bytes;
	const char *path[2];
	struct report_naming_args naming;
};

/* The figures compared, the order of struct sites_site's. */
enum metric { M_CALLS, M_ALLOCATED, M_PEAK, M_LEAKED, M_TEMPORARY, M_N };

static const char *const metric_names[M_N] = {
	"calls", "allocated", "peak", "leaked", "temporary",
};

/* One stack (or peak tree label) of one profile, its figures summed over
   the sites that have it. */
struct entry {
	char *key;
	const struct sites_site *site; /* the first with it; NULL: a label */
	const struct sites_frame *named; /* of SITE, that names it */
	const char *label;
	uint64_t v[M_N];
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

/* An entry of A, of B or of both that changed beyond the threshold. */
struct change {
	const struct entry *a, *b; /* NULL: not in that profile */
	int64_t delta[M_N];
	uint64_t size; /* the larger of |delta peak| and |delta allocated| */
	bool by_peak;  /* the peak's change is beyond its threshold */
};

/* What is compared and how much a change must be. */
struct comparison {
	bool by_stack; /* both profiles have .sites */
	bool pages;    /* both are --pages-as-heap profiles */
	uint64_t peak_heap[2], allocated[2];
	uint64_t peak_threshold, allocated_threshold;
	struct entries entries[2]; /* what the changes point into */
	struct change *changes;
	size_t n_changes;
};

/* ---- the command line ---- */

static void
diff_usage(FILE *out)
{
	fprintf(out,
		"usage: heaptrace diff [--format=text|json] "
		"[--threshold=PERCENT] [--min-bytes=N]\n"
		"                      [--alloc-fn=NAME] [--find-wrappers=yes|no] "
		"A B\n"
		"\n"
		"Compare two profiles of the same program (massif.out files "
		"heaptrace wrote,\n"
		"read with their .sites files): the allocation sites whose "
		"bytes at the peak or\n"
		"bytes allocated changed beyond both thresholds below, largest "
		"change first.\n"
		"Sites are matched by their stacks' functions and file:line, "
		"not by address.\n"
		"Without .sites files (real Massif's), the top entries of the "
		"peak trees are\n"
		"compared by label. Exit status: 0 nothing changed beyond the "
		"thresholds,\n"
		"1 something did, 2 on an error.\n"
		"  --format=text|json       text, or one JSON object [text]\n"
		"  --threshold=<0..100>     a change counts when it is more than "
		"this percent\n"
		"                           of the larger of the two totals [%.0f]\n"
		"  --min-bytes=<N>          ... and more than this many bytes "
		"[%d]\n"
		REPORT_NAMING_USAGE,
		DEFAULT_PERCENT, DEFAULT_MIN_BYTES);
}

static int
percent_parse(const char *v, double *percent)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end != v && *end == '%')
		end++;
	if (errno || end == v || *end || !(x >= 0 && x <= 100)) {
		ht_error("diff: --threshold must be a percentage from 0 to 100, "
			 "not '%s'", v);
		return -1;
	}
	*percent = x;
	return 0;
}

static int
min_bytes_parse(const char *v, uint64_t *n)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-') {
		ht_error("diff: --min-bytes must be a number of bytes, not '%s'",
			 v);
		return -1;
	}
	*n = x;
	return 0;
}

static int
format_parse(const char *v, enum diff_format *format)
{
	if (strcmp(v, "text") == 0)
		*format = FORMAT_TEXT;
	else if (strcmp(v, "json") == 0)
		*format = FORMAT_JSON;
	else {
		ht_error("diff: --format must be 'text' or 'json', not '%s'", v);
		return -1;
	}
	return 0;
}

/* One word into ARGS: 0, 1 for --help, -1 (said). */
static int
arg_parse(int argc, char **argv, int *i, struct diff_args *args,
	  int *n_paths)
{
	const char *v;
	int rc;
	if (strcmp(argv[*i], "--help") == 0 || strcmp(argv[*i], "-h") == 0)
		return 1;
	if ((rc = report_option_value("diff", argc, argv, i,
					"--format", &v)) != 0)
		return rc < 0 ? -1 : format_parse(v, &args->format);
	if ((rc = report_naming_option("diff", argc, argv, i,
				       &args->naming)) != 0)
		return rc < 0 ? -1 : 0;
	if ((rc = report_option_value("diff", argc, argv, i,
					"--threshold", &v)) != 0)
		return rc < 0 ? -1 : percent_parse(v, &args->percent);
	if ((rc = report_option_value("diff", argc, argv, i,
					"--min-bytes", &v)) != 0)
		return rc < 0 ? -1 : min_bytes_parse(v, &args->min_bytes);
	if (argv[*i][0] == '-' && argv[*i][1] != '\0') {
		ht_error("diff: unknown option '%s' (see heaptrace diff --help)",
			 argv[*i]);
		return -1;
	}
	if (*n_paths == 2) {
		ht_error("diff: two profiles only (heaptrace diff [options] A "
			 "B)");
		return -1;
	}
	args->path[(*n_paths)++] = argv[*i];
	return 0;
}

static int
args_parse(int argc, char **argv, struct diff_args *args)
{
	*args = (struct diff_args){ .format = FORMAT_TEXT,
				    .percent = DEFAULT_PERCENT,
				    .min_bytes = DEFAULT_MIN_BYTES };
	int n_paths = 0;
	for (int i = 1; i < argc; i++) {
		int rc = arg_parse(argc, argv, &i, args, &n_paths);
		if (rc)
			return rc;
	}
	if (n_paths < 2) {
		ht_error("diff: missing %s to compare (heaptrace diff "
			 "[options] A B)", n_paths ? "profile B" : "profiles A "
			 "and B");
		return -1;
	}
	return 0;
}

/* ---- the entries of one profile ---- */

/* Site S's stack as a key: each frame's function and place, the
   address left out. */
static char *
stack_key(const struct sites_site *s)
{
	char *key = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&key, &len);
	if (!f)
		ht_die(1, "out of memory");
	for (size_t i = 0; i < s->n_frames; i++) {
		const struct sites_frame *fr = &s->frames[i];
		fputs(fr->function, f);
		fputc('\x1f', f);
		if (fr->file)
			fprintf(f, "%s:%lu", fr->file, fr->line);
		else if (fr->object)
			fprintf(f, "(in %s)", fr->object);
		fputc('\x1e', f);
	}
	if (fclose(f))
		ht_die(1, "out of memory");
	return key;
}

static struct entry *
entry_add(struct entries *es, char *key)
{
	ht_xgrow((void **)&es->v, &es->cap, es->n + 1, sizeof(*es->v));
	struct entry *e = &es->v[es->n++];
	memset(e, 0, sizeof(*e));
	e->key = key;
	return e;
}

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->key,
		      ((const struct entry *)b)->key);
}

/* Sort ES by key and sum the entries with equal keys into the first. */
static void
entries_merge(struct entries *es)
{
	if (!es->n)
		return;
	qsort(es->v, es->n, sizeof(*es->v), entry_cmp);
	size_t out = 0;
	for (size_t i = 1; i < es->n; i++) {
		if (strcmp(es->v[i].key, es->v[out].key) != 0) {
			es->v[++out] = es->v[i];
			continue;
		}
		for (int m = 0; m < M_N; m++)
			es->v[out].v[m] += es->v[i].v[m];
		free(es->v[i].key);
	}
	es->n = out + 1;
}

static void
entries_of_sites(struct entries *es, const struct report_profile *p)
{
	const struct sites_file *sf = &p->sites;
	for (size_t i = 0; i < sf->n_sites; i++) {
		const struct sites_site *s = &sf->sites[i];
		struct entry *e = entry_add(es, stack_key(s));
		e->site = s;
		e->named = report_site_frame(p, s);
		e->v[M_CALLS] = s->calls;
		e->v[M_ALLOCATED] = s->allocated;
		e->v[M_PEAK] = s->peak;
		e->v[M_LEAKED] = s->leaked;
		e->v[M_TEMPORARY] = s->temporary;
	}
	entries_merge(es);
}

#define BELOW_THRESHOLD "(entries below massif's threshold)"

/* The top entries of P's peak tree (report's): label, bytes. */
static void
entries_of_peak_tree(struct entries *es, const struct report_profile *p)
{
	long pi = mf_peak_index(&p->massif);
	if (pi < 0)
		return;
	const struct mf_snapshot *s = &p->massif.snaps[pi];
	size_t *idx;
	size_t n = report_tree_entries(p, s, &idx);
	for (size_t i = 0; i < n; i++) {
		const struct mf_node *nd = &s->tree[idx[i]];
		const char *label = nd->aggregate ? BELOW_THRESHOLD :
				    report_label_text(nd->label);
		struct entry *e = entry_add(es, ht_xstrdup(label));
		e->label = label;
		e->v[M_PEAK] = nd->bytes;
	}
	free(idx);
	entries_merge(es);
}

static void
entries_free(struct entries *es)
{
	for (size_t i = 0; i < es->n; i++)
		free(es->v[i].key);
	free(es->v);
}

/* ---- the comparison ---- */

static uint64_t
magnitude(int64_t d)
{
	return d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
}

static uint64_t
threshold_of(const struct diff_args *args, uint64_t a, uint64_t b)
{
	double share = args->percent / 100.0 * (double)(a > b ? a : b);
	uint64_t t = (uint64_t)ceil(share);
	return t > args->min_bytes ? t : args->min_bytes;
}

static uint64_t
profile_allocated(const struct report_profile *p)
{
	if (!p->has_sites)
		return 0;
	if (p->sites.has_totals)
		return p->sites.total_allocated;
	uint64_t sum = 0;
	for (size_t i = 0; i < p->sites.n_sites; i++)
		sum += p->sites.sites[i].allocated;
	return sum;
}

/* Record the change from A to B (either may be NULL) if it is beyond the
   thresholds. */
static void
change_consider(struct comparison *c, const struct entry *a,
		const struct entry *b, size_t *cap)
{
	struct change ch = { .a = a, .b = b };
	for (int m = 0; m < M_N; m++)
		ch.delta[m] = (int64_t)((b ? b->v[m] : 0) - (a ? a->v[m] : 0));
	uint64_t dp = magnitude(ch.delta[M_PEAK]);
	uint64_t da = magnitude(ch.delta[M_ALLOCATED]);
	ch.by_peak = dp > c->peak_threshold;
	if (!ch.by_peak && !(c->by_stack && da > c->allocated_threshold))
		return;
	ch.size = dp > da ? dp : da;
	ht_xgrow((void **)&c->changes, cap, c->n_changes + 1,
		 sizeof(*c->changes));
	c->changes[c->n_changes++] = ch;
}

static const char *
change_key(const struct change *ch)
{
	return ch->a ? ch->a->key : ch->b->key;
}

/* The largest change first; equal ones by key, so the order is stable. */
static int
change_cmp(const void *x, const void *y)
{
	const struct change *a = x, *b = y;
	if (a->size != b->size)
		return a->size < b->size ? 1 : -1;
	return strcmp(change_key(a), change_key(b));
}

/* Walk the two sorted entry lists side by side. */
static void
compare(struct comparison *c, const struct entries *a,
	const struct entries *b)
{
	size_t i = 0, j = 0, cap = 0;
	while (i < a->n || j < b->n) {
		int order = i == a->n ? 1 : j == b->n ? -1 :
			    strcmp(a->v[i].key, b->v[j].key);
		if (order < 0)
			change_consider(c, &a->v[i++], NULL, &cap);
		else if (order > 0)
			change_consider(c, NULL, &b->v[j++], &cap);
		else
			change_consider(c, &a->v[i++], &b->v[j++], &cap);
	}
	if (c->n_changes)
		qsort(c->changes, c->n_changes, sizeof(*c->changes),
		      change_cmp);
}

/* ---- text ---- */

static const char *
sign(int64_t d)
{
	return d < 0 ? "" : "+";
}

static void
change_name_text(FILE *out, const struct entry *e)
{
	if (e->label) {
		fputs(e->label, out);
		return;
	}
	if (e->named)
		report_frame_text(out, e->named);
	else
		fputs("(a site without frames)", out);
}

static void
change_text(FILE *out, const struct change *ch)
{
	const struct entry *e = ch->b ? ch->b : ch->a;
	enum metric first = ch->by_peak ? M_PEAK : M_ALLOCATED;
	enum metric second = ch->by_peak ? M_ALLOCATED : M_PEAK;
	uint64_t a = ch->a ? ch->a->v[first] : 0, b = ch->b ? ch->b->v[first]
							    : 0;
	fprintf(out, "%s%" PRId64 " bytes %s (%" PRIu64 " -> %" PRIu64 "%s) in ",
		sign(ch->delta[first]), ch->delta[first],
		first == M_PEAK ? "at peak" : "allocated", a, b,
		!ch->a ? ", a new site" : !ch->b ? ", a site gone" : "");
	change_name_text(out, e);
	fputc('\n', out);
	if (!e->site)
		return;
	fprintf(out, "  %s%" PRId64 " bytes %s (%" PRIu64 " -> %" PRIu64 "), "
		"calls %" PRIu64 " -> %" PRIu64 "\n", sign(ch->delta[second]),
		ch->delta[second], second == M_PEAK ? "at peak" : "allocated",
		ch->a ? ch->a->v[second] : 0, ch->b ? ch->b->v[second] : 0,
		ch->a ? ch->a->v[M_CALLS] : 0, ch->b ? ch->b->v[M_CALLS] : 0);
	report_stack_text(out, e->site, "    ");
}

static void
header_text(FILE *out, const struct comparison *c,
	    const struct diff_args *args, const struct report_profile *p)
{
	/* the profile without per-site statistics, when one is */
	const struct report_profile *bare = p[0].has_sites ? &p[1] : &p[0];
	fprintf(out, "heaptrace diff: %s -> %s\n", p[0].path, p[1].path);
	report_sampling_text(out, &p[0], "a: ");
	report_sampling_text(out, &p[1], "b: ");
	if (c->by_stack)
		fprintf(out, "sites matched by their stacks (functions and "
			"file:line); a change counts beyond %.2f%% of the "
			"larger total and %" PRIu64 " bytes: %" PRIu64
			" bytes at peak, %" PRIu64 " bytes allocated\n",
			args->percent, args->min_bytes, c->peak_threshold,
			c->allocated_threshold);
	else if (bare->sites_empty)
		fprintf(out, "no per-site statistics (%s has none): %s is %s; "
			"comparing the top entries of the peak snapshots' trees "
			"by label instead; a change counts beyond %.2f%% of the "
			"larger peak and %" PRIu64 " bytes: %" PRIu64 " bytes\n",
			bare->sites_path, bare->path,
			report_missing_reason(bare), args->percent,
			args->min_bytes, c->peak_threshold);
	else
		fprintf(out, "no per-site statistics (no %s): %s was not "
			"written by heaptrace; comparing the top entries of the "
			"peak snapshots' trees by label instead; a change counts "
			"beyond %.2f%% of the larger peak and %" PRIu64
			" bytes: %" PRIu64 " bytes\n",
			bare->sites_path, bare->path, args->percent,
			args->min_bytes, c->peak_threshold);
	for (int k = 0; k < 2; k++)
		if (p[k].pages)
			fprintf(out, "%s: figures are %s\n", k ? "b" : "a",
				report_measure(&p[k]));
	if (p[0].pages != p[1].pages)
		fputs("one profile counts pages mapped, the other heap "
		      "blocks: their figures do not compare\n", out);
	fputc('\n', out);
}

static void
summary_text(FILE *out, const struct comparison *c)
{
	size_t grew = 0;
	for (size_t i = 0; i < c->n_changes; i++) {
		const struct change *ch = &c->changes[i];
		grew += ch->delta[ch->by_peak ? M_PEAK : M_ALLOCATED] > 0;
	}
	if (c->n_changes)
		fprintf(out, "%zu site%s changed beyond the threshold (%zu grew, "
			"%zu shrank)", c->n_changes,
			c->n_changes == 1 ? "" : "s", grew, c->n_changes - grew);
	else
		fputs("no site changed beyond the threshold", out);
	fprintf(out, "; peak %s %" PRIu64 " -> %" PRIu64,
		c->pages ? "pages mapped" : "heap", c->peak_heap[0],
		c->peak_heap[1]);
	if (c->by_stack)
		fprintf(out, ", allocated %" PRIu64 " -> %" PRIu64,
			c->allocated[0], c->allocated[1]);
	fputc('\n', out);
}

static void
diff_text(FILE *out, const struct comparison *c, const struct diff_args *args,
	  const struct report_profile *p)
{
	header_text(out, c, args, p);
	for (size_t i = 0; i < c->n_changes; i++) {
		change_text(out, &c->changes[i]);
		fputc('\n', out);
	}
	summary_text(out, c);
}

/* ---- JSON ---- */

static void
figures_json(FILE *out, const struct entry *e, bool by_stack)
{
	if (!e) {
		fputs("null", out);
		return;
	}
	if (!by_stack) {
		fprintf(out, "{\"peak\": %" PRIu64 "}", e->v[M_PEAK]);
		return;
	}
	for (int m = 0; m < M_N; m++)
		fprintf(out, "%s\"%s\": %" PRIu64, m ? ", " : "{",
			metric_names[m], e->v[m]);
	fputc('}', out);
}

static void
delta_json(FILE *out, const struct change *ch, bool by_stack)
{
	if (!by_stack) {
		fprintf(out, "{\"peak\": %" PRId64 "}", ch->delta[M_PEAK]);
		return;
	}
	for (int m = 0; m < M_N; m++)
		fprintf(out, "%s\"%s\": %" PRId64, m ? ", " : "{",
			metric_names[m], ch->delta[m]);
	fputc('}', out);
}

static void
change_json(FILE *out, const struct change *ch, bool by_stack)
{
	const struct entry *e = ch->b ? ch->b : ch->a;
	if (by_stack) {
		fputs("{\"site\": ", out);
		char *name = e->named ? site_frame_text(e->named)
				      : ht_xstrdup("");
		report_json_string(out, name);
		free(name);
		fputs(", \"stack\": ", out);
		report_json_stack(out, e->site);
	} else {
		fputs("{\"label\": ", out);
		report_json_string(out, e->label);
	}
	fputs(", \"a\": ", out);
	figures_json(out, ch->a, by_stack);
	fputs(", \"b\": ", out);
	figures_json(out, ch->b, by_stack);
	fputs(", \"delta\": ", out);
	delta_json(out, ch, by_stack);
	fputc('}', out);
}

static void
side_json(FILE *out, const char *name, const struct report_profile *p,
	  const struct comparison *c, int k)
{
	fprintf(out, "  \"%s\": {\"path\": ", name);
	report_json_string(out, p->path);
	fputs(", \"cmd\": ", out);
	report_json_string(out, p->massif.cmd ? p->massif.cmd : "");
	report_sampling_json(out, p);
	fprintf(out, ", \"measure\": \"%s\"", p->pages ? "pages" : "heap");
	fprintf(out, ", \"sites\": %s, \"peak_heap\": %" PRIu64
		", \"allocated\": ", p->has_sites ? "true" : "false",
		c->peak_heap[k]);
	if (c->by_stack)
		fprintf(out, "%" PRIu64 "},\n", c->allocated[k]);
	else
		fputs("null},\n", out);
}

static void
diff_json(FILE *out, const struct comparison *c, const struct diff_args *args,
	  const struct report_profile *p)
{
	fputs("{\n", out);
	side_json(out, "a", &p[0], c, 0);
	side_json(out, "b", &p[1], c, 1);
	fprintf(out, "  \"matched_by\": \"%s\",\n",
		c->by_stack ? "stack" : "peak_tree_label");
	fprintf(out, "  \"threshold\": {\"percent\": %.2f, \"min_bytes\": %"
		PRIu64 ", \"peak\": %" PRIu64 ", \"allocated\": ",
		args->percent, args->min_bytes, c->peak_threshold);
	if (c->by_stack)
		fprintf(out, "%" PRIu64 "},\n", c->allocated_threshold);
	else
		fputs("null},\n", out);
	fputs("  \"changes\": [", out);
	for (size_t i = 0; i < c->n_changes; i++) {
		fputs(i ? ",\n    " : "\n    ", out);
		change_json(out, &c->changes[i], c->by_stack);
	}
	fprintf(out, "%s  \"changed\": %zu\n}\n", c->n_changes ? "\n  ],\n" :
		"],\n", c->n_changes);
}

/* ---- the command ---- */

static void
comparison_run(struct comparison *c, const struct diff_args *args,
	       const struct report_profile *p)
{
	struct entries *es = c->entries;
	memset(c, 0, sizeof(*c));
	c->by_stack = p[0].has_sites && p[1].has_sites;
	c->pages = p[0].pages && p[1].pages;
	for (int k = 0; k < 2; k++) {
		c->peak_heap[k] = report_peak_heap(&p[k]);
		c->allocated[k] = profile_allocated(&p[k]);
		if (c->by_stack)
			entries_of_sites(&es[k], &p[k]);
		else
			entries_of_peak_tree(&es[k], &p[k]);
	}
	c->peak_threshold = threshold_of(args, c->peak_heap[0],
					 c->peak_heap[1]);
	c->allocated_threshold = threshold_of(args, c->allocated[0],
					      c->allocated[1]);
	compare(c, &es[0], &es[1]);
}

static void
comparison_free(struct comparison *c)
{
	free(c->changes);
	for (int k = 0; k < 2; k++)
		entries_free(&c->entries[k]);
}

/* Load the two profiles of ARGS into P, their sites named alike: the
   wrappers found in either are skipped in both. 0, or -1 (said). */
static int
profiles_load(const struct diff_args *args, struct report_profile *p)
{
	char err[1024];
	for (int k = 0; k < 2; k++) {
		if (report_profile_load(args->path[k], &p[k], err,
					sizeof(err)) == 0) {
			report_profile_naming(&p[k], &args->naming);
			continue;
		}
		ht_error("diff: %s", err);
		if (k)
			report_profile_free(&p[0]);
		return -1;
	}
	struct site_naming a_only = p[0].naming;
	a_only.wrappers = ht_xmemdup_array(a_only.wrappers, a_only.n_wrappers,
					   a_only.n_wrappers + 1,
					   sizeof(*a_only.wrappers));
	site_naming_add_wrappers(&p[0].naming, &p[1].naming);
	site_naming_add_wrappers(&p[1].naming, &a_only);
	site_naming_free(&a_only);
	return 0;
}

/* The command for ARGS, parsed: its exit status. */
static int
diff_run(const struct diff_args *args)
{
	struct report_profile p[2];
	if (profiles_load(args, p))
		return REPORT_EXIT_ERROR;
	struct comparison c;
	comparison_run(&c, args, p);
	if (args->format == FORMAT_JSON)
		diff_json(stdout, &c, args, p);
	else
		diff_text(stdout, &c, args, p);
	int rc = report_output_close(stdout, "standard output");
	size_t n_changes = c.n_changes;
	comparison_free(&c);
	for (int k = 0; k < 2; k++)
		report_profile_free(&p[k]);
	if (rc)
		return REPORT_EXIT_ERROR;
	return n_changes ? EXIT_CHANGED : EXIT_SAME;
}

int
diff_cmd(int argc, char **argv)
{
	struct diff_args args;
	int rc = args_parse(argc, argv, &args);
	if (rc > 0) {
		diff_usage(stdout);
		rc = fflush(stdout) ? REPORT_EXIT_ERROR : EXIT_SAME;
	} else if (rc < 0)
		rc = REPORT_EXIT_ERROR;
	else
		rc = diff_run(&args);
	report_naming_args_free(&args.naming);
	return rc;
}
