/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ms_print 3.19's rendering, reproduced byte for byte. ms_print is Perl:
   its integers stay exact while they fit 64 bits, a double holding a
   whole number below 2^53 counts as an integer, and a division is exact
   when it leaves no remainder, a double otherwise; the graph's columns,
   rows and percentages are computed the same way here so that every
   rounding falls on the same side. ms_print also cuts every input line at
   its first '#' (a comment to it): text from the file is cut likewise. */
#include "msprint.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define RULE "--------------------------------------------------------------" \
	     "------------------\n"   /* 80 dashes */
#define TABLE_ROW "%3s %14s %16s %16s %13s %12s\n"

#define PEAK_CHAR '#'
#define DETAILED_CHAR '@'
#define NORMAL_CHAR ':'

/* V with a comma every three digits: "1,234,567". */
static const char *
commify(uint64_t v, char buf[32])
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v);
	char *p = buf;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			*p++ = ',';
		*p++ = digits[i];
	}
	*p = '\0';
	return buf;
}

/* S up to its first '#' on each of its lines. */
static void
put_uncommented(FILE *out, const char *s)
{
	bool in_comment = false;

	for (; *s; s++) {
		if (*s == '\n')
			in_comment = false;
		else if (*s == '#')
			in_comment = true;
		if (!in_comment)
			fputc(*s, out);
	}
}

/* A snapshot's total, as ms_print sums it. */
static uint64_t
snapshot_total(const struct mf_snapshot *s)
{
	return s->heap + s->extra + s->stacks;
}

static bool
is_detailed(const struct mf_snapshot *s)
{
	return s->kind != MF_EMPTY;
}

/* Refuses what ms_print dies on or what would need Perl's inexact big
   numbers, before anything is written. */
static int
check_renderable(const struct mf_file *f, char *err, size_t errlen)
{
	if (!f->n_snaps) {
		snprintf(err, errlen, "the file has no snapshot");
		return -1;
	}
	for (size_t i = 0; i < f->n_snaps; i++) {
		const struct mf_snapshot *s = &f->snaps[i];
		if (s->heap > UINT64_MAX - s->extra ||
		    s->heap + s->extra > UINT64_MAX - s->stacks) {
			snprintf(err, errlen, "snapshot %u: its total is past "
				 "2^64 bytes", s->number);
			return -1;
		}
		for (size_t j = 0; j < s->n_tree; j++)
			if (s->tree[j].bytes > snapshot_total(s)) {
				snprintf(err, errlen, "snapshot %u: a tree line "
					 "has more bytes (%" PRIu64 ") than the "
					 "snapshot's total (%" PRIu64 ")",
					 s->number, s->tree[j].bytes,
					 snapshot_total(s));
				return -1;
			}
	}
	return 0;
}

/* ms_print's header: the command, Massif's and its own arguments. */
static void
header_print(FILE *out, const struct mf_file *f, const struct msprint_opts *o)
{
	fputs(RULE "Command:            ", out);
	put_uncommented(out, f->cmd);
	/* the desc: text keeps the blank after the colon */
	fputs("\nMassif arguments:  ", out);
	if (f->desc[0] && f->desc[0] != '\n')
		fputc(' ', out);
	put_uncommented(out, f->desc);
	fputs("\nms_print arguments:", out);
	for (size_t i = 0; i < o->argc; i++)
		fprintf(out, " %s", o->argv[i]);
	fputs("\n" RULE "\n\n", out);
}

/* --- The graph --- */

/* One axis label: the value in 5 characters, and its unit. */
struct axis_label {
	char text[32];
	const char *unit;
};

/* An integer below 1000, else the scaled value with as many decimals as
   fit 5 characters. */
static void
label_format(struct axis_label *l, uint64_t v, double scaled)
{
	if (v < 1000)
		snprintf(l->text, sizeof(l->text), "%5d", (int)v);
	else if (scaled < 10)
		snprintf(l->text, sizeof(l->text), "%5.3f", scaled);
	else if (scaled < 100)
		snprintf(l->text, sizeof(l->text), "%5.2f", scaled);
	else
		snprintf(l->text, sizeof(l->text), "%5.1f", scaled);
}

/* Bytes and instructions step by 1024 while the value is 1000 or more. */
static void
label_binary(struct axis_label *l, uint64_t v, const char *const units[9])
{
	double scaled = (double)v;
	unsigned u = 0;

	while (u < 8 && scaled >= 1000) {
		scaled /= 1024;
		u++;
	}
	l->unit = units[u];
	label_format(l, v, scaled);
}

static void
label_bytes(struct axis_label *l, uint64_t v)
{
	static const char *const units[9] = {
		"B", "KB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB",
	};
	label_binary(l, v, units);
}

/* Milliseconds become seconds from 1000, hours from 3600 s. */
static void
label_ms(struct axis_label *l, uint64_t v)
{
	double scaled = (double)v;

	l->unit = "ms";
	if (scaled >= 1000) {
		l->unit = "s";
		scaled /= 1000;
	}
	if (scaled >= 3600) {
		l->unit = "h";
		scaled /= 3600;
	}
	label_format(l, v, scaled);
}

static void
label_time(struct axis_label *l, uint64_t v, const char *time_unit)
{
	static const char *const units[9] = {
		"i", "ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi",
	};
	if (!strcmp(time_unit, "ms"))
		label_ms(l, v);
	else if (!strcmp(time_unit, "i"))
		label_binary(l, v, units);
	else
		label_bytes(l, v);
}

/* The character grid, column 0 the y axis and row 0 the x axis. */
struct graph {
	unsigned x, y;
	char *cells;
	uint64_t peak;      /* the largest total, 1 when all are 0 */
	uint64_t end;       /* the last snapshot's time, 1 when 0 */
};

static char *
cell(struct graph *g, uint64_t x, unsigned y)
{
	return &g->cells[(size_t)y * (g->x + 1) + x];
}

static void
graph_init(struct graph *g, unsigned x, unsigned y)
{
	g->x = x;
	g->y = y;
	g->cells = ht_xmalloc((size_t)(x + 1) * (y + 1));
	memset(g->cells, ' ', (size_t)(x + 1) * (y + 1));
	for (unsigned c = 1; c <= x; c++)
		*cell(g, c, 0) = '-';
	for (unsigned r = 1; r <= y; r++)
		*cell(g, 0, r) = '|';
	*cell(g, 0, 0) = '+';
	*cell(g, x, 0) = '>';
	*cell(g, 0, y) = '^';
}

/* The column of time T: floor(T / END * X) + 1, the last time pulled
   back to column X; times past the end land off the graph (X + 2). */
static uint64_t
graph_column(const struct graph *g, uint64_t t)
{
	if (t == g->end)
		return g->x;
	if (t % g->end == 0) {
		uint64_t q = t / g->end;
		return q ? g->x + 2 : 1;
	}
	double frac = (double)t / (double)g->end * (double)g->x;
	if (frac >= (double)g->x + 1)
		return g->x + 2;
	return (uint64_t)frac + 1;
}

/* Perl keeps a double that holds a whole number below 2^53 as an
   integer, and then multiplies and compares it exactly. */
static bool
perl_integral(double d)
{
	return d >= 0 && d < 9007199254740992.0 && d == (double)(uint64_t)d;
}

/* Whether a bar of TOTAL bytes reaches row R: TOTAL >= R * (PEAK / Y),
   with Perl's mix of exact integers and doubles. */
static bool
graph_row_filled(const struct graph *g, uint64_t total, unsigned r)
{
	if (g->peak % g->y == 0)
		return total >= (uint64_t)r * (g->peak / g->y);
	double k = (double)g->peak / (double)g->y;
	if (perl_integral(k))
		return total >= (uint64_t)r * (uint64_t)k;
	return (double)total >= (double)r * k;
}

/* A peak mark is never drawn over, a detailed one only by the peak. */
static bool
mark_may_draw(char mark, char under)
{
	if (mark == PEAK_CHAR)
		return true;
	if (under == PEAK_CHAR)
		return false;
	return mark == DETAILED_CHAR || under != DETAILED_CHAR;
}

/* ms_print compares the peak snapshot's number with each index. */
static long long
peak_number(const struct mf_file *f)
{
	long long peak = -1;

	for (size_t i = 0; i < f->n_snaps; i++)
		if (f->snaps[i].kind == MF_PEAK)
			peak = f->snaps[i].number;
	return peak;
}

static char
snapshot_mark(const struct mf_file *f, size_t i, long long peak)
{
	if ((long long)i == peak)
		return PEAK_CHAR;
	return is_detailed(&f->snaps[i]) ? DETAILED_CHAR : NORMAL_CHAR;
}

/* Each snapshot's bar, and a line at the previous bar's top across the
   columns between two bars. */
static void
graph_draw(struct graph *g, const struct mf_file *f)
{
	long long peak = peak_number(f);
	uint64_t x = 0, prev_x;
	unsigned prev_top = 0;
	char prev_mark = NORMAL_CHAR;

	for (size_t i = 0; i < f->n_snaps; i++) {
		const struct mf_snapshot *s = &f->snaps[i];
		prev_x = x;
		x = graph_column(g, s->time);
		for (uint64_t c = prev_x + 1; prev_top && c < x && c <= g->x;
		     c++)
			*cell(g, c, prev_top) = prev_mark;

		char mark = snapshot_mark(f, i, peak);
		unsigned top = 0;
		for (unsigned r = 1; r <= g->y; r++) {
			if (!graph_row_filled(g, snapshot_total(s), r))
				continue;
			if (x <= g->x && mark_may_draw(mark, *cell(g, x, r)))
				*cell(g, x, r) = mark;
			top = r;
		}
		prev_top = top;
		prev_mark = mark;
	}
}

static void
graph_print(FILE *out, struct graph *g, const char *time_unit)
{
	struct axis_label yl, xl;

	label_bytes(&yl, g->peak);
	label_time(&xl, g->end, time_unit);
	fprintf(out, "    %2s\n", yl.unit);
	for (unsigned r = g->y + 1; r-- > 0;) {
		fputs(r == g->y ? yl.text : r == 0 ? "   0 " : "     ", out);
		fwrite(cell(g, 0, r), 1, g->x + 1, out);
		fprintf(out, "%s\n", r == 0 ? xl.unit : "");
	}
	fprintf(out, "     0%*s%5s\n", g->x > 5 ? (int)g->x - 5 : 0, "",
		xl.text);
}

static void
graph_render(FILE *out, const struct mf_file *f, const struct msprint_opts *o)
{
	struct graph g = { 0 };

	graph_init(&g, o->x, o->y);
	for (size_t i = 0; i < f->n_snaps; i++)
		if (snapshot_total(&f->snaps[i]) > g.peak)
			g.peak = snapshot_total(&f->snaps[i]);
	if (!g.peak)
		g.peak = 1;
	g.end = f->snaps[f->n_snaps - 1].time;
	if (!g.end)
		g.end = 1;
	graph_draw(&g, f);
	graph_print(out, &g, f->time_unit);
	free(g.cells);
}

/* "Number of snapshots: N" and the indexes of the detailed ones. */
static void
summary_print(FILE *out, const struct mf_file *f)
{
	long long peak = peak_number(f);
	const char *sep = "";

	fprintf(out, "\nNumber of snapshots: %zu\n Detailed snapshots: [",
		f->n_snaps);
	for (size_t i = 0; i < f->n_snaps; i++) {
		if (!is_detailed(&f->snaps[i]))
			continue;
		fprintf(out, "%s%zu%s", sep, i,
			(long long)i == peak ? " (peak)" : "");
		sep = ", ";
	}
	fputs("]\n\n", out);
}

/* --- The trees --- */

/* 100 * BYTES / TOTAL as Perl computes it (0 when TOTAL is 0). */
static double
percent(uint64_t bytes, uint64_t total)
{
	if (!total)
		return 0;
	if (bytes > UINT64_MAX / 100)
		return (double)bytes * 100 / (double)total;
	uint64_t n = bytes * 100;
	if (n % total == 0)
		return (double)(n / total);
	return (double)n / (double)total;
}

/* One tree line being printed: its children are still to come. */
struct tree_frame {
	const struct mf_node *node;
	uint32_t next_child;
	uint32_t n_insig;           /* children below the threshold */
	uint64_t insig_bytes;
	size_t child_prefix_len;    /* this line's prefix and midfix */
	bool significant;
};

struct tree_printer {
	FILE *out;
	double threshold;
	uint64_t total;
	const struct mf_node *nodes;
	size_t n_nodes, next;
	char *prefix;               /* "| " and "  " pieces, one per level */
	struct tree_frame *stack;
	size_t depth;
};

static bool
node_significant(const struct tree_printer *tp, const struct mf_node *nd,
		 bool top)
{
	return top || tp->threshold == 0 ||
	       (tp->total != 0 &&
		percent(nd->bytes, tp->total) >= tp->threshold);
}

/* "PREFIX->12.34% (1,234B) LABEL" */
static void
node_line_print(struct tree_printer *tp, size_t prefix_len, const char *arrow,
		const struct mf_node *nd)
{
	char num[32];

	fwrite(tp->prefix, 1, prefix_len, tp->out);
	fprintf(tp->out, "%s%05.2f%% (%sB)", arrow,
		percent(nd->bytes, tp->total), commify(nd->bytes, num));
	if (nd->label[0]) {
		fputc(' ', tp->out);
		put_uncommented(tp->out, nd->label);
	}
	fputc('\n', tp->out);
}

/* Prints the next line if significant, and makes it the current one. */
static void
node_open(struct tree_printer *tp, size_t prefix_len, const char *midfix,
	  const char *arrow, bool top)
{
	const struct mf_node *nd = &tp->nodes[tp->next++];
	struct tree_frame *fr = &tp->stack[tp->depth++];

	memset(fr, 0, sizeof(*fr));
	fr->node = nd;
	fr->significant = node_significant(tp, nd, top);
	if (fr->significant)
		node_line_print(tp, prefix_len, arrow, nd);
	memcpy(tp->prefix + prefix_len, midfix, strlen(midfix));
	fr->child_prefix_len = prefix_len + strlen(midfix);
}

/* After a significant line's children: what the insignificant ones sum
   to, and a spacer line after a leaf or that sum. */
static void
node_close(struct tree_printer *tp)
{
	struct tree_frame *fr = &tp->stack[--tp->depth];
	size_t plen = fr->child_prefix_len;
	char num[32];

	if (fr->significant && fr->n_insig) {
		fwrite(tp->prefix, 1, plen, tp->out);
		fprintf(tp->out, "->%05.2f%% (%sB) in %" PRIu32 "+ places, all "
			"below ms_print's threshold (%05.2f%%)\n",
			percent(fr->insig_bytes, tp->total),
			commify(fr->insig_bytes, num), fr->n_insig,
			tp->threshold);
	}
	if (fr->significant && (fr->n_insig || !fr->node->n_children)) {
		fwrite(tp->prefix, 1, plen, tp->out);
		fputc('\n', tp->out);
	}
	if (tp->depth && !fr->significant) {
		struct tree_frame *parent = &tp->stack[tp->depth - 1];
		parent->n_insig++;
		parent->insig_bytes += fr->node->bytes;
	}
}

/* The tree of S, preorder, without recursion: a file's tree may be as
   deep as it is long. */
static int
tree_print(FILE *out, const struct mf_snapshot *s, double threshold)
{
	struct tree_printer tp = {
		.out = out, .threshold = threshold,
		.total = snapshot_total(s),
		.nodes = s->tree, .n_nodes = s->n_tree,
	};
	int rc = 0;

	if (!s->n_tree)
		return -1;
	tp.prefix = ht_xcalloc(2 * s->n_tree + 2, 1);
	tp.stack = ht_xcalloc(s->n_tree, sizeof(*tp.stack));
	node_open(&tp, 0, "", "", true);
	while (tp.depth) {
		struct tree_frame *fr = &tp.stack[tp.depth - 1];
		uint32_t n = fr->node->n_children;
		if (fr->next_child == n) {
			node_close(&tp);
			continue;
		}
		if (tp.next == tp.n_nodes) {
			rc = -1;    /* the counts announce more lines than there are */
			break;
		}
		uint32_t j = fr->next_child++;
		node_open(&tp, fr->child_prefix_len,
			  j + 1 == n ? "  " : "| ", "->", false);
	}
	free(tp.prefix);
	free(tp.stack);
	return rc;
}

/* --- The table --- */

static void
table_header_print(FILE *out, const char *time_unit)
{
	char time_col[32];

	snprintf(time_col, sizeof(time_col), "time(%s)", time_unit);
	fprintf(out, RULE TABLE_ROW RULE, "n", time_col, "total(B)",
		"useful-heap(B)", "extra-heap(B)", "stacks(B)");
}

static void
table_row_print(FILE *out, const struct mf_snapshot *s)
{
	char n[16], t[32], tot[32], h[32], e[32], st[32];

	snprintf(n, sizeof(n), "%u", s->number);
	fprintf(out, TABLE_ROW, n, commify(s->time, t),
		commify(snapshot_total(s), tot), commify(s->heap, h),
		commify(s->extra, e), commify(s->stacks, st));
}

/* Each snapshot's row; a detailed one's tree, then the header again
   when more rows follow. */
static int
table_print(FILE *out, const struct mf_file *f, double threshold)
{
	table_header_print(out, f->time_unit);
	for (size_t i = 0; i < f->n_snaps; i++) {
		const struct mf_snapshot *s = &f->snaps[i];
		table_row_print(out, s);
		if (!is_detailed(s))
			continue;
		if (tree_print(out, s, threshold))
			return -1;
		if (i + 1 < f->n_snaps)
			table_header_print(out, f->time_unit);
	}
	return 0;
}

int
msprint_render(FILE *out, const struct mf_file *f,
	       const struct msprint_opts *o, char *err, size_t errlen)
{
	if (check_renderable(f, err, errlen))
		return -1;
	header_print(out, f, o);
	graph_render(out, f, o);
	summary_print(out, f);
	if (table_print(out, f, o->threshold)) {
		snprintf(err, errlen, "a detailed snapshot's tree is "
			 "malformed");
		return -1;
	}
	return 0;
}
