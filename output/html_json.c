/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The HTML report's data as JSON. Short keys and arrays rather than
   objects for the repeated records (snapshots, tree nodes, sites): a
   profile with hundreds of snapshots and thousands of sites must stay a
   file one can attach to a bug report. The layout is read by html.js,
   and only by it. */
#include "html_json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "output/jsonstr.h"
#include "output/site_name.h"
#include "output/site_wrappers.h"


void
html_json_string(FILE *out, const char *s)
{
	json_string_write(out, s, true);
}

/* A tree line's label without the "0xADDR: " Massif puts before it: the
   page shows functions, and the addresses would double the size. */
static const char *
label_text(const char *label)
{
	if (strncmp(label, "0x", 2) != 0)
		return label;
	size_t hex = strspn(label + 2, "0123456789abcdefABCDEF");
	if (hex && strncmp(label + 2 + hex, ": ", 2) == 0)
		return label + 2 + hex + 2;
	return label;
}

/* ---- snapshots and trees ---- */

static void
snapshots_json(FILE *out, const struct mf_file *m)
{
	fputs(",\"snaps\":[", out);
	for (size_t i = 0; i < m->n_snaps; i++) {
		const struct mf_snapshot *s = &m->snaps[i];
		fprintf(out, "%s[%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%d]", i ? "," : "", s->number, s->time,
			s->heap, s->extra, s->stacks, (int)s->kind);
	}
	fputc(']', out);
}

/* A walk of one preorder tree, writing at most BUDGET nodes. */
struct tree_walk {
	const struct mf_node *nodes;
	size_t n, next;   /* the next node to read */
	size_t budget;
};

/* The index after the subtree of NODES at I: where its next sibling
   starts. */
static size_t
subtree_end(const struct mf_node *nodes, size_t n, size_t i)
{
	size_t pending = 1;
	while (pending && i < n) {
		pending += nodes[i].n_children;
		pending--;
		i++;
	}
	return i;
}

/* The node at W->next and its subtree as [bytes,"label"] or
   [bytes,"label",[children]]; children past the budget are summed in one
   "(N entries left out...)" node. */
static void
node_json(FILE *out, struct tree_walk *w)
{
	const struct mf_node *nd = &w->nodes[w->next++];
	w->budget--;
	fprintf(out, "[%" PRIu64 ",", nd->bytes);
	html_json_string(out, label_text(nd->label));
	if (nd->n_children == 0) {
		fputc(']', out);
		return;
	}
	fputs(",[", out);
	uint64_t left_bytes = 0;
	uint32_t left = 0;
	for (uint32_t c = 0; c < nd->n_children && w->next < w->n; c++) {
		if (w->budget == 0) {
			left_bytes += w->nodes[w->next].bytes;
			left++;
			w->next = subtree_end(w->nodes, w->n, w->next);
			continue;
		}
		if (c)
			fputc(',', out);
		node_json(out, w);
	}
	if (left)
		fprintf(out, "%s[%" PRIu64 ",\"(%" PRIu32 " entries left out "
			"of the HTML report)\"]", left == nd->n_children ? "" :
			",", left_bytes, left);
	fputs("]]", out);
}

/* The node budget of each tree but the peak's: a share of
   HTML_ALL_TREE_NODES, so that hundreds of detailed snapshots do not make
   the page hundreds of times the peak's tree. */
static size_t
tree_budget(const struct mf_file *m)
{
	size_t trees = 0;
	for (size_t i = 0; i < m->n_snaps; i++)
		trees += m->snaps[i].n_tree != 0;
	size_t share = trees ? HTML_ALL_TREE_NODES / trees : HTML_TREE_NODES;
	return share < 100 ? 100 : share > HTML_TREE_NODES ? HTML_TREE_NODES :
	       share;
}

static void
trees_json(FILE *out, const struct mf_file *m, long peak)
{
	size_t budget = tree_budget(m);
	fputs(",\"trees\":[", out);
	for (size_t i = 0; i < m->n_snaps; i++) {
		const struct mf_snapshot *s = &m->snaps[i];
		if (i)
			fputc(',', out);
		if (!s->n_tree) {
			fputs("null", out);
			continue;
		}
		struct tree_walk w = { s->tree, s->n_tree, 0,
				       (long)i == peak ? HTML_TREE_NODES :
				       budget };
		node_json(out, &w);
	}
	fputc(']', out);
}

/* ---- sites ---- */

/* The figures a site can be ranked by, in the table's column order. */
enum site_column { COL_PEAK, COL_ALLOCATED, COL_CALLS, COL_TEMPORARY,
		   COL_LEAKED, N_COLUMNS };

static uint64_t
site_figure(const struct sites_site *s, enum site_column c)
{
	switch (c) {
	case COL_PEAK: return s->peak;
	case COL_ALLOCATED: return s->allocated;
	case COL_CALLS: return s->calls;
	case COL_TEMPORARY: return s->temporary;
	case COL_LEAKED: return s->leaked;
	default: return 0;
	}
}

struct ranked { uint64_t key; size_t index; };

static int
ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* KEEP[i] set for the sites among the largest HTML_SITES_PER_COLUMN by
   any column, so that sorting the table by any column shows its true
   top. Returns how many are kept. */
static size_t
sites_keep(const struct sites_file *sf, bool *keep)
{
	size_t n = sf->n_sites, kept = 0;
	if (n <= HTML_SITES_PER_COLUMN) {
		for (size_t i = 0; i < n; i++)
			keep[i] = true;
		return n;
	}
	struct ranked *r = ht_xmalloc(n * sizeof(*r));
	for (int c = 0; c < N_COLUMNS; c++) {
		for (size_t i = 0; i < n; i++)
			r[i] = (struct ranked){ site_figure(&sf->sites[i], c), i };
		qsort(r, n, sizeof(*r), ranked_cmp);
		for (size_t i = 0; i < HTML_SITES_PER_COLUMN; i++)
			if (r[i].key && !keep[r[i].index]) {
				keep[r[i].index] = true;
				kept++;
			}
	}
	free(r);
	return kept;
}

/* One frame as ["function","place"]: place "file:line", "in /object",
   or "" (an unknown function gets its address as its name). */
static void
frame_json(FILE *out, const struct sites_frame *fr)
{
	fputc('[', out);
	if (strcmp(fr->function, "???") == 0)
		fprintf(out, "\"??? [0x%" PRIX64 "]\"", fr->addr);
	else
		html_json_string(out, fr->function);
	fputc(',', out);
	char place[4096];
	if (fr->file)
		snprintf(place, sizeof(place), "%s:%lu", fr->file, fr->line);
	else if (fr->object)
		snprintf(place, sizeof(place), "in %s", fr->object);
	else
		place[0] = '\0';
	html_json_string(out, place);
	fputc(']', out);
}

/* [id,peak,allocated,calls,temporary,leaked,leaked_blocks,[frames],name]:
   NAME the frame that names the site (site_name_frame), as the page
   shows a frame, so that the page has no naming rule of its own. */
static void
site_json(FILE *out, const struct site_naming *nm,
	  const struct sites_site *s)
{
	fprintf(out, "[%" PRIu64, s->id);
	for (int c = 0; c < N_COLUMNS; c++)
		fprintf(out, ",%" PRIu64, site_figure(s, c));
	fprintf(out, ",%" PRIu64 ",[", s->leaked_blocks);
	for (size_t i = 0; i < s->n_frames && i < HTML_STACK_FRAMES; i++) {
		if (i)
			fputc(',', out);
		frame_json(out, &s->frames[i]);
		/* below main is the C library's start-up */
		if (strcmp(s->frames[i].function, "main") == 0)
			break;
	}
	fputs("],", out);
	const struct sites_frame *fr = site_name_frame(nm, s);
	char *name = fr ? site_frame_text(fr) : ht_xstrdup("(no frames)");
	html_json_string(out, name);
	free(name);
	fputc(']', out);
}

static void
leak_check_json(FILE *out, const struct sites_file *sf)
{
	fputs(",\"leak_check\":", out);
	if (!sf->has_leak_check) {
		fputs("null", out);
		return;
	}
	fputs("{\"mode\":", out);
	html_json_string(out, sf->leak_mode);
	for (int k = 0; k < SITES_N_KINDS; k++)
		fprintf(out, ",\"%s\":[%" PRIu64 ",%" PRIu64 "]",
			sites_kind_name(k), sf->leak_bytes[k],
			sf->leak_blocks[k]);
	fputc('}', out);
}

static void
totals_json(FILE *out, const struct sites_file *sf)
{
	fputs(",\"totals\":", out);
	if (!sf->has_totals) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"sites\":%" PRIu64 ",\"calls\":%" PRIu64
		",\"allocated\":%" PRIu64 ",\"temporary\":%" PRIu64
		",\"leaked\":%" PRIu64 ",\"leaked_blocks\":%" PRIu64 "}",
		sf->total_sites, sf->total_calls, sf->total_allocated,
		sf->total_temporary, sf->total_leaked,
		sf->total_leaked_blocks);
}

/* The wrappers skipped in naming (output/site_wrappers.h), which the
   page names once above its table. */
static void
wrappers_json(FILE *out, const struct site_naming *nm)
{
	fputs(",\"wrappers\":[", out);
	for (size_t i = 0; i < nm->n_wrappers; i++) {
		if (i)
			fputc(',', out);
		html_json_string(out, nm->wrappers[i]);
	}
	fputc(']', out);
}

static void
sites_json(FILE *out, const struct sites_file *sf,
	   const struct site_naming *nm)
{
	fputs(",\"sites\":", out);
	if (!sf) {
		fputs("null", out);
		return;
	}
	bool *keep = ht_xcalloc(sf->n_sites ? sf->n_sites : 1, sizeof(*keep));
	size_t kept = sites_keep(sf, keep);
	fprintf(out, "{\"count\":%zu,\"kept\":%zu,\"per_column\":%d",
		sf->n_sites, kept, HTML_SITES_PER_COLUMN);
	if (sf->has_peak)
		fprintf(out, ",\"peak\":{\"snapshot\":%" PRId64 ",\"time\":%"
			PRIu64 ",\"heap\":%" PRIu64 "}", sf->peak_snapshot,
			sf->peak_time, sf->peak_heap);
	totals_json(out, sf);
	leak_check_json(out, sf);
	wrappers_json(out, nm);
	fputs(",\"rows\":[", out);
	bool first = true;
	for (size_t i = 0; i < sf->n_sites; i++) {
		if (!keep[i])
			continue;
		fputs(first ? "\n" : ",\n", out);
		first = false;
		site_json(out, nm, &sf->sites[i]);
	}
	fputs("]}", out);
	free(keep);
}

/* "sampling":{"interval":N,"text":"sampled every ..."} when the profile
   is sampled (the page shows the text), nothing when exact. */
static void
sampling_json(FILE *out, const struct html_profile *p)
{
	struct sites_sampling s;
	char text[256];
	if (!sites_sampling_of(p->sites, p->massif->desc, &s))
		return;
	sites_sampling_text(&s, text, sizeof(text));
	fprintf(out, ",\"sampling\":{\"interval\":%llu,\"text\":",
		(unsigned long long)s.interval);
	html_json_string(out, text);
	fputs("}", out);
}

/* ---- the whole ---- */

void
html_json_write(FILE *out, const struct html_profile *p)
{
	const struct mf_file *m = p->massif;
	fputs("{\"path\":", out);
	html_json_string(out, p->path);
	fputs(",\"desc\":", out);
	html_json_string(out, m->desc);
	fputs(",\"cmd\":", out);
	html_json_string(out, m->cmd);
	fputs(",\"time_unit\":", out);
	html_json_string(out, m->time_unit);
	fprintf(out, ",\"pages_as_heap\":%s,\"peak\":%ld",
		mf_pages_as_heap(m) ? "true" : "false", p->peak);
	sampling_json(out, p);
	snapshots_json(out, m);
	/* the tree shown first gets the large budget: the peak's, or when
	   the peak has none the largest detailed snapshot's */
	trees_json(out, m, p->peak >= 0 && m->snaps[p->peak].n_tree ? p->peak :
		   mf_peak_index(m));
	struct site_naming own = { 0 };
	const struct site_naming *nm = p->naming;
	if (!nm && p->sites) {
		site_naming_init(&own, p->sites, m->desc, NULL, 0, true);
		nm = &own;
	}
	sites_json(out, p->sites, nm);
	if (nm == &own)
		site_naming_free(&own);
	fputs("}", out);
}
